#!/usr/bin/env bash
# The installed ezpz, as a user gets it: `cmake --install` into a fresh
# prefix, the tree moved elsewhere (everything is found relative to the
# binaries), then `ezpz --version`, `ezpz doctor`, `ezpz test` over 2 local
# ranks and a user's profile overriding the bundled one, all from the moved
# copy; examples/ built against the installed package config
# (find_package(ezpz), ezpz::runtime) and launched over 2 ranks; the .deb
# from CPack: its metadata and contents, installed into a scratch root
# (dependencies checked against this system's dpkg database) and run there.
# Uses the finished build in EZPZ_BUILD; builds nothing of ezpz itself.
source "$(dirname "$0")/../integration/common.sh"
: "${EZPZ_BUILD:?set EZPZ_BUILD to the build directory}"
require_mpiexec
if [ ! -x "$EZPZ_BUILD/ezpz-smoke" ]; then
  echo "skipped: ezpz-smoke was not built (configure with -DEZPZ_WITH_SMOKE=ON and libtorch)"
  exit 77
fi
step() { printf '== %s\n' "$*"; }

# --- cmake --install, then move the tree ------------------------------------
step "cmake --install into a fresh prefix"
stage="$scratch/stage/usr"
cmake --install "$EZPZ_BUILD" --prefix "$stage" >"$scratch/install.log" 2>&1 \
  || { cat "$scratch/install.log" >&2; fail "cmake --install"; finish; exit 1; }
expect_eq "nothing installed outside the prefix" "" \
  "$(sed -n 's/^-- \(Installing\|Up-to-date\): //p' "$scratch/install.log" | grep -v "^$stage/")"
lib_dir=$(cd "$stage" && ls -d lib*/cmake/ezpz 2>/dev/null | head -n 1)
lib_dir=${lib_dir%/cmake/ezpz}
for path in bin/ezpz libexec/ezpz/ezpz-rankenv libexec/ezpz/ezpz-smoke libexec/ezpz/ezpz-stager \
            libexec/ezpz/ezpz-probe libexec/ezpz/python/sitecustomize.py share/ezpz/machines/local.yaml share/ezpz/machines/aurora.yaml \
            share/ezpz/templates/pbs.sh share/ezpz/templates/slurm.sh \
            share/bash-completion/completions/ezpz share/zsh/vendor-completions/_ezpz \
            share/man/man1/ezpz.1 \
            include/ezpz/runtime/dist.hpp "$lib_dir/libezpz_runtime.a" \
            "$lib_dir/cmake/ezpz/ezpzConfig.cmake" "$lib_dir/cmake/ezpz/ezpzConfigVersion.cmake" \
            "$lib_dir/cmake/ezpz/ezpzTargets.cmake"; do
  expect_true "installed: $path" test -e "$stage/$path"
done
expect_eq "bin/ holds only ezpz" "ezpz" "$(ls "$stage/bin")"
# What starts on every launch and every rank has no dynamic loader to wait for, and is a PIE
# (EZPZ_STATIC; apps/CMakeLists.txt says why).
if [ "${EZPZ_STATIC:-}" = 1 ]; then
  for path in bin/ezpz libexec/ezpz/ezpz-rankenv; do
    expect_eq "linked static: $path asks for no program interpreter" "" \
      "$(readelf --program-headers "$stage/$path" | grep INTERP)"
    expect_match "linked static: $path is position independent" "DYN \(Position-Independent" \
      "$(readelf --file-header "$stage/$path" | grep Type:)"
  done
fi

step "move the installed tree"
prefix="$scratch/moved/opt/ezpz"
mkdir -p "$(dirname "$prefix")"
mv "$stage" "$prefix"
ezpz="$prefix/bin/ezpz"

# --- The moved copy ----------------------------------------------------------
step "ezpz --version"
version=$(clean_env "$ezpz" --version); rc=$?
echo "$version"
expect_eq "--version: exit status" 0 "$rc"
expect_eq "--version: the build's" "$("$EZPZ_BIN" --version)" "$version"

step "ezpz launch --dry-run: profile and helpers from the moved prefix"
plan=$(clean_env "$ezpz" -v launch --dry-run -- true 2>"$scratch/plan.err"); rc=$?
cat "$scratch/plan.err"; echo "$plan"
expect_eq "dry run: exit status" 0 "$rc"
expect_match "dry run: the bundled local profile, from the moved prefix" \
  "machine: local \(.*; $prefix/share/ezpz/machines/local.yaml\)" "$(cat "$scratch/plan.err")"
expect_match "dry run: ranks start through the installed ezpz-rankenv" \
  " $prefix/bin/\.\./libexec/ezpz/ezpz-rankenv true\$" "$plan"

step "a user's profile overrides the bundled one"
ppn_of() { clean_env "$@" "$ezpz" launch --dry-run --json -- true | sed -n 's/^  "ppn": \([0-9]*\),/\1/p'; }
mkdir -p "$scratch/home/.config/ezpz/machines"
printf 'launcher: hydra\ngpus_per_node: 3\n' > "$scratch/home/.config/ezpz/machines/local.yaml"
expect_eq "~/.config/ezpz/machines/local.yaml overrides the bundled local" "3" \
  "$(ppn_of EZPZ_MACHINE=local)"
rm "$scratch/home/.config/ezpz/machines/local.yaml"
expect_eq "the bundled local profile again" "1" "$(ppn_of EZPZ_MACHINE=local)"

# doctor and `ezpz test` from an installed copy: its bin/ezpz, the prefix its
# profiles and programs must come from, and a label for the checks.
check_doctor() {
  local ezpz=$1 prefix=$2 label=$3 rc doctor_json
  step "$label: ezpz doctor"
  clean_env "$ezpz" doctor; rc=$?
  expect_match "$label doctor: exit status 0, or 1 when a check is an error" "^[01]\$" "$rc"
  doctor_json=$(clean_env "$ezpz" doctor --json 2>/dev/null)
  check_of() { jq -r --arg name "$1" ".checks[] | select(.name == \$name) | \"\(.status) \(.message)\"" <<<"$doctor_json"; }
  expect_match "$label doctor: the profile from $prefix" \
    "^ok local from $prefix/share/ezpz/machines/local.yaml" "$(check_of profile)"
  expect_match "$label doctor: the installed trainer probed" "^ok libtorch [0-9.]+" "$(check_of trainer)"
}
check_test() {
  local ezpz=$1 label=$2 rc
  step "$label: ezpz test -n 2"
  mkdir -p "$scratch/work-$label"
  (cd "$scratch/work-$label" && clean_env env -u MASTER_PORT timeout 120 "$ezpz" test -n 2 --model debug \
    --output-dir "$scratch/smoke-$label") >"$scratch/test-$label.out" 2>"$scratch/test-$label.err"; rc=$?
  tail -n 1 "$scratch/test-$label.out"
  expect_eq "$label ezpz test: exit status" 0 "$rc"
  expect_match "$label ezpz test: verdict" "^ezpz test: PASS: 2 ranks, " "$(tail -n 1 "$scratch/test-$label.out")"
  [ "$rc" -eq 0 ] || tail -n 20 "$scratch/test-$label.err" >&2
}
check_doctor "$ezpz" "$prefix" moved
check_test "$ezpz" moved

# --- find_package(ezpz): examples/ against the moved prefix -----------------
step "examples/ against the installed package config"
if cmake -S "$EZPZ_SRC/examples" -B "$scratch/example" -DCMAKE_PREFIX_PATH="$prefix" \
     -DCMAKE_BUILD_TYPE=Release >"$scratch/example.log" 2>&1 &&
   cmake --build "$scratch/example" -j2 >>"$scratch/example.log" 2>&1; then
  pass
  expect_eq "example: ezpz found in the moved prefix" "$prefix/$lib_dir/cmake/ezpz" \
    "$(sed -n 's/^ezpz_DIR:PATH=//p' "$scratch/example/CMakeCache.txt")"
  out=$(clean_env env -u MASTER_PORT timeout 60 "$ezpz" launch -n 2 -- "$scratch/example/allreduce" \
        2>"$scratch/allreduce.err"); rc=$?
  echo "$out"
  expect_eq "example over 2 ranks: exit status" 0 "$rc"
  expect_eq "example over 2 ranks: every rank sums to 3" \
    "$(printf 'rank 0 of 2 (local 0 of 2) on cpu over gloo: sum 3, expected 3\nrank 1 of 2 (local 1 of 2) on cpu over gloo: sum 3, expected 3')" \
    "$(sort <<<"$out")"
  [ "$rc" -eq 0 ] || cat "$scratch/allreduce.err" >&2
else
  cat "$scratch/example.log" >&2
  fail "examples/ did not configure or build against $prefix"
fi

# --- The .deb ----------------------------------------------------------------
step "cpack -G DEB"
if ! command -v dpkg-deb >/dev/null || ! command -v dpkg-shlibdeps >/dev/null; then
  echo "skipped: the .deb checks need dpkg-deb and dpkg-shlibdeps (apt-get install dpkg-dev)"
  finish; exit $?
fi
cpack -G DEB --config "$EZPZ_BUILD/CPackConfig.cmake" -B "$scratch/deb" >"$scratch/cpack.log" 2>&1
rc=$?
expect_eq "cpack: exit status" 0 "$rc"
if [ "$rc" -ne 0 ]; then
  cat "$scratch/cpack.log" >&2
  tail -n 30 "$scratch"/deb/_CPack_Packages/*/DEB/PreinstallOutput.log >&2 2>/dev/null
fi
deb=$(ls "$scratch"/deb/ezpz_*.deb 2>/dev/null | head -n 1)
expect_true "cpack: a .deb named ezpz_VERSION_ARCH.deb" test -f "$deb"
dpkg-deb -f "$deb"
field() { dpkg-deb -f "$deb" "$1"; }
expect_eq "deb: package name" "ezpz" "$(field Package)"
expect_eq "deb: version" "$("$EZPZ_BIN" --version | sed 's/^ezpz \([^ ]*\) .*/\1/')" "$(field Version)"
expect_eq "deb: architecture" "$(dpkg --print-architecture)" "$(field Architecture)"
for dep in mpich libtorch libarchive libmpich libc6; do
  expect_match "deb: depends on $dep" "(^|, )$dep[^,]*( \(|,|\$)" "$(field Depends)"
done
expect_match "deb: a maintainer" ".+<.+>" "$(field Maintainer)"
expect_match "deb: a description" "distributed PyTorch" "$(field Description)"
contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
for path in ./usr/bin/ezpz ./usr/libexec/ezpz/ezpz-rankenv ./usr/libexec/ezpz/ezpz-smoke \
            ./usr/libexec/ezpz/ezpz-stager ./usr/libexec/ezpz/ezpz-probe ./usr/libexec/ezpz/python/sitecustomize.py \
            ./usr/share/ezpz/machines/aurora.yaml ./usr/share/ezpz/templates/slurm.sh \
            ./usr/share/bash-completion/completions/ezpz ./usr/share/zsh/vendor-completions/_ezpz \
            ./usr/share/man/man1/ezpz.1 \
            ./usr/include/ezpz/runtime/dist.hpp ./usr/$lib_dir/cmake/ezpz/ezpzConfig.cmake; do
  expect_true "deb contains $path" grep -qxF "$path" <<<"$contents"
done
expect_eq "deb: nothing outside /usr" "" "$(grep -v '^\./usr/\|^\./$' <<<"$contents")"

step "install the .deb into a scratch root"
root="$scratch/root"
mkdir -p "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/info"
cp /var/lib/dpkg/status "$root/var/lib/dpkg/status"  # this system's packages satisfy Depends
if dpkg --root="$root" --log=/dev/null --force-not-root --force-script-chrootless -i "$deb" \
     >"$scratch/dpkg.log" 2>&1; then
  pass
  expect_match "dpkg: ezpz installed" "^ii +ezpz +" \
    "$(dpkg --root="$root" -l ezpz 2>/dev/null | grep '^ii')"
else
  cat "$scratch/dpkg.log" >&2
  fail "dpkg --root -i $deb (dependencies unmet here?)"
  dpkg -x "$deb" "$root"  # still check what it holds
fi
version=$(clean_env "$root/usr/bin/ezpz" --version); rc=$?
echo "$version"
expect_eq "deb: ezpz --version from the root" "0 $("$EZPZ_BIN" --version)" "$rc $version"
clean_env "$root/usr/bin/ezpz" -v launch --dry-run -- true 2>"$scratch/deb-plan.err" >/dev/null
expect_match "deb: the packaged profiles, found from the root" \
  "machine: local \(.*; $root/usr/share/ezpz/machines/local.yaml\)" "$(cat "$scratch/deb-plan.err")"
check_doctor "$root/usr/bin/ezpz" "$root/usr" deb
check_test "$root/usr/bin/ezpz" deb
finish
