"""Region measures from contingency tables: covering, Rand index, VI, GCE and LCE.

Every function takes either two label maps or a precomputed ``table=`` from
:func:`~segbench.region.contingency_table` (rows: the first segmentation, columns: the
second; row 0 and column 0 count void pixels), so several measures share one pass over
the pixels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..primitives import as_labels as _as_labels
from ..primitives import (
    block_offsets,
    checked_counts,
    compact_labels,
    contingency_table,
    overlaps_and_indices,
    prepare_ground_truth,
    stacked_tables,
)


def _table(a, b, table, void) -> np.ndarray:
    if table is not None:
        return checked_counts(table, "a contingency table")
    if a is None or b is None:
        raise InputError("give two label maps or table=")
    return contingency_table(a, b, void=void)


# ---------------------------------------------------------------- covering (BSDS500)


def region_overlaps(table) -> np.ndarray:
    """Overlap ``|R ∩ R'| / |R ∪ R'|`` of every pair of regions, as match_segmentations.m.

    Parameters
    ----------
    table : (S + 1, G + 1) array of int
        Contingency table (row/column 0: void pixels).

    Returns
    -------
    (S, G) ndarray of float64
        Rows: regions of the first segmentation; columns: of the second.

    Notes
    -----
    As the official code, region areas include the pixels that are void in the other
    segmentation (the union counts them), while void pixels form no region. Pairs of
    empty regions (possible only in a table not built by this package) give 0 rather
    than the official 0/0.
    """
    t = np.asarray(table, dtype=np.float64)
    area_a = t.sum(axis=1)[1:, None]
    area_b = t.sum(axis=0)[None, 1:]
    inter = t[1:, 1:]
    union = area_a + area_b - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def _best_overlaps(stacked: np.ndarray, n_gts) -> tuple[np.ndarray, ...]:
    """Covering ingredients of one segmentation against K annotators (stacked tables).

    Returns seg_area (S,), best overlap of each segment with any annotator's region (S,),
    gt_area (sum G,), best overlap of each annotator region with any segment (sum G,).
    """
    t = stacked.astype(np.float64)
    seg_area = t[:, : int(n_gts[0]) + 1].sum(axis=1)  # rows of any block: same sums
    col_area = t.sum(axis=0)
    keep = np.ones(t.shape[1], bool)
    keep[np.concatenate([[0], np.cumsum([int(g) + 1 for g in n_gts])[:-1]])] = False
    inter = t[1:, keep]
    gt_area = col_area[keep]
    union = seg_area[1:, None] + gt_area[None, :] - inter
    iou = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    s, g = iou.shape
    match_seg = iou.max(axis=1) if g else np.zeros(s)
    match_gt = iou.max(axis=0) if s else np.zeros(g)
    return seg_area[1:], match_seg, gt_area, match_gt


def covering(seg=None, gt=None, *, table=None, void=0) -> float:
    """Segmentation covering of ``gt`` by ``seg``, ``C(seg -> gt)`` (Arbeláez et al. 2011).

    ``(1/N) sum_{R in gt} |R| max_{R' in seg} O(R, R')`` with the overlap
    ``O = |R ∩ R'| / |R ∪ R'|`` and N the labelled pixels of ``gt``.

    Parameters
    ----------
    seg, gt : (H, W) label maps
        For the benchmark's "covering of the ground truth by the machine segmentation",
        ``seg`` is the machine output and ``gt`` one annotator. Swap them for the other
        direction.
    table : array, optional
        ``contingency_table(seg, gt, void=void)``, instead of the maps.
    void : int or None, default 0

    Returns
    -------
    float
        In [0, 1]; NaN when ``gt`` has no labelled pixel.

    Notes
    -----
    As match_segmentations.m; for several annotators use :func:`region_scores`, which
    pools the areas of all annotators as evaluation_reg_image.m does.

    Examples
    --------
    >>> import numpy as np
    >>> covering(np.array([[1, 1, 2, 2]]), np.array([[1, 1, 1, 1]]))
    0.5
    """
    t = _table(seg, gt, table, void)
    iou = region_overlaps(t)
    area = t[:, 1:].sum(axis=0).astype(np.float64)
    total = area.sum()
    if total == 0:
        return float("nan")
    best = iou.max(axis=0) if iou.shape[0] else np.zeros(iou.shape[1])
    return float((area * best).sum() / total)


# ---------------------------------------------------------------- Rand index, VI


def _labelled(t: np.ndarray) -> np.ndarray:
    return np.asarray(t)[1:, 1:]


def _labelled_counts(a, b, table, void, *, min_pixels: int = 1, dtype=None):
    """``(m, n)``: the labelled part of the table of ``a`` and ``b`` (or of ``table``),
    as ``dtype`` if given, and its pixel count; None with fewer than ``min_pixels``."""
    m = _labelled(_table(a, b, table, void))
    if dtype is not None:
        m = m.astype(dtype)
    n = m.sum()
    return None if n < min_pixels else (m, n)


def rand_index(seg=None, gt=None, *, table=None, void=0) -> float:
    """Rand index: the fraction of pixel pairs on which two segmentations agree.

    Parameters
    ----------
    seg, gt : (H, W) label maps
    table : array, optional
        Precomputed ``contingency_table(seg, gt, void=void)``.
    void : int or None, default 0
        Pixels void in either map are left out (match_segmentations2.m).

    Returns
    -------
    float
        In [0, 1], higher is better; NaN with fewer than two labelled pixels.

    Notes
    -----
    The formula of match_segmentations2.m (after Allen Yang):
    ``1 - (sum_i a_i^2 / 2 + sum_j b_j^2 / 2 - sum_ij n_ij^2) / (N (N - 1) / 2)``.
    Averaged over annotators it is the probabilistic Rand index
    (:func:`probabilistic_rand_index`).
    """
    counts = _labelled_counts(seg, gt, table, void, min_pixels=2)
    if counts is None:
        return float("nan")
    m, n = counts[0], int(counts[1])
    sa = float((m.sum(axis=1).astype(np.float64) ** 2).sum())
    sb = float((m.sum(axis=0).astype(np.float64) ** 2).sum())
    sab = float((m.astype(np.float64) ** 2).sum())
    return 1.0 - (sa / 2 + sb / 2 - sab) / (n * (n - 1) / 2)


def _entropy(p: np.ndarray) -> float:
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum())


def variation_of_information(seg=None, gt=None, *, table=None, void=0) -> float:
    """Variation of information ``H(S) + H(G) - 2 I(S; G)``, in bits.

    Parameters
    ----------
    seg, gt : (H, W) label maps
    table : array, optional
        Precomputed ``contingency_table(seg, gt, void=void)``.
    void : int or None, default 0
        Pixels void in either map are left out (match_segmentations2.m).

    Returns
    -------
    float
        >= 0, lower is better; NaN with no labelled pixel.

    Notes
    -----
    Base-2 logarithms, as match_segmentations2.m. scikit-image's
    ``variation_of_information`` returns the two conditional entropies (also in bits),
    whose sum this is.
    """
    counts = _labelled_counts(seg, gt, table, void, dtype=np.float64)
    if counts is None:
        return float("nan")
    m, n = counts
    joint = m / n
    pa = joint.sum(axis=1)
    pb = joint.sum(axis=0)
    nz = joint > 0
    outer = (pa[:, None] * pb[None, :])[nz]
    mi = float((joint[nz] * np.log2(joint[nz] / outer)).sum())
    return _entropy(pa) + _entropy(pb) - 2 * mi


def probabilistic_rand_index(seg, gts: Sequence, *, void=0) -> float:
    """Rand index averaged over annotators, as match_segmentations2.m.

    Equals the PRI of Unnikrishnan et al. with each pair's probability of sharing a
    region estimated by the fraction of annotators that put it in one region.
    """
    gts = list(gts)
    if not gts:
        raise InputError("no ground-truth segmentations given")
    return float(np.mean([rand_index(seg, g, void=void) for g in gts]))


# ---------------------------------------------------------------- the 2001 measures


def _refinement_sum(m: np.ndarray) -> float:
    """``sum_p E(S1, S2, p)`` with S1 the rows of the (labelled) table ``m``.

    Pixel p in cell (i, j) has ``E = (r_i - m_ij) / r_i`` (``r_i`` = size of row region
    i), so the sum is ``sum_ij m_ij (r_i - m_ij) / r_i``.
    """
    m = m.astype(np.float64)
    rows = m.sum(axis=1, keepdims=True)
    frac = np.divide(rows - m, rows, out=np.zeros_like(m), where=m > 0)
    return float((m * frac).sum())


def refinement_error(seg1=None, seg2=None, *, table=None, void=None) -> float:
    """Mean local refinement error ``(1/n) sum_i E(S1, S2, p_i)`` (2001 paper, eq. 1).

    ``E(S1, S2, p) = |R(S1, p) \\ R(S2, p)| / |R(S1, p)|``: zero where ``seg1``
    refines ``seg2``. Not symmetric: ``refinement_error(a, b)`` and
    ``refinement_error(b, a)`` are the two directions; :func:`gce` keeps the smaller.

    Parameters
    ----------
    seg1, seg2 : (H, W) label maps
    table : array, optional
        ``contingency_table(seg1, seg2, void=void)`` (rows: ``seg1``).
    void : int or None, default None
        A label marking unlabelled pixels, left out in either map (n counts the
        others). The 2001 measures have none: by default every label, 0 included, is
        a region.

    Returns
    -------
    float
        In [0, 1); NaN with no labelled pixel.
    """
    counts = _labelled_counts(seg1, seg2, table, void)
    if counts is None:
        return float("nan")
    m, n = counts
    return _refinement_sum(m) / float(n)


def local_refinement_error(seg1, seg2, *, void=None) -> np.ndarray:
    """Per-pixel local refinement error ``E(S1, S2, p)`` (2001 paper, eq. 1).

    Returns
    -------
    (H, W) ndarray of float64
        NaN at pixels void in either map. Swap the arguments for the other direction.
    """
    a = _as_labels(seg1, "seg1")
    b = _as_labels(seg2, "seg2")
    if a.shape != b.shape:
        raise InputError(f"label maps differ in shape: {a.shape} and {b.shape}")
    ca, na = compact_labels(a, void=void)
    cb, nb_ = compact_labels(b, void=void)
    t = stacked_tables(ca, na, [cb], [nb_]).astype(np.float64)
    m = t.copy()
    m[0, :] = 0
    m[:, 0] = 0
    size = m.sum(axis=1, keepdims=True)
    frac = np.divide(size - m, size, out=np.full_like(m, np.nan), where=size > 0)
    out = frac[ca, cb]
    out[(ca == 0) | (cb == 0)] = np.nan
    return out


def gce(seg1=None, seg2=None, *, table=None, void=None) -> float:
    """Global Consistency Error (2001 paper, eq. 2).

    ``min(sum_i E(S1, S2, p_i), sum_i E(S2, S1, p_i)) / n``: refinement is free when it
    goes in one direction over the whole image.

    Parameters
    ----------
    seg1, seg2 : (H, W) label maps
    table : array, optional
        ``contingency_table(seg1, seg2, void=void)``.
    void : int or None, default None
        A label marking unlabelled pixels, left out in either map. The 2001 measures
        have none: by default every label, 0 included, is a region (so 0-based maps
        such as ``.seg`` labels and scikit-image superpixels are scored right).

    Returns
    -------
    float
        In [0, 1), symmetric; 0 when one segmentation refines the other, in particular
        for one region per pixel and for one region per image. NaN with no labelled pixel.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[1, 1, 2, 2]]); b = np.array([[1, 1, 1, 1]])
    >>> gce(a, b), lce(a, b)
    (0.0, 0.0)
    """
    counts = _labelled_counts(seg1, seg2, table, void)
    if counts is None:
        return float("nan")
    m, n = counts
    return min(_refinement_sum(m), _refinement_sum(m.T)) / float(n)


def lce(seg1=None, seg2=None, *, table=None, void=None) -> float:
    """Local Consistency Error (2001 paper, eq. 3).

    ``(1/n) sum_i min(E(S1, S2, p_i), E(S2, S1, p_i))``: the direction of refinement
    may change from pixel to pixel, so mutual refinement is free. ``lce <= gce`` always.

    Parameters and return value as :func:`gce`.
    """
    counts = _labelled_counts(seg1, seg2, table, void, dtype=np.float64)
    if counts is None:
        return float("nan")
    m, n = counts
    rows = m.sum(axis=1, keepdims=True)
    cols = m.sum(axis=0, keepdims=True)
    nz = m > 0
    e12 = np.divide(rows - m, rows, out=np.zeros_like(m), where=nz)
    e21 = np.divide(cols - m, cols, out=np.zeros_like(m), where=nz)
    return float((m * np.minimum(e12, e21)).sum() / n)


# ---------------------------------------------------------------- one level, K annotators


@dataclass(frozen=True)
class RegionScores:
    """The region benchmark's numbers for one segmentation against its annotators.

    Attributes
    ----------
    covering : float
        Covering of the ground truth by the segmentation, areas pooled over annotators
        (cntR / sumR of evaluation_reg_image.m).
    covering_seg : float
        Covering of the segmentation by the ground truth, each segment matched to its
        best region of any annotator (cntP / sumP).
    pri : float
        Rand index averaged over annotators (probabilistic Rand index).
    vi : float
        Variation of information (bits) averaged over annotators.
    cnt_r, sum_r, cnt_p, sum_p : float
        The numerators and denominators of the two coverings.
    """

    covering: float
    covering_seg: float
    pri: float
    vi: float
    cnt_r: float
    sum_r: float
    cnt_p: float
    sum_p: float


def weighted_sum(weights: np.ndarray, values: np.ndarray) -> float:
    """sum(weights * values) in numpy's pairwise order, the same on every CPU.

    Not ``weights @ values``: a BLAS dot product splits its sum by the CPU's vector width
    (OpenBLAS picks its kernel at run time), so its last bit differed between an AVX-512
    and an AVX2 machine, and a record computed by one worker of a mixed cluster could
    differ from the same record computed by another. The products are exact IEEE
    operations, and numpy's pairwise sum adds in a fixed order whatever SIMD it uses.
    """
    return float(np.sum(np.multiply(weights, values, dtype=np.float64)))


def _scores_from_stacked(stacked: np.ndarray, n_gts) -> tuple[RegionScores, np.ndarray]:
    """RegionScores and the best overlap of every annotator region (for "Best").

    The overlaps, Rand indices and VIs come from one compiled pass over the tables
    (:func:`segbench.primitives.overlaps_and_indices`); the sums and means over them are
    numpy's, as :func:`_best_overlaps`, :func:`rand_index` and
    :func:`variation_of_information` take them.
    """
    offsets = block_offsets(n_gts)
    seg_area, match_seg, col_area, match_col, ris, vis = overlaps_and_indices(
        np.ascontiguousarray(stacked, dtype=np.int64), offsets
    )
    keep = np.ones(stacked.shape[1], bool)
    keep[offsets[:-1]] = False
    gt_area, match_gt = col_area[keep], match_col[keep]
    seg_area, match_seg = seg_area[1:], match_seg[1:]
    cnt_r = weighted_sum(gt_area, match_gt)
    sum_r = float(gt_area.sum())
    cnt_p = weighted_sum(seg_area, match_seg)
    sum_p = float(seg_area.sum())

    def ratio(a, b):
        return a / b if b else 0.0

    return RegionScores(
        ratio(cnt_r, sum_r),
        ratio(cnt_p, sum_p),
        float(np.mean(ris)),
        float(np.mean(vis)),
        cnt_r,
        sum_r,
        cnt_p,
        sum_p,
    ), match_gt


def region_scores(seg, gts: Sequence, *, void=0) -> RegionScores:
    """Covering, PRI and VI of one segmentation against K annotators.

    As one threshold of evaluation_reg_image.m: match_segmentations.m for the covering
    (areas pooled over all regions of all annotators, which equals the mean over
    annotators of :func:`covering` when every annotator labels every pixel) and
    match_segmentations2.m for PRI and VI (means over annotators).

    Parameters
    ----------
    seg : (H, W) label map
    gts : sequence of (H, W) label maps or HumanSegmentation
    void : int or None, default 0
        Unlabelled pixels (BSDS labels regions 1..K).

    Examples
    --------
    >>> import numpy as np
    >>> s = region_scores(np.array([[1, 1, 2, 2]]), [np.array([[1, 1, 2, 2]])])
    >>> s.covering, s.pri, s.vi
    (1.0, 1.0, 0.0)
    """
    gflat, n_gts = prepare_ground_truth(gts, void=void)
    a = _as_labels(seg, "seg")
    if a.size != gflat.shape[1]:
        raise InputError(
            f"segmentation has shape {a.shape}, the ground truth "
            f"{np.asarray(getattr(gts[0], 'segmentation', gts[0])).shape}"
        )
    ca, na = compact_labels(a, void=void)
    stacked = stacked_tables(ca, na, gflat, n_gts)
    return _scores_from_stacked(stacked, n_gts)[0]
