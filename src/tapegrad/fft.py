"""``tapegrad.fft``: torch.fft's discrete Fourier transforms, with gradients (loaded on first use).

The transforms live in ``tapegrad.ops.fft`` (three differentiable kernels, as torch's: complex-to-complex,
real-to-complex, complex-to-real); this module gives them torch.fft's names.
"""

from .ops.fft import (fft, fft2, fftfreq, fftn, fftshift, hfft, hfft2, hfftn, ifft, ifft2, ifftn, ifftshift, ihfft,
                      ihfft2, ihfftn, irfft, irfft2, irfftn, rfft, rfft2, rfftfreq, rfftn)

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


from . import _aliases  # noqa: E402
_aliases.install(globals(), "fft")   # torch.fft's functions take axis=/keepdims=/x=... too (_aliases.py)
