"""K-sweeps: baseline superpixel algorithms at several counts, curves and averages.

One engine family per (algorithm, K) (:func:`sweep_family`): its record of an image
runs the algorithm on the photograph and scores the map, and is keyed by the algorithm,
K, the algorithm's parameters, the evaluation options and the SHA-256 of the
photograph and the ground truth. All families run in one engine pass (each image's
files read once per worker), so a killed sweep resumes and adding a K value computes
only the new records; :func:`sweep_result` composes the curves and averages from their
summaries (see :func:`segbench.runners.run_sweep`).
"""

from __future__ import annotations

import csv
import json
import time
from io import StringIO
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io import atomic_write_text, ensure_dir
from ..result import Result, provenance
from ..spec import Family
from ._boundary import DEFAULT_TOLERANCE
from ._evaluate import (
    ANNOTATOR_MEASURES,
    DERIVED_MEASURES,
    SuperpixelRecord,
    evaluate_image,
    summarize,
)
from ._family import annotators, check_evaluation, image_files, item_rows, photograph

#: Measures drawn in the curves figure, with their axis labels.
PLOTTED = {
    "br": "boundary recall",
    "bp": "boundary precision",
    "ue": "undersegmentation error (SEEDS recipe; can exceed 1)",
    "cue": "corrected UE (CUE)",
    "asa": "achievable segmentation accuracy",
    "ue_np": "UE (Neubert-Protzel)",
    "ev": "explained variation",
    "co": "compactness",
}
#: Measures averaged over the K range.
AVERAGED = (*ANNOTATOR_MEASURES, *DERIVED_MEASURES, "co", "ev")
#: The evaluation options of a sweep (the others keep their defaults).
SWEEP_OPTIONS = {
    "tolerance": DEFAULT_TOLERANCE,
    "window": "euclidean",
    "boundary": "bsds",
    "max_annotators": None,
}


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


def _algorithms() -> dict:
    from ..algorithms.superpixels import SUPERPIXEL_ALGORITHMS

    return SUPERPIXEL_ALGORITHMS


def sweep_family(algorithm: str, k: int, algorithm_params: dict | None = None) -> Family:
    """The engine family of one sweep point: ``algorithm`` at ``k`` superpixels.

    Named ``superpixel_sweep-<algorithm>-k<k>`` (its records have their own folder);
    the algorithm, K and ``algorithm_params`` are parameters in its ``defaults``, so
    every record is keyed by them. The evaluation options (:data:`SWEEP_OPTIONS`) come
    from the run's parameters.
    """
    if algorithm not in _algorithms():
        raise InputError(
            f"unknown superpixel algorithm {algorithm!r}; choose from "
            f"{', '.join(_algorithms())}"
        )
    from ..algorithms.superpixels import check_available

    check_available(algorithm)  # an optional package: say so before any image
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise InputError(f"K values must be positive integers, got {k!r}")
    try:  # as JSON holds it, so that a saved key compares equal (tuples -> lists)
        aparams = json.loads(json.dumps(dict(algorithm_params or {}), sort_keys=True))
    except (TypeError, ValueError):
        raise InputError(
            f"parameters of {algorithm} must be plain numbers, strings or "
            f"lists, got {algorithm_params!r}"
        ) from None
    return Family(
        name=f"superpixel_sweep-{algorithm}-k{int(k)}",
        version=1,
        defaults={
            "algorithm": algorithm,
            "k": int(k),
            "algorithm_params": aparams,
            **SWEEP_OPTIONS,
        },
        evaluate=_evaluate_sweep,
        to_json=_to_json,
        from_json=_from_json,
        summarize=_summarize_sweep,
        check=check_evaluation,
        label=f"{algorithm}{int(k)}",
        input_files=image_files,
    )


def _evaluate_sweep(sample, params: dict) -> SuperpixelRecord:
    """Run the algorithm on the photograph (timed) and score its superpixels."""
    from ..algorithms.superpixels import superpixels

    if sample.item.image_path is None and sample.item.image_loader is None:
        raise InputError(
            f"image {sample.id!r} has no photograph: the sweep runs the "
            "algorithms on it (give the photographs: --images; image_dir in Python)",
            sample.item.sources[0] if sample.item.sources else None,
        )
    gts = annotators(sample, params["max_annotators"])
    image = photograph(sample, gts[0].shape)
    t0 = time.perf_counter()
    sp = superpixels(image, params["k"], params["algorithm"], **params["algorithm_params"])
    seconds = time.perf_counter() - t0
    rec = evaluate_image(
        sp,
        gts,
        image,
        tolerance=params["tolerance"],
        window=params["window"],
        boundary=params["boundary"],
    )
    return SuperpixelRecord(
        rec.per_annotator,
        rec.boundary_counts,
        rec.n_superpixels,
        rec.n_components,
        rec.n_split,
        rec.co,
        rec.ev,
        {"seconds": seconds},
    )


def _to_json(record: SuperpixelRecord) -> dict:
    return record.to_json()


def _from_json(d: dict) -> SuperpixelRecord:
    rec = SuperpixelRecord.from_json(d)
    if "seconds" not in rec.extra:
        raise ValueError("a sweep record holds the algorithm's time (seconds)")
    return rec


def _summarize_sweep(ids, records, params, options) -> Result:
    """The point's figures (as the superpixel benchmark's) and ``seconds``, the mean
    algorithm time per image."""
    metrics = summarize(records).metrics()
    metrics["seconds"] = float(np.mean([r.extra.get("seconds", np.nan) for r in records]))
    rows = item_rows(ids, records)
    for row, r in zip(rows, records):
        row["seconds"] = r.extra.get("seconds", float("nan"))
    return Result("superpixel_sweep", metrics, rows)


def sweep_ks(ks) -> list[int]:
    """Sorted distinct K values; InputError unless positive integers."""
    ks = list(ks)
    out = sorted({int(k) for k in ks})
    if not out or out[0] < 1 or any(int(k) != k for k in ks):
        raise InputError(f"K values must be positive integers, got {ks}")
    return out


def sweep_result(points: dict, k_range, *, algorithm_params=None, **params) -> Result:
    """The sweep's Result from the summaries of its points.

    Parameters
    ----------
    points : dict of (algorithm, k) -> Result
        The summary of each :func:`sweep_family`, in sweep order (algorithms, then
        ascending K).
    k_range : (float, float)
        Range of superpixel counts for the averages.
    algorithm_params : dict, optional
        ``{algorithm: {param: value}}``, for the provenance.
    **params
        Also recorded in the provenance (``n_images``, ``gt``, ``images``, the
        evaluation options).

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
    lo, hi = k_range
    algos = list(dict.fromkeys(a for a, _ in points))
    curves, metrics = {}, {}
    for a in algos:
        c: dict[str, list] = {"k": [], "n_superpixels": [], "seconds": []}
        c.update({m: [] for m in AVERAGED})
        for (alg, k), res in points.items():
            if alg != a:
                continue
            s = res.metrics
            c["k"].append(k)
            c["n_superpixels"].append(s["n_superpixels"])
            c["seconds"].append(s["seconds"])
            for m in AVERAGED:
                c[m].append(s[m])
        curves[a] = c
        for m in AVERAGED:
            metrics[f"{a}/avg_{m}"] = average_over_range(c["n_superpixels"], c[m], lo, hi)
    ks = sorted({k for _, k in points})
    return Result(
        "superpixel-sweep",
        metrics,
        [],
        curves,
        provenance(
            algorithms=algos,
            ks=ks,
            k_range=[lo, hi],
            algorithm_params=algorithm_params or {},
            **params,
        ),
    )


def write_sweep(out, result: Result, *, plot: bool = True) -> None:
    """``sweep.json``, ``sweep.csv`` and (``plot``) ``curves.png`` of a sweep."""
    out = ensure_dir(out)
    result.to_json(out / "sweep.json")
    atomic_write_text(out / "sweep.csv", sweep_csv(result.curves))
    if plot:
        lo, hi = result.provenance["params"]["k_range"]
        plot_sweep(result.curves, out / "curves.png", k_range=(lo, hi))


def sweep_csv(curves: dict) -> str:
    """The text of ``sweep.csv``: one row per (algorithm, K)."""
    buf = StringIO()
    w = csv.writer(buf)  # its \r\n line ends, as always
    w.writerow(["algorithm", "k", "n_superpixels", "seconds", *AVERAGED])
    for a, c in curves.items():
        for i in range(len(c["k"])):
            w.writerow(
                [
                    a,
                    c["k"][i],
                    f"{c['n_superpixels'][i]:.1f}",
                    f"{c['seconds'][i]:.4f}",
                    *(f"{c[m][i]:.6g}" for m in AVERAGED),
                ]
            )
    return buf.getvalue()


def plot_sweep(curves: dict, path, *, k_range=None, measures=None, dpi: int = 120) -> Path:
    """Metric-vs-number-of-superpixels curves, one panel per measure; saves a PNG.

    ``curves`` is ``Result.curves`` of :func:`sweep_result`: ``{algorithm: {'n_superpixels':
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
            ax.plot(
                c["n_superpixels"],
                c[m],
                marker="os^D"[j % 4],
                ms=3.5,
                lw=1.2,
                color=f"C{j}",
                label=a,
            )
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
