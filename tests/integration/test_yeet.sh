#!/usr/bin/env bash
# ezpz yeet in a simulated four-node PBS job (Hydra fork, n01..n04 in
# /etc/hosts). Each "node" gets its own copy under $scratch/nodes/{host}, so
# one machine holds four node-local disks: the copies, the incremental
# re-runs, hostile tarballs, a full disk and a killed rank are all checked on
# every node.
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/yeet_common.sh"

require_mpiexec
start_fake_pbs_job 4
launch_env() { clean_env env -u MASTER_PORT "${pbs_env[@]}" "$@"; }
cd "$scratch/work" || exit 1  # where the failed-nodes file once went by default
failed_file="$scratch/run/yeet-failed-nodes-4242.pbs-sim.txt"  # EZPZ_RUN_DIR (lib.sh), the job
nodes=(n01 n02 n03 n04)
src="$scratch/src/venv"
make_venv_tree "$src" 2000
dst_pattern="$scratch/nodes/{host}/venv"
node_dst() { printf '%s/nodes/%s/%s' "$scratch" "$1" "${2:-venv}"; }
yeet() { local name=$1; shift; run_ezpz "$name" yeet "$@"; }

# --- the plan: one stager rank per node ----------------------------------------
yeet plan "$src" --dst "$dst_pattern" --dry-run --json
expect_eq "plan: exit status" 0 "$rc"
expect_eq "plan: one rank per node" 1 "$(json_number ppn "$out")"
expect_eq "plan: every node" 4 "$(json_number world_size "$out")"
expect_true "plan: runs the stager" grep -q 'ezpz-stager",$' <<<"$out"
expect_eq "plan: the failed nodes go to EZPZ_RUN_DIR, named by the job" "$failed_file" \
  "$(jq -r '.argv | .[index("--failed-file") + 1]' <<<"$out")"
run_ezpz plan-cache EZPZ_RUN_DIR= yeet "$src" --dst "$dst_pattern" --dry-run --json
expect_eq "plan without EZPZ_RUN_DIR: the failed nodes go to the cache" \
  "$scratch/home/.cache/ezpz/yeet/yeet-failed-nodes-4242.pbs-sim.txt" \
  "$(jq -r '.argv | .[index("--failed-file") + 1]' <<<"$out")"
# Before (issue 45): exit 2, "cannot choose where to write the failed nodes".
run_ezpz plan-nowhere EZPZ_RUN_DIR= HOME= yeet "$src" --dst "$dst_pattern" --dry-run --json
expect_eq "plan with neither EZPZ_RUN_DIR nor HOME: the failed nodes beside the run records" \
  "0 $PWD/.ezpz/yeet-failed-nodes-4242.pbs-sim.txt" \
  "$rc $(jq -r '.argv | .[index("--failed-file") + 1]' <<<"$out")"
rm -rf "$PWD/.ezpz"  # the dry run's hostfile, written there too

# --- first copy: every node, byte for byte, venv moved ------------------------
yeet first "$src" --dst "$dst_pattern"
expect_eq "first: exit status" 0 "$rc"
expect_match "first: summary" "on 4 nodes: 4 copied, 0 up to date, 0 failed" "$out"
source_bytes=$(find "$src" -type f -printf '%i %s\n' | sort -u | awk '{ n += $2 } END { print n }')
expect_match "first: every source byte read once" "read $source_bytes source bytes once" "$out"
for node in "${nodes[@]}"; do expect_moved_copy "first $node" "$src" "$(node_dst "$node")"; done
expect_eq "first: no staging directories left" "" "$(staging_dirs "$scratch/nodes")"
# {host} as a shell names the node: a line that can be pasted (it printed {host} itself).
expect_true "first: says how to use it, in words a shell takes" grep -qxF \
  "  deactivate 2>/dev/null; source \"$scratch/nodes/\$(hostname -s)/venv/bin/activate\"" <<<"$out"

# --- unchanged source: nothing moves -------------------------------------------
inode_before=$(stat -c %i "$(node_dst n02)")
yeet again "$src" --dst "$dst_pattern"
expect_eq "again: exit status" 0 "$rc"
expect_match "again: up to date" "0 copied, 4 up to date, 0 failed" "$out"
expect_match "again: nothing transferred" "nothing transferred" "$out"
expect_eq "again: the copy was not replaced" "$inode_before" "$(stat -c %i "$(node_dst n02)")"

# --- one file changed: a new copy replaces the old one --------------------------
changed="lib/python3.11/site-packages/pkg3/sub/mod170.py"
echo "CHANGED = True" >>"$src/$changed"
yeet changed "$src" --dst "$dst_pattern"
expect_eq "changed: exit status" 0 "$rc"
expect_match "changed: copied again" "4 copied, 0 up to date" "$out"
for node in "${nodes[@]}"; do
  expect_eq "changed: $node has the new file" "CHANGED = True" "$(tail -n 1 "$(node_dst "$node")/$changed")"
done
expect_moved_copy "changed n04" "$src" "$(node_dst n04)"
expect_eq "changed: old copies and staging gone" "venv" "$(ls -A "$scratch/nodes/n01")"

# --- one node lost its copy: only it is sent one, and the progress lines count
# the three that are up to date as done from the start. Read slowly (~7 s), so
# that a progress line (every 5 s in a log) shows up mid-transfer; in small
# chunks, so that one is handed on (and progress told) every ~60 ms, not only
# at the 4 MiB default's two or three boundaries. -----------------------------
rm -rf "$(node_dst n04)"
yeet one-lost "$src" --dst "$dst_pattern" --bwlimit $((source_bytes / 7)) --chunk-size 65536
expect_eq "one-lost: exit status" 0 "$rc"
expect_match "one-lost: only n04 copied" "1 copied, 3 up to date, 0 failed" "$out"
expect_moved_copy "one-lost n04" "$src" "$(node_dst n04)"
expect_match "one-lost: mid-transfer, the 3 up-to-date nodes are done" \
  '^ezpz yeet: [0-9.]+ [KMG]?i?B of [0-9.]+ [KMG]?i?B \([0-9]+%\), .*, nodes 3/4 done, ETA [0-9]+ s$' \
  "$(grep -m1 'nodes 3/4 done' <<<"$err")"
expect_match "one-lost: the last line has every node done" ', nodes 4/4 done$' \
  "$(grep '^ezpz yeet: .* done' <<<"$err" | tail -n 1)"

# --- a source whose name is not UTF-8: every node's stamp (JSON) holds it as U+FFFD ---------
latin1_src="$scratch/src/v"$'\xe9'"nv"
cp -a "$src" "$latin1_src"
yeet latin1 "$latin1_src" --dst "$scratch/nodes/{host}/latin1"
expect_eq "latin1 source: exit status" 0 "$rc"
expect_match "latin1 source: every node copied" "on 4 nodes: 4 copied, 0 up to date, 0 failed" "$out"
expect_eq "latin1 source: the stamp reads, the byte as U+FFFD" "$scratch/src/v"$'\xef\xbf\xbd'"nv" \
  "$(jq -r .source "$(node_dst n04 latin1)/.ezpz-yeet.json")"
rm -rf "$latin1_src" "$scratch"/nodes/*/latin1

# --- a directory ezpz did not make is never replaced, not even with --force ------
mkdir -p "$(node_dst n03 mine)" && echo keep >"$(node_dst n03 mine)/data"
foreign_message="ezpz yeet: n03: $(node_dst n03 mine): exists and was not made by ezpz yeet (no .ezpz-yeet.json); yeet replaces only its own copies, even with --force: remove it first"
yeet foreign "$src" --dst "$scratch/nodes/{host}/mine"
expect_eq "foreign: exit status" 1 "$rc"
expect_eq "foreign: message" "$foreign_message" "$err"
expect_eq "foreign: untouched" "keep" "$(cat "$(node_dst n03 mine)/data")"
expect_eq "foreign: nothing copied elsewhere" "" "$(ls "$(node_dst n01 mine)" 2>/dev/null)"
# The same DST spelt through "..": --force does not make it ezpz's.
yeet forced "$src" --dst "$scratch/nodes/{host}/x/../mine" --force
expect_eq "forced: exit status" 1 "$rc"
expect_eq "forced: message" "$foreign_message" "$err"
expect_eq "forced: untouched" "data keep" "$(ls "$(node_dst n03 mine)") $(cat "$(node_dst n03 mine)/data")"
expect_eq "forced: nothing copied elsewhere" "" "$(ls "$(node_dst n01 mine)" 2>/dev/null)"
# On ezpz's own copy, --force copies again even when it is up to date.
yeet force-current "$src" --dst "$dst_pattern" --force
expect_eq "force-current: exit status" 0 "$rc"
expect_match "force-current: copied again" "4 copied, 0 up to date, 0 failed" "$out"
expect_moved_copy "force-current n02" "$src" "$(node_dst n02)"

# --- a DST that holds the source on one node only (so only that node's stager
# can tell): refused there, nothing touched anywhere ----------------------------
mkdir -p "$scratch/hold/n02/env/lib" && echo mine >"$scratch/hold/n02/env/lib/a.py" &&
  echo sibling >"$scratch/hold/n02/sibling"
hold_before=$(find "$scratch/hold" -printf '%p %s\n' | sort)
yeet holds-source "$scratch/hold/n02/env" --dst "$scratch/hold/{host}" --force
expect_eq "holds-source: exit status" 1 "$rc"
expect_eq "holds-source: message" \
  "ezpz yeet: n02: $scratch/hold/n02: holds the source $scratch/hold/n02/env; replacing it would delete the source" \
  "$err"
expect_eq "holds-source: nothing written or removed on any node" "$hold_before" \
  "$(find "$scratch/hold" -printf '%p %s\n' | sort)"

# --- hostile tarballs: refused, nothing written outside DST ----------------------
evil="$scratch/evil" && mkdir -p "$evil/inner" "$evil/link-src" "$scratch/outside"
echo escaped >"$evil/escape"
tar -C "$evil/inner" -cPf "$evil/dotdot.tar" ../escape && rm "$evil/escape"
echo absolute >"$evil/absolute.txt"
tar -cPf "$evil/absolute.tar" "$evil/absolute.txt" 2>/dev/null && rm "$evil/absolute.txt"
ln -s "$scratch/outside" "$evil/link-src/link"
tar -C "$evil/link-src" -cf "$evil/through-link.tar" link
rm "$evil/link-src/link" && mkdir "$evil/link-src/link" && echo pwned >"$evil/link-src/link/pwned"
tar -C "$evil/link-src" -rf "$evil/through-link.tar" link/pwned
expect_refused() {
  local name=$1 tarball=$2 why=$3
  yeet "$name" "$tarball" --dst "$scratch/nodes/{host}/$name"
  expect_eq "$name: exit status" 1 "$rc"
  expect_match "$name: refused, naming the entry" "n0[1-4]: .*$why" "$err"
  expect_eq "$name: no copy, no staging on any node" "" \
    "$(ls -d "$scratch"/nodes/*/"$name" 2>/dev/null; staging_dirs "$scratch/nodes")"
}
expect_refused dotdot "$evil/dotdot.tar" "\.\./escape: Path contains '\.\.'"
expect_eq "dotdot: nothing escaped" "" "$(find "$scratch" -name escape)"
expect_refused absolute "$evil/absolute.tar" "absolute.txt: Path is absolute"
expect_eq "absolute: nothing written at the absolute path" "" "$(ls "$evil/absolute.txt" 2>/dev/null)"
expect_refused through-link "$evil/through-link.tar" "link/pwned: Cannot extract through symlink link/pwned"
expect_eq "through-link: nothing written through the link" "" "$(ls -A "$scratch/outside")"

# --- device nodes, FIFOs and sockets are refused; setuid bits dropped unless kept --
special="$scratch/special" && mkdir -p "$special/env/dev" "$special/env/bin"
echo 'print(1)' >"$special/env/bin/tool"
if mknod "$special/env/dev/mem" c 1 1 2>/dev/null; then
  chmod 666 "$special/env/dev/mem"
  tar -C "$special" -cf "$special/device.tar" env
  expect_refused device "$special/device.tar" \
    "env/dev/mem: is a character device; yeet copies only files, directories and symlinks"
  expect_eq "device: refused on every node" 4 \
    "$(grep -c ': env/dev/mem: is a character device' <<<"$err")"
  expect_eq "device: no device node anywhere under the nodes" "" "$(find "$scratch/nodes" -type c)"
  rm "$special/env/dev/mem"
else
  echo "note: cannot mknod here (not root); the device tarball case was not run"
fi
mkfifo "$special/env/dev/pipe"
yeet fifo "$special/env" --dst "$scratch/nodes/{host}/fifo"
expect_eq "fifo: exit status" 2 "$rc"
expect_eq "fifo: one line naming the entry" \
  "ezpz: error: $special/env/dev/pipe: is a FIFO; yeet copies only files, directories and symlinks" "$err"
expect_eq "fifo: no copy, no staging on any node" "" \
  "$(ls -d "$scratch"/nodes/*/fifo 2>/dev/null; staging_dirs "$scratch/nodes")"
rm "$special/env/dev/pipe"
chmod 4755 "$special/env/bin/tool"
tar -C "$special" -cf "$special/setuid.tar" env
yeet setuid "$special/setuid.tar" --dst "$scratch/nodes/{host}/setuid"
expect_eq "setuid: exit status" 0 "$rc"
expect_eq "setuid: the bit dropped on every node" "755 755 755 755" \
  "$(stat -c %a "$scratch"/nodes/n0{1,2,3,4}/setuid/bin/tool | xargs)"
yeet keep-setuid "$special/setuid.tar" --dst "$scratch/nodes/{host}/setuid" --keep-setuid
expect_eq "keep-setuid: exit status" 0 "$rc"
expect_match "keep-setuid: copied again, not up to date" "4 copied, 0 up to date" "$out"
expect_eq "keep-setuid: the bit kept on every node" "4755 4755 4755 4755" \
  "$(stat -c %a "$scratch"/nodes/n0{1,2,3,4}/setuid/bin/tool | xargs)"

# --- a tarball made the usual way becomes DST itself ------------------------------
tar -C "$scratch/src" -czf "$scratch/venv.tar.gz" venv
yeet tarball "$scratch/venv.tar.gz" --dst "$scratch/nodes/{host}/from-tarball"
expect_eq "tarball: exit status" 0 "$rc"
for node in "${nodes[@]}"; do expect_moved_copy "tarball $node" "$src" "$(node_dst "$node" from-tarball)"; done

# --- a conda env: every file its conda-meta records name now names DST ----------
conda_src="$scratch/src/a-conda-env-with-a-long-name"
mkdir -p "$conda_src/conda-meta" "$conda_src/etc/conda/activate.d" "$conda_src/lib" "$conda_src/bin"
placeholder=/opt/anaconda1anaconda2anaconda3
printf '%s\n' '{"name": "demo", "paths_data": {"paths_version": 1, "paths": [' \
  "{\"_path\": \"etc/conda/activate.d/demo.sh\", \"file_mode\": \"text\", \"prefix_placeholder\": \"$placeholder\"}," \
  "{\"_path\": \"lib/libdemo.so\", \"file_mode\": \"binary\", \"prefix_placeholder\": \"$placeholder\"}]}}" \
  >"$conda_src/conda-meta/demo-1.0-0.json"
echo "export DEMO_HOME=$conda_src/share" >"$conda_src/etc/conda/activate.d/demo.sh"
printf 'ELF\0%s/share\0end' "$conda_src" >"$conda_src/lib/libdemo.so"
printf '#!%s/bin/python\nprint(1)\n' "$conda_src" >"$conda_src/bin/tool" && chmod +x "$conda_src/bin/tool"
printf 'ELF' >"$conda_src/bin/python" && chmod +x "$conda_src/bin/python"
nuls_as_spaces() { tr '\0' ' ' <"$1" | tr -s ' '; }
yeet conda "$conda_src" --dst "$scratch/nodes/{host}/conda"
expect_eq "conda: exit status" 0 "$rc"
expect_true "conda: says how to use it, in words a shell takes" grep -qxF \
  "  conda deactivate; conda activate \"$scratch/nodes/\$(hostname -s)/conda\"" <<<"$out"
for node in "${nodes[@]}"; do
  dst=$(node_dst "$node" conda)
  expect_eq "conda $node: the activation hook" "export DEMO_HOME=$dst/share" \
    "$(cat "$dst/etc/conda/activate.d/demo.sh")"
  expect_eq "conda $node: the binary, NUL-padded to its length" \
    "ELF $dst/share end $(stat -c %s "$conda_src/lib/libdemo.so")" \
    "$(nuls_as_spaces "$dst/lib/libdemo.so") $(stat -c %s "$dst/lib/libdemo.so")"
  expect_eq "conda $node: the script's #!" "#!$dst/bin/python" "$(head -n 1 "$dst/bin/tool")"
done
# The same env packed by `tar -C`: the tarball's path says nothing of where the
# env was made; bin/tool's #! does.
tar -C "$(dirname "$conda_src")" -czf "$scratch/src/conda.tar.gz" "$(basename "$conda_src")"
yeet conda-tarball "$scratch/src/conda.tar.gz" --dst "$scratch/nodes/{host}/ct"
expect_eq "conda-tarball: exit status" 0 "$rc"
expect_eq "conda-tarball: no warning" "" "$(grep -F 'warning' <<<"$err")"
for node in "${nodes[@]}"; do
  dst=$(node_dst "$node" ct)
  expect_eq "conda-tarball $node: the activation hook" "export DEMO_HOME=$dst/share" \
    "$(cat "$dst/etc/conda/activate.d/demo.sh")"
  expect_eq "conda-tarball $node: the binary" "ELF $dst/share end" "$(nuls_as_spaces "$dst/lib/libdemo.so")"
  expect_eq "conda-tarball $node: the script's #!" "#!$dst/bin/python" "$(head -n 1 "$dst/bin/tool")"
done
# Without a script that names its Python, nothing says where it was made: said once.
mkdir -p "$scratch/src/no-python" && cp -a "$conda_src/conda-meta" "$conda_src/etc" "$scratch/src/no-python/"
tar -C "$scratch/src" -cf "$scratch/src/no-python.tar" no-python
yeet conda-unknown "$scratch/src/no-python.tar" --dst "$scratch/nodes/{host}/cu"
expect_eq "conda-unknown: exit status" 0 "$rc"
expect_eq "conda-unknown: the one warning" \
  "ezpz yeet: warning: n01: cannot tell where this conda env was made (no bin/activate or bin/ script names its Python): files that name that path are left as they were" \
  "$(grep -F 'warning' <<<"$err")"
expect_eq "conda-unknown: the hook as it was" "export DEMO_HOME=$conda_src/share" \
  "$(cat "$(node_dst n04 cu)/etc/conda/activate.d/demo.sh")"

long_name=a-destination-longer-than-the-conda-env-source
yeet conda-longer "$conda_src" --dst "$scratch/nodes/{host}/$long_name"
expect_eq "conda-longer: exit status" 0 "$rc"
n01_long=$(node_dst n01 "$long_name")
expect_eq "conda-longer: the binary that cannot take it is named once, for every node" \
  "ezpz yeet: warning: n01: 1 binary file keeps the old prefix $conda_src: the new one (${#n01_long} bytes) is longer than it (${#conda_src} bytes) and cannot be written over it; choose a --dst no longer than the source path" \
  "$(grep -F 'warning' <<<"$err")"
expect_eq "conda-longer: the binary left as it was" "$(nuls_as_spaces "$conda_src/lib/libdemo.so")" \
  "$(nuls_as_spaces "$(node_dst n03 "$long_name")/lib/libdemo.so")"
expect_eq "conda-longer: the hook still moved" "export DEMO_HOME=$(node_dst n02 "$long_name")/share" \
  "$(cat "$(node_dst n02 "$long_name")/etc/conda/activate.d/demo.sh")"

# --- a full disk on one node: nothing committed anywhere; or, with
# --min-success, the other nodes keep their copy and n03 is listed ---------------
mkdir -p "$scratch/nodes/n03/small"
if mount -t tmpfs -o size=2m tmpfs "$scratch/nodes/n03/small" 2>/dev/null; then
  on_exit umount -l "$scratch/nodes/n03/small"
  yeet full "$src" --dst "$scratch/nodes/{host}/small/venv"
  expect_eq "full: exit status" 1 "$rc"
  expect_match "full: names the node and the cause" \
    "ezpz yeet: n03: $scratch/nodes/n03/small/venv: .*No space left on device" "$err"
  expect_match "full: nothing changed" "nothing changed: 3 of 4 nodes ready, 4 required" "$err"
  expect_eq "full: no partial copy or staging on any node" "" \
    "$(find "$scratch"/nodes/*/small -mindepth 1 2>&1)"
  expect_eq "full: failed nodes listed" "n03" "$(cat "$failed_file" 2>&1)"
  expect_eq "full: nothing left in the current directory" "" "$(ls -A "$scratch/work")"
  yeet partial "$src" --dst "$scratch/nodes/{host}/small/venv" --min-success 3
  expect_eq "partial: exit status" 0 "$rc"
  expect_match "partial: summary" "3 copied, 0 up to date, 1 failed" "$out"
  expect_match "partial: the hint says how many nodes have it, not every node" \
    "To use it on 3 of 4 nodes \(the failed ones have no copy\):" "$out"
  expect_moved_copy "partial n01" "$src" "$(node_dst n01 small/venv)"
  expect_eq "partial: n03 holds nothing" "" "$(ls -A "$scratch/nodes/n03/small")"
  run_ezpz exclude launch --dry-run --json --exclude-file "$failed_file" -- true
  expect_eq "partial: the failed-nodes file excludes n03 from a launch" "n01 n02 n04" \
    "$(tr '\n' ' ' <"$(json_field hostfile "$out")" | sed 's/ $//')"
else
  echo "note: cannot mount a tmpfs here; the full-disk case was not run"
fi

# --- a stager rank killed mid-transfer: no copy and no staging anywhere -----------
stager_on() {  # the pid of the stager rank Hydra placed on node $1
  local pid
  for pid in $(pgrep -f 'ezpz-stager --source'); do
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "MPIR_CVAR_CH3_INTERFACE_HOSTNAME=$1" &&
      { echo "$pid"; return 0; }
  done
  return 1
}
launch_env "$timeout_bin" -k 5 50 "$EZPZ_BIN" yeet "$src" --dst "$scratch/nodes/{host}/killed" \
  --bwlimit 1M >"$scratch/killed.out" 2>"$scratch/killed.err" &
yeet_pid=$!
victim=""
wait_until 20 eval 'victim=$(stager_on n03) && [ -n "$(staging_dirs "$scratch/nodes/n03")" ]'
expect_true "killed: the n03 rank was found while copying" test -n "$victim"
killed_at=$(now_ms)
[ -n "$victim" ] && kill -KILL "$victim"
wait "$yeet_pid"
rc=$?
expect_true "killed: ezpz fails (status $rc)" test "$rc" -ne 0
expect_true "killed: within 10 s" test $(( $(now_ms) - killed_at )) -lt 10000
expect_eq "killed: no copy or staging on any node" "" \
  "$(ls -d "$scratch"/nodes/*/killed 2>/dev/null; staging_dirs "$scratch/nodes")"
expect_eq "killed: no stager left running" "" "$(pgrep -f "ezpz-stager --source $src" || true)"

finish
