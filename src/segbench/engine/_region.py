"""Run the region benchmark over folders: pairing, per-image records, resume, summary."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..io import (as_prediction, check_same_shape, list_files, read_ground_truth,
                  read_label_map, read_prediction)
from ..region import (RegionRecord, evaluate_image, human_region, summarize,
                      summarize_human_region)
from ..region._table import compact_labels
from ..report.official_region import write_eval_region, write_region_image_files
from ..result import Result, provenance
from ._boundary import (CACHE_DIR, _fingerprint, _load_json_record, _save_json_record,
                        pair_folders)
from ._executor import cached_map, map_items

#: .mat holds a ucm2 or segs; the image and .npy files hold one label map each.
REGION_PRED_EXTS = ("mat", "png", "bmp", "tif", "tiff", "npy")
#: Bump when a change to the computation invalidates cached records.
RECORD_VERSION = 1
_SUBDIR = "region"


@dataclass(frozen=True)
class _Task:
    iid: str
    gt_path: Path
    pred_path: Path
    nthresh: int


def read_region_prediction(path):
    """A region-benchmark input: ``.mat`` ucm2/segs, or one label map in an image/.npy.

    A label map's labels are all regions (0 included): they are renumbered 1..K, since
    the benchmark reserves 0 for unlabelled pixels. Returns a ``Prediction`` (a label
    map as one-segmentation ``segs``).
    """
    path = Path(path)
    if path.suffix.lower() == ".mat":
        return read_prediction(path)
    labels, _ = compact_labels(read_label_map(path), void=None)
    return as_prediction([labels], kind="segs", source=path)


def _evaluate_task(task: _Task):
    """Worker: read one image's files and evaluate. Module level so it pickles."""
    gt = read_ground_truth(task.gt_path)
    pred = read_region_prediction(task.pred_path)
    check_same_shape(pred, gt[0].shape, task.pred_path)
    try:
        record = evaluate_image(pred, gt, nthresh=task.nthresh)
    except InputError as exc:
        if exc.path is None:
            raise InputError(exc.problem, task.pred_path) from None
        raise
    return task, record


def _record_key(task: _Task) -> dict:
    return {"family": "region", "version": RECORD_VERSION, "nthresh": task.nthresh,
            "gt_sha256": _fingerprint(task.gt_path),
            "pred_sha256": _fingerprint(task.pred_path)}


def _record_path(out_dir: Path, iid: str) -> Path:
    return out_dir / CACHE_DIR / _SUBDIR / f"{iid}.json"


def _load_record(out_dir: Path, task: _Task, key: dict) -> RegionRecord | None:
    rec = _load_json_record(_record_path(out_dir, task.iid), key)
    if rec is None:
        return None
    try:
        return RegionRecord.from_json(rec["record"])
    except (KeyError, TypeError, ValueError):
        return None


def _save_record(out_dir: Path, task: _Task, key: dict, record: RegionRecord) -> None:
    write_region_image_files(out_dir, task.iid, record)
    _save_json_record(_record_path(out_dir, task.iid), key, {"record": record.to_json()})


def evaluate_region_folder(gt_dir, pred_dir, out_dir, *, nthresh: int = 99,
                           workers: int = 1, progress: bool = True):
    """Per-image region records for a folder, cached in ``out_dir`` (resumable).

    Returns ``(ids, records)`` sorted by id. Each finished image is written at once
    (``<iid>_ev2.txt``, ``_ev3.txt``, ``_ev4.txt`` in the official format, and a JSON
    record keyed by the parameters and the SHA-256 of both input files under
    ``.segbench-records/region/``), so a killed run resumes where it stopped and a
    changed input or parameter is recomputed.
    """
    if int(nthresh) != nthresh or nthresh < 1:
        raise InputError(f"nthresh must be a positive integer, got {nthresh}")
    out = Path(out_dir)
    (out / CACHE_DIR / _SUBDIR).mkdir(parents=True, exist_ok=True)
    tasks = [_Task(iid, gt_path, pred_path, int(nthresh))
             for iid, gt_path, pred_path in pair_folders(gt_dir, pred_dir,
                                                         pred_exts=REGION_PRED_EXTS)]
    records = cached_map(_evaluate_task, tasks, key=_record_key,
                         load=lambda t, k: _load_record(out, t, k),
                         save=lambda t, k, r: _save_record(out, t, k, r),
                         workers=workers, progress=progress, desc="region")
    ids = sorted(records)
    return ids, [records[i] for i in ids]


def region_result(ids, records, *, params: dict, human: dict | None = None):
    """Summarize records into a :class:`Result` (and return the summary too)."""
    summary = summarize(records, ids)
    metrics = summary.metrics()
    if human is not None:
        metrics.update({"human_covering": human["covering"], "human_PRI": human["PRI"],
                        "human_VI": human["VI"]})
    curves = {"thresholds": summary.thresholds, "covering": summary.covering,
              "pri": summary.pri, "vi": summary.vi}
    return (Result("region", metrics, summary.rows(), curves, provenance(**params)),
            summary)


def run_region(gt_dir, pred_dir, out_dir, *, nthresh: int = 99, workers: int = 1,
               progress: bool = True, result_name: str | None = "result.json",
               human: dict | None = None) -> Result:
    """The region benchmark of a folder of predictions, with every output file.

    Writes to ``out_dir``: ``<iid>_ev2.txt``, ``_ev3.txt``, ``_ev4.txt`` per image,
    ``eval_cover.txt``, ``eval_cover_img.txt``, ``eval_cover_th.txt``,
    ``eval_RI_VOI.txt``, ``eval_RI_VOI_thr.txt`` (official layouts) and ``result.json``.

    Parameters
    ----------
    gt_dir : path
        BSDS500 ground truth ``<iid>.mat`` files.
    pred_dir : path
        ``<iid>.mat`` holding ``ucm2`` (doubleSize; cut at ``nthresh`` thresholds) or
        ``segs`` (one "threshold" per segmentation), or ``<iid>.png|bmp|tif|npy`` label
        maps (one segmentation per image; every label, 0 included, is a region).
    out_dir : path
        Created if needed; holds the per-image records, so rerunning resumes.
    nthresh : int, default 99
        Number of ucm2 thresholds (those of the boundary benchmark).
    workers : int
        Worker processes; results are identical for any number.
    progress : bool
        Progress bar on stderr.
    result_name : str or None, default 'result.json'
        File name of the JSON result in ``out_dir`` (None: not written); e.g.
        'result_region.json' when the boundary benchmark shares the folder.
    human : dict, optional
        Human figures (:func:`run_human_region`) to include in the metrics.

    Returns
    -------
    Result
        family 'region'; metrics covering_ODS/OIS/best, PRI_ODS/OIS, VI_ODS/OIS (and
        thresholds); one row per image; curves covering, pri, vi per threshold.
    """
    out = Path(out_dir)
    ids, records = evaluate_region_folder(gt_dir, pred_dir, out, nthresh=nthresh,
                                          workers=workers, progress=progress)
    params = {"gt_dir": str(gt_dir), "pred_dir": str(pred_dir), "nthresh": nthresh,
              "n_images": len(ids)}
    result, summary = region_result(ids, records, params=params, human=human)
    write_eval_region(out, summary)
    if result_name:
        result.to_json(out / result_name)
    return result


def _human_item(gt_path: Path):
    return human_region(read_ground_truth(gt_path))


def run_human_region(gt_dir, *, workers: int = 1, progress: bool = True) -> dict:
    """Human region figures: each annotator against the others, over a folder.

    Covering pools areas over all (image, annotator) pairs; PRI and VI are means over
    them (see :func:`segbench.region.summarize_human_region`). Published on the BSDS500
    test split (Arbeláez et al. 2011, Table 2): covering 0.72, PRI 0.88, VI 1.17.

    Returns
    -------
    dict
        covering, covering_seg, PRI, VI, n_pairs and n_images.
    """
    gts = list_files(gt_dir, ("mat",))
    if not gts:
        raise InputError("no ground-truth .mat files found", gt_dir)
    tables = list(map_items(_human_item, list(gts.values()), workers=workers,
                            progress=progress, desc="human region"))
    out = summarize_human_region(tables)
    out["n_images"] = len(gts)
    return out


__all__ = ["evaluate_region_folder", "read_region_prediction", "region_result",
           "run_human_region", "run_region"]
