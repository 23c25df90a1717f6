#!/usr/bin/env bash
# `ezpz doctor` as a user runs it, with no scheduler: the report (text and
# --json, read back with jq), colours only on a terminal and never with
# NO_COLOR, exit statuses, and every error path's message word for word:
# broken profiles (file:line), a missing or broken trainer, a missing or wrong
# launcher, a bad nodefile, a missing venv. Secrets never reach the output.
source "$(dirname "$0")/lib.sh"

if ! command -v jq >/dev/null; then
  fail "jq is not installed (scripts/setup installs it)"
  finish
  exit 1
fi

host=$(hostname)
smoke="$(dirname "$EZPZ_BIN")/ezpz-smoke"

# doctor NAME [VAR=VALUE...] [-- ARGS...]: runs `ezpz doctor ARGS` in a clean
# environment plus the VARs; stdout in $out, stderr in $err, status in $rc.
doctor() {
  local name=$1; shift
  local -a vars=() args=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  args=("$@")
  clean_env "${vars[@]}" "${bin:-$EZPZ_BIN}" doctor "${args[@]}" >"$scratch/$name.out" 2>"$scratch/$name.err"
  rc=$?
  out=$(cat "$scratch/$name.out")
  err=$(cat "$scratch/$name.err")
}
# expect_match NAME EXTENDED-REGEX ACTUAL
expect_match() {
  if [[ $3 =~ $2 ]]; then pass; else
    fail "$1"; printf '  expected to match: %s\n  actual: %s\n' "$2" "$3" >&2
  fi
}
# check_of NAME FIELD: FIELD (status, message, remedy) of check NAME in $out (JSON).
check_of() { jq -r --arg name "$1" ".checks[] | select(.name == \$name) | .$2" <<<"$out"; }

# --- No scheduler, --json ---------------------------------------------------------
doctor plain-json -- --json
expect_eq "no scheduler: exit 0" 0 "$rc"
expect_eq "no scheduler: nothing on stderr" "" "$err"
expect_eq "--json: the checks, in order" \
  "scheduler allocation profile launcher gpus libraries trainer storage limits port python torch modules tracking stacks" \
  "$(jq -r '[.checks[].name] | join(" ")' <<<"$out")"
expect_eq "--json: every check has a status, message and remedy" "15" \
  "$(jq '[.checks[] | select((.status | test("^(ok|warn|error)$")) and (.message | length > 0) and has("remedy"))] | length' <<<"$out")"
expect_eq "--json: no errors" "" "$(jq -r '.checks[] | select(.status == "error") | .name' <<<"$out")"
expect_eq "scheduler: none" "ok local: this host alone (no PBS or Slurm job variables are set)" \
  "$(check_of scheduler status) $(check_of scheduler message)"
expect_eq "scheduler: no remedy when ok" "null" "$(check_of scheduler remedy)"
if [ "$(check_of allocation status)" == ok ]; then
  expect_eq "allocation: this host, resolved" "1 host from this host: $host; it resolves" \
    "$(check_of allocation message)"
else
  expect_eq "allocation: this host, unresolved (Gloo warning)" \
    "warn 1 host from this host: $host; 1 of 1 do not resolve: $host" \
    "$(check_of allocation status) $(check_of allocation message)"
fi
expect_eq "profile: the bundled local profile" \
  "ok local from $EZPZ_SRC/machines/local.yaml (no hostname matched; generic profile for local)" \
  "$(check_of profile status) $(check_of profile message)"
# The first of Hydra's names that is MPICH's (mpiexec may be Open MPI's: Debian's alternatives).
hydra=$(for name in mpiexec mpiexec.hydra mpiexec.mpich; do
  path=$(PATH=$system_path command -v "$name") &&
    "$path" --version 2>/dev/null | grep -q "HYDRA build details" && echo "$path" && break
done)
expect_eq "launcher: MPICH's mpiexec" \
  "ok $hydra: MPICH Hydra $("$hydra" --version | sed -n 's/^ *Version: *//p'), the hydra launcher of profile local" \
  "$(check_of launcher status) $(check_of launcher message)"
if [ -x "$smoke" ]; then
  expect_eq "trainer: ezpz-smoke --probe" "ok libtorch $(jq -r .libtorch < <("$smoke" --probe)): cpu; backends gloo; default cpu with gloo" \
    "$(check_of trainer status) $(check_of trainer message)"
else
  expect_eq "trainer: not built" \
    "warn ezpz-smoke not found in $smoke or $(dirname "$EZPZ_BIN")/../libexec/ezpz/ezpz-smoke: build it with libtorch (cmake -DEZPZ_WITH_SMOKE=ON)" \
    "$(check_of trainer status) $(check_of trainer message)"
fi
expect_eq "port: MASTER_PORT=29500 (lib.sh) is free" "ok MASTER_PORT=29500 is free on this host" \
  "$(check_of port status) $(check_of port message)"
expect_eq "context: who, where, which machine and job" "$host local none (local)" \
  "$(jq -r '"\(.context.host) \(.context.machine) \(.context.job)"' <<<"$out")"
expect_eq "context: ezpz's version" "$("$EZPZ_BIN" --version)" "ezpz $(jq -r .context.ezpz <<<"$out")"

# --- Text: aligned, and colour only on a terminal -----------------------------------
doctor plain-text
expect_eq "text: exit 0" 0 "$rc"
expect_eq "text: the context block first" "ezpz doctor
  user      $(id -un)
  host      $host" "$(head -3 <<<"$out")"
expect_eq "text: one line per check, the name in one column" \
  "scheduler allocation profile launcher gpus libraries trainer storage limits port python torch modules tracking stacks" \
  "$(grep -E '^  (ok   |WARN |ERROR)  ' <<<"$out" | cut -c10-20 | xargs)"
expect_eq "text: the summary line" "15 checks" "$(tail -1 <<<"$out" | cut -d: -f1)"
expect_eq "text: no colour when stdout is not a terminal" "0" "$(grep -c $'\033' <<<"$out")"
expect_eq "--color always: colour in a pipe, NO_COLOR or not" "1" \
  "$(clean_env NO_COLOR=1 "$EZPZ_BIN" --color always doctor | grep -c $'^  \033\\[32mok   \033\\[0m  scheduler ')"
expect_eq "--color always: ezpz's error word on stderr too" \
  $'ezpz: \033[1;31merror:\033[0m unknown machine "nosuch" (from --machine)' \
  "$(clean_env "$EZPZ_BIN" launch --color always --machine nosuch --dry-run -- true 2>&1 >/dev/null | sed 's/; known:.*//')"
expect_eq "--color: a word it does not know" "ezpz: error: --color: yes not in {auto,always,never}" \
  "$(clean_env "$EZPZ_BIN" --color yes doctor 2>&1 >/dev/null)"
if script -qc true /dev/null >/dev/null 2>&1; then
  on_tty() { clean_env "$@" script -qec "$EZPZ_BIN doctor" /dev/null; }
  expect_eq "terminal: coloured status words" "1" \
    "$(on_tty | grep -c $'^  \033\\[32mok   \033\\[0m  scheduler ')"
  expect_eq "terminal with NO_COLOR: none" "0" "$(on_tty NO_COLOR=1 | grep -c $'\033')"
  expect_eq "terminal with TERM=dumb: none" "0" "$(on_tty TERM=dumb | grep -c $'\033')"
  on_tty_never() { clean_env script -qec "$EZPZ_BIN doctor --color never" /dev/null; }
  expect_eq "terminal with --color never: none" "0" "$(on_tty_never | grep -c $'\033')"
else
  fail "script(1) from bsdutils is needed to run doctor on a terminal"
fi

# --- Secrets: named, never shown ---------------------------------------------------
doctor secrets WANDB_API_KEY=s3cr3t-wandb HF_TOKEN=s3cr3t-hf -- --json
expect_eq "tracking: the key is named" \
  "ok W&B: WANDB_API_KEY is set (value not shown); also set: HF_TOKEN" \
  "$(check_of tracking status) $(check_of tracking message)"
doctor secrets-text WANDB_API_KEY=s3cr3t-wandb HF_TOKEN=s3cr3t-hf
expect_eq "secrets: not in the JSON or the text" "0 0" \
  "$(grep -c s3cr3t "$scratch/secrets.out") $(grep -c s3cr3t "$scratch/secrets-text.out")"

# --- GPU placement on this node: Polaris's profile, a stand-in nvidia-smi listing 4 GPUs ------
gpubin="$scratch/gpubin"
mkdir -p "$gpubin"
cat >"$gpubin/nvidia-smi" <<'SH'
#!/bin/sh
[ "$1" = -L ] || exit 2
for i in 0 1 2 3; do echo "GPU $i: NVIDIA A100-SXM4-40GB (UUID: GPU-$i)"; done
SH
chmod +x "$gpubin/nvidia-smi"
polaris_ranks="1 GPU per rank from machine profile polaris, in order 3,2,1,0 (ezpz-rankenv sets CUDA_VISIBLE_DEVICES): local rank 0: GPU 3, cores 0-7; 1: GPU 2, cores 8-15; 2: GPU 1, cores 16-23; 3: GPU 0, cores 24-31"
doctor gpus-polaris EZPZ_MACHINE=polaris "PATH=$gpubin:$system_path"
expect_eq "gpus: Polaris's placement, each local rank's GPU and cores" \
  "  ok     gpus        4 GPUs found here, profile polaris has 4; 4 ranks per host (machine profile polaris); $polaris_ranks" \
  "$(grep '  gpus  ' <<<"$out")"
doctor gpus-polaris-none EZPZ_MACHINE=polaris
expect_eq "gpus: no GPU found where Polaris's profile has 4" \
  "  WARN   gpus        only 0 of profile polaris's 4 GPUs found here; 4 ranks per host (machine profile polaris); $polaris_ranks
                     -> run ezpz doctor on a compute node of the job; check the driver (nvidia-smi, rocm-smi, xpu-smi)" \
  "$(grep -A1 '  gpus  ' <<<"$out")"
doctor gpus-polaris-mask EZPZ_MACHINE=polaris "PATH=$gpubin:$system_path" CUDA_VISIBLE_DEVICES=1
expect_eq "gpus: a user's mask that leaves ranks without a GPU" \
  "  WARN   gpus        4 GPUs found here, profile polaris has 4; 4 ranks per host (machine profile polaris): 4 ranks per host at 1 GPU each need 4 GPUs, but CUDA_VISIBLE_DEVICES=1 has 1; pass --no-gpu-bind to leave devices alone
                     -> set CUDA_VISIBLE_DEVICES to a device for every rank, run fewer ranks per host (--ppn), or unset it" \
  "$(grep -A1 '  gpus  ' <<<"$out")"
doctor gpus-polaris-mask2 EZPZ_MACHINE=polaris "PATH=$gpubin:$system_path" CUDA_VISIBLE_DEVICES=3,1 -- --json
expect_eq "gpus: within a user's mask of 2, two ranks share each GPU" \
  "ok 4 GPUs found here, profile polaris has 4; 4 ranks per host (machine profile polaris); 2 ranks per GPU from CUDA_VISIBLE_DEVICES=3,1, in order 3,1 (ezpz-rankenv sets CUDA_VISIBLE_DEVICES): local rank 0: GPU 3, cores 0-7; 1: GPU 3, cores 8-15; 2: GPU 1, cores 16-23; 3: GPU 1, cores 24-31" \
  "$(check_of gpus status) $(check_of gpus message)"
expect_eq "gpus: the placement is ezpz launch's" \
  "3 3 1 1" \
  "$(clean_env EZPZ_MACHINE=polaris "PATH=$gpubin:$system_path" CUDA_VISIBLE_DEVICES=3,1 "$EZPZ_BIN" launch --dry-run --json -- true | jq -r '[.local_ranks[].devices[]] | join(" ")')"

# --- Libraries Polaris's documentation puts on LD_LIBRARY_PATH ----------------------------
expect_eq "libraries: Polaris's NCCL plugin not on LD_LIBRARY_PATH" \
  "  WARN   libraries   not in any LD_LIBRARY_PATH directory: libnccl-net.so (profile polaris has it from /soft/libraries/aws-ofi-nccl/v1.9.1-aws/lib)
                     -> export LD_LIBRARY_PATH=/soft/libraries/aws-ofi-nccl/v1.9.1-aws/lib:\$LD_LIBRARY_PATH (the profile says why)" \
  "$(grep -A1 '  libraries  ' "$scratch/gpus-polaris.out")"
mkdir -p "$scratch/ofi/lib"
: >"$scratch/ofi/lib/libnccl-net.so"
doctor libraries-polaris EZPZ_MACHINE=polaris "LD_LIBRARY_PATH=$scratch/nope::$scratch/ofi/lib"
expect_eq "libraries: found in a directory of LD_LIBRARY_PATH" \
  "  ok     libraries   libnccl-net.so in $scratch/ofi/lib" "$(grep '  libraries  ' <<<"$out")"

# --- Broken profile files: reported with file:line ---------------------------------
bad="$scratch/bad-profiles"
mkdir -p "$bad"
printf 'launcher: pals\ngpus_per_node: four\n' >"$bad/broken.yaml"
doctor broken-profile "EZPZ_MACHINES_PATH=$bad" -- --json
expect_eq "broken profile: exit 1" 1 "$rc"
expect_eq "broken profile: file:line" \
  "error 1 profile file did not load: $bad/broken.yaml:2: gpus_per_node: expected an integer, got \"four\"" \
  "$(check_of profile status) $(check_of profile message)"
expect_eq "broken profile: remedy" \
  "fix or remove the file: ezpz launch stops at a profile that does not load" "$(check_of profile remedy)"
expect_eq "broken profile: the other checks still ran" "15" "$(jq '.checks | length' <<<"$out")"
doctor broken-profile-text "EZPZ_MACHINES_PATH=$bad"
expect_eq "broken profile: text exit 1" 1 "$rc"
expect_eq "broken profile: text line and remedy" \
  "  ERROR  profile     1 profile file did not load: $bad/broken.yaml:2: gpus_per_node: expected an integer, got \"four\"
                     -> fix or remove the file: ezpz launch stops at a profile that does not load" \
  "$(grep -A1 '^  ERROR  profile' <<<"$out")"
expect_eq "broken profile: summary counts the error" "1 error" \
  "$(tail -1 <<<"$out" | sed 's/.*warnings*, \(1 error\).*/\1/')"
doctor unknown-machine -- --machine nope --json
expect_eq "unknown --machine: exit 1" 1 "$rc"
expect_eq "unknown --machine: message" "error unknown machine \"nope\" (from --machine); known: $(ls "$EZPZ_SRC/machines" | sed -n 's/\.yaml$//p' | paste -sd, | sed 's/,/, /g')" \
  "$(check_of profile status) $(check_of profile message)"

# --- A scheduler's variables without its files --------------------------------------
doctor pbs-no-nodefile PBS_JOBID=1.pbs -- --json
expect_eq "PBS_JOBID without PBS_NODEFILE: exit 1" 1 "$rc"
expect_eq "PBS_JOBID without PBS_NODEFILE: scheduler" \
  "error pbs (PBS_JOBID is set), but PBS_NODEFILE is not set" \
  "$(check_of scheduler status) $(check_of scheduler message)"
expect_eq "PBS_JOBID without PBS_NODEFILE: allocation" \
  "error PBS_JOBID is set (1.pbs) but PBS_NODEFILE is not: run inside the PBS job, or set --scheduler local" \
  "$(check_of allocation status) $(check_of allocation message)"
doctor pbs-missing-nodefile PBS_JOBID=1.pbs "PBS_NODEFILE=$scratch/nope" -- --json
expect_eq "unreadable PBS_NODEFILE: scheduler" \
  "error pbs (PBS_JOBID is set), but PBS_NODEFILE: $scratch/nope: No such file or directory" \
  "$(check_of scheduler status) $(check_of scheduler message)"
doctor slurm-no-nodelist SLURM_JOB_ID=5 -- --json
expect_eq "SLURM_JOB_ID without a nodelist: scheduler" \
  "error slurm (SLURM_JOB_ID is set), but neither SLURM_JOB_NODELIST nor SLURM_NODELIST is set" \
  "$(check_of scheduler status) $(check_of scheduler message)"
doctor bad-scheduler EZPZ_SCHEDULER=lsf -- --json
expect_eq "EZPZ_SCHEDULER=lsf: exit 1" 1 "$rc"
expect_eq "EZPZ_SCHEDULER=lsf: scheduler" \
  "error EZPZ_SCHEDULER: unknown scheduler \"lsf\"; expected pbs, slurm, flux or local" \
  "$(check_of scheduler status) $(check_of scheduler message)"

printf '%s\n' "$host" "$host" "$host" nosuch-ezpz-node.invalid >"$scratch/uneven.nodes"
doctor uneven PBS_JOBID=2.pbs "PBS_NODEFILE=$scratch/uneven.nodes" -- --json
expect_eq "uneven nodefile: warned" \
  "warn 2 hosts from PBS_NODEFILE $scratch/uneven.nodes: $host,nosuch-ezpz-node.invalid; 2 repeated lines, not the same number for every host" \
  "$(check_of allocation status) $(check_of allocation message)"
printf '%s\n' "$host" nosuch-ezpz-node.invalid >"$scratch/bad-host.nodes"
doctor bad-host PBS_JOBID=2.pbs "PBS_NODEFILE=$scratch/bad-host.nodes" -- --json
expect_match "a host that does not resolve (or whose look-up outlasts 0.5 s)" \
  "^(error 2 hosts from PBS_NODEFILE $scratch/bad-host.nodes: $host,nosuch-ezpz-node.invalid; 1 of 2 do not resolve: nosuch-ezpz-node.invalid|warn .*; 1 of 2 did not resolve within 0.5 s: nosuch-ezpz-node.invalid)\$" \
  "$(check_of allocation status) $(check_of allocation message)"
doctor missing-hostfile -- --hostfile "$scratch/nope" --json
expect_eq "missing --hostfile: allocation" \
  "error --hostfile: $scratch/nope: No such file or directory" \
  "$(check_of allocation status) $(check_of allocation message)"

# --- The launcher: missing, or the wrong implementation --------------------------------
empty_bin="$scratch/empty-bin"
mkdir -p "$empty_bin"
doctor no-launcher "PATH=$empty_bin" -- --json
expect_eq "no mpiexec on PATH: exit 1" 1 "$rc"
expect_eq "no mpiexec on PATH: launcher" \
  "error mpiexec is not on PATH (the hydra launcher of profile local)" \
  "$(check_of launcher status) $(check_of launcher message)"
expect_eq "no mpiexec on PATH: remedy" \
  "install MPICH (apt-get install mpich) or load its module, or pass --launcher" \
  "$(check_of launcher remedy)"
expect_eq "no python3 on PATH: python" \
  "warn no venv or conda environment is active, and no python3 is on PATH" \
  "$(check_of python status) $(check_of python message)"
expect_eq "no python3 on PATH: torch" "warn no python3 on PATH: ranks that run python3 will not start" \
  "$(check_of torch status) $(check_of torch message)"
fake_bin="$scratch/fake-bin"
mkdir -p "$fake_bin"
printf '#!/bin/sh\necho "mpirun (Open MPI) 4.1.4"\n' >"$fake_bin/mpiexec"
chmod +x "$fake_bin/mpiexec"
# The fake alone on PATH: a real mpiexec.hydra in /usr/bin would be chosen (see below).
doctor wrong-launcher "PATH=$fake_bin" -- --json
expect_eq "Open MPI's mpiexec for the hydra dialect: launcher" \
  "error $fake_bin/mpiexec is Open MPI 4.1.4, but the hydra launcher of profile local needs MPICH Hydra" \
  "$(check_of launcher status) $(check_of launcher message)"
expect_eq "Open MPI's mpiexec for the hydra dialect: remedy" \
  "put MPICH Hydra's mpiexec first on PATH (check module list), or pass --launcher openmpi" \
  "$(check_of launcher remedy)"
# Doctor checks the program a launch would run: the first of the dialect's names that is it.
printf '#!/bin/sh\necho "HYDRA build details:"\necho "    Version: 4.0.2"\n' >"$fake_bin/mpiexec.hydra"
printf '#!/bin/sh\nexit 1\n' >"$fake_bin/hydra_pmi_proxy"  # Hydra's, which doctor looks for
chmod +x "$fake_bin/mpiexec.hydra" "$fake_bin/hydra_pmi_proxy"
doctor hydra-second "PATH=$fake_bin" -- --json
expect_eq "Open MPI's mpiexec, then mpiexec.hydra: launcher" \
  "ok $fake_bin/mpiexec.hydra: MPICH Hydra 4.0.2, the hydra launcher of profile local" \
  "$(check_of launcher status) $(check_of launcher message)"
doctor hydra-named "PATH=$fake_bin" -- --launcher-program mpiexec --json
expect_eq "--launcher-program names Open MPI's mpiexec: launcher" \
  "error $fake_bin/mpiexec is Open MPI 4.1.4, but the hydra launcher of profile local needs MPICH Hydra" \
  "$(check_of launcher status) $(check_of launcher message)"

# --- The trainer: missing, failing, or printing no JSON ---------------------------------
# A copy of ezpz looks for its helpers beside itself: give it broken ones.
alone="$scratch/alone"
mkdir -p "$alone"
cp "$EZPZ_BIN" "$alone/ezpz"
bin="$alone/ezpz" doctor no-trainer -- --json
expect_eq "no ezpz-smoke beside ezpz: warned, exit 0" \
  "0 warn ezpz-smoke not found in $alone/ezpz-smoke or $alone/../libexec/ezpz/ezpz-smoke: build it with libtorch (cmake -DEZPZ_WITH_SMOKE=ON)" \
  "$rc $(check_of trainer status) $(check_of trainer message)"
printf '#!/bin/sh\necho "ezpz-smoke: libtorch_cpu.so: cannot open shared object file" >&2\nexit 127\n' >"$alone/ezpz-smoke"
chmod +x "$alone/ezpz-smoke"
bin="$alone/ezpz" doctor broken-trainer -- --json
expect_eq "ezpz-smoke that cannot load libtorch: exit 1" 1 "$rc"
expect_eq "ezpz-smoke that cannot load libtorch: trainer" \
  "error $alone/ezpz-smoke --probe exit 127: ezpz-smoke: libtorch_cpu.so: cannot open shared object file" \
  "$(check_of trainer status) $(check_of trainer message)"
expect_eq "ezpz-smoke that cannot load libtorch: remedy" \
  "run $alone/ezpz-smoke --probe by hand; ldd $alone/ezpz-smoke shows missing libraries" \
  "$(check_of trainer remedy)"
bin="$alone/ezpz" doctor no-probe -- --deep --json
expect_eq "--deep without ezpz-probe: exit 1" 1 "$rc"
expect_eq "--deep without ezpz-probe: the nodes check says so" \
  "error ezpz-probe not found in $alone/ezpz-probe or $alone/../libexec/ezpz/ezpz-probe: build it with MPI (apt-get install libmpich-dev)" \
  "$(check_of nodes status) $(check_of nodes message)"
expect_eq "--deep without ezpz-probe: the other checks still ran" "16" "$(jq '.checks | length' <<<"$out")"
expect_eq "--deep without ezpz-probe: no nodes" "null" "$(jq -r .nodes <<<"$out")"
printf '#!/bin/sh\necho "not json"\n' >"$alone/ezpz-smoke"
bin="$alone/ezpz" doctor garbled-trainer -- --json
expect_eq "ezpz-smoke printing no JSON: trainer" \
  "error $alone/ezpz-smoke --probe printed no probe JSON: \"not json\"" \
  "$(check_of trainer status) $(check_of trainer message)"

# --- The Python environment, and yeet's storage --------------------------------------
doctor no-venv "VIRTUAL_ENV=$scratch/gone" -- --json
expect_eq "VIRTUAL_ENV that does not exist: python" \
  "error VIRTUAL_ENV is set, but $scratch/gone: No such file or directory" \
  "$(check_of python status) $(check_of python message)"
expect_eq "VIRTUAL_ENV that does not exist: storage" \
  "warn the size of $scratch/gone is unknown: $scratch/gone: No such file or directory" \
  "$(check_of storage status) $(check_of storage message | sed 's/^[^;]*; //')"
venv="$scratch/venv"
mkdir -p "$venv/bin" "$venv/lib"
head -c 1000 /dev/zero >"$venv/bin/python"
head -c 2000 /dev/zero >"$venv/lib/a.so"
ln -s python "$venv/bin/python3"
doctor venv "VIRTUAL_ENV=$venv" -- --json
expect_match "venv: its filesystem named" "^ok VIRTUAL_ENV $venv is on [^ ]+ \((node-local|shared; fine for one host)\)\$" \
  "$(check_of python status) $(check_of python message)"
expect_match "venv: its size against /tmp's free space" \
  "^ok /tmp writable, [0-9.]+ [KMGT]iB free; $venv is 2\.9 KiB \(3 files\), staged to /tmp/venv\$" \
  "$(check_of storage status) $(check_of storage message)"
expect_eq "context: the active environment" "$venv" "$(jq -r .context.python <<<"$out")"

# --- Usage errors: exit 2, one line --------------------------------------------------
usage_error() {
  local name=$1 message=$2; shift 2
  doctor "$name" -- "$@"
  expect_eq "$name: exit 2" 2 "$rc"
  expect_eq "$name: the error" "ezpz: error: $message" "$err"
  expect_eq "$name: nothing on stdout" "" "$out"
}
usage_error "--dry-run without --deep" "--dry-run requires --deep" --dry-run
usage_error "--timeout without --deep" "--timeout requires --deep" --timeout 5
usage_error "--failed-nodes without --deep" "--failed-nodes requires --deep" --failed-nodes x
usage_error "--timeout 0" '--timeout: expected a positive number of seconds, got "0"' --deep --timeout 0
usage_error "--timeout abc" '--timeout: expected a positive number of seconds, got "abc"' --deep --timeout abc
usage_error "an unknown option" "The following argument was not expected: --bogus" --bogus
finish
