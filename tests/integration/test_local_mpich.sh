#!/usr/bin/env bash
# Real local runs over MPICH's Hydra mpiexec, no scheduler: `ezpz launch -n 2`
# starts two ranks through ezpz-rankenv; each sees the torch env:// contract.
# Exit codes, missing programs, hostile arguments and signals, end to end.
source "$(dirname "$0")/common.sh"

require_mpiexec

# No scheduler variables (env -i), and no MASTER_PORT: ezpz picks a free one.
launch_env() { clean_env env -u MASTER_PORT "$@"; }


# --- The env contract on every rank ------------------------------------------
run_ezpz contract launch -n 2 -- sh -c "$reporter"
expect_eq "contract: exit status" 0 "$rc"
expect_eq "contract: one line per rank, each rank once" \
  "rank=0 local=0 size=2 lsize=2 addr=127.0.0.1 host=$(hostname)
rank=1 local=1 size=2 lsize=2 addr=127.0.0.1 host=$(hostname)" "$(without_ports "$out")"
expect_one_port "contract" "$out"

# --scheduler local inside a PBS job: this host alone. Hydra left to choose read PBS_NODEFILE
# itself and ran ssh to its first host (n01: the test hosts resolve to loopback addresses, where
# no ssh listens), so the run failed; -hosts keeps both ranks here.
printf 'n01\nn02\n' >"$scratch/pbs.nodes"
run_ezpz local_in_pbs PBS_JOBID=1.pbs PBS_NODEFILE="$scratch/pbs.nodes" launch --scheduler local \
  -n 2 -- sh -c "$reporter"
expect_eq "--scheduler local in a PBS job: exit status" 0 "$rc"
expect_eq "--scheduler local in a PBS job: both ranks here" \
  "rank=0 local=0 size=2 lsize=2 addr=127.0.0.1 host=$(hostname)
rank=1 local=1 size=2 lsize=2 addr=127.0.0.1 host=$(hostname)" "$(without_ports "$out")"

# A MASTER_PORT in ezpz's environment is the one every rank gets.
clean_env timeout -k 5 50 "$EZPZ_BIN" launch -n 2 -- sh -c "$reporter" >"$scratch/port.out" 2>"$scratch/port.err"
expect_eq "MASTER_PORT=29500 given: exit status" 0 "$?"
expect_eq "MASTER_PORT=29500 given: every rank sees it" 29500 "$(ports_of "$(cat "$scratch/port.out")")"

# --- A stdin with nothing to give: every rank reads EOF at once ----------------
# Hydra given /dev/null spins on the EOF and never ends a rank's stdin: each of these hung
# every time when ezpz passed /dev/null on to it.
for mode in null closed; do
  if [ "$mode" = null ]; then
    got=$(launch_env timeout -k 5 20 "$EZPZ_BIN" launch --no-record -n 2 -- \
      sh -c 'cat; echo "rank $RANK done"' </dev/null 2>&1)
  else
    got=$(launch_env timeout -k 5 20 "$EZPZ_BIN" launch --no-record -n 2 -- \
      sh -c 'cat; echo "rank $RANK done"' <&- 2>&1)
  fi
  expect_eq "stdin $mode: exit status" 0 "$?"
  expect_eq "stdin $mode: every rank reads EOF at once" "rank 0 done
rank 1 done" "$(sort <<<"$got")"
done

# --- Exit status: the launcher's own ------------------------------------------
# mpiexec runs through a wrapper that records the status it gave ezpz.
record_path=$(recording_path mpiexec)
run_ezpz exit3 PATH="$record_path" launch -n 2 -- sh -c 'exit $(( RANK == 1 ? 3 : 0 ))'
expect_eq "rank 1 exits 3: the launcher exits 3" 3 "$(recorded_status mpiexec)"
expect_eq "rank 1 exits 3: ezpz exits 3" 3 "$rc"

# --- A failing rank is named, its last words under the verdict ----------------
# Hydra names no rank that exits non-zero: before, "exit status 1: the job's own
# failure" and "failed_ranks": []. ezpz-rankenv reports it; ezpz names it.
run_ezpz failrank EZPZ_RUNS_DIR="$scratch/runs-failrank" launch -n 2 -- \
  sh -c 'if [ "$RANK" = 1 ]; then echo "rank 1: loading" >&2; echo "ValueError: boom" >&2; exit 1; fi'
expect_eq "rank 1 exits 1: exit status" 1 "$rc"
failrank_run=$(ls -d "$scratch"/runs-failrank/*/)
failrank_run=${failrank_run%/}
rankenv_pid=$(sed -n 's/^ezpz-rankenv: rank 1 (pid \([0-9]*\)).*/\1/p' <<<"$err")
expect_eq "rank 1 exits 1: named by ezpz-rankenv and the verdict, its last lines below" \
  "ezpz-rankenv: rank 1 (pid $rankenv_pid) on $(hostname): exited with code 1
ezpz: attempt 1 ended: application_error: exit status 1: rank 1 (pid $rankenv_pid) on $(hostname): exited with code 1
ezpz: last lines before rank 1 on $(hostname) failed (all in $failrank_run/attempt-1/output.log):
ezpz:   rank 1: loading
ezpz:   ValueError: boom" "$(grep -E '^ezpz(-rankenv: rank|: attempt|: last lines|:   )' <<<"$err")"
expect_eq "rank 1 exits 1: verdict.json names it" \
  "[{\"ranks\":\"1\",\"host\":\"$(hostname)\",\"pid\":\"$rankenv_pid\",\"what\":\"exited with code 1\",\"died_of_signal\":false}]" \
  "$(jq -c .failed_ranks "$failrank_run/attempt-1/verdict.json" 2>&1)"

# --- A failing rank ends the job: Hydra alone waits on for the others ---------------------
# Before, rank 0 slept on (in a real job: a collective's or a rendezvous's timeout) and the job
# ended only when it did, as under `mpiexec -n 2` alone. --kill-on-bad-exit 1: stopped 1 s after.
run_ezpz badexit EZPZ_RUNS_DIR="$scratch/runs-badexit" launch -n 2 --kill-on-bad-exit 1 -- \
  sh -c 'if [ "$RANK" = 1 ]; then exit 4; fi; sleep 30 && echo "rank 0: woke up"'
expect_eq "bad exit: ezpz exits with the failed rank's code" 4 "$rc"
rankenv_pid=$(sed -n 's/^ezpz-rankenv: rank 1 (pid \([0-9]*\)).*/\1/p' <<<"$err")
report="ezpz-rankenv: rank 1 (pid $rankenv_pid) on $(hostname): exited with code 4"
# "exit status" is the launcher's own (Hydra's, stopped: 143 here); ezpz's is the rank's.
launcher_exit=$(jq -r .launcher_exit "$scratch"/runs-badexit/*/attempt-1/verdict.json)
expect_eq "bad exit: the report, the stop, the verdict naming rank 1" \
  "$report
ezpz: the job still ran 1 s after \"$report\" (--kill-on-bad-exit); sending SIGTERM to the launcher
ezpz: attempt 1 ended: application_error: exit status $launcher_exit: rank 1 (pid $rankenv_pid) on $(hostname): exited with code 4" \
  "$(grep -E '^ezpz(-rankenv: rank|: the job still|: attempt)' <<<"$err")"
expect_eq "bad exit: rank 0 was stopped before it woke" "" "$(grep 'woke up' <<<"$out")"
expect_eq "bad exit: verdict.json says what stopped it; the launcher's status is its own" \
  "rank_failed 4 nonzero" \
  "$(jq -r '"\(.stopped_by) \(.exit_code) \(if .launcher_exit != 0 then "nonzero" else .launcher_exit end)"' \
    "$scratch"/runs-badexit/*/attempt-1/verdict.json)"
# off: every rank runs to its end, as under Hydra alone.
run_ezpz badexit_off EZPZ_RUNS_DIR="$scratch/runs-badexit-off" launch -n 2 \
  --kill-on-bad-exit off -- sh -c 'if [ "$RANK" = 1 ]; then exit 4; fi; sleep 2; echo "rank 0: woke up"'
expect_eq "bad exit, off: rank 0 ran to its end; exit 4" "rank 0: woke up 4" \
  "$(grep -o 'rank 0: woke up' <<<"$out") $rc"
expect_eq "bad exit, off: nothing stopped" "" "$(grep '^ezpz: the job still ran' <<<"$err")"

# --- A site's known error in the output: its remedy, once, after the verdict -------------
vni_line="start failed on x4102c5s2b0n0: No VNIs available in internal allocator"
run_ezpz knownerror EZPZ_RUNS_DIR="$scratch/runs-knownerror" launch -n 2 -- \
  sh -c "echo '$vni_line' >&2; exit 1"
expect_eq "a known error: exit status" 1 "$rc"
expect_eq "a known error: its hint, once, after the verdict" \
  'ezpz: hint: "No VNIs available" (ALCF Aurora, Known Issues: No VNIs available in internal allocator): pass --no-vni to PALS'"'"'s mpiexec: ezpz launch --launcher-arg --no-vni ...' \
  "$(grep '^ezpz: hint:' <<<"$err")"
expect_eq "a known error: the hint comes last" "hint" "$(tail -1 <<<"$err" | cut -d' ' -f2 | tr -d :)"
run_ezpz knownerror-ok EZPZ_RUNS_DIR="$scratch/runs-knownerror" launch -n 1 -- \
  sh -c "echo '$vni_line' >&2"
expect_eq "a known error in a run that succeeds: no hint" "0 0" "$rc $(grep -c '^ezpz: hint:' <<<"$err")"

# A rank killed by a signal: the contract says 128+N. Hydra itself reports N
# or 255 (it varies from run to run); ezpz passes on the launcher's status, or
# gives 128+N.
record_path=$(recording_path mpiexec)
run_ezpz rankkill PATH="$record_path" launch -n 2 -- sh -c '[ "$RANK" = 1 ] && kill -KILL $$; exit 0'
launcher_rc=$(recorded_status mpiexec)
expect_match "rank 1 killed by SIGKILL: ezpz exits 137 or the launcher's status ($launcher_rc)" \
  "^(137|$launcher_rc)\$" "$rc"
expect_true "rank 1 killed by SIGKILL: a failure" test "$rc" -ne 0

# The launcher itself killed (MPICH 4.0.2's Hydra dies of SIGPIPE when a proxy
# it writes to has just gone): 141, and no rank is blamed for it.
mkdir -p "$scratch/pipebin"
printf '#!/bin/sh\necho "launcher up"\nkill -PIPE $$\n' >"$scratch/pipebin/mpiexec"
chmod +x "$scratch/pipebin/mpiexec"
run_ezpz launcherdied PATH="$scratch/pipebin:/usr/bin:/bin" launch -n 2 -- true
expect_eq "launcher killed by SIGPIPE: exit 141" 141 "$rc"
expect_eq "launcher killed by SIGPIPE: ezpz says it was the launcher" \
  "ezpz: attempt 1 ended: launcher_died: exit status 141: the launcher itself died of signal 13 (SIGPIPE); the ranks' statuses were lost with it" \
  "$(grep '^ezpz: attempt' <<<"$err")"

# --- A command that does not exist --------------------------------------------
# ezpz looks for it once, before the launch: one line, no launcher started.
run_ezpz nocommand launch -n 2 -- /nonexistent/prog
expect_eq "missing command: exit status 127, as a shell's" 127 "$rc"
expect_eq "missing command: one line, before the launch" \
  "ezpz: error: /nonexistent/prog: no such file" "$err"
# Without that look-up, each rank says it.
run_ezpz nocommand launch -n 2 --no-command-check -- /nonexistent/prog
expect_eq "missing command, not looked for: exit status 127, as a shell's" 127 "$rc"
expect_eq "missing command, not looked for: one clear line per rank" \
  "ezpz-rankenv: /nonexistent/prog: No such file or directory
ezpz-rankenv: /nonexistent/prog: No such file or directory" "$(grep '^ezpz-rankenv:' <<<"$err")"

# --- No launcher on PATH (ezpz by absolute path; /bin is /usr/bin here) ------
mkdir -p "$scratch/emptybin"
run_ezpz nolauncher PATH="/nonexistent:$scratch/emptybin" launch -n 2 -- /bin/true
expect_eq "no mpiexec on PATH: exit status" 127 "$rc"
expect_eq "no mpiexec on PATH: the error" "ezpz: error: mpiexec: launcher not found on PATH" "$err"
expect_eq "no mpiexec on PATH: nothing on stdout" "" "$out"

# --- Hostile arguments reach the command literally ----------------------------
pwned="$scratch/pwned"
run_ezpz hostile launch -n 2 -- sh -c 'printf "%s|%s|%s\n" "$1" "$2" "$3"' x \
  "\$(touch $pwned)" "\`touch $pwned\`; touch $pwned" "a  'b' \"c\" \\ * ?"
expect_eq "hostile: exit status" 0 "$rc"
line="\$(touch $pwned)|\`touch $pwned\`; touch $pwned|a  'b' \"c\" \\ * ?"
expect_eq "hostile: arguments printed literally by both ranks" "$line"$'\n'"$line" "$out"
expect_true "hostile: nothing was executed" test ! -e "$pwned"

# --- -x NAME=VALUE reaches every rank -----------------------------------------
run_ezpz env launch -n 2 -x FOO=bar -x "SPACED=a  b \$c" -- sh -c 'echo "rank=$RANK foo=$FOO spaced=$SPACED"'
expect_eq "-x: exit status" 0 "$rc"
expect_eq "-x: every rank sees the values" \
  'rank=0 foo=bar spaced=a  b $c
rank=1 foo=bar spaced=a  b $c' "$(sort <<<"$out")"

# --- --no-rank-env: ezpz sets nothing; the launcher's own variables remain ----
run_ezpz norankenv launch -n 2 --no-rank-env -- sh -c "$reporter"' pmi=$PMI_RANK'
expect_eq "--no-rank-env: exit status" 0 "$rc"
expect_eq "--no-rank-env: no RANK, WORLD_SIZE, MASTER_* from ezpz" \
  "rank=unset local=unset size=unset lsize=unset addr=unset host=$(hostname) port=unset pmi=0
rank=unset local=unset size=unset lsize=unset addr=unset host=$(hostname) port=unset pmi=1" \
  "$(sort <<<"$out")"

# --- Signals -------------------------------------------------------------------
sigterm_job "sigterm" 2 -n 2
sigterm_twice_job "sigterm-twice" 2 -n 2

finish
