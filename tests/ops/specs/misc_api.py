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


def _rnn_params(r, layers, dirs, gates, inp, hid, bias=True):
    out = []
    for layer in range(layers):
        for _ in range(dirs):
            i = inp if layer == 0 else hid * dirs
            out += [randn(r, gates * hid, i) * 0.5, randn(r, gates * hid, hid) * 0.5]
            if bias:
                out += [randn(r, gates * hid) * 0.5, randn(r, gates * hid) * 0.5]
    return out


def _grid(r, n, h, w):
    return randn(r, n, h, w, 2, low=-1.1, high=1.1)


SPECS += [
    # ATen's forms of the nn ops (torch's top-level names)
    OpSpec("convolution", lambda m, x, w, b, *a: m.convolution(x, w, b, *a), lambda r: [
        S(randn(r, 2, 2, 5, 5), randn(r, 3, 2, 3, 3), randn(r, 3), (1, 1), (1, 0), (1, 1), False, (0, 0), 1,
          name="conv2d"),
        S(randn(r, 1, 2, 5), randn(r, 2, 3, 2), None, (2,), (0,), (1,), True, (1,), 1, name="transposed1d")]),
    OpSpec("constant_pad_nd", lambda m, x, p, *v: m.constant_pad_nd(x, p, *v), lambda r: [
        S(randn(r, 2, 3), (1, 2)), S(randn(r, 2, 3, 2), (1, 0, 0, 2), 1.5, name="value")]),
    OpSpec("grid_sampler_2d", lambda m, x, g, *a: m.grid_sampler_2d(x, g, *a), lambda r: [
        S(randn(r, 1, 2, 4, 4), _grid(r, 1, 3, 3), 0, 0, False),
        S(randn(r, 1, 1, 4, 5), _grid(r, 1, 2, 3), 0, 1, True, name="border_aligned")], gradgrad=False),
    OpSpec("affine_grid_generator", lambda m, t, *a: m.affine_grid_generator(t, *a), lambda r: [
        S(randn(r, 2, 2, 3), (2, 1, 3, 4), False)]),
    OpSpec("native_group_norm", lambda m, x, w, b, *a: m.native_group_norm(x, w, b, *a), lambda r: [
        S(randn(r, 2, 4, 3), randn(r, 4), randn(r, 4), 2, 4, 3, 2, 1e-5)], check_grad_fn=False),
    OpSpec("max_pool1d_with_indices", lambda m, x, *a: m.max_pool1d_with_indices(x, *a), lambda r: [
        S(randn(r, 1, 2, 7), 3, 2)], output_process=lambda out: out[0]),
    OpSpec("rnn_tanh_cell", lambda m, x, h, *w: m.rnn_tanh_cell(x, h, *w), lambda r: [
        S(randn(r, 2, 3), randn(r, 2, 4), randn(r, 4, 3), randn(r, 4, 4), randn(r, 4), randn(r, 4))],
        check_grad_fn=False),
    OpSpec("rnn_relu_cell", lambda m, x, h, *w: m.rnn_relu_cell(x, h, *w), lambda r: [
        S(randn(r, 2, 3), randn(r, 2, 4), randn(r, 4, 3), randn(r, 4, 4))], check_grad_fn=False),
    OpSpec("lstm_cell", lambda m, x, h, c, *w: m.lstm_cell(x, (h, c), *w), lambda r: [
        S(randn(r, 2, 3), randn(r, 2, 4), randn(r, 2, 4), randn(r, 16, 3), randn(r, 16, 4), randn(r, 16),
          randn(r, 16))], check_grad_fn=False),
    OpSpec("gru_cell", lambda m, x, h, *w: m.gru_cell(x, h, *w), lambda r: [
        S(randn(r, 2, 3), randn(r, 2, 4), randn(r, 12, 3), randn(r, 12, 4), randn(r, 12), randn(r, 12))],
        check_grad_fn=False),
    OpSpec("lstm", lambda m, x, h, c, *p, nl=1, bi=False, bf=False: m.lstm(x, (h, c), list(p), True, nl, 0.0, False,
                                                                           bi, bf),
           lambda r: [S(randn(r, 3, 2, 3), randn(r, 2, 2, 4) * 0.5, randn(r, 2, 2, 4) * 0.5,
                        *_rnn_params(r, 2, 1, 4, 3, 4), nl=2, name="two_layers"),
                      S(randn(r, 2, 3, 3), randn(r, 2, 2, 4) * 0.5, randn(r, 2, 2, 4) * 0.5,
                        *_rnn_params(r, 1, 2, 4, 3, 4), bi=True, bf=True, name="bidirectional_batch_first")],
           check_grad_fn=False, gradgrad=False),
    OpSpec("gru", lambda m, x, h, *p: m.gru(x, h, list(p), True, 1, 0.0, False, False, False), lambda r: [
        S(randn(r, 3, 2, 3), randn(r, 1, 2, 4) * 0.5, *_rnn_params(r, 1, 1, 3, 3, 4))],
        check_grad_fn=False, gradgrad=False),
    OpSpec("rnn_tanh", lambda m, x, h, *p: m.rnn_tanh(x, h, list(p), False, 1, 0.0, False, False, False), lambda r: [
        S(randn(r, 3, 3), randn(r, 1, 4) * 0.5, *_rnn_params(r, 1, 1, 1, 3, 4, bias=False), name="unbatched")],
        check_grad_fn=False, gradgrad=False),
    OpSpec("rnn_relu", lambda m, x, h, *p: m.rnn_relu(x, h, list(p), True, 1, 0.0, False, False, False), lambda r: [
        S(randn(r, 3, 2, 3), randn(r, 1, 2, 4) * 0.5, *_rnn_params(r, 1, 1, 1, 3, 4))],
        check_grad_fn=False, gradgrad=False),
    OpSpec("alias_copy", lambda m, x: m.alias_copy(x), lambda r: [S(randn(r, 2, 3))]),
    OpSpec("Tensor.cdouble", lambda m, x: x.cdouble(), lambda r: [S(randn(r, 2, 3))]),
    OpSpec("nonzero_static", lambda m, x, **kw: m.nonzero_static(x, **kw), lambda r: [
        S(np.array([[0, 1.5], [2, 0], [0, 3]]), size=2), S(np.array([0.0, 1.0]), size=3, fill_value=-7,
                                                            name="padded")], grad=False),
]

SPECS += [
    OpSpec("linalg.tensorinv", lambda m, a, **kw: m.linalg.tensorinv(a, **kw), lambda r: [
        S(randn(r, 4, 6, 8, 3) * 0.3 + np.eye(24).reshape(4, 6, 8, 3), name="ind2"),
        S(randn(r, 6, 2, 3) * 0.3 + np.eye(6).reshape(6, 2, 3), ind=1, name="ind1")],
        check_grad_fn=False, notes="torch's last node is ReshapeAliasBackward0 (its inverse's layout), tapegrad's "
                                   "ViewBackward0"),
    OpSpec("linalg.tensorsolve", lambda m, a, b, **kw: m.linalg.tensorsolve(a, b, **kw), lambda r: [
        S(randn(r, 2, 3, 6) * 0.3 + np.eye(6).reshape(2, 3, 6), randn(r, 2, 3)),
        S(randn(r, 6, 2, 3) * 0.3 + np.eye(6).reshape(6, 2, 3), randn(r, 2, 3), dims=(0,), name="dims")]),
]

_MASK = np.array([[True, False, True, True], [False, False, False, False], [True, True, False, True]])

SPECS += [
    # tapegrad.masked (the whole family runs against torch's op_db in tests/ops/test_torch_op_db.py)
    OpSpec("masked.sum", lambda m, x, mk, *a, **kw: m.masked.sum(x, *a, mask=mk, **kw), lambda r: [
        S(randn(r, 3, 4), _MASK, 1), S(randn(r, 3, 4), _MASK[0], name="broadcast_mask_all_dims")]),
    OpSpec("masked.softmax", lambda m, x, mk, *a, **kw: m.masked.softmax(x, *a, mask=mk, **kw), lambda r: [
        S(randn(r, 3, 4), _MASK | np.array([[False], [True], [False]]), 1)]),
    OpSpec("masked.var", lambda m, x, mk, *a, **kw: m.masked.var(x, *a, mask=mk, **kw), lambda r: [
        S(randn(r, 3, 4), _MASK | np.array([[False], [True], [False]]), 1, unbiased=False),
        S(randn(r, 3, 4), _MASK, (0, 1), keepdim=True, name="all_dims")]),
]

SPECS += [
    # private ATen ops torch's op_db tests (torch's compiler and FSDP use them)
    OpSpec("_chunk_cat", lambda m, a, b, *args: m._chunk_cat([a, b], *args), lambda r: [
        S(randn(r, 2, 3), randn(r, 2, 5), 1, 2), S(randn(r, 2, 3), randn(r, 2, 5), 0, 3, name="dim0")],
        grad=False, notes="torch has no derivative for it (tapegrad's, a pad-reshape-cat, has one)"),
    OpSpec("_unsafe_masked_index", lambda m, x, mk, i, j, f: m._unsafe_masked_index(x, mk, [i, j], f), lambda r: [
        S(randn(r, 3, 4), np.arange(20).reshape(4, 5) % 3 == 0, np.arange(4).reshape(4, 1) * 2 - 2,
          np.arange(5).reshape(1, 5) - 1, -1.5)], check_grad_fn=False),
]

SPECS += [
    OpSpec("segment_reduce", lambda m, x, red, ln, **kw: m.segment_reduce(x, red, lengths=ln, **kw), lambda r: [
        S(randn(r, 6), "sum", np.array([2, 0, 4])), S(randn(r, 6, 2), "mean", np.array([3, 3]), name="mean"),
        S(randn(r, 5), "max", np.array([2, 0, 3]), initial=0.5, name="max_initial"),
        S(randn(r, 2, 5), "prod", np.array([[2, 3], [4, 1]]), axis=1, name="batched_axis1"),
        S(randn(r, 5), "amin", np.array([1, 4]), name="amin")],
        check_grad_fn=False, gradgrad=False,
        notes="tapegrad composes slices and reductions (torch: one SegmentReduceBackward0, no second derivative)"),
]

SPECS += [
    # tolerances as tensors over the batch, and an empty batch with empty tolerance tensors (torch's op_db)
    OpSpec("linalg.matrix_rank_tensor_tolerances", lambda m, a, at, rt: m.linalg.matrix_rank(a, atol=at, rtol=rt),
           lambda r: [S(randn(r, 2, 4, 3), np.array([0.5, 0.0]), np.array([0.0, 0.3])),
                      S(randn(r, 0, 3, 3), np.zeros(0), np.zeros(0), name="empty_batch")], grad=False),
]
