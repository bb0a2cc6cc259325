"""Low-level MATLAB .mat access shared by the ground-truth, prediction and label readers.

scipy.io.loadmat represents a MATLAB cell as an object ndarray and a struct either as a
record (structured ndarray / np.void, the default) or as a ``mat_struct`` object
(``struct_as_record=False``); a 1xK cell of structs may also have been saved as a 1xK
struct array, a Kx1 cell or (K = 1) a bare struct. The helpers below accept all of these so
that the readers do not depend on how a file was written.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError
from ._files import require_file
from ._mat5 import read_mat5

# numpy dtype -> MATLAB class, so that messages use the names MATLAB users see
_MATLAB_CLASS = {
    "float64": "double",
    "float32": "single",
    "bool": "logical",
    "complex128": "complex double",
}


#: The 116 bytes of text that open every MAT-file (v5) segbench writes: scipy's names the
#: time of writing, so the same data would give other bytes on every run.
MAT_HEADER = b"MATLAB 5.0 MAT-file, Platform: posix, written by segbench".ljust(116, b" ")


def write_mat(path: str | Path, variables: dict, **options) -> Path:
    """Write ``variables`` to a MATLAB v5 ``.mat`` file, compressed, atomically, with a
    fixed header text (the same data give the same bytes on every run).

    ``options`` go to :func:`scipy.io.savemat` (``oned_as``, ...). InputError names the
    file when it cannot be written (its folder cannot be made, the disk is full, ...),
    as ``write_ground_truth`` and ``write_segs`` always said it.
    """
    import io

    import scipy.io

    from ._atomic import atomic_write_bytes

    path = Path(path)
    buf = io.BytesIO()
    scipy.io.savemat(buf, variables, do_compression=True, **options)
    data = bytearray(buf.getvalue())
    data[:116] = MAT_HEADER
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, bytes(data))
    except OSError as exc:  # OutputError included: one line naming the file
        raise InputError(f"cannot write file: {exc.strerror or exc}", path) from None
    return path


def load_mat(path: str | Path) -> dict[str, object]:
    """Load the user variables of a .mat file (v4, v6, v7), as InputError on failure.

    The numeric, cell and struct variables of a v6/v7 file are read by
    :func:`._mat5.read_mat5` (the same values scipy.io gives, without importing it);
    anything else goes to ``scipy.io.loadmat``.
    """
    path = require_file(path)
    try:
        variables = read_mat5(path)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path) from None
    if variables is not None:
        return variables
    import scipy.io  # here, not at import: 0.25 s that most commands never need

    try:
        data = scipy.io.loadmat(path, squeeze_me=False, struct_as_record=True)
    except NotImplementedError as exc:  # scipy's message for HDF5-based files
        raise InputError(
            "MATLAB v7.3 (HDF5) .mat files are not supported; re-save it in MATLAB with "
            f"save(..., '-v7') ({exc})",
            path,
        ) from None
    except Exception as exc:  # scipy raises many types on corrupt input
        raise InputError(
            f"cannot read as a MATLAB .mat file (corrupt or not a .mat file): {exc}", path
        ) from None
    return {k: v for k, v in data.items() if not k.startswith("__")}


def describe_variables(variables: dict[str, object]) -> str:
    """Human-readable list of variables for error messages, e.g. ``'a' (3x4 double)``."""
    if not variables:
        return "no variables"
    parts = []
    for name, value in variables.items():
        if isinstance(value, np.ndarray):
            shape = "x".join(str(n) for n in value.shape)
            kind = (
                "cell"
                if value.dtype == object
                else "struct"
                if value.dtype.names
                else "char"
                if value.dtype.kind == "U"
                else _MATLAB_CLASS.get(value.dtype.name, value.dtype.name)
            )
            parts.append(f"{name!r} ({shape} {kind})")
        else:
            parts.append(f"{name!r} ({type(value).__name__})")
    return ", ".join(parts)


def cell_elements(value: object) -> list[object]:
    """Elements of a MATLAB cell or struct array, in MATLAB linear (column-major) order.

    A non-cell value is returned as a one-element list, so a single struct or a single
    numeric array stored where a cell was expected is accepted.
    """
    if isinstance(value, np.ndarray) and (value.dtype == object or value.dtype.names):
        # MATLAB's linear index runs down columns; for 1xK or Kx1 both orders agree.
        return list(value.ravel(order="F"))
    return [value]


def unwrap(value: object) -> object:
    """Strip the 1x1 object/struct wrappers loadmat puts around nested values."""
    while isinstance(value, np.ndarray) and value.dtype == object and value.size == 1:
        value = value.reshape(-1)[0]
    return value


def struct_field(value: object, name: str) -> tuple[bool, object]:
    """``(found, field value)`` of a struct given as record, 1x1 struct array or mat_struct."""
    value = unwrap(value)
    if isinstance(value, np.ndarray) and value.dtype.names:
        if value.size != 1 or name not in value.dtype.names:
            return False, None
        return True, unwrap(value.reshape(-1)[0][name])
    if isinstance(value, np.void) and value.dtype.names:
        if name not in value.dtype.names:
            return False, None
        return True, unwrap(value[name])
    if hasattr(value, "_fieldnames"):  # scipy.io.matlab.mat_struct
        if name not in value._fieldnames:
            return False, None
        return True, unwrap(getattr(value, name))
    if isinstance(value, dict):
        return (name in value), unwrap(value.get(name))
    return False, None


def struct_fieldnames(value: object) -> list[str]:
    """Field names of a struct in any of the loadmat representations (empty if none)."""
    value = unwrap(value)
    if isinstance(value, (np.ndarray, np.void)) and value.dtype.names:
        return list(value.dtype.names)
    if hasattr(value, "_fieldnames"):
        return list(value._fieldnames)
    if isinstance(value, dict):
        return list(value)
    return []


#: Integer types :func:`integer_array` keeps as they are when ``dtype`` is None.
STORED_TYPES = (np.uint8, np.uint16, np.int32)


def integer_array(
    value: object,
    what: str,
    path: str | Path,
    *,
    dtype=np.int32,
    min_value: int | None = None,
) -> np.ndarray:
    """Validate a numeric 2-D array holding whole numbers and convert it to ``dtype``.

    MATLAB stores label maps as any numeric class (double is the default), so floats are
    accepted when every value is a whole number; NaN, fractions, values that do not fit
    ``dtype`` and (with ``min_value``) values below it are refused. ``dtype=None``
    keeps an array of a type in :data:`STORED_TYPES` (native byte order) as it is,
    bool as uint8, and converts anything else to int32: an 8-bit map then costs a
    quarter of the memory and of the counting.
    """
    arr = value
    if not isinstance(arr, np.ndarray) or arr.dtype == object or arr.dtype.names:
        raise InputError(
            f"{what} is not a numeric array (got {type(arr).__name__}"
            f"{'' if not isinstance(arr, np.ndarray) else ' of ' + str(arr.dtype)})",
            path,
        )
    if arr.ndim != 2:
        raise InputError(f"{what} must be a 2-D (H, W) array, got shape {arr.shape}", path)
    if arr.size == 0:
        raise InputError(f"{what} is empty (shape {arr.shape})", path)
    if arr.dtype == bool:  # a copy, not a view: Pillow's 1-bit arrays store True as 255
        arr = arr.astype(np.uint8)
    if dtype is None:
        if arr.dtype.type in STORED_TYPES and arr.dtype.isnative and min_value is None:
            return np.ascontiguousarray(arr)
        dtype = np.int32
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise InputError(
            f"{what} has unsupported type {arr.dtype}; expected integers", path
        )
    if np.issubdtype(arr.dtype, np.floating):
        if not np.isfinite(arr).all():
            raise InputError(
                f"{what} contains NaN or Inf; labels must be whole numbers", path
            )
        if (arr != np.round(arr)).any():
            raise InputError(
                f"{what} contains fractional values; labels must be whole numbers", path
            )
    info = np.iinfo(dtype)
    floor = info.min if min_value is None else max(info.min, min_value)
    if np.issubdtype(arr.dtype, np.integer):
        have = np.iinfo(arr.dtype)
        if have.min >= floor and have.max <= info.max:  # e.g. uint16 into int32: no scan
            return np.ascontiguousarray(arr, dtype=dtype)
    lo, hi = arr.min(), arr.max()
    if lo < floor or hi > info.max:
        raise InputError(
            f"{what} has values in [{lo:g}, {hi:g}], outside the allowed "
            f"range [{floor}, {info.max}]",
            path,
        )
    return np.ascontiguousarray(arr, dtype=dtype)


def only_2d_variable(variables: dict, path, option: str) -> str:
    """The name of the one 2-D numeric variable of a .mat file; InputError naming the
    ``option`` that chooses one when there are none or several."""
    candidates = [
        k
        for k, v in variables.items()
        if isinstance(v, np.ndarray)
        and v.ndim == 2
        and v.size > 1
        and v.dtype != object
        and not v.dtype.names
    ]
    if len(candidates) != 1:
        what = (
            "no 2-D numeric variable"
            if not candidates
            else f"several 2-D numeric variables ({', '.join(candidates)})"
        )
        raise InputError(
            f"{what}; {option} to choose. Found {describe_variables(variables)}", path
        )
    return candidates[0]
