"""autograd.backward / autograd.grad argument forms, checked against torch: the deprecated ``grad_variables``,
``inputs`` given as a dict (``dict(model.named_parameters())``), the deprecated ``only_inputs=False``, and the
words of their errors."""

import warnings

import numpy as np
import pytest

import tapegrad


def outcome(call):
    """(result, warnings' texts) or (exception type name, message)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = call()
        except Exception as e:     # noqa: BLE001 - the outcome is compared
            return ("raised", type(e).__name__, str(e))
    return ("ok", r, [(m.category.__name__, str(m.message)) for m in w])


def plain(x):
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return type(x)(plain(v) for v in x)
    if x is None or isinstance(x, (str, int, float)):
        return x
    return np.asarray(x.detach().numpy()).tolist()


def run_both(torch, fn):
    a, b = outcome(lambda: plain(fn(tapegrad))), outcome(lambda: plain(fn(torch)))
    assert a == b
    return a


def leaves(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = T.tensor([3.0, -1.0], requires_grad=True)
    return x, y


def test_grad_variables_is_torch_s_deprecated_name_for_grad_tensors(torch):
    def fn(T):
        x, y = leaves(T)
        T.autograd.backward([x * y], None, None, False, [T.tensor([1.0, 10.0])])
        return x.grad, y.grad
    r = run_both(torch, fn)
    assert r[2] == [("FutureWarning", "`grad_variables` is deprecated. Use `grad_tensors` instead.")]

    def by_name(T):
        x, y = leaves(T)
        T.autograd.backward((x * y).sum(), grad_variables=T.tensor(2.0))
        return x.grad

    run_both(torch, by_name)


def test_grad_variables_and_grad_tensors_together_are_refused(torch):
    def fn(T):
        x, y = leaves(T)
        T.autograd.backward((x * y).sum(), T.tensor(1.0), grad_variables=T.tensor(1.0))
    r = run_both(torch, fn)
    assert r[0] == "raised" and "both passed to `backward()`" in r[2]


def test_backward_inputs_as_a_dict(torch):
    def fn(T):
        x, y = leaves(T)
        T.autograd.backward((x * y).sum(), inputs={"x": x})
        return x.grad, y.grad
    assert run_both(torch, fn)[1] == ([3.0, -1.0], None)


def test_grad_inputs_as_a_dict_returns_a_dict_with_the_same_keys(torch):
    def fn(T):
        x, y = leaves(T)
        return T.autograd.grad((x * x * y).sum(), {"y": y, "x": x})
    r = run_both(torch, fn)
    assert list(r[1]) == ["y", "x"]

    def named(T):
        T.manual_seed(0)
        lin = T.nn.Linear(3, 2)
        loss = lin(T.ones(4, 3)).pow(2).sum()
        g = T.autograd.grad(loss, dict(lin.named_parameters()), create_graph=True)
        return {k: v.sum() for k, v in g.items()}

    run_both(torch, named)


def test_grad_dict_inputs_with_unused_and_materialize(torch):
    def fn(T):
        x, y = leaves(T)
        z = T.tensor([1.0], requires_grad=True)
        return T.autograd.grad((x * y).sum(), {"x": x, "z": z}, allow_unused=True)

    assert run_both(torch, fn)[1] == {"x": [3.0, -1.0], "z": None}

    def mat(T):
        x, y = leaves(T)
        z = T.tensor([1.0], requires_grad=True)
        return T.autograd.grad((x * y).sum(), {"x": x, "z": z}, materialize_grads=True)

    assert run_both(torch, mat)[1] == {"x": [3.0, -1.0], "z": [0.0]}


def test_grad_dict_inputs_batched(torch):
    def fn(T):
        x, y = leaves(T)
        out = x * y
        return T.autograd.grad(out, {"x": x, "y": y}, T.eye(2), is_grads_batched=True)

    run_both(torch, fn)


def test_other_mappings_and_empty_inputs_are_refused_in_torch_s_words(torch):
    from types import MappingProxyType

    def grad_proxy(T):
        x, y = leaves(T)
        return T.autograd.grad((x * y).sum(), MappingProxyType({"x": x}))

    def backward_proxy(T):
        x, y = leaves(T)
        T.autograd.backward((x * y).sum(), inputs=MappingProxyType({"x": x}))

    def grad_empty(T):
        x, y = leaves(T)
        return T.autograd.grad((x * y).sum(), {})

    def backward_empty(T):
        x, y = leaves(T)
        T.autograd.backward((x * y).sum(), inputs=[])

    for fn in (grad_proxy, backward_proxy, grad_empty, backward_empty):
        assert run_both(torch, fn)[0] == "raised"


def test_only_inputs_false_warns_as_torch(torch):
    def fn(T):
        x, y = leaves(T)
        return T.autograd.grad((x * y).sum(), x, only_inputs=False)
    r = run_both(torch, fn)
    assert r[2] and r[2][0][0] == "FutureWarning"


def test_tensor_backward_has_no_grad_variables(torch):
    def fn(T):
        x, y = leaves(T)
        (x * y).sum().backward(grad_variables=T.tensor(1.0))
    assert run_both(torch, fn)[0] == "raised"


@pytest.mark.parametrize("inputs", ["x", "list", "tuple"])
def test_the_usual_forms_still_agree(torch, inputs):
    def fn(T):
        x, y = leaves(T)
        ins = {"x": x, "list": [x, y], "tuple": (y, x)}[inputs]
        return T.autograd.grad((x * x * y).sum(), ins)
    run_both(torch, fn)
