"""The 2001 protocol over a dataset: human consistency (GCE/LCE) and matched granularity.

Each function hands an engine family (:mod:`segbench.region`'s ``CONSISTENCY`` or
:func:`~segbench.region.granularity_family`) to :func:`segbench.engine.run`, so every
layout of ground truth is read, runs resume from their records, and ``workers`` or a
Dask ``scheduler`` change nothing in the numbers.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ..errors import InputError


def run_consistency(
    gt,
    out=None,
    *,
    pairs: int = 1000,
    seed: int = 0,
    split=None,
    presentation=None,
    ids=None,
    name=None,
    workers: int = 1,
    scheduler=None,
    executor=None,
    progress: bool = True,
    plot: bool = True,
    figures: bool = False,
    segmenter="ncut-2001",
    figure_images: int = 50,
    images=None,
):
    """GCE and LCE between human segmentations, as §3.2 of the 2001 paper.

    Parameters
    ----------
    gt : path, sequence of paths, or Dataset
        Ground truth of any layout (folders of BSDS500 ``<iid>.mat``, BSDS300
        ``human/color`` trees, a dataset root); several folders are taken together
        (e.g. train, val and test; the results' ``provenance['params']['gt_dir']`` and
        the manifest then list them all) and every split of a root is used unless
        ``split``.
    out : path, optional
        Writes ``result_consistency.json`` (metrics, one row per image, histograms),
        ``per_item_consistency.csv``, ``consistency_pairs.csv`` (every scored pair) and, with
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
    plot : bool, default True
        Figures 4 and 6 (and 5, 7, 8, 9 with ``figures``) as PNG files in ``out``.
    figures : bool, default False
        Also Figures 5, 7 and 9 of the paper (needs ``out``;
        :mod:`segbench.region.consistency_figures`): the family
        :data:`~segbench.region.CONSISTENCY_MATRIX` scores every pair of segmentations
        of ``figure_images`` images (``fig5_gce.png``, ``fig5_lce.png``,
        ``fig5_errors.npz``, ``result_consistency_matrix.json``), then
        :func:`run_granularity` runs ``segmenter`` on the same images into ``out``
        (``result_granularity.json``, ``granularity.png``, its segmentations in
        ``<segmenter>_segmentations/``), from whose records ``fig7_ncuts.png`` and
        ``fig9_gce_boxplot.png`` are drawn.
    segmenter : str or callable, default 'ncut-2001'
        With ``figures``: a name of :func:`segbench.algorithms.segmenters.get_segmenter`
        or a segmenter ``(image, k) -> labels``.
    figure_images : int, default 50
        With ``figures``: images drawn (seeded by ``seed``,
        :func:`~segbench.region.consistency_figures.matrix_images`) for Figures 5, 7 and
        9; 0 takes them all. The paper's figures are on 50 images.
    images : path or sequence of paths, optional
        With ``figures``: folders of the photographs, unless ``gt`` is a dataset root
        with its images.

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
    from ..datasets import open_ground_truth
    from ..engine import execution, run
    from ..region import CONSISTENCY, CONSISTENCY_MATRIX, needs_image

    if int(pairs) != pairs or pairs < 0:
        raise InputError(f"pairs must be a non-negative integer, got {pairs!r}")
    families = [CONSISTENCY]
    params = {"pairs": int(pairs), "seed": int(seed)}
    if figures:
        if out is None:
            raise InputError("the figures are written to the run folder: give --out")
        if int(figure_images) != figure_images or figure_images < 0:
            raise InputError(
                "figure_images must be a non-negative integer (0: all), "
                f"got {figure_images!r}"
            )
        segmenter, seg_name = _segmenter(segmenter)
        if images is None and needs_image(segmenter):
            # before the human part: a folder of ground truth alone fails at once (the
            # images the figures draw are known only after it; each is checked then)
            _require_photographs(
                open_ground_truth(
                    gt, split=split, presentation=presentation, all_splits=True
                ),
                any_of=True,
            )
        families.append(CONSISTENCY_MATRIX)
        params["figure_images"] = int(figure_images)
    engine = execution(workers, scheduler, executor, progress)
    result, *rest = run(
        families,
        gt,
        None,
        out,
        split=split,
        presentation=presentation,
        ids=ids,
        all_splits=True,
        name=name or "human",
        params=params,
        options={"plot": plot},
        **engine,
    )
    if figures:
        matrix = rest[0].detail
        _figures_7_9(
            gt,
            segmenter,
            seg_name,
            out,
            dict(zip(matrix.ids, matrix.shapes)),
            images=images,
            split=split,
            presentation=presentation,
            plot=plot,
            engine=engine,
        )
    return result, result.detail


def _segmenter(segmenter) -> tuple[Callable, str]:
    """(the segmenter, its name) of a registry name or a callable."""
    if isinstance(segmenter, str):
        from ..algorithms.segmenters import get_segmenter

        return get_segmenter(segmenter), segmenter
    from ..region import segmenter_name

    return segmenter, segmenter_name(segmenter)


def _figures_7_9(
    gt,
    segmenter,
    seg_name: str,
    out,
    shapes: dict,
    *,
    images,
    split,
    presentation,
    plot: bool,
    engine: dict,
) -> list:
    """Figures 7 and 9: the segmenter at each person's granularity on the images of
    ``shapes`` (id -> (H, W))
    (:func:`run_granularity` into ``out``, its segmentations kept), drawn from the
    granularity records."""

    import numpy as np

    from ..datasets import open_ground_truth, with_images
    from ..io import read_label_map
    from ..region.consistency_figures import (
        FIGURE_NAMES,
        pick_examples,
        plot_examples,
        plot_gce_boxplots,
    )

    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in seg_name)
    seg_dir = Path(out) / f"{safe}_segmentations"
    if seg_dir.is_dir() and not (seg_dir / SEGMENTATIONS_MARKER).exists():
        # written inside this run folder by a segbench before the folder had a marker
        from ..io import atomic_write_text

        atomic_write_text(seg_dir / SEGMENTATIONS_MARKER, SEGMENTATIONS_NOTE)
    _, report = run_granularity(
        gt,
        segmenter,
        out,
        images=images,
        split=split,
        presentation=presentation,
        ids=list(shapes),
        save_dir=seg_dir,
        name=seg_name,
        plot=plot,
        **engine,
    )
    if not plot:
        return []
    rows = dict(zip(report.ids, report.rows))
    human = dict(zip(report.ids, report.human))
    paths = [
        plot_gce_boxplots(
            report.ids,
            [human[i][:, 2] for i in report.ids],
            [rows[i][:, 2] for i in report.ids],
            Path(out) / FIGURE_NAMES["fig9"],
            segmenter=seg_name,
        )
    ]
    ds = open_ground_truth(gt, split=split, presentation=presentation, all_splits=True)
    ds = ds.subset(report.ids)
    if images is not None:
        ds = with_images(ds, images)
    chosen = pick_examples(
        {i: float(rows[i][:, 2].mean()) for i in report.ids if len(rows[i])}, shapes
    )
    examples = []
    for iid in chosen:
        item, gts, r = ds[iid], ds[iid].ground_truth(), rows[iid]
        picks = sorted(
            {int(np.argmin(r[:, 0])), int(np.argmax(r[:, 0]))}, key=lambda n: r[n, 0]
        )
        pairs = []
        for n in picks:
            k, ann = int(r[n, 0]), int(r[n, 4])
            f = seg_dir / f"{iid}_{k}.png"
            machine = read_label_map(f) if f.is_file() else None
            pairs.append(
                (
                    ann,
                    k,
                    np.asarray(gts[ann].segmentation),
                    machine,
                    float(r[n, 2]),
                    float(r[n, 3]),
                )
            )
        examples.append({"id": iid, "image": item.image, "pairs": pairs})
    paths.append(
        plot_examples(examples, Path(out) / FIGURE_NAMES["fig7"], segmenter=seg_name)
    )
    return paths


def _require_photographs(ds, *, any_of: bool = False) -> None:
    """Raise unless every image of ``ds`` has its photograph (``any_of``: one image),
    naming the images without one."""
    missing = [i for i in ds.ids() if ds[i].image_path is None]
    if not missing or (any_of and len(missing) < len(ds.ids())):
        return
    shown = ", ".join(missing[:5]) + (
        f", ... ({len(missing)} in all)" if len(missing) > 5 else ""
    )
    raise InputError(
        f"the segmenter needs the photographs, and {len(missing)} of {len(ds.ids())} "
        f"images {'has' if len(missing) == 1 else 'have'} none ({shown}): give the image "
        "folder (--images)",
        ds.root,
    )


def human_consistency(gt, **kwargs):
    """:func:`run_consistency` without output files; returns the ConsistencyReport."""
    kwargs.pop("out", None)
    return run_consistency(gt, None, **kwargs)[1]


#: Marks a folder of segmentations written by ``--save-segs`` (granularity).
SEGMENTATIONS_MARKER = ".segbench-segmentations"
SEGMENTATIONS_NOTE = "segmentations of segbench granularity (--save-segs): <iid>_<k>.png\n"


def _folders(given) -> list:
    """The folders of an argument given as one path, several, or neither."""
    if isinstance(given, (str, os.PathLike)):
        return [given]
    if isinstance(given, (list, tuple)):
        return [g for g in given if isinstance(g, (str, os.PathLike))]
    return []


def run_granularity(
    gt,
    segmenter: Callable,
    out=None,
    *,
    images=None,
    split=None,
    presentation=None,
    ids=None,
    max_images: int | None = None,
    save_dir=None,
    name: str | None = None,
    workers: int = 1,
    scheduler=None,
    executor=None,
    progress: bool = True,
    plot: bool = True,
):
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
        Writes ``result_granularity.json``, ``per_item_granularity.csv``,
        ``granularity.png`` (``plot``) and the records, keyed by the segmenter's name
        (see :func:`~segbench.region.granularity_family`).
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
    from ..datasets import open_ground_truth, parse_ids, with_images
    from ..engine import claim_run_folder, execution, run
    from ..io import claim_folder
    from ..region import granularity_family, needs_image

    ds = open_ground_truth(gt, split=split, presentation=presentation, all_splits=True)
    wanted = parse_ids(ids)
    if wanted is not None:
        ds = ds.subset(wanted)
    if max_images is not None:
        if int(max_images) != max_images or max_images < 1:
            raise InputError(f"max_images must be a positive integer, got {max_images!r}")
        ds = ds.subset(ds.ids()[: int(max_images)])
    if images is not None:
        ds = with_images(ds, images)
    elif needs_image(segmenter):
        _require_photographs(ds)
    if save_dir is not None and out is not None:
        run_dir, segs_dir = (Path(p).resolve() for p in (out, save_dir))
        if segs_dir == run_dir:
            raise InputError(
                "--save-segs is the --out folder: give the segmentations a folder of "
                f"their own (e.g. --save-segs {Path(out) / 'segmentations'})",
                out,
            )
        if run_dir in segs_dir.parents:  # made first, so that the run folder is ours
            claim_run_folder(out, {"--gt": gt, "--images": images})
    if save_dir is not None:  # the one folder rule: nothing of the user's replaced
        inputs = {
            f"{option} ({k + 1})" if k else option: folder
            for option, given in (
                ("--gt", gt),
                ("--images", images),
                ("--seg-dir", getattr(segmenter, "folder", None)),
            )
            for k, folder in enumerate(_folders(given))
        }
        save_dir = str(
            claim_folder(
                save_dir,
                SEGMENTATIONS_MARKER,
                "segbench granularity",
                SEGMENTATIONS_NOTE,
                inputs=inputs,
                apart=True,
                what="folder of segmentations segbench granularity saved",
                out_option="--save-segs",
            )
        )
    family = granularity_family(segmenter, name=name)
    (result,) = run(
        family,
        ds,
        None,
        out,
        name=family.defaults["segmenter"],
        all_splits=True,
        params={"save_dir": save_dir or ""},
        options={"plot": plot},
        **execution(workers, scheduler, executor, progress),
    )
    return result, result.detail


def evaluate_granularity(gt, segmenter: Callable, **kwargs):
    """:func:`run_granularity` without output files; returns the GranularityReport."""
    kwargs.pop("out", None)
    return run_granularity(gt, segmenter, None, **kwargs)[1]


__all__ = [
    "evaluate_granularity",
    "human_consistency",
    "run_consistency",
    "run_granularity",
]
