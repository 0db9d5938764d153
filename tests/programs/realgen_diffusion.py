"""A conditional DDPM on 8x8 images in the style of the small diffusion scripts: a U-Net with GroupNorm, GELU/SiLU,
sinusoidal time embeddings plus a label embedding, self-attention over pixels, bilinear and transposed-conv
upsampling; a linear beta schedule in buffers, AdamW, an EMA copy, classifier-free guidance with lerp, and
sampling into a uint8 grid."""
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
np.random.seed(0)


class Block(nn.Module):
    def __init__(self, cin, cout, residual=False):
        super().__init__()
        self.residual = residual
        self.net = nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.GroupNorm(1, cout), nn.GELU(),
                                 nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.GroupNorm(2, cout))

    def forward(self, x):
        return F.gelu(x + self.net(x)) if self.residual else self.net(x)


class Attn(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.ch = ch
        self.norm = nn.LayerNorm([ch])
        self.mha = nn.MultiheadAttention(ch, 2, batch_first=True)
        self.ff = nn.Sequential(nn.LayerNorm([ch]), nn.Linear(ch, ch), nn.SiLU(), nn.Linear(ch, ch))

    def forward(self, x):
        b, c, h, w = x.shape
        t = x.view(b, c, h * w).swapaxes(1, 2)
        q = self.norm(t)
        a, _ = self.mha(q, q, q, need_weights=False)
        a = a + t
        a = self.ff(a) + a
        return a.swapaxes(2, 1).reshape(b, c, h, w)


class UNet(nn.Module):
    def __init__(self, ch=8, tdim=16, n_classes=3):
        super().__init__()
        self.tdim = tdim
        self.inc = Block(1, ch)
        self.down = nn.Sequential(nn.MaxPool2d(2), Block(ch, ch, residual=True), Block(ch, 2 * ch))
        self.emb1 = nn.Sequential(nn.SiLU(), nn.Linear(tdim, 2 * ch))
        self.attn = Attn(2 * ch)
        self.mid = Block(2 * ch, 2 * ch)
        self.up_t = nn.ConvTranspose2d(2 * ch, ch, 2, stride=2)
        self.up_b = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
        self.dec = Block(4 * ch, ch)
        self.out = nn.Conv2d(ch, 1, 1)
        self.label = nn.Embedding(n_classes, tdim)

    def pos_encoding(self, t):
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.tdim, 2).float() / self.tdim))
        ang = t.unsqueeze(-1).float() * inv_freq
        return torch.cat([torch.sin(ang), torch.cos(ang)], dim=-1)

    def forward(self, x, t, y=None):
        e = self.pos_encoding(t)
        if y is not None:
            e = e + self.label(y)
        x1 = self.inc(x)
        x2 = self.down(x1) + self.emb1(e)[:, :, None, None].repeat(1, 1, x.shape[-2] // 2, x.shape[-1] // 2)
        x2 = self.mid(self.attn(x2))
        u = torch.cat([x1, self.up_t(x2), self.up_b(x2)[:, : x1.shape[1]], F.pad(x1[..., 1:, 1:], [0, 1, 0, 1])], 1)
        return self.out(self.dec(u))


class Diffusion(nn.Module):
    def __init__(self, steps=12):
        super().__init__()
        self.steps = steps
        beta = torch.linspace(1e-4, 0.2, steps)
        self.register_buffer("beta", beta)
        self.register_buffer("alpha", 1.0 - beta)
        self.register_buffer("alpha_hat", torch.cumprod(1.0 - beta, dim=0))

    def noise(self, x, t):
        s = torch.sqrt(self.alpha_hat[t])[:, None, None, None]
        s1 = torch.sqrt(1 - self.alpha_hat[t])[:, None, None, None]
        eps = torch.randn_like(x)
        return s * x + s1 * eps, eps

    @torch.no_grad()
    def sample(self, model, labels, cfg=2.0):
        model.eval()
        x = torch.randn(len(labels), 1, 8, 8)
        for i in reversed(range(1, self.steps)):
            t = (torch.ones(len(labels)) * i).long()
            pred = model(x, t, labels)
            if cfg > 0:
                pred = torch.lerp(model(x, t, None), pred, cfg)
            a, ah, b = self.alpha[t][:, None, None, None], self.alpha_hat[t][:, None, None, None], self.beta[t][:, None, None, None]
            z = torch.randn_like(x) if i > 1 else torch.zeros_like(x)
            x = 1 / torch.sqrt(a) * (x - ((1 - a) / torch.sqrt(1 - ah)) * pred) + torch.sqrt(b) * z
        model.train()
        return ((x.clamp(-1, 1) + 1) / 2 * 255).type(torch.uint8)


def make_grid(imgs, nrow=4, pad=1):
    n, c, h, w = imgs.shape
    rows = (n + nrow - 1) // nrow
    grid = imgs.new_full((c, rows * (h + pad) + pad, nrow * (w + pad) + pad), 0)
    for k in range(n):
        y, x = divmod(k, nrow)
        grid.narrow(1, y * (h + pad) + pad, h).narrow(2, x * (w + pad) + pad, w).copy_(imgs[k])
    return grid


data = torch.from_numpy(np.random.rand(24, 1, 8, 8).astype(np.float32)) * 2 - 1
labels = torch.from_numpy(np.random.randint(0, 3, 24))
model, diff = UNet(), Diffusion()
ema = copy.deepcopy(model).eval().requires_grad_(False)
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
mse = nn.MSELoss()
print("params", sum(p.numel() for p in model.parameters()), [k for k, _ in diff.named_buffers()])
for step in range(6):
    idx = torch.randperm(24)[:8]
    x0, y = data[idx], labels[idx]
    t = torch.randint(1, diff.steps, (8,))
    xt, eps = diff.noise(x0, t)
    if np.random.random() < 0.3:
        y = None
    loss = mse(eps, model(xt, t, y))
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        for pe, p in zip(ema.parameters(), model.parameters()):
            pe.lerp_(p, 0.1) if step else pe.copy_(p)
    print(step, f"{loss.item():.5f}", y is None)
out = diff.sample(ema, torch.arange(3))
grid = make_grid(out.float())
print(out.dtype, tuple(grid.shape), f"{grid.mean().item():.3f}")
print("ema drift", f"{sum((a - b).abs().sum() for a, b in zip(ema.parameters(), model.parameters())).item():.5f}")
