#!/usr/bin/env bash
# launch --signal USR1@40 in a real Slurm job with a 1-minute limit, 2 nodes x 2 ranks: ezpz
# reads the job's end from squeue (Slurm 22.05 sets no SLURM_JOB_END_TIME), srun passes SIGUSR1
# on to every task, each Python rank catches it and writes a file; the SIGTERM Slurm sends at
# the limit still ends the run as `walltime` (143, not retried), and the verdict records the
# warning. Under torchrun, which passes no signal on, a step on each node (srun --overlap)
# signals the ranks instead. About 1.5 minutes: Slurm's limit is whole minutes, checked every
# 30 s or so; the two shorter jobs run while the limit's job waits for its end (after its
# warning, so that nothing else runs when its timing is checked), each job with its own
# directories (the cluster's nodes are shared, OverSubscribe=FORCE).
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/slurm_common.sh"
announce_passes

rank_py="$EZPZ_SRC/tests/fixtures/python/warned_rank.py"
mkdir -p "$scratch/warned" "$scratch/warned-env" "$scratch/warned-torchrun"
# every rank of the limit's job has written its file
all_warned() { [ "$(cd "$scratch/warned" && echo warned-*)" == "warned-0 warned-1 warned-2 warned-3" ]; }

batch_timeout=150
submit_batch warn -N 2 --ntasks-per-node=2 --time=1 -- EZPZ_RUNS_DIR="$scratch/runs-warn" \
  --background launch --signal USR1@40 -- /usr/bin/python3 "$rank_py" "$scratch/warned" 300
warn_job=$job_id warn_submitted=$submitted_ms
# The warning comes 20 s after the start; the limit's SIGTERM 60 to 90 s after it.
wait_until 60 all_warned

# --- SLURM_JOB_END_TIME (newer Slurm sets it) comes before squeue -----------------------
# An end 50 s after the submission puts USR1@40 10 s after it, long before squeue's 60 s limit
# would; the rank is warned, then ends on its own: a success that records the warning. (With
# 2 s to spare, CI's run once exited 0 with no signal and no warning recorded: what ezpz does
# when the job starts too late to be warned, as a loaded machine can start it.)
batch_timeout=60
run_batch env-end -N 1 --ntasks-per-node=1 --time=1 -- SLURM_JOB_END_TIME=$(($(date +%s) + 50)) \
  EZPZ_RUNS_DIR="$scratch/runs-env" launch --signal USR1@40 -- \
  /usr/bin/python3 "$rank_py" "$scratch/warned-env" 16
expect_eq "end from the environment: exit 0" 0 "$rc"
expect_eq "end from the environment: the rank was warned" "SIGUSR1" \
  "$(cat "$scratch/warned-env/warned-0" 2>&1)"
verdict=$(cat "$scratch"/runs-env/*/attempt-1/verdict.json 2>&1)
expect_eq "end from the environment: success" success "$(json_field classification "$verdict")"
expect_eq "end from the environment: the warning recorded" "warned at T-40 s with SIGUSR1 through the launcher" \
  "$(json_field warning "$verdict")"

# --- torchrun passes no signal on: a step on each node (srun --overlap) signals the ranks ---
batch_timeout=90
run_batch torchrun -N 2 --ntasks-per-node=2 --time=1 -- SLURM_JOB_END_TIME=$(($(date +%s) + 50)) \
  EZPZ_RUNS_DIR="$scratch/runs-torchrun" launch --launcher torchrun --signal USR1@40 -- \
  /usr/bin/python3 "$rank_py" "$scratch/warned-torchrun" 20
expect_eq "torchrun: exit 0, the job went on" 0 "$rc"
expect_eq "torchrun: every rank, on both nodes, got SIGUSR1" "warned-0 warned-1 warned-2 warned-3" \
  "$(cd "$scratch/warned-torchrun" && echo warned-*)"
verdict=$(cat "$scratch"/runs-torchrun/*/attempt-1/verdict.json 2>&1)
expect_eq "torchrun: the verdict says how" \
  "warned at T-40 s with SIGUSR1 through a step on each node" "$(json_field warning "$verdict")"

# --- The limit's job, submitted first ------------------------------------------------
batch_timeout=150
wait_batch warn "$warn_job" "$warn_submitted"
expect_eq "slurm: the limit's SIGTERM: exit 143" 143 "$rc"
expect_eq "slurm: every rank, on both nodes, got SIGUSR1" "warned-0 warned-1 warned-2 warned-3" \
  "$(cd "$scratch/warned" && echo warned-*)"
expect_eq "slurm: each file names SIGUSR1" "SIGUSR1
SIGUSR1
SIGUSR1
SIGUSR1" "$(cat "$scratch/warned"/warned-* 2>&1)"
expect_true "slurm: ezpz says it sends the signal" grep -qxF \
  "ezpz: 40 s before the job's walltime ends: sending SIGUSR1 to every rank (--signal USR1@40)" \
  <<<"$err"
# 40 s before the 60 s limit: 20 s after the job started (whole seconds on both sides).
started=$(date -d "$(scontrol -o show job "$job_id" | sed -n 's/.* StartTime=\([^ ]*\).*/\1/p')" +%s)
first=$(stat -c %Y "$scratch/warned"/warned-* 2>/dev/null | sort -n | head -n 1)
expect_true "slurm: warned 20 s after the start ($((${first:-0} - started)) s)" \
  test "$((${first:-0} - started))" -ge 20 -a "$((${first:-0} - started))" -le 22
verdict=$(cat "$scratch"/runs-warn/*/attempt-1/verdict.json 2>&1)
expect_eq "slurm: still classified walltime" walltime "$(json_field classification "$verdict")"
expect_eq "slurm: the verdict records the warning" "warned at T-40 s with SIGUSR1 through the launcher" \
  "$(json_field warning "$verdict")"
expect_true "slurm: not retried" grep -q '"attempts": 1' "$scratch"/runs-warn/*/run.json

finish
