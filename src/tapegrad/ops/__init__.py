"""The op library, one module per family; each declares its Functions and attaches Tensor methods."""
