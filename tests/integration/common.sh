# Helpers shared by the integration tests (sourced, not run: ctest only runs
# test_*.sh). They run real processes, so every wait is a poll with a deadline
# and every test cleans up what it started, by pid, on any exit.
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"

# A marker unique to this run, for `sleep MARKER.N` rank processes that can be
# found (and counted) without mistaking anybody else's.
marker_base="5$((RANDOM % 9)).$$"

# Commands run on exit (after the ones registered before them), then lib.sh's
# scratch removal, which this trap replaces.
exit_hooks=()
on_exit() { exit_hooks+=("$*"); }
run_exit_hooks() {
  local hook
  for hook in "${exit_hooks[@]}"; do eval "$hook" || true; done
  rm -rf "$scratch"
}
trap run_exit_hooks EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

now_ms() { local t=${EPOCHREALTIME/./}; echo $((10#${t:0:-3})); }

# wait_until SECONDS CMD [ARGS...]: run CMD every 0.1 s until it succeeds (0) or
# SECONDS pass (1).
wait_until() {
  local deadline=$(( $(now_ms) + $1 * 1000 )); shift
  until "$@"; do
    [ "$(now_ms)" -ge "$deadline" ] && return 1
    sleep 0.1
  done
}

# The pids of live (not zombie) processes whose whole command line is exactly $1.
live_pids() {
  ps -eo pid=,stat=,args= | awk -v want="$1" '
    { pid = $1; stat = $2; sub(/^[ \t]*[0-9]+[ \t]+[^ \t]+[ \t]+/, "") }
    $0 == want && stat !~ /^Z/ { print pid }'
}
count_live() { live_pids "$1" | wc -l; }
# has_count N CMDLINE: exactly N live processes run CMDLINE.
has_count() { [ "$(count_live "$2")" -eq "$1" ]; }

# alive PID: the process exists and is not a zombie.
alive() {
  local stat
  stat=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
  [ -n "$stat" ] && [[ $stat != Z* ]]
}
all_dead() { local pid; for pid in "$@"; do alive "$pid" && return 1; done; return 0; }

# kill_pids SIG PID...: signal each listed process that is still alive.
kill_pids() {
  local sig=$1 pid; shift
  for pid in "$@"; do alive "$pid" && kill "-$sig" "$pid" 2>/dev/null; done
  return 0
}
# kill_marked CMDLINE: SIGKILL every live process running exactly CMDLINE (a
# command line carrying this run's marker, so only processes this test started).
kill_marked() { kill_pids KILL $(live_pids "$1"); }

# children PID: the direct children of PID.
children() { ps -eo pid=,ppid= | awk -v parent="$1" '$2 == parent { print $1 }'; }

# A rank reporter prints one line per rank: the torch env:// contract and the
# Hydra host it was placed on (MPICH sets MPIR_CVAR_CH3_INTERFACE_HOSTNAME per
# proxy). MASTER_PORT comes last so that normalize_ports can strip it.
reporter='echo "rank=${RANK-unset} local=${LOCAL_RANK-unset} size=${WORLD_SIZE-unset} lsize=${LOCAL_WORLD_SIZE-unset} addr=${MASTER_ADDR-unset} host=${MPIR_CVAR_CH3_INTERFACE_HOSTNAME-unset} port=${MASTER_PORT-unset}"'

# rank_lines ADDR PPN HOST...: the reporter's lines, without ports, for PPN ranks on
# each HOST in order, all seeing MASTER_ADDR=ADDR; sorted.
rank_lines() {
  local addr=$1 ppn=$2; shift 2
  local world=$(($# * ppn)) rank=0 host local_rank
  for host in "$@"; do
    for ((local_rank = 0; local_rank < ppn; local_rank++)); do
      echo "rank=$rank local=$local_rank size=$world lsize=$ppn addr=$addr host=$host"
      rank=$((rank + 1))
    done
  done | sort
}

# The distinct MASTER_PORT values in reporter output, one a line.
ports_of() { sed -n 's/.* port=\([^ ]*\)$/\1/p' <<<"$1" | sort -u; }
# Reporter output without the ports, sorted.
without_ports() { sed 's/ port=[^ ]*$//' <<<"$1" | sort; }

# expect_one_port NAME OUTPUT: every rank saw the same MASTER_PORT, a valid one.
expect_one_port() {
  local ports
  ports=$(ports_of "$2")
  if [[ $ports =~ ^[0-9]+$ ]] && [ "$ports" -ge 1 ] && [ "$ports" -le 65535 ]; then pass; else
    fail "$1: one MASTER_PORT 1-65535 on every rank"; printf '  ports seen: %s\n' "${ports//$'\n'/ }" >&2
  fi
}

# The value of a top-level string field in ezpz's pretty-printed plan JSON.
json_field() { sed -n "s/^  \"$1\": \"\\(.*\\)\",\\{0,1\\}\$/\\1/p" <<<"$2"; }

# --- Signals: start a long job, signal ezpz, check how it ends --------------
# The caller defines launch_env CMD...: run CMD in the test's environment.

marker_seq=0
job_shell=""     # the background job
job_pid=""       # ezpz
job_cmdline=""   # exactly what each rank runs once started
job_pids=()      # launcher, its children and the ranks, as seen while running

# start_job NAME NRANKS EZPZ-LAUNCH-OPTIONS... -- RANK-PREFIX...: run
# `ezpz launch OPTIONS -- RANK-PREFIX sleep MARKER` in the background and wait
# until NRANKS ranks run `sleep MARKER`. RANK-PREFIX may be empty, or e.g.
# `sh -c 'trap "" TERM; exec "$0" "$@"'` to run sleep with SIGTERM ignored.
start_job() {
  local name=$1 nranks=$2; shift 2
  local -a options=() prefix=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do options+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  prefix=("$@")
  marker_seq=$((marker_seq + 1))
  local marker="$marker_base$marker_seq"
  job_cmdline="sleep $marker"
  on_exit "kill_marked '$job_cmdline'"
  launch_env "$EZPZ_BIN" launch "${options[@]}" -- "${prefix[@]}" sleep "$marker" \
    >"$scratch/$name.out" 2>"$scratch/$name.err" &
  job_shell=$!
  on_exit "kill_pids KILL $job_shell"
  if ! wait_until 30 has_count "$nranks" "$job_cmdline"; then
    fail "$name: $nranks ranks running '$job_cmdline' within 30 s (saw $(count_live "$job_cmdline"))"
    sed 's/^/  stderr: /' "$scratch/$name.err" >&2
    kill_pids KILL "$job_shell" $(children "$job_shell"); wait "$job_shell" 2>/dev/null
    kill_marked "$job_cmdline"
    return 1
  fi
  # launch_env is a shell function, so the background job is a subshell that
  # runs ezpz as its child (unless bash exec'd ezpz in its place).
  if [[ $(ps -o args= -p "$job_shell") == "$EZPZ_BIN "* ]]; then
    job_pid=$job_shell
  else
    job_pid=$(children "$job_shell")
  fi
  on_exit "kill_pids KILL $job_pid"
  local launcher proxy
  job_pids=()
  for launcher in $(children "$job_pid"); do
    job_pids+=("$launcher")
    for proxy in $(children "$launcher"); do job_pids+=("$proxy" $(children "$proxy")); done
  done
  job_pids+=($(live_pids "$job_cmdline"))
}

dead() { ! alive "$1"; }
job_gone() { has_count 0 "$job_cmdline" && all_dead "${job_pids[@]}"; }

# finish_job NAME SECONDS: wait up to SECONDS for ezpz to exit; set job_rc
# (or fail, kill everything and return 1).
finish_job() {
  local name=$1 seconds=$2
  if ! wait_until "$seconds" dead "$job_pid"; then
    fail "$name: ezpz still running ${seconds} s after the signal"
    sed 's/^/  stderr: /' "$scratch/$name.err" >&2
    kill_pids KILL "$job_pid" "${job_pids[@]}"; wait "$job_shell" 2>/dev/null
    kill_marked "$job_cmdline"
    return 1
  fi
  wait "$job_shell"  # the subshell's status is ezpz's
  job_rc=$?
}

# expect_job_gone NAME: no rank, launcher or proxy of the job is left running.
expect_job_gone() {
  if job_gone; then pass; else
    fail "$1: processes left running after ezpz exited"
    ps -o pid=,ppid=,stat=,args= -p "$(IFS=,; echo "${job_pids[*]}")" 2>/dev/null | sed 's/^/  left: /' >&2
    kill_pids KILL "${job_pids[@]}"; kill_marked "$job_cmdline"
  fi
}

# sigterm_job NAME NRANKS EZPZ-OPTIONS...: one SIGTERM to ezpz ends the whole
# job: ezpz exits within 10 s with 128+SIGTERM, and no process of the job is left.
sigterm_job() {
  local name=$1 nranks=$2; shift 2
  start_job "$name" "$nranks" "$@" || return
  kill -TERM "$job_pid"
  finish_job "$name" 10 || return
  expect_eq "$name: exit status 128+SIGTERM (the ranks died of SIGTERM)" 143 "$job_rc"
  expect_job_gone "$name"
  expect_true "$name: ezpz says it forwarded SIGTERM" \
    grep -q "^ezpz: forwarding SIGTERM to the launcher (pid ${job_pids[0]})\$" "$scratch/$name.err"
}

# sigterm_twice_job NAME NRANKS EZPZ-OPTIONS...: ranks that ignore SIGTERM; a
# second SIGTERM makes ezpz SIGKILL the launcher at once: exit 128+SIGKILL
# within 5 s, nothing left.
sigterm_twice_job() {
  local name=$1 nranks=$2; shift 2
  start_job "$name" "$nranks" "$@" -- sh -c 'trap "" TERM; exec "$0" "$@"' || return
  kill -TERM "$job_pid"
  if ! wait_until 10 grep -q '^ezpz: forwarding SIGTERM' "$scratch/$name.err"; then
    fail "$name: ezpz did not report forwarding the first SIGTERM"
  fi
  kill -TERM "$job_pid"
  finish_job "$name" 5 || return
  expect_eq "$name: exit status 128+SIGKILL" 137 "$job_rc"
  # The launcher is gone at once; its proxies notice and kill their ranks.
  if wait_until 5 job_gone; then pass; else expect_job_gone "$name"; fi
  expect_true "$name: ezpz says it escalated" \
    grep -q "^ezpz: second SIGTERM; sending SIGKILL to the launcher (pid ${job_pids[0]})\$" "$scratch/$name.err"
}

# --- The launcher's own exit status ------------------------------------------
# recording_path LAUNCHER: a PATH whose first directory holds LAUNCHER, a
# wrapper that runs the real one and writes its exit status to
# $scratch/LAUNCHER.status before passing it on. For exit-status checks only
# (the wrapper is one more process between ezpz and the launcher's signals).
recording_path() {
  local real dir="$scratch/record"
  real=$(command -v "$1") || return 1
  mkdir -p "$dir"
  printf '#!/bin/sh\n"%s" "$@"\nstatus=$?\necho "$status" >"%s"\nexit "$status"\n' \
    "$real" "$scratch/$1.status" >"$dir/$1"
  chmod +x "$dir/$1"
  rm -f "$scratch/$1.status"
  echo "$dir:$system_path"
}
recorded_status() { cat "$scratch/$1.status" 2>/dev/null || echo "none"; }
# The value of a top-level number field in the same JSON.
json_number() { sed -n "s/^  \"$1\": \\([0-9]*\\),\\{0,1\\}\$/\\1/p" <<<"$2"; }

# --- Naming every check ------------------------------------------------------
# announce_passes: from now on each passing expect_* check also prints
# `ok: NAME` on stdout (failures already print `FAIL: NAME` on stderr), so a
# log shows every check by name. Wraps the helpers above without changing them.
announce_passes() {
  local helper
  for helper in expect_eq expect_match expect_true expect_one_port expect_job_gone; do
    declare -F "quiet_$helper" >/dev/null && continue  # already wrapped
    eval "quiet_$(declare -f "$helper")"
    eval "$helper() { local before=\$failures; quiet_$helper \"\$@\"; \
      [ \"\$failures\" -eq \"\$before\" ] && printf 'ok: %s\n' \"\$1\"; return 0; }"
  done
}

# --- MPICH, and a simulated two-node PBS job ----------------------------------
# require_mpiexec: the `mpiexec` the tests run is MPICH's Hydra, or the test is skipped.
require_mpiexec() {
  if ! command -v mpiexec >/dev/null; then
    echo "skipped: no mpiexec on PATH (install mpich)"
    exit 77
  fi
  if ! mpiexec --version 2>/dev/null | grep -q 'HYDRA build details'; then
    echo "skipped: $(command -v mpiexec) is not MPICH's Hydra (install mpich)"
    exit 77
  fi
}

# require_trainer: sets trainer to the ezpz-smoke beside ezpz, or the test is skipped.
require_trainer() {
  trainer="$(dirname "$EZPZ_BIN")/ezpz-smoke"
  if [ ! -x "$trainer" ]; then
    echo "skipped: $trainer was not built (configure with -DEZPZ_WITH_SMOKE=ON and libtorch)"
    exit 77
  fi
}

# only_path PROGRAM...: a PATH of the pinned MPI programs and PROGRAMs alone (links in
# $scratch/only-PROGRAM...), e.g. to give ezpz one native stack tool and not the other.
only_path() {
  local dir program
  dir="$scratch/only-$(IFS=-; echo "$*")"
  mkdir -p "$dir"
  for program in "$@"; do ln -sf "$(command -v "$program")" "$dir/$program"; done
  echo "$mpi_bin:$dir"
}

# expect_slow_rank_2 NAME ID: run ID ran tests/fixtures/sh/startup_slow.sh with SLOW_RANK=2, one
# rank on each of n01..n04. `ezpz runs show ID` must list all three phases for the four ranks,
# name rank 2 on n03 as the slowest to "ready" and n03 as the slowest host, and verdict.json
# must give each rank its own host.
expect_slow_rank_2() {
  local name=$1 id=$2 hosts
  run_ezpz "$name-show" runs show "$id"
  expect_eq "$name: exec, first_output and ready for all 4 ranks" "exec 4
first_output 4
ready 4" "$(sed -n 's/^  \([a-z_]*\) \+\([0-9]\+\) .*/\1 \2/p' <<<"$out")"
  expect_match "$name: exec: every rank on its own host" \
    "^  exec +4( +[0-9]+\.[0-9]{3}){4}  \[.{10}\]  rank [0-3] on n0[1-4]\$" "$(grep '^  exec ' <<<"$out")"
  expect_match "$name: ready's slowest is rank 2, on n03" \
    "^  ready +4( +[0-9]+\.[0-9]{3}){4}  \[.{10}\]  rank 2 on n03\$" "$(grep '^  ready ' <<<"$out")"
  expect_match "$name: the slowest ranks, with their hosts" \
    "^slowest to ready: rank 2 on n03 \(1\.[0-9]{3} s\)(, rank [013] on n0[124] \([0-9.]+ s\)){2}\$" \
    "$(grep '^slowest to' <<<"$out")"
  expect_match "$name: the slowest host" "^slowest host: n03 \(1\.[0-9]{3} s to ready\)\$" \
    "$(grep '^slowest host' <<<"$out")"
  hosts='import json, sys
for r in json.load(open(sys.argv[1]))["startup"]["ranks"]:
    print(r["rank"], r["host"], " ".join(sorted(r["phases"])))'
  expect_eq "$name: verdict.json: each rank's host, from the launcher" \
    "$(for r in 0 1 2 3; do echo "$r n0$((r + 1)) exec first_output ready"; done)" \
    "$(/usr/bin/python3 -c "$hosts" "$scratch/runs/$id/attempt-1/verdict.json" 2>&1)"
}

# start_fake_pbs_job [NHOSTS]: makes n01..nNN (default 2) resolve (to
# 127.0.0.2, .3, ..., in /etc/hosts until the test exits) and sets pbs_env and
# nodefile: the environment PBS gives a job of NHOSTS hosts x 2 slots. Exits
# 77 (skipped) when that needs root we lack.
start_fake_pbs_job() {
  local count=${1:-2} i
  fake_hosts=()
  for ((i = 1; i <= count; i++)); do fake_hosts+=("$(printf 'n%02d' "$i")"); done
  hosts_mark="# ezpz-test"
  remove_marked_hosts() {
    local kept
    kept=$(grep -v -F -- "$hosts_mark" /etc/hosts)
    # Rewritten in place, not replaced: /etc/hosts may be a bind mount.
    printf '%s\n' "$kept" >/etc/hosts
  }
  # Each host its own address, as in a real job (a test may name a host by its address): where
  # they do not resolve, or not each to its own (the Slurm test cluster's line gives n01..n04
  # all 127.0.0.1), this test's lines go first in /etc/hosts, where the resolver looks first.
  local missing=() host
  for host in "${fake_hosts[@]}"; do
    getent hosts "$host" >/dev/null || missing+=("$host")
  done
  local distinct
  distinct=$(for host in "${fake_hosts[@]}"; do getent hosts "$host" | awk '{print $1}'; done |
    sort -u | wc -l)
  if [ "${#missing[@]}" -gt 0 ] || [ "$distinct" -ne "$count" ]; then
    if [ "$(id -u)" -ne 0 ] || [ ! -w /etc/hosts ]; then
      echo "skipped: hosts ${fake_hosts[*]} do not resolve each to its own address, and adding them to /etc/hosts needs root"
      exit 77
    fi
    on_exit remove_marked_hosts
    local others
    others=$(grep -v -F -- "$hosts_mark" /etc/hosts)  # less stale entries of an interrupted run
    {
      for host in "${fake_hosts[@]}"; do
        printf '127.0.0.%d %s %s\n' "$((10#${host#n} + 1))" "$host" "$hosts_mark"
      done
      printf '%s\n' "$others"
    } >/etc/hosts  # rewritten in place, not replaced: /etc/hosts may be a bind mount
  fi
  for host in "${fake_hosts[@]}"; do
    if ! getent hosts "$host" >/dev/null; then
      echo "skipped: $host does not resolve even after adding it to /etc/hosts"
      exit 77
    fi
  done

  # The job's environment, as PBS sets it.
  nodefile="$scratch/aux/4242.pbs-sim"
  mkdir -p "$scratch/aux" "$scratch/work"
  for host in "${fake_hosts[@]}"; do printf '%s\n%s\n' "$host" "$host"; done >"$nodefile"  # mpiprocs=2
  pbs_env=(PBS_JOBID=4242.pbs-sim PBS_NODEFILE="$nodefile" PBS_O_WORKDIR="$scratch/work"
           PBS_QUEUE=debug PBS_JOBNAME=ezpz-sim PBS_ENVIRONMENT=PBS_BATCH PBS_O_HOST=login1
           PBS_NODENUM=0 PBS_TASKNUM=1 HYDRA_LAUNCHER=fork)
}

# start_pbs_runs NHOSTS: a test of runs in a simulated PBS job of NHOSTS hosts through MPICH's
# Hydra, every passing check named, the run records under $runs, and launch_env CMD... running
# CMD in the job's environment (MASTER_PORT ezpz's own choice).
start_pbs_runs() {
  require_mpiexec
  start_fake_pbs_job "$1"
  announce_passes
  runs="$scratch/runs"
  launch_env() { clean_env env -u MASTER_PORT "${pbs_env[@]}" EZPZ_RUNS_DIR="$runs" "$@"; }
}

# --- The user's own PyTorch scripts --------------------------------------------------
# use_torch_python: python is Debian's /usr/bin/python3 with python3-torch (a pyenv python3
# may come first on PATH), or the test is skipped; the fixtures of tests/fixtures/python are
# copied to $scratch/work (Python writes __pycache__ beside the modules it imports), the
# directory the test then runs in.
use_torch_python() {
  python=/usr/bin/python3
  if ! "$python" -c 'import torch.distributed' 2>/dev/null; then
    echo "skipped: $python cannot import torch.distributed (apt-get install python3-torch)"
    exit 77
  fi
  mkdir -p "$scratch/work"
  cp -r "$EZPZ_SRC/tests/fixtures/python/." "$scratch/work/"
  cd "$scratch/work" || exit 1
}
# --- Run records -----------------------------------------------------------------
# The newest record under $runs (the record written last: ids sort by second, then as text, pid
# 992 after pid 1005), and `verdict N QUERY`: jq's QUERY of its attempt N's verdict.json.
newest_run() { ls -dt "$runs"/*/ | head -n 1; }
verdict() { jq -r "$2" "$(newest_run)/attempt-$1/verdict.json"; }

# --- Running ezpz ---------------------------------------------------------------
timeout_bin=$(command -v timeout)  # by path: a test may give ezpz a PATH without it
# run_ezpz NAME [VAR=VALUE...] ARGS...: run ezpz with ARGS (and VARs set), in
# the environment the test's launch_env gives; its
# stdout in $out, stderr in $err, status in $rc.
run_ezpz() {
  local name=$1; shift
  local -a vars=()
  while [[ $1 == [A-Z]*=* ]]; do vars+=("$1"); shift; done
  launch_env "${vars[@]}" "$timeout_bin" -k 5 50 "$EZPZ_BIN" "$@" >"$scratch/$name.out" 2>"$scratch/$name.err"
  rc=$?
  out=$(cat "$scratch/$name.out")
  err=$(cat "$scratch/$name.err")
}

# run_ezpz_bg NAME [VAR=VALUE...] ARGS...: run_ezpz in the background (under launch_env as it
# is defined now), for cases that wait on their own clocks and can run side by side;
# ezpz_done NAME then waits for it and sets out, err and rc as run_ezpz does.
declare -A ezpz_bg_pids=()
run_ezpz_bg() {
  { run_ezpz "$@"; echo "$rc" >"$scratch/$1.rc"; } &
  ezpz_bg_pids[$1]=$!
}
ezpz_done() {
  wait "${ezpz_bg_pids[$1]}"
  rc=$(cat "$scratch/$1.rc" 2>/dev/null || echo none)
  out=$(cat "$scratch/$1.out")
  err=$(cat "$scratch/$1.err")
}

# --- One verdict, live and after (issue 44) ---------------------------------------------------
# Every attempt the test's launches recorded: `ezpz runs explain RUN --attempt N --json` gives
# what that attempt's verdict.json says, field by field. Records written by hand (a test's
# damaged or foreign verdict.json) lack "evidence" and are left out.
verdict_fields='{classification, reason, rule, line, bad_hosts, evidence, exit_code, failed_ranks,
  innocent}'
explain_env() {
  if declare -F launch_env >/dev/null; then launch_env "$@"; else clean_env "$@"; fi
}
check_explain_matches_verdicts() {
  local verdict attempt_dir run_dir attempt want got
  while IFS= read -r verdict; do
    jq -e 'has("evidence")' "$verdict" >/dev/null 2>&1 || continue
    attempt_dir=${verdict%/verdict.json}
    run_dir=${attempt_dir%/attempt-*}
    attempt=${attempt_dir##*/attempt-}
    want=$(jq -S "$verdict_fields" "$verdict")
    got=$(cd "$scratch" && explain_env EZPZ_RUNS_DIR="${run_dir%/*}" "$EZPZ_BIN" runs explain \
      "${run_dir##*/}" --attempt "$attempt" --json 2>&1 | jq -S "$verdict_fields" 2>&1)
    expect_eq "runs explain --attempt $attempt --json is verdict.json: ${run_dir##*/}" \
      "$want" "$got"
  done < <(find "$scratch" -path '*/attempt-*/verdict.json' 2>/dev/null | sort)
}
# lib.sh's finish, after that check.
eval "lib_$(declare -f finish)"
finish() { check_explain_matches_verdicts; lib_finish; }
