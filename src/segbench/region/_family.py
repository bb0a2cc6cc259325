"""The region benchmark and the human region consistency as engine families.

``REGION`` scores ucm2 hierarchies, segs or (with ``labels``) label-map images
(regionBench.m: covering, PRI, VI at ODS/OIS, Best); ``HUMAN_REGION`` scores each
annotator against the others. Both are specs (:class:`segbench.spec.Family`) run by
:func:`segbench.engine.run`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError
from ..families import REGION_PARAMS, defaults
from ..primitives import check_thresholds, compact_labels
from ..result import Result
from ..spec import Family
from ._image import RegionRecord, evaluate_image, human_region
from ._summary import resampler, summarize, summarize_human_region

if TYPE_CHECKING:
    from ..io import Prediction

#: Label-map files ``region --labels`` reads (one segmentation per image).
LABEL_EXTS = ("png", "bmp", "tif", "tiff", "npy")


def read_region_prediction(path) -> Prediction:
    """A region-benchmark input: ``.mat`` ucm2/segs, or one label map in an image/.npy.

    A label map's labels are all regions (0 included): they are renumbered 1..K, since
    the benchmark reserves 0 for unlabelled pixels. Returns a ``Prediction`` (a label
    map as one-segmentation ``segs``).
    """
    from ..io import as_prediction, read_label_map, read_prediction

    path = Path(path)
    if path.suffix.lower() == ".mat":
        return read_prediction(path)
    labels, _ = compact_labels(read_label_map(path), void=None)
    return as_prediction([labels], kind="segs", source=path)


def _exts(params: dict) -> tuple[str, ...]:
    return ("mat", *LABEL_EXTS) if params["labels"] else ("mat",)


def _hint(params: dict, found: list[str]) -> str:
    if params["labels"]:
        return "expected ucm2/segs .mat files or label-map images"
    images = [e for e in found if e in LABEL_EXTS]
    there = f"; the folder holds .{'/.'.join(images)} files" if images else ""
    return (
        "the region benchmark needs ucm2 or segs .mat files, or --labels to read "
        f"label-map images as segmentations{there} (soft boundary maps are scored "
        "by 'segbench boundary')"
    )


class BoundaryMapWarning(UserWarning):
    """Predictions read as label maps (``--labels``) that look like boundary maps."""


#: Label-map files the region benchmark sniffs before a ``--labels`` run.
_SNIFFED = 3


def _check_predictions(predictions: dict, params: dict) -> None:
    """Warn when the first label-map files of a ``labels`` run are boundary maps:
    their nonzero pixels thin lines (a soft or NMS map, whose every grey level would
    be read as one segment), by the rule that tells edge maps from label maps in
    ground truth (:func:`segbench.datasets.sniff_file`)."""
    if not params["labels"]:
        return
    from ..datasets import thin_structures
    from ..io import read_label_map

    files = [
        Path(f)
        for f in predictions.values()
        if isinstance(f, (str, Path)) and Path(f).suffix.lower() != ".mat"
    ][:_SNIFFED]
    try:
        if not files or not all(thin_structures(read_label_map(f)) for f in files):
            return
    except (InputError, OSError, ValueError):  # unreadable: said where it is scored
        return
    import warnings

    warnings.warn(
        f"{files[0].parent}: {', '.join(f.name for f in files)} look like boundary "
        "maps, not label maps: their nonzero pixels are thin lines, and with --labels "
        "each of their values is read as one segment; soft boundary maps are scored by "
        "'segbench boundary', hierarchies by 'segbench region' on ucm2 .mat files "
        "('segbench ucm' makes them from soft maps)",
        BoundaryMapWarning,
        stacklevel=2,
    )


def _check(params: dict) -> None:
    if params["nthresh"] < 1:
        raise InputError(f"nthresh must be a positive integer, got {params['nthresh']}")


def _evaluate(sample, params: dict) -> RegionRecord:
    from ..io import check_same_shape

    gt = sample.ground_truth()
    pred = sample.read_prediction(read_region_prediction)
    check_same_shape(pred, gt[0].shape, sample.prediction)
    return evaluate_image(pred, gt, nthresh=params["nthresh"])


class UndefinedScoreWarning(UserWarning):
    """Images whose region scores are undefined (NaN), which makes the run's means
    NaN."""


def _summarize(ids, records, params, options) -> Result:
    summary = summarize(records, ids)
    metrics = summary.metrics()
    rows = summary.rows()
    undefined = [row["id"] for row in rows if row["pri"] != row["pri"]]
    if undefined:
        import warnings

        from ..errors import first_names

        one = len(undefined) == 1
        warnings.warn(
            f"PRI and VI are undefined (NaN) for {len(undefined)} of the {len(ids)} "
            f"images ({first_names(undefined, 5)}), so their means over images are "
            f"NaN: {'its' if one else 'their'} segmentations or ground truth label no "
            "pixel (a ucm2 of boundaries everywhere, an all-zero label map: 0 is BSDS's "
            "unlabelled)",
            UndefinedScoreWarning,
            stacklevel=2,
        )
    human = (options or {}).get("human_region")
    if human is not None:
        metrics.update(
            {
                "human_covering": human["covering"],
                "human_PRI": human["PRI"],
                "human_VI": human["VI"],
            }
        )
    curves = {
        "thresholds": summary.thresholds,
        "covering": summary.covering,
        "pri": summary.pri,
        "vi": summary.vi,
    }
    return Result("region", metrics, rows, curves, detail=summary)


def _write(out, result: Result, ids, records, options) -> None:
    """``<iid>_ev2/_ev3/_ev4.txt`` (rewritten from the records every run) and the five
    dataset files of collect_eval_reg.m."""
    from ..io import format_ev2, format_ev3, format_ev4, write_eval_region, write_if_changed

    for iid, rec in zip(ids, records):
        for suffix, fmt in (("ev2", format_ev2), ("ev3", format_ev3), ("ev4", format_ev4)):
            write_if_changed(out / f"{iid}_{suffix}.txt", fmt(rec))
    write_eval_region(out, result.detail)


def _record_to_json(record: RegionRecord) -> dict:
    return record.to_json()


def _validate(record: RegionRecord, params: dict) -> None:
    """A record read back has one entry per threshold of its ``nthresh`` (ValueError)."""
    check_thresholds(record.thresholds, params["nthresh"])


def _resampler(ids, records, params, options):
    return resampler(records)


REGION = Family(
    name="region",
    version=1,
    defaults=defaults(REGION_PARAMS, ("nthresh", "labels")),
    evaluate=_evaluate,
    to_json=_record_to_json,
    from_json=RegionRecord.from_json,
    validate=_validate,
    check_predictions=_check_predictions,
    summarize=_summarize,
    write=_write,
    per_image_files=("_ev2.txt", "_ev3.txt", "_ev4.txt"),
    prediction_exts=_exts,
    missing_hint=_hint,
    check=_check,
    label="region",
    resampler=_resampler,
    item_score="ois_covering",
)


# --- human consistency -------------------------------------------------------------


def _evaluate_human(sample, params: dict) -> np.ndarray:
    return np.asarray(human_region(sample.ground_truth()), np.float64).reshape(-1, 6)


def _table_to_json(table: np.ndarray) -> dict:
    return {"table": table.tolist()}


def float_rows(values, columns: int, what: str) -> np.ndarray:
    """A JSON list of rows as a (N, columns) float64 array (N may be 0); ValueError
    naming ``what`` otherwise."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        return arr.reshape(0, columns)
    if arr.ndim != 2 or arr.shape[1] != columns:
        raise ValueError(f"{what} has {columns} columns")
    return arr


def _table_from_json(d) -> np.ndarray:
    """A human region table (cntR, sumR, cntP, sumP, PRI, VI per annotator);
    ValueError where its numbers cannot be (not finite, a covering numerator outside
    [0, its area], PRI outside [0, 1], a negative VI)."""
    t = float_rows(d["table"], 6, "a human region table")
    if not np.isfinite(t).all():
        raise ValueError("a human region table holds values that are not finite")
    slack = 1e-9 * max(1.0, float(t[:, [1, 3]].max(initial=0)))
    if (
        ((t[:, [0, 2]] < 0) | (t[:, [0, 2]] > t[:, [1, 3]] + slack)).any()
        or ((t[:, 4] < -1e-9) | (t[:, 4] > 1 + 1e-9)).any()
        or (t[:, 5] < -1e-9).any()
    ):
        raise ValueError(
            "a human region table holds a covering numerator above its "
            "area, a PRI outside [0, 1] or a negative VI"
        )
    return t


def _summarize_human(ids, tables, params, options) -> Result:
    metrics = summarize_human_region(tables)
    metrics["n_images"] = len(ids)
    per_item = []
    for iid, t in zip(ids, tables):
        cover = (
            float(t[:, 0].sum() / t[:, 1].sum())
            if t.size and t[:, 1].sum()
            else float("nan")
        )
        per_item.append(
            {
                "id": iid,
                "n_annotators": int(t.shape[0]),
                "covering": cover,
                "PRI": float(t[:, 4].mean()) if t.size else float("nan"),
                "VI": float(t[:, 5].mean()) if t.size else float("nan"),
            }
        )
    return Result("human_region", metrics, per_item)


HUMAN_REGION = Family(
    name="human_region",
    version=1,
    defaults={},
    evaluate=_evaluate_human,
    to_json=_table_to_json,
    from_json=_table_from_json,
    summarize=_summarize_human,
    label="human region",
)
