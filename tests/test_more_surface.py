"""Smaller pieces of torch's API that real programs use, against torch: DLPack exchange, nn.init's deprecated
eye/dirac, the autograd multithreading switch, torch.func's functionalize and replace_all_batch_norm_modules_,
DistributedSampler at utils.data's top level, convert_conv2d/3d_weight_memory_format, resize_ with a memory
format, and a sequence argument (size, shape, dims, repeats) given by its name: ``torch.empty(size=(2, 3))``."""

import numpy as np
import pytest

import tapegrad
from pairs import cases, same

CASES = cases("""
t = torch.arange(4.) ;; np.from_dlpack(t).tolist()
t = torch.arange(4.) ;; torch.from_dlpack(t)
t = torch.arange(4.) ;; torch.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t))
t = torch.ones(2, requires_grad=True) ;; np.from_dlpack(t)
torch.from_dlpack(np.arange(6.).reshape(2, 3)[:, 1])
int(torch.utils.dlpack.DLDeviceType.kDLCPU)
torch.arange(3.).__dlpack_device__()[1]
w = torch.empty(3, 3) ;; torch.nn.init.eye(w)
torch.autograd.is_multithreading_enabled()
exec("with torch.autograd.set_multithreading_enabled(False): r = torch.autograd.is_multithreading_enabled()") or r
f = torch.func.functionalize(lambda x: x.add_(1) * 2) ;; a = torch.zeros(2) ;; [f(a), a]
torch.func.functionalize(lambda x: x, remove="nothing")
m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 1), torch.nn.BatchNorm2d(4)) ;; torch.func.replace_all_batch_norm_modules_(m) ;; [m[1].running_mean is None, m[1].running_var is None, m[1].track_running_stats]
len(list(torch.utils.data.DistributedSampler(list(range(10)), num_replicas=2, rank=0, shuffle=False)))
m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 2), torch.nn.ConvTranspose2d(4, 2, 2), torch.nn.Linear(3, 3)) ;; torch.nn.utils.convert_conv2d_weight_memory_format(m, torch.channels_last) ;; [m[0].weight.stride(), m[1].weight.stride(), m[2].weight.stride()]
m = torch.nn.Conv3d(2, 3, 2) ;; torch.nn.utils.convert_conv3d_weight_memory_format(m, torch.channels_last_3d) ;; m.weight.stride()
x = torch.arange(24.).reshape(2, 3, 2, 2) ;; x.resize_(2, 3, 2, 2, memory_format=torch.channels_last).stride()
x = torch.arange(24.).reshape(2, 3, 2, 2) ;; x.resize_(2, 3, 2, 2, memory_format=torch.channels_last)
x = torch.arange(6.) ;; x.resize_(2, 3)
x = torch.arange(6.) ;; x.resize_(2, 3, memory_format=torch.channels_last)
x = torch.arange(24.).reshape(2, 3, 2, 2).contiguous(memory_format=torch.channels_last) ;; x.resize_(2, 3, 2, 2)
x = torch.arange(24.).reshape(2, 3, 2, 2).contiguous(memory_format=torch.channels_last) ;; x.resize_(2, 3, 2, 2, memory_format=torch.contiguous_format)
""")


@pytest.mark.parametrize("setup,expr", CASES, ids=[e[:60] for _, e in CASES])
def test_surface_vs_torch(torch, setup, expr):
    same(torch, setup.replace(" ;; ", "\n"), expr)


# torch's parser takes the sequence argument of f(*size) by its name too (gat's torch.empty(size=(n, m)))
KEYWORD_SIZES = cases("""
torch.empty(size=(2, 3)).shape
torch.empty(size=[2]).shape
torch.empty(size=()).shape
torch.zeros(size=(2,), dtype=torch.int32)
torch.ones(size=torch.Size([2, 1]))
torch.rand(size=(2, 3)).shape
torch.randn(size=[2]).dtype
torch.ones(2, size=(3,))
torch.zeros((2, 3), size=(3,))
torch.zeros(size=3)
torch.rand(size=2)
x = torch.ones(2) ;; x.new_zeros(size=(2, 3))
x = torch.ones(2) ;; x.new_ones(size=(1,), dtype=torch.int64)
x = torch.ones(2) ;; x.new_empty(size=(2, 3)).shape
x = torch.ones(2) ;; x.new_zeros(size=3)
x = torch.ones(2) ;; x.new_empty((2,), size=(3,))
x = torch.ones(2, 3) ;; x.view(size=(3, 2))
x = torch.ones(2, 3) ;; x.view(dtype=torch.int32)
x = torch.ones(2, 3) ;; x.reshape(shape=(6,))
x = torch.ones(2, 3) ;; torch.reshape(x, shape=(3, 2))
x = torch.ones(2, 3) ;; x.reshape(shape=6)
x = torch.ones(2, 3) ;; x.expand(size=(2, 2, 3))
x = torch.ones(2, 3) ;; x.expand(size=(2, 3), implicit=False)
x = torch.ones(1) ;; x.broadcast_to(3)
torch._assert_async(torch.tensor(True))
torch._assert_async(torch.tensor(1.5))
torch._assert_async(torch.tensor(False))
torch._assert_async(torch.tensor(0), "value must be positive")
torch._assert_async(torch.tensor([True, True]))
torch._assert_async(torch.tensor([]))
torch._assert_async(True)
torch._assert(True, "fine")
torch._assert(torch.tensor(0.0), "plain assert")
x = torch.ones(1) ;; x.broadcast_to(2, 3)
x = torch.ones(1) ;; x.broadcast_to((2, 3))
x = torch.ones(1) ;; x.broadcast_to(size=(2, 3))
x = torch.ones(1) ;; x.broadcast_to(size=3)
x = torch.ones(1) ;; x.broadcast_to(torch.tensor(2))
x = torch.ones(1) ;; torch.broadcast_to(x, 3)
x = torch.ones(1) ;; torch.broadcast_to(x, size=[2, 3])
x = torch.ones(2, 3) ;; x.permute(dims=(1, 0))
x = torch.ones(2, 3) ;; torch.permute(x, dims=(1, 0))
x = torch.ones(2, 3) ;; x.permute(dims=1)
x = torch.ones(2, 3) ;; x.repeat(repeats=(1, 2))
x = torch.ones(2, 3) ;; x.repeat(repeats=2)
x = torch.ones(2, 3) ;; x.resize_(size=(3,))
x = torch.ones(2, 3) ;; x.sum_to_size(size=(1, 3))
""")
# (torch's overload parser words these in terms of its signatures: the class of the error is compared)
KEYWORD_SIZES_CLASS_ONLY = cases("""
x = torch.ones(2, 3) ;; x.view(size=6)
x = torch.ones(2, 3) ;; x.view(3, size=(2,))
x = torch.ones(2, 3) ;; x.view(foo=(3, 2))
""")


@pytest.mark.parametrize("setup,expr", KEYWORD_SIZES, ids=[e[:60] for _, e in KEYWORD_SIZES])
def test_sequence_arguments_by_name_vs_torch(torch, setup, expr):
    same(torch, setup.replace(" ;; ", "\n"), expr)


@pytest.mark.parametrize("setup,expr", KEYWORD_SIZES_CLASS_ONLY, ids=[e[:60] for _, e in KEYWORD_SIZES_CLASS_ONLY])
def test_sequence_arguments_by_name_errors_vs_torch(torch, setup, expr):
    same(torch, setup.replace(" ;; ", "\n"), expr, words=False)


def test_dlpack_shares_memory():
    t = tapegrad.zeros(3)
    a = np.from_dlpack(t)
    a[1] = 5
    assert t.tolist() == [0.0, 5.0, 0.0]


def test_deprecated_init_aliases_warn():
    with pytest.warns(FutureWarning, match="nn.init.dirac_"):
        tapegrad.nn.init.dirac(tapegrad.empty(2, 2, 3))


def test_resize_to_the_same_size_changes_nothing(torch):
    # torch: no version bump, and an inference tensor may be "resized" to its own size outside inference mode
    for T in (torch, tapegrad):
        x = T.ones(3)
        v = x._version
        x.resize_(3)
        assert x._version == v
        x.resize_(4)
        assert x._version == v + 1
        with T.inference_mode():
            i = T.ones(3)
        i.resize_(3)
        with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
            i.resize_(4)
