"""Agreement among annotators over a dataset (after Hou, Yuille and Koch, CVPR 2013).

:func:`run_agreement` hands the engine family :data:`segbench.boundary.AGREEMENT` to
:func:`segbench.engine.run`, so every layout of ground truth is read, runs resume from
their records, and ``workers`` or a Dask ``scheduler`` change nothing in the numbers.
Imports are lazy: importing this module loads no numerical library.
"""

from __future__ import annotations

from .families import DEFAULT_MAX_DIST


def run_agreement(gt, out=None, *, split=None, ids=None,
                  max_dist: float = DEFAULT_MAX_DIST, workers: int = 1, scheduler=None,
                  progress: bool = True, name=None, presentation=None, executor=None,
                  plot: bool = True, maps: bool = True):
    """How many annotators drew each human boundary pixel, pooled over a dataset.

    For annotator k's boundary pixel p, agreement(p) = 1 + the number of other
    annotators whose boundary map matches p in the benchmark's one-to-one
    correspondence (tolerance ``max_dist`` of the diagonal), one matching per pair of
    annotators (:func:`segbench.boundary.agreement_levels`). Orphans have agreement 1,
    unanimous pixels agreement K (the image's number of annotators).

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
    split, presentation, ids, name, workers, scheduler, executor, progress
        As :func:`segbench.engine.run`.
    max_dist : float, default 0.0075
        Matching tolerance as a fraction of the image diagonal.
    plot, maps : bool, default True
        Write the distribution plot and the per-image agreement maps.

    Returns
    -------
    Result
        Family ``'agreement'``. ``metrics``: ``orphan_fraction`` and
        ``unanimous_fraction`` (boundary pixels of all annotators of all images with at
        least two annotators pooled; unanimous = level K of each pixel's own image),
        their means over images (``*_image_mean``), ``level_<l>`` (pooled fraction at
        agreement l), ``mean_agreement`` (mean of level / K) and counts. ``per_item``:
        one row per image keyed ``id`` with K, its boundary pixels and the same
        fractions. ``curves``: pixels and fraction per level, pixels per level for each
        K.

    Notes
    -----
    A pixel count: see ``docs/agreement.md`` for why it need not reproduce the
    percentages of Hou et al. (30.58% orphan and 30.15% unanimous labels on the BSDS500
    test images).
    """
    from .boundary import AGREEMENT
    from .engine import run
    result, = run(AGREEMENT, gt, None, out, split=split, presentation=presentation,
                  ids=ids, all_splits=True, name=name or "human",
                  params={"max_dist": max_dist}, options={"plot": plot, "maps": maps},
                  workers=workers, scheduler=scheduler, executor=executor,
                  progress=progress)
    return result


__all__ = ["run_agreement"]
