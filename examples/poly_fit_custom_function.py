"""Polynomial fitting where the polynomial is a custom ``autograd.Function`` with its own forward and backward.

``Polynomial.apply(x, coeffs)`` evaluates ``sum_k coeffs[k] * x**k`` (Horner's rule) and supplies both gradients
by hand: d/dx = sum_k k coeffs[k] x**(k-1), d/dcoeffs[k] = x**k. The backward is written with tensor operations,
so it is differentiable itself. ``gradcheck`` and ``gradgradcheck`` compare it with finite differences; then Adam
fits a degree-5 polynomial to sin(pi t + 1/2) on [-1, 1] and approaches the least-squares solution (``numpy.polyfit``).

Pure PyTorch API (it is PyTorch's "defining new autograd functions" tutorial, generalised): only the import line
differs, so ``python -m tapegrad.parity examples/poly_fit_custom_function.py --fast`` compares both frameworks.
"""

import argparse
import math

import numpy as np

import tapegrad as torch


class Polynomial(torch.autograd.Function):
    """y = coeffs[0] + coeffs[1] x + ... + coeffs[n] x**n, elementwise in x."""

    @staticmethod
    def forward(ctx, x, coeffs):
        ctx.save_for_backward(x, coeffs)
        y = torch.zeros_like(x)
        for k in range(coeffs.shape[0] - 1, -1, -1):     # Horner: (((c_n x + c_{n-1}) x + ...) x + c_0
            y = y * x + coeffs[k]
        return y

    @staticmethod
    def backward(ctx, grad_y):
        x, coeffs = ctx.saved_tensors
        n = coeffs.shape[0]
        grad_x = grad_coeffs = None
        if ctx.needs_input_grad[0]:
            dy_dx = torch.zeros_like(x)
            for k in range(n - 1, 0, -1):                # p'(x) by Horner too
                dy_dx = dy_dx * x + k * coeffs[k]
            grad_x = grad_y * dy_dx
        if ctx.needs_input_grad[1]:
            powers = x.unsqueeze(-1) ** torch.arange(n, dtype=x.dtype)   # (..., n): x**k
            grad_coeffs = (grad_y.unsqueeze(-1) * powers).reshape(-1, n).sum(0)
        return grad_x, grad_coeffs


def main():
    ap = argparse.ArgumentParser(description="Polynomial fitting where the polynomial is a custom autograd.Function "
                                             "with its own forward and backward, checked by gradcheck.")
    ap.add_argument("--fast", action="store_true", help="A run of a few seconds: 150 fitting steps.")
    ap.add_argument("--steps", type=int, default=None, help="Fitting steps (default: 2000, or 150 with --fast).")
    args = ap.parse_args()
    steps = args.steps or (150 if args.fast else 2000)
    rng = np.random.default_rng(0)

    # 1. the hand-written backward against finite differences (float64, as gradcheck wants)
    x = torch.tensor(rng.uniform(-1, 1, (3, 4)), requires_grad=True)
    c = torch.tensor(rng.normal(size=5), requires_grad=True)
    print("gradcheck    :", torch.autograd.gradcheck(Polynomial.apply, (x, c), eps=1e-6, atol=1e-8))
    print("gradgradcheck:", torch.autograd.gradgradcheck(Polynomial.apply, (x, c), eps=1e-6, atol=1e-8))
    y = Polynomial.apply(x, c)
    print("grad_fn      :", type(y.grad_fn).__name__)
    (gx, gc) = torch.autograd.grad(y.sum(), (x, c))
    print("d/dcoeffs of sum(p(x)) = sums of x**k:", [round(v, 6) for v in gc.tolist()])

    # 2. fit sin(pi t + 1/2) with a degree-5 polynomial (no symmetry: every coefficient has a gradient; Adam
    #    would turn the rounding noise of an exactly-zero gradient into steps of size lr)
    t = torch.linspace(-1, 1, 200, dtype=torch.float64)
    target = torch.sin(math.pi * t + 0.5)
    coeffs = torch.zeros(6, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.Adam([coeffs], lr=0.05)
    for step in range(1, steps + 1):
        optimizer.zero_grad()
        loss = ((Polynomial.apply(t, coeffs) - target) ** 2).mean()
        loss.backward()
        optimizer.step()
        if step == 1 or step % (steps // 5) == 0:
            print(f"step {step}: loss {loss.item():.6e}")
    best = np.polyfit(t.numpy(), target.numpy(), 5)[::-1].copy()
    best_loss = ((np.polyval(best[::-1], t.numpy()) - target.numpy()) ** 2).mean()
    print("fitted coefficients :", [round(v, 4) for v in coeffs.tolist()])
    print("least squares       :", [round(v, 4) for v in best.tolist()])
    print(f"final loss {loss.item():.6e}; least-squares loss {best_loss:.6e}")


if __name__ == "__main__":
    main()
