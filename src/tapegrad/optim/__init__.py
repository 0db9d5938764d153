"""tapegrad.optim: optimizers and learning-rate schedulers with torch.optim's arithmetic, one file per optimizer
as in torch (``optim.adam.Adam``, ``optim.lr_scheduler.StepLR``, ``optim.optimizer.Optimizer``, ...)."""

from . import lr_scheduler
from ._adafactor import Adafactor
from ._muon import Muon
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad", "Adadelta",
           "Rprop", "ASGD", "SparseAdam", "Adafactor", "Muon", "LBFGS", "lr_scheduler", "swa_utils"]


def __getattr__(name):
    if name == "swa_utils":       # (loads nn: imported on first use, as the rest of optim does not need it)
        import importlib
        mod = importlib.import_module(f"{__name__}.swa_utils")
        globals()[name] = mod
        return mod
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
