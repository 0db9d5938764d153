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
    "complex numbers": """conj conj_physical resolve_conj resolve_neg real imag view_as_real view_as_complex complex
        polar angle sgn""",
}


def required():
    """(family, name) pairs."""
    return [(fam, n) for fam, names in REQUIRED.items() for n in names.split()]


# table entries whose name extends a required op's name but are other ops (not variants of it)
OTHER_OPS = ("floor_divide", "max_pool", "max_unpool", "tril_indices", "triu_indices", "unique_consecutive",
             "narrow_copy", "linalg.solve_triangular", "linear_cross_entropy", "embedding_bag")


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
