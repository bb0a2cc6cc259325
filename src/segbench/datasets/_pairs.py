"""Label-map files paired by key: the file name minus a suffix.

The rule of mmsegmentation's ``seg_map_suffix`` / ``img_suffix``: the key of
``frankfurt_000000_000294_gtFine_labelTrainIds.png`` with the suffix
``_gtFine_labelTrainIds.png`` is ``frankfurt_000000_000294``, and so is the key of the
prediction ``frankfurt_000000_000294_leftImg8bit.png`` with ``_leftImg8bit.png``. With
``recursive`` a whole tree is listed and the folder a file sits in plays no part in its
key, so Cityscapes' per-city ground truth pairs with a flat folder of predictions.

:class:`LabelMapFolder` is the ground-truth side (a :class:`Dataset` whose ids are the
keys), :func:`predictions_by_suffix` the prediction side (a mapping id -> file, which
:func:`segbench.engine.run` takes as ``pred``), :func:`pair_folders` both at once.
"""

from __future__ import annotations

import os
from functools import partial
from os import PathLike
from pathlib import Path

import numpy as np

from ..errors import InputError
from ._inputs import SPLIT_NAMES, stray_predictions
from .bsds import Annotation, Dataset, DatasetItem

__all__ = ["LabelMapFolder", "pair_folders", "predictions_by_suffix"]

_SHOWN = 20  # keys listed in an error message


def _listing(
    folder: Path, suffix: str, recursive: bool, side: str, *, folders: bool = True
) -> dict[str, list[Path]]:
    """key -> every file of ``folder`` (and below, with ``recursive``) ending in
    ``suffix`` in any case (``a.PNG`` with ``.png``), hidden files and folders skipped.
    A link among them whose target is missing is an error (naming it), not a file left
    out of the run; so is a folder ending in ``suffix`` unless ``folders`` is False
    (the prediction side, whose pairing names the folders of the keys it needs).
    A folder that cannot be read is an error naming it, where a walk would skip it."""
    from ..io import refuse_unreadable

    refuse_unreadable(folder)
    if not folder.exists():
        raise InputError(f"{side} folder not found", folder)
    if not folder.is_dir():
        raise InputError(f"expected a {side} folder but this is a file", folder)
    found: dict[str, list[Path]] = {}
    tail = suffix.lower()

    def named_as_a_file(name: str) -> bool:
        return (
            not name.startswith(".")
            and name.lower().endswith(tail)
            and len(name) > len(tail)
        )

    # (folder, file names, names of links to nothing) per folder listed
    walk: list[tuple[Path, list[str], set[str]]] = []
    if recursive:

        def unreadable(exc: OSError) -> None:  # os.walk would pass over the folder
            raise InputError(
                f"cannot read this folder: {exc.strerror or exc}", exc.filename or folder
            )

        for top, dirs, files in os.walk(folder, onerror=unreadable):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            root = Path(top)
            if folders:
                for d in dirs:
                    if named_as_a_file(d):
                        from ..io import refuse_folder

                        refuse_folder(root / d, suffix)
            # os.walk lists a link to nothing among the files
            broken = {f for f in files if not (root / f).exists()}
            walk.append((root, sorted(files), broken))
    else:
        names, broken = [], set()
        for e in os.scandir(folder):
            if e.is_file():
                names.append(e.name)
            elif e.is_symlink() and not e.is_dir():
                names.append(e.name)
                broken.add(e.name)
            elif folders and e.is_dir() and named_as_a_file(e.name):
                from ..io import refuse_folder  # loaded only for such a folder

                refuse_folder(Path(e.path), suffix)
        walk.append((folder, sorted(names), broken))
    for root, names, broken in walk:
        for name in names:
            if not named_as_a_file(name):
                continue
            if name in broken:
                from ..io import refuse_broken_link  # loaded only for a broken link

                refuse_broken_link(root / name)
            found.setdefault(name[: len(name) - len(suffix)], []).append(root / name)
    return found


def _shown(keys) -> str:
    keys = sorted(keys)
    return ", ".join(keys[:_SHOWN]) + (
        f" ... ({len(keys)} in all)" if len(keys) > _SHOWN else ""
    )


def _refuse_duplicates(found: dict[str, list[Path]], side: str, folder: Path) -> None:
    dup = {k: v for k, v in found.items() if len(v) > 1}
    if dup:
        first = sorted(dup)[0]
        raise InputError(
            f"{len(dup)} keys name several {side} files, so the pairing would be a "
            f"guess: {_shown(dup)} (e.g. {', '.join(str(p) for p in dup[first])})",
            folder,
        )


def _check_suffix(suffix: str) -> None:
    if not suffix:
        raise InputError("gt_suffix and pred_suffix must be non-empty (e.g. '.png')")


def _load_class_map(path: Path) -> tuple[Annotation, ...]:
    from ..io import read_label_map

    return (
        Annotation(read_label_map(path).astype(np.int32, copy=False), source=str(path)),
    )


class LabelMapFolder(Dataset):
    """A folder of ground-truth label maps (class ids), one item per key.

    Parameters
    ----------
    gt_dir : str or PathLike
        The folder; with ``recursive``, the tree below it.
    suffix : str, default '.png'
        What ends every ground-truth file name; the key (the item's id) is the name
        without it. Other files are not considered.
    recursive : bool, default False
        List the subfolders too (the folders play no part in the keys).
    split : str, optional
        The split name every item gets (default: the folder's name when it is one,
        e.g. ``val``, else ``'test'``).

    Notes
    -----
    Each item's ``gt_path`` and ``sources`` are its label-map file, which the semantic
    benchmark reads as it is (:func:`segbench.io.read_label_map`). Its one annotation
    holds the stored class ids as int32 (the ignore value included), not renumbered.

    Raises
    ------
    InputError
        A missing folder, no file ending in ``suffix``, a folder named like one, or a
        key held by two files (listing the keys).
    """

    name = "label maps"

    def __init__(
        self,
        gt_dir: str | PathLike,
        *,
        suffix: str = ".png",
        recursive: bool = False,
        split: str | None = None,
    ):
        super().__init__()
        _check_suffix(suffix)
        gt_dir = Path(gt_dir)
        found = _listing(gt_dir, suffix, recursive, "ground-truth")
        if not found:
            raise InputError(
                f"no ground-truth file ending in {suffix!r}"
                + (
                    ""
                    if recursive
                    else " (pass recursive=True / --recursive to search subfolders)"
                ),
                gt_dir,
            )
        _refuse_duplicates(found, "ground-truth", gt_dir)
        self.root = gt_dir
        self.suffix = suffix
        if split is None:
            split = gt_dir.name if gt_dir.name in SPLIT_NAMES else "test"
        for key in sorted(found):
            path = found[key][0]
            self._protos[key] = DatasetItem(
                key, split, None, path, None, partial(_load_class_map, path), (path,)
            )


def predictions_by_suffix(
    ids,
    pred_dir: str | PathLike,
    *,
    suffix: str = ".png",
    recursive: bool = False,
    all_ids=None,
) -> dict[str, Path]:
    """The prediction ``<key><suffix>`` of every id, found in ``pred_dir``.

    Parameters
    ----------
    ids : iterable of str, or Dataset
        The keys to find (a dataset: its ids).
    pred_dir : str or PathLike
    suffix : str, default '.png'
        What ends every prediction file name; other files are not considered.
    recursive : bool, default False
        Search the subfolders too: a prediction is found wherever it sits.
    all_ids : iterable of str, optional
        The keys of the whole ground truth (``ids`` may be a subset): the prediction
        files of other keys are named in a note (logger ``segbench``, INFO).

    Returns
    -------
    dict of str to Path
        In the order of ``ids``. Predictions of other keys are left out.

    Raises
    ------
    InputError
        A missing folder, a key held by two files, or ids without a prediction (each
        listing the keys).
    """
    _check_suffix(suffix)
    ids = list(ids.ids()) if isinstance(ids, Dataset) else [str(i) for i in ids]
    pred_dir = Path(pred_dir)
    found = _listing(pred_dir, suffix, recursive, "prediction", folders=False)
    _refuse_duplicates(found, "prediction", pred_dir)
    missing = [k for k in ids if k not in found]
    if missing:
        from ..io import normalisation_hint

        folders = [k for k in missing if (pred_dir / f"{k}{suffix}").is_dir()]
        hint = normalisation_hint(missing, found)
        raise InputError(
            f"{len(missing)} of {len(ids)} ground-truth files have no prediction named "
            f"<key>{suffix}: {_shown(missing)}"
            + (
                f" ({', '.join(f'{k}{suffix}' for k in folders[:3])} "
                + ("is a folder, not a file)" if len(folders) == 1 else "are folders)")
                if folders
                else ""
            )
            + (f"; {hint}" if hint else ""),
            pred_dir,
        )
    note = (
        None
        if all_ids is None
        else stray_predictions(pred_dir, {k: v[0] for k, v in found.items()}, all_ids)
    )
    if note:
        import logging

        logging.getLogger("segbench").info(note)
    return {k: found[k][0] for k in ids}


def stray_by_suffix(
    pred_dir: str | PathLike, all_ids, *, suffix: str = ".png", recursive: bool = False
) -> str | None:
    """The note :func:`predictions_by_suffix` logs for ``all_ids``, or None: for a
    caller that says it once its run is done (a failing run then says its error
    alone)."""
    pred_dir = Path(pred_dir)
    found = _listing(pred_dir, suffix, recursive, "prediction", folders=False)
    return stray_predictions(pred_dir, {k: v[0] for k, v in found.items()}, all_ids)


def pair_folders(
    gt_dir: str | PathLike,
    pred_dir: str | PathLike,
    *,
    recursive: bool = False,
    gt_suffix: str = ".png",
    pred_suffix: str = ".png",
) -> list[tuple[str, Path, Path]]:
    """Pair label-map files of two folders by key; ``(key, gt_path, pred_path)`` sorted.

    :class:`LabelMapFolder` on ``gt_dir`` and :func:`predictions_by_suffix` on
    ``pred_dir``: only files ending with the side's suffix count; hidden files and
    folders are skipped; with ``recursive`` both trees are walked.

    Raises
    ------
    InputError
        A missing folder, no ground-truth file, a key held by two files on one side, or
        ground-truth keys without a prediction (each error lists the keys). Predictions
        without ground truth are not an error: they are left out, and named in a note
        (logger ``segbench``, INFO).
    """
    _check_suffix(gt_suffix)
    _check_suffix(pred_suffix)
    gts = LabelMapFolder(gt_dir, suffix=gt_suffix, recursive=recursive)
    preds = predictions_by_suffix(
        gts, pred_dir, suffix=pred_suffix, recursive=recursive, all_ids=gts.ids()
    )
    pairs = []
    for k in gts.ids():
        gt_path = gts[k].gt_path
        assert gt_path is not None  # every item of a LabelMapFolder has its file
        pairs.append((k, gt_path, preds[k]))
    return pairs
