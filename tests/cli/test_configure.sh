#!/usr/bin/env bash
# The configure step's own error: EZPZ_STATIC (on by default) with no static C library to link
# ezpz and ezpz-rankenv, word for word, and the way out it names. The checks' results are given
# on the command line (CMake then skips them), as a system without libc.a would have them.
source "$(dirname "$0")/lib.sh"
: "${EZPZ_SRC:?set EZPZ_SRC to the source tree}"

no_static_libc=(-DEZPZ_DEFAULT_PIE_LINKS_STATIC=OFF -DEZPZ_HAVE_STATIC_LIBC=OFF)
quick=(-DEZPZ_WITH_SMOKE=OFF -DEZPZ_BUILD_TESTS=OFF -DEZPZ_WITH_BENCH=OFF)

cmake -S "$EZPZ_SRC" -B "$scratch/static" "${quick[@]}" "${no_static_libc[@]}" \
  >"$scratch/static.out" 2>&1
expect_eq "no static libc: the configure step fails" 1 "$?"
# CMake folds a message at 80 columns: compared as one line.
message=$(sed -n '/^CMake Error at CMakeLists.txt:[0-9]* (message):$/,/^$/p' "$scratch/static.out" \
  | sed 1d | tr -s ' \n' '  ' | sed 's/^ //; s/ $//')
expect_eq "no static libc: what to install, or the option that goes without" \
  "EZPZ_STATIC: no static C and C++ libraries to link with (Debian: libc6-dev; RHEL: glibc-static, libstdc++-static); or configure with -DEZPZ_STATIC=OFF" \
  "$message"

cmake -S "$EZPZ_SRC" -B "$scratch/dynamic" "${quick[@]}" "${no_static_libc[@]}" \
  -DEZPZ_STATIC=OFF >"$scratch/dynamic.out" 2>&1
expect_eq "-DEZPZ_STATIC=OFF: the same system configures" 0 "$?"
finish
