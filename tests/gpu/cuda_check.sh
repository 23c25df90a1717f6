#!/usr/bin/env bash
# The CUDA path on a GPU machine, in one call: builds ezpz against that machine's CUDA torch,
# then checks doctor, ezpz test, GradSync and a user's NCCL DDP script under Hydra and
# torchrun, each against what it must print. CI has no GPU; this is run by hand where one is
# lent. Prepare the carry folder on Debian first (tests/gpu/prepare.sh), then there, from the
# repo root:  bash tests/gpu/cuda_check.sh     (logs in $OUT when set; build in $B, /tmp/b)
# Prints "ok NAME" or "FAIL NAME" with the output's tail, then a count; exit 1 on a failure.
set -u
here=$PWD/tests/gpu carry=$PWD/.gpu-carry B=${B:-/tmp/b} logs=${OUT:-/tmp/cuda-check}
mkdir -p "$logs"
export PATH=$carry/bin:$PATH EZPZ_MACHINES_PATH=$here/machines PYTHONUNBUFFERED=1
passed=0 failed=0
# check NAME RC PATTERN... -- COMMAND...: COMMAND's exit status must be RC (0, or "fail" for
# any other) and its output must match every PATTERN (grep -E).
check() {
  local name=$1 want=$2 patterns=() rc ok=1; shift 2
  while [ "$1" != -- ]; do patterns+=("$1"); shift; done; shift
  timeout 300 "$@" >"$logs/case.log" 2>&1; rc=$?
  if [ "$want" = fail ]; then [ "$rc" != 0 ] || ok=0; else [ "$rc" = "$want" ] || ok=0; fi
  for p in "${patterns[@]}"; do grep -Eq -- "$p" "$logs/case.log" || { ok=0; echo "  missing: $p"; }; done
  cat "$logs/case.log" >>"$logs/all.log"
  if [ $ok = 1 ]; then echo "ok $name"; passed=$((passed + 1)); return; fi
  echo "FAIL $name (exit $rc)"; tail -n 15 "$logs/case.log" | sed 's/^/  | /'; failed=$((failed + 1))
}

nvidia-smi -L; python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
if [ ! -x "$B/ezpz-smoke" ]; then
  torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
  cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEZPZ_WITH_STAGER=OFF \
    -DEZPZ_WITH_BENCH=OFF -DCMAKE_PREFIX_PATH="$carry/deps;$torch_prefix" >"$logs/configure.log" 2>&1 &&
    cmake --build "$B" -j"$(nproc)" --target ezpz ezpz-rankenv ezpz-smoke ezpz_grad_sync_check \
      -- -k 0 >"$logs/build.log" 2>&1 ||
    { grep -E "error|Error" "$logs/configure.log" "$logs/build.log" | head -30; exit 1; }
fi
E=$B/ezpz G=$B/ezpz_grad_sync_check P="python3 $here/ddp_cuda.py"
gloo_shared='backend gloo \(default for cuda; NCCL needs a GPU of its own per rank, but local ranks 0 and 1 share GPU 0'

check doctor 0 'ok +gpus +1 GPU found here, profile gpubox has 1' \
  'ok +trainer +libtorch 2[^:]*: cpu, cuda x1; backends gloo, nccl; default cuda with nccl' -- \
  "$E" doctor --machine gpubox
check "test, 1 rank, NCCL" 0 'device cuda:0' 'backend nccl \(default for cuda\)' '^ezpz test: PASS: 1 rank' -- \
  "$E" test -n 1 --iters 40
check "test, 1 rank, bf16, model m" 0 '^ezpz test: PASS: 1 rank' -- "$E" test -n 1 --model m --dtype bf16 --iters 40
check "test, 2 ranks share the GPU: Gloo" 0 "$gloo_shared" '^ezpz test: PASS: 2 ranks' -- \
  "$E" test --machine gpubox -n 2 --ppn 2 --iters 30
check "test, 2 ranks share the GPU, TORCH_BACKEND=nccl: refused" fail \
  'TORCH_BACKEND=nccl: NCCL needs a GPU of its own per rank, but local ranks 0 and 1 share GPU 0' -- \
  "$E" test --machine gpubox -n 2 --ppn 2 -x TORCH_BACKEND=nccl --iters 10
check "test, 2 ranks on 1 GPU without placement: refused" fail \
  'LOCAL_RANK=1: only 1 CUDA device is visible' -- \
  "$E" test -n 2 --ppn 2 -x EZPZ_RENDEZVOUS_TIMEOUT=10 --iters 10
for a in "fp32 33554432" "bf16 64"; do
  check "grad sync, 1 rank, $a" 0 ': ok$' -- "$E" launch -n 1 -- "$G" $a
  check "grad sync, 2 ranks share the GPU, $a" 0 '^\[1\] rank 1 step 2: .*: ok$' -- \
    "$E" launch --machine gpubox -n 2 --ppn 2 -- "$G" $a
done
check "python DDP, NCCL" 0 'rank=0 .* cuda:0 .* backend=nccl params=match' -- "$E" launch -n 1 -- $P
check "python DDP, placed" 0 'CUDA_VISIBLE_DEVICES=0 EZPZ_LOCAL_DEVICE=0 cuda:0 .* backend=nccl params=match' -- \
  "$E" launch --machine gpubox -n 1 -- $P
check "python DDP, 2 ranks share the GPU, Gloo" 0 '\[1\] ddp rank=1 .* backend=gloo params=match' -- \
  "$E" launch --machine gpubox -n 2 --ppn 2 -x DDP_BACKEND=gloo -- $P
check "python DDP, 2 ranks share the GPU, NCCL: hint" fail 'hint: "Duplicate GPU detected"' -- \
  "$E" launch --machine gpubox -n 2 --ppn 2 -- $P
check "python DDP, torchrun" 0 'rank=0 .* backend=nccl params=match' -- "$E" launch --launcher torchrun -n 1 -- $P

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
