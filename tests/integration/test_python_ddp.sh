#!/usr/bin/env bash
# The user's own PyTorch script, as a user runs it: `ezpz launch -- python3
# ddp.py` with Debian's python3-torch. tests/fixtures/python/ezpz_ddp/train.py
# is plain DDP (gloo, init_process_group() from env://, DistributedDataParallel,
# an all_gather of the parameters); each rank prints its RANK, LOCAL_RANK,
# WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, where it was placed, and whether
# every rank's parameters matched its own. Run under local MPICH, Open MPI
# (mpirun.openmpi), torchrun, and a simulated 2-node PBS job (MPICH and
# torchrun); also as `python3 -m`, a script that reads only LOCAL_RANK, one that
# picks its device as the README says (EZPZ_LOCAL_DEVICE, else LOCAL_RANK), and a
# Python rank printing every second under --idle-timeout. The real Slurm
# cluster's case is in test_slurm.sh (its cluster is already up there).
source "$(dirname "$0")/common.sh"
announce_passes

require_mpiexec
use_torch_python
launch_env() { clean_env env -u MASTER_PORT "$@"; }

# expected_ddp ADDR PPN HOST...: the sorted lines of PPN ranks on each HOST in
# order, every one seeing MASTER_ADDR=ADDR and parameters that match.
expected_ddp() { rank_lines "$@" | sed 's/^/ddp /; s/$/ params=match/'; }
# expect_ddp NAME ADDR PPN HOST...: the last run exited 0 and each rank printed its line once.
expect_ddp() {
  local name=$1; shift
  expect_eq "$name: exit status" 0 "$rc"
  expect_eq "$name: ranks 0..N-1 once each, host by host, their env contract, parameters equal" \
    "$(expected_ddp "$@")" "$(grep '^ddp ' <<<"$out" | sort)"
  [ "$rc" == 0 ] || sed "s/^/  $name: stderr: /" <<<"$err" >&2
}
# timed NAME ARGS...: run_ezpz, then say how long it took.
timed() {
  local t0
  t0=$(now_ms)
  run_ezpz "$@"
  printf '%s: %d ms\n' "$1" $(($(now_ms) - t0))
}
# Words a shell would split, expand or run: rank 0 must print them unchanged.
pwned="$scratch/pwned"
hostile=("two  words" "\$(touch $pwned)" "\`touch $pwned\`" "it's")
expect_args() {
  expect_eq "$1: rank 0 got its arguments unchanged" "$(printf 'arg=[%s]\n' "${hostile[@]}")" \
    "$(grep '^arg=' <<<"$out")"
  expect_true "$1: no argument was executed" test ! -e "$pwned"
}
here=$(hostname)

# --- Local MPICH (Hydra) ------------------------------------------------------
timed mpich launch -n 2 -- "$python" ddp.py "${hostile[@]}"
expect_ddp mpich 127.0.0.1 2 "$here"
expect_args mpich

timed module launch -n 2 -- "$python" -m ezpz_ddp.train
expect_ddp "python3 -m" 127.0.0.1 2 "$here"

timed local-rank launch -n 2 -- "$python" local_rank.py
expect_eq "LOCAL_RANK only: exit status" 0 "$rc"
expect_eq "LOCAL_RANK only: local ranks 0 and 1" $'local_rank=0\nlocal_rank=1' "$(sort <<<"$out")"

# The README's device pick: without a GPU placement (the local profile has none) no
# EZPZ_LOCAL_DEVICE is set, and each rank's device is its LOCAL_RANK.
timed local-device launch -n 2 -- "$python" local_device.py
expect_eq "device pick without placement: exit status" 0 "$rc"
expect_eq "device pick without placement: LOCAL_RANK" \
  $'local_rank=0 local_device=0\nlocal_rank=1 local_device=1' "$(sort <<<"$out")"

# --- --idle-timeout and a Python rank printing into a pipe -----------------------
# Python block-buffers print() into a pipe: without PYTHONUNBUFFERED (ezpz sets it
# when a watchdog reads the output) this healthy rank would look silent for 4 s and
# be stopped as a hang after 3.
tick='import time
for i in range(4):
    print("tick", i)
    time.sleep(1)'
timed idle launch -n 1 --idle-timeout 3 -- "$python" -c "$tick"
expect_eq "idle timeout: a rank printing every second runs to the end" 0 "$rc"
expect_eq "idle timeout: all its lines" $'tick 0\ntick 1\ntick 2\ntick 3' "$out"

# --- torchrun -----------------------------------------------------------------
timed torchrun launch -n 2 --launcher torchrun -- "$python" ddp.py
torchrun_addr=$(sed -n 's/^ddp rank=0 .* addr=\([^ ]*\) .*/\1/p' <<<"$out")
expect_match "torchrun: MASTER_ADDR is this host ($torchrun_addr)" \
  "^(localhost|127\.0\.0\.1|$here|$(hostname -f))\$" "$torchrun_addr"
expect_ddp torchrun "$torchrun_addr" 2 "$here"

# --- ezpz doctor starts torchrun to check it ----------------------------------------
run_ezpz doctor-torchrun doctor --launcher torchrun
expect_true "doctor: Debian's torchrun starts a rank" \
  grep -qxF "  ok     launcher    /usr/bin/torchrun: starts a rank, the torchrun launcher (--launcher)" \
  <<<"$out"
# Debian's torchrun as it is without ezpz's --redirects/--tee: on Python 3.11 with torch
# 1.x it cannot start anything.
broken_torch='import sys, importlib.metadata as m
sys.exit(not (sys.version_info >= (3, 11) and m.version("torch").startswith("1.")))'
if ! "$python" -c "$broken_torch"; then
  echo "SKIP: doctor: this torch starts without --redirects/--tee"
else
mkdir -p "$scratch/rawbin"
printf '#!%s\nimport sys\nfrom torch.distributed.run import main\nsys.argv = [a for a in sys.argv if not a.startswith(("--redirects", "--tee"))]\nmain()\n' \
  "$python" >"$scratch/rawbin/torchrun"
chmod +x "$scratch/rawbin/torchrun"
run_ezpz doctor-raw-torchrun PATH="$scratch/rawbin:$system_path" doctor --launcher torchrun
expect_eq "doctor: torchrun 1.13 on Python 3.11 without --redirects/--tee is an error, exit 1" 1 "$rc"
expect_true "doctor: the traceback's last line" grep -qxF \
  "  ERROR  launcher    $scratch/rawbin/torchrun cannot start a rank: exit 1: AttributeError: 'NoneType' object has no attribute 'get'" \
  <<<"$out"
fi

# --- Open MPI -------------------------------------------------------------------
# common.sh pins `mpirun` to mpirun.openmpi. As root, Open MPI refuses to start
# without both of its allow-run-as-root variables (ezpz never sets them itself).
if ! mpirun --version 2>/dev/null | grep -q 'Open MPI'; then
  echo "SKIP: openmpi: $(command -v mpirun || echo mpirun) is not Open MPI's (apt-get install openmpi-bin)"
else
  as_root=()
  [ "$(id -u)" -eq 0 ] && as_root=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
  timed openmpi "${as_root[@]}" launch -n 2 --launcher openmpi -- "$python" ddp.py
  expect_ddp openmpi 127.0.0.1 2 "$here"
fi

# --- A simulated 2-node PBS job: n01 and n02, 2 slots each --------------------------
start_fake_pbs_job
launch_env() { clean_env env -u MASTER_PORT -u EZPZ_MACHINE "${pbs_env[@]}" "$@"; }

timed pbs launch -- "$python" ddp.py
expect_ddp "pbs" n01 2 n01 n02

# With Polaris's placement each rank sees only its own GPU: EZPZ_LOCAL_DEVICE=0 on every
# rank, where LOCAL_RANK would name a device it cannot see. (--cpu-bind none: Polaris's
# cores are not this host's.)
timed pbs-local-device EZPZ_MACHINE=polaris launch --launcher hydra --cpu-bind none --ppn 2 \
  -- "$python" local_device.py
expect_eq "device pick under Polaris's placement: exit status" 0 "$rc"
expect_eq "device pick under Polaris's placement: 0 on every rank" \
  "$(printf 'local_rank=%s local_device=0\n' 0 0 1 1)" "$(sort <<<"$out")"

# One torchrun per host, started by Hydra, meeting at the first host: node ranks in
# host order, so RANK and MASTER_ADDR are what every other launcher gives.
rm -f "$pwned"
timed pbs-torchrun launch --launcher torchrun -- "$python" ddp.py "${hostile[@]}"
expect_ddp "pbs torchrun" n01 2 n01 n02
expect_args "pbs torchrun"

finish
