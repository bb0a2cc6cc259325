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
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from PIL import Image, ImageFilter

from ..boundary import seg2bdry, shared_matcher
from ..boundary import thin as thin_map
from ..boundary import detected_map
from ..datasets.bsds import DatasetItem
from ..errors import InputError
from ..io import MAX_PIXELS, image_size, write_image
from ._site_data import annotator

#: Longest side of a thumbnail, in pixels.
THUMB = 240
# Dollár's edgesEvalImg colours (minus white): miss red, true positive green,
# false positive light blue.
_MISS, _TP, _FP = (np.array(c) - 1.0 for c in ((1, 0, 0), (0, .7, 0), (.7, .8, 1)))


@dataclass(frozen=True)
class RunSpec:
    """What the worker needs of one run for one image."""

    slug: str
    pred_path: str | None
    threshold: float
    thin: bool
    max_dist: float
    region_only: bool
    presentation: str = "colour"    # the human segmentations it is scored against
    overlay: bool = False           # draw the TP/FP/miss overlay (runs the matcher)


@dataclass(frozen=True)
class ImageTask:
    item: DatasetItem   # the image's dataset item (paths and loaders; nothing loaded)
    key: str            # file-safe id: pictures go to img/<key>/
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


def _picture(arr: np.ndarray, path: Path, *, lines: bool = False) -> None:
    """Write a picture as ``<name>.png`` and its thumbnail ``<name>_t.png``."""
    write_image(path, arr)
    _thumb(arr, path.with_name(f"{path.stem}_t.png"), lines=lines)


def _thumb(im, dst: Path, *, lines: bool = False) -> tuple[int, int]:
    """Write a thumbnail of a picture (array or Pillow image); ``lines`` thickens dark
    lines first so they survive."""
    if isinstance(im, np.ndarray):
        im = Image.fromarray(im)
    im = im.convert("RGB") if im.mode not in ("L", "RGB") else im
    w, h = im.size
    scale = min(1.0, THUMB / max(w, h))
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    if lines and scale < 0.75:
        im = im.filter(ImageFilter.MinFilter(3))
    t = im.resize(size, Image.Resampling.LANCZOS) if size != (w, h) else im.copy()
    if dst.suffix == ".jpg":
        t.convert("RGB").save(dst, format="JPEG", quality=85, optimize=False)
    else:
        t.save(dst, format="PNG", optimize=False)
    return size


def _palette(n: int) -> np.ndarray:
    """Colours of labels 0..n: 0 (unlabelled) white, the others fixed random colours."""
    rng = np.random.default_rng(20011)
    pal = rng.integers(45, 235, size=(n + 1, 3)).astype(np.uint8)
    pal[0] = 255
    return pal


def region_picture(labels: np.ndarray, *, zero_unlabelled: bool = True) -> np.ndarray:
    """(H, W, 3) uint8 colour map of a label map, region boundaries darkened.

    With ``zero_unlabelled`` (human segmentations) label 0 is unlabelled and white."""
    lab = np.asarray(labels)
    uniq, inv = np.unique(lab, return_inverse=True)
    rgb = _palette(len(uniq))[inv.reshape(lab.shape) + 1]
    if zero_unlabelled:
        rgb[lab <= 0] = 255
    edge = seg2bdry(lab, "imageSize")
    rgb[edge] = (rgb[edge] * 0.35).astype(np.uint8)
    return rgb


def boundary_picture(bmap: np.ndarray) -> np.ndarray:
    """Black lines on white: (H, W) uint8."""
    return np.where(np.asarray(bmap, bool), 0, 255).astype(np.uint8)


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
    None; the binary map (at the overlay threshold) only where the overlay is drawn."""
    if spec.pred_path is None:
        return None
    from ..region import read_region_prediction
    from ..io import read_prediction
    path = Path(spec.pred_path)
    label_map = spec.region_only and path.suffix.lower() != ".mat"
    pred = read_region_prediction(path) if label_map else read_prediction(path)
    soft = getattr(pred, "kind", None) in ("soft", "ucm2")
    t = spec.threshold
    if math.isnan(t):
        t = 0.5 if soft else 1      # no ODS threshold: the middle / the first segmentation
    detected = detected_map(pred, t) if spec.overlay else None
    if soft:
        return strength_picture(pred.pb), detected
    segs = pred.segs if getattr(pred, "kind", None) == "segs" else list(pred)
    seg = np.asarray(segs[min(max(int(round(t)) - 1, 0), len(segs) - 1)])
    return region_picture(seg, zero_unlabelled=False), detected


def render_image(task: ImageTask) -> dict:
    """Write every picture of one image under ``img/<key>/``.

    Returns a plain dict: image size, which pictures exist, who made each human
    segmentation (subject, presentation) and per run whether its output (and overlay)
    was drawn, with any error to show on the page.

    A run's overlay (``RunSpec.overlay``) matches its output at its threshold with the
    segmentations of its presentation, as the benchmark does.
    """
    item = replace(task.item)           # a fresh item: its pixels go with this call
    folder = Path(task.site) / "img" / task.key
    folder.mkdir(parents=True, exist_ok=True)
    anns = item.annotations
    info: dict = {"iid": item.iid, "photo": None, "errors": [],
                  "annotators": [annotator(a) for a in anns]}

    src = item.image_path
    shape = anns[0].segmentation.shape if anns else None
    if src is not None:
        ext = src.suffix.lower()
        if ext in (".jpg", ".jpeg", ".png"):
            full = folder / f"photo{'.jpg' if ext == '.jpeg' else ext}"
            h, w = image_size(src)                 # from the header, before decoding
            if h * w > MAX_PIXELS:
                raise InputError(f"photograph claims {w}x{h} pixels, above the limit of "
                                 f"{MAX_PIXELS / 1e6:.0f} megapixels; not decoded", src)
            shutil.copyfile(src, full)
            with Image.open(full) as im:
                im.load()
                shape = (im.size[1], im.size[0])
                _thumb(im, folder / "photo_t.jpg")
        else:
            photo = item.image
            full = write_image(folder / "photo.png", photo)
            shape = photo.shape[:2]
            _thumb(photo, folder / "photo_t.jpg")
        info["photo"] = full.name
    info["shape"] = list(shape) if shape else None

    bmaps = [a.boundaries for a in anns]
    for k, a in enumerate(anns):
        _picture(boundary_picture(a.boundaries), folder / f"h{k}_b.png", lines=True)
        _picture(region_picture(a.segmentation), folder / f"h{k}_r.png")
    if anns:
        mean = np.mean([b.astype(np.float64) for b in bmaps], axis=0)
        _picture(strength_picture(mean), folder / "humans.png", lines=True)
    kinds = [x["kind"] for x in info["annotators"]]

    runs = {}
    for spec in task.runs:
        entry = {"output": False, "overlay": False, "counts": None}
        try:
            got = _prediction(spec)
        except Exception as exc:  # one bad file must not sink the site: say so on the page
            info["errors"].append(f"{spec.slug}: {exc}")
            got = None
        hb = [bmaps[k] for k in group_members(kinds, spec.presentation)]
        if got is not None and bmaps and not hb:
            info["errors"].append(f"{spec.slug}: no {spec.presentation} human "
                                  "segmentation of this image to compare with")
        elif got is not None and bmaps:
            picture, detected = got
            if picture.shape[:2] != bmaps[0].shape:
                info["errors"].append(f"{spec.slug}: output is {picture.shape[1]}x"
                                      f"{picture.shape[0]}, the image "
                                      f"{bmaps[0].shape[1]}x{bmaps[0].shape[0]}")
            else:
                _picture(picture, folder / f"a_{spec.slug}.png", lines=picture.ndim == 2)
                entry["output"] = True
                if detected is not None:
                    if spec.thin:
                        detected = thin_map(detected)
                    ov, counts = overlay_counts(detected, hb, spec.max_dist)
                    _picture(ov, folder / f"a_{spec.slug}_ov.png", lines=True)
                    entry.update(overlay=True, counts=counts.tolist())
        runs[spec.slug] = entry
    info["runs"] = runs
    return info
