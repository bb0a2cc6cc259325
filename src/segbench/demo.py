"""``segbench demo``: the embedded default run, needing no data at all.

Renders a small synthetic dataset with simulated annotators, runs two baseline boundary
detectors and a baseline segmenter, evaluates them with the full BSDS protocols
(boundary: 99 thresholds, thinning, exact matching; region: covering, PRI, VI), scores
the annotators against each other, and builds the benchmark site.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .algorithms.edges import canny_soft, gradient_magnitude
from .algorithms.segmenters import kmeans_segmenter
from .api import families, human_options
from .boundary import matcher_cached, plot_pr, thin_frames, warm_up_kernels
from .compilation import compile_ahead, wait_ahead
from .datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from .engine import run
from .io import claim_folder, write_segs, write_soft_map
from .region import evaluate_image, human_region
from .report.demo_site import build_demo_site

#: The file that marks a folder written by the demo (only such a folder, or a new or
#: empty one, is written into).
DEMO_MARKER = ".segbench-demo"

#: Numbers of segments of the demo segmenter's hierarchy (one "threshold" each).
DEMO_KS = (2, 3, 4, 6, 8, 12)

DETECTORS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "gradient-magnitude-lab": gradient_magnitude,
    "canny-grey": canny_soft,
}


def compile_later_kernels() -> None:
    """Every kernel the demo calls after its first matching, compiled (or loaded) by
    running those steps on one small image: what the demo does on a first run while a
    background process compiles the matcher (:func:`segbench.compilation.compile_ahead`)."""
    item = make_synthetic_dataset(1, shape=(48, 64), n_annotators=2, seed=1)[0]
    for detector in DETECTORS.values():
        thin_frames(detector(item.image), np.linspace(0.01, 0.99, 5))
    warm_up_kernels()
    # int32 labels, as the region tables get them from the demo's files
    humans = [s.astype(np.int32) for s in item.segmentations]
    segs = [
        (np.asarray(kmeans_segmenter(item.image, int(k))) + 1).astype(np.int32)
        for k in DEMO_KS
    ]
    human_region(humans)
    evaluate_image(segs, humans)


def run_demo_segmenter(
    items,
    gt_dir,
    demo_dir,
    *,
    name: str = "kmeans-segments",
    ks=DEMO_KS,
    human=None,
    workers: int = 1,
    progress: bool = True,
):
    """Segment every item at several numbers of segments and run both benchmarks.

    Writes ``predictions/<name>/<iid>.mat`` (variable ``segs``: one k-means
    segmentation per k of ``ks``, coarse to fine) and evaluates them with
    the boundary and region benchmarks into ``results/<name>`` (boundary: each
    segmentation's boundaries are one "threshold"; region: covering, PRI, VI), so the
    demo's site has region measures too.

    Parameters
    ----------
    items : list of SyntheticItem
    gt_dir : path
        Their ground truth (``dataset/groundTruth/test``).
    demo_dir : path
        The demo's output folder.
    human : dict, optional
        Human figures for the results and plot (:func:`segbench.api.human_options`).

    Returns
    -------
    (Result, Result, Path)
        Boundary and region results, and the run folder.
    """
    demo = Path(demo_dir)
    pred_dir = demo / "predictions" / name
    pred_dir.mkdir(parents=True, exist_ok=True)
    for item in items:
        write_segs(
            pred_dir / f"{item.iid}.mat",
            [np.asarray(kmeans_segmenter(item.image, int(k))) + 1 for k in ks],
        )
    run_dir = demo / "results" / name
    b, r = run(
        families("all"),
        gt_dir,
        pred_dir,
        run_dir,
        name=name,
        workers=workers,
        progress=progress,
        options=human or {},
    )
    return b, r, run_dir


def run_demo(
    out_dir="segbench-demo",
    *,
    n_images: int = 8,
    workers: int = 1,
    progress: bool = True,
    as_json: bool = False,
) -> dict:
    """Generate, detect, evaluate; print a table and write ``pr_curves.png``.

    Returns the metrics per algorithm (and the human F) as a dict.
    """
    start = time.perf_counter()
    # the demo writes dozens of files: never beside a user's own
    out = claim_folder(
        out_dir,
        DEMO_MARKER,
        "segbench demo",
        "written by segbench demo; its files are replaced when it runs again\n",
    )
    first_run = not matcher_cached()
    if first_run:  # the matcher compiles on another core while this one does the rest
        compile_ahead(
            "segbench.boundary:warm_up_matcher", announce="segbench.primitives._solver"
        )
    items = make_synthetic_dataset(n_images)
    root = write_synthetic_dataset(out / "dataset", items)
    gt_dir = root / "groundTruth" / "test"
    if first_run:
        compile_later_kernels()
        wait_ahead()
    human_runs = run(families("human"), gt_dir, workers=workers, progress=progress)
    human = human_runs[0].metrics
    human_region = human_runs[1].metrics
    options = human_options(human_runs)
    human_point = options["human_boundary"]
    results = {}
    curves = []
    for name, detector in DETECTORS.items():
        pred_dir = out / "predictions" / name
        for item in items:
            write_soft_map(pred_dir / f"{item.iid}.png", detector(item.image))
        (res,) = run(
            families("boundary"),
            gt_dir,
            pred_dir,
            out / "results" / name,
            name=name,
            workers=workers,
            progress=progress,
            options=options,
        )
        results[name] = res.metrics
        curves.append(
            {
                "name": name,
                "recall": res.curves["recall"],
                "precision": res.curves["precision"],
                "ods": (
                    res.metrics["ODS_recall"],
                    res.metrics["ODS_precision"],
                    res.metrics["ODS"],
                ),
            }
        )
    seg_b, seg_r, _ = run_demo_segmenter(
        items, gt_dir, out, human=options, workers=workers, progress=progress
    )
    results["kmeans-segments"] = {**seg_b.metrics, **seg_r.metrics}
    curves.append(
        {
            "name": "kmeans-segments",
            "recall": seg_b.curves["recall"],
            "precision": seg_b.curves["precision"],
            "ods": (
                seg_b.metrics["ODS_recall"],
                seg_b.metrics["ODS_precision"],
                seg_b.metrics["ODS"],
            ),
        }
    )
    plot = plot_pr(
        curves,
        out / "pr_curves.png",
        human=human_point,
        title=f"segbench demo: {n_images} synthetic images",
    )
    site = build_demo_site(out, workers=workers, progress=progress)
    summary = {
        "algorithms": results,
        "human_F": human["F"],
        "human_region": {k: human_region[k] for k in ("covering", "PRI", "VI")},
        "plot": str(plot),
        "site": str(site),
        "seconds": time.perf_counter() - start,
    }
    if as_json:
        print(json.dumps(summary, indent=1, default=float))
        return summary
    print(
        f"segbench demo: {n_images} synthetic images, {len(items[0].segmentations)} "
        f"simulated annotators each, 99 thresholds\n"
    )
    print(
        f"{'algorithm':<24}{'ODS':>8}{'OIS':>8}{'AP':>8}{'R50':>8}"
        f"{'cover':>8}{'PRI':>8}{'VI':>8}"
    )
    for name, m in results.items():
        region = (
            f"{m['covering_ODS']:>8.3f}{m['PRI_ODS']:>8.3f}{m['VI_ODS']:>8.3f}"
            if "covering_ODS" in m
            else ""
        )
        print(
            f"{name:<24}{m['ODS']:>8.3f}{m['OIS']:>8.3f}{m['AP']:>8.3f}{m['R50']:>8.3f}"
            + region
        )
    print(
        f"{'human':<24}{human['F']:>8.3f}{'':>24}{human_region['covering']:>8.3f}"
        f"{human_region['PRI']:>8.3f}{human_region['VI']:>8.3f}"
    )
    print(
        f"\nPR curves: {plot}\nofficial-format results: {out / 'results'}"
        f"\nsite: {site}   (open it, or: segbench serve {site.parent})"
        f"\ndone in {summary['seconds']:.1f} s"
    )
    return summary
