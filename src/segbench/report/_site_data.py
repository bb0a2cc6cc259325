"""The site's view of a dataset: image ids of a split, photos, annotations, subjects.

A small adapter over :func:`segbench.datasets.bsds.open_dataset` (BSDS500, then BSDS300
with every segmentation, colour and greyscale: the site ranks each presentation
separately), so that the site depends on ``ids``, ``item`` and ``has_subjects``.

Layouts (``root`` may also be a parent holding ``data/``, ``BSDS500/data/`` or
``BSR/BSDS500/data/``, as the official archive unpacks):

- BSDS500: ``images/<split>/<iid>.jpg|png`` and ``groundTruth/<split>/<iid>.mat``;
  annotators are anonymous (their user ids are not stored in the .mat files).
- BSDS300: ``images/<split>/<iid>.jpg`` and ``human/{color,gray}/<uid>/<iid>.seg``;
  the subjects (user ids) and the presentation of each segmentation are known.
  Without photographs (and id lists) the split is unknown: every segmented image is
  taken, whatever split is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..datasets import open_ground_truth
from ..datasets.bsds import BSDS300, Annotation, Dataset, DatasetItem
from ..datasets.bsds import open_dataset as open_any
from ..errors import InputError

__all__ = ["Annotation", "SiteDataset", "annotator", "open_dataset"]


def annotator(a: Annotation) -> dict:
    """How pages name an annotation's author: ``subject`` (user id as a string, or
    None) and ``kind`` ('colour' or 'grey' as the image was shown, '' when unknown);
    ``regions``: False for an edge map (boundaries only, no regions to draw)."""
    return {
        "subject": None if a.user is None else str(a.user),
        "kind": "" if a.gray is None else ("grey" if a.gray else "colour"),
        "regions": bool(getattr(a, "has_segmentation", True)),
    }


@dataclass(frozen=True)
class SiteDataset:
    """A dataset split as the site sees it. Build with :func:`open_dataset`."""

    root: Path
    split: str
    ids: tuple[str, ...]
    has_subjects: bool
    label: str
    _items: dict  # iid -> segbench.datasets item (loads lazily)
    _source: Path | None = None  # the root given, to open one presentation of it
    _other: Dataset | None = None  # a layout other than BSDS (edge or label maps)

    @property
    def name(self) -> str:
        """How pages name the dataset: the folder given, and the split (a BSDS300
        root without photographs has none: every segmented image is shown)."""
        if self.split == "unknown":
            return f"{self.label or self.root.name} (every segmented image)"
        return f"{self.label or self.root.name} ({self.split})"

    def presentation(self, group: str) -> Dataset:
        """The dataset with the segmentations of one presentation group only
        ('colour', 'grey' or 'all'), for the human families: the BSDS300 scored each
        presentation's segmentations against each other. Layouts that record no
        presentation (BSDS500, annotation folders of one kind) hold colour ones only,
        so every group but 'grey' is the whole dataset there."""
        if self._other is not None:
            return self._other
        ds = open_any(self._source or self.root, presentation="all")
        if isinstance(ds, BSDS300) and group != "all":
            ds = open_any(
                self._source or self.root,
                presentation="gray" if group == "grey" else "color",
            )
        return ds

    def item(self, iid: str) -> DatasetItem:
        """The dataset item of ``iid`` (nothing loaded yet; picklable)."""
        return self._items[iid]


def open_dataset(root, split: str = "test", gt_format=None) -> SiteDataset:
    """Find the layout under ``root`` and list the split.

    A BSDS500 or BSDS300 root, or (with ``gt_format``, or when the root is neither)
    any ground truth ``segbench boundary --gt`` reads: a folder or dataset tree of
    edge maps or label maps (BIPED, Multicue, NYUD, ...;
    :func:`segbench.datasets.open_ground_truth`), its photographs where the layout
    has them.

    Raises
    ------
    InputError
        If ``root`` holds no layout segbench reads, or the split has no images.
    """

    root = Path(root)
    other = None
    if gt_format is not None:
        ds = other = open_ground_truth(root, gt_format=gt_format)
    else:
        try:
            ds = open_any(root, presentation="all")
        except InputError as bsds_error:
            try:
                ds = other = open_ground_truth(root)
            except InputError:
                raise bsds_error from None  # neither: the BSDS layouts' message
    if tuple(ds.splits) == ("unknown",) or (other is not None and len(ds.splits) == 1):
        split = ds.splits[0]
    ids = tuple(ds.ids(split))
    if not ids:
        raise InputError(f"split {split!r} has no images", root)
    return SiteDataset(
        Path(ds.root or root),
        split,
        ids,
        bool(ds.subjects()),
        root.resolve().name,
        {iid: ds[iid] for iid in ids},
        root,
        other,
    )
