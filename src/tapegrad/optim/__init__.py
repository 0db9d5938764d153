"""tapegrad.optim: optimizers and learning-rate schedulers with torch.optim's arithmetic."""

from . import lr_scheduler
from .adam import Adam, Adamax, AdamW, NAdam, RAdam
from .adaptive import Adadelta, Adagrad, RMSprop
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad", "Adadelta",
           "LBFGS", "lr_scheduler"]
