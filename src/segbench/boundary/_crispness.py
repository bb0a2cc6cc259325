"""Crispness: Average Crispness (AC) and the boundary benchmark with and without NMS
(SEval and CEval) side by side, as "Delving into Crispness" reports them.

Ye, Yi, Gao, Cai and Xu (IEEE TIP 2023) measure how much of a detector's raw edge mass
survives non-maximum suppression, and score the raw maps both after NMS (SEval, the
usual protocol) and without it (CEval), where a blurry map is punished. Source, read
not copied: ``yunfan1202/Delving-into-Crispness`` ``eval_crispness/eval_crispness.m``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError, first_names
from ..families import CRISPNESS_PARAMS, defaults, summary_defaults
from ..io import check_same_shape, read_prediction
from ..primitives import (
    BoundaryCounts,
    check_thresholds,
    edge_nms,
    evaluate_image,
    summarize_boundary,
)
from ..result import Result
from ..spec import Family

__all__ = ["CRISPNESS", "CrispRecord", "crispness"]

#: ``edgesNmsMex(E, O, 2, 5, 1.01, 8)`` of eval_crispness.m:37: radius 2, no smoothing.
CRISP_NMS = {"r": 2, "s": 5, "m": 1.01, "presmooth": False}


def crispness(E) -> float:
    """The crispness of one soft boundary map: the share of its edge mass that
    survives Dollar's NMS.

    Parameters
    ----------
    E : (H, W) array_like of float
        A raw soft map in [0, 1], edges high (segbench's convention; the paper's script
        reads black-on-white PNGs and inverts them by default, ``is_edge_white =
        false``, eval_crispness.m:10, 24-28).

    Returns
    -------
    float
        ``sum(NMS(E)) / sum(E)`` (eval_crispness.m:38), with NMS as
        ``edgesNmsMex(E, O, 2, 5, 1.01)`` (radius 2, border band 5, orientation from
        ``convTri(E, 4)``; :data:`CRISP_NMS`), so the survivors keep their values
        and the border band is ramped down. NaN for a map with no edge at all (0/0).
        1 for a map one pixel wide everywhere away from the border.
    """
    E = np.asarray(E, dtype=np.float64)
    total = float(E.sum())
    if total == 0:
        return float("nan")
    return float(np.asarray(edge_nms(E, **CRISP_NMS), np.float64).sum()) / total


@dataclass(frozen=True)
class CrispRecord:
    """One image: the counts after NMS (SEval), without it (CEval), and the map's
    crispness."""

    seval: BoundaryCounts
    ceval: BoundaryCounts
    crispness: float

    def to_json(self) -> dict:
        return {
            "seval": self.seval.to_json(),
            "ceval": self.ceval.to_json(),
            "crispness": None if np.isnan(self.crispness) else self.crispness,
        }

    @classmethod
    def from_json(cls, d: dict) -> CrispRecord:
        c = d["crispness"]
        if c is not None and not (isinstance(c, (int, float)) and 0 <= c <= 1 + 1e-9):
            raise ValueError(f"crispness must be in [0, 1] or null, got {c!r}")
        return cls(
            BoundaryCounts.from_json(d["seval"]),
            BoundaryCounts.from_json(d["ceval"]),
            float("nan") if c is None else float(c),
        )


def _evaluate(sample, params: dict) -> CrispRecord:
    gt = sample.ground_truth()
    pred = sample.read_prediction(read_prediction)
    if pred.kind != "soft":
        raise InputError(
            f"crispness scores raw soft maps (a CNN's output), not a {pred.kind} map",
            sample.prediction,
        )
    check_same_shape(pred, tuple(gt[0].shape), sample.prediction)
    E = np.asarray(pred.pb, np.float64)
    nms = {k: params[f"nms_{k}"] for k in ("r", "s", "m", "presmooth")}
    kw = dict(nthresh=params["nthresh"], max_dist=params["max_dist"], thin=params["thin"])
    seval = evaluate_image(np.asarray(edge_nms(E, **nms), np.float64), gt, **kw)
    ceval = evaluate_image(E, gt, **kw)
    return CrispRecord(seval, ceval, crispness(E))


def _validate(rec: CrispRecord, params: dict) -> None:
    check_thresholds(rec.seval.thresholds, params["nthresh"])
    check_thresholds(rec.ceval.thresholds, params["nthresh"])


def _summarize(ids, records, params, options) -> Result:
    alpha = params.get("alpha", 0.5)
    s = summarize_boundary([r.seval for r in records], ids, alpha=alpha)
    c = summarize_boundary([r.ceval for r in records], ids, alpha=alpha)
    values = np.array([r.crispness for r in records], np.float64)
    blank = [iid for iid, v in zip(ids, values) if not np.isfinite(v)]
    if blank:
        import warnings

        if len(blank) == len(values):
            said = f"AC is undefined (nan): every map is all zero ({first_names(blank, 5)})"
        else:
            said = (
                f"AC is the mean over {len(values) - len(blank)} of {len(values)} "
                f"images: {len(blank)} map{'s are' if len(blank) > 1 else ' is'} all "
                f"zero, with no crispness ({first_names(blank, 5)})"
            )
        warnings.warn(said, stacklevel=2)
    metrics = {
        "AC": float(np.nanmean(values)) if np.isfinite(values).any() else float("nan"),
        "AC_min": float(np.nanmin(values)) if np.isfinite(values).any() else float("nan"),
        "AC_max": float(np.nanmax(values)) if np.isfinite(values).any() else float("nan"),
    }
    for prefix, summary in (("SEval", s), ("CEval", c)):
        m = summary.metrics()
        for key in ("ODS", "OIS", "AP", "R50"):
            metrics[f"{prefix}_{key}"] = m[key]
    per_item = [
        {"id": iid, "crispness": float(v), "f_seval": float(rs[3]), "f_ceval": float(rc[3])}
        for iid, v, rs, rc in zip(ids, values, s.per_image, c.per_image)
    ]
    return Result("crispness", metrics, per_item, detail={"seval": s, "ceval": c})


def _warm_up(params: dict) -> None:
    E = np.zeros((12, 12))
    E[2:10, 5:7] = 0.6
    crispness(E)


def _check(params: dict) -> None:
    """The settings, before any file is read (a bad one was blamed on a map)."""
    from ..primitives import nms_options

    if params["nthresh"] < 1:
        raise InputError(
            f"nthresh (--nthresh) must be a positive integer, got {params['nthresh']}"
        )
    if not 0 < params["max_dist"] < 1:
        raise InputError(
            "max_dist (--max-dist) is a fraction of the image diagonal in (0, 1), got "
            f"{params['max_dist']}"
        )
    try:
        nms_options(params["nms_r"], params["nms_s"], params["nms_m"])
    except InputError as exc:
        raise InputError(f"the NMS of SEval (--nms-r, --nms-s, --nms-m): {exc}") from None


def _crisp_exts(params: dict) -> tuple[str, ...]:
    """Raw soft maps only (a module function: worker processes pickle the family)."""
    return ("png", "bmp", "npy")


CRISPNESS = Family(
    name="crispness",
    version=1,
    defaults=defaults(CRISPNESS_PARAMS),
    evaluate=_evaluate,
    to_json=CrispRecord.to_json,
    from_json=CrispRecord.from_json,
    validate=_validate,
    check=_check,
    summarize=_summarize,
    label="crispness",
    summary_defaults=summary_defaults(CRISPNESS_PARAMS),
    item_score="crispness",
    warm_up=_warm_up,
    prediction_exts=_crisp_exts,
)
