# Recommender and sparse-embedding training code as CTR libraries and word2vec scripts write it: a field-offset
# lookup table (NumPy offsets added to the indices), a factorization machine, field-aware FM, a compressed
# interaction network of 1x1 Conv1d layers and an AutoInt-style multi-head self-attention, trained on a map-style
# dataset of NumPy rows split by random_split and read by a shuffling DataLoader, with BCELoss on `.float()`
# targets; a skip-gram with sparse embeddings (bmm, logsigmoid) under SGD, an EmbeddingBag text classifier with
# sparse gradients under SparseAdam, and a gradient bucket flattened by torch._utils. Seeded with torch.manual_seed
# and NumPy.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors

torch.manual_seed(0)
rs = np.random.RandomState(0)


class Rows(torch.utils.data.Dataset):
    def __init__(self, n, field_dims):
        self.items = np.stack([rs.randint(0, d, n) for d in field_dims], 1)
        self.targets = ((self.items[:, 0] + 2 * self.items[:, 1]) % 3 == 0).astype(np.float32)
        self.field_dims = np.array(field_dims)

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        return self.items[i], self.targets[i]


class Lookup(nn.Module):
    def __init__(self, field_dims, d):
        super().__init__()
        self.table = nn.Embedding(int(sum(field_dims)), d)
        self.offsets = np.array((0, *np.cumsum(field_dims)[:-1]), dtype=np.int64)
        nn.init.xavier_uniform_(self.table.weight.data)

    def forward(self, x):
        return self.table(x + x.new_tensor(self.offsets).unsqueeze(0))


class CTRModel(nn.Module):
    def __init__(self, field_dims, d=4):
        super().__init__()
        nf = len(field_dims)
        self.linear, self.bias = Lookup(field_dims, 1), nn.Parameter(torch.zeros((1,)))
        self.emb = Lookup(field_dims, d)
        self.ffm = nn.ModuleList(Lookup(field_dims, d) for _ in range(nf))
        self.cin = nn.ModuleList([nn.Conv1d(nf * nf, 6, 1), nn.Conv1d(nf * 6, 6, 1)])
        self.att = nn.MultiheadAttention(d, 2, batch_first=False)
        self.mlp = nn.Sequential(nn.Linear(nf * d, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.2), nn.Linear(8, 1))
        self.out = nn.Linear(12 + nf * d, 1)

    def forward(self, x):
        e = self.emb(x)
        fm = 0.5 * (e.sum(1) ** 2 - (e ** 2).sum(1)).sum(1, keepdim=True)
        xs = [t(x) for t in self.ffm]
        rows, cols = np.triu_indices(x.size(1), 1)
        ffm = torch.stack([xs[j][:, i] * xs[i][:, j] for i, j in zip(rows, cols)], dim=1).sum((1, 2))
        h, feats = e, []
        for conv in self.cin:
            z = torch.einsum("bhd,bmd->bhmd", h, e).reshape(e.size(0), -1, e.size(2))
            h = F.relu(conv(z))
            feats.append(h.sum(2))
        a, _ = self.att(e.transpose(0, 1), e.transpose(0, 1), e.transpose(0, 1))
        deep = torch.cat(feats + [F.relu(a.transpose(0, 1) + e).flatten(1)], 1)
        logit = self.linear(x).sum(1) + self.bias + fm + ffm[:, None] + self.mlp(e.flatten(1)) + self.out(deep)
        return torch.sigmoid(logit.squeeze(1))


def auc(y, p):
    order = np.argsort(p, kind="stable")
    ranks = np.empty(len(p))
    ranks[order] = np.arange(1, len(p) + 1)
    pos = y == 1
    return (ranks[pos].sum() - pos.sum() * (pos.sum() + 1) / 2) / (pos.sum() * (~pos).sum())


data = Rows(120, [5, 7, 4])
train, valid = torch.utils.data.random_split(data, (96, 24))
model = CTRModel(data.field_dims)
opt = torch.optim.Adam(params=model.parameters(), lr=0.01, weight_decay=1e-6)
crit = nn.BCELoss()
for epoch in range(2):
    model.train()
    for fields, target in torch.utils.data.DataLoader(train, batch_size=32, shuffle=True):
        y = model(fields)
        loss = crit(y, target.float())
        model.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        ys, ps = [], []
        for fields, target in torch.utils.data.DataLoader(valid, batch_size=16):
            ys.extend(target.tolist())
            ps.extend(model(fields).tolist())
    print("ctr epoch", epoch, round(loss.item(), 5), round(auc(np.array(ys), np.array(ps)), 5), fields.dtype)
p_last, y_last = torch.tensor(ps[:4], dtype=torch.float64), torch.tensor(ys[:4])
try:
    crit(p_last, y_last.float())
except RuntimeError as e:
    print("bce dtypes:", e)
print("logits dtype", F.binary_cross_entropy_with_logits(p_last, y_last).dtype)

# ---- gradient bucket: flatten, reduce, write back ------------------------------------------------------------
grads = [p.grad for p in model.mlp.parameters()]
flat = _flatten_dense_tensors(grads)
for g, synced in zip(grads, _unflatten_dense_tensors(flat / 2, grads)):
    g.copy_(synced)
print("bucket", flat.numel(), flat.abs().sum().item(), model.mlp[0].weight.grad.abs().sum().item())


# ---- skip-gram with sparse embeddings, SGD on sparse gradients ----------------------------------------------
class SkipGram(nn.Module):
    def __init__(self, n, d):
        super().__init__()
        self.u = nn.Embedding(n, d, sparse=True)
        self.v = nn.Embedding(n, d, sparse=True)
        self.u.weight.data.uniform_(-0.5 / d, 0.5 / d)
        self.v.weight.data.uniform_(-0, 0)

    def forward(self, pos_u, pos_v, neg_v):
        eu = self.u(pos_u)
        score = F.logsigmoid(torch.sum(torch.mul(eu, self.v(pos_v)), dim=1))
        neg = F.logsigmoid(-1 * torch.bmm(self.v(neg_v), eu.unsqueeze(2)).squeeze())
        return -1 * (torch.sum(score) + torch.sum(neg))


sg = SkipGram(30, 8)
sgd = torch.optim.SGD(sg.parameters(), lr=0.2)
for step in range(6):
    pos_u = torch.LongTensor(rs.randint(0, 30, 16).tolist())
    pos_v = torch.LongTensor(((pos_u + 1) % 30).tolist())
    neg_v = torch.LongTensor(rs.randint(0, 30, (16, 3)).tolist())
    sgd.zero_grad()
    loss = sg(pos_u, pos_v, neg_v)
    loss.backward()
    sgd.step()
g = sg.v.weight.grad
print("skipgram", loss.item(), g.is_sparse, g.coalesce()._nnz(), g.to_dense().abs().sum().item(),
      sg.u.weight.abs().sum().item())


# ---- EmbeddingBag classifier with sparse gradients under SparseAdam + Adam -----------------------------------
class BagClassifier(nn.Module):
    def __init__(self, vocab, d, classes):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab, d, sparse=True)
        self.fc = nn.Linear(d, classes)
        self.embedding.weight.data.uniform_(-0.5, 0.5)
        self.fc.weight.data.uniform_(-0.5, 0.5)
        self.fc.bias.data.zero_()

    def forward(self, text, offsets):
        return self.fc(self.embedding(text, offsets))


bag = BagClassifier(40, 6, 3)
opts = [torch.optim.SparseAdam(list(bag.embedding.parameters()), lr=0.05),
        torch.optim.Adam(bag.fc.parameters(), lr=0.05)]
for step in range(5):
    lengths = torch.randint(1, 5, (6,))
    text = torch.randint(0, 40, (int(lengths.sum()),))
    offsets = torch.cat([torch.tensor([0]), lengths.cumsum(0)[:-1]])
    label = torch.randint(0, 3, (6,))
    for o in opts:
        o.zero_grad()
    out = bag(text, offsets)
    loss = F.cross_entropy(out, label)
    loss.backward()
    norm = nn.utils.clip_grad_norm_(bag.fc.parameters(), 0.5)
    for o in opts:
        o.step()
    print("bag", step, round(loss.item(), 6), round(norm.item(), 6), (out.argmax(1) == label).sum().item())
print("complex32 check", out.dtype == torch.complex32, torch.chalf is torch.complex32)
