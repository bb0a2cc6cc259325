"""The boundary benchmark and the human boundary consistency as engine families.

``BOUNDARY`` scores predictions (boundaryBench.m: per-image counts, ODS/OIS/AP/R50);
``HUMAN_BOUNDARY`` scores each annotator against the others (boundaryBenchHuman.m).
Both are specs (:class:`segbench.spec.Family`) run by :func:`segbench.engine.run`.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..result import Result
from ..spec import Family
from ._correspond import DEFAULT_MAX_DIST
from ._counts import BoundaryCounts, evaluate_image, human_counts
from ._summary import check_alpha, resampler, summarize, summarize_human

#: Prediction files the boundary benchmark reads.
PRED_EXTS = ("png", "bmp", "npy", "mat")


def _read_prediction(path):
    from ..io import read_prediction
    return read_prediction(path)


def _exts(params: dict) -> tuple[str, ...]:
    return PRED_EXTS


def _check_dist(params: dict) -> None:
    if not 0 < params["max_dist"] < 1:
        raise InputError(f"max_dist is a fraction of the image diagonal in (0, 1), got "
                         f"{params['max_dist']}")


def _check(params: dict) -> None:
    if params["nthresh"] < 1:
        raise InputError(f"nthresh must be a positive integer, got {params['nthresh']}")
    _check_dist(params)


def _evaluate(sample, params: dict) -> BoundaryCounts:
    from ..io import check_same_shape
    gt = sample.ground_truth()
    pred = sample.read_prediction(_read_prediction)
    check_same_shape(pred, gt[0].shape, sample.prediction)
    return evaluate_image(pred, gt, nthresh=params["nthresh"],
                          max_dist=params["max_dist"], thin=params["thin"])


def _summarize(ids, records, params, options) -> Result:
    summary = summarize(records, ids, alpha=params.get("alpha", 0.5),
                        calibrated_threshold=params.get("calibrated_threshold"))
    per_item = [{"id": iid, "threshold": row[0], "recall": row[1], "precision": row[2],
                 "f": row[3]} for iid, row in zip(ids, summary.per_image)]
    metrics = summary.metrics()
    human = (options or {}).get("human_boundary")
    if human is not None:
        metrics.update({"human_recall": human[0], "human_precision": human[1],
                        "human_F": human[2]})
    curves = {"thresholds": summary.thresholds, "recall": summary.recall,
              "precision": summary.precision, "f": summary.f}
    return Result("boundary", metrics, per_item, curves, detail=summary)


def _write(out, result: Result, ids, records, options) -> None:
    """``<iid>_ev1.txt`` (rewritten from the records every run, so none can be missing
    or truncated), ``eval_bdry*.txt`` and, unless ``options['plot']`` is False,
    ``pr_curve.png``."""
    from ..io import format_ev1, write_eval_bdry, write_if_changed
    for iid, counts in zip(ids, records):
        write_if_changed(out / f"{iid}_ev1.txt", format_ev1(counts))
    write_eval_bdry(out, result.detail)
    if (options or {}).get("plot", True):
        from ._plots import plot_pr
        s = result.detail
        plot_pr([{"name": result.name, "recall": s.recall, "precision": s.precision,
                  "ods": s.ods[1:]}], out / "pr_curve.png",
                human=(options or {}).get("human_boundary"))


def _resampler(ids, records, params, options):
    return resampler(records, alpha=params.get("alpha", 0.5),
                     calibrated_threshold=params.get("calibrated_threshold"))


#: Summary parameters of the boundary benchmark: the F-measure's weight, and the
#: threshold a calibration run fixed (with that run's folder, for the record).
SUMMARY_DEFAULTS = {"alpha": 0.5, "calibrated_threshold": None, "calibrated_on": None}

BOUNDARY = Family(
    name="boundary", version=1,
    defaults={"nthresh": 99, "max_dist": DEFAULT_MAX_DIST, "thin": True},
    evaluate=_evaluate, to_json=BoundaryCounts.to_json, from_json=BoundaryCounts.from_json,
    summarize=_summarize, write=_write, prediction_exts=_exts,
    check=_check, label="boundary", summary_defaults=SUMMARY_DEFAULTS,
    resampler=_resampler, item_score="f")


# --- human consistency -------------------------------------------------------------


def _evaluate_human(sample, params: dict) -> np.ndarray:
    return np.asarray(human_counts(sample.ground_truth(), max_dist=params["max_dist"]),
                      np.int64)


def _counts_to_json(counts: np.ndarray) -> dict:
    return {"counts": counts.tolist()}


def _counts_from_json(d) -> np.ndarray:
    arr = np.asarray(d["counts"], dtype=np.int64)
    if arr.shape != (4,) or (arr < 0).any():
        raise ValueError("human boundary counts are four non-negative integers")
    return arr


def _summarize_human(ids, records, params, options) -> Result:
    alpha = params.get("alpha", 0.5)
    check_alpha(alpha)
    total = np.sum(records, axis=0, dtype=np.int64) if records else np.zeros(4, np.int64)
    r, p, f = summarize_human(total, alpha)
    per_item = []
    for iid, c in zip(ids, records):
        ri, pi, fi = summarize_human(c, alpha)
        per_item.append({"id": iid, "cnt_r": int(c[0]), "sum_r": int(c[1]),
                         "cnt_p": int(c[2]), "sum_p": int(c[3]), "recall": ri,
                         "precision": pi, "F": fi})
    metrics = {"recall": r, "precision": p, "F": f, "counts": total.tolist(),
               "n_images": len(ids), "max_dist": params["max_dist"]}
    return Result("human_boundary", metrics, per_item)


HUMAN_BOUNDARY = Family(
    name="human_boundary", version=1, defaults={"max_dist": DEFAULT_MAX_DIST},
    evaluate=_evaluate_human, to_json=_counts_to_json,
    from_json=_counts_from_json, summarize=_summarize_human, check=_check_dist,
    label="human boundary", summary_defaults={"alpha": 0.5}, item_score="F")
