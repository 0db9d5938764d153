"""The ``weights_only`` unpickler: pickle's data opcodes run on an explicit stack, and only allowed names build.

``pickle.load`` imports and calls whatever a file names, so loading an untrusted pickle can run any code. This
reader never imports anything: a ``GLOBAL`` resolves only through a table of allowed names (the tensor rebuild
functions, dtypes, storages, ``OrderedDict`` and a few builtins, as torch 2.6+ allows them) or the names a user
allowlisted with ``add_safe_globals``; every other name is refused with torch's message before anything runs.
``REDUCE`` calls only those objects, ``NEWOBJ``/``BUILD`` only make allowed types, ``APPEND`` only extends lists
and ``SETITEM`` only fills dicts. The stack is a list (no recursion, so nesting depth costs memory, not the C
stack), and every length in the stream is checked against what the file still holds before it is read.
"""

from __future__ import annotations

import _compat_pickle
import struct
from collections import Counter, OrderedDict
from pickle import UnpicklingError, decode_long

from ._common import Corrupt
from ._torch_names import torch_spellings

__all__ = ["Unpickler", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
           "user_allowed"]

BLOCKED_MODULES = ("sys", "os", "posix", "nt")

# --- the user's allowlist (torch.serialization.add_safe_globals and friends) ---------------------------------
_marked = set()


def add_safe_globals(safe_globals) -> None:
    """Mark functions/classes (or ``(obj, "module.name")`` pairs) as safe for ``weights_only`` loading."""
    global _marked
    _marked = _marked | set(safe_globals)


def get_safe_globals() -> list:
    """The user-added globals that ``weights_only`` loading accepts."""
    return list(_marked)


def clear_safe_globals() -> None:
    """Forget every global added with ``add_safe_globals``."""
    global _marked
    _marked = set()


def _remove_safe_globals(globals_to_remove) -> None:
    global _marked
    _marked = _marked - set(globals_to_remove)


class safe_globals:
    """Context manager: the given globals are safe for ``weights_only`` loading inside the ``with`` block."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, type, value, tb):  # noqa: A002 - the protocol's name
        _remove_safe_globals(self.safe_globals)


def user_allowed() -> dict:
    """``{"module.qualname": obj}`` for every allowlisted global."""
    out = {}
    for f in _marked:
        if isinstance(f, tuple):
            if len(f) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), but got tuple of "
                                 f"length: {len(f)}")
            if type(f[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: "
                                f"{type(f[1])}")
            out[f[1]] = f[0]
        else:
            out[f"{f.__module__}.{f.__qualname__}"] = f
            for name in torch_spellings(f):          # a tapegrad class or function: as a file names torch's
                out.setdefault(name, f)
    return out


def _refuse_global(module, name):
    full = f"{module}.{name}"
    if full in ("torch.nested._internal.nested_tensor.NestedTensor",
                "torch.nested._internal.nested_tensor._rebuild_njt", "torch._dynamo.decorators._DimRange"):
        raise UnpicklingError("``torch.nested`` and ``torch._dynamo`` must be imported to load nested jagged "
                              "tensors (NJTs)")
    if full.startswith("torch.distributed."):
        raise UnpicklingError("``torch.distributed.tensor`` must be imported to load DTensors")
    if module == "builtins":
        full = name
    raise UnpicklingError(
        f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
        f"`torch.serialization.add_safe_globals([{full}])` or the `torch.serialization.safe_globals([{full}])` "
        "context manager to allowlist this global if you trust this class/function.")


class Unpickler:
    """One ``load()`` of a pickle from ``reader`` (``read(n)``/``readline()``, bounded by the file).

    ``allowed``: ``{"module.name": obj}`` that GLOBAL may name; ``callable_ids``: the ids of the allowed objects
    REDUCE may call; ``persistent_load(pid)``: resolves storage references; ``special``: tapegrad's stand-ins
    for the types torch builds itself (``parameter``: NEWOBJ makes it by calling it; ``build``: ``{type:
    fn(inst, state)}`` for BUILD on a Tensor or Parameter).
    """

    def __init__(self, reader, *, allowed, callable_ids, persistent_load, parameter=None, build=None,
                 encoding="utf-8"):
        self.reader, self.allowed, self.callable_ids = reader, allowed, callable_ids
        self.persistent_load = persistent_load
        self.parameter, self.build = parameter, build or {}
        self.encoding = encoding
        self.user = user_allowed()
        self.user_ids = {id(v) for v in self.user.values()}
        self.allowed_ids = {id(v) for v in allowed.values()} | self.user_ids

    # --- the machine ---
    def load(self):
        self.stack, self.metastack, self.memo = [], [], {}
        read = self.reader.read
        ops = _OPS
        while True:
            code = read(1)[0]
            if code == 0x2E:                                  # STOP
                return self.stack.pop()
            op = ops.get(code)
            if op is None:
                raise UnpicklingError(f"Unsupported operand {code}")
            op(self)

    def pop_mark(self):
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _int(self, fmt):
        return struct.unpack(fmt, self.reader.read(struct.calcsize(fmt)))[0]

    def _text(self, n):
        return str(self.reader.read(n), "utf-8", "surrogatepass")

    def _str8(self, n):
        data = self.reader.read(n)
        return data if self.encoding == "bytes" else data.decode(self.encoding, "strict")

    # --- names and calls: the only opcodes that could run code, each checked ---
    def resolve(self, module, name):
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        if module in BLOCKED_MODULES:
            raise UnpicklingError(f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked.")
        if full in self.allowed:
            return self.allowed[full]
        if full in self.user:
            return self.user[full]
        _refuse_global(module, name)

    def op_global(self):
        module = self.reader.readline()[:-1].decode("utf-8")
        name = self.reader.readline()[:-1].decode("utf-8")
        self.stack.append(self.resolve(module, name))

    def op_stack_global(self):
        name = self.stack.pop()
        module = self.stack.pop()
        if type(name) is not str or type(module) is not str:
            raise Corrupt("STACK_GLOBAL requires str")
        self.stack.append(self.resolve(module, name))

    def op_reduce(self):
        args = self.stack.pop()
        func = self.stack[-1]
        if id(func) not in self.callable_ids and id(func) not in self.user_ids:
            msg = f"Trying to call reduce for unrecognized function {func}"
            if hasattr(func, "__self__"):
                msg += f" which belongs to {func.__self__}"
            raise UnpicklingError(msg)
        if type(args) is not tuple:
            raise Corrupt(f"REDUCE arguments must be a tuple, not {type(args).__name__}")
        self.stack[-1] = func(*args)

    def op_newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        if type(args) is not tuple:
            raise Corrupt(f"NEWOBJ arguments must be a tuple, not {type(args).__name__}")
        if self.parameter is not None and cls is self.parameter[0]:
            self.stack.append(self.parameter[1](*args))
        elif id(cls) in self.allowed_ids and isinstance(cls, type):
            self.stack.append(cls.__new__(cls, *args))
        else:
            raise UnpicklingError("Can only create new object for nn.Parameter or classes allowlisted via "
                                  f"`add_safe_globals` but got {cls}")

    def op_build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        kind = type(inst)
        if kind in self.build:
            self.build[kind](inst, state)
        elif kind is OrderedDict:
            if not isinstance(state, dict):
                raise Corrupt(f"the state of an OrderedDict must be a dict, not {type(state).__name__}")
            inst.__dict__.update(state)
        elif id(kind) in self.allowed_ids:
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
            else:
                slotstate = None
                if isinstance(state, tuple) and len(state) == 2:
                    state, slotstate = state
                if state:
                    inst.__dict__.update(state)
                if slotstate:
                    for k, v in slotstate.items():
                        setattr(inst, k, v)
        else:
            raise UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                                  f"`add_safe_globals`, but got {kind}")

    def op_persid(self):
        pid = self.stack.pop()
        if type(pid) is not tuple and type(pid) is not int:
            raise UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
        if type(pid) is tuple and pid:
            kind = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
            if kind != "storage":
                raise UnpicklingError(f"Only persistent_load of storage is allowed, but got {pid[0]!r}")
        self.stack.append(self.persistent_load(pid))

    # --- containers: only the plain ones, and only filled by their own opcodes ---
    def op_append(self):
        item = self.stack.pop()
        target = self.stack[-1]
        if type(target) is not list:
            raise UnpicklingError(f"Can only append to lists, but got {type(target)}")
        target.append(item)

    def op_appends(self):
        items = self.pop_mark()
        target = self.stack[-1]
        if type(target) is not list:
            raise UnpicklingError(f"Can only extend lists, but got {type(target)}")
        target.extend(items)

    def _dict_target(self, opcode):
        target = self.stack[-1]
        if type(target) not in (dict, OrderedDict, Counter):
            raise UnpicklingError(f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, but "
                                  f"got {type(target)}")
        return target

    def op_setitem(self):
        value, key = self.stack.pop(), self.stack.pop()
        self._dict_target("SETITEM")[key] = value

    def op_setitems(self):
        items = self.pop_mark()
        target = self._dict_target("SETITEMS")
        if len(items) % 2:
            raise Corrupt("SETITEMS needs key/value pairs, got an odd number of items")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def op_additems(self):
        items = self.pop_mark()
        target = self.stack[-1]
        if type(target) is not set:
            raise UnpicklingError(f"Can only add items to sets, but got {type(target)}")
        target.update(items)

    def op_mark(self):
        self.metastack.append(self.stack)
        self.stack = []

    def op_pop(self):
        if self.stack:
            self.stack.pop()
        else:
            self.pop_mark()

    def op_proto(self):
        proto = self.reader.read(1)[0]
        if proto > 5:
            raise UnpicklingError(f"unsupported pickle protocol: {proto}")

    def op_get(self, idx):
        if idx not in self.memo:
            raise Corrupt(f"Memo value not found at index {idx}")
        self.stack.append(self.memo[idx])

    def op_put(self, idx):
        self.memo[idx] = self.stack[-1]


def _push(make):
    def op(u):
        value = make(u)               # first: making it may pop a mark and so change u.stack
        u.stack.append(value)
    return op


def _tuple_of(n):
    def op(u):
        if n:
            items = tuple(u.stack[-n:])
            if len(items) != n:
                raise IndexError("stack underflow")
            del u.stack[-n:]
        else:
            items = ()
        u.stack.append(items)
    return op


def _pairs(items):
    if len(items) % 2:
        raise Corrupt("DICT needs key/value pairs, got an odd number of items")
    return {items[i]: items[i + 1] for i in range(0, len(items), 2)}


_U = Unpickler
_OPS = {
    0x80: _U.op_proto,
    0x95: lambda u: u.reader.read(8),                                  # FRAME: we read sequentially anyway
    0x28: _U.op_mark,                                                  # (
    0x30: _U.op_pop,                                                   # 0
    0x31: lambda u: u.pop_mark(),                                      # 1 POP_MARK
    0x32: lambda u: u.stack.append(u.stack[-1]),                       # 2 DUP
    0x4E: lambda u: u.stack.append(None),                              # N
    0x88: lambda u: u.stack.append(True),
    0x89: lambda u: u.stack.append(False),
    0x4A: _push(lambda u: u._int("<i")),                               # J BININT
    0x4B: _push(lambda u: u.reader.read(1)[0]),                        # K BININT1
    0x4D: _push(lambda u: u._int("<H")),                               # M BININT2
    0x8A: _push(lambda u: decode_long(u.reader.read(u.reader.read(1)[0]))),      # LONG1
    0x8B: _push(lambda u: decode_long(u.reader.read(u._int("<I")))),             # LONG4
    0x47: _push(lambda u: u._int(">d")),                               # G BINFLOAT
    0x58: _push(lambda u: u._text(u._int("<I"))),                      # X BINUNICODE
    0x8C: _push(lambda u: u._text(u.reader.read(1)[0])),               # SHORT_BINUNICODE
    0x8D: _push(lambda u: u._text(u._int("<Q"))),                      # BINUNICODE8
    0x55: _push(lambda u: u._str8(u.reader.read(1)[0])),               # U SHORT_BINSTRING (Python 2 str)
    0x54: _push(lambda u: u._str8(u._int("<I"))),                      # T BINSTRING
    0x43: _push(lambda u: u.reader.read(u.reader.read(1)[0])),         # C SHORT_BINBYTES
    0x42: _push(lambda u: u.reader.read(u._int("<I"))),                # B BINBYTES
    0x8E: _push(lambda u: u.reader.read(u._int("<Q"))),                # BINBYTES8
    0x96: _push(lambda u: bytearray(u.reader.read(u._int("<Q")))),     # BYTEARRAY8
    0x5D: _push(lambda u: []),                                         # ] EMPTY_LIST
    0x6C: _push(lambda u: list(u.pop_mark())),                         # l LIST
    0x61: _U.op_append,                                                # a
    0x65: _U.op_appends,                                               # e
    0x29: _push(lambda u: ()),                                         # ) EMPTY_TUPLE
    0x74: _push(lambda u: tuple(u.pop_mark())),                        # t TUPLE
    0x85: _tuple_of(1), 0x86: _tuple_of(2), 0x87: _tuple_of(3),
    0x7D: _push(lambda u: {}),                                         # } EMPTY_DICT
    0x64: _push(lambda u: _pairs(u.pop_mark())),                       # d DICT
    0x73: _U.op_setitem,                                               # s
    0x75: _U.op_setitems,                                              # u
    0x8F: _push(lambda u: set()),                                      # EMPTY_SET
    0x90: _U.op_additems,
    0x91: _push(lambda u: frozenset(u.pop_mark())),                    # FROZENSET
    0x63: _U.op_global,                                                # c
    0x93: _U.op_stack_global,
    0x52: _U.op_reduce,                                                # R
    0x81: _U.op_newobj,
    0x62: _U.op_build,                                                 # b
    0x51: _U.op_persid,                                                # Q BINPERSID
    0x68: lambda u: u.op_get(u.reader.read(1)[0]),                     # h BINGET
    0x6A: lambda u: u.op_get(u._int("<I")),                            # j LONG_BINGET
    0x71: lambda u: u.op_put(u.reader.read(1)[0]),                     # q BINPUT
    0x72: lambda u: u.op_put(u._int("<I")),                            # r LONG_BINPUT
    0x94: lambda u: u.op_put(len(u.memo)),                             # MEMOIZE
}
