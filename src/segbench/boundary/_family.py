"""The boundary benchmark and the human boundary consistency as engine families.

``BOUNDARY`` scores predictions (boundaryBench.m: per-image counts, ODS/OIS/AP/R50);
``HUMAN_BOUNDARY`` scores each annotator against the others (boundaryBenchHuman.m).
Both are specs (:class:`segbench.spec.Family`) run by :func:`segbench.engine.run`.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import InputError, first_names
from ..families import BOUNDARY_PARAMS, defaults, summary_defaults
from ..io import (
    as_prediction,
    atomic_write_text,
    check_same_shape,
    format_ev1,
    read_prediction,
    write_eval_bdry,
    write_if_changed,
)
from ..primitives import (
    BoundaryCounts,
    BoundarySummary,
    check_alpha,
    check_thresholds,
    edge_nms,
    evaluate_image,
    nms_options,
    resampler,
    summarize_human,
    threshold_list,
    tiny_pair,
)
from ..primitives import summarize_boundary as summarize
from ..result import Result
from ..spec import Family
from ._agreement import agreement_levels, agreement_threshold, strong_boundaries
from ._half import (
    RESOLUTIONS,
    half_human_maps,
    half_shape,
    halve_soft_map,
    max_dist_from_px,
)
from ._plots import plot_pr
from ._protocols import (
    PROTOCOLS,
    SubjectCounts,
    pool_subjects,
    subject_counts,
    upsample_nearest,
)

#: Prediction files the boundary benchmark reads.
PRED_EXTS = ("png", "bmp", "npy", "mat")


def _read_prediction(path):
    return read_prediction(path)


def _exts(params: dict) -> tuple[str, ...]:
    return PRED_EXTS


def _check_dist(params: dict) -> None:
    if not 0 < params["max_dist"] < 1:
        raise InputError(
            f"max_dist is a fraction of the image diagonal in (0, 1), got "
            f"{params['max_dist']}"
        )
    px = params["max_dist_px"]
    if px is not None and not (isinstance(px, (int, float)) and 0 < px < float("inf")):
        raise InputError(f"max_dist_px is a tolerance in pixels > 0, got {px!r}")
    if params["resolution"] not in RESOLUTIONS:
        raise InputError(
            f"resolution must be one of {', '.join(RESOLUTIONS)}, not "
            f"{params['resolution']!r}"
        )


def _image_max_dist(params: dict, shape) -> float:
    """The tolerance of one image as a fraction of its diagonal: ``max_dist``, or
    ``max_dist_px`` converted at the size matched (:func:`max_dist_from_px`)."""
    if params["max_dist_px"] is None:
        return params["max_dist"]
    return max_dist_from_px(params["max_dist_px"], shape)


def _at_resolution(gt, params: dict):
    """The human maps at the resolution matched: as stored, or each annotator's
    segmentation drawn at half size as ``boundaryPR.m`` does (``seg2bmap``)."""
    if params["resolution"] == "half":
        return half_human_maps(gt)
    return gt


def _halved(pred, full_shape, path):
    """A prediction at the size of the ground truth brought to half resolution (the
    maximum of each cell); one already at half size (or smaller) unchanged."""
    if pred.kind == "segs":
        raise InputError(
            "the half-resolution protocol (martin2004) scores soft maps and "
            "ucm2; a 'segs' prediction is not halved",
            path,
        )
    if tuple(pred.pb.shape) != tuple(full_shape):
        return pred
    return as_prediction(halve_soft_map(pred.pb), kind="soft", source=path)


def _check(params: dict) -> None:
    given = params.get("thresholds")
    if isinstance(given, int) and not isinstance(given, bool):
        params["nthresh"], params["thresholds"] = given, None  # a count: as nthresh
    elif given is not None:
        params["thresholds"] = threshold_list(given)
    if params["nthresh"] < 1:
        raise InputError(f"nthresh must be a positive integer, got {params['nthresh']}")
    _check_dist(params)
    if params["upsample"] not in (None, "nearest"):
        raise InputError(f"upsample must be None or 'nearest', not {params['upsample']!r}")
    if params["min_agreement"] is not None:
        agreement_threshold(params["min_agreement"], 1 << 16)  # its form only
    params["nms"] = nms_settings(params["nms"])  # one JSON form in every record key


#: Dollar's settings, as the HED/RCF/PiDiNet evaluation scripts call edgesNmsMex.
NMS_DEFAULTS = {"r": 1, "s": 5, "m": 1.01, "presmooth": True}


def nms_settings(nms) -> dict | None:
    """The ``nms`` parameter in its one stored form.

    Parameters
    ----------
    nms : None, bool or dict
        None or False: no NMS; True: Dollar's settings (:data:`NMS_DEFAULTS`); a dict:
        those settings updated by its keys ``r``, ``s``, ``m``, ``presmooth``.

    Returns
    -------
    dict or None
        Every key of :data:`NMS_DEFAULTS` with its value, or None.
    """
    if nms is None or nms is False:
        return None
    if nms is True:
        return dict(NMS_DEFAULTS)
    if not isinstance(nms, dict) or set(nms) - set(NMS_DEFAULTS):
        raise InputError(
            f"nms must be True, False or a dict with keys among "
            f"{sorted(NMS_DEFAULTS)}, got {nms!r}"
        )
    out = {**NMS_DEFAULTS, **nms}
    r, s, _ = nms_options(out["r"], out["s"], out["m"])  # InputError if bad
    return {"r": r, "s": s, "m": float(out["m"]), "presmooth": bool(out["presmooth"])}


def _thinned(pred, settings: dict, path):
    """A soft map after Dollar's edge NMS (``nms`` parameter)."""
    if pred.kind != "soft":
        raise InputError(
            f"--nms thins soft boundary maps; this prediction is a "
            f"{pred.kind} map (score ucm2 and segmentations without NMS: "
            f"--nms off, or --preset bsr)",
            path,
        )
    return as_prediction(
        edge_nms(pred.pb, **settings).astype(np.float64), kind="soft", source=path
    )


def _upsampled(pred, shape, path):
    """A soft map smaller than the ground truth, enlarged as BSDS300's boundaryBench.m
    (``imresize(pb, size, 'nearest')``); other predictions unchanged."""
    if (
        pred.kind != "soft"
        or pred.pb.shape == tuple(shape)
        or pred.pb.shape[0] > shape[0]
        or pred.pb.shape[1] > shape[1]
    ):
        return pred
    return as_prediction(upsample_nearest(pred.pb, shape), kind="soft", source=path)


def _evaluate(sample, params: dict) -> BoundaryCounts:
    gt = sample.ground_truth()
    pred = sample.read_prediction(_read_prediction)
    full = shape = tuple(gt[0].shape)
    if params["resolution"] == "half":
        pred = _halved(pred, shape, sample.prediction)
        shape = half_shape(shape)
        gt = _at_resolution(gt, params)
    if params["upsample"] == "nearest":
        pred = _upsampled(pred, shape, sample.prediction)
    try:
        check_same_shape(pred, shape, sample.prediction)
    except InputError as e:
        if full == shape:
            raise
        raise InputError(
            f"{e.problem} at half resolution (martin2004); give maps of "
            f"the image's size, {full[0]}x{full[1]}, or of half its size",
            e.path,
        ) from None
    if params["nms"] is not None:
        pred = _thinned(pred, params["nms"], sample.prediction)
    max_dist = _image_max_dist(params, shape)
    if params["min_agreement"] is not None:
        gt = strong_boundaries(
            gt, agreement_levels(gt, max_dist=max_dist), params["min_agreement"]
        )
    return evaluate_image(
        pred,
        gt,
        nthresh=params["nthresh"],
        max_dist=max_dist,
        thin=params["thin"],
        thin_gt=params["thin_gt"],
        thresholds=params["thresholds"],
    )


def _excluded(counts: BoundaryCounts, params: dict) -> str | None:
    """Why an image is left out of a strong-boundary run: no human pixel has the
    agreement asked for (``min_agreement`` above its number of annotators, or no pixel
    all of them drew), so there is nothing to score against; None otherwise.

    Only under ``min_agreement``: an ordinary run scores every image as BSR does.
    """
    k = params["min_agreement"]
    if k is None or counts.sum_r.any():
        return None
    text = str(k).strip().lower()
    if text in ("all", "unanimous"):
        return f"no boundary pixel that all of its annotators drew (--min-agreement {k})"
    if isinstance(k, float) or not text.isdigit():
        return (
            f"no boundary pixel that a fraction {text} of its annotators drew "
            f"(--min-agreement {k})"
        )
    return (
        f"no boundary pixel that {text} annotators drew (--min-agreement {k}; an "
        f"image with fewer annotators has none)"
    )


def _validate(counts: BoundaryCounts, params: dict) -> None:
    """A record read back has one entry per threshold of its ``nthresh``, or its
    explicit ``thresholds`` (ValueError)."""
    explicit = params.get("thresholds")
    if explicit is None:
        check_thresholds(counts.thresholds, params["nthresh"])
        return
    t = np.asarray(counts.thresholds, dtype=np.float64).ravel()
    if not (
        np.array_equal(t, np.asarray(explicit, dtype=np.float64))
        or np.array_equal(t, np.arange(1, t.size + 1, dtype=np.float64))
    ):
        raise ValueError(f"{t.size} thresholds, not the {len(explicit)} given")


def _warm_up(params: dict) -> None:
    """The soft-map path once on an 8 x 8 map (thinning, matching)."""
    pb, gt = tiny_pair()
    if params["nms"] is not None:
        pb = edge_nms(pb, **params["nms"]).astype(np.float64)
    evaluate_image(
        pb,
        [gt],
        nthresh=params["nthresh"],
        max_dist=params["max_dist"],
        thin=params["thin"],
        thin_gt=params["thin_gt"],
    )


def _as_defined(t: float, grid) -> float:
    """A threshold of the grid as it is defined, ``k / (n + 1)`` (0.3, where
    ``linspace`` gives 0.30000000000000004); an interpolated one as it is. Only the
    per-image table: the official files print both alike (``%g``)."""
    hit = np.flatnonzero(np.asarray(grid) == t)
    return (int(hit[0]) + 1) / (len(grid) + 1) if hit.size else float(t)


class EmptyPredictionWarning(UserWarning):
    """Most predictions of a run have no pixel at any threshold."""


def _warn_empty_predictions(ids, records) -> None:
    """Warn when at least half of the soft maps reach no threshold anywhere: the usual
    cause is a saving mistake (a 0/1 map saved as 8-bit, 8-bit values in a 16-bit
    PNG, a map scaled to [0, 1/255]), which scores 0 without any other sign."""
    empty = [
        iid
        for iid, rec in zip(ids, records)
        if isinstance(rec, BoundaryCounts) and len(rec.sum_p) > 1 and not rec.sum_p.any()
    ]
    if empty and 2 * len(empty) >= len(ids):
        shown = ", ".join(empty[:5]) + (" ..." if len(empty) > 5 else "")
        warnings.warn(
            f"{len(empty)} of {len(ids)} predictions have no pixel at any threshold "
            f"({shown}): a 0/1 map saved as 8-bit (multiply by 255), or 8-bit values "
            "saved as a 16-bit PNG (save 8-bit, or multiply by 257)?",
            EmptyPredictionWarning,
            stacklevel=2,
        )


class EmptyGroundTruthWarning(UserWarning):
    """Images of a run whose ground truth has no boundary pixel."""


def _warn_empty_ground_truth(ids, records) -> None:
    """Name the images whose annotators drew no boundary: they score recall 0/0 and
    every detected pixel a false positive, as in the official benchmark, which lowers
    the run's precision without any other sign (an export mistake, or images a
    protocol leaves out: docs/agreement.md)."""
    empty = [
        iid
        for iid, rec in zip(ids, records)
        if isinstance(rec, BoundaryCounts) and len(rec.sum_r) and not rec.sum_r.any()
    ]
    if empty:
        warnings.warn(
            f"{len(empty)} of {len(ids)} images have no ground-truth boundary pixel "
            f"({first_names(empty, 5)}): they add no recall, and each detected pixel "
            "there counts as a false positive (as the official benchmark scores them)",
            EmptyGroundTruthWarning,
            stacklevel=2,
        )


class CalibrationWarning(UserWarning):
    """A boundary run is calibrated on a run of its own images."""


def _warn_calibrated_on_these_images(ids, params) -> None:
    """Warn when the calibration run (``calibrated_on``) scored images of this run: a
    threshold fixed on the images it is then applied to is their ODS threshold, not a
    calibration (Arbelaez et al. 2011 fix it on training data)."""
    import json
    from pathlib import Path

    where = params.get("calibrated_on")
    if not where:
        return
    path = Path(where)
    path = path / "result_boundary.json" if path.is_dir() else path
    try:
        theirs = {str(row["id"]) for row in json.loads(path.read_text("utf-8"))["per_item"]}
    except (OSError, ValueError, KeyError, TypeError):
        return  # an older layout: nothing to compare
    shared = theirs & {str(i) for i in ids}
    if shared:
        warnings.warn(
            f"the calibration run {where} scored {len(shared)} of this run's {len(ids)} "
            "images: a threshold fixed on the images it is applied to is their ODS "
            "threshold, not a calibration (calibrate on train or val)",
            CalibrationWarning,
            stacklevel=2,
        )


def _summarize(ids, records, params, options) -> Result:
    _warn_empty_predictions(ids, records)
    _warn_empty_ground_truth(ids, records)
    _warn_calibrated_on_these_images(ids, params)
    summary = summarize(
        records,
        ids,
        alpha=params.get("alpha", 0.5),
        calibrated_threshold=params.get("calibrated_threshold"),
    )
    per_item = [
        {
            "id": iid,
            "threshold": _as_defined(row[0], summary.thresholds),
            "recall": row[1],
            "precision": row[2],
            "f": row[3],
        }
        for iid, row in zip(ids, summary.per_image)
    ]
    metrics = summary.metrics()
    human = (options or {}).get("human_boundary")
    if human is not None:
        metrics.update(
            {"human_recall": human[0], "human_precision": human[1], "human_F": human[2]}
        )
    curves = {
        "thresholds": summary.thresholds,
        "recall": summary.recall,
        "precision": summary.precision,
        "f": summary.f,
    }
    return Result(
        "boundary",
        metrics,
        per_item,
        curves,
        detail=summary,
        notes=_notes(params, len(summary.thresholds)),
    )


def _notes(params: dict, n_thresholds: int) -> dict:
    """Caveats of the metrics a protocol's own code does not compute (AP under
    ``bsds300``): shown beside the table and kept in the result file."""
    name = params.get("protocol") or "bsr"
    if name not in PROTOCOLS or "AP" in PROTOCOLS[name]["reported"]:
        return {}
    why = (
        f"; over {n_thresholds} thresholds the curve covers a narrower recall range "
        f"than BSR's 99, so AP is lower than at 99"
        if n_thresholds < 99
        else ""
    )
    return {
        "AP": f"not a {name} score (its code computes no AP){why}; not comparable "
        f"with published BSDS500 AP (docs/protocol.md)"
    }


def _write(out, result: Result, ids, records, options) -> None:
    """``<iid>_ev1.txt`` (rewritten from the records every run, so none can be missing
    or truncated), ``eval_bdry*.txt`` and, unless ``options['plot']`` is False,
    ``pr_curve.png``."""
    for iid, counts in zip(ids, records):
        write_if_changed(out / f"{iid}_ev1.txt", format_ev1(counts))
    write_eval_bdry(out, result.detail)
    if (options or {}).get("plot", True):
        s = result.detail
        assert isinstance(s, BoundarySummary)  # as _summarize made it
        plot_pr(
            [
                {
                    "name": result.name,
                    "recall": s.recall,
                    "precision": s.precision,
                    "ods": s.ods[1:],
                }
            ],
            out / "pr_curve.png",
            human=(options or {}).get("human_boundary"),
        )


def _resampler(ids, records, params, options):
    return resampler(
        records,
        alpha=params.get("alpha", 0.5),
        calibrated_threshold=params.get("calibrated_threshold"),
    )


#: Summary parameters of the boundary benchmark: the protocol named (its record
#: parameters are in the record's), the F-measure's weight, and the threshold a
#: calibration run fixed (with that run's folder and name, for the record).
SUMMARY_DEFAULTS = summary_defaults(
    BOUNDARY_PARAMS,
    ("protocol", "alpha", "calibrated_threshold", "calibrated_on", "calibrated_name"),
)

BOUNDARY = Family(
    name="boundary",
    version=1,
    defaults=defaults(
        BOUNDARY_PARAMS,
        (
            "nthresh",
            "max_dist",
            "thin",
            "thin_gt",
            "upsample",
            "min_agreement",
            "nms",
            "resolution",
            "max_dist_px",
            "thresholds",
        ),
    ),
    evaluate=_evaluate,
    to_json=BoundaryCounts.to_json,
    from_json=BoundaryCounts.from_json,
    validate=_validate,
    summarize=_summarize,
    write=_write,
    per_image_files=("_ev1.txt",),
    prediction_exts=_exts,
    check=_check,
    label="boundary",
    summary_defaults=SUMMARY_DEFAULTS,
    resampler=_resampler,
    item_score="f",
    warm_up=_warm_up,
    excluded=_excluded,
)


# --- human consistency -------------------------------------------------------------


def _check_human(params: dict) -> None:
    _check_dist(params)
    if params["lone"] not in ("skip", "count"):
        raise InputError(f"lone must be 'skip' or 'count', not {params['lone']!r}")


def _evaluate_human(sample, params: dict) -> SubjectCounts:
    gt = sample.ground_truth()
    shape = tuple(gt[0].shape)
    if params["resolution"] == "half":
        users = [getattr(a, "user", None) for a in gt]
        gt, shape = _at_resolution(gt, params), half_shape(shape)
        return subject_counts(
            gt,
            users=users,
            max_dist=_image_max_dist(params, shape),
            thin_gt=params["thin_gt"],
            lone=params["lone"],
        )
    return subject_counts(
        gt,
        max_dist=_image_max_dist(params, shape),
        thin_gt=params["thin_gt"],
        lone=params["lone"],
    )


def _subject_rows(records, alpha: float) -> list[dict]:
    """Each subject's counts pooled over the images it segmented, with R, P, F; none
    where the ground truth records no subject ids (BSDS500 ``.mat`` files)."""
    records = [rec for rec in records if None not in rec.users]
    n_images: dict = {}
    for rec in records:
        for u in rec.users:
            n_images[u] = n_images.get(u, 0) + 1
    rows = []
    for user, c in pool_subjects(records).items():
        r, p, f = summarize_human(c, alpha)
        rows.append(
            {
                "subject": user,
                "n_images": n_images[user],
                "cnt_r": int(c[0]),
                "sum_r": int(c[1]),
                "cnt_p": int(c[2]),
                "sum_p": int(c[3]),
                "recall": r,
                "precision": p,
                "F": f,
            }
        )
    return rows


def _summarize_human(ids, records, params, options) -> Result:
    alpha = params.get("alpha", 0.5)
    check_alpha(alpha)
    totals = [rec.total() for rec in records]
    total = np.sum(totals, axis=0, dtype=np.int64) if totals else np.zeros(4, np.int64)
    r, p, f = summarize_human(total, alpha)
    if not np.any(np.asarray(total)[[1, 3]]):  # no annotator pair: nothing compared
        r = p = f = float("nan")
    per_item = []
    for iid, c in zip(ids, totals):
        ri, pi, fi = summarize_human(c, alpha)
        per_item.append(
            {
                "id": iid,
                "cnt_r": int(c[0]),
                "sum_r": int(c[1]),
                "cnt_p": int(c[2]),
                "sum_p": int(c[3]),
                "recall": ri,
                "precision": pi,
                "F": fi,
            }
        )
    metrics = {
        "recall": r,
        "precision": p,
        "F": f,
        "counts": total.tolist(),
        "n_images": len(ids),
        "max_dist": params["max_dist"],
    }
    subjects = _subject_rows(records, alpha)
    metrics["n_subjects"] = len(subjects)
    if subjects:  # the 2004 paper's human figure: the median of the subjects' F
        metrics["F_median_subject"] = float(np.median([row["F"] for row in subjects]))
    return Result("human_boundary", metrics, per_item, detail={"subjects": subjects})


def _write_human(out, result: Result, ids, records, options) -> None:
    """``per_subject.csv``: each subject against the other subjects of the same images,
    pooled over its images (as the BSDS300 site listed them)."""
    import csv
    import io

    buf = io.StringIO()
    assert isinstance(result.detail, dict)  # as _summarize_human made it
    rows = result.detail["subjects"]
    cols = [
        "subject",
        "n_images",
        "cnt_r",
        "sum_r",
        "cnt_p",
        "sum_p",
        "recall",
        "precision",
        "F",
    ]
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for row in rows:
        w.writerow([repr(row[c]) if isinstance(row[c], float) else row[c] for c in cols])
    atomic_write_text(out / "per_subject.csv", buf.getvalue())


HUMAN_BOUNDARY = Family(
    name="human_boundary",
    version=2,
    defaults=defaults(
        BOUNDARY_PARAMS, ("max_dist", "thin_gt", "lone", "resolution", "max_dist_px")
    ),
    evaluate=_evaluate_human,
    to_json=SubjectCounts.to_json,
    from_json=SubjectCounts.from_json,
    summarize=_summarize_human,
    write=_write_human,
    check=_check_human,
    label="human boundary",
    summary_defaults=summary_defaults(BOUNDARY_PARAMS, ("protocol", "alpha")),
    item_score="F",
)
