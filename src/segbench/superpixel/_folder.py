"""Run the superpixel benchmark over a folder of superpixel maps."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..datasets import pair_predictions
from ..engine import map_items
from ..errors import InputError
from ..io import check_all_present, check_same_shape, list_files, read_image
from ..result import Result, provenance
from ._boundary import DEFAULT_TOLERANCE
from ._evaluate import ANNOTATOR_MEASURES, _evaluate_image, summarize
from ._io import (SUPERPIXEL_EXTS, list_annotator_files, read_annotators,
                  read_superpixels, write_stutz_results)
from ._measures import ACHANTA_MIN_OVERLAP

IMAGE_EXTS = ("jpg", "jpeg", "png", "bmp", "tif", "tiff")


@dataclass(frozen=True)
class _Task:
    iid: str
    gt_paths: tuple
    sp_path: Path
    image_path: Path | None
    params: tuple            # sorted (name, value) pairs of evaluate_image's options
    max_annotators: int | None
    stutz: bool


def pair_superpixel_folders(gt_dir, pred_dir, image_dir=None):
    """``(iid, gt_paths, sp_path, image_path)`` for every ground-truth image, by id.

    Ground truth: BSDS500 ``.mat`` ,
    ``.npz`` (``gt0, gt1, ...``) or the C++ benchmark's CSV layout. Every ground-truth
    image needs a superpixel map; with ``image_dir``, an image too.
    """
    gts = list_annotator_files(gt_dir)
    preds = pair_predictions(gts, pred_dir, SUPERPIXEL_EXTS)
    pairs = [(iid, tuple(gts[iid]), preds[iid]) for iid in gts]
    images = {}
    if image_dir is not None:
        images = list_files(image_dir, IMAGE_EXTS)
        check_all_present([iid for iid, _, _ in pairs], images, "images missing", image_dir)
    return [(iid, g, s, images.get(iid)) for iid, g, s in pairs]


def _evaluate_task(task: _Task):
    """Worker: read one image's files and evaluate. Module level so it pickles."""
    gts = read_annotators(task.gt_paths)
    if task.max_annotators is not None:
        gts = gts[:task.max_annotators]
    sp = read_superpixels(task.sp_path)
    check_same_shape(sp, gts[0].shape, task.sp_path)
    image = None if task.image_path is None else read_image(task.image_path)
    if image is not None and image.shape[:2] != sp.shape:
        raise InputError(f"image is {image.shape[0]}x{image.shape[1]} but the superpixel "
                         f"map is {sp.shape[0]}x{sp.shape[1]}", task.image_path)
    params = dict(task.params)
    try:
        record, built = _evaluate_image(sp, gts, image, **params)
    except InputError as exc:
        if exc.path is None:
            raise InputError(exc.problem, task.sp_path) from None
        raise
    stutz = None
    if task.stutz:
        from ._stutz import _check_labels, _stutz_rows, stutz_rows
        if params.get("void") is None:      # the tables the benchmark's columns use
            sp, gs = _check_labels(sp, gts)
            stutz = _stutz_rows(sp, gs, image, *built)
        else:
            stutz = stutz_rows(sp, gts, image)
    return task.iid, record, stutz


def superpixel_result(ids, records, params: dict) -> Result:
    """One :class:`~segbench.result.Result` from per-image records."""
    s = summarize(records)
    rows = []
    for iid, r in zip(ids, records):
        row = {"image": iid, "n_annotators": r.n_annotators}
        row.update(r.mean())
        row.update({f"{k}_best": v for k, v in r.best().items()})
        row.update(r.image_measures())
        row["per_annotator"] = {k: np.asarray(v).tolist()
                                for k, v in r.per_annotator.items()}
        rows.append(row)
    return Result("superpixel", s.metrics(), rows, {},
                  provenance(n_images=len(records), **params))


def run_superpixel(gt_dir, pred_dir, *, images=None, out=None, workers: int = 1,
                   progress: bool = True, tolerance: float = DEFAULT_TOLERANCE,
                   window: str = "euclidean", boundary: str = "bsds",
                   min_overlap: float = ACHANTA_MIN_OVERLAP, void=None,
                   connectivity: int = 4, max_annotators: int | None = None,
                   stutz: bool = False) -> Result:
    """Score a folder of superpixel maps against a folder of ground truth.

    Parameters
    ----------
    gt_dir : path
        ``<iid>.mat`` (BSDS500), ``<iid>.npz`` (``gt0, gt1, ...``) or the C++ layout
        (``<iid>-<t>.csv``).
    pred_dir : path
        ``<iid>.png`` (16-bit), ``.npy``, ``.mat``, ``.csv`` (C++ layout) or ``.npz``.
    images : path, optional
        ``<iid>.jpg/.png``: enables the explained variation (and the colour columns of
        ``stutz``).
    out : path, optional
        Writes ``result.json`` and ``per_annotator.csv`` there; with ``stutz`` also
        ``results.csv`` in the C++ benchmark's layout and column names.
    workers, progress
        As every runner of segbench.
    tolerance, window, boundary, min_overlap, void, connectivity
        As :func:`evaluate_image`.
    max_annotators : int, optional
        Use only the first annotators of each image (the C++ benchmark reads 5).
    stutz : bool
        Also compute the C++ benchmark's columns (:func:`stutz_columns`).

    Returns
    -------
    Result
        family 'superpixel'; ``metrics`` as :meth:`SuperpixelSummary.metrics`;
        ``per_item`` one row per image with the per-annotator values.
    """
    params = {"tolerance": float(tolerance), "window": window, "boundary": boundary,
              "min_overlap": float(min_overlap), "void": void,
              "connectivity": int(connectivity)}
    tasks = [_Task(iid, g, s, im, tuple(sorted(params.items())), max_annotators, stutz)
             for iid, g, s, im in pair_superpixel_folders(gt_dir, pred_dir, images)]
    done: dict[str, tuple] = {}
    for iid, record, cols in map_items(_evaluate_task, tasks, workers=workers,
                                       progress=progress, desc="superpixel"):
        done[iid] = (record, cols)
    ids = sorted(done)
    records = [done[i][0] for i in ids]
    res = superpixel_result(ids, records, dict(params, gt=str(gt_dir),
                                               pred=str(pred_dir),
                                               images=None if images is None
                                               else str(images),
                                               max_annotators=max_annotators))
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        res.to_json(out / "result.json")
        _write_per_annotator(out / "per_annotator.csv", ids, records)
        if stutz:
            from ._stutz import STUTZ_COLUMNS
            cols = list(STUTZ_COLUMNS)
            rows, vals = [], []
            for iid in ids:
                for t, c in enumerate(done[iid][1]):
                    rows.append((iid, f"{iid}-{t}"))
                    vals.append([c[k] for k in cols])
            write_stutz_results(out / "results.csv", rows, cols, vals)
    return res


def _write_per_annotator(path: Path, ids, records) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["image", "annotator", *ANNOTATOR_MEASURES, "n_superpixels",
                    "n_components", "n_split", "co", "ev"])
        for iid, r in zip(ids, records):
            img = r.image_measures()
            for k in range(r.n_annotators):
                w.writerow([iid, k, *(f"{r.per_annotator[m][k]:.6g}"
                                      for m in ANNOTATOR_MEASURES),
                            img["n_superpixels"], img["n_components"], img["n_split"],
                            f"{img['co']:.6g}", f"{img['ev']:.6g}"])


__all__ = ["pair_superpixel_folders", "run_superpixel", "superpixel_result"]
