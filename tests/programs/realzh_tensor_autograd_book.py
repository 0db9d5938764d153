# The tensor and autograd chapters of Chinese PyTorch books and courses, condensed, in their notebook habits:
# legacy constructors (an uninitialised Tensor(2, 3) zeroed before printing, one sharing a float32 ndarray or a
# storage), resize_ shrinking and growing back over the same storage, index_select/masked_select/gather/scatter_,
# torch.add's deprecated positional alpha, Variable and .data, the graph walked through grad_fn.next_functions,
# a custom Function whose node's backward is called by hand through grad_fn.apply, tensor hooks and retain_grad,
# retain_graph and create_graph, an old-style module backward hook on a Conv2d, set_grad_enabled shown bare, and the
# errors the chapters provoke on purpose (an in-place change of a leaf, a CUDA type on a CPU build). Seeded with
# torch.manual_seed alone; errors print as their class and a checksum of torch's message.
import warnings
import zlib

import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Function, Variable

warnings.filterwarnings("ignore", category=UserWarning, message="TypedStorage is deprecated")
warnings.filterwarnings("ignore", category=FutureWarning, message="Using a non-full backward hook")
torch.manual_seed(2024)


def report(title, fn):
    try:
        out = fn()
    except Exception as e:       # noqa: BLE001 -- the chapter shows the error
        print(title, "raises", type(e).__name__, zlib.crc32(str(e).encode()))
        return None
    print(title, out)
    return out


# --- creation, legacy constructors and storages ------------------------------------------------------------
a = torch.Tensor(2, 3).zero_()            # the book zeroes it: the values were whatever memory held
b = torch.Tensor([[1, 2, 3], [4, 5, 6]])
print(a.shape, b.tolist(), b.size(1), torch.Tensor(b.size()).zero_().shape, torch.Tensor((2, 3)))
arr = np.ones((2, 3), dtype=np.float32)
shared, copied = torch.Tensor(arr), torch.DoubleTensor(arr)
arr[0, 1] = 100
print(shared, copied.dtype, copied[0, 1].item(), torch.from_numpy(arr).sum().item())
x = torch.arange(0, 6)
tail = x[2:]
view_all = torch.LongTensor(tail.storage())     # the whole storage, not the slice
view_all[0] = 6666
print(x, tail.storage_offset(), view_all.shape, x.new(x.storage()).sum().item())
m = x.view(2, 3)
m.resize_(1, 3)
print(m)
m.resize_(2, 3)                                 # the old elements are still in the storage
print(m, m.data_ptr() == x.data_ptr())
report("Tensor(str)", lambda: torch.FloatTensor("abc"))

# --- indexing and the old calling forms ---------------------------------------------------------------------
t = torch.randn(3, 4)
idx = torch.LongTensor([0, 2])
print(t.index_select(0, idx), torch.masked_select(t, t > 0.5), t[t > 0.5].numel())
g = torch.arange(0, 16).view(4, 4)
print(g.gather(0, torch.LongTensor([[0, 1, 2, 3]])), g.gather(1, torch.LongTensor([[3, 2, 1, 0]]).t()))
s = torch.zeros(4, 4).long().scatter_(1, torch.LongTensor([[3], [2], [1], [0]]), g.gather(1, torch.LongTensor(
    [[3], [2], [1], [0]])))
print(s)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    print(torch.add(torch.ones(2, 2), 10, torch.full((2, 2), 0.5)))   # add(input, alpha, other): deprecated form
print(t.t().contiguous().view(-1)[:5], t.numpy().shape, torch.cat([t, t], 1).shape, torch.stack([t, t], 2).shape)
print([c.shape for c in torch.chunk(torch.ones(2, 7), 3, dim=1)], [c.shape for c in torch.split(torch.ones(2, 5),
                                                                                                   [2, 1, 2], 1)])

# --- autograd: Variable, the graph, retain_graph, create_graph ------------------------------------------------
w = Variable(torch.rand(1), requires_grad=True)
bias = Variable(torch.rand(1), requires_grad=True)
inp = Variable(torch.ones(1))
y = w * inp
z = y + bias
print(inp.requires_grad, w.is_leaf, z.is_leaf, z.grad_fn.name(), [
    (None if f is None else f.name(), n) for f, n in z.grad_fn.next_functions])
print([(None if f is None else f.name()) for f, _ in z.grad_fn.next_functions[0][0].next_functions])
print(z.grad_fn.next_functions[0][0].next_functions[0][0].variable is w)
z.backward(retain_graph=True)
print(w.grad, bias.grad)
z.backward()                                   # accumulates
print(w.grad, bias.grad)
report("third backward", lambda: z.backward())

u = torch.tensor([3.0], requires_grad=True)
d1 = torch.autograd.grad(u ** 3, u, create_graph=True)
d2 = torch.autograd.grad(d1[0], u)
print(d1, d2, d1[0].grad_fn.name())

# the .data trick and detach: changes that autograd does not see
p = torch.ones(3, 4, requires_grad=True)
q = p.data.sigmoid_()
print(q.requires_grad, p[0, 0].item(), p.detach().requires_grad)

# hooks: the gradient of an intermediate value
seen = []
a1 = torch.ones(3, requires_grad=True)
h = a1 * 2
handle = h.register_hook(lambda grad: seen.append(grad.clone()))
(h * torch.arange(3.0)).sum().backward()
handle.remove()
h2 = a1 * 3
h2.retain_grad()
(h2 ** 2).sum().backward()
print(seen, h2.grad, a1.grad)

report("in-place on a leaf", lambda: torch.tensor([1.0], requires_grad=True).add_(1))


# --- a custom Function and its node's own backward ------------------------------------------------------------
class MultiplyAdd(Function):
    @staticmethod
    def forward(ctx, w, x, b):
        ctx.save_for_backward(w, x)
        return w * x + b

    @staticmethod
    def backward(ctx, grad_output):
        w, x = ctx.saved_tensors
        return grad_output * x, grad_output * w, grad_output


wv, xv, bv = torch.rand(1, requires_grad=True), torch.ones(1), torch.rand(1, requires_grad=True)
out = MultiplyAdd.apply(wv, xv, bv)
print(out.grad_fn.name(), out.grad_fn.apply(torch.ones(1)))
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    print(out.grad_fn.saved_variables[1])
out.backward()
print(wv.grad, bv.grad)
report("saved tensors after backward", lambda: out.grad_fn.saved_tensors)
report("saved_variables of a built-in node", lambda: (wv * 2).grad_fn.saved_variables)

# --- grad mode, shown bare as a notebook shows it ----------------------------------------------------------
print(torch.set_grad_enabled(False), (wv * 2).requires_grad)
print(torch.set_grad_enabled(True), (wv * 2).requires_grad)

# --- an old-style module backward hook (the hook sits on the output's grad_fn) --------------------------------
conv = nn.Conv2d(1, 2, 3)
conv.weight.data[0].fill_(1)
conv.weight.data[1].fill_(2)
conv.bias.data.zero_()
grads = []
conv.register_backward_hook(lambda m, gin, gout: grads.append(
    [None if g is None else g.sum().item() for g in gin] + [gout[0].shape]))
loss = nn.L1Loss()(torch.randn(1, 2, 2, 2), conv(torch.ones(1, 1, 4, 4)))
loss.backward()
print(grads)

# --- on a CPU-only machine ------------------------------------------------------------------------------------
report("type(cuda)", lambda: torch.randn(2).type(torch.cuda.FloatTensor))
report("cuda(0)", lambda: torch.randn(2).cuda(0))
report("module cuda(0)", lambda: nn.Linear(2, 2).cuda(0))
print(torch.cuda.is_available(), nn.ReLU().cuda(0))
