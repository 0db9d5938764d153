"""Custom autograd in the style of the intermediate tutorials: forward-mode AD with dual tensors (a module's
parameters made duals, a Function with its own jvp that frees what it kept on ctx), gradcheck with
check_forward_ad, gradgradcheck drawing its grad_outputs from the seeded generator, double backward through
Functions (an output saved, a backward that is itself a Function), a fused conv + batch norm Function, and the
optimizer step run from post-accumulate-grad hooks."""
import torch
import torch.autograd.forward_ad as fwAD
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

torch.manual_seed(11)

lin = nn.Linear(3, 2)
data = torch.randn(4, 3)
tangents = {n: torch.rand_like(p) for n, p in lin.named_parameters()}
with fwAD.dual_level():
    duals = {n: fwAD.make_dual(p, tangents[n]) for n, p in lin.named_parameters()}
    out = fwAD.unpack_dual(functional_call(lin, duals, (data,))).tangent
print("module jvp", out[0])


class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.sig = torch.sigmoid(x)
        return F.softplus(x)

    @staticmethod
    def jvp(ctx, t):
        out = t * ctx.sig
        del ctx.sig
        return out


z = torch.randn(5, dtype=torch.double, requires_grad=True)
with fwAD.dual_level():
    tan = fwAD.unpack_dual(Softplus.apply(fwAD.make_dual(z, torch.ones(5, dtype=torch.double)))).tangent
print("custom jvp", tan)
print("forward gradcheck", torch.autograd.gradcheck(Softplus.apply, (z,), check_forward_ad=True,
                                                    check_backward_ad=False, check_undefined_grad=False,
                                                    check_batched_grad=False))


class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * y


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return CubeGrad.apply(g, x)


class CubeGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, g, x):
        ctx.save_for_backward(g, x)
        return 3 * g * x ** 2

    @staticmethod
    def backward(ctx, gg):
        g, x = ctx.saved_tensors
        return 3 * gg * x ** 2, 6 * gg * g * x


u = torch.rand(2, 2, dtype=torch.double, requires_grad=True)
print("gradgradcheck", torch.autograd.gradgradcheck(Exp.apply, u), torch.autograd.gradgradcheck(Cube.apply, u))
print("after the checks the stream goes on", torch.rand(3))
d1, = torch.autograd.grad(Cube.apply(u).sum(), u, create_graph=True)
d2, = torch.autograd.grad(d1.sum(), u)
print("cube derivatives", d1, d2)


class ConvBN(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, w, eps=1e-3):
        ctx.save_for_backward(X, w)
        Y = F.conv2d(X, w)
        ctx.mean, ctx.std, ctx.eps = Y.mean(dim=(0, 2, 3)), Y.var(dim=(0, 2, 3), unbiased=True).sqrt(), eps
        return (Y - ctx.mean[None, :, None, None]) / (ctx.std + eps)[None, :, None, None]

    @staticmethod
    def backward(ctx, g):
        X, w = ctx.saved_tensors
        with torch.enable_grad():
            Xd, wd = X.detach().requires_grad_(), w.detach().requires_grad_()
            Y = F.conv2d(Xd, wd)
            m, s = Y.mean(dim=(0, 2, 3)), Y.var(dim=(0, 2, 3), unbiased=True).sqrt()
            out = (Y - m[None, :, None, None]) / (s + ctx.eps)[None, :, None, None]
            gX, gw = torch.autograd.grad(out, (Xd, wd), g)
        return gX, gw, None


X = torch.rand(2, 2, 5, 5, dtype=torch.double, requires_grad=True)
W = torch.rand(3, 2, 3, 3, dtype=torch.double, requires_grad=True)
print("conv-bn gradcheck", torch.autograd.gradcheck(ConvBN.apply, (X, W)))

model = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 1))
opts = {p: torch.optim.Adam([p], lr=0.05, foreach=False) for p in model.parameters()}


def step_now(p):
    opts[p].step()
    opts[p].zero_grad()


for p in model.parameters():
    p.register_post_accumulate_grad_hook(step_now)
for it in range(4):
    loss = (model(data) - 1).pow(2).mean()
    loss.backward()
    print("step", it, loss.item(), all(p.grad is None for p in model.parameters()))
print("final bias", model[2].bias)
