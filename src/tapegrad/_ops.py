"""``torch._ops``, as scripts import it (``from torch._ops import ops``, DLRM): ``ops`` is ``tapegrad.ops``, the
same object as ``torch.ops`` is in torch."""

from . import ops

__all__ = ["ops"]
