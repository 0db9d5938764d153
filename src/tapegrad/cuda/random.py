"""``torch.cuda.random``: the CUDA generators' seeding functions under their module path (torchattacks' APGD calls
``torch.cuda.random.manual_seed(seed)``); without a GPU they answer as torch's CPU build does."""

from . import (get_rng_state, get_rng_state_all, initial_seed, manual_seed, manual_seed_all, seed, seed_all,
               set_rng_state, set_rng_state_all)

__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "initial_seed"]
