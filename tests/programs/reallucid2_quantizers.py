"""Quantizer bottlenecks in the style of the vector-quantization libraries: a Euclidean codebook with k-means
initialisation (`cdist`, `bincount`-free one-hot counts, `index_add_`-style scatter sums), EMA updates of cluster
sizes and embedding sums with Laplace smoothing and dead-code replacement, a commitment loss and straight-through
gradient (with the rotation trick as an alternative), a cosine-similarity codebook, residual quantization with a
quantize dropout, finite scalar quantization (bounded tanh, round with straight-through, mixed-radix indices) and
lookup-free quantization (sign codes, per-sample and codebook entropy from a softmax over the implicit codebook),
whose statistics are averaged with `torch.distributed.nn.all_reduce` only when a process group is running. Seeded
with torch.manual_seed alone; a few Adam steps each."""

import torch
import torch.distributed as dist
import torch.nn.functional as F
from einops import rearrange, reduce
from torch import nn
from torch.distributed import nn as dist_nn

torch.manual_seed(0)


def maybe_distributed_mean(t):
    if not (dist.is_initialized() and dist.get_world_size() > 1):
        return t
    return dist_nn.all_reduce(t) / dist.get_world_size()


def kmeans(samples, num_clusters, iters=3):
    means = samples[torch.randperm(samples.shape[0])[:num_clusters]]
    for _ in range(iters):
        buckets = torch.cdist(samples, means).argmin(dim=-1)
        onehot = F.one_hot(buckets, num_clusters).type(samples.dtype)
        bins = onehot.sum(0)
        new_means = samples.new_zeros(num_clusters, samples.shape[-1]).index_add_(0, buckets, samples)
        new_means = new_means / bins.clamp(min=1)[:, None]
        means = torch.where((bins == 0)[:, None], means, new_means)
    return means, bins


class EuclideanCodebook(nn.Module):
    def __init__(self, dim, size, decay=0.8, eps=1e-5, dead_threshold=1., cosine=False):
        super().__init__()
        self.decay, self.eps, self.dead_threshold, self.cosine = decay, eps, dead_threshold, cosine
        self.register_buffer("initted", torch.tensor([False]))
        self.register_buffer("cluster_size", torch.zeros(size))
        self.register_buffer("embed_avg", torch.zeros(size, dim))
        self.register_buffer("embed", torch.zeros(size, dim))

    @torch.no_grad()
    def init_embed_(self, x):
        embed, size = kmeans(x, self.embed.shape[0])
        self.embed.copy_(embed)
        self.embed_avg.copy_(embed.clone())
        self.cluster_size.copy_(size)
        self.initted.data.copy_(torch.tensor([True]))

    def forward(self, x):
        flat = rearrange(x, "... d -> (...) d")
        if self.cosine:
            flat = F.normalize(flat, dim=-1)
        if not self.initted.item():
            self.init_embed_(flat.detach())
        embed = F.normalize(self.embed, dim=-1) if self.cosine else self.embed
        dist_ = -torch.cdist(flat, embed, p=2) if not self.cosine else flat @ embed.t()
        ind = dist_.argmax(dim=-1)
        onehot = F.one_hot(ind, embed.shape[0]).type(x.dtype)
        quantize = F.embedding(ind, embed).view_as(x)
        if self.training:
            counts = maybe_distributed_mean(onehot.sum(0))
            self.cluster_size.data.lerp_(counts, 1 - self.decay)
            embed_sum = maybe_distributed_mean(flat.detach().t() @ onehot)
            self.embed_avg.data.lerp_(embed_sum.t(), 1 - self.decay)
            n = self.cluster_size.sum()
            smoothed = (self.cluster_size + self.eps) / (n + embed.shape[0] * self.eps) * n
            self.embed.data.copy_(self.embed_avg / smoothed[:, None])
            dead = self.cluster_size < self.dead_threshold
            if dead.any():
                picks = flat.detach()[torch.randint(0, flat.shape[0], (int(dead.sum()),))]
                self.embed.data[dead] = picks
                self.cluster_size.data.masked_fill_(dead, self.dead_threshold)
        return quantize, ind.view(x.shape[:-1])


def rotate_to(src, tgt):
    """Householder-style map of src onto tgt's direction (the rotation trick's gradient path)."""
    norm_s, norm_t = src.norm(dim=-1, keepdim=True), tgt.norm(dim=-1, keepdim=True)
    u, q = src / norm_s.clamp(min=1e-6), tgt / norm_t.clamp(min=1e-6)
    w = F.normalize(u + q, dim=-1).detach()
    e = src
    rotated = e - 2 * (e * w).sum(-1, keepdim=True) * w + 2 * (e * u.detach()).sum(-1, keepdim=True) * q.detach()
    return rotated * (norm_t / norm_s.clamp(min=1e-6)).detach()


class VectorQuantize(nn.Module):
    def __init__(self, dim, size, codebook_dim=None, commitment=0.25, rotation_trick=False, **kw):
        super().__init__()
        cdim = codebook_dim or dim
        self.project_in = nn.Linear(dim, cdim) if cdim != dim else nn.Identity()
        self.project_out = nn.Linear(cdim, dim) if cdim != dim else nn.Identity()
        self.codebook = EuclideanCodebook(cdim, size, **kw)
        self.commitment, self.rotation_trick = commitment, rotation_trick

    def forward(self, x):
        x = self.project_in(x)
        quantize, ind = self.codebook(x)
        loss = F.mse_loss(quantize.detach(), x) * self.commitment if self.training else x.new_zeros(())
        quantize = rotate_to(x, quantize) if self.rotation_trick else x + (quantize - x).detach()
        return self.project_out(quantize), ind, loss


class ResidualVQ(nn.Module):
    def __init__(self, dim, num_quantizers, size, quantize_dropout=True):
        super().__init__()
        self.layers = nn.ModuleList(VectorQuantize(dim, size) for _ in range(num_quantizers))
        self.quantize_dropout = quantize_dropout

    def forward(self, x):
        residual, out, inds, losses = x, torch.zeros_like(x), [], []
        last = len(self.layers)
        if self.training and self.quantize_dropout:
            last = int(torch.randint(1, len(self.layers) + 1, ()).item())
        for i, layer in enumerate(self.layers):
            if i >= last:
                inds.append(torch.full(x.shape[:-1], -1, dtype=torch.long))
                losses.append(x.new_zeros(()))
                continue
            q, ind, loss = layer(residual)
            residual = residual - q.detach()
            out = out + q
            inds.append(ind)
            losses.append(loss)
        return out, torch.stack(inds, dim=-1), torch.stack(losses)


def round_ste(z):
    return z + (z.round() - z).detach()


class FSQ(nn.Module):
    def __init__(self, levels, dim):
        super().__init__()
        self.register_buffer("levels", torch.tensor(levels, dtype=torch.int32), persistent=False)
        self.register_buffer("basis", torch.cumprod(torch.tensor([1] + levels[:-1]), dim=0, dtype=torch.int32),
                             persistent=False)
        self.project_in, self.project_out = nn.Linear(dim, len(levels)), nn.Linear(len(levels), dim)

    def forward(self, x):
        z = self.project_in(x)
        half_l = (self.levels - 1) * (1 + 1e-3) / 2
        offset = torch.where(self.levels % 2 == 0, 0.5, 0.0)
        shift = (offset / half_l).atanh()
        bounded = (z + shift).tanh() * half_l - offset
        codes = round_ste(bounded) / (self.levels // 2)
        half_width = self.levels // 2
        indices = ((codes * half_width + half_width) * self.basis).sum(dim=-1).to(torch.int32)
        return self.project_out(codes), indices, x.new_zeros(())


class LFQ(nn.Module):
    def __init__(self, dim, codebook_size, entropy_weight=0.1, diversity_gamma=1., temperature=0.01):
        super().__init__()
        bits = int(torch.tensor(codebook_size).log2().item())
        self.project_in, self.project_out = nn.Linear(dim, bits), nn.Linear(bits, dim)
        self.register_buffer("mask", 2 ** torch.arange(bits - 1, -1, -1), persistent=False)
        all_codes = torch.arange(codebook_size)
        bits_ = ((all_codes[..., None].int() & self.mask) != 0).float()
        self.register_buffer("codebook", bits_ * 2 - 1, persistent=False)
        self.entropy_weight, self.gamma, self.temperature = entropy_weight, diversity_gamma, temperature

    def forward(self, x):
        z = self.project_in(x)
        q = torch.where(z > 0, torch.ones_like(z), -torch.ones_like(z))
        indices = reduce((q > 0).int() * self.mask.int(), "b n c -> b n", "sum")
        quantized = z + (q - z).detach()
        aux = x.new_zeros(())
        if self.training:
            logits = 2 * torch.einsum("... i d, j d -> ... i j", z, self.codebook)
            prob = (-logits * -1 / self.temperature).softmax(dim=-1)
            per_sample = (-prob * prob.clamp(min=1e-5).log()).sum(-1).mean()
            avg = maybe_distributed_mean(reduce(prob, "... c d -> d", "mean"))
            codebook_entropy = (-avg * avg.clamp(min=1e-5).log()).sum()
            commit = F.mse_loss(z, q.detach())
            aux = (per_sample - self.gamma * codebook_entropy) * self.entropy_weight + 0.25 * commit
        return self.project_out(quantized), indices, aux


def train(name, quantizer, steps=3):
    torch.manual_seed(1)
    enc, dec = nn.Linear(6, 8), nn.Linear(8, 6)
    params = list(enc.parameters()) + list(dec.parameters()) + list(quantizer.parameters())
    opt = torch.optim.Adam(params, lr=1e-2)
    data = torch.randn(4, 10, 6)
    for step in range(steps):
        q, ind, aux = quantizer(enc(data))
        recon = F.mse_loss(dec(q), data)
        loss = recon + aux.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"{name} step {step} recon {recon.item():.6f} aux {aux.sum().item():.6f} "
              f"codes {ind.flatten()[:6].tolist()} used {ind.unique().numel()}")
    quantizer.eval()
    with torch.no_grad():
        q, ind, _ = quantizer(enc(data))
    print(f"{name} eval {q.pow(2).sum().item():.6f} {ind.sum().item()}")


train("vq", VectorQuantize(8, 16, decay=0.8))
train("vq-cos-proj", VectorQuantize(8, 16, codebook_dim=4, cosine=True, dead_threshold=0.5))
train("vq-rot", VectorQuantize(8, 12, rotation_trick=True))
train("rvq", ResidualVQ(8, 3, 8))
train("fsq", FSQ([8, 5, 5, 4], 8))
train("lfq", LFQ(8, 16))
