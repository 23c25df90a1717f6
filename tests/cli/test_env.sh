#!/usr/bin/env bash
# ezpz env: `eval "$(ezpz env)"` gives a batch script the allocation and a launch
# line that works (run here with real MPICH), the same line ezpz launch plans,
# values quoted so they come back exactly, --json with the same content, no
# secret printed, and the errors word for word.
source "$(dirname "$0")/lib.sh"

# --- No scheduler: the launch line runs two ranks with the torch env:// contract -------------
exports=$(clean_env "$EZPZ_BIN" env --ppn 2)
ranks=$(clean_env bash -c 'eval "$1" && $DIST_LAUNCH sh -c "echo rank \$RANK of \$WORLD_SIZE at \$MASTER_ADDR:\$MASTER_PORT"' \
  _ "$exports" | sort)
port=$(sed -n "s/^export MASTER_PORT=//p" <<<"$exports")
expect_eq "local: DIST_LAUNCH starts both ranks with the contract" "rank 0 of 2 at 127.0.0.1:$port
rank 1 of 2 at 127.0.0.1:$port" "$ranks"
expect_eq "local: the variables, in order" \
  "MACHINE SCHEDULER HOSTFILE NHOSTS NGPU_PER_HOST NGPUS MASTER_ADDR MASTER_PORT WORLD_SIZE LOCAL_WORLD_SIZE EZPZ_LAUNCHER DIST_LAUNCH" \
  "$(sed -n 's/^export \([A-Z_]*\)=.*/\1/p' <<<"$exports" | xargs)"

# --- No HOME (cron, some batch systems): what needs no hostfile runs (issue 45) -------------
# Before: each of these exited 2, "cannot choose where to write the hostfile".
mkdir -p "$scratch/nohome"
nohome() { (cd "$scratch/nohome" && env -i PATH="$system_path" EZPZ_RUNS_DIR="$scratch/runs" EZPZ_OUTPUT=raw MASTER_PORT=29500 "$EZPZ_BIN" "$@"); }
expect_eq "no HOME: a one-host launch runs" "0 ran" "$(out=$(nohome launch -n 1 --no-record -- echo ran); echo "$? $out")"
expect_eq "no HOME: ezpz env, its hostfile beside the run records" \
  "0 export HOSTFILE=$scratch/nohome/.ezpz/hostfiles/" \
  "$(out=$(nohome env); echo "$? $(grep -o "^export HOSTFILE=.*/" <<<"$out")")"
expect_eq "no HOME: test --dry-run" 0 "$(nohome test --dry-run >/dev/null; echo $?)"
printf 'n01\nn02\nn03\n' >"$scratch/three"
expect_match "no HOME: a plan that needs a hostfile writes it beside the run records" \
  "-f $scratch/nohome/.ezpz/hostfiles/ezpz-local-[0-9a-f]+.hosts " \
  "$(nohome launch --hostfile "$scratch/three" --nhosts 2 --dry-run -- true)"

# --- A PBS job of 4 nodes, on Aurora's profile ------------------------------------------------
printf 'n01\nn02\nn03\nn04\n' >"$scratch/nodefile"
weird="$scratch/run dir \$(touch $scratch/pwned) 'q' \`x\`"
pbs=(PBS_JOBID=4242.aurora-pbs PBS_NODEFILE="$scratch/nodefile" EZPZ_MACHINE=aurora EZPZ_RUN_DIR="$weird")
exports=$(clean_env "${pbs[@]}" "$EZPZ_BIN" env --nhosts 3)
# Each variable, read back by the shell, one per line.
read_back() {
  clean_env bash -c 'eval "$1"; for v in MACHINE SCHEDULER JOBID NHOSTS NGPU_PER_HOST NGPUS HOSTFILE; do echo "$v=${!v}"; done' _ "$1"
}
expect_eq "pbs: the allocation, read back by the shell" "MACHINE=aurora
SCHEDULER=pbs
JOBID=4242.aurora-pbs
NHOSTS=3
NGPU_PER_HOST=12
NGPUS=36
HOSTFILE=$(sed -n "s/^export HOSTFILE=//p" <<<"$exports" | xargs -0 printf '%s' | sed "s/^'//;s/'$//;s/'\\\\''/'/g")" \
  "$(read_back "$exports")"
hostfile=$(clean_env bash -c 'eval "$1"; printf %s "$HOSTFILE"' _ "$exports")
expect_true "pbs: HOSTFILE sits in the (hostile) run directory" test "${hostfile#"$weird"/}" != "$hostfile"
expect_eq "pbs: HOSTFILE is written, one host per line" "n01 n02 n03" "$(xargs <"$hostfile")"
expect_true "pbs: nothing in the values ran" test ! -e "$scratch/pwned"
launch_line=$(clean_env "${pbs[@]}" MASTER_PORT=29500 "$EZPZ_BIN" launch --dry-run -- CMD)
dist=$(clean_env MASTER_PORT=29500 "${pbs[@]}" "$EZPZ_BIN" env | clean_env bash -c 'eval "$(cat)"; printf %s "$DIST_LAUNCH"')
expect_eq "pbs: DIST_LAUNCH is ezpz launch's line without its variables and command" \
  "$(sed -E 's/^([A-Z_]+=[^ ]* )*//; s/ CMD$//' <<<"$launch_line")" "$dist"
expect_true "pbs: Aurora's PALS line" grep -q "^mpiexec --envall .*--ppn=12 .*--hostfile=$scratch/nodefile --cpu-bind=list:1-8:" <<<"$dist"

# --- A Slurm job: srun takes --nodelist, and HOSTFILE still names a written file -------------
slurm_exports=$(clean_env SLURM_JOB_ID=42 SLURM_NODELIST='nid[001-002]' "$EZPZ_BIN" env)
slurm_hostfile=$(clean_env bash -c 'eval "$1"; printf %s "$HOSTFILE"' _ "$slurm_exports")
expect_match "slurm: HOSTFILE is under the run directory" "^$scratch/run/ezpz-42-[0-9a-f]{16}\\.hosts\$" "$slurm_hostfile"
expect_eq "slurm: HOSTFILE is written, one host per line" "nid001 nid002" "$(xargs <"$slurm_hostfile" 2>&1)"

# --- --json: the same names and values --------------------------------------------------------
json=$(clean_env MASTER_PORT=29500 "${pbs[@]}" "$EZPZ_BIN" env --json)
expect_eq "--json: the same variables as the exports" \
  "$(clean_env bash -c 'eval "$1"; for v in MACHINE NHOSTS NGPUS HOSTFILE DIST_LAUNCH; do printf "%s\n" "${!v}"; done' _ \
     "$(clean_env MASTER_PORT=29500 "${pbs[@]}" "$EZPZ_BIN" env)")" \
  "$(jq -r '.MACHINE, .NHOSTS, .NGPUS, .HOSTFILE, .DIST_LAUNCH' <<<"$json")"

# --- Secrets and errors -----------------------------------------------------------------------
out=$(clean_env "$EZPZ_BIN" env --env WANDB_API_KEY=sekrit123 --env NCCL_DEBUG=INFO 2>&1)
expect_true "a secret-looking variable is not printed" bash -c '! grep -q sekrit123 <<<"$1"' _ "$out"
expect_true "... other --env variables are" grep -qx "export NCCL_DEBUG=INFO" <<<"$out"
expect_eq "--dry-run is not an env option" "ezpz: error: The following argument was not expected: --dry-run" \
  "$(clean_env "$EZPZ_BIN" env --dry-run 2>&1 >/dev/null)"
expect_eq "an unknown machine" "ezpz: error: unknown machine \"nosuch\" (from --machine)" \
  "$(clean_env "$EZPZ_BIN" env --machine nosuch 2>&1 >/dev/null | sed 's/; known:.*//')"
clean_env "$EZPZ_BIN" env --machine nosuch >/dev/null 2>&1
expect_eq "... exits 2" 2 "$?"
finish
