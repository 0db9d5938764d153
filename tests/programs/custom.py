import numpy as np, torch, torch.nn as nn
from torch.autograd import Function
class MyExp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp(); ctx.save_for_backward(y); return y
    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors; return g * y
class Clamp(Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(x); ctx.lo, ctx.hi = lo, hi; return x.clamp(lo, hi)
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors; return g * ((x >= ctx.lo) & (x <= ctx.hi)).float(), None, None
x = torch.linspace(-2, 2, 7, requires_grad=True)
y = MyExp.apply(x).sum() + Clamp.apply(x, -1, 1).pow(2).sum()
y.backward(); print(x.grad)
print(torch.autograd.gradcheck(MyExp.apply, (torch.randn(3, dtype=torch.double, requires_grad=True),)))
grads = []
lin = nn.Linear(3, 2)
h = lin.register_forward_hook(lambda m, i, o: grads.append(o.shape))
hb = lin.weight.register_hook(lambda g: g * 2)
with torch.no_grad(): lin.weight.fill_(0.5); lin.bias.zero_()
out = lin(torch.ones(4, 3)); out.sum().backward(); print(lin.weight.grad, grads)
h.remove(); hb.remove()
a = torch.tensor([1., 2., 3.], requires_grad=True)
b = (a ** 3).sum()
g, = torch.autograd.grad(b, a, create_graph=True); g2, = torch.autograd.grad(g.sum(), a); print(g, g2)
print(torch.autograd.functional.jacobian(lambda t: t ** 2, torch.tensor([1., 2.])))
print(torch.autograd.functional.hessian(lambda t: (t ** 3).sum(), torch.tensor([1., 2.])))
with torch.autograd.set_detect_anomaly(True):
    z = (a * 2).sum(); z.backward()
print(a.grad, a.is_leaf, z.grad_fn.name(), z.requires_grad)
m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3), nn.Dropout(0.5), nn.Linear(3, 1))
m.eval(); print(len(list(m.modules())), [n for n, _ in m.named_parameters()], m.training)
sd = m.state_dict(); print(list(sd.keys()))
m2 = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3), nn.Dropout(0.5), nn.Linear(3, 1)); print(m2.load_state_dict(sd))
print(m)
p = nn.Parameter(torch.ones(2)); print(p, isinstance(p, torch.Tensor))
print(torch.nn.utils.parameters_to_vector(m.parameters()).shape)
with torch.inference_mode(): q = a * 2
print(q.requires_grad, torch.is_inference_mode_enabled())
