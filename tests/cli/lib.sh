# Shared helpers for the CLI tests: run the real ezpz binary in a clean
# environment and compare what it prints, word for word.
set -u
: "${EZPZ_BIN:?set EZPZ_BIN to the ezpz binary}"
: "${EZPZ_SRC:?set EZPZ_SRC to the source tree}"
failures=0
passes=0
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ezpz-test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# stdin: an empty pipe that stays open (both of its ends are held here), not
# ctest's /dev/null. MPICH 4.0.2's Hydra races when its stdin is at end of
# file and the ranks exit within milliseconds: mpiexec forwards the end of
# stdin to a proxy that has already gone and dies of SIGPIPE, losing the
# ranks' output. Measured on a loaded 2-core machine: 10 of 200 runs of
# `mpiexec -n 2 sh -c 'echo hi'` with /dev/null, 0 of 200 with an open pipe.
# Real jobs outlive that window; these tests' `sh -c echo` ranks do not. A test
# that feeds a command input still redirects its own stdin.
exec {held_stdin}<> <(:)
exec 0<&"$held_stdin"

# The PATH a test gives ezpz: the system's directories, the pinned MPI programs first.
system_path=/usr/local/bin:/usr/bin:/bin

# Which MPI: pinned, never whichever one Debian's alternatives chose.
# With MPICH and Open MPI both installed, `mpiexec`, `mpirun` and `mpicc` may point at
# either. The suite means MPICH's Hydra by `mpiexec` (ezpz's hydra dialect) and MPICH's
# `mpicc`, and Open MPI's by `mpirun` (the openmpi dialect): links to each by its own
# name, in a directory that comes first on the test's PATH and on every PATH it gives
# ezpz. Where a name is missing (not Debian) the one on PATH stays; require_mpiexec
# (tests/integration/common.sh) then checks what it is. Hydra starts the hydra_pmi_proxy
# beside the mpiexec it was run as, so that goes there too.
mpi_bin="$scratch/mpi-bin"
mkdir -p "$mpi_bin"
for pinned in mpiexec=mpiexec.hydra hydra_pmi_proxy=hydra_pmi_proxy mpicc=mpicc.mpich \
              mpirun=mpirun.openmpi; do
  if target=$(PATH=$system_path command -v "${pinned#*=}"); then
    ln -s "$target" "$mpi_bin/${pinned%%=*}"
  fi
done
unset pinned target
system_path="$mpi_bin:$system_path"
PATH="$mpi_bin:$PATH"

# A minimal environment: nothing from the developer's shell leaks into a test. The console
# raw (the ranks' bytes as they come, as before issue 18): the tests that check what ranks
# print predate labels; tests/integration/test_console.sh checks the console modes. The
# record's floor of free space small: a test's record must not depend on the machine's disk
# having 1 GiB free (tests/integration/test_hardening.sh checks the default on a small tmpfs).
clean_env() {
  env -i PATH="$system_path" HOME="$scratch/home" EZPZ_RUN_DIR="$scratch/run" \
    EZPZ_RUNS_DIR="$scratch/runs" EZPZ_OUTPUT=raw EZPZ_RECORD_FLOOR=16M \
    MASTER_PORT=29500 "$@"
}

pass() { passes=$((passes + 1)); }
fail() { failures=$((failures + 1)); printf 'FAIL: %s\n' "$*" >&2; }

# expect_eq NAME EXPECTED ACTUAL
expect_eq() {
  if [ "$2" == "$3" ]; then pass; else
    fail "$1"; diff <(printf '%s\n' "$2") <(printf '%s\n' "$3") >&2 || true
  fi
}

# expect_match NAME EXTENDED-REGEX ACTUAL
expect_match() {
  if [[ $3 =~ $2 ]]; then pass; else
    fail "$1"; printf '  expected to match: %s\n  actual: %s\n' "$2" "$3" >&2
  fi
}

# expect_true NAME CMD [ARGS...]
expect_true() {
  local name=$1; shift
  if "$@"; then pass; else fail "$name"; fi
}

# A misspelt helper or a missing tool is a failure, not a silent no-op.
command_not_found_handle() {
  fail "command not found: $1"
  return 127
}

finish() {
  printf '%d passed, %d failed\n' "$passes" "$failures"
  [ "$failures" -eq 0 ]
}
