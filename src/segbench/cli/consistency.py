"""``segbench consistency`` and ``segbench granularity``: the 2001 protocol on the command line.

Registered by :mod:`segbench.cli` (``add_parsers``). Thin, as the rest of the CLI: parses,
calls ``segbench.evaluate("consistency", ...)`` and :mod:`segbench.runners` (imported
lazily, so ``segbench --help`` stays fast), prints.
"""

from __future__ import annotations

import argparse
import math

from ._common import add_common, add_inputs, int_at_least, print_table, seed_int, where


def _fmt(v) -> str:
    return (
        "nan"
        if v is None or (isinstance(v, float) and not math.isfinite(v))
        else f"{v:.4f}"
    )


def _cmd_consistency(a) -> int:
    from ..api import evaluate
    from ..region.consistency import PAPER

    result = evaluate(
        "consistency",
        a.gt,
        out=a.out,
        pairs=a.pairs,
        seed=a.seed,
        name=a.name,
        plot=not a.no_plot,
        figures=a.figures,
        segmenter=a.segmenter,
        figure_images=a.figure_images,
        images=a.images,
        **where(a),
    )
    if a.json:
        print(result.to_json())
        return 0
    m = result.metrics
    print(
        f"images: {m['n_images']}   segmentations: {m['n_segmentations']}   "
        f"same-image pairs: {m['n_same_pairs']}   different-image pairs: "
        f"{m['n_different_pairs']} (from {m['n_image_pairs']} of "
        f"{m['n_image_pairs_total']} image pairs of equal shape, seed {m['seed']})"
    )

    def pct(key, thr):
        v, t = m[key], m[thr] if isinstance(thr, str) else thr
        if v is None or t is None or not (math.isfinite(v) and math.isfinite(t)):
            return "nan"
        return f"{100 * v:.2f}% @ {t:.3f}"

    rows = [
        (
            "same image",
            *(
                f"{_fmt(m[f'{n}_same'])} ({PAPER['human_same'][n]:.2f})"
                for n in ("GCE", "LCE")
            ),
        ),
        (
            "different images",
            *(
                f"{_fmt(m[f'{n}_different'])} ({PAPER['human_different'][n]:.2f})"
                for n in ("GCE", "LCE")
            ),
        ),
        (
            "wrong side, balanced",
            *(
                pct(f"{n}_wrong_side_balanced", f"{n}_threshold_balanced")
                for n in ("GCE", "LCE")
            ),
        ),
        (
            "wrong side, pooled",
            *(pct(f"{n}_wrong_side", f"{n}_threshold") for n in ("GCE", "LCE")),
        ),
        (
            "wrong side, paper's threshold",
            *(
                pct(f"{n}_wrong_side_at_paper_threshold", PAPER["wrong_side"][n][0])
                for n in ("GCE", "LCE")
            ),
        ),
        (
            "(paper: wrong side)",
            *(
                f"{100 * PAPER['wrong_side'][n][1]:.1f}% @ {PAPER['wrong_side'][n][0]:.2f}"
                for n in ("GCE", "LCE")
            ),
        ),
    ]
    print_table(rows, ("human pairs (paper)", "GCE", "LCE"))
    if a.out and a.figures and not a.no_plot:
        print("figures: fig5_gce.png fig5_lce.png fig7_ncuts.png fig9_gce_boxplot.png")
    if a.out:
        print(f"output: {a.out}")
    return 0


def _cmd_granularity(a) -> int:
    from ..algorithms.segmenters import get_segmenter
    from ..region.consistency import PAPER
    from ..runners import run_granularity

    if a.segmenter == "folder" and not a.seg_dir:
        from ..errors import InputError

        raise InputError("--segmenter folder needs --seg-dir DIR of <iid>_<k>.png maps")
    seg = get_segmenter(a.segmenter, seg_dir=a.seg_dir)
    result, _ = run_granularity(
        a.gt,
        seg,
        a.out,
        plot=not a.no_plot,
        images=a.images or None,
        max_images=a.max_images,
        save_dir=a.save_segs,
        name=a.name,
        **where(a),
    )
    if a.json:
        print(result.to_json())
        return 0
    m = result.metrics
    print(
        f"images: {m['n_images']}   (image, person) pairs: {m['n_pairs']}   "
        f"segmenter: {a.segmenter}"
    )
    print_table(
        [
            (
                f"{a.segmenter} vs human",
                _fmt(m["GCE"]),
                _fmt(m["LCE"]),
                _fmt(m["GCE_pairs"]),
                _fmt(m["LCE_pairs"]),
            ),
            (
                "human vs human",
                "",
                "",
                _fmt(m["human_GCE_same"]),
                _fmt(m["human_LCE_same"]),
            ),
            (
                "(paper: NCuts vs human)",
                _fmt(PAPER["ncuts"]["GCE"]),
                _fmt(PAPER["ncuts"]["LCE"]),
                "",
                "",
            ),
        ],
        ("", "GCE", "LCE", "GCE (pairs)", "LCE (pairs)"),
    )
    if m["n_k_mismatch"]:
        print(
            f"warning: {m['n_k_mismatch']} segmentations did not have the requested "
            "number of segments"
        )
    if a.out:
        print(f"output: {a.out}")
    return 0


def _common(
    p: argparse.ArgumentParser, out_help: str, name_help: str | None = None
) -> None:
    add_inputs(p, pred=False, out_help=out_help, several=True, name_help=name_help)
    p.add_argument("--no-plot", action="store_true", help="skip the PNG figures")
    add_common(p, scheduler=True)


def add_parsers(subparsers) -> None:
    """Register ``consistency`` and ``granularity`` on the ``segbench`` sub-command parser."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "consistency",
        help="human consistency under GCE and LCE (2001 paper, Figs. 4 and 6)",
        description="GCE and LCE of every pair of human segmentations of the same image "
        "and of a seeded sample of pairs of segmentations of different images "
        "of equal shape: means, the fraction of pairs on the wrong side of the "
        "best separating threshold, histograms (Martin et al. 2001, §3.2).",
    )
    p.add_argument(
        "--pairs",
        type=int,
        default=1000,
        metavar="N",
        help="different-image image pairs to sample; every pair of their "
        "annotators is scored (default: 1000; 0: none; at least the "
        "population: all)",
    )
    p.add_argument(
        "--seed",
        type=seed_int,
        default=0,
        metavar="N",
        help="seed of the sample (and of the images of --figures)",
    )
    g = p.add_argument_group("Figures 5, 7 and 9 of the paper (--figures, needs --out)")
    g.add_argument(
        "--figures",
        action="store_true",
        help="also write fig5_gce.png and fig5_lce.png (every pair of "
        "segmentations of the --figure-images images, sorted by image), "
        "fig7_ncuts.png and fig9_gce_boxplot.png (the --segmenter at each "
        "person's number of segments on the same images)",
    )
    g.add_argument(
        "--segmenter",
        default="ncut-2001",
        metavar="NAME",
        help="segmenter of Figures 7 and 9, by its granularity name "
        "(default: ncut-2001, the paper's Normalized Cuts)",
    )
    g.add_argument(
        "--figure-images",
        type=int,
        default=50,
        metavar="N",
        help="images of the figures, a seeded sample (default: 50, as the paper; 0: all)",
    )
    g.add_argument(
        "--images",
        nargs="+",
        metavar="IMG_DIR",
        default=None,
        help="folder(s) of the images <iid>.jpg for the segmenter (unless "
        "--gt is a dataset root with images)",
    )
    _common(
        p,
        "output folder: result_consistency.json, per_item_consistency.csv, "
        "consistency_pairs.csv, "
        "Figures 4 and 6 (and 5, 7, 8, 9 with --figures), and records so that "
        "a rerun resumes",
    )
    p.set_defaults(func=_cmd_consistency)

    p = subparsers.add_parser(
        "granularity",
        help="a segmenter at each person's number of segments (2001 §4)",
        description="Run a segmenter with the number of segments of each human "
        "segmentation and score it against that person with GCE and LCE; "
        "report the mean over images (Martin et al. 2001, §4).",
    )
    p.add_argument(
        "--segmenter",
        required=True,
        choices=("kmeans", "ncut-2001", "ncut-superpixel", "ncut", "folder"),
        help="kmeans (colour and position), ncut-2001 (the 2001 paper's "
        "Normalized Cuts: pixel graph, contour and texture cues), "
        "ncut-superpixel (normalized cuts on SLIC superpixels; 'ncut' is "
        "its old name, still accepted) or folder (precomputed "
        "<iid>_<k>.png in --seg-dir)",
    )
    p.add_argument(
        "--images",
        nargs="+",
        metavar="IMG_DIR",
        default=None,
        help="folder(s) of the images <iid>.jpg (computed segmenters)",
    )
    p.add_argument(
        "--seg-dir",
        default=None,
        metavar="SEG_DIR",
        help="folder of <iid>_<k>.png label maps (--segmenter folder)",
    )
    p.add_argument(
        "--max-images",
        "--n-images",
        type=int_at_least(1),
        default=None,
        metavar="N",
        help="only the first N image ids in sorted order",
    )
    p.add_argument(
        "--save-segs",
        default=None,
        metavar="DIR",
        help="also write every segmentation as DIR/<iid>_<k>.png",
    )
    _common(
        p,
        "output folder: result_granularity.json, per_item_granularity.csv, "
        "granularity.png, and "
        "records so that a rerun resumes",
        "name of the run in result_granularity.json (default: the segmenter's, "
        "e.g. kmeans_segmenter)",
    )
    p.set_defaults(func=_cmd_granularity)


__all__ = ["add_parsers"]
