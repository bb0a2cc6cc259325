"""The superpixel benchmark over folders, and K-sweeps of the baseline algorithms.

:func:`run_superpixel` hands :data:`segbench.superpixel.SUPERPIXEL` to
:func:`segbench.engine.run`; :func:`run_sweep` runs one family per (algorithm, K)
(:func:`segbench.superpixel.sweep_family`) in one engine pass and composes the curves.
Both read every ground-truth layout (the superpixel benchmark's ``.npz`` and C++ CSV
folders too: :func:`segbench.superpixel.superpixel_dataset`), resume from the records
kept in ``out``, and give the same numbers for any ``workers`` or Dask ``scheduler``.
"""

from __future__ import annotations

from os import PathLike

from ..errors import InputError
from ..resampling import ci_settings


def run_superpixel(
    gt_dir,
    pred_dir,
    out=None,
    *,
    images=None,
    split: str | None = None,
    presentation: str | None = None,
    ids=None,
    name: str | None = None,
    workers: int = 1,
    scheduler: str | None = None,
    executor=None,
    progress: bool = True,
    tolerance: float = 2.0,
    window: str = "euclidean",
    boundary: str = "bsds",
    min_overlap: float = 0.05,
    void: int | None = None,
    connectivity: int = 4,
    max_annotators: int | None = None,
    stutz: bool = False,
    ci=None,
    gt_format=None,
):
    """Score a folder of superpixel maps against the ground truth of their images: the
    runner behind ``segbench.evaluate("superpixel", ...)``, which takes the same keywords
    (call that).

    Parameters
    ----------
    gt_dir : path, sequence of paths, or Dataset
        Ground truth of any layout: ``<iid>.mat`` (BSDS500), ``<iid>.npz``
        (``gt0, gt1, ...``), the C++ benchmark's ``<iid>-<t>.csv``, a BSDS300
        ``human/color`` tree, or a dataset root with ``split`` (whose photographs are
        then used).
    pred_dir : path or mapping
        ``<iid>.png`` (16-bit), ``.npy``, ``.mat``, ``.csv`` (C++ layout) or ``.npz``;
        or a mapping of id to file.
    images : path, optional
        ``<iid>.jpg/.png``, one per image: enables the explained variation (and the
        colour columns of ``stutz``) where the layout has no photographs.
    out : path, optional
        Writes ``result.json``, ``per_item.csv`` and ``per_annotator.csv`` there; with
        ``stutz`` also ``results.csv`` in the C++ benchmark's layout and column names;
        keeps the records, so a rerun computes only what changed.
    split, presentation, ids, name, workers, scheduler, executor, progress, gt_format
        As :func:`segbench.engine.run`.
    tolerance, window, boundary, min_overlap, void, connectivity
        As :func:`segbench.superpixel.evaluate_image`.
    max_annotators : int, optional
        Use only the first annotators of each image (the C++ benchmark reads 5).
    stutz : bool
        Also compute the C++ benchmark's columns (:func:`~segbench.superpixel.stutz_columns`).
    ci : bool or mapping, optional
        Bootstrap intervals over images of every mean (see :func:`segbench.evaluate`).

    Returns
    -------
    Result
        family 'superpixel'; ``metrics`` as :meth:`SuperpixelSummary.metrics`;
        ``per_item`` one row per image (keyed ``id``) with the per-annotator values.
    """
    from ..engine import execution, run
    from ..superpixel import SUPERPIXEL, superpixel_dataset

    dataset = superpixel_dataset(
        gt_dir, images, split=split, presentation=presentation, gt_format=gt_format, ids=ids
    )
    params = {
        "tolerance": tolerance,
        "window": window,
        "boundary": boundary,
        "min_overlap": min_overlap,
        "void": None if void is None else int(void),
        "connectivity": connectivity,
        "max_annotators": None if max_annotators is None else int(max_annotators),
        "stutz": bool(stutz),
    }
    (result,) = run(
        SUPERPIXEL,
        dataset,
        pred_dir,
        out,
        split=split,
        presentation=presentation,
        gt_format=gt_format,
        ids=ids,
        name=name,
        params=params,
        options={"ci": ci_settings(ci)} if ci else None,
        **execution(workers, scheduler, executor, progress),
    )
    _warn_if_not_label_maps(result.metrics, pred_dir)
    return result


def _warn_if_not_label_maps(metrics, pred_dir) -> None:
    """A warning when the maps read look like soft boundary maps, not superpixels: most
    'superpixels' in pieces, four or more pieces each on average (a HED map read as
    labels: 249 of 250 values in pieces, 26 pieces each; SLIC's: almost none). Such
    maps are read without error, as every 8-bit PNG is a label map."""
    n_sp, n_comp, n_split = (
        metrics.get(k) for k in ("n_superpixels", "n_components", "n_split")
    )
    if not n_sp or n_comp is None or n_split is None:
        return
    if n_split >= 0.5 * n_sp and n_comp >= 4 * n_sp:
        import warnings

        warnings.warn(
            f"{pred_dir}: {n_split:.0f} of the {n_sp:.0f} labels of an image are in "
            f"several pieces ({n_comp / n_sp:.0f} pieces a label): these look like "
            "boundary maps, not superpixel label maps (`segbench boundary` scores "
            "boundary maps)",
            UserWarning,
            stacklevel=3,
        )


def run_sweep(
    algorithms,
    ks,
    gt_dir,
    image_dir=None,
    out=None,
    *,
    split: str | None = None,
    presentation: str | None = None,
    ids=None,
    name: str | None = None,
    k_range=None,
    max_images: int | None = None,
    workers: int = 1,
    scheduler: str | None = None,
    executor=None,
    progress: bool = True,
    tolerance: float = 2.0,
    window: str = "euclidean",
    boundary: str = "bsds",
    max_annotators: int | None = None,
    algorithm_params: dict | None = None,
    plot: bool = True,
):
    """Run baseline algorithms at every K on a dataset; curves and K-averages.

    Parameters
    ----------
    algorithms : str or sequence of str
        Names in :data:`segbench.algorithms.superpixels.SUPERPIXEL_ALGORITHMS`.
    ks : sequence of int
        Target numbers of superpixels.
    gt_dir : path, sequence of paths, or Dataset
        Ground truth of any layout (as :func:`run_superpixel`); a dataset root with
        ``split`` brings its photographs.
    image_dir : path, optional
        ``<iid>.jpg/.png`` photographs, replacing the layout's; images without one are
        left out (InputError if none has one).
    out : path, optional
        Output folder: ``sweep.json``, ``sweep.csv``, ``curves.png`` and the records
        (one folder per algorithm and K: a killed sweep resumes, a new K computes only
        itself). Without it nothing is written or kept.
    split, presentation, ids, name, workers, scheduler, executor, progress
        As :func:`segbench.engine.run`.
    k_range : (float, float), optional
        Range of superpixel counts for the averages; default ``(min(ks), max(ks))``.
    max_images : int, optional
        The first images only (sorted by id), for a quick look.
    tolerance, window, boundary
        As :func:`segbench.superpixel.evaluate_image`.
    max_annotators : int, optional
        Use only the first annotators.
    algorithm_params : dict, optional
        ``{algorithm: {param: value}}`` passed to the algorithm functions.
    plot : bool
        Write ``curves.png`` (needs ``out``).

    Returns
    -------
    Result
        As :func:`segbench.superpixel.sweep_result`: family 'superpixel-sweep', curves
        per algorithm over K, ``metrics['<algorithm>/avg_<measure>']``.
    """
    from ..datasets import parse_ids
    from ..engine import execution, run
    from ..superpixel import (
        superpixel_dataset,
        sweep_family,
        sweep_ks,
        sweep_result,
        write_sweep,
    )

    if max_images is not None and (int(max_images) != max_images or max_images < 1):
        raise InputError(
            f"max_images (--max-images) must be a positive integer, got {max_images!r}"
        )
    algos = [algorithms] if isinstance(algorithms, str) else list(algorithms)
    if not algos:
        raise InputError("no superpixel algorithm given")
    ks = sweep_ks(ks)
    lo, hi = (ks[0], ks[-1]) if k_range is None else (float(k_range[0]), float(k_range[1]))
    if not hi > lo:
        raise InputError(
            f"the K range must have k_max > k_min, got [{lo:g}, {hi:g}]: a sweep "
            "averages each measure over a range of K, so give two or more K values "
            "(--k) or the range (--k-range LO,HI; k_range in Python)"
        )
    aparams = {a: dict((algorithm_params or {}).get(a, {})) for a in algos}
    families = [sweep_family(a, k, aparams[a]) for a in algos for k in ks]
    dataset = superpixel_dataset(
        gt_dir, image_dir, split=split, presentation=presentation, required=False
    )
    wanted = parse_ids(ids)
    if wanted is not None:
        dataset = dataset.subset(wanted)
    item_ids = [
        i
        for i in dataset.ids()
        if dataset[i].image_path is not None or dataset[i].image_loader is not None
    ]
    if not item_ids:
        raise InputError(
            "no image has both ground truth and a photograph (give the photographs' "
            "folder: --images; image_dir in Python; or a dataset root with its images)",
            image_dir if image_dir is not None else dataset.root,
        )
    if max_images is not None:
        item_ids = item_ids[: int(max_images)]
    options = {
        "tolerance": tolerance,
        "window": window,
        "boundary": boundary,
        "max_annotators": None if max_annotators is None else int(max_annotators),
    }
    results = run(
        families,
        dataset,
        None,
        out,
        split=split,
        presentation=presentation,
        ids=item_ids,
        name=name,
        params=options,
        save_results=False,
        **execution(workers, scheduler, executor, progress),
    )
    points = {
        (f.defaults["algorithm"], f.defaults["k"]): r for f, r in zip(families, results)
    }
    res = sweep_result(
        points,
        (lo, hi),
        algorithm_params=aparams,
        n_images=len(item_ids),
        gt=str(gt_dir) if isinstance(gt_dir, (str, PathLike)) else str(dataset.root),
        images=None if image_dir is None else str(image_dir),
        split=split,
        **options,
    )
    res.name = name or ""
    if out is not None:
        write_sweep(out, res, plot=plot)
    return res


__all__ = ["run_superpixel", "run_sweep"]
