"""Spiking, continuous-time and self-organising networks, condensed: a current-based LIF network trained through a
fast-sigmoid surrogate gradient on sparse COO spike rasters (sliced and re-stacked as COO, to_dense, einsum, a reset cut by detach), state
tuples registered as pytree nodes and a TorchScript-decorated filter called with an int for its float parameter, a
modern-Hopfield retrieval layer written the way attention copies are (torch._jit_internal annotations, a
has_torch_function guard), a closed-form continuous-time cell with per-sample time spans, a growing cellular
automaton (grouped Sobel perception, an alive mask by max-pooling, stochastic updates) and a neural process whose
context points are picked by NumPy index arrays and flattened by view."""
import collections
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal
from torch.distributions.kl import kl_divergence
from torch.utils import _pytree as pytree

torch.manual_seed(0)
np.random.seed(0)
random.seed(0)


# --- LIF network with a surrogate gradient -------------------------------------------------------------------------
class Spike(torch.autograd.Function):
    steepness = 50.0

    @staticmethod
    def forward(ctx, v):
        ctx.save_for_backward(v)
        out = torch.zeros_like(v)
        out[v > 0] = 1.0
        return out

    @staticmethod
    def backward(ctx, grad):
        v, = ctx.saved_tensors
        return grad / (Spike.steepness * torch.abs(v) + 1.0) ** 2


LIFState = collections.namedtuple("LIFState", "v i")
pytree.register_pytree_node(LIFState, pytree._namedtuple_flatten, pytree._namedtuple_unflatten)


@torch.jit.script
def leak(state: torch.Tensor, drive: torch.Tensor, decay: float) -> torch.Tensor:
    return decay * state + drive


def raster(batch, steps, units, rates):
    b, t, u = torch.nonzero(torch.rand(batch, steps, units) < rates, as_tuple=True)
    idx = torch.stack([b, t, u])
    return torch.sparse_coo_tensor(idx, torch.ones(idx.size(1)), (batch, steps, units)).coalesce()


steps, n_in, n_hid, n_out = 12, 20, 16, 3
w1 = torch.empty(n_in, n_hid, requires_grad=True)
w2 = torch.empty(n_hid, n_out, requires_grad=True)
torch.nn.init.normal_(w1, mean=0.0, std=1.5 / np.sqrt(n_in))
torch.nn.init.normal_(w2, mean=0.0, std=1.5 / np.sqrt(n_hid))
alpha, beta = float(np.exp(-1 / 5)), float(np.exp(-1 / 10))
rates = torch.linspace(0.05, 0.6, n_in)
labels = torch.randint(0, n_out, (6,))
opt = torch.optim.Adam([w1, w2], lr=5e-3)
print("int decay", leak(torch.tensor([2]), torch.tensor([1]), 1).dtype)
for epoch in range(3):
    coo = raster(6, steps, n_in, rates)
    rows = torch.stack([coo[b] for b in range(6)])          # per-sample COO slices, stacked: still COO
    x = rows.to_dense()
    print("raster", rows.is_sparse, rows._nnz(), coo[0].unsqueeze(0)._indices()[:, :3].tolist())
    h = torch.einsum("btc,cd->btd", x, w1)
    state = LIFState(torch.zeros(6, n_hid), torch.zeros(6, n_hid))
    spikes = []
    for t in range(steps):
        out = Spike.apply(state.v - 1.0)
        reset = out.detach()
        state = LIFState((beta * state.v + state.i) * (1.0 - reset), leak(state.i, h[:, t], alpha))
        spikes.append(out)
    spk = torch.stack(spikes, dim=1)
    readout = torch.einsum("btc,cd->btd", spk, w2).cumsum(1)
    m, _ = torch.max(readout, 1)
    loss = F.nll_loss(F.log_softmax(m, dim=1), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sizes = pytree.tree_map(lambda t: t.abs().sum().item(), state)
    print("lif", epoch, loss.item(), spk.sum().item(), type(sizes).__name__, sizes.v, w1.grad.abs().sum().item())


# --- a Hopfield retrieval layer in the style of a copied attention module -----------------------------------------
class Retrieval(nn.Module):
    __annotations__ = {"bias_k": torch._jit_internal.Optional[torch.Tensor]}

    def __init__(self, dim, stored, beta=2.0):
        super().__init__()
        self.patterns = nn.Parameter(torch.randn(stored, dim))
        self.proj = nn.Linear(dim, dim)
        self.bias_k = None
        self.beta = beta

    def forward(self, query, steps=2):
        ops = (query, self.patterns, self.bias_k)
        if any(type(t) is not torch.Tensor for t in ops) and F.has_torch_function(ops):
            return F.handle_torch_function(self.forward, ops, query, steps=steps)
        xi = self.proj(query)
        for _ in range(steps):
            xi = torch.softmax(self.beta * xi @ self.patterns.T, dim=-1) @ self.patterns
        return xi


hop = Retrieval(8, 5)
opt = torch.optim.AdamW(hop.parameters(), lr=1e-2)
q = torch.randn(10, 8)
for step in range(3):
    loss = F.binary_cross_entropy_with_logits(hop(q).sum(-1), (q.sum(-1) > 0).float())
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(hop.parameters(), max_norm=1.0, norm_type=2)
    opt.step()
    print("hopfield", step, loss.item())


# --- a closed-form continuous-time cell ----------------------------------------------------------------------------
class CfCCell(nn.Module):
    def __init__(self, n_in, hidden):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(n_in + hidden, 16), nn.Tanh())
        self.ff1, self.ff2 = nn.Linear(16, hidden), nn.Linear(16, hidden)
        self.time_a, self.time_b = nn.Linear(16, hidden), nn.Linear(16, hidden)

    def forward(self, x, h, ts):
        z = self.backbone(torch.cat([x, h], 1))
        gate = torch.sigmoid(self.time_a(z) * ts + self.time_b(z))
        return torch.tanh(self.ff1(z)) * (1.0 - gate) + gate * torch.tanh(self.ff2(z))


cell, head = CfCCell(2, 8), nn.Linear(8, 1)
opt = torch.optim.Adam(list(cell.parameters()) + list(head.parameters()), lr=0.01)
grid = torch.linspace(0, 3 * np.pi, 16)
xs = torch.stack([torch.sin(grid), torch.cos(grid)], 1).expand(3, -1, -1)
ys = torch.sin(2 * grid).expand(3, -1)
spans = torch.rand(3, 16, 1) + 0.5
for step in range(3):
    h, outs = torch.zeros(3, 8), []
    for t in range(16):
        h = cell(xs[:, t], h, spans[:, t])
        outs.append(head(h))
    loss = F.mse_loss(torch.cat(outs, 1), ys)
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(cell.parameters(), 1.0)
    opt.step()
    print("cfc", step, loss.item())


# --- a growing cellular automaton ----------------------------------------------------------------------------------
class Automaton(nn.Module):
    def __init__(self, channels=8, hidden=32, fire=0.5):
        super().__init__()
        self.c, self.fire = channels, fire
        self.fc0 = nn.Linear(3 * channels, hidden)
        self.fc1 = nn.Linear(hidden, channels, bias=False)
        with torch.no_grad():
            self.fc1.weight.mul_(0.1)

    def perceive(self, x, angle=0.0):
        dx = np.outer([1, 2, 1], [-1, 0, 1]) / 8.0
        c, s = np.cos(angle * np.pi / 180), np.sin(angle * np.pi / 180)
        out = [x]
        for k in (c * dx - s * dx.T, s * dx + c * dx.T):
            w = torch.from_numpy(k.astype(np.float32)).view(1, 1, 3, 3).repeat(self.c, 1, 1, 1)
            out.append(F.conv2d(x, w, padding=1, groups=self.c))
        return torch.cat(out, 1)

    def alive(self, x):
        return F.max_pool2d(x[:, 3:4], kernel_size=3, stride=1, padding=1) > 0.1

    def forward(self, x, steps):
        for _ in range(steps):
            x = x.transpose(1, 3)
            before = self.alive(x)
            d = self.fc1(F.relu(self.fc0(self.perceive(x).transpose(1, 3))))
            keep = (torch.rand([d.size(0), d.size(1), d.size(2), 1]) > self.fire).float()
            x = x + (d * keep).transpose(1, 3)
            x = (x * (before & self.alive(x)).float()).transpose(1, 3)
        return x


ca = Automaton()
opt = torch.optim.Adam(ca.parameters(), lr=2e-3, betas=(0.5, 0.5))
sched = torch.optim.lr_scheduler.ExponentialLR(opt, 0.99)
target = torch.rand(1, 12, 12, 4)
seed = np.zeros((12, 12, 8), np.float32)
seed[6, 6, 3:] = 1.0
for step in range(3):
    x = torch.from_numpy(np.repeat(seed[None], 2, 0))
    x = ca(x, np.random.randint(4, 7))
    loss = F.mse_loss(x[..., :4], target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    print("nca", step, loss.item(), x[..., 3].gt(0.1).sum().item())


# --- a neural process on sine curves -------------------------------------------------------------------------------
class NeuralProcess(nn.Module):
    def __init__(self, r=16, z=8, h=16):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(2, h), nn.ReLU(), nn.Linear(h, r))
        self.to_mu, self.to_sigma = nn.Linear(r, z), nn.Linear(r, z)
        self.dec = nn.Sequential(nn.Linear(1 + z, h), nn.ReLU(), nn.Linear(h, 2))

    def latent(self, x, y):
        b, n, _ = x.size()
        r = self.enc(torch.cat([x.view(b * n, 1), y.contiguous().view(b * n, 1)], 1)).view(b, n, -1).mean(1)
        return Normal(self.to_mu(r), 0.1 + 0.9 * torch.sigmoid(self.to_sigma(r)))

    def forward(self, xc, yc, xt, yt):
        q_t, q_c = self.latent(xt, yt), self.latent(xc, yc)
        zs = q_t.rsample().unsqueeze(1).repeat(1, xt.size(1), 1)
        out = self.dec(torch.cat([xt, zs], 2))
        p = Normal(out[..., :1], 0.1 + 0.9 * F.softplus(out[..., 1:]))
        return -p.log_prob(yt).mean(0).sum() + kl_divergence(q_t, q_c).mean(0).sum()


npm = NeuralProcess()
opt = torch.optim.Adam(npm.parameters(), lr=3e-4)
curves_x = torch.linspace(-np.pi, np.pi, 30).unsqueeze(1).expand(4, -1, -1)
curves_y = torch.rand(4, 1, 1) * torch.sin(curves_x - torch.rand(4, 1, 1))
for step in range(3):
    pick = np.random.choice(30, size=random.randint(4, 6) + 4, replace=False)
    loss = npm(curves_x[:, pick[:4], :], curves_y[:, pick[:4], :], curves_x[:, pick, :], curves_y[:, pick, :])
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("np", step, len(pick), loss.item())
