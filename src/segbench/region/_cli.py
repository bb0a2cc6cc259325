"""``segbench region``: the command-line parser, registered by :mod:`segbench.cli`.

Thin, as the rest of the CLI: parses, calls :func:`segbench.engine.run_region` (imported
lazily, so ``segbench --help`` stays fast), prints.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .._cli_common import add_common, print_table


def _cmd_region(a) -> int:
    from ..engine import run_human_region, run_region
    human = None
    if a.human:
        human = run_human_region(a.gt, workers=a.workers, progress=not a.quiet)
    res = run_region(a.gt, a.pred, a.out, nthresh=a.nthresh, workers=a.workers,
                     progress=not a.quiet, human=human)
    if a.json:
        print(res.to_json())
        return 0
    m = res.metrics
    print(f"images: {res.provenance['params']['n_images']}   output: {a.out}")
    rows = [("covering", f"{m['covering_ODS']:.4f}", f"{m['covering_OIS']:.4f}",
             f"{m['covering_best']:.4f}"),
            ("PRI", f"{m['PRI_ODS']:.4f}", f"{m['PRI_OIS']:.4f}", ""),
            ("VI", f"{m['VI_ODS']:.4f}", f"{m['VI_OIS']:.4f}", "")]
    print_table(rows, (Path(a.pred).name, "ODS", "OIS", "Best"))
    if human is not None:
        print(f"human (each annotator against the others, {human['n_pairs']} pairs): "
              f"covering {human['covering']:.4f}  PRI {human['PRI']:.4f}  "
              f"VI {human['VI']:.4f}")
    return 0


def add_parsers(subparsers) -> None:
    """Register ``region`` on the ``segbench`` sub-command parser."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "region", help="region benchmark (covering, PRI, VI at ODS/OIS)",
        description="Segmentation covering, probabilistic Rand index and variation of "
                    "information of ucm2 hierarchies, segs or label maps, as the BSDS500 "
                    "region benchmark (evaluation_reg_image.m, collect_eval_reg.m).")
    p.add_argument("--gt", required=True, help="folder of BSDS500 ground truth <iid>.mat")
    p.add_argument("--pred", required=True,
                   help="folder of <iid>.mat (ucm2 or segs) or <iid>.png/.npy label maps")
    p.add_argument("--out", required=True, help="output folder (resumable)")
    p.add_argument("--nthresh", type=int, default=99,
                   help="number of ucm2 thresholds (default 99)")
    p.add_argument("--human", action="store_true",
                   help="also score each annotator against the others")
    add_common(p)
    p.set_defaults(func=_cmd_region)


__all__ = ["add_parsers"]
