"""tapegrad: PyTorch's autograd, rebuilt in clear Python on NumPy.

``import tapegrad as torch`` runs PyTorch-style code: tensors that record a dynamic graph, ``backward()``,
``nn``, ``optim``, ``utils.data``. Submodules that are not needed for the core load on first use.
"""

from . import _malloc
from . import _aliases
from . import _dtype
from ._dtype import (bfloat16, bool, cdouble, cfloat, complex64, complex128, double, dtype, finfo, float, float16,
                     chalf, complex32, float32, float64, get_default_dtype, half, iinfo, int, int8, int16, int32, int64,
                     long, promote_types, result_type, set_default_dtype, short, uint8, uint16, uint32, uint64,
                     can_cast)
from ._random import Generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state, default_generator
from ._tensor_str import set_printoptions
from .tensor import Size, Tensor, device, layout, strided
from .tensor import channels_last, channels_last_3d, contiguous_format, memory_format, preserve_format  # noqa: F401
from .tensor import jagged, sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr  # noqa: F401
from .creation import *  # noqa: F403
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .autograd.grad_mode import is_inference, is_inference_mode_enabled
from .ops.elementwise import *  # noqa: F403
from .ops.reduce import *  # noqa: F403
from .ops.shape import *  # noqa: F403
from .ops.index import *  # noqa: F403
from .ops.linalg import *  # noqa: F403
from .ops.nn_ops import *  # noqa: F403
from .ops.sampling import *  # noqa: F403
from .ops.conv import (adaptive_avg_pool1d, adaptive_max_pool1d, avg_pool1d, conv1d, conv2d, conv3d,  # noqa: F401
                       conv_tbc, conv_transpose1d, conv_transpose2d, conv_transpose3d, max_pool1d, max_pool2d,
                       max_pool3d, pixel_shuffle, pixel_unshuffle)
from . import autograd

from .torch_version import __version__  # noqa: E402 - "2.13.0+tapegrad.0.1.0": answers as torch.__version__

# torch's top-level constants (`torch.pi`, `from torch import inf`; `x[:, torch.newaxis]`)
from math import e, inf, nan, pi  # noqa: E402
newaxis = None
# what torch's CPU build was compiled with; tapegrad's counterparts are NumPy's LAPACK and pocketfft (always there),
# no MKL and no OpenMP
has_lapack, has_spectral, has_mkl, has_openmp = True, True, False, False

_malloc.tune()   # keep freed array memory for reuse (glibc; see _malloc.py: TAPEGRAD_MALLOC=system declines)

_LAZY = {"nn", "optim", "utils", "scalar", "viz", "linalg", "debug", "serialization", "parity", "special", "fft",
         "func", "cuda", "backends", "testing", "distributions", "random", "signal", "compiler", "masked",
         "amp", "cpu", "mps", "xpu", "accelerator", "jit", "profiler", "distributed", "multiprocessing", "version",
         "_dynamo", "_inductor", "hub", "onnx", "sparse", "functional", "_C", "futures", "_jit_internal",
         "overrides", "library", "types", "storage", "fx"}
# torch's autocast switches at top level (they live in tapegrad.amp.autocast_mode)
_LAZY_AMP = {"autocast", "is_autocast_enabled", "get_autocast_dtype", "set_autocast_enabled", "set_autocast_dtype",
             "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
             "is_autocast_cpu_enabled", "get_autocast_cpu_dtype", "get_autocast_gpu_dtype",
             "set_autocast_cpu_enabled", "set_autocast_cpu_dtype"}
# the special functions torch has at top level, and their Tensor methods: they load tapegrad.ops.special on first
# use (its modules bind the real methods over these forwarders)
_LAZY_SPECIAL = {"lgamma", "digamma", "polygamma", "mvlgamma", "i0", "i0_", "igamma", "igammac", "sinc", "sinc_"}
# torch's top-level names that live in another module here: name -> (module, attribute)
_LAZY_NAMES = {**{n: ("storage", n) for n in """UntypedStorage TypedStorage DoubleStorage FloatStorage HalfStorage
                  BFloat16Storage LongStorage IntStorage ShortStorage CharStorage ByteStorage BoolStorage
                  ComplexFloatStorage ComplexDoubleStorage""".split()},
               **{n: ("_sym", n) for n in """SymInt SymFloat SymBool sym_int sym_float sym_max sym_min sym_not
                  sym_sqrt sym_ite sym_sum sym_constrain_range sym_constrain_range_for_size sym_fresh_size""".split()},
               "Storage": ("storage", "FloatStorage"),        # (torch.Storage is torch.FloatStorage)
               "OutOfMemoryError": ("cuda", "OutOfMemoryError"), "GradScaler": ("amp", "GradScaler"),
               "fork": ("jit", "fork"), "wait": ("jit", "wait"), "get_device_module": ("_device_module", "get"),
               "Stream": ("_stream", "Stream"), "Event": ("_stream", "Event"), "Tag": ("_library_schema", "Tag"),
               "is_vulkan_available": ("_device_module", "is_vulkan_available")}
_LAZY_BUILTINS = {"fork", "wait", "is_vulkan_available", "sym_constrain_range", "sym_constrain_range_for_size"}
_LAZY_METHODS = ("lgamma", "lgamma_", "digamma", "digamma_", "polygamma", "polygamma_", "mvlgamma", "mvlgamma_",
                 "i0", "i0_", "igamma", "igamma_", "igammac", "igammac_", "sinc", "sinc_")


# ops whose modules load on first use, by module under tapegrad.ops: the top-level names and the Tensor methods
# (forwarders that import the module, whose own ``bind`` replaces them)
_LAZY_OPS = {"signal": ("hann_window hamming_window blackman_window bartlett_window kaiser_window stft istft",
                        "stft istft"),
             "shape.strided": ("""as_strided as_strided_ as_strided_copy as_strided_scatter empty_strided empty_permuted
                               diagonal_scatter select_scatter slice_scatter unsafe_chunk unsafe_split
                               unsafe_split_with_sizes alias_copy detach_copy diagonal_copy expand_copy permute_copy
                               select_copy slice_copy split_copy split_with_sizes_copy squeeze_copy t_copy
                               transpose_copy unbind_copy unfold_copy unsqueeze_copy view_copy view_as_real_copy
                               view_as_complex_copy slice_inverse""",
                               """as_strided as_strided_ as_strided_scatter diagonal_scatter select_scatter
                               slice_scatter unsafe_chunk unsafe_split unsafe_split_with_sizes new_empty_strided
                               storage_offset slice_inverse"""),
             "linalg.lu": ("lu lu_unpack lu_solve=torch_lu_solve triangular_solve", "lu lu_solve triangular_solve"),
             "linalg.householder": ("geqrf orgqr ormqr", "geqrf orgqr ormqr"),
             "linalg.removed": ("solve eig lstsq symeig matrix_rank", "solve eig lstsq symeig"),
             "linalg.tensors": ("nuclear_norm frobenius_norm svd_lowrank pca_lowrank lobpcg", "")}
# (a token "name=attr" binds the module's ``attr`` as ``name``)
_LAZY_FROM = {n.split("=")[0]: (mod, n.split("=")[-1]) for mod, (names, _) in _LAZY_OPS.items() for n in names.split()}


def _lazy_method(name, module="special"):
    def method(self, *args, **kwargs):
        import importlib
        importlib.import_module(f"{__name__}.ops.{module}")  # (binds the real Tensor methods)
        return getattr(self, name)(*args, **kwargs)
    method.__name__ = method.__qualname__ = name
    return method


for _name in _LAZY_METHODS:
    setattr(Tensor, _name, _lazy_method(_name))
def _lazy_sparse_method(name):
    def method(self, *args, **kwargs):
        from . import sparse  # noqa: F401   (binds the real methods)
        return getattr(self, name)(*args, **kwargs)
    method.__name__ = method.__qualname__ = name
    return method


Tensor.to_sparse, Tensor.to_sparse_coo = _lazy_sparse_method("to_sparse"), _lazy_sparse_method("to_sparse_coo")
Tensor.sparse_mask = _lazy_sparse_method("sparse_mask")
for _mod, (_, _methods) in _LAZY_OPS.items():
    for _name in _methods.split():
        setattr(Tensor, _name, _lazy_method(_name, _mod))


def __getattr__(name):
    # heavy or optional parts load on first use so that `import tapegrad` stays under 0.2 s
    if name in _LAZY:
        mod = _import_lazy(f"{__name__}.{name}", __name__)
        globals()[name] = mod
        return mod
    if name == "torch":                          # torch.torch is torch (kornia annotates with torch.torch.Tensor)
        import sys
        return sys.modules[__name__]
    if name in ("save", "load"):
        from . import serialization
        return getattr(serialization, name)
    if name == "vmap":                       # torch.vmap is torch.func.vmap
        from .func import vmap
        return vmap
    if name == "Future":                     # torch.Future: what jit.fork returns (torch.futures.Future's base)
        from .futures import _Future
        return _Future
    if name in _LAZY_NAMES:
        import importlib
        mod, attr = _LAZY_NAMES[name]
        value = getattr(importlib.import_module(f"{__name__}.{mod}"), attr)
        if name in _LAZY_BUILTINS:               # (C built-ins in torch: they bind to nothing)
            value = _aliases.builtin(value, name, __name__)
        globals()[name] = value
        return value
    if name in _LAZY_AMP:
        from .amp import autocast_mode
        fn = getattr(autocast_mode, name)
        if name != "autocast":                   # (torch's switches are built-ins: they bind to nothing)
            fn = globals()[name] = _aliases.builtin(fn, name, __name__)
        return fn
    if name in ("_standard_gamma", "_sample_dirichlet"):   # (private torch ops used for Gamma/Dirichlet draws)
        from .distributions import dirichlet, gamma
        return gamma.standard_gamma if name == "_standard_gamma" else dirichlet.sample_dirichlet
    if name in ("sparse_coo_tensor", "spmm"):
        from . import sparse
        fn = _aliases.with_aliases(getattr(sparse, name), name=name, where="torch")
        fn = globals()[name] = _aliases.builtin(fn, name, __name__)
        return fn
    if name in _LAZY_SPECIAL:
        from .ops import special
        fn = _aliases.with_aliases(getattr(special, name), name=name, where="torch")
        fn = globals()[name] = _aliases.builtin(fn, name, __name__)
        return fn
    if name in _LAZY_FROM:
        import importlib
        mod, attr = _LAZY_FROM[name]
        fn = getattr(importlib.import_module(f"{__name__}.ops.{mod}"), attr)
        if name not in _aliases.PYTHON_DEFINED["torch"]:
            fn = _aliases.builtin(_aliases.with_aliases(fn, name=name, where="torch"), name, __name__)
        globals()[name] = fn
        return fn
    if name.startswith("_foreach_"):             # torch._foreach_* (ops/foreach.py: the op over each tensor)
        from .ops import foreach
        if name in foreach.NAMES:
            fn = globals()[name] = getattr(foreach, name)
            return fn
    raise AttributeError(f"module 'tapegrad' has no attribute {name!r}")


def __dir__():
    # the names that load on first use are listed too (tab completion, ``dir``-based name counts)
    return sorted(set(globals()) | _LAZY | _LAZY_AMP | _LAZY_SPECIAL | set(_LAZY_FROM) | set(_LAZY_NAMES) |
                  {"save", "load", "sparse_coo_tensor", "spmm"})


def _import_lazy(fullname, owner):
    """Import a lazily loaded submodule; one that does not exist is a missing attribute (so ``hasattr`` is
    False), not an import error."""
    import importlib
    try:
        return importlib.import_module(fullname)
    except ModuleNotFoundError as err:
        if err.name != fullname:
            raise
        raise AttributeError(f"module {owner!r} has no attribute {fullname.rsplit('.', 1)[1]!r}") from None


def _hook_scalar(value):
    """``tapegrad.scalar.value`` calls this as it loads (the scalar engine itself imports nothing of tapegrad):
    the tracer hooks into it from tapegrad's side. ``Value.backward(trace=True)`` records under
    ``autograd.trace.Trace``, imported on that first use."""
    def tracer():
        from .autograd.trace import Trace
        return Trace()
    value._tracers.append(tracer)


def compile(model=None, **kwargs):  # noqa: A001
    """``torch.compile``: capture a function's or module's ops once and replay them as straight-line NumPy
    (``tapegrad.compiler``; see there)."""
    from .compiler import compile as _compile
    return _compile(model, **kwargs)


def is_tensor(obj):
    """True for a tapegrad Tensor."""
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def is_floating_point(input):
    return input.is_floating_point()


_threads = [None]
builtins_int = _dtype.builtins_int   # (this module's `int` is tapegrad.int)


def set_num_threads(n):
    """Use ``n`` threads in NumPy's BLAS (matmul, conv), as ``torch.set_num_threads`` (needs threadpoolctl;
    without it, set OPENBLAS_NUM_THREADS before starting Python). Small models train faster on 1 thread."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(builtins_int(n), user_api="blas")
    _threads[0] = builtins_int(n)


def get_num_threads():
    """The number of BLAS threads (as ``torch.get_num_threads``)."""
    if _threads[0] is not None:
        return _threads[0]
    try:
        from threadpoolctl import threadpool_info
        import builtins   # (this module's `max` is tapegrad.max)
        return builtins.max((i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"), default=1)
    except ImportError:
        import os
        return builtins_int(os.environ.get("OPENBLAS_NUM_THREADS", os.cpu_count() or 1))


from ._legacy import (BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor,  # noqa: E402
                      HalfTensor, IntTensor, LongTensor, ShortTensor, typename)


from ._api_state import *  # noqa: E402,F403  (switches and predicates: determinism, anomaly, default device...)
from ._api_funcs import *  # noqa: E402,F403  (ATen's forms of nn ops, range, frombuffer, cond, while_loop...)
from . import _tensor_api  # noqa: E402  (binds the rest of the Tensor surface: storage_offset, resize_, set_...)

_aliases.install(globals(), "torch")   # tapegrad.sum(x, axis=0, keepdims=True), as torch's parser: _aliases.py
from . import _einops  # noqa: E402  (einops' functions on tapegrad tensors once einops is imported: _einops.py)
_einops.install()
