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

# Files left alone for 2 s key the cache by their stat fields: a launch then reads none of them.
# An edit moves ctime (which nobody can set back), so it misses however small and however
# late it comes.
profiles_log() { clean_env EZPZ_MACHINE=local "EZPZ_MACHINES_PATH=$mine" "$EZPZ_BIN" launch -v \
  --dry-run -- true 2>&1 >/dev/null | grep '^ezpz: machine profiles: '; }
sleep 2.1
expect_eq "settled files: parsed once, keyed by stat" \
  "ezpz: machine profiles: parsed (no cache keyed by the files' stat fields)" "$(profiles_log)"
expect_eq "settled files: then served from the cache" \
  "ezpz: machine profiles: from the cache (keyed by the files' stat fields)" "$(profiles_log)"
printf 'launcher: hydra\ngpus_per_node: 6\n' > "$mine/local.yaml"  # the same size
expect_eq "a file just edited is keyed by its text" \
  "ezpz: machine profiles: parsed (no cache keyed by the files' texts)" "$(profiles_log)"
sleep 2.1
expect_eq "an edit of the same size is re-read once settled" "6" \
  "$(ppn_of EZPZ_MACHINE=local "EZPZ_MACHINES_PATH=$mine")"

printf "not a cache" > "$scratch/home/.cache/ezpz/profiles.cache"
expect_eq "a damaged cache is ignored" "1" "$(ppn_of EZPZ_MACHINE=local)"
finish
