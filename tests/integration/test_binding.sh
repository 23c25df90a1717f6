#!/usr/bin/env bash
# Real runs whose ranks get the cores the plan says, in each installed launcher's own words:
# a profile's binding (depth, and a list that leaves core 0 out) under MPICH's Hydra
# (-bind-to user:...) and Open MPI (--map-by ppr:N:node:PE=d --bind-to core). Each rank
# prints the cores the kernel lets it run on. Then srun (-c d --cpu-bind=cores, mask_cpu:) in
# whole-node jobs of a real Slurm cluster started for this test, whose slurmd binds
# (task/affinity; tests/slurm/cluster.sh's own binds nothing). Sized for a 2-core machine.
source "$(dirname "$0")/common.sh"
require_mpiexec
ompi=$(command -v mpirun.openmpi)

if [ "$(nproc --all)" -lt 2 ] || ! grep -q '^Cpus_allowed_list:[[:space:]]*0-1$' /proc/self/status; then
  echo "skipped: needs cores 0 and 1, both allowed to this test"
  exit 77
fi

as_root=()
[ "$(id -u)" = 0 ] && as_root=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
launch_env() { clean_env env -u MASTER_PORT "${as_root[@]}" EZPZ_MACHINES_PATH="$machines" "$@"; }

# Profiles of this host: one core per rank from core 0, and a one-socket list that leaves core 0
# to the system (as Aurora leaves cores 0 and 52); run locally and under Slurm.
machines="$scratch/machines"
mkdir -p "$machines"
# profile NAME SCHEDULER LAUNCHER CPU_BIND-LINES
profile() {
  printf 'scheduler: %s\nlauncher: %s\ncpu_bind:\n%s\n' "$2" "$3" "$4" >"$machines/$1.yaml"
  [ "$2" = local ] && echo "master_addr: 127.0.0.1" >>"$machines/$1.yaml"
}
depth1="  style: depth
  depth: 1"
no_core0="  style: list
  sockets: 1
  cores_per_socket: 2
  reserved_cores: [0]"
profile tiny-depth local hydra "$depth1"
profile tiny-list local hydra "$no_core0"
profile tiny-depth-slurm slurm srun "$depth1"
profile tiny-list-slurm slurm srun "$no_core0"

cores='echo "$RANK $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'

# bound RUN REPORT NAME EXPECTED-WORDS EXPECTED-LINES EZPZ-LAUNCH-OPTIONS...: ezpz run by RUN
# (run_ezpz here, in_job under Slurm); the plan holds the words and each rank, printing its cores
# with the command REPORT, prints the lines expected (sorted).
bound() {
  local run=$1 report=$2 name=$3 words=$4 want=$5; shift 5
  "$run" "$name-plan" launch --no-record "$@" --dry-run -- true
  expect_true "$name: the plan says $words" grep -qF -- " $words " <<<"$out"
  "$run" "$name" launch --no-record "$@" -- sh -c "$report"
  expect_eq "$name: exit status" 0 "$rc"
  expect_eq "$name: each rank on its cores" "$want" "$(sort <<<"$out")"
  expect_eq "$name: nothing on stderr" "" "$err"
}
local_bound() { bound run_ezpz "$cores" "$@"; }

local_bound "hydra, depth 1" "-bind-to user:0,1" "0 0
1 1" --machine tiny-depth -n 2
local_bound "hydra, list without core 0" "-bind-to user:1" "0 1" --machine tiny-list -n 1
# A user's binding is Hydra's own words, passed as written.
local_bound "hydra, --cpu-bind user:1,0" "-bind-to user:1,0" "0 1
1 0" --machine tiny-depth -n 2 --cpu-bind user:1,0
# PALS's list:A:B (the Python ezpz's CPU_BIND=--cpu-bind=list:...) in Hydra's words: it refused
# -bind-to list:1:0 at start-up (hwloc: unrecognized directive).
local_bound "hydra, --cpu-bind list:1:0" "-bind-to user:1,0" "0 1
1 0" --machine tiny-depth -n 2 --cpu-bind list:1:0

if [ -n "$ompi" ]; then
  local_bound "openmpi, depth 1" "--map-by ppr:2:node:PE=1 --bind-to core" "0 0
1 1" --machine tiny-depth --launcher openmpi -n 2
  run_ezpz "openmpi, list" launch --no-record --machine tiny-list --launcher openmpi -n 1 -- true
  expect_eq "openmpi, list: refused before anything runs" 2 "$rc"
  expect_eq "openmpi, list: in one line" \
    "ezpz: error: launcher openmpi cannot bind each rank to its own list of cores (1-1), as the profile asks; give its own binding with --cpu-bind" \
    "$err"
else
  echo "note: no Open MPI (mpirun.openmpi); its cases did not run"
fi
# --- srun, in real Slurm jobs ---------------------------------------------------------------
cluster="$EZPZ_SRC/tests/slurm/cluster.sh"
slurm_tools() {
  local tool
  for tool in salloc srun slurmctld slurmd munged; do
    PATH="$PATH:/usr/sbin:/sbin" command -v "$tool" >/dev/null || return 1
  done
}
if [ "$(id -u)" -ne 0 ] || ! slurm_tools; then
  echo "note: the srun cases need root and Slurm (slurm-wlm, munge); they did not run"
  finish
  exit
fi
export EZPZ_SLURM_DIR="$scratch/slurm" EZPZ_SLURM_PORT_BASE=17300 EZPZ_SLURM_TASK_PLUGIN=task/affinity
on_exit "bash '$cluster' down >/dev/null 2>&1"
if ! bash "$cluster" up >"$scratch/slurm-up.out" 2>&1; then
  fail "the Slurm cluster did not come up: $(tail -n 5 "$scratch/slurm-up.out")"
  finish
  exit
fi
on_host='echo "$RANK $SLURMD_NODENAME $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'

# in_job NAME EZPZ-ARGS...: ezpz run in a whole-node job on n01 and n02.
in_job() {
  local name=$1; shift
  launch_env SLURM_CONF="$EZPZ_SLURM_DIR/slurm.conf" "$timeout_bin" -k 5 60 \
    salloc -Q -N 2 --exclusive -w n01,n02 "$EZPZ_BIN" "$@" >"$scratch/$name.out" 2>"$scratch/$name.err"
  rc=$?
  out=$(cat "$scratch/$name.out")
  err=$(cat "$scratch/$name.err")
}

srun_bound() { bound in_job "$on_host" "$@"; }
srun_bound "srun, depth 1" "-c 1 --cpu-bind=cores" "0 n01 0
1 n01 1
2 n02 0
3 n02 1" --machine tiny-depth-slurm --ppn 2
srun_bound "srun, list without core 0" "--cpu-bind=mask_cpu:0x2" "0 n01 1
1 n02 1" --machine tiny-list-slurm --ppn 1
finish
