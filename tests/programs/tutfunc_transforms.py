"""torch.func in the style of the intermediate tutorials: a Jacobian by rows (vjp_fn mapped over a basis), jacrev
and jacfwd and hessian, per-sample gradients of a small CNN, an empirical NTK both ways (Jacobian contraction and
vjp-under-vmap composed with jvp), and a vmapped ensemble of MLPs from stack_module_state."""
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, hessian, jacfwd, jacrev, jvp, stack_module_state, vjp, vmap

torch.manual_seed(7)


def layer(w, b, x):
    return F.linear(x, w, b).tanh()


w, b, x = torch.randn(5, 4), torch.randn(5), torch.randn(4)
_, pullback = vjp(functools.partial(layer, w, b), x)
rows, = vmap(pullback)(torch.eye(5))
print("rows", rows[1], rows[4])
print("jacrev agrees", torch.allclose(rows, jacrev(layer, argnums=2)(w, b, x)))
print("jacfwd agrees", torch.allclose(rows, jacfwd(layer, argnums=2)(w, b, x), atol=1e-6))
jw, jb = jacrev(layer, argnums=(0, 1))(w, b, x)
print("param jacobians", tuple(jw.shape), tuple(jb.shape), jw.abs().sum().item())
H = hessian(lambda v: layer(w, b, v).sum())(x)
print("hessian", H[0])
batch = torch.randn(3, 4)
print("batched jacobian", vmap(jacrev(layer, argnums=2), in_dims=(None, None, 0))(w, b, batch)[2, 0])


class TinyCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc = nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        return F.log_softmax(self.fc(F.relu(self.conv(x)).flatten(1)), dim=1)


net = TinyCNN()
images, labels = torch.randn(6, 1, 6, 6), torch.randint(3, (6,))
params = {k: v.detach() for k, v in net.named_parameters()}


def sample_loss(params, image, label):
    return F.nll_loss(functional_call(net, params, (image.unsqueeze(0),)), label.unsqueeze(0))


per_sample = vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, images, labels)
looped = torch.autograd.grad(F.nll_loss(net(images[2:3]), labels[2:3]), list(net.parameters()))
print("per-sample conv.weight", per_sample["conv.weight"].shape, per_sample["conv.weight"][2, 1, 0])
print("matches a loop", all(torch.allclose(a[2], g, atol=1e-6) for a, g in zip(per_sample.values(), looped)))


def f_single(params, x):
    return functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)


def ntk_contraction(x1, x2):
    j1 = [j.flatten(2) for j in vmap(jacrev(f_single), (None, 0))(params, x1).values()]
    j2 = [j.flatten(2) for j in vmap(jacrev(f_single), (None, 0))(params, x2).values()]
    return torch.stack([torch.einsum("Naf,Mbf->NMab", a, c) for a, c in zip(j1, j2)]).sum(0)


def ntk_products(x1, x2):
    def one(a, c):
        out, pull = vjp(lambda p: f_single(p, a), params)

        def column(v):
            return jvp(lambda p: f_single(p, c), (params,), pull(v))[1]
        return vmap(column)(torch.eye(out.numel()))
    return vmap(vmap(one, (None, 0)), (0, None))(x1, x2)


k1, k2 = ntk_contraction(images[:2], images[2:5]), ntk_products(images[:2], images[2:5])
print("ntk", tuple(k1.shape), k1[1, 2], torch.allclose(k1, k2, atol=1e-4))
print("ntk trace", torch.einsum("NMKK->NM", k2))

members = [nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)) for _ in range(3)]
stacked, buffers = stack_module_state(members)


def run_member(p, bufs, x):
    return functional_call(members[0], (p, bufs), (x,))


inputs = torch.randn(5, 4)
together = vmap(run_member, in_dims=(0, 0, None))(stacked, buffers, inputs)
print("ensemble", together[:, 0], torch.allclose(together, torch.stack([m(inputs) for m in members]), atol=1e-6))
