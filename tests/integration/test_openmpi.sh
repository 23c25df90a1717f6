#!/usr/bin/env bash
# Real local runs over Open MPI's mpirun, whichever MPI's mpirun comes first on PATH: ezpz
# checks the launcher's identity before it runs it (cached), takes the program a user names
# (--launcher-program), refuses another MPI's in one line, and answers to the names users type.
# Each case pins its PATH with a directory of links: never whichever MPI the system's
# alternatives chose.
source "$(dirname "$0")/common.sh"

ompi=$(command -v mpirun.openmpi)
hydra=$(command -v mpiexec.hydra)
if [ -z "$ompi" ] || [ -z "$hydra" ]; then
  echo "skipped: needs Open MPI's mpirun.openmpi and MPICH's mpiexec.hydra (apt-get install openmpi-bin mpich)"
  exit 77
fi
hydra_version=$("$hydra" --version | sed -n 's/^ *Version: *//p')

# As root, Open MPI refuses to start unless told it may; the runs below tell it, and one
# further down checks what ezpz says when it is not told.
as_root=()
[ "$(id -u)" = 0 ] && as_root=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
# No scheduler variables, no LD_LIBRARY_PATH (env -i): Open MPI must not warn about it.
launch_env() { clean_env env -u MASTER_PORT "${as_root[@]}" "$@"; }

# mpirun (and mpiexec) first on PATH is MPICH's Hydra, or Open MPI's; the system dirs follow.
system_path=/usr/local/bin:/usr/bin:/bin
mpich_first="$scratch/mpich-first"; ompi_first="$scratch/ompi-first"; only_mpich="$scratch/only-mpich"
mkdir -p "$mpich_first" "$ompi_first" "$only_mpich"
ln -s "$hydra" "$mpich_first/mpirun"; ln -s "$hydra" "$mpich_first/mpiexec"
ln -s "$ompi" "$ompi_first/mpirun"; ln -s "$ompi" "$ompi_first/mpiexec"
ln -s "$hydra" "$only_mpich/mpirun"

ranks='echo "rank=$RANK local=$LOCAL_RANK size=$WORLD_SIZE"'
two_ranks="rank=0 local=0 size=2
rank=1 local=1 size=2"

# launch_ok NAME PATH-HEAD PROGRAM EZPZ-OPTIONS...: the plan runs PROGRAM, and two ranks
# report with nothing on stderr (no warning from Open MPI, no error from ezpz).
launch_ok() {
  local name=$1 head=$2 program=$3; shift 3
  run_ezpz "$name-plan" PATH="$head:$system_path" launch "$@" -n 2 --dry-run -- true
  expect_eq "$name: the plan runs $program" "$program" "$(grep -o "EZPZ_LAUNCHER=[a-z]* [^ ]*" <<<"$out" | cut -d' ' -f2)"
  run_ezpz "$name" PATH="$head:$system_path" launch "$@" -n 2 -- sh -c "$ranks"
  expect_eq "$name: exit status" 0 "$rc"
  expect_eq "$name: both ranks" "$two_ranks" "$(sort <<<"$out")"
  expect_eq "$name: nothing on stderr" "" "$err"
}

# --- Open MPI, whichever mpirun is first ------------------------------------
launch_ok "MPICH's mpirun first" "$mpich_first" mpirun.openmpi --launcher openmpi
launch_ok "Open MPI's mpirun first" "$ompi_first" mpirun --launcher openmpi
launch_ok "--launcher ompi" "$mpich_first" mpirun.openmpi --launcher ompi

# --- The program named ------------------------------------------------------
launch_ok "--launcher-program by name" "$mpich_first" mpirun.openmpi \
  --launcher openmpi --launcher-program mpirun.openmpi
launch_ok "--launcher-program by path" "$mpich_first" "$ompi" \
  --launcher openmpi --launcher-program "$ompi"

# --- Another MPI's program is refused, in one line, before anything runs ------
run_ezpz only-mpich PATH="$only_mpich" launch --launcher openmpi -n 2 -- /bin/sh -c "$ranks"
expect_eq "only MPICH's mpirun: exit status" 127 "$rc"
expect_eq "only MPICH's mpirun: the error" \
  "ezpz: error: the openmpi launcher needs Open MPI's mpirun: $only_mpich/mpirun is MPICH Hydra $hydra_version (install Open MPI or load its module, or name Open MPI's mpirun with --launcher-program PATH, or pass --launcher hydra)" \
  "$err"
expect_eq "only MPICH's mpirun: nothing ran" "" "$out"
run_ezpz wrong-program PATH="$ompi_first:$system_path" launch --launcher openmpi \
  --launcher-program mpiexec.hydra -n 2 -- sh -c "$ranks"
expect_eq "--launcher-program mpiexec.hydra: exit status" 127 "$rc"
expect_eq "--launcher-program mpiexec.hydra: the error" \
  "ezpz: error: the openmpi launcher needs Open MPI's mpirun: $hydra (--launcher-program) is MPICH Hydra $hydra_version (name Open MPI's mpirun instead, or pass --launcher hydra)" \
  "$err"
# --dry-run still prints the plan, with the program as found.
run_ezpz only-mpich-plan PATH="$only_mpich" launch --launcher openmpi -n 2 --dry-run -- true
expect_eq "only MPICH's mpirun, --dry-run: exit status" 0 "$rc"
expect_match "only MPICH's mpirun, --dry-run: the plan" " mpirun -n 2 -N 2 " "$out"

# --- MPICH by the name users type, where mpiexec is Open MPI's ----------------
launch_ok "--launcher mpich" "$ompi_first" mpiexec.hydra --launcher mpich

# --- The identity is asked once, then read from the cache ----------------------
cache="$scratch/home/.cache/ezpz/launcher-identity"
expect_true "the identity cache is written" test -s "$cache"
expect_true "the identity cache knows Open MPI's" grep -q "^$ompi	.*	Open MPI	" "$cache"
printf 'not a cache\n' >"$cache"
launch_ok "a corrupt cache is ignored" "$mpich_first" mpirun.openmpi --launcher openmpi
expect_match "a corrupt cache is replaced" "^ezpz-launcher-identity-v1" "$(head -1 "$cache")"

# --- As root without Open MPI's consent: ezpz says what to set -----------------
if [ "$(id -u)" = 0 ]; then
  as_root=()
  run_ezpz root PATH="$ompi_first:$system_path" launch --launcher openmpi -n 2 -- sh -c "$ranks"
  expect_true "as root, not allowed: a failure" test "$rc" -ne 0
  expect_eq "as root, not allowed: ezpz says what to set" \
    "ezpz: warning: as root, Open MPI refuses to start without OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1: export them to run as root (ezpz never sets them)" \
    "$(head -1 <<<"$err")"
fi

finish
