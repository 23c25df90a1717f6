#!/usr/bin/env bash
# Failure verdicts inside real Slurm jobs (tests/slurm/cluster.sh's 4 nodes, srun): the job's
# own faults keep their hosts and are not retried (a full disk; the OOM killer's SIGKILL with
# the kernel's message), and a rank's own bad-node-looking line spends no spare (issue 20).
# Run with EZPZ_SLURM_KEEP=1 when the cluster is shared.
source "$(dirname "$0")/common.sh"
announce_passes
source "$(dirname "$0")/slurm_common.sh"

runs="$scratch/runs"

# --- ENOSPC on one rank with a spare: the hosts kept, no retry ------------------------------
run_batch no-space -N4 --ntasks-per-node=1 -- EZPZ_RUNS_DIR="$runs" launch --spares 1 \
  --retry-delay 0.2 -- sh -c '
  if [ "$RANK" = 1 ]; then
    echo "OSError: [Errno 28] No space left on device: /ckpt/step_9.pt" >&2; exit 1
  fi
  sleep 2'
expect_true "no space: a failure ($rc)" test "$rc" != 0 -a "$rc" != none
expect_eq "no space: one attempt, no swap" "1 application_error" \
  "$(jq -r '"\(.attempts) \(.ending)"' "$(newest_run)/run.json")"
expect_eq "no space: the rule, the line, no swap" \
  "job_faults no-space OSError: [Errno 28] No space left on device: /ckpt/step_9.pt 0 stop: application_error is not retried" \
  "$(verdict 1 '"\(.rule) \(.line) \(.swaps | length) \(.next)"')"

# --- The OOM killer's stand-in: the kernel's words, then SIGKILL ------------------------------
run_batch oom -N4 --ntasks-per-node=1 -- EZPZ_RUNS_DIR="$runs" launch --spares 1 \
  --retry-delay 0.2 -- sh -c '
  if [ "$RANK" = 2 ]; then echo "Out of memory: Killed process $$ (python3)" >&2; kill -KILL $$; fi
  sleep 2'
expect_true "oom: a failure ($rc)" test "$rc" != 0 -a "$rc" != none
expect_eq "oom: the job's out of memory, one attempt" "1 application_error job_faults out-of-memory" \
  "$(jq -r .attempts "$(newest_run)/run.json") $(verdict 1 '"\(.classification) \(.rule)"')"
# Whichever reports the rank first: srun ("srun: error: n03: task 2: Killed") or ezpz-rankenv.
expect_match "oom: srun's report of the killed task is kept" '^Killed$|killed by signal 9' \
  "$(verdict 1 '.failed_ranks[0].what')"

# --- Issue 44: a Python rank's exception, a forwarded SIGUSR1: no spare spent ---------------
# Before: "bad_node: exit status 143: rank 0 on n01: Terminated", then n01 -> n03 and the job
# run again: srun's teardown of rank 0 after rank 1 raised was read as rank 0's node failing.
python=/usr/bin/python3
if "$python" -c 'import torch.distributed' 2>/dev/null; then
  cp "$EZPZ_SRC/tests/fixtures/python/raise1.py" "$scratch/work/"
  run_batch raise1 -N3 --ntasks-per-node=1 -- EZPZ_RUNS_DIR="$runs" launch --spares 1 \
    --retry-delay 0.2 -- "$python" raise1.py
  expect_eq "python raise: exit 1, one attempt, the hosts kept" "1 1 application_error" \
    "$rc $(jq -r '"\(.attempts) \(.ending)"' "$(newest_run)/run.json")"
  expect_eq "python raise: rank 1 named, nothing swapped, not retried" \
    "1 n02  0 stop: application_error is not retried" \
    "$(verdict 1 '"\(.failed_ranks[0].ranks) \(.failed_ranks[0].host) \(.bad_hosts | join(",")) \(.swaps | length) \(.next)"')"
else
  echo "SKIP: python raise: $python cannot import torch.distributed"
fi
# kill -USR1 to ezpz: forwarded to srun, which passes it to every task. Before: bad_node, n01
# swapped and the job restarted.
run_batch_prefix="(sleep 3; pkill -USR1 -xf '$EZPZ_BIN launch --spares 1 --retry-delay 0.2 -- sh -c echo up; sleep 30') &"
run_batch usr1 -N3 --ntasks-per-node=1 -- EZPZ_RUNS_DIR="$runs" launch --spares 1 \
  --retry-delay 0.2 -- sh -c 'echo up; sleep 30'
unset run_batch_prefix
expect_eq "usr1: forwarded, 128+SIGUSR1, one attempt, nothing swapped" \
  "138 1 interrupted forwarded_signal 0" \
  "$rc $(jq -r .attempts "$(newest_run)/run.json") $(verdict 1 '"\(.classification) \(.rule) \(.swaps | length)"')"

# An srun that exits 0 over a rank's failure (a site's wrapper around it): ezpz-rankenv's
# report decides. Before: success, exit 0.
mkdir -p "$scratch/zero-bin"
printf '#!/bin/sh\n%q "$@"\nexit 0\n' "$(command -v srun)" >"$scratch/zero-bin/srun"
chmod +x "$scratch/zero-bin/srun"
run_batch zero -N2 --ntasks-per-node=1 -- EZPZ_RUNS_DIR="$runs" PATH="$scratch/zero-bin:$system_path" \
  launch --output label -- sh -c '[ "$RANK" = 1 ] && exit 7; sleep 1'
expect_eq "srun's 0: exit 7, the rank's" "7 0 application_error 1" \
  "$rc $(verdict 1 '"\(.launcher_exit) \(.classification) \(.failed_ranks[0].ranks)"')"

# --- A failed rank's last lines, through srun: srun --kill-on-bad-exit stops reading the output on
# its way once the step ends, so ezpz-rankenv exits only once srun has them (README: A failed
# rank ends the job). Raw output: every line goes through srun. Bare srun lost some or all in 2
# of 8 runs here, so three runs ------------------------------------------------------------------
traceback=$(seq 1 3000 | sed 's/^/tb line /'; echo "LAST LINE")
for try in 1 2 3; do
  run_batch "traceback$try" -N4 --ntasks-per-node=1 -- EZPZ_RUNS_DIR="$runs" launch --output raw -- \
    sh -c 'if [ "$RANK" = 1 ]; then seq 1 3000 | sed "s/^/tb line /" >&2; echo "LAST LINE" >&2
           exit 1; fi; sleep 2'
  expect_eq "traceback $try: rank 1's 3,001 lines, all of them, in order (rc $rc)" "$traceback" \
    "$(grep -E '^(tb line [0-9]+|LAST LINE)$' <<<"$err" | head -n 3001)"
done

# --- A rank that exits non-zero: srun ends the step itself (--kill-on-bad-exit=1 in ezpz's plan),
# before ezpz's own --kill-on-bad-exit (10 s) would -------------------------------------------
run_batch bad-exit -N4 --ntasks-per-node=1 -- EZPZ_RUNS_DIR="$runs" launch --output label -- \
  sh -c '[ "$RANK" = 1 ] && exit 6; sleep 30 && echo "rank $RANK: done"'
# 6 from ezpz-rankenv's report, or from srun's own "task 1: Exited with exit code 6" when srun
# ends the step before the report reaches ezpz (seen once in the ASan build): never srun's 143.
expect_eq "bad exit: ezpz exits with rank 1's code" 6 "$rc"
expect_eq "bad exit: srun stopped the step, not ezpz; rank 1 named" "null application_error 1" \
  "$(verdict 1 '"\(.stopped_by) \(.classification) \(.failed_ranks[0].ranks)"')"
expect_eq "bad exit: no rank ran to its end" "" "$(grep 'done$' <<<"$out")"

# --- A rank's own line naming one of the job's hosts: no spare spent -------------------------
run_batch rank-line -N4 --ntasks-per-node=1 -- EZPZ_RUNS_DIR="$runs" launch --output label \
  --spares 1 --retry-delay 0.2 -- sh -c '
  [ "$RANK" = 0 ] && echo "srun: error: Task launch for StepId=1.0 failed on node n02: Zero Bytes" >&2
  sleep 1'
expect_eq "rank line: exit 0" 0 "$rc"
expect_eq "rank line: one attempt" 1 "$(jq -r .attempts "$(newest_run)/run.json")"

finish
