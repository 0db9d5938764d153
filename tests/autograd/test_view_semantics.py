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


EXPANDED_WRITES = {      # torch writes where no two written elements share memory; fill_/zero_ write one value
    "index_one": lambda x: x.__setitem__((0, 0), 1.0),
    "index_row": lambda x: x.__setitem__(0, x.new_tensor([0.0, 1.0, 2.0, 3.0])),
    "index_col": lambda x: x.__setitem__((slice(None), 0), x.new_tensor([0.0, 1.0, 2.0])),
    "index_all_number": lambda x: x.__setitem__(slice(None), 7.0),
    "fill": lambda x: x.fill_(2),
    "fill_tensor": lambda x: x.fill_(x.new_tensor(3.0)),
    "zero": lambda x: x.zero_(),
    "col_fill": lambda x: x[:, 0].fill_(5),
    "row_fill": lambda x: x[1].fill_(5),
    "add": lambda x: x.add_(1),
    "row_add": lambda x: x[0].add_(1),
    "col_add": lambda x: x[:, 2].add_(1),
    "copy": lambda x: x.copy_(x.new_ones(3, 4)),
    "row_copy": lambda x: x[2].copy_(x.new_ones(4)),
    "mul": lambda x: x.mul_(0),
    "clamp": lambda x: x.clamp_(0, 1),
}


def _expanded_write(m, name, make):
    t = m.zeros(1, 4)
    x = make(t)
    try:
        EXPANDED_WRITES[name](x)
    except RuntimeError as e:
        return str(e)
    return t.tolist(), x.tolist(), x._version


@pytest.mark.parametrize("make", ["expand", "broadcast_to", "expand_of_view"])
@pytest.mark.parametrize("name", EXPANDED_WRITES)
def test_writes_into_an_expanded_tensor(name, make):
    fn = {"expand": lambda t: t.expand(3, 4), "broadcast_to": lambda t: t.broadcast_to((3, 4)),
          "expand_of_view": lambda t: t[0].expand(3, 4)}[make]
    assert _expanded_write(tapegrad, name, fn) == _expanded_write(torch, name, fn)


def _expanded_grad(m, name):
    leaf = m.arange(1.0, 5.0, dtype=m.float64).reshape(1, 4).requires_grad_()
    w = m.arange(12.0, dtype=m.float64).reshape(3, 4)
    x = (leaf * 1).expand(3, 4)
    try:
        EXPANDED_WRITES[name](x)
    except RuntimeError as e:
        return str(e)
    out = [x.tolist(), type(x.grad_fn).__name__]
    try:
        (x * w).sum().backward()
    except RuntimeError as e:        # (torch's CopySlices writes the gradient through the view too)
        return out + [str(e)]
    return out + [leaf.grad.tolist()]


@pytest.mark.parametrize("name", EXPANDED_WRITES)
def test_writes_into_an_expanded_tensor_recorded(name):
    assert _expanded_grad(tapegrad, name) == _expanded_grad(torch, name)


def test_write_into_an_expanded_leaf_view_is_refused():
    for m in (tapegrad, torch):
        x = m.ones(4, requires_grad=True).expand(3, 4)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            x[0, 0] = 5.0


def test_a_read_only_array_stays_read_only():
    import numpy as np
    a = np.ones(3)
    a.setflags(write=False)
    with pytest.raises(RuntimeError, match="read-only"):
        tapegrad.from_numpy(a)[0] = 2.0


def _hooks_inplace_over_view(m):
    """torch's test_tensor_hooks_inplace_over_view: after ``view.mul_(2)`` the graph no longer passes through the
    views' old nodes, so the hooks registered on them do not fire; one registered after ``view2.grad_fn`` does."""
    fired = []
    base = m.tensor([1.0], requires_grad=True).clone()
    view, view2 = base[:], base[:]
    view.register_hook(lambda g: fired.append(("view", g.tolist())))
    view2.register_hook(lambda g: fired.append(("view2", g.tolist())))
    view.mul_(2)
    view2.grad_fn
    view2.register_hook(lambda g: fired.append(("view2 after", g.tolist())))
    (view + view2).sum().backward()
    leaf = m.arange(1.0, 7.0, dtype=m.float64, requires_grad=True)   # gradients through chains of such changes
    b = leaf * 1
    v = b[1:5]
    v.grad_fn.register_hook(lambda gi, go: fired.append("old node"))
    v[1:3].mul_(leaf[:2])
    b[0].add_(v[0] * 3)
    v.mul_(2)
    (b * m.arange(6.0, dtype=m.float64)).sum().backward()
    return fired, leaf.grad.tolist(), type(v.grad_fn).__name__


def test_hooks_on_a_views_old_node_do_not_fire_after_an_inplace_change():
    assert _hooks_inplace_over_view(tapegrad) == _hooks_inplace_over_view(torch)
