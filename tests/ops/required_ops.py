"""The ops the op-library issue requires, by family (the completeness test and docs/ops.md use this list)."""

REQUIRED = {
    "elementwise (one input)": """neg abs sign exp exp2 expm1 log log2 log10 log1p sqrt rsqrt square reciprocal sin cos
        tan asin acos atan sinh cosh tanh asinh acosh atanh sigmoid logit erf erfc erfinv relu relu6 leaky_relu elu
        selu celu gelu silu mish softplus softsign hardtanh hardsigmoid hardswish logsigmoid floor ceil round trunc
        frac clamp clip nan_to_num""",
    "elementwise (two or more)": """add sub mul div true_divide pow float_power atan2 hypot maximum minimum fmax fmin
        fmod remainder lerp where addcmul addcdiv copysign eq ne lt le gt ge logical_and logical_or logical_not
        logical_xor isnan isinf isfinite allclose isclose equal""",
    "reductions": """sum mean prod var std var_mean std_mean max min amax amin argmax argmin logsumexp norm cumsum
        cumprod cummax cummin all any median mode count_nonzero""",
    "shape": """reshape view view_as flatten unflatten permute transpose swapaxes movedim t squeeze unsqueeze expand
        expand_as broadcast_to broadcast_tensors repeat repeat_interleave tile flip fliplr flipud roll rot90 cat concat
        stack hstack vstack split chunk unbind narrow tril triu diag diagonal diag_embed contiguous""",
    "indexing": """getitem setitem index_select gather scatter scatter_add scatter_reduce index_add index_copy
        index_fill masked_fill masked_scatter masked_select take take_along_dim nonzero argwhere sort argsort topk
        kthvalue unique searchsorted bucketize one_hot""",
    "linear algebra": """matmul mm bmm mv dot vdot inner outer addmm baddbmm einsum tensordot kron cross trace
        linalg.norm linalg.vector_norm linalg.matrix_norm linalg.inv linalg.det linalg.slogdet linalg.solve
        linalg.cholesky linalg.qr linalg.eigh linalg.svd linalg.svdvals linalg.pinv linalg.matrix_power
        linalg.lstsq""",
    "nn.functional": """linear bilinear conv1d conv2d conv3d conv_transpose1d conv_transpose2d max_pool1d max_pool2d
        avg_pool1d avg_pool2d adaptive_avg_pool2d adaptive_max_pool2d max_unpool2d unfold fold interpolate pad
        pixel_shuffle softmax log_softmax softmin glu cross_entropy nll_loss mse_loss l1_loss smooth_l1_loss
        huber_loss binary_cross_entropy binary_cross_entropy_with_logits kl_div poisson_nll_loss margin_ranking_loss
        triplet_margin_loss cosine_embedding_loss dropout dropout2d alpha_dropout layer_norm batch_norm group_norm
        instance_norm rms_norm embedding normalize cosine_similarity pairwise_distance
        scaled_dot_product_attention""",
    "fft": """fft.fft fft.ifft fft.fft2 fft.ifft2 fft.fftn fft.ifftn fft.rfft fft.irfft fft.rfft2 fft.irfft2 fft.rfftn
        fft.irfftn fft.hfft fft.ihfft fft.hfft2 fft.ihfft2 fft.hfftn fft.ihfftn fft.fftfreq fft.rfftfreq fft.fftshift
        fft.ifftshift""",
    "special functions": """lgamma digamma polygamma mvlgamma igamma igammac i0 sinc special.gammaln special.psi
        special.multigammaln special.zeta special.gammainc special.gammaincc special.i0 special.i0e special.i1
        special.i1e special.erfcx special.ndtr special.ndtri special.log_ndtr special.entr special.sinc
        special.xlog1py special.modified_bessel_i0 special.modified_bessel_i1 special.modified_bessel_k0
        special.modified_bessel_k1 special.scaled_modified_bessel_k0 special.scaled_modified_bessel_k1
        special.bessel_j0 special.bessel_j1 special.bessel_y0 special.bessel_y1 special.spherical_bessel_j0
        special.airy_ai special.chebyshev_polynomial_t special.chebyshev_polynomial_u special.chebyshev_polynomial_v
        special.chebyshev_polynomial_w special.shifted_chebyshev_polynomial_t special.shifted_chebyshev_polynomial_u
        special.shifted_chebyshev_polynomial_v special.shifted_chebyshev_polynomial_w special.hermite_polynomial_h
        special.hermite_polynomial_he special.laguerre_polynomial_l special.legendre_polynomial_p""",
    "signal": """hann_window hamming_window blackman_window bartlett_window kaiser_window stft istft
        signal.windows.bartlett signal.windows.blackman signal.windows.cosine signal.windows.exponential
        signal.windows.gaussian signal.windows.general_cosine signal.windows.general_hamming signal.windows.hamming
        signal.windows.hann signal.windows.kaiser signal.windows.nuttall""",
    "linear algebra (LU, eig, Householder)": """linalg.lu linalg.lu_factor linalg.lu_factor_ex linalg.lu_solve
        lu lu_unpack lu_solve triangular_solve linalg.eig linalg.eigvals linalg.householder_product orgqr ormqr geqrf
        linalg.ldl_factor linalg.ldl_factor_ex linalg.ldl_solve linalg.vander linalg.tensorinv linalg.tensorsolve
        nuclear_norm frobenius_norm svd_lowrank pca_lowrank lobpcg""",
    "strides and views": """as_strided as_strided_copy as_strided_scatter diagonal_scatter select_scatter
        slice_scatter slice_inverse unsafe_split unsafe_chunk unsafe_split_with_sizes alias_copy diagonal_copy expand_copy
        permute_copy select_copy slice_copy split_copy split_with_sizes_copy squeeze_copy t_copy transpose_copy
        unbind_copy unfold_copy unsqueeze_copy view_copy view_as_real_copy""",
    "complex numbers": """conj conj_physical resolve_conj resolve_neg real imag view_as_real view_as_complex complex
        polar angle sgn""",
    "statistics, counting and more math": """logaddexp logaddexp2 deg2rad rad2deg gcd lcm heaviside frexp ldexp
        nextafter bitwise_left_shift bitwise_right_shift positive rsub fill fill_ zero_ meshgrid block_diag
        cartesian_prod combinations vander row_stack unravel_index diff gradient trapezoid trapz cumulative_trapezoid
        logcumsumexp quantile nanquantile cov corrcoef dist renorm histc histogram histogramdd bincount index_reduce
        isin fill_diagonal_ sum_to_size""",
}


def required():
    """(family, name) pairs."""
    return [(fam, n) for fam, names in REQUIRED.items() for n in names.split()]


# table entries whose name extends a required op's name but are other ops (not variants of it)
OTHER_OPS = ("floor_divide", "max_pool", "max_unpool", "tril_indices", "triu_indices", "unique_consecutive",
             "narrow_copy", "linalg.solve_triangular", "linear_cross_entropy", "embedding_bag", "rsub_operator",
             "rsub_int_operator", "rsub_float_operator")


def covering_specs(name, specs, family):
    """The op-table entries that exercise ``name``."""
    keys = [name, "nn.functional." + name]
    others = {n for _, n in required()} - {name}
    out = []
    for s in specs:
        base = s.name.removeprefix("nn.functional.")
        if base.startswith(OTHER_OPS) and not name.startswith(OTHER_OPS):
            continue
        for k in keys:
            if s.name == k or s.extra.get("covers") == k:
                out.append(s)
                break
            # a variant such as `max_dim` or `add_alpha` — but `log_softmax` is not a variant of `log`
            if s.name.startswith(k + "_") and not any(base == o or base.startswith(o + "_") and len(o) > len(name)
                                                      for o in others):
                out.append(s)
                break
    return out
