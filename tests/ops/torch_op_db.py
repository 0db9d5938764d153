"""PyTorch's own op database run against tapegrad.

torch ships ``torch.testing._internal.common_methods_invocations.op_db``: one ``OpInfo`` per op (~700), each
with sample inputs. For every OpInfo this module finds the op in tapegrad (by its name: ``torch.X``,
``Tensor.X``, ``nn.functional.X``, ``linalg.X``, ``fft.X``, ``special.X``...; an OpInfo whose op is a lambda or
a wrapper written in torch's test modules runs that very code with ``torch`` bound to tapegrad), takes torch's
sample inputs in float64 and float32 (the dtypes the op supports), converts them to tapegrad tensors (a view of part
of its storage: the same view of a copy of that storage) and compares values, dtypes and gradients (the
vector-Jacobian product of one random cotangent) with torch's.

Two rules temper torch's authority (each stated where it is applied): where the op_db itself skips or xfails
torch's gradcheck (``test_fn_grad``), finite differences can vouch for tapegrad's gradient instead of torch's; and
a float32 result that differs from torch's float32 one is judged by its distance from torch's float64 answer.

    python tests/ops/torch_op_db.py            # summary table: agree / disagree / missing / excluded, the lists
    python tests/ops/torch_op_db.py --all      # every sample (default: the first few per dtype)
    python tests/ops/torch_op_db.py -v abs     # one op, with each sample's verdict

``tests/ops/test_torch_op_db.py`` runs it in the suite (a few samples per op and dtype).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import os
import sys
import types
import warnings

import numpy as np

if __name__ == "__main__":   # the CLI: the worktree's tapegrad first, as tests/conftest.py does
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "src"))

import tapegrad  # noqa: E402

DTYPES = ("float64", "float32")
SAMPLES_PER_DTYPE = 3      # the suite's cap; the CLI's --all takes every sample

# The OpInfos left out, each rule with its reason (the issue: sparse, quantized and accelerator-only ops aside).
EXCLUDED_RULES = {
    "sparse": "sparse layouts: tapegrad has dense tensors only",
    "quantized": "quantized tensors: not part of tapegrad",
    "accelerator": "accelerator-only: no dtype is supported on the CPU (CUDA jiterator ops, flash/efficient "
                   "attention kernels, the cudnn-less batch_norm variant)",
    "aten-internal": "private ATen overloads called through torch.ops.aten (not torch's Python API; their public "
                     "counterparts have OpInfos of their own)",
}
EXCLUDED = {
    "sparse.sampled_addmm": "sparse", "sparse.mm": "sparse", "to_sparse": "sparse",
    "_softmax_backward_data": "aten-internal", "_batch_norm_with_update": "aten-internal",
    "_upsample_bilinear2d_aa": "aten-internal", "torch.ops.aten._safe_softmax.default": "aten-internal",
    "slice": "aten-internal", "native_dropout_backward": "aten-internal",
    "max_pool2d_with_indices_backward": "aten-internal",
}

# Ops tapegrad deliberately does differently (README "What is different"), with the reason.
KNOWN_EXCEPTIONS: dict[str, str] = {
    "bfloat16": "NumPy has no bfloat16: tapegrad stores it as float32 and x.bfloat16() is float32 (README)",
}

# float64: tight; float32: relative to the result's scale (different summation orders and algorithms)
TOL = {"float64": dict(rtol=1e-7, atol=1e-7), "float32": dict(rtol=1e-4, atol=1e-4, scaled=True)}
# Where torch's own value is the less accurate one, a wider tolerance, with the evidence.
TOL_OVERRIDES = {
    # torch's float64 bessel_j0 / bessel_y1 lose ~3e-7 (absolute) near their zeros: at x = -5.4215 torch gives
    # -0.0337815018, mpmath and tapegrad -0.0337813128 (tapegrad's error 7e-17)
    "special.bessel_j0": dict(rtol=1e-7, atol=1e-6),
    "special.bessel_y1": dict(rtol=1e-7, atol=1e-6),
}


def load_op_db():
    warnings.filterwarnings("ignore", category=UserWarning)
    from torch.testing._internal.common_methods_invocations import op_db
    _cheap_extract_test_fn()
    return op_db


def _extract_test_fn():
    """torch's ``common_utils.extract_test_fn`` (the unittest test method up the stack, whose attributes record
    the sample being run and seed the sample generators), walking the same frames without ``inspect.stack()``:
    that reads every frame's source lines and searches ``sys.modules`` for each frame's module, ~0.05 s a call in
    a pytest process, and the op_db calls it for every sample it yields (most of the error-input scan's time)."""
    import unittest
    try:
        frame = sys._getframe(1)
        while frame is not None:
            self_val = frame.f_locals.get("self", frame)
            frame = frame.f_back
            if isinstance(self_val, unittest.TestCase):
                *_, cls_name, test_name = self_val.id().rsplit(".", 2)
                if cls_name == type(self_val).__name__ and test_name.startswith("test"):
                    return getattr(self_val, test_name).__func__
    except Exception:      # noqa: BLE001 -- as torch's: no test function found
        pass
    return None


def _cheap_extract_test_fn():
    """Put ``_extract_test_fn`` where torch's op_db looks the function up (same answer: None in these pytest
    functions, the test method under unittest)."""
    from torch.testing._internal import common_utils
    from torch.testing._internal.opinfo import core
    for module in (common_utils, core):
        if getattr(module, "extract_test_fn", None) is not None:
            module.extract_test_fn = _extract_test_fn


def op_id(op):
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def exclusion(op):
    """The exclusion rule that applies to this OpInfo, or None."""
    if op.name in EXCLUDED:
        return EXCLUDED[op.name]
    if "sparse" in op.name:
        return "sparse"
    if op.name.startswith(("quantized", "fake_quantize", "quantize_")):
        return "quantized"
    if not op.supported_dtypes("cpu") or type(op.op).__name__ == "_JittedFunction":
        return "accelerator"
    if op.name.startswith("torch.ops.aten"):
        return "aten-internal"
    return None


# --- finding the op in tapegrad ------------------------------------------------------------------------------

_TORCH_TEST_MODULES = ("torch.testing._internal",)


def _tg_wrapper_set_seed(op, *args, **kwargs):
    """tapegrad's side of torch's ``wrapper_set_seed``: seed, then call (random ops compare structure only)."""
    tapegrad.manual_seed(42)
    return op(*args, **kwargs)


_REBOUND: dict = {}


def _rebind(fn):
    """``fn`` (a lambda or helper written in torch's test modules) with ``torch`` meaning tapegrad, and the helpers
    it calls rebound the same way."""
    if id(fn) in _REBOUND:
        return _REBOUND[id(fn)][1]
    g = dict(fn.__globals__)
    g["torch"] = tapegrad
    g["wrapper_set_seed"] = _tg_wrapper_set_seed
    for name in _code_names(fn.__code__):
        v = g.get(name)
        if isinstance(v, types.FunctionType) and (v.__module__ or "").startswith(_TORCH_TEST_MODULES) \
                and name != "wrapper_set_seed":
            g[name] = _rebind(v)
    new = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    _REBOUND[id(fn)] = (fn, new)
    return new


def _code_names(code):
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _code_names(c)
    return names


def _from_test_module(fn):
    return isinstance(fn, types.FunctionType) and (fn.__module__ or "").startswith(_TORCH_TEST_MODULES)


def uninitialized(op):
    """An op whose values are uninitialised memory in torch (``empty`` and friends): shapes and dtypes only."""
    return op.name.split(".")[-1].startswith(("empty", "new_empty"))


def is_random(op):
    """An op whose values depend on the random stream (torch's OpInfo wraps it in ``wrapper_set_seed``):
    tapegrad's generator is not torch's, so only shapes and dtypes are compared."""
    return _from_test_module(op.op) and "wrapper_set_seed" in _code_names(op.op.__code__)


def _getpath(root, path):
    obj = root
    for part in path.split("."):
        try:
            obj = getattr(obj, part)
        except Exception:
            return None
    return obj


def resolve(op):
    """The tapegrad callable for an OpInfo, or None where tapegrad lacks it. A lambda of torch's test module runs
    as is (rebound) when every torch name it reaches exists in tapegrad."""
    fn = op.op
    if _from_test_module(fn):
        new = _rebind(fn)
        return new if _reaches_existing(fn) else None
    name = op.name
    if name.startswith("__") or type(fn).__name__ in ("method_descriptor", "wrapper_descriptor") \
            or (getattr(fn, "__qualname__", "").startswith(("Tensor.", "TensorBase."))):
        m = getattr(tapegrad.Tensor, name, None)
        return m
    found = _getpath(tapegrad, name)
    if found is None and op.method_variant is not None and "." not in name:
        found = getattr(tapegrad.Tensor, name, None)
    if found is None and type(fn).__name__ == "builtin_function_or_method" and fn is getattr(
            __import__("torch"), fn.__name__, None):          # an OpInfo named apart from its torch.X function
        found = getattr(tapegrad, fn.__name__, None)
    return found


def _reaches_existing(fn):
    """Whether every ``torch.a.b`` chain and every Tensor method a test-module lambda reaches exists in tapegrad
    (else: the op is missing)."""
    import torch
    if any(_getpath(tapegrad, chain) is None for chain in _torch_chains(fn.__code__)):
        return False
    return all(hasattr(tapegrad.Tensor, m) for m in _method_names(fn.__code__) if hasattr(torch.Tensor, m))


def _method_names(code):
    """Attributes read from anything but the ``torch`` module (``x.clone().resize_(...)``)."""
    import dis
    names, in_chain = [], False
    for ins in dis.get_instructions(code):
        if ins.opname == "LOAD_GLOBAL":
            in_chain = ins.argval == "torch"
        elif ins.opname in ("LOAD_ATTR", "LOAD_METHOD"):
            if not in_chain:
                names.append(ins.argval)
        else:
            in_chain = False
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names += _method_names(c)
    return names


def _torch_chains(code):
    """``torch.x.y`` chains read by a code object (from its bytecode: LOAD_GLOBAL torch, LOAD_ATTR...)."""
    import dis
    chains, cur = [], None
    for ins in dis.get_instructions(code):
        if ins.opname == "LOAD_GLOBAL" and ins.argval == "torch":
            cur = []
        elif cur is not None and ins.opname in ("LOAD_ATTR", "LOAD_METHOD"):
            cur.append(ins.argval)
        else:
            if cur:
                chains.append(".".join(cur))
            cur = None
    if cur:
        chains.append(".".join(cur))
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            chains += _torch_chains(c)
    return chains


# --- converting samples --------------------------------------------------------------------------------------

class Missing(Exception):
    """The op's code reaches a name tapegrad lacks."""


class Inexpressible(Exception):
    """A sample argument tapegrad has no counterpart for."""


def to_tg(obj, memo):
    import torch
    if isinstance(obj, torch.Tensor):
        if id(obj) in memo:
            return memo[id(obj)]
        if obj.layout != torch.strided:
            raise Inexpressible(f"layout {obj.layout}")
        t = obj.detach().resolve_conj().resolve_neg()
        dt = str(t.dtype).split(".")[1]
        if _is_view_of_more(t) and dt != "bfloat16":
            out = _tg_view(t, memo).requires_grad_(obj.requires_grad)
        else:
            arr = t.float().numpy() if dt == "bfloat16" else t.numpy()
            out = tapegrad.tensor(arr.copy(), dtype=getattr(tapegrad, dt), requires_grad=obj.requires_grad)
        memo[id(obj)] = out
        return out
    if isinstance(obj, torch.dtype):
        return getattr(tapegrad, str(obj).split(".")[1])
    if isinstance(obj, torch.device):
        return tapegrad.device(str(obj))
    if isinstance(obj, torch.Size):
        return tapegrad.Size(obj)
    if isinstance(obj, (torch.memory_format, torch.layout)):
        name = str(obj).split(".")[-1]
        if not hasattr(tapegrad, name):
            raise Inexpressible(f"{type(obj).__name__} {obj}")
        return getattr(tapegrad, name)
    if isinstance(obj, torch.Generator):
        raise Inexpressible("a torch.Generator")
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(to_tg(o, memo) for o in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_tg(o, memo) for o in obj)
    if isinstance(obj, dict):
        return {k: to_tg(v, memo) for k, v in obj.items()}
    if isinstance(obj, torch.nn.Module):
        cls = getattr(tapegrad.nn, type(obj).__name__, None)
        if cls is None or any(True for _ in obj.parameters()):
            raise Inexpressible(f"the module {type(obj).__name__}")
        mod = cls()
        for k, v in vars(obj).items():
            if not k.startswith("_") and isinstance(v, (bool, int, float, str, type(None))):
                setattr(mod, k, v)
        return mod
    if callable(obj) and _from_test_module(obj):
        return _rebind(obj)
    if callable(obj) and (getattr(obj, "__module__", None) or "").startswith("torch") and hasattr(obj, "__name__"):
        found = _getpath(tapegrad, obj.__module__.replace("torch.", "", 1).replace("torch", "") + "." + obj.__name__) \
            if obj.__module__ != "torch" else getattr(tapegrad, obj.__name__, None)
        if found is None:
            raise Inexpressible(f"the function {obj.__module__}.{obj.__name__}")
        return found
    return obj


def _is_view_of_more(t):
    """Whether ``t`` sees its storage other than as one whole C-contiguous array (an offset, other strides, or a
    storage larger than itself): then ops that read the storage (``as_strided``) need that storage, not a copy."""
    if t.numel() == 0:
        return False
    return not t.is_contiguous() or t.storage_offset() != 0 \
        or t.untyped_storage().nbytes() != t.numel() * t.element_size()


def _storage_1d(t):
    """``t``'s whole storage as a 1-d torch tensor of its dtype (sharing memory)."""
    n = t.untyped_storage().nbytes() // t.element_size()
    return t.as_strided((n,), (1,), 0)


def _tg_view(t, memo):
    """A view like torch's ``t`` (sizes, strides, storage offset) over a tapegrad copy of ``t``'s whole storage (one
    copy per storage, so that the sample's tensors sharing memory in torch share it in tapegrad too); a leaf."""
    key = ("storage", t.untyped_storage().data_ptr(), t.dtype)
    base = memo.get(key)
    if base is None:
        base = memo[key] = tapegrad.tensor(_storage_1d(t).numpy().copy())
    with tapegrad.no_grad():
        return tapegrad.as_strided(base, tuple(t.shape), tuple(t.stride()), t.storage_offset()).detach()


def upcast(obj, memo=None):
    """torch's float32 tensors of a (nested) sample argument in float64, with the same geometry and requires_grad
    (views stay views of an upcast copy of their storage); anything else as is."""
    import torch
    from torch.testing._internal.opinfo.core import SampleInput
    memo = {} if memo is None else memo
    if isinstance(obj, SampleInput):
        return types.SimpleNamespace(input=upcast(obj.input, memo), args=upcast(tuple(obj.args), memo),
                                     kwargs=upcast(dict(obj.kwargs), memo),
                                     output_process_fn_grad=obj.output_process_fn_grad)
    if isinstance(obj, torch.Tensor):
        if obj.dtype != torch.float32:
            return obj
        if id(obj) not in memo:
            t = obj.detach()
            if _is_view_of_more(t):
                key = ("storage", t.untyped_storage().data_ptr())
                if key not in memo:
                    memo[key] = _storage_1d(t).double()
                new = memo[key].as_strided(tuple(t.shape), tuple(t.stride()), t.storage_offset())
            else:
                new = t.double()
            memo[id(obj)] = new.detach().requires_grad_(obj.requires_grad)
        return memo[id(obj)]
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(upcast(o, memo) for o in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(upcast(o, memo) for o in obj)
    if isinstance(obj, dict):
        return {k: upcast(v, memo) for k, v in obj.items()}
    return obj


def flatten(obj):
    """Tensors of a (nested) result, in order; Python numbers and bools as 0-d arrays; None kept."""
    import torch
    if isinstance(obj, (torch.Tensor, tapegrad.Tensor)):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in flatten(o)]
    if isinstance(obj, dict):
        return [t for k in obj for t in flatten(obj[k])]
    return [obj]


def _np(x):
    import torch
    if isinstance(x, torch.Tensor):
        x = x.detach().resolve_conj().resolve_neg()
        return (x.float() if x.dtype == torch.bfloat16 else x).numpy(force=True)
    if isinstance(x, tapegrad.Tensor):
        return np.asarray(x.detach().numpy())
    return x


def _dtype_name(x):
    return str(x.dtype).split(".")[-1]


def _close(x, y, tol):
    atol = tol["atol"]
    if tol.get("scaled") and y.size:
        finite = np.abs(y[np.isfinite(y)])
        atol *= max(1.0, float(finite.max()) if finite.size else 1.0)
    return x.shape == y.shape and bool(np.allclose(x, y, rtol=tol["rtol"], atol=atol, equal_nan=True))


def compare(tg, th, tol, what, structure_only=False):
    """None if ``tg`` (tapegrad's result) matches ``th`` (torch's), else a short description."""
    import torch
    a, b = flatten(tg), flatten(th)
    if len(a) != len(b):
        return f"{what}: {len(a)} results, torch {len(b)}"
    for k, (x, y) in enumerate(zip(a, b)):
        if isinstance(y, torch.Tensor):
            if not isinstance(x, tapegrad.Tensor):
                return f"{what}[{k}]: {type(x).__name__}, torch a Tensor"
            if tuple(x.shape) != tuple(y.shape):
                return f"{what}[{k}]: shape {tuple(x.shape)}, torch {tuple(y.shape)}"
            if _dtype_name(x) != _dtype_name(y):
                return f"{what}[{k}]: dtype {_dtype_name(x)}, torch {_dtype_name(y)}"
            if structure_only:
                continue
            xa, ya = _np(x), _np(y)
            if ya.dtype.kind in "fc":
                if not _close(xa, ya, tol):
                    with np.errstate(invalid="ignore"):
                        err = np.max(np.abs(xa - ya), initial=0, where=~np.isnan(xa - ya))
                    return f"{what}[{k}]: values differ (max abs err {err:.3g})"
            elif not np.array_equal(xa, ya):
                return f"{what}[{k}]: values differ"
        elif y is None or isinstance(y, (bool, int, float, complex, str, torch.dtype, torch.Size)):
            if isinstance(y, torch.dtype):
                ok = str(x).split(".")[-1] == str(y).split(".")[-1]
            elif isinstance(y, torch.Size):
                ok = tuple(x) == tuple(y)
            elif isinstance(y, (float, complex)) and not structure_only:
                ok = isinstance(x, (int, float, complex)) and _close(np.asarray(x), np.asarray(y), tol)
            else:
                ok = structure_only or x == y
            if not ok:
                return f"{what}[{k}]: {x!r}, torch {y!r}"
    return None


# --- running one op ------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Result:
    id: str
    status: str                      # agree / disagree / missing / excluded / known
    reason: str = ""
    samples: int = 0
    inexpressible: int = 0           # samples with an argument tapegrad can't express
    details: list = dataclasses.field(default_factory=list)


def _samples(op, dtype, cap):
    import torch
    torch.manual_seed(0)      # torch's samples come from its global generator: the same ones in any test order
    grad = op.supports_autograd and dtype.is_floating_point
    with warnings.catch_warnings():      # (torch's own deprecation warnings while it builds samples)
        warnings.simplefilter("ignore")
        gen = op.sample_inputs("cpu", dtype, requires_grad=grad)
        return list(gen if cap is None else itertools.islice(gen, cap))


def _call(fn, sample, wrapper):
    return wrapper(fn, sample.input, *sample.args, **sample.kwargs)


def _grad_leaves(objs):
    import torch
    return [t for t in flatten(objs) if isinstance(t, (torch.Tensor, tapegrad.Tensor)) and t.requires_grad]


# --- the op_db's own verdicts on torch -----------------------------------------------------------------------
# Where torch's test suite skips, or expects to fail, the test that a comparison here mirrors, torch's answer is
# not the oracle for it. The gradient comparison mirrors TestBwdGradients.test_fn_grad (torch's gradcheck, run in
# float64): where the op_db skips or xfails that test on the CPU, torch's gradient is one witness, not the oracle:
# tapegrad's gradient agrees if it matches torch's or else central finite differences of tapegrad's own forward in
# float64 (torch's gradcheck). (The op_db's reasons vary: torch's gradient is wrong -- as_strided_scatter's input
# gradient in torch 2.13 --, or finite differences can't judge it -- a float32 output, max_unpool's duplicate
# indices, polygamma's poles.) The value
# comparison has no such test: torch's value is the op's definition (the op_db's skips of value tests, such as
# test_variant_consistency_eager, test_noncontiguous_samples or test_compare_cpu, are about torch's harness: its
# variants, memory layouts and device copies).

def torch_grad_untrusted(op):
    """How the op_db disowns torch's gradient of ``op`` ("skip" or "xfail" of test_fn_grad on the CPU), or None."""
    import unittest

    import torch
    from torch.testing._internal import common_device_type as cdt
    for d in op.get_decorators("TestBwdGradients", "test_fn_grad", "cpu", torch.float64, {}):
        if d is unittest.expectedFailure:
            return "xfail"
        if d is unittest.skip or getattr(d, "__qualname__", "").startswith("skip.<locals>"):  # (reason)
            return "skip"
        if isinstance(d, cdt.expectedFailure) and d.device_type in (None, "cpu") \
                and d.dtype in (None, torch.float64):
            return "xfail"
        if isinstance(d, cdt.skipIf) and d.device_type in (None, "cpu") and d.dep is True:
            return "skip"
    return None


# --- the answers ---------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Answer:
    """torch's answer on a sample: its result, and where there is one to compare, the vector-Jacobian product of
    the cotangents ``cots`` (one per differentiable output, ``idx`` its place among ``n_outs`` outputs)."""
    out: object
    idx: list | None = None
    n_outs: int = 0
    cots: list | None = None
    grads: list | None = None     # None: torch can't differentiate this sample


def torch_answer(op, sample, cots=None):
    """torch's ``Answer`` on ``sample`` (raises where torch refuses the sample)."""
    import torch
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ans = Answer(_call(op.op, sample, op.gradcheck_wrapper))
        ins = _grad_leaves([sample.input, sample.args, sample.kwargs])
        if not op.supports_autograd or not ins:
            return ans
        try:
            outs = [t for t in flatten(sample.output_process_fn_grad(ans.out)) if isinstance(t, torch.Tensor)]
        except Exception:
            return ans
        idx = [k for k, t in enumerate(outs) if t.requires_grad and (t.is_floating_point() or t.is_complex())]
        if not idx:
            return ans
        if cots is None:
            gen = torch.Generator().manual_seed(1)
            cots = [torch.randn(outs[k].shape, dtype=outs[k].dtype, generator=gen) for k in idx]
        ans.idx, ans.n_outs, ans.cots = idx, len(outs), cots
        try:
            g = torch.autograd.grad([outs[k] for k in idx], ins, cots, allow_unused=True)
        except Exception:
            return ans
    ans.grads = [torch.zeros_like(i) if x is None else x for x, i in zip(g, ins)]
    return ans


def tg_sample(sample):
    memo = {}
    return types.SimpleNamespace(input=to_tg(sample.input, memo), args=to_tg(tuple(sample.args), memo),
                                 kwargs=to_tg(dict(sample.kwargs), memo),
                                 process=_tg_version(sample.output_process_fn_grad))


def _tg_version(fn):
    return _rebind(fn) if _from_test_module(fn) else fn


def tg_call(op, tg_fn, s):
    """tapegrad's result on the converted sample ``s``: (result, None), or (None, how it refused)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return _call(tg_fn, s, _tg_version(op.gradcheck_wrapper)), None
        except AttributeError as e:
            if "has no attribute" in str(e) and ("tapegrad" in str(e) or "'Tensor'" in str(e)):
                raise Missing(str(e)) from None
            return None, f"raises AttributeError: {e}"
        except Exception as e:
            return None, f"raises {type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"


def tg_grads(tg_out, s, th):
    """tapegrad's vector-Jacobian product with torch's cotangents (a list), or the disagreement (a str)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tg_outs = [t for t in flatten(s.process(tg_out)) if isinstance(t, tapegrad.Tensor)]
        if len(tg_outs) != th.n_outs:
            return "outputs for the gradient differ in number"
        pairs = [tg_outs[k] for k in th.idx]
        if not all(t.requires_grad for t in pairs):
            return "an output does not require grad, torch's does"
        ins = _grad_leaves([s.input, s.args, s.kwargs])
        try:
            g = tapegrad.autograd.grad(pairs, ins, [to_tg(c, {}) for c in th.cots], allow_unused=True)
        except Exception as e:
            return f"backward raises {type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
    return [tapegrad.zeros_like(i) if x is None else x for x, i in zip(g, ins)]


def _up_cot(c):
    import torch
    return c.to(torch.complex128 if c.is_complex() else torch.float64)


# --- tapegrad against finite differences, float32 against float64 -------------------------------------------

FD_EPS = 1e-6                                 # torch's gradcheck defaults
FD_TOL = {"float64": dict(rtol=1e-3, atol=1e-5), "float32": dict(rtol=1e-3, atol=1e-4, scaled=True)}
FD_MAX_ELEMENTS = 200                         # beyond: derivatives along 4 random directions


def fd_check(op, tg_fn, sample64, th, tg_g, dtype_name):
    """None when tapegrad's gradients ``tg_g`` agree with central finite differences (float64) of tapegrad's
    ``<cotangents, op(sample)>``, else the disagreement. The leaves are perturbed in place (a view's storage too),
    as torch's gradcheck does."""
    tol = FD_TOL[dtype_name]
    s = tg_sample(sample64)
    leaves = _grad_leaves([s.input, s.args, s.kwargs])
    cots = [_np(_up_cot(c)) for c in th.cots]

    def loss():
        with tapegrad.no_grad():
            out, err = tg_call(op, tg_fn, s)
            if err:
                raise RuntimeError(f"finite differences: {err}")
            outs = [t for t in flatten(s.process(out)) if isinstance(t, tapegrad.Tensor)]
            return sum(float(np.vdot(c, _np(outs[k])).real) for c, k in zip(cots, th.idx))

    def slope(arr, where, step):
        orig = arr[where].copy()
        arr[where] = orig + FD_EPS * step
        up = loss()
        arr[where] = orig - FD_EPS * step
        down = loss()
        arr[where] = orig
        return (up - down) / (2 * FD_EPS)

    mine = [_np(g).astype(np.complex128 if np.iscomplexobj(_np(g)) else np.float64) for g in tg_g]
    arrays = [leaf._array for leaf in leaves]
    if sum(a.size for a in arrays) <= FD_MAX_ELEMENTS:
        for k, a in enumerate(arrays):
            fd = np.zeros(a.shape, np.complex128 if a.dtype.kind == "c" else np.float64)
            for i in np.ndindex(a.shape):
                fd[i] = slope(a, i, 1.0) + (1j * slope(a, i, 1j) if a.dtype.kind == "c" else 0)
            if not _close(mine[k], fd, tol):
                err = np.max(np.abs(mine[k] - fd), initial=0)
                return f"grad[{k}]: differs from finite differences (max abs err {err:.3g})"
        return None
    rng = np.random.default_rng(0)
    for _ in range(4):
        vs = [rng.standard_normal(a.shape) + (1j * rng.standard_normal(a.shape) if a.dtype.kind == "c" else 0)
              for a in arrays]
        whole = (Ellipsis,)
        for a, v in zip(arrays, vs):
            a[whole] += FD_EPS * v
        up = loss()
        for a, v in zip(arrays, vs):
            a[whole] -= 2 * FD_EPS * v
        down = loss()
        for a, v in zip(arrays, vs):
            a[whole] += FD_EPS * v
        fd = (up - down) / (2 * FD_EPS)
        ours = sum(float(np.vdot(g, v).real) for g, v in zip(mine, vs))
        if not _close(np.asarray(ours), np.asarray(fd), tol):
            return f"grad: a directional derivative {ours:.6g}, finite differences {fd:.6g}"
    return None


def as_accurate(tg, th32, th64, tol):
    """Whether tapegrad's float32 results lie within ``tol`` of torch's float64 ones (the sample upcast), or no
    farther from them than twice torch's own float32 results: float32 rounding, amplified where the op is
    ill-conditioned (logcumsumexp's gradient at x = 1e4, where a float32 ulp is 1e-3), is not a disagreement."""
    import torch
    a, b, c = flatten(tg), flatten(th32), flatten(th64)
    if not len(a) == len(b) == len(c):
        return False
    for x, y, z in zip(a, b, c):
        if not isinstance(y, torch.Tensor):
            if compare([x], [y], TOL["float32"], "") is not None:
                return False
            continue
        if not isinstance(x, tapegrad.Tensor) or tuple(x.shape) != tuple(y.shape) or _dtype_name(x) != _dtype_name(y):
            return False
        xa, ya, za = _np(x), _np(y), _np(z)
        if ya.dtype.kind not in "fc":
            if not np.array_equal(xa, ya):
                return False
            continue
        if _close(xa, za, tol):
            continue
        fin = np.isfinite(za)
        if not np.array_equal(xa[~fin], ya[~fin], equal_nan=True):
            return False
        with np.errstate(invalid="ignore"):
            err_tg = np.max(np.abs(xa[fin] - za[fin]), initial=0)
            err_th = np.max(np.abs(ya[fin] - za[fin]), initial=0)
        if not err_tg <= 2 * err_th:
            return False
    return True


def check_sample(op, tg_fn, sample, dtype_name, random_op):
    """None when tapegrad agrees with torch on this sample, else the disagreement ("skip": torch refuses it)."""
    tol = TOL_OVERRIDES.get(op_id(op), TOL[dtype_name])
    try:
        th = torch_answer(op, sample)
    except Exception:
        return "skip"                     # torch itself refuses this sample: nothing to compare
    s = tg_sample(sample)
    tg_out, err = tg_call(op, tg_fn, s)
    if err:
        return err
    ref = []

    def torch64():                        # torch's answer on the float32 sample upcast to float64 (once)
        if not ref:
            ref.append(torch_answer(op, upcast(sample), cots=th.cots and [_up_cot(c) for c in th.cots]))
        return ref[0]

    float32 = dtype_name == "float32" and not random_op
    bad = compare(tg_out, th.out, tol, "value", structure_only=random_op)
    if bad and not random_op:
        # gauge freedom (signs/phases of singular vectors and eigenvectors): torch's own processed outputs
        try:
            if compare(s.process(tg_out), sample.output_process_fn_grad(th.out), tol, "value") is None:
                bad = None
        except Exception:
            pass
    if bad and float32 and _safely(lambda: as_accurate(tg_out, th.out, torch64().out, tol)):
        bad = None
    if bad or th.idx is None:
        return bad
    tg_g = tg_grads(tg_out, s, th)
    if isinstance(tg_g, str):
        return tg_g
    untrusted = torch_grad_untrusted(op)
    if th.grads is None:
        bad = "torch can't differentiate this sample" if untrusted else None
    else:
        bad = compare(tg_g, th.grads, tol, "grad", structure_only=random_op)
        if bad and float32 and _safely(lambda: torch64().grads is not None
                                       and as_accurate(tg_g, th.grads, torch64().grads, tol)):
            bad = None
    if bad and untrusted and not random_op:     # the op_db disowns torch's gradient: finite differences decide
        fd_bad = fd_check(op, tg_fn, upcast(sample) if dtype_name == "float32" else sample, th, tg_g, dtype_name)
        bad = None if fd_bad is None else f"{bad}; {fd_bad} (the op_db {untrusted}s torch's test_fn_grad)"
    return bad


def _safely(check):
    try:
        return bool(check())
    except Exception:
        return False


def run_op(op, cap=SAMPLES_PER_DTYPE, verbose=False):
    import torch
    rid = op_id(op)
    rule = exclusion(op)
    if rule:
        return Result(rid, "excluded", rule)
    tg_fn = resolve(op)
    if tg_fn is None:
        return Result(rid, "missing")
    random_op = is_random(op) or uninitialized(op)
    res = Result(rid, "agree")
    supported = op.supported_dtypes("cpu")
    dtypes = [d for d in DTYPES if getattr(torch, d) in supported]
    if not dtypes:     # an op without float support (bitwise, integer-only): its first supported dtype
        dtypes = [str(d).split(".")[1] for d in sorted(supported, key=str)][:1]
    for dn in dtypes:
        try:
            samples = _samples(op, getattr(torch, dn), cap)
        except Exception:
            continue
        for k, s in enumerate(samples):
            try:
                bad = check_sample(op, tg_fn, s, dn if dn in TOL else "float64", random_op)
            except Missing as e:
                return Result(rid, "missing", str(e))
            except Inexpressible as e:
                res.inexpressible += 1
                res.details.append(f"{dn}#{k}: inexpressible ({e})")
                continue
            if bad == "skip":
                continue
            res.samples += 1
            if bad:
                res.details.append(f"{dn}#{k}: {bad}")
                if res.status == "agree":
                    res.status, res.reason = "disagree", f"{dn}#{k}: {bad}"
            elif verbose:
                res.details.append(f"{dn}#{k}: ok")
    if res.status == "disagree" and rid in KNOWN_EXCEPTIONS:
        res.status, res.reason = "known", KNOWN_EXCEPTIONS[rid]
    return res


def run_all(cap=SAMPLES_PER_DTYPE, only=None, verbose=False):
    import torch
    torch.set_num_threads(1)
    results = []
    for op in load_op_db():
        if only and op.name not in only and op_id(op) not in only:
            continue
        tapegrad.set_default_dtype(tapegrad.float32)
        torch.set_default_dtype(torch.float32)
        try:
            results.append(run_op(op, cap, verbose))
        except Inexpressible:
            raise
        except Exception as e:   # a failure of the comparison itself counts against tapegrad, visibly
            results.append(Result(op_id(op), "disagree", f"runner error {type(e).__name__}: {e}"[:160]))
    return results


def summary(results):
    by = {}
    for r in results:
        by.setdefault(r.status, []).append(r)
    lines = ["torch's op_db against tapegrad", ""]
    lines.append(f"{'ops':<12}{len(results):>5}")
    for st in ("agree", "disagree", "known", "missing", "excluded"):
        lines.append(f"{st:<12}{len(by.get(st, [])):>5}")
    inex = sum(r.inexpressible for r in results)
    lines.append(f"{'samples compared':<24}{sum(r.samples for r in results):>6}")
    lines.append(f"{'samples inexpressible':<24}{inex:>6}")
    for st in ("disagree", "known"):
        if by.get(st):
            lines += ["", f"{st}:"] + [f"  {r.id}: {r.reason}" for r in by[st]]
    if by.get("missing"):
        lines += ["", "missing:", "  " + " ".join(r.id for r in by["missing"])]
    if by.get("excluded"):
        lines += ["", "excluded:"]
        for rule, why in EXCLUDED_RULES.items():
            ids = [r.id for r in by["excluded"] if r.reason == rule]
            if ids:
                lines.append(f"  {rule} ({why}): {' '.join(ids)}")
    if inex:
        lines += ["", "samples with arguments tapegrad can't express:"]
        lines += [f"  {r.id}: {r.inexpressible}" for r in results if r.inexpressible]
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("ops", nargs="*", help="only these OpInfos (name or name.variant)")
    p.add_argument("--all", action="store_true", help="every sample (default: the first few per dtype)")
    p.add_argument("--cap", type=int, default=SAMPLES_PER_DTYPE)
    p.add_argument("-v", "--verbose", action="store_true", help="each sample's verdict")
    a = p.parse_args(argv)
    results = run_all(None if a.all else a.cap, set(a.ops) or None, a.verbose)
    print(summary(results))
    if a.verbose or a.ops:
        for r in results:
            for d in r.details:
                print(f"{r.id} {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
