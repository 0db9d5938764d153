# ruff: noqa: A001, A002 - torch's argument name (input)
"""The layers of ``tapegrad.nn``, one file per family with torch's file names (``nn.modules.conv.Conv2d``,
``nn.modules.batchnorm.BatchNorm2d``, ``nn.modules.activation.MultiheadAttention``, ...)."""

from . import (activation, adaptive, batchnorm, channelshuffle, container, conv, distance, dropout, flatten, fold,
               instancenorm, lazy, linear, loss, normalization, padding, pixelshuffle, pooling, rnn, sparse,
               transformer, upsampling, utils)  # noqa: F401  (utils: torch's nn.modules.utils path)
from .activation import *  # noqa: F403
from .adaptive import *  # noqa: F403
from .batchnorm import *  # noqa: F403
from .channelshuffle import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .fold import *  # noqa: F403
from .instancenorm import *  # noqa: F403
from .lazy import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .pixelshuffle import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403
from .upsampling import *  # noqa: F403
from .module import Module

__all__ = ["Module"] + [n for m in (activation, adaptive, batchnorm, channelshuffle, container, conv, distance,
                                    dropout, flatten, fold, instancenorm, lazy, linear, loss, normalization, padding,
                                    pixelshuffle, pooling, rnn, sparse, transformer, upsampling) for n in m.__all__]
