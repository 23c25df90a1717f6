#!/usr/bin/env bash
# ezpz kill against real processes: a local launch over MPICH, and a
# simulated two-node PBS job with --all-nodes (the kill itself goes through
# the launcher, one rank per node). Processes that merely look the same (the
# same command line, no run id, or another run's id) are never touched.
source "$(dirname "$0")/common.sh"

require_mpiexec
launch_env() { clean_env "$@"; }
sleeper="sleep ${marker_base}81"

# run_id_of CMDLINE: the EZPZ_RUN_ID of the first live process running CMDLINE.
run_id_of() {
  local pid
  pid=$(live_pids "$1" | head -n 1)
  [ -n "$pid" ] && tr '\0' '\n' <"/proc/$pid/environ" | sed -n 's/^EZPZ_RUN_ID=//p'
}
start_launch() {  # start_launch NAME [VAR=VALUE...] EZPZ-ARGS...: ezpz in the background
  local name=$1; shift
  launch_env "$@" >"$scratch/$name.out" 2>"$scratch/$name.err" &
  launch_pid=$!
}

# --- a decoy with the very same command line, and one from another "run" -------
$sleeper & decoy=$!
EZPZ_RUN_ID=someone-else $sleeper & other_run=$!
on_exit "kill -KILL $decoy $other_run 2>/dev/null"
on_exit "kill_marked '$sleeper'"

start_launch local "$EZPZ_BIN" launch -n 2 -- $sleeper
expect_true "local: 2 ranks start" wait_until 10 has_count 4 "$sleeper"
run_id=$(run_id_of "$sleeper" | grep -v someone-else | head -n 1)
for pid in $(live_pids "$sleeper"); do
  id=$(tr '\0' '\n' <"/proc/$pid/environ" | sed -n 's/^EZPZ_RUN_ID=//p')
  [ "$id" != someone-else ] && [ -n "$id" ] && run_id=$id
done
expect_match "local: the ranks carry a run id" '^[0-9]{8}-[0-9]{6}-.+-[0-9]+$' "$run_id"

run_ezpz dry kill --dry-run "$run_id"
expect_eq "dry run: exit status" 0 "$rc"
expect_eq "dry run: lists ezpz, the launcher, the proxy, both ranks and their ezpz-rankenv" 7 \
  "$(grep -c "^would signal .* (run $run_id): " <<<"$out")"
expect_eq "dry run: ezpz launch itself first" "(run $run_id): $EZPZ_BIN launch -n 2 -- $sleeper" \
  "$(head -n 1 <<<"$out" | sed 's/^would signal [0-9]* //')"
expect_eq "dry run: kills nothing" 4 "$(count_live "$sleeper")"

t0=$(now_ms)
run_ezpz kill kill "$run_id"
expect_eq "kill: exit status" 0 "$rc"
expect_true "kill: reports SIGTERM sent" grep -q "^sent SIGTERM to [0-9]* (run $run_id): $sleeper\$" <<<"$out"
expect_true "kill: the launch ends" wait_until 10 dead "$launch_pid"
wait "$launch_pid"; launch_rc=$?
expect_eq "kill: the launch reports SIGTERM, not success" 143 "$launch_rc"
expect_true "kill: within 5 s" test $(( $(now_ms) - t0 )) -lt 5000
expect_true "kill: the decoy with the same command line lives" alive "$decoy"
expect_true "kill: another run's process lives" alive "$other_run"
expect_eq "kill: only the two untouched sleepers are left" 2 "$(count_live "$sleeper")"

run_ezpz none kill "$run_id"
expect_eq "nothing left: exit status" 0 "$rc"
expect_match "nothing left: says so" "^no ezpz processes of run $run_id on " "$out"

# --- the start of an id names one run, or says it names several -----------------------
decoy_a="decoy-$marker_base-one" decoy_b="decoy-$marker_base-two"
EZPZ_RUN_ID=$decoy_a $sleeper & decoy_run_a=$!
EZPZ_RUN_ID=$decoy_b $sleeper & decoy_run_b=$!
on_exit "kill -KILL $decoy_run_a $decoy_run_b 2>/dev/null"
run_ezpz ambiguous kill "decoy-$marker_base-"
expect_eq "two runs start alike: exit status" 2 "$rc"
expect_eq "two runs start alike: message" \
  "ezpz: error: kill: decoy-$marker_base- matches 2 runs on $(hostname -s); give more of the id" "$err"
expect_true "two runs start alike: one is not touched" alive "$decoy_run_a"
expect_true "two runs start alike: nor the other" alive "$decoy_run_b"
run_ezpz unique kill "decoy-$marker_base-t"
expect_eq "a unique start: exit status" 0 "$rc"
expect_eq "a unique start: signals that run only" "sent SIGTERM to $decoy_run_b (run $decoy_b): $sleeper" "$out"
expect_true "a unique start: the other run lives" alive "$decoy_run_a"

# --- the grace: a rank that traps SIGTERM to write a checkpoint gets launch's 10 s ----
# (kill's own 3 s SIGKILLed the launching ezpz, then the rank, mid-checkpoint)
checkpoint="$scratch/checkpoint"
sleeper3="sleep ${marker_base}83"
on_exit "kill_marked '$sleeper3'"
start_launch grace "$EZPZ_BIN" launch -n 1 -- \
  sh -c "trap 'sleep 8; echo saved >$checkpoint; exit 0' TERM; $sleeper3 & wait"
expect_true "grace: the rank starts" wait_until 10 has_count 1 "$sleeper3"
run_ezpz grace kill "$(run_id_of "$sleeper3")"
expect_eq "grace: exit status" 0 "$rc"
expect_eq "grace: the checkpoint, 8 s after SIGTERM, is written" saved "$(cat "$checkpoint" 2>/dev/null)"
wait "$launch_pid"

run_ezpz bad kill --signal FOO
expect_eq "bad signal: exit status" 2 "$rc"
expect_eq "bad signal: message" \
  "ezpz: error: --signal FOO: expected a signal name or number (TERM, INT, KILL, HUP, QUIT, USR1, USR2, STOP, CONT, ABRT, or 1-64)" "$err"

# --- every node of a (simulated) PBS job, through the launcher -------------------
start_fake_pbs_job
# A job id of this test's own: inside a job, kill --all-nodes stops that job's runs, and
# other tests simulate job 4242.pbs-sim too.
pbs_env+=(PBS_JOBID="kill-$marker_base.pbs-sim")
launch_env() { clean_env env -u MASTER_PORT "${pbs_env[@]}" "$@"; }
sleeper2="sleep ${marker_base}82"
on_exit "kill_marked '$sleeper2'"
start_launch pbs "$EZPZ_BIN" launch -- $sleeper2
expect_true "all nodes: 4 ranks on n01, n02 start" wait_until 10 has_count 4 "$sleeper2"
run_ezpz everywhere -v kill --all-nodes
expect_eq "all nodes: exit status" 0 "$rc"
expect_match "all nodes: one kill rank per node, for this job's runs" \
  "ezpz: running: mpiexec(\.hydra|\.mpich)? -n 2 -ppn 1 -f [^ ]+ [^ ]+/ezpz kill --on-node .* --job kill-$marker_base.pbs-sim" "$err"
expect_true "all nodes: the job's ranks are gone" wait_until 10 has_count 0 "$sleeper2"
expect_true "all nodes: the decoy lives" alive "$decoy"
expect_true "all nodes: the launch ends" wait_until 10 dead "$launch_pid"

finish
