"""``torch.utils._pytree``: the containers torch walks (tuples, lists, dicts, namedtuples, OrderedDict, defaultdict,
deque; anything else, ``None`` included, is a leaf), with the spec type that ``torch.func``'s transforms use
(``func/_forward.py``), printed as torch's ``TreeSpec``."""

from __future__ import annotations

import warnings
from typing import Any

from ..func._forward import _LEAF, REGISTERED, _Spec, tree_flatten

__all__ = ["TreeSpec", "LeafSpec", "tree_flatten", "tree_unflatten", "tree_leaves", "tree_structure", "tree_iter",
           "tree_is_leaf", "tree_map", "tree_map_", "tree_map_only", "tree_map_only_", "tree_all", "tree_any",
           "tree_all_only", "tree_any_only", "register_pytree_node", "PyTree"]

PyTree = Any


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None):
    """Make ``cls`` a container node: ``flatten_fn(x) -> (children, context)``, ``unflatten_fn(children, context)``
    rebuilds it (norse's state tuples, model-output classes); the tree functions and ``torch.func`` walk into it."""
    if cls in REGISTERED:
        raise ValueError(f"{cls} is already registered as pytree node.")
    REGISTERED[cls] = (flatten_fn, unflatten_fn)


def _register_pytree_node(cls, flatten_fn, unflatten_fn, to_str_fn=None, maybe_from_str_fn=None, *,
                          serialized_type_name=None, to_dumpable_context=None, from_dumpable_context=None):
    """The deprecated spelling of ``register_pytree_node``."""
    warnings.warn("`torch.utils._pytree._register_pytree_node` is deprecated. Please use "
                  "`torch.utils._pytree.register_pytree_node` instead.", FutureWarning, stacklevel=2)
    register_pytree_node(cls, flatten_fn, unflatten_fn)


def _namedtuple_flatten(d):
    return list(d), type(d)


def _namedtuple_unflatten(values, context):
    return context(*values)

TreeSpec = _Spec


def LeafSpec():  # noqa: N802  (torch's name; a leaf's spec)
    return _LEAF


def tree_unflatten(leaves, treespec):
    return treespec.unflatten(leaves)


def tree_leaves(tree):
    return tree_flatten(tree)[0]


def tree_iter(tree):
    return iter(tree_leaves(tree))


def tree_structure(tree):
    return tree_flatten(tree)[1]


def tree_is_leaf(tree):
    return tree_structure(tree).is_leaf()


def tree_map(func, tree, *rests):
    """``func`` over the leaves of ``tree`` (and the same-shaped ``rests``), in a tree of the same structure."""
    leaves, spec = tree_flatten(tree)
    others = [_leaves_like(r, spec) for r in rests]
    return spec.unflatten(map(func, leaves, *others))


def tree_map_(func, tree, *rests):
    """``func`` over the leaves for its side effects (in-place updates); returns ``tree``."""
    leaves, spec = tree_flatten(tree)
    for args in zip(leaves, *[_leaves_like(r, spec) for r in rests]):
        func(*args)
    return tree


def _leaves_like(tree, spec):
    leaves, other = tree_flatten(tree)
    if other != spec:
        raise ValueError(f"Tree structure mismatch:\n{other}\n{spec}")
    return leaves


def _only(types, func):
    return lambda x: func(x) if isinstance(x, types) else x


def tree_map_only(type_or_types, func, tree):
    return tree_map(_only(type_or_types, func), tree)


def tree_map_only_(type_or_types, func, tree):
    return tree_map_(_only(type_or_types, func), tree)


def tree_all(pred, tree):
    return all(map(pred, tree_leaves(tree)))


def tree_any(pred, tree):
    return any(map(pred, tree_leaves(tree)))


def tree_all_only(type_or_types, pred, tree):
    return all(pred(x) for x in tree_leaves(tree) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, pred, tree):
    return any(pred(x) for x in tree_leaves(tree) if isinstance(x, type_or_types))
