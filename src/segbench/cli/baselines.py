"""``segbench baselines``: every detector and segmenter of the package on a dataset
split, scored and ranked, and the site.

Argument parsing and printing only: the command calls
:func:`segbench.report.baselines.run_baselines` (imported lazily, so ``segbench --help``
loads no numerical library).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys

from ._common import add_common, print_table

#: The algorithm names, as segbench.report.baselines.BASELINES (literals here, so that
#: --help imports nothing numerical; tests/test_baselines.py checks they agree).
ALGORITHMS = (
    "gm",
    "canny",
    "pb-bg",
    "pb-cg",
    "pb-tg",
    "pb-bgtg",
    "pb-cgtg",
    "2mm",
    "gpb",
    "gpb-owt-ucm",
    "se",
    "se-owt-ucm",
    "canny-owt-ucm",
    "pb-owt-ucm",
    "hed-owt-ucm",
    "ncut",
    "felzenszwalb",
    "slic",
)


def _f(v, published=None) -> str:
    text = "" if v is None else f"{v:.3f}"
    return text + (f" ({published:.2f})" if published is not None else "")


def _cmd_baselines(a) -> int:
    from ..report.baselines import COLUMNS, run_baselines

    log = (
        None
        if a.quiet or a.json
        else (lambda line: print(f"segbench: {line}", file=sys.stderr))
    )
    command = (
        "segbench " + " ".join(shlex.quote(v) for v in sys.argv[1:])
        if sys.argv[1:2] == ["baselines"]
        else None
    )
    res = run_baselines(
        a.gt,
        a.out,
        split=a.split,
        algorithms=a.algorithms,
        ids=a.ids,
        hed=a.hed,
        workers=a.workers,
        scheduler=a.scheduler,
        progress=not a.quiet,
        site=not a.no_site,
        command=command,
        log=log,
        se_model=a.se_model,
    )
    if a.json:
        print(json.dumps({k: v for k, v in res.items() if k != "algorithms"}, indent=1))
        return 0
    print(
        f"images: {res['n_images']} ({a.split})   output: {a.out}   published figures "
        "in parentheses"
    )
    rows = [
        (r["algorithm"], *(_f(r[c], r["published"].get(c)) for _, c in COLUMNS))
        for r in res["rows"]
    ]
    print_table(rows, ("algorithm", *(c for _, c in COLUMNS)))
    print(
        f"table: {res['table']}"
        + (
            f"\nsite: {res['site']}   (open it, or: segbench serve "
            f"{os.path.dirname(res['site'])})"
            if res["site"]
            else ""
        )
    )
    return 0


def add_parsers(sub) -> None:
    """Register ``segbench baselines``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "baselines",
        help="run every detector and segmenter, score, rank, build the site",
        description="Run the package's boundary detectors (gm, canny, the Pb family, "
        "2mm, gPb, structured edges) and segmenters (gPb-owt-ucm, "
        "se-owt-ucm, canny-owt-ucm, "
        "pb-owt-ucm, hed-owt-ucm with --hed, ncut, felzenszwalb and slic at "
        "the superpixel sweep's K) on a dataset split, score them with the "
        "boundary and region benchmarks, write OUT/baselines.md (ranked by "
        "boundary ODS, published figures beside) and build the site in "
        "OUT/site. A killed run resumes: finished maps and scored images "
        "are kept. gPb takes about 9 CPU-s per image; se trains its forest "
        "once, about 25 CPU-minutes (docs/baselines.md).",
    )
    p.add_argument(
        "--gt",
        required=True,
        metavar="ROOT",
        help="dataset root with photographs: BSR/BSDS500/data (images/, "
        "groundTruth/) or a BSDS300 root",
    )
    p.add_argument("--split", default="test", metavar="S", help="dataset split")
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="output folder: new, empty, or one written by segbench baselines "
        "(marked by .segbench-baselines; a rerun resumes); any other "
        "folder is refused",
    )
    p.add_argument(
        "--algorithms",
        default=None,
        metavar="A,B,...",
        help="comma-separated subset of: "
        + ", ".join(ALGORITHMS)
        + " (default: all; hed-owt-ucm only with --hed)",
    )
    p.add_argument(
        "--ids",
        default=None,
        metavar="LIST|FILE",
        help="run on these image ids only: comma-separated, or a file of ids, one per line",
    )
    p.add_argument(
        "--hed",
        default=None,
        metavar="HED_DIR",
        help="folder of HED soft maps <id>.png: adds hed-owt-ucm",
    )
    p.add_argument(
        "--se-model",
        default=None,
        metavar="FILE.npz",
        help="the structured edge forest of se and se-owt-ucm: used if it is a "
        "finished model, else trained there on the train split of --gt (about 25 "
        "CPU-minutes, once) (default: OUT/models/se.npz)",
    )
    p.add_argument("--no-site", action="store_true", help="skip the site")
    add_common(p, scheduler=True)
    p.set_defaults(func=_cmd_baselines)


__all__ = ["add_parsers"]
