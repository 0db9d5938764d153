import math, numpy as np, torch, torch.nn as nn, torch.nn.functional as F
rng = np.random.default_rng(12)
def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)
def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    fc = freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])
    return torch.view_as_real(xq_ * fc).flatten(3).type_as(xq), torch.view_as_real(xk_ * fc).flatten(3).type_as(xk)
class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__(); self.eps = eps; self.weight = nn.Parameter(torch.ones(dim))
    def forward(self, x): return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight
class Attn(nn.Module):
    def __init__(self, d, h):
        super().__init__(); self.h = h; self.hd = d // h
        self.wq = nn.Linear(d, d, bias=False); self.wk = nn.Linear(d, d, bias=False); self.wv = nn.Linear(d, d, bias=False); self.wo = nn.Linear(d, d, bias=False)
    def forward(self, x, fc, mask):
        B, T, _ = x.shape
        q, k, v = self.wq(x).view(B, T, self.h, self.hd), self.wk(x).view(B, T, self.h, self.hd), self.wv(x).view(B, T, self.h, self.hd)
        q, k = apply_rotary_emb(q, k, fc)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        s = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(self.hd) + mask
        o = torch.einsum("bhqk,bhkd->bhqd", F.softmax(s.float(), dim=-1).type_as(q), v)
        o2 = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(o.transpose(1, 2).contiguous().view(B, T, -1)), (o - o2).abs().max()
class FF(nn.Module):
    def __init__(self, d, hdim):
        super().__init__(); self.w1 = nn.Linear(d, hdim, bias=False); self.w2 = nn.Linear(hdim, d, bias=False); self.w3 = nn.Linear(d, hdim, bias=False)
    def forward(self, x): return self.w2(F.silu(self.w1(x)) * self.w3(x))
d, h, T = 16, 2, 6
attn, ff, n1, n2 = Attn(d, h), FF(d, 32), RMSNorm(d), RMSNorm(d)
emb = nn.Embedding(20, d); out = nn.Linear(d, 20, bias=False)
mods = nn.ModuleList([attn, ff, n1, n2, emb, out])
with torch.no_grad():
    for p in mods.parameters(): p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.2))
fc = precompute_freqs_cis(d // h, T * 2)[:T]
mask = torch.full((T, T), float("-inf")); mask = torch.triu(mask, diagonal=1)
tok = torch.from_numpy(rng.integers(0, 20, (2, T)))
opt = torch.optim.AdamW(mods.parameters(), lr=1e-2, betas=(0.9, 0.95), weight_decay=0.1)
for it in range(3):
    x = emb(tok); a, diff = attn(n1(x), fc, mask); x = x + a; x = x + ff(n2(x))
    logits = out(x).float()
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, 20), tok[:, 1:].reshape(-1))
    opt.zero_grad(); loss.backward(); opt.step()
    print(it, f"{loss.item():.5f}", diff.item() < 1e-5)
print(fc.shape, fc.dtype, fc[1, :2])
cache_k = torch.zeros(2, 8, h, d // h); cache_k[:, 2:4] = torch.ones(2, 2, h, d // h); print(cache_k.sum().item(), torch.cat([cache_k[:, :4], cache_k[:, 4:]], 1).shape)
