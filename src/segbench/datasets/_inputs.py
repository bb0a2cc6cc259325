"""What every benchmark command reads: ground truth of any layout, predictions paired
with it by image id, an optional list of ids, and the name of the run.

This is the one place that turns a user's ``--gt``/``--split``/``--presentation``/
``--pred``/``--ids``/``--name`` into a :class:`Dataset` and :class:`Sample` objects.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

from ..errors import InputError, first_names
from ._edges import (
    GT_FORMATS,
    EdgeMapFolder,
    GroundTruthFormat,
    LabelMapGroundTruth,
    _first_image,
    open_layout,
    sniff_folder,
)
from .bsds import (
    BSDS300,
    BSDS500,
    IMAGE_EXTS,
    Dataset,
    DatasetItem,
    FolderPairs,
    _describe,
    _merge,
    _subdirs,
    open_dataset,
    with_images,
)

__all__ = [
    "SPLIT_NAMES",
    "Sample",
    "open_ground_truth",
    "pair_predictions",
    "parse_ids",
    "run_name",
    "with_images",
]

#: Folder names read as split names: a folder so named is that split, and a run is not
#: named after it (``.../hed/test`` is ``hed``).
SPLIT_NAMES = frozenset(
    {"train", "val", "test", "trainval", "training", "validation", "testing"}
)


def _split_folders(folder: Path) -> list[Path]:
    """The subfolders of ``folder`` that hold BSDS500 ``<iid>.mat`` files."""
    return [d for d in _subdirs(folder) if next(d.glob("*.mat"), None) is not None]


def _is_subject_folder(folder: Path) -> bool:
    """``<uid>/<iid>.seg`` below: one presentation of a BSDS300 ``human`` tree."""
    subs = _subdirs(folder)
    return (
        bool(subs)
        and all(d.name.isdigit() for d in subs)
        and any(next(d.glob("*.seg"), None) is not None for d in subs)
    )


def open_ground_truth(
    gt,
    *,
    split: str | None = None,
    presentation: str | None = None,
    all_splits: bool = False,
    gt_format=None,
) -> Dataset:
    """The ground truth of a benchmark run, whatever its layout.

    Parameters
    ----------
    gt : path, Dataset, or a sequence of them
        One of: a folder of BSDS500 ``<iid>.mat`` files (``groundTruth/test``; also
        ``<iid>.seg`` or label-map files, see :class:`FolderPairs`); a BSDS300 subject
        tree (``human/color`` or ``human/gray``, i.e. ``<uid>/<iid>.seg`` below it, or
        the ``human`` folder); a dataset root (``BSR/BSDS500/data``, ``BSDS300``); or a
        :class:`Dataset`.
    split : str, optional
        The split to take from a dataset root (required when it has several).
    presentation : {'color', 'gray', 'all'}, optional
        For BSDS300 trees: the segmentations made on colour images (the default), on
        grayscale images, or both.
    all_splits : bool, default False
        Keep every split when ``split`` is None (otherwise a dataset with several
        splits needs ``split``).
    gt_format : str or GroundTruthFormat, optional
        How the files are read (:data:`~segbench.datasets.GT_FORMATS`): by default
        ``'auto'``, BSDS ``.mat``/``.seg`` where there are any, else edge maps or label
        maps as the first image says (:func:`~segbench.datasets.sniff_folder`);
        ``'edges'`` or ``'labels'`` to say it, with the reading's settings in a
        :class:`~segbench.datasets.GroundTruthFormat`. A folder of split folders
        (``gt/test/...``) takes ``split`` as for a dataset root.

    Returns
    -------
    Dataset
        Several ``gt`` are merged into one (InputError if an id is in two of them).
    """
    fmt = GroundTruthFormat.of(gt_format)
    if isinstance(gt, (str, PathLike)):
        from ..io import refuse_unreadable

        # before the probes of its layout, which would name a path inside it
        refuse_unreadable(gt)
    if isinstance(gt, (list, tuple)):
        if not gt:
            raise InputError("no ground-truth folder given")
        parts = [
            open_ground_truth(
                g, split=split, presentation=presentation, all_splits=True, gt_format=fmt
            )
            for g in gt
        ]
        return parts[0] if len(parts) == 1 else _merge(parts)
    layout = (
        None
        if isinstance(gt, Dataset) or not Path(gt).is_dir()
        else open_layout(Path(gt), fmt)
    )
    ds: Dataset
    if isinstance(gt, Dataset):
        ds = gt
    elif layout is not None:
        ds = layout
    elif fmt.name != "auto" or _image_folder(Path(gt)):
        ds = _open_formatted(Path(gt), fmt, split)
    else:
        folder = Path(gt)
        if not folder.exists():
            raise InputError("ground-truth folder not found", folder)
        if not folder.is_dir():
            raise InputError("expected a ground-truth folder but this is a file", folder)
        if fmt.reading():  # they would be recorded as if they had been applied
            raise InputError(
                "--gt-threshold, --gt-void and --gt-variable read edge-map and "
                "label-map ground truth; this folder holds no images, and BSDS "
                ".mat/.seg files are read as they are (give --gt-format edges or "
                "labels for .mat files of edge or label maps)",
                folder,
            )
        if _is_subject_folder(folder) or any(
            (folder / k).is_dir() and _is_subject_folder(folder / k)
            for k in ("color", "gray")
        ):
            ds = BSDS300.from_subject_folders(folder, presentation=presentation)
        elif any(
            p.suffix.lower() in (".mat", ".seg")
            for p in folder.iterdir()
            if p.is_file() and not p.name.startswith(".")
        ):
            ds = FolderPairs(
                None, folder, split=folder.name if folder.name in SPLIT_NAMES else "test"
            )
        elif _split_folders(folder):  # a groundTruth folder: one per split
            beside = None
            if folder.name == "groundTruth" and (folder.parent / "images").is_dir():
                beside = BSDS500(folder.parent)  # with the photographs beside it
            if beside is None or Path(beside.root).resolve() != folder.parent.resolve():
                ds = _split_merge(
                    folder,
                    _split_folders(folder),
                    split,
                    lambda d: FolderPairs(None, d, split=d.name),
                )
            else:
                ds = beside
        else:
            try:
                ds = open_dataset(folder, presentation=presentation or "color")
            except InputError:
                if any((folder / k).is_dir() for k in ("groundTruth", "human", "BSR")):
                    raise  # a dataset root the reader refused: its reason is the news
                subs = _subdirs(folder)
                if subs and all(_has_image(d) for d in subs):
                    raise InputError(
                        "a folder of <iid>/ folders of images (several annotators an "
                        "image?): give --gt-format edges or --gt-format labels to read "
                        "it so (a dataset root is read without it)",
                        folder,
                    ) from None
                raise InputError(
                    "no ground truth here: expected BSDS500 <iid>.mat files, a BSDS300 "
                    "human/color tree of <uid>/<iid>.seg, edge-map or label-map images "
                    "(--gt-format edges|labels), or a dataset root "
                    f"(BSR/BSDS500/data, BSDS300) with --split; found {_describe(folder)}",
                    folder,
                ) from None
    if split is not None:
        return ds.subset(ds.ids(split))  # a copy: guessed_format goes with it
    if len(ds.splits) > 1 and not all_splits:
        raise InputError(
            f"{ds.name} has several splits ({', '.join(ds.splits)}); choose "
            "one with --split",
            ds.root,
        )
    return ds


def _split_merge(folder: Path, dirs: list[Path], split: str | None, make) -> Dataset:
    """One dataset of the split folders ``dirs`` (``make(dir)`` each); only the one
    named ``split`` when given. Folders that share image ids are not splits but
    annotation sets of the same images (BSDS-RIND's edge types): then ``split`` must
    name one."""
    if split is not None and any(d.name == split for d in dirs):
        return make(next(d for d in dirs if d.name == split))
    parts = [make(d) for d in dirs]
    seen: dict[str, str] = {}
    for part in parts:
        for iid in part.ids():
            if iid in seen:
                raise InputError(
                    f"the folders {', '.join(d.name for d in dirs)} hold the "
                    f"same images (e.g. {iid!r} in {seen[iid]} and "
                    f"{part.splits[0]}): annotation sets, not splits; choose "
                    "one with --split",
                    folder,
                )
            seen[iid] = part.splits[0]
    return parts[0] if len(parts) == 1 else _merge(parts)


def _image_folder(folder: Path) -> bool:
    """Whether ``folder`` holds ground-truth images or arrays but no BSDS ``.mat`` or
    ``.seg`` (directly, or in split folders): a folder the edge-map and label-map
    readers take."""
    if not folder.is_dir():
        return False
    for d in [folder] + [s for s in _subdirs(folder) if s.name in SPLIT_NAMES]:
        names = [
            p.suffix.lower()
            for p in d.iterdir()
            if p.is_file() and not p.name.startswith(".")
        ]
        if ".mat" in names or ".seg" in names:
            return False
    # images directly in it or in split folders: a folder of <iid>/ folders of images
    # may also be a dataset root, so that one needs --gt-format
    return any(
        _has_image(d)
        for d in [folder] + [s for s in _subdirs(folder) if s.name in SPLIT_NAMES]
    )


class GuessedLabelsWarning(UserWarning):
    """Ground truth of two values guessed to be label maps."""


def _warn_if_two_valued(path: Path) -> None:
    """Warn when a map guessed to hold labels holds two values (0/255): thick edges
    (dilated strokes, a mask of edges) read as two regions score near 0 (their
    boundary is the strokes' outline), and only the guess's notice said so."""
    import warnings

    import numpy as np

    from ..io import read_label_map

    try:
        values = np.unique(read_label_map(path))
    except (InputError, OSError, ValueError):
        return  # the reader names the file when the run reads it
    if values.size <= 2:
        from PIL import Image

        try:
            with Image.open(path) as im:
                palette = im.mode == "P"
        except (OSError, ValueError):
            palette = False
        shown = ", ".join(map(str, values))
        warnings.warn(
            f"{path}: a palette image of two values ({shown}), read as a label map "
            "(palette indices are labels): if these are edges, save them as 8-bit "
            "grey images (an edge map is never a palette image)"
            if palette
            else f"{path}: a map of two values ({shown}) guessed to be a label map "
            "(its strokes are wide): if these are edges, give --gt-format edges",
            GuessedLabelsWarning,
            stacklevel=4,
        )


def _has_image(folder: Path) -> bool:
    return any(
        p.suffix.lower() in IMAGE_EXTS and p.is_file() and not p.name.startswith(".")
        for p in folder.iterdir()
    )


def _open_formatted(folder: Path, fmt, split: str | None) -> Dataset:
    """A folder read by ``fmt`` (edge maps, label maps, or BSDS files with a setting
    that only those take, which is refused), split folders merged."""
    if not folder.exists():
        raise InputError("ground-truth folder not found", folder)
    if not folder.is_dir():
        raise InputError("expected a ground-truth folder but this is a file", folder)
    name = fmt.name
    if name == "bsds":
        if fmt.reading():
            raise InputError(
                "--gt-threshold, --gt-void and --gt-variable read edge-map "
                "and label-map ground truth (--gt-format edges|labels), not "
                "BSDS .mat/.seg files",
                folder,
            )
        if _image_folder(folder):  # auto would read them as edge or label maps
            raise InputError(
                "--gt-format bsds reads BSDS .mat/.seg files, and this folder holds "
                "images, not those: give --gt-format edges or labels (or leave "
                "--gt-format out to have them guessed)",
                folder,
            )
        return open_ground_truth(folder)
    splits = [d for d in _subdirs(folder) if d.name in SPLIT_NAMES]
    has_files = any(p.is_file() and not p.name.startswith(".") for p in folder.iterdir())
    parts = (
        [(folder, folder.name if folder.name in SPLIT_NAMES else "test")]
        if has_files or not splits
        else [(d, d.name) for d in splits]
    )
    guessed = None
    if name == "auto":
        name = sniff_folder(parts[0][0])
        if name is None:
            raise InputError(
                "no ground-truth image here to read as edge maps or label "
                f"maps; found {_describe(folder)}",
                folder,
            )
        guessed = _first_image(parts[0][0])
        kind = "edge" if name == "edges" else "label"
        logging.getLogger("segbench").info(
            f"ground truth read as {kind} maps, as its first image {guessed} looks "
            "(--gt-format edges|labels says which)"
        )
        if name == "labels" and guessed is not None:
            _warn_if_two_valued(guessed)
    if name not in ("edges", "labels"):
        raise InputError(
            f"unknown ground-truth format {name!r}; one of {', '.join(GT_FORMATS)}", folder
        )
    if name == "edges":
        if fmt.void:
            raise InputError(
                "--gt-void names labels of label maps; edge maps have none "
                "(--gt-format labels reads label maps)",
                folder,
            )

        def make(d):
            return EdgeMapFolder(
                d, threshold=fmt.threshold, variable=fmt.variable, split=splits_of[d]
            )
    else:
        if fmt.threshold is not None:
            raise InputError(
                "--gt-threshold binarizes edge maps; label maps draw their "
                "boundaries where labels change (--gt-format edges reads "
                "edge maps)",
                folder,
            )

        def make(d):
            return LabelMapGroundTruth(
                d, void=fmt.void, variable=fmt.variable, split=splits_of[d]
            )

    splits_of = dict(parts)
    ds = _split_merge(folder, [d for d, _ in parts], split, make)
    if guessed is not None:  # the run records how the files were read
        ds.guessed_format = (name, str(guessed))
    return ds


def parse_ids(value) -> list[str] | None:
    """``--ids``: None, a list of ids, ``'a,b,c'`` (or ``'a b c'``, as ``"$(cat ids)"``
    gives), or a text file of ids, one a line, as typed (an id may hold spaces; blank
    lines are skipped, ``#`` starts a comment)."""
    if value is None:
        return None
    if not isinstance(value, (str, PathLike)):
        return [str(v) for v in value]
    text = str(value)
    path = Path(text)
    try:
        # a pipe counts: --ids <(grep ...) or /dev/stdin
        is_file = path.is_file() or (path.exists() and not path.is_dir() and "/" in text)
    except OSError:  # a list longer than a file name may be (ENAMETOOLONG)
        is_file = False
    if is_file:
        try:
            body = path.read_text(encoding="utf-8-sig")  # Notepad's BOM
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the id list: {exc}", path) from None
        # a line is one id: names with spaces ("cat 01") are ids too
        words = [line.split("#", 1)[0].strip() for line in body.splitlines()]
        words = [w for w in words if w]
        if not words:
            raise InputError("the id list is empty", path)
        return words
    words = text.replace(",", " ").split()
    if not words:
        raise InputError(f"--ids {text!r} names no image id (and is not a file)")
    looks_like_a_file = (
        "/" in text
        or os.sep in text
        or path.suffix.lower()
        in (
            ".txt",
            ".lst",
            ".csv",
            ".list",
        )
    )
    if len(words) == 1 and looks_like_a_file:  # a mistyped list, not an image id
        raise InputError("--ids names a file of ids that does not exist", path)
    return words


@dataclass(eq=False)
class Sample:
    """One dataset item and its prediction file: the input of a family's ``evaluate``.

    Reads are memoized on the sample, so several families evaluated on the same sample
    in one worker (``segbench all``) read each file once; the engine drops the sample
    after evaluating it.

    Attributes
    ----------
    item : DatasetItem
    prediction : Path, str or None
        The prediction file; None for families that score the ground truth alone. For
        a prediction held in memory, the name error messages give it
        (``pred['100007']``, ``batch index 3``).
    value : Prediction or None
        A prediction held in memory (``segbench.evaluate(pred={id: array})``, the
        streaming evaluators), read instead of ``prediction``
        (:func:`segbench.datasets.memory_prediction`).
    """

    item: DatasetItem
    prediction: Path | str | None = None
    value: object = None
    _memo: dict = field(default_factory=dict, repr=False)

    @property
    def id(self) -> str:
        return self.item.iid

    def ground_truth(self) -> list:
        """:meth:`DatasetItem.ground_truth`, read once."""
        if "gt" not in self._memo:
            self._memo["gt"] = self.item.ground_truth()
        return self._memo["gt"]

    def read_prediction(self, reader):
        """``reader(self.prediction)``, read once per reader."""
        if self.value is not None:  # in memory: already a validated Prediction
            return self.value
        if reader not in self._memo:
            if self.prediction is None:
                raise InputError(f"image {self.id!r} has no prediction")
            self._memo[reader] = reader(self.prediction)
        return self._memo[reader]

    def input_files(self) -> dict[str, list[Path | str]]:
        """The files a record of this sample depends on, by role."""
        out: dict[str, list[Path | str]] = {"gt": list(self.item.sources)}
        if self.prediction is not None and self.value is None:
            out["pred"] = [self.prediction]
        return out

    def prediction_digest(self) -> str:
        """SHA-256 of a prediction held in memory (its kind and arrays), which has no
        file to fingerprint."""
        import hashlib

        import numpy as np

        from ..io import Prediction

        value = self.value
        assert isinstance(value, Prediction)  # the only value with no file
        h = hashlib.sha256(str(value.kind).encode())
        for arr in (
            value.ucm2 if value.ucm2 is not None else value.pb,
            *(value.segs or ()),
        ):
            if arr is None:
                continue
            arr = np.ascontiguousarray(arr)
            h.update(f"{arr.dtype.str}{arr.shape}".encode())
            h.update(arr.tobytes())
        return h.hexdigest()

    def content_digest(self) -> str:
        """SHA-256 of the annotations themselves (label maps and boundaries), for
        ground truth that has no file to fingerprint."""
        import hashlib

        import numpy as np

        if self.item.annotation_loader is None and self.item.gt_path is None:
            return "none"  # no ground truth at all (counts imported as they are)
        h = hashlib.sha256()
        for ann in self.ground_truth():
            maps = (
                (ann.segmentation, ann.boundaries)
                if getattr(ann, "has_segmentation", True)
                else (ann.boundaries,)
            )
            for arr in maps:
                arr = np.ascontiguousarray(arr)
                h.update(f"{arr.dtype.str}{arr.shape}".encode())
                h.update(arr.tobytes())
        return h.hexdigest()

    def release(self) -> None:
        """Drop what was read, here and cached on the item (the engine calls this once
        the sample is evaluated, so a long serial run holds one image at a time)."""
        self._memo.clear()
        for cached in ("image", "annotations"):  # DatasetItem's cached properties
            self.item.__dict__.pop(cached, None)

    def __getstate__(self):
        return {
            "item": self.item,
            "prediction": self.prediction,
            "value": self.value,
            "_memo": {},
        }


def stray_predictions(pred_dir, found, all_ids) -> str | None:
    """The note naming the files of ``found`` (id -> path, a listing of ``pred_dir``)
    whose id is none of ``all_ids``, the whole ground truth's, or None: they are not
    scored, and a run short by them (``100007 .png``, another split's maps) would
    otherwise go unexplained."""
    known = set(all_ids)
    stray = [Path(p).name for iid, p in found.items() if iid not in known]
    if not stray:
        return None
    one = len(stray) == 1
    return (
        f"{pred_dir}: {len(stray)} prediction file{'' if one else 's'} "
        f"name{'s' if one else ''} no image of the ground truth and "
        f"{'is' if one else 'are'} not scored: {first_names(stray, 5)}"
    )


def pair_predictions(
    ids,
    pred_dir: str | PathLike,
    exts: tuple[str, ...],
    *,
    hint: str | None = None,
) -> dict[str, Path]:
    """Prediction ``<iid>.<ext>`` for every id; InputError lists the ids without one.

    ``hint`` is added to the error when the folder holds no usable file at all, and
    when a missing id has a file of another extension (e.g. which option reads the
    files that are there); such files are named in the error. Files of other ids are
    left out (:func:`stray_predictions` names them).
    """
    from ..io import check_all_present, list_files

    # a folder <iid>.<ext> of an id needed is named below, in the pairing's words;
    # one of another id is left out, as a file of it would be
    preds = list_files(pred_dir, exts, folders=False)
    ids = list(ids)
    if not preds and hint:
        raise InputError(
            f"no prediction file (.{'/.'.join(exts)}) for the {len(ids)} images: {hint}",
            pred_dir,
        )
    what = f"images have no prediction (.{'/.'.join(exts)})"
    covered = sum(i in preds for i in ids)
    # maps made for a subset (detect/ucm/nms --ids): say how to score that subset
    subset = (
        f"the predictions cover only {covered} of the {len(ids)} images: to score "
        "those, pass their ids with --ids (a list or a file)"
        if 0 < covered < len(ids)
        else None
    )
    missing = [i for i in ids if i not in preds]
    tails = _name_tails(missing, pred_dir)
    if tails:  # <iid>_fuse.png and the like: the files are there under longer names
        check_all_present(
            ids,
            preds,
            what,
            pred_dir,
            note=f"files named <iid><something>.<ext> are there ({first_names(tails)}): "
            "a prediction "
            "is read from <iid>.<ext> exactly, so rename them",
        )
    folders = [
        f"{i}.{e}" for i in missing for e in exts if (Path(pred_dir) / f"{i}.{e}").is_dir()
    ]
    if folders:  # the user sees the name there: say it is not a file
        check_all_present(
            ids,
            preds,
            what,
            pred_dir,
            note=first_names(folders)
            + (
                " is a folder, not a file"
                if len(folders) == 1
                else " are folders, not files"
            ),
        )
    unread = _unread_files(missing, pred_dir)
    if unread:  # the user sees a file there: say why it was not read
        shown = first_names(unread)
        why = hint or f"only .{'/.'.join(exts)} files are read"
        check_all_present(
            ids,
            preds,
            what,
            pred_dir,
            note=f"{shown} {'is' if len(unread) == 1 else 'are'} there but "
            f"not read: {why}" + (f"; {subset}" if subset else ""),
        )
    other = None
    if covered == 0 and preds:  # files of other images only: another split's?
        other = (
            f"none of its {len(preds)} prediction files ({first_names(sorted(preds))}) "
            "names an image of the ground truth: predictions of another split (check "
            "--split or the folders)?"
        )
    check_all_present(ids, preds, what, pred_dir, note=subset or other)
    return {i: preds[i] for i in ids}


def _name_tails(missing, pred_dir) -> list[str]:
    """Names of files in ``pred_dir`` that are a missing id followed by more than an
    extension (``100007_fuse.png``, ``100007-edges.png``), the first few."""
    if not missing:
        return []
    wanted = set(missing)
    try:
        names = sorted(p.name for p in Path(pred_dir).iterdir() if p.is_file())
    except OSError:
        return []
    found = []
    for name in names:
        head = re.match(r"(.+?)[_\-. ]", name)
        if head and head.group(1) in wanted and Path(name).stem != head.group(1):
            found.append(name)
            if len(found) > 3:
                break
    return found


def _unread_files(missing, pred_dir) -> list[str]:
    """Names of the files ``<iid>.<other ext>`` of the ``missing`` ids in ``pred_dir``."""
    if not missing:
        return []
    wanted = set(missing)
    try:
        return sorted(
            p.name
            for p in Path(pred_dir).iterdir()
            if p.stem in wanted and p.suffix and p.is_file() and not p.name.startswith(".")
        )
    except OSError:
        return []


def run_name(pred_dir: str | PathLike | None, name: str | None = None) -> str:
    """The name of a run: ``name``, else the first line of ``name.txt`` in the
    prediction folder, else the folder's name, skipping split names (``.../hed/test``
    is ``hed``) and a semantic-boundary class folder (``.../casenet/class_001`` is
    ``casenet``)."""
    if name:
        return str(name)
    if pred_dir is None:
        return "human"
    folder = Path(pred_dir).resolve()
    try:
        raw = (folder / "name.txt").read_bytes()
        # Notepad saves "Unicode" as UTF-16 with a byte-order mark, "UTF-8" with one
        utf16 = raw[:2] in (b"\xff\xfe", b"\xfe\xff")
        text = raw.decode("utf-16" if utf16 else "utf-8-sig").strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    if text:
        return text.splitlines()[0].strip()[:80]
    while (
        folder.name.lower() in SPLIT_NAMES or re.fullmatch(r"class_\d+", folder.name)
    ) and folder.parent != folder:
        folder = folder.parent
    return folder.name or str(pred_dir)
