"""PyTorch's op database's bad-input cases against tapegrad: bad input gets torch's error.

Each OpInfo of torch's ``op_db`` ships ``op.error_inputs(device)``: ``ErrorInput(sample_input, error_type,
error_regex)`` cases of bad input and the error torch raises. For every such case of an op tapegrad has (the op
and the conversion of its sample: ``tests/ops/torch_op_db.py``'s resolve / tg_sample / exclusion), torch's actual
exception is the oracle: tapegrad must raise too, an exception of torch's class (or of the ErrorInput's
error_type), with a message that matches the ErrorInput's error_regex. The cases left different are in KNOWN,
each with its reason; nothing else may differ, and nothing in KNOWN may agree.

    python tests/ops/test_torch_op_db_errors.py      # counts, and every case that differs (KNOWN ones marked)
"""

from __future__ import annotations

import os
import re
import sys
import warnings

if __name__ == "__main__":   # the CLI: the worktree's tapegrad and tests/ops first, as tests/conftest.py does
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:0] = [os.path.join(here, "..", "..", "src"), here]
    import torch_op_db as R
else:
    import pytest
    pytest.importorskip("torch")
    pytest.importorskip("expecttest")           # torch's op_db imports it
    from ops import torch_op_db as R  # noqa: E402

_REPR = "the message names a dtype or layout as tapegrad prints it (tapegrad.int64, tapegrad.sparse_coo), not " \
        "torch.int64, by design (README 'What is different'); the words are torch's otherwise"
_UNBOUND = "Tensor.__radd__(1, 2) called unbound with an int self: a Python method does not check its self's type " \
           "as torch's C descriptor does (a reflected operator only ever reaches it with a Tensor self)"
_ALIAS = "the sample's out= is a view of another argument's storage (ind[:1] / ind[1:], z[:2] of z): " \
         "the op_db runner copies each tensor's storage separately, so the aliasing does not reach tapegrad " \
         "(tapegrad's own overlap checks: tests/ops/test_bad_input_errors.py::test_out_overlap_errors)"

# case id ("op_id[i]": the i-th ErrorInput of that OpInfo) -> why tapegrad's error differs from torch's
KNOWN: dict[str, str] = {
    **{f"__{op}__[{i}]": _UNBOUND for op, n in (("radd", 2), ("rmul", 2), ("rand", 1), ("ror", 1), ("rxor", 1))
       for i in range(n)},
    **{f"signal.windows.{w}[{i}]": _REPR for w in ("hamming", "hann", "bartlett", "blackman", "cosine", "exponential",
                                                    "gaussian", "kaiser", "general_cosine", "general_hamming",
                                                    "nuttall")
       for i in range(1, 5)},
    "gather[7]": _ALIAS, "cat[8]": _ALIAS,
    "kthvalue[0]": "kthvalue's out= (values, indices) has no check that values overlaps the input: tapegrad computes "
                   "before writing, so the answer is the unaliased one; torch refuses",
    **{f"take[{i}]": "tapegrad.take has no out= argument (a TypeError for it)" for i in range(3)},
}


def case_id(op, i):
    return f"{R.op_id(op)}[{i}]"


def _raised(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as e:         # noqa: BLE001 -- every error is the answer here
        return e
    return None


def verdict(ei, th, tg):
    """'ok', 'same message' (ok, and torch's very words), or what differs."""
    if tg is None:
        return "no error"
    if not (isinstance(tg, type(th)) or isinstance(tg, ei.error_type)):
        return "type differs"
    if re.search(ei.error_regex, str(tg)) is None:
        return "message differs"
    return "same message" if str(tg) == str(th) else "ok"


def scan():
    """{case id: (verdict, tapegrad's error, torch's error)} for every expressible case where torch raises."""
    out = {}
    for op in R.load_op_db():
        if R.exclusion(op) or op.error_inputs_func is None:
            continue
        fn = R.resolve(op)
        if fn is None:
            continue
        try:
            cases = list(op.error_inputs("cpu"))
        except Exception:          # noqa: BLE001 -- an op_db generator that needs what this torch build lacks
            continue
        for i, ei in enumerate(cases):
            s = ei.sample_input
            try:
                ts = R.tg_sample(s)
            except Exception:      # noqa: BLE001 -- inexpressible: a meta tensor, a 65-d one, a sparse layout
                continue
            th = _raised(lambda: R._call(op.op, s, op.gradcheck_wrapper))
            if th is None:         # torch (this build) accepts it after all: nothing to match
                continue
            tg = _raised(lambda: R._call(fn, ts, R._tg_version(op.gradcheck_wrapper)))
            out[case_id(op, i)] = (verdict(ei, th, tg), tg, th)
    return out


def _show(e):
    return "no error" if e is None else f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"


if __name__ != "__main__":
    _SCAN = {}

    def _results():
        if not _SCAN:
            _SCAN.update(scan())
        return _SCAN

    def test_bad_input_gets_torchs_error():
        res = _results()
        assert len(res) > 600, f"only {len(res)} cases: the op_db scan lost its cases"
        bad = {k: v for k, v in res.items() if v[0] not in ("ok", "same message") and k not in KNOWN}
        assert not bad, "\n".join(f"{k}: {v[0]}\n   tapegrad: {_show(v[1])}\n   torch:    {_show(v[2])}"
                                  for k, v in bad.items())

    def test_known_cases_still_differ():
        """An entry of KNOWN that agrees again must leave the list (and every entry names a real case)."""
        res = _results()
        stale = [k for k in KNOWN if k not in res or res[k][0] in ("ok", "same message")]
        assert not stale, f"remove from KNOWN (they agree now, or are no cases): {stale}"

    def test_verdict_is_not_vacuous():
        """The verdict tells a missing error, a wrong class and a wrong message apart."""
        import torch
        ei = type("EI", (), {"error_type": RuntimeError, "error_regex": "must be non-negative"})()
        th = RuntimeError("pad must be non-negative, but got pad: -1")
        assert verdict(ei, th, None) == "no error"
        assert verdict(ei, th, ValueError("pad must be non-negative, but got pad: -1")) == "type differs"
        assert verdict(ei, th, RuntimeError("pad should be at most half")) == "message differs"
        assert verdict(ei, th, RuntimeError("pad must be non-negative, but got pad: -1")) == "same message"
        assert torch.__version__.startswith("2.13")


if __name__ == "__main__":
    from collections import Counter
    res = scan()
    print(Counter(v[0] for v in res.values()))
    for k, (v, tg, th) in res.items():
        if v not in ("ok", "same message"):
            print(f"--- {k}: {v}{'  (KNOWN)' if k in KNOWN else ''}\n   tg: {_show(tg)}\n   th: {_show(th)}")
