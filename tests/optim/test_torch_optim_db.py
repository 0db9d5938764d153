"""PyTorch's own optimizer database (``torch.testing._internal.common_optimizers.optim_db``) run against tapegrad:
every optimizer with every configuration torch tests (weight decay, maximize, amsgrad, momentum and Nesterov,
foreach, tensor learning rates...), five steps on the same small problem in float64 and float32, the parameters
compared with torch's. Configurations torch refuses on the CPU (fused, capturable) are skipped."""

import warnings

import numpy as np
import pytest

import tapegrad

try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch as _torch
        from torch.testing._internal.common_optimizers import optim_db as _OPTIM_DB
except Exception:  # noqa: BLE001 - torch (or its test package) missing: the tests skip through the fixture
    _OPTIM_DB = []

OPTIMIZERS = [o.optim_cls.__name__ for o in _OPTIM_DB]
TOL = {"float64": 1e-10, "float32": 1e-5}
# Configurations compared with a wider tolerance, with the reason.
LOOSER = {("LBFGS", "Tensor lr"): (1e-3, "torch's line search multiplies the float32 lr tensor in tensor "
                                        "arithmetic; tapegrad reads its value as a number"),
          ("Muon", "Tensor lr"): (1e-8, "the lr arithmetic is rounded to float32 as torch's, but torch's "
                                       "differs by a few 1e-10 (not traced further)")}


def _conv(v):
    if isinstance(v, _torch.Tensor):
        return tapegrad.tensor(v.detach().numpy().copy())
    if isinstance(v, (list, tuple)):
        return type(v)(_conv(x) for x in v)
    if isinstance(v, dict):
        return {k: _conv(x) for k, x in v.items()}
    return v


def _run(T, cls, kwargs, dtype, closure_needed, steps=5):
    rng = np.random.default_rng(0)
    w = T.tensor(rng.standard_normal((4, 3)), dtype=dtype, requires_grad=True)
    b = T.tensor(rng.standard_normal(3), dtype=dtype, requires_grad=True)
    x = T.tensor(rng.standard_normal((5, 4)), dtype=dtype)
    opt = cls([w] if cls.__name__ == "Muon" else [w, b], **kwargs)      # (Muon takes 2-d parameters only)

    def closure():
        opt.zero_grad()
        loss = ((x @ w + b) ** 2).sum() + (x @ w).sin().sum()
        loss.backward()
        return loss
    for _ in range(steps):
        if closure_needed:
            opt.step(closure)
        else:
            closure()
            opt.step()
    return w.detach().numpy().copy(), b.detach().numpy().copy()


SKIPPED = {"SparseAdam": "it takes sparse gradients only (tests/optim/test_optim.py runs it on an embedding table's sparse rows)"}


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_configurations_agree_with_torch(torch, name):
    if name in SKIPPED:
        pytest.skip(SKIPPED[name])
    info = next(o for o in _OPTIM_DB if o.optim_cls.__name__ == name)
    ours_cls = getattr(tapegrad.optim, name)
    compared, failures = 0, []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for config in info.optim_inputs_func(device="cpu"):
            for dt in TOL:
                try:
                    theirs = _run(torch, info.optim_cls, dict(config.kwargs), getattr(torch, dt),
                                  info.step_requires_closure)
                except Exception:  # noqa: BLE001 - torch refuses this configuration on the CPU
                    continue
                ours = _run(tapegrad, ours_cls, _conv(dict(config.kwargs)), getattr(tapegrad, dt),
                            info.step_requires_closure)
                tol = LOOSER[name, config.desc][0] if (name, config.desc) in LOOSER else TOL[dt]
                compared += 1
                for o, t in zip(ours, theirs):
                    if not np.allclose(o, t, rtol=tol, atol=tol):
                        failures.append(f"{config.desc} {config.kwargs} {dt}: max err {np.abs(o - t).max():.3g}")
    assert not failures, "\n".join(failures)
    assert compared


def _conv_keep(v, memo):
    """``_conv`` keeping identity (the same torch tensor twice is the same tapegrad tensor) and parameters,
    gradients and sparse layouts."""
    if isinstance(v, _torch.Tensor):
        if id(v) not in memo:
            if v.layout != _torch.strided:
                t = tapegrad.sparse_coo_tensor(tapegrad.tensor(v._indices().numpy()),
                                               tapegrad.tensor(v._values().detach().numpy()), tuple(v.shape))
            else:
                t = tapegrad.tensor(v.detach().numpy().copy())
            if isinstance(v, _torch.nn.Parameter):
                t = tapegrad.nn.Parameter(t)
            else:
                t.requires_grad_(v.requires_grad)
            if v.grad is not None:
                t.grad = tapegrad.tensor(v.grad.numpy().copy())
            memo[id(v)] = (t, v)
        return memo[id(v)][0]
    if isinstance(v, (list, tuple)):
        return type(v)(_conv_keep(x, memo) for x in v)
    if isinstance(v, dict):
        return {k: _conv_keep(x, memo) for k, x in v.items()}
    return v


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_error_inputs_agree_with_torch(torch, name):
    """torch's optim_error_inputs: the bad hyper-parameters and parameter lists each optimizer refuses (or warns
    about), at construction or at the step, with torch's exception type and message."""
    import re
    info = next(o for o in _OPTIM_DB if o.optim_cls.__name__ == name)
    if info.optim_error_inputs_func is None:
        pytest.skip("torch lists no error inputs for it")
    failures = []
    for err in info.optim_error_inputs_func(device="cpu", dtype=torch.float32):
        given, memo = err.optimizer_error_input, {}
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            try:
                params = _conv_keep(given.params, memo) if given.params is not None \
                    else [tapegrad.zeros(2, requires_grad=True)]
                opt = getattr(tapegrad.optim, name)(params, **_conv_keep(given.kwargs, memo))
                if err.error_on.name == "STEP_ERROR":
                    opt.step()
                got = None
            except Exception as e:  # noqa: BLE001 - the exception is what is compared
                got = e
        if got is None or not isinstance(got, err.error_type) or not re.search(err.error_regex, str(got)):
            failures.append(f"{given.desc}: expected {err.error_type.__name__} matching {err.error_regex!r}, got "
                            f"{type(got).__name__ if got is not None else 'nothing'}: {got}")
    assert not failures, "\n".join(failures)
