#!/usr/bin/env bash
# `ezpz kill --all-nodes` inside a real Slurm job (tests/slurm/cluster.sh) while the job's own
# `ezpz launch` runs: the launch's srun step holds every CPU of the allocation, so the kill's
# one-rank-per-node step must be an --overlap step. Without it srun waits for the launch to
# end, which here is never: the job would sit until its time limit.
source "$(dirname "$0")/common.sh"
announce_passes
source "$(dirname "$0")/slurm_common.sh"

sleeper="sleep 1${marker_base}7"
# The batch script starts the launch in the background and gives its ranks a moment to start;
# then `ezpz kill --all-nodes` is the script's command (run_batch's rc and output are its).
run_batch_prefix="$(printf '%q ' "$EZPZ_BIN" launch -- $sleeper) >$scratch/bg.out 2>$scratch/bg.err &
for _ in \$(seq 100); do [ \"\$(pgrep -fc '^$sleeper\$')\" -ge 4 ] && break; sleep 0.1; done"
batch_timeout=60 run_batch kill -N2 --ntasks-per-node=2 -- -v kill --all-nodes
run_batch_prefix=""

expect_eq "kill --all-nodes in the job: exit status" 0 "$rc"
expect_match "the kill's step overlaps the job's launch" \
  "ezpz: running: srun --overlap .* [^ ]+/ezpz kill --on-node " "$err"
expect_match "the job's ranks were stopped" "n0[12]: sent SIGTERM to [0-9]+ \\(run [^)]*\\): $sleeper" "$out"
# Both nodes' steps print at once: srun without -u forwards each line whole.
expect_eq "no node's line is merged with another's" "" \
  "$(grep -v '^n0[12]: ' <<<"$out"; grep 'n0[1-4]: .*n0[1-4]: ' <<<"$out")"
expect_true "the job's ranks are gone" wait_until 10 has_count 0 "$sleeper"
[ "$rc" == 0 ] || { sed 's/^/  kill: stderr: /' <<<"$err" >&2; sed 's/^/  launch: stderr: /' "$scratch/bg.err" >&2; }

finish
