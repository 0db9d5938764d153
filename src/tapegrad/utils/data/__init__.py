"""tapegrad.utils.data: datasets, samplers and the DataLoader, as torch.utils.data."""

from .dataloader import DataLoader, default_collate, default_convert, get_worker_info
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
                      random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info", "Dataset", "IterableDataset",
           "TensorDataset", "ConcatDataset", "ChainDataset", "StackDataset", "Subset", "random_split", "Sampler",
           "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler"]


def __getattr__(name):
    if name in ("distributed", "DistributedSampler"):         # (DistributedSampler loads on first use)
        import importlib
        mod = importlib.import_module(f"{__name__}.distributed")
        return mod if name == "distributed" else mod.DistributedSampler
    raise AttributeError(f"module 'tapegrad.utils.data' has no attribute {name!r}")
