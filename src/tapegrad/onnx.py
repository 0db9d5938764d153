"""``tapegrad.onnx``: the names of ``torch.onnx`` that programs use outside an export, so that they import and run.

Model code asks ``is_in_onnx_export()`` to pick an export-friendly branch: it is False, as on torch outside an
export. There is no ONNX exporter in tapegrad (it would need a graph of ONNX operators and the ``onnx`` package):
``export`` raises ``OnnxExporterError``, which says so and names the way that works (export with PyTorch itself,
loading the weights from ``torch.save`` of the ``state_dict``).
"""

from __future__ import annotations

__all__ = ["export", "is_in_onnx_export", "OnnxExporterError"]


class OnnxExporterError(RuntimeError):
    """torch.onnx.OnnxExporterError: the export failed."""


def is_in_onnx_export() -> bool:
    """False: tapegrad never runs a model inside an ONNX export."""
    return False


def export(model, args=(), f=None, **kwargs):
    """Not possible in tapegrad: raises ``OnnxExporterError``."""
    raise OnnxExporterError("tapegrad cannot export to ONNX (it has no ONNX exporter): save the state_dict with "
                            "torch.save and export the model with PyTorch")
