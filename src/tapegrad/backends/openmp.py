"""``torch.backends.openmp``: tapegrad runs no OpenMP loops of its own (NumPy's BLAS has its own threads)."""


def is_available() -> bool:
    return False
