"""``segbench agreement``: how many annotators drew each human boundary pixel.

Registered by :mod:`segbench.cli` (``add_parsers``). Thin, as the rest of the CLI: parses,
calls ``segbench.evaluate("agreement", ...)`` (imported lazily, so ``segbench --help`` stays fast),
prints.
"""

from __future__ import annotations

import argparse
import math

from ._common import add_common, add_inputs, print_table, where

#: Hou, Yuille and Koch (CVPR 2013): percent orphan and unanimous labels.
_PAPER = "Hou et al. 2013, labels: BSDS500 test 30.58% / 30.15%, BSDS300 29.40% / 28.99%"


def _pct(v) -> str:
    return (
        "nan"
        if v is None or (isinstance(v, float) and not math.isfinite(v))
        else f"{100 * v:.2f}%"
    )


def _cmd_agreement(a) -> int:
    from ..api import evaluate

    result = evaluate(
        "agreement",
        a.gt,
        out=a.out,
        max_dist=a.max_dist,
        name=a.name,
        unit=a.unit,
        plot=not a.no_plot,
        maps=not a.no_maps,
        **where(a),
    )
    if a.json:
        print(result.to_json())
        return 0
    m, c = result.metrics, result.curves
    print(
        f"images: {m['n_images']} ({m['n_images_scored']} with two or more "
        f"annotators)   annotators per image: {m['n_annotators_min']}.."
        f"{m['n_annotators_max']}   boundary pixels: {m['n_boundary_pixels']}   "
        f"labels: {m['n_labels']:.1f}   max_dist: {m['max_dist']}"
    )
    rows = [
        (str(lv), str(px), f"{lb:.1f}", _pct(fr))
        for lv, px, lb, fr in zip(c["level"], c["pixels"], c["labels"], c["fraction"])
    ]
    print_table(rows, ("agreement level", "pixels", "labels", f"fraction of {a.unit}s"))
    print(
        f"orphan (level 1): {_pct(m['orphan_fraction'])}   unanimous (level K): "
        f"{_pct(m['unanimous_fraction'])}   ({a.unit}s; means over images: "
        f"{_pct(m['orphan_fraction_image_mean'])} / "
        f"{_pct(m['unanimous_fraction_image_mean'])})"
    )
    other = "pixel" if a.unit == "label" else "label"
    print(
        f"in {other}s: orphan {_pct(m[f'orphan_{other}_fraction'])}   unanimous "
        f"{_pct(m[f'unanimous_{other}_fraction'])}"
    )
    print(f"({_PAPER})")
    if a.out:
        print(f"output: {a.out}")
    return 0


def add_parsers(subparsers) -> None:
    """Register ``agreement`` on the ``segbench`` sub-command parser."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "agreement",
        help="annotator agreement: orphan and unanimous boundary pixels (Hou et al. 2013)",
        description="For every boundary pixel of every annotator, count the annotators "
        "whose maps match it in the benchmark's one-to-one correspondence "
        "(itself included): 1 is an orphan, K (the image's annotators) is "
        "unanimous. Prints the pooled distribution, in labels by default "
        "(a boundary drawn by l annotators is one label, as Hou et al. "
        "count); --out also writes agreement.png and a gray agreement map "
        "per image.",
    )
    from ..families import DEFAULT_MAX_DIST

    p.add_argument(
        "--max-dist",
        type=float,
        default=DEFAULT_MAX_DIST,
        metavar="D",
        help="matching tolerance as a fraction of the image diagonal",
    )
    p.add_argument(
        "--unit",
        choices=("label", "pixel"),
        default="label",
        help="what the fractions count: 'label' (a boundary drawn by l "
        "annotators is one label, its l pixels count 1/l each: Hou et "
        "al.'s figures) or 'pixel' (every annotator's pixel once) "
        "(default: label)",
    )
    add_inputs(
        p,
        pred=False,
        several=True,
        formats=True,
        out_help="output folder: result_agreement.json, per_item_agreement.csv, "
        "agreement.png, "
        "agreement/<iid>.png (gray = round(255 * level / K)), and "
        "records so that a rerun resumes",
    )
    p.add_argument("--no-plot", action="store_true", help="skip agreement.png")
    p.add_argument(
        "--no-maps", action="store_true", help="skip the per-image maps agreement/<iid>.png"
    )
    add_common(p, scheduler=True)
    p.set_defaults(func=_cmd_agreement)


__all__ = ["add_parsers"]
