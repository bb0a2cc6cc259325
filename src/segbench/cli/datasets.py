"""``segbench fetch`` and ``segbench submit``: parsers registered by :mod:`segbench.cli`.

Thin, as the rest of the CLI: parses, calls :func:`segbench.datasets.fetch.fetch` or
:func:`segbench.submit.submit` (imported lazily), prints.
"""

from __future__ import annotations

import argparse
import json
import math

from ._common import R50_NOTE, add_common


def _cmd_fetch(a) -> int:
    from ..datasets.fetch import fetch

    root = fetch(
        a.dataset,
        a.dest,
        url=a.url,
        sha256=a.sha256,
        progress=not a.quiet,
        keep_archive=a.keep_archive,
    )
    if a.json:
        print(json.dumps({"dataset": a.dataset, "root": str(root)}))
    else:
        print(f"{a.dataset}: {root}")
    return 0


def _cmd_submit(a) -> int:
    from ..submit import submit

    res = submit(
        a.path,
        a.out,
        dataset=a.dataset,
        split=a.split,
        name=a.name,
        strict=not a.lenient,
        workers=a.workers,
        progress=not a.quiet,
        presentation=a.presentation,
    )
    if a.json:
        out = {"meta": res.meta, "boundary": res.boundary.to_dict()}
        if res.region is not None:
            out["region"] = res.region.to_dict()
        print(json.dumps(out, indent=1))
        return 0
    m = res.boundary.metrics
    print(
        f"{res.meta['name']}: {res.meta['n_images']} images ({res.meta['dataset']['split']})"
        f"   output: {res.out_dir}"
    )
    r50 = "n/a" if math.isnan(m["R50"]) else f"{m['R50']:.4f}"  # never reached P = 0.5
    print(
        f"  boundary  ODS {m['ODS']:.4f}  OIS {m['OIS']:.4f}  AP {m['AP']:.4f}  R50 {r50}"
    )
    if math.isnan(m["R50"]):
        print(f"  {R50_NOTE}")
    if res.region is not None:
        r = res.region.metrics
        print(
            f"  covering  ODS {r['covering_ODS']:.4f}  OIS {r['covering_OIS']:.4f}  "
            f"Best {r['covering_best']:.4f}"
        )
        print(f"  PRI       ODS {r['PRI_ODS']:.4f}  OIS {r['PRI_OIS']:.4f}")
        print(f"  VI        ODS {r['VI_ODS']:.4f}  OIS {r['VI_OIS']:.4f}")
    for w in res.warnings:
        print(f"  warning: {w}")
    return 0


def add_parsers(subparsers) -> None:
    """Register ``fetch`` and ``submit`` on the ``segbench`` sub-command parser."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "fetch",
        help="download, verify and unpack BSDS500 or BSDS300",
        description="Download the official archives (resuming a partial download), "
        "verify size and SHA-256 where known, unpack safely and check the "
        "result. Does nothing when a verified copy is already in DEST.",
    )
    p.add_argument("dataset", choices=("bsds500", "bsds300"))
    p.add_argument("--dest", required=True, metavar="DIR", help="folder to unpack into")
    p.add_argument(
        "--url",
        action="append",
        default=None,
        metavar="URL",
        help="mirror or file:// URL; repeat once per archive (bsds300: images, then human)",
    )
    p.add_argument(
        "--sha256",
        action="append",
        default=None,
        metavar="HEX",
        help="expected SHA-256 of the archive; repeat once per archive",
    )
    p.add_argument(
        "--keep-archive", action="store_true", help="keep the downloaded archive(s) in DEST"
    )
    add_common(p, workers=False)
    p.set_defaults(func=_cmd_fetch)

    p = subparsers.add_parser(
        "submit",
        help="validate a submission and benchmark it into a run folder",
        description="Take a folder or .zip/.tar/.tar.gz of <iid>.png|bmp maps (or "
        "<iid>.mat ucm2/segs), name.txt and an optional about.html; check "
        "it against the dataset split, run the boundary benchmark (and the "
        "region benchmark for .mat), write RUN_DIR with meta.json.",
    )
    p.add_argument("path", help="submission folder or archive")
    p.add_argument("--out", required=True, metavar="RUN_DIR", help="run folder (resumable)")
    p.add_argument(
        "--gt",
        "--dataset",
        dest="dataset",
        required=True,
        metavar="ROOT",
        help="dataset root (BSDS500 or BSDS300 layout)",
    )
    p.add_argument("--split", default="test", metavar="S", help="split the maps are for")
    p.add_argument(
        "--presentation",
        choices=("color", "gray", "all"),
        default=None,
        help="BSDS300: score against the segmentations made on colour "
        "images (the default), on grayscale ones (the greyscale "
        "ranking), or both",
    )
    p.add_argument(
        "--name", default=None, metavar="NAME", help="algorithm name (instead of name.txt)"
    )
    p.add_argument(
        "--lenient",
        action="store_true",
        help="ignore files that do not belong instead of refusing them",
    )
    add_common(p)
    p.set_defaults(func=_cmd_submit)


__all__ = ["add_parsers"]
