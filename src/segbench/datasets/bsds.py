"""Dataset layouts: BSDS500, BSDS300, folder pairs and the synthetic dataset, one item shape.

Every reader is a :class:`Dataset`: items by image id (:class:`DatasetItem`), with
splits, and (where the layout records them) the human subjects who made each
segmentation. Items are built on demand and load their photograph and annotations lazily
(on first access, then cached on that item), so listing a dataset reads no pixels and a
dataset object stays small.

Layouts
-------
BSDS500 (``BSR_bsds500.tgz``)::

    BSR/BSDS500/data/images/{train,val,test}/<iid>.jpg
    BSR/BSDS500/data/groundTruth/{train,val,test}/<iid>.mat

:class:`BSDS500` accepts the ``data`` folder, any folder above it (``BSR``, ``BSDS500``)
or any folder that holds ``images/`` and ``groundTruth/`` (as ``../shared/data/bsds500``
or a dataset written by :func:`~segbench.datasets.write_synthetic_dataset`).

BSDS300 (``BSDS300-images.tgz`` + ``BSDS300-human.tgz``)::

    BSDS300/images/{train,test}/<iid>.jpg
    BSDS300/human/{color,gray}/<uid>/<iid>.seg
    BSDS300/iids_{train,test}.txt            (optional)

Folder pairs (:class:`FolderPairs`): ``images_dir/<iid>.jpg|png|...`` and ground truth
``gt_dir/<iid>.mat`` (BSDS500 format), ``<iid>.seg``, ``<iid>.png|bmp|tif|npy`` (one label
map), the superpixel benchmark's ``<iid>.npz`` (``gt0, gt1, ...``) and ``<iid>.csv`` /
``<iid>-<t>.csv`` (the C++ benchmark's layout), or a subfolder ``gt_dir/<iid>/`` holding
one such file per annotator.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from os import PathLike
from pathlib import Path
from typing import TypeVar

import numpy as np

from ..errors import InputError
from ._ground_truth import write_ground_truth

__all__ = [
    "BSDS300",
    "BSDS500",
    "Annotation",
    "BoundaryMap",
    "Dataset",
    "DatasetItem",
    "FolderPairs",
    "SubjectEntry",
    "SyntheticDataset",
    "open_dataset",
    "with_images",
    "write_ground_truth",
]

IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff")
LABEL_EXTS = (".mat", ".seg", ".png", ".bmp", ".tif", ".tiff", ".npy", ".npz", ".csv")
_SPLIT_ORDER = {"train": 0, "val": 1, "test": 2}


# ---------------------------------------------------------------------------------------
# items


@dataclass(frozen=True, eq=False, init=False)
class Annotation:
    """One person's segmentation of one image.

    ``Annotation(segmentation, boundaries=None, user=None, gray=None, source=None,
    key=None)``; frozen and picklable.

    Attributes
    ----------
    segmentation : (H, W) ndarray of int32
        Region labels ``1..N`` (the BSDS500 ``Segmentation`` convention; a BSDS300
        ``.seg`` file stores ``segmentation - 1``).
    boundaries : (H, W) ndarray of bool
        The boundary map the benchmark matches against: as stored in a BSDS500 .mat,
        otherwise ``thin(seg2bdry(segmentation))``, the relation every official file
        obeys, computed on first access (then cached on the annotation).
    user : int or None
        Annotator (subject) id where the layout records it (BSDS300 user ids; the
        synthetic dataset's annotator number 1..K); None for BSDS500 .mat files.
    gray : bool or None
        True if the image was shown in grayscale, False if in colour, None if unknown.
    source : str or None
        Where it came from (a file, and for .mat files ``{k}``, the 1-based cell index).
    key : str or None
        The segmentation's own name where the caller gives one (the in-memory items of
        :mod:`segbench.stats`, whose names seed their pixel samples); None for files,
        whose records are named by image and annotator.
    """

    segmentation: np.ndarray
    user: int | None = None
    gray: bool | None = None
    source: str | None = None
    key: str | None = None
    # the boundaries as given, or as computed on first access
    _boundaries: np.ndarray | None = field(default=None, init=False, repr=False)

    def __init__(
        self,
        segmentation,
        boundaries=None,
        user: int | None = None,
        gray: bool | None = None,
        source: str | None = None,
        key: str | None = None,
    ):
        object.__setattr__(self, "segmentation", np.asarray(segmentation))
        object.__setattr__(self, "_boundaries", boundaries)
        object.__setattr__(self, "user", user)
        object.__setattr__(self, "gray", gray)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "key", key)

    @property
    def boundaries(self) -> np.ndarray:
        boundaries = self._boundaries
        if boundaries is None:
            from ..primitives import seg2bdry, thin

            boundaries = np.asarray(thin(seg2bdry(self.segmentation)), bool)
            object.__setattr__(self, "_boundaries", boundaries)
        return boundaries

    @property
    def shape(self) -> tuple[int, int]:
        """(H, W) in pixels."""
        return tuple(self.segmentation.shape)

    @property
    def n_segments(self) -> int:
        """Number of distinct regions."""
        return int(np.unique(self.segmentation).size)


class BoundaryMap:
    """An annotator's boundary map given without the segmentation it came from.

    The boundary benchmark matches it as given (as BSDS500's stored ``Boundaries``);
    the region measures, which need regions, refuse it.

    Parameters
    ----------
    boundaries : (H, W) bool ndarray
    source : str, optional
        How messages name it.
    """

    __slots__ = ("boundaries", "source", "user", "gray")

    #: No label map behind it (callers that read both maps of an annotation check this).
    has_segmentation = False

    def __init__(self, boundaries: np.ndarray, source: str | None = None):
        self.boundaries = np.ascontiguousarray(boundaries, dtype=bool)
        self.source = source
        self.user = None
        self.gray = None

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.boundaries.shape)

    @property
    def segmentation(self):
        raise InputError(
            f"{self.source or 'ground truth'} is a boundary map (0/1 or "
            "bool, or an edge-map file), not a segmentation: the region measures need "
            "label maps (integer arrays of region labels; --gt-format labels reads "
            "label-map files), as do the statistics of segmentations and the "
            "half-resolution boundary protocol"
        )


@dataclass(frozen=True, eq=False)
class DatasetItem:
    """One image of a dataset with its human segmentations, loaded lazily.

    Attributes
    ----------
    iid : str
        Image id (the file stem, e.g. ``'100007'``).
    split : str
        ``'train'``, ``'val'``, ``'test'`` or the layout's own split name (``'unknown'``
        when a BSDS300 tree has no images and no id lists).
    image_path : Path or None
        The photograph; None when the layout has none for this id.
    gt_path : Path or None
        The BSDS500 ground-truth .mat the annotations come from, when there is one
        (the benchmarks read these files directly).
    image_loader, annotation_loader : callable
        Zero-argument functions behind :attr:`image` and :attr:`annotations`
        (picklable: partials of module-level functions).
    sources : tuple of Path
        The files the annotations are read from (a record of a benchmark is keyed by
        their content); empty for in-memory data.
    reading : str
        How the files are read where that is not the BSDS default (edge maps at a
        threshold, label maps with void labels): part of a record's key, since the same
        files read otherwise are other ground truth. '' for the default.

    Notes
    -----
    ``image``, ``annotations`` and everything derived from them are read on first
    access and then cached on the item. A :class:`Dataset` hands out a fresh item on
    every lookup, so dropping the item frees the pixels.
    """

    iid: str
    split: str
    image_path: Path | None = None
    gt_path: Path | None = None
    image_loader: Callable[[], np.ndarray] | None = field(default=None, repr=False)
    annotation_loader: Callable[[], tuple] | None = field(default=None, repr=False)
    sources: tuple[Path, ...] = ()
    reading: str = ""

    @cached_property
    def image(self) -> np.ndarray:
        """The photograph, (H, W, 3) uint8 RGB. InputError if the item has none."""
        if self.image_loader is None:
            raise InputError(f"image {self.iid!r} has no photograph in this dataset")
        return self.image_loader()

    @cached_property
    def annotations(self) -> tuple[Annotation, ...]:
        """The human segmentations, in the layout's order (BSDS500: as stored, which is
        ascending user id; BSDS300: colour before gray, then ascending user id)."""
        if self.annotation_loader is None:
            return ()
        anns = tuple(self.annotation_loader())
        for a in anns[1:]:
            if a.shape != anns[0].shape:
                raise InputError(
                    f"image {self.iid!r}: annotations disagree on the image "
                    f"size ({_hw(anns[0].shape)} in {anns[0].source}, "
                    f"{_hw(a.shape)} in {a.source})",
                    a.source,  # the ground truth's fault, not the prediction's
                )
        return anns

    def ground_truth(self) -> list:
        """The annotations as the benchmarks read them: for a BSDS500 ``.mat``, the
        :class:`~segbench.io.HumanSegmentation` list of
        :func:`~segbench.io.read_ground_truth` (boundaries as stored, labels converted
        only if used); otherwise :attr:`annotations`. Not cached: each call reads."""
        if self.gt_path is not None and self.gt_path.suffix.lower() == ".mat":
            from ..io import read_ground_truth

            return read_ground_truth(self.gt_path)
        anns = self.annotations
        if not anns:
            raise InputError(
                f"image {self.iid!r} has no human segmentation",
                self.sources[0] if self.sources else None,
            )
        return list(anns)

    @property
    def segmentations(self) -> list[np.ndarray]:
        """Label maps ``1..N``, one per annotation."""
        return [a.segmentation for a in self.annotations]

    @property
    def boundaries(self) -> list[np.ndarray]:
        """Boolean boundary maps, one per annotation."""
        return [a.boundaries for a in self.annotations]

    @property
    def users(self) -> list[int | None]:
        """Annotator id of each annotation (None where unknown)."""
        return [a.user for a in self.annotations]

    @property
    def gray(self) -> list[bool | None]:
        """Whether each annotator saw the image in grayscale (None where unknown)."""
        return [a.gray for a in self.annotations]

    @property
    def n_annotations(self) -> int:
        return len(self.annotations)

    @property
    def shape(self) -> tuple[int, int]:
        """(H, W): of the annotations, or of the photograph when there are none."""
        if self.annotations:
            return self.annotations[0].shape
        return tuple(self.image.shape[:2])


@dataclass(frozen=True)
class SubjectEntry:
    """One segmentation made by one subject: ``dataset[iid].annotations[index]``.

    ``path`` is the file holding it (BSDS300 ``.seg``), None for in-memory data.
    """

    user: int
    iid: str
    split: str
    index: int
    gray: bool | None = None
    path: Path | None = None


def _hw(shape) -> str:
    return "x".join(str(n) for n in shape) + " (HxW)"


# ---------------------------------------------------------------------------------------
# loaders (module level so that items pickle)


def _load_image(path: Path) -> np.ndarray:
    from ..io import read_image

    return read_image(path)


def _const(value):
    return value


def _load_mat(path: Path) -> tuple[Annotation | BoundaryMap, ...]:
    from ..io import read_ground_truth

    return tuple(
        Annotation(
            h.segmentation.astype(np.int32, copy=False),
            h.boundaries,
            source=f"{path}{{{k}}}",
        )
        if h.has_segmentation
        # Boundaries alone (NYUDv2's test files): what the boundary benchmark reads
        else BoundaryMap(h.boundaries, source=f"{path}{{{k}}}")
        for k, h in enumerate(read_ground_truth(path), start=1)
    )


def _load_seg(path: Path, user: int | None, gray: bool | None) -> Annotation:
    from ..io import read_seg

    seg = read_seg(path)
    if gray is None:
        gray = bool(seg.gray)
    return Annotation(
        (seg.labels + 1).astype(np.int32),
        user=seg.user if user is None else user,
        gray=gray,
        source=str(path),
    )


def _load_segs(entries: tuple) -> tuple[Annotation, ...]:
    return tuple(_load_seg(*e) for e in entries)


def _load_label_map(path: Path) -> tuple[Annotation | BoundaryMap, ...]:
    """One annotation from a .mat/.seg/image/.npy/.csv file (a .mat or .npz may hold
    several)."""
    ext = path.suffix.lower()
    if ext == ".mat":
        return _load_mat(path)
    if ext in (".npz", ".csv"):  # the superpixel benchmark's files: labels as stored
        from ..io import read_annotators

        return tuple(
            Annotation(labels, source=f"{path}{{{k}}}" if ext == ".npz" else str(path))
            for k, labels in enumerate(read_annotators([path]))
        )
    if ext == ".seg":
        return (_load_seg(path, None, None),)
    from ..io import read_label_map
    from ..primitives import compact_labels

    labels, _ = compact_labels(read_label_map(path), void=None)
    return (Annotation(labels.astype(np.int32, copy=False), source=str(path)),)


def _load_many(paths: tuple) -> tuple[Annotation | BoundaryMap, ...]:
    out: list[Annotation | BoundaryMap] = []
    for p in paths:
        out.extend(_load_label_map(p))
    return tuple(out)


# ---------------------------------------------------------------------------------------
# the common base


def _split_key(name: str):
    return (_SPLIT_ORDER.get(name, 3), name)


class Dataset:
    """Items by image id, with splits and (where known) subjects.

    ``ds[iid]`` is a fresh :class:`DatasetItem`; ``len(ds)``, ``iid in ds``; iterating
    yields the items of all splits in id order (``ds.items(split)`` for one split).

    Subclasses fill ``self._protos`` (iid -> an item never handed out; lookups return
    fresh copies) and may override :meth:`subjects` and :meth:`ground_truth_dir`.
    """

    name = "dataset"
    #: (``'edges'`` or ``'labels'``, the file it was told from) when the reading was
    #: guessed from the files (``--gt-format auto``): the run records it.
    guessed_format: tuple[str, str] | None = None
    # declared, never set here: only a merge of several folders has it (``_merge``),
    # so readers ask ``getattr(ds, "sources", None)``
    sources: list[Path | None]

    def __init__(self):
        self._protos: dict[str, DatasetItem] = {}
        self.root: Path | None = None

    # mapping protocol -------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._protos)

    def __contains__(self, iid) -> bool:
        return str(iid) in self._protos

    def __iter__(self) -> Iterator[DatasetItem]:
        return self.items()

    def __getitem__(self, iid) -> DatasetItem:
        try:
            return replace(self._protos[str(iid)])
        except KeyError:
            raise KeyError(f"no image {iid!r} in {self.name}") from None

    def __repr__(self) -> str:
        counts = ", ".join(f"{s}: {len(self.ids(s))}" for s in self.splits)
        where = f" at {self.root}" if self.root else ""
        return f"<{type(self).__name__}{where} ({counts})>"

    # splits -----------------------------------------------------------------------
    @property
    def splits(self) -> tuple[str, ...]:
        """Split names present, train/val/test first."""
        return tuple(sorted({p.split for p in self._protos.values()}, key=_split_key))

    def _check_split(self, split: str | None) -> None:
        if split is not None and split not in self.splits:
            raise InputError(
                f"no split {split!r} in {self.name}; it has "
                f"{', '.join(self.splits) or 'no images'}",
                self.root,
            )

    def ids(self, split: str | None = None) -> list[str]:
        """Sorted image ids, of one split or of all."""
        self._check_split(split)
        return sorted(
            i for i, p in self._protos.items() if split is None or p.split == split
        )

    def items(self, split: str | None = None) -> Iterator[DatasetItem]:
        """Fresh items in id order, of one split or of all."""
        for iid in self.ids(split):
            yield replace(self._protos[iid])

    def split_of(self, iid: str) -> str:
        return self._protos[str(iid)].split

    def subset(self, ids) -> Dataset:
        """The same dataset restricted to ``ids`` (InputError lists unknown ids)."""
        ids = [str(i) for i in ids]
        unknown = [i for i in ids if i not in self._protos]
        if unknown:
            shown = ", ".join(unknown[:20]) + (" ..." if len(unknown) > 20 else "")
            # an id file read one id a line: '100007 100039' on one line is one id
            joined = [
                i
                for i in unknown
                if len(parts := re.split(r"[\s,]+", i.strip())) > 1
                and all(p in self._protos for p in parts)
            ]
            hint = (
                f"; {ascii(joined[0])} holds several ids: an id file lists one a line"
                if joined
                else ""
            )
            raise InputError(
                f"{len(unknown)} requested image ids are not in {self.name}: {shown}{hint}",
                self.root,
            )
        out = copy.copy(self)
        out._protos = {i: self._protos[i] for i in sorted(set(ids))}
        return out

    # subjects ---------------------------------------------------------------------
    def subjects(self) -> dict[int, list[SubjectEntry]]:
        """Every segmentation by annotator id, ``{}`` when the layout does not record
        who made which (BSDS500). Entries in (split, iid) order."""
        return {}

    # benchmark input --------------------------------------------------------------
    def ground_truth_dir(
        self, split: str, *, cache_dir: str | PathLike | None = None
    ) -> Path:
        """A folder of BSDS500 ``<iid>.mat`` files holding exactly the split's images,
        as the benchmark engine reads them.

        Layouts that already have one return it; others write the .mat files to
        ``cache_dir`` (required then; files already there are kept, so a resumed
        benchmark finds the same inputs and reuses its records).
        """
        self._check_split(split)
        protos = [self._protos[i] for i in self.ids(split)]
        dirs = {p.gt_path.parent for p in protos if p.gt_path is not None}
        if len(dirs) == 1 and all(p.gt_path is not None for p in protos):
            folder = dirs.pop()
            from ..io import list_files

            if set(list_files(folder, "mat")) == {p.iid for p in protos}:
                return folder
        if cache_dir is None:
            raise InputError(
                f"{self.name} has no folder of BSDS500 .mat ground truth "
                f"for split {split!r}; pass cache_dir to write one",
                self.root,
            )
        out = Path(cache_dir)
        out.mkdir(parents=True, exist_ok=True)
        wanted = {p.iid for p in protos}
        for stale in out.glob("*.mat"):
            if stale.stem not in wanted:
                stale.unlink()
        for p in protos:
            target = out / f"{p.iid}.mat"
            if target.exists():
                continue
            item = replace(p)
            if not item.annotations:
                raise InputError(f"image {p.iid!r} has no human segmentation", self.root)
            write_ground_truth(target, item.segmentations, boundaries=item.boundaries)
        return out


# ---------------------------------------------------------------------------------------
# BSDS500


def _subdirs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))


def annotator_folders(folder: Path, exts, taken) -> dict[str, tuple[Path, ...]]:
    """``<iid>/`` subfolders of ``folder`` holding ground-truth files (``exts``), one
    annotator a file in name order: iid -> files. InputError for an id already in
    ``taken`` (a file of its own too)."""
    from ..io import refuse_broken_link, refuse_folder

    out = {}
    for sub in _subdirs(folder):
        if sub.suffix.lower() in exts:  # 100007.mat/: a file's name, not an id's
            refuse_folder(sub)
        listed = [
            p
            for p in sorted(sub.iterdir())
            if not p.name.startswith(".") and p.suffix.lower() in exts
        ]
        for p in listed:
            refuse_broken_link(p)
            refuse_folder(p)
        files = tuple(p for p in listed if p.is_file())
        if not files:
            continue
        if sub.name in taken:
            raise InputError(
                f"image {sub.name!r} has both a ground-truth file and a "
                "ground-truth folder; keep one",
                folder,
            )
        out[sub.name] = files
    return out


def _describe(folder: Path) -> str:
    try:
        names = sorted(
            p.name + ("/" if p.is_dir() else "")
            for p in folder.iterdir()
            if not p.name.startswith(".")
        )
    except OSError:
        return "nothing readable"
    if not names:
        return "an empty folder"
    return ", ".join(names[:12]) + (" ..." if len(names) > 12 else "")


def _find_root(
    root: Path, candidates: list[Path], ok: Callable[[Path], bool], what: str, expected: str
) -> Path:
    if not root.exists():
        raise InputError(f"{what} folder not found", root)
    if not root.is_dir():
        raise InputError(f"expected a {what} folder but this is a file", root)
    for c in candidates:
        if ok(c):
            return c
    raise InputError(
        f"not a {what} layout: expected {expected}; found {_describe(root)}", root
    )


class BSDS500(Dataset):
    """The BSDS500 (``BSR/BSDS500/data``): 200 train, 100 val, 200 test images, each
    with 4 to 9 human segmentations in ``groundTruth/<split>/<iid>.mat``.

    Parameters
    ----------
    root : str or PathLike
        The ``data`` folder, a folder above it (``BSR``, ``BSDS500``, the ``--dest`` of
        ``segbench fetch bsds500``) or any folder holding ``images/`` and
        ``groundTruth/`` with one subfolder per split.

    Notes
    -----
    Items are the ids with ground truth; a ground truth without a photograph gets
    ``image_path = None``. The .mat files do not record user ids (their annotators are
    in ascending user-id order), so :meth:`subjects` is empty and ``Annotation.user``
    is None.

    Examples
    --------
    >>> ds = BSDS500("../shared/data/bsds500")                 # doctest: +SKIP
    >>> ds.splits, len(ds.ids("test"))                         # doctest: +SKIP
    (('train', 'val', 'test'), 200)
    """

    name = "BSDS500"
    root: Path  # always a folder here

    def __init__(self, root: str | PathLike):
        super().__init__()
        root = Path(root)
        ok = lambda c: (c / "images").is_dir() and (c / "groundTruth").is_dir()  # noqa: E731
        self.root = _find_root(
            root,
            [
                root,
                root / "data",
                root / "BSDS500" / "data",
                root / "BSR" / "BSDS500" / "data",
            ],
            ok,
            "BSDS500",
            "images/ and groundTruth/ with train/val/test below (the data folder of "
            "BSR/BSDS500/data)",
        )
        from ..io import list_files

        gt_root, img_root = self.root / "groundTruth", self.root / "images"
        splits = _subdirs(gt_root)
        if not splits:
            raise InputError("no split folders (train/val/test) in groundTruth", gt_root)
        for sdir in splits:
            gts = list_files(sdir, "mat")
            imgs = (
                list_files(img_root / sdir.name, IMAGE_EXTS)
                if (img_root / sdir.name).is_dir()
                else {}
            )
            for iid, gt in gts.items():
                if iid in self._protos:
                    raise InputError(
                        f"image {iid!r} is in two splits "
                        f"({self._protos[iid].split} and {sdir.name})",
                        gt_root,
                    )
                img = imgs.get(iid)
                self._protos[iid] = DatasetItem(
                    iid,
                    sdir.name,
                    img,
                    gt,
                    None if img is None else partial(_load_image, img),
                    partial(_load_mat, gt),
                    (gt,),
                )
        if not self._protos:
            raise InputError("no ground-truth .mat files in any split folder", gt_root)


# ---------------------------------------------------------------------------------------
# BSDS300


_PRESENTATIONS = {"color": ("color",), "gray": ("gray",), "all": ("color", "gray")}


def _scan_images(folder: Path, top_split: str) -> dict[str, tuple[str, Path]]:
    """iid -> (split, path) for ``folder/<split>/<iid>.<ext>`` and ``folder/<iid>.<ext>``."""
    from ..io import list_files

    out: dict[str, tuple[str, Path]] = {}
    groups = [(top_split, folder)] + [(d.name, d) for d in _subdirs(folder)]
    for split, d in groups:
        for iid, p in list_files(d, IMAGE_EXTS).items():
            if iid in out:
                raise InputError(
                    f"two photographs for image {iid!r}: {out[iid][1]} and {p}", folder
                )
            out[iid] = (split, p)
    return out


def _read_id_list(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="latin-1")
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", path) from None
    return [t for t in text.removeprefix("\xef\xbb\xbf").split() if t]  # UTF-8 BOM


class BSDS300(Dataset):
    """The BSDS300: 200 train and 100 test images; segmentations by 28 subjects, half
    made on colour and half on grayscale images, in ``human/{color,gray}/<uid>/<iid>.seg``.

    Parameters
    ----------
    root : str or PathLike
        The ``BSDS300`` folder or the folder holding it (the ``--dest`` of
        ``segbench fetch bsds300``). Needs ``human/`` or ``images/``.
    presentation : {'color', 'gray', 'all'}, default 'color'
        Which segmentations the items (and :meth:`subjects`) hold: those made on the
        colour images, on the grayscale ones, or both. The default matches the BSDS500
        ground truth of the same images (each BSDS300 colour ``.seg`` equals one
        BSDS500 annotator).
    images : str or PathLike, optional
        Where the photographs are, if not ``root/images``: ``<split>/<iid>.jpg`` below
        it or ``<iid>.jpg`` directly in it (e.g. the BSDS500 ``images`` folder, which
        holds every BSDS300 image).

    Notes
    -----
    The items are the images with at least one ``.seg`` file (of any presentation; an
    image may then have no annotation of the chosen one), or the photographs when
    there is no ``human`` folder. The split of an image comes from
    ``iids_train.txt``/``iids_test.txt`` when present, else from the subfolder of its
    photograph, else it is ``'unknown'``. Annotations are ordered colour before gray,
    then by ascending user id.
    """

    name = "BSDS300"
    root: Path  # always a folder here

    def __init__(
        self,
        root: str | PathLike,
        *,
        presentation: str = "color",
        images: str | PathLike | None = None,
        subject_folders: dict[str, Path] | None = None,
    ):
        super().__init__()
        if presentation not in _PRESENTATIONS:
            raise InputError(
                f"presentation must be one of {', '.join(_PRESENTATIONS)}, "
                f"not {presentation!r}"
            )
        self.presentation = presentation
        root = Path(root)
        if subject_folders is not None:
            self.root = root
        else:
            ok = lambda c: (c / "human").is_dir() or (c / "images").is_dir()  # noqa: E731
            self.root = _find_root(
                root,
                [root, root / "BSDS300"],
                ok,
                "BSDS300",
                "human/{color,gray}/<uid>/<iid>.seg and/or images/{train,test}/<iid>.jpg "
                "(the BSDS300 folder)",
            )
        img_dir = Path(images) if images is not None else self.root / "images"
        if images is not None and not img_dir.is_dir():
            raise InputError("images folder not found", img_dir)
        photos = _scan_images(img_dir, "unknown") if img_dir.is_dir() else {}
        listed: dict[str, str] = {}
        for split in ("train", "test"):
            f = self.root / f"iids_{split}.txt"
            if f.is_file():
                for iid in _read_id_list(f):
                    listed[iid] = split
        # segmentations: iid -> [(gray, user, path)]
        segs: dict[str, list[tuple[bool, int, Path]]] = {}
        seen: set[str] = set()
        human = self.root / "human"
        if subject_folders is None and human.is_dir():
            subject_folders = {
                k: human / k for k in ("color", "gray") if (human / k).is_dir()
            }
            if not subject_folders:
                raise InputError("no color/ or gray/ folder in human", human)
        if subject_folders is not None:
            for kind, folder in subject_folders.items():
                for udir in _subdirs(folder):
                    if not udir.name.isdigit():
                        raise InputError(
                            "expected a numeric user-id folder "
                            "(human/{color,gray}/<uid>/<iid>.seg)",
                            udir,
                        )
                    for f in sorted(udir.glob("*.seg")):
                        if f.name.startswith(".") or not f.is_file():
                            continue
                        seen.add(f.stem)
                        if kind in _PRESENTATIONS[presentation]:
                            segs.setdefault(f.stem, []).append(
                                (kind == "gray", int(udir.name), f)
                            )
        # With segmentations, the items are the segmented images (an ``images`` folder
        # may be a superset, such as the BSDS500's); without, the photographs.
        ids = seen if subject_folders is not None else set(photos)
        if not ids:
            raise InputError("no .seg files and no photographs found", self.root)
        for iid in sorted(ids):
            split = listed.get(iid) or (photos[iid][0] if iid in photos else "unknown")
            img = photos[iid][1] if iid in photos else None
            entries = tuple((p, u, g) for g, u, p in sorted(segs.get(iid, [])))
            self._protos[iid] = DatasetItem(
                iid,
                split,
                img,
                None,
                None if img is None else partial(_load_image, img),
                partial(_load_segs, entries) if entries else None,
                tuple(e[0] for e in entries),
            )
        self._segs = segs

    @classmethod
    def from_subject_folders(
        cls, folder: str | PathLike, *, presentation: str | None = None
    ) -> BSDS300:
        """The segmentations of a BSDS300 ``human`` tree without the rest of the layout.

        ``folder`` is either one presentation's folder of subjects
        (``human/color`` or ``human/gray``: ``<uid>/<iid>.seg`` below it; a folder of
        another name counts as colour) or the ``human`` folder itself (then
        ``presentation`` picks color, gray or all; default color). Every item's split
        is ``'unknown'`` unless ``iids_train.txt``/``iids_test.txt`` sit beside
        ``human``.
        """
        folder = Path(folder)
        if not folder.is_dir():
            raise InputError("ground-truth folder not found", folder)
        kinds = [k for k in ("color", "gray") if (folder / k).is_dir()]
        if kinds:  # the human folder
            presentation = presentation or "color"
            wanted = {k: folder / k for k in _PRESENTATIONS[presentation] if k in kinds}
            if not wanted:
                raise InputError(f"no {presentation} folder of subjects", folder)
            return cls(folder.parent, presentation=presentation, subject_folders=wanted)
        kind = "gray" if folder.name == "gray" else "color"
        if presentation not in (None, kind, "all"):
            raise InputError(
                f"this folder holds {kind} segmentations, not {presentation}", folder
            )
        root = folder.parent.parent if folder.parent.name == "human" else folder
        return cls(root, presentation=kind, subject_folders={kind: folder})

    def subjects(self) -> dict[int, list[SubjectEntry]]:
        """Every segmentation of the chosen presentation by user id (ascending)."""
        out: dict[int, list[SubjectEntry]] = {}
        for iid, entries in self._segs.items():
            split = self._protos[iid].split
            for index, (gray, user, path) in enumerate(sorted(entries)):
                out.setdefault(user, []).append(
                    SubjectEntry(user, iid, split, index, gray, path)
                )
        for listed in out.values():
            listed.sort(key=lambda e: (_split_key(e.split), e.iid, e.gray))
        return dict(sorted(out.items()))


# ---------------------------------------------------------------------------------------
# folder pairs


class FolderPairs(Dataset):
    """A dataset given as a folder of photographs and a folder of ground truth.

    Parameters
    ----------
    images_dir : str or PathLike or None
        ``<iid>.jpg|jpeg|png|bmp|tif|tiff``; every ground-truth id needs one. None for
        ground truth alone.
    gt_dir : str or PathLike
        Per image ``<iid>.mat`` (BSDS500 ``groundTruth``, any number of annotators),
        ``<iid>.seg``, or ``<iid>.png|bmp|tif|tiff|npy`` (one label map; every value,
        0 included, is a region), the superpixel benchmark's ``<iid>.npz`` (``gt0,
        gt1, ...``) or the C++ benchmark's ``<iid>.csv`` / ``<iid>-0.csv``,
        ``<iid>-1.csv``, ... (labels as stored, one annotator per map), or a subfolder
        ``<iid>/`` holding one or more such files (one annotator each, in name order).
    split : str, default 'test'
        The split name every item gets.
    """

    name = "the ground-truth folder"

    def __init__(
        self,
        images_dir: str | PathLike | None,
        gt_dir: str | PathLike,
        *,
        split: str = "test",
    ):
        super().__init__()
        from ..io import (
            check_all_present,
            group_annotator_files,
            list_files,
            refuse_unreadable,
        )

        gt_dir = Path(gt_dir)
        refuse_unreadable(gt_dir)
        if not gt_dir.is_dir():
            raise InputError("ground-truth folder not found", gt_dir)
        self.root = gt_dir
        sources: dict[str, tuple[Path, ...]] = {
            iid: tuple(ps) for iid, ps in group_annotator_files(gt_dir, LABEL_EXTS).items()
        }
        sources.update(annotator_folders(gt_dir, LABEL_EXTS, sources))
        if not sources:
            raise InputError(
                "no ground truth found: expected <iid>.mat|seg|png|bmp|tif|"
                "npy|npz|csv files or <iid>/ folders of them",
                gt_dir,
            )
        photos: dict[str, Path] = {}
        if images_dir is not None:
            photos = list_files(images_dir, IMAGE_EXTS)
            check_all_present(
                sources, photos, "ground-truth images have no photograph", images_dir
            )
        for iid, files in sorted(sources.items()):
            img = photos.get(iid)
            gt = files[0] if len(files) == 1 and files[0].suffix.lower() == ".mat" else None
            self._protos[iid] = DatasetItem(
                iid,
                split,
                img,
                gt,
                None if img is None else partial(_load_image, img),
                partial(_load_many, files),
                files,
            )


# ---------------------------------------------------------------------------------------
# synthetic


class SyntheticDataset(Dataset):
    """The rendered dataset of ``segbench demo`` in the common item shape.

    Parameters
    ----------
    items : list of SyntheticItem, optional
        As from :func:`~segbench.datasets.make_synthetic_dataset`; rendered from the
        other arguments when omitted.
    n_images, shape, n_annotators, seed
        Passed to :func:`~segbench.datasets.make_synthetic_dataset`.
    split : str, default 'test'

    Notes
    -----
    The simulated annotator ``k`` (0-based) keeps one style over all images; it is
    subject ``k + 1`` here, shown colour images (``gray=False``).
    """

    name = "synthetic"

    def __init__(
        self,
        items=None,
        *,
        n_images: int = 8,
        shape=(160, 240),
        n_annotators: int = 5,
        seed: int = 0,
        split: str = "test",
    ):
        super().__init__()
        from .synthetic import make_synthetic_dataset

        if items is None:
            items = make_synthetic_dataset(
                n_images, shape=shape, n_annotators=n_annotators, seed=seed
            )
        self.synthetic_items = list(items)
        self.split = split
        for it in self.synthetic_items:
            anns = tuple(
                Annotation(
                    np.asarray(s, np.int32),
                    user=k + 1,
                    gray=False,
                    source=f"{it.iid} annotator {k + 1}",
                )
                for k, s in enumerate(it.segmentations)
            )
            self._protos[it.iid] = DatasetItem(
                it.iid, split, None, None, partial(_const, it.image), partial(_const, anns)
            )

    def subjects(self) -> dict[int, list[SubjectEntry]]:
        out: dict[int, list[SubjectEntry]] = {}
        for it in self.synthetic_items:
            for k in range(len(it.segmentations)):
                out.setdefault(k + 1, []).append(
                    SubjectEntry(k + 1, it.iid, self.split, k, False, None)
                )
        return out

    def write(self, root: str | PathLike) -> Path:
        """Write the BSDS500 layout (``images/<split>/<iid>.png``,
        ``groundTruth/<split>/<iid>.mat``) and return ``root``; ``BSDS500(root)`` reads
        it back."""
        from .synthetic import write_synthetic_dataset

        return write_synthetic_dataset(root, self.synthetic_items, split=self.split)


# ---------------------------------------------------------------------------------------
# combining


_DatasetT = TypeVar("_DatasetT", bound=Dataset)


def _merge(parts: Sequence[_DatasetT]) -> _DatasetT:
    """One dataset holding the items of several (ids must be unique)."""
    out = copy.copy(parts[0])
    out._protos = dict(parts[0]._protos)
    for ds in parts[1:]:
        for iid, proto in ds._protos.items():
            if iid in out._protos:
                raise InputError(
                    f"image id {iid!r} is in two ground-truth folders "
                    f"({out.root} and {ds.root})",
                    ds.root,
                )
            out._protos[iid] = proto
    out._protos = dict(sorted(out._protos.items()))
    # every folder read, for the provenance (``root`` stays the first one's)
    out.sources = [s for ds in parts for s in (getattr(ds, "sources", None) or [ds.root])]
    return out


def with_images(
    dataset: _DatasetT, image_dirs, *, required: bool = True, recursive: bool = False
) -> _DatasetT:
    """``dataset`` with its photographs taken from ``image_dirs`` (one folder or several;
    ``<iid>.jpg|jpeg|png|bmp|tif|tiff``, the first folder holding an id wins).

    Parameters
    ----------
    required : bool, default True
        Every image needs a photograph (else the items without one keep theirs, or
        none).
    recursive : bool, default False
        Also look in the subfolders (e.g. an ``images`` folder with split folders).

    Raises
    ------
    InputError
        Listing the ids that have no photograph in any of the folders (``required``),
        or two photographs of one id in one folder tree.
    """
    from ..io import list_files

    dirs = [image_dirs] if isinstance(image_dirs, (str, PathLike)) else list(image_dirs)
    found: dict[str, Path] = {}
    for d in dirs:
        here: dict[str, Path] = {}
        for folder in [
            Path(d),
            *(
                sorted(
                    p
                    for p in Path(d).rglob("*")
                    if p.is_dir() and not p.name.startswith(".")
                )
                if recursive and Path(d).is_dir()
                else []
            ),
        ]:
            for iid, p in list_files(folder, IMAGE_EXTS).items():
                if iid in here:
                    raise InputError(
                        f"two photographs for image {iid!r}: {here[iid]} and {p}", d
                    )
                here[iid] = p
        for iid, p in here.items():
            found.setdefault(iid, p)
    missing = [i for i in dataset.ids() if i not in found]
    if missing and required:
        shown = ", ".join(missing[:20]) + (" ..." if len(missing) > 20 else "")
        raise InputError(
            f"{len(missing)} of {len(dataset)} images have no photograph "
            f"(.{'/.'.join(e.lstrip('.') for e in IMAGE_EXTS)}): {shown}",
            dirs[0],
        )
    out = copy.copy(dataset)
    out._protos = {
        i: replace(p, image_path=found[i], image_loader=partial(_load_image, found[i]))
        if i in found
        else p
        for i, p in dataset._protos.items()
    }
    return out


# ---------------------------------------------------------------------------------------


def open_dataset(root: str | PathLike, **kwargs) -> Dataset:
    """Open a BSDS500 or BSDS300 tree, whichever ``root`` holds.

    BSDS500 is tried first (``groundTruth/`` somewhere at or below ``root`` as
    :class:`BSDS500` accepts), then BSDS300; keyword arguments (``presentation``,
    ``images``) go to :class:`BSDS300`.
    Passing a :class:`Dataset` returns it unchanged.
    """
    if isinstance(root, Dataset):
        return root
    from ..io import FolderNamedLikeAFile, refuse_unreadable

    root = Path(root)
    refuse_unreadable(root)  # before the probes below, which name paths inside it
    try:
        return BSDS500(root)
    except InputError as first:
        if not root.is_dir() or isinstance(first, FolderNamedLikeAFile):
            # (a BSDS500 root holding 100007.mat/: as BSDS300 its photographs would
            # be items without ground truth, and the reason lost)
            raise
        try:
            return BSDS300(root, **kwargs)
        except InputError:
            pass
        if (root / "groundTruth").is_dir():
            raise first from None  # a BSDS500 root the reader refused: its reason
        raise InputError(
            f"neither a BSDS500 layout (images/ and groundTruth/) nor a "
            f"BSDS300 layout (human/ and images/); found {_describe(root)}",
            root,
        ) from first


_IID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")


def valid_iid(iid: str) -> bool:
    """Whether ``iid`` is safe as a file stem and in a URL (letters, digits, ``_.-``)."""
    return bool(_IID.fullmatch(iid))
