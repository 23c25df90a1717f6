#!/usr/bin/env bash
# Real runs whose ranks get the cores the plan says, in each installed launcher's own words:
# a profile's binding (depth, and a list that leaves core 0 out) under MPICH's Hydra
# (-bind-to user:...) and Open MPI (--map-by ppr:N:node:PE=d --bind-to core). Each rank
# prints the cores the kernel lets it run on. Sized for a 2-core machine.
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

# Two profiles of this host: one core per rank from core 0, and a one-socket list that leaves
# core 0 to the system (as Aurora leaves cores 0 and 52).
machines="$scratch/machines"
mkdir -p "$machines"
profile() {
  printf 'description: %s\nscheduler: local\nlauncher: hydra\nmaster_addr: 127.0.0.1\ncpu_bind:\n%s\n' "$@"
}
profile "one core per rank" "  style: depth
  depth: 1" >"$machines/tiny-depth.yaml"
profile "core 0 left to the system" "  style: list
  sockets: 1
  cores_per_socket: 2
  reserved_cores: [0]" >"$machines/tiny-list.yaml"

cores='echo "$RANK $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'

# bound NAME EXPECTED-WORDS EXPECTED-CORES EZPZ-LAUNCH-OPTIONS...: the plan holds the words and
# each rank runs on the cores given ("RANK CORES" lines, by rank).
bound() {
  local name=$1 words=$2 want=$3; shift 3
  run_ezpz "$name-plan" launch --no-record "$@" --dry-run -- true
  expect_true "$name: the plan says $words" grep -qF -- " $words " <<<"$out"
  run_ezpz "$name" launch --no-record "$@" -- sh -c "$cores"
  expect_eq "$name: exit status" 0 "$rc"
  expect_eq "$name: each rank on its cores" "$want" "$(sort <<<"$out")"
  expect_eq "$name: nothing on stderr" "" "$err"
}

bound "hydra, depth 1" "-bind-to user:0,1" "0 0
1 1" --machine tiny-depth -n 2
bound "hydra, list without core 0" "-bind-to user:1" "0 1" --machine tiny-list -n 1
# A user's binding is Hydra's own words, passed as written.
bound "hydra, --cpu-bind user:1,0" "-bind-to user:1,0" "0 1
1 0" --machine tiny-depth -n 2 --cpu-bind user:1,0

if [ -n "$ompi" ]; then
  bound "openmpi, depth 1" "--map-by ppr:2:node:PE=1 --bind-to core" "0 0
1 1" --machine tiny-depth --launcher openmpi -n 2
  run_ezpz "openmpi, list" launch --no-record --machine tiny-list --launcher openmpi -n 1 -- true
  expect_eq "openmpi, list: refused before anything runs" 2 "$rc"
  expect_eq "openmpi, list: in one line" \
    "ezpz: error: launcher openmpi cannot bind each rank to its own list of cores (1-1), as the profile asks; give its own binding with --cpu-bind" \
    "$err"
else
  echo "note: no Open MPI (mpirun.openmpi); its cases did not run"
fi
finish
