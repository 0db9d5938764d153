"""Complex numbers against torch on the same programs: the gradient convention (the issue's example), real/imag
views that can be written through (and whose in-place changes are tracked), view_as_real/view_as_complex,
conj and torch's conj/neg-bit queries, errors, printing, complex randn and casts, and gradcheck of complex
functions (real and imaginary parts of the outputs, d/dx + i d/dy of the inputs)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad

Z = [1 + 2j, 3 - 1j]


def _np(t):
    return np.asarray(t.detach().resolve_conj())


def test_the_issue_example(torch):
    for m in (tapegrad, torch):
        z = m.tensor(Z, requires_grad=True)
        (z * z).abs().sum().backward()
        np.testing.assert_allclose(_np(z.grad), [2 + 4j, 6 - 2j], rtol=1e-6)


@pytest.mark.parametrize("fn", [
    lambda m, z: (z * z).abs().sum(),
    lambda m, z: (z @ z.conj()).real,
    lambda m, z: z.exp().abs().sum(),
    lambda m, z: (z / (z + 2)).imag.sum(),
    lambda m, z: m.view_as_real(z.sin()).sum(),
    lambda m, z: (z.angle() * z.abs()).sum(),
    lambda m, z: m.sgn(z * 3).real.sum(),
    lambda m, z: (m.polar(z.abs(), z.angle()) * 2j).real.sum(),
    lambda m, z: (z ** 2.5).abs().sum() + (2 ** z).real.sum(),
    lambda m, z: m.linalg.vector_norm(z.tanh()) + m.real(z.sigmoid().prod()),
])
def test_gradients_match_torch(torch, fn):
    res = []
    for m in (tapegrad, torch):
        z = m.tensor(Z, dtype=m.complex128, requires_grad=True)
        g, = m.autograd.grad(fn(m, z), z, create_graph=True)
        gg, = m.autograd.grad(m.real((g * m.tensor([0.5 - 1j, 2 + 0.25j], dtype=m.complex128)).sum()), z)
        res.append((_np(g), _np(gg)))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_real_input_of_a_complex_op_gets_the_real_part(torch):
    res = []
    for m in (tapegrad, torch):
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        y = (x * (1 + 2j)).exp().imag.sum() + m.complex(x, x * 3).abs().sum()
        y.backward()
        assert x.grad.dtype == m.float64
        res.append(_np(x.grad))
    np.testing.assert_allclose(*res, rtol=1e-12)


def test_writing_through_real_and_imag_views(torch):
    outs = []
    for m in (tapegrad, torch):
        c = m.tensor(Z)
        c.real[0] = 5
        c.imag.mul_(2)
        z = m.tensor(Z, requires_grad=True)
        w = z * 1
        w.real[0] = 5
        w.imag.mul_(3)
        (w * w.conj()).real.sum().backward()
        g1 = _np(z.grad)
        z.grad = None
        w = z * 1
        r = w.real
        r.mul_(2)
        ((r * r).sum() + (w.abs() ** 2).sum()).backward()
        g2 = _np(z.grad)
        z.grad = None
        w = z * 1
        im = w.imag
        w.mul_(2)                     # a change of the base: the live imag view gets the base's new history
        (im ** 2).sum().backward()
        outs.append((_np(c), g1, g2, _np(z.grad)))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(outs[0][1], [36j, 6 - 18j], rtol=1e-6)


def test_view_as_real_and_complex_are_views(torch):
    res = []
    for m in (tapegrad, torch):
        z = m.tensor(Z, requires_grad=True)
        w = z * 2
        v = m.view_as_real(w)
        assert tuple(v.shape) == (2, 2)
        v[1, 1] = 7.0                 # (written into w: a view)
        (w.abs() ** 2).sum().backward()
        c = m.tensor([[1.0, 2.0], [3.0, 4.0]])
        cz = m.view_as_complex(c)
        cz[0] = 0
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = x * 1
        m.view_as_complex(y).mul_(1j)
        (y ** 2).sum().backward()
        res.append((_np(z.grad), _np(w), _np(c), _np(x.grad)))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_errors_match_torch(torch):
    for m in (tapegrad, torch):
        x = m.tensor([1.0, 2.0])
        with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes."):
            x.imag
        with pytest.raises(RuntimeError, match="view_as_real is only supported for complex tensors"):
            m.view_as_real(x)
        with pytest.raises(RuntimeError, match="Tensor must have a last dimension of size 2"):
            m.view_as_complex(m.ones(2, 3))
        with pytest.raises(RuntimeError, match="Tensor must have a last dimension with stride 1"):
            m.view_as_complex(m.ones(2, 2).t())
        with pytest.raises(RuntimeError, match="Expected object of scalar type Float but got scalar type Double for "
                                               "second argument"):
            m.complex(m.ones(2), m.ones(2, dtype=m.float64))
        z = m.tensor(Z, requires_grad=True)
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar outputs but got "
                                               f"{m.__name__}.complex64"):
            z.sum().backward()


def test_conj_family(torch):
    for m in (tapegrad, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        assert x.conj() is x and m.real(x) is x and m.resolve_conj(x) is x and m.resolve_neg(x) is x
        assert not x.is_conj() and not x.is_neg()
        z = m.tensor(Z, requires_grad=True)
        c = z.conj()
        assert c.grad_fn.name() == "ConjBackward0"
        assert m.conj_physical(z).grad_fn.name() == "ConjPhysicalBackward0"
        assert not c.resolve_conj().is_conj()
        np.testing.assert_allclose(_np(c.resolve_conj()), np.conj(Z))
        assert m.real(z).grad_fn.name() == m.imag(z).grad_fn.name() == "SelectBackward0"
        assert m.view_as_real(z).grad_fn.name() == "ViewAsRealBackward0"
        assert m.angle(z).grad_fn.name() == "AngleBackward0" and m.sgn(z).grad_fn.name() == "SgnBackward0"
        assert m.complex(x, x).grad_fn.name() == "ComplexBackward0"
        assert m.polar(x, x).grad_fn.name() == "PolarBackward0"
    # tapegrad's conjugate is a copy (no conjugate bit): is_conj() stays False where torch's is True
    assert not tapegrad.tensor(Z).conj().is_conj() and torch.tensor(Z).conj().is_conj()


def test_angle_and_sgn_of_real_tensors(torch):
    res = []
    for m in (tapegrad, torch):
        x = m.tensor([-1.0, 2.0, 0.0], requires_grad=True)
        a, s = m.angle(x), m.sgn(x)
        (a.sum() + s.sum()).backward()
        res.append((_np(a), _np(s), _np(x.grad)))
    for u, v in zip(*res):
        np.testing.assert_allclose(u, v, rtol=1e-6)


PRINT_CASES = [
    "m.tensor([1+2j, 3-1j])",
    "m.tensor([1+2j, 3-1j], requires_grad=True)",
    "m.tensor([1+2j, 3-1j], requires_grad=True) * 2",
    "m.tensor(1+1j)",
    "m.tensor([0.5+1.25j, -2.125-0.001j])",
    "m.tensor([1e-5+1e5j, 3-1j])",
    "m.tensor([[1.5+2j, -3.25-1j],[0j, 1j]])",
    "m.tensor([1+2j, 3-1j], dtype=m.complex128)",
    "m.zeros(3, dtype=m.complex64)",
    "m.arange(2000, dtype=m.float32).reshape(2, 1000) * (1+0.5j)",
    "m.tensor([float('nan')+1j, float('inf')-2j, 1-float('inf')*1j])",
    "m.tensor([-0.0-0.0j, 0.0+0.0j])",
    "m.tensor(np.arange(20.).reshape(4, 5) * (1.1-2.3j))",
    "m.tensor([], dtype=m.complex64)",
    "m.tensor([1+2j]).conj()",
    "m.tensor(np.array([1e10+1j, 2+3j]))",
    "m.tensor([123456.789+0.001j])",
    "m.tensor(np.arange(30.) * (1+1j)).reshape(5, 6)",
    "m.tensor([[1.5+2j]], requires_grad=True).real",
]


@pytest.mark.parametrize("case", PRINT_CASES)
def test_printing_matches_torch(torch, case):
    got = repr(eval(case, {"m": tapegrad, "np": np}))
    want = repr(eval(case, {"m": torch, "np": np})).replace("torch.", "tapegrad.")
    assert got == want


def test_printing_with_default_float64_and_options(torch):
    try:
        for m in (tapegrad, torch):
            m.set_default_dtype(m.float64)
        assert repr(tapegrad.tensor([1 + 2j])) == repr(torch.tensor([1 + 2j]))
        assert repr(tapegrad.tensor([1 + 2j], dtype=tapegrad.complex64)) == \
            repr(torch.tensor([1 + 2j], dtype=torch.complex64)).replace("torch.", "tapegrad.")
        for m in (tapegrad, torch):
            m.set_printoptions(precision=2, sci_mode=True)
        assert repr(tapegrad.tensor([1.234 + 2j, -3 - 1.5j])) == repr(torch.tensor([1.234 + 2j, -3 - 1.5j]))
    finally:
        for m in (tapegrad, torch):
            m.set_printoptions(profile="default")
            m.set_default_dtype(m.float32)


def test_complex_randn_and_casts():
    tapegrad.manual_seed(0)
    z = tapegrad.randn(20000, dtype=tapegrad.complex64)
    assert z.dtype is tapegrad.complex64
    assert abs(float((z.abs() ** 2).mean()) - 1.0) < 0.05      # variance 1, half in each part (as torch)
    assert abs(float(z.real.var()) - 0.5) < 0.05
    with pytest.warns(UserWarning, match="Casting complex values to real discards the imaginary part"):
        r = tapegrad.tensor(Z).float()
    assert r.tolist() == [1.0, 3.0]


def test_gradcheck_of_complex_functions():
    z = tapegrad.tensor(Z, dtype=tapegrad.complex128, requires_grad=True)
    x = tapegrad.tensor([0.5, -1.5], dtype=tapegrad.float64, requires_grad=True)
    for fn, args in [(lambda t: t.exp() * t.conj(), (z,)), (lambda t: t.abs(), (z,)),
                     (lambda t, u: t * u + t.angle(), (z, x)), (tapegrad.complex, (x, x.detach().mul(2).requires_grad_())),
                     (lambda t: tapegrad.view_as_real(t).sum(-1), (z,))]:
        assert tapegrad.autograd.gradcheck(fn, args)
        assert tapegrad.autograd.gradgradcheck(fn, args)
    # a wrong complex gradient is caught, naming the part of the output where it is wrong
    class WrongConj(tapegrad.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * t

        @staticmethod
        def backward(ctx, g):
            t, = ctx.saved_tensors
            return g * 2 * t            # should be g * conj(2 t)
    with pytest.raises(tapegrad.autograd.GradcheckError, match="While considering the real part of complex "
                                                              "outputs only, Jacobian mismatch"):
        tapegrad.autograd.gradcheck(WrongConj.apply, (z,))


def test_gradcheck_complex_warning_text(torch):
    msgs = []
    for m in (tapegrad, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m.autograd.gradcheck(m.sin, (m.randn(2, requires_grad=True),), raise_exception=False)
        msgs.append([str(x.message) for x in w if "double precision" in str(x.message)])
    assert msgs[0] == msgs[1]
