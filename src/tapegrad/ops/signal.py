# ruff: noqa: A002 - torch's argument names (input)
"""Signal processing: torch's window functions and the short-time Fourier transform (loaded on first use).

- The five top-level windows (``hann_window``, ``hamming_window``, ``blackman_window``, ``bartlett_window``,
  ``kaiser_window``: ``periodic=True`` by default) and the eleven of ``torch.signal.windows`` (``sym=True`` by
  default; ``tapegrad.signal.windows`` re-exports them). A window is a constant: computed in float64 and cast to
  its dtype, a leaf (``requires_grad=`` makes it one that requires grad). A periodic window (``sym=False``) of
  length N is the symmetric window of length N + 1 without its last point.
- ``stft`` / ``istft`` (and the Tensor methods) are compositions of differentiable ops: padding (``F.pad``),
  framing (``unfold``), the window product, ``fft.rfft`` / ``fft.fft``; ``istft`` inverts each frame, multiplies
  by the window, overlap-adds the frames with ``F.fold`` and divides by the overlap-added squared window. So their
  gradients, of every order, are those of the pieces.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _dtype
from ..tensor import strided as _strided
from ._util import Tensor, bind, sample_data
from ._util import autocast_listed

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window", "stft", "istft"]
WINDOWS = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]

# the C++ type names torch prints in its TensorOptions
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}


def _leaf(values: np.ndarray, d, requires_grad, device) -> Tensor:
    from ..tensor import _check_device
    meta = _check_device(device)
    t = Tensor._make(np.asarray(values, np.float64).astype(d.np))
    if meta:
        from .._meta import as_meta_tensor
        as_meta_tensor(t)
    if requires_grad:
        t.requires_grad = True
    return t


# --- torch's top-level windows (ATen's: periodic by default, any floating dtype) --------------------------------
def _window(name, window_length, periodic, dtype, device, requires_grad, values):
    """The shared frame of the top-level windows: torch's checks, the lengths 0 and 1, the periodic trim."""
    d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    n = int(window_length)
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    if d.is_complex:
        kind = "ComplexFloat" if d.np.itemsize == 8 else "ComplexDouble"
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{kind}'")
    if not d.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={_CPP_NAMES[str(d.np)]}, "
                           "device=cpu, layout=Strided (default), requires_grad=false (default), pinned_memory=false, "
                           "memory_format=(nullopt))")
    if n <= 1:
        return _leaf(np.ones(n), d, requires_grad, device)
    m = n + 1 if periodic else n
    w = values(np.arange(m, dtype=np.float64), m)
    return _leaf(w[:n], d, requires_grad, device)


def _cosine_sum(coeffs):
    """w[k] = sum_j (-1)^j a_j cos(2 pi j k / (M - 1)) on the points ``k`` of a symmetric window of length M."""
    def values(k, m):
        x = 2 * math.pi * k / (m - 1)
        return sum((-1) ** j * a * np.cos(j * x) for j, a in enumerate(coeffs))
    return values


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                pin_memory=False):
    """The Hann window 0.5 - 0.5 cos(2 pi n / (N - 1)) (N = length + 1 when ``periodic``, the last point dropped).

    >>> tapegrad.hann_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad, _cosine_sum((0.5, 0.5)))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """The Hamming window alpha - beta cos(2 pi n / (N - 1)).

    >>> tapegrad.hamming_window(3, False)
    tensor([0.0800, 1.0000, 0.0800])
    """
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum((float(alpha), float(beta))))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                    pin_memory=False):
    """The Blackman window 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1)).

    >>> tapegrad.blackman_window(3, False)
    tensor([-1.4901e-08,  1.0000e+00, -1.4901e-08])
    """
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum((0.42, 0.5, 0.08)))


def _bartlett(k, m):
    return 1 - np.abs(2 * k / (m - 1) - 1)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                    pin_memory=False):
    """The triangular window 1 - |2n / (N - 1) - 1|.

    >>> tapegrad.bartlett_window(5)
    tensor([0.0000, 0.4000, 0.8000, 0.8000, 0.4000])
    """
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, _bartlett)


def _kaiser(beta):
    def values(k, m):
        c = (m - 1) / 2
        return np.i0(beta * np.sqrt(np.clip(1 - ((k - c) / c) ** 2, 0, None))) / np.i0(beta)
    return values


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False, pin_memory=False):
    """The Kaiser window I0(beta sqrt(1 - ((n - c) / c)^2)) / I0(beta), c = (N - 1) / 2.

    >>> tapegrad.kaiser_window(3, False, 1.0)
    tensor([0.7898, 1.0000, 0.7898])
    """
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, _kaiser(float(beta)))


# --- torch.signal.windows (Python-level in torch: ValueError/TypeError, float32/float64 only, sym=True) ---------
def _sig_window(name, M, sym, dtype, device, requires_grad, values, trim=True, layout=None):
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and layout is not _strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    if d not in (_dtype.float32, _dtype.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {d}")
    if not trim:                      # the window's own formula knows the periodic case and the length 1
        return _leaf(values(np.arange(M, dtype=np.float64), M, sym), d, requires_grad, device)
    if M <= 1:
        return _leaf(np.ones(M), d, requires_grad, device)
    m = M if sym else M + 1
    return _leaf(values(np.arange(m, dtype=np.float64), m)[:M], d, requires_grad, device)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The exponential (Poisson) window exp(-|n - center| / tau); ``center`` defaults to the middle.

    >>> tapegrad.signal.windows.exponential(3)
    tensor([0.3679, 1.0000, 0.3679])
    """
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")

    def values(k, m, sym):
        c = (m if not sym and m > 1 else m - 1) / 2.0 if center is None else center
        return np.exp(-np.abs(k - c) / tau)
    return _sig_window("exponential", M, sym, dtype, device, requires_grad, values, trim=False, layout=layout)


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The cosine (sine) window sin(pi (n + 0.5) / M).

    >>> tapegrad.signal.windows.cosine(3)
    tensor([0.5000, 1.0000, 0.5000])
    """
    def values(k, m, sym):
        return np.sin(math.pi * (k + 0.5) / (m if sym or m == 1 else m + 1))
    return _sig_window("cosine", M, sym, dtype, device, requires_grad, values, trim=False, layout=layout)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Gaussian window exp(-(n - c)^2 / (2 std^2)), c the middle.

    >>> tapegrad.signal.windows.gaussian(3)
    tensor([0.6065, 1.0000, 0.6065])
    """
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")

    def values(k, m):
        return np.exp(-((k - (m - 1) / 2) ** 2) / (2 * std ** 2))
    return _sig_window("gaussian", M, sym, dtype, device, requires_grad, values, layout=layout)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Kaiser window (see ``kaiser_window``).

    >>> tapegrad.signal.windows.kaiser(3, beta=1.0)
    tensor([0.7898, 1.0000, 0.7898])
    """
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    return _sig_window("kaiser", M, sym, dtype, device, requires_grad, _kaiser(float(beta)), layout=layout)


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """A sum of cosines: w[n] = sum_j (-1)^j a_j cos(2 pi j n / (M - 1)).

    >>> tapegrad.signal.windows.general_cosine(3, a=[0.5, 0.5])
    tensor([0., 1., 0.])
    """
    if not isinstance(a, (list, tuple)):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    return _sig_window("general_cosine", M, sym, dtype, device, requires_grad, _cosine_sum([float(c) for c in a]),
                       layout=layout)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The generalised Hamming window alpha - (1 - alpha) cos(2 pi n / (M - 1)).

    >>> tapegrad.signal.windows.general_hamming(3, alpha=0.5)
    tensor([0., 1., 0.])
    """
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hamming window (``general_hamming`` with alpha 0.54).

    >>> tapegrad.signal.windows.hamming(3)
    tensor([0.0800, 1.0000, 0.0800])
    """
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hann window (``general_hamming`` with alpha 0.5).

    >>> tapegrad.signal.windows.hann(3)
    tensor([0., 1., 0.])
    """
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Blackman window (``general_cosine`` with a = [0.42, 0.5, 0.08]).

    >>> tapegrad.signal.windows.blackman(3)
    tensor([-1.4901e-08,  1.0000e+00, -1.4901e-08])
    """
    return _sig_window("blackman", M, sym, dtype, device, requires_grad, _cosine_sum((0.42, 0.5, 0.08)),
                       layout=layout)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Nuttall's minimum 4-term Blackman-Harris window.

    >>> tapegrad.signal.windows.nuttall(3)
    tensor([3.6280e-04, 1.0000e+00, 3.6280e-04])
    """
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The triangular window 1 - |2n / (M - 1) - 1|.

    >>> tapegrad.signal.windows.bartlett(3)
    tensor([0., 1., 0.])
    """
    return _sig_window("bartlett", M, sym, dtype, device, requires_grad, _bartlett, layout=layout)


# --- the short-time Fourier transform --------------------------------------------------------------------------
def _tensor_desc(x, braces=False):
    """torch's description of a tensor argument in stft's messages: ``torch.FloatTensor[10]`` (``{[10]}``)."""
    from .._legacy import type_string
    dims = ", ".join(map(str, x.shape))
    return f"{type_string(x)}{{[{dims}]}}" if braces else f"{type_string(x)}[{dims}]"


def _window_desc(window):
    return "None" if window is None else _tensor_desc(window, True)


def _flag(v):
    return "None" if v is None else str(int(bool(v)))


def _frame_window(window, win_length, n_fft):
    """The window zero-padded to ``n_fft`` (centred), or None for the rectangular window."""
    if window is None:
        return None
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        from .conv.resampling import pad
        window = pad(window, (left, n_fft - win_length - left))
    return window


@autocast_listed("fp32")
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The short-time Fourier transform: the FFT of each (windowed) frame of ``n_fft`` samples, every
    ``hop_length`` (default ``n_fft // 4``); shape ``(..., n_fft // 2 + 1 or n_fft, n_frames)``.

    >>> tapegrad.stft(tapegrad.ones(8), 4, return_complex=True).shape
    tapegrad.Size([3, 9])
    """
    from . import fft
    from .conv.resampling import pad
    from .elementwise.complex import view_as_real
    complex_in = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None:
        if not complex_in:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
        return_complex = True
    if not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                      "still call torch.view_as_real on the complex output to recover the old return format.",
                      UserWarning, stacklevel=2)
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which is known to cause "
                      "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
                      "recommended to reduce spectral leakage.To suppress this warning and use a rectangular window, "
                      "explicitly set `window=torch.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=2)
    n_fft = int(n_fft)
    hop = n_fft // 4 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    if center and input.ndim <= 3:     # (as torch: padded as a 3-d signal first, the rank checked after)
        x3 = input.reshape((1,) * (3 - input.ndim) + tuple(input.shape))
        input = pad(x3, (n_fft // 2, n_fft // 2), mode=pad_mode).reshape(
            tuple(input.shape[:-1]) + (input.shape[-1] + 2 * (n_fft // 2),))

    def error(msg):
        return RuntimeError(f"stft({_tensor_desc(input)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
                            f"window={_window_desc(window)}, normalized={_flag(normalized)}, "
                            f"onesided={_flag(onesided)}, return_complex={_flag(return_complex)}, "
                            f"align_to_window={_flag(align_to_window)}) : {msg}")
    if input.ndim not in (1, 2):
        raise error("expected a 1D or 2D tensor")
    if not (input.dtype.is_floating_point or input.is_complex()):
        raise error("expected a tensor of floating point or complex values")
    length = input.shape[-1]
    if n_fft <= 0 or n_fft > length:
        raise error(f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise error(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise error(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise error(f"expected a 1D window tensor of size equal to win_length={win}, but got window with size "
                    f"[{', '.join(map(str, window.shape))}]")
    if onesided is None:
        onesided = not complex_in
    elif onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    frames = input.unfold(-1, n_fft, hop)              # (..., n_frames, n_fft)
    w = _frame_window(window, win, n_fft)
    if w is not None:
        frames = frames * w
    norm = "ortho" if normalized else None
    spec = fft.rfft(frames, dim=-1, norm=norm) if onesided else fft.fft(frames, dim=-1, norm=norm)
    spec = spec.transpose(-1, -2)
    return spec if return_complex else view_as_real(spec)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of ``stft``: each frame's inverse FFT, windowed, overlap-added, divided by the overlap-added
    squared window (least-squares inversion).

    >>> x = tapegrad.arange(8.)
    >>> w = tapegrad.hann_window(4)
    >>> tapegrad.istft(tapegrad.stft(x, 4, window=w, return_complex=True), 4, window=w, length=8).round()
    tensor([0., 1., 2., 3., 4., 5., 6., 7.])
    """
    from . import fft
    from .conv.convolution import fold
    from .conv.resampling import pad
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please provide the same "
                      "window used by stft to make the inversion lossless.To suppress this warning and use a "
                      "rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`.", UserWarning,
                      stacklevel=2)
    n_fft = int(n_fft)
    hop = n_fft // 4 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    shape = tuple(input.shape)

    def error(msg):
        kind = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}.get(str(input._array.dtype), "Float")
        return RuntimeError(f"istft(CPU{kind}Type[{', '.join(map(str, shape))}], n_fft={n_fft}, hop_length={hop}, "
                            f"win_length={win}, window={_window_desc(window)}, "
                            f"center={_flag(center)}, normalized={_flag(normalized)}, onesided={_flag(onesided)}, "
                            f"length={length}, return_complex={_flag(return_complex)}) {msg}")
    if input.ndim not in (2, 3):
        raise error(f"expected a tensor with 2 or 3 dimensions of complex, but got {input.ndim}")
    if input.numel() == 0:
        raise error("expected a non-empty input")
    fft_size, n_frames = shape[-2], shape[-1]
    if onesided is None:
        onesided = fft_size != n_fft
    if onesided:
        if n_fft // 2 + 1 != fft_size:
            raise error("expected the frequency dimension (3rd to the last) of the input tensor to match n_fft / 2 + 1 "
                        f"when onesided=True, but got {fft_size}")
    elif n_fft != fft_size:
        raise error("expected the frequency dimension (3rd to the last) of the input tensor to match n_fft when "
                    f"onesided=False, but got {fft_size}")
    if not (0 < hop <= win):
        raise error("expected 0 < hop_length <= win_length")
    if not (0 < win <= n_fft):
        raise error("expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise error("Invalid window shape. window has to be 1D and length of `win_length`")
    if return_complex and onesided:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    if not return_complex and window is not None and window.is_complex():
        raise RuntimeError("Complex windows are incompatible with return_complex=False")
    x = input if input.ndim == 3 else input.unsqueeze(0)
    x = x.transpose(-1, -2)                            # (B, n_frames, fft_size)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        frames = fft.ifft(x, n_fft, dim=-1, norm=norm)
    else:
        if not onesided:
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        frames = fft.irfft(x, n_fft, dim=-1, norm=norm)
    w = _frame_window(window, win, n_fft)
    real_dt = frames.real.dtype if frames.is_complex() else frames.dtype
    if w is None:
        from ..creation import ones
        w = ones(n_fft, dtype=real_dt)
    frames = frames * w
    total = n_fft + hop * (n_frames - 1)
    y = fold(frames.transpose(1, 2), (1, total), (1, n_fft), stride=(1, hop)).reshape(x.shape[0], total)
    env_cols = (w * w).expand(1, n_frames, n_fft).transpose(1, 2)
    env = fold(env_cols, (1, total), (1, n_fft), stride=(1, hop)).reshape(total)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    stop = min(end, total)
    y = y[:, start:stop]
    env = env[start:stop]
    if (sample_data(env.abs()) < 1e-11).any():       # (under vmap: every sample's window)
        raise error("window overlap add min: 1")
    y = y / env
    if end > total:
        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with zeros "
                      "in the tail. Please check your center and hop_length settings.", UserWarning, stacklevel=2)
        y = pad(y, (0, end - total))
    return y if input.ndim == 3 else y.squeeze(0)


bind(stft=stft, istft=istft)
