"""Which ops of the table are also checked with complex inputs (torch 2.13's op_db ``dtypes`` list complex128
for them), and how their complex samples are made.

``COMPLEX`` names specs of ``specs/``; ``tests/ops/test_complex_ops.py`` runs each of them on complex versions of
its first samples (``complex_samples``): every float array of the sample gets an imaginary part (kept apart by
``REAL_ARGS`` where an argument must stay real), and is compared with torch (values, dtypes, grad_fn names,
gradients with complex cotangents, second derivatives) and gradcheck'd / gradgradcheck'd the way torch checks
complex functions. (A list here rather than a flag on each spec: the spec files stay as they are.)
"""

from __future__ import annotations

import numpy as np

# the ops of the table torch supports with complex input (forward, and backward except the comparisons/logic)
COMPLEX = set("""
H T abs acos acosh add addbmm addcdiv addcmul addmm addmv addr adjoint all allclose any argwhere asin asinh atan
atanh arcsin arctan arccosh atleast_1d atleast_2d atleast_3d atleast_many baddbmm bmm broadcast_tensors
broadcast_to cat cat_promote chain_matmul cholesky cholesky_inverse cholesky_solve chunk clone column_stack concat
concatenate contiguous cos cosh count_nonzero cross cumprod cumsum det diag diag_embed diagflat diagflat_method
diagonal div dot dsplit dstack einsum einsum_list einsum_sublist eq equal exp exp2 expand expand_as expand_sizes
expm1 flatten flip fliplr flipud float_power float_power_rscalar gather ger getitem_advanced getitem_int
getitem_int_key getitem_int_list getitem_mixed getitem_none_ellipsis getitem_slice getitem_slice_key
getitem_tensor_index hsplit hstack index_add index_copy index_fill index_put index_select inner inverse isclose
isfinite isinf isnan isreal kron lerp linalg.cholesky linalg.cholesky_ex linalg.cond linalg.cond_p linalg.cross
linalg.det linalg.diagonal linalg.eigh linalg.eigvalsh linalg.inv linalg.inv_ex linalg.lstsq linalg.matmul
linalg.matrix_exp linalg.matrix_norm linalg.matrix_power linalg.matrix_rank linalg.multi_dot linalg.norm
linalg.pinv linalg.pinv_hermitian linalg.qr linalg.qr_r linalg.slogdet linalg.solve linalg.solve_ex
linalg.solve_triangular linalg.svd linalg.svdvals linalg.vecdot linalg.vector_norm log log10 log1p log2 logdet
logical_and logical_not logical_or logical_xor logsumexp mT masked_fill masked_scatter masked_select matmul
matmul_operator matrix_exp matrix_power mean mean_reduce mm moveaxis movedim mul mul_self mv narrow narrow_copy
ne neg nn.functional.channel_shuffle nn.functional.conv1d nn.functional.conv2d nn.functional.conv3d
nn.functional.conv_transpose1d nn.functional.conv_transpose2d nn.functional.conv_transpose3d
nn.functional.l1_loss nn.functional.linear nn.functional.normalize nn.functional.pad
nn.functional.pairwise_distance nn.functional.pixel_shuffle nn.functional.pixel_unshuffle nn.functional.rms_norm
nn.functional.softsign nn.functional.tanhshrink nn.functional.triplet_margin_loss
nn.functional.triplet_margin_with_distance_loss nn.functional.unfold nonzero norm not_equal outer permute
permute_dims pinverse pow pow_operator pow_scalar pow_tensor prod put qr radd_operator ravel rdiv_operator
reciprocal repeat repeat_interleave reshape reshape_fn reshape_shape rmul_operator roll rot90 rpow_operator rsqrt
rsub_float_operator rsub_int_operator rsub_operator rtruediv_operator scatter scatter_add scatter_value select
setitem_adv_slice setitem_full_slice setitem_int setitem_list setitem_mixed setitem_none setitem_slice
setitem_tensor_index sigmoid sin sinh slogdet split split_method split_with_sizes sqrt square square_operator
squeeze squeeze_dim squeeze_dims stack std std_mean sub sub_operator sum sum_reduce svd svd_no_uv swapaxes
swapdims t t_fn take take_along_dim tan tanh tensor_split tensordot tile trace transpose transpose_dims
true_divide truediv_operator unbind unflatten unfold unsqueeze unsqueeze_dims var var_mean vdot view view_as
view_shape vsplit vstack where where_method
logaddexp logcumsumexp meshgrid meshgrid_list block_diag cartesian_prod combinations diff diff_method trapezoid
trapz cumulative_trapezoid row_stack cov corrcoef dist renorm vander fill
""".split())

# ops whose value is a function of |x| only: an imaginary part of the same size keeps the samples well inside
# their domain, which the default scale (0.5) does not always do
SCALE = {"acosh": 0.3, "arccosh": 0.3}

# positions of float arguments that stay real in the complex samples
REAL_ARGS: dict[str, tuple] = {
    "lerp": (2,),          # (the weight may be complex too, but a real weight is the common case)
}

def _triangle(args, upper_pos, factor_pos):
    """A Cholesky factor kept one: triangular (torch reads only one triangle of it) with a real diagonal."""
    args = list(args)
    upper = len(args) > upper_pos and args[upper_pos] is True
    f = np.triu(args[factor_pos]) if upper else np.tril(args[factor_pos])
    i = np.arange(f.shape[-1])
    f[..., i, i] = f[..., i, i].real        # (a Cholesky factor's diagonal is real and positive)
    args[factor_pos] = f
    return tuple(args)


# ops whose complex samples need a last touch (args -> args)
ADJUST = {
    "cholesky_solve": lambda args: _triangle(args, 2, 1),
    "cholesky_inverse": lambda args: _triangle(args, 1, 0),
}

N_SAMPLES = 2              # complex versions of the first samples only (gradcheck of complex input costs 4x)


def _c(a, rng, scale):
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        out = np.empty_like(a, dtype=np.complex128)     # (the same memory layout: non-contiguous stays so)
        out.real = a
        out.imag = scale * rng.standard_normal(a.shape)
        return out
    if isinstance(a, (list, tuple)) and a and all(isinstance(e, np.ndarray) for e in a):
        return type(a)(_c(e, rng, scale) for e in a)
    return a


def _has_float(a):
    if isinstance(a, np.ndarray):
        return a.dtype.kind == "f"
    if isinstance(a, (list, tuple)):
        return any(_has_float(e) for e in a)
    return False


def complex_samples(spec, rng):
    """Complex versions of the spec's first samples that have a float argument."""
    from ops.op_db import Sample
    out = []
    keep = REAL_ARGS.get(spec.name, ())
    scale = SCALE.get(spec.name, 0.5)
    for s in spec.samples(np.random.default_rng(0)):
        if not any(_has_float(a) for a in s.args):
            continue
        args = tuple(a if i in keep else _c(a, rng, scale) for i, a in enumerate(s.args))
        if spec.name in ADJUST:
            args = ADJUST[spec.name](args)
        kwargs = {k: _c(v, rng, scale) for k, v in s.kwargs.items()}
        out.append(Sample(args, kwargs, s.name, s.smooth))
        if len(out) == N_SAMPLES:
            break
    return out
