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
  while IFS= read -r line; do [ -n "$line" ] && env_words+=("$line"); done <"$dir/env"
  while IFS= read -r line; do arg_words+=("$line"); done <"$dir/args"
  clean_env EZPZ_MACHINES_PATH= "${env_words[@]}" "$EZPZ_BIN" submit --dry-run "${arg_words[@]}" 2>&1 |
    sed -e "s|$bin_dir|@BIN@|g"
}
for dir in "$cases"/*/; do
  dir=${dir%/}
  actual=$(run_case "$dir")
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
pbs_job=(PBS_O_WORKDIR="$work" PBS_JOBID=1.sim PBS_NODEFILE="$scratch/nodefile" HYDRA_LAUNCHER=fork)
slurm_job=(SLURM_SUBMIT_DIR="$work")
run_script() {
  local name=$1 scheduler=$2; shift 2
  local script="$scratch/$name.sh"
  clean_env "$EZPZ_BIN" submit --dry-run --scheduler "$scheduler" --script-out "$script" \
    --launch-arg=--np=1 -- ./argv.sh "${words[@]}" >"$scratch/$name.printed" 2>"$scratch/$name.err"
  expect_eq "$name: --dry-run prints what --script-out wrote" "$(cat "$script")" \
    "$(cat "$scratch/$name.printed")"
  expect_eq "$name: --script-out is 0644" 644 "$(stat -c %a "$script")"
  # From elsewhere: the script must cd to the submit directory itself.
  actual=$(cd "$scratch" && clean_env "$@" bash "$script" 2>"$scratch/$name.run.err")
  expect_eq "$name: the command got every word unchanged, in the submit directory" \
    "$expected" "$actual"
  [ "$actual" == "$expected" ] || sed "s/^/  $name: stderr: /" "$scratch/$name.run.err" >&2
  if [ -e "$marker" ]; then fail "$name: a hostile word was executed"; rm -f "$marker"; else pass; fi
}
if command -v mpiexec >/dev/null; then
  run_script pbs-run pbs "${pbs_job[@]}"
  run_script slurm-run slurm "${slurm_job[@]}"
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
only_sbatch="$scratch/only-sbatch"; mkdir -p "$only_sbatch"; ln -s "$fake/sbatch" "$only_sbatch/sbatch"
detected() { clean_env "$@" "$EZPZ_BIN" submit --dry-run -- true 2>&1 | sed -n 2p; }
expect_eq "detect: qsub on PATH" "#PBS -l select=1" "$(detected "$fake_path")"
expect_eq "detect: sbatch alone" "#SBATCH -N 1" "$(detected PATH="$only_sbatch")"
expect_eq "detect: inside a Slurm job" "#SBATCH -N 1" \
  "$(detected "$fake_path" SLURM_JOB_ID=7 SLURM_JOB_NODELIST=n01)"
expect_eq "detect: the machine profile" "#SBATCH -N 1" "$(detected "$fake_path" EZPZ_MACHINE=frontier)"

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
expect_error "bad --time" \
  '--time: expected HH:MM:SS, more than 00:00:00 (e.g. 01:30:00), got "90"' -- -- \
  submit --scheduler pbs -t 90 "${never[@]}" -- true
expect_error "minutes past 59" \
  '--time: expected HH:MM:SS, more than 00:00:00 (e.g. 01:30:00), got "1:75:00"' -- -- \
  submit --scheduler slurm --time 1:75:00 "${never[@]}" -- true
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
  'unknown machine "nope" (from --machine); known: aurora, frontier, generic-pbs, generic-slurm, local, perlmutter, polaris, sirius, sophia, sunspot' \
  -- -- submit --scheduler pbs --machine nope "${never[@]}" -- true
profiles="$scratch/profiles"; mkdir -p "$profiles"
printf 'launcher: pals\nscheduler: pbs\nbatch:\n  filesystems: "home\\nflare"\n' >"$profiles/bad.yaml"
expect_error "profile: newline in batch.filesystems" \
  "$profiles/bad.yaml:4: batch.filesystems: a newline cannot go in a batch directive" -- \
  EZPZ_MACHINES_PATH="$profiles" -- submit --machine bad "${never[@]}" -- true

finish
