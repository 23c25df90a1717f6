#!/usr/bin/env bash
# One PATH search for `ezpz doctor` and `ezpz launch`, execvp()'s: on every shape of PATH
# (unset, empty entries, relative entries, a directory or a non-executable file named like
# the launcher) the launcher doctor checks is the one launch runs. A fake MPICH mpiexec says
# which file ran; the command a rank runs is looked up by the same rules.
source "$(dirname "$0")/lib.sh"

if ! command -v jq >/dev/null; then
  fail "jq is not installed (scripts/setup installs it)"
  finish
  exit 1
fi

# fake_hydra FILE: answers --version as MPICH's Hydra does; run, says which file it is. With
# a hydra_pmi_proxy beside it, as Hydra has (doctor looks for it there).
fake_hydra() {
  printf '#!/bin/sh\n[ "$1" = --version ] && printf "HYDRA build details:\\n    Version: 4.0.2\\n" && exit 0\necho "fake mpiexec ran: $0"\n' >"$1"
  printf '#!/bin/sh\nexit 1\n' >"$(dirname "$1")/hydra_pmi_proxy"
  chmod +x "$1" "$(dirname "$1")/hydra_pmi_proxy"
}
work="$scratch/work"  # the current directory of every run
mkdir -p "$work/rel-bin" "$scratch/fake-bin" "$scratch/dir-bin/mpiexec" "$scratch/noexec-bin" \
  "$scratch/empty-bin"
fake_hydra "$work/mpiexec"
fake_hydra "$work/rel-bin/mpiexec"
fake_hydra "$scratch/fake-bin/mpiexec"
printf '#!/bin/sh\necho "must not run"\n' >"$scratch/noexec-bin/mpiexec"
chmod 644 "$scratch/noexec-bin/mpiexec"

# with_path PATH|unset CMD...: CMD in $work (or $cwd), in a clean environment with that PATH.
with_path() {
  local path=$1; shift
  if [ "$path" = unset ]; then
    (cd "${cwd:-$work}" && env -i HOME="$scratch/home" EZPZ_RUN_DIR="$scratch/run" \
      EZPZ_RUNS_DIR="$scratch/runs" MASTER_PORT=29500 "$@")
  else
    (cd "${cwd:-$work}" && env -i PATH="$path" HOME="$scratch/home" EZPZ_RUN_DIR="$scratch/run" \
      EZPZ_RUNS_DIR="$scratch/runs" MASTER_PORT=29500 "$@")
  fi
}
# doctor_launcher PATH: doctor's launcher check, "STATUS MESSAGE".
doctor_launcher() {
  with_path "$1" "$EZPZ_BIN" doctor --json 2>/dev/null |
    jq -r '.checks[] | select(.name == "launcher") | "\(.status) \(.message)"'
}
# launch PATH: `ezpz launch` of one rank; its status, stdout and stderr.
launch() {
  with_path "$1" "$EZPZ_BIN" launch -n 1 -- /bin/true >"$scratch/out" 2>"$scratch/err"
  printf '%s|%s|%s' "$?" "$(cat "$scratch/out")" "$(cat "$scratch/err")"
}
ok_hydra() { printf 'ok %s: MPICH Hydra 4.0.2, the hydra launcher of profile local' "$1"; }
ran() { printf '0|fake mpiexec ran: %s|' "$1"; }

# agree NAME PATH FOUND: doctor checks FOUND, and FOUND is what launch runs.
agree() {
  expect_eq "$1: doctor" "$(ok_hydra "$3")" "$(doctor_launcher "$2")"
  expect_eq "$1: launch" "$(ran "$3")" "$(launch "$2")"
}

# --- empty entries: the current directory, wherever they stand ---------------------------
agree "empty entry first" ":$system_path" ./mpiexec
agree "empty entry inside" "$scratch/empty-bin::$system_path" ./mpiexec
agree "empty entry last" "$scratch/empty-bin:" ./mpiexec
agree "PATH set but empty" "" ./mpiexec
# --- relative entries: relative to the current directory ---------------------------------
agree "relative entry" "rel-bin:$system_path" rel-bin/mpiexec
# --- a directory or a non-executable file named like the launcher: passed over -----------
agree "a directory named mpiexec" "$scratch/dir-bin:$scratch/fake-bin" "$scratch/fake-bin/mpiexec"
agree "a non-executable mpiexec" "$scratch/noexec-bin:$scratch/fake-bin" "$scratch/fake-bin/mpiexec"
# Neither, and nothing else: both say it is missing.
missing="$scratch/dir-bin:$scratch/noexec-bin"
expect_eq "only a directory and a non-executable file: doctor" \
  "error mpiexec is not on PATH (the hydra launcher of profile local)" "$(doctor_launcher "$missing")"
expect_eq "only a directory and a non-executable file: launch" \
  "127||ezpz: error: mpiexec: launcher not found on PATH" "$(launch "$missing")"

# --- PATH unset: the C library's default, /bin:/usr/bin ------------------------------------
# The first of Hydra's names there that is MPICH's, as the dialect's candidates go.
hydra=$(for name in mpiexec mpiexec.hydra mpiexec.mpich; do
  path=$(PATH=$(getconf PATH) command -v "$name") &&
    "$path" --version 2>/dev/null | grep -q "HYDRA build details" && echo "$path" && break
done)
if [ -n "$hydra" ]; then
  expect_eq "PATH unset: doctor" \
    "ok $hydra: MPICH Hydra $("$hydra" --version | sed -n 's/^ *Version: *//p'), the hydra launcher of profile local" \
    "$(doctor_launcher unset)"
  with_path unset "$EZPZ_BIN" -v launch -n 1 -- /bin/true >"$scratch/out" 2>"$scratch/err"
  expect_eq "PATH unset: launch runs it" 0 "$?"
  expect_match "PATH unset: launch names it" "ezpz: running: .* $(basename "$hydra") -n 1 " "$(cat "$scratch/err")"
else
  echo "note: no MPICH mpiexec in $(getconf PATH); the unset-PATH case was not run"
fi

# --- the rank's command: looked up as the rank's execvp will ------------------------------
cwd="$scratch/tool-work"  # no mpiexec here: the launcher is Hydra, from $system_path
mkdir -p "$cwd"
printf '#!/bin/sh\necho "tool ran"\n' >"$cwd/tool"
chmod +x "$cwd/tool"
with_path ":$system_path" "$EZPZ_BIN" launch -n 1 --output raw -- tool >"$scratch/out" 2>"$scratch/err"
expect_eq "a command in the current directory, found by an empty entry: runs" \
  "0|tool ran|" "$?|$(cat "$scratch/out")|$(cat "$scratch/err")"
with_path "$system_path" "$EZPZ_BIN" launch -n 1 -- tool >"$scratch/out" 2>"$scratch/err"
expect_eq "a command in the current directory, no empty entry: not found" \
  "127||ezpz: error: tool: command not found on the ranks' PATH; did you mean ./tool?" \
  "$?|$(cat "$scratch/out")|$(cat "$scratch/err")"

finish
