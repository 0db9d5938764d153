"""Graph neural networks as plain-PyTorch research code writes them (the shapes of pygcn, pyGAT's sparse layer,
NGCF's propagation and graphsage-simple's mean aggregator): a COO adjacency built with the legacy
``torch.sparse.FloatTensor`` constructor, row sums by ``torch.sparse.sum``, ``torch.spmm``/``torch.sparse.mm``,
dropout on the edges through ``_indices()``/``_values()``, a custom autograd Function for the sparse product,
``torch.sparse.softmax`` attention, and ``index_add_``/``scatter_add_`` message passing. Seeded by torch."""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(11)
N, FEATS, CLASSES = 60, 12, 3

# a random graph with community structure
labels = torch.randint(0, CLASSES, (N,))
src, dst = [], []
for i in range(N):
    for j in torch.randint(0, N, (4,)).tolist():
        if i != j and (labels[i] == labels[j] or torch.rand(1).item() < 0.2):
            src += [i, j]
            dst += [j, i]
edges = torch.LongTensor([src + list(range(N)), dst + list(range(N))])   # with self loops
features = torch.randn(N, FEATS) + F.one_hot(labels, FEATS).float()

adj = torch.sparse.FloatTensor(edges, torch.ones(edges.size(1)), torch.Size([N, N])).coalesce()
deg = torch.sparse.sum(adj, dim=1).to_dense()
norm_values = adj.values() / deg[adj.indices()[0]]
adj_norm = torch.sparse_coo_tensor(adj.indices(), norm_values, adj.shape)
print("nnz", adj._nnz(), "degree range", deg.min().item(), deg.max().item(), adj_norm.is_sparse, adj_norm.type())
print("row sums", torch.sparse.sum(adj_norm, dim=1).to_dense()[:5])


class GraphConvolution(nn.Module):
    def __init__(self, fin, fout):
        super().__init__()
        self.weight = nn.Parameter(torch.FloatTensor(fin, fout))
        self.bias = nn.Parameter(torch.FloatTensor(fout))
        bound = 1. / math.sqrt(fout)
        self.weight.data.uniform_(-bound, bound)
        self.bias.data.uniform_(-bound, bound)

    def forward(self, x, a):
        return torch.spmm(a, torch.mm(x, self.weight)) + self.bias


def edge_dropout(a, rate):
    keep = torch.floor((1 - rate) + torch.rand(a._nnz())).type(torch.bool)
    kept = torch.sparse.FloatTensor(a._indices()[:, keep], a._values()[keep], a.shape)
    return kept * (1. / (1 - rate))


class SparseProduct(torch.autograd.Function):
    """``sparse(indices, values) @ dense`` with the gradient of the values computed edge by edge."""

    @staticmethod
    def forward(ctx, indices, values, shape, dense):
        a = torch.sparse_coo_tensor(indices, values, shape)
        ctx.save_for_backward(indices, dense)
        ctx.a = a
        return torch.matmul(a, dense)

    @staticmethod
    def backward(ctx, grad_out):
        indices, dense = ctx.saved_tensors
        grad_values = grad_dense = None
        if ctx.needs_input_grad[1]:
            grad_values = (grad_out[indices[0]] * dense[indices[1]]).sum(1)
        if ctx.needs_input_grad[3]:
            grad_dense = ctx.a.t().matmul(grad_out)
        return None, grad_values, None, grad_dense


class SparseAttention(nn.Module):
    def __init__(self, fin, fout):
        super().__init__()
        self.W = nn.Parameter(torch.empty(fin, fout))
        self.a = nn.Parameter(torch.empty(1, 2 * fout))
        nn.init.xavier_normal_(self.W.data, gain=1.414)
        nn.init.xavier_normal_(self.a.data, gain=1.414)

    def forward(self, x, edge):
        h = x.mm(self.W)
        scores = F.leaky_relu(self.a.mm(torch.cat((h[edge[0]], h[edge[1]]), 1).t()).squeeze(), 0.2)
        att = torch.sparse.softmax(torch.sparse_coo_tensor(edge, scores, (N, N)), dim=1)
        e = torch.exp(-scores)
        rowsum = SparseProduct.apply(edge, e, torch.Size([N, N]), torch.ones(N, 1))
        hp = SparseProduct.apply(edge, e, torch.Size([N, N]), h) / rowsum
        return F.elu(hp + torch.sparse.mm(att, h))


def mean_aggregate(x, edge):
    # message passing with index_add_ / scatter_add_ (the mean over neighbours)
    out = torch.zeros(N, x.size(1)).index_add_(0, edge[1], x[edge[0]])
    count = torch.zeros(N).scatter_add_(0, edge[1], torch.ones(edge.size(1)))
    return out / count.clamp(min=1).unsqueeze(1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.gc1 = GraphConvolution(FEATS, 16)
        self.att = SparseAttention(16, 8)
        self.sage = nn.Linear(2 * 8, 8)
        self.gc2 = GraphConvolution(8, CLASSES)

    def forward(self, x, a):
        a_in = edge_dropout(a, 0.2) if self.training else a
        x = F.relu(self.gc1(x, a_in))
        x = F.dropout(x, 0.3, training=self.training)
        x = self.att(x, adj.indices())
        x = F.relu(self.sage(torch.cat([x, mean_aggregate(x, edges)], 1)))
        return F.log_softmax(self.gc2(x, a), dim=1)


model = Net()
opt = torch.optim.Adam(model.parameters(), lr=0.02, weight_decay=5e-4)
train, val = torch.arange(0, 40), torch.arange(40, N)
for epoch in range(12):
    model.train()
    opt.zero_grad()
    out = model(features, adj_norm)
    loss = F.nll_loss(out[train], labels[train])
    loss.backward()
    opt.step()
    model.eval()
    with torch.no_grad():
        pred = model(features, adj_norm).max(1)[1]
    acc = pred[val].eq(labels[val]).double().mean()
    print(f"epoch {epoch:02d} loss {loss.item():.5f} val acc {acc.item():.4f}")

g = model.gc1.weight.grad
print("grad norms", [round(p.grad.norm().item(), 5) for p in model.parameters()])
print("att", torch.sparse.softmax(adj_norm, 1).to_dense()[0, :6], np.round(g.sum().item(), 5))
