"""BSDS300 ``.seg`` files (run-length encoded human segmentations), both directions.

The format (David Martin, 2001)::

    format ascii cr
    date <date string>
    image <int>
    user <int>
    width <int>
    height <int>
    segments <int>
    gray {0|1}
    invert {0|1}
    flipflop {0|1}
    data
    <s> <r> <c1> <c2>      one line per run: columns c1..c2 of row r belong to segment s

Header keys may come in any order and the header may hold '#' comments; all values start
at 0; run lines may come in any order but every pixel must be named exactly once. Only
``format ascii cr`` (the only format BSDS300 ships) is supported.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ._atomic import atomic_write_bytes
from ._files import require_file

_SUPPORTED_FORMAT = "ascii cr"
_INT_KEYS = ("image", "user", "width", "height", "segments")
_FLAG_KEYS = ("gray", "invert", "flipflop")
_KEY_ORDER = (
    "format",
    "date",
    "image",
    "user",
    "width",
    "height",
    "segments",
    "gray",
    "invert",
    "flipflop",
)


@dataclass(frozen=True, eq=False)
class SegFile:
    """A decoded ``.seg`` file: the label map plus every header field.

    Attributes
    ----------
    labels : (H, W) ndarray of int32
        Segment of each pixel, 0-based as the file stores it (BSDS500 ``Segmentation``
        is ``labels + 1``). Row 0 is the top of the image.
    segments : int, optional
        The header's segment count; every label is below it. Defaults to
        ``labels.max() + 1``.
    image, user : int or None
        Image and annotator ids; None when the header has no such line.
    date : str or None
        The date string exactly as written (no parsing).
    format : str
        ``'ascii cr'``, the only format supported.
    gray, invert, flipflop : bool
        How the image was shown to the annotator (grayscale, inverted, rotated 180
        degrees). Metadata only: the labels are always in the image's own orientation.
    header : tuple of str
        The header lines as read (without the ``data`` line), comments and unknown keys
        included. :func:`write_seg` uses them as a template so that ``write_seg(read_seg(f))``
        reproduces the file; a known key's line is re-rendered only if its field changed.
        Ignored by ``==``. Empty for objects built in memory.

    Notes
    -----
    ``width`` and ``height`` are properties derived from ``labels``. Equality compares the
    labels and all fields except ``header``.
    """

    labels: np.ndarray
    segments: int | None = None
    image: int | None = None
    user: int | None = None
    date: str | None = None
    format: str = _SUPPORTED_FORMAT
    gray: bool = False
    invert: bool = False
    flipflop: bool = False
    header: tuple[str, ...] = field(default=(), repr=False)

    def __post_init__(self):
        labels = np.asarray(self.labels)
        if labels.ndim != 2 or labels.size == 0:
            raise InputError(
                f"SegFile labels must be a nonempty 2-D array, got shape {labels.shape}"
            )
        if not np.issubdtype(labels.dtype, np.integer):
            raise InputError(f"SegFile labels must be integers, got {labels.dtype}")
        if labels.min() < 0:
            raise InputError("SegFile labels must be >= 0 (the .seg format is 0-based)")
        if labels.max() > np.iinfo(np.int32).max:
            raise InputError("SegFile labels do not fit in int32")
        object.__setattr__(self, "labels", np.ascontiguousarray(labels, dtype=np.int32))
        n = int(labels.max()) + 1
        if self.segments is None:
            object.__setattr__(self, "segments", n)
        elif int(self.segments) < n:
            raise InputError(
                f"SegFile segments={self.segments} but labels go up to {n - 1}"
            )
        for key in _FLAG_KEYS:
            object.__setattr__(self, key, bool(getattr(self, key)))
        object.__setattr__(self, "header", tuple(self.header))

    @property
    def width(self) -> int:
        """Image width in pixels (number of columns)."""
        return self.labels.shape[1]

    @property
    def height(self) -> int:
        """Image height in pixels (number of rows)."""
        return self.labels.shape[0]

    @property
    def shape(self) -> tuple[int, int]:
        """(H, W) in pixels."""
        return self.labels.shape

    def replace(self, **changes) -> SegFile:
        """A copy with some fields changed (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SegFile):
            return NotImplemented
        return np.array_equal(self.labels, other.labels) and all(
            getattr(self, k) == getattr(other, k)
            for k in _KEY_ORDER
            if k not in ("width", "height")
        )

    __hash__ = None  # type: ignore[assignment]  # unhashable; typeshed allows no None


def _split_header_line(line: str) -> tuple[str, str]:
    """(key, value) of a header line with its comment removed; ('', '') if blank."""
    content = line.split("#", 1)[0].strip()
    if not content:
        return "", ""
    parts = content.split(None, 1)
    return parts[0], (parts[1].strip() if len(parts) > 1 else "")


def _parse_header(lines: list[str], path: Path) -> dict[str, object]:
    values: dict[str, object] = {}
    value: object  # the header's text, then the parsed value
    for lineno, line in enumerate(lines, start=1):
        key, value = _split_header_line(line)
        if key not in _KEY_ORDER:
            continue  # comments and unknown keys are kept verbatim in SegFile.header
        if key in values:
            raise InputError(f"line {lineno}: header key {key!r} given twice", path)
        if key == "format":
            value = " ".join(value.split())
            if value != _SUPPORTED_FORMAT:
                raise InputError(
                    f"line {lineno}: format {value!r} is not supported; only "
                    f"'{_SUPPORTED_FORMAT}' (run-length text, as in BSDS300) "
                    "is",
                    path,
                )
        elif key in _INT_KEYS or key in _FLAG_KEYS:
            try:
                number = int(value)
            except ValueError:
                raise InputError(
                    f"line {lineno}: header {key!r} must be an integer, got {value!r}", path
                ) from None
            if key in _FLAG_KEYS:
                if number not in (0, 1):
                    raise InputError(
                        f"line {lineno}: header {key!r} must be 0 or 1, got {number}", path
                    )
                value = bool(number)
            else:
                if number < 0 or (key in ("width", "height", "segments") and number == 0):
                    raise InputError(
                        f"line {lineno}: header {key!r} must be positive, got {number}",
                        path,
                    )
                value = number
        values[key] = value
    for key in ("width", "height"):
        if key not in values:
            raise InputError(f"header has no {key!r} line; cannot size the label map", path)
    return values


def _decode_runs(data: bytes, first_lineno: int, values: dict, path: Path) -> np.ndarray:
    """Vectorized run-length decoding with line-accurate error messages."""
    height, width = values["height"], values["width"]
    if not data.strip():
        raise InputError("no run lines after 'data': the file is empty or truncated", path)
    buf = np.frombuffer(data, dtype=np.uint8)
    space = np.zeros(256, bool)
    space[[9, 10, 11, 12, 13, 32]] = True
    is_space = space[buf]
    token_start = np.flatnonzero(~is_space & np.concatenate(([True], is_space[:-1])))
    newlines = np.flatnonzero(buf == 10)
    token_line = np.searchsorted(newlines, token_start)  # 0-based line within the data
    per_line = np.bincount(token_line, minlength=newlines.size + 1)
    bad = np.flatnonzero((per_line != 0) & (per_line != 4))
    if bad.size:
        i = int(bad[0])
        hint = " (file truncated?)" if i >= newlines.size - 1 else ""
        raise InputError(
            f"line {first_lineno + i}: expected 4 numbers '<s> <r> <c1> <c2>', "
            f"found {per_line[i]}{hint}",
            path,
        )
    tokens = data.split()
    try:
        runs = np.array(tokens, dtype=np.int64).reshape(-1, 4)
    except (ValueError, OverflowError):
        for t, tok in enumerate(tokens):  # error path only: find the offending token
            try:
                int(tok)
            except ValueError:
                raise InputError(
                    f"line {first_lineno + int(token_line[t])}: "
                    f"{tok.decode(errors='replace')!r} is not an integer",
                    path,
                ) from None
        raise InputError("run values too large", path) from None
    run_line = first_lineno + token_line[::4]
    s, r, c1, c2 = runs.T
    segments = values.get("segments")
    checks = [
        (s < 0, "segment number is negative"),
        (
            s >= segments if segments is not None else np.zeros_like(s, bool),
            f"segment number is not below the header's 'segments {segments}'",
        ),
        (
            (r < 0) | (r >= height),
            f"row is outside 0..{height - 1} (header height {height})",
        ),
        (
            (c1 < 0) | (c2 >= width),
            f"columns are outside 0..{width - 1} (header width {width})",
        ),
        (c1 > c2, "run ends before it starts (c1 > c2)"),
    ]
    for mask, problem in checks:
        hits = np.flatnonzero(mask)
        if hits.size:
            i = int(hits[0])
            raise InputError(
                f"line {run_line[i]}: '{s[i]} {r[i]} {c1[i]} {c2[i]}': {problem}", path
            )

    # Coverage count per pixel from +1/-1 markers at run starts/ends: every pixel must be
    # named exactly once.
    marks = np.zeros((height, width + 1), np.int64)
    np.add.at(marks, (r, c1), 1)
    np.add.at(marks, (r, c2 + 1), -1)
    cover = np.cumsum(marks[:, :width], axis=1)
    if not (cover == 1).all():
        row, col = (int(v) for v in np.argwhere(cover != 1)[0])
        n = int(cover[row, col])
        if n == 0:
            raise InputError(
                f"pixel (row {row}, col {col}) is in no run: the run lines do "
                "not cover the image (file truncated?)",
                path,
            )
        lines = run_line[(r == row) & (c1 <= col) & (c2 >= col)]
        raise InputError(
            f"pixel (row {row}, col {col}) is named {n} times, on lines "
            f"{', '.join(str(v) for v in lines)}",
            path,
        )

    lengths = c2 - c1 + 1
    starts = r * width + c1
    # flat index of every pixel of every run, without a Python loop over pixels
    offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    labels = np.empty(height * width, np.int32)
    labels[np.repeat(starts, lengths) + offsets] = np.repeat(s, lengths)
    return labels.reshape(height, width)


def read_seg(path: str | PathLike) -> SegFile:
    """Read a BSDS300 ``.seg`` file.

    Parameters
    ----------
    path : str or PathLike
        A ``.seg`` file in ``format ascii cr``.

    Returns
    -------
    SegFile
        ``labels`` is 0-based; the BSDS500 ``Segmentation`` of the same annotation is
        ``labels + 1``.

    Raises
    ------
    InputError
        Missing file, no ``data`` line, unsupported format, malformed or missing header
        values, a run line without 4 integers, a run outside the image or naming a
        segment >= ``segments``, or pixels named twice or never. The message gives the
        line number.

    Notes
    -----
    Decoding is vectorized: the runs are parsed in one pass and expanded with
    ``np.repeat``. CR-LF line ends are accepted (written back as LF).
    """
    path = require_file(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", path) from None
    # Find the 'data' line without decoding the (large) run section as text.
    header_lines: list[str] = []
    pos = 3 if raw.startswith(b"\xef\xbb\xbf") else 0  # a text editor's UTF-8 BOM
    lineno = 0
    while True:
        if pos >= len(raw):
            raise InputError(
                "no 'data' line ending the header: not a .seg file, or truncated", path
            )
        end = raw.find(b"\n", pos)
        end = len(raw) if end < 0 else end
        lineno += 1
        # latin-1 maps every byte to one character, so any header round-trips exactly
        line = raw[pos:end].decode("latin-1").rstrip("\r")
        pos = end + 1
        if line.strip() == "data":
            break
        header_lines.append(line)
    values = _parse_header(header_lines, path)
    labels = _decode_runs(raw[pos:], lineno + 1, values, path)
    # parsed values of SegFile's own field types (see _parse_header)
    fields: dict[str, Any] = {
        k: v for k, v in values.items() if k not in ("width", "height")
    }
    return SegFile(labels=labels, header=tuple(header_lines), **fields)


def _render_value(seg: SegFile, key: str) -> str | None:
    value = getattr(seg, key)
    if value is None:
        return None
    if isinstance(value, bool):
        return str(int(value))
    return str(value)


def _encode_runs(labels: np.ndarray) -> bytes:
    """Maximal runs in raster order (row, then column), as the official files have them."""
    h, w = labels.shape
    # a run starts at column 0 or where the label changes along the row
    change = np.ones((h, w), bool)
    change[:, 1:] = labels[:, 1:] != labels[:, :-1]
    rows, c1 = np.nonzero(change)
    flat_start = rows * w + c1
    flat_end = np.append(flat_start[1:], h * w) - 1
    # a run never crosses a row end because column 0 always starts a run
    c2 = flat_end - rows * w
    s = labels[rows, c1]
    table = np.column_stack([s, rows, c1, c2])
    lines = "\n".join(" ".join(map(str, row)) for row in table.tolist())
    return (lines + "\n").encode("ascii")


def write_seg(path: str | PathLike, seg: SegFile, *, durable: bool = False) -> None:
    """Write a :class:`SegFile` as a ``.seg`` file (``format ascii cr``).

    Header: when ``seg.header`` holds the lines read from a file, they are written back
    verbatim except the lines of known keys whose field changed (re-rendered as
    ``key value``) or was set to None (dropped); known keys missing from the template
    but set to a non-default value are appended. Without a template the header is the
    official one: ``format, date, image, user, width, height, segments, gray, invert,
    flipflop`` (None fields omitted), then ``data``.

    Runs: maximal runs in raster order, one per line, LF line ends, exactly as in the
    BSDS300 files, so ``write_seg(p, read_seg(f))`` reproduces an official file byte for
    byte.

    Parameters
    ----------
    path : str or PathLike
        Output file; overwritten if present, atomically.
    seg : SegFile
    durable : bool, default False
        Flush the file to disk before it replaces the old one (see
        :func:`~segbench.io.atomic_write_bytes`).

    Raises
    ------
    OutputError
        When the file cannot be written (the path and the reason named).
    """
    path = Path(path)
    if not isinstance(seg, SegFile):
        raise InputError(f"write_seg needs a SegFile, got {type(seg).__name__}", path)
    out: list[str] = []
    written: set[str] = set()
    for line in seg.header:
        key, value = _split_header_line(line)
        if key not in _KEY_ORDER:
            out.append(line)
            continue
        written.add(key)
        new = _render_value(seg, key)
        if new is None:
            continue
        if key == "format":
            old = " ".join(value.split())
        elif key == "date":
            old = value
        else:
            try:
                old = str(int(value))
            except ValueError:
                old = None
        out.append(line if old == new else f"{key} {new}")
    template = bool(seg.header)
    defaults = {
        "format": _SUPPORTED_FORMAT,
        "gray": "0",
        "invert": "0",
        "flipflop": "0",
        "segments": str(int(seg.labels.max()) + 1),
    }
    for key in _KEY_ORDER:
        if key in written:
            continue
        new = _render_value(seg, key)
        if new is None or (template and defaults.get(key) == new):
            continue
        out.append(f"{key} {new}")
    out.append("data")
    try:
        text = ("\n".join(out) + "\n").encode("latin-1")
    except UnicodeEncodeError:
        raise InputError("the header holds characters outside Latin-1", path) from None
    atomic_write_bytes(path, text + _encode_runs(seg.labels), durable=durable)
