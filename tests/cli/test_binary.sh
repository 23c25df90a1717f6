#!/usr/bin/env bash
# The binary itself: version, help, what it links, and the README/CI contract.
source "$(dirname "$0")/lib.sh"

version=$("$EZPZ_BIN" --version)
[[ "$version" =~ ^ezpz\ [0-9]+\.[0-9]+\.[0-9]+\ \(([0-9a-f]{12}|unknown)\)$ ]] && pass ||
  fail "--version printed '$version'"

help=$("$EZPZ_BIN" launch --help); code=$?
expect_eq "launch --help exits 0" 0 "$code"
for word in "Examples:" "ezpz launch -n 8 --ppn 4 -- python3 train.py" "--dry-run" "--exclude-file"; do
  [[ "$help" == *"$word"* ]] && pass || fail "launch --help lacks '$word'"
done

# A rank that traps SIGTERM to write a checkpoint gets the same time from kill as from launch.
expect_eq "kill --help: the grace is launch's" \
  "  --grace FLOAT               Seconds before SIGKILL for processes still running (10, as launch --grace)" \
  "$("$EZPZ_BIN" kill --help | grep -e '--grace')"
expect_eq "launch --help: the same grace" \
  "  --grace FLOAT:SECONDS       Seconds between SIGTERM and SIGKILL when stopping (10)" \
  "$(grep -e '--grace FLOAT' <<<"$help")"
expect_true "kill --help: any unique start of the id" \
  grep -q "RUN_ID TEXT  *Only this run: its id, or any unique start of it" <<<"$("$EZPZ_BIN" kill --help)"

# ezpz must start fast and work when MPI or libtorch are broken: it links neither.
# Only the libraries' names are matched: a load address such as 0x...c10000 is not a library.
linked=$(ldd "$EZPZ_BIN" | awk '{print $1}' | grep -Ei 'mpi|torch|c10' || true)
expect_eq "ezpz links neither MPI nor libtorch" "" "$linked"

# ezpz-rankenv's stdin (lib/ezpz/sys/stdin_relay.hpp): EZPZ_STDIN names ezpz's relay, or
# /dev/null when ezpz's stdin has nothing to give; without it, the launcher's stdin is kept.
rankenv=$(dirname "$EZPZ_BIN")/ezpz-rankenv
printf 'data\n' >"$scratch/stdin.txt"
stdin_case() {  # NAME EXPECTED-OUT EXPECTED-ERR ENV...
  local name=$1 want_out=$2 want_err=$3
  shift 3
  env -i "$@" "$rankenv" sh -c 'cat; echo "[${EZPZ_STDIN-unset}]"' <"$scratch/stdin.txt" \
    >"$scratch/rankenv.out" 2>"$scratch/rankenv.err"
  expect_eq "rankenv stdin, $name: exit 0" 0 "$?"
  expect_eq "rankenv stdin, $name: what the command read" "$want_out" "$(cat "$scratch/rankenv.out")"
  expect_eq "rankenv stdin, $name: stderr" "$want_err" "$(cat "$scratch/rankenv.err")"
}
stdin_case "no EZPZ_STDIN" "data
[unset]" "" RANK=0
stdin_case "EZPZ_STDIN=/dev/null, rank 0" "[unset]" "" RANK=0 EZPZ_STDIN=/dev/null
stdin_case "a relay, rank 1" "[unset]" "" RANK=1 EZPZ_STDIN=@ezpz-stdin-test-none
stdin_case "a relay that is not there, rank 0" "[unset]" \
  "ezpz-rankenv: rank 0: cannot reach ezpz's stdin at @ezpz-stdin-test-none: Connection refused; stdin is empty" \
  RANK=0 EZPZ_STDIN=@ezpz-stdin-test-none

# ezpz-rankenv's records where EZPZ_OUTPUT_SOCKET names nothing it can reach (ezpz on another
# host): on its stdout and stderr, through the launcher, as without the variable; the command
# sees neither ezpz variable, and the failure report stays a plain line on stderr.
env -i PATH=/usr/bin:/bin RANK=3 EZPZ_OUTPUT_RECORDS=1 EZPZ_OUTPUT_SOCKET=@ezpz-output-test-none \
  "$rankenv" sh -c 'echo "[${EZPZ_OUTPUT_SOCKET-unset}]"; echo oops >&2; exit 4' \
  >"$scratch/records.out" 2>"$scratch/records.err"
expect_eq "rankenv records, no ezpz to reach: exit 4" 4 "$?"
expect_eq "rankenv records, no ezpz to reach: stdout's records" "3: [unset]" \
  "$(grep -v '^3! ' "$scratch/records.out")"
expect_match "rankenv records, no ezpz to reach: stderr's, then the report" \
  "^3: oops
ezpz-rankenv: rank 3 \(pid [0-9]+\) on [^ ]+: exited with code 4\$" "$(cat "$scratch/records.err")"

# --output raw's EZPZ_OUTPUT_RECORDS=pipes where ezpz is not there to take the pipes: the rank
# writes to ezpz-rankenv's own stdout and stderr, unchanged (no records, no pipe in between), and
# the report stays a plain line on stderr.
env -i PATH=/usr/bin:/bin RANK=3 EZPZ_OUTPUT_RECORDS=pipes EZPZ_OUTPUT_SOCKET=@ezpz-output-test-none \
  "$rankenv" sh -c 'echo "[${EZPZ_OUTPUT_SOCKET-unset}]"; readlink /proc/self/fd/1; echo oops >&2; exit 4' \
  >"$scratch/pipes.out" 2>"$scratch/pipes.err"
expect_eq "rankenv pipes, no ezpz to reach: exit 4" 4 "$?"
expect_eq "rankenv pipes, no ezpz to reach: stdout, the file itself" "[unset]
$scratch/pipes.out" "$(cat "$scratch/pipes.out")"
expect_match "rankenv pipes, no ezpz to reach: stderr, then the report" \
  "^oops
ezpz-rankenv: rank 3 \(pid [0-9]+\) on [^ ]+: exited with code 4\$" "$(cat "$scratch/pipes.err")"

# How ezpz-rankenv starts the rank (a child sharing its memory until exec, on a stack of its
# own): a script without "#!" found on PATH runs under sh with all its arguments (glibc puts a
# copy of argv on the child's stack for that); exec errors in one line, as execvp's.
mkdir -p "$scratch/bin"
printf 'echo "$# args, last $3000"\n' >"$scratch/bin/no-shebang"
chmod +x "$scratch/bin/no-shebang"
printf 'echo never\n' >"$scratch/bin/not-executable"
many=$(seq 1 3000)
# shellcheck disable=SC2086 # one argument per number
expect_eq "rankenv: a script without #! on PATH, 3000 arguments" "3000 args, last 3000" \
  "$(env -i PATH="$scratch/bin:/usr/bin:/bin" "$rankenv" no-shebang $many 2>&1)"
out=$(env -i PATH=/usr/bin:/bin "$rankenv" "$scratch/bin/not-executable" 2>&1); code=$?
expect_eq "rankenv: not executable: exit 126" 126 "$code"
expect_eq "rankenv: not executable: the line" \
  "ezpz-rankenv: $scratch/bin/not-executable: Permission denied" "$out"
out=$(env -i PATH=/usr/bin:/bin "$rankenv" no-such-command-ezpz 2>&1); code=$?
expect_eq "rankenv: not on PATH: exit 127" 127 "$code"
expect_eq "rankenv: not on PATH: the line" \
  "ezpz-rankenv: no-such-command-ezpz: No such file or directory" "$out"
# The rank dies with ezpz-rankenv, even of SIGKILL (PR_SET_PDEATHSIG, set in the child).
env -i PATH=/usr/bin:/bin "$rankenv" sh -c 'echo $$ >"$0"; exec sleep 30' "$scratch/rank.pid" &
shim=$!
for _ in $(seq 100); do [ -s "$scratch/rank.pid" ] && break; sleep 0.05; done
rank_pid=$(cat "$scratch/rank.pid")
expect_true "rankenv: the rank started" test -n "$rank_pid"
kill -KILL "$shim"
wait "$shim" 2>/dev/null
for _ in $(seq 100); do kill -0 "$rank_pid" 2>/dev/null || break; sleep 0.05; done
expect_true "rankenv: the rank dies with it" bash -c "! kill -0 $rank_pid 2>/dev/null"

# CI runs exactly the README's test command (an empty one would match any blank line).
ci_command=$(grep -v '^#' "$EZPZ_SRC/.ci/run" | grep 'scripts/check' || true)
[ -n "$ci_command" ] && grep -qxF "$ci_command" "$EZPZ_SRC/README.md" && pass ||
  fail ".ci/run's command '$ci_command' is not in README.md"
finish
