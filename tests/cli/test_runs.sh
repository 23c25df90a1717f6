#!/usr/bin/env bash
# ezpz runs on records written here: it says where it looked, --last (and -n, its
# old name, with a deprecation line), `runs show` with no id or `last`, and
# `runs prune`, which never touches a run still going. Word for word.
source "$(dirname "$0")/lib.sh"

runs="$scratch/runs"
host=$(hostname)
ezpz_runs() { clean_env EZPZ_RUNS_DIR="$runs" "$@" "$EZPZ_BIN" runs "${words[@]}"; }
# make_run ID EXIT: a record of a run that ended with EXIT ("null": none yet), on this host.
make_run() {
  mkdir -p "$runs/$1"
  local ending='"success"'
  [ "$2" = null ] && ending='""'
  printf '{"id": "%s", "started": "2020-01-01T00:00:00+0000", "cwd": "/", "command": ["true"],
"machine": "local", "scheduler": "local", "job_id": "", "hosts": ["%s"], "spares": [],
"attempts": 1, "exit_code": %s, "ending": %s, "reason": "", "launched_on": "%s"}\n' \
    "$1" "$host" "$2" "$ending" "$host" >"$runs/$1/run.json"
  : >"$runs/$1/lock"
}
ids() { ls "$runs" | paste -sd' '; }

# --- where it looked -------------------------------------------------------------
words=()
ezpz_runs >/dev/null 2>"$scratch/err"
expect_eq "no records: says where it looked" "ezpz: 0 runs recorded in $runs" "$(cat "$scratch/err")"
make_run 20200101-000001-h-1 0
make_run 20200102-000001-h-1 0
make_run 20200103-000001-h-1 0
out=$(ezpz_runs 2>"$scratch/err")
expect_eq "three records: says where it looked" "ezpz: 3 runs recorded in $runs" "$(cat "$scratch/err")"
expect_eq "three records: newest first" "20200103-000001-h-1 20200102-000001-h-1 20200101-000001-h-1" \
  "$(sed 1d <<<"$out" | cut -d' ' -f1 | paste -sd' ')"
words=(--last 2)
last=$(ezpz_runs 2>"$scratch/err")
expect_eq "--last 2: says how many it shows" \
  "ezpz: 3 runs recorded in $runs; the newest 2 shown (--last N)" "$(cat "$scratch/err")"
expect_eq "--last 2: two rows" 3 "$(wc -l <<<"$last")"
(cd "$scratch" && clean_env EZPZ_RUNS_DIR= "$EZPZ_BIN" runs 2>"$scratch/err" >/dev/null)
expect_eq "the default directory, named whole" "ezpz: 0 runs recorded in $scratch/.ezpz/runs" \
  "$(cat "$scratch/err")"

# -n counts ranks everywhere else: here it is --last's old name, with a line saying so.
words=(-n 2)
expect_eq "-n: the same rows as --last" "$last" "$(ezpz_runs 2>"$scratch/err")"
expect_eq "-n: says it is deprecated" "ezpz: warning: runs -n is deprecated (-n is ranks elsewhere): use --last 2
ezpz: 3 runs recorded in $runs; the newest 2 shown (--last N)" "$(cat "$scratch/err")"

# --- runs show: no id, or last, is the newest -----------------------------------
words=(show)
expect_eq "show with no id: the newest" "run 20200103-000001-h-1" "$(ezpz_runs | head -n 1)"
words=(show last)
expect_eq "show last: the newest" "run 20200103-000001-h-1" "$(ezpz_runs | head -n 1)"
words=(show 20200101)
expect_eq "show with an id: that run" "run 20200101-000001-h-1" "$(ezpz_runs | head -n 1)"
words=(--runs-dir "$scratch/none" show)
expect_eq "show with no records: message" "ezpz: error: runs: no runs recorded in $scratch/none" \
  "$(ezpz_runs 2>&1 >/dev/null)"
ezpz_runs >/dev/null 2>&1
expect_eq "show with no records: exit status" 2 "$?"

# --- prune ---------------------------------------------------------------------------
# The oldest run is still going: its ezpz holds the lock.
make_run 20191231-000001-h-1 null
(exec 9>"$runs/20191231-000001-h-1/lock" && flock 9 && exec sleep 60) &
holder=$!  # sleep itself, holding the lock as a launching ezpz does
trap 'kill $holder 2>/dev/null; rm -rf "$scratch"' EXIT
for _ in $(seq 50); do flock -n "$runs/20191231-000001-h-1/lock" true || break; sleep 0.1; done
words=()
expect_true "a run still going is listed as running" grep -q '^20191231-000001-h-1 .* running ' \
  <<<"$(ezpz_runs 2>/dev/null)"

words=(prune --keep 1 --dry-run)
expect_eq "prune --dry-run: what would go, and nothing else" "would remove 20200102-000001-h-1
would remove 20200101-000001-h-1
would remove 2 of 4 run records in $runs" "$(ezpz_runs)"
expect_eq "prune --dry-run: removes nothing" 4 "$(ls "$runs" | wc -l)"
words=(prune --keep 0)
expect_eq "prune --keep 0: every run that is over" "removed 20200103-000001-h-1
removed 20200102-000001-h-1
removed 20200101-000001-h-1
removed 3 of 4 run records in $runs" "$(ezpz_runs)"
expect_eq "prune: a running run stays" "20191231-000001-h-1" "$(ids)"
kill "$holder"; wait "$holder" 2>/dev/null
expect_eq "prune: once its ezpz is gone (lost), it goes too" \
  "removed 20191231-000001-h-1" "$(ezpz_runs | head -n 1)"

make_run 20200101-000001-h-1 0
make_run 20200102-000001-h-1 0
make_run 20200103-000001-h-1 0
touch -d '8 days ago' "$runs/20200101-000001-h-1/run.json" "$runs/20200103-000001-h-1/run.json"
words=(prune --older-than 7d)
expect_eq "prune --older-than: only runs that ended long enough ago" "removed 20200103-000001-h-1
removed 20200101-000001-h-1
removed 2 of 3 run records in $runs" "$(ezpz_runs)"
make_run 20200104-000001-h-1 0
make_run 20200105-000001-h-1 0
words=(prune)
expect_eq "prune with no option: EZPZ_RUNS_KEEP" "removed 20200102-000001-h-1
removed 1 of 3 run records in $runs" "$(ezpz_runs EZPZ_RUNS_KEEP=2)"
expect_eq "prune, EZPZ_RUNS_KEEP=all: nothing" "EZPZ_RUNS_KEEP=all: nothing removed from $runs" \
  "$(ezpz_runs EZPZ_RUNS_KEEP=all)"
expect_eq "prune, EZPZ_RUNS_KEEP=0: message" \
  "ezpz: error: EZPZ_RUNS_KEEP=0: expected a number of runs (1 or more) or all; every run record is kept" \
  "$(ezpz_runs EZPZ_RUNS_KEEP=0 2>&1 >/dev/null)"
words=(prune --older-than 3x)
expect_eq "prune --older-than 3x: message" \
  "ezpz: error: --older-than 3x: expected an age such as 90s, 30m, 12h, 7d or 2w" \
  "$(ezpz_runs 2>&1 >/dev/null)"
ezpz_runs >/dev/null 2>&1
expect_eq "prune --older-than 3x: exit status" 2 "$?"
expect_eq "errors remove nothing" "20200104-000001-h-1 20200105-000001-h-1" "$(ids)"

finish
