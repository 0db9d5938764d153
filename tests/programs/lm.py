import numpy as np, torch, torch.nn as nn, torch.nn.functional as F
rng = np.random.default_rng(8)
V, D = 12, 8
emb = nn.Embedding.from_pretrained(torch.from_numpy(rng.standard_normal((V, D)).astype(np.float32)), freeze=False, padding_idx=0)
rnn = nn.GRU(D, 16, batch_first=True); head = nn.Linear(16, V)
with torch.no_grad():
    for p in list(rnn.parameters()) + list(head.parameters()): p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
tokens = torch.from_numpy(rng.integers(1, V, (4, 7)))
opt = torch.optim.SGD(list(emb.parameters()) + list(rnn.parameters()) + list(head.parameters()), lr=0.5)
for step in range(3):
    h, _ = rnn(emb(tokens[:, :-1]))
    logits = head(h)
    loss = F.cross_entropy(logits.reshape(-1, V), tokens[:, 1:].reshape(-1), ignore_index=0)
    opt.zero_grad(); loss.backward(); torch.nn.utils.clip_grad_norm_(rnn.parameters(), max_norm=0.5, norm_type=2.0); opt.step()
    print(step, f"{loss.item():.5f}", f"{loss.exp().item():.4f}")
logits = head(rnn(emb(tokens[:1]))[0])[:, -1, :] / 0.7
probs = F.softmax(logits, dim=-1)
sp, si = torch.sort(probs, descending=True); cum = torch.cumsum(sp, dim=-1)
mask = cum - sp > 0.9; sp[mask] = 0.0; sp = sp / sp.sum(dim=-1, keepdim=True)
print(si[0, :4], sp[0, :4])
tk = torch.topk(logits, 3); print(tk.indices, tk.values)
filt = logits.clone(); filt[filt < tk.values[..., -1, None]] = float("-inf"); print(torch.isinf(filt).sum().item())
nxt = torch.multinomial(sp, num_samples=2, replacement=True); print(nxt.shape, nxt.dtype)
print(F.embedding(torch.tensor([[1, 2]]), emb.weight).shape, emb.weight.grad is not None)
print(torch.gather(logits, 1, torch.tensor([[1, 3]])), logits.scatter(1, torch.tensor([[0]]), 100.0)[0, :2])
