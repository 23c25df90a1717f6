#!/usr/bin/env bash
# ezpz kill without a run id, on a login node shared by a user's jobs: inside a
# job it stops that job's runs only (the job's id, PBS_JOBID here, is in every
# rank's environment); outside any job it lists the runs and stops none; --all
# stops every run. Every kill here is scoped to this test's own runs (its job
# ids, or a private pid namespace for --all): other tests' runs are never
# touched, even when they run at the same time.
source "$(dirname "$0")/common.sh"

require_mpiexec
launch_env() { clean_env "$@"; }
job1="kill-$marker_base-1.pbs" job2="kill-$marker_base-2.pbs"
sleeper1="sleep ${marker_base}91" sleeper2="sleep ${marker_base}92"
on_exit "kill_marked '$sleeper1'; kill_marked '$sleeper2'"

# start_run NAME JOB SLEEPER: `ezpz launch -n 1 -- SLEEPER` in job JOB, in the
# background (pid in run_pid); its rank's EZPZ_RUN_ID in run_id.
start_run() {
  local name=$1 job=$2 sleeper=$3 pid
  launch_env PBS_JOBID="$job" "$EZPZ_BIN" launch --scheduler local -n 1 -- $sleeper \
    >"$scratch/$name.out" 2>"$scratch/$name.err" &
  run_pid=$!
  on_exit "kill_pids KILL $run_pid"
  expect_true "$name: its rank starts" wait_until 20 has_count 1 "$sleeper"
  pid=$(live_pids "$sleeper" | head -n 1)
  run_id=$(tr '\0' '\n' <"/proc/$pid/environ" | sed -n 's/^EZPZ_RUN_ID=//p')
}
start_run one "$job1" "$sleeper1"; run1=$run_id pid1=$run_pid
start_run two "$job2" "$sleeper2"; run2=$run_id pid2=$run_pid

# --- outside any job: a list, and nothing stopped --------------------------------
run_ezpz outside kill
expect_eq "outside a job: exit status" 2 "$rc"
expect_eq "outside a job: says what to do instead" \
  "ezpz: error: kill: not inside a job and no run id given: nothing stopped; give a run id, or --all to stop every run listed" \
  "$err"
expect_eq "outside a job: a header names the node" "ezpz runs on $(hostname -s):" "$(head -n 1 <<<"$out")"
expect_true "outside a job: lists job 1's run" \
  grep -qE "^  $run1 \\(job $job1\\): [0-9]+ process(es)?: " <<<"$out"
expect_true "outside a job: lists job 2's run" \
  grep -qE "^  $run2 \\(job $job2\\): [0-9]+ process(es)?: " <<<"$out"
expect_true "outside a job: job 1's rank lives" has_count 1 "$sleeper1"
expect_true "outside a job: job 2's rank lives" has_count 1 "$sleeper2"

run_ezpz outside-dry kill --dry-run
expect_eq "outside a job, --dry-run: exit status (it stops nothing anyway)" 0 "$rc"
expect_true "outside a job, --dry-run: lists job 2's rank" \
  grep -qx "would signal [0-9]* (run $run2): $sleeper2" <<<"$out"

# --- inside job 1: job 1's run only ------------------------------------------------
run_ezpz in-job PBS_JOBID="$job1" kill
expect_eq "inside job 1: exit status" 0 "$rc"
expect_true "inside job 1: its rank is signalled" \
  grep -qx "sent SIGTERM to [0-9]* (run $run1): $sleeper1" <<<"$out"
expect_eq "inside job 1: nothing of job 2 is signalled" "" "$(grep -F "$run2" <<<"$out")"
expect_true "inside job 1: its launch ends" wait_until 15 dead "$pid1"
wait "$pid1"
expect_eq "inside job 1: its launch reports SIGTERM" 143 "$?"
expect_true "inside job 1: job 2's rank lives" has_count 1 "$sleeper2"
expect_true "inside job 1: job 2's launch lives" alive "$pid2"

run_ezpz again PBS_JOBID="$job1" kill
expect_eq "inside job 1 again: exit status" 0 "$rc"
expect_eq "inside job 1 again: nothing left" "no ezpz processes of job $job1 on $(hostname -s)" "$out"

run_ezpz both kill --all "$run2"
expect_eq "--all with a run id: exit status" 2 "$rc"
expect_eq "--all with a run id: message" \
  "ezpz: error: kill: --all stops every run; give it no run id and no --job" "$err"

# --- --job names a job from outside it -------------------------------------------
run_ezpz by-job kill --job "$job2"
expect_eq "--job: exit status" 0 "$rc"
expect_true "--job: job 2's rank is signalled" \
  grep -qx "sent SIGTERM to [0-9]* (run $run2): $sleeper2" <<<"$out"
expect_true "--job: job 2's launch ends" wait_until 15 dead "$pid2"

# --- --all: every run, in a pid namespace of its own -------------------------------
# `ezpz kill --all` stops every ezpz run of the user it can see: here only the two
# launched inside the namespace, never another test's.
if ! unshare -pf --mount-proc true 2>/dev/null; then
  echo "skipped the --all part: unshare -pf --mount-proc needs root"
  finish
  exit
fi
cat >"$scratch/all.sh" <<'ALL'
ezpz=$1 sleeper=$2
PBS_JOBID=ns-1 "$ezpz" launch --scheduler local -n 1 -- $sleeper 1 >/dev/null 2>&1 & one=$!
PBS_JOBID=ns-2 "$ezpz" launch --scheduler local -n 1 -- $sleeper 2 >/dev/null 2>&1 & two=$!
for _ in $(seq 200); do
  [ "$(ps -eo args= | grep -cx "$sleeper [12]")" -eq 2 ] && break
  sleep 0.1
done
"$ezpz" kill --all >"$3/all.kill" 2>&1
echo "kill $?"
wait "$one"; echo "launch 1 $?"
wait "$two"; echo "launch 2 $?"
echo "left $(ps -eo args= | grep -cx "$sleeper [12]")"
ALL
sleeper3="sleep ${marker_base}93"
on_exit "kill_marked '$sleeper3 1'; kill_marked '$sleeper3 2'"
out=$(launch_env "$timeout_bin" -k 5 60 unshare -pf --mount-proc bash "$scratch/all.sh" \
  "$EZPZ_BIN" "$sleeper3" "$scratch")
expect_eq "--all: stops both jobs' runs, and both launches report SIGTERM" "kill 0
launch 1 143
launch 2 143
left 0" "$out"
expect_eq "--all: a line per rank signalled" 2 \
  "$(grep -c "^sent SIGTERM to [0-9]* (run [^)]*): $sleeper3 [12]\$" "$scratch/all.kill")"

finish
