"""The demo's site: what ``segbench demo`` calls after its runs.

:func:`build_demo_site` turns the demo folder (``dataset/``, ``results/<name>/``,
``predictions/<name>/``) into the benchmark site and returns its index page. It runs
no benchmark: the demo (:mod:`segbench.demo`) makes the runs, the site renders them.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["build_demo_site"]


def build_demo_site(
    demo_dir,
    run_dirs=None,
    *,
    dataset_root=None,
    out_dir=None,
    title: str = "segbench demo",
    workers: int = 1,
    progress: bool = True,
) -> Path:
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
        run_dirs = (
            sorted(p for p in res.iterdir() if RunFolder(p).families())
            if res.is_dir()
            else []
        )
    run_dirs = [Path(d) for d in run_dirs]
    pred_dirs = {
        d: demo / "predictions" / d.name
        for d in run_dirs
        if (demo / "predictions" / d.name).is_dir()
    }
    # a handful of small images: the overlays cost little here
    return build_site(
        dataset_root or demo / "dataset",
        run_dirs,
        out_dir or demo / "site",
        pred_dirs=pred_dirs,
        title=title,
        workers=workers,
        progress=progress,
        overlays=True,
    )
