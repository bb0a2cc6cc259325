"""The site's view of a dataset: image ids of a split, photos, annotations, subjects.

A small adapter, so that the site depends on four calls only (:func:`open_dataset`,
``ids``, ``image_path``, ``annotations``). It wraps the readers of
:mod:`segbench.datasets.bsds` (``open_dataset``: BSDS500, then BSDS300 with the colour
segmentations, which match the BSDS500 ground truth the runs were scored against) and
falls back to reading the two layouts itself through :mod:`segbench.io` where that
module is absent.

Layouts (``root`` may also be a parent holding ``data/``, ``BSDS500/data/`` or
``BSR/BSDS500/data/``, as the official archive unpacks):

- BSDS500: ``images/<split>/<iid>.jpg|png`` and ``groundTruth/<split>/<iid>.mat``;
  annotators are anonymous (their user ids are not stored in the .mat files).
- BSDS300: ``images/<split>/<iid>.jpg`` and ``human/{color,gray}/<uid>/<iid>.seg``;
  the subjects (user ids) are known. Without photographs (and id lists) the split is
  unknown: every segmented image is taken, whatever split is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..errors import InputError

IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff")
_PARENTS = ("", "data", "BSDS500/data", "BSR/BSDS500/data")


@dataclass(frozen=True, eq=False)
class Annotation:
    """One human segmentation of an image.

    Attributes
    ----------
    subject : str or None
        The annotator's user id when the layout records it (BSDS300), else None.
    kind : str
        'colour' or 'grey' (how the image was shown; BSDS300), '' when unknown.
    segmentation : (H, W) int32
        Labels 1..N (0 = unlabelled), as BSDS500 ``Segmentation``.
    boundaries : (H, W) bool
        The boundary map the benchmark scores against.
    """

    subject: str | None
    kind: str
    segmentation: np.ndarray
    boundaries: np.ndarray


@dataclass(frozen=True)
class SiteDataset:
    """A dataset split as the site sees it. Build with :func:`open_dataset`.

    Picklable (worker processes receive it): it holds paths and lazily loading items.
    """

    root: Path
    split: str
    layout: str                      # 'bsds500' or 'bsds300'
    ids: tuple[str, ...]
    has_subjects: bool
    label: str
    _items: dict | None = None       # segbench.datasets items (when that reader is used)
    _images: dict | None = None      # fallback reader: iid -> photograph
    _gt: dict | None = None          # fallback, bsds500: iid -> .mat path
    _segs: dict | None = None        # fallback, bsds300: iid -> ((uid, kind, path), ...)

    @property
    def name(self) -> str:
        """How pages name the dataset: the folder given, and the split."""
        return f"{self.label or self.root.name} ({self.split})"

    def image_path(self, iid: str) -> Path | None:
        """The photograph of ``iid``, or None when the dataset has none."""
        if self._items is not None:
            return self._items[iid].image_path
        return self._images.get(iid)

    def annotations(self, iid: str) -> list[Annotation]:
        """Every human segmentation of ``iid``, in the layout's order."""
        if self._items is not None:
            out = []
            for a in replace(self._items[iid]).annotations:   # a fresh item: no caching
                kind = "" if a.gray is None else ("grey" if a.gray else "colour")
                out.append(Annotation(None if a.user is None else str(a.user), kind,
                                      a.segmentation, a.boundaries))
            return out
        if self.layout == "bsds500":
            from ..io import read_ground_truth
            return [Annotation(None, "", h.segmentation, h.boundaries)
                    for h in read_ground_truth(self._gt[iid])]
        from ..boundary import seg2bdry, thin
        from ..io import read_seg
        out = []
        for uid, kind, path in self._segs.get(iid, ()):
            seg = read_seg(path).labels.astype(np.int32) + 1
            out.append(Annotation(uid, kind, seg, thin(seg2bdry(seg, "imageSize"))))
        return out


def open_dataset(root, split: str = "test") -> SiteDataset:
    """Find the layout under ``root`` and list the split.

    Raises
    ------
    InputError
        If ``root`` holds neither layout, or the split has no images.
    """
    root = Path(root)
    try:
        from ..datasets.bsds import open_dataset as open_any
    except ImportError:
        return _open_own(root, split)
    ds = open_any(root)
    if tuple(ds.splits) == ("unknown",):
        split = "unknown"
    ids = tuple(ds.ids(split))
    if not ids:
        raise InputError(f"split {split!r} has no images", root)
    subjects = bool(ds.subjects())
    layout = "bsds300" if type(ds).__name__ == "BSDS300" else "bsds500"
    return SiteDataset(Path(ds.root or root), split, layout, ids, subjects,
                       root.resolve().name, {iid: ds[iid] for iid in ids})


# ---------------------------------------------------------------------------------------
# the fallback reader


def _files(folder: Path, exts) -> dict[str, Path]:
    if not folder.is_dir():
        return {}
    out = {}
    for p in sorted(folder.iterdir()):
        if p.is_file() and not p.name.startswith(".") and p.suffix.lower() in exts:
            out.setdefault(p.stem, p)
    return out


def _uid_key(uid: str):
    return (0, int(uid), uid) if uid.isdigit() else (1, 0, uid)


def _open_own(root: Path, split: str) -> SiteDataset:
    if not root.is_dir():
        raise InputError("dataset folder not found", root)
    label = root.resolve().name
    for parent in _PARENTS:
        base = root / parent if parent else root
        gt_dir = base / "groundTruth" / split
        if gt_dir.is_dir():
            gts = _files(gt_dir, (".mat",))
            if not gts:
                raise InputError(f"no ground-truth .mat files for split {split!r}", gt_dir)
            images = _files(base / "images" / split, IMAGE_EXTS)
            return SiteDataset(base, split, "bsds500", tuple(sorted(gts)), False, label,
                               None, images, gts, {})
        if (base / "human").is_dir():
            return _bsds300(base, split, label)
    raise InputError(f"no BSDS500 (groundTruth/{split}) or BSDS300 (human/) layout found",
                     root)


def _bsds300(base: Path, split: str, label: str) -> SiteDataset:
    segs: dict[str, list] = {}
    kdir = base / "human" / "color"          # the colour segmentations, as BSDS500 holds
    if kdir.is_dir():
        for udir in sorted(kdir.iterdir(), key=lambda p: _uid_key(p.name)):
            if not udir.is_dir() or udir.name.startswith("."):
                continue
            for iid, path in _files(udir, (".seg",)).items():
                segs.setdefault(iid, []).append((udir.name, "colour", path))
    img_dir = base / "images" / split
    images = _files(img_dir, IMAGE_EXTS)
    if not img_dir.is_dir():
        split = "unknown"
    ids = sorted(i for i in (images if img_dir.is_dir() else segs) if i in segs)
    if not ids:
        raise InputError(f"no image of split {split!r} has a colour human segmentation",
                         base / "human")
    return SiteDataset(base, split, "bsds300", tuple(ids), True, label, None, images, {},
                       {i: tuple(segs[i]) for i in ids})
