#!/usr/bin/env bash
# ezpz inside real Slurm jobs. tests/slurm/cluster.sh starts a 4-node cluster
# on this machine (munge, slurmctld, one slurmd per node n01..n04; see
# slurm_common.sh); every case below submits a real job with sbatch and runs
# ezpz in its batch script, so the SLURM_* variables are Slurm's own. Checked: placement
# of 8 ranks over 4 nodes and the torch env contract, --nhosts and --exclude,
# a failing rank's exit status, scancel, an MPICH program over srun's PMI2, a
# plain PyTorch DDP script (Debian's python3-torch),
# `ezpz yeet` to every node, and `ezpz test` (when the libtorch trainer is built).
#
# Needs root (cluster.sh: daemons and /etc/hosts); without it, skipped (77).
# EZPZ_SLURM_KEEP=1 leaves the cluster up afterwards; a cluster that was
# already up is left up. EZPZ_SLURM_DIR picks cluster.sh's directory.
source "$(dirname "$0")/common.sh"
announce_passes

skips=()
skip() { skips+=("$1"); printf 'SKIP: %s\n' "$1"; }

source "$(dirname "$0")/slurm_common.sh"

# Rank reporter for Slurm: the node is the slurmd the rank runs under.
slurm_reporter='echo "rank=${RANK-unset} local=${LOCAL_RANK-unset} size=${WORLD_SIZE-unset} lsize=${LOCAL_WORLD_SIZE-unset} addr=${MASTER_ADDR-unset} host=${SLURMD_NODENAME-unset} port=${MASTER_PORT-unset}"'

# expected_ranks PPN HOST...: reporter lines (without ports) for PPN ranks on
# each HOST in order, master on the first.
expected_ranks() { local ppn=$1; shift; rank_lines "$1" "$ppn" "$@"; }

# The srun line ezpz ran (from -v), for the hosts it was given.
srun_line() { sed -n 's/^ezpz: running: .* srun /srun /p' <<<"$err"; }

# --- The whole allocation: 4 nodes x 2 tasks ---------------------------------
t0=$(now_ms)
run_batch allocation -N4 --ntasks-per-node=2 -- -v launch -- sh -c "$slurm_reporter"
expect_eq "allocation: exit status" 0 "$rc"
expect_eq "allocation: 8 ranks, ranks 2k and 2k+1 on n0(k+1), master n01" \
  "$(expected_ranks 2 n01 n02 n03 n04)" "$(without_ports "$out")"
expect_one_port "allocation: one MASTER_PORT" "$out"
expect_true "allocation: Slurm detected" grep -qxF 'ezpz: scheduler: slurm (SLURM_JOB_ID is set)' <<<"$err"
expect_true "allocation: the job's 4 nodes" \
  grep -qxF "ezpz: allocation: job $job_id, 4 hosts: n[01-04]" <<<"$err"
expect_true "allocation: generic-slurm chosen" grep -q '^ezpz: machine: generic-slurm ' <<<"$err"
expect_true "allocation: 2 per host from the job" \
  grep -qxF 'ezpz: ranks per host: 2 (SLURM_NTASKS_PER_NODE=2)' <<<"$err"
expect_match "allocation: srun over all 4 nodes" \
  "^srun -u --kill-on-bad-exit=1 -N 4 -n 8 --ntasks-per-node=2 '--nodelist=n\[01-04\]' " "$(srun_line)"
expect_eq "allocation: every node's slurmd started the step" "n01 n02 n03 n04" "$(step_nodes "$job_id")"
printf 'allocation: %d ms\n' $(($(now_ms) - t0))

# --- The user's PyTorch script: DDP over gloo on all 4 nodes ---------------------
# tests/fixtures/python (see test_python_ddp.sh), run by Debian's python3-torch.
python=/usr/bin/python3
if ! "$python" -c 'import torch.distributed' 2>/dev/null; then
  skip "python ddp: $python cannot import torch.distributed (apt-get install python3-torch)"
else
  cp -r "$EZPZ_SRC/tests/fixtures/python/." "$scratch/work/"
  t0=$(now_ms)
  run_batch python-ddp -N4 --ntasks-per-node=1 -- launch -- "$python" ddp.py
  expect_eq "python ddp: exit status" 0 "$rc"
  expect_eq "python ddp: ranks 0-3 on n01-n04, master n01, parameters equal on every rank" \
    "$(for r in 0 1 2 3; do
      echo "ddp rank=$r local=0 size=4 lsize=1 addr=n01 host=n0$((r + 1)) params=match"; done)" \
    "$(grep '^ddp ' <<<"$out" | sort)"
  [ "$rc" == 0 ] || sed 's/^/  python ddp: stderr: /' <<<"$err" >&2
  printf 'python ddp: %d ms\n' $(($(now_ms) - t0))
fi

# --- ezpz submit: its script through the real sbatch, hostile words intact -------
# The command is a script in the submit directory (the job must cd there):
# rank 0 writes its arguments to argv.out there, every rank prints its node.
# A word a shell expanded, split or globbed would be written differently;
# $(...) or a backtick that ran would create the marker file. The arguments go
# to a file, not to the job's output, because srun -u interleaves the ranks'
# lines: rank 1's NODE line once landed inside rank 0's list (a CI failure).
submit_marker="$scratch/submit-pwned"
submit_words=("\$(touch $submit_marker)" "\`touch $submit_marker\`" "it's" "say \"hi\""
              $'two\nlines' "a  b" "*" "" "--" "-n 4" '$HOME')
printf '%s\n' '#!/bin/sh' \
  'if [ "$RANK" = 0 ]; then printf "[%s]\n" "$@" >argv.out; fi' \
  'echo "NODE ${SLURMD_NODENAME-unset} rank=$RANK"' >"$scratch/work/argv.sh"
chmod +x "$scratch/work/argv.sh"
rm -f "$scratch/submit.out" "$scratch/work/argv.out"
job_id=$(cd "$scratch/work" && submit_env "$EZPZ_BIN" submit --scheduler slurm -N 2 -t 00:05:00 \
  -J "$job_name" --output "$scratch/submit.out" --launch-arg=--ppn=1 -- ./argv.sh "${submit_words[@]}" \
  2>"$scratch/submit.err")
submit_rc=$?
expect_eq "submit: exit 0" 0 "$submit_rc"
expect_match "submit: prints sbatch's job id" '^[0-9]+$' "$job_id"
if [[ $job_id =~ ^[0-9]+$ ]]; then
  expect_true "submit: job $job_id over within 60 s" wait_until 60 job_ended "$job_id"
  expect_eq "submit: the job COMPLETED" COMPLETED "$(job_state "$job_id")"
  expect_eq "submit: the command got every word unchanged" "$(printf '[%s]\n' "${submit_words[@]}")" \
    "$(cat "$scratch/work/argv.out")"
  expect_eq "submit: one rank on each of 2 distinct nodes" "2 2" \
    "$(grep -c '^NODE n0[1-4] rank=[01]$' "$scratch/submit.out") $(grep '^NODE ' "$scratch/submit.out" | cut -d' ' -f2 | sort -u | wc -l)"
  expect_true "submit: no hostile word was executed" test ! -e "$submit_marker"
  [ "$(job_state "$job_id")" == COMPLETED ] || sed 's/^/  submit: job output: /' "$scratch/submit.out" >&2
else
  sed 's/^/  submit: stderr: /' "$scratch/submit.err" >&2
fi

# --- --nhosts 2: the first two nodes only -------------------------------------
run_batch nhosts -N4 --ntasks-per-node=2 -- -v launch --nhosts 2 -- sh -c "$slurm_reporter"
expect_eq "nhosts 2: exit status" 0 "$rc"
expect_eq "nhosts 2: 4 ranks on n01 and n02" "$(expected_ranks 2 n01 n02)" "$(without_ports "$out")"
expect_one_port "nhosts 2: one MASTER_PORT" "$out"
expect_match "nhosts 2: srun given n01,n02" \
  "^srun -u --kill-on-bad-exit=1 -N 2 -n 4 --ntasks-per-node=2 '--nodelist=n\[01-02\]' " "$(srun_line)"
expect_eq "nhosts 2: only n01 and n02 started the step" "n01 n02" "$(step_nodes "$job_id")"

# --- --exclude n02: n02 is never touched --------------------------------------
run_batch exclude -N4 --ntasks-per-node=2 -- -v launch --exclude n02 -- sh -c "$slurm_reporter"
expect_eq "exclude n02: exit status" 0 "$rc"
expect_eq "exclude n02: 6 ranks on n01, n03, n04" "$(expected_ranks 2 n01 n03 n04)" \
  "$(without_ports "$out")"
expect_one_port "exclude n02: one MASTER_PORT" "$out"
expect_match "exclude n02: srun given n01,n03,n04" \
  "^srun -u --kill-on-bad-exit=1 -N 3 -n 6 --ntasks-per-node=2 '--nodelist=n\[01,03-04\]' " \
  "$(srun_line)"
expect_eq "exclude n02: n02's slurmd never started the step" "n01 n03 n04" "$(step_nodes "$job_id")"

# --- Exit status: a failing rank ----------------------------------------------
# srun runs through a wrapper that records the status it gave ezpz. Rank 3
# (on n02) exits 3 after the others have exited 0: srun exits 3.
record_path=$(recording_path srun)
run_batch exit3 -N4 --ntasks-per-node=2 -- PATH="$record_path" \
  launch -- sh -c 'if [ "$RANK" = 3 ]; then sleep 1; exit 3; fi; exit 0'
expect_eq "rank 3 exits 3: srun exits 3" 3 "$(recorded_status srun)"
expect_eq "rank 3 exits 3: ezpz exits 3" 3 "$rc"

# Rank 3 exits 3 while the others still run: --kill-on-bad-exit=1 ends the
# step at once (srun then reports the highest task status: the others' 143
# from SIGTERM, not 3); ezpz exits with rank 3's own (before: srun's).
marker="${marker_base}71"  # `sleep 5N.PID71`: ~5N s, unique to this run
on_exit "kill_marked 'sleep $marker'"
record_path=$(recording_path srun)
t0=$(now_ms)
run_batch exit3-running -N4 --ntasks-per-node=2 -- PATH="$record_path" \
  launch -- sh -c 'if [ "$RANK" = 3 ]; then exit 3; fi; exec sleep "$0"' "$marker"
elapsed=$(($(now_ms) - t0))
srun_rc=$(recorded_status srun)
expect_match "rank 3 exits 3, others running: srun fails" '^[1-9][0-9]*$' "$srun_rc"
expect_eq "rank 3 exits 3, others running: ezpz exits with rank 3's, not srun's ($srun_rc)" 3 "$rc"
expect_true "rank 3 exits 3, others running: the step ends within 20 s (took ${elapsed} ms)" \
  test "$elapsed" -lt 20000
expect_true "rank 3 exits 3, others running: no rank left" wait_until 10 has_count 0 "sleep $marker"

# --- scancel: ezpz forwards the signal, nothing is left on any node -----------
marker="${marker_base}72"
job_cmdline="sleep $marker"
on_exit "kill_marked '$job_cmdline'"
write_batch scancel --background launch -- sleep "$marker"
rm -f "$scratch/scancel.rc"
job_id=$(submit_env sbatch --parsable --job-name="$job_name" -D "$scratch/work" \
  -o "$scratch/scancel.slurm" -N4 --ntasks-per-node=2 "$scratch/scancel.sh" 2>"$scratch/scancel.sbatch")
if ! wait_until 30 has_count 8 "$job_cmdline"; then
  fail "scancel: 8 ranks running '$job_cmdline' within 30 s (saw $(count_live "$job_cmdline"))"
  sed 's/^/  stderr: /' "$scratch/scancel.err" >&2 2>/dev/null
else
  expect_true "scancel: 8 ranks running within 30 s" true
  ezpz_pid=$(ps -eo pid=,args= | awk -v want="$EZPZ_BIN launch -- $job_cmdline" \
    '{ pid = $1; sub(/^[ \t]*[0-9]+[ \t]+/, "") } $0 == want { print pid }')
  launcher_pids=$(children "$ezpz_pid")
  job_pids=($ezpz_pid $launcher_pids $(live_pids "$job_cmdline"))
  scancel "$job_id"
  expect_true "scancel: every rank stops within 15 s" wait_until 15 has_count 0 "$job_cmdline"
  expect_true "scancel: the job ends within 20 s" wait_until 20 job_ended "$job_id"
  expect_eq "scancel: the job is CANCELLED" CANCELLED "$(job_state "$job_id")"
  expect_true "scancel: ezpz exited (its status recorded)" wait_until 10 test -s "$scratch/scancel.rc"
  expect_eq "scancel: ezpz exits 128+SIGTERM" 143 "$(cat "$scratch/scancel.rc" 2>/dev/null)"
  expect_true "scancel: ezpz says it forwarded SIGTERM to srun (pid ${launcher_pids%% *})" \
    grep -q "^ezpz: forwarding SIGTERM to the launcher (pid ${launcher_pids%% *})\$" "$scratch/scancel.err"
  stepd_gone() { ! ps -eo args= | grep -q "^slurmstepd: \[$job_id\."; }
  expect_true "scancel: no slurmstepd of the job left" wait_until 10 stepd_gone
  expect_job_gone "scancel: no ezpz, srun or rank left"
  expect_eq "scancel: no process mentions the marker" "" \
    "$(ps -eo pid=,args= | grep -F -- "$marker" | grep -v -e grep -e awk)"
fi

# --- An MPICH program over srun --mpi=pmi2 --------------------------------------
if ! command -v mpicc >/dev/null; then
  skip "mpi: no mpicc (install libmpich-dev)"
else
  cat >"$scratch/mpi_hello.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
/* One line per rank: MPI's view (rank, size, a reduction over every rank,
   processor name) next to Slurm's node and ezpz's RANK. */
int main(int argc, char** argv) {
  int rank, size, len, sum = 0;
  char name[MPI_MAX_PROCESSOR_NAME];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Get_processor_name(name, &len);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const char* node = getenv("SLURMD_NODENAME");
  const char* torch_rank = getenv("RANK");
  printf("mpi rank=%d size=%d sum=%d node=%s torch_rank=%s proc=%s\n", rank, size, sum,
         node ? node : "unset", torch_rank ? torch_rank : "unset", name);
  MPI_Finalize();
  return 0;
}
EOF
  if ! mpicc -o "$scratch/work/mpi_hello" "$scratch/mpi_hello.c" 2>"$scratch/mpicc.err"; then
    fail "mpi: mpicc failed"; sed 's/^/  mpicc: /' "$scratch/mpicc.err" >&2
  else
    run_batch mpi -N4 --ntasks-per-node=2 -- launch --launcher-arg=--mpi=pmi2 -- ./mpi_hello
    expect_eq "mpi: exit status" 0 "$rc"
    expected=$(for r in 0 1 2 3 4 5 6 7; do
      echo "mpi rank=$r size=8 sum=28 node=n0$((r / 2 + 1)) torch_rank=$r"; done)
    expect_eq "mpi: 8 MPI ranks, size 8, MPI rank = RANK, 2 per node over n01..n04" \
      "$expected" "$(sed 's/ proc=.*//' <<<"$out" | sort)"
    expect_eq "mpi: the ranks span n01..n04" "n01 n02 n03 n04" \
      "$(sed -n 's/.* node=\([^ ]*\) .*/\1/p' <<<"$out" | sort -u | xargs)"
    expect_eq "mpi: processor name is this host's for every rank" "$(hostname)" \
      "$(sed -n 's/.* proc=//p' <<<"$out" | sort -u)"
  fi
fi

# --- ezpz yeet: the stager on every node, through srun's PMI2 ---------------------
# Each node's copy goes under its own name ({host} is SLURMD_NODENAME), so the
# four "node-local disks" are four directories here.
source "$(dirname "$0")/yeet_common.sh"
make_venv_tree "$scratch/src/venv" 300
run_batch yeet -N4 --ntasks-per-node=1 -- -v yeet "$scratch/src/venv" --dst "$scratch/nodes/{host}/venv"
expect_eq "yeet: exit status" 0 "$rc"
expect_match "yeet: every node copied" "on 4 nodes: 4 copied, 0 up to date, 0 failed" "$out"
expect_match "yeet: srun starts the MPI stager with PMI2" "ezpz: running: srun .*--mpi=pmi2 .*ezpz-stager" "$err"
for node in "${nodes[@]}"; do expect_moved_copy "yeet $node" "$scratch/src/venv" "$scratch/nodes/$node/venv"; done
run_batch yeet-again -N4 --ntasks-per-node=1 -- yeet "$scratch/src/venv" --dst "$scratch/nodes/{host}/venv"
expect_eq "yeet again: exit status" 0 "$rc"
expect_match "yeet again: nothing transferred" "0 copied, 4 up to date, 0 failed" "$out"
[ "$rc" == 0 ] || { sed 's/^/  yeet: stdout: /' <<<"$out"; sed 's/^/  yeet: stderr: /' <<<"$err"; } >&2

# --- A rank SIGKILLed: ezpz exits within 5 s, names the rank and host ---------------
# Rank 3 (on n02) kills itself with SIGKILL after writing when; the others sleep.
marker="${marker_base}73"
on_exit "kill_marked 'sleep $marker'"
run_batch rank-killed -N4 --ntasks-per-node=2 -- EZPZ_RUNS_DIR="$scratch/runs" launch -- \
  sh -c 'if [ "$RANK" = 3 ]; then sleep 1; date +%s%3N >"$1"; kill -KILL $$; fi; exec sleep "$0"' \
  "$marker" "$scratch/killed-at"
ended=$(stat -c %.3Y "$scratch/rank-killed.rc" 2>/dev/null | tr -d .)
killed=$(cat "$scratch/killed-at" 2>/dev/null)
expect_true "rank killed: ezpz exits within 5 s of it ($((ended - killed)) ms)" \
  test -n "$killed" -a $((ended - killed)) -lt 5000
expect_true "rank killed: non-zero exit ($rc)" test "$rc" != 0 -a "$rc" != none
# ezpz exits as a shell would for rank 3 (137); "exit status" is srun's own.
expect_eq "rank killed: ezpz exits with the rank's status" 137 "$rc"
expect_match "rank killed: ezpz names the rank and its host" \
  "^ezpz: attempt 1 ended: bad_node: exit status [0-9]+: rank 3 \(pid [0-9]+\) on n02: killed by signal 9 \(SIGKILL\)\$" \
  "$(grep '^ezpz: attempt' <<<"$err")"
expect_true "rank killed: no rank left on any node" wait_until 10 has_count 0 "sleep $marker"
stepd_gone() { ! ps -eo args= | grep -q "^slurmstepd: \[$job_id\."; }
expect_true "rank killed: no slurmstepd of the job left" wait_until 10 stepd_gone

# --- A node made unavailable: its spare takes over ------------------------------------
# The job stops n03's slurmd once it has its 4 nodes; ezpz runs on n01-n03 with
# n04 spare. srun cannot start n03's task, says so, and ezpz swaps n04 in.
# The job cannot leave COMPLETING until n03's slurmd answers again: it is
# restarted as soon as ezpz has finished, not after the job.
run_batch_prefix="kill -TERM \"\$(cat '$EZPZ_SLURM_DIR/run/slurmd-n03.pid')\"; sleep 1"
rm -f "$scratch/spare.rc"
( wait_until 150 test -s "$scratch/spare.rc"
  "$cluster" up >"$scratch/restart.log" 2>&1 || sed 's/^/  restart: /' "$scratch/restart.log" >&2 ) &
restarter=$!
batch_timeout=180 run_batch spare -N4 --ntasks-per-node=1 -- EZPZ_RUNS_DIR="$scratch/runs" \
  launch --spares 1 --retry-delay 1 -- sh -c 'echo "rank $RANK of $WORLD_SIZE on $SLURMD_NODENAME"'
run_batch_prefix=""
wait "$restarter"
expect_eq "spare: exit 0" 0 "$rc"
spare_run=$(ls -d "$scratch/runs"/*/ | sort | tail -n 1)
expect_eq "spare: the second attempt ran on n01, n02 and n04" "rank 0 of 3 on n01
rank 1 of 3 on n02
rank 2 of 3 on n04" "$(grep '^rank' "$spare_run/attempt-2/output.log" | sort)"
expect_match "spare: ezpz names n03 and swaps it" \
  "ezpz: attempt 1 ended: bad_node: exit status [0-9]+; bad node: n03
ezpz: retry on new hosts \(n03 -> n04\); attempt 2 in 1 s" "$(grep -E '^ezpz: (attempt 1|retry)' <<<"$err")"
expect_eq "spare: verdict.json of attempt 1" "bad_node n03 n03 -> n04" \
  "$(jq -r '"\(.classification) \(.bad_hosts | join(",")) \(.swaps | join(","))"' "$spare_run/attempt-1/verdict.json")"
expect_eq "spare: verdict.json of attempt 2" "success n01,n02,n04" \
  "$(jq -r '"\(.classification) \(.hosts | join(","))"' "$spare_run/attempt-2/verdict.json")"
expect_true "spare: n03's slurmd runs again" wait_until 60 bash -c \
  "[ \"\$(sinfo -h -N -o '%N %T' | sort -u | grep -c idle)\" = 4 ]"

# --- ezpz test: the libtorch trainer on every node ------------------------------
if [ ! -x "$(dirname "$EZPZ_BIN")/ezpz-smoke" ]; then
  skip "ezpz test: $(dirname "$EZPZ_BIN")/ezpz-smoke is not built"
else
  t0=$(now_ms)
  batch_timeout=90 run_batch ezpz-test -N4 --ntasks-per-node=1 -- test --model debug
  expect_eq "ezpz test: exit status" 0 "$rc"
  expect_true "ezpz test: PASS" grep -q 'ezpz test: PASS' <<<"$out"
  [ "$rc" == 0 ] || { sed 's/^/  ezpz test: stdout: /' <<<"$out"; sed 's/^/  ezpz test: stderr: /' <<<"$err"; } >&2
  printf 'ezpz test: %d ms\n' $(($(now_ms) - t0))
fi

[ "${#skips[@]}" -gt 0 ] && printf '%d skipped: %s\n' "${#skips[@]}" "$(IFS=';'; echo "${skips[*]}")"
finish
