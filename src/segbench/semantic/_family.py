"""The semantic-segmentation benchmark as an engine family.

``SEMANTIC`` reads one ground-truth label map and its prediction per item and keeps
their counts (the confusion cells that are not zero and the per-class boundary-band
counts); the summary adds them up and reads them exactly as :class:`SemanticEval` does,
so the two give the same numbers. It is a spec (:class:`segbench.spec.Family`) run by
:func:`segbench.engine.run`; ``segbench.evaluate("semantic", ...)`` (through its runner
``segbench.evaluate("semantic", ...)``) pairs two folders by file-name suffix and
runs it.
"""

from __future__ import annotations

import os
import threading

import numpy as np

from ..errors import InputError
from ..result import Result
from ..spec import Family
from ._core import (
    DEFAULT_DILATION,
    DEFAULT_IGNORE,
    Counts,
    check_options,
    kernel_ignore,
    kernels,
    native,
)
from ._evaluator import REFERENCES, SemanticEval, _SemanticResult, class_names, count_pair
from ._metrics import _aacc, _acc, _dice, _fwiou, _iou, _nanmean, boundary_iou

#: Prediction files read when ``pred`` is a folder of ``<id>.<ext>`` rather than a
#: mapping (what :func:`segbench.io.read_label_map` reads).
PRED_EXTS = ("png", "bmp", "tif", "tiff", "npy", "mat")

_RECORD_FORMAT = 1


def _check(params: dict) -> None:
    names = class_names(params["classes"])
    try:
        check_options(
            len(names),
            params["ignore_index"],
            params["reduce_zero_label"],
            params["boundary_dilation"],
        )
    except ValueError as exc:  # a bad option combination is an input error here
        raise InputError(str(exc)) from None


def _settings(params: dict) -> tuple:
    classes = params["classes"]  # checked by resolve: a count or a list of names
    return (
        classes if isinstance(classes, int) else len(classes),
        params["ignore_index"],
        params["reduce_zero_label"],
        params["boundary_dilation"],
    )


def _exts(params: dict) -> tuple[str, ...]:
    return PRED_EXTS


def _gt_file(sample):
    item = sample.item
    if item.gt_path is not None:
        return item.gt_path
    if len(item.sources) == 1:
        return item.sources[0]
    raise InputError(
        f"image {item.iid!r}: the semantic benchmark reads one ground-truth "
        f"label map per image, this item has {len(item.sources)} files",
        item.sources[0] if item.sources else None,
    )


def _evaluate(sample, params: dict) -> tuple:
    """Counts of one pair: ``(conf index, conf count, gt_band, pred_band, band_inter)``,
    the flat (row = ground truth) confusion cells that are not zero and the per-class
    band counts (zeros without boundary IoU)."""
    gt_path = _gt_file(sample)
    settings = _settings(params)
    if sample.value is None and sample.prediction is not None and settings[3] is None:
        record = _native_record(gt_path, sample.prediction, settings)
        if record is not None:
            return record
    from ..io import read_stored_label_pair, read_stored_labels  # uint8 stays uint8

    if sample.value is None and sample.prediction is not None:
        # both files at once, into this thread's buffers: the maps are dropped below
        gt, pred = read_stored_label_pair(gt_path, sample.prediction)
    else:
        gt = read_stored_labels(gt_path)
        pred = sample.read_prediction(read_stored_labels)
    counts = _scratch(settings[0])
    count_pair(gt, pred, gt_path, sample.prediction, settings, counts)
    nz, vals = kernels().take_cells(counts.conf)  # and back to zeros
    gb, pb, bi = counts.gt_band, counts.pred_band, counts.band_inter
    record = (nz, vals, gb.copy(), pb.copy(), bi.copy())
    for arr in (gb, pb, bi):
        arr[:] = 0
    return record


def _native_record(gt_path, pred_path, settings) -> tuple | None:
    """The record of a pair of 8-bit PNG files decoded and counted by the C extension
    (no boundary IoU), or None: no extension, another kind of file, or anything wrong
    with the pair (the Python path then reads it again and raises the error naming the
    file and pixel)."""
    mod = native()
    if mod is None:
        return None
    gt_name, pred_name = os.fspath(gt_path), os.fspath(pred_path)
    if gt_name[-4:].lower() != ".png" or pred_name[-4:].lower() != ".png":
        return None
    num_classes, ignore, rzl, _dilation = settings
    got = mod.count_png_pair(gt_name, pred_name, num_classes, kernel_ignore(ignore), rzl)
    if got is None:
        return None
    cells, counts, itemsize = got
    dtype = np.int32 if itemsize == 4 else np.int64
    zeros = np.zeros(num_classes, np.int64)
    return (
        np.frombuffer(cells, dtype),
        np.frombuffer(counts, dtype),
        zeros,
        zeros.copy(),
        zeros.copy(),
    )


_SCRATCH = threading.local()


def _scratch(num_classes: int) -> Counts:
    """Zeroed counts kept per thread: a fresh C x C array per image (180 kB for 150
    classes, fresh pages from the system each time) cost more than counting it."""
    counts = getattr(_SCRATCH, "counts", None)
    if counts is None or counts.gt_band.size != num_classes:
        counts = _SCRATCH.counts = Counts.zeros(num_classes)
    return counts


def _record_to_json(record) -> dict:
    nz, vals, gb, pb, bi = record
    return {
        "format": _RECORD_FORMAT,
        "num_classes": int(len(gb)),
        "conf_index": nz.tolist(),
        "conf_count": vals.tolist(),
        "gt_band": gb.tolist(),
        "pred_band": pb.tolist(),
        "band_inter": bi.tolist(),
    }


def _ints(value, what: str) -> np.ndarray:
    if isinstance(value, list) and not value:
        return np.zeros(0, np.int64)
    arr = np.asarray(value)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise ValueError(f"{what} is not a list of integers")
    if (arr < 0).any():
        raise ValueError(f"{what} has a negative count")
    return arr.astype(np.int64)


def _record_from_json(d) -> tuple:
    if not isinstance(d, dict) or d.get("format") != _RECORD_FORMAT:
        raise ValueError("not a semantic record of this format")
    c = d["num_classes"]
    if isinstance(c, bool) or not isinstance(c, int) or c < 1:
        raise ValueError(f"num_classes {c!r}")
    nz, vals = _ints(d["conf_index"], "conf_index"), _ints(d["conf_count"], "conf_count")
    if nz.shape != vals.shape:
        raise ValueError("conf_index and conf_count differ in length")
    if nz.size and (nz[-1] >= c * c or (np.diff(nz) <= 0).any() or (vals == 0).any()):
        raise ValueError(
            "conf_index must be increasing cells of the C x C matrix, with non-zero counts"
        )
    gb, pb, bi = (_ints(d[k], k) for k in ("gt_band", "pred_band", "band_inter"))
    if not gb.shape == pb.shape == bi.shape == (c,):
        raise ValueError("the band counts need one value per class")
    if (bi > np.minimum(gb, pb)).any():
        raise ValueError("a band intersection exceeds its bands")
    return nz, vals, gb, pb, bi


def _validate(record: tuple, params: dict) -> None:
    """A record read back has one band count per class of its parameters (ValueError)."""
    if params.get("classes") is None:
        return
    n = _settings(params)[0]
    if len(record[2]) != n:
        raise ValueError(f"the record holds {len(record[2])} classes, its parameters {n}")


def _row_means(values: np.ndarray) -> np.ndarray:
    """Per row, the mean of the values that are not ``nan`` (``nan`` if none): the sum
    and count :func:`numpy.nanmean` takes of each row, so the same float."""
    missing = np.isnan(values)
    total = np.where(missing, 0.0, values).sum(axis=1)
    count = values.shape[1] - missing.sum(axis=1)
    out = np.full(len(values), np.nan)
    np.divide(total, count, out=out, where=count > 0)
    return out


def _integers(values) -> np.ndarray:
    """``values`` as an integer array, not copied when it is one."""
    arr = np.asarray(values)
    return arr if arr.dtype.kind in "iu" else arr.astype(np.int64)


def _areas(block, c: int, conf: np.ndarray | None = None):
    """(tp, gt_area, pred_area): (images, classes) float64 arrays of sparse records;
    their confusion cells are added to ``conf`` (flat int64) when given."""
    tp, gt_area, pred_area = (np.zeros((len(block), c), np.int64) for _ in range(3))
    into = np.zeros(0, np.int64) if conf is None else conf
    mod = native()
    if mod is not None:  # the C loop: no Numba loaded for a folder run it counted
        for k, r in enumerate(block):
            mod.record_areas(
                _integers(r[0]), _integers(r[1]), c, tp[k], gt_area[k], pred_area[k], into
            )
    else:
        record_areas = kernels().record_areas
        for k, r in enumerate(block):
            # as they are: int32 from counting, int64 read back from JSON (no copies)
            record_areas(
                _integers(r[0]), _integers(r[1]), c, k, tp, gt_area, pred_area, into
            )
    # float64 as before: the sums are integers below 2**53, so exact either way
    return tp.astype(np.float64), gt_area.astype(np.float64), pred_area.astype(np.float64)


def _resampler(ids, records, params, options):
    """The bootstrap statistic: image weights -> mIoU, fwIoU, mAcc, aAcc, mDice (and
    mBIoU with boundary IoU) per draw, from the weighted sums of each image's class
    areas: what :class:`SemanticEval` reports on the drawn images."""
    c = len(records[0][2])
    tp, gt_area, pred_area = _areas(list(records), c)
    boundary = params["boundary_dilation"] is not None
    if boundary:
        gb, pb, bi = (np.array([r[k] for r in records], np.float64) for k in (2, 3, 4))

    def statistic(weights: np.ndarray) -> dict:
        out = {
            k: np.empty(len(weights))
            for k in (
                "mIoU",
                "fwIoU",
                "mAcc",
                "aAcc",
                "mDice",
                *(("mBIoU",) if boundary else ()),
            )
        }
        areas = (weights @ tp, weights @ gt_area, weights @ pred_area)
        if boundary:
            inter = weights @ bi
            union = weights @ gb + weights @ pb - inter
        for b in range(len(weights)):
            a = tuple(x[b] for x in areas)
            out["mIoU"][b] = _nanmean(_iou(*a))
            out["fwIoU"][b] = _fwiou(*a)
            out["mAcc"][b] = _nanmean(_acc(*a))
            out["aAcc"][b] = _aacc(*a)
            out["mDice"][b] = _nanmean(_dice(*a))
            if boundary:
                out["mBIoU"][b] = boundary_iou(inter[b], union[b])[1]
        return out

    return statistic


def _item_rows(
    ids,
    records,
    num_classes: int,
    boundary: bool,
    chunk: int = 4096,
    conf: np.ndarray | None = None,
) -> list:
    """One row per image: the split's rules applied to that image's counts alone,
    computed for a block of images at a time ((images, classes) arrays). Every
    record's confusion cells are added to ``conf`` when given."""
    c = num_classes
    rows = []
    for a in range(0, len(records), chunk):
        block = records[a : a + chunk]
        n = len(block)
        tp, gt_area, pred_area = _areas(block, c, conf)
        iou = _iou(tp, gt_area, pred_area)
        counted = gt_area.sum(axis=1)  # exact: sums of integers below 2**53
        aacc = np.full(n, np.nan)
        np.divide(tp.sum(axis=1), counted, out=aacc, where=counted > 0)
        miou = _row_means(iou)
        n_classes = c - np.isnan(iou).sum(axis=1)
        if boundary:
            gb, pb, bi = (
                np.array([r[k] for r in block], np.float64).reshape(n, c) for k in (2, 3, 4)
            )
            mbiou = _row_means(_iou(bi, gb, pb))  # |G & P| / (|G| + |P| - |G & P|)
        for k in range(n):
            row = {
                "id": ids[a + k],
                "n_pixels": int(counted[k]),
                "n_classes": int(n_classes[k]),
                "aAcc": float(aacc[k]),
                "mIoU": float(miou[k]),
            }
            if boundary:
                row["mBIoU"] = float(mbiou[k])
            rows.append(row)
    return rows


def _summarize(ids, records, params, options) -> Result:
    """The split's result from the per-pair counts.

    ``metrics`` are :class:`SemanticEval`'s six means (mIoU, fwIoU, mAcc, aAcc, mDice,
    mBIoU) and ``per_class`` its per-class IoU, Acc, Dice, BIoU by name, computed by an
    evaluator holding the summed counts (kept as ``detail``). ``per_item`` has one row
    per pair: ``id`` (the key), ``n_pixels`` (pixels counted: ground truth not
    ignored), ``n_classes`` (classes in the image's ground truth or prediction),
    ``aAcc`` (its pixel accuracy), ``mIoU`` (the mean IoU over those classes) and,
    with boundary IoU, ``mBIoU`` (the mean boundary IoU over the classes with a band):
    the split's rules applied to the one image, i.e. what a :class:`SemanticEval` fed
    that pair alone reports. Not computed is ``nan``.
    """
    ev = SemanticEval(
        class_names(params["classes"]),
        ignore_index=params["ignore_index"],
        reduce_zero_label=params["reduce_zero_label"],
        boundary_dilation=params["boundary_dilation"],
    )
    total = Counts.zeros(ev.num_classes)
    boundary = params["boundary_dilation"] is not None
    # the confusion cells are summed by the per-image pass (one read of the records)
    per_item = _item_rows(
        list(ids), list(records), ev.num_classes, boundary, conf=total.conf
    )
    for _nz, _vals, gb, pb, bi in records:
        total.gt_band += gb
        total.pred_band += pb
        total.band_inter += bi
    ev._add(total)
    ev._n_images = len(records)
    whole = ev._result()
    notes = {
        "status": "parity_verified",
        "references": dict(REFERENCES),
        "params": {**ev._config(), "n_pixels": ev.n_pixels},
    }
    return _SemanticResult(
        "semantic",
        whole.metrics,
        per_item,
        {},
        per_class=whole.per_class,
        notes=notes,
        detail=ev,
    )


def _warm_up(params: dict) -> None:
    """The counting kernels once on a 2 x 2 pair; nothing when the C extension counts
    (no boundary IoU): Numba is then loaded only if some pair needs it."""
    if params["boundary_dilation"] is None and native() is not None:
        return
    tiny = np.zeros((1, 2, 2), np.int32)
    SemanticEval(
        class_names(params["classes"]),
        ignore_index=params["ignore_index"],
        reduce_zero_label=params["reduce_zero_label"],
        boundary_dilation=params["boundary_dilation"],
    ).update(tiny, tiny)


class _SemanticFamily(Family):
    """:class:`Family` whose ``resolve`` also puts ``classes`` in one JSON-stable form
    (an int, or a list of names), so equal settings give equal record keys."""

    def resolve(self, params=None) -> dict:
        out = super().resolve(params)
        classes = out["classes"]  # JSON-stable in record keys: an int or a list of str
        out["classes"] = (
            int(classes) if isinstance(classes, (int, np.integer)) else class_names(classes)
        )
        return out


SEMANTIC = _SemanticFamily(
    name="semantic",
    version=1,
    defaults={
        "classes": None,
        "ignore_index": DEFAULT_IGNORE,
        "reduce_zero_label": False,
        "boundary_dilation": DEFAULT_DILATION,
    },
    evaluate=_evaluate,
    to_json=_record_to_json,
    from_json=_record_from_json,
    validate=_validate,
    summarize=_summarize,
    prediction_exts=_exts,
    check=_check,
    label="semantic",
    resampler=_resampler,
    item_score="mIoU",
    warm_up=_warm_up,
)
