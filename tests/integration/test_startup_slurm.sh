#!/usr/bin/env bash
# Where start-up time goes on the real Slurm cluster (tests/slurm/cluster.sh): a batch job of
# four nodes, one rank each, whose rank 2 (on n03) stamps its "ready" a second after the others
# (tests/fixtures/sh/startup_slow.sh). Each rank's stamps carry the node srun placed it on
# (SLURMD_NODENAME), and `ezpz runs show` names the slowest ranks and the slowest host. A few
# seconds: no torch.
source "$(dirname "$0")/common.sh"
announce_passes
source "$(dirname "$0")/slurm_common.sh"

launch_env() { clean_env "$@"; }
batch_timeout=40 run_batch startup -N4 --ntasks-per-node=1 -- EZPZ_OUTPUT=label SLOW_RANK=2 \
  -v launch -- "$EZPZ_SRC/tests/fixtures/sh/startup_slow.sh"
expect_eq "slurm: exit status" 0 "$rc"
[ "$rc" == 0 ] || sed 's/^/  slurm: stderr: /' <<<"$err" >&2
expect_slow_rank_2 slurm "$(sed -n 's/^ezpz: run id: //p' <<<"$err")"

finish
