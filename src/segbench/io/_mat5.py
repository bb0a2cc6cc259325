"""A small reader for the MAT-file v5 (v6/v7) variables segbench reads, without scipy.io.

``scipy.io`` costs 0.15-0.25 CPU-s to import (it brings ``scipy.sparse`` and scipy's
array-API layer), a quarter of a one-image ``segbench boundary``. The files segbench
reads hold numeric arrays, cells and structs only: ground truth (a cell of structs of
label maps), ``segs`` and ``ucm2`` predictions, label maps. This module reads exactly
those, as ``scipy.io.loadmat(path, squeeze_me=False, struct_as_record=True)`` returns
them (the same classes, dtypes, shapes and values, checked against scipy on every
``.mat`` file of BSDS500 by the tests). For anything else (sparse, complex, char,
objects, MATLAB v4 or v7.3 files, big-endian files, a damaged file) it returns ``None``
and the caller uses scipy.io, which reads or refuses it as before.

Format: the MAT-File Format reference (MathWorks): a 128-byte header, then data elements
of an 8-byte tag (type, byte count) or a "small" 4-byte-packed tag, padded to 8 bytes;
``miCOMPRESSED`` elements hold one zlib-compressed ``miMATRIX``.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np

from ..errors import InputError

__all__ = ["read_mat5"]

# data-element types -> numpy dtype character (miINT8 ... miUINT64)
_MI_DTYPES = {
    1: "i1",
    2: "u1",
    3: "i2",
    4: "u2",
    5: "i4",
    6: "u4",
    7: "f4",
    9: "f8",
    12: "i8",
    13: "u8",
}
_MI_MATRIX, _MI_COMPRESSED = 14, 15
# array classes read here: cell, struct, and the numeric classes double ... uint64
_MX_CELL, _MX_STRUCT = 1, 2
_MX_NUMERIC = range(6, 16)
_COMPLEX_FLAG = 0x08
#: A compressed variable that would inflate past this is refused (a zlib bomb), not read:
#: 2 GiB is several times a 12-megapixel ucm2 map in double precision.
MAX_VARIABLE_BYTES = 2 << 30


class _Unsupported(Exception):
    """Something this reader leaves to scipy.io."""


class _Elements:
    """Data elements of a byte string, read in sequence."""

    def __init__(self, data: bytes | memoryview, order: str, start: int = 0) -> None:
        self.data, self.order, self.pos = memoryview(data), order, start

    def next(self) -> tuple[int, memoryview]:
        data, pos = self.data, self.pos
        if pos + 8 > len(data):
            raise _Unsupported("truncated")
        first = int(np.frombuffer(data, self.order + "u4", 1, pos)[0])
        if first >> 16:  # small element: data in the tag
            kind, size = first & 0xFFFF, first >> 16
            if size > 4:
                raise _Unsupported("bad small element")
            self.pos = pos + 8
            return kind, data[pos + 4 : pos + 4 + size]
        size = int(np.frombuffer(data, self.order + "u4", 1, pos + 4)[0])
        end = pos + 8 + size
        if end > len(data):
            raise _Unsupported("truncated")
        # compressed elements are not padded; all others end on an 8-byte boundary
        self.pos = end if first == _MI_COMPRESSED else pos + 8 + (size + 7) // 8 * 8
        return first, data[pos + 8 : end]

    def numbers(self) -> np.ndarray:
        kind, payload = self.next()
        dtype = _MI_DTYPES.get(kind)
        if dtype is None:
            raise _Unsupported(f"data type {kind}")
        return np.frombuffer(payload, self.order + dtype)


def _matrix(payload: memoryview, order: str) -> tuple[str, object]:
    """(name, value) of one miMATRIX element's payload."""
    if len(payload) == 0:
        raise _Unsupported("empty matrix element")
    parts = _Elements(payload, order)
    flags = parts.numbers()
    if flags.size < 2:
        raise _Unsupported("bad array flags")
    mx_class, bits = int(flags[0]) & 0xFF, (int(flags[0]) >> 8) & 0xFF
    dims = tuple(int(d) for d in parts.numbers())
    name = bytes(parts.next()[1]).decode("latin-1")
    if bits & _COMPLEX_FLAG or len(dims) < 2 or min(dims) < 0:
        raise _Unsupported("complex or malformed")
    count = int(np.prod(dims))
    if mx_class in _MX_NUMERIC:
        values = parts.numbers()
        if values.size != count:
            raise _Unsupported("size mismatch")
        # a writeable copy in native byte order, column-major as MATLAB stores it (and as
        # scipy returns it), that does not keep the file's bytes alive
        values = values.astype(values.dtype.newbyteorder("="), copy=False)
        return name, values.reshape(dims, order="F").copy(order="K")
    if mx_class == _MX_CELL:
        cells = np.empty(count, dtype=object)
        for i in range(count):
            kind, sub = parts.next()
            if kind != _MI_MATRIX:
                raise _Unsupported("cell element is not a matrix")
            cells[i] = _matrix(sub, order)[1]
        return name, cells.reshape(dims, order="F")
    if mx_class == _MX_STRUCT:
        width = int(parts.numbers()[0])
        packed = bytes(parts.next()[1])
        if width <= 0 or len(packed) % width:
            raise _Unsupported("bad field names")
        fields = [
            packed[i : i + width].split(b"\0", 1)[0].decode("latin-1")
            for i in range(0, len(packed), width)
        ]
        if not fields or len(set(fields)) != len(fields):
            raise _Unsupported("no or repeated field names")
        records = np.empty(count, dtype=[(f, object) for f in fields])
        for i in range(count):
            for f in fields:
                kind, sub = parts.next()
                if kind != _MI_MATRIX:
                    raise _Unsupported("field is not a matrix")
                records[i][f] = _matrix(sub, order)[1]
        return name, records.reshape(dims, order="F")
    raise _Unsupported(f"array class {mx_class}")


def read_mat5(path: str | Path) -> dict[str, object] | None:
    """The variables of a MAT-file v5 (v6, v7) file, or ``None`` to defer to scipy.io.

    Parameters
    ----------
    path : str or Path
        The file; it must exist (the caller has checked).

    Returns
    -------
    dict or None
        Variable name -> value as ``scipy.io.loadmat(path, squeeze_me=False,
        struct_as_record=True)`` gives it: numeric arrays in the dtype they are stored
        in (not MATLAB's class: a double matrix saved as uint8 reads as uint8, as in
        scipy), shaped as in MATLAB; cells as object arrays; structs as record arrays of
        object fields. ``None`` when the file holds anything else or is not a readable
        v5 file; scipy.io then reads it, or explains why it cannot.

    Raises
    ------
    InputError
        When a compressed variable would inflate past :data:`MAX_VARIABLE_BYTES`.
    """
    data = Path(path).read_bytes()
    # little-endian v5 only: big-endian files (written on old Sun/PowerPC machines),
    # MATLAB v4, v7.3 (HDF5) and non-.mat files are scipy's to read or refuse
    if len(data) < 128 or data[124:128] != b"\x00\x01IM":
        return None
    order = "<"
    variables: dict[str, object] = {}
    top = _Elements(data, order, 128)
    try:
        while top.pos < len(data):
            kind, payload = top.next()
            if kind == _MI_COMPRESSED:
                inflate = zlib.decompressobj()
                raw = inflate.decompress(payload, MAX_VARIABLE_BYTES)
                if inflate.unconsumed_tail:
                    raise InputError(
                        f"a compressed variable inflates to more than "
                        f"{MAX_VARIABLE_BYTES >> 20} MB; refused",
                        path,
                    )
                kind, payload = _Elements(raw, order).next()
            if kind != _MI_MATRIX:
                return None
            name, value = _matrix(payload, order)
            variables[name] = value
    except InputError:
        raise
    except (_Unsupported, zlib.error, ValueError, IndexError):
        return None
    return variables
