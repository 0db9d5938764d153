"""How much of torch's public names tapegrad has: ``torch.*`` functions and ``Tensor`` methods (torch 2.13).

    python tests/coverage_names.py          # the table, then the missing names of each part

A function is a public callable of the ``torch`` module that is not a class (``torch.abs``, ``torch.cond``); a
method is any public attribute of ``torch.Tensor``. Names that belong to a backend tapegrad does not have are
left out, each rule below with its reason; names another issue owns (``compile``, ``vmap``) count as present
when they exist there. ``tests/test_coverage_names.py`` holds the 90% targets.
"""

from __future__ import annotations

import inspect
import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

# rule -> (reason, predicate over the name). The same rules for functions and methods.
_SPARSE_MM = {"dsmm", "hsmm", "hspmm", "smm", "spmm", "saddmm", "sspaddmm"}
_SPARSE_ACCESSORS = {"ccol_indices", "col_indices", "crow_indices", "row_indices", "indices", "values", "coalesce",
                     "is_coalesced", "dense_dim", "sparse_dim", "to_padded_tensor"}
_QUANTIZED = {"dequantize", "int_repr", "qscheme", "choose_qparams_optimized", "empty_quantized",
              "fused_moving_avg_obs_fake_quant"}
_TORCHSCRIPT = {"parse_ir", "parse_schema", "parse_type_comment", "merge_type_from_type_comment", "import_ir_module",
                "import_ir_module_from_buffer", "unify_type_list", "fork", "wait"}
_BUILD_INTERNALS = {"compiled_with_cxx11_abi", "classproperty", "get_file_path", "prepare_multiprocessing_environment",
                    "profiler_allow_cudagraph_cupti_lazy_reinit_cuda12", "is_vulkan_available", "get_device_module"}
_SYNC_BN = {"batch_norm_backward_elemt", "batch_norm_backward_reduce", "batch_norm_elemt", "batch_norm_gather_stats",
            "batch_norm_gather_stats_with_counts", "batch_norm_stats", "batch_norm_update_stats"}
_DEVICE_MOVES = {"ipu", "xpu", "mtia", "record_stream", "to_mkldnn"}

EXCLUSION_RULES = {
    "vendor kernels": ("cuDNN, MIOpen, oneDNN (mkldnn) and FBGEMM entry points: accelerator/vendor libraries",
                       lambda n: n.startswith(("cudnn_", "miopen_", "mkldnn_", "fbgemm_"))),
    "quantized": ("quantized tensors (quantize_*, q_*, fake_quantize_*, int_repr...): not part of tapegrad",
                  lambda n: n.startswith(("quantize_", "quantized_", "q_", "fake_quantize_")) or n in _QUANTIZED),
    "sparse": ("sparse layouts, their accessors and matmuls, and native_norm (torch's only kernel of it is "
               "SparseCPU): tapegrad has dense tensors only (is_sparse / is_sparse_csr, which answer False on a "
               "dense tensor, are counted)",
               lambda n: ("sparse" in n and n not in ("is_sparse", "is_sparse_csr")) or n in _SPARSE_MM
               or n in _SPARSE_ACCESSORS or (n.endswith("_copy") and n[:-5] in _SPARSE_ACCESSORS)
               or n == "native_norm"),
    "symbolic shapes": ("sym_* (SymInt/SymFloat helpers of torch.compile's tracing)", lambda n: n.startswith("sym_")),
    "autocast": ("autocast state (mixed precision on accelerators)", lambda n: "autocast" in n),
    "TorchScript": ("TorchScript IR, schemas, type comments and futures (torch.jit)", lambda n: n in _TORCHSCRIPT),
    "build internals": ("torch's build, packaging and profiler internals exposed at top level",
                        lambda n: n in _BUILD_INTERNALS),
    "SyncBatchNorm kernels": ("the CUDA-only statistics kernels of SyncBatchNorm (torch has no CPU kernel)",
                              lambda n: n in _SYNC_BN),
    "accelerator moves": ("moves to other devices and their streams (ipu, xpu, mtia, mkldnn)",
                          lambda n: n in _DEVICE_MOVES),
    "first-class dims": ("Tensor.index binds dims to functorch.dim's first-class Dim objects (not an indexing op)",
                         lambda n: n == "index"),
}

# Names other issues own: counted as present once they exist in tapegrad (listed so the table says so).
OWNED_ELSEWHERE = {"compile": "issue 18", "vmap": "issue 16"}


def excluded(name):
    """The exclusion rule for a name, or None."""
    for rule, (_, pred) in EXCLUSION_RULES.items():
        if pred(name):
            return rule
    return None


def torch_functions():
    import torch
    out = []
    for n in dir(torch):
        if n.startswith("_"):
            continue
        obj = getattr(torch, n)
        if callable(obj) and not inspect.isclass(obj):
            out.append(n)
    return sorted(out)


def tensor_methods():
    import torch
    return sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))


def coverage():
    """{part: dict(total, counted, present, missing, excluded)} for "functions" and "methods"."""
    import tapegrad
    parts = {"functions": (torch_functions(), tapegrad), "methods": (tensor_methods(), tapegrad.Tensor)}
    out = {}
    for part, (names, where) in parts.items():
        excl = {n: excluded(n) for n in names if excluded(n)}
        counted = [n for n in names if n not in excl]
        missing = [n for n in counted if not hasattr(where, n)]
        out[part] = dict(total=len(names), counted=len(counted), present=len(counted) - len(missing),
                         missing=missing, excluded=excl)
    return out


def table(cov):
    lines = [f"{'torch 2.13 names':<20}{'all':>6}{'excluded':>10}{'counted':>9}{'present':>9}{'coverage':>10}"]
    for part, c in cov.items():
        lines.append(f"{part:<20}{c['total']:>6}{len(c['excluded']):>10}{c['counted']:>9}{c['present']:>9}"
                     f"{100 * c['present'] / c['counted']:>9.1f}%")
    return "\n".join(lines)


def main():
    cov = coverage()
    print(table(cov))
    print("\nexclusion rules:")
    for rule, (why, _) in EXCLUSION_RULES.items():
        names = sorted({n for c in cov.values() for n, r in c["excluded"].items() if r == rule})
        print(f"  {rule}: {why} ({len(names)}: {' '.join(names)})")
    for part, c in cov.items():
        print(f"\nmissing {part} ({len(c['missing'])}): {' '.join(c['missing'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
