#!/usr/bin/env bash
# Run records against real processes. A launch whose ezpz is SIGKILLed shows as
# lost, not as running forever, and `ezpz kill` given the start of its id ends
# the ranks it left behind. Two launches started at once in fresh pid
# namespaces (each ezpz is pid 1 there, so both first choose the same id) get
# a record each, each holding its own output.
source "$(dirname "$0")/common.sh"

require_mpiexec
launch_env() { clean_env "$@"; }
runs="$scratch/runs"
node=$(hostname -s)

# --- ezpz SIGKILLed mid-run: lost -------------------------------------------------
start_job lost 2 -n 2 || { finish; exit; }
run_id=$(ls "$runs")
# All but its last character: a start of the id that no other run has (not the
# time and host alone: another user of this host may launch in the same second).
prefix=${run_id%?}
row() { grep "^$run_id " <<<"$out"; }
run_ezpz alive runs
expect_match "alive: ezpz runs says running" "^$run_id +[0-9T:-]+ +0  running +-  $job_cmdline\$" "$(row)"

kill -KILL "$job_pid"
expect_true "SIGKILL: ezpz is gone" wait_until 10 dead "$job_pid"
expect_eq "SIGKILL: its 2 ranks are left running" 2 "$(count_live "$job_cmdline")"
run_ezpz lost runs
expect_match "SIGKILL: ezpz runs says lost" "^$run_id +[0-9T:-]+ +0  lost +-  $job_cmdline\$" "$(row)"
run_ezpz show runs show "$prefix"
expect_eq "SIGKILL: runs show says lost, and how to stop what is left" \
  "  result    lost: ezpz ended without recording an exit (killed, or its node went down); ranks it left may still run: ezpz kill $run_id" \
  "$(grep '^  result ' <<<"$out")"

run_ezpz kill kill "$prefix"
expect_eq "kill by the start of the id: exit status" 0 "$rc"
expect_eq "kill by the start of the id: nothing on stderr" "" "$err"
expect_true "kill by the start of the id: names the whole id" \
  grep -q "^sent SIGTERM to [0-9]* (run $run_id): $job_cmdline\$" <<<"$out"
expect_true "kill by the start of the id: the orphaned ranks are gone" \
  wait_until 10 has_count 0 "$job_cmdline"
run_ezpz still-lost runs
expect_match "after kill: still lost (nothing recorded an end)" "^$run_id +[0-9T:-]+ +0  lost " "$(row)"

# --- two launches at once, each ezpz pid 1 of its own pid namespace ---------------
if ! unshare -pf --mount-proc true 2>/dev/null; then
  echo "skipped the pid-namespace part: unshare -pf --mount-proc needs root"
  finish
  exit
fi
ns_runs="$scratch/ns-runs"
launch_pair() {
  local i pids=()
  rm -rf "$ns_runs"
  for i in 1 2; do
    clean_env EZPZ_RUNS_DIR="$ns_runs" unshare -pf --mount-proc \
      "$EZPZ_BIN" launch -n 1 -- sh -c "echo from-launch-$i" >"$scratch/ns$i.out" 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}"
}
# Their ids clash only when both start in the same second: a pair split by a
# second's boundary proves nothing, so it is run again.
for try in 1 2 3 4 5; do
  launch_pair
  [ "$(ls "$ns_runs" | cut -c1-15 | sort -u | wc -l)" -eq 1 ] && break
done
ids=($(ls "$ns_runs" | sort))
expect_eq "pid namespaces: two launches in one second, two records" 2 "${#ids[@]}"
expect_eq "pid namespaces: the second takes the next choice of id" "${ids[0]}-2" "${ids[1]:-none}"
for id in "${ids[@]}"; do
  log=$(cat "$ns_runs/$id/attempt-1/output.log")
  expect_match "pid namespaces: $id's log holds one launch's output" '^from-launch-[12]$' "$log"
  expect_true "pid namespaces: $id's run.json is that launch's" \
    grep -q "\"echo $log\"" "$ns_runs/$id/run.json"
done
expect_eq "pid namespaces: each launch's output in a record" "from-launch-1
from-launch-2" "$(cat "$ns_runs"/*/attempt-1/output.log | sort)"

finish
