"""Printing tensors exactly as PyTorch does (``tensor([2., 4., 6.], requires_grad=True)``).

Same rules as torch's ``_tensor_str``: one formatter per tensor decides between integer mode (``2.``), fixed
(``0.1000``) and scientific (``1.0000e-05``) notation from the nonzero finite values; more than ``threshold``
elements are summarised with ``...``; suffixes (``dtype=``, ``grad_fn=``, ``requires_grad=True``) wrap at
``linewidth``.
"""

from __future__ import annotations

import math

import numpy as np

from . import _dtype

__all__ = ["set_printoptions", "tensor_repr"]


class _PrintOptions:
    """The options ``set_printoptions`` sets. (A plain class: ``@dataclass`` would cost ``import tapegrad`` ~4
    ms, the dataclasses module and the generated methods.)"""

    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self, precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None):
        self.precision, self.threshold, self.edgeitems, self.linewidth = precision, threshold, edgeitems, linewidth
        self.sci_mode = sci_mode

    def __repr__(self):
        return "_PrintOptions(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__) + ")"

    def __eq__(self, other):
        return other.__class__ is self.__class__ and all(getattr(self, k) == getattr(other, k) for k in self.__slots__)


PRINT_OPTS = _PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Like ``torch.set_printoptions``: ``profile`` is "default", "short" or "full"."""
    if profile == "default":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, 1000, 3, 80
    elif profile == "short":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 2, 1000, 2, 80
    elif profile == "full":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, math.inf, 3, 80
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


class _Formatter:
    def __init__(self, a: np.ndarray):
        self.floating = a.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        p = PRINT_OPTS.precision
        flat = a.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
        else:
            vals = flat[np.isfinite(flat) & (flat != 0)]
            if vals.size:
                absv = np.abs(vals).astype(np.float64)
                vmin, vmax = absv.min(), absv.max()
                self.int_mode = bool(np.all(vals == np.ceil(vals)))
                pyvals = vals.astype(np.float64).tolist()
                # the mode first (set_printoptions(sci_mode=...) overrides it), then the width it needs
                self.sci_mode = (vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4) \
                    if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode
                if self.sci_mode:
                    self.max_width = max(len(f"{v:.{p}e}") for v in pyvals)
                elif self.int_mode:
                    self.max_width = max(len(f"{v:.0f}") + 1 for v in pyvals)
                else:
                    self.max_width = max(len(f"{v:.{p}f}") for v in pyvals)
            # (no nonzero finite value: torch keeps fixed notation whatever sci_mode says)

    def format(self, v) -> str:
        p = PRINT_OPTS.precision
        if self.floating:
            if self.sci_mode:
                s = f"{v:{self.max_width}.{p}e}"
            elif self.int_mode:
                s = f"{v:.0f}"
                if not (math.isinf(v) or math.isnan(v)):
                    s += "."
            else:
                s = f"{v:.{p}f}"
        else:
            s = f"{v}"
        return (self.max_width - len(s)) * " " + s


def _summarized(a: np.ndarray) -> np.ndarray:
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate((a[:e], a[-e:])) if a.shape[0] > 2 * e else a
    if not e:
        return np.empty([0] * a.ndim, a.dtype)
    rows = list(range(e)) + list(range(a.shape[0] - e, a.shape[0])) if a.shape[0] > 2 * e else range(a.shape[0])
    return np.stack([_summarized(a[i]) for i in rows])


class _ComplexFormatter:
    """A complex number as torch prints it: the real part by one formatter, the imaginary part by another (each
    decides its own mode from its own values), joined with its sign and a ``j``: ``1.+2.j``, ``0.5000-1.2500j``."""

    def __init__(self, a: np.ndarray):
        self.re, self.im = _Formatter(a.real), _Formatter(a.imag)
        self.max_width = self.re.max_width + self.im.max_width + 1     # (torch's element width, for line breaks)

    def format(self, v) -> str:
        v = complex(v)
        re = self.re.format(v.real)
        im = (self.im.format(v.imag) + "j").lstrip()
        return re + im if im[0] in "+-" else re + "+" + im


def _vector_str(a, indent, summarize, fmt):
    e = PRINT_OPTS.edgeitems
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / (fmt.max_width + 2))))
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = [fmt.format(v) for v in a[:e].tolist()] + [" ..."] + [fmt.format(v) for v in a[-e:].tolist()]
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _str_with(a, indent, summarize, fmt):
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt)
    e = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        slices = ([_str_with(a[i], indent + 1, summarize, fmt) for i in range(e)] + ["..."]
                  + [_str_with(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0] - e, a.shape[0])])
    else:
        slices = [_str_with(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _array_str(a: np.ndarray, indent: int) -> str:
    summarize = a.size > PRINT_OPTS.threshold
    if a.dtype == np.float16:
        a = a.astype(np.float32)
    shown = _summarized(a) if summarize else a
    fmt = _ComplexFormatter(shown) if a.dtype.kind == "c" else _Formatter(shown)
    return _str_with(a, indent, summarize, fmt)


def _add_suffixes(s, suffixes, indent, force_newline=False):
    """The suffixes after the values, each on the line where torch puts it: measured as torch prints it
    (``dtype=torch.float64``, three characters shorter than tapegrad's name), so lines break where torch's do."""
    parts = [s]
    last = len(s) - s.rfind("\n") + 1
    for suf in suffixes:
        n = len(suf) - suf.count("tapegrad.") * 3
        if force_newline or last + n + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suf)
            last = indent + n
            force_newline = False
        else:
            parts.append(", " + suf)
            last += n + 2
    parts.append(")")
    return "".join(parts)


_tangent_of = None   # forward AD sets it while a dual level is active: a dual tensor shows its tangent, as torch's


def tensor_repr(t, prefix="tensor(") -> str:
    a = t._array
    d = t.dtype
    indent = len(prefix)
    suffixes = []
    default_complex = _dtype.complex128 if _dtype.get_default_dtype() is _dtype.float64 else _dtype.complex64
    default = d in (_dtype.get_default_dtype(), _dtype.int64, _dtype.bool, default_complex)
    if t.is_meta:               # no data: its device, size and (not the default float) dtype, as torch's
        suffixes.append("device='meta'")
        suffixes.append("size=" + str(tuple(a.shape)))
        if d is not _dtype.get_default_dtype():
            suffixes.append(f"dtype={d}")
        body = "..."
    elif a.size == 0:
        if a.ndim != 1:
            suffixes.append("size=" + str(tuple(a.shape)))
        if d is not _dtype.get_default_dtype():
            suffixes.append(f"dtype={d}")
        body = "[]"
    else:
        if not default:
            suffixes.append(f"dtype={d}")
        body = _array_str(a, indent)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._rg:
        suffixes.append("requires_grad=True")
    if _tangent_of is not None:
        tangent = _tangent_of(t)
        if tangent is not None:
            suffixes.append(f"tangent={tangent!r}")
    return _add_suffixes(prefix + body, suffixes, indent)
