#!/usr/bin/env bash
# GPUs under real Slurm. The nodes of tests/slurm/cluster.sh have GRES gpu:4
# (stand-in device files, 8 CPUs each), so srun's --gpus-per-task and
# --gpu-bind give each task its own CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES
# and ZE_AFFINITY_MASK as on a GPU machine. Each case is one 2-node batch job
# whose script runs one srun (batch_exe=(srun)) or ezpz (batch_exe=()), and
# checks what every task sees. The plain srun cases pin down what Slurm 22.05
# itself does, which the ezpz cases rely on.
#
# Needs root (cluster.sh); without it, skipped (77). EZPZ_SLURM_KEEP=1 and
# EZPZ_SLURM_DIR as for test_slurm.sh (slurm_common.sh).
source "$(dirname "$0")/common.sh"
announce_passes
source "$(dirname "$0")/slurm_common.sh"

expect_eq "cluster: 4 GPUs on each node" "n01 gpu:4
n02 gpu:4
n03 gpu:4
n04 gpu:4" "$(sinfo -h -N -o '%N %G' | sort -u)"

# One line per task: its node, local id and the devices it was given.
gpu_reporter='echo "node=${SLURMD_NODENAME-unset} local=${SLURM_LOCALID-unset} cuda=${CUDA_VISIBLE_DEVICES-unset} rocr=${ROCR_VISIBLE_DEVICES-unset} ze=${ZE_AFFINITY_MASK-unset}"'

# gpu_lines DEVICES...: the reporter's lines (sorted) when local rank i on n01
# and on n02 sees the i-th of DEVICES ("0", "2,3", or "unset" for none set).
gpu_lines() {
  local node i devices=("$@")
  for node in n01 n02; do
    for i in "${!devices[@]}"; do
      local d=${devices[i]}
      echo "node=$node local=$i cuda=$d rocr=$d ze=$d"
    done
  done | sort
}

# expect_gpus NAME [--stderr PATTERN] DEVICES...: the job of run_batch NAME
# exited 0, each local rank i on both nodes saw the i-th of DEVICES, and its
# stderr was empty (or matched PATTERN, a grep -E regex, on every line).
expect_gpus() {
  local name=$1 pattern=""; shift
  [ "$1" == --stderr ] && { pattern=$2; shift 2; }
  expect_eq "$name: exit status" 0 "$rc"
  expect_eq "$name: each local rank's devices: $*" "$(gpu_lines "$@")" "$(sort <<<"$out")"
  if [ -z "$pattern" ]; then
    expect_eq "$name: nothing on stderr" "" "$err"
  else
    expect_eq "$name: stderr only says: $pattern" "" "$(grep -vE -- "$pattern" <<<"$err")"
    expect_true "$name: stderr says it" grep -qE -- "$pattern" <<<"$err"
  fi
}

# srun_case NAME "SBATCH-OPTIONS" "SRUN-OPTIONS" [--stderr PATTERN] DEVICES...:
# a 2-node job running `srun SRUN-OPTIONS sh -c "$gpu_reporter"`, then expect_gpus.
srun_case() {
  local name=$1 sbatch_options=$2 srun_options=$3; shift 3
  batch_exe=(srun)
  # shellcheck disable=SC2086 # the options are this file's own words
  run_batch "$name" $sbatch_options -- $srun_options sh -c "$gpu_reporter"
  batch_exe=()
  expect_gpus "$name" "$@"
}

# --- Plain srun: what Slurm 22.05 does --------------------------------------------
# --gpus-per-task=1 alone binds per task (an implicit --gpu-bind=per_task:1):
# local rank i gets GPU i, each task exactly one, all distinct.
srun_case "srun --gpus-per-task=1 -c2" "-N2 --ntasks-per-node=4 -c2 --gpus-per-node=4" \
  "-N2 -n8 --ntasks-per-node=4 -c2 --gpus-per-task=1" 0 1 2 3
srun_case "srun --gpus-per-task=1 --gpu-bind=per_task:1" "-N2 --ntasks-per-node=4 --gpus-per-node=4" \
  "-N2 -n8 --ntasks-per-node=4 --gpus-per-task=1 --gpu-bind=per_task:1" 0 1 2 3
# map_gpu names node GPU indices, one per local rank (NERSC's reversed order).
srun_case "srun --gpus-per-task=1 --gpu-bind=map_gpu:3,2,1,0" "-N2 --ntasks-per-node=4 --gpus-per-node=4" \
  "-N2 -n8 --ntasks-per-node=4 --gpus-per-task=1 --gpu-bind=map_gpu:3,2,1,0" 3 2 1 0
srun_case "srun --gpus-per-task=2" "-N2 --ntasks-per-node=2 --gpus-per-node=4" \
  "-N2 -n4 --ntasks-per-node=2 --gpus-per-task=2" 0,1 2,3
# The job's --gpus-per-task reaches a plain srun in its script (SLURM_GPUS_PER_TASK).
srun_case "sbatch --gpus-per-task=1, plain srun" "-N2 --ntasks-per-node=4 --gpus-per-task=1" \
  "-N2 -n8 --ntasks-per-node=4" 0 1 2 3
# A partial node: map_gpu must name GPUs inside the step's. With
# --gpus-per-node=4 the step has all four, and 3,2 holds.
srun_case "srun 2 per node --gpus-per-node=4 --gpu-bind=map_gpu:3,2" "-N2 --ntasks-per-node=2 --gres=gpu:4" \
  "-N2 -n4 --ntasks-per-node=2 --gpus-per-node=4 --gpu-bind=map_gpu:3,2" 3 2
srun_case "srun 2 per node --gpus-per-node=4 --gpus-per-task=1 --gpu-bind=map_gpu:3,2" \
  "-N2 --ntasks-per-node=2 --gres=gpu:4" \
  "-N2 -n4 --ntasks-per-node=2 --gpus-per-node=4 --gpus-per-task=1 --gpu-bind=map_gpu:3,2" 3 2
# With --gpus-per-task=1 the step has GPUs 0 and 1 only: Slurm says so on
# stderr, gives every task GPU 0, and exits 0.
srun_case "srun 2 per node --gpus-per-task=1 --gpu-bind=map_gpu:3,2" "-N2 --ntasks-per-node=2 --gres=gpu:4" \
  "-N2 -n4 --ntasks-per-node=2 --gpus-per-task=1 --gpu-bind=map_gpu:3,2" \
  --stderr '^slurmstepd-n0[12]: error: Bind request gpu:map_gpu:3,2 does not specify any devices within the allocation for task [01]\. Binding to the first device in the allocation instead\.$' \
  0 0
# --gpu-bind=none sets no device variable at all (a task sees every GPU of its node).
srun_case "srun --gpus-per-task=1 --gpu-bind=none" "-N2 --ntasks-per-node=2 --gpus-per-node=4" \
  "-N2 -n4 --ntasks-per-node=2 --gpus-per-task=1 --gpu-bind=none" unset unset

# --- ezpz: GPU placement under srun -------------------------------------------------
# Two machine profiles of this cluster's nodes: ezpz-rankenv masking each rank (Perlmutter's
# way), and srun binding (Frontier's way, with map_gpu here: this cluster knows no GPU-CPU
# closeness). Every mask variable is set, so each line shows the same devices three times.
machines="$scratch/machines"
mkdir -p "$machines"
gpu_profile() {  # NAME [gpu_bind line...]
  local name=$1; shift
  printf '%s\n' "description: stand-in GPUs" "scheduler: slurm" "launcher: srun" \
    "gpus_per_node: 4" "device: cuda" "gpu_bind:" '  order: ["3", "2", "1", "0"]' \
    "  variables: [CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, ZE_AFFINITY_MASK]" "$@" \
    >"$machines/$name.yaml"
}
gpu_profile gpu-masks
gpu_profile gpu-srun "  launcher_bind: map_gpu:3,2,1,0"
# ezpz_case NAME "SBATCH-OPTIONS" "VAR=VALUE..." "LAUNCH-OPTIONS" DEVICES...
ezpz_case() {
  local name=$1 sbatch_options=$2 vars=$3 launch_options=$4; shift 4
  # shellcheck disable=SC2086 # the options are this file's own words
  run_batch "$name" $sbatch_options -- EZPZ_MACHINES_PATH="$machines" $vars \
    launch $launch_options -- sh -c "$gpu_reporter"
  expect_gpus "$name" "$@"
}
ezpz_case "ezpz masks: full nodes" "-N2 --ntasks-per-node=4 --gpus-per-node=4" \
  "EZPZ_MACHINE=gpu-masks" "" 3 2 1 0
ezpz_case "ezpz masks: 2 per node" "-N2 --ntasks-per-node=4 --gpus-per-node=4" \
  "EZPZ_MACHINE=gpu-masks" "--ppn 2" 3 2
ezpz_case "ezpz masks: --gpus-per-rank 2" "-N2 --ntasks-per-node=4 --gpus-per-node=4" \
  "EZPZ_MACHINE=gpu-masks" "--gpus-per-rank 2" 3,2 1,0
# Placement within the GPUs of a job holding two of each node's four.
ezpz_case "ezpz masks: a job of 2 GPUs a node" "-N2 --ntasks-per-node=2 --gres=gpu:2" \
  "EZPZ_MACHINE=gpu-masks" "" 1 0
ezpz_case "ezpz srun binds: full nodes" "-N2 --ntasks-per-node=4 --gpus-per-node=4" \
  "EZPZ_MACHINE=gpu-srun" "-v" --stderr "^ezpz: " 3 2 1 0
expect_true "ezpz srun binds: the launch line has srun's GPU flags" \
  grep -qF -- '--gpus-per-task=1 --gpu-bind=map_gpu:3,2,1,0' "$scratch/ezpz srun binds: full nodes.err"

finish
