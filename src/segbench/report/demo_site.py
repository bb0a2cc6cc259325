"""The demo's site: what ``segbench demo`` calls after its runs.

:func:`build_demo_site` turns the demo folder (``dataset/``, ``results/<name>/``,
``predictions/<name>/``) into the benchmark site and returns its index page.
:func:`run_demo_segmenter` adds a baseline segmenter to the demo, evaluated by the
boundary and region benchmarks in one pass, so the site has region measures too.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["build_demo_site", "run_demo_segmenter"]

#: Numbers of segments of the demo segmenter's hierarchy (one "threshold" each).
DEMO_KS = (2, 3, 4, 6, 8, 12)


def build_demo_site(demo_dir, run_dirs=None, *, dataset_root=None, out_dir=None,
                    title: str = "segbench demo", workers: int = 1,
                    progress: bool = True) -> Path:
    """Build the site of a demo folder; return the path of its ``index.html``.

    Parameters
    ----------
    demo_dir : path
        The demo's output folder.
    run_dirs : sequence of paths, optional
        Run folders; default: every folder of ``demo_dir/results`` holding a
        a result file, sorted by name.
    dataset_root : path, optional
        Default ``demo_dir/dataset`` (the synthetic dataset in the BSDS500 layout).
    out_dir : path, optional
        Default ``demo_dir/site``.

    Notes
    -----
    The predictions of run ``results/<name>`` are taken from ``predictions/<name>``
    when that folder exists, for the per-image pictures. About one second for the
    demo's 8 images and three algorithms.
    """
    from ..engine import RunFolder
    from .site import build_site

    demo = Path(demo_dir)
    if run_dirs is None:
        res = demo / "results"
        run_dirs = sorted(p for p in res.iterdir() if RunFolder(p).families()) \
            if res.is_dir() else []
    run_dirs = [Path(d) for d in run_dirs]
    pred_dirs = {d: demo / "predictions" / d.name for d in run_dirs
                 if (demo / "predictions" / d.name).is_dir()}
    return build_site(dataset_root or demo / "dataset", run_dirs, out_dir or demo / "site",
                      pred_dirs=pred_dirs, title=title, workers=workers, progress=progress)


def run_demo_segmenter(items, gt_dir, demo_dir, *, name: str = "kmeans-segments",
                       ks=DEMO_KS, human=None, workers: int = 1, progress: bool = True):
    """Segment every item at several numbers of segments and run both benchmarks.

    Writes ``predictions/<name>/<iid>.mat`` (variable ``segs``: one k-means
    segmentation per k of ``ks``, coarse to fine) and evaluates them with
    the boundary and region benchmarks into ``results/<name>`` (boundary: each
    segmentation's boundaries are one "threshold"; region: covering, PRI, VI).

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
    import numpy as np

    from ..algorithms.segmenters import kmeans_segmenter
    from ..api import families
    from ..engine import run
    from ..io import write_segs

    demo = Path(demo_dir)
    pred_dir = demo / "predictions" / name
    pred_dir.mkdir(parents=True, exist_ok=True)
    for item in items:
        write_segs(pred_dir / f"{item.iid}.mat",
                   [np.asarray(kmeans_segmenter(item.image, int(k))) + 1 for k in ks])
    run_dir = demo / "results" / name
    b, r = run(families("all"), gt_dir, pred_dir, run_dir, name=name, workers=workers,
               progress=progress, options=human or {})
    return b, r, run_dir
