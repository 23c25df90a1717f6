#!/usr/bin/python3
"""The Python twin of ezpz-smoke, for bench/: the same training with
torch.nn.parallel.DistributedDataParallel over Gloo, timed the same way.

    ezpz launch -n 2 -- /usr/bin/python3 bench/python_ddp.py --iters 300 --warmup 20

What matches apps/smoke/trainer.cpp (ezpz-smoke):
  * model 784-512-256-128-10 (Linear + ReLU; --layers), batch 128 per rank,
    Adam (lr 1e-3), fp32, cross-entropy, torch.set_num_threads(--threads) and
    OpenBLAS held to the same number of threads (ezpz-smoke calls
    openblas_set_num_threads too);
  * synthetic data made on the fly: each class has a mean image (0.25 x
    randn, from the base seed, the same on every rank) and a sample is its
    class's mean plus unit noise from the rank's generator (seed x (rank + 1));
  * rank 0's parameters reach every rank before the first step (DDP broadcasts
    them in its constructor; ezpz-smoke's GradSync does the same);
  * one step is timed from the start of making its batch to the end of
    optimizer.step(): data, forward + loss, zero_grad + backward (with DDP
    the gradient all-reduce runs inside backward and is waited for there),
    optimizer. samples/s of a step = batch x world size / step time; the
    figure is the mean of that over the steps after --warmup, as ezpz-smoke
    computes it (report::summarize of StepRecord::samples_per_s).
  * rank 0 logs every step on stderr outside the timed region
    ("step    1/300 loss ...", ezpz-smoke's format) and writes metrics.jsonl
    (ezpz-smoke's keys; allreduce_s is null: it is inside backward_s) and
    summary.json (samples_per_s) to --output-dir.

Differences kept on purpose (each is what a plain DDP script does): the
logged loss is rank 0's own (ezpz-smoke averages it over ranks inside its
gradient bucket), DDP's default buckets, and no parameter check at the end.
DDP's 1 MiB first-bucket limit closes a bucket only once it is passed, so
this model's 2.27 MB land in one bucket, as in ezpz-smoke (torch 1.13's
_get_ddp_logging_data(): bucket_sizes and rebuilt_bucket_sizes "2269736" at
2 ranks), all-reduced when its last gradient (the first layer's) is in.
"""
import argparse
import ctypes
import json
import os
import sys
import time


def process_age_s():
    """Seconds since the kernel started this process (/proc), like ezpz-smoke."""
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime") as f:
            up = float(f.read().split()[0])
        return up - float(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


AGE_AT_ENTRY = process_age_s()
ENTRY = time.perf_counter()

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

IMPORTED = time.perf_counter()


def since_start_ms():
    return (AGE_AT_ENTRY + time.perf_counter() - ENTRY) * 1e3


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--layers", default="512,256,128", help="hidden sizes (default 512,256,128)")
    p.add_argument("--batch-size", type=int, default=128, help="samples per rank per step")
    p.add_argument("--iters", type=int, default=100, help="training steps")
    p.add_argument("--warmup", type=int, default=5, help="steps left out of the statistics")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate")
    p.add_argument("--threads", type=int, default=1, help="compute threads per rank")
    p.add_argument("--seed", type=int, default=1234, help="base seed; rank r uses seed x (r + 1)")
    p.add_argument("--log-freq", type=int, default=1, help="log and record every Nth step")
    p.add_argument("--output-dir", default="", help="where rank 0 writes metrics.jsonl, summary.json")
    a = p.parse_args()
    a.layers = [int(w) for w in a.layers.split(",") if w]
    if a.iters < a.warmup + 2:
        p.error("--iters must exceed --warmup by at least 2")
    return a


def set_threads(n):
    torch.set_num_threads(n)
    # As ezpz-smoke: libtorch does not size OpenBLAS's own pool.
    for name in ("libopenblas.so.0", "libopenblasp.so.0"):
        try:
            ctypes.CDLL(name, mode=os.RTLD_NOLOAD | os.RTLD_LAZY).openblas_set_num_threads(n)
            return
        except (OSError, AttributeError):
            pass


def loaded_blas():
    """The BLAS/LAPACK/OpenMP libraries this process has mapped."""
    found = []
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            base = os.path.basename(path)
            if any(k in base for k in ("blas", "lapack", "gomp", "mkl")) and path not in found:
                found.append(path)
    return found


def build_model(layers, input_size=784, classes=10):
    mods, width = [], input_size
    for w in layers:
        mods += [torch.nn.Linear(width, w), torch.nn.ReLU()]
        width = w
    mods.append(torch.nn.Linear(width, classes))
    return torch.nn.Sequential(*mods)


class SyntheticData:
    def __init__(self, seed, rank, classes=10, input_size=784):
        shared = torch.Generator().manual_seed(seed)
        self.means = torch.randn(classes, input_size, generator=shared) * 0.25
        self.gen = torch.Generator().manual_seed(seed * (rank + 1))

    def next(self, batch):
        labels = torch.randint(0, self.means.size(0), (batch,), generator=self.gen)
        noise = torch.randn(batch, self.means.size(1), generator=self.gen)
        return self.means.index_select(0, labels).add_(noise), labels


def log(rank, text):
    if rank == 0:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def main():
    a = parse_args()
    set_threads(a.threads)
    t0 = time.perf_counter()
    dist.init_process_group("gloo")  # env:// from ezpz launch
    rank, world = dist.get_rank(), dist.get_world_size()
    setup_s = time.perf_counter() - t0
    torch.manual_seed(a.seed * (rank + 1))
    model = DDP(build_model(a.layers))
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    data = SyntheticData(a.seed, rank)
    params = sum(p.numel() for p in model.parameters())
    log(rank, f"{world} rank{'s' if world > 1 else ''} (python {sys.version.split()[0]}, torch "
        f"{torch.__version__}, DDP over gloo)")
    log(rank, f"ready {since_start_ms():.0f} ms after start: import torch {(IMPORTED - ENTRY) * 1e3:.0f} ms, "
        f"init_process_group {setup_s * 1e3:.0f} ms")
    log(rank, f"model 784-{'-'.join(map(str, a.layers))}-10 ({params} parameters), fp32, batch "
        f"{a.batch_size} per rank, {a.iters} steps ({a.warmup} warm-up), {torch.get_num_threads()} "
        f"thread{'s' if torch.get_num_threads() != 1 else ''} per rank; BLAS: {', '.join(loaded_blas())}")

    out = None
    if rank == 0 and a.output_dir:
        os.makedirs(a.output_dir, exist_ok=True)
        out = open(os.path.join(a.output_dir, "metrics.jsonl"), "w")
    clock = time.perf_counter
    rates = []
    for i in range(1, a.iters + 1):
        start = clock()
        x, labels = data.next(a.batch_size)
        t_data = clock()
        loss = F.cross_entropy(model(x), labels)
        t_fwd = clock()
        opt.zero_grad(set_to_none=True)
        loss.backward()  # DDP all-reduces the gradient buckets in here
        t_bwd = clock()
        opt.step()
        end = clock()
        step_s = end - start
        rate = a.batch_size * world / step_s
        rates.append(rate)
        if i == 1:
            log(rank, f"first step done {since_start_ms():.0f} ms after start")
        if i % a.log_freq and i != a.iters:
            continue
        value = loss.item()
        log(rank, f"step {i:>4}/{a.iters} loss {value:.4f} | {step_s * 1e3:.2f} ms (data "
            f"{(t_data - start) * 1e3:.2f}, fwd {(t_fwd - t_data) * 1e3:.2f}, bwd+all-reduce "
            f"{(t_bwd - t_fwd) * 1e3:.2f}, opt {(end - t_bwd) * 1e3:.2f}) | {rate:.0f} samples/s")
        if out:
            out.write(json.dumps({
                "step": i, "loss": value, "step_s": step_s, "data_s": t_data - start,
                "forward_s": t_fwd - t_data, "backward_s": t_bwd - t_fwd, "allreduce_s": None,
                "optimizer_s": end - t_bwd, "samples_per_s": rate}) + "\n")
    after = rates[min(a.warmup, len(rates) - 1):]
    mean = sum(after) / len(after)
    log(rank, f"done: {mean:.1f} samples/s (mean over steps {a.warmup + 1}-{a.iters})")
    if out:
        out.close()
        with open(os.path.join(a.output_dir, "summary.json"), "w") as f:
            json.dump({"status": "pass", "world_size": world, "samples_per_s": mean,
                       "steps": a.iters, "blas": loaded_blas(),
                       "torch_config": torch.__config__.show()}, f, indent=2)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
