"""K-sweeps: run baseline superpixel algorithms at several counts, curves and averages.

Per (algorithm, K, image) the record is cached under ``<out>/.segbench-records/
superpixel-sweep/`` keyed by the algorithm, its parameters, the evaluation options and
the SHA-256 of the image and ground-truth files, so a killed sweep resumes and adding
a K value computes only the new runs.
"""

from __future__ import annotations

import csv
import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..engine import map_items
from ..errors import InputError
from ..io import list_files, read_image
from ..io import atomic_write_text
from ..result import Result, provenance
from ._boundary import DEFAULT_TOLERANCE
from ._evaluate import ANNOTATOR_MEASURES, SuperpixelRecord, evaluate_image, summarize
from ._folder import IMAGE_EXTS
from ._io import list_annotator_files, read_annotators

#: Bump when a change to the computation invalidates cached sweep records.
RECORD_VERSION = 1
CACHE = Path(".segbench-records") / "superpixel-sweep"
#: Measures drawn in the curves figure, with their axis labels.
PLOTTED = {"br": "boundary recall", "bp": "boundary precision",
           "ue": "undersegmentation error (SEEDS)", "cue": "corrected UE (CUE)",
           "asa": "achievable segmentation accuracy", "ue_np": "UE (Neubert-Protzel)",
           "ev": "explained variation", "co": "compactness"}
#: Measures averaged over the K range.
AVERAGED = (*ANNOTATOR_MEASURES, "co", "ev")


def average_over_range(counts, values, k_min: float, k_max: float) -> float:
    """Mean of a metric-vs-K curve over ``[k_min, k_max]`` (area under the curve / width).

    The curve is the piecewise-linear interpolation of ``(counts, values)`` sorted by
    count, held constant beyond the first and last points; NaN values are dropped.
    This is the "average" metric of the superpixel literature (Stutz et al. report
    100 x the average of 1 - BR, UE and 1 - EV over K in [200, 5200]).

    Examples
    --------
    >>> average_over_range([100, 300], [0.5, 0.7], 100, 300)
    0.6
    >>> average_over_range([100, 300], [0.5, 0.7], 0, 400)    # held flat outside
    0.6
    """
    x = np.asarray(counts, dtype=np.float64)
    y = np.asarray(values, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if not k_max > k_min:
        raise InputError(f"the K range must have k_max > k_min, got [{k_min}, {k_max}]")
    if not x.size:
        return float("nan")
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    inner = x[(x > k_min) & (x < k_max)]
    grid = np.concatenate([[k_min], inner, [k_max]])
    vals = np.interp(grid, x, y)
    area = float(np.sum((grid[1:] - grid[:-1]) * (vals[1:] + vals[:-1]) / 2))
    return area / (k_max - k_min)


@dataclass(frozen=True)
class _Task:
    algorithm: str
    k: int
    iid: str
    gt_paths: tuple
    image_path: Path
    eval_params: tuple
    algo_params: tuple
    max_annotators: int | None
    record_path: Path | None
    key: str


def _sha(paths) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(Path(p).read_bytes())
    return h.hexdigest()


def _run_task(task: _Task):
    """Worker: run the algorithm on one image at one K and evaluate. Picklable."""
    from ..algorithms.superpixels import superpixels
    image = read_image(task.image_path)
    gts = read_annotators(task.gt_paths)
    if task.max_annotators is not None:
        gts = gts[:task.max_annotators]
    if image.shape[:2] != gts[0].shape:
        raise InputError(f"image is {image.shape[0]}x{image.shape[1]} but the ground "
                         f"truth is {gts[0].shape[0]}x{gts[0].shape[1]}", task.image_path)
    t0 = time.perf_counter()
    sp = superpixels(image, task.k, task.algorithm, **dict(task.algo_params))
    seconds = time.perf_counter() - t0
    rec = evaluate_image(sp, gts, image, **dict(task.eval_params))
    rec = SuperpixelRecord(rec.per_annotator, rec.boundary_counts, rec.n_superpixels,
                           rec.n_components, rec.n_split, rec.co, rec.ev,
                           {"seconds": seconds})
    if task.record_path is not None:
        task.record_path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(task.record_path, json.dumps(
            {"key": task.key, "record": rec.to_json()}))
    return task, rec


def _cached(task: _Task) -> SuperpixelRecord | None:
    if task.record_path is None:
        return None
    try:
        d = json.loads(task.record_path.read_text())
        if d.get("key") != task.key:
            return None
        return SuperpixelRecord.from_json(d["record"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _ks(ks) -> list[int]:
    out = sorted({int(k) for k in ks})
    if not out or out[0] < 1 or any(int(k) != k for k in ks):
        raise InputError(f"K values must be positive integers, got {list(ks)}")
    return out


def run_sweep(algorithms, ks, gt_dir, image_dir, out=None, *, k_range=None,
              max_images: int | None = None, workers: int = 1, progress: bool = True,
              tolerance: float = DEFAULT_TOLERANCE, window: str = "euclidean",
              boundary: str = "bsds", max_annotators: int | None = None,
              algorithm_params: dict | None = None, plot: bool = True) -> Result:
    """Run baseline algorithms at every K on a dataset split; curves and K-averages.

    Parameters
    ----------
    algorithms : str or sequence of str
        Names in :data:`segbench.algorithms.superpixels.SUPERPIXEL_ALGORITHMS`.
    ks : sequence of int
        Target numbers of superpixels.
    gt_dir, image_dir : path
        Ground truth (as :func:`run_superpixel`) and ``<iid>.jpg/.png`` images.
    out : path, optional
        Output folder: ``sweep.json``, ``sweep.csv``, ``curves.png`` and the record
        cache. Without it nothing is written or cached.
    k_range : (float, float), optional
        Range of superpixel counts for the averages; default ``(min(ks), max(ks))``.
    max_images : int, optional
        The first images only (sorted by id), for a quick look.
    workers, progress
        As every runner.
    tolerance, window, boundary
        As :func:`evaluate_image`.
    max_annotators : int, optional
        Use only the first annotators.
    algorithm_params : dict, optional
        ``{algorithm: {param: value}}`` passed to the algorithm functions.
    plot : bool
        Write ``curves.png`` (needs ``out``).

    Returns
    -------
    Result
        family 'superpixel-sweep'. ``curves[algorithm]`` holds lists over K: ``k``,
        ``n_superpixels`` (the mean count actually produced), ``seconds`` (mean
        algorithm time per image) and each measure (mean over images of the mean over
        annotators). ``metrics['<algorithm>/avg_<measure>']``: the averages over
        ``k_range`` of the measure against the actual count
        (:func:`average_over_range`).
    """
    from ..algorithms.superpixels import SUPERPIXEL_ALGORITHMS
    algos = [algorithms] if isinstance(algorithms, str) else list(algorithms)
    for a in algos:
        if a not in SUPERPIXEL_ALGORITHMS:
            raise InputError(f"unknown superpixel algorithm {a!r}; choose from "
                             f"{', '.join(SUPERPIXEL_ALGORITHMS)}")
    ks = _ks(ks)
    lo, hi = (ks[0], ks[-1]) if k_range is None else (float(k_range[0]),
                                                       float(k_range[1]))
    if not hi > lo:
        raise InputError(f"the K range must have k_max > k_min, got [{lo}, {hi}] (give "
                         "two or more K values, or k_range)")
    gts = list_annotator_files(gt_dir)
    images = list_files(image_dir, IMAGE_EXTS)
    ids = [i for i in gts if i in images]
    if not ids:
        raise InputError("no image has both ground truth and a photograph", image_dir)
    if max_images is not None:
        ids = ids[:int(max_images)]
    eval_params = {"tolerance": float(tolerance), "window": window, "boundary": boundary}
    aparams = {a: dict((algorithm_params or {}).get(a, {})) for a in algos}
    outp = None if out is None else Path(out)
    fp = {iid: _sha([*gts[iid], images[iid]]) for iid in ids} if outp else {}
    tasks, records = [], {}
    for a in algos:
        for k in ks:
            for iid in ids:
                key = json.dumps({"version": RECORD_VERSION, "algorithm": a, "k": k,
                                  "algo_params": aparams[a], "eval": eval_params,
                                  "max_annotators": max_annotators,
                                  "inputs_sha256": fp.get(iid)}, sort_keys=True)
                path = None if outp is None else outp / CACHE / a / f"k{k}" / f"{iid}.json"
                t = _Task(a, k, iid, tuple(gts[iid]), images[iid],
                          tuple(sorted(eval_params.items())),
                          tuple(sorted(aparams[a].items())), max_annotators, path, key)
                rec = _cached(t)
                if rec is None:
                    tasks.append(t)
                else:
                    records[(a, k, iid)] = rec
    for t, rec in map_items(_run_task, tasks, workers=workers, progress=progress,
                            desc="superpixel sweep"):
        records[(t.algorithm, t.k, t.iid)] = rec

    curves, metrics = {}, {}
    for a in algos:
        c = {"k": [], "n_superpixels": [], "seconds": []}
        c.update({m: [] for m in AVERAGED})
        for k in ks:
            recs = [records[(a, k, iid)] for iid in ids]
            s = summarize(recs).metrics()
            c["k"].append(k)
            c["n_superpixels"].append(s["n_superpixels"])
            c["seconds"].append(float(np.mean([r.extra.get("seconds", np.nan)
                                               for r in recs])))
            for m in AVERAGED:
                c[m].append(s[m])
        curves[a] = c
        for m in AVERAGED:
            metrics[f"{a}/avg_{m}"] = average_over_range(c["n_superpixels"], c[m], lo, hi)
    res = Result("superpixel-sweep", metrics, [], curves,
                 provenance(algorithms=algos, ks=ks, k_range=[lo, hi], n_images=len(ids),
                            gt=str(gt_dir), images=str(image_dir),
                            algorithm_params=aparams, max_annotators=max_annotators,
                            **eval_params))
    if outp is not None:
        outp.mkdir(parents=True, exist_ok=True)
        res.to_json(outp / "sweep.json")
        _write_csv(outp / "sweep.csv", curves)
        if plot:
            plot_sweep(curves, outp / "curves.png", k_range=(lo, hi))
    return res


def _write_csv(path: Path, curves: dict) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["algorithm", "k", "n_superpixels", "seconds", *AVERAGED])
        for a, c in curves.items():
            for i in range(len(c["k"])):
                w.writerow([a, c["k"][i], f"{c['n_superpixels'][i]:.1f}",
                            f"{c['seconds'][i]:.4f}",
                            *(f"{c[m][i]:.6g}" for m in AVERAGED)])


def plot_sweep(curves: dict, path, *, k_range=None, measures=None, dpi: int = 120) -> Path:
    """Metric-vs-number-of-superpixels curves, one panel per measure; saves a PNG.

    ``curves`` is ``Result.curves`` of :func:`run_sweep`: ``{algorithm: {'n_superpixels':
    [...], measure: [...]}}``. The K range of the averages is shaded.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    measures = list(measures or PLOTTED)
    cols = 4
    rows = (len(measures) + cols - 1) // cols
    fig = Figure(figsize=(3.4 * cols, 2.9 * rows))
    FigureCanvasAgg(fig)
    for i, m in enumerate(measures):
        ax = fig.add_subplot(rows, cols, i + 1)
        for j, (a, c) in enumerate(curves.items()):
            ax.plot(c["n_superpixels"], c[m], marker="os^D"[j % 4], ms=3.5, lw=1.2,
                    color=f"C{j}", label=a)
        if k_range is not None:
            ax.axvspan(k_range[0], k_range[1], color="0.93", zorder=0)
        ax.set_title(PLOTTED.get(m, m), fontsize=9)
        ax.set_xlabel("number of superpixels", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        if i == 0:
            ax.legend(fontsize=7)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    return path
