# Audio front-ends and tabular models as torch-only libraries write them: an STFT as two frozen Conv1d banks of
# windowed DFT rows (reflect padding), a Slaney mel filterbank applied by matmul, power-to-dB with a top_db floor,
# MFCCs by an orthonormal DCT matrix, SpecAugment stripes from torch.randint, a small log-mel CNN with amsgrad Adam,
# checked against torch.stft; sparsemax / 1.5-entmax as custom autograd Functions (sort, cumsum, gather) with their
# Fenchel-Young loss, a TabNet-style attentive mask with a prior, and field-offset embeddings for FM / DeepFM.
# Seeded with torch.manual_seed and NumPy.
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function

torch.manual_seed(0)
rng = np.random.RandomState(0)
SR, N_FFT, HOP = 8000, 128, 32


def hann(n):
    return 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)


def slaney_mel(sr, n_fft, n_mels, fmin=0.0, fmax=None):
    def hz2mel(f):
        f = np.asarray(f, dtype=np.float64)
        lin = 3.0 * f / 200.0
        return np.where(f >= 1000.0, 15.0 + np.log(np.maximum(f, 1e-10) / 1000.0) / (np.log(6.4) / 27.0), lin)

    def mel2hz(m):
        return np.where(m >= 15.0, 1000.0 * np.exp((np.log(6.4) / 27.0) * (m - 15.0)), 200.0 * m / 3.0)

    fmax = sr / 2 if fmax is None else fmax
    freqs = np.linspace(0, sr / 2, n_fft // 2 + 1)
    edges = mel2hz(np.linspace(hz2mel(fmin), hz2mel(fmax), n_mels + 2))
    up = (freqs[None] - edges[:-2, None]) / np.diff(edges)[:-1, None]
    down = (edges[2:, None] - freqs[None]) / np.diff(edges)[1:, None]
    w = np.maximum(0, np.minimum(up, down)) * (2.0 / (edges[2:] - edges[:-2]))[:, None]
    return w.T.astype(np.float32)                               # (freq_bins, n_mels)


class ConvSTFT(nn.Module):
    def __init__(self, n_fft, hop):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        k = np.arange(n_fft)
        dft = np.exp(-2j * np.pi * np.outer(k, k) / n_fft)[: n_fft // 2 + 1] * hann(n_fft)
        self.real = nn.Conv1d(1, n_fft // 2 + 1, n_fft, stride=hop, bias=False)
        self.imag = nn.Conv1d(1, n_fft // 2 + 1, n_fft, stride=hop, bias=False)
        self.real.weight.data = torch.Tensor(np.real(dft)[:, None, :])
        self.imag.weight.data = torch.Tensor(np.imag(dft)[:, None, :])
        for p in self.parameters():
            p.requires_grad = False

    def forward(self, wav):                                     # (batch, samples) -> (batch, 1, frames, bins)
        x = F.pad(wav[:, None, :], (self.n_fft // 2, self.n_fft // 2), mode="reflect")
        return self.real(x).transpose(1, 2)[:, None], self.imag(x).transpose(1, 2)[:, None]


class LogMel(nn.Module):
    def __init__(self, n_mels, top_db=80.0, amin=1e-10):
        super().__init__()
        self.melW = nn.Parameter(torch.Tensor(slaney_mel(SR, N_FFT, n_mels, fmin=20.0)), requires_grad=False)
        self.top_db, self.amin = top_db, amin

    def forward(self, power):
        mel = torch.matmul(power, self.melW)
        db = 10.0 * torch.log10(torch.clamp(mel, min=self.amin, max=np.inf))
        if self.top_db is not None:
            db = torch.clamp(db, min=db.max().item() - self.top_db, max=np.inf)
        return db


def dct_matrix(n_mfcc, n_mels):
    n = torch.arange(float(n_mels))
    k = torch.arange(float(n_mfcc)).unsqueeze(1)
    d = torch.cos(math.pi / n_mels * (n + 0.5) * k)
    d[0] *= 1.0 / math.sqrt(2.0)
    return (d * math.sqrt(2.0 / n_mels)).t()                    # (n_mels, n_mfcc), orthonormal columns


class Stripes(nn.Module):
    def __init__(self, dim, width, num):
        super().__init__()
        self.dim, self.width, self.num = dim, width, num

    def forward(self, x):
        if not self.training:
            return x
        total = x.shape[self.dim]
        for n in range(x.shape[0]):
            for _ in range(self.num):
                w = torch.randint(low=0, high=self.width, size=(1,))[0]
                start = torch.randint(low=0, high=total - w, size=(1,))[0]
                if self.dim == 2:
                    x[n, :, start:start + w, :] = 0
                else:
                    x[n, :, :, start:start + w] = 0
        return x


wav = torch.Tensor(rng.uniform(-0.5, 0.5, (4, 1200))) + torch.sin(torch.arange(1200.0) * 0.3) * torch.tensor(
    [[0.1], [0.4], [0.2], [0.3]])
stft = ConvSTFT(N_FFT, HOP)
re, im = stft(wav)
ref = torch.stft(wav, N_FFT, hop_length=HOP, window=torch.hann_window(N_FFT), center=True, pad_mode="reflect",
                 return_complex=True)
print("stft", tuple(re.shape), torch.allclose(ref.real.transpose(1, 2), re[:, 0], atol=1e-3),
      torch.allclose(ref.imag.transpose(1, 2), im[:, 0], atol=1e-3))
power = re ** 2 + im ** 2
mag = torch.sqrt(torch.clamp(power, 1e-10, np.inf))
print("phase", (re / mag)[0, 0, 3, :4], torch.angle(ref)[0, 1:4, 3])
logmel = LogMel(24)
lm = logmel(power)
mfcc = torch.matmul(lm, dct_matrix(10, 24))
print("mfcc", tuple(mfcc.shape), mfcc[0, 0, :2], mfcc.mean(dim=(0, 1, 2)))
frames = F.conv1d(wav[:, None], torch.eye(64)[:, None, :], stride=32)
print("frames", tuple(frames.shape), frames.transpose(1, 2)[1, 2, :3], torch.stft(
    wav, 64, 32, window=torch.hann_window(64, periodic=False), center=False, return_complex=True).abs().mean())


class LogMelCNN(nn.Module):
    def __init__(self, classes=3):
        super().__init__()
        self.stft, self.logmel = ConvSTFT(N_FFT, HOP), LogMel(24, top_db=None)
        self.time_drop, self.freq_drop = Stripes(2, 4, 2), Stripes(3, 3, 2)
        self.bn0 = nn.BatchNorm2d(24)
        self.conv = nn.Conv2d(1, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, classes)
        self.drop = nn.Dropout(0.2)

    def forward(self, w):
        re, im = self.stft(w)
        x = self.logmel(re ** 2 + im ** 2)
        x = self.bn0(x.transpose(1, 3)).transpose(1, 3)
        x = self.freq_drop(self.time_drop(x))
        x = F.relu_(self.bn1(self.conv(x)))
        x = F.avg_pool2d(x, kernel_size=(2, 2))
        x = torch.mean(x, dim=3)
        x = torch.max(x, dim=2)[0] + torch.mean(x, dim=2)
        return self.fc(self.drop(x))


net = LogMelCNN()
opt = torch.optim.Adam(net.parameters(), lr=1e-2, amsgrad=True)
labels = torch.LongTensor([0, 1, 2, 1])
for it in range(5):
    net.train()
    loss = F.cross_entropy(net(wav), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("cnn", it, round(loss.item(), 5))
net.eval()
with torch.no_grad():
    print("probs", torch.softmax(net(wav), -1))


# --- sparse attention over features -----------------------------------------------------------------------------
def _ix_like(x, dim):
    d = x.size(dim)
    view = [1] * x.dim()
    view[0] = -1
    return torch.arange(1, d + 1, device=x.device, dtype=x.dtype).view(view).transpose(0, dim)


class SparsemaxFn(Function):
    @staticmethod
    def forward(ctx, x, dim=-1):
        ctx.dim = dim
        x = x - x.max(dim=dim, keepdim=True)[0]
        srt, _ = torch.sort(x, dim=dim, descending=True)
        cum = srt.cumsum(dim) - 1
        support = _ix_like(x, dim) * srt > cum
        k = support.sum(dim=dim).unsqueeze(dim)
        tau = cum.gather(dim, k - 1) / k.to(x.dtype)
        out = torch.clamp(x - tau, min=0)
        ctx.save_for_backward(k, out)
        return out

    @staticmethod
    def backward(ctx, g):
        k, out = ctx.saved_tensors
        g = g.clone()
        g[out == 0] = 0
        v = g.sum(dim=ctx.dim, keepdim=True) / k.to(out.dtype).squeeze().unsqueeze(ctx.dim)
        return torch.where(out != 0, g - v, g), None


class Entmax15Fn(Function):
    @staticmethod
    def forward(ctx, x, dim=-1):
        ctx.dim = dim
        x = (x - x.max(dim=dim, keepdim=True)[0]) / 2
        xs, _ = torch.sort(x, descending=True, dim=dim)
        rho = _ix_like(x, dim)
        mean = xs.cumsum(dim) / rho
        ss = rho * ((xs ** 2).cumsum(dim) / rho - mean ** 2)
        tau = mean - torch.sqrt(torch.clamp((1 - ss) / rho, 0))
        k = (tau <= xs).sum(dim).unsqueeze(dim)
        out = torch.clamp(x - tau.gather(dim, k - 1), min=0) ** 2
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, dy):
        y, = ctx.saved_tensors
        gppr = y.sqrt()
        dx = dy * gppr
        q = dx.sum(ctx.dim) / gppr.sum(ctx.dim)
        return dx - q.unsqueeze(ctx.dim) * gppr, None


x = torch.randn(3, 6, dtype=torch.float64, requires_grad=True)
for fn in (SparsemaxFn, Entmax15Fn):
    p = fn.apply(x, -1)
    print(fn.__name__, p, p.sum(-1), torch.autograd.gradcheck(lambda t: fn.apply(t, 1), (x,), eps=1e-6, atol=1e-5))
    print(fn.__name__, "dim0", fn.apply(x.detach().float(), 0)[:, :3])


def sparsemax_loss(z, target):
    p = SparsemaxFn.apply(z, -1)
    omega = (1 - (p ** 2).sum(dim=1)) / 2
    onehot = F.one_hot(target, z.shape[1]).to(z.dtype)
    return omega + torch.einsum("ij,ij->i", p - onehot, z)


z = torch.randn(5, 6, requires_grad=True)
yt = torch.randint(0, 6, (5,))
fy = sparsemax_loss(z, yt)
fy.mean().backward()
print("fy loss", fy, z.grad[0])

# --- TabNet-style attentive transformer + FM / DeepFM over field embeddings --------------------------------------
n, field_dims = 96, (6, 4, 9, 5)
cats = torch.stack([torch.randint(0, d, (n,)) for d in field_dims], 1)
nums = torch.randn(n, 5)
target = ((cats[:, 0] % 2 == 0) & (nums[:, 1] > 0)).float()


class GhostBN(nn.Module):
    def __init__(self, dim, vbs=32, momentum=0.02):
        super().__init__()
        self.vbs, self.bn = vbs, nn.BatchNorm1d(dim, momentum=momentum)

    def forward(self, x):
        chunks = x.chunk(int(np.ceil(x.shape[0] / self.vbs)), 0)
        return torch.cat([self.bn(c) for c in chunks], dim=0)


class TabDeepFM(nn.Module):
    def __init__(self, field_dims, n_num, emb=4, gamma=1.3):
        super().__init__()
        self.offsets = np.array((0, *np.cumsum(field_dims)[:-1]), dtype=np.int64)
        self.embed = nn.Embedding(sum(field_dims), emb)
        self.linear = nn.Embedding(sum(field_dims), 1)
        self.bias = nn.Parameter(torch.zeros((1,)))
        nn.init.xavier_uniform_(self.embed.weight.data)
        self.att = nn.Linear(n_num, n_num, bias=False)
        self.gbn = GhostBN(n_num)
        self.gamma = gamma
        d = len(field_dims) * emb + n_num
        self.mlp = nn.Sequential(nn.Linear(d, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 1))

    def forward(self, cats, nums):
        idx = cats + cats.new_tensor(self.offsets).unsqueeze(0)
        e = self.embed(idx)
        fm = 0.5 * ((e.sum(1) ** 2) - (e ** 2).sum(1)).sum(1, keepdim=True)
        lin = self.linear(idx).sum(1) + self.bias
        prior = torch.ones_like(nums)
        mask = SparsemaxFn.apply(self.gbn(self.att(nums)) * prior, -1)
        prior = prior * (self.gamma - mask)
        sparse_loss = torch.mean(torch.sum(mask * torch.log(mask + 1e-15), dim=1))
        deep = self.mlp(torch.cat([e.view(-1, e.shape[1] * e.shape[2]), mask * nums], 1))
        return torch.sigmoid((lin + fm + deep).squeeze(1)), sparse_loss, mask


model = TabDeepFM(field_dims, 5)
opt = torch.optim.AdamW(model.parameters(), lr=0.02, weight_decay=1e-4)
crit = nn.BCELoss()
for epoch in range(8):
    model.train()
    perm = torch.randperm(n)
    for b in range(0, n, 32):
        i = perm[b:b + 32]
        pred, sl, mask = model(cats[i], nums[i])
        loss = crit(pred, target[i]) - 1e-3 * sl
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("tab", epoch, round(loss.item(), 5), (mask > 0).float().sum(1).mean().item())
model.eval()
with torch.no_grad():
    pred, _, mask = model(cats, nums)
print("acc", ((pred > 0.5).float() == target).float().mean().item(), mask[:2])
