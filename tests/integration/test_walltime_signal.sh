#!/usr/bin/env bash
# launch --signal SIG@SECONDS on a simulated two-node PBS job: a stand-in qstat reports the
# job's stime and walltime, ezpz sends SIGUSR1 through Hydra to every rank SECONDS before the
# walltime ends, each Python rank catches it and writes a file; the SIGTERM PBS sends at
# walltime still ends the run as `walltime` (143), and the verdict records the warning. Where
# the launcher does not pass the signal on (USR2 under Hydra, anything under torchrun), a step
# on each node signals the ranks instead, and the job goes on.
# Also: the one warning line when the end cannot be known (the run goes on), and the errors.
source "$(dirname "$0")/common.sh"

require_mpiexec
start_fake_pbs_job
announce_passes
bin="$scratch/bin"
mkdir -p "$bin" "$scratch/warned"
# qstat -f 4242.pbs-sim prints $scratch/qstat.out; any other question fails, as qstat's would.
printf '#!/bin/sh\n[ "$*" = "-f 4242.pbs-sim" ] || exit 1\nexec cat "%s"\n' \
  "$scratch/qstat.out" >"$bin/qstat"
chmod +x "$bin/qstat"
launch_env() { clean_env env -u MASTER_PORT -u EZPZ_MACHINE "${pbs_env[@]}" PATH="$bin:$system_path" "$@"; }

# qstat_output WALLTIME: a running job's `qstat -f`, started at $started (seconds since the epoch).
qstat_output() {
  cat <<QSTAT
Job Id: 4242.pbs-sim
    Job_Name = ezpz-sim
    job_state = R
    queue = debug
    Resource_List.ncpus = 4
    Resource_List.nodect = 2
    Resource_List.walltime = $1
    stime = $(LC_ALL=C date -d "@$started" '+%a %b %e %H:%M:%S %Y')
    session_id = $$
QSTAT
}

rank_py="$EZPZ_SRC/tests/fixtures/python/warned_rank.py"
all_warned() { [ "$(ls "$scratch/warned" | wc -l)" -eq 4 ]; }

# --- PBS: warned 5 s before an 8 s walltime, then SIGTERM as PBS sends it ------------
started=$(date +%s)
qstat_output 00:00:08 >"$scratch/qstat.out"
marker="${marker_base}7"
launch_env "$EZPZ_BIN" launch --signal USR1@5 -- /usr/bin/python3 "$rank_py" \
  "$scratch/warned" "$marker" >"$scratch/pbs.out" 2>"$scratch/pbs.err" &
job_shell=$!
on_exit "kill_pids KILL $job_shell"
on_exit "kill_marked '/usr/bin/python3 $rank_py $scratch/warned $marker'"
expect_true "pbs: every rank got SIGUSR1 within 15 s" wait_until 15 all_warned
first=$(stat -c %Y "$scratch/warned"/warned-* | sort -n | head -n 1)
expect_true "pbs: not before stime + 8 s - 5 s ($((first - started)) s)" test "$first" -ge $((started + 3))
expect_eq "pbs: each rank's file names SIGUSR1" "SIGUSR1
SIGUSR1
SIGUSR1
SIGUSR1" "$(cat "$scratch/warned"/warned-* 2>&1)"
expect_eq "pbs: ranks 0-3 (both hosts) warned" "warned-0 warned-1 warned-2 warned-3" \
  "$(cd "$scratch/warned" && echo warned-*)"
expect_true "pbs: ezpz says it sends the signal" grep -qxF \
  "ezpz: 5 s before the job's walltime ends: sending SIGUSR1 to every rank (--signal USR1@5)" \
  "$scratch/pbs.err"
# What PBS does at walltime: SIGTERM to the job's processes (ezpz among them).
if [[ $(ps -o args= -p "$job_shell") == "$EZPZ_BIN "* ]]; then job_pid=$job_shell; else
  job_pid=$(children "$job_shell"); fi
kill -TERM "$job_pid"
wait_until 15 dead "$job_pid"
wait "$job_shell"
expect_eq "pbs: the walltime's SIGTERM: exit 143" 143 "$?"
verdict=$(cat "$scratch"/runs/*/attempt-1/verdict.json 2>&1)
expect_eq "pbs: still classified walltime" walltime "$(json_field classification "$verdict")"
expect_eq "pbs: the verdict records the warning" "warned at T-5 s with SIGUSR1 through the launcher" \
  "$(json_field warning "$verdict")"
expect_true "pbs: not retried" grep -q '"attempts": 1' "$scratch"/runs/*/run.json

# --- Where the launcher does not pass the signal on: a step on each node signals the ranks ---
# Both cases run at once, in a job that ends 15 s from now, each in its own directories (the
# node steps must each signal their own run's ranks alone).
# warned_launch NAME SECONDS OPTIONS...: start warned_rank.py (sleeping SECONDS, then exiting 0)
# in the background; warned_result NAME then waits for it: every rank's file must appear in
# $scratch/warned-NAME, and the job go on to exit 0.
warned_launch() {
  local name=$1 sleep="$2.$$1"; shift 2
  mkdir -p "$scratch/warned-$name"
  on_exit "kill_marked '/usr/bin/python3 $rank_py $scratch/warned-$name $sleep'"
  run_ezpz_bg "$name" EZPZ_RUNS_DIR="$scratch/runs-$name" launch "$@" -- \
    /usr/bin/python3 "$rank_py" "$scratch/warned-$name" "$sleep"
}
warned_result() {
  ezpz_done "$1"
  verdict=$(cat "$scratch"/runs-"$1"/*/attempt-1/verdict.json 2>&1)
}
step_note() {
  echo "ezpz: --signal $1: the $2 launcher is not known to pass $3 on to the ranks; a step on each node will send it to them"
}
started=$(date +%s)
qstat_output 00:00:15 >"$scratch/qstat.out"
warned_launch hydra-usr2 11 -v --signal USR2@7
warned_launch torchrun-usr1 11 -v --launcher torchrun --signal USR1@7

# Hydra dies of SIGUSR2 (it was refused before the node step): the ranks get it all the same.
warned_result hydra-usr2
expect_eq "USR2 under Hydra: exit 0, the job went on" 0 "$rc"
expect_eq "USR2 under Hydra: ranks 0-3 (both hosts) warned" "warned-0 warned-1 warned-2 warned-3" \
  "$(cd "$scratch/warned-hydra-usr2" && echo warned-*)"
expect_eq "USR2 under Hydra: each file names SIGUSR2" "$(printf 'SIGUSR2\n%.0s' 1 2 3 4)" \
  "$(cat "$scratch/warned-hydra-usr2"/warned-* 2>&1)"
expect_true "USR2 under Hydra: ezpz says why the node step" grep -qxF \
  "$(step_note USR2@7 hydra SIGUSR2)" <<<"$err"
expect_eq "USR2 under Hydra: the verdict says how" \
  "warned at T-7 s with SIGUSR2 through a step on each node" "$(json_field warning "$verdict")"
expect_eq "USR2 under Hydra: two nodes, two ranks each signalled" 4 \
  "$(grep -c '^ezpz:   n0[12]: sent SIGUSR2 to [0-9]* (run [^)]*): rank [0-3]: ' <<<"$err")"

# torchrun passes no signal on (it dies of SIGUSR1, pytorch/pytorch#154849): every rank on both
# hosts gets it from the node step, and torchrun lives on.
warned_result torchrun-usr1
expect_eq "torchrun: exit 0, the job went on" 0 "$rc"
expect_eq "torchrun: ranks 0-3 (both hosts) warned" "warned-0 warned-1 warned-2 warned-3" \
  "$(cd "$scratch/warned-torchrun-usr1" && echo warned-*)"
expect_eq "torchrun: each file names SIGUSR1" "$(printf 'SIGUSR1\n%.0s' 1 2 3 4)" \
  "$(cat "$scratch/warned-torchrun-usr1"/warned-* 2>&1)"
expect_true "torchrun: ezpz says why the node step" grep -qxF \
  "$(step_note USR1@7 torchrun SIGUSR1)" <<<"$err"
expect_eq "torchrun: the verdict says how" \
  "warned at T-7 s with SIGUSR1 through a step on each node" "$(json_field warning "$verdict")"
expect_eq "torchrun: the ranks signalled, never torchrun (started by Hydra, it holds PMI_RANK)" \
  4 "$(grep -c '^ezpz:   n0[12]: sent SIGUSR1 to [0-9]* (run [^)]*): rank [0-3]: /usr/bin/python3 ' <<<"$err")"

# --- Less time left than --signal's seconds: no signal (ranks cannot have caught it yet) -----
started=$(date +%s)
qstat_output 00:10:00 >"$scratch/qstat.out"
run_ezpz too-late launch -n 1 --signal USR1@900 -- true
expect_eq "too late: exit 0" 0 "$rc"
expect_match "too late: the one warning line" \
  "^ezpz: warning: --signal USR1@900: the job ends in (600|599|598) s, within 900 s already; no SIGUSR1 will be sent \(ranks that have only started cannot have caught it yet\)\$" \
  "$(grep warning <<<"$err")"

# --- The end cannot be known: one warning line, and the run goes on ------------------
unknown_line() {
  echo "ezpz: warning: --signal USR1@30: the job's end time is unknown ($1); no SIGUSR1 will be sent"
}
qstat_output 00:00:08 | grep -v walltime >"$scratch/qstat.out"
run_ezpz no-walltime launch -n 1 --signal USR1@30 -- true
expect_eq "no walltime: exit 0" 0 "$rc"
expect_eq "no walltime: the one warning line" \
  "$(unknown_line "qstat -f gives the job no Resource_List.walltime")" "$(grep warning <<<"$err")"
run_ezpz no-qstat PATH="$system_path" launch -n 1 --signal USR1@30 -- true
expect_eq "no qstat: exit 0" 0 "$rc"
expect_eq "no qstat: the one warning line" \
  "$(unknown_line "qstat -f 4242.pbs-sim: qstat is not on PATH")" "$(grep warning <<<"$err")"
launch_env() { clean_env "$@"; }
run_ezpz local launch -n 1 --signal USR1@30 -- true
expect_eq "outside a job: exit 0" 0 "$rc"
expect_eq "outside a job: the one warning line" \
  "$(unknown_line "not inside a Slurm or PBS job")" "$(grep warning <<<"$err")"

# --- Errors: exit 2, one line ----------------------------------------------------------
records_before=$(ls "$scratch/runs" | wc -l)
run_ezpz bad-spec launch -n 1 --signal USR1@soon -- true
expect_eq "bad spec: exit 2" 2 "$rc"
expect_eq "bad spec: the line" \
  "ezpz: error: --signal USR1@soon: expected whole seconds from 1 to 65535 after '@'" "$err"
expect_eq "errors: no run record for a run that never ran" "$records_before" \
  "$(ls "$scratch/runs" | wc -l)"

finish
