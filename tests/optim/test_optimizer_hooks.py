"""The Optimizer base against torch: its repr, step pre/post hooks (per optimizer and global, a pre-hook that
rewrites the arguments, torch's error for a bad return), state_dict and load_state_dict pre/post hooks (``prepend``, a
returned dict replacing the one given), ``__setstate__`` through ``super()`` (optimizers written for torch call it
from their own), deepcopy, load_state_dict sharing the loaded tensors, a wrapper that never calls
``Optimizer.__init__`` (torch_optimizer's Lookahead) failing in ``state_dict`` as in torch, and the schedulers'
warning for a scheduler stepped before its optimizer."""

import copy

import numpy as np

import tapegrad


def _both(torch, fn):
    return fn(torch), fn(tapegrad)


def test_step_hooks_run_in_torch_order(torch):
    def run(T):
        from importlib import import_module
        om = import_module(T.__name__ + ".optim.optimizer")
        w = T.nn.Parameter(T.tensor([1.0, -2.0]))
        opt = T.optim.Adam([w], lr=0.1)
        log = []
        h = opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", len(a), sorted(k))))
        opt.register_step_post_hook(lambda o, a, k: log.append(("post", type(o).__name__)))
        g1 = om.register_optimizer_step_pre_hook(lambda o, a, k: log.append("global pre"))
        g2 = om.register_optimizer_step_post_hook(lambda o, a, k: log.append("global post"))
        try:
            for _ in range(2):
                opt.zero_grad()
                (w ** 2).sum().backward()
                opt.step()
            h.remove()
            opt.step(closure=lambda: T.tensor(1.0))
        finally:
            g1.remove()
            g2.remove()
        opt.step()
        return log
    expected, got = _both(torch, run)
    assert got == expected


def test_pre_hook_rewrites_arguments_or_fails(torch):
    def run(T):
        opt = T.optim.SGD([T.nn.Parameter(T.ones(2))], lr=0.1)
        opt.register_step_pre_hook(lambda o, a, k: (a, {"closure": lambda: T.tensor(5.0)}))
        out = opt.step().item()
        opt.register_step_pre_hook(lambda o, a, k: 3)
        try:
            opt.step()
        except RuntimeError as e:
            return out, str(e).split(" must ")[1]
    expected, got = _both(torch, run)
    assert got == expected


def test_state_dict_hooks(torch):
    def run(T):
        w = T.nn.Parameter(T.tensor([1.0, 2.0]))
        opt = T.optim.SGD([w], lr=0.1, momentum=0.9)
        w.grad = T.tensor([0.5, 0.5])
        opt.step()
        log = []
        opt.register_state_dict_pre_hook(lambda o: log.append("pre"))
        opt.register_state_dict_pre_hook(lambda o: log.append("pre first"), prepend=True)
        opt.register_state_dict_post_hook(lambda o, sd: dict(sd, extra=1))
        opt.register_load_state_dict_pre_hook(lambda o, sd: {k: v for k, v in sd.items() if k != "extra"})
        opt.register_load_state_dict_post_hook(lambda o: log.append("loaded"))
        sd = opt.state_dict()
        opt.load_state_dict(sd)
        return log, sorted(sd), opt.state_dict()["state"][0]["momentum_buffer"].tolist()
    expected, got = _both(torch, run)
    assert got == expected


def test_setstate_deepcopy_and_uninitialised_wrapper(torch):
    def run(T):
        class WithSetstate(T.optim.Optimizer):
            def __init__(self, params, lr=0.1):
                super().__init__(params, dict(lr=lr))

            def __setstate__(self, state):
                super().__setstate__(state)
                for group in self.param_groups:
                    group.setdefault("amsgrad", False)

            def step(self, closure=None):
                return None

        class Wrapper(T.optim.Optimizer):      # never calls Optimizer.__init__
            def __init__(self, base):
                self.optimizer, self.param_groups = base, base.param_groups
                self.state, self.defaults = base.state, base.defaults

            def step(self, closure=None):
                return self.optimizer.step(closure)

        w = T.nn.Parameter(T.ones(2))
        c = copy.deepcopy(WithSetstate([w]))
        o = Wrapper(T.optim.SGD([w], lr=0.1))
        o.step()
        try:
            o.state_dict()
        except AttributeError as e:
            err = str(e)
        return c.param_groups[0]["amsgrad"], c.defaults, err
    expected, got = _both(torch, run)
    assert got == expected


def test_hooked_step_keeps_numbers(torch):
    """The wrapped step changes nothing in the update (Adam, five steps, against torch)."""
    def run(T):
        T.manual_seed(0)
        w = T.nn.Parameter(T.randn(4, dtype=T.float64))
        opt = T.optim.Adam([w], lr=0.01)
        opt.register_step_post_hook(lambda o, a, k: None)
        for _ in range(5):
            opt.zero_grad()
            (w ** 2).sum().backward()
            opt.step()
        return w.detach().numpy()
    expected, got = _both(torch, run)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_load_state_dict_shares_tensors_as_torch(torch):
    """torch keeps the loaded dict's tensors (no copy where the dtype matches): later steps update them in place,
    which torch_optimizer's state-dict test relies on; a float64 buffer is cast to a float32 parameter's dtype,
    ``step`` is kept, and state under an index that names no parameter stays under its key."""
    def run(T):
        w = T.nn.Parameter(T.tensor([1.0, 2.0]))
        opt = T.optim.SGD([w], lr=0.1, momentum=0.9)
        sd = {"state": {0: {"momentum_buffer": T.tensor([0.5, 0.5]), "extra": [T.tensor(1.0, dtype=T.float64)]},
                        7: {"orphan": 1}},
              "param_groups": [dict(opt.state_dict()["param_groups"][0])]}
        opt.load_state_dict(sd)
        buf = opt.state[w]["momentum_buffer"]
        shared = buf is sd["state"][0]["momentum_buffer"]
        w.grad = T.tensor([1.0, 1.0])
        opt.step()
        return (shared, sd["state"][0]["momentum_buffer"].tolist(), str(opt.state[w]["extra"][0].dtype).split(".")[1],
                opt.state[7], opt.param_groups[0] is sd["param_groups"][0], sorted(opt.defaults))
    expected, got = _both(torch, run)
    assert got == expected


def test_scheduler_warns_when_stepped_before_the_optimizer(torch):
    """A scheduler wraps ``optimizer.step`` on the instance to note the first call, and warns as torch does when its
    own first ``step()`` comes before it (or when ``optimizer.step`` was replaced after the scheduler was made)."""
    import warnings

    def run(T):
        out = []
        for order in ("scheduler first", "optimizer first", "replaced"):
            w = T.nn.Parameter(T.ones(2))
            opt = T.optim.SGD([w], lr=0.1)
            sched = T.optim.lr_scheduler.StepLR(opt, 2)
            if order == "optimizer first":
                opt.step()
            if order == "replaced":
                opt.step = lambda closure=None: None
            with warnings.catch_warnings(record=True) as rec:
                warnings.simplefilter("always")
                sched.step()
                sched.step()
            out.append((order, [str(r.message)[:60] for r in rec], getattr(opt, "_opt_called", None)))
        return out
    expected, got = _both(torch, run)
    assert got == expected


def test_repr_as_torch(torch):
    """Groups after the first follow an empty line; named parameters list ``param_names`` like any option."""
    def run(T):
        w, b = T.nn.Parameter(T.ones(2)), T.nn.Parameter(T.ones(1))
        return [repr(o) for o in (T.optim.SGD([w], lr=0.1), T.optim.Adam([{"params": [w]}, {"params": [b], "lr": 0.5}]),
                                  T.optim.SGD([("w", w), ("b", b)], lr=0.1))]
    expected, got = _both(torch, run)
    assert got == expected


def test_private_helpers_that_copied_optimizers_import(torch):
    """Optimizers copied from torch's own files import these from ``torch.optim.optimizer``."""
    def run(T):
        from importlib import import_module
        om = import_module(T.__name__ + ".optim.optimizer")
        w = T.nn.Parameter(T.tensor([1.0, -2.0]))
        seen = []

        class Opt(om.Optimizer):
            def __init__(self, params: om.ParamsT, differentiable=False):
                super().__init__(params, dict(lr=om._to_scalar(T.tensor([0.5])), differentiable=differentiable))

            @om._use_grad_for_differentiable
            def step(self, closure=None):
                seen.append(T.is_grad_enabled())
                return om._get_value(self.param_groups[0]["lr"])

        out = [Opt([w]).step(), Opt([w], differentiable=True).step(), seen, om._get_value(3), om._stack_if_compiling([1]),
               om._default_to_fused_or_foreach([w], False, True), om._default_to_fused_or_foreach([w], True, True),
               om._default_to_fused_or_foreach([w, None], False), om._default_to_fused_or_foreach([], False),
               str(om._get_scalar_dtype()).split(".")[1], str(om._get_scalar_dtype(True)).split(".")[1],
               om._disable_dynamo_if_unsupported()(len)([1, 2])]
        try:
            om._device_dtype_check_for_fused(T.ones(2, dtype=T.int64))
        except RuntimeError as e:
            out.append(str(e).split(" but ")[0])
        c, g = [T.ones(2, dtype=T.complex64)], [T.ones(2, dtype=T.complex64)]
        om._view_as_real(c, g)
        return out + [tuple(c[0].shape), tuple(g[0].shape), om.StateDict.__origin__, om.Args.__origin__]
    expected, got = _both(torch, run)
    assert got == expected
