"""Running the statistics over a folder of BSDS500 .mat or BSDS300 .seg files."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

from ..errors import InputError
from ._api import NORMALIZE, EcologicalStatistics, count_segments, summarize
from ._measure import ImageCues, max_scaled_distance, measure

FORMATS = ("auto", "bsds500", "bsds300")
_IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff")


@dataclass(frozen=True)
class _Task:
    """One image: where its segmentations and its photograph are."""

    image_id: str
    image: str | None
    sources: tuple          # ((key, path, gray-from-folder), ...)
    format: str


def _detect(gt: Path) -> str:
    if next(gt.rglob("*.seg"), None) is not None:
        return "bsds300"
    if next(gt.rglob("*.mat"), None) is not None:
        return "bsds500"
    raise InputError("no .mat (BSDS500) or .seg (BSDS300) files in this folder or below",
                     gt)


def find_images(gt: Path, images: Path | None) -> tuple[dict, Path | None]:
    """Index photographs by image id: under ``images``, else under the nearest
    ``images`` folder beside ``gt`` or one of its parents (the BSDS layouts)."""
    root = images
    if root is None:
        for p in [gt, *gt.parents]:
            if (p / "images").is_dir():
                root = p / "images"
                break
    if root is None:
        return {}, None
    if not root.is_dir():
        raise InputError("images folder not found", root)
    index: dict[str, Path] = {}
    for f in sorted(root.rglob("*")):
        if f.suffix.lower() in _IMAGE_EXTS and not f.name.startswith("."):
            if f.stem in index and index[f.stem] != f:
                raise InputError(f"two images for id {f.stem!r}: {index[f.stem]} and {f}",
                                 root)
            index[f.stem] = f
    return index, root


def discover(gt: str | PathLike, *, format: str = "auto",
             images: str | PathLike | None = None) -> tuple[list[_Task], str, Path | None]:
    """The per-image tasks of a ground-truth folder (searched recursively).

    BSDS500: every ``<iid>.mat``; its annotators get keys ``<iid>/1`` ... ``<iid>/K`` in
    the stored order. BSDS300: every ``<uid>/<iid>.seg`` (the official layout
    ``human/{color,gray}/<uid>/<iid>.seg``), key ``<iid>/<uid>``; the ``gray`` header
    field says how the image was shown.
    """
    gt = Path(gt)
    if not gt.is_dir():
        raise InputError("ground-truth folder not found", gt)
    if format not in FORMATS:
        raise InputError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    fmt = _detect(gt) if format == "auto" else format
    index, root = find_images(gt, None if images is None else Path(images))
    by_image: dict[str, list] = {}
    if fmt == "bsds500":
        for f in sorted(gt.rglob("*.mat")):
            by_image.setdefault(f.stem, []).append((f.stem, str(f)))
    else:
        for f in sorted(gt.rglob("*.seg")):
            by_image.setdefault(f.stem, []).append((f"{f.stem}/{f.parent.name}", str(f)))
    if not by_image:
        raise InputError(f"no {'.mat' if fmt == 'bsds500' else '.seg'} files found", gt)
    for iid, src in by_image.items():
        keys = [k for k, _ in src]
        if len(set(keys)) != len(keys):
            raise InputError(f"image {iid} appears in several files with the same key "
                             f"({', '.join(p for _, p in src)})", gt)
    tasks = [_Task(iid, str(index[iid]) if iid in index else None, tuple(src), fmt)
             for iid, src in sorted(by_image.items())]
    return tasks, fmt, root


def _segmentations(task: _Task):
    """(key, label map, gray flag) of every segmentation of a task."""
    from ..io import read_ground_truth, read_seg
    if task.format == "bsds500":
        for key, path in task.sources:
            for k, h in enumerate(read_ground_truth(path), start=1):
                yield f"{key}/{k}", h.segmentation, None
    else:
        for key, path in task.sources:
            s = read_seg(path)
            yield key, s.labels, s.gray


def _scale_task(task: _Task) -> float:
    return max(max_scaled_distance(seg.shape, count_segments(seg))
               for _, seg, _ in _segmentations(task))


def _measure_task(job) -> list:
    task, opts = job
    cues = None
    segs = list(_segmentations(task))
    if task.image is not None:
        from ..io import read_image
        image = read_image(task.image)
        if image.shape[:2] != segs[0][1].shape:
            raise InputError(f"image is {image.shape[0]}x{image.shape[1]} but its "
                             f"segmentations are {segs[0][1].shape[0]}x"
                             f"{segs[0][1].shape[1]}", task.image)
        cues = ImageCues.of(image)
    return [measure(seg, key=key, image_id=task.image_id, gray=gray, cues=cues, **opts)
            for key, seg, gray in segs]


def run_stats(gt: str | PathLike, out: str | PathLike | None = None, *,
              format: str = "auto", images: str | PathLike | None = None,
              samples: int = 1000, seed: int = 0, workers: int = 1,
              progress: bool = True, plot: bool = True, proximity_bins: int = 20,
              normalize: str = "dataset", max_scaled_distance: float | None = None,
              **summary_options
              ) -> EcologicalStatistics:
    """Ecological statistics of a folder of human segmentations; figures and JSON.

    Parameters
    ----------
    gt : folder
        BSDS500 ``groundTruth`` (any of its split folders, or the parent of all three)
        or a BSDS300 ``human`` folder (or any folder above the ``.seg`` files).
    out : folder, optional
        Receives ``stats.json`` and one PNG per figure. None: nothing is written.
    format : {'auto', 'bsds500', 'bsds300'}
    images : folder, optional
        Photographs ``<iid>.jpg`` (searched recursively). Default: the ``images``
        folder beside ``gt`` or one of its parents. Segmentations whose image is not
        found are left out of the similarity statistics only.
    samples, seed, proximity_bins, normalize, max_scaled_distance
        As :func:`proximity`.
    workers : int
        Worker processes; the result is identical for any number.
    progress : bool
    plot : bool
        Write the PNGs (with ``out``).
    summary_options
        Passed to :func:`summarize` (``cue_bins``, ``n_boot``, ``min_area`` ...).
    """
    from ..engine import map_items
    t0 = time.perf_counter()
    tasks, fmt, root = discover(gt, format=format, images=images)
    if normalize not in NORMALIZE:
        raise InputError(f"normalize must be one of {', '.join(NORMALIZE)}, got "
                         f"{normalize!r}")
    scale = max_scaled_distance
    if scale is not None and not scale > 0:
        raise InputError(f"max_scaled_distance must be positive, got {scale}")
    if scale is None and normalize == "dataset":
        scale = max(map_items(_scale_task, tasks, workers=workers, progress=progress,
                              desc="stats: counting segments"))
    opts = dict(samples=int(samples), seed=int(seed),
                scale=None if scale is None else float(scale),
                proximity_bins=int(proximity_bins))
    records = [r for batch in map_items(_measure_task, [(t, opts) for t in tasks],
                                        workers=workers, progress=progress,
                                        desc="stats: measuring")
               for r in batch]
    n_img = sum(t.image is not None for t in tasks)
    if n_img == 0:
        print("segbench stats: no photographs found (use --images); similarity skipped",
              file=sys.stderr)
    params = dict(gt=str(gt), format=fmt, images=None if root is None else str(root),
                  n_images=len(tasks), n_images_with_photo=n_img,
                  n_segmentations=len(records), samples=int(samples), seed=int(seed),
                  proximity_bins=int(proximity_bins), normalize=normalize,
                  max_scaled_distance=scale)
    res = summarize(records, seed=int(seed), params=params, **summary_options)
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        if plot:
            from ._plots import plot_stats
            plot_stats(res, out)
        res.to_result(seconds=round(time.perf_counter() - t0, 2)).to_json(
            out / "stats.json")
    return res
