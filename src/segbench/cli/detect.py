"""``segbench nms``: thin a folder of raw soft boundary maps with Dollar's edge NMS;
``segbench ucm``: OWT-UCM hierarchies of a folder of soft maps; ``segbench detect``: run
a boundary detector (the Pb family, 2mm, gm, canny, gPb, structured edges) on a folder
of images; ``segbench train``: train a structured edge forest on a BSDS500 split.

Registered by :mod:`segbench.cli` (``add_parsers``). Argument parsing and printing
only: each command calls :func:`segbench.algorithm_folders.nms_folder`,
:func:`~segbench.algorithm_folders.ucm_folder` or
:func:`~segbench.algorithm_folders.detect_folder` (imported
lazily, so ``segbench --help`` loads no numerical library), which check the options,
claim the output folder and make the maps, and prints the result.
"""

from __future__ import annotations

import argparse
import json

from ._common import add_common, int_at_least, seed_int

# Literals here (not imported from the engine or the algorithms) so that --help imports
# nothing numerical; tests/test_detect_folder.py checks they are the library's.
#: The file that marks a folder as written by ``segbench nms``: only such a folder
#: (or an empty or new one) is ever written into.
MARKER = ".segbench-nms"
#: The marker of a folder written by ``segbench ucm``.
UCM_MARKER = ".segbench-ucm"
#: The marker of a folder written by ``segbench detect``.
DETECT_MARKER = ".segbench-detect"
_FORMATS = ("png16", "png8", "npy")
_DETECTORS = (
    "pb-cgtg",
    "pb-bgtg",
    "pb-bg",
    "pb-cg",
    "pb-tg",
    "2mm",
    "pb-gm",
    "gm",
    "canny",
    "gpb",
    "gpb-owt-ucm",
    "se",
)
#: gPb's eigensolvers (segbench.algorithms.EIGENSOLVERS).
_EIGENSOLVERS = ("auto", "exact", "multigrid")
#: Detectors of the gPb family (gpb-owt-ucm writes ucm2 .mat files).
_GPB = ("gpb", "gpb-owt-ucm")
_WEIGHTED = ("pb-cgtg", "pb-bgtg", "pb-bg", "pb-cg", "pb-tg", "2mm")


def _print(res, as_json: bool) -> int:
    print(json.dumps(res.to_dict(), indent=1) if as_json else res.headline())
    return 0


def _cmd_nms(a) -> int:
    from ..algorithm_folders import nms_folder

    return _print(
        nms_folder(
            a.pred,
            a.out,
            r=a.r,
            s=a.s,
            m=a.m,
            presmooth=not a.no_presmooth,
            fmt=a.format,
            ids=a.ids,
            workers=a.workers,
            scheduler=a.scheduler,
            progress=not a.quiet,
        ),
        a.json,
    )


def _cmd_ucm(a) -> int:
    from ..algorithm_folders import ucm_folder

    return _print(
        ucm_folder(
            a.pred,
            a.out,
            orientations=a.orientations,
            smooth=a.smooth,
            levels=a.levels,
            radius=a.radius,
            ids=a.ids,
            workers=a.workers,
            scheduler=a.scheduler,
            progress=not a.quiet,
        ),
        a.json,
    )


def _cmd_detect(a) -> int:
    from ..algorithm_folders import detect_folder

    return _print(
        detect_folder(
            a.images,
            a.out,
            a.detector,
            weights=a.weights,
            rsz=a.rsz,
            eigensolver=a.eigensolver,
            protocol=a.protocol,
            model=a.model,
            multiscale=a.multiscale,
            sharpen=a.sharpen,
            n_trees_eval=a.trees_eval,
            orientation=a.orientation,
            ids=a.ids,
            workers=a.workers,
            scheduler=a.scheduler,
            progress=not a.quiet,
        ),
        a.json,
    )


def _cmd_train(a) -> int:
    from ..algorithm_folders import train_se

    options = {
        key: value
        for key, value in (
            ("n_trees", a.trees),
            ("n_pos", None if a.samples is None else a.samples // 2),
            ("n_neg", None if a.samples is None else a.samples - a.samples // 2),
            ("max_depth", a.depth),
            ("n_images", a.images),
            ("seed", a.seed),
        )
        if value is not None
    }
    return _print(
        train_se(
            a.gt,
            a.out,
            split=a.split,
            options=options,
            workers=a.workers,
            scheduler=a.scheduler,
            progress=not a.quiet,
        ),
        a.json,
    )


def _add_ids(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--ids",
        default=None,
        metavar="LIST|FILE",
        help=f"only these ids of the {what}: comma-separated, or a file of "
        "ids, one per line (score the maps with the same --ids)",
    )


def add_parsers(sub) -> None:
    """Register ``segbench nms``, ``segbench ucm`` and ``segbench detect``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "nms",
        help="thin raw soft maps (CNN outputs) with Dollar's edge NMS",
        description="Thin every soft boundary map of a folder (8/16-bit grey PNG, BMP, "
        ".npy in [0, 1]) by the non-maximum suppression of Dollar's edges "
        "toolbox, as HED, RCF and PiDiNet are evaluated: convTri(E, 1), "
        "the orientation from the map's second derivatives, suppression "
        "along it (edgesNmsMex), the border band ramped to 0. Writes "
        "OUT/<id>.png (16-bit) ready for 'segbench boundary'. See "
        "docs/detectors.md.",
    )
    p.add_argument(
        "--pred",
        required=True,
        metavar="RAW_DIR",
        help="folder of raw soft maps <id>.png|.bmp|.npy",
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="output folder: new, empty, or one written by segbench nms "
        f"(marked by {MARKER}); any other folder is refused",
    )
    p.add_argument(
        "--format",
        choices=_FORMATS,
        default="png16",
        help="png16: 16-bit PNG, nothing lost to 8-bit rounding (the "
        "default); png8: round(255 v), as the MATLAB scripts save; npy: "
        "exact values",
    )
    p.add_argument(
        "--r",
        type=int,
        default=1,
        metavar="PX",
        help="suppression radius in pixels along the normal",
    )
    p.add_argument(
        "--s",
        type=int,
        default=5,
        metavar="PX",
        help="border band in pixels, ramped linearly to 0",
    )
    p.add_argument(
        "--m",
        type=float,
        default=1.01,
        metavar="M",
        help="tolerance: a pixel survives while m * value >= its neighbours",
    )
    p.add_argument(
        "--no-presmooth",
        action="store_true",
        help="skip convTri(E, 1) (for maps already smooth, as edgesDetect's)",
    )
    _add_ids(p, "maps")
    add_common(p, scheduler=True)
    p.set_defaults(func=_cmd_nms)

    u: argparse.ArgumentParser = sub.add_parser(
        "ucm",
        help="hierarchical segmentations (OWT-UCM) from soft boundary maps",
        description="Turn every contour map of a folder into an ultrametric contour "
        "map by the oriented watershed transform (Arbelaez et al. 2011, "
        "BSR's contours2ucm): the watershed of the map, each arc's strength "
        "read at the arc's own direction, then regions merged by their "
        "weakest mean boundary. Inputs: soft maps (8/16-bit grey PNG, BMP, "
        ".npy in [0, 1]; raw, not NMS-thinned, maps give the watershed its "
        "basins) or .npy oriented stacks H x W x K. Writes OUT/<id>.mat "
        "(variable ucm2, doubleSize) for 'segbench region' and 'segbench "
        "all'. See docs/detectors.md.",
    )
    u.add_argument(
        "--pred",
        required=True,
        metavar="SOFT_DIR",
        help="folder of contour maps <id>.png|.bmp|.npy",
    )
    u.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="output folder: new, empty, or one written by segbench ucm "
        f"(marked by {UCM_MARKER}); any other folder is refused",
    )
    u.add_argument(
        "--orientations",
        type=int,
        default=8,
        metavar="N",
        help="directions at which a 2-D map is read along each arc (as BSR "
        "reads a detector's 8 channels); 0 reads at the arc's exact "
        "direction (MCG's contours2OWT)",
    )
    u.add_argument(
        "--smooth",
        type=float,
        default=0.0,
        metavar="SIGMA",
        help="blur 2-D maps by a Gaussian of SIGMA px first, a one-pixel line "
        "keeping its height: 1 for NMS-thinned maps, whose watershed "
        "otherwise floods through the gaps of their lines; 0: none",
    )
    u.add_argument(
        "--levels",
        choices=("sigmoid", "mean"),
        default="sigmoid",
        help="sigmoid: the mean boundary strengths mapped by BSR's logistic "
        "(fitted to gPb; it saturates for detectors whose boundaries "
        "are mostly strong, narrowing the PR curve); mean: the mean "
        "strengths themselves",
    )
    u.add_argument(
        "--radius", type=float, default=5.0, metavar="PX", help=argparse.SUPPRESS
    )  # the old line fit's size: accepted, unused
    _add_ids(u, "maps")
    add_common(u, scheduler=True)
    u.set_defaults(func=_cmd_ucm)

    d: argparse.ArgumentParser = sub.add_parser(
        "detect",
        help="run a boundary detector (Pb, gPb, gPb-owt-ucm, pbGM, 2mm, gm, "
        "canny, se) on a folder of images",
        description="Run a boundary detector on every image of a folder and write "
        "OUT/<id>.png, 16-bit soft maps in [0, 1] ready for 'segbench "
        "boundary'. Detectors: the Pb family of Martin, Fowlkes and Malik "
        "(pb-cgtg: colour Pb, pb-bgtg: greyscale Pb, and the single cues "
        "pb-bg, pb-cg, pb-tg), the second moment matrix (2mm), the BSDS300 "
        "tarball's Gaussian-derivative baseline (pb-gm, pbGM.m), gradient "
        "magnitude (gm) and Canny (canny); gPb of Arbelaez et al. 2011 "
        "(gpb: soft maps, thin them with 'segbench boundary --nms') and "
        "gPb-owt-ucm (gpb-owt-ucm: OUT/<id>.mat hierarchies, ucm2, for "
        "'segbench region' and 'segbench all'); structured edge forests of "
        "Dollar and Zitnick (se: soft maps of a model that 'segbench train "
        "--detector se' writes, --model FILE; thin them with 'segbench "
        "boundary --nms presmooth=0'). See docs/detectors.md.",
    )
    d.add_argument("--detector", required=True, choices=_DETECTORS)
    d.add_argument(
        "--images",
        required=True,
        metavar="IMG_DIR",
        help="folder of images <id>.jpg|.png|.bmp|.tif",
    )
    d.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="output folder: new, empty, or one written by segbench detect "
        f"(marked by {DETECT_MARKER}); any other folder is refused",
    )
    d.add_argument(
        "--weights",
        default="trained",
        metavar="trained|published|FILE",
        help="logistic weights of the Pb detectors and 2mm: fitted on "
        "BSDS500 train (trained, shipped), those printed in the 2003 "
        "MATLAB code (published, Pb family only), or a weights file "
        "written by tools/train_pb.py --out FILE",
    )
    d.add_argument(
        "--rsz",
        type=float,
        default=1.0,
        metavar="R",
        help="gPb detectors: solve the eigenproblem at R times the image "
        "size, BSR's rsz in (0, 1]; 0.5 is about 2x faster (4.4 against 9.1 "
        "CPU-s a 481x321 image, docs/detectors.md) at some loss of accuracy "
        "(default: 1.0, the setting of the published results)",
    )
    d.add_argument(
        "--eigensolver",
        choices=_EIGENSOLVERS,
        default="auto",
        help="gPb detectors: exact (ARPACK, BSR's result), multigrid (coarse to "
        "fine, linear in the pixels, approximate: sPb correlation about 0.9997 with "
        "the exact solve) or auto (exact up to 0.5 megapixels solved, every BSDS "
        "image; multigrid above) (default: auto)",
    )
    d.add_argument(
        "--protocol",
        choices=("martin2004",),
        default=None,
        help="martin2004: run on the images at half resolution (each 2x2 "
        "cell's mean), as the 2004 Pb paper; score the maps with "
        "'segbench boundary --protocol martin2004' (docs/protocol.md)",
    )
    se = d.add_argument_group("structured edges (--detector se)")
    se.add_argument(
        "--model",
        default=None,
        metavar="FILE",
        help="the forest, an .npz written by 'segbench train --detector se'",
    )
    se.add_argument(
        "--multiscale",
        action="store_true",
        help="average the detections at 1/2, 1 and 2 times the image size (the "
        "toolbox's multiscale; about 5x the time)",
    )
    se.add_argument(
        "--sharpen",
        type=int,
        default=None,
        metavar="PX",
        help="re-fit each leaf's segments to the image's colours within PX pixels "
        "of its edges (default: 2, the toolbox's; 0: none)",
    )
    se.add_argument(
        "--orientation",
        action="store_true",
        help="write the toolbox's edge orientation O instead of the soft maps: "
        "OUT/<id>.npy, float32 radians in [0, pi) (the NMS computes the same from "
        "the soft maps)",
    )
    se.add_argument(
        "--trees-eval",
        type=int,
        default=None,
        metavar="N",
        help="trees evaluated per location (default: 4 of the model's 8)",
    )
    _add_ids(d, "images")
    add_common(d, scheduler=True)
    d.set_defaults(func=_cmd_detect)

    t: argparse.ArgumentParser = sub.add_parser(
        "train",
        help="train a structured edge forest (Dollar and Zitnick) on a BSDS500 split",
        description="Train a structured edge forest (Dollar and Zitnick, ICCV 2013 / "
        "TPAMI 2015) on the photographs and human segmentations of a BSDS500 "
        "split, as the edges toolbox's edgesTrain.m: by default its model, 8 "
        "trees of 5e5 + 5e5 patches each. The model file is written after "
        "every tree: a killed training keeps its trees, and the same command "
        "again trains only the missing ones. Detect with 'segbench detect "
        "--detector se --model FILE'. See docs/detectors.md.",
    )
    t.add_argument("--detector", required=True, choices=("se",))
    t.add_argument(
        "--gt",
        required=True,
        metavar="DATA_DIR",
        help="the BSDS500 data folder (BSR/BSDS500/data: images/ and "
        "groundTruth/ with train/val/test below) or a folder above it",
    )
    t.add_argument(
        "--split",
        default="train",
        metavar="S",
        help="the split trained on (default: train; choose parameters on val)",
    )
    t.add_argument(
        "--out",
        required=True,
        metavar="FILE.npz",
        help="the model file: new, or one of an interrupted training with the same "
        "options (resumed); any other file is refused",
    )
    t.add_argument(
        "--trees",
        type=int_at_least(1),
        default=None,
        metavar="N",
        help="trees of the forest (default: 8)",
    )
    t.add_argument(
        "--samples",
        type=int_at_least(1),
        default=None,
        metavar="N",
        help="training patches per tree, half centred on a boundary and half "
        "not (default: 1000000)",
    )
    t.add_argument(
        "--depth",
        type=int_at_least(1),
        default=None,
        metavar="N",
        help="maximum tree depth (default: 64)",
    )
    t.add_argument(
        "--images",
        type=int_at_least(1),
        default=None,
        metavar="N",
        help="train on the first N images of the split only (default: all)",
    )
    t.add_argument(
        "--seed",
        type=seed_int,
        default=None,
        metavar="N",
        help="seed of the trees' random streams (default: 1); the trees do not "
        "depend on --workers",
    )
    add_common(t, scheduler=True)
    t.set_defaults(func=_cmd_train)


__all__ = ["add_parsers"]
