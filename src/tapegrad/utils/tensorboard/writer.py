"""``SummaryWriter``: TensorBoard logs from tapegrad, with no TensorBoard (or protobuf) package needed to write them.

The files are TensorBoard's own event files (``_events.py`` encodes the messages), so ``tensorboard --logdir
runs`` shows them. Written: scalars (``add_scalar``, ``add_scalars``), histograms, images (PNG, encoded with
``zlib``), text, matplotlib figures, the autograd graph of a model's output (``add_graph``: tapegrad's nodes,
``AddmmBackward0`` ... with the parameters as inputs, where torch shows its traced forward ops), and
``purge_step``, and embeddings for the projector (``add_embedding``: its tsv, sprite and config files). The other
``add_*`` methods of torch's writer (PR curves, audio, video, meshes, hparams, custom scalars) raise
``NotImplementedError``.
"""

from __future__ import annotations

import io
import itertools
import math
import os
import socket
import struct
import time
import weakref
import zlib
from datetime import datetime

import numpy as np

from . import _events as ev

__all__ = ["SummaryWriter", "FileWriter"]

_uid = itertools.count()


def _array(x):
    from ...tensor import Tensor
    if isinstance(x, Tensor):
        return x.detach().numpy()
    return np.asarray(x)


class FileWriter:
    """One event file in ``log_dir`` (records appended, flushed every ``max_queue`` events or ``flush_secs``)."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        os.makedirs(log_dir, exist_ok=True)
        self.log_dir = str(log_dir)
        name = (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}.{os.getpid()}."
                f"{next(_uid)}{filename_suffix}")
        self.path = os.path.join(self.log_dir, name)
        self._f = open(self.path, "wb")  # noqa: SIM115   (closed by close() or the finalizer)
        self._close = weakref.finalize(self, self._f.close)
        self.max_queue, self.flush_secs = max_queue, flush_secs
        self._pending, self._last = 0, time.time()
        # the first event names its writer as torch's does (TensorBoard shows where a run's data came from)
        self.add_event(ev.event(time.time(), file_version="brain.Event:2",
                                source_writer="tensorboard.summary.writer.event_file_writer"))

    def add_event(self, data: bytes):
        self._f.write(ev.record(data))
        self._pending += 1
        if self._pending >= self.max_queue or time.time() - self._last >= self.flush_secs:
            self.flush()

    def flush(self):
        if not self._f.closed:
            self._f.flush()
        self._pending, self._last = 0, time.time()

    def close(self):
        if not self._f.closed:
            self._f.flush()
        self._close()

    def get_logdir(self):
        return self.log_dir


# --- summaries ----------------------------------------------------------------------------------------------
def _default_bins():
    """TensorFlow's histogram bucket edges: +-1e-12 growing by 10% to 1e20, and 0."""
    v, pos = 1e-12, []
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-x for x in reversed(pos)] + [0.0] + pos


def _histogram(values, bins, max_bins):
    values = _array(values).astype(np.float64).reshape(-1)
    if values.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    counts, limits = np.histogram(values, bins=_default_bins() if bins == "tensorflow" else bins)
    if max_bins is not None and len(counts) > max_bins:
        sub = len(counts) // max_bins
        pad = (-len(counts)) % sub
        counts = np.pad(counts, (0, pad)).reshape(-1, sub).sum(-1)
        limits = np.concatenate([limits[:-1:sub], limits[-1:]])
    # keep the buckets from the first to the last non-empty one (and one empty bucket before)
    nonzero = np.flatnonzero(counts)
    if nonzero.size:
        start, end = int(nonzero[0]), int(nonzero[-1]) + 1
        counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
        limits = limits[start:end + 1]
    return ev.histogram(values.min(), values.max(), values.size, values.sum(), values.dot(values),
                        limits.tolist(), counts.astype(np.float64).tolist())


def _encode_tag(tag):
    """A tag as a folder name: ``%`` ``/`` ``\\`` written as ``%25`` ``%2f`` ``%5c`` (torch's escaping)."""
    return tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")


def _png(img):
    """``img`` (H, W, C) uint8, C in 1, 3, 4 -> PNG bytes."""
    h, w, c = img.shape
    kind = {1: 0, 3: 2, 4: 6}[c]

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + img[i].tobytes() for i in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, kind, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b""))


def _to_hwc(a, dataformats):
    fmt = dataformats.upper()
    if len(fmt) != a.ndim or sorted(fmt) != sorted(set(fmt)):
        raise ValueError(f"dataformats {dataformats!r} does not fit an image of shape {a.shape}")
    if "N" in fmt:
        a = _grid(a.transpose([fmt.index(d) for d in "NCHW"]))
        fmt = "CHW"
    if fmt == "HW":
        return a[:, :, None]
    if fmt == "CHW":
        return a.transpose(1, 2, 0)
    if fmt == "HWC":
        return a
    raise ValueError(f"dataformats must be one of HW, CHW, HWC, NCHW, NHWC; got {dataformats!r}")


def _grid(a, ncols=8):
    """Images (N, C, H, W) tiled into one (3, H * rows, W * cols) canvas (gray made RGB), as torch's writer."""
    if a.shape[1] == 1:
        a = np.concatenate([a, a, a], 1)
    n, _, h, w = a.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    canvas = np.zeros((a.shape[1], h * nrows, w * ncols), a.dtype)
    for i in range(n):
        r, c = divmod(i, ncols)
        canvas[:, r * h:(r + 1) * h, c * w:(c + 1) * w] = a[i]
    return canvas


def _image(img, dataformats):
    a = _array(img)
    scale = 1 if a.dtype == np.uint8 else 255
    a = _to_hwc(a, dataformats)
    a = np.clip(a.astype(np.float32) * scale, 0, 255).astype(np.uint8)
    h, w, c = a.shape
    if c not in (1, 3, 4):
        raise ValueError(f"an image needs 1, 3 or 4 channels; got {c}")
    return ev.image(h, w, c, _png(np.ascontiguousarray(a)))


def _png_size(png):
    return struct.unpack(">II", png[16:24])     # (IHDR's width and height)


class SummaryWriter:
    """torch.utils.tensorboard.SummaryWriter: ``writer.add_scalar("loss", loss.item(), step)`` ... ``close()``.

    ``log_dir`` defaults to ``runs/<Mon05_14-30-00>_<host><comment>`` as torch's.
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if not log_dir:
            log_dir = os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname()
                                   + comment)
        self.log_dir = str(log_dir)
        self.purge_step, self.max_queue, self.flush_secs = purge_step, max_queue, flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = FileWriter(self.log_dir, max_queue, flush_secs, filename_suffix)
        self.all_writers = {self.log_dir: self.file_writer}
        self._projector = []      # projector_config.pbtxt's entries (add_embedding rewrites the file each time)
        if purge_step is not None:
            # a SessionLog START at purge_step: TensorBoard drops the events after it from earlier runs
            self.file_writer.add_event(ev.event(time.time(), purge_step) + ev.f_bytes(6, ev.f_varint(1, 1)))

    def get_logdir(self):
        return self.log_dir

    def _add(self, values, global_step, walltime, writer=None):
        (writer or self.file_writer).add_event(ev.event(time.time() if walltime is None else walltime,
                                                        global_step, summary_values=values))

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """One point of the curve ``tag``."""
        value = float(_array(scalar_value).reshape(-1)[0]) if not isinstance(scalar_value, (int, float)) \
            else float(scalar_value)
        self._add([ev.summary_value(tag, simple_value=value)], global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Several curves in one chart: each key is written to its own run, ``<log_dir>/<main_tag>_<key>``."""
        walltime = time.time() if walltime is None else walltime
        for tag, value in tag_scalar_dict.items():
            path = os.path.join(self.log_dir, main_tag.replace("/", "_") + "_" + tag)
            w = self.all_writers.get(path)
            if w is None:
                w = self.all_writers[path] = FileWriter(path, self.max_queue, self.flush_secs, self.filename_suffix)
            v = float(_array(value).reshape(-1)[0])
            self._add([ev.summary_value(main_tag, simple_value=v)], global_step, walltime, w)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        self._add([ev.summary_value(tag, histo=_histogram(values, bins, max_bins))], global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """An image (float values in [0, 1], or uint8), ``dataformats`` CHW, HWC or HW."""
        self._add([ev.summary_value(tag, image=_image(img_tensor, dataformats))], global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch of images, tiled into one grid (8 per row)."""
        self._add([ev.summary_value(tag, image=_image(img_tensor, dataformats))], global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """A matplotlib figure (or a list of them), rendered to PNG."""
        import matplotlib.pyplot as plt
        figs = figure if isinstance(figure, list) else [figure]
        for fig in figs:
            buf = io.BytesIO()
            fig.savefig(buf, format="png")
            png = buf.getvalue()
            w, h = _png_size(png)
            self._add([ev.summary_value(tag, image=ev.image(h, w, 4, png))], global_step, walltime)
            if close:
                plt.close(fig)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Markdown text, shown in TensorBoard's Text tab."""
        self._add([ev.summary_value(tag + "/text_summary", tensor=ev.text_tensor(text_string),
                                    metadata=ev.plugin_metadata("text"))], global_step, walltime)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """The autograd graph of ``model(*input_to_model)``: one node per backward node, the parameters (their
        ``AccumulateGrad`` nodes) named as in ``named_parameters``. Shown in TensorBoard's Graphs tab."""
        from ...autograd.grad_mode import enable_grad
        args = input_to_model if isinstance(input_to_model, (tuple, list)) else (input_to_model,)
        with enable_grad():
            out = model(*args) if input_to_model is not None else model()
        outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if getattr(o, "grad_fn", None)]
        names = {id(p): n for n, p in model.named_parameters()} if hasattr(model, "named_parameters") else {}
        node_name, nodes, seen, order = {}, [], set(), []
        stack = [o.grad_fn for o in outs]
        while stack:
            n = stack.pop()
            if n is None or id(n) in seen:
                continue
            seen.add(id(n))
            order.append(n)
            stack.extend(nxt for nxt, _ in n.next_functions)
        for k, n in enumerate(order):
            var = getattr(n, "variable", None)
            if var is not None and id(var) in names:
                node_name[id(n)] = names[id(var)].replace(".", "/")
            else:
                node_name[id(n)] = f"{n.name()}_{k}"
        for n in reversed(order):
            var = getattr(n, "variable", None)
            attrs = {"shape": str(tuple(var.shape))} if var is not None else None
            ins = [node_name[id(nxt)] for nxt, _ in n.next_functions if nxt is not None]
            nodes.append(ev.node_def(node_name[id(n)], "Parameter" if var is not None else n.name(), ins, attrs))
        self.file_writer.add_event(ev.event(time.time(), graph=ev.graph_def(nodes)))

    def _unsupported(self, what):
        raise NotImplementedError(f"SummaryWriter.{what}: not written by tapegrad's writer (it writes scalars, "
                                  "histograms, images, figures, text, embeddings and the autograd graph)")

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        """The projector's files, as torch writes them: ``<step:05d>/<tag>/`` in the log dir holds
        ``tensors.tsv`` (one row of ``mat`` a line), ``metadata.tsv`` and ``sprite.png`` (the label images tiled
        in a square), and ``projector_config.pbtxt`` lists every embedding added so far."""
        mat = _array(mat)
        step = 0 if global_step is None else global_step
        subdir = f"{str(step).zfill(5)}/{_encode_tag(tag)}"
        save_path = os.path.join(self.get_logdir(), subdir)
        if os.path.exists(save_path):
            if not os.path.isdir(save_path):
                raise NotADirectoryError(f"Path: `{save_path}` exists, but is a file. Cannot proceed.")
            print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
        else:
            os.makedirs(save_path)
        lines = []
        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            if not metadata_header:
                rows = [str(x) for x in metadata]
            else:
                if len(metadata_header) != len(metadata[0]):
                    raise AssertionError("len of header must be equal to the number of columns in metadata")
                rows = ["\t".join(str(e) for e in row) for row in [metadata_header] + list(metadata)]
            with open(os.path.join(save_path, "metadata.tsv"), "wb") as f:
                f.write(("\n".join(rows) + "\n").encode())
            lines.append(f'  metadata_path: "{subdir}/metadata.tsv"')
        if label_img is not None:
            imgs = _array(label_img)
            if mat.shape[0] != imgs.shape[0]:
                raise AssertionError("#images should equal with #data points")
            grid = _grid(imgs, ncols=math.ceil(imgs.shape[0] ** 0.5))     # (3, H', W'), then made square
            square = np.zeros((grid.shape[2], grid.shape[2], 3))
            square[:grid.shape[1]] = grid.transpose(1, 2, 0)
            with open(os.path.join(save_path, "sprite.png"), "wb") as f:
                f.write(_png(np.uint8((square * 255).clip(0, 255))))
            lines += ["  sprite {", f'    image_path: "{subdir}/sprite.png"',
                      f"    single_image_dim: {imgs.shape[3]}", f"    single_image_dim: {imgs.shape[2]}", "  }"]
        if mat.ndim != 2:
            raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
        with open(os.path.join(save_path, "tensors.tsv"), "wb") as f:
            for row in mat:
                f.write(("\t".join(str(v.item()) for v in row) + "\n").encode())
        # (protobuf's text format: EmbeddingInfo's fields in their number order, tensor_path (8) last)
        entry = ["embeddings {", f'  tensor_name: "{tag}:{str(step).zfill(5)}"'] + lines + [
            f'  tensor_path: "{subdir}/tensors.tsv"', "}"]
        self._projector.append("\n".join(entry) + "\n")
        with open(os.path.join(self.get_logdir(), "projector_config.pbtxt"), "wb") as f:
            f.write("".join(self._projector).encode())

    def add_pr_curve(self, *args, **kwargs):
        self._unsupported("add_pr_curve")

    def add_audio(self, *args, **kwargs):
        self._unsupported("add_audio")

    def add_video(self, *args, **kwargs):
        self._unsupported("add_video")

    def add_mesh(self, *args, **kwargs):
        self._unsupported("add_mesh")

    def add_hparams(self, *args, **kwargs):
        self._unsupported("add_hparams")

    def add_custom_scalars(self, *args, **kwargs):
        self._unsupported("add_custom_scalars")

    def flush(self):
        for w in self.all_writers.values():
            w.flush()

    def close(self):
        for w in self.all_writers.values():
            w.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
