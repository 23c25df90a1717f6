# A plain DDP script, as a user writes it for GPUs: the device from EZPZ_LOCAL_DEVICE, else
# LOCAL_RANK (README, "Which device a rank uses"); DDP_BACKEND picks nccl (default) or gloo.
# Each rank prints what it saw and whether every rank's parameters equal its own.
import os
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
dev = int(os.environ.get("EZPZ_LOCAL_DEVICE", os.environ["LOCAL_RANK"]))
torch.cuda.set_device(dev)
backend = os.environ.get("DDP_BACKEND", "nccl")
kw = {"device_id": torch.device("cuda", dev)} if backend == "nccl" else {}
dist.init_process_group(backend, **kw)
rank, ws = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = DDP(torch.nn.Linear(1024, 1024).cuda(), device_ids=[dev])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
torch.manual_seed(rank)
for step in range(20):
    x = torch.randn(64, 1024, device="cuda")
    loss = model(x).square().mean()
    opt.zero_grad(); loss.backward(); opt.step()
params = torch.cat([p.detach().flatten() for p in model.parameters()])
gathered = [torch.empty_like(params) for _ in range(ws)]
dist.all_gather(gathered, params)
match = all(torch.equal(g, params) for g in gathered)
print(f"ddp rank={rank} local_rank={os.environ['LOCAL_RANK']} world={ws} "
      f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')} "
      f"EZPZ_LOCAL_DEVICE={os.environ.get('EZPZ_LOCAL_DEVICE')} cuda:{torch.cuda.current_device()} "
      f"{torch.cuda.get_device_name()} backend={backend} params={'match' if match else 'DIFFER'}",
      flush=True)
dist.destroy_process_group()
