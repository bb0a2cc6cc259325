"""Per-image region record at every threshold, as ``evaluation_reg_image.m``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..primitives import (
    coarser_tables,
    compact_labels,
    default_thresholds,  # the same thresholds (re-exported)
    prepare_ground_truth,
    stacked_tables,
)
from ._levels import ucm_levels
from ._measures import _scores_from_stacked, weighted_sum


@dataclass(frozen=True)
class RegionRecord:
    """Everything ``collect_eval_reg.m`` needs from one image, one entry per threshold.

    Attributes
    ----------
    thresholds : (T,) float64
        ucm2 thresholds, or 1..T for a list of segmentations.
    cnt_r, sum_r : (T,) float64
        Covering of the ground truth by the segmentation: sum over every region of every
        annotator of area x best overlap, and the total area (``_ev2.txt`` columns 2-3).
    cnt_p, sum_p : (T,) float64
        Covering of the segmentation by the ground truth: sum over segments of area x
        best overlap with a region of any annotator, and the labelled area (columns 4-5).
    cnt_r_best : float
        Sum over annotator regions of area x best overlap over *all* thresholds
        (``_ev3.txt``; the "Best" covering's numerator).
    ri, voi : (T,) float64
        Rand index and variation of information (bits), each averaged over annotators
        (``_ev4.txt``).
    n_regions : (T,) int64
        Regions of the segmentation at each threshold (not in the official files).
    """

    thresholds: np.ndarray
    cnt_r: np.ndarray
    sum_r: np.ndarray
    cnt_p: np.ndarray
    sum_p: np.ndarray
    cnt_r_best: float
    ri: np.ndarray
    voi: np.ndarray
    n_regions: np.ndarray | None = None

    def ev2_table(self) -> np.ndarray:
        """``(T, 5)``: threshold, cntR, sumR, cntP, sumP (the ``_ev2.txt`` rows)."""
        return np.column_stack(
            [self.thresholds, self.cnt_r, self.sum_r, self.cnt_p, self.sum_p]
        )

    def ev4_table(self) -> np.ndarray:
        """``(T, 3)``: threshold, RI, VOI (the ``_ev4.txt`` rows)."""
        return np.column_stack([self.thresholds, self.ri, self.voi])

    @classmethod
    def from_tables(cls, ev2, ev3, ev4) -> RegionRecord:
        """Inverse of :meth:`ev2_table` / :meth:`ev4_table` (e.g. official files)."""
        a = np.asarray(ev2, dtype=np.float64)
        b = np.asarray(ev4, dtype=np.float64)
        if (
            a.ndim != 2
            or a.shape[1] != 5
            or b.ndim != 2
            or b.shape[1] != 3
            or a.shape[0] != b.shape[0]
        ):
            raise InputError(
                f"region tables have 5 and 3 columns and equal rows, got "
                f"shapes {a.shape} and {b.shape}"
            )
        best = float(np.asarray(ev3, dtype=np.float64).ravel()[0])
        return cls(
            a[:, 0].copy(),
            a[:, 1].copy(),
            a[:, 2].copy(),
            a[:, 3].copy(),
            a[:, 4].copy(),
            best,
            b[:, 1].copy(),
            b[:, 2].copy(),
        )

    def to_json(self) -> dict:
        """Plain-JSON form (lists of floats); :meth:`from_json` restores it exactly."""
        d = {
            k: getattr(self, k).tolist()
            for k in ("thresholds", "cnt_r", "sum_r", "cnt_p", "sum_p", "ri", "voi")
        }
        d["cnt_r_best"] = float(self.cnt_r_best)
        if self.n_regions is not None:
            d["n_regions"] = self.n_regions.tolist()
        return d

    @classmethod
    def from_json(cls, d: dict) -> RegionRecord:
        """Inverse of :meth:`to_json`.

        Raises
        ------
        ValueError
            On a payload that cannot be a record: lists of unequal length, values that
            are not finite, thresholds that do not increase, a covering numerator
            outside [0, its area] (cntR > sumR, cntP > sumP, the best covering's above
            the area), a Rand index outside [0, 1], a negative VI, or region counts
            that are not positive integers.
        """
        arr = {
            k: np.asarray(d[k], dtype=np.float64)
            for k in ("thresholds", "cnt_r", "sum_r", "cnt_p", "sum_p", "ri", "voi")
        }
        n = arr["thresholds"].shape
        if len(n) != 1 or n[0] == 0 or any(a.shape != n for a in arr.values()):
            raise ValueError(
                "region record lists are not of equal length, one entry per threshold"
            )
        best = float(d["cnt_r_best"])
        if not (all(np.isfinite(a).all() for a in arr.values()) and np.isfinite(best)):
            raise ValueError("region record values must be finite")
        if (np.diff(arr["thresholds"]) <= 0).any():
            raise ValueError("thresholds must increase")
        # sums of area x overlap (overlap <= 1): within rounding of their area
        slack = 1e-9 * max(1.0, float(arr["sum_r"].max()), float(arr["sum_p"].max()))
        if (
            ((arr["cnt_r"] < 0) | (arr["cnt_r"] > arr["sum_r"] + slack)).any()
            or ((arr["cnt_p"] < 0) | (arr["cnt_p"] > arr["sum_p"] + slack)).any()
            or not 0 <= best <= float(arr["sum_r"].max()) + slack
        ):
            raise ValueError(
                "a covering numerator exceeds its area (cntR > sumR, "
                "cntP > sumP) or is negative"
            )
        eps = 1e-9  # RI and VI of equal segmentations, within rounding
        if ((arr["ri"] < -eps) | (arr["ri"] > 1 + eps)).any() or (arr["voi"] < -eps).any():
            raise ValueError("the Rand index must be in [0, 1] and VI non-negative")
        nreg = d.get("n_regions")
        if nreg is not None:
            raw = np.asarray(nreg, dtype=np.float64)
            if (
                raw.shape != n
                or not np.isfinite(raw).all()
                or (raw < 1).any()
                or (raw != np.round(raw)).any()
            ):
                raise ValueError("n_regions must hold one positive integer per threshold")
            nreg = raw.astype(np.int64)
        return cls(cnt_r_best=best, n_regions=nreg, **arr)


def _levels(pred, shape, thresholds, void):
    """(thresholds, iterator of (labels, k, changed)) for any accepted prediction."""
    kind = getattr(pred, "kind", None)
    if kind == "soft":
        raise InputError(
            "the region benchmark needs a hierarchy (ucm2) or segmentations; "
            "got a soft boundary map",
            getattr(pred, "source", None),
        )
    if kind == "ucm2":
        return thresholds, ucm_levels(pred.ucm2, thresholds)
    if kind == "segs" or isinstance(pred, (list, tuple)):
        segs = list(pred.segs if kind == "segs" else pred)
        if not segs:
            raise InputError("the list of segmentations is empty")
        return (
            np.arange(1, len(segs) + 1, dtype=np.float64),
            ((*compact_labels(s, void=void), True) for s in segs),
        )
    arr = np.asarray(pred)
    h, w = shape
    if arr.shape == (2 * h + 1, 2 * w + 1):
        return thresholds, ucm_levels(arr, thresholds)
    if arr.shape == (h, w):
        return np.ones(1), iter([(*compact_labels(arr, void=void), True)])
    raise InputError(
        f"prediction has shape {arr.shape}; expected a label map {h}x{w} or "
        f"a doubleSize ucm2 {2 * h + 1}x{2 * w + 1}"
    )


def evaluate_image(
    pred, gts, *, nthresh: int = 99, thresholds=None, void=0
) -> RegionRecord:
    """Region record of one image at every threshold, as ``evaluation_reg_image.m``.

    Parameters
    ----------
    pred : Prediction, list of label maps, or ndarray
        A hierarchy or a set of segmentations: a ``Prediction`` of kind 'ucm2' (cut at
        every threshold, regions as :func:`ucm_segmentation`) or 'segs' (one
        "threshold" per segmentation, numbered 1..T); a list of (H, W) label maps; a
        doubleSize (2H+1, 2W+1) ucm2 array; or one (H, W) label map.
    gts : sequence of HumanSegmentation or (H, W) label maps
        The annotators (``read_ground_truth``).
    nthresh : int, default 99
        Number of ucm2 thresholds (``default_thresholds``); ignored for segmentations.
    thresholds : array_like, optional
        Explicit ucm2 thresholds, overriding ``nthresh``.
    void : int or None, default 0
        Unlabelled pixels in segmentations and ground truth (BSDS: label 0).

    Returns
    -------
    RegionRecord

    Notes
    -----
    For each threshold the segmentation is compared with every annotator through one
    contingency table per (segmentation, annotator) pair; thresholds that leave the
    partition unchanged reuse the previous threshold's numbers.
    """
    gflat, n_gts = prepare_ground_truth(gts, void=void)
    g0 = np.asarray(getattr(gts[0], "segmentation", gts[0]))
    shape = g0.shape
    ths = (
        default_thresholds(nthresh)
        if thresholds is None
        else np.asarray(thresholds, dtype=np.float64).ravel()
    )
    ths, levels = _levels(pred, shape, ths, void)
    gt_area = np.concatenate(
        [np.bincount(g, minlength=n + 1)[1:] for g, n in zip(gflat, n_gts)]
    ).astype(np.float64)
    n_t = len(ths)
    out = np.zeros((6, n_t))
    nreg = np.zeros(n_t, np.int64)
    best = np.zeros(int(sum(n_gts)))
    row = None
    prev = stacked = None
    kind = getattr(pred, "kind", None)
    hierarchy = kind == "ucm2" or (
        kind is None
        and not isinstance(pred, (list, tuple))
        and np.shape(pred) == (2 * shape[0] + 1, 2 * shape[1] + 1)
    )
    for t, (labels, k, changed) in enumerate(levels):
        if labels.shape != shape:
            raise InputError(
                f"segmentation {t + 1} is {labels.shape[0]}x{labels.shape[1]}"
                f" but the ground truth is {shape[0]}x{shape[1]}",
                getattr(pred, "source", None),
            )
        if changed:
            # the cuts of a hierarchy at rising thresholds are nested: each level's
            # tables are the previous level's with rows merged (checked pixel by pixel;
            # counted from the pixels where they are not)
            if hierarchy and prev is not None:
                stacked = coarser_tables(prev, stacked, labels, k, gflat, n_gts)
            else:
                stacked = stacked_tables(labels, k, gflat, n_gts)
            prev = labels
            sc, match_gt = _scores_from_stacked(stacked, n_gts)
            row = (sc.cnt_r, sc.sum_r, sc.cnt_p, sc.sum_p, sc.pri, sc.vi)
            np.maximum(best, match_gt, out=best)
        out[:, t] = row
        nreg[t] = k
    return RegionRecord(
        ths.copy(),
        out[0],
        out[1],
        out[2],
        out[3],
        weighted_sum(gt_area, best),
        out[4],
        out[5],
        nreg,
    )


def human_region(gts, *, void=0) -> np.ndarray:
    """Each annotator scored against the others with the region measures.

    Every annotator's segmentation is treated as the machine segmentation and compared
    with the remaining annotators of the image, as :func:`evaluate_image` does at one
    threshold.

    Returns
    -------
    (K, 6) ndarray of float64
        Per annotator: cntR, sumR, cntP, sumP (covering numerators and denominators),
        PRI and VI against the others. Empty (0, 6) with fewer than two annotators.
    """
    gflat, n_gts = prepare_ground_truth(gts, void=void)
    k_ann = len(n_gts)
    rows = []
    if k_ann < 2:
        return np.zeros((0, 6))
    for j in range(k_ann):
        others = [i for i in range(k_ann) if i != j]
        stacked = stacked_tables(
            gflat[j], n_gts[j], gflat[others], [n_gts[i] for i in others]
        )
        sc, _ = _scores_from_stacked(stacked, [n_gts[i] for i in others])
        rows.append((sc.cnt_r, sc.sum_r, sc.cnt_p, sc.sum_p, sc.pri, sc.vi))
    return np.asarray(rows, dtype=np.float64)
