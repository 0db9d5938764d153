# A selective state-space language model and a temporal convolutional network, in the style of the small
# single-file Mamba re-implementations and of the TCN benchmark scripts: einops reshapes and einsum contractions,
# softplus step sizes, a depthwise causal Conv1d trimmed to the sequence, a sequential scan stacked over time, an
# RMSNorm, tied embeddings, top-k sampling; weight-normed dilated Conv1d blocks with a chomp, the adding problem with
# gradient clipping, and a character TCN with a shared encoder/decoder. Seeded with torch.manual_seed alone.
import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from einops import einsum, rearrange, repeat
from torch.nn.utils import weight_norm


@dataclass
class SSMArgs:
    d_model: int = 16
    n_layer: int = 2
    vocab_size: int = 29
    d_state: int = 4
    expand: int = 2
    d_conv: int = 3
    pad_multiple: int = 8

    def __post_init__(self):
        self.d_inner = self.expand * self.d_model
        self.dt_rank = math.ceil(self.d_model / 16)
        if self.vocab_size % self.pad_multiple:
            self.vocab_size += self.pad_multiple - self.vocab_size % self.pad_multiple


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class SelectiveSSM(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.a = a
        self.in_proj = nn.Linear(a.d_model, 2 * a.d_inner, bias=False)
        self.conv1d = nn.Conv1d(a.d_inner, a.d_inner, a.d_conv, groups=a.d_inner, padding=a.d_conv - 1)
        self.x_proj = nn.Linear(a.d_inner, a.dt_rank + 2 * a.d_state, bias=False)
        self.dt_proj = nn.Linear(a.dt_rank, a.d_inner)
        self.A_log = nn.Parameter(torch.log(repeat(torch.arange(1, a.d_state + 1), "n -> d n", d=a.d_inner)))
        self.D = nn.Parameter(torch.ones(a.d_inner))
        self.out_proj = nn.Linear(a.d_inner, a.d_model, bias=False)

    def forward(self, x):
        b, l, _ = x.shape
        xr = rearrange(self.in_proj(x), "b l x -> b x l")
        x, res = xr.split(split_size=[self.a.d_inner, self.a.d_inner], dim=1)
        x = F.silu(self.conv1d(x)[:, :, :l])
        y = self.scan(x) * F.silu(res)
        return self.out_proj(rearrange(y, "b d l -> b l d"))

    def scan(self, u):
        A = -torch.exp(self.A_log.float())
        dbc = self.x_proj(rearrange(u, "b d l -> b l d"))
        delta, B, C = dbc.split(split_size=[self.a.dt_rank, self.a.d_state, self.a.d_state], dim=-1)
        delta = F.softplus(self.dt_proj(delta))
        dA = torch.exp(einsum(delta, A, "b l d, d n -> b d l n"))
        dBu = einsum(delta, B, u, "b l d, b l n, b d l -> b d l n")
        h = torch.zeros(u.shape[0], u.shape[1], A.shape[1])
        ys = []
        for i in range(u.shape[2]):
            h = dA[:, :, i] * h + dBu[:, :, i]
            ys.append(einsum(h, C[:, i, :], "b d n, b n -> b d"))
        return torch.stack(ys, dim=2) + u * rearrange(self.D, "d -> d 1")


class SSMLM(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.embedding = nn.Embedding(a.vocab_size, a.d_model)
        self.layers = nn.ModuleList([nn.ModuleDict(dict(norm=RMSNorm(a.d_model), mixer=SelectiveSSM(a)))
                                     for _ in range(a.n_layer)])
        self.norm_f = RMSNorm(a.d_model)
        self.lm_head = nn.Linear(a.d_model, a.vocab_size, bias=False)
        self.lm_head.weight = self.embedding.weight

    def forward(self, ids):
        x = self.embedding(ids)
        for layer in self.layers:
            x = layer["mixer"](layer["norm"](x)) + x
        return self.lm_head(self.norm_f(x))


@torch.no_grad()
def sample(model, ids, n, top_k=4):
    for _ in range(n):
        probs = F.softmax(model(ids)[:, -1], dim=-1)
        values, _ = torch.topk(probs, k=top_k)
        probs[probs < values[:, -1, None]] = 0
        probs = probs / probs.sum(axis=1, keepdims=True)
        ids = torch.cat([ids, torch.multinomial(probs, num_samples=1)], dim=1)
    return ids


torch.manual_seed(7)
args = SSMArgs()
lm = SSMLM(args)
print(args.vocab_size, args.dt_rank, sum(p.numel() for p in lm.parameters()))
ids = torch.randint(0, 29, (3, 10))
opt = optim.AdamW(lm.parameters(), lr=5e-3)
for step in range(4):
    logits = lm(ids[:, :-1])
    loss = F.cross_entropy(rearrange(logits, "b l v -> (b l) v"), rearrange(ids[:, 1:], "b l -> (b l)"))
    opt.zero_grad()
    loss.backward()
    a_grad = lm.layers[0]["mixer"].A_log.grad
    print("ssm", step, round(loss.item(), 5), round(a_grad.norm().item(), 6), round(lm.norm_f.weight.grad.sum().item(), 6))
    opt.step()
lm.eval()
print(sample(lm, ids[:, :3], 5).tolist())


class Chomp1d(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, x):
        return x[:, :, :-self.n].contiguous()


class TemporalBlock(nn.Module):
    def __init__(self, n_in, n_out, k, dilation, dropout):
        super().__init__()
        pad = (k - 1) * dilation
        self.conv1 = weight_norm(nn.Conv1d(n_in, n_out, k, padding=pad, dilation=dilation))
        self.conv2 = weight_norm(nn.Conv1d(n_out, n_out, k, padding=pad, dilation=dilation))
        self.net = nn.Sequential(self.conv1, Chomp1d(pad), nn.ReLU(), nn.Dropout(dropout),
                                 self.conv2, Chomp1d(pad), nn.ReLU(), nn.Dropout(dropout))
        self.downsample = nn.Conv1d(n_in, n_out, 1) if n_in != n_out else None
        self.conv1.weight.data.normal_(0, 0.01)
        self.conv2.weight.data.normal_(0, 0.01)
        if self.downsample is not None:
            self.downsample.weight.data.normal_(0, 0.01)

    def forward(self, x):
        res = x if self.downsample is None else self.downsample(x)
        return F.relu(self.net(x) + res)


def tcn(n_in, channels, k, dropout):
    return nn.Sequential(*[TemporalBlock(n_in if i == 0 else channels[i - 1], c, k, 2 ** i, dropout)
                           for i, c in enumerate(channels)])


class AddingTCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.tcn = tcn(2, [6, 6, 6], 3, 0.0)
        self.linear = nn.Linear(6, 1)
        self.linear.weight.data.normal_(0, 0.01)

    def forward(self, x):
        return self.linear(self.tcn(x)[:, :, -1])


def adding_data(n, length):
    x_num = torch.rand([n, 1, length])
    x_mask = torch.zeros([n, 1, length])
    y = torch.zeros([n, 1])
    for i in range(n):
        pos = np.random.choice(length, size=2, replace=False)
        x_mask[i, 0, pos[0]] = x_mask[i, 0, pos[1]] = 1
        y[i, 0] = x_num[i, 0, pos[0]] + x_num[i, 0, pos[1]]
    return torch.cat((x_num, x_mask), dim=1), y


np.random.seed(3)
X, Y = adding_data(48, 20)
model = AddingTCN()
print(sorted(n for n, _ in model.tcn[0].conv1.named_parameters()))
opt = getattr(optim, "Adam")(model.parameters(), lr=4e-3)
for i in range(0, 48, 16):
    opt.zero_grad()
    loss = F.mse_loss(model(X[i:i + 16]), Y[i:i + 16])
    loss.backward()
    total = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    opt.step()
    print("adding", i, round(loss.item(), 6), round(total.item(), 6), round(model.tcn[1].conv2.weight_g.grad.abs().sum().item(), 8))
model.eval()
with torch.no_grad():
    print("eval", round(F.mse_loss(model(X[:8]), Y[:8]).item(), 6))


class CharTCN(nn.Module):
    def __init__(self, emb, n_chars):
        super().__init__()
        self.encoder = nn.Embedding(n_chars, emb)
        self.tcn = tcn(emb, [10, emb], 2, 0.1)
        self.decoder = nn.Linear(emb, n_chars)
        self.decoder.weight = self.encoder.weight
        self.drop = nn.Dropout(0.1)
        self.encoder.weight.data.uniform_(-0.1, 0.1)
        self.decoder.bias.data.fill_(0)

    def forward(self, x):
        y = self.tcn(self.drop(self.encoder(x)).transpose(1, 2))
        return self.decoder(y.transpose(1, 2)).contiguous()


text = "the cat sat on the mat and the dog ran far " * 6
chars = sorted(set(text))
data = torch.tensor([chars.index(c) for c in text]).narrow(0, 0, 4 * (len(text) // 4)).view(4, -1)
char_model = CharTCN(8, len(chars))
sgd = optim.SGD(char_model.parameters(), lr=2.0)
for batch, i in enumerate(range(0, data.size(1) - 1, 16)):
    inp, target = data[:, i:i + 20], data[:, i + 1:i + 21]
    if inp.size(1) != target.size(1):
        continue
    char_model.train()
    sgd.zero_grad()
    out = char_model(inp)[:, 4:].contiguous().view(-1, len(chars))
    loss = nn.CrossEntropyLoss()(out, target[:, 4:].contiguous().view(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(char_model.parameters(), 0.15)
    sgd.step()
    print("char", batch, "loss {:5.3f} bpc {:5.3f}".format(loss.item(), loss.item() / math.log(2)))
