"""``segbench nms``: thin a folder of raw soft boundary maps with Dollar's edge NMS;
``segbench detect``: run a boundary detector (the Pb family, 2mm, gm, canny) on a folder
of images.

Registered by :mod:`segbench.cli` (``add_parsers``). Each command parses, claims the
output folder, maps :func:`segbench.algorithms.nms_file` or
:func:`segbench.algorithms.detect_file` over the inputs through
:func:`segbench.engine.map_items` (imported lazily, so ``segbench --help`` loads no
numerical library), prints.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from ._common import add_common

#: The file that marks a folder as written by ``segbench nms``: only such a folder
#: (or an empty or new one) is ever written into.
MARKER = ".segbench-nms"

_INPUT_EXTS = (".png", ".bmp", ".npy")
_FORMATS = ("png16", "png8", "npy")

#: The marker of a folder written by ``segbench ucm``.
UCM_MARKER = ".segbench-ucm"

#: The marker of a folder written by ``segbench detect``.
DETECT_MARKER = ".segbench-detect"
_IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff")
# kept here (not imported from the algorithms) so that --help imports nothing numerical
_DETECTORS = ("pb-cgtg", "pb-bgtg", "pb-bg", "pb-cg", "pb-tg", "2mm", "gm", "canny",
              "gpb", "gpb-owt-ucm")
#: Detectors of the gPb family (their own runner; gpb-owt-ucm writes ucm2 .mat files).
_GPB = {"gpb": ("soft", ".png"), "gpb-owt-ucm": ("ucm", ".mat")}
_WEIGHTED = ("pb-cgtg", "pb-bgtg", "pb-bg", "pb-cg", "pb-tg", "2mm")


def _one(job, **options):
    """Per-map work (module level, so worker processes can run it)."""
    from ..algorithms import nms_file
    src, dst = job
    nms_file(src, dst, **options)
    return dst


def _claim(out: Path, source: Path, option: str, marker: str, command: str,
           settings: dict, ids, suffix: str) -> None:
    """Make ``out`` a folder of ``command``'s (marked by ``marker``, which records the
    settings), or refuse before anything is written; never the input folder. In a
    folder of an earlier run, the maps (``.png``, ``.npy``, ``.mat``) that this run will not
    write again are removed: an earlier run's maps of other images, or in another
    format, would otherwise be read with this run's."""
    from ..io import claim_folder
    earlier = (out / marker).is_file()
    claim_folder(out, marker, command, f"written by {command}; its maps are replaced "
                 "when it runs again\n" + json.dumps(settings, indent=1) + "\n",
                 inputs={option: source})
    if earlier:
        keep = {f"{iid}{suffix}" for iid in ids}
        for old in out.iterdir():
            if (old.suffix in (".png", ".npy", ".mat") and old.is_file()
                    and old.name not in keep):
                old.unlink()


def _cmd_nms(a) -> int:
    from functools import partial

    from ..algorithms import NMS_FORMATS
    from ..engine import MapRecords, map_items
    from ..errors import InputError
    from ..io import list_files
    pred, out = Path(a.pred), Path(a.out)
    for name, v in (("--r", a.r), ("--s", a.s)):
        if v < 0:
            raise InputError(f"{name} must be a non-negative integer, got {v}")
    if not math.isfinite(a.m):
        raise InputError(f"--m must be a finite number, got {a.m}")
    maps = list_files(pred, _INPUT_EXTS)
    if not maps:
        raise InputError(f"no soft maps ({', '.join(_INPUT_EXTS)}) in this folder", pred)
    suffix = NMS_FORMATS[a.format][0]
    settings = {"r": a.r, "s": a.s, "m": a.m, "presmooth": not a.no_presmooth,
                "format": a.format, "source": str(pred)}
    _claim(out, pred, "--pred", MARKER, "segbench nms", settings, maps, suffix)
    jobs = [(str(path), str(out / f"{iid}{suffix}")) for iid, path in maps.items()]
    resume = MapRecords(out, "nms", settings, jobs)
    work = partial(_one, fmt=a.format, r=a.r, s=a.s, m=a.m, presmooth=not a.no_presmooth)
    for dst in map_items(work, resume.todo, workers=a.workers, progress=not a.quiet,
                         desc="nms"):
        resume.keep(dst)
    if a.json:
        print(json.dumps({"n_maps": len(jobs), "n_reused": resume.reused, "out": str(out),
                          **settings}, indent=1))
    else:
        smooth = "convTri(E, 1) first" if not a.no_presmooth else "no presmoothing"
        print(f"thinned {len(jobs)} maps into {out} ({a.format}; r={a.r} s={a.s} "
              f"m={a.m:g}, {smooth}){resume.note()}")
    return 0


def _one_ucm(job, **options):
    """Per-map work of ``segbench ucm`` (module level, for worker processes)."""
    from ..algorithms import ucm_file
    src, dst = job
    ucm_file(src, dst, **options)
    return dst


def _warn_if_thinned(path: Path) -> None:
    """One warning when the first map looks NMS-thinned (its watershed would flood
    through the gaps of its lines)."""
    import sys

    import numpy as np

    from ..algorithms import looks_thinned
    from ..errors import InputError
    from ..io import read_prediction
    try:
        if path.suffix.lower() == ".npy" and np.load(path, mmap_mode="r").ndim == 3:
            return
        pb = read_prediction(path, kind="soft").pb
    except (InputError, OSError, ValueError):
        return                  # the run names the file when it reaches it
    if looks_thinned(pb):
        print(f"segbench: warning: {path.name} looks thinned (NMS): the watershed of "
              "one-pixel lines floods through their gaps; use --smooth 1 (or the raw, "
              "unthinned maps)", file=sys.stderr)


def _cmd_ucm(a) -> int:
    from functools import partial

    from ..engine import MapRecords, map_items
    from ..errors import InputError
    from ..io import list_files
    pred, out = Path(a.pred), Path(a.out)
    if a.radius < 1 or not math.isfinite(a.radius):
        raise InputError(f"--radius must be a number >= 1 (pixels), got {a.radius}")
    if a.orientations < 0:
        raise InputError(f"--orientations must be 0 (exact) or positive, got "
                         f"{a.orientations}")
    maps = list_files(pred, _INPUT_EXTS)   # soft maps, and .npy oriented stacks
    if not maps:
        raise InputError(f"no contour maps ({', '.join(_INPUT_EXTS)}) in this folder",
                         pred)
    if a.smooth < 0 or not math.isfinite(a.smooth):
        raise InputError(f"--smooth must be a number >= 0 (pixels), got {a.smooth}")
    if a.smooth == 0:
        _warn_if_thinned(next(iter(maps.values())))
    settings = {"orientations": a.orientations, "radius": a.radius, "smooth": a.smooth,
                "levels": a.levels, "source": str(pred)}
    _claim(out, pred, "--pred", UCM_MARKER, "segbench ucm", settings, maps, ".mat")
    jobs = [(str(path), str(out / f"{iid}.mat")) for iid, path in maps.items()]
    resume = MapRecords(out, "ucm", settings, jobs)
    work = partial(_one_ucm, orientations=a.orientations or None, radius=a.radius,
                   smooth=a.smooth, raw=a.levels == "mean")
    for dst in map_items(work, resume.todo, workers=a.workers, progress=not a.quiet,
                         desc="ucm"):
        resume.keep(dst)
    if a.json:
        print(json.dumps({"n_maps": len(jobs), "n_reused": resume.reused, "out": str(out),
                          **settings}, indent=1))
    else:
        print(f"wrote {len(jobs)} ultrametric contour maps into {out} (ucm2 .mat, "
              f"doubleSize){resume.note()}: score them with 'segbench region --pred "
              f"{out}'")
    return 0


def _detect_half(src, dst, detector: str, weights: str):
    """``detect_file`` on the photograph at half resolution (the 2004 protocol's cells,
    :func:`segbench.boundary.halve_image`); errors name ``src``."""
    from ..algorithms import detect
    from ..boundary import halve_image
    from ..errors import InputError
    from ..io import read_image, write_soft_map
    try:
        pb = detect(halve_image(read_image(src)), detector, weights=weights)
    except InputError as e:
        if e.path is None:
            raise InputError(e.problem, src) from None
        raise
    return write_soft_map(dst, pb, bits=16)


def _one_detect(job, **options):
    """Per-image work of ``segbench detect`` (module level, for worker processes)."""
    src, dst = job
    rsz = options.pop("rsz", 1.0)
    if options.pop("half", False):
        _detect_half(src, dst, **options)
    elif options["detector"] in _GPB:
        from ..algorithms import gpb_file
        gpb_file(src, dst, output=_GPB[options["detector"]][0], rsz=rsz)
    else:
        from ..algorithms import detect_file
        detect_file(src, dst, **options)
    return dst


def _cmd_detect(a) -> int:
    from functools import partial

    from ..engine import MapRecords, map_items
    from ..errors import InputError
    from ..io import list_files
    images, out = Path(a.images), Path(a.out)
    if a.weights != "trained" and a.detector not in _WEIGHTED:
        raise InputError(f"--weights applies to {', '.join(_WEIGHTED)}, not "
                         f"{a.detector}")
    if a.weights == "published" and a.detector == "2mm":
        raise InputError("2mm has no published weights that fit its features; use "
                         "--weights trained")
    weights, recorded = a.weights, a.weights if a.detector in _WEIGHTED else None
    if a.detector in _WEIGHTED and a.weights not in ("trained", "published"):
        from ..algorithms import read_weight_file
        from ..engine import fingerprint
        path = Path(a.weights)
        weights = [float(v) for v in read_weight_file(path, a.detector)]
        recorded = {"file": str(path), "sha256": fingerprint(path)}
    if a.rsz != 1.0 and a.detector not in _GPB:
        raise InputError(f"--rsz applies to {', '.join(_GPB)}, not {a.detector}")
    if not 0 < a.rsz <= 1:
        raise InputError(f"--rsz must be in (0, 1], got {a.rsz}")
    half = a.protocol == "martin2004"
    if half and a.detector in _GPB:
        raise InputError(f"--protocol martin2004 (half-resolution images) applies to the "
                         f"2004 detectors, not to {a.detector}")
    found = list_files(images, _IMAGE_EXTS)
    if not found:
        raise InputError(f"no images ({', '.join(_IMAGE_EXTS)}) in this folder", images)
    settings = {"detector": a.detector, "source": str(images), "weights": recorded,
                "resolution": "half" if half else "full"}
    if a.detector in _GPB:
        settings["rsz"] = a.rsz
    suffix = _GPB[a.detector][1] if a.detector in _GPB else ".png"
    _claim(out, images, "--images", DETECT_MARKER, "segbench detect", settings, found,
           suffix)
    jobs = [(str(path), str(out / f"{iid}{suffix}")) for iid, path in found.items()]
    resume = MapRecords(out, "detect", settings, jobs)
    work = partial(_one_detect, detector=a.detector, weights=weights, half=half,
                   rsz=a.rsz)
    for dst in map_items(work, resume.todo, workers=a.workers, progress=not a.quiet,
                         desc=a.detector):
        resume.keep(dst)
    if a.json:
        print(json.dumps({"n_images": len(jobs), "n_reused": resume.reused,
                          "out": str(out), **settings}, indent=1))
    else:
        how = ""
        if a.detector in _WEIGHTED:
            how = (f" ({a.weights} weights)" if isinstance(recorded, str)
                   else f" (weights of {a.weights})")
        if a.detector == "gpb-owt-ucm":
            print(f"wrote {len(jobs)} ultrametric contour maps of gPb-owt-ucm into {out} "
                  f"(ucm2 .mat){resume.note()}: score them with 'segbench all --pred "
                  f"{out}'")
        else:
            size = ", half resolution" if half else ""
            print(f"wrote {len(jobs)} soft maps of {a.detector}{how} into {out} (16-bit "
                  f"PNG{size}){resume.note()}")
    return 0


def add_parsers(sub) -> None:
    """Register ``segbench nms``, ``segbench ucm`` and ``segbench detect``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "nms", help="thin raw soft maps (CNN outputs) with Dollar's edge NMS",
        description="Thin every soft boundary map of a folder (8/16-bit grey PNG, BMP, "
                    ".npy in [0, 1]) by the non-maximum suppression of Dollar's edges "
                    "toolbox, as HED, RCF and PiDiNet are evaluated: convTri(E, 1), "
                    "the orientation from the map's second derivatives, suppression "
                    "along it (edgesNmsMex), the border band ramped to 0. Writes "
                    "OUT/<id>.png (16-bit) ready for 'segbench boundary'. See "
                    "docs/detectors.md.")
    p.add_argument("--pred", required=True, metavar="RAW_DIR",
                   help="folder of raw soft maps <id>.png|.bmp|.npy")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="output folder: new, empty, or one written by segbench nms "
                        f"(marked by {MARKER}); any other folder is refused")
    p.add_argument("--format", choices=_FORMATS, default="png16",
                   help="png16: 16-bit PNG, nothing lost to 8-bit rounding (the "
                        "default); png8: round(255 v), as the MATLAB scripts save; npy: "
                        "exact values")
    p.add_argument("--r", type=int, default=1, metavar="PX",
                   help="suppression radius in pixels along the normal")
    p.add_argument("--s", type=int, default=5, metavar="PX",
                   help="border band in pixels, ramped linearly to 0")
    p.add_argument("--m", type=float, default=1.01, metavar="M",
                   help="tolerance: a pixel survives while m * value >= its neighbours")
    p.add_argument("--no-presmooth", action="store_true",
                   help="skip convTri(E, 1) (for maps already smooth, as edgesDetect's)")
    add_common(p)
    p.set_defaults(func=_cmd_nms)

    u: argparse.ArgumentParser = sub.add_parser(
        "ucm", help="hierarchical segmentations (OWT-UCM) from soft boundary maps",
        description="Turn every contour map of a folder into an ultrametric contour "
                    "map by the oriented watershed transform (Arbelaez et al. 2011, "
                    "BSR's contours2ucm): the watershed of the map, each arc's strength "
                    "read at the arc's own direction, then regions merged by their "
                    "weakest mean boundary. Inputs: soft maps (8/16-bit grey PNG, BMP, "
                    ".npy in [0, 1]; raw, not NMS-thinned, maps give the watershed its "
                    "basins) or .npy oriented stacks H x W x K. Writes OUT/<id>.mat "
                    "(variable ucm2, doubleSize) for 'segbench region' and 'segbench "
                    "all'. See docs/detectors.md.")
    u.add_argument("--pred", required=True, metavar="SOFT_DIR",
                   help="folder of contour maps <id>.png|.bmp|.npy")
    u.add_argument("--out", required=True, metavar="DIR",
                   help="output folder: new, empty, or one written by segbench ucm "
                        f"(marked by {UCM_MARKER}); any other folder is refused")
    u.add_argument("--orientations", type=int, default=8, metavar="N",
                   help="directions at which a 2-D map is read along each arc (as BSR "
                        "reads a detector's 8 channels); 0 reads at the arc's exact "
                        "direction (MCG's contours2OWT)")
    u.add_argument("--smooth", type=float, default=0.0, metavar="SIGMA",
                   help="blur 2-D maps by a Gaussian of SIGMA px first, a one-pixel line "
                        "keeping its height: 1 for NMS-thinned maps, whose watershed "
                        "otherwise floods through the gaps of their lines; 0: none")
    u.add_argument("--levels", choices=("sigmoid", "mean"), default="sigmoid",
                   help="sigmoid: the mean boundary strengths mapped by BSR's logistic "
                        "(fitted to gPb; it saturates for detectors whose boundaries "
                        "are mostly strong, narrowing the PR curve); mean: the mean "
                        "strengths themselves")
    u.add_argument("--radius", type=float, default=5.0, metavar="PX",
                   help=argparse.SUPPRESS)   # the old line fit's size: accepted, unused
    add_common(u)
    u.set_defaults(func=_cmd_ucm)

    d: argparse.ArgumentParser = sub.add_parser(
        "detect", help="run a boundary detector (Pb, 2mm, gm, canny) on a folder of "
                       "images",
        description="Run a boundary detector on every image of a folder and write "
                    "OUT/<id>.png, 16-bit soft maps in [0, 1] ready for 'segbench "
                    "boundary'. Detectors: the Pb family of Martin, Fowlkes and Malik "
                    "(pb-cgtg: colour Pb, pb-bgtg: greyscale Pb, and the single cues "
                    "pb-bg, pb-cg, pb-tg), the second moment matrix (2mm), gradient "
                    "magnitude (gm) and Canny (canny); gPb of Arbelaez et al. 2011 "
                    "(gpb: soft maps, thin them with 'segbench boundary --nms') and "
                    "gPb-owt-ucm (gpb-owt-ucm: OUT/<id>.mat hierarchies, ucm2, for "
                    "'segbench region' and 'segbench all'). See docs/detectors.md.")
    d.add_argument("--detector", required=True, choices=_DETECTORS)
    d.add_argument("--images", required=True, metavar="IMG_DIR",
                   help="folder of images <id>.jpg|.png|.bmp|.tif")
    d.add_argument("--out", required=True, metavar="DIR",
                   help="output folder: new, empty, or one written by segbench detect "
                        f"(marked by {DETECT_MARKER}); any other folder is refused")
    d.add_argument("--weights", default="trained", metavar="trained|published|FILE",
                   help="logistic weights of the Pb detectors and 2mm: fitted on "
                        "BSDS500 train (trained, shipped), those printed in the 2003 "
                        "MATLAB code (published, Pb family only), or a weights file "
                        "written by tools/train_pb.py --out FILE")
    d.add_argument("--rsz", type=float, default=1.0, metavar="R",
                   help="gPb detectors: solve the eigenproblem at R times the image "
                        "size, BSR's rsz in (0, 1]; 0.5 is about 3x faster (5 against 16 "
                        "CPU-s a 481x321 image) at some loss of accuracy (default: 1.0, "
                        "the setting of the published results)")
    d.add_argument("--protocol", choices=("martin2004",), default=None,
                   help="martin2004: run on the images at half resolution (each 2x2 "
                        "cell's mean), as the 2004 Pb paper; score the maps with "
                        "'segbench boundary --protocol martin2004' (docs/protocol.md)")
    add_common(d)
    d.set_defaults(func=_cmd_detect)


__all__ = ["add_parsers"]
