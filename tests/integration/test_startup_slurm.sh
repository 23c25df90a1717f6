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
id=$(sed -n 's/^ezpz: run id: //p' <<<"$err")
run_ezpz show runs show "$id"
expect_match "slurm: ready's slowest is rank 2, on n03" \
  "^  ready +4( +[0-9]+\.[0-9]{3}){4}  \[.{10}\]  rank 2 on n03\$" "$(grep '^  ready ' <<<"$out")"
expect_match "slurm: the slowest ranks, with their nodes" \
  "^slowest to ready: rank 2 on n03 \(1\.[0-9]{3} s\), rank [013] on n0[124] \([0-9.]+ s\), rank [013] on n0[124] \([0-9.]+ s\)\$" \
  "$(grep '^slowest to' <<<"$out")"
expect_match "slurm: the slowest node" "^slowest host: n03 \(1\.[0-9]{3} s to ready\)\$" \
  "$(grep '^slowest host' <<<"$out")"
expect_match "slurm: exec: every rank's own node" \
  "^  exec +4( +[0-9]+\.[0-9]{3}){4}  \[.{10}\]  rank [0-3] on n0[1-4]\$" "$(grep '^  exec ' <<<"$out")"
hosts='import json, sys
for r in json.load(open(sys.argv[1]))["startup"]["ranks"]:
    print(r["rank"], r["host"], sorted(r["phases"]))'
expect_eq "slurm: verdict.json: each rank's node" \
  "0 n01 ['exec', 'first_output', 'ready']
1 n02 ['exec', 'first_output', 'ready']
2 n03 ['exec', 'first_output', 'ready']
3 n04 ['exec', 'first_output', 'ready']" \
  "$(/usr/bin/python3 -c "$hosts" "$scratch/runs/$id/attempt-1/verdict.json" 2>&1)"
[ "$rc" == 0 ] || sed 's/^/  slurm: stderr: /' <<<"$err" >&2

finish
