"""Specs of the fixes and additions found by running torch's op_db against tapegrad (tests/ops/torch_op_db.py):
reflected operators called with a Tensor, subgradients at zero, empty inputs, and the names added for torch's API
surface."""

import numpy as np

from ops.op_db import OpSpec, S, randn

F = lambda m: m.nn.functional  # noqa: E731

SPECS = [
    # x.__rsub__(t) etc. called with a Tensor (torch's OpInfos call them so): t - x, t ** x, t % x, t / x
    OpSpec("Tensor.__rsub__", lambda m, x, y: x.__rsub__(y), lambda r: [
        S(randn(r, 2, 3), randn(r, 3)), S(randn(r), randn(r, 2), name="0d")]),
    OpSpec("Tensor.__rpow__", lambda m, x, y: x.__rpow__(y), lambda r: [
        S(randn(r, 2, 3), randn(r, 3, positive=True))]),
    OpSpec("Tensor.__rmod__", lambda m, x, y: x.__rmod__(y), lambda r: [
        S(randn(r, 3, positive=True) + 1, randn(r, 3) * 5)], gradgrad=False),
    OpSpec("Tensor.__rdiv__", lambda m, x, y: x.__rdiv__(y), lambda r: [
        S(randn(r, 3, positive=True), randn(r, 2, 3)), S(randn(r, 3, positive=True), 2.0, name="number")]),
    # ord < 1 (and negative ord) at a zero vector: the zero subgradient, as torch
    OpSpec("linalg.vector_norm_subgradient_at_zero", lambda m, x, o: m.linalg.vector_norm(x, o), lambda r: [
        S(np.zeros(4), o, name=f"ord{o}", smooth=False) for o in (0.5, -0.5, -1, -2)] + [
        S(np.array([0.0, 1.5, -2.0]), 0.5, name="some_zeros", smooth=False)], gradgrad=False),
    OpSpec("nn.functional.batch_norm_empty", lambda m, x, rm, rv, *wb: F(m).batch_norm(x, rm, rv, *wb, training=True),
           lambda r: [S(np.zeros((0,)), np.zeros(0), np.ones(0), name="1d"),
                      S(np.zeros((0, 3)), np.zeros(5), np.ones(5), randn(r, 2), randn(r, 2), name="weight_bias")]),
    OpSpec("unique_consecutive_empty_dim", lambda m, x, **kw: m.unique_consecutive(x, **kw), lambda r: [
        S(np.zeros((5, 0, 5)), dim=1), S(np.zeros((5, 0, 5)), dim=1, return_inverse=True, return_counts=True)],
        grad=False),
    OpSpec("nn.functional.fractional_max_pool3d_empty_batch",
           lambda m, x, u, k, **kw: F(m).fractional_max_pool3d(x, k, _random_samples=u.detach(), **kw),
           lambda r: [S(np.zeros((0, 1, 4, 5, 4)), np.zeros((0, 1, 3)), (2, 2, 1), output_size=2)]),
]
