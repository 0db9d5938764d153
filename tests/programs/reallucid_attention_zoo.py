"""Attention variants of the single-file einops model zoos: talking-heads attention (heads mixed by einsum before
and after the softmax, dropout in between), a conv-projected attention whose output is merged back into a
channels-last-like map and added to the residual before a dropout, rotary embeddings built from
``einsum('i,j->ij', arange(n), inv_freq)``, a reversible block that records and replays the RNG (device states
included) in its own backward, and a retention layer checked parallel against recurrent. Seeded with
torch.manual_seed alone; a few AdamW steps each."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange, repeat
from torch.utils.checkpoint import get_device_states, set_device_states

torch.manual_seed(0)


class TalkingHeads(nn.Module):
    def __init__(self, dim, heads=3, dim_head=4, dropout=0.2):
        super().__init__()
        self.heads, self.scale = heads, dim_head ** -0.5
        self.norm = nn.LayerNorm(dim)
        self.to_qkv = nn.Linear(dim, heads * dim_head * 3, bias=False)
        self.pre_mix = nn.Parameter(torch.randn(heads, heads))
        self.post_mix = nn.Parameter(torch.randn(heads, heads))
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(heads * dim_head, dim)

    def forward(self, x):
        q, k, v = (rearrange(t, 'b n (h d) -> b h n d', h=self.heads) for t in self.to_qkv(self.norm(x)).chunk(3, -1))
        sim = torch.einsum('b h i d, b h j d -> b h i j', q, k) * self.scale
        sim = torch.einsum('b h i j, h g -> b g i j', sim, self.pre_mix)
        attn = self.drop(sim.softmax(dim=-1))
        attn = torch.einsum('b h i j, h g -> b g i j', attn, self.post_mix)
        return self.out(rearrange(torch.einsum('b h i j, b h j d -> b h i d', attn, v), 'b h n d -> b n (h d)'))


class ConvAttention(nn.Module):
    """q/k/v from 1x1 convs over a feature map, the heads merged back with einops (a channels-last-like layout,
    which the output conv keeps), the residual added after and a dropout on the sum."""

    def __init__(self, dim, heads=1, dropout=0.25):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Conv2d(dim, dim * 3, 1, bias=False)
        self.to_out = nn.Conv2d(dim, dim, 1)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        q, k, v = (rearrange(t, 'b (h d) x y -> b h (x y) d', h=self.heads) for t in self.to_qkv(x).chunk(3, dim=1))
        attn = (q @ k.transpose(-1, -2) * q.shape[-1] ** -0.5).softmax(-1)
        out = self.to_out(rearrange(attn @ v, 'b h (x y) d -> b (h d) x y', x=x.shape[-2]))
        return self.drop(out + x), out.stride()


def rotary(n, dim):
    inv_freq = 1. / (10000 ** (torch.arange(0, dim, 2).float() / dim))
    freqs = torch.einsum('i,j->ij', torch.arange(n), inv_freq)          # long x float: promoted, as torch
    return torch.cat((freqs, freqs), dim=-1)


def rotate(t, freqs):
    t1, t2 = t.chunk(2, dim=-1)
    return t * freqs.cos() + torch.cat((-t2, t1), dim=-1) * freqs.sin()


class Replay(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x, record=False, replay=False):
        if record:
            self.cpu_state = torch.get_rng_state()
            self.devices, self.states = get_device_states(x)
        if not replay:
            return self.net(x)
        with torch.random.fork_rng(devices=self.devices, enabled=True):
            torch.set_rng_state(self.cpu_state)
            set_device_states(self.devices, self.states)
            return self.net(x)


class _Reversible(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, f, g):
        x1, x2 = x.chunk(2, dim=-1)
        with torch.no_grad():
            y1 = x1 + f(x2, record=True)
            y2 = x2 + g(y1, record=True)
        ctx.f, ctx.g = f, g
        ctx.save_for_backward(y1, y2)
        return torch.cat([y1, y2], dim=-1)

    @staticmethod
    def backward(ctx, dy):
        y1, y2 = ctx.saved_tensors
        dy1, dy2 = dy.chunk(2, dim=-1)
        with torch.enable_grad():
            y1 = y1.detach().requires_grad_()
            gy1 = ctx.g(y1, replay=True)
            torch.autograd.backward(gy1, dy2)
        with torch.no_grad():
            x2 = y2 - gy1
            dx1 = dy1 + y1.grad
        with torch.enable_grad():
            x2 = x2.detach().requires_grad_()
            fx2 = ctx.f(x2, replay=True)
            torch.autograd.backward(fx2, dx1)
        return torch.cat([dx1, dy2 + x2.grad], dim=-1), None, None


def retention(x, wq, wk, wv, gamma):
    n = x.shape[1]
    idx = torch.arange(n)
    decay = (gamma ** (idx[:, None] - idx[None, :])) * (idx[:, None] >= idx[None, :]).float()
    q, k, v = x @ wq, x @ wk, x @ wv
    return ((q @ k.transpose(-1, -2)) * decay) @ v


def retention_recurrent(x, wq, wk, wv, gamma):
    state = torch.zeros(x.shape[0], wk.shape[1], wv.shape[1])
    outs = []
    for t in range(x.shape[1]):
        xt = x[:, t:t + 1]
        state = gamma * state + (xt @ wk).transpose(-1, -2) @ (xt @ wv)
        outs.append((xt @ wq) @ state)
    return torch.cat(outs, dim=1)


# talking heads, a few steps
tokens = torch.randn(2, 5, 12)
th = TalkingHeads(12)
opt = torch.optim.AdamW(th.parameters(), lr=3e-3)
for step in range(3):
    loss = (th(tokens) - tokens.flip(1)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print('talking heads', step, f'{loss.item():.6f}', f'{th.pre_mix.grad.norm().item():.6f}')

# attention over a feature map: the dropout after the residual draws in the sum's memory order
ca = ConvAttention(4)
fmap = torch.randn(2, 4, 4, 4)
opt = torch.optim.AdamW(ca.parameters(), lr=3e-3)
for step in range(3):
    out, conv_stride = ca(fmap)
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print('conv attention', step, conv_stride, out.stride(), f'{loss.item():.6f}')

# rotary embeddings: relative positions only
freqs = rotary(6, 8)
q = repeat(torch.randn(8), 'd -> n d', n=6)
k = repeat(torch.randn(8), 'd -> n d', n=6)
scores = rotate(q, freqs) @ rotate(k, freqs).t()
print('rotary', freqs.dtype, [round(scores[i, i - 1].item(), 5) for i in range(1, 6)])

# reversible pair of residual functions with dropout inside, backward by recomputation
f = Replay(nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.3), nn.Tanh()))
g = Replay(nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.3), nn.GELU()))
x = torch.randn(4, 6, requires_grad=True)
y = _Reversible.apply(x, f, g)
(y ** 2).sum().backward()
print('reversible', [round(v, 6) for v in x.grad.sum(0).tolist()], f.net[0].weight.grad.sum().item())

# retention: the parallel and the recurrent form agree; train the projections a little
wq, wk, wv = (nn.Parameter(torch.randn(6, 4) / 6) for _ in range(3))
seq = torch.rand(2, 7, 6)
par, rec = retention(seq, wq, wk, wv, 0.9), retention_recurrent(seq, wq, wk, wv, 0.9)
print('retention', torch.allclose(par, rec, atol=1e-6), par.sum().item())
opt = torch.optim.AdamW([wq, wk, wv], lr=1e-2)
for step in range(3):
    loss = F.mse_loss(retention(seq, wq, wk, wv, 0.9), seq[..., :4].cumsum(1) / math.sqrt(7))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print('retention', step, f'{loss.item():.6f}')

# a float32 batch through a float64 layer is an error, not a promotion
try:
    nn.Linear(6, 2).double()(seq)
except RuntimeError as e:
    print('linear:', e)
