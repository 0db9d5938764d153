"""Arguments of the wrong type get torch's TypeError, not an error from inside tapegrad.

torch's argument parser checks every argument's type before an op runs: ``torch.exp(None)`` is
``TypeError: exp(): argument 'input' (position 1) must be Tensor, not NoneType``. This scan takes one sample of
every op of torch's ``op_db`` that tapegrad has (``tests/ops/torch_op_db.py``: resolve / tg_sample), as a function
and, where torch has one, as a Tensor method, and calls torch and tapegrad with

- each tensor argument (the input, positional and keyword arguments) replaced by None, a bool, a str and a list;
- each positional int replaced by a str and a float (a dim, a size: a number operand gets torch's error too);
- the keyword arguments ``dim``, ``keepdim``, ``dtype`` and ``size``/``shape`` given a wrong type.

Where torch raises, tapegrad must raise an exception of torch's class; where torch's message is its parser's
``name(): argument 'x' (position n) must be T, not U``, tapegrad's must be the same words; where it is the parser's
``name() received an invalid combination of arguments`` (an op with several overloads: the list of overloads is
torch's), tapegrad's must start with ``name()``. Where torch accepts the call, so must tapegrad. The cases left
different are in KNOWN, each with its reason; nothing else may differ.

    python tests/ops/test_arg_types.py      # counts, and every case that differs (KNOWN ones marked)
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

import tapegrad  # noqa: E402

TENSOR_SUBSTITUTES = (None, True, "a", [1.0])
INT_SUBSTITUTES = ("a", 1.5)
KWARG_SUBSTITUTES = {"dim": ("a", 1.5), "keepdim": (None, "a"), "dtype": ("a", 1), "size": ("a", 2.5),
                     "shape": ("a", 2.5)}

PARSER_MSG = re.compile(r"^(\w+)\(\): argument '\w+' (\(position \d+\) )?must be [\w. ]+, not \w+$")
OVERLOAD_MSG = re.compile(r"^(\w+)\(\) received an invalid combination of arguments")

# Why the cases left differ, each reason with the ops ("op_db id:fn" or ":method") whose differing cases it covers.
_BODY = ("the argument fails inside tapegrad before any check names it: in the function's own code (reading its "
         "shape or array) on a path with no except clause to turn that into torch's TypeError (no with_aliases, out= "
         "or autocast wrapper, not inside Function.apply: a wrapper would cost every call, ~0.3 us measured on "
         "F.relu), or in a parameter _argtypes' name rules do not classify (clamp_min's min, narrow's start)")
_ACCEPTS = ("tapegrad accepts what torch's parser refuses (a float where an int is needed, a number or a list for a "
            "tensor): refusing it takes a check on the success path")
_TORCH_PY = ("torch's function is Python code that fails on the argument with an AttributeError ('list' object has no "
             "attribute 'size'); tapegrad raises a TypeError that names the argument")
_NAMES = ("torch's message names the internal function or parameter its Python code calls (cross_entropy_loss(), "
          "_lu_with_info(), log_sigmoid(), the special functions' 'x', ormqr's 'input2') or a name of its own "
          "signature (expand's 'size', lstsq's 'b'); tapegrad names the public function and its parameter as "
          "tapegrad's signature has it")
_REFLECTED = ("Tensor.__radd__(t, x) called directly with a non-number: torch's returns NotImplemented (Python then "
              "tries the other operand); tapegrad's reflected operator raises")
_OPERATORS = ("an operator's dunder called directly (Tensor.__rand__(None, ...), __getitem__ with a list self): "
              "operators keep Python's error by design (_argtypes stops at a dunder frame)")
_WINDOWS = ("torch.signal.windows check their arguments in Python and raise ValueError; tapegrad raises the "
            "parser-style TypeError")
_KNOWN_BY_REASON = (
    (_BODY, """
        _chunk_cat:fn _segment_reduce.lengths:fn _segment_reduce.offsets:fn _unsafe_masked_index:fn
        _unsafe_masked_index_put_accumulate:fn arange:fn as_strided_scatter:method atleast_1d:fn atleast_2d:fn
        atleast_3d:fn cdist:fn cdouble:fn cfloat:fn clamp_max:fn clamp_max:method clamp_min:fn
        clamp_min:method diagonal_scatter:method dist:fn dist:method gather:fn gather:method grid_sampler_2d:fn
        grid_sampler_3d:fn histogram:fn histogram:method index_add:fn index_add:method index_copy:fn
        index_copy:method index_fill:fn index_fill:method index_put:method index_select:fn index_select:method
        isin:fn linalg.diagonal:fn linalg.ldl_solve:fn linalg.pinv.singular:fn linalg.vander:fn
        linspace.tensor_overload:fn linspace:fn logspace.tensor_overload:fn logspace:fn lu_solve:fn
        masked_fill:method masked_scatter:method matrix_exp:fn mvlgamma.mvlgamma_p_1:fn mvlgamma.mvlgamma_p_1:method
        mvlgamma.mvlgamma_p_3:fn mvlgamma.mvlgamma_p_3:method mvlgamma.mvlgamma_p_5:fn mvlgamma.mvlgamma_p_5:method
        narrow:fn narrow:method narrow_copy:fn narrow_copy:method native_group_norm:fn
        nn.functional.adaptive_max_pool1d:fn nn.functional.avg_pool2d:fn nn.functional.batch_norm:fn
        nn.functional.bilinear:fn nn.functional.cosine_embedding_loss:fn nn.functional.cross_entropy:fn
        nn.functional.ctc_loss:fn nn.functional.embedding:fn nn.functional.gaussian_nll_loss:fn
        nn.functional.group_norm:fn nn.functional.instance_norm:fn nn.functional.kl_div:fn
        nn.functional.layer_norm:fn nn.functional.local_response_norm:fn nn.functional.max_pool1d:fn
        nn.functional.max_pool2d:fn nn.functional.max_unpool2d.grad:fn nn.functional.max_unpool2d:fn
        nn.functional.max_unpool3d.grad:fn nn.functional.max_unpool3d:fn nn.functional.multi_margin_loss:fn
        nn.functional.multilabel_margin_loss:fn nn.functional.multilabel_soft_margin_loss:fn
        nn.functional.nll_loss:fn nn.functional.pad.circular:fn
        nn.functional.pad.constant:fn nn.functional.pad.reflect:fn nn.functional.pad.replicate:fn
        nn.functional.pad.replicate_negative:fn nn.functional.poisson_nll_loss:fn nn.functional.rms_norm:fn
        nn.functional.soft_margin_loss:fn nn.functional.softmin.with_dtype:fn nn.functional.softmin:fn
        nn.functional.unfold:fn
        nonzero_static:method put:fn put:method renorm:fn renorm:method roll:method scatter:fn scatter:method
        scatter_add:fn scatter_add:method scatter_reduce.amax:fn scatter_reduce.amax:method scatter_reduce.amin:fn
        scatter_reduce.amin:method scatter_reduce.mean:fn scatter_reduce.mean:method scatter_reduce.prod:fn
        scatter_reduce.prod:method scatter_reduce.sum:fn scatter_reduce.sum:method slice_scatter:fn
        slice_scatter:method split.list_args:fn split:fn split:method take:fn take:method take_along_dim:fn
        take_along_dim:method tensor_split:fn tensor_split:method trapz:fn triangular_solve:fn tril_indices:fn
        triu_indices:fn unfold:fn unfold:method unfold_copy:fn unique:fn unique:method unique_consecutive:fn
        unique_consecutive:method unsafe_split:fn unsafe_split:method where:fn where:method"""),
    (_ACCEPTS, """
        __radd__:fn __rand__:fn __rmul__:fn __ror__:fn __rxor__:fn _native_batch_norm_legit:fn alias_copy:fn
        bucketize:fn chunk:fn chunk:method cumulative_trapezoid:fn eq:fn eq:method ge:fn ge:method gt:fn gt:method
        isin:fn kron:fn kron:method kthvalue:fn kthvalue:method le:fn le:method linalg.matrix_power:fn
        linalg.norm.subgradients_at_zero:fn linalg.norm:fn linalg.vecdot:fn log_softmax.with_dtype:fn
        log_softmax.with_dtype:method lt:fn lt:method masked_fill:fn masked_fill:method masked_scatter:fn
        masked_scatter:method max.binary:fn max.binary:method min.binary:fn min.binary:method
        mvlgamma.mvlgamma_p_1:fn mvlgamma.mvlgamma_p_1:method mvlgamma.mvlgamma_p_3:fn mvlgamma.mvlgamma_p_3:method
        mvlgamma.mvlgamma_p_5:fn mvlgamma.mvlgamma_p_5:method narrow:fn narrow:method narrow_copy:fn
        narrow_copy:method native_batch_norm:fn ne:fn ne:method nn.functional.avg_pool2d:fn
        nn.functional.batch_norm:fn nn.functional.bilinear:fn nn.functional.cosine_embedding_loss:fn
        nn.functional.gaussian_nll_loss:fn nn.functional.group_norm:fn nn.functional.hinge_embedding_loss:fn
        nn.functional.instance_norm:fn nn.functional.soft_margin_loss:fn nn.functional.softmin.with_dtype:fn
        renorm:fn renorm:method resolve_conj:fn
        resolve_neg:fn scatter:fn scatter:method scatter_add:fn scatter_add:method scatter_reduce.amax:fn
        scatter_reduce.amax:method scatter_reduce.amin:fn scatter_reduce.amin:method scatter_reduce.mean:fn
        scatter_reduce.mean:method scatter_reduce.prod:fn scatter_reduce.prod:method scatter_reduce.sum:fn
        scatter_reduce.sum:method searchsorted:fn select:fn select:method select_scatter:fn select_scatter:method
        softmax.with_dtype:fn softmax.with_dtype:method special.chebyshev_polynomial_t:fn
        special.chebyshev_polynomial_u:fn special.chebyshev_polynomial_v:fn special.chebyshev_polynomial_w:fn
        special.hermite_polynomial_h:fn special.hermite_polynomial_he:fn special.laguerre_polynomial_l:fn
        special.legendre_polynomial_p:fn special.shifted_chebyshev_polynomial_t:fn
        special.shifted_chebyshev_polynomial_u:fn special.shifted_chebyshev_polynomial_v:fn
        special.shifted_chebyshev_polynomial_w:fn special.zeta:fn split:fn split:method tensor_split:fn
        tensor_split:method topk:fn topk:method trapezoid:fn trapz:fn tril_indices:fn triu_indices:fn unfold:fn
        unfold:method unfold_copy:fn unsafe_chunk:fn unsafe_chunk:method unsafe_split:fn unsafe_split:method
        where:fn where:method"""),
    (_TORCH_PY, """
        masked.logaddexp:fn nn.functional.adaptive_avg_pool3d:fn nn.functional.adaptive_max_pool3d:fn
        nn.functional.binary_cross_entropy:fn nn.functional.embedding_bag:fn nn.functional.glu:fn
        nn.functional.l1_loss:fn nn.functional.margin_ranking_loss:fn nn.functional.max_pool3d:fn
        nn.functional.max_unpool2d.grad:fn nn.functional.max_unpool2d:fn nn.functional.max_unpool3d.grad:fn
        nn.functional.max_unpool3d:fn nn.functional.softsign:fn nn.functional.tanhshrink:fn norm.fro:fn norm.inf:fn
        norm.nuc:fn norm:fn stft:fn"""),
    (_NAMES, """
        _chunk_cat:fn _native_batch_norm_legit:fn _unsafe_masked_index:fn _unsafe_masked_index_put_accumulate:fn
        clamp_max:fn clamp_min:fn linalg.cond:fn linalg.det:fn linalg.eig:fn linalg.eigvals:fn
        linalg.householder_product:fn linalg.ldl_factor:fn linalg.ldl_factor_ex:fn linalg.lstsq.grad_oriented:fn
        linalg.lstsq:fn linalg.matrix_power:fn linalg.solve_triangular:fn linalg.tensorinv:fn linalg.tensorsolve:fn
        linalg.vector_norm:fn lu:fn max.binary:fn min.binary:fn nn.functional.adaptive_max_pool1d:fn
        nn.functional.cross_entropy:fn nn.functional.grid_sample:fn nn.functional.logsigmoid:fn
        nn.functional.multilabel_soft_margin_loss:fn nn.functional.normalize:fn nn.functional.softmin.with_dtype:fn
        nn.functional.softmin:fn nonzero_static:fn ormqr:fn ormqr:method roll:method select:fn select:method
        select_scatter:fn select_scatter:method special.airy_ai:fn special.scaled_modified_bessel_k0:fn
        special.scaled_modified_bessel_k1:fn special.spherical_bessel_j0:fn trapz:fn unfold_copy:fn unique:fn
        unique:method unique_consecutive:fn unique_consecutive:method"""),
    (_REFLECTED, """
        __radd__:fn __radd__:method __rand__:fn __rand__:method __rdiv__:fn __rdiv__:method __rmatmul__:fn
        __rmatmul__:method __rmod__:fn __rmod__:method __rmul__:fn __rmul__:method __ror__:fn __ror__:method
        __rpow__:fn __rpow__:method __rsub__:fn __rsub__:method __rxor__:fn __rxor__:method"""),
    (_OPERATORS, """
        __getitem__:fn __rand__:fn __ror__:fn __rxor__:fn"""),
    (_WINDOWS, """
        signal.windows.bartlett:fn signal.windows.blackman:fn signal.windows.cosine:fn signal.windows.exponential:fn
        signal.windows.gaussian:fn signal.windows.general_cosine:fn signal.windows.general_hamming:fn
        signal.windows.hamming:fn signal.windows.hann:fn signal.windows.kaiser:fn signal.windows.nuttall:fn"""),
)
# "op_db id:fn" / "op_db id:method" -> why its differing cases differ
KNOWN: dict[str, str] = {}
for _reason, _keys in _KNOWN_BY_REASON:
    for _k in _keys.split():
        KNOWN[_k] = f"{KNOWN[_k]} / {_reason}" if _k in KNOWN else _reason


def _known(case):
    return ":".join(case.split(":")[:2]) in KNOWN


def _raised(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as e:         # noqa: BLE001 -- every error is the answer here
        return e
    return None


def verdict(th, tg):
    """'agree' or what differs: torch's outcome ``th`` and tapegrad's ``tg`` (an exception or None)."""
    if th is None:
        return "agree" if tg is None else "tapegrad refuses"
    if tg is None:
        return "no error"
    if not isinstance(tg, type(th)):
        return "type differs"
    msg, tmsg = str(th), str(tg)
    if PARSER_MSG.match(msg):
        return "agree" if tmsg == msg else "message differs"
    m = OVERLOAD_MSG.match(msg)
    if m and not tmsg.startswith(f"{m.group(1)}()"):
        return "message differs"
    return "agree"


def _perturbations(s, t_sample, method):
    """(slot, torch sample, tapegrad sample) for every wrong-typed variant of one sample."""
    import torch
    slots = [] if method else [("input", None)]
    slots += [("args", i) for i in range(len(s.args))] + [("kwargs", k) for k in s.kwargs]

    def get(sample, slot):
        kind, key = slot
        return sample.input if kind == "input" else getattr(sample, kind)[key]

    for slot in slots:
        v = get(s, slot)
        if isinstance(v, torch.Tensor):
            subs = TENSOR_SUBSTITUTES
        elif slot[0] == "args" and type(v) is int:
            subs = INT_SUBSTITUTES
        elif slot[0] == "kwargs" and slot[1] in KWARG_SUBSTITUTES:
            subs = KWARG_SUBSTITUTES[slot[1]]
        else:
            continue
        for sub in subs:
            yield f"{slot[0]}{'' if slot[1] is None else f'[{slot[1]}]'}={sub!r}", \
                _replace(s, slot, sub), _replace(t_sample, slot, sub)


def _replace(sample, slot, value):
    kind, key = slot
    inp, args, kwargs = sample.input, list(sample.args), dict(sample.kwargs)
    if kind == "input":
        inp = value
    elif kind == "args":
        args[key] = value
    else:
        kwargs[key] = value
    return inp, tuple(args), kwargs


def _first_sample(op):
    import torch
    for dtype in (torch.float32, torch.float64, torch.int64, torch.bool):
        if dtype in op.supported_dtypes("cpu"):
            samples = R._samples(op, dtype, 1)
            if samples:
                return samples[0]
    return None


def scan():
    """{case id: (verdict, tapegrad's error, torch's error)} for every perturbed call."""
    import torch
    out = {}
    for op in R.load_op_db():
        if R.exclusion(op) or R.is_random(op):
            continue
        fn = R.resolve(op)
        if fn is None:
            continue
        s = _first_sample(op)
        if s is None:
            continue
        try:
            ts = R.tg_sample(s)
        except Exception:      # noqa: BLE001 -- inexpressible: a meta tensor, a sparse layout
            continue
        variants = [("fn", op.op, fn, False)]
        name = op.name.split(".")[-1]
        if op.method_variant is not None and hasattr(torch.Tensor, name) and hasattr(tapegrad.Tensor, name):
            variants.append(("method", getattr(torch.Tensor, name), getattr(tapegrad.Tensor, name), True))
        for label, th_fn, tg_fn, method in variants:
            wrap, tg_wrap = op.gradcheck_wrapper, R._tg_version(op.gradcheck_wrapper)
            for slot, (i, a, k), (ti, ta, tk) in _perturbations(s, ts, method):
                if method:
                    th = _raised(lambda: th_fn(s.input, *a, **k))
                    tg = _raised(lambda: tg_fn(ts.input, *ta, **tk))
                else:
                    th = _raised(lambda: wrap(th_fn, i, *a, **k))
                    tg = _raised(lambda: tg_wrap(tg_fn, ti, *ta, **tk))
                out[f"{R.op_id(op)}:{label}:{slot}"] = (verdict(th, tg), tg, th)
    return out


def _show(e):
    return "no error" if e is None else f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"


if __name__ != "__main__":
    _SCAN = {}

    def _results():
        if not _SCAN:
            _SCAN.update(scan())
        return _SCAN

    def test_wrong_argument_types_get_torchs_error():
        res = _results()
        assert len(res) > 3000, f"only {len(res)} cases: the scan lost its cases"
        bad = {k: v for k, v in res.items() if v[0] != "agree" and not _known(k)}
        assert not bad, f"{len(bad)} cases differ:\n" + "\n".join(
            f"{k}: {v[0]}\n   tapegrad: {_show(v[1])}\n   torch:    {_show(v[2])}" for k, v in bad.items())

    def test_known_cases_still_differ():
        """An entry of KNOWN that agrees again must leave the list (and every entry names a real case)."""
        res = _results()
        differing = {":".join(k.split(":")[:2]) for k, v in res.items() if v[0] != "agree"}
        stale = [k for k in KNOWN if k not in differing]
        assert not stale, f"remove from KNOWN (they agree now, or are no cases): {stale}"

    @pytest.mark.parametrize("src", [
        "T.exp(None)", "T.relu(True)", "T.mm(a, 'a')", "T.add(None, 1)", "T.exp([1.0])", "T.exp(2.0)",
        "T.exp(input=None)", "T.zeros('a')", "T.zeros(2, dtype='a')", "T.softmax(a, 1.5)", "T.transpose(a, 0, 'a')",
        "T.nn.functional.relu(None)", "T.nn.functional.linear(a, None)", "T.linalg.solve(a, 'a')",
        "a.add(None)", "a.mul('a')", "a.mm(None)", "a.sum(1, None)", "a.sum(1, keepdim=None)", "a.sum(dim=1.5)",
        "a.view(2.0, 3)", "a.reshape('a')", "a.permute(None)", "a.transpose(0, 1.0)", "a.softmax('a')",
        "a.unflatten('a', (1, 3))", "a.unique_consecutive(dim='a')", "T.cat(None)", "T.where(None, a, a)"])
    def test_torchs_words(src):
        """The brief's examples, each against torch: its class, and its words (its first line where it lists
        overloads)."""
        import torch
        outcome = {}
        for T in (torch, tapegrad):
            a = T.ones(3, 3)
            e = _raised(lambda: eval(src, {"T": T, "a": a}))
            outcome[T.__name__] = e
        th, tg = outcome["torch"], outcome["tapegrad"]
        assert type(tg) is type(th) is TypeError, (th, tg)
        assert verdict(th, tg) == "agree", (str(th), str(tg))
        assert str(tg).splitlines()[0].startswith(str(th).split(" received")[0]), (str(th), str(tg))

    def test_verdict_is_not_vacuous():
        """The verdict tells a missing error, a wrong class, other words and a refusal apart."""
        th = TypeError("exp(): argument 'input' (position 1) must be Tensor, not NoneType")
        assert verdict(th, None) == "no error"
        assert verdict(th, AttributeError("'NoneType' object has no attribute 'dtype'")) == "type differs"
        assert verdict(th, TypeError("exp(): argument 'input' must be Tensor, not NoneType")) == "message differs"
        assert verdict(th, TypeError(str(th))) == "agree"
        assert verdict(None, TypeError("x")) == "tapegrad refuses"
        over = TypeError("sum() received an invalid combination of arguments - got (str), but expected one of: ...")
        assert verdict(over, TypeError("sum(): argument 'dim' (position 1) must be int, not str")) == "agree"
        assert verdict(over, TypeError("'str' object cannot be interpreted as an integer")) == "message differs"


if __name__ == "__main__":
    import time
    from collections import Counter
    t0 = time.perf_counter()
    res = scan()
    print(f"{len(res)} cases in {time.perf_counter() - t0:.1f} s:", Counter(v[0] for v in res.values()))
    differ = [k for k, v in res.items() if v[0] != "agree"]
    print(f"{len(differ)} differ, {sum(map(_known, differ))} of them in KNOWN ({len(KNOWN)} op variants)")
    for k, (v, tg, th) in res.items():
        if v != "agree":
            print(f"--- {k}: {v}{'  (KNOWN)' if _known(k) else ''}\n   tg: {_show(tg)}\n   th: {_show(th)}")
