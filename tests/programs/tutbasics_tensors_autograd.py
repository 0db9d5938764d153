# The first steps of a PyTorch course, condensed: making tensors and reading their attributes, choosing a device,
# indexing, joining, arithmetic with out=, the NumPy bridge, then autograd: graphs and their grad_fn, vector-Jacobian
# products, accumulation, switching tracking off, and a hand-written autograd Function fitted by gradient descent.
# Seeded with torch.manual_seed alone: tapegrad draws torch's numbers.
import math

import numpy as np
import torch
from torch.autograd import Variable

torch.manual_seed(7)

# --- making tensors --------------------------------------------------------------------------------------------
grid = [[2, 4], [6, 8]]
t_list = torch.tensor(grid)
t_np = torch.from_numpy(np.array(grid))
print(torch.ones_like(t_list), torch.rand_like(t_list, dtype=torch.float))
print(torch.zeros(2, 3, dtype=torch.long), torch.tensor([1.5, -2.0]).new_ones(2, 2, dtype=torch.double))
noise = torch.randn_like(torch.empty(3, 2, dtype=torch.double), dtype=torch.float)
print(noise, noise.size(), noise.shape, noise.dtype, noise.device, t_np.dtype)

# --- which device: scripts ask, then stay on the CPU here -------------------------------------------------------
gpu = torch.device("cuda")
print(gpu.type, gpu.index, torch.device("cuda:1").index, torch.device("cpu") == torch.device("cpu"))
if torch.cuda.is_available() & (gpu.index is not None):
    noise = noise.to(gpu)
device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
print("running on", device, torch.cuda.device_count())

# --- indexing, joining, arithmetic --------------------------------------------------------------------------------
m = torch.arange(1.0, 17.0).view(4, 4)
print(m[0], m[:, 0], m[..., -1], m[1:3, ::2])
m[:, 2] = -1
print(m, torch.cat([m, m], dim=0).shape, torch.stack([m[0], m[1]]).sum(0))
prod = m @ m.T
out_mm = torch.empty(4, 4)
torch.matmul(m, m.T, out=out_mm)
out_mul = torch.rand_like(m)
torch.mul(m, m, out=out_mul)
summed = torch.empty(4, 4)
torch.add(m, out_mul, out=summed)
print(torch.equal(prod, out_mm), out_mul[1], summed.diag(), m.mul(0.5).sum().item())
total = m.sum()
print(total, total.item(), type(total.item()).__name__, m.view(-1, 8).shape, m.view(16)[5])
m.add_(3)
m.t_()
print(m[0])
scalar = torch.tensor(2.5)
try:
    scalar[0]
except IndexError as e:                       # the pre-0.4 loss.data[0]
    print("IndexError:", e)
print(scalar.item(), scalar[None], scalar[...])

# --- NumPy bridge: the memory is shared both ways ------------------------------------------------------------------
ones = torch.ones(4)
arr = ones.numpy()
ones.mul_(3)
print(ones, arr)
buf = np.zeros(3)
shared = torch.from_numpy(buf)
np.add(buf, 2, out=buf)
print(shared, shared.dtype)

# --- autograd: one logistic unit -------------------------------------------------------------------------------------
x = torch.ones(6)
target = torch.tensor([0.0, 1.0, 0.0])
w = torch.randn(6, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, target)
print(type(z.grad_fn).__name__, type(loss.grad_fn).__name__, z.requires_grad, w.grad_fn)
loss.backward()
print(w.grad, b.grad)
with torch.no_grad():
    frozen = torch.matmul(x, w) + b
print(frozen.requires_grad, (torch.matmul(x, w) + b).detach().requires_grad)

# vector-Jacobian products and accumulation
p = torch.eye(3, 4, requires_grad=True)
q = (p * 2 + 1).pow(3).t()
q.backward(torch.ones_like(q), retain_graph=True)
first = p.grad.clone()
q.backward(torch.ones_like(q), retain_graph=True)
print(first, p.grad)
p.grad.zero_()
q.backward(torch.full_like(q, 0.5))
print(p.grad)
u = torch.tensor([1.0, -2.0], requires_grad=True)
v = torch.tensor([3.0, 0.5], requires_grad=True)
Q = 2 * u ** 3 + v ** 2 * u
Q.backward(gradient=torch.tensor([1.0, 2.0]))
print(u.grad, v.grad, 6 * u ** 2 + v ** 2 == torch.tensor([1.0, 0.5]) * u.grad)

# the old Variable wrapper, requires_grad_, a while loop in the graph
old = Variable(torch.ones(2, 2), requires_grad=True)
y = (old + 3) * (old + 3) * 2
y.mean().backward()
print(old.grad, type(y.grad_fn).__name__)
a = torch.randn(2, 2)
a = a * 4 / (a + 3)
print(a.requires_grad, a.requires_grad_().requires_grad, type((a * a).sum().grad_fn).__name__)
try:
    a.to(requires_grad=True)
except TypeError as e:
    print("TypeError:", str(e).splitlines()[0])
s = torch.randn(3, requires_grad=True)
r = s * 3
while r.data.norm() < 500:
    r = r * 3
r.backward(torch.tensor([0.2, 1.0, 0.001]))
print(r, s.grad)


# --- a custom autograd Function: Hermite polynomial H3(t) = 8t^3 - 12t ----------------------------------------------
class Hermite3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        return 8 * t ** 3 - 12 * t

    @staticmethod
    def backward(ctx, grad_output):
        t, = ctx.saved_tensors
        return grad_output * (24 * t ** 2 - 12)


xs = torch.linspace(-1.0, 1.0, 400)
ys = torch.sin(math.pi * xs / 2)
c0 = torch.full((), 0.1, requires_grad=True)
c1 = torch.full((), -0.1, requires_grad=True)
c2 = torch.full((), 0.0, requires_grad=True)
c3 = torch.full((), 0.6, requires_grad=True)
for step in range(300):
    pred = c0 + c1 * Hermite3.apply(c2 + c3 * xs)
    err = (pred - ys).pow(2).sum()
    if step % 60 == 59:
        print(step, round(err.item(), 5))
    err.backward()
    with torch.no_grad():
        for c in (c0, c1, c2, c3):
            c -= 1e-4 * c.grad
            c.grad = None
print(f"fit: {c0.item():.5f} + {c1.item():.5f} * H3({c2.item():.5f} + {c3.item():.5f} x)")
