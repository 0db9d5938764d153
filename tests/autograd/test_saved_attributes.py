"""``grad_fn._saved_<name>`` / ``_raw_saved_<name>``: what a node keeps for backward, under torch's names, compared
with torch's (the glass box of torch's "saved tensors" notes)."""

import numpy as np
import pytest

import tapegrad

OPS = {
    "add": lambda m, x, y, W: x + y, "mul": lambda m, x, y, W: x * y, "div": lambda m, x, y, W: x / y,
    "pow_scalar": lambda m, x, y, W: x ** 3, "pow_tensor": lambda m, x, y, W: x.abs() ** y,
    "exp": lambda m, x, y, W: x.exp(), "log": lambda m, x, y, W: x.abs().log(), "sin": lambda m, x, y, W: x.sin(),
    "cos": lambda m, x, y, W: x.cos(), "tanh": lambda m, x, y, W: x.tanh(), "sigmoid": lambda m, x, y, W: x.sigmoid(),
    "relu": lambda m, x, y, W: x.relu(), "sqrt": lambda m, x, y, W: x.abs().sqrt(), "abs": lambda m, x, y, W: x.abs(),
    "neg": lambda m, x, y, W: -x, "mm": lambda m, x, y, W: x @ W.t(), "linear": lambda m, x, y, W: m.nn.functional.linear(x, W),
    "linear_bias": lambda m, x, y, W: m.nn.functional.linear(x, W, y[0, :2]), "sum": lambda m, x, y, W: x.sum(),
    "mean": lambda m, x, y, W: x.mean(), "softmax": lambda m, x, y, W: x.softmax(1),
    "log_softmax": lambda m, x, y, W: x.log_softmax(1), "where": lambda m, x, y, W: m.where(x > 0, x, y),
    "gelu": lambda m, x, y, W: m.nn.functional.gelu(x), "silu": lambda m, x, y, W: m.nn.functional.silu(x),
    "atan2": lambda m, x, y, W: m.atan2(x, y), "reciprocal": lambda m, x, y, W: x.reciprocal(),
    "square": lambda m, x, y, W: x.square(), "elu": lambda m, x, y, W: m.nn.functional.elu(x),
    "mse": lambda m, x, y, W: m.nn.functional.mse_loss(x, y), "expm1": lambda m, x, y, W: x.expm1(),
    "erf": lambda m, x, y, W: x.erf(), "prod": lambda m, x, y, W: x.prod(), "cumsum": lambda m, x, y, W: x.cumsum(1),
}
NAMES = ("self", "other", "result", "mat1", "mat2", "exponent", "input", "weight", "target")


def _inputs(m, y_grad=True):
    x = m.tensor([[0.5, -1.0, 2.0], [0.3, 0.7, -0.2]], requires_grad=True)
    y = m.tensor([[1.5, 2.0, -0.5], [0.1, -0.4, 0.9]], requires_grad=y_grad)
    W = m.tensor([[0.2, -0.1, 0.4], [0.3, 0.5, -0.6]], requires_grad=True)
    return x, y, W


def _table(m, name, y_grad):
    fn = OPS[name](m, *_inputs(m, y_grad)).grad_fn
    row = {}
    for a in NAMES:
        try:
            v = getattr(fn, "_saved_" + a)
        except AttributeError:
            continue
        row[a] = None if v is None else (v.tolist() if hasattr(v, "tolist") else v)
    return type(fn).__name__, row


@pytest.mark.parametrize("y_grad", [True, False])
@pytest.mark.parametrize("name", sorted(OPS))
def test_saved_attributes_are_torchs(torch, name, y_grad):
    """The same attribute names, the same values (float32 results within an ulp: exp, tanh... are NumPy's)."""
    (node, ours), (their_node, theirs) = _table(tapegrad, name, y_grad), _table(torch, name, y_grad)
    assert node == their_node and sorted(ours) == sorted(theirs)
    for k, v in ours.items():
        if v is None or theirs[k] is None or not isinstance(v, list):
            assert v == theirs[k], k
        else:
            np.testing.assert_allclose(v, theirs[k], rtol=1e-6, err_msg=k)


def test_saved_inputs_are_the_inputs_and_outputs_are_rebuilt(torch):
    for m in (tapegrad, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x.pow(2)
        assert y.grad_fn._saved_self is x
        e = x.exp()
        r = e.grad_fn._saved_result
        assert m.equal(r, e) and r is not e and type(r.grad_fn).__name__ == "ExpBackward0"
        with pytest.raises(AttributeError, match="'MulBackward0' object has no attribute '_saved_result'"):
            (x * x).grad_fn._saved_result
        e.sum().backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            e.grad_fn._saved_result


def test_raw_saved_tensor_hooks_as_torchs(torch):
    results = []
    for m in (tapegrad, torch):
        a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a.pow(2)
        seen = []
        raw = b.grad_fn._raw_saved_self
        raw.register_hooks(lambda t: (seen.append("pack"), t * 1)[1], lambda t: (seen.append("unpack"), t)[1])
        b.sum().backward()
        results.append((type(raw).__name__, seen, a.grad.tolist()))
    assert results[0] == results[1]


def test_a_custom_functions_node_has_no_saved_attributes(torch):
    for m in (tapegrad, torch):
        class Double(m.autograd.Function):
            @staticmethod
            def forward(ctx, v):
                ctx.save_for_backward(v)
                return v * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        out = Double.apply(m.ones(2, requires_grad=True))
        with pytest.raises(AttributeError, match="object has no attribute '_saved_self'"):
            out.grad_fn._saved_self


PACKED = {"mul": lambda m, x, y, A, B: x * y, "div": lambda m, x, y, A, B: x / y,
          "pow": lambda m, x, y, A, B: x ** y, "atan2": lambda m, x, y, A, B: m.atan2(x, y),
          "xlogy": lambda m, x, y, A, B: m.xlogy(x, y), "hypot": lambda m, x, y, A, B: m.hypot(x, y),
          "mm": lambda m, x, y, A, B: A @ B, "mv": lambda m, x, y, A, B: A @ x, "dot": lambda m, x, y, A, B: x.dot(y),
          "addmm": lambda m, x, y, A, B: m.addmm(x, A, B), "mul_broadcast": lambda m, x, y, A, B: A * x,
          "sub": lambda m, x, y, A, B: x - y, "exp": lambda m, x, y, A, B: x.sin(),
          "mse": lambda m, x, y, A, B: m.nn.functional.mse_loss(x, y)}


@pytest.mark.parametrize("name", sorted(PACKED))
def test_saved_tensor_hooks_see_the_tensors_in_torchs_order(torch, name):
    """The saved-tensors tutorial prints each tensor its pack hook receives: the same tensors in the same order
    (torch's derivative formulas keep the second operand first for mul, div, pow, atan2, xlogy, hypot, mm)."""
    def packed(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = m.tensor([3.0, 4.0], requires_grad=True)
        A = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        B = m.tensor([[5.0, 6.0], [7.0, 8.0]], requires_grad=True)
        named = {"x": x, "y": y, "A": A, "B": B}
        seen = []

        def pack(t):
            seen.append(next((k for k, v in named.items() if t is v or (t.shape == v.shape and m.equal(t, v))),
                             "output"))
            return t
        with m.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            PACKED[name](m, x, y, A, B)
        return seen
    assert packed(tapegrad) == packed(torch)
