"""``segbench annotate`` and ``segbench annotate-export``: parsers registered by
:mod:`segbench.cli`. Parsing and printing only; :mod:`segbench.annotate` is imported
inside the commands, so ``segbench --help`` stays fast.
"""

from __future__ import annotations

import sys

from ._common import port_number, seed_int


def _cmd_annotate(a) -> int:
    from ..annotate import make_server
    from ..errors import InputError

    if not a.collect and a.subject is None:
        raise InputError("give --subject NAME (one annotator) or --collect (many)")
    if a.collect and a.subject is not None:
        raise InputError(
            "--subject and --collect exclude each other: in collection "
            "mode every subject enters a name in the browser"
        )
    server = make_server(
        a.images,
        a.out,
        host=a.host,
        port=a.port,
        quiet=a.quiet,
        tls_cert=a.tls_cert,
        tls_key=a.tls_key,
        public_url=a.public_url,
        subject=a.subject,
        collect=a.collect,
        per_image=a.per_image,
        gray=a.gray,
        invert=a.invert,
        flipflop=a.flipflop,
        seed=a.seed,
    )
    mode = (
        f"collection, at most {a.per_image} subjects per image"
        if a.collect
        else f"subject {a.subject!r}"
    )
    public = f" (open as {a.public_url})" if a.public_url else ""
    print(
        f"segbench annotate: {mode}; serving {server.url}{public} (Ctrl-C to stop)",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print(
            f"segbench annotate: stopped; every submission and draft is in {a.out}",
            file=sys.stderr,
        )
    finally:
        server.server_close()
    return 0


def _cmd_export(a) -> int:
    from ..annotate import export_ground_truth

    files = export_ground_truth(
        a.out,
        a.split,
        dest=a.dest,
        presentation=a.presentation,
        copy_images=not a.no_images,
    )
    if a.json:
        import json

        print(json.dumps({"files": [str(f) for f in files]}))
    else:
        print(f"{len(files)} ground-truth file(s) in {files[0].parent}")
    return 0


def add_parsers(subparsers) -> None:
    """Register ``annotate`` and ``annotate-export`` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "annotate",
        help="segment images in the browser (BSDS-style ground truth)",
        description="Serve a local web app to segment the images of a folder, as the "
        "BSDS Java tool did: split a segment by drawing around part of it, "
        "brush pixels between segments, merge. Saves BSDS300 .seg files in "
        "OUT/human/{color,gray}/<subject id>/<iid>.seg. Opens no browser: "
        "visit the printed address.",
    )
    p.add_argument(
        "--images",
        required=True,
        metavar="DIR",
        help="folder of photographs <iid>.jpg|png|bmp|tif",
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="annotation folder (new, empty, or made by segbench annotate: continued)",
    )
    p.add_argument("--subject", metavar="NAME", help="one annotator: your name")
    p.add_argument(
        "--collect",
        action="store_true",
        help="collection mode: many subjects enter their names and get "
        "images assigned under the 2001 rules",
    )
    p.add_argument(
        "--per-image",
        type=int,
        default=5,
        metavar="N",
        help="collection mode: at most N subjects per image",
    )
    p.add_argument(
        "--gray",
        action="store_true",
        help="one annotator: show the images in greyscale (collection mode "
        "shows half of them in grey by itself)",
    )
    p.add_argument("--invert", action="store_true", help="show the images inverted")
    p.add_argument(
        "--flipflop",
        action="store_true",
        help="show the images upside down and backwards (rotated 180 degrees)",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        metavar="ADDR",
        help="address to bind (default 127.0.0.1; 0.0.0.0 opens it to the "
        "network, with a warning: there is no password)",
    )
    p.add_argument(
        "--tls-cert",
        default=None,
        metavar="PEM",
        help="serve https: the certificate chain (PEM); with --tls-key",
    )
    p.add_argument(
        "--tls-key",
        default=None,
        metavar="PEM",
        help="serve https: the certificate's private key (PEM, unencrypted)",
    )
    p.add_argument(
        "--public-url",
        default=None,
        metavar="URL",
        help="behind a reverse proxy: the address subjects open "
        "(https://annotate.example.org); its host and origin are "
        "accepted and the cookie is Secure when it is https",
    )
    p.add_argument(
        "--port", type=port_number, default=8000, help="port (default 8000; 0: any free)"
    )
    p.add_argument(
        "--seed",
        type=seed_int,
        default=None,
        help="seed of the random assignment (default: fresh)",
    )
    p.add_argument("--quiet", action="store_true", help="no request log")
    p.set_defaults(func=_cmd_annotate)

    p = subparsers.add_parser(
        "annotate-export",
        help="write an annotation folder as BSDS500 .mat ground truth",
        description="Write the submitted segmentations of a segbench annotate folder as "
        "BSDS500 ground truth: DEST/groundTruth/SPLIT/<iid>.mat (one cell "
        "of annotators per image) and DEST/images/SPLIT/.",
    )
    p.add_argument("out", metavar="OUT", help="the --out folder of segbench annotate")
    p.add_argument(
        "--split",
        required=True,
        metavar="S",
        help="split to file the images under (train, val, test, ...)",
    )
    p.add_argument(
        "--dest",
        default=None,
        metavar="DIR",
        help="dataset root to write (default: OUT/bsds500)",
    )
    p.add_argument(
        "--presentation",
        choices=("all", "color", "gray"),
        default="all",
        help="which segmentations become annotators",
    )
    p.add_argument(
        "--no-images",
        action="store_true",
        help="do not copy the photographs beside the ground truth",
    )
    p.add_argument("--json", action="store_true", help="print the files as JSON")
    p.set_defaults(func=_cmd_export)
