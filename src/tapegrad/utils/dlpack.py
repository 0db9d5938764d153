"""``tapegrad.utils.dlpack``: tensors shared with other array libraries through DLPack (torch.utils.dlpack)."""

from __future__ import annotations

import enum

from .._api_funcs import from_dlpack, to_dlpack

__all__ = ["from_dlpack", "to_dlpack", "DLDeviceType"]


class DLDeviceType(enum.IntEnum):
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17
