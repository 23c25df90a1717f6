#!/usr/bin/env bash
# Where start-up time goes (issue 19): a PyTorch DDP script (Debian's python3-torch, gloo)
# under local MPICH prints "EZPZ_STAMP <phase>" lines; ezpz-rankenv stamps exec and
# first_output itself. The console never shows the stamps (malformed ones it shows as
# printed), `ezpz runs show` prints every phase for every rank, and verdict.json holds them.
# Under a simulated four-node PBS job, each rank's stamps carry its host, and the table names
# the slowest rank's host and the slowest host. The real Slurm cluster's case is in
# test_startup_slurm.sh.
source "$(dirname "$0")/common.sh"
announce_passes

python=/usr/bin/python3  # Debian's, with python3-torch
require_mpiexec
if ! "$python" -c 'import torch.distributed' 2>/dev/null; then
  echo "skipped: $python cannot import torch.distributed (apt-get install python3-torch)"
  exit 77
fi
cp "$EZPZ_SRC/tests/fixtures/python/startup_ddp.py" "$scratch/"
cd "$scratch" || exit 1
launch_env() { clean_env env -u MASTER_PORT "$@"; }
phases="exec first_output script_start import_torch process_group first_step"

run_ezpz ddp EZPZ_OUTPUT=label -v launch -n 4 -- "$python" startup_ddp.py
expect_eq "stamped DDP: exit status" 0 "$rc"
expect_eq "stamped DDP: the console shows no stamp, the malformed ones as printed" \
  "$(for r in 0 1 2 3; do printf '[%s] EZPZ_STAMP Not-A-Phase\n[%s] EZPZ_STAMP first_step soon\n[%s] rank %s done\n' $r $r $r $r; done | LC_ALL=C sort)" \
  "$(LC_ALL=C sort <<<"$out")"
id=$(sed -n 's/^ezpz: run id: //p' <<<"$err")

run_ezpz show runs show "$id"
expect_eq "runs show: exit status" 0 "$rc"
expect_eq "runs show: the table's head" "start-up, seconds from the launch (4 ranks):" \
  "$(grep '^start-up' <<<"$out")"
for phase in $phases; do
  expect_match "runs show: $phase, for all 4 ranks" \
    "^  $phase +4( +[0-9]+\.[0-9]{3}){4}  \[.{10}\]  rank [0-3] on $(hostname)\$" \
    "$(grep "^  $phase " <<<"$out")"
done
expect_match "runs show: the slowest ranks" "^slowest to first_step: rank [0-3] on " \
  "$(grep '^slowest to' <<<"$out")"

# verdict.json: every phase of every rank, in order, from the launch on.
check='import json, sys
v = json.load(open(sys.argv[1]))["startup"]
for r in v["ranks"]:
    p = r["phases"]
    order = sorted(sys.argv[2].split(), key=lambda name: p[name])
    ok = order[0] == "exec" and order[-1] == "first_step" and p["exec"] >= 0
    print(r["rank"], r["host"] == sys.argv[3], len(p), ok)
print([x["phase"] for x in v["phases"]][-1], [x["ranks"] for x in v["phases"]])'
expect_eq "verdict.json: six phases of each rank, exec first and first_step last" \
  "$(printf '%s True 6 True\n' 0 1 2 3)
first_step [4, 4, 4, 4, 4, 4]" \
  "$("$python" -c "$check" "$scratch/runs/$id/attempt-1/verdict.json" "$phases" "$(hostname)")"

# The verdict's time to first output is the ranks' first byte, not ezpz-rankenv's exec stamp
# (which reaches ezpz first): timings are truncated to the ms, so 5 ms of slack.
first='import json, sys
v = json.load(open(sys.argv[1]))
first = min(r["phases"]["first_output"] for r in v["startup"]["ranks"])
t = v["timings"]
print(t["to_spawn_s"] + t["to_first_output_s"] >= first - 0.005, first, t)'
expect_match "verdict.json: to_first_output_s is the first rank output's" "^True " \
  "$("$python" -c "$first" "$scratch/runs/$id/attempt-1/verdict.json")"

# --output raw: no records, so no stamps; the lines stay in the output as printed.
run_ezpz raw EZPZ_OUTPUT=raw -v launch -n 2 -- "$python" startup_ddp.py
expect_eq "raw: exit status" 0 "$rc"
expect_eq "raw: the stamp lines stay in the output" 2 "$(grep -c '^EZPZ_STAMP first_step$' <<<"$out")"
id=$(sed -n 's/^ezpz: run id: //p' <<<"$err")
run_ezpz raw-show runs show "$id"
expect_eq "raw: runs show has no start-up table" "" "$(grep '^start-up' <<<"$out")"

# --- A simulated four-node PBS job: each rank's stamps carry its own host -------------------
# One rank per host (n01..n04, Hydra's fork launcher); rank 2, on n03, reaches its "ready" a
# second after the others (tests/fixtures/sh/startup_slow.sh): the table names it and its host.
start_fake_pbs_job 4
launch_env() { clean_env env -u MASTER_PORT -u EZPZ_MACHINE "${pbs_env[@]}" "$@"; }
run_ezpz pbs EZPZ_OUTPUT=label SLOW_RANK=2 -v launch --ppn 1 -- \
  "$EZPZ_SRC/tests/fixtures/sh/startup_slow.sh"
expect_eq "pbs: exit status" 0 "$rc"
[ "$rc" == 0 ] || sed 's/^/  pbs: /' "$scratch/pbs.err" >&2
expect_slow_rank_2 pbs "$(sed -n 's/^ezpz: run id: //p' <<<"$err")"

finish
