#!/usr/bin/env bash
# Finding the job from a compute node reached by ssh, without the job's variables: stand-in
# qstat and squeue on PATH say which running job holds this host; -v says which was found;
# a warning when they answer and none does; nothing asked under --scheduler or --hostfile, nor on
# a host no machine profile names (this one, unless EZPZ_MACHINE says).
source "$(dirname "$0")/lib.sh"
host=$(hostname)
short=${host%%.*}
fake="$scratch/fake-bin"
mkdir -p "$fake"
# stand_in PROGRAM LINES...: prints LINES, records its argv.
stand_in() {
  local program=$1; shift
  { printf '#!/bin/sh\nprintf "%%s\\n" "$*" >"%s/%s.argv"\n' "$scratch" "$program"
    printf 'cat <<"EOF_OUT"\n'; printf '%s\n' "$@"; printf 'EOF_OUT\n'; } >"$fake/$program"
  chmod +x "$fake/$program"
}
# run_ezpz [NAME=VALUE...] ARGS...: ezpz with the stand-ins first on PATH; $out, $err, $rc.
run_ezpz() {
  local -a vars=()
  while [[ $1 == *=* ]]; do vars+=("$1"); shift; done
  out=$(clean_env PATH="$fake:$system_path" USER=me "${vars[@]}" "$EZPZ_BIN" "$@" 2>"$scratch/stderr"); rc=$?
  err=$(cat "$scratch/stderr")
}

# --- Slurm: squeue's running job holding this host --------------------------------------------
stand_in squeue "41 other[1-2]" "42 $short,nid002"
run_ezpz launch -v --dry-run -- true
expect_true "a host no profile names: squeue not asked" test ! -e "$scratch/squeue.argv"
expect_true "a host no profile names: -v says why" grep -qxF \
  "ezpz: job lookup: none (no machine profile names this host; EZPZ_MACHINE would)" <<<"$err"
run_ezpz EZPZ_MACHINE=generic-slurm launch -v --dry-run -- true
expect_eq "squeue: exit status" 0 "$rc"
expect_eq "squeue: asked for running jobs of \$USER" "-h -t R -o %i %N -u me" "$(cat "$scratch/squeue.argv")"
expect_match "squeue: srun attached to job 42 on its 2 hosts" \
  "SLURM_JOB_ID=42 srun -u --kill-on-bad-exit=1 -N 2 -n 2 --ntasks-per-node=1 --nodelist=$short,nid002 " "$out"
expect_true "-v says which job" grep -qxF "ezpz: job: 42 (slurm, 2 hosts), found by squeue: no job variables are set here" <<<"$err"

# --- PBS: qstat -n1's host list ---------------------------------------------------------------
rm -f "$fake/squeue"
stand_in qstat "" "pbs01:" \
  "Job ID          Username Queue    Jobname    SessID NDS TSK Memory Time  S Time" \
  "--------------- -------- -------- ---------- ------ --- --- ------ ----- - -----" \
  "7.pbs01         me       debug    other       1233   1  64    --  01:00 R 00:01 x9/0*64" \
  "8.pbs01         me       debug    train       1234   2 128    --  01:00 R 00:01 $short/0*64+x1001/0*64" \
  "9.pbs01         me       debug    queued        --   2 128    --  01:00 Q   --  --"
run_ezpz EZPZ_MACHINE=generic-pbs launch -v --dry-run --json -- true
expect_eq "qstat: exit status" 0 "$rc"
expect_eq "qstat: asked" "-fn1wru me" "$(cat "$scratch/qstat.argv")"
expect_eq "qstat: the job and its hosts" "pbs 8.pbs01 $short x1001" \
  "$(jq -r '[.scheduler, .job_id, .hosts[]] | join(" ")' <<<"$out")"
expect_true "qstat: -v says which job" grep -qxF "ezpz: job: 8.pbs01 (pbs, 2 hosts), found by qstat: no job variables are set here" <<<"$err"

# --- No job holds this node: a warning, a local run ---------------------------------------------
stand_in qstat "7.pbs01 me debug other 1233 1 64 -- 01:00 R 00:01 x9/0*64"
run_ezpz EZPZ_MACHINE=generic-pbs launch --dry-run -- true
expect_eq "no job: exit status" 0 "$rc"
expect_eq "no job: the warning" "ezpz: warning: qstat lists no running job holding $host: a local run on this node only" "$err"
expect_match "no job: a local run" "EZPZ_LAUNCHER=hydra " "$out"

# --- Named schedulers and hostfiles are not second-guessed ------------------------------------
rm -f "$scratch/qstat.argv"
run_ezpz EZPZ_MACHINE=generic-pbs launch --scheduler local --dry-run -- true
expect_eq "--scheduler local: no warning" "" "$err"
printf '%s\n' "$host" >"$scratch/hosts"
run_ezpz EZPZ_MACHINE=generic-pbs launch --hostfile "$scratch/hosts" --dry-run -- true
expect_eq "--hostfile: no warning" "" "$err"
expect_true "qstat never asked" test ! -e "$scratch/qstat.argv"

# --- PBS_JOBID kept from another job: its nodefile does not list this host --------------------
printf '192.0.2.1\n' >"$scratch/nodefile"  # resolves, and not to this machine
foreign=(PBS_JOBID=5.pbs01 PBS_NODEFILE="$scratch/nodefile")
err=$(clean_env PATH=/nonexistent "${foreign[@]}" "$EZPZ_BIN" launch --no-record -- /bin/true 2>&1 >/dev/null)
expect_eq "foreign nodefile: a launch warns, then goes on (to its missing launcher here)" \
  "ezpz: warning: PBS_NODEFILE does not list this host ($host): PBS_JOBID=5.pbs01 is not this node's job
ezpz: error: mpiexec: launcher not found on PATH" "$err"
printf 'localhost\n' >"$scratch/loopback-nodefile"
err=$(clean_env PATH=/nonexistent PBS_JOBID=6.pbs01 PBS_NODEFILE="$scratch/loopback-nodefile" \
  "$EZPZ_BIN" launch --no-record -- /bin/true 2>&1 >/dev/null)
expect_eq "a nodefile host that resolves to loopback is this machine: no warning" \
  "ezpz: error: mpiexec: launcher not found on PATH" "$err"
err=$(clean_env "${foreign[@]}" "$EZPZ_BIN" launch --dry-run -- true 2>&1 >/dev/null)
expect_eq "foreign nodefile: --dry-run plans for the job quietly" "" "$err"
printf '192.0.2.1\n192.0.2.2\n' >"$scratch/two-addresses"
out=$(clean_env PBS_JOBID=7.pbs01 PBS_NODEFILE="$scratch/two-addresses" "$EZPZ_BIN" launch --dry-run --json -- true)
expect_eq "a nodefile of 2 addresses plans 2 hosts (was one: \"192\")" "192.0.2.1 192.0.2.2" \
  "$(jq -r '.hosts | join(" ")' <<<"$out")"
doctor=$(clean_env "${foreign[@]}" "$EZPZ_BIN" doctor 2>&1)
expect_true "foreign nodefile: doctor's allocation error" grep -qF \
  "1 host from PBS_NODEFILE $scratch/nodefile: 192.0.2.1; this host ($host) is not one of them" <<<"$doctor"
expect_true "foreign nodefile: doctor's hint" grep -qF \
  "PBS_JOBID=5.pbs01 is not this node's job: unset PBS_JOBID and PBS_NODEFILE, or run inside the job" <<<"$doctor"
# --- Issue 44: the job qstat names, when PBS_NODEFILE is another job's; qstat's failures ----------
# failing_stand_in PROGRAM N WORDS: fails N times saying WORDS on stderr (every time: N=0),
# then answers as the stand-in before it did.
failing_stand_in() {
  local program=$1 times=$2 words=$3
  [ -e "$fake/$program" ] && mv "$fake/$program" "$fake/$program.answer"
  { printf '#!/bin/sh\ncount=$(cat "%s/%s.count" 2>/dev/null || echo 0)\n' "$scratch" "$program"
    printf 'echo $((count + 1)) >"%s/%s.count"\n' "$scratch" "$program"
    printf 'if [ %s = 0 ] || [ "$count" -lt %s ]; then echo %q >&2; exit 1; fi\n' "$times" "$times" "$words"
    printf 'exec "%s/%s.answer" "$@"\n' "$fake" "$program"; } >"$fake/$program"
  chmod +x "$fake/$program"
  rm -f "$scratch/$program.count"
}
stand_in qstat "8.pbs01 me debug train 1234 2 128 -- 01:00 R 00:01 $short/0*64+x1001/0*64"
# Before: a warning, then a launch on 192.0.2.1, the other job's host; qstat was never asked.
# (A launch: --dry-run may plan for a job from outside it. No launcher on this PATH, so the
# launch stops there, having planned.)
# planned_launch: a launch whose PATH has the stand-ins (and the cat they run) and no launcher:
# it plans, then stops.
mkdir -p "$scratch/tools" && ln -sf "$(type -P cat)" "$scratch/tools/cat"
planned_launch() {
  err=$(clean_env PATH="$fake:$scratch/tools" USER=me "${foreign[@]}" "$EZPZ_BIN" launch \
    --no-record -v -- /bin/true 2>&1 >/dev/null)
}
planned_launch
expect_eq "foreign nodefile: qstat's job holding this host, said without -v" \
  "ezpz: warning: PBS_NODEFILE does not list this host ($host): PBS_JOBID=5.pbs01 is another node's job; qstat says job 8.pbs01 holds it: planning on its 2 hosts" \
  "$(grep -F 'PBS_NODEFILE' <<<"$err")"
expect_true "foreign nodefile: the plan is job 8.pbs01's" grep -qF "allocation: job 8.pbs01, 2 hosts" <<<"$err"
run_ezpz "${foreign[@]}" launch --dry-run -- true
expect_eq "foreign nodefile: --dry-run asks no qstat" "" "$err"
failing_stand_in qstat 2 "Communication failure."
planned_launch
expect_eq "qstat's Communication failure, twice: asked again, the job found" "3 1" \
  "$(cat "$scratch/qstat.count") $(grep -cF "allocation: job 8.pbs01, 2 hosts" <<<"$err")"
failing_stand_in qstat 0 "cannot connect to server pbs01 (errno=111)"
stand_in squeue
failing_stand_in squeue 0 "squeue: error: Unable to contact slurm controller (connect failure)"
run_ezpz EZPZ_MACHINE=generic-pbs launch --dry-run -- true
expect_eq "qstat does not answer: 5 tries, said, the fallback said; squeue not asked on PBS" \
  "5 ezpz: warning: job lookup: qstat: it failed: cannot connect to server pbs01 (errno=111) (5 tries)
ezpz: warning: no scheduler answered which job holds $host: a local run on this node only" \
  "$(cat "$scratch/qstat.count") $err"
expect_true "squeue not asked on a PBS machine" test ! -e "$scratch/squeue.count"

finish
