"""A decoder-only transformer in the style of the configurable einops transformer libraries: token embedding plus
learned memory tokens, pre-norm layers with rotary embeddings (half the head dim, a `theta ** -(arange / dim)`
frequency table), ALiBi slopes as an additive bias, learned memory key/values concatenated per head,
talking heads mixed by einsum, residual attention (pre-softmax scores handed to the next layer), a GLU feed-forward
and RMSNorm. Trained a few steps as an autoregressive wrapper (shifted cross-entropy with ignore_index) and sampled
with top-k / top-p / min-p filters, gumbel noise and a key/value cache checked against the uncached pass. Seeded
with torch.manual_seed and random.seed (layer dropout draws from Python's random)."""

import math
import random

import torch
import torch.nn.functional as F
from einops import rearrange, repeat
from torch import nn

torch.manual_seed(0)
random.seed(0)


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = dim ** 0.5
        self.g = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return F.normalize(x, dim=-1) * self.scale * self.g


class Rotary(nn.Module):
    def __init__(self, dim, theta=10000):
        super().__init__()
        self.register_buffer("inv_freq", theta ** -(torch.arange(0, dim, 2).float() / dim), persistent=False)

    def forward(self, t):
        freqs = torch.einsum("i,j->ij", t.type_as(self.inv_freq), self.inv_freq)
        return torch.cat((freqs, freqs), dim=-1)


def rotate_half(x):
    x1, x2 = rearrange(x, "... (j d) -> ... j d", j=2).unbind(dim=-2)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(freqs, t):
    rot = freqs.shape[-1]
    t, rest = t[..., :rot], t[..., rot:]
    t = t * freqs.cos() + rotate_half(t) * freqs.sin()
    return torch.cat((t, rest), dim=-1)


def alibi_slopes(heads):
    start = 2 ** (-2 ** -(math.log2(heads) - 3))
    return torch.tensor([start * start ** i for i in range(heads)]).view(heads, 1, 1)


class Attention(nn.Module):
    def __init__(self, dim, heads, dim_head, num_mem_kv=2, talking_heads=True):
        super().__init__()
        self.heads, self.scale = heads, dim_head ** -0.5
        inner = heads * dim_head
        self.to_q = nn.Linear(dim, inner, bias=False)
        self.to_kv = nn.Linear(dim, inner * 2, bias=False)
        self.mem_k = nn.Parameter(torch.randn(heads, num_mem_kv, dim_head))
        self.mem_v = nn.Parameter(torch.randn(heads, num_mem_kv, dim_head))
        self.pre_mix = nn.Parameter(torch.eye(heads) + 0.1 * torch.randn(heads, heads)) if talking_heads else None
        self.to_out = nn.Linear(inner, dim)

    def forward(self, x, rotary=None, bias=None, prev_attn=None, cache=None):
        h = self.heads
        q = rearrange(self.to_q(x), "b n (h d) -> b h n d", h=h)
        k, v = (rearrange(t, "b n (h d) -> b h n d", h=h) for t in self.to_kv(x).chunk(2, dim=-1))
        if rotary is not None:
            q_pos = rotary[-q.shape[-2]:]
            q, k = apply_rotary(q_pos, q), apply_rotary(rotary[-k.shape[-2]:], k)
        if cache is not None:
            ck, cv = cache
            k, v = torch.cat((ck, k), dim=-2), torch.cat((cv, v), dim=-2)
        new_cache = (k, v)
        mk, mv = (repeat(t, "h m d -> b h m d", b=x.shape[0]) for t in (self.mem_k, self.mem_v))
        k, v = torch.cat((mk, k), dim=-2), torch.cat((mv, v), dim=-2)
        dots = torch.einsum("b h i d, b h j d -> b h i j", q, k) * self.scale
        if bias is not None:
            dots = dots + F.pad(bias[..., -q.shape[-2]:, :], (mk.shape[-2], 0), value=0.)
        if prev_attn is not None:
            dots = dots + prev_attn
        if self.pre_mix is not None:
            dots = torch.einsum("b h i j, h k -> b k i j", dots, self.pre_mix)
        i, j = dots.shape[-2:]
        causal = torch.ones((i, j), dtype=torch.bool).triu(j - i + 1)
        dots = dots.masked_fill(causal, -torch.finfo(dots.dtype).max)
        attn = dots.softmax(dim=-1)
        out = rearrange(torch.einsum("b h i j, b h j d -> b h i d", attn, v), "b h n d -> b n (h d)")
        return self.to_out(out), dots, new_cache


class GLUFeedForward(nn.Module):
    def __init__(self, dim, mult=2):
        super().__init__()
        self.proj = nn.Linear(dim, dim * mult * 2)
        self.out = nn.Linear(dim * mult, dim)

    def forward(self, x):
        x, gate = self.proj(x).chunk(2, dim=-1)
        return self.out(x * F.gelu(gate))


class Decoder(nn.Module):
    def __init__(self, num_tokens, dim=16, depth=2, heads=2, dim_head=8, num_memory_tokens=2, layer_dropout=0.2):
        super().__init__()
        self.emb = nn.Embedding(num_tokens, dim)
        self.memory_tokens = nn.Parameter(torch.randn(num_memory_tokens, dim))
        self.rotary = Rotary(dim_head // 2)
        self.register_buffer("slopes", alibi_slopes(heads), persistent=False)
        self.layers = nn.ModuleList(nn.ModuleList([RMSNorm(dim), Attention(dim, heads, dim_head), RMSNorm(dim),
                                                   GLUFeedForward(dim)]) for _ in range(depth))
        self.layer_dropout = layer_dropout
        self.norm = RMSNorm(dim)
        self.to_logits = nn.Linear(dim, num_tokens)

    def forward(self, tokens, caches=None):
        x = self.emb(tokens)
        past = 0 if caches is None else caches[0][0].shape[-2]
        if caches is None:
            x = torch.cat((repeat(self.memory_tokens, "m d -> b m d", b=x.shape[0]), x), dim=1)
        n = past + x.shape[1]
        pos = torch.arange(n)
        rotary = self.rotary(pos)
        bias = -(pos[None, :] - pos[:, None]).abs().float() * self.slopes
        prev, new_caches = None, []
        for li, (n1, attn, n2, ff) in enumerate(self.layers):
            if self.training and random.random() < self.layer_dropout:
                new_caches.append(None)
                continue
            out, prev, c = attn(n1(x), rotary, bias, prev, None if caches is None else caches[li])
            new_caches.append(c)
            x = x + out
            x = x + ff(n2(x))
        if caches is None:
            x = x[:, self.memory_tokens.shape[0]:]
        return self.to_logits(self.norm(x)), new_caches


def top_k(logits, k):
    val, idx = logits.topk(k, dim=-1)
    return torch.full_like(logits, float("-inf")).scatter_(-1, idx, val)


def top_p(logits, thres=0.9):
    sorted_logits, sorted_idx = torch.sort(logits, descending=True)
    cum = F.softmax(sorted_logits, dim=-1).cumsum(dim=-1)
    remove = F.pad(cum > thres, (1, -1), value=False)
    sorted_logits = sorted_logits.masked_fill(remove, float("-inf"))
    return sorted_logits.scatter(1, sorted_idx, sorted_logits)


def min_p(logits, p=0.1):
    probs = logits.softmax(dim=-1)
    limit = probs.amax(dim=-1, keepdim=True) * p
    return torch.where(probs < limit, float("-inf"), logits)


def gumbel_sample(logits, temperature=1.):
    noise = -torch.log((-torch.log(torch.rand_like(logits).clamp(min=1e-20))).clamp(min=1e-20))
    return ((logits / max(temperature, 1e-10)) + noise).argmax(dim=-1)


model = Decoder(num_tokens=24)
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
for step in range(4):
    seq = torch.randint(0, 24, (3, 11))
    seq[2, 8:] = -100
    inp, target = seq[:, :-1].clamp(min=0), seq[:, 1:]
    logits, _ = model(inp)
    loss = F.cross_entropy(rearrange(logits, "b n c -> b c n"), target, ignore_index=-100)
    opt.zero_grad()
    loss.backward()
    gnorm = nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    opt.step()
    print(f"step {step} loss {loss.item():.6f} grad-norm {gnorm.item():.6f}")

model.eval()
with torch.no_grad():
    prompt = torch.randint(0, 24, (2, 3))
    for name, filt in [("top_k", lambda lg: top_k(lg, 4)), ("top_p", top_p), ("min_p", min_p)]:
        out = prompt
        for _ in range(5):
            logits, _ = model(out)
            out = torch.cat((out, gumbel_sample(filt(logits[:, -1]), 0.8)[:, None]), dim=-1)
        print(name, out[:, 3:].tolist())
    logits_a, caches = model(prompt)
    nxt = logits_a[:, -1].argmax(dim=-1, keepdim=True)
    logits_b, _ = model(torch.cat((prompt, nxt), dim=1))
    logits_c, _ = model(nxt, caches=caches)
    print("greedy", nxt.flatten().tolist(), "full-pass", logits_b[:, -1].sum().item(), "cached", logits_c[:, -1].sum().item())
    print("cache matches", torch.allclose(logits_b[:, -1], logits_c[:, -1], atol=1e-5), logits_b.pow(2).mean().item())
