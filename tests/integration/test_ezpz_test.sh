#!/usr/bin/env bash
# `ezpz test` for real: the libtorch trainer over real MPICH, at 1 rank, 2 local
# ranks, and 4 ranks in a simulated 2-node PBS job; a rank made to diverge must
# fail the parameter check. Each run's verdict, metrics.jsonl and report.md are
# checked.
source "$(dirname "$0")/common.sh"
require_mpiexec
require_trainer

# run_test NAME [VAR=VALUE...] -- ARGS...: `ezpz test ARGS` in a clean env;
# stdout in $out, stderr in $err, status in $rc.
run_test() {
  local name=$1; shift
  local -a vars=()
  while [ "$1" != "--" ]; do vars+=("$1"); shift; done; shift
  out=$(cd "$scratch/work" && clean_env env -u MASTER_PORT "${vars[@]}" \
        timeout 120 "$EZPZ_BIN" test "$@" 2>"$scratch/$name.err"); rc=$?
  err=$(cat "$scratch/$name.err")
}

# expect_passed NAME RANKS STEPS DIR: a PASS verdict for RANKS ranks, STEPS
# lines in DIR/metrics.jsonl, and a report.
expect_passed() {
  local name=$1 ranks=$2 steps=$3 dir=$4 noun=ranks
  [ "$ranks" -eq 1 ] && noun=rank
  expect_eq "$name: exit status" 0 "$rc"
  expect_match "$name: verdict" "^ezpz test: PASS: $ranks $noun, [0-9]+ samples/s, final loss [0-9.e+-]+, report $dir/report.md\$" \
    "$(tail -n 1 <<<"$out")"
  expect_eq "$name: one metrics line per step" "$steps" "$(wc -l <"$dir/metrics.jsonl" 2>/dev/null)"
  expect_true "$name: report.md written" test -s "$dir/report.md"
  expect_true "$name: summary says both checks passed" \
    grep -q '"params_identical": true' "$dir/summary.json"
}

mkdir -p "$scratch/work"
run_test one-rank -- -n 1 --model debug --output-dir "$scratch/one"
expect_passed "1 rank" 1 20 "$scratch/one"

run_test two-ranks -- -n 2 --model debug --output-dir "$scratch/two"
expect_passed "2 local ranks" 2 20 "$scratch/two"
expect_match "2 local ranks: loss plot printed" "loss \\(steps 1-20\\)" "$out"
newest_run=$(ls -d "$scratch"/runs/*/ 2>/dev/null | sort | tail -n 1)
expect_eq "2 local ranks: recorded as a run (ezpz runs)" "success 0 ezpz-smoke" \
  "$(jq -r '"\(.ending) \(.exit_code) \(.command[0] | split("/") | last)"' "$newest_run/run.json")"
expect_true "2 local ranks: the trainer's output is in the record" \
  grep -q "loss (steps 1-20)" "$newest_run/attempt-1/output.log"

# Without --output-dir, outputs land under ./outputs/ezpz-test/<timestamp>/.
run_test default-dir -- -n 1 --model debug --iters 8
default_dir=$(ls -d "$scratch"/work/outputs/ezpz-test/*/ 2>/dev/null | head -n 1)
expect_passed "default output dir" 1 8 "${default_dir%/}"

run_test diverged -- -n 2 --model debug --perturb-rank 1 --output-dir "$scratch/diverged"
expect_eq "a diverged rank fails the run" 1 "$rc"
expect_match "a diverged rank: verdict names the check" \
  "^ezpz test: FAIL: .*param" "$(tail -n 1 <<<"$out")"

# A bad trainer flag is refused by ezpz before any rank starts: one line, not one per rank.
run_test bad-preset -- -n 2 --model huge --output-dir "$scratch/bad"
expect_eq "unknown preset: exit status" 2 "$rc"
expect_eq "unknown preset: one line, before the launch" \
  "ezpz: error: --model huge: unknown preset; expected one of debug, s, m, l, xl" "$err"

# A device this libtorch lacks is a configuration error, named.
run_test no-cuda TORCH_DEVICE=cuda -- -n 1 --model debug --output-dir "$scratch/no-cuda"
expect_eq "TORCH_DEVICE=cuda on a CPU build: exit status" 2 "$rc"
expect_match "TORCH_DEVICE=cuda on a CPU build: message" \
  "TORCH_DEVICE=cuda: this libtorch was built without CUDA" "$err"

# EZPZ_LOCAL_DEVICE (README, "Which device a rank uses"): a value that is no index is refused,
# also by a CPU build, in one line naming it; a good one is reported in the log and report.md,
# as unused on cpu (no GPU here: the index's range is lib/ezpz/launchers' table test).
run_test bad-local-device EZPZ_LOCAL_DEVICE=x -- -n 1 --model debug --output-dir "$scratch/bad-ld"
expect_eq "EZPZ_LOCAL_DEVICE=x: exit status" 2 "$rc"
expect_true "EZPZ_LOCAL_DEVICE=x: the trainer's line" grep -qxF \
  "ezpz-smoke: error: EZPZ_LOCAL_DEVICE=x: expected a device index (a non-negative integer)" \
  <<<"$err"
device_rule="cpu (first usable of cuda, xpu, mps, cpu; EZPZ_LOCAL_DEVICE=0 not used: cpu has no device index)"
run_test local-device EZPZ_LOCAL_DEVICE=0 -- -n 2 --model debug --iters 8 \
  --output-dir "$scratch/local-device"
expect_passed "EZPZ_LOCAL_DEVICE=0" 2 8 "$scratch/local-device"
expect_true "EZPZ_LOCAL_DEVICE=0: report.md's device and rule" grep -qxF \
  "| device | \`$device_rule\` |" "$scratch/local-device/report.md"
expect_true "EZPZ_LOCAL_DEVICE=0: the log's device and rule" grep -qF "; device $device_rule;" \
  <<<"$err"

# A rank whose rank 0 never comes fails within the rendezvous timeout, naming
# the address, instead of hanging (rank 1 alone, nothing on the port).
rendezvous_err=$(clean_env RANK=1 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 \
  MASTER_ADDR=127.0.0.1 MASTER_PORT=29991 EZPZ_RENDEZVOUS_TIMEOUT=2 \
  timeout 30 "$trainer" --model debug --output-dir "$scratch/lonely" 2>&1 >/dev/null); rc=$?
expect_eq "unreachable rank 0: exit status (not the 30 s timeout's 124)" 1 "$rc"
expect_match "unreachable rank 0: message names the address" \
  "rendezvous at MASTER_ADDR=127.0.0.1 MASTER_PORT=29991 failed" "$rendezvous_err"

# A rank that dies at start leaves no summary.json: the FAIL line says what the launch saw of
# it, as the attempt line does, not only the exit status. A copy of ezpz whose bundled trainer
# is a script whose rank 1 dies of SIGSEGV at once.
fake="$scratch/fake-install/bin"
mkdir -p "$fake"
cp "$EZPZ_BIN" "$(dirname "$EZPZ_BIN")/ezpz-rankenv" "$fake/"
printf '#!/bin/sh\n[ "$RANK" = 1 ] && kill -SEGV $$\nsleep 1\nexit 3\n' >"$fake/ezpz-smoke"
chmod +x "$fake/ezpz-smoke"
EZPZ_BIN="$fake/ezpz" run_test dies-at-start -- -n 2 --model debug --output-dir "$scratch/dies"
expect_eq "a rank dead at start: exit status" 139 "$rc"
expect_match "a rank dead at start: the FAIL line names the rank and its signal" \
  "^ezpz test: FAIL: the trainer exited 139 without writing $scratch/dies/summary.json \(the run: [a-z_]+: exit status [0-9]+: rank 1 \(pid [0-9]+\) on [^ ]+: killed by signal 11 \(SIGSEGV\): the program's own fault \(signal 11\), not its node's\)\$" \
  "$(tail -n 1 <<<"$out")"

start_fake_pbs_job
run_test pbs "${pbs_env[@]}" -- --model debug --output-dir "$scratch/pbs"
expect_passed "simulated 2-node PBS job, 4 ranks" 4 20 "$scratch/pbs"

run_test dry-run MASTER_PORT=29500 -- -n 2 --dry-run --model debug --output-dir /o
expect_eq "--dry-run plans the trainer like launch" \
  "MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 EZPZ_LAUNCHER=hydra mpiexec -n 2 -ppn 2 -hosts $(hostname) $(dirname "$EZPZ_BIN")/ezpz-rankenv $trainer --model debug --output-dir /o" \
  "$out"
finish
