"""Label maps as every measure reads them: checked integer arrays, compacted to 1..K.

Below the datasets and every family (seg2bdry and thin are the floor's other tools), so
the datasets can compact labels without importing a measure package.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..compilation import prepare_kernels
from ..errors import InputError

prepare_kernels()


def as_labels(a, what: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.ndim != 2:
        raise InputError(f"{what} must be a 2-D (H, W) label map, got shape {arr.shape}")
    if arr.size == 0:
        raise InputError(f"{what} is empty")
    if arr.dtype == bool:
        arr = arr.astype(np.uint8)
    if np.issubdtype(arr.dtype, np.floating):
        if not np.isfinite(arr).all() or (arr != np.round(arr)).any():
            raise InputError(
                f"{what} holds non-integer values; labels must be whole numbers"
            )
    elif not np.issubdtype(arr.dtype, np.integer):
        raise InputError(
            f"{what} has unsupported type {arr.dtype}; expected integer labels"
        )
    return arr


def compact_labels(labels, *, void=0) -> tuple[np.ndarray, int]:
    """Renumber a label map to ``0..K`` keeping only the labels that occur.

    Parameters
    ----------
    labels : (H, W) array_like of int
    void : int or None, default 0
        A label that marks unlabelled pixels; it becomes 0. With None every label is a
        region and the result uses 1..K (0 does not occur).

    Returns
    -------
    compact : (H, W) ndarray of int32
        0 for void pixels, 1..K for the regions, numbered in increasing label order.
    k : int
        Number of regions K.

    Notes
    -----
    Every measure of this package is invariant to renumbering and to label values
    that do not occur (the official code gives such "regions" zero area, and they
    contribute nothing), so compacting changes no result.
    """
    arr = as_labels(labels, "label map")
    flat = arr.ravel()
    if not np.issubdtype(flat.dtype, np.integer):
        flat = flat.astype(np.int64)  # whole-number floats (MATLAB doubles)
    lo, hi = int(flat.min()), int(flat.max())
    if lo >= 0 and hi <= 4 * flat.size + 1024:
        out, k = _compact_small(
            np.ascontiguousarray(flat), hi, -1 if void is None else int(void)
        )
    else:
        uniq, inv = np.unique(flat, return_inverse=True)
        lut = np.arange(1, uniq.size + 1, dtype=np.int64)
        if void is not None:
            hit = np.searchsorted(uniq, void)
            if hit < uniq.size and uniq[hit] == void:
                lut[hit] = 0
                lut[hit + 1 :] -= 1
        k = int(lut.max()) if lut.size else 0
        out = lut[inv.ravel()].astype(np.int32)
    return out.reshape(arr.shape), k


@nb.njit(cache=True)
def _compact_small(flat, hi, void):
    """compact_labels for non-negative labels up to ``hi``: two passes, no sorting."""
    lut = np.zeros(hi + 1, np.int32)
    for i in range(flat.shape[0]):
        lut[flat[i]] = 1
    if 0 <= void <= hi:
        lut[void] = 0
    k = 0
    for v in range(hi + 1):
        if lut[v]:
            k += 1
            lut[v] = k
    out = np.empty(flat.shape[0], np.int32)
    for i in range(flat.shape[0]):
        out[i] = lut[flat[i]]
    return out, k
