"""PyTorch's own module database (``torch.testing._internal.common_modules.module_db``) run against tapegrad.

Each ModuleInfo gives constructor and forward inputs for one ``nn`` module class (114 of them: layers, losses,
recurrent cells, transformers). For every sample (float64 and float32, training and eval) the module is built in
torch and in tapegrad with the same arguments, torch's ``state_dict`` is loaded into tapegrad's, and the outputs
and the gradients (inputs and parameters, one cotangent per floating output) are compared. Where torch itself
refuses a sample, there is nothing to compare. The ops under the modules are checked one by one in
tests/ops/test_torch_op_db.py."""

import warnings

import numpy as np
import pytest

import tapegrad

try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch as _torch
        from torch.testing._internal.common_modules import module_db as _MODULE_DB
except Exception:  # noqa: BLE001 - torch (or its test package) missing: the tests skip through the fixture
    _MODULE_DB = []

from ops import torch_op_db as R  # noqa: E402

MODULES = sorted({m.module_cls.__name__ for m in _MODULE_DB})
SAMPLES_PER_MODE = 6
TOL = {"float64": 1e-7, "float32": 1e-4}

# Samples left out, with the reason.
KNOWN = {
    "TransformerEncoder": "its constructor takes a torch TransformerEncoderLayer instance, which the test cannot "
                          "turn into tapegrad's (tests/nn covers nn.TransformerEncoder against torch)",
}


def _flat(o):
    if isinstance(o, (list, tuple)):
        for x in o:
            yield from _flat(x)
    elif isinstance(o, dict):
        for x in o.values():
            yield from _flat(x)
    else:
        yield o


def _to_tg(obj, memo):
    """torch's sample arguments as tapegrad's: tensors by the op_db runner's conversion, torch functions (an
    ``activation=F.gelu``) as tapegrad's function of the same name."""
    if callable(obj) and not isinstance(obj, _torch.Tensor) and getattr(obj, "__module__", "") \
            and str(obj.__module__).startswith("torch"):
        fn = getattr(tapegrad.nn.functional, obj.__name__, None) or getattr(tapegrad, obj.__name__, None)
        if fn is not None:
            return fn
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_tg(x, memo) for x in obj)
    if isinstance(obj, dict):
        return {k: _to_tg(v, memo) for k, v in obj.items()}
    return R.to_tg(obj, memo)


def _differs(ours, theirs, tol):
    a, b = np.asarray(ours), np.asarray(theirs)
    if a.shape != b.shape:
        return f"shape {a.shape}, torch {b.shape}"
    if a.dtype != b.dtype:
        return f"dtype {a.dtype}, torch {b.dtype}"
    if not np.allclose(a, b, rtol=tol, atol=tol, equal_nan=True):
        return f"values differ (max abs err {np.nanmax(np.abs(a.astype(np.float64) - b.astype(np.float64))):.3g})"
    return None


def _check(info, sample, dtype_name, training):
    """None when tapegrad agrees with torch on one ModuleInput, "skip" when torch refuses it, else the
    difference."""
    torch = _torch
    ci, fi = sample.constructor_input, sample.forward_input
    tol = TOL[dtype_name]
    try:
        torch.manual_seed(0)
        theirs = info.module_cls(*ci.args, **ci.kwargs).to(getattr(torch, dtype_name))
        theirs.train(training)
        torch.manual_seed(1)
        out_t = theirs(*fi.args, **fi.kwargs)
    except Exception:  # noqa: BLE001 - torch refuses the sample
        return "skip"
    memo = {}
    tapegrad.manual_seed(0)
    ours = getattr(tapegrad.nn, info.module_cls.__name__)(*_to_tg(ci.args, memo), **_to_tg(ci.kwargs, memo))
    ours = ours.to(getattr(tapegrad, dtype_name))
    ours.train(training)
    ours.load_state_dict({k: R.to_tg(v.detach(), {}) for k, v in theirs.state_dict().items()})
    fa, fk = _to_tg(fi.args, memo), _to_tg(fi.kwargs, memo)
    tapegrad.manual_seed(1)
    out_g = ours(*fa, **fk)
    ot = [t for t in _flat(out_t) if isinstance(t, torch.Tensor)]
    og = [t for t in _flat(out_g) if isinstance(t, tapegrad.Tensor)]
    if len(ot) != len(og):
        return f"{len(og)} tensor outputs, torch {len(ot)}"
    for k, (a, b) in enumerate(zip(og, ot)):
        bad = _differs(a.detach().numpy(), b.detach().numpy(), tol)
        if bad:
            return f"output {k}: {bad}"
    pairs = [(a, b) for a, b in zip(og, ot) if b.requires_grad and (b.is_floating_point() or b.is_complex())]
    if not pairs:
        return None
    gen = torch.Generator().manual_seed(2)
    cots = [torch.randn(b.shape, dtype=b.dtype, generator=gen) for _, b in pairs]
    leaves_t = [t for t in [*_flat(fi.args), *theirs.parameters()] if isinstance(t, torch.Tensor) and t.requires_grad]
    leaves_g = [t for t in [*_flat(fa), *ours.parameters()] if isinstance(t, tapegrad.Tensor) and t.requires_grad]
    if len(leaves_t) != len(leaves_g):
        return f"{len(leaves_g)} leaves requiring grad, torch {len(leaves_t)}"
    gt = torch.autograd.grad([b for _, b in pairs], leaves_t, cots, allow_unused=True)
    gg = tapegrad.autograd.grad([a for a, _ in pairs], leaves_g, [R.to_tg(c, {}) for c in cots], allow_unused=True)
    for k, (a, b) in enumerate(zip(gg, gt)):
        if (a is None) != (b is None):
            return f"gradient {k}: {'None' if a is None else 'a tensor'}, torch {'None' if b is None else 'a tensor'}"
        if a is not None:
            bad = _differs(a.numpy(), b.numpy(), tol * 10)
            if bad:
                return f"gradient {k}: {bad}"
    return None


def module_samples(torch, info, per_mode=SAMPLES_PER_MODE):
    """(dtype name, training, k, sample): the first ``per_mode`` of torch's ModuleInputs of ``info`` that have a
    forward input, in float64 and float32 where the module supports them, training and eval (warnings silenced
    while they are made and used)."""
    for dtype_name in TOL:
        if getattr(torch, dtype_name) not in info.supported_dtypes("cpu"):
            continue
        for training in (True, False):
            torch.manual_seed(0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                samples = info.module_inputs_func(info, device="cpu", dtype=getattr(torch, dtype_name),
                                                  requires_grad=True, training=training)
                for k, sample in enumerate(samples[:per_mode]):
                    if sample.forward_input is not None:
                        yield dtype_name, training, k, sample


@pytest.mark.parametrize("name", MODULES)
def test_module_agrees_with_torch(torch, name):
    if name in KNOWN:
        pytest.skip(KNOWN[name])
    info = next(m for m in _MODULE_DB if m.module_cls.__name__ == name)
    compared, failures = 0, []
    for dtype_name, training, k, sample in module_samples(torch, info):
        bad = _check(info, sample, dtype_name, training)
        if bad == "skip":
            continue
        compared += 1
        if bad:
            failures.append(f"{dtype_name} {'train' if training else 'eval'} #{k} {sample.desc}: {bad}")
    assert not failures, "\n".join(failures)
    assert compared, "no sample compared"


MODULES_WITH_ERRORS = sorted({m.module_cls.__name__ for m in _MODULE_DB if m.module_error_inputs_func is not None})


@pytest.mark.parametrize("name", MODULES_WITH_ERRORS)
def test_module_error_inputs_agree_with_torch(torch, name):
    """torch's module_error_inputs: bad constructor arguments (types, sizes) and bad forward inputs (dtypes,
    sizes, eps), refused with torch's exception type and a message matching torch's."""
    import re
    info = next(m for m in _MODULE_DB if m.module_cls.__name__ == name)
    failures = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        errors = info.module_error_inputs_func(info, device="cpu", dtype=torch.float32, requires_grad=False,
                                               training=True)
        for err in errors:
            given, memo = err.module_error_input, {}
            try:
                ci, fi = given.constructor_input, given.forward_input
                module = getattr(tapegrad.nn, name)(*_to_tg(ci.args, memo), **_to_tg(ci.kwargs, memo))
                if fi is not None:
                    module(*_to_tg(fi.args, memo), **_to_tg(fi.kwargs, memo))
                got = None
            except Exception as e:  # noqa: BLE001 - the exception is what is compared
                got = e
            if got is None or not isinstance(got, err.error_type) or not re.search(err.error_regex, str(got)):
                failures.append(f"{err.error_on.name}: expected {err.error_type.__name__} matching "
                                f"{err.error_regex!r}, got {type(got).__name__ if got is not None else 'nothing'}: "
                                f"{got}")
    assert not failures, "\n".join(failures)
