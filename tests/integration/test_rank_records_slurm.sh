#!/usr/bin/env bash
# ezpz-rankenv's record relay (EZPZ_OUTPUT_RECORDS=1) under srun on the real Slurm cluster
# (tests/slurm/cluster.sh, see slurm_common.sh): 4 ranks over 2 nodes each print thousands of
# numbered lines, a third in two write()s, some longer than PIPE_BUF; srun without -u forwards
# whole lines of up to 1024 bytes, so the records (at most 1024 bytes) arrive whole and
# `ezpz-rankenv --decode` gives back every rank's bytes, in order.
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/slurm_common.sh"

rankenv=$EZPZ_BUILD/ezpz-rankenv
writer=$EZPZ_SRC/tests/integration/output_lines.py
lines=3000

mkdir -p "$scratch/decoded"
clean_env SLURM_CONF="$SLURM_CONF" EZPZ_OUTPUT_RECORDS=1 \
  srun -J "$job_name" -N 2 -n 4 "$rankenv" python3 "$writer" "$lines" \
  >"$scratch/records" 2>"$scratch/stderr"
expect_eq "srun relay: exit status" 0 "$?"
expect_eq "srun relay: nothing on stderr" "" "$(cat "$scratch/stderr")"
counts=$("$rankenv" --decode "$scratch/decoded" <"$scratch/records")
expect_eq "srun relay: every line whole" "whole $((4 * lines)) pieces 0" "$counts"
expect_eq "srun relay: nothing but records" "0 1 2 3" "$(cd "$scratch/decoded" && echo *)"
for rank in 0 1 2 3; do
  python3 "$writer" "$lines" --expect "$rank" >"$scratch/expected.$rank"
  expect_true "srun relay: rank $rank's bytes, in order" \
    cmp -s "$scratch/expected.$rank" "$scratch/decoded/$rank"
done
finish
