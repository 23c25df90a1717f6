#!/usr/bin/env bash
# `ezpz test`'s collectives sweep for real (libtorch over MPICH, 2 ranks): the
# all-reduce and all-gather bandwidth table and plot in report.md and
# summary.json, --collectives-only and --no-collectives, the bucketed gradient
# all-reduce still leaving parameters identical, and --compare's differences.
source "$(dirname "$0")/common.sh"
require_mpiexec
require_trainer
mkdir -p "$scratch/work"

# run_test NAME ARGS...: `ezpz test ARGS` in a clean env; stdout in $out, stderr in $err.
run_test() {
  local name=$1; shift
  out=$(cd "$scratch/work" && clean_env env -u MASTER_PORT timeout 120 "$EZPZ_BIN" test "$@" \
        2>"$scratch/$name.err"); rc=$?
  err=$(cat "$scratch/$name.err")
}

# The default run: training (25 MiB buckets: one for the reference MLP), then the sweep.
start=$(now_ms)
run_test default -n 2 --output-dir "$scratch/default"
took=$(( $(now_ms) - start ))
expect_eq "default: exit status" 0 "$rc"
expect_match "default: verdict" "^ezpz test: PASS: 2 ranks, [0-9]+ samples/s" "$(tail -n 1 <<<"$out")"
expect_match "default: one bucket for the reference MLP" \
  "1 gradient bucket, all-reduced after backward" "$err"
expect_match "default: all-reduce headline logged" \
  "all_reduce: latency [0-9]+ us, peak bus bandwidth [0-9.]+ GB/s" "$err"
expect_true "default: params identical with the bucketed all-reduce" \
  grep -q '"params_identical": true' "$scratch/default/summary.json"
for c in all_reduce all_gather; do
  expect_eq "default: summary.json has 7 $c sizes (1 KiB to 4 MiB)" "1024 4194304" \
    "$(jq -r ".collectives.$c.sizes | [first.bytes, last.bytes] | join(\" \")" "$scratch/default/summary.json")"
  expect_true "default: report.md's table has $c at 4 MiB" \
    grep -qE "^\| $c \| 4 MiB \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|\$" "$scratch/default/report.md"
done
expect_true "default: report.md has the plot" grep -q "^bus bandwidth by message size" "$scratch/default/report.md"
expect_eq "default: the machine in summary.json" "cpu gloo 2" \
  "$(jq -r '[.machine.device, .machine.backend, .machine.ranks_per_node] | join(" ")' "$scratch/default/summary.json")"
expect_match "default: the console shows the table" "\| all_gather \| 1 KiB \|" "$out"
echo "default ezpz test -n 2 took ${took} ms"

# Buckets reduced during backward: still identical on every rank, and the loss falls.
run_test buckets -n 2 --bucket-mb 0.5 --no-collectives --iters 30 --output-dir "$scratch/one"
expect_eq "--bucket-mb 0.5: exit status" 0 "$rc"
expect_match "--bucket-mb 0.5: four buckets" \
  "4 gradient buckets of at most 0.5 MiB, all-reduced during backward" "$err"
expect_eq "--bucket-mb 0.5: both checks" "true true" \
  "$(jq -r '"\(.params_identical) \(.loss_fell)"' "$scratch/one/summary.json")"
expect_eq "--no-collectives: none in summary.json" "null" "$(jq -c .collectives "$scratch/one/summary.json")"
expect_true "--no-collectives: no section in report.md" bash -c "! grep -q '## Collectives' '$scratch/one/report.md'"

run_test only -n 2 --collectives-only --sweep-max-mb 0.0625 --output-dir "$scratch/only"
expect_eq "--collectives-only: exit status" 0 "$rc"
expect_match "--collectives-only: verdict" \
  "^ezpz test: PASS: 2 ranks, collectives only, all_reduce peak bus bandwidth [0-9.]+ GB/s, report $scratch/only/report.md\$" \
  "$(tail -n 1 <<<"$out")"
expect_eq "--sweep-max-mb 0.0625: 1 to 64 KiB" "1024 4096 16384 65536" \
  "$(jq -r '[.collectives.all_reduce.sizes[].bytes] | join(" ")' "$scratch/only/summary.json")"
expect_true "--collectives-only: no training in report.md" bash -c "! grep -q '## Loss' '$scratch/only/report.md'"

# --compare A B: no run, the differences printed.
run_test compare --compare "$scratch/default" "$scratch/only/summary.json"
expect_eq "--compare A B: exit status" 0 "$rc"
expect_match "--compare A B: the count" \
  "^ezpz test: $scratch/default/summary.json -> $scratch/only/summary.json: [0-9]+ differences\$" \
  "$(head -n 1 <<<"$out")"
expect_match "--compare A B: training went" "  trained: true -> false" "$out"
expect_match "--compare A B: a size only A has" \
  "  collectives.all_reduce.4 MiB.busbw_gbs: [0-9.e+-]+ -> \(absent\)" "$out"
run_test compare-self --compare "$scratch/only" "$scratch/only"
expect_eq "--compare A A: nothing differs" \
  "ezpz test: $scratch/only/summary.json -> $scratch/only/summary.json: no differences" "$out"
run_test compare-missing -n 2 --compare "$scratch/nowhere" --output-dir "$scratch/never"
expect_eq "--compare missing: exit status" 2 "$rc"
expect_eq "--compare missing: one line, before the launch" \
  "ezpz: error: --compare $scratch/nowhere: no such file" "$err"
expect_true "--compare missing: nothing launched" test ! -e "$scratch/never"

# --compare A alone: this run, then A against it.
run_test compare-run -n 2 --collectives-only --sweep-max-mb 0.0625 --compare "$scratch/only" \
  --output-dir "$scratch/again"
expect_eq "--compare A with a run: exit status" 0 "$rc"
expect_match "--compare A with a run: the comparison follows the verdict" \
  "ezpz test: PASS: .*"$'\n'"ezpz test: $scratch/only/summary.json -> $scratch/again/summary.json: " "$out"

# Bad values: one line each, before the launch.
run_test bad-bucket -n 2 --bucket-mb -1
expect_eq "--bucket-mb -1: exit status" 2 "$rc"
expect_eq "--bucket-mb -1: message" "ezpz: error: --bucket-mb -1: expected 0 or more" "$err"
run_test both -n 2 --collectives-only --no-collectives
expect_eq "both sweep flags: message" \
  "ezpz: error: --collectives-only and --no-collectives: choose one" "$err"

finish
