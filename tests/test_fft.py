"""tapegrad.fft against torch.fft: complex inputs (values and torch's conjugate-Wirtinger gradients, first and
second order), the graphs' node names, dtypes, errors and ``out=``. Real inputs are in the op table
(tests/ops/specs/fft.py)."""

import numpy as np
import pytest

import tapegrad
from ops.specs.fft import as_real

ONE_D = ["fft", "ifft", "irfft", "hfft"]
N_D = ["fft2", "ifft2", "fftn", "ifftn", "irfft2", "irfftn", "hfft2", "hfftn"]
REAL_ONLY = ["rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"]


def _complex(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _cases():
    for name in ONE_D:
        yield name, (3, 5), {}
        yield name, (3, 5), {"n": 7, "dim": 0, "norm": "ortho"}
        yield name, (4,), {"n": 3, "norm": "forward"}
    for name in N_D:
        yield name, (3, 4), {}
        yield name, (2, 3, 4), {"s": (5, 3), "norm": "ortho"}
        yield name, (2, 3, 4), {"dim": (0, 2), "norm": "forward"}


@pytest.mark.parametrize("name,shape,kwargs", list(_cases()), ids=lambda v: str(v))
def test_complex_input_values_and_grads_vs_torch(torch, name, shape, kwargs):
    rng = np.random.default_rng(0)
    z = _complex(rng, *shape)
    tz = tapegrad.tensor(z, requires_grad=True)
    rz = torch.tensor(z, requires_grad=True)
    tout = as_real(tapegrad, getattr(tapegrad.fft, name)(tz, **kwargs))
    rout = as_real(torch, getattr(torch.fft, name)(rz, **kwargs))
    np.testing.assert_allclose(tout.detach().numpy(), rout.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = rng.standard_normal(tuple(rout.shape))
    # a quadratic loss, so that the gradient depends on z and has derivatives of its own
    tg, = tapegrad.autograd.grad((tout * tout * tapegrad.tensor(w)).sum(), tz, create_graph=True)
    rg, = torch.autograd.grad((rout * rout * torch.tensor(w)).sum(), rz, create_graph=True)
    assert tg.dtype is tapegrad.complex128
    np.testing.assert_allclose(tg.detach().numpy(), rg.detach().resolve_conj().numpy(), rtol=1e-10, atol=1e-12)
    # second order: the gradient of a real function of the gradient
    v = rng.standard_normal(shape + (2,))
    tgg, = tapegrad.autograd.grad((as_real(tapegrad, tg) * tapegrad.tensor(v)).sum(), tz)
    rgg, = torch.autograd.grad((torch.view_as_real(rg.resolve_conj()) * torch.tensor(v)).sum(), rz)
    np.testing.assert_allclose(tgg.numpy(), rgg.resolve_conj().numpy(), rtol=1e-10, atol=1e-12)


def test_torchs_example_of_a_complex_gradient(torch):
    # |fft(z)|² summed: the gradient is 2 n z (Parseval), in torch's convention
    z = np.array([1 + 2j, 3 - 1j, -0.5 + 0.25j])
    tz = tapegrad.tensor(z, requires_grad=True)
    y = as_real(tapegrad, tapegrad.fft.fft(tz))
    (y * y).sum().backward()
    np.testing.assert_allclose(tz.grad.numpy(), 2 * 3 * z, rtol=1e-12)


def _chain(node, depth=3):
    names = []
    while node is not None and depth:
        names.append(node.name().replace("torch::autograd::", ""))
        nxt = [n for n, _ in node.next_functions if n is not None]
        node = nxt[0] if nxt else None
        depth -= 1
    return names


@pytest.mark.parametrize("name", ONE_D + N_D + REAL_ONLY)
@pytest.mark.parametrize("kind", ["real", "complex", "resized"])
def test_graph_node_names_as_torch(torch, name, kind):
    if kind == "complex" and name in REAL_ONLY:
        pytest.skip("real input only")
    rng = np.random.default_rng(1)
    a = _complex(rng, 3, 4, 5) if kind == "complex" else rng.standard_normal((3, 4, 5))
    kw = {}
    if kind == "resized":
        kw = {"n": 7} if name in ONE_D + ["rfft", "ihfft"] else {"s": (2, 6)}
    t = getattr(tapegrad.fft, name)(tapegrad.tensor(a, requires_grad=True), **kw)
    r = getattr(torch.fft, name)(torch.tensor(a, requires_grad=True), **kw)
    assert _chain(t.grad_fn) == _chain(r.grad_fn)
    assert str(t.dtype).split(".")[-1] == str(r.dtype).split(".")[-1]
    assert tuple(t.shape) == tuple(r.shape)


@pytest.mark.parametrize("dtype,expected", [("float32", "complex64"), ("float64", "complex128"),
                                            ("int64", "complex64"), ("bool", "complex64"),
                                            ("complex64", "complex64"), ("complex128", "complex128")])
def test_dtypes_as_torch(torch, dtype, expected):
    a = np.ones((2, 4)).astype(dtype)
    assert str(tapegrad.fft.fft(tapegrad.tensor(a)).dtype) == f"tapegrad.{expected}"
    assert str(torch.fft.fft(torch.tensor(a)).dtype) == f"torch.{expected}"
    real = expected.replace("complex64", "float32").replace("complex128", "float64")
    assert str(tapegrad.fft.irfft(tapegrad.tensor(a)).dtype) == f"tapegrad.{real}"
    if not np.dtype(dtype).kind == "c":
        assert str(tapegrad.fft.rfft(tapegrad.tensor(a)).dtype) == f"tapegrad.{expected}"
    tapegrad.set_default_dtype(tapegrad.float64)
    try:
        assert tapegrad.fft.fft(tapegrad.tensor(np.arange(3))).dtype is tapegrad.complex128
    finally:
        tapegrad.set_default_dtype(tapegrad.float32)


ERRORS = [
    ("fft", lambda m: m.fft.fft(m.ones(4), norm="bad")),
    ("fft", lambda m: m.fft.fft(m.ones(4), n=0)),
    ("fft", lambda m: m.fft.fft(m.ones(4), n=-1)),
    ("fft", lambda m: m.fft.fft(m.ones(4, 3), dim=2)),
    ("fft", lambda m: m.fft.fft(m.tensor(1.0))),
    ("fft", lambda m: m.fft.fft(m.ones(4, 3), dim=(0,))),
    ("fft", lambda m: m.fft.fft(m.ones(4, dtype=m.float16))),
    ("fft", lambda m: m.fft.fft(m.ones(0))),
    ("fft2", lambda m: m.fft.fft2(m.ones(4, 3), s=(2,), dim=(0, 1))),
    ("fft2", lambda m: m.fft.fft2(m.ones(3))),
    ("fftn", lambda m: m.fft.fftn(m.ones(4, 3), dim=(0, 0))),
    ("fftn", lambda m: m.fft.fftn(m.ones(4, 3), s=(2, 3, 4))),
    ("fftn", lambda m: m.fft.fftn(m.ones(4, 3), s=(0, 2))),
    ("rfft", lambda m: m.fft.rfft(m.ones(4, dtype=m.complex64))),
    ("rfftn", lambda m: m.fft.rfftn(m.ones(4, dtype=m.complex64))),
    ("rfft2", lambda m: m.fft.rfft2(m.ones(2, 4, dtype=m.complex128))),
    ("ihfft", lambda m: m.fft.ihfft(m.ones(4, dtype=m.complex64))),
    ("ihfftn", lambda m: m.fft.ihfftn(m.ones(4, dtype=m.complex64))),
    ("ihfft", lambda m: m.fft.ihfft(m.ones(0))),
    ("irfft", lambda m: m.fft.irfft(m.ones(1))),
    ("irfft", lambda m: m.fft.irfft(m.ones(4), n=0)),
    ("hfft", lambda m: m.fft.hfft(m.ones(1, dtype=m.complex64))),
    ("irfftn", lambda m: m.fft.irfftn(m.ones(3, 1))),
    ("fftshift", lambda m: m.fft.fftshift(m.ones(4, 3), dim=5)),
    ("fftfreq", lambda m: m.fft.fftfreq(4, dtype=m.int64)),
    ("fftfreq", lambda m: m.fft.fftfreq(-1)),
]


@pytest.mark.parametrize("name,call", ERRORS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ERRORS)])
def test_errors_as_torch(torch, name, call):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(tapegrad)
    assert str(got.value).replace("tapegrad", "torch") == str(want.value).replace("fft_fft", "fft_fft")


def test_fftfreq_values_dtype_and_requires_grad(torch):
    for n, d in [(1, 1.0), (6, 0.3), (7, 2.0), (10, 1e-3)]:
        np.testing.assert_array_equal(tapegrad.fft.fftfreq(n, d).numpy(), torch.fft.fftfreq(n, d).numpy())
        np.testing.assert_array_equal(tapegrad.fft.rfftfreq(n, d).numpy(), torch.fft.rfftfreq(n, d).numpy())
    t = tapegrad.fft.fftfreq(4, requires_grad=True, dtype=tapegrad.float64)
    assert t.requires_grad and t.is_leaf and t.dtype is tapegrad.float64
    assert tapegrad.fft.fftfreq(3, dtype=tapegrad.complex64).dtype is tapegrad.complex64
    np.testing.assert_array_equal(tapegrad.fft.fftfreq(4, d=tapegrad.tensor(2.0)).numpy(),
                                  torch.fft.fftfreq(4, d=torch.tensor(2.0)).numpy())


def test_out_argument(torch):
    x = tapegrad.randn(2, 4)
    out = tapegrad.empty(0, dtype=tapegrad.complex64)
    r = tapegrad.fft.fft(x, out=out)
    assert r is out and tuple(out.shape) == (2, 4)
    np.testing.assert_allclose(out.numpy(), np.fft.fft(x.numpy()), rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        tapegrad.fft.rfft(tapegrad.randn(4, requires_grad=True), out=tapegrad.empty(0, dtype=tapegrad.complex64))


def test_round_trips_and_shift_gradients():
    x = tapegrad.randn(3, 6, dtype=tapegrad.float64, requires_grad=True)
    np.testing.assert_allclose(tapegrad.fft.irfft(tapegrad.fft.rfft(x), n=6).detach().numpy(), x.detach().numpy(),
                               atol=1e-12)
    np.testing.assert_allclose(tapegrad.fft.ihfft(tapegrad.fft.hfft(tapegrad.fft.ihfft(x), n=6)).detach().numpy(),
                               tapegrad.fft.ihfft(x).detach().numpy(), atol=1e-12)
    y = tapegrad.fft.ifftshift(tapegrad.fft.fftshift(x))
    np.testing.assert_array_equal(y.detach().numpy(), x.detach().numpy())
    assert y.grad_fn.name() == "RollBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((3, 6)))


def test_fft_loads_lazily():
    import subprocess
    import sys
    code = "import sys, tapegrad; assert 'tapegrad.ops.fft' not in sys.modules; tapegrad.fft.fft; " \
           "assert 'tapegrad.ops.fft' in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
