# The real Slurm cluster for the integration tests (sourced after common.sh, not
# run: ctest only runs test_*.sh). Sourcing it skips the test (77) without root
# or Slurm, starts tests/slurm/cluster.sh (4 nodes n01..n04, 8 CPUs and GRES
# gpu:4 each) and takes it down on exit unless it was up before or
# EZPZ_SLURM_KEEP=1 (EZPZ_SLURM_DIR picks cluster.sh's directory). Then
# run_batch submits a real job and waits for it.
cluster="$EZPZ_SRC/tests/slurm/cluster.sh"
export EZPZ_SLURM_DIR=${EZPZ_SLURM_DIR:-/tmp/ezpz-slurm}
nodes=(n01 n02 n03 n04)

# slurm_unavailable WHY: the test is skipped (77). One whose Slurm part follows others
# (test_doctor.sh) sets slurm_optional=true before sourcing: it then ends with what it has
# checked so far.
slurm_unavailable() {
  if [ "${slurm_optional:-false}" == true ]; then
    printf 'SKIP: slurm: %s\n' "$1"
    finish
    exit
  fi
  echo "skipped: $1"
  exit 77
}
if [ "$(id -u)" -ne 0 ]; then
  slurm_unavailable "the Slurm cluster (slurmctld, slurmd, munged, /etc/hosts) needs root"
fi
for tool in sbatch squeue scancel sinfo srun slurmctld slurmd munged; do
  if ! PATH="$PATH:/usr/sbin:/sbin" command -v "$tool" >/dev/null; then
    slurm_unavailable "$tool is not installed (apt-get install slurm-wlm munge)"
  fi
done

# --- The cluster ---------------------------------------------------------------
controller_up() {
  local pid
  pid=$(cat "$EZPZ_SLURM_DIR/run/slurmctld.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null
}
# Every job of this run has this name: on exit, whatever is left is cancelled
# (while the controller still answers), then the cluster goes down unless it
# was up before or EZPZ_SLURM_KEEP=1.
job_name="ezpz-test-$$"
take_down=true
{ controller_up || [ "${EZPZ_SLURM_KEEP:-0}" == 1 ]; } && take_down=false
cleanup_slurm() {
  controller_up && SLURM_CONF="$EZPZ_SLURM_DIR/slurm.conf" scancel --name="$job_name" 2>/dev/null
  if $take_down; then
    "$cluster" down >"$scratch/down.log" 2>&1 || sed 's/^/  down: /' "$scratch/down.log" >&2
  fi
}
on_exit cleanup_slurm
up_start=$(now_ms)
"$cluster" up >"$scratch/up.out" 2>"$scratch/up.err"
up_rc=$?
if [ "$up_rc" -eq 77 ]; then
  slurm_unavailable "$(cat "$scratch/up.err")"
fi
if [ "$up_rc" -ne 0 ]; then
  fail "cluster.sh up: exit status $up_rc"
  sed 's/^/  up: /' "$scratch/up.err" >&2
  finish
  exit 1
fi
printf 'cluster up in %d ms\n' $(($(now_ms) - up_start))
source "$EZPZ_SLURM_DIR/env"  # SLURM_CONF, for sbatch, squeue and scancel here
expect_eq "cluster: 4 idle nodes" "n01 idle
n02 idle
n03 idle
n04 idle" "$(sinfo -h -N -o '%N %T' | sort -u)"

mkdir -p "$scratch/work" "$scratch/home" "$scratch/run"

# The job's environment starts clean (sbatch exports the submitter's to the
# batch script); ezpz picks MASTER_PORT itself.
submit_env() { clean_env env -u MASTER_PORT SLURM_CONF="$SLURM_CONF" "$@"; }

# write_batch NAME [--background] ARGS...: $scratch/NAME.sh runs `ezpz ARGS`
# (or `${batch_exe[@]} ARGS` when batch_exe is set, e.g. batch_exe=(srun)) in
# $scratch/work, its stdout and stderr to NAME.out/.err
# and its exit status to NAME.rc. With --background the script catches
# SIGTERM (ezpz still gets it: a caught signal is reset to the default on
# exec) and waits for ezpz, so that ezpz's status is recorded even when the
# job is cancelled.
write_batch() {
  local name=$1 background=false; shift
  [ "${1-}" == --background ] && { background=true; shift; }
  {
    echo '#!/bin/bash'
    printf 'cd %q || exit 99\n' "$scratch/work"
    [ -n "${run_batch_prefix-}" ] && printf '%s\n' "$run_batch_prefix"
    if $background; then
      echo "trap 'true' TERM"
      printf '%q ' "${batch_exe[@]:-$EZPZ_BIN}" "$@"
      printf '>%q 2>%q &\n' "$scratch/$name.out" "$scratch/$name.err"
      echo 'pid=$!; wait $pid; rc=$?'
      echo 'while kill -0 $pid 2>/dev/null; do wait $pid; rc=$?; done'
    else
      printf '%q ' "${batch_exe[@]:-$EZPZ_BIN}" "$@"
      printf '>%q 2>%q\n' "$scratch/$name.out" "$scratch/$name.err"
      echo 'rc=$?'
    fi
    printf 'echo $rc >%q\n' "$scratch/$name.rc"
    echo 'exit $rc'
  } >"$scratch/$name.sh"
}

# job_state JOB: Slurm's state of JOB (PENDING, RUNNING, COMPLETING, COMPLETED,
# FAILED, CANCELLED, ...); COMPLETING while its processes are being cleaned up.
job_state() { scontrol -o show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
# job_ended JOB: JOB is over and Slurm has finished cleaning up after it.
job_ended() {
  local state
  state=$(job_state "$1")
  [ -n "$state" ] && [[ ! $state =~ ^(PENDING|CONFIGURING|RUNNING|COMPLETING|SUSPENDED|REQUEUED)$ ]]
}

# run_batch NAME SBATCH-OPTIONS... -- [VAR=VALUE...] EZPZ-ARGS...: submit a
# batch script running ezpz and wait until the job has ended (polled: `sbatch
# --wait` only looks after 2 s and then 10 s), for ${batch_timeout:-60} s at
# most, then cancel it. Sets job_id, rc (ezpz's status, or "none" when it did
# not finish), out and err (ezpz's stdout and stderr).
run_batch() {
  if submit_batch "$@"; then wait_batch "$1" "$job_id" "$submitted_ms"; fi
}

# submit_batch NAME SBATCH-OPTIONS... -- [VAR=VALUE...] EZPZ-ARGS...: run_batch's
# submission alone, for a job that runs while the test does more; wait_batch NAME
# JOB SUBMITTED_MS later. Sets job_id and submitted_ms; fails (rc none) when sbatch does.
submit_batch() {
  local name=$1; shift
  local -a sbatch_options=() vars=()
  while [ "$1" != -- ]; do sbatch_options+=("$1"); shift; done
  shift
  while [[ $1 == [A-Z]*=* ]]; do vars+=("$1"); shift; done
  write_batch "$name" "$@"
  rm -f "$scratch/$name.rc" "$scratch/$name.out" "$scratch/$name.err"
  mark_logs
  submitted_ms=$(now_ms)
  job_id=$(submit_env "${vars[@]}" sbatch --parsable --job-name="$job_name" -D "$scratch/work" \
    -o "$scratch/$name.slurm" "${sbatch_options[@]}" "$scratch/$name.sh" 2>"$scratch/$name.sbatch")
  if [[ ! $job_id =~ ^[0-9]+$ ]]; then
    fail "$name: sbatch failed"; sed "s/^/  $name: sbatch: /" "$scratch/$name.sbatch" >&2
    rc=none out="" err=""
    return 1
  fi
}

# wait_batch NAME JOB SUBMITTED_MS: wait until JOB has ended, at most ${batch_timeout:-60} s
# after SUBMITTED_MS (now_ms when it was submitted), then cancel it. Sets job_id, rc, out
# and err as run_batch does.
wait_batch() {
  local name=$1 timeout=${batch_timeout:-60} left
  job_id=$2
  left=$(((timeout * 1000 - ($(now_ms) - $3) + 999) / 1000))
  if ! wait_until "$((left > 1 ? left : 1))" job_ended "$job_id"; then
    fail "$name: job $job_id not over within $timeout s (state $(job_state "$job_id"))"
    scancel "$job_id" 2>/dev/null
  fi
  rc=$(cat "$scratch/$name.rc" 2>/dev/null || echo none)
  out=$(cat "$scratch/$name.out" 2>/dev/null)
  err=$(cat "$scratch/$name.err" 2>/dev/null)
  if [ "$rc" == none ]; then
    sed "s/^/  $name: job output: /" "$scratch/$name.slurm" >&2 2>/dev/null
    sed "s/^/  $name: ezpz stderr: /" "$scratch/$name.err" >&2 2>/dev/null
  fi
}

# Each node's slurmd log size when the last job was submitted: only what the
# logs gained since then is searched (the logs outlive clusters and job ids).
log_marks=()
mark_logs() {
  local node
  log_marks=()
  for node in "${nodes[@]}"; do
    log_marks+=("$(stat -c %s "$EZPZ_SLURM_DIR/log/slurmd-$node.log" 2>/dev/null || echo 0)")
  done
}
# step_nodes JOB: the nodes whose slurmd started a task of JOB's first step
# (since the last mark_logs), space-separated.
step_nodes() {
  local i found=()
  for i in "${!nodes[@]}"; do
    tail -c "+$((log_marks[i] + 1))" "$EZPZ_SLURM_DIR/log/slurmd-${nodes[i]}.log" 2>/dev/null |
      grep -q "launch task StepId=$1\.0 " && found+=("${nodes[i]}")
  done
  echo "${found[*]}"
}
