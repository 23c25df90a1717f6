#!/usr/bin/env bash
# The labelled console and per-rank records in a simulated two-node PBS job (test_pbs_simulated
# explains the simulation): 4 ranks over n01 and n02 print thousands of lines at once, a third
# in two write()s, some longer than PIPE_BUF; every console line is whole, each rank's lines are
# what it wrote, in order, and `ezpz runs show --rank K` prints exactly that.
source "$(dirname "$0")/common.sh"

require_mpiexec
start_fake_pbs_job
launch_env() { clean_env env -u MASTER_PORT -u EZPZ_MACHINE "${pbs_env[@]}" "$@"; }
writer=$EZPZ_SRC/tests/integration/output_lines.py
lines=1500

run_ezpz label launch --output label -n 4 --ppn 2 -- python3 "$writer" "$lines"
expect_eq "pbs label: exit status" 0 "$rc"
expect_eq "pbs label: every console line labelled, whole" "$((4 * lines))" \
  "$(grep -cE '^\[([0-3])\] rank \1 seq [0-9]+ x*$' "$scratch/label.out")"
expect_eq "pbs label: nothing else on the console" "$((4 * lines))" "$(wc -l <"$scratch/label.out")"
for rank in 0 1 2 3; do
  python3 "$writer" "$lines" --expect "$rank" >"$scratch/expected.$rank"
  grep "^\[$rank\] " "$scratch/label.out" | cut -c5- >"$scratch/console.$rank"
  expect_true "pbs label: rank $rank's lines on the console, in order" \
    cmp -s "$scratch/expected.$rank" "$scratch/console.$rank"
  run_ezpz "show$rank" runs show --rank "$rank"
  expect_true "pbs runs show --rank $rank: exactly what the rank wrote" \
    cmp -s "$scratch/expected.$rank" "$scratch/show$rank.out"
done
finish
