"""Agreement among annotators over a dataset (after Hou, Yuille and Koch, CVPR 2013).

:func:`run_agreement` hands the engine family :data:`segbench.boundary.AGREEMENT` to
:func:`segbench.engine.run`, so every layout of ground truth is read, runs resume from
their records, and ``workers`` or a Dask ``scheduler`` change nothing in the numbers.
Imports are lazy: importing this module loads no numerical library.
"""

from __future__ import annotations

from ..families import DEFAULT_MAX_DIST


def run_agreement(
    gt,
    out=None,
    *,
    split=None,
    ids=None,
    max_dist: float = DEFAULT_MAX_DIST,
    workers: int = 1,
    scheduler=None,
    progress: bool = True,
    name=None,
    presentation=None,
    executor=None,
    plot: bool = True,
    maps: bool = True,
    unit: str = "label",
    gt_format=None,
):
    """How many annotators drew each human boundary pixel, pooled over a dataset.

    For annotator k's boundary pixel p, agreement(p) = 1 + the number of other
    annotators whose boundary map matches p in the benchmark's one-to-one
    correspondence (tolerance ``max_dist`` of the diagonal), one matching per pair of
    annotators (:func:`segbench.boundary.agreement_levels`). Orphans have agreement 1,
    unanimous pixels agreement K (the image's number of annotators). Fractions count
    labels by default, as Hou, Yuille and Koch (2013) do: a boundary drawn by l
    annotators (l matched pixels, one per annotator) is one label of level l.

    Parameters
    ----------
    gt : path, sequence of paths, or Dataset
        Ground truth of any layout (folders of BSDS500 ``<iid>.mat``, BSDS300
        ``human/color`` trees, a dataset root); several folders are taken together, and
        every split of a root is used unless ``split``.
    out : path, optional
        Writes ``result_agreement.json``, ``per_item_agreement.csv``, ``agreement.png``
        (the distribution; ``plot``), ``agreement/<iid>.png`` (each pixel's highest
        agreement, gray ``round(255 * level / K)``; ``maps``) and the records, so a
        rerun resumes.
    split, presentation, ids, name, workers, scheduler, executor, progress, gt_format
        As :func:`segbench.engine.run`.
    max_dist : float, default 0.0075
        Matching tolerance as a fraction of the image diagonal.
    plot, maps : bool, default True
        Write the distribution plot and the per-image agreement maps.
    unit : {"label", "pixel"}, default "label"
        What the fractions count: ``"label"`` (labels at level l = pixels at level l /
        l; Hou et al.'s unit, which reproduces their figures) or ``"pixel"`` (every
        annotator's boundary pixel once, so a unanimous boundary weighs K times). A
        summary parameter: a rerun in the other unit recomputes no record.

    Returns
    -------
    Result
        Family ``'agreement'``. ``metrics``: ``orphan_fraction`` and
        ``unanimous_fraction`` in ``unit`` (all annotators of all images with at least
        two annotators pooled; unanimous = level K of each pixel's own image), their
        means over images (``*_image_mean``), ``level_<l>`` (pooled fraction at
        agreement l), ``mean_agreement`` (mean of level / K), both units whatever
        ``unit`` (``orphan_label_fraction``, ``orphan_pixel_fraction``, and unanimous)
        and counts (``n_boundary_pixels``, ``n_labels``). ``per_item``: one row per
        image keyed ``id`` with K, its boundary pixels and labels and the same
        fractions. ``curves``: pixels, labels and fraction per level, pixels per level
        for each K.

    Notes
    -----
    On the 200 BSDS500 test images the label count gives 30.61% orphan and 30.25%
    unanimous labels (Hou et al.: 30.58% and 30.15%); the pixel count 9.87% and 51.54%
    (``docs/agreement.md``).
    """
    from ..boundary import AGREEMENT, check_unit

    check_unit(unit)  # before any image is read
    from ..engine import run

    (result,) = run(
        AGREEMENT,
        gt,
        None,
        out,
        split=split,
        presentation=presentation,
        gt_format=gt_format,
        ids=ids,
        all_splits=True,
        name=name or "human",
        params={"max_dist": max_dist, "unit": unit},
        options={"plot": plot, "maps": maps},
        workers=workers,
        scheduler=scheduler,
        executor=executor,
        progress=progress,
    )
    return result


__all__ = ["run_agreement"]
