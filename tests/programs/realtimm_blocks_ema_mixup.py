"""timm-style training in miniature: an fx-wrapped helper, a ConvNeXt-ish block with drop path and LayerNorm2d,
a generic batch sampler, label-smoothing and soft-target losses on mixed-up batches, an EMA kept with foreach
lerp / mul(scalar=) / add(alpha=), and a warmup-cosine learning rate."""
import math
from typing import Iterator, List

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.jit.annotations import Optional, Tuple
from torch.utils.data import Sampler


@torch.fx.wrap
def drop_path(x, p: float = 0., training: bool = False):
    if p == 0. or not training:
        return x
    keep = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(1 - p)
    return x * keep.div_(1 - p)


class LayerNorm2d(nn.LayerNorm):
    def forward(self, x):
        return F.layer_norm(x.permute(0, 2, 3, 1), self.normalized_shape, self.weight, self.bias,
                            self.eps).permute(0, 3, 1, 2)


class Block(nn.Module):
    def __init__(self, dim, dp=0.2):
        super().__init__()
        self.dw = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)
        self.norm = LayerNorm2d(dim, eps=1e-6)
        self.mlp = nn.Sequential(nn.Conv2d(dim, 2 * dim, 1), nn.GELU(approximate='tanh'), nn.Conv2d(2 * dim, dim, 1))
        self.gamma = nn.Parameter(torch.full((dim,), 0.5))
        self.dp = dp

    def forward(self, x):
        y = self.mlp(self.norm(self.dw(x)))
        return x + drop_path(y * self.gamma.reshape(1, -1, 1, 1), self.dp, self.training)


class Net(nn.Module):
    def __init__(self, classes=5, dim=8):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, dim, 2, stride=2), LayerNorm2d(dim))
        self.blocks = nn.Sequential(Block(dim), Block(dim))
        self.head = nn.Linear(dim, classes)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.trunc_normal_(m.weight, std=.02)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)).mean((2, 3)))


class PairSampler(Sampler[List[int]]):
    def __init__(self, n: int):
        self.n = n

    def __iter__(self) -> Iterator[List[int]]:
        order = torch.randperm(self.n).tolist()
        return iter([order[i:i + 4] for i in range(0, self.n, 4)])


def mixup(x, y, classes: int, alpha: float = 0.8, smoothing: float = 0.1) -> Tuple[torch.Tensor, torch.Tensor]:
    lam = float(np.random.beta(alpha, alpha))
    off, on = smoothing / classes, 1. - smoothing + smoothing / classes
    t = torch.full((y.size(0), classes), off).scatter_(1, y.view(-1, 1), on)
    return x.mul(lam).add_(x.flip(0).mul_(1. - lam)), t * lam + t.flip(0) * (1. - lam)


def soft_target_ce(logits, target):
    return torch.sum(-target * F.log_softmax(logits, dim=-1), dim=-1).mean()


def lr_at(step: int, total: int, base: float, warm: int = 2, floor: Optional[float] = 1e-4) -> float:
    if step < warm:
        return base * (step + 1) / warm
    return floor + 0.5 * (base - floor) * (1 + math.cos(math.pi * (step - warm) / (total - warm)))


torch.manual_seed(0)
np.random.seed(0)
model = Net()
ema = Net()
ema.load_state_dict(model.state_dict())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
smooth = nn.CrossEntropyLoss(label_smoothing=0.1)
xs, ys = torch.randn(16, 3, 8, 8), torch.randint(0, 5, (16,))
step, total = 0, 8
for epoch in range(2):
    for idx in PairSampler(16):
        for g in opt.param_groups:
            g['lr'] = lr_at(step, total, 2e-3)
        xb, yb = xs[idx], ys[idx]
        xm, tm = mixup(xb, yb, 5)
        loss = soft_target_ce(model(xm), tm) + 0.5 * smooth(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            ev = [v for v in ema.state_dict().values() if v.is_floating_point()]
            mv = [v for v in model.state_dict().values() if v.is_floating_point()]
            if step % 2:
                torch._foreach_lerp_(ev, mv, weight=0.1)
            else:
                torch._foreach_mul_(ev, scalar=0.9)
                torch._foreach_add_(ev, mv, alpha=0.1)
        step += 1
        print(f"step {step} lr {opt.param_groups[0]['lr']:.6f} loss {loss.item():.5f}")
model.eval(), ema.eval()
with torch.no_grad():
    print("model", model(xs[:4]).argmax(1).tolist(), model(xs).sum().item())
    print("ema", ema(xs[:4]).sum(1).tolist())
