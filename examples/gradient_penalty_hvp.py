"""Gradients of gradients (``create_graph=True``), two ways.

1. A WGAN-GP critic: the loss holds the gradient penalty ``(||d critic(x_hat) / d x_hat|| - 1)**2`` at points
   between real and fake samples, so training differentiates through a gradient. The penalty falls as the critic
   becomes 1-Lipschitz along those lines, and the critic learns to score real samples above fake ones.
2. A Hessian-vector product ``H v = d (grad f . v) / dw`` of a small network's loss, by double backward, checked
   against a central finite difference of gradients, ``(grad f(w + h v) - grad f(w - h v)) / 2h``.

Pure PyTorch API: only the import line differs, so ``python -m tapegrad.parity examples/gradient_penalty_hvp.py
--fast`` compares both frameworks (data and initial weights come from NumPy).
"""

import argparse

import numpy as np

import tapegrad as torch
from tapegrad import nn


def numpy_init_(model, seed, dtype=np.float32):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in model.parameters():
            bound = 1.0 / np.sqrt(p.shape[1]) if p.dim() >= 2 else 0.1
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(p.shape)).astype(dtype)))


def gradient_penalty(critic, real, fake, eps):
    x_hat = (eps * real + (1 - eps) * fake).requires_grad_(True)
    score = critic(x_hat)
    (grad,) = torch.autograd.grad(score.sum(), x_hat, create_graph=True)   # keeps the graph: differentiable
    return ((grad.norm(2, dim=1) - 1) ** 2).mean()


def wgan_gp(steps):
    print("--- 1. WGAN-GP critic ---")
    rng = np.random.default_rng(0)
    critic = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
    numpy_init_(critic, seed=1)
    optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.9))
    lam = 10.0
    for step in range(1, steps + 1):
        real = torch.from_numpy((rng.normal(size=(64, 2)) * 0.3 + [2.0, 0.0]).astype(np.float32))
        fake = torch.from_numpy((rng.normal(size=(64, 2)) * 0.3 + [-1.0, 1.0]).astype(np.float32))
        eps = torch.from_numpy(rng.uniform(size=(64, 1)).astype(np.float32))
        gp = gradient_penalty(critic, real, fake, eps)
        gap = critic(real).mean() - critic(fake).mean()
        loss = -gap + lam * gp
        optimizer.zero_grad()
        loss.backward()            # through the penalty's gradient: second derivatives of the critic
        optimizer.step()
        if step == 1 or step % (steps // 4) == 0:
            print(f"step {step}: critic gap {gap.item():.5f}  gradient penalty {gp.item():.5f}  "
                  f"loss {loss.item():.5f}")
    return gap.item()


def hvp_check():
    print("--- 2. Hessian-vector product by double backward vs finite differences ---")
    rng = np.random.default_rng(2)
    net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1)).double()
    numpy_init_(net, seed=3, dtype=np.float64)
    x = torch.from_numpy(rng.normal(size=(16, 3)))
    y = torch.from_numpy(rng.normal(size=(16, 1)))
    params = list(net.parameters())
    v = [torch.from_numpy(rng.normal(size=tuple(p.shape))) for p in params]

    def grads():
        loss = ((net(x) - y) ** 2).mean()
        return torch.autograd.grad(loss, params, create_graph=True)

    g = grads()
    dot = sum((gi * vi).sum() for gi, vi in zip(g, v))
    hv = torch.autograd.grad(dot, params)                        # H v, exactly
    h = 1e-5
    with torch.no_grad():
        for p, vi in zip(params, v):
            p.add_(h * vi)
    g_plus = [gi.detach() for gi in grads()]
    with torch.no_grad():
        for p, vi in zip(params, v):
            p.sub_(2 * h * vi)
    g_minus = [gi.detach() for gi in grads()]
    with torch.no_grad():
        for p, vi in zip(params, v):
            p.add_(h * vi)
    fd = [(a - b) / (2 * h) for a, b in zip(g_plus, g_minus)]
    hv_flat, fd_flat = torch.cat([t.reshape(-1) for t in hv]), torch.cat([t.reshape(-1) for t in fd])
    err = ((hv_flat - fd_flat).abs().max() / fd_flat.abs().max()).item()
    print("||Hv||         :", round(hv_flat.norm().item(), 8))
    print("Hv[:4]         :", [round(t, 8) for t in hv_flat[:4].tolist()])
    print("finite diff[:4]:", [round(t, 8) for t in fd_flat[:4].tolist()])
    print("double backward and finite differences agree to 1e-7:", err < 1e-7)
    return err


def main():
    ap = argparse.ArgumentParser(description="Gradients of gradients, two ways: a WGAN-GP critic trained with a "
                                             "gradient penalty, and a Hessian-vector product by double backward.")
    ap.add_argument("--fast", action="store_true", help="A run of a few seconds: 80 critic steps (instead of 1000).")
    args = ap.parse_args()
    wgan_gp(80 if args.fast else 1000)
    hvp_check()


if __name__ == "__main__":
    main()
