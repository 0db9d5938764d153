"""Specs of the signal ops: the window functions (constants: values and dtypes only) and ``stft`` / ``istft``
(compositions of differentiable ops: gradients with respect to the signal and to the window).

Complex results are compared through ``as_real`` (their real and imaginary parts), as the fft specs do.
"""


from ops.op_db import OpSpec, S, noncontig, randn
from ops.specs import fft as _fft_specs  # (a module: the op table loads fft after this one)


def _dt(m, k):
    """A dtype given by name in a sample, as the dtype of the module the op runs on."""
    return dict(k, dtype=getattr(m, k["dtype"])) if isinstance(k.get("dtype"), str) else k


def _window_spec(name, extra=()):
    return OpSpec(name, lambda m, n, *a, **k: getattr(m, name)(n, *a, **_dt(m, k)), lambda r: [
        S(5), S(6, False, *extra, name="symmetric"), S(4, True, *extra, name="periodic"), S(0, name="empty"),
        S(1, name="one"), S(7, dtype="float64", name="float64")], grad=False)


def _sig_window_spec(name, **kw):
    return OpSpec(f"signal.windows.{name}",
                  lambda m, n, **k: getattr(m.signal.windows, name)(n, **_dt(m, k)), lambda r: [
                      S(5, **kw), S(6, sym=False, **kw, name="periodic"), S(0, **kw, name="empty"),
                      S(1, **kw, name="one"), S(4, dtype="float64", **kw, name="float64")], grad=False)


def _stft(m, x, w, n_fft, **k):
    return _fft_specs.as_real(m, m.stft(x, n_fft, window=w, return_complex=True, **k))


def _istft(m, x, w, n_fft, **k):
    """istft of the stft of a real signal (so that its input is a consistent spectrum), both differentiable."""
    spec = m.stft(x, n_fft, window=w, return_complex=True, hop_length=k.get("hop_length"),
                  center=k.get("center", True))
    return m.istft(spec, n_fft, window=w, **k)


SPECS = [
    _window_spec("hann_window"), _window_spec("hamming_window", (0.5, 0.3)), _window_spec("blackman_window"),
    _window_spec("bartlett_window"), _window_spec("kaiser_window", (5.0,)),
    _sig_window_spec("bartlett"), _sig_window_spec("blackman"), _sig_window_spec("cosine"),
    _sig_window_spec("exponential", tau=2.0), _sig_window_spec("gaussian", std=0.8),
    _sig_window_spec("general_cosine", a=[0.5, 0.3, 0.2]), _sig_window_spec("general_hamming", alpha=0.6),
    _sig_window_spec("hamming"), _sig_window_spec("hann"), _sig_window_spec("kaiser", beta=4.0),
    _sig_window_spec("nuttall"),
    OpSpec("stft", _stft, lambda r: [
        S(randn(r, 12), randn(r, 4, positive=True), 4), S(randn(r, 2, 10), randn(r, 4, positive=True), 4,
                                                             hop_length=2, name="batched_hop"),
        S(randn(r, 12), randn(r, 4, positive=True), 6, name="win_length_padded", win_length=4, hop_length=3),
        S(noncontig(randn(r, 3, 9))[0], randn(r, 4, positive=True), 4, center=False, name="no_center"),
        S(randn(r, 10), randn(r, 4, positive=True), 4, normalized=True, onesided=False, name="normalized_twosided"),
        S(randn(r, 10), randn(r, 4, positive=True), 4, pad_mode="constant", name="constant_pad"),
        S(randn(r, 10), randn(r, 5, positive=True), 5, pad_mode="replicate", hop_length=2, name="replicate_odd")],
        check_grad_fn=False, atol=1e-7, rtol=1e-5),
    OpSpec("istft", _istft, lambda r: [
        S(randn(r, 12), randn(r, 4, positive=True), 4), S(randn(r, 2, 10), randn(r, 4, positive=True), 4,
                                                             name="batched"),
        S(randn(r, 12), randn(r, 4, positive=True), 4, length=10, name="length_short"),
        S(randn(r, 12), randn(r, 4, positive=True), 4, length=14, name="length_padded"),
        S(randn(r, 12), randn(r, 4, positive=True), 4, normalized=True, name="normalized"),
        S(randn(r, 12), randn(r, 4, positive=True), 4, hop_length=2, name="hop2"),
        S(randn(r, 12), randn(r, 4, positive=True), 4, center=False, name="no_center")],
        check_grad_fn=False, atol=1e-7, rtol=1e-5, torch_warns="shorter than the length", warns="shorter than"),
]
