#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan, in their own build
# directory) and runs each for SECONDS (default 60) from its committed seed
# corpus, as many at once as there are cores. Exits non-zero
# on any crash, leak, undefined behaviour, out-of-memory or timeout; the input
# that caused it is left under BUILD/fuzz/TARGET/.
#
#   tests/fuzz/run.sh [SECONDS]       EZPZ_FUZZ_BUILD=DIR to build elsewhere
set -euo pipefail
seconds=${1:-60}
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [SECONDS]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${EZPZ_FUZZ_BUILD:-$root/build-fuzz}

# Only the fuzzers and the code they test: no libtorch, MPI or test suite.
mkdir -p "$build"
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DEZPZ_FUZZ=ON -DEZPZ_BUILD_TESTS=OFF \
  -DEZPZ_WITH_SMOKE=OFF -DEZPZ_WITH_STAGER=OFF >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; exit 1; }
build_start=$SECONDS
cmake --build "$build" -j2 --target ezpz_fuzz
echo "fuzz: built in $((SECONDS - build_start)) s"

export UBSAN_OPTIONS=print_stacktrace=1
# fuzz TARGET: run TARGET's fuzzer for SECONDS; its exit status goes to DIR/status.
fuzz() {
  local target=$1 dir=$build/fuzz/$1
  # New inputs go to a scratch corpus (kept between local runs, so that they
  # accumulate); the committed seeds are only read.
  mkdir -p "$dir/corpus" "$dir/artifacts"
  local seeds=("$root/tests/fuzz/corpus/$target")
  local options=(-max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$dir/artifacts/"
           # An input that runs this long is a hang: the largest legal
           # expansions take about 10 s under ASan.
           -timeout=120)
  [ -f "$root/tests/fuzz/$target.dict" ] && options+=(-dict="$root/tests/fuzz/$target.dict")
  case $target in
    # Every bundled profile is a seed, read where it lives so it never goes stale.
    machine_profile) seeds+=("$root/machines") ;;
    # Names of N bytes times the 1,000,000-host cap: a longer input could make
    # expand_hostlist allocate gigabytes, which libFuzzer counts as a crash.
    # Real names (Slurm's) are far shorter than this.
    hostlist) options+=(-max_len=256) ;;
  esac
  local status=0
  "$build/tests/fuzz/fuzz_$target" "${options[@]}" "$dir/corpus" "${seeds[@]}" >"$dir/fuzz.log" 2>&1 ||
    status=$?
  echo "$status" >"$dir/status"
}

# Each fuzzer is one single-threaded process: as many run at once as there are cores, each
# still for SECONDS, so that CI's 2 cores fuzz the 4 targets in 2 rounds, not 4.
targets=(hostlist hostfile machine_profile rank_records)
jobs=$(nproc)
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
  rm -f "$build/fuzz/$target/status"
  echo "fuzz: $target for ${seconds}s (log $build/fuzz/$target/fuzz.log)"
  fuzz "$target" &
  running=$((running + 1))
done
wait

failed=()
for target in "${targets[@]}"; do
  dir=$build/fuzz/$target
  log=$dir/fuzz.log
  status=$(cat "$dir/status" 2>/dev/null || echo none)
  # A UBSan report that did not abort (a check built without
  # -fno-sanitize-recover) still fails the run.
  if [ "$status" != 0 ] || grep -aq 'runtime error:' "$log"; then
    failed+=("$target")
    grep -aE -B2 -A30 'ERROR:|runtime error:|==[0-9]+==|fuzz_[a-z_]+: ' "$log" | head -80 >&2 || tail -40 "$log" >&2
    echo "fuzz: $target FAILED (exit $status); inputs in $dir/artifacts/; reproduce with" \
      "$build/tests/fuzz/fuzz_$target $dir/artifacts/<file>" >&2
  else
    grep -a '^Done ' "$log" | sed "s/^/fuzz: $target: /"
  fi
done
[ "${#failed[@]}" -eq 0 ] || { echo "fuzz: failed: ${failed[*]}" >&2; exit 1; }
echo "fuzz: no crash, leak or undefined behaviour in ${seconds}s per target"
