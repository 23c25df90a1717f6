#!/usr/bin/env bash
# `ezpz doctor` inside jobs. First a simulated two-node PBS job (n01, n02 in
# /etc/hosts, MPICH Hydra with HYDRA_LAUNCHER=fork): the checks, --deep with
# one real ezpz-probe per node, a launch that never reaches n02 (named and
# written for --exclude-file), and a launch that hangs (stopped at --timeout).
# Then the real 4-node Slurm cluster (tests/slurm/cluster.sh): --deep with
# every slurmd up, and with n03's slurmd stopped, which --deep must name; the
# slurmd is started again whatever happens.
#
# Needs root (/etc/hosts, the Slurm daemons); without it, skipped (77). Run it
# alone: it shares /etc/hosts and the cluster with the other integration tests.
source "$(dirname "$0")/common.sh"
announce_passes
require_mpiexec
if ! command -v jq >/dev/null; then
  echo "skipped: jq is not installed (scripts/setup installs it)"
  exit 77
fi
probe="$(dirname "$EZPZ_BIN")/ezpz-probe"
if [ ! -x "$probe" ]; then
  echo "skipped: $probe is not built (it needs MPI: apt-get install libmpich-dev)"
  exit 77
fi
# The Hydra a launch here runs: the first of its names on the test's PATH that is MPICH's
# (Debian's alternatives may point mpiexec at Open MPI's).
real_mpiexec=$(for name in mpiexec mpiexec.hydra mpiexec.mpich; do
  path=$(PATH=$system_path command -v "$name") &&
    "$path" --version 2>/dev/null | grep -q "HYDRA build details" && echo "$path" && break
done)
mkdir -p "$scratch/run" "$scratch/home"

# check_of NAME FIELD: FIELD of check NAME in $out (doctor --json).
check_of() { jq -r --arg name "$1" ".checks[] | select(.name == \$name) | .$2" <<<"$out"; }

# ================================ A simulated PBS job ==============================
start_fake_pbs_job
launch_env() { clean_env env -u MASTER_PORT "${pbs_env[@]}" "$@"; }

run_ezpz pbs doctor --json
expect_eq "pbs: exit 0" 0 "$rc"
expect_eq "pbs: scheduler" "ok pbs, job 4242.pbs-sim (PBS_JOBID is set)" \
  "$(check_of scheduler status) $(check_of scheduler message)"
expect_eq "pbs: allocation" \
  "ok 2 hosts from PBS_NODEFILE $nodefile: n[01-02]; each listed 2 times; all resolve" \
  "$(check_of allocation status) $(check_of allocation message)"
expect_match "pbs: the generic PBS profile" "^ok generic-pbs from $EZPZ_SRC/machines/generic-pbs.yaml " \
  "$(check_of profile status) $(check_of profile message)"
expect_match "pbs: Hydra for the hydra dialect" \
  "^ok $real_mpiexec: MPICH Hydra [0-9.]+, the hydra launcher of profile generic-pbs\$" \
  "$(check_of launcher status) $(check_of launcher message)"
# Hydra run as a link in a directory without hydra_pmi_proxy would fail before any rank
# started (test_verdicts.sh runs that launch): doctor says so first.
lonely="$scratch/lonely-hydra"
resolved_mpiexec=$(readlink -f "$real_mpiexec")
mkdir -p "$lonely"
ln -sf "$resolved_mpiexec" "$lonely/mpiexec"
run_ezpz lonely PATH="$lonely:$system_path" doctor --json
expect_eq "lonely Hydra: exit 1" 1 "$rc"
expect_match "lonely Hydra: the launcher check says no rank can start, and what to run" \
  "^error $lonely/mpiexec: MPICH Hydra [0-9.]+, the hydra launcher of profile generic-pbs; but $lonely holds no hydra_pmi_proxy, which it starts from the directory it was run from: no rank can start run it from its own directory: --launcher-program $resolved_mpiexec, or put $(dirname "$resolved_mpiexec") first on PATH\$" \
  "$(check_of launcher status) $(check_of launcher message) $(check_of launcher remedy)"

expect_eq "pbs: context" "generic-pbs pbs 4242.pbs-sim" \
  "$(jq -r '"\(.context.machine) \(.context.job)"' <<<"$out")"
expect_eq "pbs: no nodes without --deep" "null" "$(jq -r .nodes <<<"$out")"

# --- --deep: one probe per node -----------------------------------------------------
run_ezpz pbs-dry doctor --deep --dry-run
expect_eq "pbs --deep --dry-run: exit 0" 0 "$rc"
expect_match "pbs --deep --dry-run: one probe per host through Hydra" \
  "^$(basename "$real_mpiexec") -n 2 -ppn 1 -f $scratch/run/[^ ]+ $probe --target /tmp\$" "$out"

failed_file="$scratch/run/failed-nodes-4242.pbs-sim.txt"
run_ezpz pbs-deep doctor --deep --json
expect_eq "pbs --deep: exit 0" 0 "$rc"
expect_match "pbs --deep: nodes check" \
  "^(ok|warn) 2 of 2 nodes answered and joined the all-reduce; 0 GPUs each" \
  "$(check_of nodes status) $(check_of nodes message)"
expect_eq "pbs --deep: each node answered from the host Hydra placed it on" "n01 n02" \
  "$(jq -r '[.nodes[].host] | join(" ")' <<<"$out")"
expect_eq "pbs --deep: both joined one all-reduce of size 2" "true 2 2 true 2 2" \
  "$(jq -r '[.nodes[].report | "\(.joined) \(.size) \(.sum)"] | join(" ")' <<<"$out")"
expect_eq "pbs --deep: the yeet target measured" "/tmp /tmp" \
  "$(jq -r '[.nodes[].report.target] | join(" ")' <<<"$out")"
expect_eq "pbs --deep: no failed nodes" "[]" "$(jq -c .failed_nodes <<<"$out")"
expect_eq "pbs --deep: the failed-nodes file" "$failed_file" "$(jq -r .failed_nodes_file <<<"$out")"
expect_eq "pbs --deep: it holds no host" \
  "# ezpz doctor --deep: nodes that failed (job 4242.pbs-sim); for ezpz launch --exclude-file" \
  "$(cat "$failed_file" 2>&1)"

run_ezpz pbs-deep-text doctor --deep
expect_eq "pbs --deep text: exit 0" 0 "$rc"
expect_match "pbs --deep text: a line per node" \
  $'\nnodes \\(2 launched\\)\n  (ok   |WARN )  n01  .*all-reduce ok \\(size 2\\)\n  (ok   |WARN )  n02  .*all-reduce ok \\(size 2\\)\nfailed nodes \\(0\\) written to '"$failed_file"$'\n' \
  "$out"$'\n'

# --- A launch that never reaches n02 ------------------------------------------------
# An mpiexec that starts the probe on n01 alone (through the real Hydra), then fails.
wrap="$scratch/wrap-bin"
mkdir -p "$wrap"
cat >"$wrap/mpiexec" <<EOF
#!/bin/sh
[ "\$1" = --version ] && exec "$real_mpiexec" --version
while [ "\$1" != -f ]; do shift; done
shift 2
"$real_mpiexec" -n 1 -host n01 "\$@"
exit 1
EOF
chmod +x "$wrap/mpiexec"
run_ezpz pbs-n02-lost PATH="$wrap:$system_path" doctor --deep --json
expect_eq "n02 never started: exit 1" 1 "$rc"
expect_eq "n02 never started: named" "error 1 of 2 nodes failed: n02" \
  "$(check_of nodes status) $(check_of nodes message)"
expect_eq "n02 never started: remedy" "leave them out: ezpz launch --exclude-file $failed_file ..." \
  "$(check_of nodes remedy)"
expect_eq "n02 never started: its verdict" "error no report: the launcher exited with status 1" \
  "$(jq -r '.nodes[1] | "\(.status) \(.message)"' <<<"$out")"
expect_eq "n02 never started: n01 answered" "n01 ok" \
  "$(jq -r '.nodes[0] | "\(.host) \(.report != null)"' <<<"$out" | sed 's/true/ok/')"
expect_eq "n02 never started: written" "n02" "$(grep -v '^#' "$failed_file" 2>&1)"
run_ezpz exclude launch --exclude-file "$failed_file" --dry-run --json -- true
expect_eq "ezpz launch --exclude-file takes the file: exit 0" 0 "$rc"
expect_eq "ezpz launch --exclude-file takes the file: n01 only" '["n01"]' "$(jq -c .hosts <<<"$out")"

# --- A launch that hangs: stopped at --timeout -----------------------------------------
marker="${marker_base}91"
on_exit "kill_marked 'sleep $marker'"
cat >"$wrap/mpiexec" <<EOF
#!/bin/sh
[ "\$1" = --version ] && exec "$real_mpiexec" --version
exec sleep $marker
EOF
t0=$(now_ms)
run_ezpz pbs-hang PATH="$wrap:$system_path" doctor --deep --timeout 2 --json
elapsed=$(($(now_ms) - t0))
expect_eq "hung launch: exit 1" 1 "$rc"
expect_eq "hung launch: no node blamed" \
  "error no node answered: the probe launch was stopped after 2 s" \
  "$(check_of nodes status) $(check_of nodes message)"
expect_eq "hung launch: remedy" "run ezpz doctor --deep --dry-run, then that command by hand, to see why" \
  "$(check_of nodes remedy)"
expect_eq "hung launch: ezpz says it stopped it" "ezpz: time limit of 2 s reached; sending SIGTERM to the launcher" "$err"
expect_true "hung launch: over within 10 s (took ${elapsed} ms)" test "$elapsed" -lt 10000
expect_true "hung launch: nothing left running" wait_until 5 has_count 0 "sleep $marker"
expect_eq "hung launch: the file lists no host" "" "$(grep -v '^#' "$failed_file" 2>&1)"

# ================================ The Slurm cluster ================================
slurm_optional=true
source "$(dirname "$0")/slurm_common.sh"
# Whatever happens: n03's slurmd runs again (cluster.sh up starts what is missing). Run after
# slurm_common's clean-up, which takes down instead a cluster this test started.
restart_slurmd() { "$cluster" up >"$scratch/restart.log" 2>&1 || sed 's/^/  restart: /' "$scratch/restart.log" >&2; }
on_exit '$take_down || restart_slurmd'

# slurm_doctor NAME GATE: a 4-node batch job that waits for $scratch/NAME.go (when
# GATE is true), runs `ezpz doctor --deep --json`, then `ezpz launch
# --exclude-file` on the failed-nodes file. Sets job_id, rc, out.
slurm_doctor() {
  local name=$1 gate=$2
  {
    echo '#!/bin/bash'
    printf 'cd %q\n' "$scratch"
    $gate && printf 'for i in $(seq 600); do [ -e %q ] && break; sleep 0.1; done\n' "$scratch/$name.go"
    printf '%q doctor --deep --timeout 40 --json >%q 2>%q\n' "$EZPZ_BIN" "$scratch/$name.out" "$scratch/$name.err"
    printf 'echo $? >%q\n' "$scratch/$name.rc"
    printf '%q launch --exclude-file "$EZPZ_RUN_DIR/failed-nodes-$SLURM_JOB_ID.txt" --dry-run --json -- true >%q 2>&1\n' \
      "$EZPZ_BIN" "$scratch/$name.launch"
  } >"$scratch/$name.sh"
  job_id=$(clean_env env -u MASTER_PORT SLURM_CONF="$SLURM_CONF" sbatch --parsable \
    --job-name="$job_name" -N4 --ntasks-per-node=1 -o "$scratch/$name.slurm" "$scratch/$name.sh")
}
job_running() { scontrol -o show job "$1" 2>/dev/null | grep -q 'JobState=RUNNING'; }
finish_slurm_doctor() {
  local name=$1
  wait_until 90 test -s "$scratch/$name.rc" || fail "$name: ezpz doctor did not finish within 90 s"
  wait_until 30 test -s "$scratch/$name.launch"
  rc=$(cat "$scratch/$name.rc" 2>/dev/null || echo none)
  out=$(cat "$scratch/$name.out" 2>/dev/null)
  [ "$rc" == none ] && sed "s/^/  $name: /" "$scratch/$name.slurm" >&2
}

# --- Every slurmd up --------------------------------------------------------------------
slurm_doctor healthy false
finish_slurm_doctor healthy
expect_eq "slurm --deep: exit 0" 0 "$rc"
expect_match "slurm --deep: srun" "^ok /[^ ]*/srun: Slurm [0-9.]+, the srun launcher of profile generic-slurm\$" \
  "$(check_of launcher status) $(check_of launcher message)"
expect_match "slurm --deep: all four joined (srun --mpi=pmi2 from the profile)" \
  "^(ok|warn) 4 of 4 nodes answered and joined the all-reduce" \
  "$(check_of nodes status) $(check_of nodes message)"
expect_eq "slurm --deep: one all-reduce of size 4" "n01:4 n02:4 n03:4 n04:4" \
  "$(jq -r '[.nodes[] | "\(.host):\(.report.sum)"] | join(" ")' <<<"$out")"
expect_eq "slurm --deep: launch uses every node" '["n01","n02","n03","n04"]' \
  "$(jq -c .hosts "$scratch/healthy.launch" 2>&1)"

# --- n03's slurmd stopped -------------------------------------------------------------------
slurm_doctor n03-down true
if ! wait_until 60 job_running "$job_id"; then
  fail "n03 down: job $job_id not running within 60 s"
else
  kill -TERM "$(cat "$EZPZ_SLURM_DIR/run/slurmd-n03.pid")"
  slurmd_gone() { ! kill -0 "$(cat "$EZPZ_SLURM_DIR/run/slurmd-n03.pid" 2>/dev/null)" 2>/dev/null; }
  expect_true "n03 down: its slurmd stopped" wait_until 10 slurmd_gone
  touch "$scratch/n03-down.go"
  finish_slurm_doctor n03-down
  restart_slurmd
  expect_eq "n03 down: exit 1" 1 "$rc"
  expect_eq "n03 down: named" "error 1 of 4 nodes failed: n03" \
    "$(check_of nodes status) $(check_of nodes message)"
  expect_match "n03 down: its verdict" "^n03 error no report: the launcher exited with status [0-9]+\$" \
    "$(jq -r '.nodes[2] | "\(.host) \(.status) \(.message)"' <<<"$out")"
  expect_eq "n03 down: the others answered, then waited for n03" "n01 warn n02 warn n04 warn" \
    "$(jq -r '[.nodes[] | select(.host != "n03") | "\(.host) \(.status)"] | join(" ")' <<<"$out")"
  expect_eq "n03 down: written to the failed-nodes file" "n03" \
    "$(grep -v '^#' "$scratch/run/failed-nodes-$job_id.txt" 2>&1)"
  expect_eq "n03 down: ezpz launch --exclude-file leaves it out" '["n01","n02","n04"]' \
    "$(jq -c .hosts "$scratch/n03-down.launch" 2>&1)"
fi
expect_eq "n03's slurmd runs again: 4 idle nodes" "n01 idle
n02 idle
n03 idle
n04 idle" "$(sinfo -h -N -o '%N %T' | sort -u)"
finish
