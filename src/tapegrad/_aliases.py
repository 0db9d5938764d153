"""NumPy's argument names that PyTorch's argument parser accepts: ``x.sum(axis=1, keepdims=True)``.

torch's C++ argument parser (the one behind every ``torch.xxx`` op, every Tensor method and the built-in
functions of ``torch.nn.functional``, ``torch.linalg``, ``torch.special`` and ``torch.fft``) takes NumPy's names
for four of its parameters: ``axis`` for ``dim``, ``keepdims`` for ``keepdim``, ``x``/``a``/``x1`` for ``input``
and ``x2`` for ``other``. Functions torch writes in Python (``torch.split``, ``torch.norm``, most of
``nn.functional``: ``F.softmax(x, axis=1)`` is a TypeError) never see that parser and take no alias.

tapegrad gives its functions torch's parameter names, so one wrapper does it: ``with_aliases`` renames the
NumPy names a call uses and calls the function (a call without keywords costs one ``if``). It is applied in
two places only: ``bind`` (``ops/_util.py``) for Tensor methods, and ``install`` for the functions of a
namespace (``tapegrad``, ``nn.functional``, ``linalg`` ... at the end of their modules). A NumPy name given
together with its torch name is torch's TypeError (``sum() got an unexpected keyword argument 'axis'``).

torch's parser functions are C built-ins, which do not bind as methods: ``conv = torch.conv2d`` in a class body,
then ``self.conv(x, w)``, calls ``conv2d(x, w)``. A Python function would receive ``self`` too, so ``install``
also hands each such function to the namespace as a ``builtin``: a ``functools.partial`` with no arguments (a C
callable that forwards the call as it came, ~20 ns, and binds to nothing) that answers to the function's name,
doc, signature and ``help``, and pickles and copies by its name, as torch's built-ins do. The functions torch
writes in Python stay plain functions here too, and bind as torch's do.
"""

from __future__ import annotations

import functools
import types

from . import _argtypes

__all__ = ["ALIASES", "with_aliases", "install", "builtin", "BUILTIN", "PYTHON_DEFINED", "PARSER_FUNCTIONS"]

# torch's numpy_compatibility_arg_names: the torch name -> the NumPy names the parser also takes
ALIASES = {"dim": ("axis",), "keepdim": ("keepdims",), "input": ("x", "a", "x1"), "other": ("x2",)}
_TARGETS = frozenset(ALIASES)

# The public callables torch 2.13 defines in Python (its parser never sees them: they take no alias), per
# namespace (``tests/test_aliases.py`` checks these lists against torch; linalg, special and fft have none).
PYTHON_DEFINED = {
    "torch": frozenset({
        "are_deterministic_algorithms_enabled", "atleast_1d", "atleast_2d", "atleast_3d", "block_diag",
        "broadcast_shapes", "broadcast_tensors", "cartesian_prod", "cdist", "chain_matmul", "classproperty",
        "compile", "compiled_with_cxx11_abi", "cond", "eig", "einsum", "from_dlpack", "get_default_device",
        "get_deterministic_debug_mode", "get_device_module", "get_file_path", "get_float32_matmul_precision",
        "get_rng_state", "initial_seed", "is_deterministic_algorithms_warn_only_enabled", "is_storage", "is_tensor",
        "is_warn_always_enabled", "load", "lobpcg", "lstsq", "lu", "manual_seed", "matrix_rank", "meshgrid", "norm",
        "pca_lowrank", "prepare_multiprocessing_environment", "profiler_allow_cudagraph_cupti_lazy_reinit_cuda12",
        "save", "seed", "set_default_device", "set_default_dtype", "set_default_tensor_type",
        "set_deterministic_debug_mode", "set_float32_matmul_precision", "set_printoptions", "set_rng_state",
        "set_warn_always", "solve", "split", "stft", "svd_lowrank", "sym_float", "sym_fresh_size", "sym_int",
        "sym_ite", "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_sum", "symeig", "tensordot",
        "thread_safe_generator", "typename", "unique", "unique_consecutive", "unravel_index",
        "use_deterministic_algorithms", "vmap", "while_loop"}),
    "Tensor": frozenset({
        "backward", "dim_order", "eig", "index", "is_shared", "istft", "lstsq", "lu", "module_load", "norm",
        "register_hook", "register_post_accumulate_grad_hook", "reinforce", "resize", "resize_as", "share_memory_",
        "solve", "split", "stft", "storage", "storage_type", "symeig", "to_sparse_coo", "unflatten", "unique",
        "unique_consecutive"}),
}
# In ``nn.functional`` it is the other way round: these few are the parser's built-ins, all else is Python.
PARSER_FUNCTIONS = {
    "nn.functional": frozenset({
        "adaptive_avg_pool1d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "bilinear", "celu_", "channel_shuffle",
        "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
        "cosine_similarity", "elu_", "gelu", "hardshrink", "hardtanh_", "leaky_relu_", "linear", "logsigmoid",
        "native_channel_shuffle", "one_hot", "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle",
        "prelu", "relu_", "rrelu_", "scaled_dot_product_attention", "selu_", "softplus", "softshrink",
        "threshold_"}),
}


_SPLIT = {"sections": "indices_or_sections", "indices": "indices_or_sections"}
# torch's keyword names (its ATen schema's) where tapegrad's parameter, shared with another namespace, has another:
# {namespace: {function: {torch's name: tapegrad's parameter}}}. tapegrad's own name is then refused there, as
# torch refuses it (``torch.det(A=x)``; ``torch.linalg.det`` takes ``A``). tests/test_keyword_names.py scans them.
RENAMES = {
    "torch": {
        "det": {"input": "A"}, "matrix_exp": {"input": "A"}, "matrix_power": {"input": "A"},
        "lu_solve": {"input": "b"}, "triangular_solve": {"input": "b"}, "neg_": {"input": "self"},
        "negative_": {"input": "self"}, "promote_types": {"type1": "a", "type2": "b"},
    },
    "Tensor": {},
}
for _where in ("torch", "Tensor"):
    RENAMES[_where].update({
        "orgqr": {"input2": "tau"}, "ormqr": {"input2": "tau", "input3": "other"},
        "swapaxes": {"axis0": "dim0", "axis1": "dim1"}, "swapaxes_": {"axis0": "dim0", "axis1": "dim1"},
        "hsplit": _SPLIT, "vsplit": _SPLIT, "dsplit": _SPLIT,
        "tensor_split": {**_SPLIT, "tensor_indices_or_sections": "indices_or_sections"}})
del _where


def _table(fn, method, renames=None):
    """``{numpy name: (torch name, position or None)}`` for the parameters of ``fn`` that torch aliases (those of
    the function a ``functools.wraps`` wrapper such as ``out=``'s wraps), and ``renames`` ({torch's name:
    parameter}); a renamed parameter's own name maps to (None, None): refused."""
    while getattr(fn, "__wrapped__", None) is not None:
        fn = fn.__wrapped__
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    npos = code.co_argcount
    params = code.co_varnames[:npos + code.co_kwonlyargcount]
    if _TARGETS.isdisjoint(params) and not renames:
        return None
    table = {}
    for i, p in enumerate(params):
        if method and i == 0:          # a method's first parameter is the tensor itself (not torch's `input`)
            continue
        for alias in ALIASES.get(p, ()):
            if alias not in params:
                table[alias] = (p, i if i < npos else None)
    for theirs, p in (renames or {}).items():
        if p in params:
            i = params.index(p)
            table[theirs] = (p, i if i < npos else None)
            if p not in renames:
                table[p] = (None, None)
    return table or None


# how torch's parser names the functions of these namespaces in its errors (``linalg_solve()``)
PARSER_PREFIX = {"linalg": "linalg_", "special": "special_", "fft": "fft_"}


def with_aliases(fn, method=False, name=None, where=None):
    """``fn`` taking torch's NumPy-style names too (``fn`` itself when it has none of the parameters); a failed
    call whose argument has a wrong type raises torch's TypeError (``_argtypes.explain``: free when nothing
    fails), naming the function as torch's parser does in namespace ``where``."""
    renames = RENAMES["Tensor" if method else where].get(name) if where in RENAMES or method else None
    if getattr(fn, "_aliases", None) is not None:          # already wrapped
        if not renames:
            return fn
        fn = fn.__wrapped__
    table = _table(fn, method, renames)
    if table is None:
        return fn
    names = frozenset(table)
    name = name or getattr(fn, "__name__", "function")
    parser_name = PARSER_PREFIX.get(where, "") + name

    def call(*args, **kwargs):
        if kwargs and not names.isdisjoint(kwargs):
            for alias in names.intersection(kwargs):
                target, pos = table[alias]
                if target is None or target in kwargs or (pos is not None and pos < len(args)):
                    raise TypeError(f"{name}() got an unexpected keyword argument '{alias}'")
                kwargs[target] = kwargs.pop(alias)
        try:
            return fn(*args, **kwargs)
        except Exception as e:      # a wrong-typed argument gets torch's TypeError (free when nothing fails)
            err = _argtypes.explain(parser_name, fn, args, kwargs, method, e)
            if err is None:
                raise
            raise err from None

    call.__wrapped__ = fn          # (functools.update_wrapper's work, without its per-call cost at import)
    call.__name__, call.__qualname__, call.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    call.__module__ = fn.__module__
    call._aliases = table
    return call


_argtypes._WRAPPER_CODE = with_aliases(lambda input: input).__code__
_argtypes.WRAPPER_CODES.add(_argtypes._WRAPPER_CODE)


if hasattr(functools.partial, "__get__"):       # Python >= 3.13: partial is becoming a method descriptor
    class BUILTIN(functools.partial):
        """(A partial that stays out of binding; a subclass keeps partial's vectorcall from Python 3.12 on.)"""
        __slots__ = ()

        def __get__(self, obj, objtype=None):
            return self
else:                                           # (a subclass would lose the vectorcall on 3.10 and 3.11)
    BUILTIN = functools.partial


def builtin(fn, name, module):
    """``fn`` as namespace ``module``'s function ``name``, the way torch's C built-ins behave: a class attribute
    holding it does not bind it as a method. It answers to ``__name__``, ``__qualname__``, ``__module__``,
    ``__doc__`` and ``__wrapped__`` (so ``inspect.signature`` and ``help`` see ``fn``'s), and pickles and copies
    by name (``__reduce_ex__`` gives ``name``: pickle stores ``module.name``, copy returns the object itself)."""
    b = BUILTIN(fn)
    b.__dict__.update(__name__=name, __qualname__=name, __module__=module, __doc__=fn.__doc__, __wrapped__=fn,
                      __reduce_ex__=lambda protocol: name)
    aliases = getattr(fn, "_aliases", None)
    if aliases is not None:
        b._aliases = aliases
    return b


def install(namespace: dict, where: str, names=None):
    """Wrap the functions of a module's namespace (``globals()``) that torch's parser would see in ``where``
    ("torch", "nn.functional", "linalg", "special", "fft"): every public plain function of tapegrad's own,
    except those torch defines in Python, takes the aliases and becomes a ``builtin`` (binds to nothing)."""
    python_defined = PYTHON_DEFINED.get(where, frozenset())
    parser_only = PARSER_FUNCTIONS.get(where)
    module = namespace["__name__"]
    for n in list(namespace if names is None else names):
        if n.startswith("_") or n in python_defined or (parser_only is not None and n not in parser_only):
            continue
        fn = namespace.get(n)
        if fn.__class__.__name__ != "function" or not getattr(fn, "__module__", "").startswith("tapegrad"):
            continue
        namespace[n] = builtin(with_aliases(fn, name=n, where=where), n, module)


def method(name, fn):
    """A Tensor method as ``bind`` attaches it (torch's Python-defined methods take no alias). A function that
    needs no wrapper gets a copy with a code object of its own, the same bytecode: a frame of the method then
    tells itself apart from one of the namespace function (``_argtypes.from_stack``: torch counts a method's
    argument positions without self)."""
    python_defined = name in PYTHON_DEFINED["Tensor"] or name.startswith("__")
    wrapped = fn if python_defined else with_aliases(fn, method=True, name=name)
    if wrapped is not fn or not isinstance(fn, types.FunctionType):
        return wrapped
    own = types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    own.__kwdefaults__, own.__qualname__, own.__doc__, own.__module__ = \
        fn.__kwdefaults__, fn.__qualname__, fn.__doc__, fn.__module__
    own.__annotations__ = fn.__annotations__
    own.__dict__.update(fn.__dict__)
    _argtypes.METHOD_COPIES[id(own.__code__)] = name
    return own
