"""``torch.backends.opt_einsum``: tapegrad's einsum orders its contractions with NumPy's own path search
(``numpy.einsum_path``), not the opt_einsum package; ``enabled`` and ``strategy`` keep what a script sets."""

enabled = True
strategy = "auto"


def is_available() -> bool:
    return False


def get_opt_einsum():
    return None
