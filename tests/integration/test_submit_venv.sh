#!/usr/bin/env bash
# A job submitted from an active venv runs that venv's python (issue 22): a real venv
# (python3 -m venv), `ezpz submit` from a shell where it is active, and every rank's sys.prefix
# must be the venv. PBS: qsub passes the job none of the submitting shell's variables, so the
# script runs with only the job's (a simulated PBS job of this host). Slurm, on the real cluster:
# sbatch --export=NONE (SBATCH_EXPORT=NONE, a site's default) gives the batch script none, and
# srun then passes the ranks none of the script's: before, the ranks ran /usr's python3.
source "$(dirname "$0")/common.sh"
announce_passes
require_mpiexec

venv="$scratch/my venv"
if ! /usr/bin/python3 -m venv --without-pip "$venv" 2>"$scratch/venv.err"; then
  echo "skipped: python3 -m venv: $(cat "$scratch/venv.err")"
  exit 77
fi
work="$scratch/work"
mkdir -p "$work"
# The submitting shell: the venv activated as its bin/activate does.
active=(PATH="$venv/bin:$system_path" VIRTUAL_ENV="$venv")
# Each rank: its rank, where its python lives, which python3 PATH gives. ranks_of keeps those
# lines, less the "[N] " label of a job whose EZPZ_OUTPUT did not come along.
ranks_of() { sed 's/^\[[0-9]*\] //' "$1" | grep -E '^[0-9]+ /' | sort; }
probe='import os, sys; print(os.environ.get("RANK"), sys.prefix, sys.executable)'
expected_ranks() {
  local r
  for ((r = 0; r < $1; r++)); do printf '%s %s %s\n' "$r" "$venv" "$venv/bin/python3"; done
}

# --- PBS: the script runs with the job's variables only ------------------------------------------
hostname >"$scratch/nodefile"
(cd "$work" && clean_env "${active[@]}" "$EZPZ_BIN" submit --dry-run --scheduler pbs \
  --script-out "$scratch/pbs.sh" --launch-arg=--np=2 -- python3 -c "$probe" >/dev/null \
  2>"$scratch/pbs-submit.err")
expect_eq "pbs: submit --dry-run exit status" 0 "$?"
(cd "$scratch" && clean_env PBS_JOBID=1.sim PBS_NODEFILE="$scratch/nodefile" \
  PBS_O_WORKDIR="$work" HYDRA_LAUNCHER=fork bash "$scratch/pbs.sh" >"$scratch/pbs.out" 2>&1)
expect_eq "pbs: both ranks run the venv's python" "$(expected_ranks 2)" "$(ranks_of "$scratch/pbs.out")"
[ "$(ranks_of "$scratch/pbs.out")" == "$(expected_ranks 2)" ] || sed 's/^/  pbs: /' "$scratch/pbs.out" >&2

# --- Slurm: the real sbatch, --export=NONE ----------------------------------------------------
slurm_optional=true
source "$(dirname "$0")/slurm_common.sh"
rm -f "$scratch/slurm.out"
job_id=$(cd "$work" && submit_env "${active[@]}" SBATCH_EXPORT=NONE "$EZPZ_BIN" submit \
  --scheduler slurm -N 2 -t 5 -J "$job_name" --output "$scratch/slurm.out" \
  --script-out "$scratch/slurm.sh" --launch-arg=--ppn=1 -- python3 -c "$probe" \
  2>"$scratch/slurm-submit.err")
expect_match "slurm: sbatch's job id" '^[0-9]+$' "$job_id"
if [[ $job_id =~ ^[0-9]+$ ]]; then
  expect_true "slurm: job $job_id over within 60 s" wait_until 60 job_ended "$job_id"
  expect_eq "slurm: the job COMPLETED" COMPLETED "$(job_state "$job_id")"
  ranks=$(ranks_of "$scratch/slurm.out")
  expect_eq "slurm: both ranks (on 2 nodes) run the venv's python" "$(expected_ranks 2)" "$ranks"
  [ "$ranks" == "$(expected_ranks 2)" ] || sed 's/^/  slurm: job output: /' "$scratch/slurm.out" >&2
else
  sed 's/^/  slurm: stderr: /' "$scratch/slurm-submit.err" >&2
fi
finish
