#!/usr/bin/env bash
# ezpz-rankenv's record relay (EZPZ_OUTPUT_RECORDS=1) under MPICH's Hydra, raw mpiexec: 4
# ranks each print thousands of numbered lines, a third of them in two write()s (text, then
# newline, as Python's print does unbuffered) and some longer than PIPE_BUF; decoded with
# `ezpz-rankenv --decode`, every rank's bytes come back whole and in order. Without the
# variable, nothing changes. Its failure line stays a plain line; signals still reach the rank;
# a partial line goes out after a quiet spell.
source "$(dirname "$0")/common.sh"

require_mpiexec
source "$(dirname "$0")/rank_records_common.sh"
# The records less the start-up stamps (control records "RANK! ...", issue 19).
text_records() { grep -v '^[0-9]*! ' "$1"; }

# --- 4 ranks x 3000 lines, through the relay ---------------------------------------
relay_run relay mpiexec -n 4
expect_true "relay: no record longer than 1024 bytes (k_record_max)" \
  awk 'length($0) >= 1024 { exit 1 }' "$scratch/records"

# --- without EZPZ_OUTPUT_RECORDS: the rank's own bytes, as before ----------------------
clean_env mpiexec -n 2 "$rankenv" python3 "$writer" 5 >"$scratch/plain"
expect_eq "no variable: untagged lines" 10 "$(grep -c '^rank [01] seq [0-4] x*$' "$scratch/plain")"

# --- stderr stays stderr; the failure line stays a plain line -----------------------
clean_env EZPZ_OUTPUT_RECORDS=1 mpiexec -n 2 "$rankenv" \
  sh -c 'echo "out $RANK"; echo "err $RANK" >&2; exit $((RANK * 3))' \
  >"$scratch/out" 2>"$scratch/err"
expect_eq "stderr: stdout's records" "0: out 0
1: out 1" "$(text_records "$scratch/out" | sort)"
expect_match "stamps: each rank's exec (with its host), then its first output" \
  "^0! exec [0-9]{19} $(hostname)
0! first_output [0-9]{19}
1! exec [0-9]{19} $(hostname)
1! first_output [0-9]{19}\$" "$(grep '^[0-9]*! ' "$scratch/out" | sort -s -k1,1)"
expect_match "stderr: the rank's lines as records, the failure line as it was" \
  "^0: err 0
1: err 1
ezpz-rankenv: rank 1 \(pid [0-9]+\) on [^ ]+: exited with code 3$" "$(sort "$scratch/err")"

# --- a partial line goes out after a quiet spell; a signal still reaches the rank ---
# exec: $! is ezpz-rankenv itself.
(exec env -i PATH="$system_path" RANK=0 EZPZ_OUTPUT_RECORDS=1 "$rankenv" sh -c \
  'trap "echo got TERM; exit 7" TERM; printf "Loading... "; while :; do sleep 0.05; done' \
  >"$scratch/quiet") &
relay_pid=$!
on_exit "kill -KILL $relay_pid 2>/dev/null"
has_piece() { [ "$(text_records "$scratch/quiet" 2>/dev/null)" == "0+ Loading... " ]; }
expect_true "quiet: the partial line arrives as a piece" wait_until 5 has_piece
# From another process than its parent (whose signals reached the rank's group already).
/bin/kill -TERM "$relay_pid"
wait "$relay_pid"
expect_eq "signal: passed on; the rank's exit code" 7 "$?"
expect_eq "signal: the rank's last line" "0+ Loading... 
0: got TERM" "$(text_records "$scratch/quiet")"
finish
