#!/usr/bin/env bash
# Stacks of hung ranks (README: Stacks of hung ranks): a real PyTorch DDP script (Debian's
# python3-torch, gloo) whose rank HANG_RANK sleeps before the all_reduce the others wait in
# (tests/fixtures/python/ddp_hang.py). When --idle-timeout fires, ezpz takes every rank's
# stacks through the launcher before stopping the job, keeps them in the run record and
# prints a summary that names the odd rank and its line: under local MPICH and a simulated
# two-node PBS job. On demand (SIGQUIT to ezpz, `ezpz stacks RUN_ID`) the job runs on. A
# native program hung the same way (tests/fixtures/native/hang.c) gets eu-stack's or gdb's
# stacks. The real Slurm cluster's case is in test_stacks_slurm.sh.
source "$(dirname "$0")/common.sh"
announce_passes

require_mpiexec
use_torch_python
launch_env() { clean_env env -u MASTER_PORT "$@"; }
# The line the waiting ranks are on depends on torch's version; the straggler's is ours.
reduce_line='in all_reduce \(distributed_c10d\.py:[0-9]+\)'
straggle_line='in straggle (ddp_hang.py:11)'

# summary_of ERR: ezpz's summary lines, "ezpz:   " removed.
summary_of() { sed -n 's/^ezpz:   \(ranks\{0,1\} [0-9,-]*: .*\)$/\1/p' <<<"$1"; }
# stacks_dir ERR: the record's stacks directory the summary names.
stacks_dir() { sed -n 's/^ezpz: stacks of [0-9]* ranks (in \(.*\)):$/\1/p' <<<"$1"; }

# --- --idle-timeout under local MPICH: stacks first, then the job is stopped ------------
run_ezpz idle HANG_RANK=2 launch -n 4 --idle-timeout 10 -- "$python" ddp_hang.py
expect_eq "idle: exit status 124" 124 "$rc"
expect_match "idle: ranks 0-1,3 wait in the all_reduce" "^ranks 0-1,3: $reduce_line\$" \
  "$(summary_of "$err" | sed -n 1p)"
expect_eq "idle: rank 2 is the odd one, on its line" "rank 2: $straggle_line" \
  "$(summary_of "$err" | sed -n 2p)"
expect_true "idle: the stacks come before the job is stopped" \
  test "$(grep -n '^ezpz: stacks of 4 ranks' <<<"$err" | cut -d: -f1)" -lt \
  "$(grep -n '^ezpz: no output for 10 s' <<<"$err" | cut -d: -f1)"
dir=$(stacks_dir "$err")
expect_match "idle: the stacks are in attempt-1/stacks" "/attempt-1/stacks\$" "$dir"
expect_eq "idle: summary.txt is the summary" "$(summary_of "$err")" "$(cat "$dir/summary.txt")"
expect_true "idle: rank-2.txt holds rank 2's Python stack" \
  grep -q "^  File \".*ddp_hang.py\", line 11 in straggle\$" "$dir/rank-2.txt"
expect_match "idle: rank-0.txt says how its stack was taken" \
  "^# rank 0 \\(pid [0-9]+\\) on $(hostname -s): Python stacks \\(faulthandler\\)\$" \
  "$(head -1 "$dir/rank-0.txt")"

# --- On demand: SIGQUIT to ezpz, and `ezpz stacks RUN_ID`; the job runs on -------------
HANG_RANK=1 launch_env "$EZPZ_BIN" -v launch -n 2 -- "$python" ddp_hang.py \
  >"$scratch/demand.out" 2>"$scratch/demand.err" &
demand=$!
on_exit "kill -KILL $demand 2>/dev/null"
expect_true "demand: both ranks ready" wait_until 60 grep -q 'rank 1 ready' "$scratch/demand.out"
run_id=$(sed -n 's/^ezpz: run id: //p' "$scratch/demand.err")
ezpz_pid=${run_id##*-}
kill -QUIT "$ezpz_pid"
expect_true "demand: SIGQUIT: ezpz prints the summary" \
  wait_until 30 grep -q "^ezpz:   rank 1: $straggle_line\$" "$scratch/demand.err"
expect_true "demand: SIGQUIT: the ranks run on" alive "$ezpz_pid"
expect_eq "demand: SIGQUIT: both ranks still there" 2 "$(ps -eo args= | grep -cx "$python ddp_hang.py")"
run_ezpz stacks stacks "${run_id:0:20}"
expect_eq "demand: ezpz stacks: exit status" 0 "$rc"
expect_eq "demand: ezpz stacks: the same summary" \
  "$(summary_of "$(cat "$scratch/demand.err")")" "$(summary_of "$err")"
expect_true "demand: ezpz stacks: the ranks run on" alive "$ezpz_pid"
kill -TERM "$ezpz_pid"
wait "$demand"
expect_eq "demand: SIGTERM still stops it" 143 "$?"

run_ezpz nosuch stacks 20991231-000000-nowhere-1
expect_eq "no such run: exit status" 1 "$rc"
expect_eq "no such run: the warning" \
  "ezpz: warning: stacks: no rank of run 20991231-000000-nowhere-1 found on any node" "$err"

# --- The hook keeps the user's own sitecustomize ----------------------------------------
mkdir -p "$scratch/site"
echo 'print("user sitecustomize ran")' >"$scratch/site/sitecustomize.py"
run_ezpz site PYTHONPATH="$scratch/site" launch -n 1 -- "$python" -c 'print("rank ran")'
expect_eq "hook: the user's sitecustomize still runs" $'user sitecustomize ran\nrank ran' "$out"

# A Python with no sitecustomize of its own (pyenv's, a venv made from one; Debian's has one):
# before, every rank printed "Error in sitecustomize; ... KeyError: 'sitecustomize'". The
# oldest Python ezpz supports (3.8) and the newest here, each through a venv, when pyenv has
# them; the first python3 on PATH otherwise.
hook_pythons=()
for version in "$HOME"/.pyenv/versions/3.8.*/bin/python3 "$(ls -d "$HOME"/.pyenv/versions/3.1[0-9].*/bin/python3 2>/dev/null | sort -V | tail -n 1)"; do
  [ -x "$version" ] && hook_pythons+=("$version")
done
[ ${#hook_pythons[@]} -gt 0 ] || hook_pythons=("$(command -v python3)")
for base in "${hook_pythons[@]}"; do
  name=$("$base" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  "$base" -m venv --without-pip "$scratch/venv-$name"
  run_ezpz "venv-$name" launch -n 2 -- "$scratch/venv-$name/bin/python3" -c 'import sys; print("rank ran", "sitecustomize" in sys.modules)'
  expect_eq "hook, a venv of Python $name: exit status" 0 "$rc"
  expect_eq "hook, a venv of Python $name: both ranks ran, quiet" 2 "$(grep -c 'rank ran True' <<<"$out")"
  expect_eq "hook, a venv of Python $name: no error on stderr" "" "$(grep -i sitecustomize <<<"$err")"
  run_ezpz "venv-site-$name" PYTHONPATH="$scratch/site" launch -n 1 -- "$scratch/venv-$name/bin/python3" -c 'print("rank ran")'
  expect_eq "hook, a venv of Python $name: the user's sitecustomize still runs" $'user sitecustomize ran\nrank ran' "$out"
done

# --no-python-hook: nothing of ezpz's on the ranks' PYTHONPATH.
run_ezpz nohook launch -n 1 --no-python-hook -- "$python" -c 'import os; print(os.environ.get("PYTHONPATH", "unset"))'
expect_eq "--no-python-hook: the rank's PYTHONPATH is untouched" "unset" "$out"
run_ezpz hook launch -n 1 -- "$python" -c 'import os; print(os.environ.get("PYTHONPATH", "unset"))'
expect_match "without it: ezpz's hook directory is on it" "/python$" "$out"

# --- A native program hung the same way: eu-stack's stacks, and gdb's -------------------
# Each tool alone on PATH (with the pinned MPI programs): eu-stack, the faster, is taken first.
# The native cases run side by side (each run_ezpz_bg under the launch_env defined just before
# it; a native rank takes no time to start, and a native capture may take 60 s), then each is
# checked in turn.
if command -v cc >/dev/null; then
  cc -g -O0 -o "$scratch/hang" "$EZPZ_SRC/tests/fixtures/native/hang.c"
  source_line() { grep -n "$1" "$EZPZ_SRC/tests/fixtures/native/hang.c" | cut -d: -f1; }
  tools=()
  for tool in eu-stack gdb; do
    if ! command -v "$tool" >/dev/null; then
      echo "skipped: the native case with $tool (not installed)"
      continue
    fi
    tools+=("$tool")
    launch_env() { clean_env env -u MASTER_PORT PATH="$(only_path "$tool")" "$@"; }
    run_ezpz_bg "native-$tool" HANG_RANK=1 launch -n 3 --idle-timeout 3 -- "$scratch/hang"
  done
  # Neither tool on PATH: every native rank says why it has no stack.
  launch_env() { clean_env env -u MASTER_PORT PATH="$mpi_bin" "$@"; }
  run_ezpz_bg no-tools HANG_RANK=1 launch -n 2 --idle-timeout 3 -- "$scratch/hang"
  # A rank the tool cannot attach to (a debugger already traces it: the same failure as where
  # ptrace is forbidden): its file keeps the tool's own words, the summary says no stack.
  traced=false
  if command -v eu-stack >/dev/null || command -v gdb >/dev/null; then
    traced=true
    launch_env() { clean_env env -u MASTER_PORT "$@"; }
    run_ezpz_bg traced HANG_RANK=1 HANG_TRACED=1 launch -n 2 --idle-timeout 3 -- "$scratch/hang"
  fi
  # The capture plans its own launch, as `ezpz kill --all-nodes` does: with no mpiexec on PATH
  # (the job's named by --launcher-program) it fails, and says so, and the job is still stopped.
  mkdir -p "$scratch/no-mpi"
  ln -s "$(command -v gdb || command -v eu-stack)" "$scratch/no-mpi/gdb"
  launch_env() { clean_env env -u MASTER_PORT PATH="$scratch/no-mpi" "$@"; }
  run_ezpz_bg no-mpi HANG_RANK=1 launch --launcher-program "$(command -v mpiexec.hydra)" -n 2 \
    --idle-timeout 3 -- "$scratch/hang"
  launch_env() { clean_env env -u MASTER_PORT "$@"; }

  for tool in "${tools[@]}"; do
    ezpz_done "native-$tool"
    expect_eq "native, $tool: exit status 124" 124 "$rc"
    expect_eq "native, $tool: the summary" \
      "ranks 0,2: in wait_for_peers (hang.c:$(source_line 'pause()'))
rank 1: in straggle (hang.c:$(source_line 'sleep(seconds)'))" "$(summary_of "$err")"
    expect_match "native, $tool: rank-1.txt holds $tool's stacks" "native stacks \\($tool\\)\$" \
      "$(head -1 "$(stacks_dir "$err")/rank-1.txt")"
  done
  ezpz_done no-tools
  expect_eq "no tool: still 124" 124 "$rc"
  expect_eq "no tool: the summary" "ranks 0-1: no stack" "$(summary_of "$err")"
  expect_match "no tool: rank-0.txt says why" \
    "^# rank 0 \\(pid [0-9]+\\) on $(hostname -s): no stack: no Python hook in it and neither eu-stack nor gdb on PATH\$" \
    "$(cat "$(stacks_dir "$err")/rank-0.txt" 2>&1)"
  if $traced; then
    ezpz_done traced
    expect_eq "traced: still 124" 124 "$rc"
    expect_eq "traced: the summary" "ranks 0-1: no stack" "$(summary_of "$err")"
    expect_true "traced: rank-0.txt says why" \
      grep -q 'Operation not permitted' "$(stacks_dir "$err")/rank-0.txt"
  fi
  ezpz_done no-mpi
  expect_eq "no launcher for the capture: still 124" 124 "$rc"
  expect_eq "no launcher for the capture: the warning" \
    "ezpz: warning: stacks not taken: mpiexec: launcher not found on PATH" \
    "$(grep '^ezpz: warning: stacks' <<<"$err")"
else
  echo "skipped: the native case (no cc)"
fi

# --- A simulated two-node PBS job: each node's ranks through the launcher --------------
start_fake_pbs_job
launch_env() { clean_env env -u MASTER_PORT -u EZPZ_MACHINE "${pbs_env[@]}" "$@"; }
run_ezpz pbs HANG_RANK=3 launch --idle-timeout 10 -- "$python" ddp_hang.py
expect_eq "pbs: exit status 124" 124 "$rc"
expect_match "pbs: ranks 0-2 in the all_reduce" "^ranks 0-2: $reduce_line\$" \
  "$(summary_of "$err" | sed -n 1p)"
expect_eq "pbs: rank 3 is the odd one" "rank 3: $straggle_line" "$(summary_of "$err" | sed -n 2p)"
expect_match "pbs: rank 3's stack was taken on n02" "^# rank 3 \\(pid [0-9]+\\) on n02: " \
  "$(head -1 "$(stacks_dir "$err")/rank-3.txt")"

finish
