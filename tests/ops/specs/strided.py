"""Specs of the strided views (``as_strided``), the ``*_scatter`` ops, the ``*_copy`` variants of the views and the
``unsafe_*`` splits. Several outputs (the splits) are compared piece by piece."""

from ops.op_db import OpSpec, S, noncontig, randn


def _strided_samples(r):
    return [S(randn(r, 3, 4), (2, 2), (1, 2)), S(randn(r, 3, 4), (3, 3), (1, 1), name="overlapping"),
            S(randn(r, 12), (2, 3), (3, 1), 2, name="offset"), S(noncontig(randn(r, 3, 4)), (2, 2), (3, 1),
                                                                  name="noncontig_input"),
            S(randn(r, 6), (0, 2), (1, 1), name="empty"), S(randn(r, 4), (), (), 3, name="0d")]


def _slice_inverse(m, base, d, *a):
    """slice_inverse as it is used: ``src`` is the base the slice came from (its gradient then reaches the base
    through both arguments)."""
    return m.slice_inverse(base[(slice(None),) * d + (slice(*a),)], base, d, *a)


SPECS = [
    OpSpec("as_strided", lambda m, x, *a: m.as_strided(x, *a), _strided_samples, complex=True),
    OpSpec("as_strided_method_of_view", lambda m, x: (x[1:] * 1)[1:].as_strided((2, 2), (1, 2)), lambda r: [
        S(randn(r, 8))], check_grad_fn=False),
    OpSpec("as_strided_copy", lambda m, x, *a: m.as_strided_copy(x, *a), _strided_samples),
    OpSpec("as_strided_scatter", lambda m, x, s, *a: m.as_strided_scatter(x, s, *a), lambda r: [
        S(randn(r, 3, 4), randn(r, 2, 2), (2, 2), (1, 2)), S(randn(r, 10), randn(r, 3), (3,), (3,), 1, name="offset")],
        grad=False, notes="gradients checked by gradcheck in tests/ops/test_new_ops_linalg_signal.py: torch's own "
                          "gradient of the input is wrong (its op_db skips the gradient tests)"),
    OpSpec("diagonal_scatter", lambda m, x, s, *a, **k: m.diagonal_scatter(x, s, *a, **k), lambda r: [
        S(randn(r, 3, 4), randn(r, 3)), S(randn(r, 3, 4), randn(r, 2), 2, name="offset"),
        S(randn(r, 2, 3, 3), randn(r, 2, 2), -1, 1, 2, name="dims"),
        S(randn(r, 3, 3), randn(r, 2), offset=-1, dim1=1, dim2=0, name="kwargs")], complex=True),
    OpSpec("select_scatter", lambda m, x, s, *a: m.select_scatter(x, s, *a), lambda r: [
        S(randn(r, 3, 4), randn(r, 4), 0, 1), S(randn(r, 3, 4), randn(r, 3), -1, -2, name="neg"),
        S(randn(r, 2), randn(r), 0, 0, name="to_0d")], complex=True),
    OpSpec("slice_scatter", lambda m, x, s, *a, **k: m.slice_scatter(x, s, *a, **k), lambda r: [
        S(randn(r, 4, 3), randn(r, 2, 3), 0, 2), S(randn(r, 3, 5), randn(r, 3, 2), 1, 1, 5, 2, name="step"),
        S(randn(r, 3, 4), randn(r, 3, 1), dim=-1, start=-1, name="neg_start"),
        S(randn(r, 3, 4), randn(r, 0, 4), 0, 2, 2, name="empty")], complex=True),
    OpSpec("Tensor.slice_scatter", lambda m, x, s: x.slice_scatter(s, 1, 0, 2), lambda r: [
        S(randn(r, 2, 3), randn(r, 2, 2))]),
    OpSpec("slice_inverse", lambda m, x, d, *a: _slice_inverse(m, x * 1, d, *a), lambda r: [
        S(randn(r, 3, 4), 1, 1, 3), S(randn(r, 5, 2), 0, 1, 5, 2, name="step")]),
    OpSpec("unsafe_split", lambda m, x, *a: m.unsafe_split(x, *a), lambda r: [
        S(randn(r, 5, 2), 2), S(randn(r, 3, 4), 3, 1, name="dim")]),
    OpSpec("unsafe_chunk", lambda m, x, *a: m.unsafe_chunk(x, *a), lambda r: [
        S(randn(r, 5, 2), 2), S(randn(r, 3, 4), 3, -1, name="dim")]),
    OpSpec("unsafe_split_with_sizes", lambda m, x, *a: m.unsafe_split_with_sizes(x, *a), lambda r: [
        S(randn(r, 5, 2), [1, 4]), S(randn(r, 3, 4), [2, 0, 2], 1, name="dim_zero")]),
    OpSpec("alias_copy", lambda m, x: m.alias_copy(x), lambda r: [S(randn(r, 2, 3))]),
    OpSpec("diagonal_copy", lambda m, x, *a: m.diagonal_copy(x, *a), lambda r: [
        S(randn(r, 3, 4)), S(randn(r, 2, 3, 3), 1, 1, 2, name="dims")]),
    OpSpec("expand_copy", lambda m, x, s: m.expand_copy(x, s), lambda r: [S(randn(r, 3, 1), (2, 3, 4))]),
    OpSpec("permute_copy", lambda m, x, d: m.permute_copy(x, d), lambda r: [S(randn(r, 2, 3, 4), (2, 0, 1))]),
    OpSpec("select_copy", lambda m, x, *a: m.select_copy(x, *a), lambda r: [S(randn(r, 3, 4), 1, -1)]),
    OpSpec("slice_copy", lambda m, x, *a: m.slice_copy(x, *a), lambda r: [
        S(randn(r, 5, 3)), S(randn(r, 3, 6), 1, 1, 6, 2, name="step")]),
    OpSpec("split_copy", lambda m, x, *a: m.split_copy(x, *a), lambda r: [S(randn(r, 5, 2), 2)]),
    OpSpec("split_with_sizes_copy", lambda m, x, *a: m.split_with_sizes_copy(x, *a), lambda r: [
        S(randn(r, 3, 4), [1, 3], 1)]),
    OpSpec("squeeze_copy", lambda m, x, *a: m.squeeze_copy(x, *a), lambda r: [
        S(randn(r, 1, 3, 1)), S(randn(r, 1, 3, 1), 2, name="dim")]),
    OpSpec("t_copy", lambda m, x: m.t_copy(x), lambda r: [S(randn(r, 2, 3))]),
    OpSpec("transpose_copy", lambda m, x, *a: m.transpose_copy(x, *a), lambda r: [S(randn(r, 2, 3, 4), 0, 2)]),
    OpSpec("unbind_copy", lambda m, x, *a: m.unbind_copy(x, *a), lambda r: [S(randn(r, 2, 3), 1)]),
    OpSpec("unfold_copy", lambda m, x, *a: m.unfold_copy(x, *a), lambda r: [S(randn(r, 3, 7), 1, 3, 2)]),
    OpSpec("unsqueeze_copy", lambda m, x, *a: m.unsqueeze_copy(x, *a), lambda r: [S(randn(r, 2, 3), -1)]),
    OpSpec("view_copy", lambda m, x, *a: m.view_copy(x, *a), lambda r: [S(randn(r, 2, 6), (3, 4))]),
    # the copies computed on the arrays (no gradient): vmap must see every sample's values
    OpSpec("view_copy_dtype", lambda m, x: m.view_copy(x, m.int32), lambda r: [S(randn(r, 2, 4))], grad=False),
    OpSpec("detach_copy", lambda m, x: m.detach_copy(x), lambda r: [S(randn(r, 2, 3))], grad=False),
    OpSpec("view_as_complex_copy", lambda m, x: m.view_as_complex_copy(x.detach()), lambda r: [S(randn(r, 3, 2))],
           grad=False),
    OpSpec("view_as_real_copy", lambda m, x: m.view_as_real_copy(m.complex(x, 2 * x)), lambda r: [S(randn(r, 3))],
           check_grad_fn=False),
]
