#!/usr/bin/env bash
# The console modes of `ezpz launch --output` under MPICH's Hydra, through ezpz-rankenv's rank
# records: 4 ranks print thousands of lines at once (a third in two write()s, some longer than
# PIPE_BUF); labelled, every line on the console is whole and each rank's lines are what it
# wrote, in order; `ezpz runs show --rank K` prints exactly what rank K wrote. De-duplication
# word for word on a small case; rank0; the launcher's failure lines stay readable and parsed;
# every new error line word for word.
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/console_common.sh"

require_mpiexec
# The suite's clean_env keeps the console raw; here each run says its mode.
launch_env() { clean_env "$@"; }
lines=2000

# --- label: 4 ranks x 2000 lines, every line whole and each rank's in order -----------
check_labelled "$lines" -n 4
run_id=$(ls "$scratch/runs")
expect_true "label: output.log is the console as shown" \
  cmp -s "$scratch/label.out" "$scratch/runs/$run_id/attempt-1/output.log"
expect_eq "label: the output recorded once, with an index (no ranks.log)" "output.log ranks.idx" \
  "$(cd "$scratch/runs/$run_id/attempt-1" && echo output.log ranks.*)"

# --- runs show --grep, --tail -----------------------------------------------------------
run_ezpz grep runs show last --rank 2 --grep "seq 19" --tail 3
expect_eq "runs show --grep --tail: the last 3 matching lines" \
  "$(grep 'seq 19' "$scratch/expected.2" | tail -n 3)" "$out"

# --- label with --record-limit: the rank's output as far as the record goes --------------
run_ezpz limited launch --output label --record-limit 18 -n 1 -- sh -c 'echo first; echo second'
run_ezpz limited_show runs show last --rank 0
expect_eq "--record-limit: rank 0's output, cut where output.log was" "first
seco" "$out"

# --- straight to ezpz, and through the launcher ------------------------------------------
# The ranks on ezpz's host send their records straight to it (EZPZ_OUTPUT_SOCKET), past the
# launcher: behind a launcher whose output goes nowhere, their lines arrive all the same. Ranks
# that cannot reach ezpz's sockets (another host: here a name nothing listens on) send them
# through the launcher, every line whole as before.
hydra=$(readlink -f "$(command -v mpiexec)")
launcher_script() {  # launcher_script NAME COMMAND...: a launcher program that runs COMMAND
  mkdir -p "$scratch/$1"
  printf '#!/bin/sh\ncase "$1" in --version) exec %s "$@" ;; esac\nexec %s\n' "$hydra" "$2" \
    >"$scratch/$1/mpiexec"
  chmod +x "$scratch/$1/mpiexec"
}
# Straight to ezpz, ezpz-rankenv passes the rank's own pipes over and holds no end of them: ezpz
# reads what the rank wrote. Each rank says whether its parent (ezpz-rankenv) still holds its
# stdout's pipe, once it has had a second to pass it.
relay_check='me=$(readlink "/proc/$$/fd/1"); how=relayed
for i in $(seq 50); do
  if ! ls -l "/proc/$PPID/fd" | grep -qF "$me"; then how=passed; break; fi; sleep 0.02
done
echo "out $RANK $how"; echo "err $RANK" >&2'
launcher_script blind "$hydra \"\$@\" >/dev/null 2>&1"
run_ezpz blind launch --output label --launcher-program "$scratch/blind/mpiexec" -n 2 -- \
  sh -c "$relay_check"
expect_eq "straight: the ranks' lines past a launcher whose stdout goes nowhere" "[0] out 0 passed
[1] out 1 passed" "$(LC_ALL=C sort "$scratch/blind.out")"
expect_eq "straight: their stderr lines" "[0] err 0
[1] err 1" "$(LC_ALL=C sort "$scratch/blind.err")"
launcher_script elsewhere "env EZPZ_OUTPUT_SOCKET=@ezpz-output-elsewhere $hydra \"\$@\""
run_ezpz elsewhere launch --output label --launcher-program "$scratch/elsewhere/mpiexec" -n 2 -- \
  sh -c "$relay_check"
expect_eq "through the launcher: ezpz-rankenv relays the ranks' lines" "[0] out 0 relayed
[1] out 1 relayed" "$(LC_ALL=C sort "$scratch/elsewhere.out")"
check_labelled 500 --launcher-program "$scratch/elsewhere/mpiexec" -n 4
# raw, recorded: the same pipes passed (EZPZ_OUTPUT_RECORDS=pipes, set by ezpz where it listens),
# before the rank starts; the bytes unlabelled. Through the launcher where ezpz cannot be
# reached, and with nothing to record (--no-record, no watchdog: no pump at all).
run_ezpz raw_blind launch --output raw --launcher-program "$scratch/blind/mpiexec" -n 2 -- \
  sh -c "$relay_check"
expect_eq "raw, straight: the ranks' bytes past a launcher whose stdout goes nowhere" "out 0 passed
out 1 passed" "$(LC_ALL=C sort "$scratch/raw_blind.out")"
expect_eq "raw, straight: their stderr" "err 0
err 1" "$(LC_ALL=C sort "$scratch/raw_blind.err")"
run_ezpz raw_elsewhere launch --output raw --launcher-program "$scratch/elsewhere/mpiexec" -n 2 -- \
  sh -c "$relay_check"
expect_eq "raw, through the launcher: as the ranks wrote it" "out 0 relayed
out 1 relayed" "$(LC_ALL=C sort "$scratch/raw_elsewhere.out")"
run_ezpz raw_direct launch --no-record --output raw -n 2 -- sh -c "$relay_check"
expect_eq "raw, unrecorded: the ranks write to ezpz's stdout themselves" "out 0 relayed
out 1 relayed" "$(LC_ALL=C sort "$scratch/raw_direct.out")"
# 4 ranks x 1 MiB of lines at once, through passed pipes: every byte on the console and in
# output.log (the console's stdout, then its stderr: here, none), in each rank's order. Each
# line in a write of its own (stdbuf -oL): a read of a passed pipe ends where a write did, and
# ezpz writes each read whole, so even raw, no line is cut.
run_ezpz raw_bulk launch --output raw -n 4 -- sh -c 'stdbuf -oL seq -f "rank $RANK line %06g" 1 52429'
expect_eq "raw, bulk: exit status, bytes" "0 $((4 * 52429 * 19))" "$rc $(wc -c <"$scratch/raw_bulk.out")"
expect_true "raw, bulk: output.log is the console" \
  cmp -s "$scratch/raw_bulk.out" "$(ls -dt "$scratch/runs"/*/ | head -n 1)attempt-1/output.log"
for rank in 0 1 2 3; do
  expect_eq "raw, bulk: rank $rank's lines, in order" "$(seq -f "rank $rank line %06g" 1 52429)" \
    "$(grep "^rank $rank " "$scratch/raw_bulk.out")"
done

# --- dedup: identical lines once, with their ranks ---------------------------------------
# A barrier first, so the ranks print within the window (150 ms) of each other; on a machine
# so loaded that a rank was not scheduled for that long, tried again (up to 3 times).
script='touch "$0/$RANK"; while [ "$(ls "$0" | wc -l)" -lt 4 ]; do sleep 0.01; done
echo loading checkpoint; [ "$RANK" -ge 2 ] && echo big; echo "rank $RANK done"'
expected_dedup="[0-3] loading checkpoint
[0] rank 0 done
[1] rank 1 done
[2-3] big
[2] rank 2 done
[3] rank 3 done"
for try in 1 2 3; do
  barrier="$scratch/barrier.$try"
  mkdir -p "$barrier"
  run_ezpz dedup launch --output dedup -n 4 -- sh -c "$script" "$barrier"
  [ "$(LC_ALL=C sort "$scratch/dedup.out")" == "$expected_dedup" ] && break
done
expect_eq "dedup: exit status" 0 "$rc"
expect_eq "dedup: word for word (sorted: the ranks' lines race)" "$expected_dedup" \
  "$(LC_ALL=C sort "$scratch/dedup.out")"
expect_eq "dedup: the shared line first" "[0-3] loading checkpoint" "$(head -n 1 "$scratch/dedup.out")"
# The console as shown holds every rank's every line (a shared one once): recorded once, with an
# index, and each rank's output read back from it.
dedup_run=$(ls -t "$scratch/runs" | head -n 1)
expect_eq "dedup: the output recorded once, with an index (no ranks.log)" "output.log ranks.idx" \
  "$(cd "$scratch/runs/$dedup_run/attempt-1" && echo output.log ranks.*)"
run_ezpz dedup_2 runs show "$dedup_run" --rank 2
expect_eq "dedup: rank 2's lines from the shared ones and its own" "loading checkpoint
big
rank 2 done" "$out"
run_ezpz dedup_1 runs show "$dedup_run" --rank 1
expect_eq "dedup: rank 1's" "loading checkpoint
rank 1 done" "$out"
# 500 lines of each of 4 ranks at once (as check_labelled 500 above): each read back exactly.
run_ezpz dedup_many launch --output dedup -n 4 -- python3 "$EZPZ_SRC/tests/integration/output_lines.py" 500
expect_eq "dedup, many lines: exit status" 0 "$rc"
for rank in 0 3; do
  run_ezpz "dedup_show$rank" runs show --rank "$rank"
  expect_true "dedup, many lines: runs show --rank $rank: exactly what the rank wrote" \
    cmp -s "$scratch/expected.$rank" "$scratch/dedup_show$rank.out"
done

# --- rank0: only rank 0 on the console, every rank in the record -------------------------
run_ezpz rank0 launch --output rank0 -n 3 -- sh -c 'echo "hello from $RANK"'
expect_eq "rank0: the console" "hello from 0" "$out"
run_ezpz rank0_2 runs show --rank 2
expect_eq "rank0: rank 2's line in the record" "hello from 2" "$out"

# --- a failing rank: its report readable on stderr, and parsed --------------------------
# Rank 1 fails only once rank 0 has written and gone: Hydra kills the other ranks when one exits
# non-zero, and on a loaded machine rank 0 might not have written its line yet.
mkdir -p "$scratch/fails.sync"
run_ezpz fails launch --output label -n 2 -- sh -c 'echo "err $RANK" >&2
  [ "$RANK" = 0 ] && exec touch "$1/0"
  until [ -e "$1/0" ]; do sleep 0.01; done; sleep 0.5; exit 3' sh "$scratch/fails.sync"
expect_eq "fails: exit status" 3 "$rc"
expect_eq "fails: each rank's stderr line labelled" "[0] err 0
[1] err 1" "$(grep '^\[' "$scratch/fails.err" | LC_ALL=C sort)"
expect_eq "fails: the report as it was, once" 1 \
  "$(grep -cE '^ezpz-rankenv: rank 1 \(pid [0-9]+\) on [^ ]+: exited with code 3$' "$scratch/fails.err")"
run_ezpz fails_show runs show
expect_true "fails: the verdict names rank 1" grep -q "rank 1" "$scratch/fails_show.out"

# --- not under ezpz-rankenv: said once with -v, bytes as they come ----------------------
run_ezpz norankenv launch -v --output label --no-rank-env -n 2 -- echo plain
expect_eq "--no-rank-env: the bytes as they come" "plain
plain" "$out"
expect_eq "--no-rank-env: said once" "ezpz: output: the ranks write no rank records (torchrun, Open MPI, --no-rank-env): their output is passed through as bytes, unlabelled" \
  "$(grep 'output:' "$scratch/norankenv.err")"

# --- errors, word for word ---------------------------------------------------------------
run_ezpz bad_mode launch --output loud -n 1 -- true
expect_eq "--output loud: exit status" 2 "$rc"
expect_eq "--output loud: the line" \
  "ezpz: error: --output loud: no such console mode; one of label, dedup, rank0, raw" "$err"
run_ezpz bad_env EZPZ_OUTPUT=loud launch -n 1 -- true
expect_eq "EZPZ_OUTPUT=loud: the line" \
  "ezpz: error: EZPZ_OUTPUT=loud: no such console mode; one of label, dedup, rank0, raw" "$err"
run_ezpz raw launch --output raw -n 1 -- echo raw
run_ezpz raw_show runs show last --rank 0
expect_eq "runs show --rank on a raw run: exit status" 2 "$rc"
expect_match "runs show --rank on a raw run: the line" \
  "^ezpz: error: .*/runs/[^/]+: no per-rank output \(the run's console was raw, or its ranks were not under ezpz-rankenv\)$" "$err"
run_ezpz bad_attempt runs show "$run_id" --rank 0 --attempt 4
expect_match "runs show --attempt 4: the line" \
  "^ezpz: error: .*/runs/$run_id: no per-rank output for attempt 4 \(the run's console was raw, or its ranks were not under ezpz-rankenv\)$" "$err"
finish
