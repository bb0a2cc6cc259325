"""The 2001 protocol over a dataset: human consistency (GCE/LCE) and matched granularity.

Each function hands an engine family (:mod:`segbench.region`'s ``CONSISTENCY`` or
:func:`~segbench.region.granularity_family`) to :func:`segbench.engine.run`, so every
layout of ground truth is read, runs resume from their records, and ``workers`` or a
Dask ``scheduler`` change nothing in the numbers.
"""

from __future__ import annotations

from collections.abc import Callable

from .errors import InputError


def _engine_options(workers, scheduler, executor, progress) -> dict:
    return {"workers": workers, "scheduler": scheduler, "executor": executor,
            "progress": progress}


def run_consistency(gt, out=None, *, pairs: int = 1000, seed: int = 0, split=None,
                    presentation=None, ids=None, name=None, workers: int = 1,
                    scheduler=None, executor=None, progress: bool = True,
                    plot: bool = True):
    """GCE and LCE between human segmentations, as §3.2 of the 2001 paper.

    Parameters
    ----------
    gt : path, sequence of paths, or Dataset
        Ground truth of any layout (folders of BSDS500 ``<iid>.mat``, BSDS300
        ``human/color`` trees, a dataset root); several folders are taken together
        (e.g. train, val and test) and every split of a root is used unless ``split``.
    out : path, optional
        Writes ``result.json`` (metrics, one row per image, histograms),
        ``per_item.csv``, ``consistency_pairs.csv`` (every scored pair) and, with
        ``plot``, Figures 4 and 6; keeps the records so a rerun resumes.
    pairs : int, default 1000
        Different-image *image* pairs to sample (every pair of their annotators is
        scored: about 25-30 segmentation pairs each on BSDS500). 0 skips them; a number
        at least the population (71 854 pairs of equal shape on all 500 BSDS500 images)
        scores them all, as the paper did.
    seed : int, default 0
        Seed of the sample.
    split, presentation, ids, name, workers, scheduler, executor, progress
        As :func:`segbench.engine.run`.

    Returns
    -------
    (Result, ConsistencyReport)
        ``Result.metrics``: GCE/LCE means for same-image and different-image pairs, the
        best separating threshold of each measure and the fraction of pairs on its
        wrong side (pooled over all pairs as the paper, the sample weighted to stand for
        the population; and balanced between the two kinds), plus counts.

    Notes
    -----
    Only images of equal shape are paired (see :mod:`segbench.region.consistency`).
    Two passes: per image (its same-image pairs), then blocks of sampled image pairs
    (each reading at most 32 images), so the files read stay below both twice the
    sampled pairs and the number of block pairs times 32.
    """
    from .engine import run
    from .region import CONSISTENCY
    if int(pairs) != pairs or pairs < 0:
        raise InputError(f"pairs must be a non-negative integer, got {pairs!r}")
    result, = run(CONSISTENCY, gt, None, out, split=split, presentation=presentation,
                  ids=ids, all_splits=True, name=name or "human",
                  params={"pairs": int(pairs), "seed": int(seed)},
                  options={"plot": plot},
                  **_engine_options(workers, scheduler, executor, progress))
    return result, result.detail


def human_consistency(gt, **kwargs):
    """:func:`run_consistency` without output files; returns the ConsistencyReport."""
    kwargs.pop("out", None)
    return run_consistency(gt, None, **kwargs)[1]


def run_granularity(gt, segmenter: Callable, out=None, *, images=None, split=None,
                    presentation=None, ids=None, max_images: int | None = None,
                    save_dir=None, name: str | None = None, workers: int = 1,
                    scheduler=None, executor=None, progress: bool = True,
                    plot: bool = True):
    """The 2001 benchmark of a segmenter at the granularity of each person (§4).

    For each human segmentation with ``k`` segments, ``segmenter(image, k)`` is run
    (once per distinct ``k`` of an image) and scored against that person with GCE and
    LCE; the summary is the mean over images of each image's mean over annotators.

    Parameters
    ----------
    gt : path, sequence of paths, or Dataset
        Ground truth of any layout (as :func:`run_consistency`).
    segmenter : callable ``(image, k) -> labels``
        Any function of an (H, W, 3) uint8 RGB image and a segment count, e.g.
        :func:`segbench.algorithms.segmenters.kmeans_segmenter`. A segmenter with a
        ``for_image(iid)`` method (:class:`~segbench.algorithms.segmenters.FolderSegmenter`)
        is bound to each image first. With ``workers > 1`` it must pickle (a module-level
        function, a ``functools.partial`` of one, or such an object).
    out : path, optional
        Writes ``result.json``, ``per_item.csv``, ``granularity.png`` (``plot``) and the
        records, keyed by the segmenter's name (see
        :func:`~segbench.region.granularity_family`).
    images : path or sequence of paths, optional
        Folders of the photographs (``<iid>.jpg``/.png/...); needed unless the
        segmenter reads precomputed maps or the ground truth is a dataset root with
        images.
    ids : list of str, str or path, optional
        Evaluate these images only.
    max_images : int, optional
        Only the first ``max_images`` ids in sorted order (after ``ids``).
    save_dir : path, optional
        Also write each segmentation as ``<iid>_<k>.png`` (16-bit, labels 0..k-1), the
        layout :class:`~segbench.algorithms.segmenters.FolderSegmenter` reads.
    name : str, optional
        Name of the segmenter in the result (default: its ``name`` or ``__name__``).

    Returns
    -------
    (Result, GranularityReport)
    """
    from .datasets import open_ground_truth, parse_ids, with_images
    from .engine import run
    from .io import ensure_dir
    from .region import granularity_family, needs_image
    ds = open_ground_truth(gt, split=split, presentation=presentation, all_splits=True)
    wanted = parse_ids(ids)
    if wanted is not None:
        ds = ds.subset(wanted)
    if max_images is not None:
        if int(max_images) != max_images or max_images < 1:
            raise InputError(f"max_images must be a positive integer, got {max_images!r}")
        ds = ds.subset(ds.ids()[:int(max_images)])
    if images is not None:
        ds = with_images(ds, images)
    elif needs_image(segmenter) and any(ds[i].image_path is None for i in ds.ids()):
        raise InputError("the segmenter needs the images: give the image folder "
                         "(--images)", ds.root)
    if save_dir is not None:
        save_dir = str(ensure_dir(save_dir))
    family = granularity_family(segmenter, name=name)
    result, = run(family, ds, None, out, name=family.defaults["segmenter"], all_splits=True,
                  params={"save_dir": save_dir or ""}, options={"plot": plot},
                  **_engine_options(workers, scheduler, executor, progress))
    return result, result.detail


def evaluate_granularity(gt, segmenter: Callable, **kwargs):
    """:func:`run_granularity` without output files; returns the GranularityReport."""
    kwargs.pop("out", None)
    return run_granularity(gt, segmenter, None, **kwargs)[1]


__all__ = ["evaluate_granularity", "human_consistency", "run_consistency",
           "run_granularity"]
