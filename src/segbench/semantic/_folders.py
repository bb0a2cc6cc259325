"""Pairing ground-truth and prediction files by key (name minus a suffix)."""

from __future__ import annotations

import os
from os import PathLike
from pathlib import Path

from ..errors import InputError

_SHOWN = 20


def _listing(folder: Path, suffix: str, recursive: bool, side: str) -> dict[str, list[Path]]:
    if not folder.exists():
        raise InputError(f"{side} folder not found", folder)
    if not folder.is_dir():
        raise InputError(f"expected a {side} folder but this is a file", folder)
    found: dict[str, list[Path]] = {}
    if recursive:
        walk = []
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            walk.append((Path(root), sorted(files)))
    else:
        walk = [(folder, sorted(e.name for e in os.scandir(folder) if e.is_file()))]
    for root, names in walk:
        for name in names:
            if name.startswith(".") or not name.endswith(suffix) or name == suffix:
                continue
            found.setdefault(name[: len(name) - len(suffix)], []).append(root / name)
    return found


def _shown(keys) -> str:
    keys = sorted(keys)
    return ", ".join(keys[:_SHOWN]) + (f" ... ({len(keys)} in all)" if len(keys) > _SHOWN
                                       else "")


def pair_folders(gt_dir: str | PathLike, pred_dir: str | PathLike, *,
                 recursive: bool = False, gt_suffix: str = ".png",
                 pred_suffix: str = ".png") -> list[tuple[str, Path, Path]]:
    """Pair label-map files of two folders by key; ``(key, gt_path, pred_path)`` sorted.

    The key of a file is its name without the side's suffix (``frankfurt_000000_000294``
    for both ``frankfurt_000000_000294_gtFine_labelTrainIds.png`` with
    ``gt_suffix="_gtFine_labelTrainIds.png"`` and ``frankfurt_000000_000294_leftImg8bit.png``
    with ``pred_suffix="_leftImg8bit.png"``). Only files ending with the suffix count;
    hidden files and folders are skipped. With ``recursive`` both trees are walked and
    the folder a file sits in plays no part in its key.

    Raises
    ------
    InputError
        A missing folder, no ground-truth file, a key held by two files on one side, or
        ground-truth keys without a prediction (each error lists the keys). Predictions
        without ground truth are not an error: they are left out.
    """
    if not gt_suffix or not pred_suffix:
        raise InputError("gt_suffix and pred_suffix must be non-empty (e.g. '.png')")
    gt_dir, pred_dir = Path(gt_dir), Path(pred_dir)
    gts = _listing(gt_dir, gt_suffix, recursive, "ground-truth")
    preds = _listing(pred_dir, pred_suffix, recursive, "prediction")
    if not gts:
        raise InputError(f"no ground-truth file ending in {gt_suffix!r}"
                         + ("" if recursive else " (pass recursive=True / --recursive to "
                            "search subfolders)"), gt_dir)
    for side, found, folder in (("ground-truth", gts, gt_dir), ("prediction", preds,
                                                                 pred_dir)):
        dup = {k: v for k, v in found.items() if len(v) > 1}
        if dup:
            first = sorted(dup)[0]
            raise InputError(
                f"{len(dup)} keys name several {side} files, so the pairing would be a "
                f"guess: {_shown(dup)} (e.g. {', '.join(str(p) for p in dup[first])})",
                folder)
    missing = [k for k in gts if k not in preds]
    if missing:
        raise InputError(
            f"{len(missing)} of {len(gts)} ground-truth files have no prediction named "
            f"<key>{pred_suffix}: {_shown(missing)}", pred_dir)
    return [(k, gts[k][0], preds[k][0]) for k in sorted(gts)]
