#!/usr/bin/env bash
# Profiles from the user's directories override the bundled ones, and the
# parsed-profile cache never serves a stale profile.
source "$(dirname "$0")/lib.sh"

ppn_of() { clean_env "$@" "$EZPZ_BIN" launch --dry-run --json -- true | sed -n 's/^  "ppn": \([0-9]*\),/\1/p'; }

mine="$scratch/mine"
mkdir -p "$mine"
printf 'launcher: hydra\ngpus_per_node: 3\n' > "$mine/local.yaml"
expect_eq "bundled local profile" "1" "$(ppn_of EZPZ_MACHINE=local)"
expect_eq "EZPZ_MACHINES_PATH overrides the bundled profile" "3" \
  "$(ppn_of EZPZ_MACHINE=local "EZPZ_MACHINES_PATH=$mine")"
printf 'launcher: hydra\ngpus_per_node: 5\n' > "$mine/local.yaml"
expect_eq "an edited profile is re-read, not served from the cache" "5" \
  "$(ppn_of EZPZ_MACHINE=local "EZPZ_MACHINES_PATH=$mine")"
test -s "$scratch/home/.cache/ezpz/profiles.cache" && pass || fail "no profile cache written"

mkdir -p "$scratch/home/.config/ezpz/machines"
printf 'launcher: hydra\ngpus_per_node: 7\n' > "$scratch/home/.config/ezpz/machines/local.yaml"
expect_eq "~/.config/ezpz/machines overrides the bundled profile" "7" "$(ppn_of EZPZ_MACHINE=local)"
expect_eq "EZPZ_MACHINES_PATH overrides ~/.config" "5" \
  "$(ppn_of EZPZ_MACHINE=local "EZPZ_MACHINES_PATH=$mine")"
rm "$scratch/home/.config/ezpz/machines/local.yaml"
expect_eq "a removed profile is no longer used" "1" "$(ppn_of EZPZ_MACHINE=local)"

printf "not a cache" > "$scratch/home/.cache/ezpz/profiles.cache"
expect_eq "a damaged cache is ignored" "1" "$(ppn_of EZPZ_MACHINE=local)"
finish
