"""tapegrad.scalar: the glass-box engine — autograd on single numbers, as in micrograd and the lessons.

>>> from tapegrad.scalar import Value
>>> x = Value(3.0)
>>> y = x * x
>>> y.backward(); x.grad
6.0

``tapegrad.scalar.nn`` has micrograd's ``Neuron``/``Layer``/``MLP``; ``tapegrad.scalar.ops`` has the seed's
hand-driven operator classes (``Op``, ``add``, ``multiply``, ``exponential``, ...).
"""

from . import nn, ops
from .value import Value

__all__ = ["Value", "nn", "ops"]
