#!/usr/bin/env bash
# The launch path under a careless or hostile user, with real MPICH: a closed
# stdout (`| head`), output that would fill the disk, stdin in every form
# (MPICH 4.0.2's Hydra dies when it forwards stdin to a rank that has gone), a
# run directory that cannot be written, and a broken profile file beside the
# good ones.
source "$(dirname "$0")/common.sh"
require_mpiexec

launch_env() { clean_env env -u MASTER_PORT "$@"; }
runs="$scratch/runs"

# newest_run: the directory of the last run recorded.
# The record written last (ids sort by second, then as text: pid 992 after pid 1005).
newest_run() { ls -dt "$runs"/*/ | head -n 1; }

# --- `| head`: a closed stdout ends the job, as it ends a pipeline's writer ------------------
start=$(now_ms)
launch_env "$timeout_bin" -k 5 60 "$EZPZ_BIN" launch -n 2 -- yes 2>"$scratch/head.err" | head -2 >"$scratch/head.out"
statuses=("${PIPESTATUS[@]}")
elapsed=$(( $(now_ms) - start ))
expect_eq "| head: ezpz exits 141, as a pipeline's writer" 141 "${statuses[0]}"
expect_eq "| head: head got its two lines" "y
y" "$(cat "$scratch/head.out")"
expect_true "| head: ended promptly (${elapsed} ms; the limit is the test's 60 s)" test "$elapsed" -lt 30000
run=$(newest_run)
expect_eq "| head: the verdict is the user's, not a node's" "interrupted" \
  "$(jq -r .classification "$run/attempt-1/verdict.json")"
expect_eq "| head: and says why" "ezpz's stdout was closed by its reader (SIGPIPE)" \
  "$(jq -r .reason "$run/attempt-1/verdict.json")"
expect_eq "| head: stopped_by" "stdout_closed" "$(jq -r .stopped_by "$run/attempt-1/verdict.json")"
size=$(stat -c %s "$run/attempt-1/output.log")
expect_true "| head: the record stayed small ($size bytes)" test "$size" -lt $((64 * 1024 * 1024))
expect_eq "| head: no rank left" 0 "$(pgrep -c -x yes || true)"

# Without a record the ranks get SIGPIPE themselves: still the user's, never a bad node.
launch_env "$timeout_bin" -k 5 60 "$EZPZ_BIN" launch --no-record -n 2 -- yes 2>"$scratch/head2.err" | head -1 >/dev/null
expect_eq "| head, --no-record: exits 141" 141 "${PIPESTATUS[0]}"

# --- The record keeps at most --record-limit of an attempt's output --------------------------
run_ezpz limit launch --record-limit 1M -n 2 -- sh -c 'head -c 3000000 /dev/zero | tr "\0" x; echo'
expect_eq "--record-limit: the job succeeds" 0 "$rc"
expect_eq "--record-limit: the console got all of it" $((2 * 3000001)) "$(wc -c <"$scratch/limit.out")"
run=$(newest_run)
note='[ezpz: the record stops here: it reached --record-limit (1048576 bytes); the rest of the output went only to the console]'
expect_eq "--record-limit: the record ends with one line saying so" "$note" "$(tail -1 "$run/attempt-1/output.log")"
expect_eq "--record-limit: 1 MiB of output, then the note" $((1048576 + 1 + ${#note} + 1)) \
  "$(stat -c %s "$run/attempt-1/output.log")"
expect_eq "--record-limit: one line on stderr" \
  "ezpz: the job's output reached --record-limit (1048576 bytes); the rest is not recorded" "$err"
run_ezpz nolimit launch --record-limit 0 -n 1 -- sh -c 'head -c 2000000 /dev/zero | tr "\0" y'
expect_eq "--record-limit 0: everything recorded" 2000000 "$(stat -c %s "$(newest_run)/attempt-1/output.log")"

# --- The record yields to the job: a floor of free space (issue 45) ---------------------------
# A chatty job that then writes a 2 MB checkpoint in an 8 MiB working directory. Before: the
# record took the disk, the checkpoint failed (CKPT-FAILED, 0 bytes) and the run showed as
# "lost, 0 attempts"; raw mpiexec.hydra wrote it.
small="$scratch/small"
mkdir -p "$small"
if mount -t tmpfs -o size=8m tmpfs "$small"; then
  on_exit "umount '$small'"
  chatty='seq 1 1500000 | sed "s/^/log line /"; head -c 2000000 /dev/urandom > ckpt.pt && echo CKPT-OK >&2 || echo CKPT-FAILED >&2'
  (cd "$small" && launch_env env -u EZPZ_RECORD_FLOOR -u EZPZ_RUNS_DIR "$timeout_bin" -k 5 60 \
     "$EZPZ_BIN" launch -n 1 -- sh -c "$chatty") >/dev/null 2>"$scratch/small.err"
  expect_eq "floor: the job's checkpoint was written whole" "2000000" "$(stat -c %s "$small/ckpt.pt")"
  expect_true "floor: the job said so" grep -q "CKPT-OK" "$scratch/small.err"
  expect_eq "floor: said once" \
    "ezpz: the record's filesystem is down to its floor of free space (1073741824 bytes, --record-floor): recording stopped, the job has the rest" \
    "$(grep '^ezpz: ' "$scratch/small.err")"
  expect_eq "floor: the run's real ending is recorded" "success 0 1" \
    "$(jq -r '"\(.ending) \(.exit_code) \(.attempts)"' "$small"/.ezpz/runs/*/run.json)"
  # A floor the filesystem can give: the record keeps what it may, the floor stays free.
  rm -rf "$small/ckpt.pt" "$small/.ezpz"
  (cd "$small" && launch_env env -u EZPZ_RUNS_DIR "$timeout_bin" -k 5 60 "$EZPZ_BIN" launch -n 1 \
     --record-floor 4M -- sh -c 'seq 1 1500000 | sed "s/^/log line /"') >/dev/null 2>&1
  kept=$(stat -c %s "$small"/.ezpz/runs/*/attempt-1/output.log)
  free=$(df -B1 --output=avail "$small" | tail -1)
  expect_true "floor 4M: the record kept some ($kept bytes)" test "$kept" -gt 0
  # Less the run's own small files (run.json, verdict.json: a few pages), written after.
  expect_true "floor 4M: 4 MiB still free ($free bytes)" test "$free" -ge $((4 * 1048576 - 65536))
  expect_true "floor 4M: the record took no more than 8 MiB less the floor" \
    test "$kept" -le $((4 * 1048576))
else
  fail "floor: cannot mount a small tmpfs (the test runs as root)"
fi

# --- stdin: rank 0 gets all of it, then EOF; a rank that never reads it costs nothing ---------
seq 1 200000 >"$scratch/numbers"
expected_sum=$(awk '{ s += $1 } END { print s }' "$scratch/numbers")
for mode in pipe file; do
  if [ "$mode" = pipe ]; then
    got=$(cat "$scratch/numbers" | launch_env "$timeout_bin" -k 5 60 "$EZPZ_BIN" launch --no-record -n 2 -- \
      sh -c 'if [ "$RANK" = 0 ]; then awk "{ s += \$1 } END { print s }"; else echo "rank $RANK read $(wc -c)"; fi')
  else
    got=$(launch_env "$timeout_bin" -k 5 60 "$EZPZ_BIN" launch --no-record -n 2 -- \
      sh -c 'if [ "$RANK" = 0 ]; then awk "{ s += \$1 } END { print s }"; else echo "rank $RANK read $(wc -c)"; fi' <"$scratch/numbers")
  fi
  expect_eq "stdin from a $mode: rank 0 read it all, to its end; rank 1 read nothing" \
    "$expected_sum
rank 1 read 0" "$(sort <<<"$got")"
done
got=$(launch_env "$timeout_bin" -k 5 60 "$EZPZ_BIN" launch --no-record -n 2 -- sh -c 'cat; echo "rank $RANK done"' </dev/null)
expect_eq "stdin /dev/null: every rank sees EOF at once" "rank 0 done
rank 1 done" "$(sort <<<"$got")"
# An endless stdin no rank reads: the job still ends.
yes | launch_env "$timeout_bin" -k 5 60 "$EZPZ_BIN" launch --no-record -n 2 -- true
expect_eq "endless stdin, unread: the job ends, exit 0" 0 "${PIPESTATUS[1]}"
expect_eq "no relay socket is left listening" 0 "$(grep -c ' @ezpz-stdin-' /proc/net/unix)"

# Hydra's race: piped stdin and ranks that exit at once failed 39-51 times in 100 before.
for mode in pipe file null; do
  failed_launches=0  # not lib.sh's $failures: that reset lost every check failed before
  for _ in $(seq 40); do
    case $mode in
      pipe) echo hi | launch_env "$EZPZ_BIN" launch --no-record -n 2 -- true >/dev/null 2>&1 || failed_launches=$((failed_launches + 1)) ;;
      file) launch_env "$EZPZ_BIN" launch --no-record -n 2 -- true <"$scratch/numbers" >/dev/null 2>&1 || failed_launches=$((failed_launches + 1)) ;;
      null) launch_env "$EZPZ_BIN" launch --no-record -n 2 -- true </dev/null >/dev/null 2>&1 || failed_launches=$((failed_launches + 1)) ;;
    esac
  done
  expect_eq "stdin from $mode, ranks that exit at once: no failed launch in 40" 0 "$failed_launches"
done

# --- A run directory that cannot be written never refuses the job ---------------------------
: >"$scratch/not-a-dir"
run_ezpz unwritable EZPZ_RUNS_DIR="$scratch/not-a-dir/runs" launch -n 1 -- echo hi
expect_eq "unwritable runs dir: the job ran" "hi" "$out"
expect_eq "unwritable runs dir: exit 0" 0 "$rc"
expect_eq "unwritable runs dir: one warning" \
  "ezpz: warning: $scratch/not-a-dir/runs: cannot create the run record: Not a directory; the job runs without one" "$err"
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$scratch/ro"
  if mount -t tmpfs -o ro,size=1m tmpfs "$scratch/ro" 2>/dev/null; then
    on_exit umount "$scratch/ro"
    (cd "$scratch/ro" && clean_env env -u MASTER_PORT -u EZPZ_RUNS_DIR "$timeout_bin" -k 5 60 "$EZPZ_BIN" \
      launch -n 1 -- echo hi >"$scratch/ro.out" 2>"$scratch/ro.err")
    expect_eq "read-only current directory: exit 0" 0 "$?"
    expect_eq "read-only current directory: the job ran" "hi" "$(cat "$scratch/ro.out")"
    expect_eq "read-only current directory: one warning" \
      "ezpz: warning: .ezpz/runs: cannot create the run record: Read-only file system; the job runs without one" \
      "$(cat "$scratch/ro.err")"
  else
    echo "note: no tmpfs mount here; the read-only directory case ran as ENOTDIR only"
  fi
fi

# --- One broken profile file does not break every command -----------------------------------
drafts="$scratch/drafts"
mkdir -p "$drafts"
echo 'launcher: [x' >"$drafts/draft.yaml"
run_ezpz draft EZPZ_MACHINES_PATH="$drafts" launch --no-record --machine local -n 1 -- echo hi
expect_eq "a broken draft profile: launch still runs" "hi" "$out"
expect_eq "... and says once what it skipped" \
  "ezpz: warning: machine profile draft skipped: $drafts/draft.yaml:2: invalid YAML: end of sequence flow not found" "$err"
run_ezpz draftlist EZPZ_MACHINES_PATH="$drafts" machines list
expect_eq "machines list: exit 0" 0 "$rc"
expect_eq "machines list: the broken one, with its file:line" \
  "draft - - BROKEN $drafts/draft.yaml:2: invalid YAML: end of sequence flow not found" \
  "$(grep '^draft ' <<<"$out" | tr -s ' ')"
expect_true "machines list: the good ones still listed" grep -q '^aurora ' <<<"$out"

# --- Words, directories and lines that are not UTF-8 ----------------------------------------
# POSIX lets them be any bytes; JSON holds only UTF-8. Before json_text, the run record's JSON
# threw and ezpz died of abort() (exit 134) after its launcher had started.
fffd=$'\xef\xbf\xbd'
run_ezpz latin1 launch -n 1 -- printf '%s\n' $'caf\xe9'
expect_eq "a Latin-1 word: exit 0" 0 "$rc"
expect_eq "a Latin-1 word: the rank printed its bytes as they are" "caf"$'\xe9' "$out"
run=$(newest_run)
expect_eq "a Latin-1 word: run.json reads, the byte as U+FFFD" "caf$fffd" "$(jq -r '.command[2]' "$run/run.json")"
expect_eq "a Latin-1 word: plan.json reads" "caf$fffd" "$(jq -r '.argv[-1]' "$run/plan.json")"
expect_eq "a Latin-1 word: verdict.json reads" "success" "$(jq -r .classification "$run/attempt-1/verdict.json")"
run_ezpz latin1_json launch --dry-run --json -n 1 -- printf '%s\n' $'caf\xe9'
expect_eq "--dry-run --json, a Latin-1 word: exit 0" 0 "$rc"
expect_eq "--dry-run --json, a Latin-1 word: the plan reads" "caf$fffd" "$(jq -r '.argv[-1]' <<<"$out")"
run_ezpz latin1_env env --json -x A=$'caf\xe9'
expect_eq "env --json, a Latin-1 value: exit 0" 0 "$rc"
expect_eq "env --json, a Latin-1 value: it reads" "caf$fffd" "$(jq -r .A <<<"$out")"
latin1_dir="$scratch/d"$'\xff'
mkdir -p "$latin1_dir"
(cd "$latin1_dir" && launch_env "$timeout_bin" -k 5 60 "$EZPZ_BIN" launch -n 1 -- true \
  >"$scratch/latin1_dir.out" 2>"$scratch/latin1_dir.err")
expect_eq "a directory that is not UTF-8: exit 0" 0 "$?"
expect_eq "a directory that is not UTF-8: run.json's cwd reads" "$scratch/d$fffd" "$(jq -r .cwd "$(newest_run)/run.json")"

finish
