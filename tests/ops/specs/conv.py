"""Specs of convolution, pooling and resampling (``tapegrad.nn.functional``; the ops live in ``ops/conv/``).

Shapes are tiny on purpose: gradcheck and gradgradcheck perturb every element.
"""

import numpy as np

from ops.op_db import OpSpec, S, noncontig, randn


def F(m):
    return m.nn.functional


def _unpool_idx(r, lead, out, kernel, size):
    """Valid max-pool indices (one random position per non-overlapping window), torch's flat per-plane layout."""
    d = len(out)
    flat = np.zeros(tuple(lead) + tuple(out), dtype=np.int64)
    for i in range(d):
        shape = [1] * (len(lead) + d)
        shape[len(lead) + i] = out[i]
        o = np.arange(out[i]).reshape(shape)
        off = r.integers(0, kernel[i], size=tuple(lead) + tuple(out))
        flat = flat * size[i] + o * kernel[i] + off
    return flat


SPECS = [
    # --- convolution ---------------------------------------------------------------------------------------------
    OpSpec("nn.functional.conv1d", lambda m, *a, **kw: F(m).conv1d(*a, **kw), lambda r: [
        S(randn(r, 2, 3, 7), randn(r, 4, 3, 3), randn(r, 4), name="bias"),
        S(randn(r, 2, 3, 7), randn(r, 4, 3, 3), stride=2, padding=1, name="stride_pad"),
        S(randn(r, 2, 4, 9), randn(r, 6, 2, 3), dilation=2, groups=2, name="dil_groups"),
        S(randn(r, 1, 3, 6), randn(r, 2, 3, 4), padding="same", name="same_even"),
        S(randn(r, 1, 3, 6), randn(r, 2, 3, 3), padding="valid", name="valid"),
        S(randn(r, 3, 7), randn(r, 2, 3, 3), randn(r, 2), name="unbatched"),
        S(noncontig(randn(r, 2, 3, 7)), randn(r, 2, 3, 2), name="noncontig"),
        S(randn(r, 0, 3, 7), randn(r, 2, 3, 3), name="empty_batch")],
        torch_warns="Using padding='same' with even kernel lengths"),   # a note on torch's own kernels
    OpSpec("nn.functional.conv2d", lambda m, *a, **kw: F(m).conv2d(*a, **kw), lambda r: [
        S(randn(r, 2, 3, 5, 5), randn(r, 4, 3, 3, 3), randn(r, 4), name="bias"),
        S(randn(r, 1, 2, 6, 5), randn(r, 3, 2, 3, 2), stride=(2, 1), padding=(1, 2), name="stride_pad"),
        S(randn(r, 1, 4, 6, 6), randn(r, 4, 2, 2, 3), dilation=2, groups=2, name="dil_groups"),
        S(randn(r, 1, 3, 5, 5), randn(r, 3, 1, 3, 3), randn(r, 3), groups=3, padding=1, name="depthwise"),
        S(randn(r, 1, 2, 5, 4), randn(r, 2, 2, 2, 3), padding="same", name="same_asym"),
        S(randn(r, 1, 2, 5, 5), randn(r, 2, 2, 3, 2), padding="same", dilation=(1, 2), name="same_dil"),
        S(randn(r, 2, 4, 4), randn(r, 3, 2, 3, 3), randn(r, 3), name="unbatched"),
        S(noncontig(randn(r, 2, 2, 4, 5)), noncontig(randn(r, 2, 2, 2, 2)), name="noncontig"),
        S(randn(r, 0, 2, 4, 4), randn(r, 2, 2, 3, 3), name="empty_batch")]),
    OpSpec("nn.functional.conv3d", lambda m, *a, **kw: F(m).conv3d(*a, **kw), lambda r: [
        S(randn(r, 1, 2, 3, 4, 3), randn(r, 2, 2, 2, 2, 2), randn(r, 2), padding=1, name="bias_pad"),
        S(randn(r, 1, 2, 4, 3, 4), randn(r, 2, 1, 2, 1, 2), stride=2, groups=2, name="stride_groups"),
        S(randn(r, 2, 3, 3, 3), randn(r, 1, 2, 2, 2, 2), name="unbatched")]),
    OpSpec("nn.functional.conv_transpose1d", lambda m, *a, **kw: F(m).conv_transpose1d(*a, **kw), lambda r: [
        S(randn(r, 2, 3, 4), randn(r, 3, 2, 3), randn(r, 2), name="bias"),
        S(randn(r, 1, 2, 4), randn(r, 2, 3, 3), stride=2, padding=1, output_padding=1, name="stride_outpad"),
        S(randn(r, 1, 4, 3), randn(r, 4, 1, 2), groups=2, dilation=3, output_padding=2, name="groups_dil"),
        S(randn(r, 2, 4), randn(r, 2, 2, 2), stride=3, name="unbatched")]),
    OpSpec("nn.functional.conv_transpose2d", lambda m, *a, **kw: F(m).conv_transpose2d(*a, **kw), lambda r: [
        S(randn(r, 2, 3, 3, 3), randn(r, 3, 2, 2, 2), randn(r, 2), name="bias"),
        S(randn(r, 1, 2, 3, 2), randn(r, 2, 2, 3, 3), stride=2, padding=1, output_padding=1, name="stride_outpad"),
        S(randn(r, 1, 4, 3, 3), randn(r, 4, 1, 2, 2), stride=(1, 2), groups=2, dilation=(2, 1), padding=(1, 0),
          name="groups_dil"),
        S(randn(r, 1, 2, 2, 3), randn(r, 2, 1, 3, 2), dilation=2, output_padding=1, name="outpad_lt_dilation"),
        S(randn(r, 2, 3, 2), randn(r, 2, 2, 2, 2), randn(r, 2), stride=2, name="unbatched"),
        S(noncontig(randn(r, 1, 2, 3, 3)), randn(r, 2, 1, 2, 2), name="noncontig")]),
    OpSpec("nn.functional.conv_transpose3d", lambda m, *a, **kw: F(m).conv_transpose3d(*a, **kw), lambda r: [
        S(randn(r, 1, 2, 2, 2, 2), randn(r, 2, 1, 2, 2, 2), randn(r, 1), stride=2, name="stride"),
        S(randn(r, 2, 2, 3, 2), randn(r, 2, 1, 2, 1, 2), padding=(0, 1, 0), output_padding=(0, 0, 1), stride=2,
          name="unbatched_outpad")]),
    # --- max pooling ---------------------------------------------------------------------------------------------
    OpSpec("nn.functional.max_pool1d", lambda m, *a, **kw: F(m).max_pool1d(*a, **kw), lambda r: [
        S(randn(r, 2, 3, 6), 2, name="k2"),
        S(randn(r, 2, 2, 7), 3, stride=2, padding=1, ceil_mode=True, name="pad_ceil"),
        S(randn(r, 1, 2, 9), 2, stride=1, dilation=3, name="dilation"),
        S(randn(r, 2, 2, 6), 2, return_indices=True, name="indices"),
        S(randn(r, 3, 7), 3, stride=2, ceil_mode=True, return_indices=True, name="unbatched")]),
    OpSpec("nn.functional.max_pool2d", lambda m, *a, **kw: F(m).max_pool2d(*a, **kw), lambda r: [
        S(randn(r, 2, 2, 4, 4), 2, name="k2"),
        S(randn(r, 1, 2, 4, 5), 3, stride=1, padding=1, name="overlap_pad"),
        S(randn(r, 1, 2, 6, 7), (2, 3), stride=2, padding=1, dilation=(2, 1), ceil_mode=True, name="ceil_dil"),
        S(randn(r, 1, 2, 5, 5), 2, ceil_mode=True, return_indices=True, name="ceil_indices"),
        S(randn(r, 2, 4, 6), (2, 3), stride=(1, 2), return_indices=True, name="unbatched_indices"),
        S(noncontig(randn(r, 2, 2, 4, 4)), 2, name="noncontig"),
        S(randn(r, 0, 2, 4, 4), 2, name="empty_batch")]),
    OpSpec("nn.functional.max_pool3d", lambda m, *a, **kw: F(m).max_pool3d(*a, **kw), lambda r: [
        S(randn(r, 1, 2, 4, 4, 4), 2, name="k2"),
        S(randn(r, 1, 1, 3, 4, 5), 3, stride=2, padding=1, return_indices=True, name="pad_indices"),
        S(randn(r, 2, 3, 3, 4), 2, stride=1, ceil_mode=True, name="unbatched")]),
    # --- average pooling -----------------------------------------------------------------------------------------
    OpSpec("nn.functional.avg_pool1d", lambda m, *a, **kw: F(m).avg_pool1d(*a, **kw), lambda r: [
        S(randn(r, 2, 3, 6), 2, name="k2"),
        S(randn(r, 2, 2, 7), 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False, name="pad_ceil"),
        S(randn(r, 2, 7), 3, stride=2, padding=1, name="unbatched")]),
    OpSpec("nn.functional.avg_pool2d", lambda m, *a, **kw: F(m).avg_pool2d(*a, **kw), lambda r: [
        S(randn(r, 2, 2, 4, 4), 2, name="k2"),
        S(randn(r, 1, 2, 6, 7), 3, stride=2, padding=1, ceil_mode=True, name="ceil_pad_cip"),
        S(randn(r, 1, 2, 6, 7), 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False, name="ceil_pad"),
        S(randn(r, 1, 2, 5, 4), (2, 3), stride=1, padding=1, divisor_override=4, name="divisor_override"),
        S(randn(r, 2, 4, 5), 2, stride=(1, 2), name="unbatched"),
        S(noncontig(randn(r, 2, 2, 4, 4)), 2, name="noncontig")]),
    OpSpec("nn.functional.avg_pool3d", lambda m, *a, **kw: F(m).avg_pool3d(*a, **kw), lambda r: [
        S(randn(r, 1, 2, 4, 4, 4), 2, name="k2"),
        S(randn(r, 1, 1, 3, 4, 5), 3, stride=2, padding=1, count_include_pad=False, name="pad")]),
    # --- adaptive pooling ----------------------------------------------------------------------------------------
    OpSpec("nn.functional.adaptive_avg_pool1d", lambda m, *a, **kw: F(m).adaptive_avg_pool1d(*a, **kw), lambda r: [
        S(randn(r, 2, 3, 7), 3, name="shrink"), S(randn(r, 1, 2, 3), 5, name="grow"),
        S(randn(r, 2, 5), 2, name="unbatched")]),
    OpSpec("nn.functional.adaptive_avg_pool2d", lambda m, *a, **kw: F(m).adaptive_avg_pool2d(*a, **kw), lambda r: [
        S(randn(r, 2, 2, 7, 5), (3, 4), name="shrink"), S(randn(r, 1, 2, 5, 5), 1, name="global"),
        S(randn(r, 1, 2, 3, 4), (None, 6), name="none_grow"), S(randn(r, 2, 5, 4), 2, name="unbatched")]),
    OpSpec("nn.functional.adaptive_avg_pool3d", lambda m, *a, **kw: F(m).adaptive_avg_pool3d(*a, **kw), lambda r: [
        S(randn(r, 1, 2, 3, 5, 4), (2, 3, 3), name="shrink")]),
    OpSpec("nn.functional.adaptive_max_pool1d", lambda m, *a, **kw: F(m).adaptive_max_pool1d(*a, **kw), lambda r: [
        S(randn(r, 2, 3, 7), 3, name="shrink"), S(randn(r, 2, 5), 3, return_indices=True, name="unbatched_indices")]),
    OpSpec("nn.functional.adaptive_max_pool2d", lambda m, *a, **kw: F(m).adaptive_max_pool2d(*a, **kw), lambda r: [
        S(randn(r, 2, 2, 7, 5), (3, 4), name="shrink"),
        S(randn(r, 1, 2, 5, 5), 1, return_indices=True, name="global_indices"),
        S(randn(r, 2, 3, 4), (None, 3), return_indices=True, name="unbatched_none")]),
    OpSpec("nn.functional.adaptive_max_pool3d", lambda m, *a, **kw: F(m).adaptive_max_pool3d(*a, **kw), lambda r: [
        S(randn(r, 1, 2, 3, 5, 4), (2, 3, 3), return_indices=True, name="shrink")]),
    # --- max unpooling -------------------------------------------------------------------------------------------
    OpSpec("nn.functional.max_unpool1d", lambda m, *a, **kw: F(m).max_unpool1d(*a, **kw), lambda r: [
        S(randn(r, 2, 2, 3), _unpool_idx(r, (2, 2), (3,), (2,), (6,)), 2, name="k2"),
        S(randn(r, 2, 3), _unpool_idx(r, (2,), (3,), (2,), (7,)), 2, output_size=[7], name="unbatched_size")]),
    OpSpec("nn.functional.max_unpool2d", lambda m, *a, **kw: F(m).max_unpool2d(*a, **kw), lambda r: [
        S(randn(r, 2, 2, 2, 3), _unpool_idx(r, (2, 2), (2, 3), (2, 2), (4, 6)), 2, name="k2"),
        S(randn(r, 1, 2, 2, 2), _unpool_idx(r, (1, 2), (2, 2), (2, 2), (5, 5)), 2, output_size=(5, 5),
          name="output_size"),
        S(randn(r, 2, 2, 2), _unpool_idx(r, (2,), (2, 2), (2, 2), (4, 4)), 2, name="unbatched")]),
    OpSpec("nn.functional.max_unpool3d", lambda m, *a, **kw: F(m).max_unpool3d(*a, **kw), lambda r: [
        S(randn(r, 1, 2, 2, 2, 1), _unpool_idx(r, (1, 2), (2, 2, 1), (2, 2, 2), (4, 4, 2)), 2, name="k2")]),
    # --- unfold / fold -------------------------------------------------------------------------------------------
    OpSpec("nn.functional.unfold", lambda m, *a, **kw: F(m).unfold(*a, **kw), lambda r: [
        S(randn(r, 2, 2, 4, 4), 2, name="k2"),
        S(randn(r, 1, 2, 5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1), name="dil_pad_stride"),
        S(randn(r, 2, 3, 3), 2, name="unbatched"),
        S(noncontig(randn(r, 1, 2, 4, 4)), 3, name="noncontig")]),
    OpSpec("nn.functional.fold", lambda m, *a, **kw: F(m).fold(*a, **kw), lambda r: [
        S(randn(r, 2, 8, 12), (4, 5), 2, name="k2"),
        S(randn(r, 1, 6, 6), (5, 4), (1, 3), dilation=(1, 1), padding=(0, 1), stride=2, name="pad_stride"),
        S(randn(r, 4, 9), (4, 4), 2, dilation=1, name="unbatched")]),
    # --- interpolation -------------------------------------------------------------------------------------------
    OpSpec("nn.functional.interpolate", lambda m, *a, **kw: F(m).interpolate(*a, **kw), lambda r: [
        S(randn(r, 1, 2, 3, 4), size=(5, 7), name="nearest_size"),
        S(randn(r, 1, 2, 3, 4), scale_factor=2, name="nearest_x2"),
        S(randn(r, 1, 2, 5, 4), scale_factor=(0.6, 1.7), name="nearest_scale"),
        S(randn(r, 1, 2, 5), size=3, name="nearest_1d_down"),
        S(randn(r, 1, 1, 2, 3, 2), scale_factor=1.5, name="nearest_3d"),
        S(randn(r, 1, 2, 4, 3), scale_factor=(1.2, 2.3), name="nearest_2d_legacy_shortcuts"),
        S(randn(r, 1, 2, 3, 4), scale_factor=1.7, mode="nearest-exact", name="nearest_exact"),
        S(randn(r, 2, 2, 4), size=7, mode="linear", name="linear"),
        S(randn(r, 2, 2, 4), scale_factor=2.5, mode="linear", align_corners=True, name="linear_ac"),
        S(randn(r, 1, 2, 3, 4), size=(5, 7), mode="bilinear", name="bilinear"),
        S(randn(r, 1, 2, 3, 4), size=(5, 3), mode="bilinear", align_corners=True, name="bilinear_ac"),
        S(randn(r, 1, 2, 3, 4), scale_factor=2.5, mode="bilinear", name="bilinear_scale"),
        S(randn(r, 1, 2, 3, 4), scale_factor=(2.0, 1.2), mode="bilinear", name="bilinear_axis_unchanged"),
        S(randn(r, 1, 2, 6, 5), scale_factor=0.5, mode="bilinear", recompute_scale_factor=True,
          name="bilinear_down_recompute"),
        S(randn(r, 1, 1, 3, 4), size=(5, 6), mode="bicubic", name="bicubic"),
        S(randn(r, 1, 1, 3, 4), size=(5, 6), mode="bicubic", align_corners=True, name="bicubic_ac"),
        S(randn(r, 1, 1, 2, 3, 2), size=(3, 4, 3), mode="trilinear", name="trilinear"),
        S(randn(r, 1, 2, 5, 4), size=(2, 3), mode="area", name="area"),
        S(noncontig(randn(r, 1, 2, 3, 3)), scale_factor=2, mode="bilinear", name="noncontig")]),
    OpSpec("nn.functional.interpolate_antialias", lambda m, *a, **kw: F(m).interpolate(*a, antialias=True, **kw),
           lambda r: [S(randn(r, 1, 2, 8, 7), size=(3, 5), mode="bilinear", name="bilinear_down"),
                      S(randn(r, 1, 1, 9, 7), size=(4, 3), mode="bicubic", name="bicubic_down"),
                      S(randn(r, 1, 2, 4, 4), size=(7, 6), mode="bilinear", name="bilinear_up"),
                      S(randn(r, 1, 1, 3, 4), size=(6, 2), mode="bicubic", name="bicubic_mixed"),
                      S(randn(r, 1, 1, 8, 8), size=(3, 5), mode="bilinear", align_corners=True, name="bilinear_ac"),
                      S(randn(r, 1, 1, 7, 6), size=(2, 4), mode="bicubic", align_corners=True, name="bicubic_ac"),
                      S(randn(r, 1, 2, 9, 7), scale_factor=0.4, mode="bilinear", name="scale"),
                      S(randn(r, 1, 1, 9, 7), scale_factor=(0.5, 0.3), mode="bicubic",
                        recompute_scale_factor=True, name="scale_recompute")]),
    OpSpec("nn.functional.interpolate_nearest_scaled_1d_3d", lambda m, *a, **kw: F(m).interpolate(*a, **kw),
           lambda r: [S(randn(r, 1, 2, 4), scale_factor=1.2, name="1d_same_size"),
                      S(randn(r, 1, 2, 3), scale_factor=2.3, name="1d_double_size"),
                      S(randn(r, 1, 1, 2, 3, 2), scale_factor=(1.2, 2.3, 2.0), name="3d")],
           grad=False,
           notes="values only: torch 2.13's upsample_nearest1d/3d backward still uses the legacy same-size / "
                 "double-size index shortcuts that its forward no longer uses, so torch's gradient is not the "
                 "derivative of its own output here; tapegrad's gradient is checked with gradcheck in "
                 "tests/test_conv_speed_sanity.py"),
    OpSpec("nn.functional.upsample", lambda m, *a, **kw: F(m).upsample(*a, **kw), lambda r: [
        S(randn(r, 1, 2, 3, 3), scale_factor=2, mode="bilinear", align_corners=False, name="bilinear")],
        warns="`nn.functional.upsample` is deprecated"),
    OpSpec("nn.functional.upsample_nearest", lambda m, *a, **kw: F(m).upsample_nearest(*a, **kw), lambda r: [
        S(randn(r, 1, 2, 3), size=5, name="size")], warns="`nn.functional.upsample_nearest` is deprecated"),
    OpSpec("nn.functional.upsample_bilinear", lambda m, *a, **kw: F(m).upsample_bilinear(*a, **kw), lambda r: [
        S(randn(r, 1, 2, 2, 3), scale_factor=2, name="x2")], warns="`nn.functional.upsample_bilinear` is deprecated"),
    # --- padding -------------------------------------------------------------------------------------------------
    OpSpec("nn.functional.pad", lambda m, *a, **kw: F(m).pad(*a, **kw), lambda r: [
        S(randn(r, 2, 3, 4), (1, 2), name="constant_last"),
        S(randn(r, 2, 3, 4), (1, 2, 0, -1), value=1.5, name="constant_negative_value"),
        S(randn(r, 2, 3), (1, 1, 2, 0), name="constant_all_dims"),
        S(randn(r, 3), (2, 1), value=-1.0, name="constant_1d"),
        S(randn(r, 0, 3), (1, 1), name="constant_empty"),
        S(noncontig(randn(r, 2, 3, 4)), (1, 0, 1, 1, 0, 1), name="constant_3dims_noncontig"),
        S(randn(r, 2, 2, 5), (2, 3), mode="reflect", name="reflect1d"),
        S(randn(r, 3, 5), (4, 1), mode="reflect", name="reflect1d_unbatched"),
        S(randn(r, 1, 2, 4, 5), (1, 2, 3, 0), mode="reflect", name="reflect2d"),
        S(randn(r, 1, 1, 3, 3, 4), (1, 1, 2, 0, 0, 2), mode="reflect", name="reflect3d"),
        S(randn(r, 1, 2, 4, 5), (1, 2, 3, 0), mode="replicate", name="replicate2d"),
        S(randn(r, 2, 5), (-1, 3), mode="replicate", name="replicate_negative"),
        S(randn(r, 1, 1, 2, 3, 2), (1, 0, 0, 2, 1, 1), mode="replicate", name="replicate3d"),
        S(randn(r, 1, 2, 4, 5), (1, 2, 3, 0), mode="circular", name="circular2d"),
        S(randn(r, 2, 2, 3), (3, 2), mode="circular", name="circular1d_full_wrap"),
        S(randn(r, 1, 2, 4, 5), (-1, 3, 2, -1), mode="circular", name="circular_crop_then_wrap"),
        S(randn(r, 1, 2, 4, 5), (-1, 2, 2, -1), mode="reflect", name="reflect_negative")]),
    # --- pixel shuffle -------------------------------------------------------------------------------------------
    OpSpec("nn.functional.pixel_shuffle", lambda m, *a, **kw: F(m).pixel_shuffle(*a, **kw), lambda r: [
        S(randn(r, 2, 8, 2, 3), 2, name="r2"), S(randn(r, 9, 2, 1), 3, name="unbatched"),
        S(randn(r, 2, 1, 4, 1, 2), 2, name="extra_batch_dim")]),
    OpSpec("nn.functional.pixel_unshuffle", lambda m, *a, **kw: F(m).pixel_unshuffle(*a, **kw), lambda r: [
        S(randn(r, 2, 2, 4, 6), 2, name="r2"), S(randn(r, 1, 3, 3), 3, name="unbatched"),
        S(noncontig(randn(r, 2, 1, 1, 2, 4)), 2, name="extra_batch_dim_noncontig")]),
    OpSpec("nn.functional.conv_tbc", lambda m, *a, **kw: F(m).conv_tbc(*a, **kw), lambda r: [
        S(randn(r, 5, 2, 3), randn(r, 3, 3, 4), randn(r, 4), name="nopad"),
        S(randn(r, 4, 1, 2), randn(r, 2, 2, 3), randn(r, 3), 1, name="pad1")],
           check_grad_fn=False, notes="a composition (conv1d between permutes): torch's node is ConvTbcBackward"),
    # --- power-average and fractional max pooling ----------------------------------------------------------------
    OpSpec("nn.functional.lp_pool1d", lambda m, *a, **kw: F(m).lp_pool1d(*a, **kw), lambda r: [
        S(randn(r, 2, 3, 7, positive=True), 2, 3, name="p2"),
        S(randn(r, 2, 3, 7, positive=True), 3.5, 2, 1, ceil_mode=True, name="p3.5_stride_ceil"),
        S(randn(r, 3, 6, positive=True), 1, 2, name="p1_unbatched")]),
    OpSpec("nn.functional.lp_pool2d", lambda m, *a, **kw: F(m).lp_pool2d(*a, **kw), lambda r: [
        S(randn(r, 2, 2, 5, 5, positive=True), 2, 2, name="p2"),
        S(randn(r, 1, 2, 5, 6, positive=True), 3, (2, 3), (1, 2), name="p3_rect_stride")]),
    OpSpec("nn.functional.lp_pool2d_inf", lambda m, *a, **kw: F(m).lp_pool2d(*a, **kw), lambda r: [
        S(randn(r, 1, 2, 4, 4), float("inf"), 2, name="inf")]),
    OpSpec("nn.functional.lp_pool3d", lambda m, *a, **kw: F(m).lp_pool3d(*a, **kw), lambda r: [
        S(randn(r, 1, 2, 4, 4, 5, positive=True), 2, 2, name="p2"),
        S(randn(r, 2, 3, 3, 4, positive=True), 1.5, (1, 2, 2), ceil_mode=True, name="unbatched_ceil")]),
    OpSpec("nn.functional.fractional_max_pool2d",
           lambda m, x, u, **kw: F(m).fractional_max_pool2d(x, _random_samples=u.detach(), **kw),
           lambda r: [
        S(randn(r, 2, 3, 7, 8), r.random((2, 3, 2)), kernel_size=2, output_size=(3, 4), return_indices=True,
          name="size_indices"),
        S(randn(r, 1, 2, 6, 6), r.random((1, 2, 2)), kernel_size=(3, 2), output_ratio=(0.5, 0.6), name="ratio"),
        S(randn(r, 2, 5, 5), r.random((1, 2, 2)), kernel_size=2, output_size=1, name="unbatched_one")],
           output_process=lambda res: res if isinstance(res, tuple) else (res,)),
    OpSpec("nn.functional.fractional_max_pool3d",
           lambda m, x, u, **kw: F(m).fractional_max_pool3d(x, _random_samples=u.detach(), **kw),
           lambda r: [
        S(randn(r, 1, 2, 5, 4, 6), r.random((1, 2, 3)), kernel_size=2, output_size=(3, 2, 4), return_indices=True,
          name="size_indices"),
        S(randn(r, 2, 4, 4, 4), r.random((1, 2, 3)), kernel_size=(2, 1, 2), output_size=2, name="unbatched")],
           output_process=lambda res: res if isinstance(res, tuple) else (res,)),
    # --- affine_grid, grid_sample --------------------------------------------------------------------------------
    OpSpec("nn.functional.affine_grid", lambda m, *a, **kw: F(m).affine_grid(*a, **kw), lambda r: [
        S(randn(r, 2, 2, 3), (2, 3, 4, 5), align_corners=False, name="2d"),
        S(randn(r, 1, 2, 3), (1, 1, 3, 1), align_corners=False, name="2d_unit"),
        S(randn(r, 2, 3, 4), (2, 1, 2, 3, 4), align_corners=True, name="3d_align")]),
    OpSpec("nn.functional.grid_sample", lambda m, *a, **kw: F(m).grid_sample(*a, **kw), lambda r: [
        S(randn(r, 2, 2, 4, 5), randn(r, 2, 3, 2, 2, low=-1.2, high=1.2), align_corners=False, name="bilinear"),
        S(randn(r, 1, 2, 4, 5), randn(r, 1, 2, 3, 2, low=-1.5, high=1.5), padding_mode="border", align_corners=True,
          name="bilinear_border_align"),
        S(randn(r, 1, 1, 4, 5), randn(r, 1, 3, 3, 2, low=-2.5, high=2.5), padding_mode="reflection",
          align_corners=False, name="bilinear_reflection"),
        S(randn(r, 1, 2, 3, 4), randn(r, 1, 2, 2, 2, low=-2.5, high=2.5), padding_mode="reflection",
          align_corners=True, name="bilinear_reflection_align"),
        S(randn(r, 1, 2, 4, 4), randn(r, 1, 2, 3, 2, low=-1.2, high=1.2), mode="nearest", align_corners=False,
          name="nearest"),
        S(randn(r, 1, 2, 4, 5), randn(r, 1, 2, 2, 2, low=-1.2, high=1.2), mode="bicubic", align_corners=False,
          name="bicubic"),
        S(randn(r, 1, 1, 4, 4), randn(r, 1, 2, 2, 2, low=-1.5, high=1.5), mode="bicubic", padding_mode="reflection",
          align_corners=True, name="bicubic_reflection_align"),
        S(randn(r, 1, 1, 4, 4), randn(r, 1, 2, 2, 2, low=-1.5, high=1.5), mode="bicubic", padding_mode="border",
          align_corners=False, name="bicubic_border"),
        S(randn(r, 1, 2, 3, 3, 4), randn(r, 1, 2, 2, 2, 3, low=-1.2, high=1.2), align_corners=False,
          name="trilinear"),
        S(randn(r, 1, 1, 3, 3, 3), randn(r, 1, 2, 1, 2, 3, low=-2, high=2), padding_mode="reflection",
          align_corners=True, name="trilinear_reflection"),
        S(randn(r, 1, 1, 3, 3, 3), randn(r, 1, 1, 2, 2, 3, low=-1.2, high=1.2), mode="nearest",
          padding_mode="border", align_corners=False, name="nearest_3d"),
        S(randn(r, 0, 2, 3, 3), randn(r, 0, 2, 2, 2), align_corners=False, name="empty_batch")]),
]
