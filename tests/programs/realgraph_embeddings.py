"""Embedding models as recommender and knowledge-graph code writes them (the shapes of word2vec skip-gram with
negative sampling, DLRM's sparse tables, TransE and NCF): ``nn.Embedding``/``nn.EmbeddingBag`` with
``sparse=True`` whose weights get sparse gradients, ``SparseAdam``, sparse ``SGD``/``Adagrad``, a row-wise sparse
Adagrad written against the sparse-gradient API (``coalesce``, ``_indices``, ``_values``, ``grad.new``,
``sparse_mask``), ``torch.multinomial`` negatives, a margin ranking loss with renormalised entity rows and
BCE-with-logits on a GMF/MLP model. Seeded by torch."""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(5)
V, D = 40, 8

# --- skip-gram with negative sampling: two sparse tables, SparseAdam --------------------------------------------
class SkipGram(nn.Module):
    def __init__(self):
        super().__init__()
        self.u = nn.Embedding(V, D, sparse=True)
        self.v = nn.Embedding(V, D, sparse=True)
        nn.init.uniform_(self.u.weight.data, -1.0 / D, 1.0 / D)
        nn.init.constant_(self.v.weight.data, 0)

    def forward(self, center, context, negatives):
        eu = self.u(center)
        pos = F.logsigmoid(torch.clamp((eu * self.v(context)).sum(1), -10, 10))
        neg = torch.bmm(self.v(negatives), eu.unsqueeze(2)).squeeze(2)
        neg = F.logsigmoid(-torch.clamp(neg, -10, 10)).sum(1)
        return -(pos + neg).mean()


freq = torch.arange(1, V + 1, dtype=torch.float64) ** 0.75
sg = SkipGram()
opt = torch.optim.SparseAdam(sg.parameters(), lr=0.05)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, 30)
for step in range(30):
    center = torch.randint(0, V, (16,))
    context = (center + torch.randint(1, 3, (16,))) % V
    negatives = torch.multinomial(freq, 16 * 4, replacement=True).view(16, 4)
    opt.zero_grad()
    loss = sg(center, context, negatives)
    loss.backward()
    if step == 0:
        g = sg.u.weight.grad
        print("sparse grad", g.is_sparse, g.layout, g.coalesce().indices().shape, g.coalesce().values().sum().item())
    opt.step()
    sched.step()
    if step % 6 == 5:
        print(f"skipgram step {step} loss {loss.item():.6f} lr {sched.get_last_lr()[0]:.5f}")
print("u rows", sg.u.weight[:2, :4])


# --- DLRM-style sparse bags with a row-wise sparse Adagrad ------------------------------------------------------
class RowWiseSparseAdagrad(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1, eps=1e-10):
        super().__init__(params, dict(lr=lr, eps=eps))

    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                grad = p.grad.data
                if grad.is_sparse:
                    if "momentum" not in state:
                        state["momentum"] = torch.zeros(p.shape[0])
                    grad = grad.coalesce()
                    idx, vals = grad._indices(), grad._values()
                    upd = grad.new(idx, vals.pow(2).mean(dim=1), [grad.size(0)])
                    state["momentum"].add_(upd)
                    std = state["momentum"].sparse_mask(upd.coalesce())._values().sqrt_().add_(group["eps"])
                    p.data.add_(grad.new(idx, vals / std.view(-1, 1), grad.size()), alpha=-group["lr"])
                else:
                    state.setdefault("sum", torch.zeros_like(p))
                    state["sum"].addcmul_(grad, grad, value=1.0)
                    p.data.addcdiv_(grad, state["sum"].sqrt().add_(group["eps"]), value=-group["lr"])


tables = nn.ModuleList([nn.EmbeddingBag(n, 4, mode="sum", sparse=True) for n in (10, 25)])
top = nn.Sequential(nn.Linear(4 * 2 + 3, 8), nn.ReLU(), nn.Linear(8, 1), nn.Sigmoid())
opt_sparse = RowWiseSparseAdagrad(tables.parameters(), lr=0.1)
opt_dense = torch.optim.Adagrad(top.parameters(), lr=0.1)
for it in range(12):
    dense_x = torch.rand(6, 3)
    lookups = []
    for t in tables:
        lengths = torch.randint(1, 4, (6,))
        offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]])
        lookups.append(t(torch.randint(0, t.num_embeddings, (int(lengths.sum()),)), offsets))
    target = (dense_x.sum(1, keepdim=True) > 1.5).float()
    p = top(torch.cat([dense_x] + lookups, 1))
    loss = F.binary_cross_entropy(p, target)
    opt_sparse.zero_grad()
    opt_dense.zero_grad()
    loss.backward()
    opt_sparse.step()
    opt_dense.step()
    if it % 3 == 2:
        print(f"dlrm it {it} loss {loss.item():.6f}")
print("table rows", tables[1].weight[:2])

# --- TransE: a margin ranking loss, SGD on sparse entity/relation tables ----------------------------------------
E, R = 30, 4
ent = nn.Embedding(E + 1, 6, padding_idx=E, sparse=True)
rel = nn.Embedding(R + 1, 6, padding_idx=R, sparse=True)
ent.weight.data.uniform_(-0.5, 0.5)
rel.weight.data.uniform_(-0.5, 0.5)
criterion = nn.MarginRankingLoss(margin=1.0, reduction="none")
opt = torch.optim.SGD(list(ent.parameters()) + list(rel.parameters()), lr=0.05)
heads, rels = torch.randint(0, E, (20,)), torch.randint(0, R, (20,))
tails = (heads * 3 + rels) % E
for epoch in range(8):
    ent.weight.data[:-1, :].div_(ent.weight.data[:-1, :].norm(p=2, dim=1, keepdim=True))
    corrupt = torch.where(torch.randint(0, 2, (20,)) == 1, torch.randint(0, E, (20,)), tails)
    pos = (ent(heads) + rel(rels) - ent(tails)).norm(p=1, dim=1)
    neg = (ent(heads) + rel(rels) - ent(corrupt)).norm(p=1, dim=1)
    loss = criterion(pos, neg, torch.tensor([-1], dtype=torch.long))
    opt.zero_grad()
    loss.mean().backward()
    opt.step()
    print(f"transe epoch {epoch} loss {loss.mean().item():.6f} impacting {loss.nonzero().size(0)}")
scores = (ent(heads[:3]).unsqueeze(1) + rel(rels[:3]).unsqueeze(1) - ent.weight[:E]).norm(p=1, dim=2)
print("hits@5", (scores.topk(5, largest=False)[1] == tails[:3].unsqueeze(1)).any(1).tolist())

# --- NCF (GMF + MLP) with BCE-with-logits, Adam --------------------------------------------------------------------
users, items = 15, 20
gmf_u, gmf_i = nn.Embedding(users, 4), nn.Embedding(items, 4)
mlp_u, mlp_i = nn.Embedding(users, 8), nn.Embedding(items, 8)
for emb in (gmf_u, gmf_i, mlp_u, mlp_i):
    nn.init.normal_(emb.weight, std=0.1)
mlp = nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 4), nn.ReLU())
predict = nn.Linear(8, 1)
nn.init.kaiming_uniform_(predict.weight, a=1, nonlinearity="sigmoid")
params = [*gmf_u.parameters(), *gmf_i.parameters(), *mlp_u.parameters(), *mlp_i.parameters(), *mlp.parameters(),
          *predict.parameters()]
opt = torch.optim.Adam(params, lr=0.01)
for step in range(10):
    u, i = torch.randint(0, users, (32,)), torch.randint(0, items, (32,))
    label = ((u + i) % 3 == 0).float()
    out = predict(torch.cat([gmf_u(u) * gmf_i(i), mlp(torch.cat([mlp_u(u), mlp_i(i)], -1))], -1)).view(-1)
    loss = nn.BCEWithLogitsLoss()(out, label)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 3 == 0:
        print(f"ncf step {step} loss {loss.item():.6f}")
_, top_items = torch.topk(out[:8], 3)
print("recommend", torch.take(i[:8], top_items).tolist())
