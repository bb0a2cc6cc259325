"""Command line: ``segbench <command>``. Thin: parses, calls the library, prints."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ._cli_common import add_common, print_table


def _boundary_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--nthresh", type=int, default=99,
                   help="number of thresholds for soft maps (default 99)")
    p.add_argument("--max-dist", type=float, default=0.0075,
                   help="matching tolerance as a fraction of the image diagonal")
    p.add_argument("--no-thin", dest="thin", action="store_false",
                   help="do not thin thresholded maps before matching")


def _cmd_boundary(a) -> int:
    from .engine import run_boundary
    res = run_boundary(a.gt, a.pred, a.out, nthresh=a.nthresh, max_dist=a.max_dist,
                       thin=a.thin, workers=a.workers, progress=not a.quiet,
                       plot=not a.no_plot)
    if a.json:
        print(res.to_json())
    else:
        m = res.metrics
        print(f"images: {res.provenance['params']['n_images']}   output: {a.out}")
        print_table([(Path(a.pred).name, f"{m['ODS']:.4f}", f"{m['OIS']:.4f}",
                       f"{m['AP']:.4f}", f"{m['R50']:.4f}")],
                     ("algorithm", "ODS", "OIS", "AP", "R50"))
    return 0


def _cmd_human(a) -> int:
    from .engine import run_human, run_human_region
    h = run_human(a.gt, max_dist=a.max_dist, workers=a.workers, progress=not a.quiet)
    r = None if a.no_region else run_human_region(a.gt, workers=a.workers,
                                                  progress=not a.quiet)
    if a.json:
        print(json.dumps({"boundary": h, "region": r}, indent=1))
        return 0
    print(f"human, each annotator against the others ({h['n_images']} images):")
    print(f"  boundary  F = {h['F']:.4f}  (recall {h['recall']:.4f}, precision "
          f"{h['precision']:.4f})")
    if r is not None:
        print(f"  region    covering {r['covering']:.4f}  PRI {r['PRI']:.4f}  "
              f"VI {r['VI']:.4f}  ({r['n_pairs']} pairs)")
    return 0


def _cmd_all(a) -> int:
    from .engine import run_all, run_human, run_human_region
    human = None
    if a.human:
        h = run_human(a.gt, max_dist=a.max_dist, workers=a.workers, progress=not a.quiet)
        human = {"boundary": (h["recall"], h["precision"], h["F"]),
                 "region": run_human_region(a.gt, workers=a.workers,
                                            progress=not a.quiet)}
    b, r = run_all(a.gt, a.pred, a.out, nthresh=a.nthresh, max_dist=a.max_dist,
                   thin=a.thin, workers=a.workers, progress=not a.quiet,
                   plot=not a.no_plot, human=human)
    if a.json:
        print(json.dumps({"boundary": b.to_dict(), "region": r.to_dict()}, indent=1))
        return 0
    mb, mr = b.metrics, r.metrics
    print(f"images: {b.provenance['params']['n_images']}   output: {a.out}")
    print_table([("boundary F", f"{mb['ODS']:.4f}", f"{mb['OIS']:.4f}", "",
                   f"{mb['AP']:.4f}"),
                  ("covering", f"{mr['covering_ODS']:.4f}", f"{mr['covering_OIS']:.4f}",
                   f"{mr['covering_best']:.4f}", ""),
                  ("PRI", f"{mr['PRI_ODS']:.4f}", f"{mr['PRI_OIS']:.4f}", "", ""),
                  ("VI", f"{mr['VI_ODS']:.4f}", f"{mr['VI_OIS']:.4f}", "", "")],
                 (Path(a.pred).name, "ODS", "OIS", "Best", "AP"))
    return 0


def _cmd_demo(a) -> int:
    from .demo import run_demo
    run_demo(a.out, n_images=a.n_images, workers=a.workers, progress=not a.quiet,
             as_json=a.json)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="segbench",
        description="The Berkeley Segmentation Benchmark, exact and fast.")
    from . import __version__
    parser.add_argument("--version", action="version", version=f"segbench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("boundary", help="boundary benchmark (ODS, OIS, AP, R50)")
    p.add_argument("--gt", required=True, help="folder of BSDS500 ground truth <iid>.mat")
    p.add_argument("--pred", required=True,
                   help="folder of predictions <iid>.png/.bmp/.npy or .mat (ucm2/segs)")
    p.add_argument("--out", required=True, help="output folder (resumable)")
    p.add_argument("--no-plot", action="store_true", help="skip the PR-curve PNG")
    _boundary_args(p)
    add_common(p)
    p.set_defaults(func=_cmd_boundary)

    from .region._cli import add_parsers as add_region_parsers
    add_region_parsers(sub)
    from .region._consistency_cli import add_parsers as add_consistency_parsers
    add_consistency_parsers(sub)
    from .semantic._cli import add_parser as add_semantic_parser
    add_semantic_parser(sub)
    from .stats._cli import add_parsers as add_stats_parsers
    add_stats_parsers(sub)
    from .superpixel._cli import add_parsers as add_superpixel_parsers
    add_superpixel_parsers(sub)
    from .datasets._cli import add_parsers as add_dataset_parsers
    add_dataset_parsers(sub)
    from .report._site_cli import add_parsers as add_site_parsers
    add_site_parsers(sub)

    p = sub.add_parser("all", help="boundary and region benchmarks in one pass (allBench)")
    p.add_argument("--gt", required=True, help="folder of BSDS500 ground truth <iid>.mat")
    p.add_argument("--pred", required=True, help="folder of <iid>.mat (ucm2 or segs)")
    p.add_argument("--out", required=True, help="output folder (resumable)")
    p.add_argument("--no-plot", action="store_true", help="skip the PR-curve PNG")
    p.add_argument("--human", action="store_true",
                   help="also score each annotator against the others")
    _boundary_args(p)
    add_common(p)
    p.set_defaults(func=_cmd_all)

    p = sub.add_parser("human", help="human consistency: each annotator against the others")
    p.add_argument("--gt", required=True, help="folder of BSDS500 ground truth <iid>.mat")
    p.add_argument("--max-dist", type=float, default=0.0075,
                   help="matching tolerance as a fraction of the image diagonal")
    p.add_argument("--no-region", action="store_true",
                   help="boundary F only (skip covering, PRI, VI)")
    add_common(p)
    p.set_defaults(func=_cmd_human)

    p = sub.add_parser("demo", help="synthetic dataset, two baseline detectors, scores")
    p.add_argument("--out", default="segbench-demo", help="output folder")
    p.add_argument("--n-images", type=int, default=8)
    add_common(p)
    p.set_defaults(func=_cmd_demo)
    return parser


def main(argv=None) -> int:
    from .errors import SegbenchError
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (SegbenchError, FileNotFoundError) as exc:
        print(f"segbench: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("segbench: interrupted; finished images are saved, rerun to resume",
              file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
