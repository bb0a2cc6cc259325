"""``segbench site`` and ``segbench serve``: parsers registered by :mod:`segbench.cli`.

Thin, as the rest of the CLI: parses, calls :mod:`segbench.report.site` (imported
lazily, so ``segbench --help`` stays fast), prints.
"""

from __future__ import annotations

import argparse

from ._common import (
    add_common,
    add_gt_format,
    gt_format_option,
    int_at_least,
    port_number,
)


def _cmd_site(a) -> int:
    from ..report.site import build_site

    index = build_site(
        a.dataset,
        a.results,
        a.out,
        split=a.split,
        workers=a.workers,
        progress=not a.quiet,
        title=a.title,
        max_images=a.max_images,
        overlays=a.overlays,
        gt_format=gt_format_option(a),
    )
    if a.json:
        import json

        print(json.dumps({"index": str(index)}))
    else:
        print(index)
    return 0


def _cmd_serve(a) -> int:
    from ..report.site import serve

    serve(a.site_dir, host=a.host, port=a.port)
    return 0


def add_parsers(subparsers) -> None:
    """Register ``site`` and ``serve`` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "site",
        help="write the benchmark site: ranking, algorithms, images, humans",
        description="Write a static HTML site of a dataset split and the runs of "
        "algorithms on it. Open SITE_DIR/index.html, or run segbench serve.",
    )
    p.add_argument(
        "--gt",
        "--dataset",
        dest="dataset",
        required=True,
        metavar="ROOT",
        help="dataset root: BSDS500 (images/, groundTruth/) or BSDS300 "
        "(images/, human/; colour and greyscale ranked apart), or any "
        "ground truth 'segbench boundary --gt' reads (BIPED, Multicue, "
        "NYUD, folders of edge or label maps; docs/datasets.md)",
    )
    p.add_argument(
        "--results",
        nargs="*",
        default=[],
        metavar="RUN_DIR",
        help="run folders (segbench boundary/region/all/submit output); a "
        "segbench human run folder among them lends its records of "
        "the annotators (reused where they match), a segbench "
        "consistency run folder puts its GCE/LCE and the 2001 paper's "
        "figures on the human page; none: a site of the dataset and the "
        "human results only",
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="SITE_DIR",
        help="site folder (new, empty, or a site built before: rebuilt)",
    )
    p.add_argument("--split", default="test", metavar="S", help="dataset split")
    p.add_argument("--title", default=None, metavar="TEXT", help="site title")
    p.add_argument(
        "--max-images",
        type=int_at_least(1),
        default=None,
        metavar="N",
        help="only the first N images (a quick preview); every figure is "
        "summarized on those N from the runs' per-image records, or "
        "flagged where a run folder has none",
    )
    p.add_argument(
        "--overlays",
        action="store_true",
        help="also draw each algorithm's true-positive/false-positive/miss "
        "overlay per image (runs the boundary matcher on every image "
        "of every run again: several times slower)",
    )
    add_gt_format(p)
    add_common(p)
    p.set_defaults(func=_cmd_site)

    p = subparsers.add_parser(
        "serve",
        help="serve a built site over HTTP (127.0.0.1 by default)",
        description="Serve SITE_DIR over HTTP until Ctrl-C. Binds 127.0.0.1 unless "
        "--host says otherwise (0.0.0.0 shares it with the network).",
    )
    p.add_argument("site_dir", metavar="SITE_DIR", help="folder written by segbench site")
    p.add_argument("--host", default="127.0.0.1", metavar="ADDRESS", help="address to bind")
    p.add_argument(
        "--port",
        type=port_number,
        default=8000,
        metavar="N",
        help="port (default: 8000; 0: any free)",
    )
    p.set_defaults(func=_cmd_serve)


def _standalone(argv=None) -> int:  # pragma: no cover - for trying without cli.py wiring
    parser = argparse.ArgumentParser(prog="segbench")
    add_parsers(parser.add_subparsers(dest="command", required=True))
    a = parser.parse_args(argv)
    return a.func(a)
