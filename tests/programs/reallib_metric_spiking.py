"""Metric-learning losses and miners in the style of a losses/miners/distances library, and a leaky
integrate-and-fire network trained through a surrogate gradient, as small pure-Python libraries on torch write
them. Seeded with torch.manual_seed alone."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._C import Value  # noqa: F401  (imported by a spiking library for type hints only)

torch.manual_seed(0)


# --- distances -----------------------------------------------------------------------------------------------
class LpDistance:
    def __init__(self, normalize_embeddings=True, p=2, power=1):
        self.normalize_embeddings, self.p, self.power = normalize_embeddings, p, power
        self.is_inverted = False

    def __call__(self, query, ref=None):
        ref = query if ref is None else ref
        if self.normalize_embeddings:
            query, ref = F.normalize(query, p=2, dim=1), F.normalize(ref, p=2, dim=1)
        mat = torch.cdist(query, ref, p=self.p)
        return mat ** self.power if self.power != 1 else mat

    def smallest_dist(self, *args, **kwargs):
        return torch.min(*args, **kwargs)


class CosineSimilarity(LpDistance):
    def __init__(self):
        super().__init__(normalize_embeddings=True)
        self.is_inverted = True

    def __call__(self, query, ref=None):
        ref = query if ref is None else ref
        return torch.matmul(F.normalize(query, dim=1), F.normalize(ref, dim=1).t())


# --- index helpers ---------------------------------------------------------------------------------------------
def all_pairs_indices(labels, ref_labels=None):
    ref_labels = labels if ref_labels is None else ref_labels
    same = (labels.unsqueeze(1) == ref_labels.unsqueeze(0)).byte()
    diff = same ^ 1
    if ref_labels is labels:
        same.fill_diagonal_(0)
    a1, p = torch.where(same)
    a2, n = torch.where(diff)
    return a1, p, a2, n


def all_triplets_indices(labels):
    same = labels.unsqueeze(1) == labels.unsqueeze(0)
    diff = ~same
    same = same & ~torch.eye(len(labels), dtype=torch.bool)
    triplets = same.unsqueeze(2) * diff.unsqueeze(1)
    return torch.where(triplets)


def batch_hard(dist, labels):
    same = labels.unsqueeze(1) == labels.unsqueeze(0)
    same.fill_diagonal_(False)
    hardest_pos, pos_idx = torch.max(dist * same, dim=1)
    big = dist.max().item() + 1.0
    hardest_neg, neg_idx = torch.min(dist + big * same.float() + big * torch.eye(len(labels)), dim=1)
    return torch.arange(len(labels)), pos_idx, neg_idx, hardest_pos, hardest_neg


# --- losses ----------------------------------------------------------------------------------------------------
def triplet_margin_loss(emb, labels, margin=0.2, distance=None):
    distance = distance or LpDistance()
    mat = distance(emb)
    a, p, n = all_triplets_indices(labels)
    ap, an = mat[a, p], mat[a, n]
    violation = ap - an + margin
    losses = F.relu(violation)
    nonzero = (losses > 0).sum()
    return losses.sum() / nonzero.clamp(min=1), nonzero


def contrastive_loss(emb, labels, pos_margin=0.0, neg_margin=1.0):
    mat = LpDistance()(emb)
    a1, p, a2, n = all_pairs_indices(labels)
    pos = F.relu(mat[a1, p] - pos_margin)
    neg = F.relu(neg_margin - mat[a2, n])
    return pos.sum() / (pos > 0).sum().clamp(min=1) + neg.sum() / (neg > 0).sum().clamp(min=1)


def multi_similarity_loss(emb, labels, alpha=2.0, beta=50.0, base=0.5):
    mat = CosineSimilarity()(emb)
    a1, p, a2, n = all_pairs_indices(labels)
    pos_mask = torch.zeros_like(mat)
    neg_mask = torch.zeros_like(mat)
    pos_mask[a1, p] = 1
    neg_mask[a2, n] = 1

    def lse(x, mask, add_one=True):
        x = x.masked_fill(~mask.bool(), torch.finfo(x.dtype).min)
        if add_one:
            x = torch.cat([x, torch.zeros(len(x), 1, dtype=x.dtype)], dim=1)
        out = torch.logsumexp(x, dim=1, keepdim=True)
        return out.masked_fill(~torch.any(mask.bool(), dim=1, keepdim=True), 0)

    pos = lse(-alpha * (mat - base), pos_mask) / alpha
    neg = lse(beta * (mat - base), neg_mask) / beta
    return (pos + neg).mean()


def ntxent_loss(emb, labels, temperature=0.1):
    mat = CosineSimilarity()(emb) / temperature
    a1, p, a2, n = all_pairs_indices(labels)
    pos = mat[a1, p].unsqueeze(1)
    neg = torch.full_like(mat, float("-inf"))
    neg[a2, n] = mat[a2, n]
    neg = neg[a1]
    logits = torch.cat([pos, neg], dim=1)
    return (-F.log_softmax(logits, dim=1)[:, 0]).mean()


class Embedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, x):
        return self.net(x)


centers = torch.randn(3, 6) * 2
labels = torch.arange(3).repeat_interleave(6)
data = centers[labels] + 0.5 * torch.randn(18, 6)
model = Embedder()
opt = torch.optim.Adam(model.parameters(), lr=0.01)
for step in range(30):
    emb = model(data)
    tml, n_active = triplet_margin_loss(emb, labels)
    loss = tml + contrastive_loss(emb, labels) + 0.1 * multi_similarity_loss(emb, labels) + 0.1 * ntxent_loss(emb, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0 or step == 29:
        print(f"metric step {step}: loss {loss.item():.6f} triplet {tml.item():.6f} active {n_active.item()}")

with torch.no_grad():
    d = LpDistance()(model(data))
    a, pi, ni, hp, hn = batch_hard(d, labels)
    print("batch hard positives", pi.tolist())
    print("batch hard negatives", ni.tolist())
    print("hardest pos/neg", [round(v, 5) for v in hp[:6].tolist()], [round(v, 5) for v in hn[:6].tolist()])


# --- spiking network: a Heaviside spike with a fast-sigmoid surrogate gradient ------------------------------
class FastSigmoidSpike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, mem, slope):
        ctx.save_for_backward(mem)
        ctx.slope = slope
        return (mem > 0).float()

    @staticmethod
    def backward(ctx, grad_output):
        (mem,) = ctx.saved_tensors
        return grad_output / (ctx.slope * mem.abs() + 1.0) ** 2, None


class Leaky(nn.Module):
    def __init__(self, beta, threshold=1.0, learn_beta=False, reset_mechanism="subtract"):
        super().__init__()
        beta = torch.as_tensor(beta)
        self.beta = nn.Parameter(beta) if learn_beta else beta
        self.register_buffer("threshold", torch.as_tensor(threshold))
        self.reset_mechanism = reset_mechanism

    def init_leaky(self):
        return torch.zeros(0)

    def forward(self, x, mem):
        if not mem.shape == x.shape:
            mem = torch.zeros_like(x)
        reset = FastSigmoidSpike.apply(mem - self.threshold, 25.0).detach()
        beta = self.beta.clamp(0, 1)
        if self.reset_mechanism == "subtract":
            mem = beta * mem + x - reset * self.threshold
        else:
            mem = (beta * mem + x) * (1 - reset)
        spk = FastSigmoidSpike.apply(mem - self.threshold, 25.0)
        return spk, mem


def rate_code(data, num_steps, gain=1.0):
    probs = (data * gain).clamp(0, 1)
    return torch.bernoulli(probs.unsqueeze(0).expand(num_steps, *probs.shape))


class SNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.lif1 = nn.Linear(8, 12), Leaky(beta=0.9, threshold=0.3, learn_beta=True)
        self.fc2, self.lif2 = nn.Linear(12, 2), Leaky(beta=0.8, threshold=0.2, reset_mechanism="zero")

    def forward(self, x):
        mem1, mem2 = self.lif1.init_leaky(), self.lif2.init_leaky()
        spk_rec, mem_rec = [], []
        for t in range(x.size(0)):
            spk1, mem1 = self.lif1(self.fc1(x[t]), mem1)
            spk2, mem2 = self.lif2(self.fc2(spk1), mem2)
            spk_rec.append(spk2)
            mem_rec.append(mem2)
        return torch.stack(spk_rec), torch.stack(mem_rec)


def ce_rate_loss(spk_rec, targets):
    log_p = F.log_softmax(spk_rec, dim=-1)
    return torch.stack([F.nll_loss(log_p[t], targets) for t in range(spk_rec.size(0))]).mean()


x_static = torch.rand(10, 8)
y = (x_static[:, :4].sum(1) > x_static[:, 4:].sum(1)).long()
snn = SNN()
opt = torch.optim.Adam(snn.parameters(), lr=5e-3, betas=(0.9, 0.999))
for epoch in range(8):
    spikes_in = rate_code(x_static, num_steps=12, gain=1.5)
    spk, mem = snn(spikes_in)
    loss = ce_rate_loss(mem, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    acc = (spk.sum(0).argmax(1) == y).float().mean()
    print(f"snn epoch {epoch}: loss {loss.item():.6f} spikes {int(spk.sum().item())} acc {acc.item():.3f} "
          f"beta {snn.lif1.beta.item():.6f}")

# a mask broadcast by a single size (x.broadcast_to(n)) and a gradcheck whose second output goes through .item()
mask = (torch.arange(5) % 2 == 0)[None].broadcast_to(3, 5)
print("mask rows", mask.sum(1).tolist(), torch.ones(1).broadcast_to(4).tolist())


def threshold_and_level(x):
    level = x.min().item() + 0.5 * (x.max().item() - x.min().item())
    return torch.sigmoid(8 * (x - 0.5)), torch.full((1,), level, dtype=x.dtype)


xg = torch.rand(6, dtype=torch.float64, requires_grad=True)
print("gradcheck with an item() output", torch.autograd.gradcheck(threshold_and_level, (xg,)))
level_only = lambda x: (threshold_and_level(x)[1],)  # noqa: E731
try:
    torch.autograd.gradcheck(level_only, (xg,))
except RuntimeError as e:
    print("no differentiable output:", str(e).splitlines()[0])
