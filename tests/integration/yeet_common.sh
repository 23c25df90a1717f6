# Helpers for the yeet tests (sourced after common.sh): a venv-like source
# tree, and the checks that a node's copy is that tree, moved.

# make_venv_tree DIR FILES: a tree shaped like a Python venv: FILES small
# modules in nested packages, bin/activate and a console script naming DIR,
# bin/python an absolute symlink out of the tree (to /bin/sh, so the script
# runs without Python), a relative symlink, a hard link, an empty directory,
# private modes, a name with spaces, and a file bigger than one chunk.
make_venv_tree() {
  local dir=$1 files=$2 i site
  site="$dir/lib/python3.11/site-packages"
  mkdir -p "$dir/bin" "$dir/include" "$site/empty-dir"
  for ((i = 0; i < files; i++)); do
    [ $((i % 50)) -eq 0 ] && mkdir -p "$site/pkg$((i / 50))/sub"
    printf 'VALUE = %d\n# %0*d\n' "$i" $((i % 700)) 0 >"$site/pkg$((i / 50))/sub/mod$i.py"
  done
  printf 'home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n' >"$dir/pyvenv.cfg"
  cat >"$dir/bin/activate" <<ACTIVATE
# This file must be used with "source bin/activate"
VIRTUAL_ENV="$dir"
export VIRTUAL_ENV
_OLD_VIRTUAL_PATH="\$PATH"
PATH="\$VIRTUAL_ENV/bin:\$PATH"
export PATH
ACTIVATE
  printf '#!%s/bin/python\necho "tool ran from $0"\n' "$dir" >"$dir/bin/tool"
  chmod 755 "$dir/bin/tool"
  ln -s /bin/sh "$dir/bin/python"
  ln -s python "$dir/bin/python3"
  ln "$site/pkg0/sub/mod1.py" "$site/pkg0/hardlinked.py"
  printf 'secret\n' >"$site/private.txt" && chmod 600 "$site/private.txt"
  mkdir -p "$site/locked" && chmod 700 "$site/locked"
  printf 'spaces\n' >"$site/a name with spaces.txt"
  head -c $((6 * 1024 * 1024)) /dev/urandom >"$site/big.bin"
}

# tree_listing DIR: every entry with its type, mode, size and link target,
# except the files yeet rewrites and its stamp.
tree_listing() {
  (cd "$1" && find . -path ./.ezpz-yeet.json -prune -o -printf '%p %y %m %s %l\n' | sort) |
    grep -v -e '^\./bin/activate ' -e '^\./bin/tool '
}

# expect_moved_copy NAME SRC DST: DST is SRC, byte for byte, with modes and
# links, except that the activate script and the console script name DST.
expect_moved_copy() {
  local name=$1 src=$2 dst=$3
  expect_eq "$name: same entries, types, modes, sizes, link targets" \
    "$(tree_listing "$src")" "$(tree_listing "$dst" 2>&1)"
  expect_true "$name: same bytes" diff -r --no-dereference -x activate -x tool -x .ezpz-yeet.json "$src" "$dst"
  expect_eq "$name: hard link kept" \
    "$(stat -c %i "$dst/lib/python3.11/site-packages/pkg0/sub/mod1.py" 2>&1)" \
    "$(stat -c %i "$dst/lib/python3.11/site-packages/pkg0/hardlinked.py" 2>&1)"
  expect_eq "$name: console script names DST" "#!$dst/bin/python" "$(head -n 1 "$dst/bin/tool" 2>&1)"
  expect_eq "$name: activates from DST" "$dst tool ran from $dst/bin/tool" \
    "$(env -i PATH=/usr/bin:/bin bash -c "source '$dst/bin/activate' && echo \"\$VIRTUAL_ENV\" \$(tool)" 2>&1)"
}

# staging_dirs ROOT: staging directories yeet left anywhere under ROOT.
staging_dirs() { find "$1" -name '.*.ezpz-yeet-*' 2>/dev/null; }
