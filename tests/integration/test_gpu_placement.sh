#!/usr/bin/env bash
# GPU placement for real ranks: a simulated two-node PBS job (test_pbs_simulated.sh's n01 and
# n02, MPICH's Hydra with HYDRA_LAUNCHER=fork) run with GPU machines' own profiles. No GPU is
# here: each rank prints the masks ezpz-rankenv gave it, which is all a GPU runtime reads.
# The profiles' CPU lists name cores this host lacks, so --cpu-bind none (Hydra's own words)
# leaves binding out; test_binding.sh checks binding.
source "$(dirname "$0")/common.sh"

require_mpiexec
start_fake_pbs_job
launch_env() { clean_env env -u MASTER_PORT "${pbs_env[@]}" "$@"; }
reporter='echo "host=$MPIR_CVAR_CH3_INTERFACE_HOSTNAME local=$LOCAL_RANK cuda=${CUDA_VISIBLE_DEVICES-unset} ze=${ZE_AFFINITY_MASK-unset} device=${EZPZ_LOCAL_DEVICE-unset}"'

# lines VARIABLE DEVICES...: what local rank i on n01 and on n02 prints when VARIABLE (cuda or
# ze) holds the i-th of DEVICES and the other is unset ("unset" for none: no EZPZ_LOCAL_DEVICE).
lines() {
  local variable=$1 host i; shift
  local devices=("$@")
  for host in n01 n02; do
    for i in "${!devices[@]}"; do
      local d=${devices[i]} cuda=unset ze=unset device=0
      [ "$d" == unset ] && device=unset
      if [ "$variable" == cuda ]; then cuda=$d; else ze=$d; fi
      echo "host=$host local=$i cuda=$cuda ze=$ze device=$device"
    done
  done | sort
}

# placement NAME MACHINE VARIABLE "VAR=VALUE..." "LAUNCH-OPTIONS" DEVICES...
placement() {
  local name=$1 machine=$2 variable=$3 vars=$4 options=$5; shift 5
  # shellcheck disable=SC2086 # the options are this file's own words
  run_ezpz "$name" EZPZ_MACHINE="$machine" $vars launch --launcher hydra --cpu-bind none \
    $options -- sh -c "$reporter"
  expect_eq "$name: exit status" 0 "$rc"
  expect_eq "$name: each local rank's devices: $*" "$(lines "$variable" "$@")" "$(sort <<<"$out")"
}

placement "polaris: full nodes, NUMA order" polaris cuda "" "--ppn 4" 3 2 1 0
placement "polaris: 2 per node" polaris cuda "" "--ppn 2" 3 2
placement "polaris: --gpus-per-rank 2" polaris cuda "" "--gpus-per-rank 2 --ppn 2" 3,2 1,0
placement "polaris: 2 ranks per GPU" polaris cuda "" "--ppn 8" 3 3 2 2 1 1 0 0
placement "polaris: within the user's mask" polaris cuda "CUDA_VISIBLE_DEVICES=0,2" "--ppn 2" 2 0
placement "polaris: within a -x mask" polaris cuda "" "--ppn 2 -x CUDA_VISIBLE_DEVICES=1,3" 3 1
placement "aurora: one tile each" aurora ze "" "--ppn 4" 0 1 2 3
placement "aurora: --gpus-per-rank 2" aurora ze "" "--ppn 2 --gpus-per-rank 2" 0,1 2,3
placement "polaris: --no-gpu-bind" polaris cuda "" "--ppn 2 --no-gpu-bind" unset unset

run_ezpz "polaris: a mask too small" EZPZ_MACHINE=polaris CUDA_VISIBLE_DEVICES=1 \
  launch --launcher hydra --cpu-bind none --ppn 4 -- true
expect_eq "polaris: a mask too small: exit status" 2 "$rc"
expect_eq "polaris: a mask too small: the error" \
  "ezpz: error: 4 ranks per host at 1 GPU each need 4 GPUs, but CUDA_VISIBLE_DEVICES=1 has 1; pass --no-gpu-bind to leave devices alone" \
  "$err"
finish
