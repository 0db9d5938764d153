"""torch refuses to change in place, while recording, a view that one op returned among several (split, chunk,
unbind, and views of those): the error names the view's own node and output number. It also refuses to change
with grad mode on a view made under no_grad, when its base requires grad or the change is recorded. Everything
else stays allowed: such views when nothing records, other views, detached or cloned pieces, a no_grad view
changed under no_grad."""

import pytest


def _cases(T):
    x = T.ones(4, 3, requires_grad=True)
    y = x * 2

    def under_no_grad():
        a = y.split(2)[0]
        with T.no_grad():
            a.mul_(2)

    def no_grad_view(base):
        with T.no_grad():
            return base[0]

    def no_grad_view_changed_under_no_grad():
        v = no_grad_view(y)
        with T.no_grad():
            v.mul_(2)
        y.sum().backward()

    return {
        "no_grad_view": lambda: no_grad_view(y).mul_(2),
        "no_grad_view_recorded": lambda: no_grad_view(y).add_(x[0]),
        "no_grad_view_of_leaf": lambda: no_grad_view(x).mul_(2),
        "no_grad_view_base_needs_no_grad": lambda: no_grad_view(T.ones(4, 3)).add_(1),
        "no_grad_view_base_needs_no_grad_recorded": lambda: no_grad_view(T.ones(4, 3)).add_(x[0]),
        "no_grad_view_detached": lambda: no_grad_view(y).detach().mul_(2),
        "no_grad_view_changed_under_no_grad": no_grad_view_changed_under_no_grad,
        "no_grad_split": lambda: _no_grad_split(T, y).mul_(2),
        "split": lambda: y.split(2)[0].mul_(2),
        "split_of_leaf": lambda: x.split(2)[0].mul_(2),
        "unbind": lambda: y.unbind(0)[1].add_(1),
        "chunk": lambda: y.chunk(2)[1].zero_(),
        "split_sizes": lambda: y.split([1, 3])[1].mul_(2),
        "view_of_unbind": lambda: y.unbind(0)[0].view(3).add_(1),
        "select_of_split": lambda: y.split(2)[0][0].mul_(2),
        "setitem": lambda: y.split(2)[0].__setitem__(0, 5.0),
        "inplace_view": lambda: y.split(2)[0].t_(),
        "other_arg_needs_grad": lambda: T.ones(4, 3).split(2)[0].add_(x[:2]),
        "tensor_split": lambda: y.tensor_split(2)[0].mul_(2),
        "base_needs_no_grad": lambda: T.ones(4, 3).split(2)[0].mul_(2),
        "detached": lambda: y.split(2)[0].detach().mul_(2),
        "cloned": lambda: y.split(2)[0].clone().mul_(2),
        "under_no_grad": under_no_grad,
    }


def _no_grad_split(T, y):
    with T.no_grad():
        return y.split(2)[0]


def _outcome(T, name):
    try:
        _cases(T)[name]()
    except RuntimeError as e:
        return str(e)
    return "ok"


@pytest.mark.parametrize("name", sorted(_cases(__import__("tapegrad"))))
def test_in_place_on_multi_output_views_as_torch(torch, name):
    import tapegrad
    assert _outcome(tapegrad, name) == _outcome(torch, name)


def test_the_error_says_what_to_do():
    import tapegrad
    msg = _outcome(tapegrad, "unbind")
    assert msg.startswith("Output 1 of Unbind is a view and is being modified inplace.")
    assert msg.endswith("You should replace the inplace operation by an out-of-place one.")


def test_a_view_of_a_no_grad_view_is_refused_too(torch):
    # the no_grad view requires grad (its base does), so a view of it made with grad mode on has a node, which the
    # message names: "Output 0 of View is a view of a view which was created in no_grad mode ..."
    import tapegrad

    def outcomes(T):
        y = T.ones(4, 3, requires_grad=True) * 2
        with T.no_grad():
            v = y[0]
        out = []
        for change in (lambda: v.view(3).mul_(2), lambda: v.__setitem__(0, 5.0)):
            try:
                change()
                out.append("ok")
            except RuntimeError as e:
                out.append(str(e))
        return out

    got = outcomes(tapegrad)
    assert got[0].startswith("Output 0 of View is a view of a view which was created in no_grad mode and is being "
                             "modified inplace with grad mode enabled. Given that this use case is ambiguous")
    assert got == outcomes(torch)
