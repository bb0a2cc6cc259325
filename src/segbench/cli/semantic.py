"""``segbench semantic``: argparse over
:func:`segbench.evaluate` ``("semantic", ...)``; no logic of its own.

Wired into ``segbench.cli`` by ``add_parsers(sub)``; imports the library lazily so that
``segbench --help`` stays fast.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ._common import add_ci, add_common, add_inputs, ci_option, print_intervals


def add_parsers(subparsers) -> None:
    """Register the ``semantic`` subcommand on an argparse subparsers object."""

    p = subparsers.add_parser(
        "semantic",
        help="semantic segmentation (mIoU, fwIoU, mAcc, aAcc, mDice, mBIoU)",
        description="Evaluate a folder of predicted label-map PNGs against a folder of "
        "ground-truth label maps (8/16-bit gray or palette PNG; the pixel value "
        "is the class id). Numbers follow mmsegmentation's IoUMetric; boundary "
        "IoU follows the authors' mask_to_boundary.",
    )
    add_inputs(
        p,
        layouts=False,
        gt_help="folder of ground-truth label maps",
        pred_help="folder of predicted label maps",
        out_help="output folder: result_semantic.json, per_item_semantic.csv, and "
        "records so that "
        "a rerun resumes",
    )
    p.add_argument(
        "--classes",
        required=True,
        metavar="N|names.txt",
        help="number of classes, or a text file with one class name per line",
    )
    p.add_argument(
        "--ignore-index",
        type=int,
        default=255,
        metavar="N",
        help="ground-truth value left out on both sides",
    )
    p.add_argument(
        "--reduce-zero-label",
        action="store_true",
        help="ground-truth 0 is 'other': map it to 255 and shift the other "
        "labels down by one (ADE20K; mmseg's rule)",
    )
    p.add_argument(
        "--no-boundary-iou",
        dest="boundary_iou",
        action="store_false",
        help="skip boundary IoU",
    )
    p.add_argument(
        "--boundary-dilation",
        type=float,
        default=0.02,
        metavar="F",
        help="boundary band width as a fraction of the image diagonal (default: 0.02)",
    )
    p.add_argument(
        "--recursive",
        action="store_true",
        help="walk subfolders on both sides (pairing ignores the folders)",
    )
    p.add_argument(
        "--gt-suffix",
        default=".png",
        metavar="S",
        help="suffix stripped from ground-truth file names to get the key "
        "(default: .png; Cityscapes: _gtFine_labelTrainIds.png)",
    )
    p.add_argument(
        "--pred-suffix",
        default=".png",
        metavar="S",
        help="suffix stripped from prediction file names",
    )
    add_ci(p)
    add_common(p, scheduler=True)
    p.set_defaults(func=_cmd_semantic)


def read_classes(value: str) -> int | list[str]:
    """``--classes``: a positive count, or a file of names (one per line)."""
    from ..errors import InputError

    text = value.strip()
    if text.isdigit():
        if int(text) < 1:
            raise InputError(f"--classes must be at least 1, got {value}")
        return int(text)
    path = Path(value)
    if not path.is_file():
        raise InputError(
            "--classes is neither a number nor an existing file of class names", path
        )
    try:
        names = [line.strip() for line in path.read_text(encoding="utf-8-sig").splitlines()]
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read class names: {exc}", path) from None
    while names and not names[-1]:
        names.pop()
    if not names:
        raise InputError("no class names in the file", path)
    blank = [i + 1 for i, n in enumerate(names) if not n]
    if blank:
        raise InputError(
            f"blank class name on line(s) {blank[:10]}; one name per line, "
            "line k naming class k-1",
            path,
        )
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"duplicated class names {dup[:10]}", path)
    return names


def _cmd_semantic(a: argparse.Namespace) -> int:
    import os

    # before numpy's first import (the parser imports none): its OpenBLAS starts a pool
    # of threads that spin for a while, 0.05 CPU-s of a command that does no linear
    # algebra worth threads (`import numpy`: 0.13 -> 0.075 CPU-s). The user's setting wins
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from ..semantic import native_available

    if a.boundary_iou or not native_available():  # Numba's kernels count: import it lean
        from ..compilation import import_numba_lean

        import_numba_lean()
    from ..api import evaluate

    res = evaluate(
        "semantic",
        a.gt,
        a.pred,
        a.out,
        classes=read_classes(a.classes),
        ignore_index=a.ignore_index,
        reduce_zero_label=a.reduce_zero_label,
        boundary_dilation=a.boundary_dilation if a.boundary_iou else None,
        recursive=a.recursive,
        gt_suffix=a.gt_suffix,
        pred_suffix=a.pred_suffix,
        ids=a.ids,
        name=a.name,
        workers=a.workers,
        scheduler=a.scheduler,
        progress=not a.quiet,
        ci=ci_option(a),
    )
    if a.json:
        print(res.to_json())
    else:
        ev = res.detail
        print(
            f"{ev.n_images} pairs   gt: {a.gt}   pred: {a.pred}"
            + (f"   output: {a.out}" if a.out else "")
        )
        print("\n".join(ev.summary_lines()))
        print_intervals(res, percent=True)  # as the table: percent
    return 0
