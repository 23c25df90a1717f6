#!/usr/bin/env bash
# GradSync's averaging for real (libtorch over MPICH): rank r's gradients are
# (r + 1) x k at step k, so every rank must read the mean over ranks after
# end_step(), in one bucket and in one bucket per parameter, for float32 and
# for bfloat16 (reduced as float32), at 2 and 3 ranks (tests/runtime/grad_sync_check.cpp).
source "$(dirname "$0")/common.sh"
require_mpiexec
check="$(dirname "$EZPZ_BIN")/ezpz_grad_sync_check"
if [ ! -x "$check" ]; then
  echo "skipped: $check was not built (configure with -DEZPZ_WITH_SMOKE=ON and libtorch)"
  exit 77
fi

# run_check RANKS DTYPE BUCKET_BYTES: every rank's two steps must print "ok".
run_check() {
  local name="$1 ranks, $2, buckets of $3 bytes" out rc
  out=$(clean_env env -u MASTER_PORT timeout 120 "$EZPZ_BIN" launch -n "$1" -- "$check" "$2" "$3" \
        2>"$scratch/err"); rc=$?
  expect_eq "$name: exit status" 0 "$rc"
  expect_eq "$name: lines ok" "$(($1 * 2))" "$(grep -c ': ok$' <<<"$out")"
  expect_eq "$name: no wrong value" "" "$(grep WRONG <<<"$out")"
}

run_check 2 fp32 33554432
run_check 2 fp32 64
run_check 3 fp32 64
run_check 2 bf16 64
run_check 3 bf16 33554432

finish
