"""The ecological statistics of a dataset's human segmentations, through the engine.

Two engine runs: the largest scaled distance of every image (``STATS_SCALE``, only when
the proximity axis is normalised over the dataset, the paper's choice), then the
per-segmentation counts at that scale (``STATS``). Records of both are kept in ``out``,
so a rerun resumes and a changed parameter recomputes only what it changes.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from ..errors import InputError


def _images_beside(root) -> Path | None:
    """The ``images`` folder beside a ground-truth folder or one of its parents."""
    if root is None:
        return None
    for p in [Path(root), *Path(root).parents]:
        if (p / "images").is_dir():
            return p / "images"
    return None


def run_stats(
    gt,
    out=None,
    *,
    images=None,
    samples: int = 1000,
    seed: int = 0,
    proximity_bins: int = 20,
    normalize: str = "dataset",
    max_scaled_distance: float | None = None,
    split=None,
    presentation: str = "all",
    ids=None,
    name: str | None = None,
    workers: int = 1,
    scheduler=None,
    executor=None,
    progress: bool = True,
    plot: bool = True,
    **summary_options,
):
    """Ecological statistics of a dataset's human segmentations; figures and JSON.

    Parameters
    ----------
    gt : path, sequence of paths, or Dataset
        Ground truth of any layout: a BSDS500 ``groundTruth`` folder (all splits) or
        one split folder, a dataset root, a BSDS300 ``human`` folder or one
        presentation's subject tree. Every split is used unless ``split``.
    out : path, optional
        Receives ``result_stats.json`` (metrics of the 'all' group, one row per
        segmentation, every group's curves), ``per_item_stats.csv``, one PNG per figure
        (``plot``) and the records. None: nothing is written.
    images : path, optional
        Photographs ``<iid>.jpg`` (searched recursively). Default: those of the dataset
        layout, else the ``images`` folder beside ``gt`` or one of its parents.
        Segmentations whose image is not found are left out of the similarity
        statistics only.
    samples, seed, proximity_bins, normalize, max_scaled_distance
        As :func:`segbench.stats.proximity`.
    presentation : {'all', 'color', 'gray'}, default 'all'
        BSDS300: which segmentations (the statistics split by the gray flag).
    name : str, optional
        Name of the run in ``result_stats.json`` (default: 'human').
    split, ids, workers, scheduler, executor, progress
        As :func:`segbench.engine.run`.
    plot : bool
        Write the PNGs (with ``out``).
    summary_options
        Passed to :func:`segbench.stats.summarize` (``cue_bins``, ``n_boot``,
        ``min_area`` ...).

    Returns
    -------
    EcologicalStatistics
    """
    from ..datasets import open_ground_truth, parse_ids, with_images
    from ..engine import run
    from ..resampling import check_resamples, warn_if_few_resamples
    from ..stats import NORMALIZE, STATS, STATS_SCALE

    n_boot = summary_options.get("n_boot", 1000)
    check_resamples(n_boot, "n_boot", zero=True)
    min_area = summary_options.get("min_area", 1000.0)
    if (
        isinstance(min_area, bool)
        or not isinstance(min_area, (int, float))
        or not (min_area >= 0)
    ):  # (checked before any work; a negative area would silently widen the fit)
        raise InputError(f"min_area (--min-area) must be >= 0 pixels, got {min_area!r}")
    if normalize not in NORMALIZE:
        raise InputError(
            f"normalize must be one of {', '.join(NORMALIZE)}, got {normalize!r}"
        )
    scale = max_scaled_distance
    if scale is not None and not scale > 0:
        raise InputError(f"max_scaled_distance must be positive, got {scale}")
    ds = open_ground_truth(gt, split=split, presentation=presentation, all_splits=True)
    wanted = parse_ids(ids)
    if wanted is not None:
        ds = ds.subset(wanted)
    photos = (
        images
        if images is not None
        else (
            None
            if all(ds[i].image_path is not None for i in ds.ids())
            else _images_beside(ds.root)
        )
    )
    if photos is not None:
        if not Path(photos).is_dir():
            raise InputError("images folder not found", photos)
        ds = with_images(ds, photos, required=False, recursive=True)
    n_img = sum(ds[i].image_path is not None for i in ds.ids())
    if n_img == 0:
        warnings.warn(
            "no photographs found (use --images); similarity skipped", stacklevel=2
        )
    engine = {
        "workers": workers,
        "scheduler": scheduler,
        "executor": executor,
        "progress": progress,
        "all_splits": True,
    }
    if scale is None and normalize == "dataset":
        scale = run(
            STATS_SCALE, ds, None, out, name=name or "human", save_results=False, **engine
        )[0].metrics["max_scaled_distance"]
    (result,) = run(
        STATS,
        ds,
        None,
        out,
        name=name or "human",
        params={
            "samples": int(samples),
            "seed": int(seed),
            "proximity_bins": int(proximity_bins),
            "scale": scale,
        },
        options={"plot": plot, "normalize": normalize, "summary": summary_options},
        **engine,
    )
    if n_boot:  # once the interval of alpha is made, not before a refusal
        warn_if_few_resamples(int(n_boot))
    stats = result.detail
    stats.params.update(
        n_images=len(ds),
        n_images_with_photo=n_img,
        n_segmentations=len(stats.records),
        images=None if photos is None else str(photos),
    )
    return stats


__all__ = ["run_stats"]
