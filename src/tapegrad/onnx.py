"""``tapegrad.onnx``: the part of torch.onnx that model code and training scripts touch, so they import and run.

There is no ONNX exporter in tapegrad (it would need a graph of the model in ONNX's operator set and the ``onnx``
protocol buffers): ``export`` raises ``OnnxExporterError`` naming what to do instead. ``is_in_onnx_export()`` is
False, as it is in torch outside an export; model code asks it to choose an export-friendly path.
"""

from __future__ import annotations

__all__ = ["export", "is_in_onnx_export", "OnnxExporterError"]


class OnnxExporterError(RuntimeError):
    """torch.onnx.OnnxExporterError: an export failed."""


def is_in_onnx_export() -> bool:
    """Whether an ONNX export is running: never in tapegrad."""
    return False


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None, output_names=None,
           opset_version=None, dynamo=True, external_data=True, dynamic_shapes=None, custom_translation_table=None,
           report=False, optimize=True, verify=False, profile=False, dump_exported_program=False,
           artifacts_dir=".", export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None,
           training=None, operator_export_type=None, do_constant_folding=True, custom_opsets=None,
           export_modules_as_functions=False, autograd_inlining=True):
    """torch.onnx.export's signature; tapegrad cannot write ONNX, so it raises ``OnnxExporterError``."""
    raise OnnxExporterError(
        "tapegrad has no ONNX exporter: save the model's state_dict() with torch.save, load it into the same "
        "model under PyTorch and call torch.onnx.export there")
