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
