"""Inference tensors, as torch has them: a tensor made inside ``inference_mode()`` (an op's output or a factory's
result) is an inference tensor, and so is every view of one. Outside inference mode it cannot be saved for
backward, changed in place, made to require grad, or asked for its version; a clone is a normal tensor. Each
rule is checked side by side with torch, error texts included."""

import numpy as np
import pytest

SAVED = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
         "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use "
         "it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")
INPLACE = ("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
           "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.")
REQUIRES_GRAD = "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
VERSION = "Inference tensors do not track version counter."


def _made(T, how):
    """Whether what ``how`` makes inside inference mode is an inference tensor."""
    with T.inference_mode():
        src = T.ones(2)
        return {
            "zeros": lambda: T.zeros(2), "ones": lambda: T.ones(2, 3), "randn": lambda: T.randn(2),
            "rand": lambda: T.rand(2), "randint": lambda: T.randint(0, 3, (2,)), "tensor": lambda: T.tensor([1.0]),
            "arange": lambda: T.arange(3), "empty": lambda: T.empty(2), "full": lambda: T.full((2,), 1.0),
            "linspace": lambda: T.linspace(0, 1, 3), "eye": lambda: T.eye(2), "zeros_like": lambda: T.zeros_like(src),
            "ones_like": lambda: T.ones_like(src), "randn_like": lambda: T.randn_like(src),
            "empty_like": lambda: T.empty_like(src), "full_like": lambda: T.full_like(src, 2.0),
            "from_numpy": lambda: T.from_numpy(np.ones(2)), "as_tensor": lambda: T.as_tensor(np.ones(2)),
            "legacy_Tensor": lambda: T.Tensor([1.0]), "op_output": lambda: src * 2, "op_tuple": lambda: src.split(1)[0],
            "clone": lambda: src.clone(), "sum": lambda: src.sum(), "matmul": lambda: src @ src,
            "new_zeros": lambda: src.new_zeros(2),
        }[how]().is_inference()


MADE = ["zeros", "ones", "randn", "rand", "randint", "tensor", "arange", "empty", "full", "linspace", "eye",
        "zeros_like", "ones_like", "randn_like", "empty_like", "full_like", "from_numpy", "as_tensor",
        "legacy_Tensor", "op_output", "op_tuple", "clone", "sum", "matmul", "new_zeros"]


@pytest.mark.parametrize("how", MADE)
def test_made_inside_inference_mode(torch, how):
    import tapegrad
    assert _made(tapegrad, how) is _made(torch, how) is True


def _run(T, name):
    """What torch / tapegrad give for one case, as plain values (strings for tensors, nodes and errors)."""
    n = T.ones(3)
    x = T.ones(3, requires_grad=True)
    with T.inference_mode():
        inf = T.arange(3.0)
        view, nview = inf[1:], n[1:]
    cases = {
        # which tensors are inference tensors
        "normal_outside": lambda: (n.is_inference(), T.is_inference(n), (n * 2).is_inference()),
        "inference": lambda: (inf.is_inference(), T.is_inference(inf), inf.requires_grad, inf.is_leaf, inf.grad),
        "views": lambda: (view.is_inference(), inf[0].is_inference(), inf.view(3, 1).is_inference(),
                          inf.t().is_inference(), inf.detach().is_inference(), inf.data.is_inference(),
                          inf.split(1)[0].is_inference()),
        "view_of_normal_inside": lambda: (nview.is_inference(), nview._version),
        "outputs_outside": lambda: ((inf * 2).is_inference(), (n + inf).is_inference(), inf.clone().is_inference(),
                                    inf.double().is_inference(), inf.sum().is_inference()),
        "inference_mode_false_inside": lambda: _mode_false(T),
        "is_inference_not_a_tensor": lambda: T.is_inference(1),
        # ops outside inference mode: only saving an inference tensor for backward is refused
        "plain_ops": lambda: (inf.exp(), inf * 2, inf @ n, T.cat([inf, n])),
        "no_grad_ops": lambda: _under(T.no_grad(), lambda: (inf * x, inf @ x)),
        "add_with_grad": lambda: (inf + x, (inf + x).sum().backward(), x.grad),
        "sub_with_grad": lambda: inf - x,
        "cat_with_grad": lambda: T.cat([inf, x]),
        "where_with_grad": lambda: T.where(inf > 0, x, inf),
        "sum_times_grad": lambda: inf.sum() * x,
        "mul_with_grad": lambda: inf * x,
        "mul_with_grad_reversed": lambda: x * inf,
        "div_with_grad": lambda: x / inf,
        "matmul_with_grad": lambda: inf @ x,
        "view_saved": lambda: view * x[1:],
        "linear_with_grad": lambda: T.nn.functional.linear(x, inf.view(1, 3)),
        "user_function": lambda: _Saves(T).apply(x, inf),
        "inplace_on_normal_saving_inference": lambda: x.clone().mul_(inf),
        "inplace_on_normal_adding_inference": lambda: x.clone().add_(inf),
        "clone_then_autograd": lambda: _clone_then(T, inf, x),
        # in-place updates outside inference mode
        "add_": lambda: inf.add_(1),
        "add__no_grad": lambda: _under(T.no_grad(), lambda: inf.add_(1)),
        "mul__of_view": lambda: view.mul_(2),
        "copy_": lambda: inf.copy_(n),
        "setitem": lambda: inf.__setitem__(0, 5.0),
        "out_": lambda: T.add(n, 1, out=inf),
        "zero_": lambda: inf.zero_(),
        "written_before_the_refusal": lambda: _written_first(inf),
        "inplace_on_normal_view_made_inside": lambda: (nview.add_(1), nview._version, n),
        # requires_grad and version
        "requires_grad_": lambda: inf.requires_grad_(),
        "requires_grad_set": lambda: setattr(inf, "requires_grad", True),
        "requires_grad_false": lambda: inf.requires_grad_(False),
        "parameter_outside": lambda: T.nn.Parameter(inf),
        "version": lambda: inf._version,
        "version_of_view": lambda: view._version,
        "version_inside": lambda: _under(T.inference_mode(), lambda: inf._version),
        # inside inference mode everything works, as under no_grad
        "inside": lambda: _inside(T, inf, n, x),
        "grad_mode_inside": lambda: _grad_modes(T),
        "parameters_made_inside": lambda: _module_inside(T),
    }
    try:
        return _plain(cases[name]())
    except (RuntimeError, TypeError) as e:
        return f"{type(e).__name__}: " + str(e).replace("torch.", "").replace("tapegrad.", "")


def _under(mode, f):
    with mode:
        return f()


def _mode_false(T):
    with T.inference_mode():
        a = T.ones(2)
        with T.inference_mode(False):
            b, c = a * 2, T.ones(2)
            flags = (T.is_inference_mode_enabled(), T.is_grad_enabled(), b.is_inference(), c.is_inference())
            try:
                a.add_(1)
                refused = None
            except RuntimeError as e:
                refused = str(e)
        return flags, refused, T.is_inference_mode_enabled(), T.is_grad_enabled()


def _Saves(T):
    class Saves(T.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g * ctx.saved_tensors[0], None
    return Saves


def _clone_then(T, inf, x):
    y = (inf.clone() * x).sum()
    y.backward()
    return y, x.grad


def _written_first(inf):
    for f in (lambda: inf.add_(1), lambda: inf.copy_(inf * 0), lambda: inf.__setitem__(0, 9.0)):
        try:
            f()
        except RuntimeError:
            pass
    return inf


def _inside(T, inf, n, x):
    with T.inference_mode():
        inf.add_(1)
        inf[0] = 7.0
        n.mul_(2)                                    # a normal tensor changed inside: its version moves
        y = inf * x                                  # nothing is recorded
        rg = inf.requires_grad_()                    # allowed inside
        flags = (rg.requires_grad, y.requires_grad, y.grad_fn, y.is_inference(), n._version, n.is_inference())
        inf.requires_grad_(False)
        return flags, inf, n, T.is_grad_enabled(), T.is_inference_mode_enabled()


def _grad_modes(T):
    out = []
    with T.inference_mode():
        with T.enable_grad():          # grad mode on, yet nothing is recorded and outputs are inference tensors
            x = T.ones(2, requires_grad=True)
            y = x * 2
            out.append((T.is_grad_enabled(), T.is_inference_mode_enabled(), x.requires_grad, y.requires_grad,
                        y.grad_fn, y.is_inference()))
        with T.set_grad_enabled(True):
            out.append((T.is_grad_enabled(), (x * 2).requires_grad))
        out.append(T.is_grad_enabled())
    with T.no_grad():
        with T.inference_mode(False):  # inference_mode(False) turns grad mode on
            out.append(T.is_grad_enabled())
        out.append(T.is_grad_enabled())
    out.append((T.is_grad_enabled(), T.is_inference_mode_enabled()))
    return out


def _module_inside(T):
    T.manual_seed(0)
    with T.inference_mode():
        lin = T.nn.Linear(3, 2)
        p = T.nn.Parameter(T.ones(2))
    flags = (lin.weight.is_inference(), lin.weight.requires_grad, type(lin.weight).__name__, p.is_inference(),
             p.requires_grad)
    try:
        lin(T.ones(1, 3, requires_grad=True))
        refused = None
    except RuntimeError as e:
        refused = str(e)
    return flags, refused


def _plain(x):
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(i) for i in x)
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if hasattr(x, "next_functions"):
        return x.name()
    if hasattr(x, "detach"):
        return (str(x.dtype).split(".")[-1], np.round(x.detach().numpy(), 4).tolist(), x.requires_grad,
                None if x.grad_fn is None else x.grad_fn.name())
    return repr(x)


NAMES = ["normal_outside", "inference", "views", "view_of_normal_inside", "outputs_outside",
         "inference_mode_false_inside", "is_inference_not_a_tensor", "plain_ops", "no_grad_ops", "add_with_grad",
         "sub_with_grad", "cat_with_grad", "where_with_grad", "sum_times_grad", "mul_with_grad",
         "mul_with_grad_reversed", "div_with_grad", "matmul_with_grad", "view_saved", "linear_with_grad",
         "user_function", "inplace_on_normal_saving_inference", "inplace_on_normal_adding_inference",
         "clone_then_autograd", "add_", "add__no_grad", "mul__of_view", "copy_", "setitem", "out_", "zero_",
         "written_before_the_refusal", "inplace_on_normal_view_made_inside", "requires_grad_", "requires_grad_set",
         "requires_grad_false", "parameter_outside", "version", "version_of_view", "version_inside", "inside",
         "grad_mode_inside", "parameters_made_inside"]


@pytest.mark.parametrize("name", NAMES)
def test_inference_tensor_as_torch(torch, name):
    import tapegrad
    assert _run(tapegrad, name) == _run(torch, name)


def test_the_rules_and_their_words():
    # (without torch: the facts the oracle tests check, spelled out)
    import tapegrad as T
    x = T.ones(3, requires_grad=True)
    with T.inference_mode():
        inf = T.ones(3)
    assert inf.is_inference() and inf[1:].is_inference() and not inf.clone().is_inference()
    with pytest.raises(RuntimeError) as e:
        inf * x
    assert str(e.value) == SAVED
    assert (inf + x).requires_grad
    for f, words in ((lambda: inf.add_(1), INPLACE), (lambda: inf.requires_grad_(), REQUIRES_GRAD),
                     (lambda: inf._version, VERSION)):
        with pytest.raises(RuntimeError) as e:
            f()
        assert str(e.value) == words
    assert inf.tolist() == [2.0, 2.0, 2.0]     # (torch writes first and refuses at the version bump: so does tapegrad)
    with T.inference_mode():
        inf.add_(1)
    assert inf.tolist() == [3.0, 3.0, 3.0]


def test_no_grad_makes_normal_tensors():
    import tapegrad as T
    with T.no_grad():
        t = T.ones(2) * 3
    assert not t.is_inference()
    t.add_(1)
    assert t._version == 1


def test_threads_keep_their_own_mode():
    # inference mode is per thread: a tensor made in another thread at the same time is a normal tensor
    import threading

    import tapegrad as T
    made = {}
    inside, done = threading.Event(), threading.Event()

    def other():
        inside.wait()
        made["other"] = T.ones(2) * 2
        done.set()

    th = threading.Thread(target=other)
    th.start()
    with T.inference_mode():
        inside.set()
        done.wait()
        made["mine"] = T.ones(2)
    th.join()
    assert made["mine"].is_inference() and not made["other"].is_inference()
