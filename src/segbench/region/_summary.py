"""Dataset region scores from per-image records, as ``collect_eval_reg.m``."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..primitives import bsr_ratio, check_same_thresholds


def _as_printed(x):
    """Values as the official per-image files carry them: ``%10g``, 6 significant digits."""
    a = np.asarray(x, dtype=np.float64)
    return np.array([float(f"{v:g}") for v in a.ravel()]).reshape(a.shape)


def _first_max(x) -> int:
    """MATLAB ``[~, i] = max(x)``: the first maximum, NaN ignored."""
    x = np.asarray(x, dtype=np.float64)
    return int(np.nanargmax(x)) if np.isfinite(x).any() else 0


def _last_extreme(x, *, lower: bool = False) -> int:
    """``ff = find(x == max(x)); ff(end)``: the last best entry (min with ``lower``)."""
    x = np.asarray(x, dtype=np.float64)
    if not np.isfinite(x).any():
        return x.size - 1
    best = np.nanmin(x) if lower else np.nanmax(x)
    return int(np.flatnonzero(x == best)[-1])


@dataclass(frozen=True)
class RegionSummary:
    """Dataset-level region scores (the content of ``eval_cover*.txt``, ``eval_RI_VOI*``).

    Attributes
    ----------
    thresholds : (T,) float64
    covering, pri, vi : (T,) float64
        Dataset curves: covering with areas pooled over images; PRI and VI averaged over
        images (``eval_cover_th.txt``, ``eval_RI_VOI_thr.txt``).
    covering_ods : (threshold, covering)
        Best pooled covering over thresholds (first best).
    covering_ois : float
        Each image at its last best threshold, areas pooled.
    covering_best : float
        Each annotator region at its best threshold, areas pooled ("Best").
    pri_ods, vi_ods : (threshold, value)
        Best averaged PRI (highest, first) and VI (lowest, first) over thresholds.
    pri_ois, vi_ois : float
        Mean over images of each image's best PRI (highest) and VI (lowest).
    per_image : (N, 3) ndarray
        ``eval_cover_img.txt`` rows: each image's first best threshold, its covering of
        the ground truth and the covering of the segmentation by the ground truth there.
    per_image_best : (N, 6) ndarray
        What OIS uses, per image: the last best covering threshold and that covering,
        the last best PRI threshold and PRI, the last best (lowest) VI threshold and VI.
    ids : list of str
    """

    thresholds: np.ndarray
    covering: np.ndarray
    pri: np.ndarray
    vi: np.ndarray
    covering_ods: tuple
    covering_ois: float
    covering_best: float
    pri_ods: tuple
    pri_ois: float
    vi_ods: tuple
    vi_ois: float
    per_image: np.ndarray
    per_image_best: np.ndarray
    ids: list = field(default_factory=list)

    def metrics(self) -> dict:
        """The headline numbers as a flat dict of floats."""
        return {
            "covering_ODS": self.covering_ods[1],
            "covering_ODS_threshold": self.covering_ods[0],
            "covering_OIS": self.covering_ois,
            "covering_best": self.covering_best,
            "PRI_ODS": self.pri_ods[1],
            "PRI_ODS_threshold": self.pri_ods[0],
            "PRI_OIS": self.pri_ois,
            "VI_ODS": self.vi_ods[1],
            "VI_ODS_threshold": self.vi_ods[0],
            "VI_OIS": self.vi_ois,
        }

    def rows(self) -> list[dict]:
        """One dict per image: covering at its first best threshold (as
        ``eval_cover_img.txt``) and the per-image bests that OIS pools."""
        out = []
        for iid, (t, r, p), (tc, c, tr, ri, tv, vi) in zip(
            self.ids, self.per_image, self.per_image_best
        ):
            out.append(
                {
                    "id": iid,
                    "threshold": t,
                    "covering": r,
                    "covering_seg": p,
                    "ois_threshold": tc,
                    "ois_covering": c,
                    "pri_threshold": tr,
                    "pri": ri,
                    "vi_threshold": tv,
                    "vi": vi,
                }
            )
        return out


def summarize(records, ids=None, *, official_rounding: bool = True) -> RegionSummary:
    """Pool per-image records into covering, PRI and VI at ODS and OIS, and Best.

    Parameters
    ----------
    records : sequence of RegionRecord
        One per image, all with the same thresholds.
    ids : sequence of str, optional
        Image ids, in the order of ``records`` (sorted ids, as the official file list).
    official_rounding : bool, default True
        Summarize the per-image numbers as the official ``_ev2/_ev3/_ev4.txt`` files
        carry them (``%10g``: 6 significant digits), which is what collect_eval_reg.m
        reads. It changes results by about 1e-6 and can only move a threshold where two
        thresholds tie after rounding; False uses the exact values.

    Returns
    -------
    RegionSummary

    Notes
    -----
    As collect_eval_reg.m, whose rules differ per measure:

    - covering ODS: cntR and sumR summed over images at each threshold, the first best
      threshold, no interpolation;
    - covering OIS: each image at its *last* best threshold (``ff(end)``), cntR and sumR
      summed there; the per-image table (``eval_cover_img.txt``) shows the *first* best;
    - Best: sum of the images' ``cnt_r_best`` over the sum of sumR at the first threshold;
    - PRI and VI: averaged over images at each threshold, ODS the first best (highest
      PRI, lowest VI); OIS the mean over images of each image's best value.
    """
    records = list(records)
    if not records:
        raise InputError("no per-image records to summarize")
    check_same_thresholds(records, ids)
    fix = _as_printed if official_rounding else (lambda a: np.asarray(a, np.float64))
    ev2 = np.stack([fix(r.ev2_table()) for r in records])  # (N, T, 5)
    ev4 = np.stack([fix(r.ev4_table()) for r in records])  # (N, T, 3)
    best = fix(np.array([r.cnt_r_best for r in records]))
    ths = ev2[-1, :, 0]  # the official code uses the last file's thresholds
    cnt_r, sum_r, cnt_p, sum_p = (ev2[:, :, k] for k in range(1, 5))
    ri, voi = ev4[:, :, 1], ev4[:, :, 2]
    n = len(records)

    per_image = np.zeros((n, 3))
    per_best = np.zeros((n, 6))
    ois = np.zeros(4)
    for i in range(n):
        r = bsr_ratio(cnt_r[i], sum_r[i])
        p = bsr_ratio(cnt_p[i], sum_p[i])
        j = _first_max(r)
        per_image[i] = (ths[j], r[j], p[j])
        jl = _last_extreme(r)
        ois += (cnt_r[i, jl], sum_r[i, jl], cnt_p[i, jl], sum_p[i, jl])
        jr = _last_extreme(ri[i])
        jv = _last_extreme(voi[i], lower=True)
        per_best[i] = (ths[jl], r[jl], ths[jr], ri[i, jr], ths[jv], voi[i, jv])

    cov = bsr_ratio(cnt_r.sum(axis=0), sum_r.sum(axis=0))
    j = _first_max(cov)
    pri = ri.sum(axis=0) / n
    vi = voi.sum(axis=0) / n
    jr = _first_max(pri)
    jv = _first_max(-vi)
    total_sum_r = sum_r[:, 0].sum()
    return RegionSummary(
        thresholds=ths.copy(),
        covering=cov,
        pri=pri,
        vi=vi,
        covering_ods=(float(ths[j]), float(cov[j])),
        covering_ois=float(bsr_ratio(ois[0], ois[1])),
        covering_best=float(best.sum() / total_sum_r) if total_sum_r else float("nan"),
        pri_ods=(float(ths[jr]), float(pri[jr])),
        pri_ois=float(per_best[:, 3].mean()),
        vi_ods=(float(ths[jv]), float(vi[jv])),
        vi_ois=float(per_best[:, 5].mean()),
        per_image=per_image,
        per_image_best=per_best,
        ids=list(ids) if ids is not None else [str(i + 1) for i in range(n)],
    )


def resampler(records, *, official_rounding: bool = True):
    """The bootstrap statistic of a region run: image weights -> its headline scores.

    Returns a function of a (B, N) array of image weights giving ``covering_ODS``,
    ``covering_OIS``, ``covering_best``, ``PRI_ODS``, ``PRI_OIS``, ``VI_ODS`` and
    ``VI_OIS`` per draw: what :func:`summarize` gives on the drawn records (weighted
    sums in place of copies; equal up to the order of float additions).
    """
    records = list(records)
    if not records:
        raise InputError("no per-image records to summarize")
    fix = _as_printed if official_rounding else (lambda a: np.asarray(a, np.float64))
    ev2 = np.stack([fix(r.ev2_table()) for r in records])
    ev4 = np.stack([fix(r.ev4_table()) for r in records])
    best = fix(np.array([r.cnt_r_best for r in records]))
    n = len(records)
    cnt_r, sum_r = ev2[:, :, 1], ev2[:, :, 2]
    ri, voi = ev4[:, :, 1], ev4[:, :, 2]
    ois = np.zeros((n, 2))
    pri_best, vi_best = np.zeros(n), np.zeros(n)
    for i in range(n):
        jl = _last_extreme(bsr_ratio(cnt_r[i], sum_r[i]))
        ois[i] = cnt_r[i, jl], sum_r[i, jl]
        pri_best[i] = ri[i, _last_extreme(ri[i])]
        vi_best[i] = voi[i, _last_extreme(voi[i], lower=True)]

    def statistic(weights: np.ndarray) -> dict:
        pooled_ois = weights @ ois
        total_sum_r = weights @ sum_r[:, 0]
        with np.errstate(invalid="ignore", divide="ignore"):
            best_cover = np.where(total_sum_r > 0, (weights @ best) / total_sum_r, np.nan)
        return {
            "covering_ODS": bsr_ratio(weights @ cnt_r, weights @ sum_r).max(axis=1),
            "covering_OIS": bsr_ratio(pooled_ois[:, 0], pooled_ois[:, 1]),
            "covering_best": best_cover,
            "PRI_ODS": (weights @ ri).max(axis=1) / n,
            "PRI_OIS": weights @ pri_best / n,
            "VI_ODS": (weights @ voi).min(axis=1) / n,
            "VI_OIS": weights @ vi_best / n,
        }

    return statistic


def summarize_human_region(tables) -> dict:
    """Human region figures from :func:`human_region` tables (one per image).

    Covering pools areas over every (image, annotator) pair, as the benchmark pools
    over images; PRI and VI are means over all (image, annotator) pairs.

    Returns
    -------
    dict
        covering, covering_seg, PRI, VI and n_pairs.
    """
    parts = [np.asarray(t, dtype=np.float64).reshape(-1, 6) for t in tables]
    rows = np.concatenate(parts) if parts else np.zeros((0, 6))
    if rows.shape[0] == 0:
        nan = float("nan")
        return {"covering": nan, "covering_seg": nan, "PRI": nan, "VI": nan, "n_pairs": 0}
    tot = rows.sum(axis=0)
    return {
        "covering": float(bsr_ratio(tot[0], tot[1])),
        "covering_seg": float(bsr_ratio(tot[2], tot[3])),
        "PRI": float(rows[:, 4].mean()),
        "VI": float(rows[:, 5].mean()),
        "n_pairs": int(rows.shape[0]),
    }
