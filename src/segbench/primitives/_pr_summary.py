"""Dataset scores from per-image counts, as ``collect_eval_bdry.m``."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError


def bsr_ratio(num, den):
    """``num / den`` with 0 where ``den == 0``, as the BSR code's ``x ./ (y + (y==0))``."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    return num / (den + (den == 0))


def f_measure(recall, precision, alpha: float = 0.5):
    """F-measure ``P R / (alpha R + (1 - alpha) P)``, 0 where the denominator is 0.

    ``alpha = 0.5`` is the harmonic mean ``2PR / (P + R)`` of every BSDS paper, computed
    in that form (BSR's ``fmeasure``), so its bits equal the official numbers; other
    values weight precision (alpha -> 1) or recall (alpha -> 0), as van Rijsbergen's
    F_alpha in Martin et al. (2004).
    """
    r = np.asarray(recall, dtype=np.float64)
    p = np.asarray(precision, dtype=np.float64)
    if alpha == 0.5:
        s = p + r
        return 2 * p * r / (s + (s == 0))
    den = alpha * r + (1 - alpha) * p
    return p * r / (den + (den == 0))


def check_alpha(alpha: float) -> None:
    """InputError unless 0 < ``alpha`` < 1."""
    if not 0 < alpha < 1:
        raise InputError(
            f"alpha (the F-measure's weight of precision) must be in (0, 1), got {alpha!r}"
        )


def max_f(thresholds, recall, precision, alpha: float = 0.5):
    """Best F along a PR curve, interpolating between neighbouring thresholds.

    As ``maxF`` in ``collect_eval_bdry.m``: besides the sampled points, 100 evenly
    spaced points (``linspace(0, 1)``) between each pair of neighbouring thresholds
    are tried, with threshold, recall and precision interpolated linearly; the first
    strict maximum wins. ``alpha`` is the weight of :func:`f_measure`.

    Returns
    -------
    (threshold, recall, precision, f) : tuple of float
    """
    t = np.asarray(thresholds, dtype=np.float64)
    r = np.asarray(recall, dtype=np.float64)
    p = np.asarray(precision, dtype=np.float64)
    best = (t[0], r[0], p[0], float(f_measure(r[0], p[0], alpha)))
    if t.size < 2:
        return best
    d = np.linspace(0.0, 1.0, 100)
    # rows: segment i (between i and i+1); columns: the 100 interpolation points
    ti = t[1:, None] * d + t[:-1, None] * (1 - d)
    ri = r[1:, None] * d + r[:-1, None] * (1 - d)
    pi = p[1:, None] * d + p[:-1, None] * (1 - d)
    fi = f_measure(ri, pi, alpha)
    k = int(np.argmax(fi))  # first maximum in MATLAB's loop order (segment, then d)
    if fi.flat[k] > best[3]:
        best = (ti.flat[k], ri.flat[k], pi.flat[k], float(fi.flat[k]))
    return tuple(float(x) for x in best)


def average_precision(
    recall, precision, *, corrected: bool = False, unique_keep: str = "first"
) -> float:
    """Area under the PR curve as ``collect_eval_bdry.m`` computes it.

    Precision is taken at the unique recall values, interpolated linearly at recall
    0, 0.01, ..., 1; samples outside the measured recall range count as 0; the 101
    samples are summed and multiplied by 0.01.

    Parameters
    ----------
    recall, precision : (T,) array_like
        The dataset PR curve, one point per threshold.
    corrected : bool, default False
        Divide the 101-sample sum by 101 instead of 100. The BSR code (and therefore
        every published BSDS AP) divides by 100, which overestimates AP by 1%; Dollár
        and Zitnick note the error. False reproduces the published numbers.
    unique_keep : {'first', 'last'}
        Which point MATLAB's ``unique`` keeps among equal recall values: 'first' since
        MATLAB R2013a (and in Octave), 'last' before.

    Returns
    -------
    float
        0 when fewer than two distinct recall values exist, as the BSR code.
    """
    r = np.asarray(recall, dtype=np.float64)
    p = np.asarray(precision, dtype=np.float64)
    if unique_keep == "first":
        ru, idx = np.unique(r, return_index=True)
    elif unique_keep == "last":
        ru, idx_rev = np.unique(r[::-1], return_index=True)
        idx = r.size - 1 - idx_rev
    else:
        raise InputError(f"unique_keep must be 'first' or 'last', not {unique_keep!r}")
    if ru.size < 2:
        return 0.0
    grid = np.linspace(0.0, 1.0, 101)
    pi = np.interp(grid, ru, p[idx], left=np.nan, right=np.nan)
    total = float(np.nansum(pi))
    return total / 101 if corrected else total * 0.01


def recall_at_precision(recall, precision, target: float = 0.5) -> float:
    """Recall at 50% precision (R50): the largest recall at which the PR curve's
    precision is at least ``target``, the curve interpolated linearly between
    neighbouring thresholds.

    Parameters
    ----------
    recall, precision : (T,) array_like
        The dataset PR curve, one point per threshold (in threshold order).
    target : float, default 0.5
        The precision to reach.

    Returns
    -------
    float
        The largest recall of a point, or of a crossing of ``target`` between two
        neighbouring points, with precision >= ``target``; NaN when no point of the
        curve reaches ``target`` (shown as "n/a").

    Notes
    -----
    Dollár's ``edgesEvalDir.m`` computes
    ``[~,o] = unique(P); R50 = interp1(P(o), R(o), max(P(o(1)), .5))``: recall as a
    function of precision over the sorted unique precisions, which is the recall where
    the curve crosses ``target`` when precision falls monotonically as recall grows,
    the curve it was written for. Where it does not, the sorted precisions pair points
    that are not neighbours on the curve: a curve that reaches P = 0.5 near R = 0.95
    and touches P = 0.5 again at its last non-empty threshold (R = 3e-5, gradient
    magnitude on BSDS300 images) gave R50 = 0.0000. The largest recall at which the
    precision envelope is >= ``target`` is what R50 means; it equals Dollár's value on
    every monotone curve (the same linear interpolation between the same two points,
    with ``np.interp``, so the same bits), and the recall of the lowest precision, as
    his ``max(P(o(1)), .5)``, when every point is above ``target``.
    """
    r = np.asarray(recall, dtype=np.float64)
    p = np.asarray(precision, dtype=np.float64)
    if r.shape != p.shape or r.ndim != 1:
        raise InputError(
            f"recall and precision must be 1-D of one length, got shapes "
            f"{r.shape} and {p.shape}"
        )
    ok = np.isfinite(r) & np.isfinite(p)
    r, p = r[ok], p[ok]
    above = p >= target
    if not above.any():
        return float("nan")
    best = float(r[above].max())
    # a segment from a point above target to one below crosses it in between
    a, b = slice(None, -1), slice(1, None)
    cross = above[a] != above[b]
    for r0, p0, r1, p1 in zip(r[a][cross], p[a][cross], r[b][cross], p[b][cross]):
        order = (0, 1) if p0 < p1 else (1, 0)  # np.interp needs rising x
        xs, ys = (p0, p1), (r0, r1)
        at = float(
            np.interp(target, [xs[order[0]], xs[order[1]]], [ys[order[0]], ys[order[1]]])
        )
        best = max(best, at)
    return best


@dataclass(frozen=True)
class BoundarySummary:
    """Dataset-level boundary scores (the content of ``eval_bdry*.txt``).

    Attributes
    ----------
    ods : (threshold, recall, precision, f)
        Optimal dataset scale: counts pooled over images at each threshold, best F with
        interpolation between thresholds.
    ois : (recall, precision, f)
        Optimal image scale: each image at its first best sampled threshold, counts
        pooled, one F.
    ap : float
        Area under the PR curve as the BSR code computes it (101 samples / 100).
    ap_corrected : float
        The same sum divided by 101.
    r50 : float
        Recall at 50% precision: the largest recall where the curve's precision is
        >= 0.5 (:func:`recall_at_precision`); NaN if never reached.
    calibrated : (threshold, recall, precision, f) or None
        The pooled scores at a threshold fixed by a calibration run.
    thresholds, recall, precision, f : (T,) arrays
        The dataset PR curve.
    per_image : (N, 4) array
        Each image's best threshold, recall, precision, F (interpolated, as ODS).
    ids : list of str
        Image ids, in the order of ``per_image``.
    """

    ods: tuple
    ois: tuple
    ap: float
    ap_corrected: float
    r50: float
    thresholds: np.ndarray
    recall: np.ndarray
    precision: np.ndarray
    f: np.ndarray
    per_image: np.ndarray
    ids: list = field(default_factory=list)
    calibrated: tuple | None = None

    def metrics(self) -> dict:
        """The headline numbers as a flat dict of floats (``ODS_calibrated*`` with a
        calibration threshold)."""
        out = {
            "ODS": self.ods[3],
            "ODS_threshold": self.ods[0],
            "ODS_recall": self.ods[1],
            "ODS_precision": self.ods[2],
            "OIS": self.ois[2],
            "OIS_recall": self.ois[0],
            "OIS_precision": self.ois[1],
            "AP": self.ap,
            "AP_corrected": self.ap_corrected,
            "R50": self.r50,
        }
        if self.calibrated is not None:
            t, r, p, f = self.calibrated
            out.update(
                {
                    "ODS_calibrated": f,
                    "ODS_calibrated_threshold": t,
                    "ODS_calibrated_recall": r,
                    "ODS_calibrated_precision": p,
                }
            )
        return out


def check_same_thresholds(records, ids=None) -> None:
    """InputError unless every record has the thresholds of the first, naming the
    images that differ from most (their count of thresholds: a prediction folder that
    mixes ucm2 and segs files, or segs lists of different lengths).

    Parameters
    ----------
    records : sequence of objects with ``thresholds`` (1-D arrays)
    ids : sequence of str, optional
        The images of ``records``, for the message.
    """
    records = list(records)
    if not records:
        return
    first = records[0].thresholds
    if all(
        r.thresholds.shape == first.shape and np.allclose(r.thresholds, first)
        for r in records[1:]
    ):
        return
    names = (
        [str(i) for i in ids] if ids is not None else [f"#{k}" for k in range(len(records))]
    )
    counts = [len(r.thresholds) for r in records]
    by_count: dict[int, list[str]] = {}
    for n, c in zip(names, counts):
        by_count.setdefault(c, []).append(n)
    if len(by_count) == 1:  # as many thresholds, other values: those that differ
        odd = [n for n, r in zip(names, records) if not np.allclose(r.thresholds, first)]
        groups = (
            f"{len(odd)} of {len(names)} images at other thresholds than "
            f"{names[0]}: {_first(odd)}"
        )
    else:  # the largest group first
        groups = "; ".join(
            f"{c} threshold{'s' if c != 1 else ''} for {len(ns)} image"
            f"{'s' if len(ns) != 1 else ''} ({_first(ns)})"
            for c, ns in sorted(by_count.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        )
    raise InputError(
        f"per-image records were computed at different thresholds: {groups}. A "
        "prediction folder holds one kind for every image: all ucm2 (the benchmark's "
        "thresholds), or all segmentations with as many each (a label map is one, a "
        "segs list of T is T thresholds), or soft maps at one set of thresholds"
    )


def _first(names: list[str], n: int = 10) -> str:
    """The first ``n`` names, and how many in all when there are more."""
    return ", ".join(names[:n]) + (f" ... ({len(names)} in all)" if len(names) > n else "")


def _count_stack(records, ids=None) -> tuple[np.ndarray, np.ndarray]:
    """(thresholds, (N, T, 4) counts cntR, sumR, cntP, sumP) of per-image records."""
    records = list(records)
    if not records:
        raise InputError("no per-image records to summarize")
    check_same_thresholds(records, ids)
    thresholds = records[0].thresholds
    cnt = np.stack([np.column_stack([r.cnt_r, r.sum_r, r.cnt_p, r.sum_p]) for r in records])
    return np.asarray(thresholds, dtype=np.float64), cnt


def _image_bests(thresholds, cnt, alpha: float):
    """Per image: its interpolated best (threshold, R, P, F), and its counts at its
    first best sampled threshold (what OIS pools)."""
    per_image = np.zeros((len(cnt), 4))
    best_rows = np.zeros((len(cnt), 4))
    for i, c in enumerate(cnt):
        r = bsr_ratio(c[:, 0], c[:, 1])
        p = bsr_ratio(c[:, 2], c[:, 3])
        per_image[i] = max_f(thresholds, r, p, alpha)
        best_rows[i] = c[int(np.argmax(f_measure(r, p, alpha)))]
    return per_image, best_rows


def calibration_index(thresholds, recall, precision, alpha: float = 0.5) -> int:
    """Index of the sampled threshold with the best F of a PR curve (the first
    maximum, no interpolation): where a calibration run fixes the threshold."""
    return int(np.argmax(f_measure(recall, precision, alpha)))


def _threshold_index(thresholds, value: float) -> int:
    hit = np.flatnonzero(np.isclose(thresholds, value, rtol=0, atol=1e-9))
    if hit.size == 0:
        raise InputError(
            f"the calibration threshold {value:.6g} is not one of this run's "
            f"{thresholds.size} thresholds (both runs need the same "
            "--nthresh)"
        )
    return int(hit[0])


def summarize(
    records,
    ids=None,
    *,
    unique_keep: str = "first",
    alpha: float = 0.5,
    calibrated_threshold: float | None = None,
) -> BoundarySummary:
    """Pool per-image counts into ODS, OIS, AP and R50, as ``collect_eval_bdry.m``.

    Parameters
    ----------
    records : sequence of BoundaryCounts
        One per image, all with the same thresholds.
    ids : sequence of str, optional
        Image ids for the per-image table.
    unique_keep : {'first', 'last'}
        Passed to :func:`average_precision`.
    alpha : float, default 0.5
        Weight of the F-measure (:func:`f_measure`) used to choose ODS, OIS and each
        image's best threshold; 0.5 is the official harmonic mean.
    calibrated_threshold : float, optional
        A threshold fixed elsewhere (a calibration run's best sampled threshold, see
        :func:`calibration_index`): the pooled R, P, F at that sampled threshold are
        reported as ``calibrated``. It must be one of this run's thresholds.

    Returns
    -------
    BoundarySummary

    Notes
    -----
    Follows the BSR code rather than the papers: ODS and OIS choose their thresholds
    on the evaluated images; OIS takes each image's first best *sampled* threshold
    (no interpolation) and pools the counts there; AP is the BSR sum over 101 recall
    samples divided by 100 (``ap``), with the /101 value alongside (``ap_corrected``).
    ``ap`` is the default headline because it is the number every paper reports.
    The calibrated score follows Arbeláez et al. (2011), who describe ODS as a
    threshold fixed on training data; it is not interpolated.
    """
    check_alpha(alpha)
    thresholds, cnt = _count_stack(records, ids)
    per_image, best_rows = _image_bests(thresholds, cnt, alpha)
    total = cnt.sum(axis=0)
    recall = bsr_ratio(total[:, 0], total[:, 1])
    precision = bsr_ratio(total[:, 2], total[:, 3])
    f = f_measure(recall, precision, alpha)
    ods = max_f(thresholds, recall, precision, alpha)
    pooled = best_rows.sum(axis=0)
    r_max = float(bsr_ratio(pooled[0], pooled[1]))
    p_max = float(bsr_ratio(pooled[2], pooled[3]))
    ois = (r_max, p_max, float(f_measure(r_max, p_max, alpha)))
    calibrated = None
    if calibrated_threshold is not None:
        j = _threshold_index(thresholds, calibrated_threshold)
        calibrated = (
            float(thresholds[j]),
            float(recall[j]),
            float(precision[j]),
            float(f[j]),
        )
    return BoundarySummary(
        ods=ods,
        ois=ois,
        ap=average_precision(recall, precision, unique_keep=unique_keep),
        ap_corrected=average_precision(
            recall, precision, corrected=True, unique_keep=unique_keep
        ),
        r50=recall_at_precision(recall, precision),
        thresholds=thresholds,
        recall=recall,
        precision=precision,
        f=f,
        per_image=per_image,
        ids=list(ids) if ids is not None else [str(i + 1) for i in range(len(cnt))],
        calibrated=calibrated,
    )


def _max_f_rows(thresholds, recall, precision, alpha: float, block: int = 32):
    """:func:`max_f` of each row of (B, T) curves: (B,) best F, bit-equal to calling
    :func:`max_f` row by row (the same elementwise operations)."""
    t = thresholds
    out = np.empty(recall.shape[0])
    d = np.linspace(0.0, 1.0, 100)
    for a in range(0, recall.shape[0], block):
        r, p = recall[a : a + block], precision[a : a + block]
        first = f_measure(r[:, 0], p[:, 0], alpha)
        if t.size < 2:
            out[a : a + block] = first
            continue
        ri = r[:, 1:, None] * d + r[:, :-1, None] * (1 - d)
        pi = p[:, 1:, None] * d + p[:, :-1, None] * (1 - d)
        fi = f_measure(ri, pi, alpha).reshape(len(r), -1).max(axis=1)
        out[a : a + block] = np.where(fi > first, fi, first)
    return out


def resampler(
    records,
    *,
    alpha: float = 0.5,
    calibrated_threshold: float | None = None,
    unique_keep: str = "first",
):
    """The bootstrap statistic of a run: image weights -> its headline scores.

    Returns a function of a (B, N) array of image weights (how many times each of the
    N images was drawn) giving ``ODS``, ``OIS``, ``AP``, ``R50`` (and
    ``ODS_calibrated`` with a calibration threshold) per draw: the numbers
    :func:`summarize` gives on the drawn records, pooled as weighted sums of the
    per-image counts instead of copies.
    """
    check_alpha(alpha)
    thresholds, cnt = _count_stack(records)
    n, t = cnt.shape[:2]
    flat = cnt.reshape(n, t * 4).astype(np.float64)  # integers: exact sums
    _, best_rows = _image_bests(thresholds, cnt, alpha)
    j = (
        None
        if calibrated_threshold is None
        else _threshold_index(thresholds, calibrated_threshold)
    )

    def statistic(weights: np.ndarray) -> dict:
        total = (weights @ flat).reshape(-1, t, 4)
        recall = bsr_ratio(total[..., 0], total[..., 1])
        precision = bsr_ratio(total[..., 2], total[..., 3])
        pooled = weights @ best_rows
        r_max = bsr_ratio(pooled[:, 0], pooled[:, 1])
        p_max = bsr_ratio(pooled[:, 2], pooled[:, 3])
        out = {
            "ODS": _max_f_rows(thresholds, recall, precision, alpha),
            "OIS": f_measure(r_max, p_max, alpha),
            "AP": np.array(
                [
                    average_precision(r, p, unique_keep=unique_keep)
                    for r, p in zip(recall, precision)
                ]
            ),
            "R50": np.array([recall_at_precision(r, p) for r, p in zip(recall, precision)]),
        }
        if j is not None:
            out["ODS_calibrated"] = f_measure(recall[:, j], precision[:, j], alpha)
        return out

    return statistic


def summarize_human(counts, alpha: float = 0.5) -> tuple[float, float, float]:
    """Recall, precision and F (weight ``alpha``) of pooled human counts (see
    :func:`human_counts`)."""
    c = np.asarray(counts, dtype=np.float64).reshape(-1, 4).sum(axis=0)
    r = float(bsr_ratio(c[0], c[1]))
    p = float(bsr_ratio(c[2], c[3]))
    return r, p, float(f_measure(r, p, alpha))
