import numpy as np, torch, torch.nn as nn, torch.nn.functional as F
torch.backends.cudnn.benchmark = True; torch.backends.cudnn.deterministic = True
torch.set_float32_matmul_precision("high"); torch.use_deterministic_algorithms(True)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print(device, torch.cuda.device_count(), torch.backends.mps.is_available())
rng = np.random.default_rng(6)
m = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)).to(device)
with torch.no_grad():
    for p in m.parameters(): p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5))
x = torch.from_numpy(rng.standard_normal((16, 4)).astype(np.float32)).to(device, non_blocking=True)
scaler = torch.amp.GradScaler("cpu", enabled=False)
opt = torch.optim.Adagrad(m.parameters(), lr=0.1)
for i in range(3):
    with torch.autocast(device_type="cpu", enabled=False):
        loss = m(x).pow(2).mean()
    opt.zero_grad(); scaler.scale(loss).backward(); scaler.step(opt); scaler.update()
    print(i, f"{loss.item():.6f}")
ts = torch.jit.trace(m, x) if hasattr(torch, "jit") else m
print(ts(x)[:2].detach())
@torch.jit.script
def f(a: torch.Tensor) -> torch.Tensor:
    return a * 2 + 1
print(f(torch.ones(2)))
from torch.utils.data import DataLoader, TensorDataset
dl = DataLoader(TensorDataset(x, torch.arange(16)), batch_size=5, shuffle=True, num_workers=2, pin_memory=False, drop_last=True, generator=torch.Generator().manual_seed(0))
print(sum(len(b[1]) for b in dl), len(dl))
print(torch.__version__ is not None, torch.distributed.is_available(), torch.get_num_threads() > 0)
with torch.profiler.profile() as prof:
    m(x)
print(torch.initial_seed() >= 0, torch.finfo(torch.float32).eps, torch.iinfo(torch.int64).max, torch.float32.itemsize)
print(torch.tensor(3).item(), torch.is_tensor(x), torch.numel(x), x.element_size(), x.nbytes, x.device.type, x.is_cuda)
with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    y = m(x)
print(y.dtype)
