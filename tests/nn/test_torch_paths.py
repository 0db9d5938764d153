"""torch.nn's and torch.optim's surface, walked from torch 2.13's own lists: every module class exists, with
torch's constructor signature, at torch's module path (``nn.modules.<file>.<Class>``, ``optim.<file>.<Class>``);
every public nn.functional function, optimizer, scheduler and swa_utils name exists."""

import importlib
import inspect
import pkgutil

import pytest

import tapegrad

# torch.nn.modules files that hold no layer of their own (autograd Functions and options records of torch's
# internals), and the torch.nn.functional names that are backend-only or torch's dispatch helpers
_NO_LAYER_FILES = {"_functions", "linear_cross_entropy", "linear_cross_entropy_options"}
_F_BACKEND = {"grouped_mm", "scaled_grouped_mm", "scaled_mm", "ScalingType", "SwizzleType", "handle_torch_function",
              "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic", "boolean_dispatch",
              "assert_int_or_pair"}
# torch declares these with (*args, **kwargs) and documents the arguments; tapegrad spells them out
_STAR_ARGS = {"RNN", "LSTM", "GRU"}


def _torch_layers(torch):
    return sorted(n for n in dir(torch.nn) if inspect.isclass(getattr(torch.nn, n))
                  and issubclass(getattr(torch.nn, n), torch.nn.Module))


def test_every_torch_nn_layer_exists(torch):
    missing = [n for n in _torch_layers(torch) if not hasattr(tapegrad.nn, n)]
    assert missing == []


def _norm_default(v):
    if inspect.isfunction(v) or inspect.isbuiltin(v):
        return ("function", v.__name__)
    return repr(v).replace("torch.", "tapegrad.")


def test_constructor_signatures_match_torch(torch):
    bad = []
    for n in _torch_layers(torch):
        if n in _STAR_ARGS:
            continue
        ours = inspect.signature(getattr(tapegrad.nn, n).__init__).parameters.values()
        theirs = inspect.signature(getattr(torch.nn, n).__init__).parameters.values()
        key = lambda ps: [(p.name, p.kind, _norm_default(p.default)) for p in ps]
        if key(ours) != key(theirs):
            bad.append(n)
    assert bad == []


def _torch_module_files(torch):
    import torch.nn.modules as tm
    return [m.name for m in pkgutil.iter_modules(tm.__path__) if m.name not in _NO_LAYER_FILES]


def test_nn_module_paths_resolve_as_in_torch(torch):
    """``tapegrad.nn.modules.<file>.<Class>`` for every class torch defines in that file and tapegrad has."""
    checked, bad = 0, []
    for name in _torch_module_files(torch):
        theirs = importlib.import_module(f"torch.nn.modules.{name}")
        ours = importlib.import_module(f"tapegrad.nn.modules.{name}")
        for cls_name, cls in vars(theirs).items():
            if not (inspect.isclass(cls) and cls.__module__ == theirs.__name__ and not cls_name.startswith("_")):
                continue
            target = getattr(tapegrad.nn, cls_name, None)
            if target is None:
                bad.append(f"{name}.{cls_name} (no such class)")
            elif getattr(ours, cls_name, None) is not target:
                bad.append(f"{name}.{cls_name}")
            else:
                checked += 1
    assert bad == [] and checked > 150
    # torch's re-exports through other files resolve too
    assert tapegrad.nn.modules.transformer.MultiheadAttention is tapegrad.nn.MultiheadAttention
    assert tapegrad.nn.modules.module.Module is tapegrad.nn.Module
    assert tapegrad.nn.modules.utils._pair(2) == (2, 2)


def test_layer_class_hierarchy_as_torch_s(torch):
    """Each layer's torch-named bases are torch's (``isinstance(m, nn.Hardtanh)`` for a ReLU6, not ``nn.ELU`` for
    a CELU, ``_BatchNorm``/``_ConvNd``/``_Loss`` checks); tapegrad's private helper bases are left out."""
    def bases(nn, name):
        return [c.__name__ for c in getattr(nn, name).__mro__ if c.__module__.startswith(nn.__name__ + ".")]

    bad = []
    for name in _torch_layers(torch):
        theirs, ours = bases(torch.nn, name), bases(tapegrad.nn, name)
        if [b for b in ours if b in theirs or not b.startswith("_")] != theirs:
            bad.append((name, theirs, ours))
    assert bad == []
    assert tapegrad.nn.ReLU6(inplace=True).min_val == 0.0 and repr(tapegrad.nn.ReLU6(True)) == "ReLU6(inplace=True)"


def test_scheduler_class_hierarchy_as_torch_s(torch):
    # (MultiplicativeLR is LambdaLR's sibling in torch, not its subclass)
    import tapegrad.optim.lr_scheduler as ours_mod
    import torch.optim.lr_scheduler as theirs_mod

    def bases(mod, root, name):
        return [c.__name__ for c in getattr(mod, name).__mro__
                if c.__module__.startswith(root) and not c.__name__.startswith("_")]

    names = [n for n, c in vars(theirs_mod).items() if inspect.isclass(c) and c.__module__ == theirs_mod.__name__
             and not n.startswith("_") and hasattr(ours_mod, n)]
    bad = [n for n in names if bases(ours_mod, "tapegrad.", n) != bases(theirs_mod, "torch.", n)]
    assert bad == [] and len(names) > 15


@pytest.mark.parametrize("name", ["Linear", "Conv2d", "BatchNorm2d", "MultiheadAttention", "LazyLinear",
                                  "ReflectionPad3d", "Upsample", "Fold", "CTCLoss", "AdaptiveLogSoftmaxWithLoss"])
def test_classes_live_in_torchs_file(torch, name):
    theirs = getattr(torch.nn, name).__module__.replace("torch.", "tapegrad.")
    assert getattr(tapegrad.nn, name).__module__ == theirs


def test_every_nn_functional_name_exists(torch):
    names = [n for n in dir(torch.nn.functional) if not n.startswith("_") and n not in _F_BACKEND
             and inspect.isroutine(getattr(torch.nn.functional, n))]
    assert [n for n in names if not hasattr(tapegrad.nn.functional, n)] == []


def test_nn_functional_has_no_function_torch_s_lacks(torch):
    # (torch has dropout_, native_batch_norm ... at top level only; a pickled F function is named by its F name)
    ours = [n for n, fn in vars(tapegrad.nn.functional).items() if not n.startswith("_") and inspect.isroutine(fn)]
    assert [n for n in ours if not hasattr(torch.nn.functional, n)] == []


def test_optim_paths_and_names(torch):
    import torch.optim as to
    bad = []
    for m in pkgutil.iter_modules(to.__path__):
        if m.name in ("_functional", "_multi_tensor", "_stateless"):
            continue
        theirs = importlib.import_module(f"torch.optim.{m.name}")
        ours = importlib.import_module(f"tapegrad.optim.{m.name}")
        for n, obj in vars(theirs).items():
            if inspect.isclass(obj) and obj.__module__ == theirs.__name__ and not n.startswith("_"):
                if getattr(ours, n, None) is None or getattr(tapegrad.optim, n, getattr(ours, n)) is not getattr(ours, n):
                    bad.append(f"{m.name}.{n}")
    assert bad == []
    names = [n for n in to.__all__ if n != "swap_in_optimizer_params_and_state"]
    assert [n for n in names if not hasattr(tapegrad.optim, n)] == []
    sched = [n for n in dir(to.lr_scheduler) if inspect.isclass(getattr(to.lr_scheduler, n))
             and issubclass(getattr(to.lr_scheduler, n), to.lr_scheduler.LRScheduler)]
    assert [n for n in sched if not hasattr(tapegrad.optim.lr_scheduler, n)] == []
    assert [n for n in to.swa_utils.__all__ if not hasattr(tapegrad.optim.swa_utils, n)] == []


def test_optimizer_signatures_match_torch(torch):
    bad = []
    for n in torch.optim.__all__:
        theirs = getattr(torch.optim, n)
        if not (inspect.isclass(theirs) and issubclass(theirs, torch.optim.Optimizer)) or n == "Optimizer":
            continue
        key = lambda c: [(p.name, p.kind, _norm_default(p.default))
                         for p in inspect.signature(c.__init__).parameters.values()]
        if key(getattr(tapegrad.optim, n)) != key(theirs):
            bad.append(n)
    assert bad == []


def test_layer_methods_match_torchs_list(torch):
    """Every public method torch's common layers have (Module's device moves to accelerators aside)."""
    skip = {"T_destination", "compile", "cuda", "ipu", "xpu", "mtia"}
    bad = {}
    for n in ["Module", "RNNBase", "LSTM", "GRU", "RNNCellBase", "MultiheadAttention", "TransformerEncoder",
              "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "BatchNorm2d", "Embedding"]:
        theirs = {k for k in dir(getattr(torch.nn, n)) if not k.startswith("_")} - skip
        missing = sorted(theirs - set(dir(getattr(tapegrad.nn, n))))
        if missing:
            bad[n] = missing
    assert bad == {}


def test_extra_state_set_submodule_and_rnn_checks(torch):
    results = []
    for m in (tapegrad, torch):
        class E(m.nn.Linear):
            def get_extra_state(self):
                return {"n": 3}

            def set_extra_state(self, state):
                self.got = state
        sd = E(2, 2).state_dict()
        b = E(2, 2)
        b.load_state_dict(sd)
        plain = m.nn.Linear(2, 2).load_state_dict(sd, strict=False)
        seq = m.nn.Sequential(m.nn.Linear(1, 1))
        seq.set_submodule("0", m.nn.ReLU())
        lstm = m.nn.LSTM(3, 4)
        x = m.zeros(5, 2, 3)
        with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(1, 2, 4\), got \[1, 2, 5\]"):
            lstm.check_forward_args(x, (m.zeros(1, 2, 4), m.zeros(1, 2, 5)), None)
        perm = lstm.permute_hidden((m.arange(2.).reshape(1, 2, 1), m.arange(2.).reshape(1, 2, 1)), m.tensor([1, 0]))
        mha = m.nn.MultiheadAttention(4, 2, batch_first=True)
        merged, kind = mha.merge_masks(m.zeros(3, 3), m.zeros(2, 3), m.zeros(2, 3, 4))
        results.append((list(sd), b.got, list(plain.unexpected_keys), repr(seq), perm[0].flatten().tolist(),
                        tuple(merged.shape), kind))
    assert results[0] == results[1]


def test_nn_reduction_module_as_torch(torch):
    """``torch.nn._reduction`` (imported by libraries that define their own losses): the reduction enums and the
    legacy size_average/reduce translation, with torch's warnings and error."""
    import warnings
    mine = importlib.import_module("tapegrad.nn._reduction")
    theirs = importlib.import_module("torch.nn._reduction")
    assert tapegrad.nn._reduction is mine
    for r in ("none", "mean", "sum"):
        assert mine.get_enum(r) == theirs.get_enum(r)
    for m in (mine, theirs):
        with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
            m.get_enum("avg")
    for sa in (None, True, False):
        for rd in (None, True, False):
            got = []
            for m in (mine, theirs):
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    got.append((m.legacy_get_string(sa, rd), m.legacy_get_enum(sa, rd, emit_warning=False),
                                [str(x.message) for x in w], [x.filename for x in w]))
            assert got[0] == got[1]
