"""Data and precision recipes in one script: a map-style dataset whose transforms crop and flip at random with
NumPy and torch, loaded by a shuffling DataLoader with worker processes (each worker draws from its own seeded
generators), a float-stepped arange as regression inputs, and a training loop under CPU autocast in float16 with
a GradScaler, unscaling before gradient clipping, and the scaler's state saved and restored."""

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset, get_worker_info

torch.manual_seed(11)
np.random.seed(11)


class Patches(Dataset):
    """Twelve 10x10 single-channel images, cropped to 6x6 at a random place and flipped half of the time."""

    def __init__(self, crop=6):
        rs = np.random.RandomState(0)
        self.images = rs.rand(12, 10, 10).astype(np.float32)
        self.labels = rs.randint(0, 3, size=12)
        self.crop = crop

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        img = self.images[i]
        top, left = np.random.randint(0, 10 - self.crop, size=2)
        patch = torch.from_numpy(img[top:top + self.crop, left:left + self.crop].copy())
        if torch.rand(1).item() < 0.5:
            patch = patch.flip(-1)
        info = get_worker_info()
        return {"image": patch.unsqueeze(0), "label": int(self.labels[i]), "worker": -1 if info is None else info.id,
                "corner": torch.tensor([top, left])}


for workers in (0, 2):
    loader = DataLoader(Patches(), batch_size=4, shuffle=True, num_workers=workers)
    for batch in loader:
        print("workers", workers, batch["worker"].tolist(), batch["label"].tolist(), batch["corner"].tolist(),
              round(batch["image"].sum().item(), 4))
print("main stream untouched by the workers", torch.rand(2), np.random.randint(0, 1000))

# a float-stepped range: the same float32 values as torch, bit for bit
xs = torch.arange(-2, 2, 0.05).view(-1, 1)
print("range", xs.shape, xs[::16].flatten(), xs.sum())

# mixed precision on the CPU: float16 autocast with loss scaling
net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=2)
target = torch.sin(2 * xs)
for step in range(5):
    with torch.autocast(device_type="cpu", dtype=torch.float16):
        pred = net(xs)
        loss = nn.functional.mse_loss(pred.float(), target)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    norm = nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0)
    scaler.step(opt)
    scaler.update()
    opt.zero_grad()
    print("step", step, pred.dtype, round(loss.item(), 5), round(norm.item(), 4), scaler.get_scale())
state = scaler.state_dict()
fresh = torch.amp.GradScaler("cpu")
fresh.load_state_dict(state)
print("scaler state", state["scale"], state["_growth_tracker"], fresh.get_scale())
