"""``tapegrad.cuda``: there is no accelerator in tapegrad; this answers PyTorch's usual questions."""


def is_available() -> bool:
    """Always False: tapegrad runs on the CPU (``device = "cuda" if cuda.is_available() else "cpu"`` works)."""
    return False


def device_count() -> int:
    return 0


def manual_seed(seed):
    pass


def manual_seed_all(seed):
    pass


def __getattr__(name):
    # torch.cuda.FloatTensor and friends: isinstance is always False; making one is the CPU-only error
    from ._legacy import CUDA_TYPES
    if name in CUDA_TYPES:
        return CUDA_TYPES[name]
    raise AttributeError(f"module 'tapegrad.cuda' has no attribute {name!r}")
