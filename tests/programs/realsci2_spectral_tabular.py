# Fourier-neural-operator and tabular training code as their single-file scripts and small libraries write it:
# a field read transposed from a MATLAB v7.3 file (reversed dims), normalised pointwise by its mean and std over
# the samples and batched by a DataLoader, then `.view`ed flat for a relative Lp loss; 1-d and 2-d spectral
# convolutions (rfft/rfft2, complex `cfloat` weights contracted by einsum into a zero spectrum, irfft back with the
# size given); a hand-written functional Adam on the conj of the gradients; a tabular MLP whose categorical
# columns share one table through offsets, with ReGLU, a CLS token and a sparsemax attentive mask. Seeded with
# torch.manual_seed and NumPy.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
np.random.seed(0)


# ---- data as an HDF5 reader hands it over: stored with reversed dims, transposed back (a non-row-major view) ----
def read_field(rs, shape):
    stored = rs.rand(*shape[::-1]).astype(np.float32)
    return torch.from_numpy(np.transpose(stored, range(len(shape) - 1, -1, -1)))


class PointwiseGaussian:
    def __init__(self, x, eps=1e-5):
        self.mean, self.std, self.eps = torch.mean(x, 0), torch.std(x, 0), eps

    def encode(self, x):
        return (x - self.mean) / (self.std + self.eps)

    def decode(self, x):
        return x * (self.std + self.eps) + self.mean


def rel_lp(x, y, p=2):
    n = x.size(0)
    diff = torch.norm(x.reshape(n, -1) - y.reshape(n, -1), p, 1)
    return torch.sum(diff / torch.norm(y.reshape(n, -1), p, 1))


# ---- spectral convolutions ------------------------------------------------------------------------------------
class Spectral1d(nn.Module):
    def __init__(self, cin, cout, modes):
        super().__init__()
        self.modes = modes
        self.w = nn.Parameter(torch.rand(cin, cout, modes, dtype=torch.cfloat) / (cin * cout))

    def forward(self, x):
        xf = torch.fft.rfft(x)
        out = torch.zeros(x.shape[0], self.w.shape[1], x.size(-1) // 2 + 1, dtype=torch.cfloat)
        out[:, :, :self.modes] = torch.einsum("bix,iox->box", xf[:, :, :self.modes], self.w)
        return torch.fft.irfft(out, n=x.size(-1))


class Spectral2d(nn.Module):
    def __init__(self, cin, cout, m1, m2):
        super().__init__()
        self.m1, self.m2 = m1, m2
        scale = 1 / (cin * cout)
        self.w1 = nn.Parameter(scale * torch.rand(cin, cout, m1, m2, dtype=torch.cfloat))
        self.w2 = nn.Parameter(scale * torch.rand(cin, cout, m1, m2, dtype=torch.cfloat))

    def forward(self, x):
        xf = torch.fft.rfft2(x)
        out = torch.zeros(x.shape[0], self.w1.shape[1], x.size(-2), x.size(-1) // 2 + 1, dtype=torch.cfloat)
        out[:, :, :self.m1, :self.m2] = torch.einsum("bixy,ioxy->boxy", xf[:, :, :self.m1, :self.m2], self.w1)
        out[:, :, -self.m1:, :self.m2] = torch.einsum("bixy,ioxy->boxy", xf[:, :, -self.m1:, :self.m2], self.w2)
        return torch.fft.irfft2(out, s=(x.size(-2), x.size(-1)))


class FNO2d(nn.Module):
    def __init__(self, modes, width, pad=3):
        super().__init__()
        self.pad = pad
        self.lift = nn.Linear(3, width)
        self.convs = nn.ModuleList(Spectral2d(width, width, modes, modes) for _ in range(2))
        self.ws = nn.ModuleList(nn.Conv2d(width, width, 1) for _ in range(2))
        self.proj = nn.Sequential(nn.Linear(width, 16), nn.GELU(), nn.Linear(16, 1))

    def forward(self, a):
        b, sx, sy = a.shape[:3]
        gx = torch.linspace(0, 1, sx).reshape(1, sx, 1, 1).repeat([b, 1, sy, 1])
        gy = torch.tensor(np.linspace(0, 1, sy), dtype=torch.float).reshape(1, 1, sy, 1).repeat([b, sx, 1, 1])
        x = self.lift(torch.cat((a, gx, gy), dim=-1)).permute(0, 3, 1, 2)
        x = F.pad(x, [0, self.pad, 0, self.pad])
        for i, (conv, w) in enumerate(zip(self.convs, self.ws)):
            x = conv(x) + w(x)
            x = F.gelu(x) if i == 0 else x
        x = x[..., :-self.pad, :-self.pad].permute(0, 2, 3, 1)
        return self.proj(x)


@torch.no_grad()
def functional_adam(params, states, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-4):
    for p in params:
        st = states.setdefault(p, {"step": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)})
        st["step"] += 1
        g = p.grad.add(p, alpha=weight_decay)
        st["m"].mul_(betas[0]).add_(g, alpha=1 - betas[0])
        st["v"].mul_(betas[1]).addcmul_(g, g.conj(), value=1 - betas[1])
        denom = (st["v"].sqrt() / (1 - betas[1] ** st["step"]) ** 0.5).add_(eps)
        p.addcdiv_(st["m"], denom, value=-lr / (1 - betas[0] ** st["step"]))


rs = np.random.RandomState(0)
coeff, sol = read_field(rs, (10, 12, 12)), read_field(rs, (10, 12, 12)) * 0.5 + 0.25
print("stored strides", coeff.stride(), coeff.is_contiguous())
xn, yn = PointwiseGaussian(coeff[:8]), PointwiseGaussian(sol[:8])
print("stats strides", xn.mean.stride(), yn.std.stride(), yn.std.view(-1)[:3].tolist())
train = torch.utils.data.TensorDataset(xn.encode(coeff[:8]).reshape(8, 12, 12, 1), yn.encode(sol[:8]))
loader = torch.utils.data.DataLoader(train, batch_size=4, shuffle=True)
model, states = FNO2d(modes=3, width=6), {}
print("params", sum(p.numel() * (2 if p.is_complex() else 1) for p in model.parameters()))
for ep in range(3):
    total = 0.0
    for x, y in loader:
        for p in model.parameters():
            p.grad = None
        out = yn.decode(model(x).reshape(4, 12, 12))
        loss = rel_lp(out.view(4, -1), yn.decode(y).view(4, -1))
        loss.backward()
        functional_adam(list(model.parameters()), states, lr=5e-3)
        total += loss.item()
    print("fno2d epoch", ep, total / 8, model.convs[0].w1.grad.abs().sum().item())

spec = Spectral1d(3, 2, 4)
u = torch.randn(2, 3, 16, requires_grad=True)
v = spec(u)
v.pow(2).sum().backward()
print("fno1d", v.shape, v.sum().item(), u.grad.norm().item(), spec.w.grad.real.sum().item(), spec.w.grad.dtype)
k = torch.stack([u[0, 0], u[0, 1].detach() * 2], 1)
print("stacked", k.stride(), k.view(-1)[:4].tolist())


# ---- a tabular model: shared categorical table with offsets, ReGLU blocks, a CLS token, sparsemax masks --------
def sparsemax(z, dim=-1):
    zs, _ = torch.sort(z, descending=True, dim=dim)
    cums = zs.cumsum(dim) - 1
    rho = torch.arange(1, z.size(dim) + 1, dtype=z.dtype)
    support = (rho * zs > cums).sum(dim=dim, keepdim=True)
    tau = cums.gather(dim, support - 1) / support.to(z.dtype)
    return torch.clamp(z - tau, min=0)


class Tabular(nn.Module):
    def __init__(self, n_num, cards, d=8):
        super().__init__()
        self.register_buffer("offsets", torch.tensor(np.array((0, *np.cumsum(cards)[:-1]), dtype=np.int64)))
        self.cat = nn.Embedding(sum(cards), d)
        self.num_w = nn.Parameter(torch.empty(n_num, d).uniform_(-d ** -0.5, d ** -0.5))
        self.cls = nn.Parameter(torch.zeros(d))
        self.mask = nn.Linear(d, n_num + len(cards) + 1)
        self.ff = nn.Linear(d, 2 * d)
        self.head = nn.Linear(d, 1)

    def forward(self, x_num, x_cat):
        tokens = torch.cat([self.num_w[None] * x_num[..., None], self.cat(x_cat + self.offsets[None])], 1)
        tokens = torch.cat([tokens, self.cls.expand(len(tokens), 1, -1)], 1)
        m = sparsemax(self.mask(tokens.mean(1)))
        h = (tokens * m[..., None]).sum(1)
        a, b = self.ff(h).chunk(2, dim=-1)
        return self.head(a * F.relu(b)).squeeze(-1), m


x_num = torch.tensor(rs.randn(32, 3), dtype=torch.float32)
x_cat = torch.tensor(np.stack([rs.randint(0, c, 32) for c in (3, 5)], 1))
target = (x_num[:, 0] > 0).double()
tab = Tabular(3, (3, 5))
opt = torch.optim.AdamW(tab.parameters(), lr=1e-2, weight_decay=1e-5)
for step in range(5):
    logit, m = tab(x_num, x_cat)
    loss = F.binary_cross_entropy_with_logits(logit, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("tabular", step, loss.dtype, round(loss.item(), 6), m.sum(1)[:3].tolist(), (m > 0).sum().item())
try:
    F.binary_cross_entropy(torch.sigmoid(logit), target)
except RuntimeError as e:
    print("bce", e)
