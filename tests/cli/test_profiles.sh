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

# --- Issue 45: nothing another user could have written is used -------------------------------
# A cache whose bytes were changed: a variable's name turned into shell code, the same length.
# Before: `eval "$(ezpz env)"` ran it.
cache="$scratch/home/.cache/ezpz/profiles.cache"
evil="$scratch/evil"
mkdir -p "$evil"
hostile="X;touch $scratch/pwned;"
name=$(printf 'A%.0s' $(seq ${#hostile}))
printf 'launcher: hydra\nenv:\n  %s: "1"\n' "$name" >"$evil/local.yaml"
env_log() { clean_env EZPZ_MACHINE=local "EZPZ_MACHINES_PATH=$evil" "$EZPZ_BIN" env -v 2>&1 >/dev/null | grep -e '^ezpz: machine profiles: ' -e 'cache: not read'; }
env_log >/dev/null
expect_true "the cache holds the variable" grep -q "$name" "$cache"
python3 -c 'import sys; p, a, b = sys.argv[1:]; d = open(p, "rb").read(); open(p, "wb").write(d.replace(a.encode(), b.encode()))' \
  "$cache" "$name" "$hostile"
expect_true "the cache now holds the code" grep -qF "$hostile" "$cache"
( eval "$(clean_env EZPZ_MACHINE=local "EZPZ_MACHINES_PATH=$evil" "$EZPZ_BIN" env -v 2>"$scratch/changed.err")" )
expect_eq "a changed cache: eval \"\$(ezpz env)\" ran nothing" "no" "$(test -e "$scratch/pwned" && echo yes || echo no)"
expect_match "a changed cache: missed, the profiles parsed again" "machine profiles: parsed" \
  "$(cat "$scratch/changed.err")"
# A good cache owned by another user (nobody), or in a directory others can write: not read.
env_log >/dev/null
expect_match "the cache is read when it is the user's" "from the cache" "$(env_log)"
chown nobody "$cache"
expect_eq "another user's cache: not read, said under -v" \
  "ezpz: $cache: not read: another user could have written it (owner, mode or directory)" \
  "$(env_log | head -n 1)"
chown root "$cache"
chmod 0777 "$(dirname "$cache")"
expect_match "a cache in a directory anyone can write: not read" "not read" "$(env_log)"
chmod 0700 "$(dirname "$cache")"

# A profile, or its directory, that anyone can write is refused, naming it and the fix; doctor
# says so. Before: a 0666 profile in a 0777 directory chose the launcher and LD_PRELOAD.
open="$scratch/open"
mkdir -p "$open"
printf 'launcher: hydra\nlauncher_program: /bin/false\nenv: {LD_PRELOAD: /tmp/x.so}\n' >"$open/box.yaml"
chmod 0666 "$open/box.yaml"
launch_box() { clean_env EZPZ_MACHINES_PATH="$open" "$EZPZ_BIN" launch --machine box --dry-run -- true; }
out=$(launch_box 2>&1)
expect_eq "a profile anyone can write: exit status" 2 "$(launch_box >/dev/null 2>&1; echo $?)"
expect_eq "a profile anyone can write: refused, with the fix" \
  "ezpz: error: $open/box.yaml: anyone can write it (mode 0666): chmod o-w $open/box.yaml" "$out"
chmod 0644 "$open/box.yaml"
chmod 0777 "$open"
expect_eq "a directory anyone can write: refused, with the fix" \
  "ezpz: error: $open/box.yaml: anyone can write its directory (mode 0777): chmod o-w $open" \
  "$(launch_box 2>&1)"
expect_match "doctor reports it" "anyone can write its directory" \
  "$(clean_env EZPZ_MACHINES_PATH="$open" "$EZPZ_BIN" doctor 2>&1)"
chmod 0755 "$open"
chown nobody "$open/box.yaml"
expect_eq "another user's profile: refused" \
  "ezpz: error: $open/box.yaml: owned by uid $(id -u nobody), not by you or root" "$(launch_box 2>&1)"
chown root "$open/box.yaml"
expect_match "the same profile, the user's own and closed: used" "/bin/false" "$(launch_box 2>&1)"
# The bundled profiles beside the binary are as trusted as the binary: a project's shared
# install, owned by its administrator, works for every user of it.
mkdir -p "$scratch/install/bin" "$scratch/install/share/ezpz"
cp "$EZPZ_BIN" "$scratch/install/bin/"
cp -r "$EZPZ_SRC/machines" "$scratch/install/share/ezpz/machines"
chown -R nobody "$scratch/install/share"
expect_eq "an install another user owns: its profiles load" "polaris" \
  "$(clean_env "$scratch/install/bin/ezpz" machines list --names | grep -x polaris)"
# A profile of no machine's name (it would reach completion scripts): listed nowhere.
touch "$open/\$(touch \${IFS}x).yaml"
expect_eq "a file named like code: not among the names" "box" \
  "$(clean_env EZPZ_MACHINES_PATH="$open" "$EZPZ_BIN" machines list --names | grep -e box -e touch)"
# A profile too large to be one: refused before it is read.
head -c 2000000 /dev/zero | tr '\0' '#' >"$open/huge.yaml"
expect_eq "a 2 MB profile: refused" \
  "ezpz: error: $open/huge.yaml: 2000000 bytes, over the 1048576 a profile may hold" \
  "$(clean_env EZPZ_MACHINES_PATH="$open" "$EZPZ_BIN" launch --machine huge --dry-run -- true 2>&1)"
finish
