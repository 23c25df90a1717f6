#!/usr/bin/env bash
# ezpz submit: golden PBS/Slurm scripts (tests/golden/submit/<case>/: args and
# env as for the golden plans, expected.txt; EZPZ_UPDATE_GOLDEN=1 rewrites
# them), generated scripts RUN with bash so that hostile words are seen to
# reach the command unchanged, submission through stand-in qsub/sbatch (argv,
# job id, exit status, the script removed or kept), and every error word for word.
source "$(dirname "$0")/lib.sh"
bin_dir=$(dirname "$EZPZ_BIN")
cases="$EZPZ_SRC/tests/golden/submit"

# --- Golden scripts ------------------------------------------------------------
run_case() {
  local dir=$1
  local -a env_words=() arg_words=()
  while IFS= read -r line; do [ -n "$line" ] && env_words+=("${line//@CASE@/$dir}"); done <"$dir/env"
  while IFS= read -r line; do arg_words+=("$line"); done <"$dir/args"
  clean_env EZPZ_MACHINES_PATH= "${env_words[@]}" "$EZPZ_BIN" submit --dry-run \
    --script-out "$scratch/golden.sh" "${arg_words[@]}" 2>&1 |
    sed -e "s|$bin_dir|@BIN@|g" -e "s|$dir|@CASE@|g"
}
for dir in "$cases"/*/; do
  dir=${dir%/}
  rm -f "$scratch/golden.sh"
  actual=$(run_case "$dir")
  expect_true "golden $(basename "$dir"): bash -n" bash -n "$scratch/golden.sh"
  if [ "${EZPZ_UPDATE_GOLDEN:-0}" = 1 ]; then
    printf '%s\n' "$actual" >"$dir/expected.txt"; pass
  else
    expect_eq "golden $(basename "$dir")" "$(cat "$dir/expected.txt")" "$actual"
  fi
done

# --- Hostile words reach the command unchanged ---------------------------------
# The command prints where it runs and each argument in brackets; a word that
# a shell expanded, split or globbed would print differently, and $(...) or a
# backtick that ran would create the marker.
marker="$scratch/pwned"
words=("\$(touch $marker)" "\`touch $marker\`" "it's" "say \"hi\"" $'two\nlines' "a  b" "*" ""
       "--" "-n 4" '\' '$HOME' "; echo injected" "'" '"')
work="$scratch/work dir"  # a space: the script's cd must quote the variable
mkdir -p "$work"
printf '#!/bin/sh\npwd\nprintf "[%%s]\\n" "$@"\n' >"$work/argv.sh"
chmod +x "$work/argv.sh"
expected=$(printf '%s\n' "$work"; printf '[%s]\n' "${words[@]}")
# The job's environment for `bash script`: a PBS job of this host, or a Slurm
# batch step with no allocation variables (ezpz launch then runs locally).
hostname >"$scratch/nodefile"
# The profiles' launcher is MPICH's Hydra: pinned, whichever MPI Debian's
# alternatives made `mpiexec`.
mpich_bin="$scratch/mpich-bin"; mkdir -p "$mpich_bin"
hydra=$(command -v mpiexec.hydra || command -v mpiexec.mpich || command -v mpiexec)
if [ -n "$hydra" ]; then  # Hydra starts the hydra_pmi_proxy found beside the mpiexec it ran as
  ln -s "$hydra" "$mpich_bin/mpiexec"
  ln -s "$(dirname "$(readlink -f "$hydra")")/hydra_pmi_proxy" "$mpich_bin/hydra_pmi_proxy"
fi
job_path="PATH=$mpich_bin:/usr/local/bin:/usr/bin:/bin"
pbs_job=("$job_path" PBS_O_WORKDIR="$work" PBS_JOBID=1.sim PBS_NODEFILE="$scratch/nodefile"
         HYDRA_LAUNCHER=fork)
slurm_job=("$job_path" SLURM_SUBMIT_DIR="$work")
run_script() {
  local name=$1 scheduler=$2; shift 2
  local script="$scratch/$name.sh"
  clean_env "$EZPZ_BIN" submit --dry-run --scheduler "$scheduler" --script-out "$script" \
    --launch-arg=--np=1 -- ./argv.sh "${words[@]}" >"$scratch/$name.printed" 2>"$scratch/$name.err"
  expect_eq "$name: --dry-run prints what --script-out wrote" "$(cat "$script")" \
    "$(cat "$scratch/$name.printed")"
  expect_eq "$name: --script-out is 0644" 644 "$(stat -c %a "$script")"
  expect_true "$name: bash -n" bash -n "$script"
  # From elsewhere: the script must cd to the submit directory itself.
  actual=$(cd "$scratch" && clean_env "$@" bash "$script" 2>"$scratch/$name.run.err")
  expect_eq "$name: the command got every word unchanged, in the submit directory" \
    "$expected" "$actual"
  [ "$actual" == "$expected" ] || sed "s/^/  $name: stderr: /" "$scratch/$name.run.err" >&2
  if [ -e "$marker" ]; then fail "$name: a hostile word was executed"; rm -f "$marker"; else pass; fi
}
# --- The submitting venv and conda env are the job's -----------------------------
# Hostile directory names; a stand-in conda whose shell hook defines `conda
# activate`; python3 in both envs saying which it is. The job must run the
# venv's (it comes first on PATH), with both activated, with every word intact.
hostile_name="e n'v \$(touch pwned) \`touch pwned\` \"q\" *"
base="$scratch/conda base $hostile_name"; conda_env="$scratch/conda env $hostile_name"
venv="$scratch/venv $hostile_name"
mkdir -p "$base/bin" "$conda_env/bin" "$venv/bin"
cat >"$base/bin/conda" <<'EOF_CONDA'
#!/bin/sh
[ "$*" = "shell.bash hook" ] || exit 1
echo 'conda() { [ "$1" = activate ] && export CONDA_PREFIX="$2" PATH="$2/bin:$PATH"; }'
EOF_CONDA
# EZPZ_SETUP_ENV (the Python ezpz's): a file under a hostile name, sourced first; its own
# python3 on PATH must not win over the envs activated after it.
setup_dir="$scratch/setup $hostile_name"
mkdir -p "$setup_dir/bin"
printf 'export SETUP_MARK=sourced\nexport PATH=%q:"$PATH"\n' "$setup_dir/bin" >"$setup_dir/setup.sh"
for env_dir in "$conda_env" "$venv" "$setup_dir"; do
  printf '#!/bin/sh\necho "$0"\necho "conda: $CONDA_PREFIX"\necho "venv: $VIRTUAL_ENV"\necho "setup: $SETUP_MARK"\nprintf "[%%s]\\n" "$@"\n' \
    >"$env_dir/bin/python3"
done
chmod +x "$base/bin/conda" "$conda_env/bin/python3" "$venv/bin/python3" "$setup_dir/bin/python3"
submit_env=(VIRTUAL_ENV="$venv" CONDA_PREFIX="$conda_env" CONDA_DEFAULT_ENV=ml
            CONDA_EXE="$base/bin/conda" LOADEDMODULES=gcc/12 EZPZ_SETUP_ENV="$setup_dir/setup.sh")
expected_env=$(printf '%s\n' "$venv/bin/python3" "conda: $conda_env" "venv: $venv" "setup: sourced";
               printf '[%s]\n' "${words[@]}")
run_in_env() {
  local name=$1 scheduler=$2; shift 2
  local script="$scratch/$name.sh"
  (cd "$work" && clean_env "${submit_env[@]}" "$EZPZ_BIN" submit --dry-run --scheduler "$scheduler" \
    --script-out "$script" --launch-arg=--np=1 -- python3 "${words[@]}" >/dev/null 2>&1)
  expect_true "$name: bash -n" bash -n "$script"
  # The job's own environment: nothing of the submitting shell's.
  actual=$(cd "$scratch" && clean_env "$@" bash "$script" 2>"$scratch/$name.run.err")
  expect_eq "$name: the venv's python3, both envs active, every word unchanged" \
    "$expected_env" "$actual"
  [ "$actual" == "$expected_env" ] || sed "s/^/  $name: stderr: /" "$scratch/$name.run.err" >&2
  if [ -e "$marker" ] || [ -e "$work/pwned" ] || [ -e "$scratch/pwned" ]; then
    fail "$name: a hostile word was executed"; rm -f "$marker" "$work/pwned" "$scratch/pwned"
  else pass; fi
}

if [ -n "$hydra" ]; then
  run_script pbs-run pbs "${pbs_job[@]}"
  run_script slurm-run slurm "${slurm_job[@]}"
  run_in_env pbs-env pbs "${pbs_job[@]}"
  run_in_env slurm-env slurm "${slurm_job[@]}"
else
  printf 'SKIP: running the scripts needs mpiexec (install mpich)\n'
fi

# --- Submission through stand-in qsub and sbatch -------------------------------
# Each records its arguments and a copy of the script it was given, says what
# the real one says, and exits with $FAKE_STATUS.
fake="$scratch/fake-bin"
mkdir -p "$fake"
for tool in qsub sbatch; do
  reply='4242.fake-pbs'; [ $tool == sbatch ] && reply='Submitted batch job 4242'
  cat >"$fake/$tool" <<EOF
#!/bin/bash
printf '%s\n' "\$#" "\$@" >"$scratch/$tool.argv"
cp "\$1" "$scratch/$tool.script"
[ "\${FAKE_STATUS:-0}" == 0 ] || { echo "$tool: queue is closed" >&2; exit "\$FAKE_STATUS"; }
echo '$reply'
EOF
  chmod +x "$fake/$tool"
done
fake_path="PATH=$fake:$system_path"

for tool in qsub sbatch; do
  scheduler=pbs; [ $tool == sbatch ] && scheduler=slurm
  rm -f "$scratch/$tool.argv" "$scratch/$tool.script"
  mkdir -p "$scratch/tmp-$tool"
  out=$(cd "$work" && clean_env "$fake_path" TMPDIR="$scratch/tmp-$tool" "$EZPZ_BIN" submit \
    --scheduler $scheduler -N 2 -- ./argv.sh "it's" 2>"$scratch/$tool.err"); code=$?
  expect_eq "$tool: exit 0" 0 "$code"
  expect_eq "$tool: prints the job id" 4242 "${out%%.fake-pbs}"
  expect_eq "$tool: nothing on stderr" "" "$(cat "$scratch/$tool.err")"
  dry=$(cd "$work" && clean_env "$EZPZ_BIN" submit --dry-run --scheduler $scheduler -N 2 -- \
    ./argv.sh "it's")
  expect_eq "$tool: got the script --dry-run prints" "$dry" "$(cat "$scratch/$tool.script")"
  submitted=$(sed -n 2p "$scratch/$tool.argv")
  expect_eq "$tool: one argument, the script" "1" "$(head -n 1 "$scratch/$tool.argv")"
  expect_eq "$tool: the script is removed after submission" "" "$(ls -A "$scratch/tmp-$tool")"
  [[ $submitted == "$scratch/tmp-$tool/"* ]] && pass || fail "$tool: script made in TMPDIR ($submitted)"
done
[ "$(cat "$scratch/qsub.argv" | wc -l)" == 2 ] && pass || fail "qsub: exactly one argument"

# Detection: qsub on PATH means PBS, sbatch alone Slurm, a profile wins over both.
# A choice made only from PATH is said on stderr; the script's comment says why.
only_sbatch="$scratch/only-sbatch"; mkdir -p "$only_sbatch"; ln -s "$fake/sbatch" "$only_sbatch/sbatch"
detect() {
  clean_env "$@" "$EZPZ_BIN" submit --dry-run -- true >"$scratch/detect.out" 2>"$scratch/detect.err"
}
first_directive() { grep -m1 -E '^#(PBS|SBATCH) ' "$scratch/detect.out"; }
why() { grep '^# Scheduler: ' "$scratch/detect.out"; }
detect "$fake_path"
expect_eq "detect: qsub on PATH" "#PBS -l select=1" "$(first_directive)"
expect_eq "detect: qsub on PATH, why" "# Scheduler: pbs (qsub is on PATH)." "$(why)"
expect_eq "detect: qsub on PATH, said on stderr" \
  "ezpz: warning: submit: no job, machine profile or --scheduler names a scheduler here; writing a PBS script because qsub is on PATH" \
  "$(cat "$scratch/detect.err")"
detect PATH="$only_sbatch"
expect_eq "detect: sbatch alone" "#SBATCH -N 1" "$(first_directive)"
expect_eq "detect: sbatch alone, why" "# Scheduler: slurm (sbatch is on PATH)." "$(why)"
expect_eq "detect: sbatch alone, said on stderr" \
  "ezpz: warning: submit: no job, machine profile or --scheduler names a scheduler here; writing a Slurm script because sbatch is on PATH" \
  "$(cat "$scratch/detect.err")"
detect "$fake_path" SLURM_JOB_ID=7 SLURM_JOB_NODELIST=n01
expect_eq "detect: inside a Slurm job" "#SBATCH -N 1" "$(first_directive)"
expect_eq "detect: inside a Slurm job, why" "# Scheduler: slurm (SLURM_JOB_ID is set)." "$(why)"
expect_eq "detect: inside a Slurm job, nothing on stderr" "" "$(cat "$scratch/detect.err")"
detect "$fake_path" EZPZ_MACHINE=perlmutter
expect_eq "detect: the machine profile" "#SBATCH -N 1" "$(first_directive)"
expect_eq "detect: the machine profile, why" "# Scheduler: slurm (machine profile perlmutter runs slurm)." "$(why)"
expect_eq "detect: the machine profile, nothing on stderr" "" "$(cat "$scratch/detect.err")"
# A profile that requires an account and a walltime: one warning each, then the job is submitted.
out=$(cd "$work" && clean_env "$fake_path" EZPZ_MACHINE=frontier "$EZPZ_BIN" submit -- true \
  2>"$scratch/required.err"); code=$?
expect_eq "required: still submitted" "0 4242" "$code $out"
expect_eq "required: a warning for each missing value" \
  "ezpz: warning: submit: machine profile frontier requires account (-A/--account); sbatch may refuse the job without it
ezpz: warning: submit: machine profile frontier requires walltime (-t/--time); sbatch may refuse the job without it" \
  "$(cat "$scratch/required.err")"
out=$(cd "$work" && clean_env "$fake_path" EZPZ_MACHINE=frontier "$EZPZ_BIN" submit -A p -t 2-12 \
  -- true 2>"$scratch/required.err")
expect_eq "required: given, no warning" "" "$(cat "$scratch/required.err")"
expect_eq "required: the walltime as sbatch takes it" "#SBATCH -t 2-12:00:00" \
  "$(grep -- '-t ' "$scratch/sbatch.script")"

# --script-out keeps the submitted script; a failing submitter's status is ezpz's.
out=$(cd "$work" && clean_env "$fake_path" FAKE_STATUS=3 "$EZPZ_BIN" submit --scheduler pbs \
  --script-out "$scratch/kept.sh" -- true 2>"$scratch/fail.err"); code=$?
expect_eq "qsub fails: its exit status" 3 "$code"
expect_eq "qsub fails: its stderr passed on" "qsub: queue is closed" "$(cat "$scratch/fail.err")"
expect_eq "qsub fails: no job id printed" "" "$out"
expect_eq "--script-out: the submitted file is kept" "$scratch/kept.sh" "$(sed -n 2p "$scratch/qsub.argv")"
expect_eq "--script-out: 0644" 644 "$(stat -c %a "$scratch/kept.sh" 2>/dev/null)"

# --- Errors: one line on stderr, exit 2, nothing on stdout, nothing written -------
# expect_error NAME MESSAGE -- ENV... -- ARGS...
expect_error() {
  local name=$1 message=$2; shift 3
  local -a env_words=()
  while [ "$1" != "--" ]; do env_words+=("$1"); shift; done; shift
  local out err code
  out=$(clean_env "${env_words[@]}" "$EZPZ_BIN" "$@" 2>"$scratch/stderr"); code=$?
  err=$(cat "$scratch/stderr")
  expect_eq "$name: exit status" 2 "$code"
  expect_eq "$name: stderr" "ezpz: error: $message" "$err"
  expect_eq "$name: stdout" "" "$out"
  if [ -e "$scratch/never.sh" ]; then fail "$name: wrote the script"; rm -f "$scratch/never.sh"; else pass; fi
}
never=(--script-out "$scratch/never.sh")
empty="$scratch/empty-bin"; mkdir -p "$empty"
expect_error "no command after --" "no command given: ezpz submit [options] -- COMMAND" -- -- \
  submit --scheduler pbs "${never[@]}" --
expect_error "no -- at all" "no command given: ezpz submit [options] -- COMMAND" -- -- \
  submit --scheduler pbs "${never[@]}"
expect_error "command before --" 'submit: "python3" before --; put the command after --' -- -- \
  submit --scheduler pbs "${never[@]}" python3 train.py
expect_error "unknown option" 'submit: unknown option "--bogus"' -- -- \
  submit --scheduler pbs --bogus "${never[@]}" -- true
time_error='--time: expected M, M:SS, H:MM:SS, D-H, D-H:MM or D-H:MM:SS (e.g. 30 for 30 minutes, 1:30:00, 2-12), more than 0, got'
expect_error "bad --time" "$time_error \"90m\"" -- -- \
  submit --scheduler pbs -t 90m "${never[@]}" -- true
expect_error "minutes past 59" "$time_error \"1:75:00\"" -- -- \
  submit --scheduler slurm --time 1:75:00 "${never[@]}" -- true
expect_error "hours past 23 after days" "$time_error \"2-24\"" -- -- \
  submit --scheduler slurm --time 2-24 "${never[@]}" -- true
expect_error "a zero walltime" "$time_error \"0\"" -- -- \
  submit --scheduler pbs -t 0 "${never[@]}" -- true
expect_error "-n: launch's own check" '--np: expected an integer, got "x"' -- -- \
  submit --scheduler pbs -n x "${never[@]}" -- true
expect_error "ranks that cannot fit the nodes" \
  "-n 8 at --ppn 4 needs 2 hosts, but 1 is available" -- -- \
  submit --scheduler pbs -N 1 -n 8 --ppn 4 "${never[@]}" -- true
expect_error "a venv path with a newline" \
  "VIRTUAL_ENV: a newline cannot go in the job script; deactivate that environment to submit without it" \
  -- VIRTUAL_ENV=$'/v\nrm -rf ~' -- submit --scheduler pbs "${never[@]}" -- true
expect_error "EZPZ_SETUP_ENV names no file" \
  "EZPZ_SETUP_ENV=$scratch/nope.sh: no such file; the job sources a file (write the setup commands in one)" \
  -- EZPZ_SETUP_ENV="$scratch/nope.sh" -- submit --scheduler pbs "${never[@]}" -- true
expect_error "newline in --job-name" "--job-name: a newline cannot go in a #PBS directive" -- -- \
  submit --scheduler pbs -J $'x\n#PBS -q prod' "${never[@]}" -- true
expect_error "space in --queue" "--queue: a space cannot go in a #SBATCH directive" -- -- \
  submit --scheduler slurm -q "debug x" "${never[@]}" -- true
expect_error "quote in --account" "--account: a quote cannot go in a #PBS directive" -- -- \
  submit --scheduler pbs -A "it's" "${never[@]}" -- true
expect_error "--filesystems under Slurm" \
  "--filesystems: a PBS resource (-l filesystems=); Slurm has none" -- -- \
  submit --scheduler slurm --filesystems home "${never[@]}" -- true
expect_error "unknown scheduler" '--scheduler: "lsf" is not a batch scheduler; expected pbs or slurm' \
  -- -- submit --scheduler lsf "${never[@]}" -- true
expect_error "local is not a batch scheduler" \
  '--scheduler: "local" is not a batch scheduler; expected pbs or slurm' -- -- \
  submit --scheduler local "${never[@]}" -- true
expect_error "-N 0" "--nodes: expected at least 1, got 0" -- -- \
  submit --scheduler pbs -N 0 "${never[@]}" -- true
expect_error "qsub missing" "qsub: not found on PATH; submit from a PBS login node, or use --dry-run" \
  -- PATH="$empty" -- submit --scheduler pbs "${never[@]}" -- true
expect_error "sbatch missing" \
  "sbatch: not found on PATH; submit from a Slurm login node, or use --dry-run" -- \
  PATH="$empty" -- submit --scheduler slurm "${never[@]}" -- true
expect_error "no scheduler anywhere" \
  "submit: no batch scheduler here (no PBS or Slurm job, machine profile local names none, no qsub or sbatch on PATH); pass --scheduler pbs or --scheduler slurm" \
  -- PATH="$empty" -- submit "${never[@]}" -- true
expect_error "unknown machine" \
  'unknown machine "nope" (from --machine); known: aurora, frontier, generic-flux, generic-pbs, generic-slurm, local, perlmutter, polaris, sirius, sophia, sunspot' \
  -- -- submit --scheduler pbs --machine nope "${never[@]}" -- true
profiles="$scratch/profiles"; mkdir -p "$profiles"
printf 'launcher: pals\nscheduler: pbs\nbatch:\n  filesystems: "home\\nflare"\n' >"$profiles/bad.yaml"
expect_error "profile: newline in batch.filesystems" \
  "$profiles/bad.yaml:4: batch.filesystems: a newline cannot go in a batch directive" -- \
  EZPZ_MACHINES_PATH="$profiles" -- submit --machine bad "${never[@]}" -- true

finish
