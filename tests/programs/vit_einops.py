# Vision transformers in the style of research code written with einops (vit-pytorch's family): a ViT with a cls
# token, a sin-cos-embedded ViT with register tokens packed in, cross-attention of class tokens with layer scale,
# window/grid attention over a conv stem, and a depthwise-conv projected attention; NumPy-seeded, one AdamW step.
import math, numpy as np, torch
import torch.nn.functional as F
from torch import nn, einsum
from einops import rearrange, repeat, reduce, pack, unpack, einsum as ein
from einops.layers.torch import Rearrange, Reduce

rng = np.random.default_rng(0)
def npt(*shape, s=1.0): return torch.from_numpy(np.asarray(rng.standard_normal(shape) * s, dtype=np.float32))

class FeedForward(nn.Sequential):
    def __init__(self, dim, hidden): super().__init__(nn.LayerNorm(dim), nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

class Attention(nn.Module):
    def __init__(self, dim, heads=2, dim_head=8, flash=False):
        super().__init__(); inner = heads * dim_head; self.heads, self.scale, self.flash = heads, dim_head ** -0.5, flash
        self.norm = nn.LayerNorm(dim); self.to_q = nn.Linear(dim, inner, bias=False); self.to_kv = nn.Linear(dim, inner * 2, bias=False)
        self.to_out = nn.Sequential(nn.Linear(inner, dim), nn.Dropout(0.))
    def forward(self, x, context=None, bias=None):
        x = self.norm(x); context = x if context is None else torch.cat((x, context), dim=1)
        q, k, v = (self.to_q(x), *self.to_kv(context).chunk(2, dim=-1))
        q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h=self.heads), (q, k, v))
        if self.flash:
            out = F.scaled_dot_product_attention(q, k, v)
        else:
            dots = einsum('b h i d, b h j d -> b h i j', q, k) * self.scale
            if bias is not None: dots = dots + bias
            out = ein(dots.softmax(dim=-1), v, 'b h i j, b h j d -> b h i d')
        return self.to_out(rearrange(out, 'b h n d -> b n (h d)'))

class Transformer(nn.Module):
    def __init__(self, dim, depth, mlp, layer_scale=None, **kw):
        super().__init__()
        self.layers = nn.ModuleList([nn.ModuleList([Attention(dim, **kw), FeedForward(dim, mlp)]) for _ in range(depth)])
        self.scales = nn.Parameter(torch.full((depth, 2, dim), layer_scale)) if layer_scale else None
    def forward(self, x, context=None):
        for i, (attn, ff) in enumerate(self.layers):
            s = self.scales[i] if self.scales is not None else torch.ones(2, x.shape[-1])
            x = x + s[0] * attn(x, context=context); x = x + s[1] * ff(x)
        return x

class ViT(nn.Module):
    def __init__(self, image=16, patch=4, dim=16, depth=2, classes=5, pool='cls'):
        super().__init__(); n = (image // patch) ** 2; self.pool = pool
        self.to_patch = nn.Sequential(Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=patch, p2=patch),
                                      nn.LayerNorm(3 * patch * patch), nn.Linear(3 * patch * patch, dim), nn.LayerNorm(dim))
        self.pos = nn.Parameter(torch.randn(1, n + 1, dim)); self.cls = nn.Parameter(torch.randn(1, 1, dim))
        self.transformer = Transformer(dim, depth, 2 * dim); self.head = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, classes))
    def forward(self, img):
        x = self.to_patch(img); b, n, _ = x.shape
        x = torch.cat((repeat(self.cls, '1 1 d -> b 1 d', b=b), x), dim=1) + self.pos[:, :n + 1]
        x = self.transformer(x)
        return self.head(x.mean(dim=1) if self.pool == 'mean' else x[:, 0])

def posemb_sincos_2d(h, w, dim, temperature=10000):
    y, x = torch.meshgrid(torch.arange(h), torch.arange(w), indexing='ij')
    omega = 1.0 / (temperature ** (torch.arange(dim // 4) / (dim // 4 - 1)))
    y, x = y.flatten()[:, None] * omega[None, :], x.flatten()[:, None] * omega[None, :]
    return torch.cat((x.sin(), x.cos(), y.sin(), y.cos()), dim=1).float()

class RegisterViT(nn.Module):     # sin-cos positions, register tokens packed in and unpacked, flash attention, mean pool
    def __init__(self, dim=16, patch=4, regs=2, classes=5):
        super().__init__()
        self.to_patch = nn.Sequential(Rearrange('b c (h p1) (w p2) -> b h w (p1 p2 c)', p1=patch, p2=patch), nn.Linear(3 * patch * patch, dim))
        self.regs = nn.Parameter(torch.randn(regs, dim)); self.transformer = Transformer(dim, 1, 2 * dim, flash=True)
        self.head = nn.Sequential(Reduce('b n d -> b d', 'mean'), nn.Linear(dim, classes))
    def forward(self, img):
        x = self.to_patch(img); b, h, w, d = x.shape
        x = rearrange(x, 'b ... d -> b (...) d') + posemb_sincos_2d(h, w, d)
        x, ps = pack([repeat(self.regs, 'n d -> b n d', b=b), x], 'b * d')
        _, x = unpack(self.transformer(x), ps, 'b * d')
        return self.head(x)

class CaiTHead(nn.Module):       # class tokens attend to [cls, patches] with layer scale; 'max' reduction of patches
    def __init__(self, dim=16):
        super().__init__(); self.vit = ViT(pool='mean'); self.cls_t = Transformer(dim, 1, 2 * dim, layer_scale=0.1)
    def forward(self, img):
        x = self.vit.transformer(self.vit.to_patch(img) + self.vit.pos[:, 1:])
        cls = repeat(self.vit.cls, '() n d -> b n d', b=x.shape[0])
        return self.vit.head(self.cls_t(cls, context=x)[:, 0]) + reduce(x, 'b n d -> b d', 'max')[:, :5]

class MaxBlock(nn.Module):       # conv stem, block (window) attention then grid attention with a relative bias
    def __init__(self, dim=16, w=2):
        super().__init__(); self.w = w
        self.stem = nn.Sequential(nn.Conv2d(3, dim, 3, stride=2, padding=1), nn.BatchNorm2d(dim), nn.GELU(),
                                  nn.Conv2d(dim, dim, 3, padding=1, groups=dim))
        self.bias = nn.Embedding((2 * w - 1) ** 2, 2)
        pos = torch.stack(torch.meshgrid(torch.arange(w), torch.arange(w), indexing='ij'))
        rel = rearrange(pos, 'c i j -> (i j) 1 c') - rearrange(pos, 'c i j -> 1 (i j) c') + w - 1
        self.register_buffer('rel_idx', (rel * torch.tensor([2 * w - 1, 1])).sum(dim=-1), persistent=False)
        self.block, self.grid = Attention(dim), Attention(dim); self.head = nn.Sequential(Reduce('b d h w -> b d', 'mean'), nn.Linear(dim, 5))
    def attend(self, attn, x):
        b = x.shape[0]; x = rearrange(x, 'b x y w1 w2 d -> (b x y) (w1 w2) d')
        bias = rearrange(self.bias(self.rel_idx), 'i j h -> h i j')
        return x + attn(x, bias=bias)
    def forward(self, img):
        x = self.stem(img); h, w = x.shape[-2] // self.w, x.shape[-1] // self.w
        x = self.attend(self.block, rearrange(x, 'b d (x w1) (y w2) -> b x y w1 w2 d', w1=self.w, w2=self.w))
        x = rearrange(x, '(b x y) (w1 w2) d -> b d (w1 x) (w2 y)', x=h, y=w, w1=self.w)
        x = self.attend(self.grid, rearrange(x, 'b d (w1 x) (w2 y) -> b x y w1 w2 d', w1=self.w, w2=self.w))
        return self.head(rearrange(x, '(b x y) (w1 w2) d -> b d (w1 x) (w2 y)', x=h, y=w, w1=self.w))

class ConvAttention(nn.Module):  # CvT-style: depthwise-conv projections of q and (strided) k, v
    def __init__(self, dim=16, heads=2):
        super().__init__(); self.heads = heads
        self.embed = nn.Sequential(nn.Conv2d(3, dim, 7, stride=4, padding=3), Rearrange('b c h w -> b h w c'), nn.LayerNorm(dim), Rearrange('b h w c -> b c h w'))
        dw = lambda stride: nn.Sequential(nn.Conv2d(dim, dim, 3, stride=stride, padding=1, groups=dim, bias=False), nn.BatchNorm2d(dim), nn.Conv2d(dim, dim, 1, bias=False))
        self.to_q, self.to_kv = dw(1), dw(2); self.out = nn.Conv2d(dim, dim, 1); self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), Rearrange('... () () -> ...'), nn.Linear(dim, 5))
    def forward(self, img):
        x = self.embed(img); h = x.shape[-1]
        q, k, v = self.to_q(x), self.to_kv(x), self.to_kv(x) * 0.5
        q, k, v = map(lambda t: rearrange(t, 'b (h d) x y -> (b h) (x y) d', h=self.heads), (q, k, v))
        attn = (einsum('b i d, b j d -> b i j', q, k) * 0.5).softmax(dim=-1)
        out = rearrange(einsum('b i j, b j d -> b i d', attn, v), '(b h) (x y) d -> b (h d) x y', h=self.heads, y=h)
        return self.head(self.out(out) + x)

for name, model, size in [("vit", ViT(), 16), ("vit-mean", ViT(pool='mean'), 16), ("registers", RegisterViT(), 16),
                          ("cait", CaiTHead(), 16), ("maxvit", MaxBlock(), 16), ("cvt", ConvAttention(), 32)]:
    with torch.no_grad():
        for p in model.parameters(): p.copy_(npt(*p.shape, s=0.3))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, eps=1e-3)
    img, labels = npt(2, 3, size, size), torch.tensor([1, 3])
    out = model(img); loss = F.cross_entropy(out, labels); loss.backward()
    gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    print(name, tuple(out.shape), f"{loss.item():.6f} {gnorm.item():.6f}", [round(v, 5) for v in out[0].tolist()])
    opt.step(); opt.zero_grad()
    print(name, "after step", f"{F.cross_entropy(model(img), labels).item():.6f}")
