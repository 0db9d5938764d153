"""The ``out=`` rules of every tapegrad function that takes ``out``, measured on a module (tapegrad or torch).

For each function (its sample inputs come from the op table, tests/ops), the result is computed without ``out``;
then it is called again with an ``out`` of the result's dtype, of other dtypes (a wider/narrower float, integers,
bool, complex: one output at a time for functions with several), and of a wrong shape (with elements: torch
resizes it with a warning; empty: silently). Each case gives ``"ok"`` (with ``+warn`` when a UserWarning came,
``!values`` when ``out`` did not end up holding the result), or the exception's class and message.

``python tests/out_rules.py`` measures torch and rewrites tests/out_rules_table.py, the table that
tests/test_out_arguments.py holds tapegrad to (and checks against torch when torch is installed).
"""

from __future__ import annotations

import pathlib
import sys
import warnings

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

# Factories and random functions: ``out`` gives the dtype there (nothing to refuse); checked elsewhere.
FACTORIES = {"arange", "empty", "eye", "full", "linspace", "logspace", "ones", "rand", "randint", "randn",
             "randperm", "range", "zeros", "normal", "bernoulli", "multinomial", "fft.fftfreq", "fft.rfftfreq"}
# A name without its own spec in the op table borrows the samples of the function it is another name of.
SAMPLES_OF = {"absolute": "abs", "arccos": "acos", "arcsinh": "asinh", "arctanh": "atanh", "divide": "div",
              "multiply": "mul", "negative": "neg", "subtract": "sub", "special.digamma": "digamma",
              "special.erf": "erf", "special.erfc": "erfc", "special.erfinv": "erfinv", "special.exp2": "exp2",
              "special.expit": "sigmoid", "special.expm1": "expm1", "special.log1p": "log1p",
              "special.logit": "logit", "special.logsumexp": "logsumexp", "special.polygamma": "polygamma",
              "special.round": "round", "special.xlogy": "xlogy", "nn.functional.sigmoid": "sigmoid",
              "nn.functional.tanh": "tanh", "solve": None, "symeig": None, "lstsq": None}
OUT_DTYPES = ("float32", "float64", "float16", "int64", "int32", "bool", "complex64")


def resolve(m, name):
    for part in name.split("."):
        m = getattr(m, part)
    return m


def _tensor(m, x):
    if isinstance(x, np.ndarray):
        return m.tensor(x.astype(np.float32) if x.dtype.kind == "f" else
                        x.astype(np.complex64) if x.dtype.kind == "c" else x)
    if isinstance(x, (list, tuple)) and x and all(isinstance(e, np.ndarray) for e in x):
        return type(x)(_tensor(m, e) for e in x)
    return x


def _samples(name):
    from ops.op_db import OPS
    base = SAMPLES_OF.get(name, name)
    if base is None:
        return []
    rng = np.random.default_rng(0)
    return [s for spec in OPS if spec.name == base for s in spec.samples(rng)]


def _flat(r):
    return list(r) if isinstance(r, tuple) else [r]


def _outcome(m, call, outs, expected):
    """Call with ``out=outs``; "ok" (+warn, !values) or the exception as ``Class: message``."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            got = call(outs)
        except Exception as e:                         # noqa: BLE001 (the point is to record it)
            return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    res = "ok"
    if any(issubclass(x.category, UserWarning) and "resized" in str(x.message) for x in w):
        res += "+warn"
    flat_o = _flat(outs)
    for o, e in zip(flat_o, _flat(expected)):
        want = np.asarray(e.detach().resolve_conj().resolve_neg().numpy()) if hasattr(e, "resolve_neg") else e.numpy()
        have = np.asarray(o.resolve_conj().numpy()) if hasattr(o, "resolve_conj") else o.numpy()
        if have.shape != want.shape:
            return res + "!shape"
        with np.errstate(invalid="ignore", over="ignore"):
            want = want.astype(have.dtype) if have.dtype.kind != "b" else want != 0
        if not np.allclose(have.astype(np.complex128), want.astype(np.complex128), rtol=1e-3, atol=1e-3,
                           equal_nan=True):
            return res + "!values"
    if not isinstance(outs, tuple) and got is not outs:
        return res + "!identity"
    return res


def measure(m, name, sample=None):
    """``{case: outcome}`` for one function on module ``m`` (empty when no sample runs plainly): the first sample
    that takes an ``out`` of the result's dtype, or sample number ``sample``."""
    fn = resolve(m, name)
    samples = _samples(name)
    for i, s in enumerate(samples):
        if sample is not None and i != sample:
            continue
        args = tuple(_tensor(m, a) for a in s.args)
        kwargs = {k: _tensor(m, v) for k, v in s.kwargs.items()}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = fn(*args, **kwargs)
        except Exception:                              # noqa: BLE001 (a sample this call does not take)
            continue
        if not all(hasattr(e, "dtype") for e in _flat(expected)):
            continue
        if sample is None:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fn(*args, out=tuple(e.clone() for e in _flat(expected)) if isinstance(expected, tuple)
                       else expected.clone(), **kwargs)
            except Exception:                          # noqa: BLE001 (a sample torch takes no out= for)
                continue
        break
    else:
        return {}
    flat = _flat(expected)

    def call(outs):
        return fn(*args, out=outs, **kwargs)

    def outs_with(k, dtype=None, shape=None):
        outs = [m.full(tuple(e.shape), 7, dtype=e.dtype) for e in flat]
        if dtype is not None:
            outs[k] = m.full(tuple(flat[k].shape), 1, dtype=getattr(m, dtype))
        if shape is not None:
            outs[k] = m.full(shape, 1, dtype=flat[k].dtype)
        return tuple(outs) if isinstance(expected, tuple) else outs[0]

    table = {"same": _outcome(m, call, outs_with(0), expected)}
    for k, e in enumerate(flat):
        tag = "" if len(flat) == 1 else f"{k}:"
        for d in OUT_DTYPES:
            if getattr(m, d) != e.dtype:
                table[tag + d] = _outcome(m, call, outs_with(k, d), expected)
        table[tag + "shape"] = _outcome(m, call, outs_with(k, shape=(7,) if e.shape != (7,) else (3,)), expected)
        table[tag + "empty"] = _outcome(m, call, outs_with(k, shape=(0,)), expected)
    table["sample"] = i
    table["dtype"] = " ".join(str(e.dtype).split(".")[-1] for e in flat)
    return table


def names(m):
    import inspect

    def has_out(f):
        while f is not None:
            try:
                if "out" in inspect.signature(f, follow_wrapped=False).parameters:
                    return True
            except (TypeError, ValueError):
                return False
            f = getattr(f, "__wrapped__", None)
        return False
    found = []
    for pre in ("", "linalg.", "special.", "fft.", "nn.functional."):
        mod = resolve(m, pre[:-1]) if pre else m
        for n in sorted(dir(mod)):
            f = getattr(mod, n)
            if not n.startswith("_") and callable(f) and not isinstance(f, type) and has_out(f):
                found.append(pre + n)
    return [n for n in found if n not in FACTORIES]


def measure_all(m, which):
    return {n: measure(m, n) for n in which}


if __name__ == "__main__":
    import pprint

    import tapegrad
    import torch
    which = names(tapegrad)
    table = measure_all(torch, which)
    text = pprint.pformat(table, width=118, sort_dicts=True)
    (HERE / "out_rules_table.py").write_text(
        '"""torch 2.13\'s ``out=`` rules, measured by tests/out_rules.py (``python tests/out_rules.py`` rewrites '
        'it)."""\n\n# fmt: off\nTABLE = ' + text + "\n")
    print(len(table), "functions;", sum(not v for v in table.values()), "without a sample")
