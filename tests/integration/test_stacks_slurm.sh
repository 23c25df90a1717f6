#!/usr/bin/env bash
# Stacks of hung ranks on the real Slurm cluster (tests/slurm/cluster.sh): a batch job runs
# `ezpz launch --idle-timeout` over a PyTorch DDP script whose rank 5 sleeps before the
# all_reduce the other seven wait in (tests/fixtures/python/ddp_hang.py). Before the job is
# stopped, ezpz takes every rank's stacks on all four nodes through srun (a second step,
# --overlap), never ssh; the summary names rank 5 and its line, and the record keeps each
# rank's stacks with the node it ran on.
source "$(dirname "$0")/common.sh"
announce_passes
source "$(dirname "$0")/slurm_common.sh"

use_torch_python

batch_timeout=150 run_batch hang -N4 --ntasks-per-node=2 -- HANG_RANK=5 \
  EZPZ_RUNS_DIR="$scratch/runs" launch --idle-timeout 20 -- "$python" ddp_hang.py
expect_eq "slurm: exit status 124" 124 "$rc"
summary=$(sed -n 's/^ezpz:   \(ranks\{0,1\} [0-9,-]*: .*\)$/\1/p' <<<"$err")
expect_match "slurm: ranks 0-4,6-7 wait in the all_reduce" \
  '^ranks 0-4,6-7: in all_reduce \(distributed_c10d\.py:[0-9]+\)$' "$(sed -n 1p <<<"$summary")"
expect_eq "slurm: rank 5 is the odd one, on its line" "rank 5: in straggle (ddp_hang.py:11)" \
  "$(sed -n 2p <<<"$summary")"
dir=$(sed -n 's/^ezpz: stacks of 8 ranks (in \(.*\)):$/\1/p' <<<"$err")
expect_match "slurm: rank 5's stack was taken on its node, n03" \
  '^# rank 5 \(pid [0-9]+\) on n03: Python stacks \(faulthandler\)$' \
  "$(head -1 "$dir/rank-5.txt" 2>&1)"
expect_eq "slurm: every rank's stacks in the record" 8 "$(ls "$dir" | grep -c '^rank-')"
[ "$rc" == 124 ] && [ "$(sed -n 2p <<<"$summary")" == "rank 5: in straggle (ddp_hang.py:11)" ] || sed 's/^/  slurm: stderr: /' <<<"$err" >&2

finish
