"""Per-image work of the site: pictures and thumbnails.

One pure function per image (:func:`render_image`), module level so worker processes
can run it; the pictures it writes depend only on its inputs, so the site is the same
for any number of workers. It scores nothing: every number on the pages comes from
records (:mod:`segbench.report._site_records`). The one exception is opt-in: the
true-positive/false-positive/miss overlay (``RunSpec.overlay``) is a picture of the
matching at one threshold, so drawing it runs the benchmark's matcher
(:func:`overlay_counts`); its counts are checked against the run's record there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from .._version import __version__
from ..boundary import detected_map, seg2bdry, shared_matcher
from ..boundary import thin as thin_map
from ..datasets.bsds import DatasetItem
from ..errors import InputError
from ..io import MAX_PIXELS, copy_file, image_size, read_prediction, write_image
from ..region import read_region_prediction
from ._site_data import annotator

#: Longest side of a thumbnail, in pixels.
THUMB = 240
# Dollár's edgesEvalImg colours (minus white): miss red, true positive green,
# false positive light blue.
_MISS, _TP, _FP = (np.array(c) - 1.0 for c in ((1, 0, 0), (0, 0.7, 0), (0.7, 0.8, 1)))


@dataclass(frozen=True)
class RunSpec:
    """What the worker needs of one run for one image."""

    slug: str
    pred_path: str | None
    threshold: float
    thin: bool
    max_dist: float
    region_only: bool
    presentation: str = "colour"  # the human segmentations it is scored against
    overlay: bool = False  # draw the TP/FP/miss overlay (runs the matcher)


@dataclass(frozen=True)
class ImageTask:
    item: DatasetItem  # the image's dataset item (paths and loaders; nothing loaded)
    key: str  # file-safe id: pictures go to img/<key>/
    site: str
    runs: tuple


def presentation_group(kind: str) -> str:
    """The presentation group of an annotation kind (:func:`annotator`): 'grey' for
    segmentations made on grey images, else 'colour' (unknown counts as colour: the
    BSDS500 ground truth is the BSDS300 colour set)."""
    return "grey" if kind == "grey" else "colour"


def group_members(kinds: list, presentation: str) -> list[int]:
    """Indices of the annotations a run of ``presentation`` is scored against."""
    if presentation == "all":
        return list(range(len(kinds)))
    return [k for k, kind in enumerate(kinds) if presentation_group(kind) == presentation]


# ---------------------------------------------------------------------------------------
# pictures


#: zlib level of the site's PNGs: level 1 encodes several times faster than the
#: default 6 (the pictures were half of a site's time) for files about a third larger.
PNG_LEVEL = 1


def _picture(pic, path: Path, *, lines: bool = False) -> tuple[str, str]:
    """Write a picture as ``<name>.png`` and its thumbnail ``<name>_t.png``; their
    file names. ``pic``: a uint8 array, or a Pillow image in a compact mode (bilevel
    ``'1'``, palette ``'P'``), whose PNG is a fraction of the bytes to compress."""
    if isinstance(pic, np.ndarray):
        write_image(path, pic, compress_level=PNG_LEVEL)
    else:
        pic.save(path, format="PNG", optimize=False, compress_level=PNG_LEVEL)
    thumb = path.with_name(f"{path.stem}_t.png")
    _thumb(pic, thumb, lines=lines)
    return path.name, thumb.name


def _min3(arr: np.ndarray) -> np.ndarray:
    """The minimum over each pixel's 3 x 3 neighbourhood (edges replicated), per
    channel: Pillow's ``MinFilter(3)``, in separable passes (its rank filter sorts
    every window, a third of a site's time)."""
    a = np.pad(arr, ((1, 1), (1, 1)) + ((0, 0),) * (arr.ndim - 2), mode="edge")
    rows = np.minimum(np.minimum(a[:-2], a[1:-1]), a[2:])
    return np.minimum(np.minimum(rows[:, :-2], rows[:, 1:-1]), rows[:, 2:])


def _thumb(im, dst: Path, *, lines: bool = False) -> tuple[int, int]:
    """Write a thumbnail of a picture (array or Pillow image); ``lines`` thickens dark
    lines first so they survive."""
    if not isinstance(im, np.ndarray):  # bilevel as grey, palette as RGB
        im = np.asarray(
            im if im.mode in ("L", "RGB") else im.convert("L" if im.mode == "1" else "RGB")
        )
    h, w = im.shape[:2]
    scale = min(1.0, THUMB / max(w, h))
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    if lines and scale < 0.75:
        im = _min3(im)
    pic = Image.fromarray(np.ascontiguousarray(im))
    # BOX: an area average, a fifth of LANCZOS's time, alias-free at these scales
    t = pic.resize(size, Image.Resampling.BOX) if size != (w, h) else pic
    if dst.suffix == ".jpg":
        t.convert("RGB").save(dst, format="JPEG", quality=85, optimize=False)
    else:
        t.save(dst, format="PNG", optimize=False, compress_level=PNG_LEVEL)
    return size


def _palette(n: int) -> np.ndarray:
    """Colours of labels 0..n: 0 (unlabelled) white, the others fixed random colours."""
    rng = np.random.default_rng(20011)
    pal = rng.integers(45, 235, size=(n + 1, 3)).astype(np.uint8)
    pal[0] = 255
    return pal


def _ranks(lab: np.ndarray) -> np.ndarray:
    """Each pixel's label as its rank among the labels present (``np.unique``'s
    inverse), by a table for small non-negative integer labels (no sort)."""
    if (
        lab.size
        and np.issubdtype(lab.dtype, np.integer)
        and lab.min() >= 0
        and lab.max() <= 4 * lab.size
    ):
        present = np.bincount(lab.ravel()) > 0
        return (np.cumsum(present) - 1)[lab]
    return np.unique(lab, return_inverse=True)[1].reshape(lab.shape)


def _region_parts(labels, zero_unlabelled: bool):
    """(index, palette, edges) of a region picture: each pixel's colour index (0, white,
    where unlabelled), the palette of the regions' colours and the region boundaries."""
    lab = np.asarray(labels)
    index = _ranks(lab) + 1
    if zero_unlabelled:
        index[lab <= 0] = 0
    return index, _palette(int(index.max(initial=0))), seg2bdry(lab, "imageSize")


def _darken(colours: np.ndarray) -> np.ndarray:
    """The colour of a region boundary: 35 % of its region's, truncated to uint8."""
    return (colours * 0.35).astype(np.uint8)


def region_picture(labels: np.ndarray, *, zero_unlabelled: bool = True) -> np.ndarray:
    """(H, W, 3) uint8 colour map of a label map, region boundaries darkened.

    With ``zero_unlabelled`` (human segmentations) label 0 is unlabelled and white."""
    index, pal, edge = _region_parts(labels, zero_unlabelled)
    rgb = pal[index]
    rgb[edge] = _darken(rgb[edge])
    return rgb


#: Most regions a palette picture holds: each region's colour and its darkened edge
#: colour, plus white and darkened white, in PNG's 256 palette entries.
MAX_PALETTE_REGIONS = 127


def region_image(labels: np.ndarray, *, zero_unlabelled: bool = True):
    """:func:`region_picture` as a palette image (the same pixels, a third of the bytes
    to compress), or the RGB array where there are more than
    :data:`MAX_PALETTE_REGIONS` regions."""
    index, pal, edge = _region_parts(labels, zero_unlabelled)
    if len(pal) > MAX_PALETTE_REGIONS + 1:
        return region_picture(labels, zero_unlabelled=zero_unlabelled)
    index = index.astype(np.uint8)
    index[edge] += len(pal)  # the darkened copy of each colour
    pic = Image.fromarray(index, mode="P")
    pic.putpalette(np.concatenate([pal, _darken(pal)]).tobytes())
    return pic


def boundary_picture(bmap: np.ndarray) -> np.ndarray:
    """Black lines on white: (H, W) uint8."""
    return np.where(np.asarray(bmap, bool), 0, 255).astype(np.uint8)


def boundary_image(bmap: np.ndarray) -> Image.Image:
    """:func:`boundary_picture` as a bilevel image (the same pixels, an eighth of the
    bytes to compress)."""
    return Image.fromarray(~np.asarray(bmap, bool))


def strength_picture(pb: np.ndarray) -> np.ndarray:
    """A soft map in [0, 1] as dark-on-white grey: (H, W) uint8."""
    return (255 - np.rint(np.clip(pb, 0, 1) * 255)).astype(np.uint8)


def overlay_counts(detected: np.ndarray, humans: list, max_dist: float):
    """Match a binary map with each human map; the overlay and the counts.

    Returns
    -------
    picture : (H, W, 3) uint8
        As Dollár's edgesEvalImg: true positives green, false positives light blue,
        misses red with a strength equal to the fraction of annotators whose boundary
        pixel there was missed; lines thickened by one pixel.
    counts : (4,) int64
        cntR, sumR, cntP, sumP of this image at this threshold.
    """
    e = np.asarray(detected, bool)
    matcher = shared_matcher(e.shape, max_dist)
    match_e = np.zeros(e.shape, bool)
    match_g = np.zeros(e.shape, np.float64)
    all_g = np.zeros(e.shape, np.float64)
    cnt_r = sum_r = 0
    for g in humans:
        g = np.asarray(g, bool)
        m1, m2 = matcher.match(e, g)
        match_e |= m1
        match_g += m2
        all_g += g
        cnt_r += int(m2.sum())
        sum_r += int(g.sum())
    n = max(1, len(humans))
    fn = (all_g - match_g) / n
    tp = match_e.astype(np.float64)
    fp = (e & ~match_e).astype(np.float64)
    v = np.clip(1 + fn[..., None] * _MISS + tp[..., None] * _TP + fp[..., None] * _FP, 0, 1)
    v[:, 1:] = np.minimum(v[:, 1:], v[:, :-1])
    v[1:, :] = np.minimum(v[1:, :], v[:-1, :])
    counts = np.array([cnt_r, sum_r, int(match_e.sum()), int(e.sum())], np.int64)
    return np.rint(v * 255).astype(np.uint8), counts


# ---------------------------------------------------------------------------------------
# one image


def _prediction(spec: RunSpec):
    """(display picture, binary map before thinning or None) of a run's output, or
    None; the binary map (at the run's ODS threshold) where the overlay is drawn or the
    output is a soft map (whose picture is then drawn at that threshold too)."""
    if spec.pred_path is None:
        return None

    path = Path(spec.pred_path)
    label_map = spec.region_only and path.suffix.lower() != ".mat"
    pred = read_region_prediction(path) if label_map else read_prediction(path)
    soft = getattr(pred, "kind", None) in ("soft", "ucm2")
    t = spec.threshold
    if math.isnan(t):
        t = 0.5 if soft else 1  # no ODS threshold: the middle / the first segmentation
    detected = (
        detected_map(pred, t)
        if spec.overlay or (soft and not math.isnan(spec.threshold))
        else None
    )
    if soft:
        assert pred.pb is not None  # a soft or ucm2 Prediction always has its pb
        return strength_picture(pred.pb), detected
    segs = pred.segs  # the one kind left, 'segs' (a Prediction has no other)
    assert segs is not None
    seg = np.asarray(segs[min(max(int(round(t)) - 1, 0), len(segs) - 1)])
    return region_picture(seg, zero_unlabelled=False), detected


#: Bump when a picture is drawn differently: a rebuild then redraws every picture.
PICTURES_VERSION = 3
#: The file in ``img/<key>/`` that says what its pictures were drawn from.
STAMP = ".inputs.json"


def _digest(path) -> str | None:
    from ..engine import fingerprint

    return None if path is None else fingerprint(path)


def _stamps(task: ImageTask, item) -> tuple[dict | None, dict]:
    """What the image's own pictures (photo, humans) and each run's are drawn from:
    the SHA-256 of every input file and the settings of the drawing. None for the
    image's part where its ground truth has no file (nothing to compare with)."""

    base = {"version": [__version__, PICTURES_VERSION, THUMB, PNG_LEVEL]}
    own = None
    if item.sources:
        own = {
            **base,
            "photo": _digest(item.image_path),
            "gt": [_digest(p) for p in item.sources],
        }
    runs = {}
    for spec in task.runs:
        runs[spec.slug] = {
            **base,
            "pred": _digest(spec.pred_path),
            "gt": own and own["gt"],
            "spec": [
                spec.threshold if spec.threshold == spec.threshold else None,
                spec.thin,
                spec.max_dist,
                spec.region_only,
                spec.presentation,
                spec.overlay,
            ],
        }
    return own, runs


def _read_stamp(folder: Path) -> dict:
    import json

    try:
        data = json.loads((folder / STAMP).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def render_image(task: ImageTask) -> dict:
    """Write every picture of one image under ``img/<key>/``.

    Returns a plain dict: image size, which pictures exist, who made each human
    segmentation (subject, presentation) and per run whether its output (and overlay)
    was drawn, with any error to show on the page.

    A rebuild keeps the pictures of a folder whose stamp (:data:`STAMP`: the digests
    of the files they were drawn from and the drawing settings) is unchanged, and
    removes the files this build does not make; the pictures are the same bytes
    either way.

    A run's overlay (``RunSpec.overlay``) matches its output at its threshold with the
    segmentations of its presentation, as the benchmark does.
    """
    import json

    item = replace(task.item)  # a fresh item: its pixels go with this call
    folder = Path(task.site) / "img" / task.key
    folder.mkdir(parents=True, exist_ok=True)
    own, run_stamps = _stamps(task, item)
    old = _read_stamp(folder)
    made: set = set()
    if (
        own is not None
        and old.get("own") == own
        and all((folder / f).is_file() for f in old.get("files", []))
    ):
        info = old["info"]
        made.update(old["own_files"])
        reused = old.get("runs", {})
    else:
        info = _draw_image(item, folder, made)
        reused = {}
    own_files = sorted(made)
    bmaps = None
    runs, errors, stamp_runs = {}, [], {}
    for spec in task.runs:
        prev = reused.get(spec.slug)
        if prev is not None and prev["stamp"] == run_stamps[spec.slug]:
            entry = prev["entry"]
            made.update(prev["files"])
            files = prev["files"]
        else:
            if bmaps is None:
                bmaps = [a.boundaries for a in item.annotations]
            before = set(made)
            entry = _draw_run(spec, info, bmaps, folder, made)
            files = sorted(made - before)
        runs[spec.slug] = entry
        errors += entry["errors"]
        stamp_runs[spec.slug] = {
            "stamp": run_stamps[spec.slug],
            "entry": entry,
            "files": files,
        }
    info = {**info, "runs": runs, "errors": errors}
    for f in folder.iterdir():  # pictures of runs no longer shown
        if f.name not in made and f.name != STAMP and f.is_file():
            f.unlink()
    if own is not None:
        (folder / STAMP).write_text(
            json.dumps(
                {
                    "own": own,
                    "info": {k: v for k, v in info.items() if k not in ("runs", "errors")},
                    "own_files": own_files,
                    "runs": stamp_runs,
                    "files": sorted(made),
                },
                sort_keys=True,
                separators=(",", ":"),
            ),
            encoding="utf-8",
        )
    return info


def _draw_image(item, folder: Path, made: set) -> dict:
    """The photo and the human segmentations' pictures of one image; its info."""
    anns = item.annotations
    info: dict = {
        "iid": item.iid,
        "photo": None,
        "annotators": [annotator(a) for a in anns],
    }
    src = item.image_path
    shape = anns[0].boundaries.shape if anns else None
    if src is not None:
        ext = src.suffix.lower()
        if ext in (".jpg", ".jpeg", ".png"):
            full = folder / f"photo{'.jpg' if ext == '.jpeg' else ext}"
            h, w = image_size(src)  # from the header, before decoding
            if h * w > MAX_PIXELS:
                raise InputError(
                    f"photograph claims {w}x{h} pixels, above the limit of "
                    f"{MAX_PIXELS / 1e6:.0f} megapixels; not decoded",
                    src,
                )
            copy_file(src, full)
            try:
                with Image.open(full) as im:
                    im.load()
                    shape = (im.size[1], im.size[0])
                    _thumb(im, folder / "photo_t.jpg")
            except (OSError, ValueError, SyntaxError) as exc:  # truncated, corrupt
                full.unlink(missing_ok=True)
                raise InputError(
                    f"corrupt or truncated photograph, not drawn ({exc})", src
                ) from None
        else:
            photo = item.image
            full = write_image(folder / "photo.png", photo, compress_level=PNG_LEVEL)
            shape = photo.shape[:2]
            _thumb(photo, folder / "photo_t.jpg")
        info["photo"] = full.name
        made.update((full.name, "photo_t.jpg"))
    info["shape"] = list(shape) if shape else None
    for k, a in enumerate(anns):
        made.update(
            _picture(boundary_image(a.boundaries), folder / f"h{k}_b.png", lines=True)
        )
        if getattr(a, "has_segmentation", True):  # an edge map has no regions
            made.update(_picture(region_image(a.segmentation), folder / f"h{k}_r.png"))
    if anns:
        mean = np.mean([a.boundaries.astype(np.float64) for a in anns], axis=0)
        made.update(_picture(strength_picture(mean), folder / "humans.png", lines=True))
    return info


def _draw_run(spec: RunSpec, info: dict, bmaps: list, folder: Path, made: set) -> dict:
    """One run's output (and overlay) of one image: ``{"output", "overlay", "counts",
    "errors"}``."""
    entry: dict[str, Any] = {
        "output": False,
        "overlay": False,
        "at_threshold": False,
        "counts": None,
        "errors": [],
    }
    try:
        got = _prediction(spec)
    except Exception as exc:  # one bad file must not sink the site: say so on the page
        entry["errors"].append(f"{spec.slug}: {exc}")
        got = None
    kinds = [x["kind"] for x in info["annotators"]]
    hb = [bmaps[k] for k in group_members(kinds, spec.presentation)]
    if got is not None and bmaps and not hb:
        entry["errors"].append(
            f"{spec.slug}: no {spec.presentation} human "
            "segmentation of this image to compare with"
        )
    elif got is not None and bmaps:
        picture, detected = got
        if picture.shape[:2] != bmaps[0].shape:
            entry["errors"].append(
                f"{spec.slug}: output is {picture.shape[1]}x"
                f"{picture.shape[0]}, the image "
                f"{bmaps[0].shape[1]}x{bmaps[0].shape[0]}"
            )
        else:
            made.update(
                _picture(picture, folder / f"a_{spec.slug}.png", lines=picture.ndim == 2)
            )
            entry["output"] = True
            if detected is not None and spec.thin:
                detected = thin_map(detected)
            if detected is not None and picture.ndim == 2:
                # a soft map's picture is not what is scored: also its boundaries at
                # the ODS threshold, thinned as the benchmark thins them
                made.update(
                    _picture(
                        boundary_image(detected),
                        folder / f"a_{spec.slug}_at.png",
                        lines=True,
                    )
                )
                entry["at_threshold"] = True
            if detected is not None and spec.overlay:
                ov, counts = overlay_counts(detected, hb, spec.max_dist)
                made.update(_picture(ov, folder / f"a_{spec.slug}_ov.png", lines=True))
                entry.update(overlay=True, counts=counts.tolist())
    return entry
