# A CLIP-shaped model, condensed (openai/CLIP's patterns written afresh): a LayerNorm subclass that computes in
# float32, QuickGELU, an attention pool through F.multi_head_attention_forward with separate q/k/v weights and an
# out projection to another width, a causal text transformer (nn.MultiheadAttention, sequence-first), features
# normalised and scaled by logit_scale.exp(), the model rebuilt from its state_dict, weights converted to half.
import numpy as np, torch, torch.nn as nn, torch.nn.functional as F
rng = np.random.default_rng(3)
class LayerNorm(nn.LayerNorm):
    def forward(self, x):
        return super().forward(x.type(torch.float32)).type(x.dtype)
class QuickGELU(nn.Module):
    def forward(self, x): return x * torch.sigmoid(1.702 * x)
class Pool(nn.Module):
    def __init__(self, grid, width, heads, out):
        super().__init__()
        self.pos = nn.Parameter(torch.zeros(grid * grid + 1, width))
        self.q, self.k, self.v = nn.Linear(width, width), nn.Linear(width, width), nn.Linear(width, width)
        self.c, self.heads = nn.Linear(width, out), heads
    def forward(self, x):
        x = x.flatten(start_dim=2).permute(2, 0, 1)
        x = torch.cat([x.mean(dim=0, keepdim=True), x], dim=0) + self.pos[:, None, :].to(x.dtype)
        x, _ = F.multi_head_attention_forward(
            query=x[:1], key=x, value=x, embed_dim_to_check=x.shape[-1], num_heads=self.heads,
            q_proj_weight=self.q.weight, k_proj_weight=self.k.weight, v_proj_weight=self.v.weight,
            in_proj_weight=None, in_proj_bias=torch.cat([self.q.bias, self.k.bias, self.v.bias]), bias_k=None,
            bias_v=None, add_zero_attn=False, dropout_p=0, out_proj_weight=self.c.weight, out_proj_bias=self.c.bias,
            use_separate_proj_weight=True, training=self.training, need_weights=False)
        return x.squeeze(0)
class Block(nn.Module):
    def __init__(self, d, h, mask):
        super().__init__()
        self.attn, self.ln_1, self.ln_2, self.mask = nn.MultiheadAttention(d, h), LayerNorm(d), LayerNorm(d), mask
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), QuickGELU(), nn.Linear(4 * d, d))
    def forward(self, x):
        m = self.mask.to(dtype=x.dtype) if self.mask is not None else None
        x = x + self.attn(self.ln_1(x), self.ln_1(x), self.ln_1(x), need_weights=False, attn_mask=m)[0]
        return x + self.mlp(self.ln_2(x))
class Clip(nn.Module):
    def __init__(self, width=16, ctx=6, vocab=20, embed=8):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 4, stride=4, bias=False); self.pool = Pool(2, width, 2, embed)
        mask = torch.empty(ctx, ctx).fill_(float("-inf")).triu_(1)
        self.blocks = nn.Sequential(*[Block(width, 2, mask) for _ in range(2)])
        self.tok = nn.Embedding(vocab, width); self.pos = nn.Parameter(torch.empty(ctx, width))
        self.ln_final = LayerNorm(width); self.text_projection = nn.Parameter(torch.empty(width, embed))
        self.logit_scale = nn.Parameter(torch.ones([]) * np.log(1 / 0.07))
    @property
    def dtype(self): return self.conv1.weight.dtype
    def encode_image(self, image): return self.pool(self.conv1(image.type(self.dtype)))
    def encode_text(self, text):
        x = (self.tok(text).type(self.dtype) + self.pos.type(self.dtype)).permute(1, 0, 2)
        x = self.ln_final(self.blocks(x).permute(1, 0, 2)).type(self.dtype)
        return x[torch.arange(x.shape[0]), text.argmax(dim=-1)] @ self.text_projection
    def forward(self, image, text):
        i, t = self.encode_image(image), self.encode_text(text)
        i, t = i / i.norm(dim=1, keepdim=True), t / t.norm(dim=1, keepdim=True)
        logits = self.logit_scale.exp() * i @ t.t()
        return logits, logits.t()
model = Clip()
sd = {k: torch.from_numpy(np.asarray(rng.standard_normal(tuple(v.shape)) * 0.2, dtype=np.float32))
      for k, v in model.state_dict().items()}
sd["logit_scale"] = torch.tensor(np.log(1 / 0.07), dtype=torch.float32)
model.load_state_dict(sd)
image = torch.from_numpy(rng.standard_normal((2, 3, 8, 8)).astype(np.float32))
text = torch.from_numpy(rng.integers(1, 18, size=(3, 6))); text[:, 4] = 19
li, lt = model(image, text)
print(model.encode_image(image).shape, model.encode_text(text)[:, :3].detach())
print(li.detach(), lt.shape, li.softmax(dim=-1).detach())
li.sum().backward()
print(model.pool.c.weight.grad.norm().item(), model.pool.q.weight.grad.norm().item(), model.tok.weight.grad.norm().item())
rebuilt = Clip(); rebuilt.load_state_dict(model.state_dict()); rebuilt.eval()
print(torch.allclose(rebuilt(image, text)[0], li), rebuilt.training)
def convert_weights(m):
    def to_half(l):
        if isinstance(l, (nn.Conv1d, nn.Conv2d, nn.Linear)):
            l.weight.data = l.weight.data.half()
            if l.bias is not None: l.bias.data = l.bias.data.half()
        if isinstance(l, nn.MultiheadAttention):
            for name in ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]:
                t = l.get_parameter(name) if "." in name else getattr(l, name)
                t.data = t.data.half()
    m.apply(to_half)
    m.text_projection.data = m.text_projection.data.half()
convert_weights(rebuilt)
print(rebuilt.dtype, rebuilt.blocks[0].attn.in_proj_weight.dtype, rebuilt.blocks[0].attn.out_proj.weight.dtype,
      rebuilt.ln_final.weight.dtype, rebuilt.text_projection.dtype, rebuilt.encode_image(image).dtype)
