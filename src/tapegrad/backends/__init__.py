"""``tapegrad.backends``: torch.backends' switches, answered as PyTorch's CPU build answers them.

Training scripts set these as boilerplate (``torch.backends.cudnn.benchmark = True``, ``torch.backends.cuda.matmul
.allow_tf32 = True``) or ask them to pick a device (``torch.backends.mps.is_available()``). tapegrad has no
accelerator and one set of NumPy kernels, so every switch is remembered and read back as set, and changes nothing:
NumPy's kernels are deterministic, and float32 products are full float32.
"""

from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]
