"""A user autograd.Function under vmap, against torch: torch's refusals (old ctx-first style, no rule, both
rules), the user's ``vmap`` staticmethod (info, in_dims, out_dims), and ``generate_vmap_rule = True``."""

import pytest
import torch

import tapegrad

X = [[0.3, -0.7, 1.2, -2.0], [0.5, 0.1, -0.1, 2.5], [1.5, -0.3, 0.2, -1.1]]
Y = [0.4, -1.3, 0.8, 2.0]


def _classes(t):
    """The same Functions written for torch and for tapegrad; ``log`` records what the vmap staticmethods got."""
    Fn = t.autograd.Function
    log = []

    class NoRule(Fn):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class OldStyle(Fn):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class OldGen(OldStyle):
        generate_vmap_rule = True

    class Both(NoRule):
        generate_vmap_rule = True

        @staticmethod
        def vmap(info, in_dims, x):
            return x * 3, in_dims[0]

    class Gen(Fn):
        generate_vmap_rule = True

        @staticmethod
        def forward(x, y):
            return x * y.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y.sin() * 7, g * x * y.cos()      # (not the forward's derivative: shows which one ran)

    class User(Fn):
        @staticmethod
        def forward(x, y):
            return x * y, x + 1

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g, h):
            x, y = ctx.saved_tensors
            return g * y + h, g * x

        @staticmethod
        def vmap(info, in_dims, x, y):
            log.append((type(info).__name__, info.batch_size, info.randomness, in_dims, tuple(x.shape)))
            xd, yd = in_dims
            x = x.movedim(xd, 0) if xd is not None else x.unsqueeze(0).expand(info.batch_size, *x.shape)
            y = y.movedim(yd, 0) if yd is not None else y.unsqueeze(0).expand(info.batch_size, *y.shape)
            return (x * y * 10, (x + 1).movedim(0, 1)), (0, 1)

    class Unbatched(NoRule):
        @staticmethod
        def vmap(info, in_dims, x):
            return x[0] * 5, None

    class NotPair(User):
        @staticmethod
        def vmap(info, in_dims, x, y):
            return x * y

    class BadDims(User):
        @staticmethod
        def vmap(info, in_dims, x, y):
            return (x * y, x), (0,)

    return dict(NoRule=NoRule, OldStyle=OldStyle, OldGen=OldGen, Both=Both, Gen=Gen, User=User, Unbatched=Unbatched,
                NotPair=NotPair, BadDims=BadDims), log


def _error(fn):
    with pytest.raises(RuntimeError) as e:
        fn()
    return str(e.value)


@pytest.mark.parametrize("name", ["NoRule", "OldStyle", "OldGen", "Both", "NotPair"])
def test_refusals_as_torch(name):
    msgs = []
    for t in (torch, tapegrad):
        F = _classes(t)[0][name]
        x = t.tensor(X)
        args = (x, t.tensor(Y)) if name == "NotPair" else (x,)
        dims = (0, None) if name == "NotPair" else 0
        msgs.append(_error(lambda: t.vmap(F.apply, in_dims=dims)(*args)))
    assert msgs[1].replace("tapegrad.", "torch.") == msgs[0]


def test_refused_even_when_not_batched():
    """torch refuses a Function without a rule under vmap even when none of its arguments is batched."""
    msgs = []
    for t in (torch, tapegrad):
        F = _classes(t)[0]["NoRule"]
        c = t.tensor(Y)
        msgs.append(_error(lambda: t.vmap(lambda x: x + F.apply(c))(t.tensor(X))))
    assert msgs[1] == msgs[0]


def test_bad_out_dims_refused():
    for t in (torch, tapegrad):
        F = _classes(t)[0]["BadDims"]
        msg = _error(lambda: t.vmap(F.apply, in_dims=(0, None))(t.tensor(X), t.tensor(Y)))
        assert msg.startswith("The autograd.Function's vmap staticmethod returned an incompatible (output, out_dims) "
                              "tuple. Expected out_dims=(0,) to be compatible with the structure of `output`.")


@pytest.mark.parametrize("in_dims,randomness", [((0, None), "error"), ((1, None), "error"), ((0, 0), "same")])
def test_user_vmap_staticmethod(in_dims, randomness):
    res = {}
    for t in (torch, tapegrad):
        classes, log = _classes(t)
        x = t.tensor(X) if in_dims[0] == 0 else t.tensor(X).T.contiguous()
        y = t.tensor(Y) if in_dims[1] is None else t.tensor([Y, Y, Y])
        out = t.vmap(classes["User"].apply, in_dims=in_dims, randomness=randomness)(x, y)
        res[t] = ([o.tolist() for o in out], log)
    assert res[tapegrad][0] == res[torch][0]
    # (what the staticmethod got: torch's in_dims name the dim vmap was given, tapegrad's batched tensors have it
    #  first, so their in_dim is 0: the same tensors up to that move, which a vmap rule must handle anyway)
    (info, size, rnd, dims, shape), = res[torch][1]
    assert res[tapegrad][1] == [(info, size, rnd, tuple(None if d is None else 0 for d in dims),
                                 (size,) + tuple(s for i, s in enumerate(shape) if i != dims[0]))]


def test_user_vmap_unbatched_output_and_nested():
    for shape_in in ((3, 4), (2, 3, 4)):
        got = []
        for t in (torch, tapegrad):
            F = _classes(t)[0]["Unbatched"]
            x = t.arange(float(24 if len(shape_in) == 3 else 12)).reshape(shape_in)
            f = t.vmap(F.apply) if len(shape_in) == 2 else t.vmap(t.vmap(F.apply))
            got.append(f(x).tolist())
        assert got[1] == got[0]


def test_user_vmap_outer_autograd_goes_through_the_rule():
    """Under plain autograd (not func.grad) torch differentiates the vmap staticmethod's ops, and inside
    vmap(grad(f)) the Function's backward."""
    res = []
    for t in (torch, tapegrad):
        F = _classes(t)[0]["User"]
        x = t.tensor(X, requires_grad=True)
        y = t.tensor(Y)
        t.vmap(F.apply, in_dims=(0, None))(x, y)[0].sum().backward()
        inner = t.func.vmap(t.func.grad(lambda a: F.apply(a, y)[0].sum()))(t.tensor(X))
        res.append((x.grad.tolist(), inner.tolist()))
    for a, b in zip(res[1], res[0]):
        assert sum(a, []) == pytest.approx(sum(b, []), rel=1e-6)


def test_generate_vmap_rule():
    res = []
    for t in (torch, tapegrad):
        F = _classes(t)[0]["Gen"]
        y = t.tensor(Y)
        fwd = t.vmap(F.apply, in_dims=(0, None))(t.tensor(X), y)
        x = t.tensor(X, requires_grad=True)
        t.vmap(F.apply, in_dims=(0, None))(x, y).sum().backward()
        per = t.func.vmap(t.func.grad(lambda a: F.apply(a, y).sum()))(t.tensor(X))
        res.append((fwd.tolist(), x.grad.tolist(), per.tolist()))
    for a, b in zip(res[1], res[0]):
        assert sum(a, []) == pytest.approx(sum(b, []), rel=1e-6)
