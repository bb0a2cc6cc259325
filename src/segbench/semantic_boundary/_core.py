"""Per-image, per-class boundary counts on the exact matcher, and their summary.

:func:`evaluate_classes` is the pure per-item function (arrays in, a
:class:`SemanticBoundaryCounts` record out); :func:`summarize_classes` pools records
into each class's ODS, OIS, AP and R50 and their means over classes (MF-ODS).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..primitives import (
    BoundaryCounts,
    default_thresholds,
    edge_nms,
    evaluate_image,
    summarize_boundary,
    thin,
)
from ._edges import kill_mask

_COUNTS = ("cnt_r", "sum_r", "cnt_p", "sum_p")


@dataclass(frozen=True)
class SemanticBoundaryCounts:
    """The boundary counts of one image, one row per class, one column per threshold.

    Attributes
    ----------
    thresholds : (T,) float64
    cnt_r, sum_r, cnt_p, sum_p : (C, T) int64
        As :class:`~segbench.boundary.BoundaryCounts`, for each class: ground-truth
        boundary pixels matched and in all, predicted pixels matched and in all. A
        class skipped (``skip_if_nonexistent``) has a row of zeros.
    kind : str
        The ground truth's kind ('sbd', 'cityscapes', 'multilabel', or '' for
        arrays), which names the classes.
    """

    thresholds: np.ndarray
    cnt_r: np.ndarray
    sum_r: np.ndarray
    cnt_p: np.ndarray
    sum_p: np.ndarray
    kind: str = ""

    @property
    def n_classes(self) -> int:
        return int(self.cnt_r.shape[0])

    def counts(self, c: int) -> BoundaryCounts:
        """Class ``c``'s (0-based) counts as a boundary record."""
        return BoundaryCounts(self.thresholds, *(getattr(self, k)[c] for k in _COUNTS))

    def to_json(self) -> dict:
        """Plain-JSON form; :meth:`from_json` restores it exactly."""
        return {
            "kind": self.kind,
            "thresholds": self.thresholds.tolist(),
            **{k: getattr(self, k).tolist() for k in _COUNTS},
        }

    @classmethod
    def from_json(cls, d: dict) -> SemanticBoundaryCounts:
        """Inverse of :meth:`to_json`.

        Raises
        ------
        ValueError
            Counts that cannot be: not (C, T) with one column per threshold, not
            non-negative integers, more pixels matched than there are, a
            ground-truth count that changes with the threshold, thresholds not finite
            and increasing.
        """
        # each class's row is a boundary record: its checks are BoundaryCounts'
        rows = [d[k] for k in _COUNTS]
        n = len(rows[0]) if isinstance(rows[0], list) else 0
        if n < 1 or any(not isinstance(r, list) or len(r) != n for r in rows):
            raise ValueError("counts are not (classes, thresholds) tables of one shape")
        classes = [
            BoundaryCounts.from_json(
                {"thresholds": d["thresholds"], **{k: d[k][c] for k in _COUNTS}}
            )
            for c in range(n)
        ]
        ths = classes[0].thresholds
        cnt_r, sum_r, cnt_p, sum_p = (
            np.stack([getattr(rec, k) for rec in classes]) for k in _COUNTS
        )
        kind = d.get("kind", "")
        if not isinstance(kind, str):
            raise ValueError("kind must be a string")
        return cls(ths, cnt_r, sum_r, cnt_p, sum_p, kind=kind)


def _getter(maps, what: str) -> Callable[[int], np.ndarray]:
    if callable(maps):
        return maps
    arr = np.asarray(maps)
    if arr.ndim != 3:
        raise InputError(
            f"{what} must be a (C, H, W) array or a function of the class, "
            f"got shape {arr.shape}"
        )
    return lambda c: arr[c]


def _killed_counts(pb, gt, kill, thresholds, max_dist: float, thin_maps: bool):
    """Counts with the predictions in ``kill`` removed from each thresholded (and
    thinned) map, as pyEdgeEval's ``kill_internal`` (after thinning). Thresholds above
    every value inside ``kill`` cannot reach it and take the one-pass sweep."""
    out = np.zeros((4, thresholds.size), np.int64)
    reach = thresholds <= pb[kill].max()
    if (~reach).any():
        c = evaluate_image(
            pb, [gt], thresholds=thresholds[~reach], max_dist=max_dist, thin=thin_maps
        )
        out[:, ~reach] = [c.cnt_r, c.sum_r, c.cnt_p, c.sum_p]
    for j in np.flatnonzero(reach):
        frame = pb >= thresholds[j]
        if thin_maps:
            frame = thin(frame)
        frame &= ~kill
        c = evaluate_image(
            frame.astype(np.float64), [gt], thresholds=[0.5], max_dist=max_dist, thin=False
        )
        out[:, j] = [c.cnt_r[0], c.sum_r[0], c.cnt_p[0], c.sum_p[0]]
    return out


def evaluate_classes(
    pred,
    gt,
    *,
    regions=None,
    n_classes: int | None = None,
    thresholds=None,
    nthresh: int = 99,
    max_dist: float = 0.02,
    thin: bool = True,
    kill_internal: bool = False,
    skip_if_nonexistent: bool = False,
    nms: bool = False,
    kind: str = "",
) -> SemanticBoundaryCounts:
    """Boundary counts of one image for every class, on segbench's exact matcher.

    Class by class, the class's soft map is matched with its ground-truth boundary map
    at every threshold (:func:`segbench.boundary.evaluate_image`, one annotator), so
    memory does not grow with the number of classes when the maps are given as
    functions.

    Parameters
    ----------
    pred : (C, H, W) array_like of float, or callable
        Soft maps in [0, 1], or ``pred(c) -> (H, W)`` for class ``c`` (0-based).
    gt : (C, H, W) array_like of bool, or callable
        Ground-truth boundary maps, or ``gt(c) -> (H, W)``.
    regions : (C, H, W) array_like of bool, or callable, optional
        Each class's pixels; needed by ``kill_internal``.
    n_classes : int, optional
        Required when ``gt`` is a function.
    thresholds : array_like, optional
        Explicit thresholds; default ``default_thresholds(nthresh)`` (0.01 .. 0.99).
    nthresh : int, default 99
    max_dist : float, default 0.02
        Matching tolerance, a fraction of the image diagonal (SBD's).
    thin : bool, default True
        Thin each thresholded map before matching (MATLAB ``bwmorph(.., 'thin', Inf)``).
    kill_internal : bool, default False
        Remove predicted pixels inside the class's region farther than ``max_dist``
        times the diagonal from its boundary, from each thresholded (and thinned) map,
        on images where the class has boundary pixels (pyEdgeEval
        ``evaluate_boundaries.py`` L89-99; SEISM ``kill_internal_bdries.m``).
    skip_if_nonexistent : bool, default False
        A class without ground-truth boundary pixels adds nothing, not even its false
        positives (the original SBD benchmark; pyEdgeEval L70-73). Otherwise its
        predicted pixels count as false positives (SEAL).
    nms : bool, default False
        Dollar's edge NMS on each soft map first (r=1, s=5, m=1.01, as pyEdgeEval's
        ``apply_nms``).
    kind : str
        Recorded in the result (names the classes).

    Returns
    -------
    SemanticBoundaryCounts

    Notes
    -----
    The counts of one class are exactly those of the boundary benchmark on that
    class's map and ground truth alone (the exact matcher: no randomness, unlike the
    CSA matcher of SEAL's and pyEdgeEval's ``correspondPixels``). A class whose map
    never reaches the lowest threshold gets its ground-truth count and zeros without
    matching, as the matcher would give.
    """
    ths = (
        default_thresholds(nthresh)
        if thresholds is None
        else np.asarray(thresholds, dtype=np.float64).ravel()
    )
    get_gt, get_pred = _getter(gt, "gt"), _getter(pred, "pred")
    if n_classes is None:
        if callable(gt):
            raise InputError("n_classes is required when gt is a function")
        n_classes = np.asarray(gt).shape[0]
    get_region = None if regions is None else _getter(regions, "regions")
    if kill_internal and get_region is None:
        raise InputError("kill_internal needs the classes' regions")
    out = np.zeros((4, n_classes, ths.size), np.int64)
    for c in range(n_classes):
        g = np.asarray(get_gt(c), dtype=bool)
        if skip_if_nonexistent and not g.any():
            continue
        p = np.asarray(get_pred(c), dtype=np.float64)
        if p.shape != g.shape:
            raise InputError(
                f"class {c + 1}: prediction {p.shape} and ground truth "
                f"{g.shape} differ in size"
            )
        if nms:
            p = edge_nms(p).astype(np.float64)
        if p.max(initial=0.0) < ths[0]:  # nothing detected at any threshold
            out[1, c] = np.count_nonzero(g)
            continue
        # kill_internal implies get_region (checked above)
        kill = (
            kill_mask(g, get_region(c), max_dist)
            if kill_internal and get_region is not None and g.any()
            else None
        )
        if kill is not None and kill.any():
            out[:, c] = _killed_counts(p, g, kill, ths, max_dist, thin)
        else:
            r = evaluate_image(p, [g], thresholds=ths, max_dist=max_dist, thin=thin)
            out[:, c] = [r.cnt_r, r.sum_r, r.cnt_p, r.sum_p]
    return SemanticBoundaryCounts(ths, out[0], out[1], out[2], out[3], kind=kind)


# -- summary ----------------------------------------------------------------------------


@dataclass
class SemanticBoundarySummary:
    """Each class's boundary summary and their means.

    Attributes
    ----------
    names : tuple of str
    classes : list of BoundarySummary or None
        The boundary summary of each class over every image (ODS, OIS, AP, R50, PR
        curve, per-image bests); None for a class with no ground-truth boundary pixel
        in any image (its scores are NaN, left out of the means).
    table : list of dict
        One row per class: ``class`` (1-based), ``name``, ``ODS``, ``ODS_threshold``,
        ``ODS_recall``, ``ODS_precision``, ``OIS``, ``AP``, ``R50``, ``n_images``
        (images whose ground truth has the class's boundaries).
    metrics : dict
        ``MF_ODS``, ``MF_OIS``, ``MAP`` (NaN-means over classes), ``n_classes``,
        ``n_classes_scored``, then ``ODS_<name>``, ``OIS_<name>``, ``AP_<name>``.
    per_image_f : (N,) array
        Each image's mean, over the classes in its ground truth, of their best F on
        it (interpolated, as ODS); NaN for an image with none.
    """

    names: tuple
    classes: list
    table: list
    metrics: dict
    per_image_f: np.ndarray = field(default_factory=lambda: np.zeros(0))


def _check_records(records) -> tuple[int, str]:
    if not records:
        raise InputError("no per-image records to summarize")
    first = records[0]
    for r in records[1:]:
        if (
            r.n_classes != first.n_classes
            or r.kind != first.kind
            or not np.array_equal(r.thresholds, first.thresholds)
        ):
            raise InputError("per-image records of different classes or thresholds")
    return first.n_classes, first.kind


def _nanmean(values) -> float:
    v = np.asarray(values, dtype=np.float64)
    return float(np.mean(v[~np.isnan(v)])) if (~np.isnan(v)).any() else float("nan")


def summarize_classes(
    records, ids=None, *, names=None, alpha: float = 0.5
) -> SemanticBoundarySummary:
    """Pool per-image records into each class's scores and their means over classes.

    Parameters
    ----------
    records : sequence of SemanticBoundaryCounts
    ids : sequence of str, optional
    names : sequence of str, optional
        Class names (default ``class_001``, ...).
    alpha : float, default 0.5
        The F-measure's weight.

    Returns
    -------
    SemanticBoundarySummary

    Notes
    -----
    Each class is summarized as the boundary benchmark summarizes images
    (``collect_eval_bdry.m``: ODS interpolated between thresholds, OIS at each image's
    first best sampled threshold, BSR's AP), over every image, as SEAL's
    ``benchmark_category.m`` and pyEdgeEval do; the means over classes are
    ``nanmean``, as pyEdgeEval (``evaluators/base.py`` L123-146): a class with no
    ground-truth boundary pixel in any image is NaN and left out, where SEAL's
    ``mean(result_f)`` would count it as 0 (never the case on the full SBD or
    Cityscapes sets, where every class occurs). pyEdgeEval's "AP" column is a
    VOC-style interpolated precision, not this AP; its "AUC" is close to it.
    """
    records = list(records)
    n_classes, _ = _check_records(records)
    ids = [str(i + 1) for i in range(len(records))] if ids is None else list(ids)
    names = (
        tuple(names)
        if names is not None
        else tuple(f"class_{k:03d}" for k in range(1, n_classes + 1))
    )
    present = np.array([r.sum_r[:, 0] > 0 for r in records]).reshape(
        len(records), n_classes
    )
    classes: list = []  # a BoundarySummary, or None, per class
    table: list[dict] = []
    best_f = np.full((len(records), n_classes), np.nan)
    for c in range(n_classes):
        n_img = int(present[:, c].sum())
        if n_img == 0:
            classes.append(None)
            table.append(
                {
                    "class": c + 1,
                    "name": names[c],
                    "ODS": np.nan,
                    "ODS_threshold": np.nan,
                    "ODS_recall": np.nan,
                    "ODS_precision": np.nan,
                    "OIS": np.nan,
                    "AP": np.nan,
                    "R50": np.nan,
                    "n_images": 0,
                }
            )
            continue
        s = summarize_boundary([r.counts(c) for r in records], ids, alpha=alpha)
        classes.append(s)
        m = s.metrics()
        table.append(
            {
                "class": c + 1,
                "name": names[c],
                "ODS": m["ODS"],
                "ODS_threshold": m["ODS_threshold"],
                "ODS_recall": m["ODS_recall"],
                "ODS_precision": m["ODS_precision"],
                "OIS": m["OIS"],
                "AP": m["AP"],
                "R50": m["R50"],
                "n_images": n_img,
            }
        )
        best_f[present[:, c], c] = s.per_image[present[:, c], 3]
    metrics = {
        "MF_ODS": _nanmean([t["ODS"] for t in table]),
        "MF_OIS": _nanmean([t["OIS"] for t in table]),
        "MAP": _nanmean([t["AP"] for t in table]),
        "n_classes": n_classes,
        "n_classes_scored": int(sum(s is not None for s in classes)),
    }
    for key in ("ODS", "OIS", "AP"):
        metrics.update({f"{key}_{t['name']}": t[key] for t in table})
    per_image = np.array([_nanmean(row) for row in best_f]) if len(records) else np.zeros(0)
    return SemanticBoundarySummary(names, classes, table, metrics, per_image)


def _f(r, p, alpha: float):
    if alpha == 0.5:
        s = p + r
        return 2 * p * r / (s + (s == 0))
    den = alpha * r + (1 - alpha) * p
    return p * r / (den + (den == 0))


def _ratio(num, den):
    return num / (den + (den == 0))


def _best_f_rows(recall, precision, alpha: float) -> np.ndarray:
    """The best F of each row of (B, T) PR curves, with 100 points interpolated
    between neighbouring thresholds (``maxF`` of ``collect_eval_bdry.m``)."""
    best = _f(recall[:, 0], precision[:, 0], alpha)
    if recall.shape[1] < 2:
        return best
    d = np.linspace(0.0, 1.0, 100)
    ri = recall[:, 1:, None] * d + recall[:, :-1, None] * (1 - d)
    pi = precision[:, 1:, None] * d + precision[:, :-1, None] * (1 - d)
    return np.maximum(best, _f(ri, pi, alpha).reshape(len(recall), -1).max(axis=1))


def resampler(records, *, alpha: float = 0.5):
    """The bootstrap statistic of a run: (B, N) image weights -> ``MF_ODS`` and
    ``MF_OIS`` per draw, the means over classes :func:`summarize_classes` gives on the
    drawn images (weighted sums of the per-image counts instead of copies)."""
    records = list(records)
    n_classes, _ = _check_records(records)
    stacks = []
    for c in range(n_classes):
        cnt = np.stack(
            [np.column_stack([getattr(r, k)[c] for k in _COUNTS]) for r in records]
        ).astype(np.float64)  # (N, T, 4)
        f = _f(_ratio(cnt[..., 0], cnt[..., 1]), _ratio(cnt[..., 2], cnt[..., 3]), alpha)
        best_rows = cnt[np.arange(len(cnt)), np.argmax(f, axis=1)]  # (N, 4)
        stacks.append((cnt.reshape(len(cnt), -1), best_rows, cnt.shape[1]))

    def statistic(weights: np.ndarray) -> dict:
        w = np.asarray(weights, dtype=np.float64)
        ods = np.full((n_classes, len(w)), np.nan)
        ois = np.full((n_classes, len(w)), np.nan)
        for c, (flat, best_rows, t) in enumerate(stacks):
            total = (w @ flat).reshape(len(w), t, 4)
            scored = total[:, 0, 1] > 0
            r = _ratio(total[..., 0], total[..., 1])
            p = _ratio(total[..., 2], total[..., 3])
            ods[c] = np.where(scored, _best_f_rows(r, p, alpha), np.nan)
            pooled = w @ best_rows
            ois[c] = np.where(
                scored,
                _f(
                    _ratio(pooled[:, 0], pooled[:, 1]),
                    _ratio(pooled[:, 2], pooled[:, 3]),
                    alpha,
                ),
                np.nan,
            )
        return {
            "MF_ODS": np.array([_nanmean(col) for col in ods.T]),
            "MF_OIS": np.array([_nanmean(col) for col in ois.T]),
        }

    return statistic
