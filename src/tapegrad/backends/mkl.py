"""``torch.backends.mkl``: NumPy's BLAS is its own (see ``numpy.show_config()``); tapegrad links no MKL."""


def is_available() -> bool:
    return False
