"""Ground truth beyond the BSDS ``.mat``: folders of edge-map images (one or several
annotators an image) and of label maps read as boundaries and as regions.

:class:`GroundTruthFormat` is how a user names the reading (``--gt-format``,
``--gt-threshold``, ``--gt-void``, ``--gt-variable``); :class:`EdgeMapFolder` and
:class:`LabelMapGroundTruth` are the :class:`~segbench.datasets.Dataset` layouts;
:func:`sniff_folder` decides, from the files of a folder, which of them it holds, or
names the choices when that is ambiguous.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from os import PathLike
from pathlib import Path

import numpy as np

from ..errors import InputError, first_names
from .bsds import (
    IMAGE_EXTS,
    Annotation,
    BoundaryMap,
    Dataset,
    DatasetItem,
    _load_image,
    _merge,
    _subdirs,
    annotator_folders,
    with_images,
)

__all__ = [
    "EdgeMapFolder",
    "format_record",
    "GT_FORMATS",
    "GroundTruthFormat",
    "LabelMapGroundTruth",
    "sniff_file",
    "sniff_folder",
]

#: The names ``--gt-format`` takes, with what each reads.
GT_FORMATS = {
    "auto": "decide from the files (BSDS .mat/.seg; else edge-map or label-map images "
    "where the first file says which; else an error naming the choices)",
    "bsds": "BSDS500 <iid>.mat (groundTruth cells) or BSDS300 .seg",
    "edges": "edge-map images (or .npy/.mat arrays), one annotator a file: binary "
    "0/255 or 0/1 maps are edges where nonzero, graded ones at --gt-threshold "
    "(default 0.5 of full scale)",
    "labels": "label maps (8/16-bit or palette PNG, .npy, .mat --gt-variable): "
    "boundaries as BSDS draws them (thin(seg2bdry)), regions for covering, "
    "PRI and VI; --gt-void labels excluded",
    "multicue-edges": "a Multicue root (ground-truth/images/edges/<name>.<k>.png, six "
    "annotators an image): its edge annotations",
    "multicue-boundaries": "a Multicue root (ground-truth/images/boundaries/"
    "<name>.<k>.png, five annotators an image): its boundary "
    "annotations",
}

#: ``<iid>.<k>.<ext>``: one annotator ``k`` of image ``iid`` (Multicue's naming).
_NUMBERED = re.compile(r"(?P<iid>.+)\.(?P<annotator>\d+)\.[A-Za-z0-9]+")

_EDGE_FILE_EXTS = IMAGE_EXTS + (".pgm", ".npy", ".mat")
_LABEL_FILE_EXTS = (".png", ".bmp", ".tif", ".tiff", ".npy", ".mat")


@dataclass(frozen=True)
class GroundTruthFormat:
    """How ground-truth files are read (``--gt-format`` and its options).

    Attributes
    ----------
    name : str
        One of :data:`GT_FORMATS` (file formats, and the Multicue tree's two
        annotation sets).
    threshold : float or None
        ``edges``: the binarization threshold of graded maps, a fraction of full scale
        (:func:`segbench.io.read_edge_map`).
    void : tuple of int
        ``labels``: labels that mark unlabelled pixels (255 in PASCAL VOC, 0 in NYUD
        and MSRC); they are no region and draw no boundary.
    variable : str or None
        The ``.mat`` variable holding the map, where a file has several.
    """

    name: str = "auto"
    threshold: float | None = None
    void: tuple = ()
    variable: str | None = None

    @classmethod
    def of(cls, value) -> GroundTruthFormat:
        """A GroundTruthFormat from itself, a name, or None (auto)."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            return cls(value)
        raise InputError(
            f"gt_format is a format name or a GroundTruthFormat, not {value!r}"
        )

    def reading(self) -> str:
        """The settings that change what the files say, for record keys ('' for the
        default reading, so the records of BSDS runs keep their keys)."""
        parts = []
        if self.threshold is not None:
            parts.append(f"threshold={float(self.threshold)!r}")
        if self.void:
            parts.append("void=" + ",".join(str(int(v)) for v in sorted(self.void)))
            # void draws no edge on any side (before: only the void pixels' own were
            # dropped), so records of the older rule are not reused
            parts.append("void_edges=none")
        if self.variable:
            parts.append(f"variable={self.variable}")
        return ";".join(parts)

    def to_dict(self) -> dict:
        """The format as a result's provenance records it."""
        return {
            "name": self.name,
            "threshold": self.threshold,
            "void": list(self.void),
            "variable": self.variable,
        }


def format_record(value) -> dict:
    """:meth:`GroundTruthFormat.to_dict` of a ``gt_format`` argument."""
    return GroundTruthFormat.of(value).to_dict()


# ---------------------------------------------------------------------------------------
# annotations


def _load_edge_files(paths: tuple, threshold, variable) -> tuple[BoundaryMap, ...]:
    from ..io import read_edge_map

    return tuple(
        BoundaryMap(read_edge_map(p, threshold=threshold, variable=variable), str(p))
        for p in paths
    )


def _load_label_files(paths: tuple, void: tuple, variable) -> tuple[Annotation, ...]:
    from ..io import read_label_map

    out = []
    for p in paths:
        labels = read_label_map(p, variable=variable)
        out.append(label_annotation(labels, void, source=str(p)))
    return tuple(out)


def label_annotation(
    labels: np.ndarray, void=(), *, source: str | None = None
) -> Annotation:
    """An annotation of a label map whose ``void`` labels are unlabelled.

    Parameters
    ----------
    labels : (H, W) array of int
        As stored; every value not in ``void`` is a region.
    void : sequence of int
        Labels of unlabelled pixels.

    Returns
    -------
    Annotation
        ``segmentation`` 1..K with void pixels 0 (the region measures' convention for
        unlabelled pixels, as BSDS500 .mat files never have them); ``boundaries`` drawn
        as BSDS draws them (``thin(seg2bdry)``) from the edges between two labelled
        pixels only, minus every boundary pixel on a void pixel: a void band (VOC's 255
        outline) or unlabelled area draws no boundary of its own, on any side.
    """
    from ..primitives import compact_labels, seg2bdry, thin

    labels = np.asarray(labels)
    void = tuple(int(v) for v in void)
    if not void:
        compact, _ = compact_labels(labels, void=None)
        return Annotation(compact, source=source)
    is_void = np.isin(labels, void)
    # every void label as the first one, which compact_labels makes 0
    compact, _ = compact_labels(np.where(is_void, void[0], labels), void=void[0])
    bdry = np.asarray(thin(seg2bdry(compact, void=0)), bool) & ~is_void
    return Annotation(compact, bdry, source=source)


# ---------------------------------------------------------------------------------------
# listing files of one image


def _image_files(
    folder: Path, exts: tuple, pattern: re.Pattern | None
) -> dict[str, tuple[Path, ...]]:
    """iid -> its files (one per annotator) in ``folder``: ``<iid>.<ext>`` files,
    ``<iid>/`` subfolders of such files (one annotator each, in name order), or, with
    ``pattern``, the files whose names match it, grouped by its ``iid`` group and
    ordered by its ``annotator`` group. A folder whose every file is named
    ``<iid>.<k>.<ext>`` (Multicue's annotators) is grouped so without a pattern."""
    found: dict[str, dict] = {}
    if pattern is None:
        names = [
            p.name
            for p in folder.iterdir()
            if p.is_file() and not p.name.startswith(".") and p.suffix.lower() in exts
        ]
        if names and all(_NUMBERED.fullmatch(n) for n in names):
            pattern = _NUMBERED  # every file <iid>.<k>.<ext>: annotators k
            images = {m.group("iid") for m in map(_NUMBERED.fullmatch, names) if m}
            if len(images) < len(names):  # said: frames seq.001.png would be annotators
                import logging

                logging.getLogger("segbench").info(
                    f"ground truth in {folder}: {len(names)} files named "
                    f"<iid>.<k>.<ext> read as annotators k of {len(images)} "
                    f"image{'s' if len(images) != 1 else ''} (Multicue's naming; "
                    "name them otherwise to read each file as an image)"
                )
    from ..io import refuse_broken_link, refuse_folder

    for p in sorted(folder.iterdir()):
        if p.name.startswith(".") or p.suffix.lower() not in exts:
            continue
        refuse_broken_link(p)
        if not p.is_file():
            if pattern is None or pattern.fullmatch(p.name):  # taken, were it a file
                refuse_folder(p)
            continue
        if pattern is not None:
            m = pattern.fullmatch(p.name)
            if m is None:
                continue
            iid = m.group("iid")
            who = m.groupdict().get("annotator") or ""
            key = (int(who) if who.isdigit() else 0, who)
        else:
            iid, key = p.stem, (0, "")
        files = found.setdefault(iid, {})
        if key in files:
            raise InputError(
                f"two ground-truth files for image {iid!r}: "
                f"{files[key].name} and {p.name}; remove or rename one",
                folder,
            )
        files[key] = p
    out = {iid: tuple(files[k] for k in sorted(files)) for iid, files in found.items()}
    if pattern is None or pattern is _NUMBERED:
        out.update(annotator_folders(folder, exts, out))
    return dict(sorted(out.items()))


class _FileGroundTruth(Dataset):
    """Ground-truth files of one folder, one or several annotators an image."""

    _exts: tuple = ()
    _what = ""
    format: GroundTruthFormat  # set by each subclass

    def __init__(
        self, gt_dir, *, images_dir=None, split: str = "test", annotators: str | None = None
    ):
        super().__init__()
        from ..io import check_all_present, list_files, refuse_unreadable

        gt_dir = Path(gt_dir)
        refuse_unreadable(gt_dir)
        if not gt_dir.is_dir():
            raise InputError("ground-truth folder not found", gt_dir)
        self.root = gt_dir
        pattern = None
        if annotators is not None:
            try:
                pattern = re.compile(annotators)
            except re.error as exc:
                raise InputError(
                    f"the annotator pattern {annotators!r} is not a regular "
                    f"expression: {exc}"
                ) from None
            if "iid" not in pattern.groupindex:
                raise InputError(
                    f"the annotator pattern {annotators!r} needs a group "
                    "(?P<iid>...) naming the image"
                )
        sources = _image_files(gt_dir, self._exts, pattern)
        if not sources:
            raise InputError(
                f"no {self._what} found: expected "
                f"<iid>{'|'.join(self._exts)} files or <iid>/ folders of "
                "them" + (f" matching {annotators!r}" if pattern else ""),
                gt_dir,
            )
        photos: dict[str, Path] = {}
        if images_dir is not None:
            photos = list_files(images_dir, IMAGE_EXTS)
            check_all_present(
                sources, photos, "ground-truth images have no photograph", images_dir
            )
        for iid, files in sources.items():
            img = photos.get(iid)
            self._protos[iid] = DatasetItem(
                iid,
                split,
                img,
                None,
                None if img is None else partial(_load_image, img),
                self._loader(files),
                files,
                reading=self._reading(),
            )

    def _loader(self, files):
        raise NotImplementedError

    def _reading(self) -> str:
        """The record keys' ``reading``: the format's name and its settings."""
        settings = self.format.reading()
        return self.format.name + (";" + settings if settings else "")


class EdgeMapFolder(_FileGroundTruth):
    """Ground truth given as edge maps: ``<iid>.png`` (one annotator), ``<iid>/``
    folders of maps (several), or files named by ``annotators``.

    Parameters
    ----------
    gt_dir : str or PathLike
    images_dir : str or PathLike, optional
        The photographs, ``<iid>.<ext>`` (each ground-truth id needs one).
    threshold : float in (0, 1], optional
        Binarization of graded maps (:func:`segbench.io.read_edge_map`).
    variable : str, optional
        The variable of ``.mat`` maps.
    split : str, default 'test'
    annotators : str, optional
        A regular expression over file names with groups ``iid`` and ``annotator``:
        files matching it are one annotator each, grouped by ``iid`` and ordered by
        ``annotator`` (numerically where it is a number), e.g.
        ``r"(?P<iid>.+)\\.(?P<annotator>\\d+)\\.png"``.
    """

    name = "edge maps"
    _exts = _EDGE_FILE_EXTS
    _what = "ground-truth edge maps"

    def __init__(
        self,
        gt_dir,
        *,
        images_dir=None,
        threshold: float | None = None,
        variable: str | None = None,
        split: str = "test",
        annotators: str | None = None,
    ):
        self.format = GroundTruthFormat("edges", threshold=threshold, variable=variable)
        super().__init__(gt_dir, images_dir=images_dir, split=split, annotators=annotators)

    def _loader(self, files):
        return partial(_load_edge_files, files, self.format.threshold, self.format.variable)


class LabelMapGroundTruth(_FileGroundTruth):
    """Ground truth given as label maps, read both as regions (covering, PRI, VI) and
    as boundaries (:func:`label_annotation`).

    Parameters
    ----------
    gt_dir : str or PathLike
        ``<iid>.png|bmp|tif|npy|mat`` (one annotator), ``<iid>/`` folders (several),
        or files named by ``annotators`` (as :class:`EdgeMapFolder`).
    void : sequence of int, optional
        Labels of unlabelled pixels (255 in PASCAL VOC, 0 in NYUD and MSRC).
    variable : str, optional
        The ``.mat`` variable holding the map.
    images_dir, split, annotators
        As :class:`EdgeMapFolder`.
    """

    name = "label maps"
    _exts = _LABEL_FILE_EXTS
    _what = "ground-truth label maps"

    def __init__(
        self,
        gt_dir,
        *,
        images_dir=None,
        void=(),
        variable: str | None = None,
        split: str = "test",
        annotators: str | None = None,
    ):
        self.format = GroundTruthFormat(
            "labels", void=tuple(sorted(int(v) for v in void)), variable=variable
        )
        super().__init__(gt_dir, images_dir=images_dir, split=split, annotators=annotators)

    def _loader(self, files):
        return partial(_load_label_files, files, self.format.void, self.format.variable)


# ---------------------------------------------------------------------------------------
# which is it


def _first_image(folder: Path) -> Path | None:
    for p in sorted(folder.iterdir()):
        if p.is_file() and not p.name.startswith(".") and p.suffix.lower() in IMAGE_EXTS:
            return p
    for sub in _subdirs(folder):
        for p in sorted(sub.iterdir()):
            if (
                p.is_file()
                and not p.name.startswith(".")
                and p.suffix.lower() in IMAGE_EXTS
            ):
                return p
    return None


def sniff_folder(folder: str | PathLike) -> str | None:
    """``'edges'`` or ``'labels'`` for a folder of ground-truth images, from its first
    image (:func:`sniff_file`); None when the folder holds no image."""
    first = _first_image(Path(folder))
    return None if first is None else sniff_file(first)


def thin_structures(pixels: np.ndarray) -> bool:
    """Whether the nonzero pixels of a map are lines rather than regions.

    The rule of :func:`sniff_file`: fewer than half of the nonzero pixels keep a
    nonzero 3 x 3 neighbourhood (the image border counts as nonzero). A map without a
    nonzero pixel counts as lines (an image without any edge).

    Parameters
    ----------
    pixels : (H, W) array
        A map of any numeric type; only ``pixels != 0`` matters.

    Returns
    -------
    bool
        True for an edge or boundary map, False for a map of regions (labels, a mask).
    """
    from scipy import ndimage

    on = pixels != 0
    n = int(np.count_nonzero(on))
    if n == 0:
        return True  # an image without any edge: an edge map
    interior = ndimage.binary_erosion(on, np.ones((3, 3), bool), border_value=1)
    return int(np.count_nonzero(interior)) < 0.5 * n


def sniff_file(path: str | PathLike) -> str:
    """``'edges'`` or ``'labels'``: what a ground-truth image holds.

    The rule: a palette or 32-bit image is a label map (palette indices are labels:
    VOC). A 1-, 8- or 16-bit gray image (or gray saved as RGB) is an edge map when its
    nonzero pixels form thin structures, lines a few pixels wide, as in BIPED, Multicue
    and every edge dataset, 0/65535 maps too: fewer than half of them keep a nonzero
    3 x 3 neighbourhood (their interior); otherwise it is a label map (regions: NYUD's
    16-bit labels, Cityscapes ids, a mask). The folder options settle any case this
    gets wrong (``--gt-format``).

    Raises
    ------
    InputError
        The image is in colour (a colour-coded label map, as MSRC's, or something
        else), or unreadable: naming the file and the two ``--gt-format`` choices.
    """
    from PIL import Image

    path = Path(path)
    try:
        with Image.open(path) as im:
            mode = im.mode
            sixteen = mode.startswith("I;16") or (mode == "I" and im.format == "PNG")
            if mode == "P" or (mode.startswith("I") and not sixteen):
                return "labels"
            pixels: np.ndarray | None  # None: a colour image
            gray = mode in ("1", "L") or sixteen
            pixels = np.asarray(im if gray else im.convert("RGB"))
    except (OSError, ValueError, SyntaxError) as exc:
        raise InputError(
            f"not an image that can be read ({exc}): a damaged or misnamed file among "
            "the ground truth (its format, edges or labels, was to be guessed from it)",
            path,
        ) from None
    if pixels.ndim == 3:
        if not (pixels == pixels[..., :1]).all():
            pixels = None
        else:
            pixels = pixels[..., 0]
    if pixels is not None:
        return "edges" if thin_structures(pixels) else "labels"
    raise InputError(
        f"a {mode} colour image: edge maps are grayscale and label maps "
        "single-channel, so this is ambiguous (a colour-coded label map?). "
        "Name it with --gt-format edges (gray values) or labels (after "
        "mapping each colour to an integer)",
        path,
    )


# ---------------------------------------------------------------------------------------
# the datasets as distributed


def _biped_root(folder: Path) -> Path | None:
    """The ``edges`` folder of a BIPED tree (``edge_maps/`` with ``imgs/`` beside it,
    or without the photographs: ``edge_maps/<split>/rgbr/``), or None."""
    for c in (folder, folder / "edges", folder / "BIPED" / "edges"):
        maps = c / "edge_maps"
        if maps.is_dir() and (
            (c / "imgs").is_dir() or any((s / "rgbr").is_dir() for s in _subdirs(maps))
        ):
            return c
    return None


def _multicue_root(folder: Path) -> Path | None:
    for c in (folder, folder / "multicue"):
        if (c / "ground-truth" / "images").is_dir():
            return c
    return None


class AnnotatorCountWarning(UserWarning):
    """Images of a dataset with fewer annotators than the others."""


def _check_multicue_names(gt: Path) -> None:
    """Refuse a file of Multicue's annotation folder not named ``<name>.<k>.<ext>`` (it
    would be an image of its own, or break the annotators' grouping), and warn about
    images with fewer annotators than the most any image has (a file lost in copying
    changes that image's recall without a sign)."""
    import warnings

    counts: dict[str, int] = {}
    for p in sorted(gt.iterdir()):
        if p.name.startswith(".") or p.suffix.lower() not in _EDGE_FILE_EXTS:
            continue
        m = _NUMBERED.fullmatch(p.name)
        if m is None:
            raise InputError(
                "not named <name>.<k>.png as Multicue's annotations are (annotator k "
                "of image <name>): move it out of the annotation folder",
                p,
            )
        counts[m.group("iid")] = counts.get(m.group("iid"), 0) + 1
    most = max(counts.values(), default=0)
    short = sorted(i for i, n in counts.items() if n < most)
    if short:
        shown = first_names([f"{i} ({counts[i]})" for i in short], 5)
        warnings.warn(
            f"{gt}: {len(short)} images have fewer annotators than the {most} the "
            f"others have: {shown}",
            AnnotatorCountWarning,
            stacklevel=4,
        )


def open_layout(folder: Path, fmt: GroundTruthFormat) -> Dataset | None:
    """A dataset tree as distributed (BIPED, Multicue), or None when ``folder`` is not
    one.

    BIPED: ``edges/edge_maps/<split>/rgbr/RGB_NNN.png`` (0/255 edge maps, one annotator)
    with the photographs in ``edges/imgs/<split>/rgbr/RGB_NNN.jpg``; the splits whose
    folder holds the maps themselves (``test``; ``train`` keeps its maps in augmentation
    folders and is left out). Multicue: ``ground-truth/images/{edges,boundaries}/
    <name>.<k>.png`` (annotators k) with ``images/<name>.png``; which annotations is
    named by ``fmt`` (multicue-edges or multicue-boundaries).

    Raises
    ------
    InputError
        A Multicue tree without the format that picks its annotations, or a BIPED tree
        with no split of maps.
    """
    biped = _biped_root(folder)
    if biped is not None and (fmt.name not in ("auto", "edges") or fmt.void):
        raise InputError(
            "a BIPED tree holds edge maps: leave --gt-format out (or give edges), "
            "without --gt-void",
            biped,
        )
    if biped is not None:
        parts = []
        for split in _subdirs(biped / "edge_maps"):
            gt = split / "rgbr" if (split / "rgbr").is_dir() else split
            if not any(
                p.is_file() and p.suffix.lower() in IMAGE_EXTS for p in gt.iterdir()
            ):
                continue
            imgs = (
                biped / "imgs" / split.name / gt.name
                if gt.name == "rgbr"
                else biped / "imgs" / split.name
            )
            part = EdgeMapFolder(gt, threshold=fmt.threshold, split=split.name)
            if imgs.is_dir():  # photographs where there are (not needed)
                part = with_images(part, imgs, required=False)
            parts.append(part)
        if not parts:
            raise InputError(
                "a BIPED tree without edge maps: expected edge_maps/test/rgbr/*.png", biped
            )
        return parts[0] if len(parts) == 1 else _merge(parts)
    multicue = _multicue_root(folder)
    if multicue is not None:
        kinds = {"multicue-edges": "edges", "multicue-boundaries": "boundaries"}
        if fmt.name not in kinds:
            raise InputError(
                "a Multicue tree holds two annotations of each image; name "
                "one with --gt-format multicue-edges or multicue-boundaries",
                multicue,
            )
        if fmt.void:
            raise InputError(
                "--gt-void names labels of label maps; Multicue's edge maps have none",
                multicue,
            )
        gt = multicue / "ground-truth" / "images" / kinds[fmt.name]
        if not gt.is_dir():
            raise InputError(f"no {kinds[fmt.name]} annotations in this Multicue tree", gt)
        _check_multicue_names(gt)
        imgs = multicue / "images"
        ds = EdgeMapFolder(gt, threshold=fmt.threshold, split="test")
        if imgs.is_dir():
            ds = with_images(ds, imgs, required=False)
        return ds
    if fmt.name.startswith("multicue"):
        raise InputError(
            f"--gt-format {fmt.name} reads a Multicue tree "
            "(ground-truth/images/...), which this is not",
            folder,
        )
    return None
