"""``torch.utils._pytree`` (private, but imported by real libraries such as lucidrains/ema-pytorch): flattening,
specs and their printing, unflattening and the tree_map family, against torch's."""

import collections

import pytest


Point = collections.namedtuple("Point", "x y")


def _trees(T):
    t = T.ones(2)
    return [
        {"a": None, "b": (1, [2, 3]), "c": collections.OrderedDict(x=4)},
        None, 5, t, [1, (2, None)], (), [], {},
        Point(1, [t, 2]),
        collections.defaultdict(int, a=1, b=[2]),
        collections.deque([1, (2, 3)]),
        [collections.UserList([1, 2]), {"k": (t,)}],
        T.Size([2, 3]), T.max(T.tensor([[1.0, 5.0], [3.0, 2.0]]), 0),
    ]


def _describe(T, tree):
    pt = T.utils._pytree
    leaves, spec = pt.tree_flatten(tree)
    back = pt.tree_unflatten(leaves, spec)
    return (repr(spec).replace("torch.", "").replace("tapegrad.", ""),
            [type(x).__name__ for x in leaves], spec.num_leaves, spec.is_leaf(), len(pt.tree_leaves(tree)),
            type(back).__name__, repr(pt.tree_structure(tree)) == repr(spec), _plain(back))


def _plain(x):
    if hasattr(x, "tolist") and not isinstance(x, (list, tuple)):
        return ("tensor", x.tolist())
    if isinstance(x, dict):
        return (type(x).__name__, [(k, _plain(v)) for k, v in x.items()])
    if isinstance(x, (list, tuple, collections.deque)):
        return (type(x).__name__, [_plain(v) for v in x])
    return x


@pytest.mark.parametrize("i", range(14))
def test_flatten_and_unflatten_match_torch(torch, i):
    import tapegrad.utils._pytree  # noqa: F401
    import torch.utils._pytree  # noqa: F401
    assert _describe(tapegrad, _trees(tapegrad)[i]) == _describe(torch, _trees(torch)[i])


def test_tree_map_family_matches_torch(torch):
    import tapegrad.utils._pytree  # noqa: F401
    import torch.utils._pytree  # noqa: F401

    def run(T):
        pt = T.utils._pytree
        tree = {"w": T.tensor([1.0, -2.0]), "meta": (3, "s", [4.5, 6])}
        out = [pt.tree_map(lambda a, b: a + b, (1, [2]), (10, [20])),
               _plain(pt.tree_map(lambda x: x * 2, tree)),
               _plain(pt.tree_map_only(int, lambda x: -x, tree)),
               _plain(pt.tree_map_only((int, float), lambda x: 0, tree)),
               pt.tree_all(lambda x: x > 0, [1, 2]), pt.tree_any(lambda x: x > 1, [1, 2]),
               list(pt.tree_iter((1, {"a": 2}))), pt.tree_is_leaf(5), pt.tree_is_leaf([5])]
        ys = [T.zeros(2), T.zeros(1)]
        pt.tree_map_(lambda y, v: y.add_(v), ys, [T.ones(2), T.ones(1)])
        out.append([y.tolist() for y in ys])
        spec = pt.tree_structure((1, {"a": 2}))
        out.append(spec.unflatten([5, 6]))
        out.append(spec == pt.tree_structure((7, {"a": 8})))
        out.append(spec == pt.tree_structure((7, {"b": 8})))
        return out
    assert run(tapegrad) == run(torch)


def test_unflatten_wrong_number_of_leaves_is_an_error(torch):
    import torch.utils._pytree  # noqa: F401

    import tapegrad.utils._pytree as ours
    spec = ours.tree_structure((1, 2))
    with pytest.raises(ValueError):
        torch.utils._pytree.tree_structure((1, 2)).unflatten([1])
    with pytest.raises(ValueError):
        spec.unflatten([1])


def test_registered_node_types_flatten_like_torch(torch):
    # norse registers its state tuples, model-output classes register themselves: a registered class is a node
    import tapegrad

    def run(lib):
        p = lib.utils._pytree

        class Box:
            def __init__(self, v, tag):
                self.v, self.tag = v, tag

        p.register_pytree_node(Box, lambda b: ([b.v, b.tag], "box"), lambda vals, ctx: Box(vals[0], vals[1] + ctx))
        with pytest.raises(ValueError) as err:
            p.register_pytree_node(Box, lambda b: ([b.v], None), lambda vals, ctx: Box(vals[0], ""))
        State = collections.namedtuple("State", "v i")
        with pytest.warns(FutureWarning, match="_register_pytree_node` is deprecated"):
            p._register_pytree_node(State, p._namedtuple_flatten, p._namedtuple_unflatten)
        tree = [Box((lib.ones(2), 2), "t"), State(3, Box(4, "u")), {"k": Box(0, "")}]
        leaves, spec = p.tree_flatten(tree)
        back = p.tree_unflatten(leaves, spec)
        doubled = p.tree_map(lambda x: x * 2 if not isinstance(x, str) else x, tree)
        return (len(leaves), [x for x in leaves if not isinstance(x, lib.Tensor)], str(spec).replace("tapegrad", ""),
                back[0].tag, back[1].i.tag, doubled[0].v[0].tolist(), doubled[1].i.v, spec.num_leaves,
                str(err.value).split("'")[-1], p._namedtuple_flatten(State(1, 2))[0], p.PyTree)

    assert run(tapegrad) == run(torch)
