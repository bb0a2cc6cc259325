"""Semantic segmentation over two folders of label maps, on the one engine.

:func:`evaluate_semantic` is the registry's runner of the 'semantic' benchmark
(:data:`segbench.families.BENCHMARKS`): call it as ``segbench.evaluate("semantic",
gt, pred, out, classes=...)``, the one way in (which
:meth:`segbench.semantic.SemanticEval.update_folders` runs; ``segbench semantic`` calls
this runner). It pairs the folders by file-name suffix
(:class:`segbench.datasets.LabelMapFolder`, :func:`segbench.datasets.predictions_by_suffix`)
and hands :data:`segbench.semantic.SEMANTIC` to :func:`segbench.engine.run`, so runs keep
one record per pair and resume, and ``workers`` or a Dask ``scheduler`` change nothing
in the numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import InputError
from ..resampling import ci_settings


def evaluate_semantic(
    gt,
    pred,
    out=None,
    *,
    classes: int | Sequence[str],
    ignore_index: int | None = 255,
    reduce_zero_label: bool = False,
    boundary_dilation: float | None = 0.02,
    recursive: bool = False,
    gt_suffix: str = ".png",
    pred_suffix: str = ".png",
    ids=None,
    name: str | None = None,
    workers: int = 1,
    scheduler: str | None = None,
    executor=None,
    progress: bool = True,
    ci=None,
):
    """Score a folder of predicted label maps against a folder of ground-truth ones:
    the runner behind ``segbench.evaluate("semantic", ...)``, which takes the same
    keywords (call that).

    Parameters
    ----------
    gt : path or Dataset
        Folder of ground-truth label maps (8/16-bit gray or palette PNG, .npy, .mat;
        the value is the class id), or a :class:`~segbench.datasets.Dataset` whose
        items name one label-map file each (e.g. a
        :class:`~segbench.datasets.LabelMapFolder`).
    pred : path
        Folder of predicted label maps.
    out : path, optional
        Writes ``result_semantic.json`` and ``per_item_semantic.csv`` and keeps one
        record per pair, so a rerun reuses every pair whose files and settings are
        unchanged. None writes nothing.
    classes : int or sequence of str
        Number of classes, or their names (``per_class`` is then keyed by name).
    ignore_index : int or None, default 255
        Ground-truth value left out on both sides; None counts every pixel.
    reduce_zero_label : bool, default False
        mmseg's rule for ADE20K-style files (ground-truth 0 is "other"); needs
        ``ignore_index=255``.
    boundary_dilation : float or None, default 0.02
        Boundary-IoU band width as a fraction of each image's diagonal; None skips
        boundary IoU.
    recursive : bool, default False
        Walk the subfolders of both sides (the folders play no part in the keys).
    gt_suffix, pred_suffix : str, default '.png'
        What ends every file name on each side; the key of a file is its name without
        it (Cityscapes: ``_gtFine_labelTrainIds.png`` and ``_leftImg8bit.png``).
    ids : list of str, str or path, optional
        Score only these keys (see :func:`segbench.datasets.parse_ids`).
    name : str, optional
        Name of the run (default: ``name.txt`` in ``pred``, else its folder name).
    workers, scheduler, executor, progress
        As :func:`segbench.engine.run`.
    ci : bool or mapping, optional
        Bootstrap intervals over images of the six means (see
        :func:`segbench.evaluate`).

    Returns
    -------
    Result
        ``metrics``: mIoU, fwIoU, mAcc, aAcc, mDice, mBIoU (fractions; ``nan`` = not
        computed), equal to :class:`~segbench.semantic.SemanticEval`'s on the same
        pairs; ``per_class`` (per-class IoU, Acc, Dice, BIoU by name, also in
        ``result_semantic.json``); ``per_item``: one row per pair (see
        :data:`~segbench.semantic.SEMANTIC`'s summary); ``detail``: a
        :class:`~segbench.semantic.SemanticEval` holding the summed counts
        (``confusion()``, ``summary_lines()``).

    Raises
    ------
    InputError
        Bad settings; a ground-truth key without prediction or a key held by two files
        on one side (both listing the keys); any problem with a file (naming it).

    Examples
    --------
    >>> import segbench                                           # doctest: +SKIP
    >>> res = segbench.evaluate("semantic", "gtFine/val", "preds", "runs/ours",
    ...                         classes=19, recursive=True,
    ...                         gt_suffix="_gtFine_labelTrainIds.png",
    ...                         pred_suffix="_leftImg8bit.png", workers=2)
    >>> res.metrics["mIoU"], res.to_pandas().sort_values("mIoU").head()
    """
    from ..datasets import (
        Dataset,
        LabelMapFolder,
        parse_ids,
        predictions_by_suffix,
        run_name,
        stray_by_suffix,
    )
    from ..engine import run
    from ..semantic import SEMANTIC

    if not gt_suffix or not pred_suffix:
        raise InputError("gt_suffix and pred_suffix must be non-empty (e.g. '.png')")
    params = {
        "classes": classes,
        "ignore_index": ignore_index,
        "reduce_zero_label": reduce_zero_label,
        "boundary_dilation": boundary_dilation,
    }
    resolved = SEMANTIC.resolve(params)  # bad settings fail before any file is listed
    if not isinstance(gt, Dataset):
        gt = LabelMapFolder(gt, suffix=gt_suffix, recursive=recursive)
    wanted = parse_ids(ids)
    dataset = gt if wanted is None else gt.subset(wanted)
    preds = predictions_by_suffix(dataset, pred, suffix=pred_suffix, recursive=recursive)
    (result,) = run(
        SEMANTIC,
        dataset,
        preds,
        out,
        ids=wanted,
        name=run_name(pred, name),
        params=resolved,
        workers=workers,
        scheduler=scheduler,
        executor=executor,
        progress=progress,
        options={"ci": ci_settings(ci)} if ci else None,
        pred_dir=pred,
    )
    # said once the run is done, as the engine says it of the other benchmarks
    note = stray_by_suffix(pred, gt.ids(), suffix=pred_suffix, recursive=recursive)
    if note:
        import logging

        logging.getLogger("segbench").info(note)
    return result
