#!/usr/bin/env bash
# Builds ezpz, ezpz-rankenv (and ezpz-smoke for the training benchmarks) and the
# bench harness (Release), then runs benchmarks.
#   bench/run.sh [all|launch_overhead|dry_run_scale|smoke_vs_ddp|first_step|training|doctor]
#                [--runs N] [--warmup N] [--csv FILE] [--reps N] [--steps N] ...
# EZPZ_BENCH_BUILD: the build directory (default <repo>/build-bench); JOBS: build jobs (1).
# The training benchmarks need Debian's python3-torch (PYTHON, default /usr/bin/python3).
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${EZPZ_BENCH_BUILD:-$src/build-bench}
what=all
case "${1:-}" in
  all | launch_overhead | dry_run_scale | smoke_vs_ddp | first_step | training | doctor) what=$1; shift ;;
esac

cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"${JOBS:-1}" --target ezpz ezpz-rankenv >/dev/null
# Read whole, not piped into grep -q: with pipefail, make's broken pipe would read as "no".
targets=$(cmake --build "$build" --target help)
if [ "$what" != launch_overhead ] && [ "$what" != dry_run_scale ] &&
  grep -qw ezpz-smoke <<<"$targets"; then
  # libtorch translation units: minutes and ~1.3 GB each the first time.
  cmake --build "$build" -j"${JOBS:-1}" --target ezpz-smoke >/dev/null
fi
harness=$build/bench/ezpz-bench
cmake --build "$build" -j"${JOBS:-1}" --target ezpz-bench >/dev/null
grep -q '^CMAKE_BUILD_TYPE:STRING=Release$' "$build/CMakeCache.txt" ||
  echo "warning: $build is not a Release build" >&2
tree=$(git -C "$src" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
[ -z "$(git -C "$src" status --porcelain --untracked-files=no 2>/dev/null)" ] || tree+=" + uncommitted changes"
echo "source tree: $tree | build: $build"
exec "$harness" "$what" --bin-dir "$build" --python "${PYTHON:-/usr/bin/python3}" \
  --ddp-script "$src/bench/python_ddp.py" "$@"
