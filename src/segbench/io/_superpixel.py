"""Files of the superpixel benchmark: the C++ benchmark's CSV layout and its outputs.

The C++ superpixel benchmark (Stutz et al.) stores every label map as a CSV text file:
one line per image row, labels separated by commas. Superpixels are ``<iid>.csv``;
ground truth is ``<iid>.csv`` (one annotator) or ``<iid>-0.csv``, ``<iid>-1.csv``, ...
(its evaluation reads annotators 0-4 only; we read every consecutive one). Its results
are ``results.csv`` (6 significant digits) and ``results.csv.txt`` (the same matrix at
float32 precision as an OpenCV YAML file).

Also here: the ``.npz`` layouts of the superpixel fixtures (``gt0, gt1, ...`` per image;
one array, or ``sp``, per superpixel map), :func:`read_superpixels` /
:func:`read_annotators`, which open any supported file by extension, and the folder
listings :func:`list_annotator_files` / :func:`group_annotator_files` (which
:class:`segbench.datasets.FolderPairs` uses to read these layouts). Labels are returned
as stored: the C++ benchmark's conventions depend on their values. Every problem
raises :class:`segbench.errors.InputError` naming the file.
"""

from __future__ import annotations

import csv
import re
import warnings
from io import StringIO
from os import PathLike
from pathlib import Path

import numpy as np

from ..errors import InputError
from ._atomic import atomic_write_text
from ._files import list_files, require_file
from ._ground_truth import read_ground_truth
from ._labels import read_label_map
from ._mat import integer_array
from ._prediction import check_numpy_file

#: Extensions accepted for superpixel maps.
SUPERPIXEL_EXTS = ("png", "bmp", "tif", "tiff", "npy", "mat", "csv", "npz")
_ANNOTATOR = re.compile(r"^(?P<iid>.+)-(?P<t>\d+)$")


def read_csv_labels(path: str | PathLike) -> np.ndarray:
    """Read a label map in the C++ benchmark's CSV layout as (H, W) int32.

    Raises
    ------
    InputError
        Missing or empty file, rows of different lengths, or a value that is not an
        integer.
    """
    path = require_file(path)
    try:
        text = path.read_text(encoding="utf-8-sig")  # Excel saves CSV with a BOM
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the CSV label map: {exc}", path) from None
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise InputError("empty CSV label map", path)
    widths = {ln.count(",") + 1 for ln in lines}
    if len(widths) != 1:
        lens = [ln.count(",") + 1 for ln in lines]
        bad = next(i for i, n in enumerate(lens) if n != lens[0])
        raise InputError(
            f"CSV rows differ in length: row 1 has {lens[0]} values, row "
            f"{bad + 1} has {lens[bad]}",
            path,
        )
    width = widths.pop()
    try:
        with warnings.catch_warnings():
            # numpy warns (and stops) at text it cannot parse as an integer
            warnings.simplefilter("error", DeprecationWarning)
            flat = np.fromstring(",".join(lines), dtype=np.int64, sep=",")
    except (ValueError, OverflowError, DeprecationWarning):
        flat = None
    if flat is None or flat.size != len(lines) * width:
        raise InputError("CSV label map holds a value that is not an integer", path)
    if flat.size and (
        flat.min() < np.iinfo(np.int32).min or flat.max() > np.iinfo(np.int32).max
    ):
        raise InputError("labels do not fit in int32", path)
    return flat.reshape(len(lines), width).astype(np.int32)


def write_csv_labels(path: str | PathLike, labels) -> None:
    """Write a label map in the C++ benchmark's CSV layout (for running that code)."""
    arr = np.asarray(labels)
    if arr.ndim != 2 or not np.issubdtype(arr.dtype, np.integer):
        raise InputError(
            f"a label map is a 2-D integer array, got {arr.dtype} {arr.shape}", path
        )
    buf = StringIO()
    np.savetxt(buf, arr, fmt="%d", delimiter=",")
    try:
        Path(path).write_text(buf.getvalue())
    except OSError as exc:
        raise InputError(f"cannot write file: {exc.strerror or exc}", path) from None


def read_npz_annotators(path: str | PathLike) -> list[np.ndarray]:
    """Annotators stored as ``gt0, gt1, ...`` in one ``.npz`` file (the fixtures)."""
    path = require_file(path)
    check_numpy_file(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            keys = sorted(
                (k for k in z.files if re.fullmatch(r"gt\d+", k)), key=lambda k: int(k[2:])
            )
            maps = [np.asarray(z[k]) for k in keys]
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the .npz file: {exc}", path) from None
    if not maps:
        raise InputError("no arrays gt0, gt1, ... in this .npz file", path)
    for k, m in zip(keys, maps):
        if m.ndim != 2 or not (np.issubdtype(m.dtype, np.integer) or m.dtype == bool):
            raise InputError(
                f"{k} is not a 2-D integer label map ({m.dtype} {m.shape})", path
            )
    return [integer_array(m, k, path) for k, m in zip(keys, maps)]


def read_superpixels(path: str | PathLike) -> np.ndarray:
    """Read a superpixel map by extension, as (H, W) int32.

    ``.csv``: the C++ benchmark's layout; ``.npz``: its only array, or the one named
    ``sp``; ``.png/.bmp/.tif/.npy/.mat``: :func:`segbench.io.read_label_map` (16-bit
    PNG holds up to 65536 superpixels).
    """
    path = Path(path)
    ext = path.suffix.lower()
    if ext == ".csv":
        return read_csv_labels(path)
    if ext == ".npz":
        path = require_file(path)
        check_numpy_file(path)
        try:
            with np.load(path, allow_pickle=False) as z:
                names = list(z.files)
                key = "sp" if "sp" in names else (names[0] if len(names) == 1 else None)
                if key is None:
                    raise InputError(
                        f"several arrays ({', '.join(names)}) and none named 'sp'", path
                    )
                arr = np.asarray(z[key])
        except InputError:
            raise
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read the .npz file: {exc}", path) from None
        if arr.ndim != 2 or not np.issubdtype(arr.dtype, np.integer):
            raise InputError(
                f"'{key}' is not a 2-D integer label map ({arr.dtype} {arr.shape})", path
            )
        return integer_array(arr, f"'{key}'", path)
    # no option picks a superpixel file's variable: the file must hold one
    return read_label_map(path, choose="keep one 2-D variable in each superpixel file")


def read_annotators(paths) -> list[np.ndarray]:
    """The annotators' label maps of one image, from the files listed for it.

    ``paths`` is one BSDS500 ``.mat`` (every annotator's ``Segmentation``), one ``.npz``
    (``gt0, gt1, ...``), or the C++ layout's CSV files in annotator order.
    """
    paths = [Path(p) for p in ([paths] if isinstance(paths, (str, PathLike)) else paths)]
    if len(paths) == 1 and paths[0].suffix.lower() == ".mat":
        return [h.segmentation for h in read_ground_truth(paths[0])]
    if len(paths) == 1 and paths[0].suffix.lower() == ".npz":
        return read_npz_annotators(paths[0])
    return [read_csv_labels(p) for p in paths]


def group_annotator_files(folder: str | PathLike, exts) -> dict[str, list[Path]]:
    """Ground-truth files of a folder by image id, sorted by id (empty if none).

    Each file with one of ``exts`` is the ground truth of the image named by its stem,
    except the C++ benchmark's ``<iid>-<t>.csv`` (annotators t = 0, 1, ... in order),
    which are grouped under ``<iid>``; a lone ``<iid>.csv`` is one annotator.

    Raises
    ------
    InputError
        An image with files of two kinds; CSV annotators that do not start at 0 or skip
        a number.
    """
    exts = [e.lower().lstrip(".") for e in ([exts] if isinstance(exts, str) else exts)]
    others = [e for e in exts if e != "csv"]
    found = {iid: [p] for iid, p in list_files(folder, others).items()} if others else {}
    per_image: dict[str, dict[int, Path]] = {}
    for stem, p in list_files(folder, ("csv",)).items() if "csv" in exts else ():
        m = _ANNOTATOR.match(stem)
        iid, t = (m.group("iid"), int(m.group("t"))) if m else (stem, -1)
        per_image.setdefault(iid, {})[t] = p
    for iid, files in per_image.items():
        if iid in found:
            raise InputError(
                f"image {iid!r} has ground truth in two formats "
                f"({found[iid][0].name} and CSV); keep one",
                folder,
            )
        if -1 in files and len(files) == 1:
            found[iid] = [files[-1]]
            continue
        if -1 in files:
            raise InputError(
                f"image {iid!r} has both {iid}.csv and {iid}-<t>.csv "
                "ground truth; keep one layout",
                folder,
            )
        ts = sorted(files)
        if ts != list(range(len(ts))):
            raise InputError(
                f"CSV annotators of image {iid!r} are numbered {ts}; "
                "expected 0, 1, ... without gaps",
                folder,
            )
        found[iid] = [files[t] for t in ts]
    return dict(sorted(found.items()))


def list_annotator_files(folder: str | PathLike) -> dict[str, list[Path]]:
    """Ground truth of a superpixel folder: image id -> its file(s), sorted by id.

    A folder holds BSDS500 ``<iid>.mat``, fixture-style ``<iid>.npz``, or the C++
    layout's ``<iid>.csv`` / ``<iid>-<t>.csv`` (annotators t = 0, 1, ... in order).

    Raises
    ------
    InputError
        No ground-truth file; an image with files of two kinds; CSV annotators that do
        not start at 0 or skip a number.
    """
    found = group_annotator_files(folder, ("mat", "npz", "csv"))
    if not found:
        raise InputError(
            "no ground truth found (.mat, .npz, or the C++ benchmark's <iid>-<t>.csv)",
            folder,
        )
    return found


# ----------------------------------------------------------- the C++ benchmark's outputs


def read_opencv_matrix(path: str | PathLike) -> np.ndarray:
    """A matrix from an OpenCV YAML file (``results.csv.txt``), as float64.

    Reads the first ``!!opencv-matrix`` (``rows``, ``cols``, ``data``); ``.Inf``,
    ``-.Inf`` and ``.NaN`` become inf and NaN.
    """
    path = require_file(path)
    text = path.read_text(encoding="utf-8-sig")
    try:
        found_rows = re.search(r"rows:\s*(\d+)", text)
        found_cols = re.search(r"cols:\s*(\d+)", text)
        if found_rows is None or found_cols is None:
            raise ValueError("no rows or cols")
        rows, cols = int(found_rows.group(1)), int(found_cols.group(1))
        body = text[text.index("data:") :]
        body = body[body.index("[") + 1 : body.index("]")]
    except (AttributeError, ValueError):
        raise InputError("not an OpenCV YAML matrix (rows, cols, data)", path) from None
    words = [w.strip() for w in body.replace("\n", " ").split(",") if w.strip()]
    special = {".inf": "inf", "+.inf": "inf", "-.inf": "-inf", ".nan": "nan"}
    try:
        vals = np.array([float(special.get(w.lower(), w)) for w in words])
    except ValueError:
        raise InputError("non-numeric value in the matrix data", path) from None
    if vals.size != rows * cols:
        raise InputError(f"matrix data has {vals.size} values for {rows}x{cols}", path)
    return vals.reshape(rows, cols)


def read_stutz_results(
    path: str | PathLike,
) -> tuple[list[tuple[str, str]], list[str], np.ndarray]:
    """The C++ benchmark's ``results.csv``.

    Returns
    -------
    rows : list of (image, ground_truth) names
    columns : list of str
        The metric columns (``ue``, ``oe``, ``rec``, ...).
    values : (n_rows, n_columns) float64
        As printed (6 significant digits); with ``results.csv.txt`` beside the file,
        prefer :func:`read_opencv_matrix` on it for full float32 precision.
    """
    path = require_file(path)
    with path.open(newline="", encoding="utf-8-sig") as f:  # as re-saved by Excel
        table = list(csv.reader(f))
    if not table or table[0][:2] != ["image", "ground_truth"]:
        raise InputError(
            "not a superpixel-benchmark results.csv (header image, ground_truth, ...)", path
        )
    columns = table[0][2:]
    rows, vals = [], []
    for i, r in enumerate(table[1:], start=2):
        if not r:
            continue
        if len(r) != len(columns) + 2:
            raise InputError(
                f"line {i} has {len(r)} fields, the header {len(columns) + 2}", path
            )
        rows.append((r[0], r[1]))
        try:
            vals.append([float(v) for v in r[2:]])
        except ValueError:
            raise InputError(f"line {i} holds a non-numeric value", path) from None
    return (
        rows,
        columns,
        np.asarray(vals, dtype=np.float64).reshape(len(rows), len(columns)),
    )


def write_stutz_results(path: str | PathLike, rows, columns, values) -> None:
    """Write rows in the C++ benchmark's ``results.csv`` layout (6 significant digits),
    atomically (:class:`~segbench.errors.OutputError` if it cannot be written)."""
    lines = [",".join(["image", "ground_truth", *columns])]
    for (image, gt), vals in zip(rows, values):
        cells = [f"{float(v):g}" for v in vals]  # C++ stream style: inf, nan
        lines.append(",".join([f'"{image}"', f'"{gt}"', *cells]))
    atomic_write_text(path, "\n".join(lines) + "\n")
