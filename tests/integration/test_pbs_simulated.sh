#!/usr/bin/env bash
# A simulated two-node PBS job on this one machine. PBS's contract with a job
# is PBS_JOBID plus PBS_NODEFILE (one line per slot); the two "nodes" n01 and
# n02 are loopback addresses in /etc/hosts, and HYDRA_LAUNCHER=fork makes
# MPICH's Hydra start the "remote" proxies locally. Each rank still sees the
# host Hydra placed it on (MPIR_CVAR_CH3_INTERFACE_HOSTNAME), so placement,
# --nhosts, --exclude, the hostfile, exit codes and signals are all checked
# against real processes.
source "$(dirname "$0")/common.sh"

require_mpiexec
start_fake_pbs_job
# No MASTER_PORT (ezpz picks one), no EZPZ_MACHINE (ezpz picks generic-pbs).
launch_env() { clean_env env -u MASTER_PORT -u EZPZ_MACHINE "${pbs_env[@]}" "$@"; }


# expect_plan NAME HOSTS MASTER WORLD PPN LAUNCH-OPTIONS...: --dry-run --json
# names generic-pbs, the hosts, the layout and a hostfile ezpz wrote that lists
# exactly HOSTS (space-separated), one a line.
expect_plan() {
  local name=$1 hosts=$2 master=$3 world=$4 ppn=$5; shift 5
  run_ezpz "$name-plan" launch --dry-run --json "$@" -- sh -c "$reporter"
  expect_eq "$name: plan exit status" 0 "$rc"
  expect_eq "$name: scheduler" pbs "$(json_field scheduler "$out")"
  expect_eq "$name: machine" generic-pbs "$(json_field machine "$out")"
  expect_eq "$name: job id" 4242.pbs-sim "$(json_field job_id "$out")"
  expect_eq "$name: master" "$master" "$(json_field master_addr "$out")"
  expect_eq "$name: world size" "$world" "$(json_number world_size "$out")"
  expect_eq "$name: ranks per host" "$ppn" "$(json_number ppn "$out")"
  local hostfile
  hostfile=$(json_field hostfile "$out")
  expect_match "$name: hostfile in the run directory" "^$scratch/run/[^/]+\$" "$hostfile"
  expect_eq "$name: the hostfile lists exactly the hosts used" "${hosts// /$'\n'}" \
    "$(cat "$hostfile" 2>&1)"
  expect_true "$name: the launcher is given that hostfile" grep -qxF -- "    \"$hostfile\"," <<<"$out"
}

# --- The whole allocation: 2 hosts x 2 slots ----------------------------------
expect_plan "allocation" "n01 n02" n01 4 2
run_ezpz allocation -v launch -- sh -c "$reporter"
expect_eq "allocation: exit status" 0 "$rc"
expect_eq "allocation: 4 ranks, 2 per host, in order, master on n01" \
  "rank=0 local=0 size=4 lsize=2 addr=n01 host=n01
rank=1 local=1 size=4 lsize=2 addr=n01 host=n01
rank=2 local=0 size=4 lsize=2 addr=n01 host=n02
rank=3 local=1 size=4 lsize=2 addr=n01 host=n02" "$(without_ports "$out")"
expect_one_port "allocation" "$out"
expect_true "allocation: generic-pbs chosen" grep -q '^ezpz: machine: generic-pbs ' <<<"$err"
expect_true "allocation: 2 slots per host from the nodefile" \
  grep -qxF 'ezpz: ranks per host: 2 (PBS_NODEFILE lists each host 2 times)' <<<"$err"
used_hostfile=$(sed -n 's/^ezpz: running: .* -f \([^ ]*\) .*/\1/p' <<<"$err")
expect_eq "allocation: the run's hostfile lists n01, n02" $'n01\nn02' "$(cat "$used_hostfile" 2>&1)"

# --- --nhosts 1: the first host only -----------------------------------------
expect_plan "nhosts" "n01" n01 2 2 --nhosts 1
run_ezpz nhosts launch --nhosts 1 -- sh -c "$reporter"
expect_eq "nhosts: exit status" 0 "$rc"
expect_eq "nhosts: 2 ranks, both on n01" \
  "rank=0 local=0 size=2 lsize=2 addr=n01 host=n01
rank=1 local=1 size=2 lsize=2 addr=n01 host=n01" "$(without_ports "$out")"
expect_one_port "nhosts" "$out"

# --- --exclude n01: n02 only, and it becomes the master ----------------------
expect_plan "exclude" "n02" n02 2 2 --exclude n01
run_ezpz exclude launch --exclude n01 -- sh -c "$reporter"
expect_eq "exclude: exit status" 0 "$rc"
expect_eq "exclude: 2 ranks, both on n02, master n02" \
  "rank=0 local=0 size=2 lsize=2 addr=n02 host=n02
rank=1 local=1 size=2 lsize=2 addr=n02 host=n02" "$(without_ports "$out")"
expect_one_port "exclude" "$out"

# --- Uneven: -n 3 --ppn 2 fills n01, then n02 holds one rank ------------------
# Before: "-n 3 cannot be split evenly over 2 ranks per host (--ppn)". Each rank's
# LOCAL_WORLD_SIZE is its own host's (Hydra's MPI_LOCALNRANKS), not the plan's 2.
expect_plan "uneven" "n01 n02" n01 3 2 -n 3 --ppn 2
run_ezpz uneven launch -n 3 --ppn 2 -- sh -c "$reporter"
expect_eq "uneven: exit status" 0 "$rc"
expect_eq "uneven: ranks 0, 1 on n01, rank 2 alone on n02" \
  "rank=0 local=0 size=3 lsize=2 addr=n01 host=n01
rank=1 local=1 size=3 lsize=2 addr=n01 host=n01
rank=2 local=0 size=3 lsize=1 addr=n01 host=n02" "$(without_ports "$out")"
expect_one_port "uneven" "$out"
expect_plan "uneven, -n alone" "n01 n02" n01 3 2 -n 3

# --- A failing rank on the second host is named with it -----------------------
run_ezpz failn02 EZPZ_RUNS_DIR="$scratch/runs-failn02" launch -n 3 --ppn 2 -- sh -c '[ "$RANK" = 2 ] && { echo "rank 2: no data" >&2; exit 5; }; exit 0'
expect_eq "rank 2 exits 5: exit status" 5 "$rc"
rankenv_pid=$(sed -n 's/^ezpz-rankenv: rank 2 (pid \([0-9]*\)).*/\1/p' <<<"$err")
failn02_run=$(ls -d "$scratch"/runs-failn02/*/)
expect_eq "rank 2 exits 5: the verdict names rank 2 on n02, its last line below" \
  "ezpz: attempt 1 ended: application_error: exit status 5: rank 2 (pid $rankenv_pid) on n02: exited with code 5
ezpz: last lines before rank 2 on n02 failed (all in ${failn02_run%/}/attempt-1/output.log):
ezpz:   rank 2: no data" "$(grep -E '^ezpz(: attempt|: last lines|:   )' <<<"$err")"
expect_eq "rank 2 exits 5: verdict.json names it" "2 n02 exited with code 5 false" \
  "$(jq -r '.failed_ranks[] | "\(.ranks) \(.host) \(.what) \(.died_of_signal)"' "$failn02_run/attempt-1/verdict.json" 2>&1)"

# --- Exit status: a rank on the second host exits 3 --------------------------
# mpiexec runs through a wrapper that records the status it gave ezpz.
record_path=$(recording_path mpiexec)
run_ezpz exit3 PATH="$record_path" launch -- sh -c 'exit $(( RANK == 3 ? 3 : 0 ))'
expect_eq "rank 3 exits 3: the launcher exits 3" 3 "$(recorded_status mpiexec)"
expect_eq "rank 3 exits 3: ezpz exits 3" 3 "$rc"

# --- Signals: every rank on every host stops ---------------------------------
sigterm_job "sigterm" 4
sigterm_twice_job "sigterm-twice" 4

# --- A broken PBS environment: exit 2 and one line ---------------------------
pbs_env=(PBS_JOBID=4242.pbs-sim HYDRA_LAUNCHER=fork)
run_ezpz no-nodefile launch -- true
expect_eq "PBS_NODEFILE unset: exit status" 2 "$rc"
expect_eq "PBS_NODEFILE unset: the error" \
  "ezpz: error: PBS_JOBID is set (4242.pbs-sim) but PBS_NODEFILE is not: run inside the PBS job, or set --scheduler local" \
  "$err"
expect_eq "PBS_NODEFILE unset: nothing on stdout" "" "$out"

: >"$scratch/aux/empty"
pbs_env=(PBS_JOBID=4242.pbs-sim PBS_NODEFILE="$scratch/aux/empty" HYDRA_LAUNCHER=fork)
run_ezpz empty-nodefile launch -- true
expect_eq "empty PBS_NODEFILE: exit status" 2 "$rc"
expect_eq "empty PBS_NODEFILE: the error" \
  "ezpz: error: PBS_NODEFILE $scratch/aux/empty: no hosts in file" "$err"

pbs_env=(PBS_JOBID=4242.pbs-sim PBS_NODEFILE="$scratch/aux/missing" HYDRA_LAUNCHER=fork)
run_ezpz missing-nodefile launch -- true
expect_eq "missing PBS_NODEFILE: exit status" 2 "$rc"
expect_eq "missing PBS_NODEFILE: the error" \
  "ezpz: error: PBS_NODEFILE: $scratch/aux/missing: No such file or directory" "$err"

finish
