#!/usr/bin/env bash
# A launch keeps the newest EZPZ_RUNS_KEEP run records once its job has ended
# (.ezpz/runs grew by one directory per launch, for ever), never its own.
source "$(dirname "$0")/common.sh"

require_mpiexec
launch_env() { clean_env "$@"; }
runs="$scratch/runs"
count() { ls "$runs" | wc -l; }

for i in 1 2 3; do
  run_ezpz "all-$i" EZPZ_RUNS_KEEP=all launch --scheduler local -n 1 -- true
  expect_eq "EZPZ_RUNS_KEEP=all, launch $i: exit status" 0 "$rc"
done
expect_eq "EZPZ_RUNS_KEEP=all: every record kept" 3 "$(count)"

run_ezpz typo EZPZ_RUNS_KEEP=two launch --scheduler local -n 1 -- true
expect_eq "EZPZ_RUNS_KEEP=two: exit status, the job's" 0 "$rc"
expect_eq "EZPZ_RUNS_KEEP=two: one warning line" \
  "ezpz: warning: EZPZ_RUNS_KEEP=two: expected a number of runs (1 or more) or all; every run record is kept" \
  "$err"
expect_eq "EZPZ_RUNS_KEEP=two: nothing removed" 4 "$(count)"

run_ezpz kept EZPZ_RUNS_KEEP=2 -v launch --scheduler local -n 1 -- true
expect_eq "EZPZ_RUNS_KEEP=2: exit status" 0 "$rc"
expect_eq "EZPZ_RUNS_KEEP=2: two records left" 2 "$(count)"
own=$(sed -n 's/^ezpz: run id: //p' <<<"$err")
expect_true "EZPZ_RUNS_KEEP=2: the launch's own record is one of them" test -f "$runs/$own/run.json"

run_ezpz default launch --scheduler local -n 1 -- true
expect_eq "no EZPZ_RUNS_KEEP: the default keeps more than that" 3 "$(count)"

finish
