#!/usr/bin/env bash
# ezpz-rankenv's record relay (EZPZ_OUTPUT_RECORDS=1) under srun on the real Slurm cluster
# (tests/slurm/cluster.sh, see slurm_common.sh): 4 ranks over 2 nodes each print thousands of
# numbered lines, a third in two write()s, some longer than PIPE_BUF; srun without -u forwards
# whole lines of up to 1024 bytes, so the records (at most 1024 bytes) arrive whole and
# `ezpz-rankenv --decode` gives back every rank's bytes, in order. Then ezpz itself in a batch
# job, `--output dedup`: a line the 4 ranks print at once is shown once with their ranks, and
# each rank's output read back from the record (output.log and ranks.idx) is what it wrote.
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/slurm_common.sh"

source "$(dirname "$0")/rank_records_common.sh"

relay_run "srun relay" env SLURM_CONF="$SLURM_CONF" srun -J "$job_name" -N 2 -n 4

# --- ezpz launch --output dedup on 4 nodes ------------------------------------------------------
# A barrier in the shared scratch directory first, so the ranks print the shared line within the
# window (150 ms) of each other; on a machine so loaded that a rank was not scheduled for that
# long, tried once more.
runs="$scratch/runs"
launch_env() { clean_env "$@"; }
dedup_lines=600
shared='touch "$0/$RANK"; while [ "$(ls "$0" | wc -l)" -lt 4 ]; do sleep 0.01; done
echo loading checkpoint; exec python3 "$1" "$2"'
for try in 1 2; do
  mkdir -p "$scratch/barrier.$try"
  run_batch "dedup$try" -N4 --ntasks-per-node=1 -- EZPZ_RUNS_DIR="$runs" launch --output dedup \
    -- sh -c "$shared" "$scratch/barrier.$try" "$writer" "$dedup_lines"
  [ "$(head -n 1 <<<"$out")" == "[0-3] loading checkpoint" ] && break
done
expect_eq "dedup: exit status" 0 "$rc"
expect_eq "dedup: the shared line once, with the 4 ranks" "[0-3] loading checkpoint" \
  "$(head -n 1 <<<"$out")"
expect_eq "dedup: the record, once, with an index" "output.log ranks.idx" \
  "$(cd "$(newest_run)attempt-1" && echo output.log ranks.*)"
for rank in 0 1 2 3; do
  { echo loading checkpoint; python3 "$writer" "$dedup_lines" --expect "$rank"; } \
    >"$scratch/dedup.expected.$rank"
  run_ezpz "dedup.show$rank" EZPZ_RUNS_DIR="$runs" runs show last --rank "$rank"
  expect_true "dedup: runs show --rank $rank: exactly what the rank wrote" \
    cmp -s "$scratch/dedup.expected.$rank" "$scratch/dedup.show$rank.out"
done
finish
