# pytorch/examples distributed/minGPT-ddp, one process: the GPT of mingpt/model.py (nn.MultiheadAttention with a
# float causal attn_mask sliced from a buffer, GELU MLP, learned positions, the scaled init of c_proj), its
# create_optimizer (AdamW with decay / no-decay groups found by module type), trainer.py's step (clip_grad_norm_)
# and its snapshot (a dataclass of state_dicts through torch.save/torch.load) resumed, then generate() greedy and
# with top_k masking; a short text instead of tinyshakespeare, NumPy-seeded weights, no dropout
import io, math, numpy as np, torch, torch.nn as nn
from dataclasses import dataclass, asdict
from typing import Any, Dict
from torch.nn import functional as F
@dataclass
class GPTConfig:
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 16
    vocab_size: int = 0
    block_size: int = 8
    embd_pdrop: float = 0.0
    resid_pdrop: float = 0.0
    attn_pdrop: float = 0.0
class MultiheadAttentionLayer(nn.Module):
    def __init__(self, config, device="cpu", dtype=torch.float32):
        super().__init__()
        self.resid_drop = nn.Dropout(config.resid_pdrop)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, device=device, dtype=dtype)
        self.register_buffer("mask", torch.tril(torch.ones(config.block_size, config.block_size))
                             .view(1, 1, config.block_size, config.block_size))
        self.attn = torch.nn.MultiheadAttention(embed_dim=config.n_embd, num_heads=config.n_head,
                                                dropout=config.attn_pdrop, batch_first=True, device=device, dtype=dtype)
    def forward(self, x):
        _, seq_size, _ = x.size()
        y = self.attn(x, x, x, attn_mask=self.mask[0, 0, :seq_size, :seq_size])[0]
        return self.resid_drop(self.c_proj(y))
class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln1 = nn.LayerNorm(config.n_embd)
        self.ln2 = nn.LayerNorm(config.n_embd)
        self.attn = MultiheadAttentionLayer(config)
        self.mlp = nn.Sequential(nn.Linear(config.n_embd, 4 * config.n_embd), nn.GELU(),
                                 nn.Linear(4 * config.n_embd, config.n_embd), nn.Dropout(config.resid_pdrop))
    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))
class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.block_size = config.block_size
        self.tok_emb = nn.Embedding(config.vocab_size, config.n_embd)
        self.pos_emb = nn.Parameter(torch.zeros(1, config.block_size, config.n_embd))
        self.drop = nn.Dropout(config.embd_pdrop)
        self.blocks = nn.Sequential(*[Block(config) for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        rng = np.random.default_rng(23)      # (normal_ draws from the generator: NumPy instead)
        with torch.no_grad():
            for pn, p in self.named_parameters():
                std = 0.02 / math.sqrt(2 * config.n_layer) if pn.endswith('c_proj.weight') else 0.2
                p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * std))
        print("number of parameters: %.4fM" % (sum(p.numel() for p in self.blocks.parameters()) / 1e6,))
    def forward(self, idx, targets=None):
        b, t = idx.size()
        x = self.drop(self.tok_emb(idx) + self.pos_emb[:, :t, :])
        logits = self.head(self.ln_f(self.blocks(x)))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss
    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, top_k)
                logits[logits < v[:, [-1]]] = -float('Inf')
            probs = F.softmax(logits, dim=-1)
            _, idx_next = torch.topk(probs, k=1, dim=-1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx
def create_optimizer(model, weight_decay=0.1, learning_rate=3e-3):
    decay, no_decay = set(), set()
    for mn, m in model.named_modules():
        for pn, p in m.named_parameters():
            fpn = '%s.%s' % (mn, pn) if mn else pn
            if pn.endswith('bias'):
                no_decay.add(fpn)
            elif pn.endswith('weight') and isinstance(m, (torch.nn.Linear, )):
                decay.add(fpn)
            elif pn.endswith('in_proj_weight'):
                decay.add(fpn)
            elif pn.endswith('weight') and isinstance(m, (torch.nn.LayerNorm, torch.nn.Embedding)):
                no_decay.add(fpn)
            elif pn.endswith('pos_emb'):
                no_decay.add(fpn)
    param_dict = {pn: p for pn, p in model.named_parameters()}
    assert len(decay & no_decay) == 0 and len(param_dict.keys() - (decay | no_decay)) == 0
    optim_groups = [{"params": [param_dict[pn] for pn in sorted(list(decay))], "weight_decay": weight_decay},
                    {"params": [param_dict[pn] for pn in sorted(list(no_decay))], "weight_decay": 0.0}]
    return torch.optim.AdamW(optim_groups, lr=learning_rate, betas=(0.9, 0.95))
@dataclass
class Snapshot:
    model_state: 'Dict[str, torch.Tensor]'
    optimizer_state: Dict[str, Any]
    finished_epoch: int
text = "First Citizen: Before we proceed any further, hear me speak. All: Speak, speak."
chars = sorted(set(text)); stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
xs = torch.stack([data[i:i + 8] for i in range(0, 64, 4)]); ys = torch.stack([data[i + 1:i + 9] for i in range(0, 64, 4)])
snapshot_file = io.BytesIO()
for run in range(2):
    model = GPT(GPTConfig(vocab_size=len(chars)))
    optimizer = create_optimizer(model)
    epochs_run = 0
    if run:
        snapshot_file.seek(0)
        snapshot = Snapshot(**torch.load(snapshot_file, map_location="cpu"))
        model.load_state_dict(snapshot.model_state)
        optimizer.load_state_dict(snapshot.optimizer_state)
        epochs_run = snapshot.finished_epoch
        print(f"Resuming training from snapshot at Epoch {epochs_run}")
    for epoch in range(epochs_run + 1, epochs_run + 3):
        for i in range(0, 16, 8):
            _, loss = model(xs[i:i + 8], ys[i:i + 8])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            print(f"Epoch {epoch} | Iter {i} | Train Loss {loss.item():.5f} | grad norm {gn.item():.5f}")
    if not run:
        torch.save(asdict(Snapshot(model.state_dict(), optimizer.state_dict(), epoch)), snapshot_file)
model.eval()
idx = data[:5].view(1, 5)
print(model.generate(idx, 6).tolist(), model.generate(idx, 6, temperature=0.8, top_k=3).tolist())
