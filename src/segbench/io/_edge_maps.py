"""Edge-map ground truth: one annotator's boundary pixels stored as an image, an array
or a named ``.mat`` variable (BIPED, Multicue, NYUD as HED/RCF convert it, your own)."""

from __future__ import annotations

from os import PathLike
from pathlib import Path

import numpy as np

from ..errors import InputError
from ._files import require_file
from ._images import _GRAY_SCALE, open_image, single_channel
from ._mat import describe_variables, load_mat, only_2d_variable
from ._prediction import _load_npy

#: File types :func:`read_edge_map` reads.
EDGE_MAP_EXTS = (".png", ".bmp", ".jpg", ".jpeg", ".tif", ".tiff", ".pgm", ".npy", ".mat")


def read_edge_map(
    path: str | PathLike, *, threshold: float | None = None, variable: str | None = None
) -> np.ndarray:
    """Read one annotator's boundary map as an (H, W) bool array.

    Parameters
    ----------
    path : str or PathLike
        - an image (``.png``, ``.bmp``, ``.jpg``, ``.tif``, ``.pgm``): 1-, 8- or 16-bit
          grayscale, or RGB whose channels are equal (a gray map saved as colour);
        - ``.npy``: a 2-D bool, integer or float array;
        - ``.mat``: the 2-D numeric variable ``variable`` (or the only one there).
    threshold : float in (0, 1], optional
        The binarization rule (see Notes). Default None: the rule for what is stored.
    variable : str, optional
        The ``.mat`` variable to read.

    Returns
    -------
    (H, W) ndarray of bool
        True at boundary pixels.

    Notes
    -----
    Values are first scaled to [0, 1] by the full scale of their type (255 for 8-bit,
    65535 for 16-bit, 1 for bool and for ``.npy``/``.mat`` arrays, whose values must
    lie in [0, 1]). Then:

    - ``threshold=None`` (default): a **binary** map (at most two values, 0 and one
      other: 0/255, 0/1, 0/65535) is a boundary wherever it is nonzero, whatever the
      scale. A **graded** map (more than two values: anti-aliased strokes, or a binary
      map saved as JPEG) is a boundary where the scaled value is at least 0.5, half
      the full scale. This is the rule Dollar's ``edgesEvalImg`` applies to the
      BSDS/NYUD ground truth it reads (``G{g}.Boundaries`` are 0/1) and the rule the
      patched PNG readers of the edge-detection repositories reduce to on 0/255 maps;
      for graded maps the midpoint is segbench's documented choice (docs/datasets.md
      names the choices of each repository).
    - ``threshold=t``: a boundary where the scaled value is ``>= t``, for every map.
      ``t`` may be as small as one step of the type (``1/255`` for 8-bit: every
      nonzero pixel).

    Raises
    ------
    InputError
        Naming the file: missing or corrupt, a colour image whose channels differ, a
        non-opaque alpha channel, an array that is not 2-D or holds values outside
        [0, 1] (``.npy``/``.mat``), a ``.mat`` without the variable, a threshold
        outside (0, 1], an unsupported extension.
    """
    if threshold is not None and not (
        isinstance(threshold, (int, float)) and 0 < threshold <= 1
    ):
        raise InputError(
            f"the ground-truth edge threshold is a fraction in (0, 1], got {threshold!r}",
            path,
        )
    path = require_file(path)
    ext = path.suffix.lower()
    if ext in (".npy", ".mat"):
        values = _array_values(path, ext, variable)
        return binarize_edges(values, 1.0, threshold)
    if ext not in EDGE_MAP_EXTS:
        raise InputError(
            f"unsupported ground-truth edge-map file type {path.suffix!r}; "
            f"expected {', '.join(EDGE_MAP_EXTS)}",
            path,
        )
    pixels, mode, sixteen = open_image(path)
    if mode == "P":
        raise InputError(
            "edge map is a palette image (palette indices are labels, not "
            "edge strengths); read it with --gt-format labels, or save the "
            "edges as 8-bit grayscale",
            path,
        )
    if mode in ("I", "F") and not sixteen:
        raise InputError(
            f"edge map is a 32-bit {mode} image; expected 8- or 16-bit grayscale", path
        )
    pixels = single_channel(pixels, mode, path, "an edge map")
    full = 65535 if sixteen else _GRAY_SCALE.get(mode, 255)
    return binarize_edges(pixels, full, threshold)


def _array_values(path: Path, ext: str, variable: str | None) -> np.ndarray:
    arr: object  # an array, or a MATLAB variable of any type
    if ext == ".npy":
        arr = _load_npy(path)
        what = "array"
    else:
        variables = load_mat(path)
        if variable is None:
            variable = only_2d_variable(
                variables, path, "name the edge map's variable with --gt-variable"
            )
        if variable not in variables:
            raise InputError(
                f"no variable {variable!r}; found {describe_variables(variables)}", path
            )
        arr = variables[variable]
        what = f"variable {variable!r}"
        if hasattr(arr, "toarray"):  # a MATLAB sparse matrix
            arr = arr.toarray()
    arr = np.asarray(arr)
    if arr.ndim != 2 or arr.size == 0:
        raise InputError(f"{what} must be a 2-D edge map, got shape {arr.shape}", path)
    if arr.dtype == bool:
        return arr
    if arr.dtype.kind not in "iuf":
        raise InputError(f"{what} must be numeric, got {arr.dtype}", path)
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise InputError(f"{what} holds NaN or infinite values", path)
    lo, hi = arr.min(), arr.max()
    if lo < 0 or hi > 1:
        raise InputError(
            f"{what} must hold values in [0, 1] (0/1 or edge strengths), "
            f"found [{lo}, {hi}]",
            path,
        )
    return arr


def binarize_edges(
    values: np.ndarray, full: float, threshold: float | None = None
) -> np.ndarray:
    """An edge map's boundary pixels by the rule of :func:`read_edge_map`'s Notes.

    Parameters
    ----------
    values : (H, W) array of bool, integers or floats
        The stored values (bool: returned as they are).
    full : float
        Their full scale: 255 for 8-bit, 65535 for 16-bit, 1 for floats.
    threshold : float in (0, 1], optional
        A boundary where ``value / full >= threshold``; None: nonzero for a binary
        map (0 and one other value), 0.5 of full scale for a graded one.

    Returns
    -------
    (H, W) ndarray of bool
    """
    if values.dtype == bool:
        return np.ascontiguousarray(values)
    if threshold is None:
        top = values.max()
        if top == 0 or not np.any((values != 0) & (values != top)):
            return np.not_equal(values, 0, order="C")  # binary: nonzero
        threshold = 0.5
    # value / full >= t, computed without rounding the scaled value: the smallest stored
    # value at or above t * full (so t = 1/255 on an 8-bit map is exactly "nonzero")
    cut = threshold * full
    if values.dtype.kind in "iu":
        cut = np.ceil(cut - 1e-9 * full)
    return np.greater_equal(values, cut, order="C")
