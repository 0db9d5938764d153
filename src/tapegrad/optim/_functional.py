"""``torch.optim._functional``: the update rules as functions of parameter and state lists (the forms optimizers
built on torch's call directly)."""

from .adam import adam
from .adamw import adamw
from .sgd import sgd

__all__ = ["adam", "adamw", "sgd"]
