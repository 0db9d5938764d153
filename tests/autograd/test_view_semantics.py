"""Views against torch, from torch's own autograd tests: ``_base``/``_is_view()``, views taken before their base
requires grad, writes into ``expand()``ed tensors, the graph after an in-place change over a view, and the
legacy ``Variable(volatile=...)``."""

import warnings

import pytest
import torch

import tapegrad


def _views_base(m):
    x = m.randn(3, 4)
    leaf = m.randn(2, 3, requires_grad=True)
    return [x[0]._base is x, x.t()._base is x, x.view(12)._base is x, x.unbind()[1]._base is x,
            x[0][1:]._base is x, x.t()[1:].select(1, 0)._base is x,       # a view of a view: the root
            x._base is None, x.detach()._base is None, x.clone()._base is None,
            x[0]._is_view(), x._is_view(), x.detach()._is_view(), x.reshape(4, 3)._is_view(),
            x.contiguous()._is_view(), x.t().reshape(12)._is_view(),        # a copy: no view
            leaf[0]._base is leaf, (leaf * 2)[1]._base.grad_fn is not None, leaf[0]._base.requires_grad]


def test_base_is_the_root_tensor():
    assert _views_base(tapegrad) == _views_base(torch)


def _view_before_requires_grad(m):
    """torch's test_no_requires_grad_inplace and around it: ``b = a[0]`` taken before ``a.requires_grad_()``."""
    out = []
    a = m.randn(2, 3, dtype=m.float64)
    b = a[0]
    a.requires_grad_()
    out += [b.requires_grad, b.grad_fn is None, b.is_leaf]
    with pytest.raises(RuntimeError) as e:
        b.mul_(2)
    out.append(str(e.value))
    c = b * 2                       # requires grad, yet reaches nothing
    out += [c.requires_grad, c.grad_fn.next_functions[0][0] is None, b[1:].requires_grad]
    with pytest.raises(RuntimeError) as e:
        m.autograd.grad(c.sum(), a)
    out.append(str(e.value))
    a.requires_grad_(False)
    out.append(b.requires_grad)
    for grad_mode in (True, False):   # a change through the view before a requires grad, or under no_grad
        a = m.ones(2, 3, dtype=m.float64)
        b = a[:]
        if grad_mode:
            b.add_(5)
        a.requires_grad = True
        if not grad_mode:
            with m.no_grad():
                b.add_(5)
        (a * a).sum().backward()
        out += [a.grad.tolist(), b.requires_grad]
    return out


def test_view_taken_before_its_base_requires_grad():
    assert _view_before_requires_grad(tapegrad) == _view_before_requires_grad(torch)


def _warned(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn()
        except (TypeError, ValueError) as e:
            result = f"{type(e).__name__}: {e}"
    return result, [(w.category.__name__, str(w.message)) for w in caught]


def _volatile(m):
    V = m.autograd.Variable
    x = m.ones(2)
    made = _warned(lambda: V(x, volatile=True))
    v = made[0]
    out = [m.autograd.torch is m, made[1], (type(v).__name__, v.requires_grad), _warned(lambda: v.volatile),
           _warned(lambda: setattr(v, "volatile", True)), _warned(lambda: V(x, volatile=False).tolist()),
           _warned(lambda: V(x, requires_grad=True, volatile=False).requires_grad),
           _warned(lambda: V(x, True, True)), _warned(lambda: V(x, foo=1)), _warned(lambda: V([1.0])),
           _warned(lambda: m.ones(1).volatile)]
    return out


def test_variable_volatile_is_gone_with_torchs_warnings():
    assert _volatile(tapegrad) == _volatile(torch)
