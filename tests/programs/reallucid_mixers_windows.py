"""Token mixers of the modern vision/sequence zoos, each trained a few steps: an MLP-Mixer (einops layers, a
Conv1d mixing the patches), a causal gMLP spatial gating unit with a circulant weight, Swin's shifted-window
attention (cyclic roll, window partition, relative position bias from a meshgrid, the -100 shift mask), a ConvNeXt
block (depthwise 7x7, channels-first LayerNorm, layer scale, stochastic depth), a Perceiver cross-attention onto
latents with a fourier-encoded image and a padding mask, and a Performer FAVOR+ linear attention with orthogonal
random features. Seeded with torch.manual_seed alone."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange, repeat
from einops.layers.torch import Rearrange, Reduce

torch.manual_seed(0)


def train(name, model, make_loss, steps=3, lr=3e-3):
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05)
    for step in range(steps):
        loss = make_loss()
        opt.zero_grad()
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        print(name, step, f'{loss.item():.6f}', f'{norm.item():.6f}')


class PreNormResidual(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.fn, self.norm = fn, nn.LayerNorm(dim)

    def forward(self, x):
        return self.fn(self.norm(x)) + x


def mixer(image=8, patch=2, dim=8, depth=2, classes=3):
    n = (image // patch) ** 2
    mlp = lambda d, hidden, layer: nn.Sequential(layer(d, hidden), nn.GELU(), layer(hidden, d))   # noqa: E731
    token = lambda a, b: nn.Conv1d(a, b, kernel_size=1)                                             # noqa: E731
    return nn.Sequential(
        Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=patch, p2=patch),
        nn.Linear(patch * patch * 3, dim),
        *[nn.Sequential(PreNormResidual(dim, mlp(n, 2 * n, token)), PreNormResidual(dim, mlp(dim, 2 * dim, nn.Linear)))
          for _ in range(depth)],
        nn.LayerNorm(dim), Reduce('b n c -> b c', 'mean'), nn.Linear(dim, classes))


class SpatialGate(nn.Module):
    def __init__(self, dim, seq):
        super().__init__()
        self.norm = nn.LayerNorm(dim // 2)
        self.weight = nn.Parameter(torch.empty(seq).uniform_(-1e-2, 1e-2))
        self.bias = nn.Parameter(torch.ones(seq))

    def forward(self, x):
        res, gate = x.chunk(2, dim=-1)
        n = self.weight.shape[0]
        w = F.pad(self.weight, (0, n), value=0.)
        w = repeat(w, 'n -> (r n)', r=n)[:-n].reshape(n, 2 * n - 1)[:, n - 1:]          # circulant rows
        w = w.masked_fill(torch.ones(n, n).triu_(1).bool(), 0.)                          # causal
        gate = torch.einsum('b n d, m n -> b m d', self.norm(gate), w) + self.bias[None, :, None]
        return gate * res


def window_partition(x, ws):
    b, h, w, c = x.shape
    x = x.view(b, h // ws, ws, w // ws, ws, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, ws, ws, c)


def window_reverse(windows, ws, h, w):
    b = int(windows.shape[0] / (h * w / ws / ws))
    x = windows.view(b, h // ws, w // ws, ws, ws, -1)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(b, h, w, -1)


class ShiftedWindowAttention(nn.Module):
    def __init__(self, dim, res, ws=2, shift=1, heads=2):
        super().__init__()
        self.ws, self.shift, self.heads, self.res = ws, shift, heads, res
        self.table = nn.Parameter(torch.zeros((2 * ws - 1) ** 2, heads))
        nn.init.trunc_normal_(self.table, std=.02)
        coords = torch.flatten(torch.stack(torch.meshgrid(torch.arange(ws), torch.arange(ws), indexing='ij')), 1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0).contiguous()
        rel[:, :, 0] += ws - 1
        rel[:, :, 1] += ws - 1
        rel[:, :, 0] *= 2 * ws - 1
        self.register_buffer('index', rel.sum(-1))
        img = torch.zeros(1, res, res, 1)
        cnt = 0
        for hs in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
            for wsl in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
                img[:, hs, wsl, :] = cnt
                cnt += 1
        mw = window_partition(img, ws).view(-1, ws * ws)
        mask = mw.unsqueeze(1) - mw.unsqueeze(2)
        self.register_buffer('mask', mask.masked_fill(mask != 0, -100.0).masked_fill(mask == 0, 0.0))
        self.qkv, self.proj = nn.Linear(dim, dim * 3), nn.Linear(dim, dim)

    def forward(self, x):
        b, L, c = x.shape
        x = torch.roll(x.view(b, self.res, self.res, c), shifts=(-self.shift, -self.shift), dims=(1, 2))
        win = window_partition(x, self.ws).view(-1, self.ws * self.ws, c)
        B_, N, _ = win.shape
        q, k, v = self.qkv(win).reshape(B_, N, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        attn = (q * (c // self.heads) ** -0.5) @ k.transpose(-2, -1)
        attn = attn + self.table[self.index.view(-1)].view(N, N, -1).permute(2, 0, 1).unsqueeze(0)
        nw = self.mask.shape[0]
        attn = (attn.view(B_ // nw, nw, self.heads, N, N) + self.mask.unsqueeze(1).unsqueeze(0)).view(-1, self.heads,
                                                                                                      N, N)
        out = self.proj((attn.softmax(-1) @ v).transpose(1, 2).reshape(B_, N, c))
        out = window_reverse(out.view(-1, self.ws, self.ws, c), self.ws, self.res, self.res)
        return torch.roll(out, shifts=(self.shift, self.shift), dims=(1, 2)).view(b, L, c)


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim, drop_path=0.3):
        super().__init__()
        self.dw = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.ln_w, self.ln_b = nn.Parameter(torch.ones(dim)), nn.Parameter(torch.zeros(dim))
        self.pw1, self.pw2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(1e-1 * torch.ones(dim))
        self.drop_path = drop_path

    def forward(self, x):
        y = self.dw(x)
        u = y.mean(1, keepdim=True)
        s = (y - u).pow(2).mean(1, keepdim=True)
        y = self.ln_w[:, None, None] * ((y - u) / torch.sqrt(s + 1e-6)) + self.ln_b[:, None, None]
        y = self.gamma * self.pw2(F.gelu(self.pw1(y.permute(0, 2, 3, 1))))
        y = y.permute(0, 3, 1, 2)
        if self.training and self.drop_path > 0:
            keep = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(1 - self.drop_path)
            y = y * keep.div_(1 - self.drop_path)
        return x + y


def fourier_encode(x, max_freq, bands):
    x = x.unsqueeze(-1)
    scales = torch.linspace(1., max_freq / 2, bands, dtype=x.dtype)
    x2 = x * scales * math.pi
    return torch.cat([x2.sin(), x2.cos(), x], dim=-1)


class CrossAttend(nn.Module):
    def __init__(self, latent_dim, ctx_dim, latents=4, heads=2, dim_head=4):
        super().__init__()
        self.latents = nn.Parameter(torch.randn(latents, latent_dim))
        self.heads, self.scale = heads, dim_head ** -0.5
        self.to_q = nn.Linear(latent_dim, heads * dim_head, bias=False)
        self.to_kv = nn.Linear(ctx_dim, 2 * heads * dim_head, bias=False)
        self.out = nn.Linear(heads * dim_head, latent_dim)

    def forward(self, ctx, mask):
        x = repeat(self.latents, 'n d -> b n d', b=ctx.shape[0])
        q = self.to_q(x)
        k, v = self.to_kv(ctx).chunk(2, dim=-1)
        q, k, v = (rearrange(t, 'b n (h d) -> (b h) n d', h=self.heads) for t in (q, k, v))
        sim = torch.einsum('b i d, b j d -> b i j', q, k) * self.scale
        m = repeat(mask, 'b j -> (b h) () j', h=self.heads)
        sim.masked_fill_(~m, -torch.finfo(sim.dtype).max)
        out = torch.einsum('b i j, b j d -> b i d', sim.softmax(-1), v)
        return self.out(rearrange(out, '(b h) n d -> b n (h d)', h=self.heads)) + x


def orthogonal_features(rows, cols):
    blocks = [torch.linalg.qr(torch.randn(cols, cols), mode='reduced')[0].t() for _ in range(math.ceil(rows / cols))]
    q = torch.cat(blocks)[:rows]
    return torch.diag(torch.randn(rows, cols).norm(dim=1)) @ q


def favor(q, k, v, proj, eps=1e-4):
    norm = q.shape[-1] ** -0.25
    def feats(t, is_query):
        dash = torch.einsum('...id,jd->...ij', norm * t, proj)
        diag = (t ** 2).sum(-1, keepdim=True) / 2 * norm ** 2
        top = dash.amax(dim=-1, keepdim=True) if is_query else dash.amax(dim=(-1, -2), keepdim=True)
        return proj.shape[0] ** -0.5 * (torch.exp(dash - diag - top.detach()) + eps)
    qp, kp = feats(q, True), feats(k, False)
    d_inv = 1. / torch.einsum('...nd,...d->...n', qp, kp.sum(dim=-2))
    context = torch.einsum('...nd,...ne->...de', kp, v)
    return torch.einsum('...de,...nd,...n->...ne', context, qp, d_inv)


imgs, labels = torch.randn(4, 3, 8, 8), torch.tensor([0, 2, 1, 2])
mx = mixer()
train('mixer', mx, lambda: F.cross_entropy(mx(imgs), labels, label_smoothing=0.1))

gate = nn.Sequential(nn.Linear(6, 8), nn.GELU(), SpatialGate(8, 5), nn.Linear(4, 6))
seq = torch.randn(3, 5, 6)
train('gmlp', gate, lambda: F.mse_loss(gate(seq), seq.cumsum(1) / 3))

swin = nn.Sequential(nn.LayerNorm(8), ShiftedWindowAttention(8, res=4))
tokens = torch.randn(2, 16, 8)
print('swin mask', swin[1].mask.shape, swin[1].mask.sum().item(), swin[1].index[0].tolist())
train('swin', swin, lambda: (swin(tokens) - tokens.roll(1, 1)).pow(2).mean())

cnx = nn.Sequential(ConvNeXtBlock(4), ConvNeXtBlock(4))
fmap = torch.randn(3, 4, 6, 6)
train('convnext', cnx, lambda: (cnx(fmap) - fmap.flip(-1)).pow(2).mean())

pos = torch.stack(torch.meshgrid(torch.linspace(-1, 1, 4), torch.linspace(-1, 1, 4), indexing='ij'), dim=-1)
ctx = torch.cat([torch.randn(2, 4, 4, 3), repeat(rearrange(fourier_encode(pos, 8., 3), 'h w a e -> h w (a e)'),
                                                 '... -> b ...', b=2)], dim=-1).flatten(1, 2)
mask = torch.ones(2, 16, dtype=torch.bool)
mask[1, 10:] = False
ca = CrossAttend(8, ctx.shape[-1])
train('perceiver', ca, lambda: ca(ctx, mask).pow(2).mean())

proj = orthogonal_features(6, 4)
print('orthogonal', (proj[:4] @ proj[:4].t()).diag().tolist())
lin = nn.Linear(8, 24)
x = torch.randn(2, 7, 8)
def performer_loss():
    q, k, v = (rearrange(t, 'b n (h d) -> b h n d', h=2) for t in lin(x).chunk(3, dim=-1))
    soft = favor(q, k, v, proj)
    exact = torch.softmax(q @ k.transpose(-1, -2) / 2, dim=-1) @ v
    return (soft - exact).pow(2).mean() + soft.pow(2).mean()
train('performer', lin, performer_loss)
