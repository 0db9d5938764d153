# ruff: noqa: A002 - torch's argument names (input)
"""The linear-algebra functions torch 1.9 deprecated and torch 2 removed (loaded on first use): torch keeps the
names (``torch.solve``, ``eig``, ``lstsq``, ``symeig``, ``matrix_rank`` and the Tensor methods) so that old code
gets an error that says what replaces each; so does tapegrad, with torch's words."""

__all__ = ["solve", "eig", "lstsq", "symeig", "matrix_rank"]

_REMOVED = "This function was deprecated since version 1.9 and is now removed."
_MESSAGES = {
    "solve": (
        ' `torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its '
        'arguments reversed and does not return the LU factorization.\n\nTo get the LU factorization see '
        '`torch.lu`, which can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, '
        'A).solution should be replaced with:\nX = torch.linalg.solve(A, B)'),
    "lstsq": (
        ' `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has '
        'reversed arguments and does not return the QR decomposition in the returned tuple (although it '
        'returns other information about the problem).\n\nTo get the QR decomposition consider using '
        '`torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` stored the residuals of the '
        'solution in the last m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, '
        "the residuals are in the field 'residuals' of the returned named tuple.\n\nThe unpacking of the "
        'solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\nX = '
        'torch.linalg.lstsq(A, B).solution'),
    "matrix_rank": (
        "\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was "
        "renamed in `torch.linalg.matrix_rank()` to 'hermitian'."),
    "symeig": (
        ' The default behavior has changed from using the upper triangular portion of the matrix by '
        'default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be '
        "replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = "
        'torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = torch.linalg.eigh(A, '
        "UPLO='U' if upper else 'L')"),
    "eig": (
        ' `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real '
        'tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = '
        'torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced '
        'with:\nL_complex, V_complex = torch.linalg.eig(A)'),
}


def _removed(name):
    raise RuntimeError(_REMOVED + _MESSAGES[name])


def solve(input, A, *, out=None):
    """Removed from torch (1.9 deprecated it): raises torch's error naming the replacement."""
    _removed("solve")


def lstsq(input, A, *, out=None):
    """Removed from torch (1.9 deprecated it): raises torch's error naming the replacement."""
    _removed("lstsq")


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """Removed from torch (1.9 deprecated it): raises torch's error naming the replacement."""
    _removed("matrix_rank")


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    """Removed from torch (1.9 deprecated it): raises torch's error naming the replacement."""
    _removed("symeig")


def eig(self, eigenvectors=False, *, e=None, v=None):
    """Removed from torch (1.9 deprecated it): raises torch's error naming the replacement."""
    _removed("eig")


def _method(name):
    """The Tensor method of a removed function, with torch's parameters (``x.lstsq(other)``)."""
    def method(self, other):
        """Removed from torch (1.9 deprecated it): raises torch's error naming the replacement."""
        _removed(name)
    method.__name__ = name
    return method


def _symeig_method(self, eigenvectors=False):
    """Removed from torch (1.9 deprecated it): raises torch's error naming the replacement."""
    _removed("symeig")


from .._util import bind  # noqa: E402

bind(solve=_method("solve"), eig=eig, lstsq=_method("lstsq"), symeig=_symeig_method)
