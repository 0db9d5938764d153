"""The op library: one package per family (elementwise, reduce, shape, index, linalg, nn_ops, conv), each split
into sub-family modules that declare their Functions and attach their Tensor methods (see docs/design.md)."""
