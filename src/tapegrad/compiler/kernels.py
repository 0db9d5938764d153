"""Kernels: hot ops written inline by codegen (filled in below)."""

NAMESPACE = {}


def match(rec, prog):
    return None
