"""Rotation mappings with a hand-derived Procrustes Function (backward and a forward-mode jvp that reads
`ctx.saved_for_forward`, a guard on `torch._C._are_functorch_transforms_active()`), quaternion helpers and a
rotation fitted by Adam, in the style of a small rotation library; then a masked autoregressive affine flow
and an affine coupling flow with their log-determinants, trained by maximum likelihood as a normalizing-flow
library does, and a sparsemax head. Seeded with torch.manual_seed alone, in float64."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import jacfwd, jvp, vmap

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)


# --- rotations ---------------------------------------------------------------------------------------------------
def flatten_batch(x, end_dim):
    batch_shape = x.shape[:end_dim + 1]
    return x.reshape(-1, *x.shape[end_dim + 1:]), batch_shape


class SpecialProcrustes(torch.autograd.Function):
    """The rotation nearest to M (SVD with a sign flip); derivatives through the SVD's Omega tensor."""
    generate_vmap_rule = True      # (jacfwd and vmap batch it)

    @staticmethod
    def forward(M, eps):
        U, D, Vh = torch.linalg.svd(M)
        V = Vh.transpose(-1, -2)
        det = torch.det(U @ Vh)
        flip = torch.cat((torch.ones_like(D[:, :-1]), det.sign()[:, None]), dim=-1)
        US, DS = U * flip[:, None, :], D * flip
        return US @ V.transpose(-1, -2), DS, US, V

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, DS, US, V = output
        ctx.save_for_backward(US, DS, V)
        ctx.save_for_forward(US, DS, V)
        ctx.mark_non_differentiable(US, V)
        ctx.eps = inputs[1]

    @staticmethod
    def _inv_sum(DS, eps):
        s = DS[:, :, None] + DS[:, None, :]
        return torch.where(s.abs() > eps, 1 / s, torch.zeros_like(s))

    @staticmethod
    def backward(ctx, gR, gDS, gUS, gV):
        US, DS, V = ctx.saved_tensors
        A = US.transpose(-1, -2) @ gR @ V
        Z = (A - A.transpose(-1, -2)) * SpecialProcrustes._inv_sum(DS, ctx.eps)
        gM = US @ Z @ V.transpose(-1, -2) + (US * gDS[:, None, :]) @ V.transpose(-1, -2)
        return gM, None

    @staticmethod
    def jvp(ctx, dM, _):
        US, DS, V = ctx.saved_for_forward
        A = US.transpose(-1, -2) @ dM @ V
        Z = (A - A.transpose(-1, -2)) * SpecialProcrustes._inv_sum(DS, ctx.eps)
        return US @ Z @ V.transpose(-1, -2), torch.diagonal(A, dim1=-2, dim2=-1), None, None


calls = {"eager": 0, "transformed": 0}


def special_procrustes(M, eps=1e-5):
    M, batch_shape = flatten_batch(M, M.dim() - 3)
    calls["transformed" if torch._C._are_functorch_transforms_active() else "eager"] += 1
    R = SpecialProcrustes.apply(M, eps)[0]
    return R.reshape(*batch_shape, 3, 3)


def quat_product(p, q):
    pv, pw, qv, qw = p[..., :3], p[..., 3:], q[..., :3], q[..., 3:]
    return torch.cat((pw * qv + qw * pv + torch.cross(pv, qv, dim=-1), pw * qw - (pv * qv).sum(-1, keepdim=True)), -1)


def rotvec_to_unitquat(rv):
    angle = rv.norm(dim=-1, keepdim=True)
    half = angle / 2
    return torch.cat((torch.sinc(half / torch.pi) * rv / 2, half.cos()), dim=-1)


def unitquat_to_rotmat(q):
    x, y, z, w = q.unbind(-1)
    return torch.stack((1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
                        2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                        2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)), -1).reshape(*q.shape[:-1], 3, 3)


def geodesic_distance(R1, R2):
    cos = ((R1.transpose(-1, -2) @ R2).diagonal(dim1=-2, dim2=-1).sum(-1) - 1) / 2
    return torch.acos(cos.clamp(-1, 1))


M = torch.randn(4, 3, 3, requires_grad=True)
R = special_procrustes(M)
print("orthonormal", (R.transpose(-1, -2) @ R - torch.eye(3)).abs().max().item() < 1e-12,
      "det", torch.det(R).tolist())
R.sum().backward()
print("procrustes grad", M.grad.sum().item(), M.grad[0, 0].tolist())
print("gradcheck", torch.autograd.gradcheck(lambda m: special_procrustes(m), (M.detach().requires_grad_(),)))
dM = torch.randn(4, 3, 3)
_, dR = jvp(special_procrustes, (M.detach(),), (dM,))
eps = 1e-6
fd = (special_procrustes(M.detach() + eps * dM) - special_procrustes(M.detach() - eps * dM)) / (2 * eps)
print("jvp", dR.sum().item(), (dR - fd).abs().max().item() < 1e-6)
J = jacfwd(lambda m: special_procrustes(m[None])[0])(M.detach()[0])
print("jacfwd", J.shape, J.abs().sum().item())
print("vmapped", vmap(special_procrustes)(M.detach()[:, None]).sum().item(), "transformed calls", calls["transformed"])

rv = torch.randn(5, 3)
q = rotvec_to_unitquat(rv)
print("quat norms", q.norm(dim=-1).tolist())
print("q * q^-1", quat_product(q, q * torch.tensor([-1, -1, -1, 1.0]))[:, 3].tolist())
target = unitquat_to_rotmat(q)
raw = nn.Parameter(torch.randn(5, 3, 3))
opt = torch.optim.Adam([raw], lr=0.05)
for step in range(30):
    loss = geodesic_distance(special_procrustes(raw), target).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print("fit", step, loss.item())
print("fit final", geodesic_distance(special_procrustes(raw), target).tolist())


# --- flows -------------------------------------------------------------------------------------------------------
class MaskedLinear(nn.Linear):
    def __init__(self, in_degrees, out_degrees, strict):
        super().__init__(len(in_degrees), len(out_degrees))
        mask = (out_degrees[:, None] > in_degrees[None]) if strict else (out_degrees[:, None] >= in_degrees[None])
        self.register_buffer("mask", mask.to(self.weight.dtype))

    def forward(self, x):
        return F.linear(x, self.weight * self.mask, self.bias)


class MaskedAffineAutoregressive(nn.Module):
    def __init__(self, features, hidden):
        super().__init__()
        deg_in = torch.arange(1, features + 1)
        deg_h = torch.arange(hidden) % max(1, features - 1) + min(1, features - 1)
        self.net = nn.ModuleList([MaskedLinear(deg_in, deg_h, strict=False),
                                  MaskedLinear(deg_h, deg_in.repeat_interleave(2), strict=True)])
        self.features = features

    def forward(self, x):
        h = torch.relu(self.net[0](x))
        params = self.net[1](h).view(-1, self.features, 2)
        shift, unconstrained = params.unbind(-1)
        scale = torch.sigmoid(unconstrained + 2.0) + 1e-3
        return x * scale + shift, torch.log(scale).sum(-1)


class AffineCoupling(nn.Module):
    def __init__(self, mask, hidden):
        super().__init__()
        self.register_buffer("mask", mask)
        d = mask.numel()
        self.net = nn.Sequential(nn.Linear(d, hidden), nn.Tanh(), nn.Linear(hidden, 2 * d))
        nn.init.zeros_(self.net[-1].weight)
        nn.init.zeros_(self.net[-1].bias)

    def forward(self, x):
        s, t = self.net(x * self.mask).chunk(2, dim=-1)
        s = torch.tanh(s) * (1 - self.mask)
        return x * self.mask + (1 - self.mask) * (x * s.exp() + t), s.sum(-1)

    def inverse(self, y):
        s, t = self.net(y * self.mask).chunk(2, dim=-1)
        s = torch.tanh(s) * (1 - self.mask)
        return y * self.mask + (1 - self.mask) * (y - t) * (-s).exp()


base = torch.distributions.Independent(torch.distributions.Normal(torch.zeros(2), torch.ones(2)), 1)
maf = MaskedAffineAutoregressive(2, 8)
couplings = nn.ModuleList([AffineCoupling(torch.tensor([1.0, 0.0]), 16), AffineCoupling(torch.tensor([0.0, 1.0]), 16)])
opt = torch.optim.Adam(list(maf.parameters()) + list(couplings.parameters()), lr=1e-2)
theta = torch.rand(256) * torch.pi
data = torch.stack((theta.cos(), theta.sin() - 0.5), -1) + 0.1 * torch.randn(256, 2)
for step in range(25):
    z, logdet = maf(data)
    for c in couplings:
        z, ld = c(z)
        logdet = logdet + ld
    loss = -(base.log_prob(z) + logdet).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print("flow nll", step, loss.item())
x = torch.randn(3, 2)
y, _ = couplings[0](x)
print("coupling inverse", (couplings[0].inverse(y) - x).abs().max().item() < 1e-12)
Jm = torch.autograd.functional.jacobian(lambda v: maf(v[None])[0][0], x[0])
print("maf triangular", Jm.tolist(), "logdet", maf(x[:1])[1].item(), torch.logdet(Jm).item())


# --- sparsemax -------------------------------------------------------------------------------------------------
def sparsemax(z, dim=-1):
    zs, _ = torch.sort(z, dim=dim, descending=True)
    k = torch.arange(1, z.shape[dim] + 1, dtype=z.dtype)
    cums = zs.cumsum(dim) - 1
    support = (k * zs > cums).sum(dim=dim, keepdim=True)
    tau = cums.gather(dim, support - 1) / support.to(z.dtype)
    return torch.clamp(z - tau, min=0)


logits = torch.randn(4, 6, requires_grad=True)
p = sparsemax(logits)
print("sparsemax", p.sum(-1).tolist(), (p > 0).sum(-1).tolist())
(p * torch.arange(6.0)).sum().backward()
print("sparsemax grad", logits.grad.sum(-1).abs().max().item() < 1e-12, logits.grad[0].tolist())
