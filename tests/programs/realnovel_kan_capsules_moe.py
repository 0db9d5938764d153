"""Unusual layers, condensed: a B-spline Kolmogorov-Arnold layer whose grid is refitted to the data by a batched
least-squares solve and trained by L-BFGS, capsules routed by agreement (a softmax over a chosen dim by
transpose-contiguous-view, squash, 5-d broadcast matmuls, a one-hot reconstruction mask) on a loader over a
dataset class of the user's own named TensorDataset, and a noisily gated sparse mixture of experts (top-k gates
scattered into zeros, dispatch by nonzero/sort/split, index_add combine, a Normal CDF load estimate)."""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions.normal import Normal

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)


# --- a KAN layer: silu base + B-spline curves on a per-input grid --------------------------------------------------
class SplineLayer(nn.Module):
    def __init__(self, n_in, n_out, intervals=4, order=3):
        super().__init__()
        self.n_in, self.n_out, self.intervals, self.order = n_in, n_out, intervals, order
        step = 2.0 / intervals
        knots = torch.arange(-order, intervals + order + 1) * step - 1.0
        self.register_buffer("knots", knots.expand(n_in, -1).contiguous())
        self.base = nn.Parameter(torch.empty(n_out, n_in))
        nn.init.kaiming_uniform_(self.base, a=math.sqrt(5))
        self.coef = nn.Parameter(0.1 * torch.randn(n_out, n_in, intervals + order))

    def bases(self, x):                      # (batch, n_in) -> (batch, n_in, intervals + order)
        g, x = self.knots, x.unsqueeze(-1)
        b = ((x >= g[:, :-1]) & (x < g[:, 1:])).to(x.dtype)
        for k in range(1, self.order + 1):
            left = (x - g[:, :-(k + 1)]) / (g[:, k:-1] - g[:, :-(k + 1)]) * b[:, :, :-1]
            right = (g[:, k + 1:] - x) / (g[:, k + 1:] - g[:, 1:-k]) * b[:, :, 1:]
            b = left + right
        return b.contiguous()

    def forward(self, x):
        spline = F.linear(self.bases(x).view(x.size(0), -1), self.coef.view(self.n_out, -1))
        return F.linear(F.silu(x), self.base) + spline

    @torch.no_grad()
    def refit_grid(self, x, eps=0.05):
        curves = torch.bmm(self.bases(x).permute(1, 0, 2), self.coef.permute(1, 2, 0))   # (in, batch, out)
        xs = torch.sort(x, dim=0)[0]
        picks = xs[torch.linspace(0, x.size(0) - 1, self.intervals + 1, dtype=torch.int64)]
        step = (xs[-1] - xs[0] + 0.02) / self.intervals
        even = torch.arange(self.intervals + 1, dtype=x.dtype).unsqueeze(1) * step + xs[0] - 0.01
        grid = eps * even + (1 - eps) * picks
        grid = torch.concatenate([grid[:1] - step * torch.arange(self.order, 0, -1).unsqueeze(1), grid,
                                  grid[-1:] + step * torch.arange(1, self.order + 1).unsqueeze(1)], dim=0)
        self.knots.copy_(grid.T)
        sol = torch.linalg.lstsq(self.bases(x).transpose(0, 1), curves).solution      # (in, coef, out)
        self.coef.data.copy_(sol.permute(2, 0, 1))


kan = nn.Sequential(SplineLayer(2, 3), SplineLayer(3, 1))
opt = torch.optim.LBFGS(kan.parameters(), lr=1, max_iter=6, history_size=8, line_search_fn="strong_wolfe")
x = torch.rand(128, 2) * 2 - 1
target = torch.exp(torch.sin(math.pi * x[:, :1]) + x[:, 1:] ** 2)
for it in range(3):
    if it == 1:
        kan[0].refit_grid(x)
        kan[1].refit_grid(kan[0](x))

    def closure():
        opt.zero_grad()
        loss = F.mse_loss(kan(x), target) + 1e-4 * sum(m.coef.abs().mean() for m in kan)
        loss.backward()
        return loss
    print("kan", it, opt.step(closure).item(), kan[0].knots[0, :3].tolist())
torch.set_default_dtype(torch.float32)


# --- capsules with dynamic routing -----------------------------------------------------------------------------
def softmax_over(t, dim):
    moved = t.transpose(dim, t.dim() - 1)
    out = F.softmax(moved.contiguous().view(-1, moved.size(-1)), dim=-1)
    return out.view(*moved.size()).transpose(dim, t.dim() - 1)


def squash(s, dim=-1):
    n2 = (s ** 2).sum(dim=dim, keepdim=True)
    return n2 / (1 + n2) * s / torch.sqrt(n2 + 1e-9)


class CapsNet(nn.Module):
    def __init__(self, classes=4, routes=3):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3)
        self.primary = nn.ModuleList([nn.Conv2d(8, 4, 3, stride=2) for _ in range(6)])
        self.W = nn.Parameter(0.1 * torch.randn(classes, 4 * 4 * 4, 6, 8))
        self.routes, self.classes = routes, classes
        self.decoder = nn.Sequential(nn.Linear(8 * classes, 32), nn.ReLU(inplace=True), nn.Linear(32, 121),
                                     nn.Sigmoid())

    def forward(self, img, onehot=None):
        h = F.relu(self.conv(img), inplace=True)
        u = squash(torch.cat([c(h).view(img.size(0), -1, 1) for c in self.primary], dim=-1))
        priors = u[None, :, :, None, :] @ self.W[:, None, :, :, :]          # (classes, B, routes_in, 1, 8)
        logits = torch.zeros(*priors.size())
        for r in range(self.routes):
            probs = softmax_over(logits, dim=2)
            v = squash((probs * priors).sum(dim=2, keepdim=True))
            if r < self.routes - 1:
                logits = logits + (priors * v).sum(dim=-1, keepdim=True)
        v = v.squeeze().transpose(0, 1)                                     # (B, classes, 8)
        lengths = F.softmax((v ** 2).sum(dim=-1) ** 0.5, dim=-1)
        if onehot is None:
            onehot = torch.eye(self.classes).index_select(0, lengths.max(dim=1)[1])
        return lengths, self.decoder((v * onehot[:, :, None]).reshape(v.size(0), -1))


class TensorDataset(torch.utils.data.Dataset):      # a list of tensors, samples as lists (torchnet's shape)
    def __init__(self, tensors):
        self.tensors_ = tensors

    def __len__(self):
        return len(self.tensors_[0])

    def __getitem__(self, i):
        return [t[i] for t in self.tensors_]


images = torch.randint(0, 256, (8, 11, 11), dtype=torch.uint8)
labels = torch.randint(0, 4, (8,))
loader = torch.utils.data.DataLoader(TensorDataset([images, labels]), batch_size=4, shuffle=True)
caps = CapsNet()
opt = torch.optim.Adam(caps.parameters(), lr=1e-3)
for epoch in range(2):
    for imgs, ys in loader:
        imgs = imgs.unsqueeze(1).float() / 255.0
        onehot = torch.eye(4).index_select(dim=0, index=ys)
        lengths, recon = caps(imgs, onehot)
        margin = onehot * F.relu(0.9 - lengths) ** 2 + 0.5 * (1 - onehot) * F.relu(lengths - 0.1) ** 2
        loss = (margin.sum() + 5e-4 * F.mse_loss(recon, imgs.view(4, -1), reduction="sum")) / 4
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("caps", epoch, loss.item(), lengths.sum(dim=0).tolist())
with torch.no_grad():
    lengths, recon = caps(images[:4].unsqueeze(1).float() / 255.0)
print("caps eval", lengths.argmax(1).tolist(), recon.mean().item())


# --- sparsely gated mixture of experts ---------------------------------------------------------------------------
class MoE(nn.Module):
    def __init__(self, d_in, d_out, experts=5, k=2):
        super().__init__()
        self.k, self.n = k, experts
        self.experts = nn.ModuleList([nn.Sequential(nn.Linear(d_in, 8), nn.ReLU(), nn.Linear(8, d_out))
                                      for _ in range(experts)])
        self.w_gate = nn.Parameter(0.01 * torch.randn(d_in, experts))
        self.w_noise = nn.Parameter(torch.zeros(d_in, experts))
        self.register_buffer("mean", torch.tensor([0.0]))
        self.register_buffer("std", torch.tensor([1.0]))

    @staticmethod
    def cv_squared(v):
        return v.float().var() / (v.float().mean() ** 2 + 1e-10) if v.shape[0] > 1 else torch.tensor([0.0])

    def gates(self, x):
        clean = x @ self.w_gate
        sd = F.softplus(x @ self.w_noise) + 1e-2
        noisy = clean + torch.randn_like(clean) * sd if self.training else clean
        top, idx = F.softmax(noisy, dim=1).topk(self.k + 1, dim=1)
        g = top[:, :self.k] / (top[:, :self.k].sum(1, keepdim=True) + 1e-6)
        gates = torch.zeros_like(noisy, requires_grad=True).scatter(1, idx[:, :self.k], g)
        if not self.training:
            return gates, (gates > 0).sum(0)
        # probability that each expert stays in the top k under fresh noise
        flat = top.flatten()
        pos_in = torch.arange(x.size(0)) * (self.k + 1) + self.k
        thr_in = torch.gather(flat, 0, pos_in).unsqueeze(1)
        thr_out = torch.gather(flat, 0, pos_in - 1).unsqueeze(1)
        normal = Normal(self.mean, self.std)
        p = torch.where(torch.gt(noisy, thr_in), normal.cdf((clean - thr_in) / sd), normal.cdf((clean - thr_out) / sd))
        return gates, p.sum(0)

    def forward(self, x):
        gates, load = self.gates(x)
        aux = 1e-2 * (self.cv_squared(gates.sum(0)) + self.cv_squared(load))
        nz = torch.nonzero(gates)
        by_expert, order = nz.sort(0)
        rows = nz[order[:, 1], 0]
        sizes = (gates > 0).sum(0).tolist()
        weights = torch.gather(gates[rows], 1, by_expert[:, 1:2])
        outs = [e(part) for e, part in zip(self.experts, torch.split(x[rows], sizes, dim=0))]
        mixed = torch.cat(outs, 0) * weights
        y = torch.zeros(x.size(0), mixed.size(1), requires_grad=True).index_add(0, rows, mixed)
        return y, aux


moe = MoE(12, 3)
opt = torch.optim.Adam(moe.parameters(), lr=1e-2)
xb, yb = torch.rand(10, 12), torch.randint(0, 3, (10,))
for step in range(4):
    out, aux = moe(xb)
    loss = F.cross_entropy(out, yb)
    opt.zero_grad()
    (loss + aux).backward()
    opt.step()
    print("moe", step, loss.item(), aux.item(), moe.w_gate.grad.abs().sum().item())
moe.eval()
out, aux = moe(torch.rand(6, 12))
print("moe eval", np.round(out.detach().numpy(), 5).tolist(), aux.item())
