"""Small helpers shared by the update rules (state tensors, validation)."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor


def zeros_state(p):
    return Tensor._make(np.zeros_like(p._array))


def step_state():
    """torch keeps ``step`` as a float32 0-d tensor."""
    return Tensor._make(np.zeros((), np.float32))


def incr_step(state):
    s = state["step"]
    s._array += np.float32(1)
    return float(s._array)


def number(v):
    """A hyper-parameter given as a tensor (``lr=torch.tensor(0.01)``, which a scheduler may change in place) as
    the Python number it holds now."""
    return v.item() if isinstance(v, Tensor) else v


def one_element_lr(lr):
    """torch's first check of a learning rate: a tensor lr holds one element."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")


def check(cond, message):
    if not cond:
        raise ValueError(message)


def touched(p):
    """An in-place update of ``p``: its version moves on (a counter made at 1 if it had none yet)."""
    vc = p._vcl
    if vc is None:
        p._vcl = [1]
    else:
        vc[0] += 1


def params_with_grad(group):
    """[(parameter, its gradient array — negated when the group maximizes)] for each parameter with a grad."""
    pairs = [(p, p._grad._array) for p in group["params"] if p._grad is not None]
    if group.get("maximize", False):
        return [(p, -g) for p, g in pairs]
    return pairs


def stepped(opt, group, *buffers):
    """(param, grad, state, step) for each parameter of ``group`` with a gradient, its step counted first. A new
    state starts with ``step`` 0, then one entry per item of ``buffers`` in that order (torch's keys and order): a
    name gets a zero tensor like the parameter, a ``(name, make)`` pair gets ``make()``."""
    for p, g in params_with_grad(group):
        state = opt.state[p]
        if not state:
            state["step"] = step_state()
            for b in buffers:
                if b.__class__ is tuple:
                    state[b[0]] = b[1]()
                else:
                    state[b] = zeros_state(p)
        yield p, g, state, incr_step(state)


def functional_steps(state_steps, name="state_steps"):
    """A functional form's step counters (``torch.optim.adam.adam(..., state_steps)``): each a one-element tensor,
    counted up by one here; returns their new values as numbers. Anything else is refused in torch's words."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError(f"API has changed, `{name}` argument must contain a list of singleton tensors")
    out = []
    for t in state_steps:
        t._array += 1
        out.append(float(t._array))
    return out


def weight_decay(p, g, lr, wd, decoupled=False):
    """L2 penalty folded into the gradient, or (decoupled, AdamW-style) applied to the parameter."""
    if wd == 0:
        return g
    if decoupled:
        p._array *= 1 - lr * wd
        return g
    return g + wd * p._array


def lerp_(a, b, w):
    """torch.lerp_ in place on arrays: a + w (b - a), using torch's two formulas for accuracy."""
    if w < 0.5:
        a += w * (b - a)
    else:
        a[...] = b - (b - a) * (1 - w)


def moments_(m, v, g, beta1, beta2):
    """Adam's running moments, in place: m <- lerp(m, g, 1 - beta1), v <- beta2 v + (1 - beta2) g²."""
    lerp_(m, g, 1 - beta1)
    v *= beta2
    v += (1 - beta2) * (g * g)
