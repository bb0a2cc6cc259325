"""Contingency tables of two label maps: the one pass over the pixels every measure shares
(the region benchmark, the 2001 consistency measures and the superpixel measures)."""

from __future__ import annotations

import numba as nb
import numpy as np

from ..compilation import prepare_kernels
from ..errors import InputError
from ._labels import as_labels as _as_labels
from ._labels import compact_labels

prepare_kernels()

#: Above this many table cells a dense table is refused (about 1 GB of int64).
_MAX_CELLS = 128_000_000


def checked_counts(table, what: str) -> np.ndarray:
    """``table`` as a 2-D int64 array of non-negative counts, or an InputError that calls
    it ``what`` ("a contingency table", "an overlap table")."""
    t = np.asarray(table)
    if t.ndim != 2 or t.shape[0] < 1 or t.shape[1] < 1:
        raise InputError(f"{what} is a 2-D array, got shape {t.shape}")
    if not np.issubdtype(t.dtype, np.integer) or (t < 0).any():
        raise InputError(f"{what} holds non-negative integer counts")
    return t.astype(np.int64, copy=False)


@nb.njit(cache=True)
def _stack_tables(seg, n_seg, gts, col_offset, n_cols):
    """Counts of (seg label, annotator k's label) for every k, side by side.

    ``seg`` (n,) int32 in 0..n_seg, ``gts`` (K, n) int32, annotator k's labels in columns
    ``col_offset[k] + label``.
    """
    n = seg.size
    k_ann = gts.shape[0]
    out = np.zeros((n_seg + 1, n_cols), np.int64)
    for p in range(n):
        s = seg[p]
        for k in range(k_ann):
            out[s, col_offset[k] + gts[k, p]] += 1
    return out


@nb.njit(cache=True)
def _merged_tables(prev, prev_table, cur, n_cur, gts, col_offset):
    """:func:`_stack_tables` of ``cur`` from the tables of ``prev``, a finer partition.

    Every region of ``prev`` lies in one region of ``cur`` (a ucm2 cut at a higher
    threshold), so its row of counts moves whole into that region's row; only pixels
    void in ``prev`` are counted one by one. Returns an empty table when ``cur`` is not
    coarser than ``prev`` (the caller then counts every pixel).
    """
    n = cur.size
    k_ann = gts.shape[0]
    s_prev, n_cols = prev_table.shape
    dest = np.full(s_prev, -1, np.int64)
    out = np.zeros((n_cur + 1, n_cols), np.int64)
    for p in range(n):
        a = prev[p]
        c = cur[p]
        if a == 0:
            for k in range(k_ann):
                out[c, col_offset[k] + gts[k, p]] += 1
            continue
        d = dest[a]
        if d < 0:
            dest[a] = c
        elif d != c:
            return np.zeros((0, n_cols), np.int64)
    for a in range(1, s_prev):
        d = dest[a]
        if d < 0:
            continue
        for j in range(n_cols):
            out[d, j] += prev_table[a, j]
    return out


@nb.njit(cache=True)
def overlaps_and_indices(t, offsets):
    """One pass over stacked tables (see :func:`stacked_tables`): the covering overlaps
    and, per annotator block, the Rand index and variation of information.

    Returns ``(seg_area, match_seg, col_area, match_col, ri, vi)``: row areas (block 0's
    columns, void included), each row's best overlap |R ∩ R'| / |R ∪ R'| with a labelled
    column of any block, column areas and each column's best overlap with a labelled
    row (0 for void columns), and the Rand index and VI (bits) of each block's labelled
    part (NaN below 2 / 1 labelled pixels). The formulas are those of
    :func:`rand_index` and :func:`variation_of_information`; only cells with pixels are
    visited beyond one scan (an empty cell has overlap 0 and adds nothing).
    """
    s1, c = t.shape
    k_ann = offsets.size - 1
    seg_area = np.zeros(s1)
    for i in range(s1):
        acc = 0
        for j in range(offsets[0], offsets[1]):
            acc += t[i, j]
        seg_area[i] = acc
    col_int = np.zeros(c, np.int64)  # labelled rows only, per column
    col_area = np.zeros(c)
    for i in range(s1):
        for j in range(c):
            col_area[j] += t[i, j]
            if i:
                col_int[j] += t[i, j]
    match_seg = np.zeros(s1)
    match_col = np.zeros(c)
    ri = np.empty(k_ann)
    vi = np.empty(k_ann)
    for k in range(k_ann):
        a, b = offsets[k] + 1, offsets[k + 1]
        n = 0
        sa = 0.0
        sab = 0.0
        for i in range(1, s1):
            r = 0
            for j in range(a, b):
                v = t[i, j]
                if v:
                    r += v
                    fv = np.float64(v)
                    sab += fv * fv
                    iou = fv / (seg_area[i] + col_area[j] - fv)
                    if iou > match_seg[i]:
                        match_seg[i] = iou
                    if iou > match_col[j]:
                        match_col[j] = iou
            n += r
            sa += np.float64(r) * np.float64(r)
        sb = 0.0
        for j in range(a, b):
            sb += np.float64(col_int[j]) * np.float64(col_int[j])
        ri[k] = np.nan if n < 2 else 1.0 - (sa / 2 + sb / 2 - sab) / (n * (n - 1) / 2)
        if n == 0:
            vi[k] = np.nan
            continue
        fn = np.float64(n)
        hb = 0.0
        for j in range(a, b):
            if col_int[j]:
                q = col_int[j] / fn
                hb -= q * np.log2(q)
        ha = 0.0
        mi = 0.0
        for i in range(1, s1):
            r = 0
            for j in range(a, b):
                r += t[i, j]
            if r == 0:
                continue
            pa = r / fn
            ha -= pa * np.log2(pa)
            for j in range(a, b):
                v = t[i, j]
                if v:
                    joint = v / fn
                    mi += joint * np.log2(joint / (pa * (col_int[j] / fn)))
        vi[k] = ha + hb - 2 * mi
    return seg_area, match_seg, col_area, match_col, ri, vi


def contingency_table(seg, gt, *, void=0) -> np.ndarray:
    """Joint histogram of two label maps.

    Parameters
    ----------
    seg, gt : (H, W) array_like of int
        Two segmentations of the same image (e.g. a machine segmentation and one
        annotator). Only equality of labels matters.
    void : int or None, default 0
        Label of unlabelled pixels in either map (BSDS: 0, as the official code, whose
        segmentations and ground truth are labelled 1..K). None: every label is a region.

    Returns
    -------
    (S + 1, G + 1) ndarray of int64
        ``table[i, j]`` = pixels in region i of ``seg`` and region j of ``gt``, regions
        numbered 1.. in increasing label order; row 0 and column 0 count void pixels
        (all zero when ``void`` is None or absent).

    Notes
    -----
    One pass over the pixels (a compiled loop, no Python loop per pixel). Every measure
    of :mod:`segbench.region` accepts this table as ``table=``, so several measures
    share it. Regions with no pixels are dropped; no measure depends on them.

    Examples
    --------
    >>> import numpy as np
    >>> contingency_table(np.array([[1, 1, 2]]), np.array([[1, 2, 2]]))
    array([[0, 0, 0],
           [0, 1, 1],
           [0, 0, 1]])
    """
    a = _as_labels(seg, "seg")
    b = _as_labels(gt, "gt")
    if a.shape != b.shape:
        raise InputError(f"label maps differ in shape: {a.shape} and {b.shape}")
    ca, na = compact_labels(a, void=void)
    cb, nb_ = compact_labels(b, void=void)
    return stacked_tables(ca, na, [cb], [nb_])


def stacked_tables(seg, n_seg: int, gts, n_gts) -> np.ndarray:
    """Tables of one compact segmentation against several compact ones, side by side.

    ``seg`` and each of ``gts`` are compact label maps (0 = void, 1..K) as
    :func:`compact_labels` returns; the result has ``n_seg + 1`` rows and
    ``sum(n_gt + 1)`` columns, annotator k's table in the columns
    ``offset_k .. offset_k + n_gt_k`` (see :func:`split_tables`).
    """
    n_gts = [int(g) for g in n_gts]
    offsets = np.concatenate([[0], np.cumsum([g + 1 for g in n_gts])]).astype(np.int64)
    cells = (int(n_seg) + 1) * int(offsets[-1])
    if cells > _MAX_CELLS:
        n_gt = sum(n_gts)
        larger = "segmentation" if n_seg >= max(n_gts) else "ground truth"
        raise InputError(
            f"contingency tables too large: {n_seg} regions in the segmentation "
            f"against {n_gt} in the ground truth's {len(n_gts)} annotator(s); is the "
            f"{larger}'s label map a soft map or an image by mistake?"
        )
    flat_gts = _flat_gts(gts)
    seg = np.asarray(seg, np.int32).ravel()
    return _stack_tables(seg, int(n_seg), flat_gts, offsets[:-1], int(offsets[-1]))


def _flat_gts(gts) -> np.ndarray:
    """(K, n) int32 annotator maps; an array already so is used as it is."""
    if (
        isinstance(gts, np.ndarray)
        and gts.ndim == 2
        and gts.dtype == np.int32
        and gts.flags.c_contiguous
    ):
        return gts
    return np.stack([np.asarray(g, np.int32).ravel() for g in gts])


def block_offsets(n_gts) -> np.ndarray:
    """First column of each annotator's block in stacked tables, then the width."""
    return np.concatenate([[0], np.cumsum([int(g) + 1 for g in n_gts])]).astype(np.int64)


def coarser_tables(prev, prev_table, seg, n_seg: int, gts, n_gts) -> np.ndarray:
    """:func:`stacked_tables` of ``seg`` given those of ``prev``, a partition finer
    than it (a lower ucm2 threshold); counted from the pixels when it is not."""
    offsets = block_offsets(n_gts)
    flat = _flat_gts(gts)
    cur = np.asarray(seg, np.int32).ravel()
    out = _merged_tables(
        np.asarray(prev, np.int32).ravel(), prev_table, cur, int(n_seg), flat, offsets[:-1]
    )
    if out.shape[0] == 0:
        return stacked_tables(cur, n_seg, flat, n_gts)
    return out


def split_tables(stacked: np.ndarray, n_gts) -> list[np.ndarray]:
    """Views of the per-annotator tables in a :func:`stacked_tables` result."""
    out, start = [], 0
    for g in n_gts:
        out.append(stacked[:, start : start + int(g) + 1])
        start += int(g) + 1
    return out


def prepare_ground_truth(gts, *, void=0) -> tuple[np.ndarray, list[int]]:
    """Compact the annotators' label maps once: ``(K, H*W)`` int32 and region counts.

    ``gts`` holds (H, W) label maps or objects with ``.segmentation`` (as
    :func:`segbench.io.read_ground_truth` returns).
    """
    maps = [np.asarray(getattr(g, "segmentation", g)) for g in gts]
    if not maps:
        raise InputError("no ground-truth segmentations given")
    shape = maps[0].shape
    flat, counts = [], []
    for k, m in enumerate(maps):
        if m.shape != shape:
            raise InputError(
                f"ground-truth segmentations differ in shape: {shape} and "
                f"{m.shape} (annotator {k + 1})"
            )
        c, n = compact_labels(m, void=void)
        flat.append(c.ravel())
        counts.append(n)
    return np.stack(flat), counts
