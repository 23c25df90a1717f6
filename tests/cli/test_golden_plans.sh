#!/usr/bin/env bash
# Golden plans: for each case under tests/golden/launch/<case>/, run
#   ezpz launch --dry-run [--json] $(args) under exactly the case's env
# and compare with expected.txt / expected.json. EZPZ_UPDATE_GOLDEN=1 rewrites
# the expected files instead; review the diff before committing.
#
# A case holds: args (one argument per line), env (NAME=VALUE per line; PATH has no
# launcher unless the case sets it), any
# files they name. @CASE@ in env and args stands for the case directory;
# in the output, the case directory, the binary's directory and the run
# directory are written as @CASE@, @BIN@ and @RUN@.
source "$(dirname "$0")/lib.sh"
cases="$EZPZ_SRC/tests/golden/launch"
bin_dir=$(dirname "$EZPZ_BIN")
# A plan names the launcher program that would run (mpiexec.hydra where mpiexec is Open MPI's):
# no launcher on PATH, so every machine prints the dialect's default name.
no_launchers="$scratch/no-launchers"
mkdir -p "$no_launchers"

run_case() {
  local dir=$1; shift
  local -a env_words=() arg_words=()
  while IFS= read -r line; do [ -n "$line" ] && env_words+=("${line//@CASE@/$dir}"); done < "$dir/env"
  while IFS= read -r line; do [ -n "$line" ] && arg_words+=("${line//@CASE@/$dir}"); done < "$dir/args"
  clean_env EZPZ_MACHINES_PATH= PATH="$no_launchers" "${env_words[@]}" "$EZPZ_BIN" launch --dry-run "$@" "${arg_words[@]}" 2>&1 |
    sed -e "s|$dir|@CASE@|g" -e "s|$bin_dir|@BIN@|g" -e "s|$scratch/run|@RUN@|g" -e "s|\"$(hostname)\"|\"@HOST@\"|g" \
      -e "s| -hosts $(hostname) | -hosts @HOST@ |g"
}

for dir in "$cases"/*/; do
  dir=${dir%/}
  name=$(basename "$dir")
  for form in txt json; do
    flags=(); [ "$form" = json ] && flags=(--json)
    actual=$(run_case "$dir" "${flags[@]}")
    if [ "${EZPZ_UPDATE_GOLDEN:-0}" = 1 ]; then
      printf '%s\n' "$actual" > "$dir/expected.$form"; pass
    else
      expect_eq "golden $name ($form)" "$(cat "$dir/expected.$form")" "$actual"
    fi
  done
done
finish
