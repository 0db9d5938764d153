"""A view made under no_grad of a tensor that requires grad, as torch has it: it reports ``requires_grad=True``
(and prints so) as its base does, yet it is a leaf with no ``grad_fn`` whose graph leads nowhere: ops on it are
recorded with ``(None, 0)`` edges, a backward through them changes no ``.grad``, and ``autograd.grad`` with
respect to it says it was not used."""

import pytest


def _run(T, name):
    """What torch / tapegrad give for one case, as plain values (strings for tensors, nodes and errors)."""
    a = T.ones(3, requires_grad=True)
    with T.no_grad():
        v = a[:2]
    cases = {
        "flags": lambda: (v.requires_grad, v.is_leaf, v.grad_fn, v.grad),
        "repr": lambda: repr(v),
        "flags_inside_no_grad": lambda: _inside(T, a),
        "view_of_view": lambda: _view_of_view(T, a),
        "ops": lambda: [_views(T, a, f) for f in ("unsqueeze", "t", "expand", "narrow", "split", "select", "view",
                                                  "reshape", "permute", "transpose", "diagonal", "unbind")],
        "copies_do_not_require_grad": lambda: _copies(T, a),
        "base_needs_no_grad": lambda: _of(T, T.ones(3)).requires_grad,
        "detached_base": lambda: _of(T, a.detach()).requires_grad,
        "non_leaf_base": lambda: (lambda u: (u.requires_grad, u.is_leaf, u.grad_fn))(_of(T, a * 2)),
        "recorded_op": lambda: (lambda y: (y.requires_grad, _edges(y)))(v * 2),
        "mixed_op": lambda: _edges(a + T.cat([v, v[:1]])),
        "backward_through": lambda: _backward_through(v, a),
        "backward_of_the_view": lambda: v.backward(T.ones(2)),
        "grad_wrt_view": lambda: T.autograd.grad((v * 2).sum(), v),
        "grad_wrt_view_allow_unused": lambda: T.autograd.grad((v * 2).sum(), v, allow_unused=True),
        "grad_wrt_base": lambda: T.autograd.grad((v * 2).sum(), a),
        "hook": lambda: _hook(T, v),
        "detach": lambda: v.detach().requires_grad,
        "clone": lambda: (lambda c: (c.requires_grad, c.is_leaf, _edges(c)))(v.clone()),
        "parameter_row": lambda: _parameter_row(T),
        "view_of_plain_tensor_made_a_leaf": lambda: _made_a_leaf(T),
    }
    try:
        return _plain(cases[name]())
    except RuntimeError as e:
        return "RuntimeError: " + str(e)


def _of(T, base):
    with T.no_grad():
        return base[1:]


def _inside(T, a):
    with T.no_grad():
        v = a[:2]
        return v.requires_grad, (v * 2).requires_grad


def _view_of_view(T, a):
    with T.no_grad():
        v = a[:2]
        vv = v[:1]
    w = v.view(2)          # with grad mode on: a recorded view of the no_grad view
    return vv.requires_grad, vv.is_leaf, w.requires_grad, w.is_leaf, w.grad_fn.name(), _edges(w)


def _views(T, a, how):
    m = T.ones(2, 3, requires_grad=True)
    with T.no_grad():
        out = {"unsqueeze": lambda: a.unsqueeze(0), "t": lambda: m.t(), "expand": lambda: a.expand(2, 3),
               "narrow": lambda: a.narrow(0, 0, 2), "split": lambda: a.split(1)[1], "select": lambda: a[0],
               "view": lambda: m.view(6), "reshape": lambda: m.reshape(3, 2), "permute": lambda: m.permute(1, 0),
               "transpose": lambda: m.transpose(0, 1), "diagonal": lambda: m.diagonal(),
               "unbind": lambda: m.unbind(0)[0]}[how]()
    return how, out.requires_grad, out.is_leaf, out.grad_fn


def _copies(T, a):
    with T.no_grad():
        return a[[0, 1]].requires_grad, (a * 1).requires_grad, a.data.requires_grad, a.clone().requires_grad


def _edges(t):
    # (torch calls the leaf's node "torch::autograd::AccumulateGrad": a known difference, docs/design.md)
    return [(None if n is None else n.name().replace("torch::autograd::", ""), k) for n, k in t.grad_fn.next_functions]


def _backward_through(v, a):
    y = (v * v).sum()
    y.backward()
    return y.requires_grad, v.grad, a.grad


def _hook(T, v):
    seen = []
    v.register_hook(lambda g: seen.append(g))
    (v * 3).sum().backward()
    v.retain_grad()
    return seen, v.grad


def _parameter_row(T):
    m = T.nn.Linear(2, 2)
    with T.no_grad():
        m.weight.copy_(T.tensor([[1.0, 2.0], [3.0, 4.0]]))
        return repr(m.weight[0]), m.weight.T.requires_grad


def _made_a_leaf(T):
    # a no_grad view of a tensor that needs no gradient, then requires_grad_(): an ordinary leaf that gets .grad
    t = T.ones(3)
    with T.no_grad():
        v, w = t[:2], t[1:]
    v.requires_grad_()
    (v * 2).sum().backward()
    ww = w[:1].requires_grad_()
    (ww * 5).sum().backward()
    return v.grad, ww.grad, v.is_leaf, ww.is_leaf


def _plain(x):
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(i) for i in x)
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if hasattr(x, "next_functions"):
        return x.name()
    return repr(x)


NAMES = ["flags", "repr", "flags_inside_no_grad", "view_of_view", "ops", "copies_do_not_require_grad",
         "base_needs_no_grad", "detached_base", "non_leaf_base", "recorded_op", "mixed_op", "backward_through",
         "backward_of_the_view", "grad_wrt_view", "grad_wrt_view_allow_unused", "grad_wrt_base", "hook", "detach",
         "clone", "parameter_row", "view_of_plain_tensor_made_a_leaf"]


@pytest.mark.parametrize("name", NAMES)
def test_no_grad_view_as_torch(torch, name):
    import tapegrad
    assert _run(tapegrad, name) == _run(torch, name)


def test_what_a_learner_sees():
    # (without torch: the facts the oracle test checks, spelled out)
    import tapegrad
    w = tapegrad.nn.Linear(2, 2).weight
    with tapegrad.no_grad():
        row = w[0]
    assert row.requires_grad and row.is_leaf and row.grad_fn is None
    assert repr(row).endswith("requires_grad=True)")
    y = row * 2
    assert y.requires_grad and y.grad_fn.next_functions == ((None, 0), (None, 0))
    y.sum().backward()
    assert row.grad is None and w.grad is None
