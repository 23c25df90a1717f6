#!/usr/bin/env bash
# Stacks of hung ranks, native (README: Stacks of hung ranks): the libtorch trainer `ezpz test`
# runs (ezpz-smoke) on 2 ranks of local MPICH, its rank 1 made to hang before its first gradient
# all-reduce (--hang-rank 1, a test-only flag), so rank 0 waits for it in Gloo. When
# --idle-timeout fires, ezpz takes both ranks' native stacks through the launcher before the job
# is stopped: the summary names rank 1 alone, in the trainer's straggle(), and the record holds
# each rank's every thread, rank 0's wait in the all-reduce (GradSync::end_step, c10d's
# Work::wait, Gloo's threads) visible. Once with eu-stack alone on PATH, once with gdb alone.
# Where the tool cannot attach (ptrace forbidden: Yama's ptrace_scope, a container without
# CAP_SYS_PTRACE), rank-K.txt has its "Operation not permitted" and the summary "no stack":
# the test says so and is skipped, rather than pass without stacks.
source "$(dirname "$0")/common.sh"
announce_passes

require_mpiexec
require_trainer
summary_of() { sed -n 's/^ezpz:   \(ranks\{0,1\} [0-9,-]*: .*\)$/\1/p' <<<"$1"; }
stacks_dir() { sed -n 's/^ezpz: stacks of [0-9]* ranks (in \(.*\)):$/\1/p' <<<"$1"; }
source_line() { grep -n "$1" "$EZPZ_SRC/apps/smoke/trainer.cpp" | cut -d: -f1; }
mkdir -p "$scratch/work"
cd "$scratch/work" || exit 1
# Where the trainer's frames are: its source lines where it was built with debug information
# (the default RelWithDebInfo); else (Release) gdb names no place, so the summary gives the
# function alone, and eu-stack names the program's file; and the step, inlined, is known only
# as the function it was inlined into, train().
if readelf -S "$trainer" 2>/dev/null | grep -q '\.debug_line'; then
  straggle_at() { echo " \\(trainer\\.cpp:$(source_line '::sleep(3600)')\\)"; }
  step_frame="trainer\\.cpp:$(source_line 'straggle();')"
else
  straggle_at() { [ "$1" == gdb ] || echo " \\(ezpz-smoke\\)"; }
  step_frame="::train("
fi

tools=0
for tool in eu-stack gdb; do
  if ! command -v "$tool" >/dev/null; then
    echo "skipped: $tool's case ($tool is not installed)"
    continue
  fi
  launch_env() { clean_env env -u MASTER_PORT PATH="$(only_path "$tool")" "$@"; }
  run_ezpz "$tool" launch -n 2 --idle-timeout 5 -- "$trainer" --model debug --no-collectives \
    --hang-rank 1 --output-dir "$scratch/$tool"
  dir=$(stacks_dir "$err")
  if grep -qs 'Operation not permitted' "$dir"/rank-*.txt; then
    echo "skipped: $tool's case: it cannot attach to the ranks here" \
      "($(grep -h -m1 'Operation not permitted' "$dir"/rank-*.txt))"
    continue
  fi
  tools=$((tools + 1))
  expect_eq "$tool: exit status 124" 124 "$rc"
  expect_true "$tool: the stacks come before the job is stopped" \
    test "$(grep -n '^ezpz: stacks of 2 ranks' <<<"$err" | cut -d: -f1)" -lt \
    "$(grep -n '^ezpz: no output for 5 s' <<<"$err" | cut -d: -f1)"
  summary=$(summary_of "$err")
  expect_eq "$tool: two groups, rank 1 alone" 2 "$(wc -l <<<"$summary")"
  # gdb names the function as C++ does, eu-stack as DWARF does (straggle).
  expect_match "$tool: rank 1 is the odd one, in straggle()" \
    "^rank 1: in (ezpz::smoke::\\(anonymous namespace\\)::Trainer::)?straggle$(straggle_at "$tool")\$" \
    "$(sed -n 2p <<<"$summary")"
  expect_match "$tool: rank 0 waits in the gradient all-reduce" \
    '^rank 0: in c10d::Work::wait \(libtorch_cpu\.so[.0-9]*\)$' "$(sed -n 1p <<<"$summary")"
  expect_match "$tool: rank-0.txt says how its stacks were taken" \
    "^# rank 0 \\(pid [0-9]+\\) on $(hostname -s): native stacks \\($tool\\)\$" \
    "$(head -1 "$dir/rank-0.txt" 2>&1)"
  expect_true "$tool: rank-0.txt holds every thread" \
    test "$(grep -c '^\(Thread\|TID\) ' "$dir/rank-0.txt" 2>/dev/null)" -ge 3
  expect_true "$tool: rank 0 waits in GradSync::end_step" \
    grep -q 'ezpz::dist::GradSync::end_step' "$dir/rank-0.txt"
  expect_true "$tool: Gloo's thread is there" grep -q 'c10d::ProcessGroupGloo::runLoop' \
    "$dir/rank-0.txt"
  expect_true "$tool: rank 1 went to straggle() from the step" \
    grep -q "$step_frame" "$dir/rank-1.txt"
  [ "$rc" == 124 ] && [ "$(wc -l <<<"$summary")" == 2 ] || sed "s/^/  $tool: stderr: /" <<<"$err" >&2
done
if [ "$tools" -eq 0 ]; then
  echo "skipped: neither eu-stack nor gdb could take the ranks' stacks here"
  exit 77
fi

finish
