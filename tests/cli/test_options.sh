#!/usr/bin/env bash
# How ezpz reads its command line: `ezpz test`'s launch, supervision and trainer
# options in any order, the trainer's flags checked before anything runs; the
# -np/-ppn/-nh spellings; usage lines; the command looked for once before a
# launch. A fake ezpz-smoke beside a copy of ezpz records whether it ran.
source "$(dirname "$0")/lib.sh"

bin="$scratch/bin"
work="$scratch/work"
mkdir -p "$bin" "$work"
cp "$EZPZ_BIN" "$bin/ezpz"
printf '#!/bin/sh\ntouch "%s/trainer-ran"\n' "$scratch" >"$bin/ezpz-smoke"
chmod +x "$bin/ezpz-smoke"

# run_ezpz ARGS...: ezpz from $work in a clean env; $out, $err, $rc.
run_ezpz() {
  out=$(cd "$work" && clean_env "$bin/ezpz" "$@" 2>"$scratch/stderr"); rc=$?
  err=$(cat "$scratch/stderr")
}
# The trainer's words in a --dry-run line: what follows ezpz-smoke.
trainer_of() { sed -n "s|.* $bin/ezpz-smoke ||p" <<<"$1"; }
stamp='[0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9]{6}'

# -n after a trainer flag is ezpz's: today's form keeps working, nothing is swallowed.
run_ezpz test --model debug -n 2 --dry-run
expect_eq "test --model debug -n 2: exit status" 0 "$rc"
expect_match "test --model debug -n 2: 2 ranks" " mpiexec -n 2 -ppn 2 " "$out"
expect_match "test --model debug -n 2: the trainer gets only its flags" \
  "^--model debug --output-dir $work/outputs/ezpz-test/$stamp\$" "$(trainer_of "$out")"
run_ezpz test -n 2 --dry-run -- --iters 8 --model debug --output-dir /o
expect_eq "trainer flags after --" "--iters 8 --model debug --output-dir /o" "$(trainer_of "$out")"
run_ezpz test --layers 64,32 -n 1 --dry-run -- --iters 9
expect_match "trainer flags on both sides of --" "^--layers 64,32 --iters 9 --output-dir " \
  "$(trainer_of "$out")"
run_ezpz test --model debug --time-limit 60 --idle-timeout 5 --retries 1 --grace 2 --no-record \
  --runs-dir "$scratch/r" --record-limit 1M -np 2 --dry-run
expect_eq "every supervision option is accepted: exit status" 0 "$rc"
expect_eq "every supervision option is accepted: stderr" "" "$err"
expect_match "-np 2 under test" " mpiexec -n 2 -ppn 2 " "$out"
expect_true "--dry-run makes no output directory" test ! -e "$work/outputs"

# expect_refused NAME MESSAGE ARGS...: one line, exit 2, the trainer never started,
# no output directory made.
expect_refused() {
  local name=$1 message=$2; shift 2
  run_ezpz "$@"
  expect_eq "$name: exit status" 2 "$rc"
  expect_eq "$name: stderr" "ezpz: error: $message" "$err"
  expect_eq "$name: stdout" "" "$out"
  expect_true "$name: the trainer never ran" test ! -e "$scratch/trainer-ran"
  expect_true "$name: no output directory" test ! -e "$work/outputs"
}
expect_refused "unknown preset" "--model huge: unknown preset; expected one of debug, s, m, l, xl" \
  test -n 2 --model huge
expect_refused "unknown preset after --" \
  "--model huge: unknown preset; expected one of debug, s, m, l, xl" test -n 2 -- --model huge
expect_refused "iters within warm-up" \
  "--iters 3: must exceed --warmup 5 by at least 2 (the loss check compares steps after warm-up)" \
  test --iters 3
expect_refused "neither ezpz's nor the trainer's" \
  "test: --bogus: not an option of ezpz test nor a trainer flag (ezpz test --help lists both)" \
  test -n 2 --bogus
expect_refused "an ezpz option after --" \
  "-n: not a trainer flag (ezpz test --help lists them)" test -- -n 2
expect_refused "--probe is not a test" "--probe: not a trainer flag (ezpz test --help lists them)" \
  test -- --probe

# -np, -ppn and -nh: the spellings of mpiexec and the Python ezpz, before -- only.
run_ezpz launch -np 2 -ppn 2 --dry-run -- true -np 3
expect_eq "-np 2 -ppn 2" \
  "MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 EZPZ_LAUNCHER=hydra mpiexec -n 2 -ppn 2 -hosts $(hostname) $bin/ezpz-rankenv true -np 3" \
  "$out"
run_ezpz launch -np 2 --dry-run echo -np 3
expect_match "the command's own -np is its own" " $bin/ezpz-rankenv echo -np 3\$" "$out"
printf 'n01\nn02\n' >"$scratch/hosts"
run_ezpz launch --hostfile "$scratch/hosts" -nh 1 -np 2 --dry-run -- true
expect_match "-nh 1: one host" "WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 " "$out"
# That host is n01, not this machine: the launcher is given a hostfile naming it (before: none,
# and the ranks ran here while MASTER_ADDR said n01).
run_ezpz launch --hostfile "$scratch/hosts" -nh 1 -np 2 --dry-run --json -- true
hostfile=$(jq -r .hostfile <<<"$out")
expect_eq "-nh 1: mpiexec is given a hostfile" "-f $hostfile" "$(jq -r '.argv[5:7] | join(" ")' <<<"$out")"
expect_eq "-nh 1: the hostfile names n01" n01 "$(cat "$hostfile" 2>&1)"
run_ezpz yeet -np 2 --dry-run "$scratch/hosts"
expect_eq "-np where ranks are not chosen: the plain refusal" \
  "ezpz: error: yeet: -n and --ppn do not apply: one rank runs on each node (choose nodes with --nhosts, --exclude or --hostfile)" \
  "$err"

# The Python ezpz's long spellings and torchrun's, with a space or with =.
printf 'n01\nn02\nn03\n' >"$scratch/hosts3"
for spelled in "--n 4 --nproc_per_node 2" "--nprocs=4 --nproc_per_node=2" \
  "--world_size 4 --nnodes 2" "--nh 2 -ppn 2" "--nhost=2 --ppn 2" "--nnode 2 -np=4"; do
  read -ra words <<<"$spelled"
  run_ezpz launch --hostfile "$scratch/hosts3" "${words[@]}" --dry-run -- true
  expect_match "$spelled: 4 ranks, 2 per host" "^MASTER_ADDR=n01 MASTER_PORT=29500 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 .* -n 4 -ppn 2 " "$out"
done
# A launcher's own flag, which the Python ezpz passed on: refused, saying how to pass it.
run_ezpz launch -n 2 --tag-output --dry-run -- true
expect_eq "--tag-output: exit status" 2 "$rc"
expect_eq "--tag-output: the way to pass it" \
  "ezpz: error: launch: unknown option --tag-output; put the command after --, and a launcher's own flag in --launcher-arg=--tag-output" \
  "$err"

# --dry-run --spares: the plan of the first attempt, on the active hosts, the spares named; the
# error a run gives when none would stay active.
printf 'n%02d\n' 1 2 3 4 5 6 7 8 9 10 >"$scratch/hosts10"
run_ezpz launch --hostfile "$scratch/hosts10" --spares 10 --dry-run --json -- true
expect_eq "--spares 10 of 10: exit status" 2 "$rc"
expect_eq "--spares 10 of 10: a run's error" \
  "ezpz: error: --spares 10: the allocation has 10 hosts; at least one must stay active" "$err"
run_ezpz launch --hostfile "$scratch/hosts10" --spares 2 --dry-run --json -- true
expect_eq "--spares 2: 8 active hosts, 2 spares" \
  '[["n01","n02","n03","n04","n05","n06","n07","n08"],["n09","n10"],8]' \
  "$(jq -c '[.hosts, .spares, .world_size]' <<<"$out")"
expect_eq "--spares 2: the spares on stderr" "ezpz: spares (--spares 2): n09 n10" "$err"
run_ezpz launch --hostfile "$scratch/hosts10" --dry-run --json -- true
expect_eq "no --spares: no spares key" "null 10" "$(jq -c '.spares, .world_size' <<<"$out" | xargs)"

# Usage lines say what follows the options; env offers no --dry-run.
expect_eq "launch usage" "Usage: ezpz launch [OPTIONS] [--] COMMAND [ARGS...]" \
  "$("$EZPZ_BIN" launch --help | grep "^Usage:")"
expect_eq "test usage" "Usage: ezpz test [OPTIONS] [TRAINER FLAGS...] [-- TRAINER FLAGS...]" \
  "$("$EZPZ_BIN" test --help | grep "^Usage:")"
expect_eq "env usage" "Usage: ezpz env [OPTIONS]" "$("$EZPZ_BIN" env --help | grep "^Usage:")"
expect_eq "env --help never mentions --dry-run" "" "$("$EZPZ_BIN" env --help | grep -e '--dry-run')"
expect_match "test --help lists the trainer's flags" "--model TEXT +Preset: debug, s, m, l, xl" \
  "$("$EZPZ_BIN" test --help)"

# The command is looked for once, before the launch: one line, exit 127.
printf 'print()\n' >"$work/ddp.py"
run_ezpz launch -n 2 -- ddp.py
expect_eq "command in this directory: exit status" 127 "$rc"
expect_eq "command in this directory: one line" \
  "ezpz: error: ddp.py: command not found on the ranks' PATH; did you mean ./ddp.py or python3 ddp.py?" \
  "$err"
run_ezpz launch -n 2 -- train.py
expect_eq "a .py elsewhere" \
  "ezpz: error: train.py: command not found on the ranks' PATH; did you mean python3 train.py?" \
  "$err"
run_ezpz launch -n 2 -- ./ddp.py
expect_eq "not executable: exit status" 127 "$rc"
expect_eq "not executable" \
  "ezpz: error: ./ddp.py: not an executable file; did you mean python3 ./ddp.py?" "$err"
run_ezpz launch -n 2 -x PATH=/nowhere -- sh -c true
expect_eq "the ranks' PATH is the one -x gives them" \
  "ezpz: error: sh: command not found on the ranks' PATH" "$err"
# With no launcher on PATH either, which error comes first tells whether ezpz looked.
mkdir -p "$scratch/empty"
err=$(cd "$work" && clean_env PATH="$scratch/empty" "$bin/ezpz" launch -n 2 -- ddp.py 2>&1)
expect_eq "the look-up comes before the launcher's" \
  "ezpz: error: ddp.py: command not found on the ranks' PATH; did you mean ./ddp.py or python3 ddp.py?" \
  "$err"
err=$(cd "$work" && clean_env PATH="$scratch/empty" "$bin/ezpz" launch -n 2 --no-command-check \
  -- ddp.py 2>&1)
expect_eq "--no-command-check: no look-up" "ezpz: error: mpiexec: launcher not found on PATH" "$err"
run_ezpz launch -n 2 --dry-run -- ddp.py
expect_eq "--dry-run plans without looking" 0 "$rc"
# --- --timeout is the Python ezpz's idle watchdog; the wall-clock limit is --time-limit ---------
# A script carried over from the Python ezpz must never have a healthy job that prints killed.
talker='for i in 1 2 3 4; do echo "tick $i"; sleep 0.5; done'
run_ezpz launch -n 1 --timeout 1 --no-record --no-rank-env -- sh -c "$talker"
expect_eq "--timeout 1: a rank printing every 0.5 s runs to its end" 0 "$rc"
expect_eq "--timeout 1: its output" "tick 1 tick 2 tick 3 tick 4" "$(echo $out)"
run_ezpz launch -n 1 --timeout 1 --no-record --no-rank-env -- sleep 5
expect_eq "--timeout 1: a silent rank is stopped" 124 "$rc"
run_ezpz launch -n 1 --time-limit 1 --no-record --no-rank-env -- sh -c "$talker"
expect_eq "--time-limit 1: stopped after 1 s of wall time" 124 "$rc"
run_ezpz launch --timeout 5 --idle-timeout 5 --dry-run -- true
expect_eq "--timeout and --idle-timeout: exit status" 2 "$rc"
expect_eq "--timeout and --idle-timeout: one line" "ezpz: error: --idle-timeout excludes --timeout" "$err"
finish
