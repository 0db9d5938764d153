"""The environment boilerplate of real training scripts, against torch's CPU build: torch.backends, torch.cuda on
a machine without CUDA, torch.cpu / accelerator / mps / xpu, torch.version, torch.distributed before (without)
a process group, torch.multiprocessing, torch.jit's entry points, torch.nn.attention.sdpa_kernel,
DistributedSampler and torch.utils.hooks."""

import warnings

import pytest

import tapegrad
from pairs import cases, same

CASES = cases("""
torch.backends.cudnn.is_available()
torch.backends.cudnn.enabled
torch.backends.cudnn.version()
torch.backends.mps.is_available()
torch.backends.mps.is_built()
torch.backends.cuda.is_built()
torch.backends.cuda.matmul.allow_tf32
torch.backends.cuda.flash_sdp_enabled()
torch.backends.opt_einsum.is_available()
torch.backends.cpu.get_cpu_capability()
torch.backends.cudnn.allow_tf32
torch.cuda.is_available()
torch.cuda.device_count()
torch.cuda.is_initialized()
torch.cuda.empty_cache()
torch.cuda.manual_seed_all(0)
torch.cuda.memory_allocated()
torch.cuda.max_memory_allocated()
torch.cuda.memory_reserved()
torch.cuda.is_bf16_supported()
torch.cuda.synchronize()
torch.cuda.current_device()
torch.cuda.get_device_name(0)
torch.cuda.get_device_properties(0)
torch.cuda.mem_get_info()
torch.cuda.get_rng_state()
torch.cuda.get_rng_state_all()
torch.cuda.initial_seed()
torch.cuda.random.manual_seed(3)
torch.cuda.random.manual_seed_all(3)
torch.cuda.random.get_rng_state_all()
torch.cuda.random.initial_seed()
torch.cuda.random.__all__
torch.cuda.Event()
torch.cuda.Stream()
torch.cuda.set_rng_state(torch.ByteTensor(1))
d = torch.cuda.device(0) ;; exec("with d: pass")
d = torch.cuda.device(-1) ;; exec("with d: pass") ;; d.idx
d = torch.cuda.device(None) ;; exec("with d: pass")
d = torch.cuda.device("cuda:1") ;; exec("with d: pass")
d = torch.cuda.device(torch.cuda.device(-1)) ;; exec("with d: pass") ;; d.idx
torch.cuda.device("cpu")
torch.cuda.device(torch.device("cpu"))
exec("with torch.cuda.stream(None): pass")
issubclass(torch.cuda.OutOfMemoryError, RuntimeError)
torch.cpu.is_available()
torch.cpu.device_count()
torch.cpu.current_device()
torch.cpu.synchronize()
torch.accelerator.is_available()
torch.accelerator.current_accelerator()
torch.accelerator.device_count()
torch.xpu.is_available()
torch.xpu.device_count()
torch.mps.device_count()
torch.version.cuda
torch.torch is torch
torch.torch.Tensor is torch.Tensor
torch.version.hip
torch.distributed.is_initialized()
torch.distributed.get_rank()
torch.distributed.get_world_size()
torch.distributed.barrier()
mp = torch.multiprocessing ;; mp.get_sharing_strategy()
mp = torch.multiprocessing ;; mp.get_all_sharing_strategies()
mp = torch.multiprocessing ;; mp.cpu_count() > 0
torch.jit.is_scripting()
torch.onnx.is_in_onnx_export()
issubclass(torch.onnx.OnnxExporterError, RuntimeError)
torch.jit.is_tracing()
m = torch.nn.Linear(2, 3) ;; torch.jit.script(m)(torch.ones(1, 2)).shape
m = torch.nn.Linear(2, 3) ;; isinstance(torch.jit.script(m), torch.nn.Module)
m = torch.nn.Linear(2, 3) ;; torch.jit.trace(m, torch.ones(1, 2))(torch.ones(4, 2)).shape
torch.jit.annotate(int, 3)
fut = torch.jit.fork(lambda a, b: a + b, torch.ones(2), 1) ;; torch.jit.wait(fut)
SDPBackend = torch.nn.attention.SDPBackend ;; [int(SDPBackend.ERROR), int(SDPBackend.MATH), int(SDPBackend.FLASH_ATTENTION), int(SDPBackend.EFFICIENT_ATTENTION), int(SDPBackend.CUDNN_ATTENTION), int(SDPBackend.OVERRIDEABLE)]
SDPBackend = torch.nn.attention.SDPBackend ;; SDPBackend.MATH.name
SDPBackend, sdpa_kernel = torch.nn.attention.SDPBackend, torch.nn.attention.sdpa_kernel ;; q = torch.ones(1, 2, 3, 4) ;; exec("with sdpa_kernel(SDPBackend.MATH): r = F.scaled_dot_product_attention(q, q, q)") or 0
SDPBackend, sdpa_kernel = torch.nn.attention.SDPBackend, torch.nn.attention.sdpa_kernel ;; q = torch.ones(1, 2, 3, 4) ;; exec("with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION]): F.scaled_dot_product_attention(q, q, q)")
sdpa_kernel = torch.nn.attention.sdpa_kernel ;; exec("with sdpa_kernel('math'): pass")
SDPBackend = torch.nn.attention.SDPBackend ;; [str(SDPBackend.MATH), repr(SDPBackend.FLASH_ATTENTION), SDPBackend.MATH == 0, f"{SDPBackend.CUDNN_ATTENTION}"]
torch.backends.cuda.SDPBackend.EFFICIENT_ATTENTION.name
q = torch.ones(1, 2, 3, 4) ;; exec("with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False): r = F.scaled_dot_product_attention(q, q, q)") or 0
q = torch.ones(1, 2, 3, 4) ;; exec("with torch.backends.cuda.sdp_kernel(enable_math=False, enable_flash=False): F.scaled_dot_product_attention(q, q, q)")
DistributedSampler = torch.utils.data.distributed.DistributedSampler ;; list(DistributedSampler(list(range(10)), num_replicas=3, rank=1, shuffle=False))
DistributedSampler = torch.utils.data.distributed.DistributedSampler ;; len(DistributedSampler(list(range(10)), num_replicas=3, rank=2, shuffle=False))
DistributedSampler = torch.utils.data.distributed.DistributedSampler ;; list(DistributedSampler(list(range(10)), num_replicas=3, rank=1, shuffle=False, drop_last=True))
DistributedSampler = torch.utils.data.distributed.DistributedSampler ;; list(DistributedSampler(list(range(2)), num_replicas=5, rank=4, shuffle=False))
DistributedSampler = torch.utils.data.distributed.DistributedSampler ;; DistributedSampler(list(range(10)), num_replicas=3, rank=3)
RemovableHandle = torch.utils.hooks.RemovableHandle ;; isinstance(torch.nn.Linear(1, 1).register_forward_hook(lambda *a: None), RemovableHandle)
""")
# (the case lines with their own ";;" keep the last part as the expression; pairs.cases splits on the last one)


def _split(setup, expr):
    return setup.replace(" ;; ", "\n"), expr


@pytest.mark.parametrize("setup,expr", CASES, ids=[e[:60] for _, e in CASES])
def test_environment_api_vs_torch(torch, setup, expr):
    setup, expr = _split(setup, expr)
    # torch.cuda's CPU-build errors are AssertionError("Torch not compiled with CUDA enabled"); tapegrad adds a
    # hint after those words, so the class and the opening words are compared
    words = not any(w in setup + expr for w in ("torch.cuda.", "torch.distributed.barrier"))
    same(torch, setup, expr, words=words)


def test_cuda_errors_start_with_torchs_words():
    for call in (tapegrad.cuda.synchronize, tapegrad.cuda.current_device, lambda: tapegrad.cuda.get_device_name(0)):
        with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled"):
            call()


def test_backend_switches_keep_what_is_set():
    # (not against torch here: setting torch's own global flags would leak into other tests, and torch's test
    #  helpers may have frozen them with disable_global_flags)
    b = tapegrad.backends
    for mod, name, value in ((b.cudnn, "benchmark", True), (b.cudnn, "deterministic", True),
                             (b.cuda.matmul, "allow_tf32", True), (b.opt_einsum, "strategy", "greedy")):
        old = getattr(mod, name)
        setattr(mod, name, value)
        assert getattr(mod, name) == value
        setattr(mod, name, old)


def test_backend_flags_context_restores():
    cudnn = tapegrad.backends.cudnn
    before = (cudnn.enabled, cudnn.deterministic)
    with cudnn.flags(enabled=False, deterministic=True):
        assert (cudnn.enabled, cudnn.deterministic) == (False, True)
    assert (cudnn.enabled, cudnn.deterministic) == before


def test_version_answers_as_torchs(torch):
    """``__version__`` is the torch release tapegrad answers for, tapegrad's own in the local label, comparing as
    torch's TorchVersion does; ``version.tapegrad`` is the package's version (pyproject.toml's)."""
    import pathlib
    import re
    v = tapegrad.__version__
    assert v == f"{torch.__version__.split('+')[0]}+tapegrad.{tapegrad.version.tapegrad}"
    assert tapegrad.version.__version__ == v and tapegrad.version.cuda is None
    pyproject = (pathlib.Path(__file__).parents[1] / "pyproject.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1) == tapegrad.version.tapegrad
    for other in ("2.0", "2.13", "2.13.0", "1.13.1", "2.14", "3", (2, 0), (2, 13, 0), (2, 14)):
        assert [v >= other, v > other, v < other, v <= other] == \
            [torch.__version__ >= other, torch.__version__ > other, torch.__version__ < other,
             torch.__version__ <= other], other
    assert isinstance(v, str) and v.split("+")[0] == "2.13.0"


def test_distributed_is_available_and_init_explains_a_world_above_one():
    assert tapegrad.distributed.is_available() is True
    with pytest.raises(RuntimeError, match="one process.*world_size=2"):
        tapegrad.distributed.init_process_group("gloo", init_method="tcp://127.0.0.1:1", world_size=2, rank=0)
    assert not tapegrad.distributed.is_initialized()


def test_distributed_sampler_without_replicas_needs_a_process_group(torch):
    from tapegrad.utils.data.distributed import DistributedSampler
    with pytest.raises(ValueError, match="Default process group has not been initialized") as ours:
        DistributedSampler(list(range(4)))
    with pytest.raises(ValueError) as theirs:
        torch.utils.data.distributed.DistributedSampler(list(range(4)))
    assert str(ours.value) == str(theirs.value)


def test_distributed_sampler_shares_cover_the_dataset_and_shuffle_per_epoch():
    from tapegrad.utils.data.distributed import DistributedSampler
    data = list(range(11))
    shares = [list(DistributedSampler(data, num_replicas=4, rank=r, seed=3)) for r in range(4)]
    every = sum(shares, [])
    assert set(every) == set(data) and len(every) == 12      # (one index repeated: the padding)
    assert all(len(s) == 3 for s in shares)
    s = DistributedSampler(data, num_replicas=2, rank=0, seed=1)
    first = list(s)
    assert list(s) == first
    s.set_epoch(1)
    assert list(s) != first


def test_jit_save_explains():
    with pytest.raises(RuntimeError, match="state_dict"):
        tapegrad.jit.save(tapegrad.nn.Linear(1, 1), "x.pt")


def test_onnx_export_takes_torch_s_arguments_and_explains(torch):
    import inspect
    import tapegrad.onnx
    ours, theirs = inspect.signature(tapegrad.onnx.export), inspect.signature(torch.onnx.export)
    assert [(p.name, p.kind) for p in ours.parameters.values()] == \
        [(p.name, p.kind) for p in theirs.parameters.values()]
    with pytest.raises(tapegrad.onnx.OnnxExporterError, match="no ONNX exporter.*state_dict"):
        tapegrad.onnx.export(tapegrad.nn.Linear(2, 2), (tapegrad.ones(1, 2),), "m.onnx", dynamo=False)


def test_distributed_calls_without_a_process_group_raise_as_torch(torch):
    # (the end of minGPT-ddp's main: destroy_process_group() with no group made)
    for name in ("get_rank", "get_world_size", "barrier", "destroy_process_group"):
        with pytest.raises(Exception) as ours:
            getattr(tapegrad.distributed, name)()
        with pytest.raises(Exception) as theirs:
            getattr(torch.distributed, name)()
        assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))


def test_nn_parallel_names_as_torch_without_accelerator_or_process_group(torch):
    from tapegrad.nn.parallel import DistributedDataParallel, data_parallel
    assert issubclass(DistributedDataParallel, tapegrad.nn.Module)
    for mod, T in ((tapegrad, tapegrad), (torch, torch)):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            mod.nn.parallel.DistributedDataParallel(T.nn.Linear(2, 2))
        with pytest.raises(RuntimeError, match="device type could not be determined"):
            mod.nn.parallel.data_parallel(T.nn.Linear(2, 3), T.ones(1, 2), range(2))
    assert data_parallel is tapegrad.nn.parallel.data_parallel


def test_multi_gpu_primitives_import_and_raise_as_torch_on_the_cpu(torch):
    # DLRM imports these by their module paths and calls them only with several GPUs
    from tapegrad._ops import ops
    from tapegrad.nn.parallel.parallel_apply import parallel_apply
    from tapegrad.nn.parallel.replicate import replicate
    from tapegrad.nn.parallel.scatter_gather import gather, scatter, scatter_kwargs
    assert ops is tapegrad.ops and parallel_apply is tapegrad.nn.parallel.parallel_apply
    import torch.nn.parallel.scatter_gather as tsg
    from torch.nn.parallel.parallel_apply import parallel_apply as t_apply
    from torch.nn.parallel.replicate import replicate as t_replicate
    for m, (sc, sk, ga, re, pa) in ((tapegrad, (scatter, scatter_kwargs, gather, replicate, parallel_apply)),
                                    (torch, (tsg.scatter, tsg.scatter_kwargs, tsg.gather, t_replicate, t_apply))):
        with pytest.raises(ValueError, match="Expected a non cpu device, but got: cpu"):
            sc(m.ones(4), ["cpu"])
        with pytest.raises(ValueError, match="Expected a non cpu device, but got: cpu"):
            sk((m.ones(4),), {}, ["cpu"])
        for outputs in ([m.ones(2), m.ones(2)], m.ones(2)):
            with pytest.raises(AssertionError, match="Gather function not implemented for CPU tensors"):
                ga(outputs, "cpu")
        with pytest.raises(AssertionError, match="Broadcast function not implemented for CPU tensors"):
            re(m.nn.Linear(2, 2), [0])
        with pytest.raises(AssertionError, match="number of modules 1 is not equal to the number of inputs 2"):
            pa([m.nn.Linear(2, 2)], [m.ones(1, 2), m.ones(1, 2)])
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
            pa([m.nn.Linear(2, 2)], [m.ones(1, 2)])


def test_onnx_names_programs_use(torch):
    import tapegrad.onnx
    assert tapegrad.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False
    assert issubclass(tapegrad.onnx.OnnxExporterError, RuntimeError)
    assert issubclass(torch.onnx.OnnxExporterError, RuntimeError)
    with pytest.raises(tapegrad.onnx.OnnxExporterError, match="no ONNX exporter"):
        tapegrad.onnx.export(tapegrad.nn.Linear(1, 1), (tapegrad.zeros(1),), "m.onnx")


def test_jit_decorators_leave_functions_alone():
    @tapegrad.jit.ignore
    def f(x):
        return x + 1

    @tapegrad.jit.unused
    def g(x):
        return x

    assert f(1) == 2 and g(3) == 3
    assert tapegrad.jit.export(f) is f


def _child(i, q):
    q.put(i * 10)


def test_multiprocessing_spawn_runs_each_process():
    mp = tapegrad.multiprocessing
    ctx = mp.get_context("spawn")
    q = ctx.SimpleQueue()
    mp.spawn(_child, args=(q,), nprocs=2)
    got = sorted(q.get() for _ in range(2))
    assert got == [0, 10]


def _fails(i):
    raise ValueError(f"boom {i}")


def test_multiprocessing_spawn_raises_the_childs_error():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(tapegrad.multiprocessing.ProcessRaisedException, match="boom 0"):
            tapegrad.multiprocessing.spawn(_fails, nprocs=1)


def test_dynamo_names_serve_compile():
    d = tapegrad._dynamo
    d.config.suppress_errors = True
    assert d.config.cache_size_limit == 8 and d.is_compiling() is False
    d.config.suppress_errors = False

    def f(x):
        return x.sin().sum()
    out = d.explain(f)(tapegrad.ones(3))
    assert out.graph_count == 1 and out.graph_break_count == 0
    d.reset()


def test_top_level_constants_are_torchs(torch):
    # research code writes `from torch import pi`, `torch.inf` masks and `x[:, torch.newaxis]`
    import math
    for name in ("pi", "e", "inf"):
        assert getattr(tapegrad, name) == getattr(torch, name), name
    assert math.isnan(tapegrad.nan) and math.isnan(torch.nan)
    assert tapegrad.newaxis is torch.newaxis is None
    x = tapegrad.arange(3.0)
    assert x[:, tapegrad.newaxis].shape == (3, 1)
    assert tapegrad.full((2,), tapegrad.inf).isinf().all()


def test_torch_functional_module_names_the_top_level_functions(torch):
    # `import torch.functional as F` (the introyt tutorials): the module torch defines einsum, split... in
    import tapegrad.functional as F
    import torch.functional as TF
    assert sorted(F.__all__) == sorted(n for n in TF.__all__ if n != "align_tensors")
    for name in F.__all__:
        assert getattr(F, name) is getattr(tapegrad, name), name
    assert tapegrad.functional is F
    x = tapegrad.arange(6.0).view(2, 3)
    assert F.einsum("ij->j", x).tolist() == TF.einsum("ij->j", torch.arange(6.0).view(2, 3)).tolist()
    with pytest.raises(AttributeError, match="max_pool2d"):
        F.max_pool2d


def test_ops_load_library_raises_torchs_oserror(torch, tmp_path):
    """torcheval guards ``torch.ops.load_library(fbgemm)`` with ``except OSError``: the same error and words."""
    path = "//deeplearning/fbgemm/fbgemm_gpu:metric_ops"
    with pytest.raises(OSError) as theirs:
        torch.ops.load_library(path)
    with pytest.raises(OSError) as ours:
        tapegrad.ops.load_library(path)
    assert str(ours.value) == str(theirs.value)
    lib = tmp_path / "libcustom.so"
    lib.write_bytes(b"not a library")
    with pytest.raises(OSError, match="Could not load this library: .*libcustom.so"):
        tapegrad.ops.load_library(str(lib))
    assert tapegrad.ops.loaded_libraries == torch.ops.loaded_libraries == set()


def test_jit_internal_helpers_as_copied_attention_code_uses_them(torch):
    # a MultiheadAttention copy annotates its class with torch._jit_internal.Optional[torch.Tensor]; older
    # functional copies build a flag-switched function with boolean_dispatch and subscript BroadcastingList2
    def run(lib):
        ji = lib._jit_internal

        class Core(lib.nn.Module):
            __annotations__ = {"bias_k": ji.Optional[lib.Tensor], "sizes": ji.List[int]}

        def pool_with_indices(x, k, return_indices=False):
            return lib.nn.functional.max_pool1d(x, k, return_indices=True)

        def pool(x, k, return_indices=False):
            """Max pool."""
            return lib.nn.functional.max_pool1d(x, k)

        f = ji.boolean_dispatch("return_indices", 2, False, pool_with_indices, pool, "mine", "max_pool")
        x = lib.arange(8.0).reshape(1, 2, 4)
        both = f(x, 2, True)
        return (Core.__annotations__["bias_k"] == ji.Optional[lib.Tensor], ji.BroadcastingList2[int],
                ji.is_scripting(), f(x, 2).tolist(), f(x, 2, return_indices=True)[1].tolist(),
                both[0].tolist(), f.__name__, f.__module__, f.__doc__, pool_with_indices.__doc__,
                ji.Tuple[int, int])

    assert run(tapegrad)[1:] == run(torch)[1:] and run(tapegrad)[0]

    def one():
        """One."""

    def two():
        """Two."""

    def declared(x: int) -> int:
        ...

    for lib in (tapegrad, torch):
        with pytest.raises(RuntimeError, match="only one function can have a docstring"):
            lib._jit_internal.boolean_dispatch("a", 0, False, one, two, None, None)
        assert lib._jit_internal._overload(declared) is declared


def test_torch_function_helpers_dispatch_like_torch(torch):
    # copied functional code asks has_torch_function(...) first: False for tensors, Parameters, None, numbers;
    # an argument whose type defines __torch_function__ is handed the call (subclasses before their bases)
    def run(lib):
        F, ov = lib.nn.functional, lib.overrides

        class A:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return (cls.__name__, func.__name__, [t.__name__ for t in types], len(args), kwargs)

        class B(A):
            pass

        class Refuses:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented

        def attention(q, k=None, scale=1.0):
            return q

        t, p = lib.ones(2), lib.nn.Parameter(lib.ones(1))
        out = [F.has_torch_function((t, None, p, 3)), F.has_torch_function((t, A())),
               ov.has_torch_function_unary(t), ov.has_torch_function_unary(A()),
               ov.has_torch_function_variadic(1, t), ov.has_torch_function_variadic(t, B()),
               F.handle_torch_function(attention, (A(), t), A(), t, scale=2.0),
               F.handle_torch_function(attention, (t, A(), B()), t, scale=3.0),
               F.handle_torch_function(attention, (Refuses(), B()), 1),
               ov.is_tensor_like(t), ov.is_tensor_like(p), ov.is_tensor_like(A()), ov.is_tensor_like(3)]
        with pytest.raises(TypeError) as err:
            F.handle_torch_function(attention, (Refuses(), t), 1)
        for not_iterable in (3, lib.ones(())):
            with pytest.raises(TypeError, match="expected a sequence"):
                F.has_torch_function(not_iterable)
        out += [F.has_torch_function(t), F.has_torch_function(iter([A()])), F.has_torch_function({1: 2})]
        return out, str(err.value).split("types")[0]

    assert run(tapegrad) == run(torch)


def test_nn_common_types_has_torchs_aliases(torch):
    # conv-layer libraries annotate with `from torch.nn.common_types import _size_2_t`
    import typing

    import tapegrad.nn.common_types as ours
    theirs = torch.nn.common_types
    names = [n for n in dir(theirs) if n.startswith("_") and n.endswith("_t") and not n.startswith("__")]
    assert names and all(hasattr(ours, n) for n in names)
    def shape(alias):            # int | tuple[int, int] -> [int, (tuple, [int, int])], Tensor by its name
        if typing.get_origin(alias) in (tuple, typing.Union) or type(alias).__name__ == "UnionType":
            return (typing.get_origin(alias) is tuple, [shape(a) for a in typing.get_args(alias)])
        return alias.__name__ if isinstance(alias, type) else str(alias)

    for n in names:
        assert shape(getattr(ours, n)) == shape(getattr(theirs, n)), n


_SCRIPTED = '''
from typing import List, Optional, Tuple

@torch.jit.script
def decay(a: torch.Tensor, p: float, q: Optional[float] = None, n: int = 2):
    return a * p if q is None else a * p * q

@torch.jit.script
def scaled(xs: List[float], t: Tuple[float, int]):
    return torch.tensor(xs) * t[0]

@torch.jit.script
def half(x: float):
    return x / 2
'''


def test_jit_script_passes_float_parameters_as_floats(torch, tmp_path):
    # TorchScript converts an int (or bool, or 0-d tensor) given for a `float` parameter: norse's scripted
    # filters called with ints give float tensors in torch (and integer ones in plain Python)
    def run(lib):
        path = tmp_path / f"scripted_{lib.__name__}.py"   # (torch.jit.script reads the source)
        path.write_text(f"import {lib.__name__} as torch\n" + _SCRIPTED)
        import importlib.util
        spec = importlib.util.spec_from_file_location(path.stem, path)
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        x = lib.tensor([3])
        out = [m.decay(x, 1), m.decay(x, 2, 3), m.decay(x, p=2), m.decay(x, 2, q=2), m.decay(x, True),
               m.decay(x, lib.tensor(2.0)), m.scaled([1, 2], (2, 3)), m.half(3)]
        out = [(o.dtype is lib.float32, o.tolist()) if isinstance(o, lib.Tensor) else (type(o), o) for o in out]
        for args, kwargs in [((x, 1.0), {"n": 2.5}), ((3, 1.0), {})]:
            with pytest.raises(RuntimeError) as err:
                m.decay(*args, **kwargs)
            out.append(str(err.value).splitlines()[0])
        return out

    assert run(tapegrad) == run(torch)
