"""Segmentations of a hierarchy: an ultrametric contour map cut at thresholds.

The official code (evaluation_reg_image.m) forms the regions at threshold t as::

    labels2 = bwlabel(ucm2 <= t);          % doubleSize grid, 8-connected components
    seg = labels2(2:2:end, 2:2:end);       % the pixel cells, back to image size

``bwlabel``'s default connectivity is 8 (MATLAB and Octave alike), and in the
doubleSize layout of a (2H+1, 2W+1) ucm2 the pixels sit at odd (0-based) rows and
columns, with boundary cells between them and junction cells at even/even positions. A
pixel cell above the threshold gets label 0, which the benchmark treats as unlabelled.

Here the components of all thresholds come from one incremental union-find pass over
the cells sorted by value (Kruskal), which gives exactly the partitions ``bwlabel``
gives (up to the numbering of the regions, which no measure depends on).
"""

from __future__ import annotations

from collections.abc import Iterator

import numba as nb
import numpy as np

from ..compilation import prepare_kernels
from ..errors import InputError
from ..primitives import find_root as _find

prepare_kernels()

_NEIGHBOURS_8 = np.array(
    [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)], np.int64
)
_NEIGHBOURS_4 = np.array([(-1, 0), (0, -1), (0, 1), (1, 0)], np.int64)


@nb.njit(cache=True)
def _activate(values, order, pos, t, parent, size, has_px, rows, cols, nbrs):
    """Activate cells with value <= t (in sorted order from ``pos``) and merge them
    with their active neighbours. Returns the new position and whether the partition
    of the pixel cells changed."""
    changed = False
    n = order.size
    while pos < n and values[order[pos]] <= t:
        c = order[pos]
        pos += 1
        parent[c] = c
        size[c] = 1
        r = c // cols
        q = c - r * cols
        px = (r & 1) == 1 and (q & 1) == 1
        has_px[c] = px
        if px:
            changed = True
        for k in range(nbrs.shape[0]):
            rr = r + nbrs[k, 0]
            qq = q + nbrs[k, 1]
            if rr < 0 or rr >= rows or qq < 0 or qq >= cols:
                continue
            d = rr * cols + qq
            if parent[d] < 0:
                continue
            ra = _find(parent, c)
            rb = _find(parent, d)
            if ra == rb:
                continue
            if has_px[ra] and has_px[rb]:
                changed = True
            if size[ra] < size[rb]:
                ra, rb = rb, ra
            parent[rb] = ra
            size[ra] += size[rb]
            has_px[ra] = has_px[ra] or has_px[rb]
    return pos, changed


@nb.njit(cache=True)
def _pixel_labels(parent, rows, cols, lab_of_root, out):
    """Label the pixel cells 1..K by component (0 for inactive cells); returns K."""
    h = (rows - 1) // 2
    w = (cols - 1) // 2
    k = 0
    touched = np.empty(h * w, np.int64)
    nt = 0
    for i in range(h):
        for j in range(w):
            c = (2 * i + 1) * cols + 2 * j + 1
            if parent[c] < 0:
                out[i * w + j] = 0
                continue
            r = _find(parent, c)
            if lab_of_root[r] == 0:
                k += 1
                lab_of_root[r] = k
                touched[nt] = r
                nt += 1
            out[i * w + j] = lab_of_root[r]
    for x in range(nt):
        lab_of_root[touched[x]] = 0
    return k


def _check_ucm2(ucm2) -> np.ndarray:
    if not isinstance(ucm2, np.ndarray) and getattr(ucm2, "ucm2", None) is not None:
        ucm2 = ucm2.ucm2  # a Prediction of kind 'ucm2'
    u = np.asarray(ucm2, dtype=np.float64)
    if u.ndim != 2 or u.shape[0] % 2 == 0 or u.shape[1] % 2 == 0 or min(u.shape) < 3:
        raise InputError(
            f"a doubleSize ucm2 is (2H+1, 2W+1), odd in both dimensions; "
            f"got shape {u.shape}"
        )
    if not np.isfinite(u).all():
        raise InputError("the ucm2 contains NaN or infinite values")
    return np.ascontiguousarray(u)


def ucm_levels(
    ucm2, thresholds, *, connectivity: int = 8
) -> Iterator[tuple[np.ndarray, int, bool]]:
    """Yield the segmentation at each threshold of an ultrametric contour map.

    Parameters
    ----------
    ucm2 : (2H+1, 2W+1) array_like of float, or a Prediction of kind 'ucm2'
        doubleSize ultrametric contour map.
    thresholds : sequence of float
        Ascending (any order works, but ascending is one pass).
    connectivity : {8, 4}, default 8
        Connectivity of the components on the doubleSize grid; 8 is ``bwlabel``'s
        default and what the official benchmark uses.

    Yields
    ------
    labels : (H, W) ndarray of int32
        0 where the pixel cell itself exceeds the threshold, else 1..K.
    k : int
        Number of regions K.
    changed : bool
        False when the partition equals the previous threshold's (same array object
        is yielded again), so callers can reuse their work.
    """
    u = _check_ucm2(ucm2)
    ths = np.asarray(thresholds, dtype=np.float64).ravel()
    if connectivity not in (4, 8):
        raise InputError(f"connectivity must be 4 or 8, not {connectivity}")
    nbrs = _NEIGHBOURS_8 if connectivity == 8 else _NEIGHBOURS_4
    rows, cols = u.shape
    values = u.ravel()
    order = np.argsort(values, kind="stable").astype(np.int64)
    h, w = (rows - 1) // 2, (cols - 1) // 2
    labels = None
    k = 0
    state = None
    prev_t = -np.inf
    for t in ths:
        if state is None or t < prev_t:  # (re)start: descending thresholds
            parent = np.full(values.size, -1, np.int64)
            size = np.zeros(values.size, np.int64)
            has_px = np.zeros(values.size, np.bool_)
            lab_of_root = np.zeros(values.size, np.int32)
            state, pos, labels = True, 0, None
        pos, changed = _activate(
            values, order, pos, float(t), parent, size, has_px, rows, cols, nbrs
        )
        prev_t = t
        if labels is None or changed:
            flat = np.empty(h * w, np.int32)
            k = int(_pixel_labels(parent, rows, cols, lab_of_root, flat))
            labels = flat.reshape(h, w)
            yield labels, k, True
        else:
            yield labels, k, False


def ucm_segmentation(ucm2, threshold: float, *, connectivity: int = 8) -> np.ndarray:
    """The segmentation of a doubleSize ucm2 at one threshold, as the official code.

    Regions are the 8-connected components of ``ucm2 <= threshold`` on the doubleSize
    grid, sampled at the pixel cells (``[1::2, 1::2]``, MATLAB's ``(2:2:end, 2:2:end)``);
    label 0 marks pixel cells above the threshold.

    Examples
    --------
    >>> import numpy as np
    >>> u = np.zeros((3, 5)); u[:, 2] = 0.5      # two pixels split by a 0.5 contour
    >>> ucm_segmentation(u, 0.4), ucm_segmentation(u, 0.6)
    (array([[1, 2]], dtype=int32), array([[1, 1]], dtype=int32))
    """
    labels, _, _ = next(ucm_levels(ucm2, [threshold], connectivity=connectivity))
    return labels
