"""Every ``nn`` module of PyTorch's module database, compiled: ``tapegrad.compile(module)`` gives the eager module's
outputs, gradients (inputs and parameters) and buffers (running statistics), on the capturing call and on two
replays, for torch's sample inputs (float64 and float32, training and eval). Eager tapegrad is checked against
torch on the same samples in tests/nn/test_torch_module_db.py, so compiled agrees with torch too."""

import numpy as np
import pytest

import tapegrad
from nn.test_torch_module_db import _MODULE_DB, KNOWN, _flat, _to_tg, module_samples
from ops import torch_op_db as R

MODULES = sorted({m.module_cls.__name__ for m in _MODULE_DB})
SAMPLES_PER_MODE = 3
CALLS = 3          # the capture, then two replays (a buffer the replay forgot to update shows in the second)


def _run(torch, info, sample, dtype_name, training, compiled):
    """The module's outputs, gradients and buffers after each of CALLS calls (eager or compiled)."""
    ci, fi = sample.constructor_input, sample.forward_input
    torch.manual_seed(0)
    theirs = info.module_cls(*ci.args, **ci.kwargs).to(getattr(torch, dtype_name))
    theirs(*fi.args, **fi.kwargs)       # (a lazy module's parameters take their shapes)
    memo = {}
    ours = getattr(tapegrad.nn, info.module_cls.__name__)(*_to_tg(ci.args, memo), **_to_tg(ci.kwargs, memo))
    ours = ours.to(getattr(tapegrad, dtype_name))
    ours.train(training)
    ours.load_state_dict({k: R.to_tg(v.detach(), {}) for k, v in theirs.state_dict().items()})
    fn = tapegrad.compile(ours) if compiled else ours
    results = []
    for call in range(CALLS):
        memo = {}
        fa, fk = _to_tg(fi.args, memo), _to_tg(fi.kwargs, memo)
        tapegrad.manual_seed(1 + call)
        outs = [t for t in _flat(fn(*fa, **fk)) if isinstance(t, tapegrad.Tensor)]
        got = [t.detach().numpy().copy() for t in outs]
        diff = [t for t in outs if t.requires_grad]
        leaves = [t for t in [*_flat(fa), *ours.parameters()] if isinstance(t, tapegrad.Tensor) and t.requires_grad]
        if diff and leaves:
            g = np.random.default_rng(2)
            cots = [tapegrad.tensor(g.standard_normal(t.shape)).to(t.dtype) for t in diff]
            got += [None if a is None else a.numpy().copy()
                    for a in tapegrad.autograd.grad(diff, leaves, cots, allow_unused=True)]
        got += [b.numpy().copy() for b in ours.buffers()]
        results.append(got)
    return results


@pytest.mark.parametrize("name", MODULES)
def test_compiled_module_equals_eager(torch, name):
    if name in KNOWN:
        pytest.skip(KNOWN[name])
    info = next(m for m in _MODULE_DB if m.module_cls.__name__ == name)
    compared, failures = 0, []
    for dtype_name, training, k, sample in module_samples(torch, info, SAMPLES_PER_MODE):
        try:
            eager = _run(torch, info, sample, dtype_name, training, False)
        except Exception:  # noqa: BLE001 - a sample eager refuses (torch's error): nothing to compare
            continue
        compared += 1
        where = f"{dtype_name} {'train' if training else 'eval'} #{k} {sample.desc}"
        try:
            comp = _run(torch, info, sample, dtype_name, training, True)
        except Exception as e:  # noqa: BLE001 - reported with the sample
            failures.append(f"{where}: raised {type(e).__name__}: {e}")
            continue
        for call, (a, b) in enumerate(zip(comp, eager)):
            same = len(a) == len(b) and all(
                (x is None and y is None) or (x is not None and y is not None and x.shape == y.shape
                                              and x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True))
                for x, y in zip(a, b))
            if not same:
                failures.append(f"{where}: call {call} differs from eager")
    assert not failures, "\n".join(failures)
    assert compared, "no sample compared"
