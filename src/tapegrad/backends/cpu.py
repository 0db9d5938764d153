"""``torch.backends.cpu``: the CPU capability NumPy's kernels were dispatched for."""


def get_cpu_capability() -> str:
    """"DEFAULT", "AVX2" or "AVX512", as torch names them, from NumPy's own CPU-feature detection."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as feats
    except ImportError:        # (older NumPy)
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as feats
        except ImportError:
            return "DEFAULT"
    if feats.get("AVX512F") and feats.get("AVX512BW"):
        return "AVX512"
    if feats.get("AVX2"):
        return "AVX2"
    return "DEFAULT"
