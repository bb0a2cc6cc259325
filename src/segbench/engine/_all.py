"""``segbench all``: boundary and region benchmarks in one pass over the inputs (allBench)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..boundary import DEFAULT_MAX_DIST
from ..boundary import evaluate_image as boundary_image
from ..io import check_same_shape, read_ground_truth, read_prediction
from ..region import evaluate_image as region_image
from ..report.official import write_eval_bdry
from ..report.official_region import write_eval_region
from . import _boundary as bd
from . import _region as rg
from ._executor import map_items


@dataclass(frozen=True)
class _Pair:
    boundary: bd._Task
    region: rg._Task


def _evaluate_pair(pair: _Pair):
    """Worker: read the image's files once, run both benchmarks."""
    task = pair.boundary
    gt = read_ground_truth(task.gt_path)
    pred = read_prediction(task.pred_path)
    check_same_shape(pred, gt[0].shape, task.pred_path)
    counts = boundary_image(pred, gt, nthresh=task.nthresh, max_dist=task.max_dist,
                            thin=task.thin)
    record = region_image(pred, gt, nthresh=pair.region.nthresh)
    return pair, counts, record


def run_all(gt_dir, pred_dir, out_dir, *, nthresh: int = 99,
            max_dist: float = DEFAULT_MAX_DIST, thin: bool = True, workers: int = 1,
            progress: bool = True, plot: bool = True, human=None):
    """Boundary and region benchmarks of ``<iid>.mat`` predictions (ucm2 or segs).

    Each image is read once and evaluated by both benchmarks; the records are the same
    as those of ``segbench boundary`` and ``segbench region`` (so either command can
    resume from them), and all official files of both are written to ``out_dir``:
    ``eval_bdry*.txt`` and ``result.json`` (boundary), ``eval_cover*.txt``,
    ``eval_RI_VOI*.txt`` and ``result_region.json`` (region).

    Parameters
    ----------
    human : dict, optional
        ``{"boundary": (recall, precision, F), "region": run_human_region(...)}``, either
        key optional, added to the results and the plot.

    Returns
    -------
    (Result, Result)
        Boundary and region results.
    """
    out = Path(out_dir)
    (out / bd.CACHE_DIR / rg._SUBDIR).mkdir(parents=True, exist_ok=True)
    pairs = bd.pair_folders(gt_dir, pred_dir, pred_exts=("mat",))
    counts, records, todo, keys = {}, {}, [], {}
    for iid, gt_path, pred_path in pairs:
        pair = _Pair(bd._Task(iid, gt_path, pred_path, int(nthresh), float(max_dist),
                              bool(thin)),
                     rg._Task(iid, gt_path, pred_path, int(nthresh)))
        keys[iid] = (bd._record_key(pair.boundary), rg._record_key(pair.region))
        c = bd._load_record(out, pair.boundary, keys[iid][0])
        r = rg._load_record(out, pair.region, keys[iid][1])
        if c is not None and r is not None:
            counts[iid], records[iid] = c, r
        else:
            todo.append(pair)
    for pair, c, r in map_items(_evaluate_pair, todo, workers=workers, progress=progress,
                                desc="boundary+region"):
        iid = pair.boundary.iid
        bd._save_record(out, pair.boundary, keys[iid][0], c)
        rg._save_record(out, pair.region, keys[iid][1], r)
        counts[iid], records[iid] = c, r
    ids = sorted(counts)
    human = human or {}
    params = {"gt_dir": str(gt_dir), "pred_dir": str(pred_dir), "nthresh": nthresh,
              "max_dist": max_dist, "thin": thin, "n_images": len(ids)}
    b_result, b_summary = bd.boundary_result(ids, [counts[i] for i in ids], params=params,
                                             human=human.get("boundary"))
    write_eval_bdry(out, b_summary)
    b_result.to_json(out / "result.json")
    r_result, r_summary = rg.region_result(ids, [records[i] for i in ids], params=params,
                                           human=human.get("region"))
    write_eval_region(out, r_summary)
    r_result.to_json(out / "result_region.json")
    if plot:
        bd.plot_summary(b_summary, Path(pred_dir).name, out / "pr_curve.png",
                        human.get("boundary"))
    return b_result, r_result
