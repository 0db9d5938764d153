# ruff: noqa: A001, A002 - torch's argument name (input)
"""The layers of ``tapegrad.nn``, one file per family (as torch.nn.modules)."""

from . import (activation, container, conv, dropout, flatten, lazy, linear, loss, normalization, pooling, rnn,
               sparse, transformer)
from .activation import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .lazy import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .normalization import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403
from ..module import Module

__all__ = ["Module"] + [n for m in (activation, container, conv, dropout, flatten, lazy, linear, loss,
                                    normalization, pooling, rnn, sparse, transformer) for n in m.__all__]
