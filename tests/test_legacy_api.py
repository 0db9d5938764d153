"""PyTorch's legacy tensor API against torch: the typed classes (constructors, isinstance), torch.Tensor(...),
x.new(...), x.type(...), torch.typename, autograd.Variable and the x.data idioms."""

import numpy as np
import pytest

import tapegrad
from pairs import cases, same

TYPED = ["FloatTensor", "DoubleTensor", "HalfTensor", "ByteTensor", "CharTensor", "ShortTensor", "IntTensor",
         "LongTensor", "BoolTensor"]

CASES = cases("""
torch.FloatTensor(2, 1).shape
torch.LongTensor(3).shape
torch.FloatTensor(0).shape
torch.FloatTensor(torch.Size([2, 3])).shape
torch.FloatTensor((2, 3))
torch.FloatTensor(range(3))
torch.FloatTensor([])
torch.LongTensor()
torch.LongTensor([1.7, -2.5])
torch.FloatTensor(np.array([1, 2]))
torch.LongTensor(np.array([1.5]))
torch.FloatTensor(np.array(2.))
torch.FloatTensor([1], device="cpu")
torch.FloatTensor(2, 3, device="cpu").shape
torch.ByteTensor([300])
torch.ByteTensor([-1])
torch.CharTensor([128])
torch.LongTensor([2**63])
torch.FloatTensor(-1)
torch.FloatTensor(2.0)
torch.FloatTensor(np.float64(2))
torch.FloatTensor(True)
torch.FloatTensor('a')
torch.FloatTensor(torch.ones(2, dtype=torch.long))
torch.LongTensor(torch.ones(2))
t = torch.ones(2) ;; torch.FloatTensor(t).data_ptr() == t.data_ptr()
t = torch.ones(2) ;; torch.FloatTensor(t) is t
isinstance(torch.ones(2), torch.FloatTensor)
isinstance(torch.ones(2, dtype=torch.float64), torch.FloatTensor)
isinstance(torch.ones(2, dtype=torch.float64), torch.DoubleTensor)
isinstance(torch.ones(2, dtype=torch.long), torch.LongTensor)
isinstance(torch.ones(2, dtype=torch.long), torch.IntTensor)
isinstance(torch.ones(2, dtype=torch.bool), torch.BoolTensor)
isinstance(torch.FloatTensor([1]), torch.Tensor)
isinstance(torch.nn.Parameter(torch.ones(1)), torch.FloatTensor)
isinstance(3, torch.FloatTensor)
type(torch.FloatTensor([1])) is torch.Tensor
issubclass(torch.FloatTensor, torch.Tensor)
torch.FloatTensor.dtype
torch.LongTensor.dtype
torch.FloatTensor.is_cuda
torch.FloatTensor.__name__
torch.is_tensor(torch.FloatTensor([1]))
torch.FloatTensor([1]).requires_grad
isinstance(torch.ones(2), torch.cuda.FloatTensor)
torch.Tensor(2, 3).shape
torch.Tensor([1, 2])
torch.Tensor([[1, 2]]).dtype
torch.Tensor()
torch.Tensor(torch.tensor([1, 2]))
torch.Tensor(3.5)
torch.set_default_dtype(torch.float64) ;; (torch.Tensor([1]).dtype, torch.Tensor(2).dtype, torch.FloatTensor([1]).dtype)
x = torch.ones(2) ;; x.new(2, 3).shape
x = torch.ones(2) ;; x.new([1, 2])
x = torch.ones(2, dtype=torch.long) ;; x.new([1.5, 2])
x = torch.ones(2, dtype=torch.int32) ;; x.new([1.5, 2]).dtype
x = torch.ones(2) ;; x.new().shape
x = torch.ones(2) ;; x.new(torch.Size([2])).shape
x = torch.ones(2) ;; x.new(torch.tensor([1., 2.]))
x = torch.ones(2) ;; x.new(torch.ones(2, dtype=torch.long))
x = torch.ones(2) ;; x.new(2.0)
x = torch.ones(2, requires_grad=True) ;; x.new(2).requires_grad
torch.ones(2).type()
torch.ones(2, dtype=torch.long).type()
torch.ones(2, dtype=torch.bool).type()
torch.ones(2, dtype=torch.float16).type()
torch.ones(2).type() == 'torch.FloatTensor'
torch.ones(2).type('torch.DoubleTensor')
torch.ones(2).type(torch.float64)
torch.ones(2).type(torch.LongTensor)
torch.ones(2).type(torch.IntTensor).dtype
torch.ones(2).type(dtype='torch.IntTensor')
torch.ones(2).type(torch.FloatTensor)
torch.ones(2).type('float')
torch.ones(2).type('torch.float32')
torch.ones(2, dtype=torch.long).type(torch.Tensor)
torch.ones(2, dtype=torch.float64).type('torch.Tensor').dtype
torch.set_default_dtype(torch.float64) ;; (torch.ones(2, dtype=torch.long).type(torch.Tensor).dtype, torch.ones(2, dtype=torch.float32).type('torch.Tensor').dtype)
x = torch.ones(2) ;; x.type(torch.Tensor) is x
torch.ones(2, dtype=torch.float64, requires_grad=True).type(torch.Tensor).grad_fn.name()
torch.ones(2).type('Tensor')
torch.ones(2).type('FloatTensor')
torch.ones(2).type(torch.nn.Parameter)
torch.ones(2).type(int)
torch.ones(2).type(np.float32)
torch.ones(2).type(np.dtype('float32'))
torch.ones(2).type(5)
torch.Tensor.type(torch.ones(2))
torch.typename(torch.ones(2))
torch.typename(torch.ones(2, dtype=torch.int32))
torch.typename(torch.nn.Parameter(torch.ones(1)))
torch.typename(torch.FloatTensor)
torch.typename(3)
torch.typename("a")
torch.typename(len)
torch.typename(np.ones(2))
torch.autograd.Variable(torch.ones(2), requires_grad=True)
t = torch.ones(2) ;; torch.autograd.Variable(t, requires_grad=True).requires_grad
t = torch.ones(2) ;; torch.autograd.Variable(t) is t
t = torch.ones(2) ;; torch.autograd.Variable(t, requires_grad=True).data_ptr() == t.data_ptr()
type(torch.autograd.Variable(torch.ones(2))) is torch.Tensor
torch.autograd.Variable(torch.ones(2)).requires_grad
torch.autograd.Variable(torch.ones(2, requires_grad=True) * 2).grad_fn is None
torch.autograd.Variable(torch.ones(2), volatile=True)
torch.autograd.Variable()
torch.autograd.Variable([1., 2.])
isinstance(torch.ones(2), torch.autograd.Variable)
isinstance(3, torch.autograd.Variable)
x = torch.ones(2, requires_grad=True); x.data.add_(1) ;; (x, x.requires_grad, x._version)
x = torch.ones(2, requires_grad=True) ;; x.data.numpy().tolist()
x = torch.ones(2, requires_grad=True) ;; x.data.requires_grad
x = torch.ones(2, requires_grad=True); x.data = torch.zeros(2) ;; (x, x.requires_grad)
x = torch.ones(2, requires_grad=True); x.data = torch.zeros(3) ;; x.shape
x = torch.ones(2); x.data.mul_(3) ;; x
w = torch.ones(2, requires_grad=True); (w * 3).sum().backward(); w.data -= 0.1 * w.grad.data ;; w
w = torch.ones(2, requires_grad=True); (w * 3).sum().backward(); w.data.sub_(w.grad.data * 0.5) ;; (w, w.grad)
x = torch.ones(2, requires_grad=True) ;; x.detach().numpy().tolist()
x = torch.ones(2, requires_grad=True) ;; x.numpy()
x = torch.ones(2, requires_grad=True); exec("with torch.no_grad():\\n    r = x.numpy().tolist()") ;; r
""")


@pytest.mark.parametrize("setup,expr", CASES, ids=[e for _, e in CASES])
def test_legacy_api_vs_torch(torch, setup, expr):
    # torch's long option dumps and C++ type names are kept; its internal messages (new() overloads) are not
    words = not any(k in expr for k in ("requires_grad=True)", "Variable([", "FloatTensor(2.0)", "new(2.0)"))
    same(torch, setup, expr, words=words)


@pytest.mark.parametrize("name", TYPED)
def test_each_typed_class(torch, name):
    same(torch, "", f"torch.{name}([1, 0, 2])")
    same(torch, "", f"torch.{name}(2, 3).shape")
    same(torch, "", f"[isinstance(torch.zeros(1, dtype=d), torch.{name}) for d in (torch.float32, torch.float64, "
                    "torch.float16, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.bool)]")
    same(torch, "", f"torch.ones(2).type(torch.{name}).type()")
    same(torch, "", f"torch.ones(2).type('torch.{name}').dtype")


def test_classes_print_as_tapegrad_and_cuda_ones_refuse():
    assert repr(tapegrad.FloatTensor) == "<class 'tapegrad.FloatTensor'>"
    assert tapegrad.ones(2).type("tapegrad.DoubleTensor").dtype is tapegrad.float64
    with pytest.raises(TypeError, match="^type torch.cuda.FloatTensor not available. Torch not compiled with CUDA"):
        tapegrad.cuda.FloatTensor(2)        # (torch's CPU build: this TypeError; PyramidNet's padding makes one)
    with pytest.raises(TypeError, match="^type torch.cuda.LongTensor not available"):
        tapegrad.cuda.LongTensor([1])



def test_type_to_a_cuda_class_raises_torchs_words(torch):
    for T in (torch, tapegrad):       # a CPU-only build's words (pytorch-book and L1aoXingyu's Tensor chapters)
        for cuda_type in ("torch.cuda.FloatTensor", T.cuda.LongTensor):
            with pytest.raises(RuntimeError, match="^Cannot initialize CUDA without ATen_cuda library. PyTorch "
                                                   "splits its backend into two shared libraries"):
                T.ones(2).type(cuda_type)
    assert tapegrad._legacy._NO_CUDA_LIBRARY == _raised_by(torch, lambda: torch.ones(2).type(torch.cuda.FloatTensor))


def _raised_by(torch, f):
    try:
        f()
    except RuntimeError as e:
        return str(e)


def test_bfloat16_tensor_is_stored_as_float32():
    """The documented difference: NumPy has no bfloat16, so a BFloat16Tensor holds float32 values."""
    t = tapegrad.BFloat16Tensor([1, 2])
    assert t.tolist() == [1.0, 2.0]


def test_tensor_alias_shares_the_version_counter():
    t = tapegrad.ones(2)
    a = tapegrad.Tensor(t)
    a.add_(1)
    assert t.tolist() == [2.0, 2.0] and t._version == a._version == 1
    v = tapegrad.autograd.Variable(t, requires_grad=True)
    assert np.shares_memory(v.numpy(force=True), t.numpy())


def _shares(lib):
    """pytorch-book's Tensor chapter: a legacy constructor shares an ndarray of its own dtype (a copy otherwise)
    and a storage; from_numpy refuses negative strides."""
    out = []
    for make in (lambda a: lib.Tensor(a), lambda a: lib.FloatTensor(a), lambda a: lib.zeros(1).new(a),
                 lambda a: lib.Tensor(a[:, ::2]), lambda a: lib.DoubleTensor(a)):
        a = np.ones((2, 3), dtype=np.float32)
        b = make(a)
        a[0, 0] = 100.0
        out.append((b.tolist(), b.stride(), str(b.dtype).split(".")[-1]))
    x = lib.arange(6)
    d = lib.LongTensor(x[2:].storage())       # the whole storage, shared
    d[0] = 6666
    out.append((x.tolist(), d.tolist(), d.storage_offset()))
    out.append(lib.IntTensor(lib.arange(3, dtype=lib.int32).untyped_storage()).tolist())
    out.append(x.new(x.storage()).tolist())
    return out


def test_legacy_constructors_share_arrays_and_storages(torch):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # (TypedStorage is deprecated)
        assert _shares(tapegrad) == _shares(torch)
        for lib in (tapegrad, torch):
            with pytest.raises(RuntimeError, match="Expected a Storage of type Float or an UntypedStorage, but "
                                                   "got type Long for argument 1 'storage'"):
                lib.FloatTensor(lib.arange(3).storage())
            with pytest.raises(ValueError, match="At least one stride in the given numpy array is negative"):
                lib.Tensor(np.ones(3, dtype=np.float32)[::-1])
            with pytest.raises(ValueError, match="At least one stride in the given numpy array is negative"):
                lib.from_numpy(np.ones((2, 2))[:, ::-1])
