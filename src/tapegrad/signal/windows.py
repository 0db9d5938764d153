"""``tapegrad.signal.windows``: torch.signal.windows's window functions (``sym=True`` by default).

They live in ``tapegrad.ops.signal`` beside the top-level ``*_window`` functions and ``stft``.
"""

from ..ops.signal import (bartlett, blackman, cosine, exponential, gaussian, general_cosine, general_hamming,
                          hamming, hann, kaiser, nuttall)

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]
