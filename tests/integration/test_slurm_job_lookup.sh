#!/usr/bin/env bash
# A compute node reached by ssh, on the real Slurm cluster: a job holds n01 and n02; ezpz runs
# on "n02" (a UTS namespace named so: the cluster's nodes are slurmds of this machine) with none
# of the job's variables, finds the job through the real squeue, and its launch runs as a step
# of that job (srun joins it by SLURM_JOB_ID). Needs root, as slurm_common.sh does, and unshare.
source "$(dirname "$0")/common.sh"
announce_passes
source "$(dirname "$0")/slurm_common.sh"
if ! unshare -u true 2>/dev/null; then
  echo "skipped: unshare -u (a UTS namespace) is not permitted here"
  finish
  exit 77
fi

holder=$(submit_env sbatch --parsable --job-name="$job_name" -N 2 -w n01,n02 --wrap "sleep 120")
for _ in $(seq 1 100); do [ "$(job_state "$holder")" == RUNNING ] && break; sleep 0.1; done
expect_eq "the holding job runs" RUNNING "$(job_state "$holder")"

# on_node NODE ARGS...: ezpz on a node named NODE, with no SLURM_* variable (EZPZ_MACHINE names
# the machine: the job lookup runs only on a known machine's node); $out, $err, $rc.
on_node() {
  local node=$1; shift
  out=$(clean_env SLURM_CONF="$SLURM_CONF" USER="$(id -un)" EZPZ_OUTPUT=raw EZPZ_MACHINE=generic-slurm \
    unshare -u sh -c 'hostname "$0" && exec "$@"' "$node" "$EZPZ_BIN" "$@" 2>"$scratch/err")
  rc=$?; err=$(cat "$scratch/err")
}
reporter='echo "rank $RANK of $WORLD_SIZE on $SLURMD_NODENAME in job $SLURM_JOB_ID"'
on_node n02 launch -v --no-record -- sh -c "$reporter"
expect_eq "found: exit status" 0 "$rc"
expect_eq "found: both ranks ran as steps of the holding job" \
  "rank 0 of 2 on n01 in job $holder
rank 1 of 2 on n02 in job $holder" "$(sort <<<"$out")"
expect_true "-v says which job" grep -qxF \
  "ezpz: job: $holder (slurm, 2 hosts), found by squeue: no job variables are set here" <<<"$err"

on_node n04 launch --dry-run -- true
expect_eq "a node in no job: exit status" 0 "$rc"
expect_eq "a node in no job: the warning" \
  "ezpz: warning: squeue lists no running job holding n04: a local run on this node only" "$err"
scancel "$holder"
finish
