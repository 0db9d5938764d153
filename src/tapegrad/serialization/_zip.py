"""The zip container of both checkpoint formats: read within bounds, written aligned.

Reading trusts nothing in the archive: the central directory is parsed by ``zipfile`` (from the file, so its size
is bounded by the file's), every entry's data must lie inside the file, an uncompressed entry is read straight
into the array that keeps it (no second copy), a deflated one is inflated in chunks and stops the moment it
passes its declared size, and no entry may declare more than ``MAX_DEFLATE_RATIO`` times its compressed size (a
zip bomb is refused before a byte is inflated). Entries are stored uncompressed by ``save`` (as by
``torch.save``), so the ratio only bounds archives that someone re-compressed.

Writing stores every entry uncompressed with its data aligned to 64 bytes (a padding extra field, as torch
writes it), so that a checkpoint can be memory-mapped; zip64 records are added where sizes or offsets need them.
"""

from __future__ import annotations

import struct
import zipfile
import zlib

import numpy as np

__all__ = ["ZipReader", "ZipWriter", "MAX_DEFLATE_RATIO"]

#: the most a deflated entry may expand (bytes out per byte in); zlib's own limit is about 1032
MAX_DEFLATE_RATIO = 100
_SLACK = 1 << 16          # tiny entries (headers, JSON) may expand more than the ratio says
_CHUNK = 16 << 20
_LOCAL = struct.Struct("<4sHHHHHIIIHH")
_LOCAL_SIG = b"PK\x03\x04"
ALIGN = 64


class ZipReader:
    """The entries of the zip archive in ``source`` (a ``_common.Source``), each read at most once."""

    def __init__(self, source):
        self.source = source
        try:
            source.fh.seek(source.start)
            infos = zipfile.ZipFile(source.fh).infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, struct.error) as e:
            raise source.error(f"not a readable checkpoint (a damaged zip archive: {e}); the file may be "
                               "truncated or corrupted") from None
        self.infos = {}
        for info in infos:
            if info.filename in self.infos:
                raise source.error(f"corrupted zip archive: the entry {info.filename!r} appears twice")
            self.infos[info.filename] = info
        self.names = [i.filename for i in infos]
        self._located = set()
        self._compressed = 0

    def __contains__(self, name):
        return name in self.infos

    def locate(self, name):
        """(data offset, info) of entry ``name``, checked to lie inside the file (and not to overlap others)."""
        info = self.infos.get(name)
        if info is None:
            raise self.source.error(f"the entry {name!r} is missing from the archive (the file is truncated or "
                                    "was modified after it was saved)")
        header = self.source.read_at(info.header_offset, _LOCAL.size)
        sig, *_, name_len, extra_len = _LOCAL.unpack(header)
        if sig != _LOCAL_SIG:
            raise self.source.error(f"corrupted zip archive: no local header for {name!r} at offset "
                                    f"{info.header_offset}")
        local_name = self.source.read_at(info.header_offset + _LOCAL.size, name_len)
        if local_name != info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437"):
            raise self.source.error(f"corrupted zip archive: the entry {name!r} points at the local header of "
                                    f"{local_name.decode('latin-1')!r}")
        offset = info.header_offset + _LOCAL.size + name_len + extra_len
        if offset + info.compress_size > self.source.size:
            raise self.source.error(f"truncated or corrupted: the entry {name!r} declares {info.compress_size} "
                                    f"bytes at offset {offset}, but the file has only {self.source.size} bytes")
        if info.compress_type == zipfile.ZIP_STORED:
            if info.file_size != info.compress_size:
                raise self.source.error(f"corrupted zip archive: the stored entry {name!r} declares "
                                        f"{info.file_size} bytes but holds {info.compress_size}")
        elif info.compress_type == zipfile.ZIP_DEFLATED:
            if info.file_size > MAX_DEFLATE_RATIO * info.compress_size + _SLACK:
                raise self.source.error(
                    f"the entry {name!r} declares {info.file_size} bytes from {info.compress_size} compressed "
                    f"bytes (more than {MAX_DEFLATE_RATIO} times): refused as a likely zip bomb (raise "
                    "tapegrad.serialization._zip.MAX_DEFLATE_RATIO if you trust this file)")
        else:
            raise self.source.error(f"the entry {name!r} uses zip compression method {info.compress_type}; "
                                    "only stored and deflated entries are read")
        if name not in self._located:
            self._located.add(name)
            self._compressed += info.compress_size
            if self._compressed > self.source.size:
                raise self.source.error("corrupted zip archive: its entries overlap (they declare more data than "
                                        "the file holds)")
        return offset, info

    def check_crc(self, name, info, parts):
        crc = 0
        for p in parts:
            for pos in range(0, len(p), _CHUNK):
                crc = zlib.crc32(p[pos:pos + _CHUNK], crc)
        if crc != info.CRC:
            raise self.source.error(f"corrupted: the entry {name!r} fails its CRC check (the file was damaged "
                                    "or modified)")

    def read(self, name, limit=None):
        """The bytes of entry ``name`` as a fresh uint8 array (a small entry when ``limit`` is given)."""
        offset, info = self.locate(name)
        if limit is not None and info.file_size > limit:
            raise self.source.error(f"corrupted: the entry {name!r} declares {info.file_size} bytes, more than "
                                    f"the {limit} such an entry can have")
        out = np.empty(info.file_size, np.uint8)
        view = memoryview(out)
        if info.compress_type == zipfile.ZIP_STORED:
            self.source.readinto_at(offset, view)
            self.check_crc(name, info, [view])
        else:
            self._inflate(name, offset, info, view)
        return out

    def _inflate(self, name, offset, info, view):
        d = zlib.decompressobj(-15)
        pos, crc, left, at = 0, 0, info.compress_size, offset
        try:
            while left or d.unconsumed_tail:
                buf = d.unconsumed_tail
                if not buf:
                    n = min(left, 1 << 20)
                    buf = self.source.read_at(at, n)
                    at += n
                    left -= n
                room = info.file_size - pos
                out = d.decompress(buf, min(room + 1, _CHUNK))
                if len(out) > room:
                    raise self.source.error(f"the entry {name!r} expands past its declared {info.file_size} "
                                            "bytes: refused (a corrupted file or a zip bomb)")
                view[pos:pos + len(out)] = out
                crc = zlib.crc32(out, crc)
                pos += len(out)
                if d.eof:
                    break
        except zlib.error as e:
            raise self.source.error(f"corrupted: the entry {name!r} does not inflate ({e})") from None
        if pos != info.file_size or not d.eof:
            raise self.source.error(f"truncated or corrupted: the entry {name!r} inflates to {pos} bytes, not "
                                    f"the {info.file_size} it declares")
        if crc != info.CRC:
            raise self.source.error(f"corrupted: the entry {name!r} fails its CRC check (the file was damaged "
                                    "or modified)")

    def map(self, name, mm):
        """Entry ``name`` as a uint8 array over the memory map ``mm`` of the whole file (no copy)."""
        offset, info = self.locate(name)
        if info.compress_type != zipfile.ZIP_STORED:
            raise self.source.error(f"mmap=True cannot map the entry {name!r}: it is compressed (load without "
                                    "mmap, or save the file again: save stores entries uncompressed)")
        return np.frombuffer(mm, np.uint8, count=info.file_size, offset=offset)


class ZipWriter:
    """Writes a zip archive to ``fh`` sequentially (no seeking, so pipes work): stored entries, data aligned."""

    def __init__(self, fh):
        self.fh, self.pos, self.entries = fh, 0, []

    def _write(self, data):
        self.fh.write(data)
        self.pos += len(data)

    def add(self, name, parts):
        """Add entry ``name`` holding the concatenation of ``parts`` (bytes or uint8 memoryviews)."""
        parts = [p if isinstance(p, bytes) else memoryview(p).cast("B") for p in parts]
        size = sum(len(p) for p in parts)
        crc = 0
        for p in parts:
            for pos in range(0, len(p), _CHUNK):
                crc = zlib.crc32(p[pos:pos + _CHUNK], crc)
        name_b = name.encode("utf-8")
        zip64 = size >= 0xFFFFFFFF
        extra = struct.pack("<HHQQ", 1, 16, size, size) if zip64 else b""
        pad = -(self.pos + _LOCAL.size + len(name_b) + len(extra) + 4) % ALIGN
        extra += struct.pack("<HH", 0x4246, pad) + b"Z" * pad       # "FB" padding record, as torch's writer
        small = 0xFFFFFFFF if zip64 else size
        header = _LOCAL.pack(_LOCAL_SIG, 45 if zip64 else 20, 0x0800, 0, 0, 0x21, crc, small, small,
                             len(name_b), len(extra))
        self.entries.append((name_b, crc, size, self.pos))
        self._write(header + name_b + extra)
        for p in parts:
            self._write(p)

    def close(self):
        cd_start = self.pos
        for name_b, crc, size, offset in self.entries:
            fields = []
            if size >= 0xFFFFFFFF:
                fields += [size, size]
            if offset >= 0xFFFFFFFF:
                fields.append(offset)
            extra = struct.pack(f"<HH{len(fields)}Q", 1, 8 * len(fields), *fields) if fields else b""
            version = 45 if fields else 20
            self._write(struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 0x0300 | version, version, 0x0800, 0,
                                    0, 0x21, crc, min(size, 0xFFFFFFFF), min(size, 0xFFFFFFFF), len(name_b),
                                    len(extra), 0, 0, 0, 0o100644 << 16, min(offset, 0xFFFFFFFF))
                        + name_b + extra)
        n, cd_size = len(self.entries), self.pos - cd_start
        if n >= 0xFFFF or cd_start >= 0xFFFFFFFF or cd_size >= 0xFFFFFFFF:
            eocd64 = self.pos
            self._write(struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, n, n, cd_size, cd_start))
            self._write(struct.pack("<4sIQI", b"PK\x06\x07", 0, eocd64, 1))
        self._write(struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, min(n, 0xFFFF), min(n, 0xFFFF),
                                min(cd_size, 0xFFFFFFFF), min(cd_start, 0xFFFFFFFF), 0))


def is_zip(head):
    return head[:4] == _LOCAL_SIG

