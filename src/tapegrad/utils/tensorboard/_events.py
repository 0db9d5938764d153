"""TensorBoard's event files, written without TensorBoard: the protocol-buffer messages it reads (encoded by hand:
only the fields used here) in TFRecord framing (length, masked CRC-32C of the length, data, masked CRC-32C of the
data). Field numbers follow tensorboard's ``event.proto``, ``summary.proto``, ``tensor.proto`` and
``graph.proto``."""

from __future__ import annotations

import struct

__all__ = ["event", "summary_value", "histogram", "image", "text_tensor", "plugin_metadata", "graph_def",
           "node_def", "record"]


# --- protocol-buffer encoding -------------------------------------------------------------------------------
def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1                  # (negative int64s as their two's complement, as protobuf does)
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint(field << 3 | wire)


def f_varint(field, n):
    return _key(field, 0) + _varint(int(n))


def f_double(field, x):
    return _key(field, 1) + struct.pack("<d", float(x))


def f_float(field, x):
    return _key(field, 5) + struct.pack("<f", float(x))


def f_bytes(field, b):
    if isinstance(b, str):
        b = b.encode("utf-8")
    return _key(field, 2) + _varint(len(b)) + b


def f_packed_doubles(field, xs):
    return f_bytes(field, struct.pack(f"<{len(xs)}d", *map(float, xs)))


# --- messages -----------------------------------------------------------------------------------------------
def event(wall_time, step=None, *, file_version=None, summary_values=None, graph=None, source_writer=None) -> bytes:
    """An ``Event``: wall_time (1), step (2), file_version (3), graph_def (4), summary (5) of values (1),
    source_metadata (10) = SourceMetadata{writer (1)}."""
    out = f_double(1, wall_time)
    if step is not None:
        out += f_varint(2, step)
    if file_version is not None:
        out += f_bytes(3, file_version)
    if graph is not None:
        out += f_bytes(4, graph)
    if summary_values is not None:
        out += f_bytes(5, b"".join(f_bytes(1, v) for v in summary_values))
    if source_writer is not None:
        out += f_bytes(10, f_bytes(1, source_writer))
    return out


def plugin_metadata(plugin_name, content=b"") -> bytes:
    """``SummaryMetadata``: plugin_data (1) = PluginData{plugin_name (1), content (2)}."""
    return f_bytes(1, f_bytes(1, plugin_name) + (f_bytes(2, content) if content else b""))


def summary_value(tag, *, simple_value=None, image=None, histo=None, tensor=None, metadata=None) -> bytes:
    """``Summary.Value``: tag (1), simple_value (2), image (4), histo (5), tensor (8), metadata (9)."""
    out = f_bytes(1, tag)
    if simple_value is not None:
        out += f_float(2, simple_value)
    if image is not None:
        out += f_bytes(4, image)
    if histo is not None:
        out += f_bytes(5, histo)
    if tensor is not None:
        out += f_bytes(8, tensor)
    if metadata is not None:
        out += f_bytes(9, metadata)
    return out


def histogram(mn, mx, num, total, sum_squares, bucket_limit, bucket) -> bytes:
    """``HistogramProto``: min, max, num, sum, sum_squares (1-5), bucket_limit (6), bucket (7), packed."""
    return (f_double(1, mn) + f_double(2, mx) + f_double(3, num) + f_double(4, total) + f_double(5, sum_squares)
            + f_packed_doubles(6, bucket_limit) + f_packed_doubles(7, bucket))


def image(height, width, colorspace, png) -> bytes:
    """``Summary.Image``: height (1), width (2), colorspace (3), encoded_image_string (4)."""
    return f_varint(1, height) + f_varint(2, width) + f_varint(3, colorspace) + f_bytes(4, png)


def text_tensor(text) -> bytes:
    """A ``TensorProto`` of one string: dtype DT_STRING (1: 7), tensor_shape (2) with one dim of size 1,
    string_val (8)."""
    shape = f_bytes(2, f_varint(1, 1))             # TensorShapeProto.dim (2) = Dim{size (1)}
    return f_varint(1, 7) + f_bytes(2, shape) + f_bytes(8, text)


def node_def(name, op, inputs=(), attrs=None) -> bytes:
    """``NodeDef``: name (1), op (2), input (3, repeated), attr (5: map<string, AttrValue{s (2)}>)."""
    out = f_bytes(1, name) + f_bytes(2, op) + b"".join(f_bytes(3, i) for i in inputs)
    for k, v in (attrs or {}).items():
        out += f_bytes(5, f_bytes(1, k) + f_bytes(2, f_bytes(2, v)))
    return out


def graph_def(nodes) -> bytes:
    """``GraphDef``: node (1, repeated), versions (4: VersionDef{producer (1) 22})."""
    return b"".join(f_bytes(1, n) for n in nodes) + f_bytes(4, f_varint(1, 22))


# --- TFRecord framing ---------------------------------------------------------------------------------------
def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), as TFRecord uses it."""
    crc = 0xFFFFFFFF
    t = _TABLE
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _masked(data: bytes) -> bytes:
    crc = crc32c(data)
    return struct.pack("<I", (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF)


def record(data: bytes) -> bytes:
    """One TFRecord: the length (little-endian uint64) and its masked CRC, the data and its masked CRC."""
    n = struct.pack("<Q", len(data))
    return n + _masked(n) + data + _masked(data)
