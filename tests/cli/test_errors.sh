#!/usr/bin/env bash
# Every bad input: exactly one line on stderr, word for word, the right exit
# status, nothing on stdout and nothing written to the run directory.
source "$(dirname "$0")/lib.sh"

aurora_nodefile="$scratch/aurora.nodes"
printf 'x4102c5s2b0n0\nx4102c5s3b0n0\n' > "$aurora_nodefile"
: > "$scratch/empty.nodes"
bad_profiles="$scratch/bad-profiles"
mkdir -p "$bad_profiles"
printf 'launcher: pals\ngpus_per_node: four\n' > "$bad_profiles/broken.yaml"
printf 'launcher: pals\ngpus_per_nod: 4\n' > "$bad_profiles/typo.yaml"

# expect_error NAME STATUS MESSAGE -- ENV... -- ARGS...
expect_error() {
  local name=$1 status=$2 message=$3; shift 4
  local -a env_words=()
  while [ "$1" != "--" ]; do env_words+=("$1"); shift; done; shift
  rm -rf "$scratch/run"
  local out err code
  out=$(clean_env "${env_words[@]}" "$EZPZ_BIN" "$@" 2>"$scratch/stderr"); code=$?
  err=$(cat "$scratch/stderr")
  expect_eq "$name: exit status" "$status" "$code"
  expect_eq "$name: stderr" "ezpz: error: $message" "$err"
  expect_eq "$name: stdout" "" "$out"
  if [ -e "$scratch/run" ]; then fail "$name: wrote $(ls "$scratch/run")"; else pass; fi
}

aurora=(PBS_JOBID=1.pbs "PBS_NODEFILE=$aurora_nodefile" EZPZ_MACHINE=aurora)
# The same job for runs that get as far as launching: its nodefile does not list this host, so
# a launch warns first (tests/cli/test_job_lookup.sh checks that warning); errors only here.
aurora_run=("${aurora[@]}" EZPZ_LOG_LEVEL=error)
expect_error "missing nodefile" 2 "PBS_NODEFILE: $scratch/nope: No such file or directory" -- \
  PBS_JOBID=1.pbs "PBS_NODEFILE=$scratch/nope" -- launch -- true
expect_error "empty nodefile" 2 "PBS_NODEFILE $scratch/empty.nodes: no hosts in file" -- \
  PBS_JOBID=1.pbs "PBS_NODEFILE=$scratch/empty.nodes" -- launch -- true
expect_error "unreadable nodefile (a directory)" 2 "PBS_NODEFILE: $scratch: Is a directory" -- \
  PBS_JOBID=1.pbs "PBS_NODEFILE=$scratch" -- launch -- true
expect_error "PBS_JOBID without PBS_NODEFILE" 2 \
  "PBS_JOBID is set (1.pbs) but PBS_NODEFILE is not: run inside the PBS job, or set --scheduler local" -- \
  PBS_JOBID=1.pbs -- launch -- true
expect_error "unclosed bracket" 2 "hostlist \"nid[1-\": unclosed '['" -- \
  SLURM_JOB_ID=1 "SLURM_JOB_NODELIST=nid[1-" -- launch -- true
expect_error "backwards range" 2 'hostlist "nid[3-1]": range 3-1 runs backwards' -- \
  SLURM_JOB_ID=1 "SLURM_JOB_NODELIST=nid[3-1]" -- launch -- true
expect_error "letters in range" 2 'hostlist "nid[a-b]": "a-b" is not a number or range' -- \
  SLURM_JOB_ID=1 "SLURM_JOB_NODELIST=nid[a-b]" -- launch -- true
expect_error "-n 0" 2 "-n/--np must be at least 1, got 0" -- "${aurora[@]}" -- launch -n 0 -- true
expect_error "-n -1" 2 "-n/--np must be at least 1, got -1" -- "${aurora[@]}" -- launch -n -1 -- true
# torchrun's --nproc_per_node is one count for every host: 7 + 6 cannot be said (other launchers
# fill hosts in order, the last holding fewer).
expect_error "-n 13 on 2 hosts of 12, torchrun" 2 "-n 13 cannot be split evenly over 2 hosts" -- \
  "${aurora[@]}" -- launch --launcher torchrun -n 13 -- true
expect_error "-n 48 on 2 hosts of 12" 2 \
  "-n 48 is more than the 24 slots of 2 hosts x 12 (machine profile aurora); pass --ppn to oversubscribe" -- \
  "${aurora[@]}" -- launch -n 48 -- true
expect_error "-n not a number" 2 '--np: expected an integer, got "four"' -- -- launch -n four -- true
expect_error "--nhosts beyond the allocation" 2 "--nhosts 3 is more than the 2 hosts available" -- \
  "${aurora[@]}" -- launch --nhosts 3 -- true
expect_error "exclude everything" 2 \
  "--exclude leaves no hosts: all 2 hosts of the allocation are excluded" -- \
  "${aurora[@]}" -- launch --exclude x4102c5s2b0n0,x4102c5s3b0n0.hsn -- true
expect_error "missing exclude file" 2 "--exclude-file: $scratch/nope: No such file or directory" -- \
  -- launch --exclude-file "$scratch/nope" -- true
expect_error "missing hostfile" 2 "--hostfile: $scratch/nope: No such file or directory" -- \
  -- launch --hostfile "$scratch/nope" -- true
expect_error "unknown machine" 2 \
  'unknown machine "nope" (from --machine); known: aurora, frontier, generic-flux, generic-pbs, generic-slurm, local, perlmutter, polaris, sirius, sophia, sunspot' -- \
  -- launch --machine nope -- true
expect_error "unknown machine from env" 2 \
  'unknown machine "nope" (from EZPZ_MACHINE); known: aurora, frontier, generic-flux, generic-pbs, generic-slurm, local, perlmutter, polaris, sirius, sophia, sunspot' -- \
  EZPZ_MACHINE=nope -- launch -- true
# A profile that does not load stops only the launches that ask for it.
expect_error "malformed profile, named" 2 \
  "$bad_profiles/broken.yaml:2: gpus_per_node: expected an integer, got \"four\"" -- \
  "EZPZ_MACHINES_PATH=$bad_profiles" -- launch --machine broken -- true
expect_error "malformed profile, named by EZPZ_MACHINE" 2 \
  "$bad_profiles/broken.yaml:2: gpus_per_node: expected an integer, got \"four\"" -- \
  "EZPZ_MACHINES_PATH=$bad_profiles" EZPZ_MACHINE=broken -- launch --dry-run -- true
# A broken local.yaml of the user's, used because no profile names this host: its own error.
# Before (issue 45): 'the generic profile "local" for local is missing'.
broken_local="$scratch/broken-local"
mkdir -p "$broken_local"
printf 'launcher: hydra\ngpus_per_node: four\n' >"$broken_local/local.yaml"
expect_error "a broken local.yaml, used unasked" 2 \
  "$broken_local/local.yaml:2: gpus_per_node: expected an integer, got \"four\"" -- \
  "EZPZ_MACHINES_PATH=$broken_local" -- launch --dry-run -- true
rm "$bad_profiles/broken.yaml"
expect_error "misspelt profile key" 2 \
  "$bad_profiles/typo.yaml:2: gpus_per_nod: unknown key; did you mean \"gpus_per_node\"?" -- \
  "EZPZ_MACHINES_PATH=$bad_profiles" -- launch --machine typo -- true
expect_error "unknown scheduler" 2 '--scheduler: unknown scheduler "lsf"; expected pbs, slurm, flux or local' -- \
  -- launch --scheduler lsf -- true
# Flux (not installable here): its hosts come from `flux hostlist local`.
expect_error "--scheduler flux outside Flux" 2 \
  "FLUX_URI is not set: run inside a Flux instance (flux alloc, flux batch), or set --scheduler local" -- \
  -- launch --scheduler flux -- true
expect_error "Flux without flux on PATH" 2 \
  "FLUX_URI is set (local:///tmp/flux-x/local-0) but flux hostlist local failed: flux is not on PATH; run inside the Flux instance, or set --scheduler local" -- \
  FLUX_URI=local:///tmp/flux-x/local-0 -- launch -- true
mkdir -p "$scratch/flux-fails" && ln -sf "$(type -P false)" "$scratch/flux-fails/flux"
expect_error "Flux whose flux fails" 2 \
  "FLUX_URI is set (local:///tmp/flux-x/local-0) but flux hostlist local failed: it failed; run inside the Flux instance, or set --scheduler local" -- \
  FLUX_URI=local:///tmp/flux-x/local-0 "PATH=$scratch/flux-fails:$system_path" -- launch -- true
expect_error "Flux cannot leave the last host fewer ranks" 2 \
  "-n 3 cannot be split evenly over 2 ranks per host (--ppn)" -- \
  FLUX_URI=local:///tmp/flux-x/local-0 "PATH=$EZPZ_SRC/tests/golden/launch/flux-2x4/bin:$system_path" \
  -- launch --dry-run -n 3 --ppn 2 -- true
expect_error "unknown launcher" 2 \
  '--launcher: unknown launcher "jsrun"; expected one of pals, hydra, openmpi, srun, flux, torchrun, aprun' -- \
  -- launch --launcher jsrun -- true
expect_error "--env without =" 2 "--env FOO: expected NAME=VALUE" -- -- launch -x FOO -- true
expect_error "unknown option before the command" 2 \
  "launch: unknown option --bogus; put the command after --, and a launcher's own flag in --launcher-arg=--bogus" \
  -- -- launch --bogus python3
expect_error "no command" 2 "no command given: ezpz launch [options] -- COMMAND" -- -- launch -n 2
expect_error "--json without --dry-run" 2 "--json requires --dry-run" -- -- launch --json -- true
expect_error "bad NGPU_PER_HOST" 2 "NGPU_PER_HOST=lots: expected a positive integer" -- \
  NGPU_PER_HOST=lots -- launch -- true
expect_error "bad EZPZ_LOG_LEVEL" 2 "EZPZ_LOG_LEVEL=loud: expected debug, info, warn or error" -- \
  EZPZ_LOG_LEVEL=loud -- launch -- true
expect_error "bad MASTER_PORT" 2 "MASTER_PORT=http: expected a port number 1-65535" -- \
  MASTER_PORT=http -- launch -- true
# (The command by its path: with no PATH, a bare `true` would be refused first, as a
# command the ranks cannot find; tests/cli/test_options.sh.)
expect_error "missing launcher" 127 "mpiexec: launcher not found on PATH" -- \
  PATH=/nonexistent -- launch -n 1 -- /bin/true
expect_error "missing launcher writes no hostfile" 127 "mpiexec: launcher not found on PATH" -- \
  PATH=/nonexistent "${aurora_run[@]}" -- launch --exclude x4102c5s2b0n0 -- /bin/true

# Another MPI's launcher where the dialect needs its own: refused before anything runs or is
# written. The "MPICH" here is a script printing what Hydra's --version prints. (--cpu-bind none:
# Aurora's per-rank core list is one Open MPI cannot take, refused by the plan before this.)
wrong_mpi="$scratch/wrong-mpi"
mkdir -p "$wrong_mpi"
printf '#!/bin/sh\necho "HYDRA build details:"\necho "    Version: 4.0.2"\n' >"$wrong_mpi/mpirun"
chmod +x "$wrong_mpi/mpirun"
expect_error "MPICH's mpirun for Open MPI" 127 \
  "the openmpi launcher needs Open MPI's mpirun: $wrong_mpi/mpirun is MPICH Hydra 4.0.2 (install Open MPI or load its module, or name Open MPI's mpirun with --launcher-program PATH, or pass --launcher hydra)" -- \
  PATH="$wrong_mpi" "${aurora_run[@]}" -- launch --launcher ompi --cpu-bind none --exclude x4102c5s2b0n0 -- /bin/true
expect_error "--launcher-program names MPICH's for Open MPI" 127 \
  "the openmpi launcher needs Open MPI's mpirun: $wrong_mpi/mpirun (--launcher-program) is MPICH Hydra 4.0.2 (name Open MPI's mpirun instead, or pass --launcher hydra)" -- \
  -- launch --launcher openmpi --launcher-program "$wrong_mpi/mpirun" -- true
expect_error "--launcher-program not found" 127 "mpirun.nope: launcher not found on PATH" -- \
  PATH="$wrong_mpi" -- launch --launcher openmpi --launcher-program mpirun.nope -- /bin/true

# yeet: the source, the destination and its options, checked before any launch.
mkdir -p "$scratch/env" && : >"$scratch/notes.txt"
expect_error "yeet: nothing to stage" 2 \
  "nothing to stage: give SRC, or activate the environment (VIRTUAL_ENV or CONDA_PREFIX)" -- -- yeet
expect_error "yeet: missing source" 2 "$scratch/nope: no such file or directory" -- -- yeet "$scratch/nope"
expect_error "yeet: missing VIRTUAL_ENV" 2 "$scratch/gone: no such file or directory" -- \
  "VIRTUAL_ENV=$scratch/gone" -- yeet
expect_error "yeet: not a tarball" 2 \
  "$scratch/notes.txt: not a directory or a tarball (.tar, .tar.gz, .tgz, .tar.zst, .tar.xz, .tar.bz2)" -- \
  -- yeet "$scratch/notes.txt"
expect_error "yeet: SRC and --src" 2 "--src and SRC are mutually exclusive; pick one" -- \
  -- yeet "$scratch/env" --src "$scratch/env"
expect_error "yeet: relative --dst" 2 "--dst tmp/env: expected an absolute path" -- \
  -- yeet "$scratch/env" --dst tmp/env
expect_error "yeet: top-level --dst" 2 "--dst /tmp: refusing a top-level directory; name one inside it" -- \
  -- yeet "$scratch/env" --dst /tmp/
expect_error "yeet: --dst inside the source" 2 "--dst $scratch/env/copy: inside the source $scratch/env" -- \
  -- yeet "$scratch/env" --dst "$scratch/env/copy"
expect_error "yeet: --dst is the source" 2 "--dst $scratch/env: inside the source $scratch/env" -- \
  -- yeet "$scratch/env" --dst "$scratch/env"
# DST is judged by what it resolves to, not by its spelling: "..", symlinks.
mkdir -p "$scratch/p/src" && ln -s "$scratch/env" "$scratch/link-to-env" && ln -s / "$scratch/to-root"
expect_error "yeet: --dst the source's parent" 2 \
  "--dst $scratch/p: holds the source $scratch/p/src; replacing it would delete the source" -- \
  -- yeet "$scratch/p/src" --dst "$scratch/p" --force
expect_error "yeet: --dst above the source, spelt with .." 2 \
  "--dst $scratch/p/src/../.. ($scratch): holds the source $scratch/p/src; replacing it would delete the source" -- \
  -- yeet "$scratch/p/src" --dst "$scratch/p/src/../.." --force
expect_error "yeet: --dst inside the source through a symlink" 2 \
  "--dst $scratch/link-to-env/copy: inside the source $scratch/env" -- \
  -- yeet "$scratch/env" --dst "$scratch/link-to-env/copy"
expect_error "yeet: top-level --dst spelt with .." 2 \
  "--dst /tmp/../tmp (/tmp): refusing a top-level directory; name one inside it" -- \
  -- yeet "$scratch/env" --dst /tmp/../tmp --force --dry-run
expect_error "yeet: --dst that resolves to a top-level directory" 2 \
  "--dst $scratch/to-root/tmp: resolves to the top-level directory /tmp; name one inside it" -- \
  -- yeet "$scratch/env" --dst "$scratch/to-root/tmp" --force --dry-run
expect_error "yeet: --min-success 0" 2 "--min-success: expected at least 1 node, got 0" -- \
  -- yeet "$scratch/env" --min-success 0
expect_error "yeet: --min-success 2.5" 2 \
  "--min-success: expected a node count or a fraction in (0, 1], got \"2.5\"" -- \
  -- yeet "$scratch/env" --min-success 2.5
expect_error "yeet: no -n (one rank per node)" 2 \
  "yeet: -n and --ppn do not apply: one rank runs on each node (choose nodes with --nhosts, --exclude or --hostfile)" -- \
  -- yeet "$scratch/env" -n 4
# doctor checks one rank per node too (--deep): --ppn is refused, not ignored, without it.
expect_error "doctor: no --ppn, --deep or not" 2 \
  "doctor: -n and --ppn do not apply: one rank runs on each node (choose nodes with --nhosts, --exclude or --hostfile)" -- \
  -- doctor --ppn 3
mkdir -p "$scratch/bin" && cp "$EZPZ_BIN" "$scratch/bin/ezpz"  # a copy with no stager beside it
EZPZ_BIN="$scratch/bin/ezpz" expect_error "yeet: stager missing" 127 \
  "ezpz-stager not found in $scratch/bin/ezpz-stager or $scratch/bin/../libexec/ezpz/ezpz-stager: build it with MPI and libarchive (cmake -DEZPZ_WITH_STAGER=ON)" -- \
  -- yeet "$scratch/env"

# A hostile command is data: nothing runs it through a shell, even in a plan.
marker="$scratch/pwned"
out=$(clean_env "$EZPZ_BIN" launch --dry-run -n 1 -- echo "\$(touch $marker)" "\`touch $marker\`" 2>&1)
expect_eq "hostile words are quoted in the plan" \
  "'\$(touch $marker)' '\`touch $marker\`'" "$(printf '%s' "$out" | sed 's/.*ezpz-rankenv echo //')"
if [ -e "$marker" ]; then fail "a hostile word was executed"; else pass; fi

# launch supervision and run records: checked before anything starts or is recorded.
runs_env=(EZPZ_RUNS_DIR="$scratch/run/runs")
expect_error "spares: none left active" 2 \
  "--spares 2: the allocation has 2 hosts; at least one must stay active" -- \
  "${aurora_run[@]}" "${runs_env[@]}" -- launch --spares 2 -- true
expect_error "timeout: negative" 2 '--timeout: expected a number of seconds, 0 or more; got "-1"' -- \
  "${runs_env[@]}" -- launch --timeout -1 -- true
expect_error "idle timeout: not a number" 2 \
  '--idle-timeout: expected a number of seconds, 0 or more; got "1x"' -- \
  "${runs_env[@]}" -- launch --idle-timeout 1x -- true
expect_error "kill on bad exit: not a number" 2 \
  '--kill-on-bad-exit: expected a number of seconds, 0 or more, or off; got "soon"' -- \
  "${runs_env[@]}" -- launch --kill-on-bad-exit soon -- true
expect_error "retries: too many" 2 "--retries: Value 101 not in range 0 to 100" -- \
  "${runs_env[@]}" -- launch --retries 101 -- true
expect_error "runs show: no such run" 2 "runs: no run 2026 in $scratch/run/runs" -- \
  "${runs_env[@]}" -- runs show 2026
printf 'launcher: srun\nbad_node_patterns:\n  lost: "^lost node"\n' >"$bad_profiles/nogroup.yaml"
expect_error "bad-node pattern without a group" 2 \
  "$bad_profiles/nogroup.yaml:3: bad_node_patterns.lost: expected a capture group for the host" -- \
  EZPZ_MACHINES_PATH="$bad_profiles" "${runs_env[@]}" -- launch --machine nogroup -- true
rm "$bad_profiles/nogroup.yaml"

# Names that would be shell code in `export NAME=...` or the pasteable plan line.
name_rule="is not a variable name (letters, digits and _, not starting with a digit)"
expect_error "-x: a name with shell code (launch --dry-run)" 2 \
  "--env \"X;touch $scratch/PWNED;Y=1\": \"X;touch $scratch/PWNED;Y\" $name_rule" -- \
  -- launch --dry-run -x "X;touch $scratch/PWNED;Y=1" -- true
expect_error "-x: a name with shell code (env)" 2 \
  "--env \"X;touch $scratch/PWNED;Y=1\": \"X;touch $scratch/PWNED;Y\" $name_rule" -- \
  -- env -x "X;touch $scratch/PWNED;Y=1"
expect_error "-x: a name starting with a digit" 2 "--env \"1A=2\": \"1A\" $name_rule" -- -- env -x 1A=2
expect_error "submit: -x in a --launch-arg" 2 \
  "--launch-arg -x \"\$(id)=1\": \"\$(id)\" $name_rule" -- \
  -- submit --scheduler slurm --dry-run --launch-arg=-x --launch-arg='$(id)=1' -- true
expect_error "submit: --env= in a --launch-arg" 2 "--launch-arg -x \"A B=1\": \"A B\" $name_rule" -- \
  -- submit --scheduler slurm --dry-run "--launch-arg=--env=A B=1" -- true
expect_true "-x: nothing ran" test ! -e "$scratch/PWNED"

# Counts have a range, checked as the flags are read: an int must never wrap.
expect_error "-n past the most ranks" 2 "--np: expected at most 10000000, got 4294967297" -- \
  -- launch -n 4294967297 --dry-run -- true
expect_error "-n that overflows a long" 2 "--np: expected at most 10000000, got 99999999999999999999" -- \
  -- launch -n 99999999999999999999 --dry-run -- true
expect_error "--ppn past the most" 2 "--ppn: expected at most 4096, got 4097" -- \
  -- launch --ppn 4097 --dry-run -- true
expect_error "--nhosts past the most" 2 "--nhosts: expected at most 1000000, got 1000001" -- \
  -- launch --nhosts 1000001 --dry-run -- true
cpus=$(nproc)
expect_error "-n alone past what a local host holds" 2 \
  "-n $((8 * cpus + 1)) is more than this host can hold (8 per CPU x $cpus CPU$([ "$cpus" = 1 ] || echo s)); pass --ppn to oversubscribe" -- \
  -- launch -n $((8 * cpus + 1)) --dry-run -- true

# Host names that are not host names, from every source of hosts, with file:line.
printf 'n01\n\0\x01garbage\n' >"$scratch/binary.nodes"
expect_error "a binary nodefile" 2 \
  "PBS_NODEFILE $scratch/binary.nodes:2: \"\\x00\\x01garbage\" is not a host name: it holds \"\\x00\" (letters, digits, '-', '_' and '.' only)" -- \
  PBS_JOBID=1.pbs "PBS_NODEFILE=$scratch/binary.nodes" -- launch -- true
printf 'n01\n%s\n' "$(head -c 5000 /dev/zero | tr '\0' a)" >"$scratch/long.nodes"
expect_error "a 5,000-character host name" 2 \
  "--hostfile $scratch/long.nodes:2: \"$(head -c 40 /dev/zero | tr '\0' a)\"... (5000 characters) is not a host name: 5000 characters (at most 253)" -- \
  -- launch --hostfile "$scratch/long.nodes" -- true
# Every word of a host line, not only the host (issue 45: Hydra passed "user=" on to ssh).
printf 'n01\nn02 user=-F/path/evilcfg\n' >"$scratch/user.nodes"
expect_error "a hostfile word Hydra would hand to ssh" 2 \
  "--hostfile $scratch/user.nodes:2: \"user=-F/path/evilcfg\" is not a host's slot count (host, host:N, host slots=N, host max_slots=N, host N)" -- \
  -- launch --hostfile "$scratch/user.nodes" --dry-run -- true
printf 'n01 -x\n' >"$scratch/option.nodes"
expect_error "a nodefile word like an option" 2 \
  "PBS_NODEFILE $scratch/option.nodes:1: \"-x\" is not a host's slot count (host, host:N, host slots=N, host max_slots=N, host N)" -- \
  PBS_JOBID=1.pbs "PBS_NODEFILE=$scratch/option.nodes" -- launch --dry-run -- true
expect_error "--exclude-file too" 2 \
  "--exclude-file $scratch/user.nodes:2: \"user=-F/path/evilcfg\" is not a host's slot count (host, host:N, host slots=N, host max_slots=N, host N)" -- \
  -- launch --exclude-file "$scratch/user.nodes" --dry-run -- true
expect_error "a Slurm node list with shell code" 2 \
  "SLURM_JOB_NODELIST: \"n1;id\" is not a host name: it holds \";\" (letters, digits, '-', '_' and '.' only)" -- \
  SLURM_JOB_ID=1 "SLURM_JOB_NODELIST=n1;id" -- launch -- true

# Sizes.
expect_error "--record-floor: not a size" 2 '--record-floor: expected a size such as 512M or 4G; got "lots"' -- \
  "${runs_env[@]}" -- launch --record-floor lots -- true
expect_error "EZPZ_RECORD_FLOOR: not a size" 2 'EZPZ_RECORD_FLOOR: expected a size such as 512M or 4G; got "lots"' -- \
  "${runs_env[@]}" EZPZ_RECORD_FLOOR=lots -- launch -- true
expect_error "--record-limit: not a size" 2 '--record-limit: expected a size such as 512M or 4G; got "lots"' -- \
  "${runs_env[@]}" -- launch --record-limit lots -- true

# A path ezpz may not look into (EACCES): one line, not abort() (is_directory()'s throwing form).
# Only root can make one it cannot read; ezpz then runs as nobody, from a copy nobody may run.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  locked="$scratch/locked"
  mkdir -p "$locked" && chmod 700 "$locked"
  chmod 755 "$scratch"
  cp "$EZPZ_BIN" "$scratch/ezpz-copy" && chmod 755 "$scratch/ezpz-copy"
  err=$(cd / && setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH="$system_path" \
    "$scratch/ezpz-copy" test --compare "$locked/a" "$locked/b" 2>&1 >/dev/null)
  expect_eq "test --compare, a directory it may not read: exit status" 2 "$?"
  expect_eq "test --compare, a directory it may not read: one line" \
    "ezpz: error: --compare $locked/a: Permission denied" "$err"
else
  echo "skipped: the unreadable --compare path (needs root and setpriv)"
fi

finish
