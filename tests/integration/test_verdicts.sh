#!/usr/bin/env bash
# Failure verdicts in a simulated 4-node PBS job (MPICH Hydra, every node this machine; the
# generic-pbs profile's ssh bad-node patterns): a rank's own output never names a bad node, a
# rank's death swaps the host its report names and is the program's when it repeats there, the
# job's own faults (a full disk, the OOM killer) keep their hosts and are not retried, and a
# killed launcher is named as such (issue 20).
source "$(dirname "$0")/common.sh"

start_pbs_runs 4

# --- A rank's own lines: before, "bad node: github.com", n01 swapped, every spare spent --------
# Tests run with EZPZ_OUTPUT=raw: records are asked for here, as a terminal or a batch log has.
run_ezpz rank_lines launch --output label --ppn 1 --spares 1 --retry-delay 0.2 -- sh -c '
  [ "$RANK" = 0 ] && echo "ssh: connect to host github.com port 22: Connection timed out" >&2
  [ "$RANK" = 1 ] && echo "ssh: Could not resolve hostname n02: Name or service not known" >&2
  sleep 1'
expect_eq "rank lines: exit 0" 0 "$rc"
expect_eq "rank lines: one attempt, a success" "1 success" \
  "$(jq -r '"\(.attempts) \(.ending)"' "$(newest_run)/run.json")"
expect_eq "rank lines: nothing stopped" "" "$(grep '^ezpz: a failed node' <<<"$err")"
# Without records (--output raw) a line cannot be told a rank's: a host outside the allocation
# is still never a bad node.
run_ezpz raw_lines launch --output raw --ppn 1 --spares 1 --retry-delay 0.2 -- sh -c '
  [ "$RANK" = 0 ] && echo "ssh: connect to host github.com port 22: Connection timed out" >&2
  sleep 1'
expect_eq "raw lines: exit 0, one attempt" "0 1" "$rc $(jq -r .attempts "$(newest_run)/run.json")"
# A rank on ezpz's host passes ezpz its pipes even when raw (EZPZ_OUTPUT_RECORDS=pipes): its
# lines never reach the launcher's stderr, so one about a host of the job names no bad node.
run_ezpz raw_local launch --output raw --ppn 1 --spares 1 --retry-delay 0.2 -- sh -c '
  [ "$RANK" = 1 ] && echo "ssh: Could not resolve hostname n02: Name or service not known" >&2
  sleep 1'
expect_eq "raw, a local rank's line: exit 0, one attempt, a success" "0 1 success" \
  "$rc $(jq -r '"\(.attempts) \(.ending)"' "$(newest_run)/run.json")"
expect_eq "raw, a local rank's line: shown" \
  "ssh: Could not resolve hostname n02: Name or service not known" "$(grep '^ssh: ' <<<"$err")"

# --- A rank killed: its host is swapped; the same death on the new host is the program's -----
# Before: rank 1 on n02 died and n01 was swapped; then every spare went the same way.
run_ezpz killed launch --ppn 1 --spares 2 --retry-delay 0.2 -- sh -c \
  '[ "$RANK" = 1 ] && kill -9 $$; sleep 1'
expect_true "killed: non-zero exit ($rc)" test "$rc" -ne 0
expect_eq "killed: attempt 1 swaps the host named" "bad_node signal_death n02 -> n03 reported" \
  "$(verdict 1 '"\(.classification) \(.rule) \(.swaps | join(",")) \(.failover)"')"
expect_eq "killed: attempt 2, the same death, is the program's" \
  "application_error same_death_twice stop: application_error is not retried" \
  "$(verdict 2 '"\(.classification) \(.rule) \(.next)"')"
# ezpz exits as the shell would for the rank (128+9); "exit status" is Hydra's own (9).
expect_eq "killed: ezpz exits with the killed rank's status" 137 "$rc"
expect_true "killed: ezpz says why" grep -Eq \
  "^ezpz: attempt 2 ended: application_error: exit status $(verdict 2 .launcher_exit): rank 1 \(pid [0-9]+\) on n03: killed by signal 9 \(SIGKILL\): it died the same way on n02 in the attempt before: the program's doing\$" \
  <<<"$err"

# --- The job's own faults: no swap, no retry, the rule and the line --------------------------
run_ezpz no_space launch --ppn 1 --spares 1 --retry-delay 0.2 -- sh -c '
  if [ "$RANK" = 1 ]; then
    echo "OSError: [Errno 28] No space left on device: /ckpt/step_9.pt" >&2; exit 1
  fi
  sleep 1'
expect_eq "no space: exit 1, one attempt, the hosts kept" "1 1 n01,n02,n03" \
  "$rc $(jq -r '"\(.attempts) \(.hosts | join(","))"' "$(newest_run)/run.json")"
expect_eq "no space: the rule and the line" \
  "application_error job_faults no-space OSError: [Errno 28] No space left on device: /ckpt/step_9.pt 0" \
  "$(verdict 1 '"\(.classification) \(.rule) \(.line) \(.swaps | length)"')"
expect_eq "no space: ezpz says it" \
  'ezpz: attempt 1 ended: application_error: exit status 1: out of disk space: "OSError: [Errno 28] No space left on device: /ckpt/step_9.pt"' \
  "$(grep '^ezpz: attempt 1 ended' <<<"$err")"

# ezpz runs explain: the same verdict from the run record, and from any saved log.
no_space_run=$(basename "$(newest_run)")
run_ezpz explain_run runs explain "$no_space_run"
expect_eq "explain: the run's last attempt, again" \
  "verdict: application_error
reason: exit status 1: out of disk space: \"OSError: [Errno 28] No space left on device: /ckpt/step_9.pt\"
rule: job_faults no-space
line: OSError: [Errno 28] No space left on device: /ckpt/step_9.pt
exit status: 1
victim: rank 1 (pid $(verdict 1 '.failed_ranks[0].pid')) on n02: exited with code 1" "$out"
run_ezpz explain_json runs explain last --json
expect_eq "explain --json" "$(newest_run)attempt-1 application_error job_faults no-space n02" \
  "$(jq -r '"\(.source) \(.classification) \(.rule) \(.victims[0].host)"' <<<"$out")"
run_ezpz explain_log runs explain --machine perlmutter "$EZPZ_SRC/tests/fixtures/verdicts/slurm-srun-killed.out" \
  --exit-status 137
expect_eq "explain a saved log" "verdict: bad_node
reason: exit status 137: ranks 4-7 on nid001235: Killed
rule: signal_death
bad host: nid001235: ranks 4-7 on nid001235: Killed
exit status: 137
victim: ranks 4-7 on nid001235: Killed
innocent: ranks 0-3 on nid001234: Terminated" "$out"
run_ezpz explain_missing runs explain --machine perlmutter "$scratch/none.out"
expect_eq "explain: a missing log" "2 ezpz: error: runs explain: $scratch/none.out: no such file" "$rc $err"
cp -r "$(newest_run)" "$runs/20000101-000000-x-1" && rm "$runs/20000101-000000-x-1"/attempt-*/verdict.json
run_ezpz explain_unended runs explain 20000101-000000-x-1
expect_eq "explain: a run with no attempt ended" \
  "2 ezpz: error: runs explain: $runs/20000101-000000-x-1: no attempt ended" "$rc $err"
rm -r "$runs/20000101-000000-x-1"

# The OOM killer's stand-in: the kernel's message, then SIGKILL.
run_ezpz oom launch --ppn 1 --spares 1 --retry-delay 0.2 -- sh -c '
  if [ "$RANK" = 2 ]; then echo "Out of memory: Killed process $$ (python3)" >&2; kill -9 $$; fi
  sleep 1'
expect_eq "oom: one attempt" 1 "$(jq -r .attempts "$(newest_run)/run.json")"
expect_eq "oom: the job's out of memory" "application_error job_faults out-of-memory" \
  "$(verdict 1 '"\(.classification) \(.rule)"')"

# --- Spares on a machine that names no bad node: said once, at the start --------------------
mkdir -p "$scratch/machines"
printf 'scheduler: pbs\nlauncher: hydra\n' >"$scratch/machines/blindpbs.yaml"
run_ezpz blind EZPZ_MACHINES_PATH="$scratch/machines" launch --machine blindpbs --ppn 1 \
  --spares 1 -- true
expect_eq "blind: exit 0" 0 "$rc"
expect_eq "blind: the warning, once" \
  "ezpz: warning: --spares 1: the machine profile blindpbs has no bad_node_patterns: only a rank killed by SIGKILL or SIGBUS on a host the launcher names can retire that host" \
  "$(grep '^ezpz: warning' <<<"$err")"
run_ezpz not_blind launch --ppn 1 --spares 1 -- true
expect_eq "not blind: no warning where patterns exist" "" "$(grep '^ezpz: warning' <<<"$err")"

# --- Silent ranks: a hang mid-training, or a job that never started -------------------------
run_ezpz mid_training launch --ppn 1 --idle-timeout 1 -- sh -c 'echo "step=1 loss=9.0"; sleep 30'
expect_eq "mid-training: a hang, exit 124" "124 hang" "$rc $(verdict 1 .classification)"
# Before: `runs explain` said bad_node, "bad hosts: n01", from Hydra's EXIT CODE: 9 banner after
# ezpz's own SIGKILL (issue 44).
run_ezpz mid_training_explain runs explain
expect_eq "mid-training: runs explain says what the run said" "verdict: hang" "$(head -n 1 <<<"$out")"
run_ezpz custom_progress launch --ppn 1 --idle-timeout 1 --progress-pattern '^batch [0-9]+' -- \
  sh -c 'echo "batch 1"; sleep 30'
expect_eq "--progress-pattern: the job's own progress line" "124 hang" "$rc $(verdict 1 .classification)"
run_ezpz never_started launch --ppn 1 --idle-timeout 1 -- sh -c 'echo "loading shards"; sleep 30'
expect_eq "never started: exit 124, its own verdict" "124 never_started" \
  "$rc $(verdict 1 .classification)"
expect_eq "never started: ezpz says what to look at" \
  "ezpz: attempt 1 ended: never_started: no output for --idle-timeout and no progress line before it: the job never started training (look at its start-up: imports, the rendezvous, data loading)" \
  "$(grep '^ezpz: attempt 1 ended' <<<"$err")"
# --- A rank that exits non-zero mid-job: the others stopped, the rank and its host named ------
# Hydra alone (and ezpz before) waited for rank 0, 1 and 3 to end on their own: here 30 s; in a
# job, their collectives' timeouts. With records, as a batch log has them.
run_ezpz bad_exit launch --output label --ppn 1 --kill-on-bad-exit 0.5 -- sh -c '
  [ "$RANK" = 2 ] && { echo "RuntimeError: shard 7 is corrupt" >&2; exit 5; }
  sleep 30 && echo "rank $RANK: done"'
expect_eq "bad exit: exit 5, stopped by the failure, not retried" "5 rank_failed application_error" \
  "$rc $(verdict 1 '"\(.stopped_by) \(.classification)"')"
expect_eq "bad exit: rank 2 on n03 named, and only it" '[{"ranks":"2","host":"n03","what":"exited with code 5"}]' \
  "$(verdict 1 '[.failed_ranks[] | {ranks, host, what}]' | jq -c .)"
expect_eq "bad exit: no rank ran to its end" "" "$(grep 'done$' <<<"$out")"
expect_true "bad exit: ezpz says why it stopped the job" grep -Eq \
  '^ezpz: the job still ran 500 ms after "ezpz-rankenv: rank 2 \(pid [0-9]+\) on n03: exited with code 5" \(--kill-on-bad-exit\); sending SIGTERM to the launcher$' \
  <<<"$err"

run_ezpz bad_progress launch --ppn 1 --progress-pattern '(step' -- true
expect_eq "--progress-pattern: not a regular expression" \
  "2 ezpz: error: --progress-pattern (step: invalid regular expression: Mismatched '(' and ')' in regular expression" \
  "$rc $err"

# --- gloo's lost peer: its address resolved to the job's host (n02 is 127.0.0.2+1 here) -------
# Rank 1 on n02 leaves at once without a word (as a node that died); the others raise gloo's
# error naming its address and exit 1. Attempt 1 swaps n02 (scraped, never the address); on
# attempt 2 the address is no host of the job's any more: no bad node, not retried.
gloo_line='RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.3]:41384'
run_ezpz gloo_peer launch --ppn 1 --spares 1 --retries 1 --retry-delay 0.2 -- sh -c '
  [ "$RANK" = 1 ] && exit 0
  sleep 0.5; echo "Traceback (most recent call last):" >&2; echo "$0" >&2; exit 1' "$gloo_line"
expect_eq "gloo: attempt 1 swaps the address's host" "bad_node peer_lost gloo-closed-by-peer n02 n02 -> n04 scraped" \
  "$(verdict 1 '"\(.classification) \(.rule) \(.bad_hosts | join(",")) \(.swaps | join(",")) \(.failover)"')"
expect_eq "gloo: attempt 2, the address no host of the job's" "application_error stop: application_error is not retried" \
  "$(verdict 2 '"\(.classification) \(.next)"')"
expect_eq "gloo: ezpz says which host" \
  "ezpz: attempt 1 ended: bad_node: exit status 1: the ranks lost their peer on n02: \"$gloo_line\"" \
  "$(grep '^ezpz: attempt 1 ended' <<<"$err")"
run_ezpz gloo_explain runs explain "$(basename "$(newest_run)")"
expect_eq "gloo: runs explain resolves nothing outside the job" "verdict: application_error" \
  "$(head -n 1 <<<"$out")"

# --- ezpz runs explain knows the run's world size: a traceback in most ranks ----------------
run_ezpz tracebacks launch --ppn 1 -- sh -c '
  [ "$RANK" = 2 ] && exit 0
  echo "Traceback (most recent call last):" >&2; echo "ValueError: bad shape $RANK" >&2; exit 1'
expect_eq "tracebacks: the launch's verdict" "application_error job_faults traceback" \
  "$(verdict 1 '"\(.classification) \(.rule)"')"
run_ezpz tracebacks_explain runs explain "$(basename "$(newest_run)")"
expect_eq "tracebacks: runs explain reads the world size from the record" \
  "verdict: application_error|rule: job_faults traceback|line: Traceback (most recent call last):" \
  "$(grep -E '^(verdict|rule|line):' <<<"$out" | paste -sd '|')"

# --- The launcher SIGKILLed: named as the launcher's death -----------------------------------
start_job launcher_killed 4 --ppn 1 || exit 1
kill -KILL "${job_pids[0]}"
finish_job launcher_killed 10
expect_eq "launcher killed: exit 137" 137 "$job_rc"
expect_eq "launcher killed: the launcher's death" "launcher_died launcher_signal" \
  "$(verdict 1 '"\(.classification) \(.rule)"')"
expect_eq "launcher killed: the verdict's words" \
  "exit status 137: the launcher itself died of signal 9 (SIGKILL); the ranks' statuses were lost with it" \
  "$(verdict 1 .reason)"

# --- One of the launcher's proxies SIGKILLed: the launcher's death too ----------------------
# Before: Hydra (fork launcher) never reaps the dead hydra_pmi_proxy and waits on for its ranks:
# ezpz waited with it. The proxy is found by its exact pid: a child of this run's mpiexec (the
# child of this test's ezpz) named hydra_pmi_proxy; nothing else is signalled (other tests may
# run beside this one). Each proxy has a process group of its own, ezpz's launcher group holds
# mpiexec alone: ezpz outlives the kill, and says it.
start_job proxy_killed 4 --ppn 1 --grace 1 || exit 1
mpiexec_pid=$(ps -eo pid=,ppid=,comm= | awk -v e="$job_pid" '$2 == e && $3 == "mpiexec" { print $1 }')
proxy_pid=$(ps -eo pid=,ppid=,comm= |
  awk -v l="$mpiexec_pid" 'l != "" && $2 == l && $3 == "hydra_pmi_proxy" { print $1; exit }')
expect_true "proxy killed: this run's proxy found (mpiexec $mpiexec_pid, proxy $proxy_pid)" \
  test -n "$proxy_pid"
[ -n "$proxy_pid" ] && kill -KILL "$proxy_pid"
sleep 0.3
expect_true "proxy killed: ezpz outlives it" alive "$job_pid"
finish_job proxy_killed 20
expect_eq "proxy killed: exit 137" 137 "$job_rc"
expect_eq "proxy killed: the verdict, word for word" \
  "launcher_died launcher_part_signal exit status 137: the launcher's hydra_pmi_proxy (pid $proxy_pid) died of signal 9 (SIGKILL); the ranks' statuses were lost with it" \
  "$(verdict 1 '"\(.classification) \(.rule) \(.reason)"')"
expect_eq "proxy killed: ezpz says it" \
  "ezpz: the launcher's hydra_pmi_proxy (pid $proxy_pid) died of signal 9; sending SIGTERM to the launcher" \
  "$(grep '^ezpz: the launcher' "$scratch/proxy_killed.err")"
expect_job_gone "proxy killed"

# --- The launcher fails before any rank starts: its first line, not "the job's own failure" ----
# Hydra run through a link in a directory without hydra_pmi_proxy looks for the proxy there.
lonely="$scratch/lonely-hydra"
mkdir -p "$lonely"
ln -sf "$(readlink -f "$(command -v mpiexec)")" "$lonely/mpiexec"
run_ezpz no_rank PATH="$lonely:/usr/bin:/bin" launch --output label --ppn 1 --retries 1 -- true
expect_eq "no rank started: Hydra's exit status, one attempt" "255 1" \
  "$rc $(jq -r .attempts "$(newest_run)/run.json")"
expect_match "no rank started: ezpz says so with Hydra's first line" \
  "^ezpz: attempt 1 ended: application_error: exit status 255: the launcher failed before any rank started: \\[mpiexec@[^]]+\\] HYDU_create_process \\([^)]+\\): execvp error on file $lonely/hydra_pmi_proxy \\(No such file or directory\\)\$" \
  "$(grep '^ezpz: attempt' <<<"$err")"
expect_eq "no rank started: the hint, once" \
  "ezpz: hint: \"hydra_pmi_proxy (No such file or directory)\" (MPICH 4.0's Hydra, run as a link to mpiexec.hydra in another directory): Hydra starts hydra_pmi_proxy from the directory of the mpiexec it was run as (a link's, not its target's): run the mpiexec of an MPICH installation from its own directory; ezpz doctor names it" \
  "$(grep '^ezpz: hint' <<<"$err")"
expect_eq "no rank started: the verdict's rule, not retried, no rank started" \
  "application_error no_rank_started stop: application_error is not retried 0" \
  "$(verdict 1 '"\(.classification) \(.rule) \(.next) \(.ranks_started)"')"
no_rank_reason=$(verdict 1 .reason)
run_ezpz no_rank_explain runs explain
expect_eq "no rank started: ezpz runs explain says the same" \
  "verdict: application_error
reason: $no_rank_reason
rule: no_rank_started
line: ${no_rank_reason#*started: }
exit status: 255" "$out"

# --- Issue 44: spares used up say so; a launcher's 0 never hides a failed rank --------------
# The rank on n02 is killed, n02 -> n04; then the rank on n04 is, with no spare left. Each rank
# knows its host (Hydra's MPIR_CVAR_CH3_INTERFACE_HOSTNAME), not a flag file another rank of
# the same attempt may already have made (under ASan rank 0 saw rank 1's, died the same way
# on both attempts, and was rightly called the program's). Before: exit 137, the last
# attempt's, which a wrapper cannot tell from a crash.
run_ezpz exhausted launch --ppn 1 --spares 1 --retry-delay 0.2 -- sh -c '
  case $MPIR_CVAR_CH3_INTERFACE_HOSTNAME in n02 | n04) kill -9 $$ ;; esac
  sleep 1'
expect_eq "spares exhausted: exit 75, two attempts, said so" "75 2 spares_exhausted" \
  "$rc $(jq -r '"\(.attempts) \(.ending)"' "$(newest_run)/run.json")"
expect_eq "spares exhausted: the verdict names it" \
  "bad_node n04 stop: spares exhausted: no retries left" \
  "$(verdict 2 '"\(.classification) \(.bad_hosts | join(",")) \(.next)"')"
expect_eq "spares exhausted: ezpz says it last" "ezpz: spares exhausted after 2 attempts: exit 75" \
  "$(tail -n 1 <<<"$err")"
# A launcher that exits 0 over a rank's failure (a wrapper around Hydra, as a site's mpiexec
# script may be): ezpz-rankenv's report decides. Before: success, exit 0.
mkdir -p "$scratch/zero-bin"
printf '#!/bin/sh\n%q "$@"\nexit 0\n' "$(readlink -f "$mpi_bin/mpiexec")" >"$scratch/zero-bin/mpiexec"
chmod +x "$scratch/zero-bin/mpiexec"
run_ezpz zero PATH="$scratch/zero-bin:$system_path" launch --output label --ppn 1 -- sh -c \
  '[ "$RANK" = 1 ] && exit 7; sleep 1'
expect_eq "launcher's 0: exit 7, the rank's" "7 0 application_error 1" \
  "$rc $(verdict 1 '"\(.launcher_exit) \(.classification) \(.failed_ranks[0].ranks)"')"

# --- Issue 44: a Python rank that raises, under Hydra with a spare: the hosts kept ------------
# rank 1 raises after init_process_group while rank 0 waits in an all-reduce (gloo then loses
# its peer): the program's fault, named as rank 1's, no spare spent.
if /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null; then
  cp "$EZPZ_SRC/tests/fixtures/python/raise1.py" "$scratch/raise1.py"
  run_ezpz raise1 launch --output label --ppn 1 --nhosts 2 --spares 1 --retry-delay 0.2 -- \
    /usr/bin/python3 "$scratch/raise1.py"
  expect_eq "python raise: exit 1, one attempt, nothing swapped, rank 1 named" \
    "1 1 application_error 0 1" \
    "$rc $(jq -r .attempts "$(newest_run)/run.json") $(verdict 1 '"\(.classification) \(.swaps | length) \(.failed_ranks[0].ranks)"')"
else
  echo "SKIP: python raise: /usr/bin/python3 cannot import torch.distributed"
fi

finish
