#!/usr/bin/env bash
# Run records against real processes. Two launches started at once in fresh
# pid namespaces (each ezpz is pid 1 there, so both first choose the same id)
# get a record each, each holding its own output.
source "$(dirname "$0")/common.sh"

require_mpiexec
launch_env() { clean_env "$@"; }

# --- two launches at once, each ezpz pid 1 of its own pid namespace ---------------
if ! unshare -pf --mount-proc true 2>/dev/null; then
  echo "skipped: unshare -pf --mount-proc needs root"
  exit 77
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
