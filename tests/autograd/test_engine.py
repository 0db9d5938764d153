"""The backward engine: one test per sentence of its specification, with PyTorch's error texts."""

import gc
import threading
import warnings

import numpy as np
import pytest

import tapegrad
from tapegrad.autograd import Function


def leaf(v, **kw):
    return tapegrad.tensor(v, requires_grad=True, **kw)


# --- requires_grad propagation ----------------------------------------------------------------------------
def test_requires_grad_propagates_from_any_input():
    a, b = leaf(1.0), tapegrad.tensor(2.0)
    assert (a * b).requires_grad and not (b * b).requires_grad
    assert (b * b).grad_fn is None and (b * b).is_leaf


def test_integer_and_bool_tensors_cannot_require_grad():
    for data in ([1, 2], [True, False]):
        with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
            tapegrad.tensor(data, requires_grad=True)
        with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
            tapegrad.tensor(data).requires_grad_()


def test_outputs_of_integer_dtype_never_require_grad():
    x = leaf([1.5, 2.5])
    assert not (x > 2).requires_grad
    assert not x.long().requires_grad


def test_non_leaf_requires_grad_cannot_be_switched_off():
    y = leaf(1.0) * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad = False


# --- graph structure ---------------------------------------------------------------------------------------
def test_grad_fn_and_next_functions_structure():
    a, b, c = leaf(2.0), leaf(-3.0), leaf(10.0)
    L = a * b + c
    assert L.grad_fn.name() == "AddBackward0"
    assert repr(L.grad_fn).startswith("<AddBackward0 object at 0x")
    (mul, i0), (acc_c, i1) = L.grad_fn.next_functions
    assert mul.name() == "MulBackward0" and i0 == 0 and i1 == 0
    assert type(acc_c).__name__ == "AccumulateGrad" and acc_c.variable is c
    (acc_a, _), (acc_b, _) = mul.next_functions
    assert acc_a.variable is a and acc_b.variable is b
    # the same leaf gives the same accumulator node while it lives
    assert (a * 2).grad_fn.next_functions[0][0] is acc_a


def test_inputs_without_grad_are_none_edges():
    a = leaf(2.0)
    b = tapegrad.tensor(5.0)
    assert (a * b).grad_fn.next_functions[1] == (None, 0)
    assert (a * 2).grad_fn.next_functions[1] == (None, 0)      # torch wraps the number: two edges
    assert len((a ** 2).grad_fn.next_functions) == 1             # a Scalar exponent is no edge


def test_seed_example_values():
    a, b, c = leaf(2.0), leaf(-3.0), leaf(10.0)
    L = a * b + c
    assert a.is_leaf and not L.is_leaf
    L.backward()
    assert (a.grad.item(), b.grad.item(), c.grad.item()) == (-3.0, 2.0, 1.0)
    assert repr(a.grad) == "tensor(-3.)"


def test_node_hooks_and_prehooks():
    x = leaf([1.0, 2.0])
    y = x * 3
    seen = []
    y.grad_fn.register_prehook(lambda grad_outputs: seen.append(("pre", grad_outputs[0].tolist())))
    h = y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0] * 10, None))
    y.sum().backward()
    assert seen == [("pre", [1.0, 1.0])]
    assert x.grad.tolist() == [30.0, 30.0]
    h.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_tensor_hooks_modify_and_remove():
    x = leaf([1.0, 2.0])
    h = x.register_hook(lambda g: g * 2)
    (x * x).sum().backward()
    assert x.grad.tolist() == [4.0, 8.0]
    h.remove()
    x.grad = None
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
    y = x * 1
    got = []
    y.register_hook(lambda g: got.append(g.tolist()))
    (y * 5).sum().backward()
    assert got == [[5.0, 5.0]]
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        tapegrad.ones(2).register_hook(lambda g: g)


# --- the walk ----------------------------------------------------------------------------------------------
def test_paths_meeting_sum_their_gradients():
    x = leaf(5.0)
    (x * x).backward()
    assert x.grad.item() == 10.0
    x.grad = None
    y = x * 2
    (y * y + y.exp() * 0 + y).backward()     # y used three times
    assert x.grad.item() == pytest.approx(2 * (2 * 10.0 + 1))


def test_diamond_graph_runs_each_node_once():
    calls = []

    class Count(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            calls.append(1)
            return g

    x = leaf(1.0)
    y = Count.apply(x)
    (y * 2 + y * 3).backward()
    assert calls == [1] and x.grad.item() == 5.0


def test_million_op_chain_backward_without_recursion_error():
    x = leaf(0.0)
    y = x
    for _ in range(1_000_000):
        y = y + 1.0
    y.backward()
    assert x.grad.item() == 1.0 and y.item() == 1_000_000.0


# --- leaves, non-leaves, retain_grad -----------------------------------------------------------------------
def test_leaf_grad_accumulates_and_zero_grad():
    x = leaf([1.0, 2.0, 3.0])
    (x ** 2).sum().backward()
    first = x.grad
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    (x ** 2).sum().backward()
    assert x.grad.tolist() == [4.0, 8.0, 12.0]
    assert x.grad is first                       # accumulated in place, as torch does
    x.grad.zero_()
    (x ** 2).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_non_leaf_grad_is_none_with_torch_warning():
    x = leaf(2.0)
    y = x * 3
    y.backward()
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert y.grad is None


def test_retain_grad_fills_non_leaf_grad():
    x = leaf(2.0)
    y = x * 3
    y.retain_grad()
    assert y.retains_grad and not x.retains_grad
    (y * y).backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert y.grad.item() == 12.0
    assert x.grad.item() == 36.0


@pytest.mark.parametrize("case", ["op", "view", "base", "twice"])
def test_retain_grad_follows_in_place_changes_as_torch(torch, case):
    # torch moves retains_grad to the tensor's new history when it is changed in place: .grad is the gradient of
    # the latest version (a tensor hook registered earlier keeps seeing the old one)
    def run(T):
        x = T.tensor([1.0, -2.0, 3.0, 0.5], requires_grad=True)
        y = x * 2
        y.retain_grad()
        seen = []
        y.register_hook(lambda g: seen.append(g.tolist()))
        if case == "op":
            y.mul_(3)
        elif case == "view":
            y[1:3].mul_(3)
        elif case == "base":
            y = y.view(2, 2)
            y.retain_grad()
            y.add_(1)
        else:
            y.mul_(3).sub_(1)
        (y * T.tensor([1.0, 2.0, 3.0, 4.0]).view(y.shape)).sum().backward()
        return y.grad.tolist(), x.grad.tolist(), y.retains_grad, seen
    assert run(tapegrad) == run(torch)


def test_leaf_grad_is_not_aliased_between_leaves():
    a, b = leaf([1.0]), leaf([1.0])
    (a + b).sum().backward()
    a.grad.zero_()
    assert b.grad.tolist() == [1.0]


def test_backward_on_a_leaf():
    x = leaf(3.0)
    x.backward()
    assert x.grad.item() == 1.0


# --- release and retain_graph ------------------------------------------------------------------------------
SECOND = "Trying to backward through the graph a second time"


def test_second_backward_raises_torch_error():
    a, b = leaf(2.0), leaf(3.0)
    L = a * b
    L.backward()
    with pytest.raises(RuntimeError, match=SECOND) as e:
        L.backward()
    assert "Specify retain_graph=True" in str(e.value)


def test_retain_graph_allows_second_backward_and_doubles_grads():
    a, b = leaf(2.0), leaf(-3.0)
    L = a * b
    L.backward(retain_graph=True)
    L.backward()
    assert a.grad.item() == -6.0


def test_graph_without_saved_tensors_can_run_twice_as_in_torch():
    a, b = leaf(2.0), leaf(3.0)
    L = a + b
    L.backward()
    L.backward()
    assert a.grad.item() == 2.0


def test_saved_tensors_are_freed_after_backward():
    x = leaf(np.ones(1000))
    y = x.exp()
    node = y.grad_fn
    y.sum().backward()
    with pytest.raises(RuntimeError, match=SECOND):
        node.saved_tensors


# --- create_graph ------------------------------------------------------------------------------------------
def test_create_graph_gives_higher_derivatives():
    x = leaf(2.0)
    y = x ** 3
    (g,) = tapegrad.autograd.grad(y, x, create_graph=True)
    assert g.item() == 12.0 and g.requires_grad
    (g2,) = tapegrad.autograd.grad(g, x, create_graph=True)
    assert g2.item() == 12.0
    (g3,) = tapegrad.autograd.grad(g2, x)
    assert g3.item() == 6.0


def test_backward_create_graph_leaves_grad_with_graph():
    x = leaf(3.0)
    (x ** 2).backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.item() == 6.0
    g = x.grad
    x.grad = None
    g.backward()
    assert x.grad.item() == 2.0


def test_hessian_vector_product():
    x = leaf([1.0, 2.0])
    f = (x ** 3).sum()
    (g,) = tapegrad.autograd.grad(f, x, create_graph=True)
    v = tapegrad.tensor([1.0, 1.0])
    (hv,) = tapegrad.autograd.grad((g * v).sum(), x)
    assert hv.tolist() == [6.0, 12.0]


# --- shapes and dtypes -------------------------------------------------------------------------------------
def test_broadcast_gradients_are_reduced_to_input_shape():
    a = leaf(np.ones((2, 3)))
    b = leaf(np.ones(3))
    c = leaf(np.ones((2, 1)))
    (a * b * c).sum().backward()
    assert b.grad.shape == (3,) and b.grad.tolist() == [2.0, 2.0, 2.0]
    assert c.grad.shape == (2, 1) and c.grad.tolist() == [[3.0], [3.0]]


def test_gradients_keep_input_dtype():
    a = leaf([1.0, 2.0], dtype=tapegrad.float64)
    b = leaf([1.0, 2.0])
    (a * b).sum().backward()
    assert a.grad.dtype is tapegrad.float64 and b.grad.dtype is tapegrad.float32


# --- errors ------------------------------------------------------------------------------------------------
def test_non_scalar_output_needs_gradient():
    y = leaf([1.0, 2.0]) * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()
    y.backward(tapegrad.tensor([1.0, 1.0]))


def test_output_without_grad_error():
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        (tapegrad.tensor(1.0) * 2).backward()


def test_gradient_of_wrong_shape_names_both_shapes():
    y = leaf([1.0, 2.0, 3.0]) * 2
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of "
                                           r"tapegrad.Size\(\[2\]\) and output\[0\] has a shape of "
                                           r"tapegrad.Size\(\[3\]\)"):
        y.backward(tapegrad.tensor([1.0, 1.0]))


def test_custom_function_returning_wrong_gradient_shape():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return tapegrad.ones(3)

    with pytest.raises(RuntimeError, match=r"Function BadBackward returned an invalid gradient at index 0 - got "
                                           r"\[3\] but expected shape compatible with \[2\]"):
        Bad.apply(leaf([1.0, 2.0])).sum().backward()


# --- versions and in-place ---------------------------------------------------------------------------------
def test_inplace_ops_bump_version():
    x = tapegrad.zeros(3)
    v = x._version
    for op in (lambda t: t.add_(1), lambda t: t.sub_(1), lambda t: t.mul_(2), lambda t: t.div_(2),
               lambda t: t.zero_(), lambda t: t.fill_(3.0), lambda t: t.clamp_(0, 1) if hasattr(t, "clamp_") else
               t.add_(0), lambda t: t.copy_(tapegrad.ones(3))):
        op(x)
        assert x._version == v + 1
        v = x._version
    x += 1
    x[0] = 5.0
    assert x._version == v + 2


def test_modified_saved_tensor_raises_version_error():
    a = leaf([1.0, 2.0])
    y = a * 2
    z = y * y          # saves y
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"one of the variables needed for gradient computation has been "
                                           r"modified by an inplace operation: \[tapegrad.FloatTensor \[2\]\], "
                                           r"which is output 0 of Add, is at version 1; expected "
                                           r"version 0 instead"):
        z.sum().backward()


def test_modified_saved_output_raises_version_error():
    a = leaf([1.0, 2.0])
    y = a.exp()        # saves its output
    y.mul_(2)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        y.sum().backward()


def test_leaf_inplace_error_and_no_grad_allows_it():
    w = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place "
                                           "operation."):
        w.add_(1)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w[0] = 3.0
    with tapegrad.no_grad():
        w -= 0.5
        w[1] = 7.0
    assert w.tolist() == [0.5, 7.0] and w.requires_grad and w.is_leaf


def test_inplace_on_non_leaf_is_differentiable():
    x = leaf([1.0, 2.0])
    w = leaf([1.0, 2.0])
    y = x * 2
    y.mul_(w)
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0] and w.grad.tolist() == [2.0, 4.0]
    x.grad = None
    y = x * 2
    y.mul_(y)                  # needs the old y, which is gone: torch's version error
    with pytest.raises(RuntimeError, match="which is output 0 of Mul, is at version 1"):
        y.sum().backward()


VERSION_ERROR_CASES = {
    # linear keeps its weight as torch does, as weight.t(): the message names that view (shape reversed; when the
    # weight requires grad, the AsStrided node torch regenerates for a view whose tensor changed)
    "linear_leaf_weight": "w = T.randn(1, 4, requires_grad=True); x = T.randn(3, 4, requires_grad=True)\n"
                          "y = T.nn.functional.linear(x, w, T.zeros(1)).sum()\nwith T.no_grad(): w.add_(1)",
    "linear_no_bias": "w = T.randn(2, 4, requires_grad=True); x = T.randn(3, 4, requires_grad=True)\n"
                      "y = T.nn.functional.linear(x, w).sum()\nwith T.no_grad(): w.add_(1)",
    "linear_3d_input": "w = T.randn(2, 4, requires_grad=True); x = T.randn(5, 3, 4, requires_grad=True)\n"
                       "y = T.nn.functional.linear(x, w, T.zeros(2)).sum()\nwith T.no_grad(): w.mul_(2)",
    "linear_weight_without_grad": "w = T.randn(2, 4); x = T.randn(3, 4, requires_grad=True)\n"
                                  "y = T.nn.functional.linear(x, w).sum(); w.add_(1)",
    "linear_nonleaf_weight": "w0 = T.randn(2, 4, requires_grad=True); w = w0 * 2\n"
                             "x = T.randn(3, 4, requires_grad=True)\n"
                             "y = T.nn.functional.linear(x, w, T.zeros(2)).sum(); w.add_(1)",
    "linear_input": "w = T.randn(2, 4, requires_grad=True); x = T.randn(3, 4)\n"
                    "y = T.nn.functional.linear(x, w, T.zeros(2)).sum(); x.add_(1)",
    "gan_step_before_backward": "m = T.nn.Sequential(T.nn.Linear(4, 3), T.nn.Linear(3, 1))\n"
                                "x = T.randn(3, 4); y = m(x).sum()\n"
                                "o = T.optim.SGD(m.parameters(), lr=0.1); m(x).sum().backward(); o.step()",
    # (a non-contiguous input is reshaped into a copy: changing the input does not touch what linear saved)
    "linear_noncontiguous_input": "w = T.randn(2, 4, requires_grad=True); x = T.randn(3, 5, 4).transpose(0, 1)\n"
                                  "y = T.nn.functional.linear(x, w, T.zeros(2)).sum(); x.add_(1)",
    # a saved view whose tensor changed (under no_grad, or in grad mode through the view or its base)
    "view_base_changed_under_no_grad": "w = T.randn(2, 4, requires_grad=True); x = T.randn(3, 4, requires_grad=True)\n"
                                       "y = (x @ w.t()).sum()\nwith T.no_grad(): w.add_(1)",
    "view_changed_itself": "w = T.randn(2, 4, requires_grad=True) * 2; v = w[0]; y = (v * v).sum(); v.mul_(2)",
    "view_base_changed": "w = T.randn(2, 4, requires_grad=True) * 2; v = w[0]; y = (v * v).sum(); w.mul_(2)",
}


@pytest.mark.parametrize("case", list(VERSION_ERROR_CASES))
def test_version_error_names_the_saved_tensor_as_torch(torch, case):
    def message(lib):
        env = {"T": lib}
        exec(VERSION_ERROR_CASES[case], env)
        try:
            env["y"].backward()
        except RuntimeError as e:
            return str(e).split(" Hint:")[0].replace(lib.__name__ + ".", "")
        return None
    expected = message(torch)
    assert (expected is not None) == (case != "linear_noncontiguous_input") and message(tapegrad) == expected


# --- grad modes --------------------------------------------------------------------------------------------
def test_no_grad_context_and_decorator():
    x = leaf([1.0])
    with tapegrad.no_grad():
        y = x * 2
        assert not tapegrad.is_grad_enabled()
        with tapegrad.enable_grad():
            assert (x * 2).requires_grad
    assert not y.requires_grad and y.grad_fn is None and tapegrad.is_grad_enabled()

    @tapegrad.no_grad()
    def f(t):
        return t * 2

    @tapegrad.no_grad
    def g(t):
        return t * 2

    assert not f(x).requires_grad and not g(x).requires_grad and tapegrad.is_grad_enabled()


def test_set_grad_enabled_and_inference_mode():
    x = leaf([1.0])
    with tapegrad.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert tapegrad.is_grad_enabled()
    tapegrad.set_grad_enabled(False)
    assert not tapegrad.is_grad_enabled()
    tapegrad.set_grad_enabled(True)
    with tapegrad.inference_mode():
        assert not (x * 2).requires_grad and tapegrad.is_inference_mode_enabled()
    assert not tapegrad.is_inference_mode_enabled()

    @tapegrad.set_grad_enabled(False)
    def h(t):
        return t * 2

    assert tapegrad.is_grad_enabled() and not h(x).requires_grad


def test_no_grad_holds_no_memory_for_backward():
    x = leaf(np.ones(10))
    with tapegrad.no_grad():
        y = x.exp()
    assert y.grad_fn is None


def test_grad_mode_is_thread_local():
    x = leaf([1.0])
    results = {}
    started, release = threading.Event(), threading.Event()

    def other():
        started.set()
        release.wait(5)
        results["other"] = (x * 2).requires_grad

    t = threading.Thread(target=other)
    t.start()
    started.wait(5)
    with tapegrad.no_grad():
        release.set()
        t.join(5)
        results["main"] = (x * 2).requires_grad
    assert results == {"other": True, "main": False}


def test_detach_shares_storage_and_version():
    x = leaf([1.0, 2.0])
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None
    d[0] = 9.0
    assert x.tolist()[0] == 9.0 and x._version == d._version
    z = (x * 3).detach()
    assert not z.requires_grad


def test_data_is_untracked_view():
    x = leaf([1.0, 2.0])
    x.data.mul_(2)
    assert x.tolist() == [2.0, 4.0] and x._version == 0 and x.requires_grad


def test_freezing_leaves_grad_none():
    w = leaf([1.0])
    frozen = leaf([2.0]).requires_grad_(False)
    (w * frozen).sum().backward()
    assert w.grad.item() == 2.0 and frozen.grad is None


# --- autograd.grad and backward(inputs=) -------------------------------------------------------------------
def test_autograd_grad_does_not_touch_dot_grad():
    x, y = leaf(2.0), leaf(3.0)
    z = x * y
    gx, gy = tapegrad.autograd.grad(z, (x, y))
    assert (gx.item(), gy.item()) == (3.0, 2.0) and x.grad is None


def test_autograd_grad_unused_input():
    x, y = leaf(2.0), leaf(3.0)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        tapegrad.autograd.grad(x * 2, (x, y))
    gx, gy = tapegrad.autograd.grad(x * 2, (x, y), allow_unused=True)
    assert gy is None
    gx, gy = tapegrad.autograd.grad(x * 2, (x, y), materialize_grads=True)
    assert gy.item() == 0.0


def test_autograd_grad_with_respect_to_non_leaf():
    x = leaf(2.0)
    h = x * 3
    out = h * h
    (gh,) = tapegrad.autograd.grad(out, h)
    assert gh.item() == 12.0


def test_backward_inputs_restricts_accumulation():
    x, y = leaf(2.0), leaf(3.0)
    (x * y).backward(inputs=[x])
    assert x.grad.item() == 3.0 and y.grad is None


def test_grad_outputs_weighting():
    x = leaf([1.0, 2.0])
    (g,) = tapegrad.autograd.grad(x * x, x, grad_outputs=tapegrad.tensor([1.0, 10.0]))
    assert g.tolist() == [2.0, 40.0]


def test_graph_is_freed_when_dropped():
    import weakref
    x = leaf(np.ones(10))
    y = (x * 2).exp()
    ref = weakref.ref(y.grad_fn)
    del y
    gc.collect()
    assert ref() is None


def test_add_and_sub_with_alpha_list_their_two_operands_as_torch(torch):
    for T in (tapegrad, torch):
        a, b = T.tensor([1.0, 2.0], requires_grad=True), T.tensor([3.0, 4.0], requires_grad=True)
        for y in (T.add(a, b, alpha=2), T.sub(a, b, alpha=3)):
            assert [type(f).__name__ for f, _ in y.grad_fn.next_functions] == ["AccumulateGrad"] * 2
        (T.add(a, b, alpha=2).sum() + T.sub(a, b, alpha=3).sum()).backward()
        assert a.grad.tolist() == [2.0, 2.0] and b.grad.tolist() == [-1.0, -1.0]


def test_tensor_backward_goes_through_autograd_backward_as_torch_s(torch):
    # (udacity's project tests wrap torch.autograd.backward with unittest.mock to check that a step ran backward)
    from unittest.mock import patch
    for T in (tapegrad, torch):
        w = T.tensor([1.0, 2.0], requires_grad=True)
        with patch.object(T.autograd, "backward", wraps=T.autograd.backward) as spy:
            (w * w).sum().backward(retain_graph=False, inputs=[w])
        assert spy.call_count == 1 and spy.call_args.kwargs == {"inputs": [w]}
        assert spy.call_args.args[1:] == (None, False, False)
        assert w.grad.tolist() == [2.0, 4.0]
