"""``segbench stats``: the command-line parser, registered by :mod:`segbench.cli`.

Thin: parses, calls :func:`segbench.evaluate` ``("stats", ...)`` (imported lazily, so
``segbench --help`` stays fast), prints.
"""

from __future__ import annotations

import argparse
import json

from ._common import add_common, add_inputs, seed_int, where


def _fmt(v: float, nd: int = 3) -> str:
    return "n/a" if v is None or v != v else f"{v:.{nd}f}"


def _json_number(v):
    """A metric as strict JSON takes it: numpy scalars as Python numbers, NaN as None."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    v = float(v)
    return None if v != v or v in (float("inf"), float("-inf")) else v


def _cmd_stats(a) -> int:
    from ..api import evaluate

    opts = where(a)
    opts["presentation"] = a.presentation or "all"
    res = evaluate(
        "stats",
        a.gt,
        out=a.out,
        images=a.images,
        samples=a.samples,
        seed=a.seed,
        plot=not a.no_plot,
        proximity_bins=a.bins,
        normalize=a.normalize,
        cue_bins=a.cue_bins,
        n_boot=a.resamples,
        min_area=a.min_area,
        name=a.name,
        **opts,
    )
    if a.json:  # each group's metrics; not computed is null, as in result_stats.json
        groups = {
            name: {k: _json_number(v) for k, v in g.metrics().items()}
            for name, g in res.groups.items()
        }
        print(json.dumps(groups, indent=1, allow_nan=False))
        return 0
    p = res.params
    print(
        f"{p['n_segmentations']} segmentations of {p['n_images']} images "
        f"({p['n_images_with_photo']} photographs)"
        + (f"   output: {a.out}" if a.out else "")
    )
    for name, g in res.groups.items():
        m = g.metrics()
        line = [f"[{name}: {g.n_segmentations} segmentations]"]
        if g.n_segmentations:
            line.append(
                f"proximity {_fmt(m['proximity_first'])} -> plateau "
                f"{_fmt(m['proximity_plateau'])}"
            )
            if "similarity_gray_first" in m:
                line.append(
                    f"grey similarity {_fmt(m['similarity_gray_first'])} -> "
                    f"{_fmt(m['similarity_gray_last'])}"
                )
            line.append(f"convexity median {_fmt(m['convexity_median'])}")
            line.append(
                f"alpha {_fmt(m['alpha'])} [{_fmt(m['alpha_ci_low'])}, "
                f"{_fmt(m['alpha_ci_high'])}]"
            )
        print("  ".join(line))
    return 0


def add_parsers(subparsers) -> None:
    """Register ``stats`` on the ``segbench`` sub-command parser."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "stats",
        help="ecological statistics of the human segmentations (2001 paper)",
        description="Proximity, grey/colour/texture similarity, convexity and region-area "
        "statistics of human segmentations, as section 5 of Martin et al. "
        "(ICCV 2001); one PNG per figure and result_stats.json.",
    )
    add_inputs(
        p,
        pred=False,
        several=True,
        out_help="output folder: result_stats.json, per_item_stats.csv (one row per "
        "segmentation), one PNG per figure, and records so that a "
        "rerun resumes",
        name_help="name of the run in result_stats.json (default: 'human')",
    )
    p.add_argument(
        "--images",
        default=None,
        metavar="IMG_DIR",
        help="folder of <iid>.jpg photographs (default: the 'images' folder "
        "beside --gt or a parent); needed for similarity",
    )
    p.add_argument(
        "--samples",
        type=int,
        default=1000,
        metavar="N",
        help="pixels sampled per segmentation; all pairs scored",
    )
    p.add_argument("--seed", type=seed_int, default=0, metavar="N", help="random seed")
    p.add_argument(
        "--bins", type=int, default=20, metavar="N", help="proximity bins over [0, 1]"
    )
    p.add_argument(
        "--normalize",
        choices=("dataset", "image"),
        default="dataset",
        help="proximity distances over the dataset's largest scaled distance "
        "(the paper; the default) or over each image's diagonal",
    )
    p.add_argument(
        "--cue-bins",
        type=int,
        default=32,
        metavar="N",
        help="similarity bins; must divide 256",
    )
    p.add_argument(
        "--resamples",
        "--n-boot",
        dest="resamples",
        type=int,
        default=1000,
        metavar="B",
        help="bootstrap resamples (draws of the images) for alpha's interval: at "
        "least 2 (below 200 it is coarse), or 0 for none",
    )
    p.add_argument(
        "--min-area",
        type=float,
        default=1000.0,
        metavar="PX",
        help="smallest region area (pixels) in the power-law fit (default: "
        "1000, the lower end of the paper's fit)",
    )
    p.add_argument("--no-plot", action="store_true", help="skip the PNGs")
    add_common(p, scheduler=True)
    p.set_defaults(func=_cmd_stats)


__all__ = ["add_parsers"]
