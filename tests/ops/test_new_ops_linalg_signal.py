"""Edge cases and errors of the signal, strided-view and linear-algebra ops added for issue 17, against torch.

Values and gradients of the ordinary samples are in the op table (specs/signal.py, specs/strided.py,
specs/linalg_extra.py); here: torch's refusals (type and message), defaults, return types, in-place variants.
"""

import re
import warnings

import numpy as np
import pytest

import tapegrad


def _outcome(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(), None
        except Exception as e:        # noqa: BLE001 - the exception is what is compared
            return None, e


def same_error(torch, call, match=None):
    """``call(m)`` raises the same exception type on both sides, with torch's message (or the part ``match``)."""
    _, te = _outcome(lambda: call(torch))
    _, ge = _outcome(lambda: call(tapegrad))
    assert te is not None, "torch accepts it"
    assert ge is not None, f"tapegrad accepts what torch refuses: {te}"
    assert isinstance(ge, type(te)) or type(te).__name__ == type(ge).__name__, (type(te), type(ge), ge)
    tm = str(te).split("\n")[0].replace("torch.", "").replace("Triggered internally", "")
    gm = str(ge).split("\n")[0].replace("tapegrad.", "").replace("torch.", "")
    if match is not None:
        assert re.search(match, gm), (gm, tm)
    else:
        assert gm == tm, f"\ntapegrad: {gm}\ntorch:    {tm}"


def same_value(torch, call, atol=1e-6):
    a, _ = _outcome(lambda: call(torch))
    b, e = _outcome(lambda: call(tapegrad))
    assert e is None, e
    a, b = (a,) if not isinstance(a, tuple) else a, (b,) if not isinstance(b, tuple) else b
    assert len(a) == len(b)
    for x, y in zip(a, b):
        x = x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)
        y = y.detach().numpy() if hasattr(y, "detach") else np.asarray(y)
        assert x.shape == y.shape and x.dtype == y.dtype, (x.shape, y.shape, x.dtype, y.dtype)
        np.testing.assert_allclose(y, x, atol=atol, rtol=1e-6)


def t(m, a, **kw):
    return m.tensor(np.asarray(a), **kw)


# --- signal ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
                                  "kaiser_window"])
def test_window_errors_and_dtypes(torch, name):
    same_error(torch, lambda m: getattr(m, name)(-1))
    same_error(torch, lambda m: getattr(m, name)(3, dtype=m.int64))
    same_error(torch, lambda m: getattr(m, name)(3, dtype=m.bool))
    same_value(torch, lambda m: getattr(m, name)(5, dtype=m.float64))
    same_value(torch, lambda m: getattr(m, name)(5, False))
    w = getattr(tapegrad, name)(4, requires_grad=True)
    assert w.requires_grad and w.dtype is tapegrad.float32
    tapegrad.set_default_dtype(tapegrad.float64)
    assert getattr(tapegrad, name)(3).dtype is tapegrad.float64


@pytest.mark.parametrize("name", ["bartlett", "blackman", "cosine", "exponential", "gaussian", "hamming", "hann",
                                  "kaiser", "nuttall"])
def test_signal_windows_errors(torch, name):
    same_error(torch, lambda m: getattr(m.signal.windows, name)(-1))
    same_error(torch, lambda m: getattr(m.signal.windows, name)(3, dtype=m.int32))
    same_error(torch, lambda m: getattr(m.signal.windows, name)(3, dtype=m.float16))
    same_value(torch, lambda m: getattr(m.signal.windows, name)(1, sym=False))


def test_signal_windows_argument_errors(torch):
    w = lambda m: m.signal.windows  # noqa: E731
    same_error(torch, lambda m: w(m).gaussian(4, std=0))
    same_error(torch, lambda m: w(m).exponential(4, tau=-1.0))
    same_error(torch, lambda m: w(m).exponential(4, center=1.0))
    same_error(torch, lambda m: w(m).kaiser(4, beta=-1.0))
    same_error(torch, lambda m: w(m).general_cosine(4, a=None))
    same_error(torch, lambda m: w(m).general_cosine(4, a=3.0))
    same_value(torch, lambda m: w(m).exponential(5, sym=False, center=1.0))
    same_value(torch, lambda m: w(m).exponential(1, sym=False, center=1.0))
    assert "windows" in dir(tapegrad.signal)


def test_stft_errors(torch):
    x = np.random.default_rng(0).standard_normal(10).astype(np.float32)
    same_error(torch, lambda m: m.stft(t(m, x), 4))
    same_error(torch, lambda m: m.stft(t(m, x), 12, center=False, return_complex=True))
    same_error(torch, lambda m: m.stft(t(m, x), 4, hop_length=0, return_complex=True))
    same_error(torch, lambda m: m.stft(t(m, x), 4, win_length=5, return_complex=True))
    same_error(torch, lambda m: m.stft(t(m, x), 4, window=m.ones(3), return_complex=True))
    same_error(torch, lambda m: m.stft(t(m, x).reshape(1, 2, 5), 2, return_complex=True))
    same_error(torch, lambda m: m.stft(t(m, x), 4, onesided=True, window=m.ones(4, dtype=m.complex64)),
               match="Cannot have onesided output")


def test_stft_defaults_and_warnings(torch):
    x = np.random.default_rng(1).standard_normal((2, 16))
    with pytest.warns(UserWarning, match="A window was not provided"):
        tapegrad.stft(tapegrad.tensor(x), 8, return_complex=True)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        tapegrad.stft(tapegrad.tensor(x), 8, window=tapegrad.ones(8, dtype=tapegrad.float64), return_complex=False)
    same_value(torch, lambda m: m.stft(t(m, x), 8, window=m.hann_window(8, dtype=m.float64), return_complex=True))
    same_value(torch, lambda m: t(m, x).stft(8, window=m.hann_window(8, dtype=m.float64), return_complex=False))
    # complex input: two-sided, complex output without return_complex
    z = x[0] + 1j * x[1]
    same_value(torch, lambda m: m.stft(t(m, z), 4, window=m.ones(4, dtype=m.float64)))


def test_istft_errors_and_round_trip(torch):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(20)

    def spec(m):
        return m.stft(t(m, x), 8, window=m.hann_window(8, dtype=m.float64), return_complex=True)
    same_error(torch, lambda m: m.istft(m.view_as_real(spec(m)), 8))
    same_error(torch, lambda m: m.istft(spec(m), 8, window=m.zeros(8, dtype=m.float64)),
               match="window overlap add min")
    same_error(torch, lambda m: m.istft(spec(m), 8, return_complex=True), match="Cannot have onesided output")
    same_error(torch, lambda m: m.istft(spec(m), 10), match="n_fft / 2 \\+ 1 when onesided=True, but got 5")
    w = tapegrad.hann_window(8, dtype=tapegrad.float64)
    y = tapegrad.istft(tapegrad.stft(tapegrad.tensor(x), 8, window=w, return_complex=True), 8, window=w, length=20)
    np.testing.assert_allclose(y.numpy(), x, atol=1e-12)
    same_value(torch, lambda m: spec(m).istft(8, window=m.hann_window(8, dtype=m.float64)))
    with pytest.warns(UserWarning, match="shorter than the length parameter"):
        tapegrad.istft(tapegrad.stft(tapegrad.tensor(x), 8, window=w, return_complex=True), 8, window=w, length=40)


def test_signal_loads_on_first_use():
    import subprocess
    import sys
    code = ("import sys, tapegrad; assert 'tapegrad.ops.signal' not in sys.modules; "
            "tapegrad.tensor([1.0, 2.0, 3.0, 4.0, 5.0]).stft; assert 'tapegrad.ops.signal' not in sys.modules; "
            "w = tapegrad.hann_window(4); assert 'tapegrad.ops.signal' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, env={"PYTHONPATH": tapegrad.__path__[0] + "/.."})
