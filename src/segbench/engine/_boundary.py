"""Run the boundary benchmark over folders: pairing, per-image records, resume, summary."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..boundary import (DEFAULT_MAX_DIST, BoundaryCounts, evaluate_image, human_counts,
                        summarize, summarize_human)
from ..errors import InputError
from ..io import (check_all_present, check_same_shape, list_files, read_ground_truth,
                  read_prediction)
from ..report.official import atomic_write_text, write_eval_bdry, write_ev1
from ..result import Result, provenance
from ._executor import cached_map, map_items

PRED_EXTS = ("png", "bmp", "npy", "mat")
CACHE_DIR = ".segbench-records"


def pair_folders(gt_dir, pred_dir, *, pred_exts=PRED_EXTS) -> list[tuple[str, Path, Path]]:
    """Pair ground-truth ``<iid>.mat`` files with predictions ``<iid>.<ext>``.

    Returns ``(iid, gt_path, pred_path)`` sorted by id. Every ground-truth image needs
    a prediction (the list of missing ids is in the error); predictions without
    ground truth are ignored.
    """
    gts = list_files(gt_dir, ("mat",))
    if not gts:
        raise InputError("no ground-truth .mat files found", gt_dir)
    preds = list_files(pred_dir, pred_exts)
    check_all_present(gts, preds, f"images have no prediction (.{'/.'.join(pred_exts)})",
                      pred_dir)
    return [(iid, gts[iid], preds[iid]) for iid in sorted(gts)]


def _fingerprint(path: Path) -> str:
    """SHA-256 of a file, computed once per (path, mtime, size) in each process."""
    st = Path(path).stat()
    return _sha256(str(path), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=4096)
def _sha256(path: str, mtime_ns: int, size: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _load_json_record(path: Path, key: dict) -> dict | None:
    """The JSON record at ``path`` if its ``key`` equals ``key``, else None."""
    try:
        rec = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None  # absent or half-written by a killed run: recompute
    if not isinstance(rec, dict) or rec.get("key") != key:
        return None
    return rec


def _save_json_record(path: Path, key: dict, payload: dict) -> None:
    """Write ``{"iid": <file stem>, "key": key, **payload}`` atomically to ``path``."""
    path = Path(path)
    atomic_write_text(path, json.dumps({"iid": path.stem, "key": key, **payload}))


@dataclass(frozen=True)
class _Task:
    iid: str
    gt_path: Path
    pred_path: Path
    nthresh: int
    max_dist: float
    thin: bool


def _evaluate_task(task: _Task):
    """Worker: read one image's files and count. Module level so it pickles."""
    gt = read_ground_truth(task.gt_path)
    pred = read_prediction(task.pred_path)
    check_same_shape(pred, gt[0].shape, task.pred_path)
    counts = evaluate_image(pred, gt, nthresh=task.nthresh, max_dist=task.max_dist,
                            thin=task.thin)
    return task, counts


def _record_key(task: _Task) -> dict:
    return {"nthresh": task.nthresh, "max_dist": task.max_dist, "thin": task.thin,
            "gt_sha256": _fingerprint(task.gt_path),
            "pred_sha256": _fingerprint(task.pred_path)}


def _load_record(out_dir: Path, task: _Task, key: dict) -> BoundaryCounts | None:
    rec = _load_json_record(out_dir / CACHE_DIR / f"{task.iid}.json", key)
    if rec is None:
        return None
    c = rec["counts"]
    return BoundaryCounts(np.asarray(c["thresholds"], float),
                          *(np.asarray(c[k], np.int64)
                            for k in ("cnt_r", "sum_r", "cnt_p", "sum_p")))


def _save_record(out_dir: Path, task: _Task, key: dict, counts: BoundaryCounts) -> None:
    _save_json_record(out_dir / CACHE_DIR / f"{task.iid}.json", key, {"counts": {
        "thresholds": counts.thresholds.tolist(),
        **{k: getattr(counts, k).tolist() for k in ("cnt_r", "sum_r", "cnt_p", "sum_p")}}})
    write_ev1(out_dir / f"{task.iid}_ev1.txt", counts)


def evaluate_folder(gt_dir, pred_dir, out_dir, *, nthresh: int = 99,
                    max_dist: float = DEFAULT_MAX_DIST, thin: bool = True,
                    workers: int = 1, progress: bool = True):
    """Per-image boundary counts for a folder, cached in ``out_dir`` (resumable).

    Returns ``(ids, records)`` sorted by id. Each finished image is written at once
    (``<iid>_ev1.txt`` in the official format, and a JSON record keyed by the
    parameters and the SHA-256 of both input files), so a killed run resumes where it
    stopped and a changed input or parameter is recomputed.
    """
    out = Path(out_dir)
    (out / CACHE_DIR).mkdir(parents=True, exist_ok=True)
    tasks = [_Task(iid, gt_path, pred_path, int(nthresh), float(max_dist), bool(thin))
             for iid, gt_path, pred_path in pair_folders(gt_dir, pred_dir)]
    records = cached_map(_evaluate_task, tasks, key=_record_key,
                         load=lambda t, k: _load_record(out, t, k),
                         save=lambda t, k, r: _save_record(out, t, k, r),
                         workers=workers, progress=progress, desc="boundary")
    ids = sorted(records)
    return ids, [records[i] for i in ids]


def boundary_result(ids, records, *, params: dict, human=None) -> tuple[Result, object]:
    """Summarize records into a :class:`Result` (and return the summary too)."""
    summary = summarize(records, ids)
    per_item = [{"id": iid, "threshold": row[0], "recall": row[1], "precision": row[2],
                 "f": row[3]} for iid, row in zip(ids, summary.per_image)]
    metrics = summary.metrics()
    if human is not None:
        metrics.update({"human_recall": human[0], "human_precision": human[1],
                        "human_F": human[2]})
    curves = {"thresholds": summary.thresholds, "recall": summary.recall,
              "precision": summary.precision, "f": summary.f}
    return Result("boundary", metrics, per_item, curves, provenance(**params)), summary


def run_boundary(gt_dir, pred_dir, out_dir, *, nthresh: int = 99,
                 max_dist: float = DEFAULT_MAX_DIST, thin: bool = True, workers: int = 1,
                 progress: bool = True, plot: bool = True, name: str | None = None,
                 human=None) -> Result:
    """The boundary benchmark of a folder of predictions, with every output file.

    Writes to ``out_dir``: ``<iid>_ev1.txt`` per image, ``eval_bdry.txt``,
    ``eval_bdry_img.txt``, ``eval_bdry_thr.txt`` (official layouts), ``result.json``
    and, with ``plot``, ``pr_curve.png``.

    Parameters
    ----------
    gt_dir : path
        BSDS500 ground truth ``<iid>.mat`` files.
    pred_dir : path
        ``<iid>.png|bmp|npy`` soft maps or ``<iid>.mat`` (ucm2 or segs).
    out_dir : path
        Created if needed; holds the per-image records, so rerunning resumes.
    nthresh, max_dist, thin
        As :func:`segbench.boundary.evaluate_image`.
    workers : int
        Worker processes; results are identical for any number.
    human : (recall, precision, F), optional
        Human point for the plot and the JSON.
    """
    out = Path(out_dir)
    ids, records = evaluate_folder(gt_dir, pred_dir, out, nthresh=nthresh,
                                   max_dist=max_dist, thin=thin, workers=workers,
                                   progress=progress)
    params = {"gt_dir": str(gt_dir), "pred_dir": str(pred_dir), "nthresh": nthresh,
              "max_dist": max_dist, "thin": thin, "n_images": len(ids)}
    result, summary = boundary_result(ids, records, params=params, human=human)
    write_eval_bdry(out, summary)
    result.to_json(out / "result.json")
    if plot:
        plot_summary(summary, name or Path(pred_dir).name, out / "pr_curve.png", human)
    return result


def plot_summary(summary, name: str, path, human=None) -> None:
    """PR curve of one run with its ODS point (and the human point) as a PNG."""
    from ..report.plots import plot_pr
    plot_pr([{"name": name, "recall": summary.recall, "precision": summary.precision,
              "ods": summary.ods[1:]}], path, human=human)


def _human_item(args):
    """Worker: one image's pooled human counts. Module level so it pickles."""
    gt_path, max_dist = args
    return human_counts(read_ground_truth(gt_path), max_dist=max_dist)


def run_human(gt_dir, *, max_dist: float = DEFAULT_MAX_DIST, workers: int = 1,
              progress: bool = True) -> dict:
    """Human consistency: each annotator against the others, pooled over images.

    Returns a dict with recall, precision, F, the pooled counts (cntR, sumR, cntP,
    sumP), the number of images and the tolerance.
    """
    gts = list_files(gt_dir, ("mat",))
    if not gts:
        raise InputError("no ground-truth .mat files found", gt_dir)
    total = np.zeros(4, np.int64)
    for counts in map_items(_human_item, [(p, max_dist) for p in gts.values()],
                               workers=workers, progress=progress, desc="human"):
        total += counts
    r, p, f = summarize_human(total)
    return {"recall": r, "precision": p, "F": f, "counts": total.tolist(),
            "n_images": len(gts), "max_dist": max_dist}
