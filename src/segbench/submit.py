"""Benchmark submissions: ``segbench submit``.

A submission is what the BSDS site asked for: one map per test image named
``<iid>.png`` or ``<iid>.bmp`` (8-bit grayscale soft boundaries or binary segment
boundaries; 16-bit accepted) or ``<iid>.mat`` (``ucm2`` or ``segs``), a one-line
``name.txt`` and an optional ``about.html`` with a short description. It comes as a
folder or as a ``.zip``/``.tar``/``.tar.gz`` archive (unpacked with
:func:`~segbench.datasets.safe_extract`; one wrapping folder is allowed).

:func:`submit` checks it completely before running anything (every missing, extra and
malformed file is listed in one error), copies the maps into a run folder, runs the
boundary benchmark (and the region benchmark for ``.mat`` submissions) and writes
``meta.json`` beside the results. Every string from the submitter is made safe:
the name is reduced to one line of plain text (``name``) with an escaped HTML form
(``name_html``), and ``about.html`` goes through :func:`sanitize_html`.
"""

from __future__ import annotations

import html
import json
import os
import shutil
import stat
import tempfile
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timezone
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .datasets import ABOUT_MAX, safe_extract, sanitize_html
from .datasets.bsds import BSDS300, Dataset, open_dataset, valid_iid
from .errors import InputError
from .io import (
    atomic_write_bytes,
    check_same_shape,
    claim_folder,
    image_size,
    read_prediction,
)

if TYPE_CHECKING:
    from .result import Result

__all__ = ["SubmissionError", "SubmissionResult", "clean_name", "sanitize_html", "submit"]

MAP_EXTS = (".png", ".bmp")
MAT_EXTS = (".mat",)
NAME_MAX = 80
#: Files a submission may hold besides the maps (case-insensitive).
_KNOWN = {"name.txt", "about.html", "about.htm"}
#: Junk that archivers and file managers add; ignored.
_JUNK_DIRS = {"__MACOSX"}
_JUNK_FILES = {"thumbs.db", "desktop.ini"}


# ---------------------------------------------------------------------------------------
# user text


def clean_name(text: str, *, max_length: int = NAME_MAX) -> str:
    """An algorithm name as one line of plain text.

    The first non-empty line, with control and format characters (bidirectional
    overrides included) removed, whitespace collapsed and cut to ``max_length``
    characters (an ellipsis marks the cut). Escape it (``html.escape``) wherever it
    goes into HTML; :func:`submit` stores both forms.
    """
    for line in str(text).splitlines():
        line = "".join(
            ch if unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp") else " "
            for ch in line
        )
        line = " ".join(line.split())
        if line:
            if len(line) > max_length:
                line = line[: max_length - 1].rstrip() + "\u2026"
            return line
    return ""


# ---------------------------------------------------------------------------------------
# validation


class SubmissionError(InputError):
    """A submission does not match the dataset split. ``missing`` (ids without a map),
    ``extra`` (files that do not belong) and ``malformed`` (``(file, problem)``) list
    everything found, not only the first problem."""

    def __init__(self, path, missing=(), extra=(), malformed=()):
        self.missing = list(missing)
        self.extra = list(extra)
        self.malformed = list(malformed)
        lines = ["the submission does not match the dataset:"]

        def block(title, rows):
            if rows:
                lines.append(f"  {title} ({len(rows)}):")
                lines.extend(f"    {r}" for r in rows[:25])
                if len(rows) > 25:
                    lines.append(f"    ... and {len(rows) - 25} more")

        block("missing", self.missing)
        block("extra", self.extra)
        block("malformed", [f"{f}: {why}" for f, why in self.malformed])
        super().__init__("\n".join(lines), path)


@dataclass
class SubmissionResult:
    """What :func:`submit` produced.

    Attributes
    ----------
    out_dir : Path
        The run folder.
    meta : dict
        The content of ``meta.json``.
    boundary : Result
        The boundary benchmark result (also in ``result.json``).
    region : Result or None
        The region benchmark result (``result_region.json``), for .mat submissions.
    """

    out_dir: Path
    meta: dict
    boundary: Result
    region: Result | None = None
    warnings: list = field(default_factory=list)


def _walk(root: Path) -> tuple[list[Path], list[tuple[str, str]]]:
    """Regular files below ``root`` (relative), and special entries to refuse."""
    files, bad = [], []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        d = Path(dirpath)
        keep = []
        for name in dirnames:
            p = d / name
            if name in _JUNK_DIRS:
                continue
            if p.is_symlink():
                bad.append((p.relative_to(root).as_posix(), "symbolic link"))
            else:
                keep.append(name)
        dirnames[:] = keep
        for name in filenames:
            p = d / name
            rel = p.relative_to(root).as_posix()
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                bad.append((rel, "symbolic link"))
            elif not stat.S_ISREG(st.st_mode):
                bad.append((rel, "not a regular file"))
            elif name.startswith(".") or name.lower() in _JUNK_FILES:
                continue
            else:
                files.append(Path(rel))
    return sorted(files), bad


def _content_root(root: Path) -> Path:
    """Descend through one wrapping folder (``algo/100007.png`` ...)."""
    entries = [
        p for p in root.iterdir() if not p.name.startswith(".") and p.name not in _JUNK_DIRS
    ]
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
        return entries[0]
    return root


def _read_text(path: Path, limit: int) -> str:
    with open(path, "rb") as f:
        raw = f.read(limit * 4 + 4)
    return raw.decode("utf-8-sig", errors="replace")  # a BOM is not part of the text


def _validate(
    root: Path, dataset: Dataset, split: str, *, strict: bool, name: str | None
) -> tuple[dict, str, str, list, str, str | None]:
    """Check a submission folder; return (maps, kind, name, warnings, about_raw,
    prediction kind of the first map in file-name order)."""
    files, special = _walk(root)
    expected = set(dataset.ids(split))
    others = {i for s in dataset.splits if s != split for i in dataset.ids(s)}
    maps: dict[str, Path] = {}
    extra: list[str] = []
    malformed: list[tuple[str, str]] = list(special)
    warnings: list[str] = []
    aux: dict[str, Path] = {}
    for rel in files:
        low = rel.name.lower()
        if len(rel.parts) == 1 and low in _KNOWN:
            aux["about.html" if low.startswith("about") else low] = root / rel
            continue
        ext = rel.suffix.lower()
        if ext not in MAP_EXTS + MAT_EXTS or len(rel.parts) != 1:
            extra.append(
                f"{rel.as_posix()}: not a map (<iid>.png, .bmp or .mat), "
                "name.txt or about.html"
            )
            continue
        iid = rel.stem
        if not valid_iid(iid):
            malformed.append((rel.as_posix(), "not a valid image id"))
        elif iid not in expected:
            where = " (an image of another split)" if iid in others else ""
            extra.append(f"{rel.as_posix()}: no image {iid!r} in split {split!r}{where}")
        elif iid in maps:
            malformed.append(
                (rel.as_posix(), f"a second map for image {iid!r} (also {maps[iid].name})")
            )
        else:
            maps[iid] = root / rel
    kinds = {p.suffix.lower() in MAT_EXTS for p in maps.values()}
    if len(kinds) > 1:
        malformed.append(
            ("(all maps)", "mixes .png/.bmp images and .mat files; submit one kind")
        )
    kind = "mat" if kinds == {True} else "image"
    missing = sorted(expected - set(maps))
    # the name
    if name is None:
        if "name.txt" not in aux:
            malformed.append(
                ("name.txt", "missing: a one-line name of the algorithm is required")
            )
            name = ""
        else:
            name = clean_name(_read_text(aux["name.txt"], NAME_MAX * 4))
            if not name:
                malformed.append(("name.txt", "empty"))
    else:
        name = clean_name(name)
        if not name:
            malformed.append(("name", "empty"))
    about = _read_text(aux["about.html"], ABOUT_MAX) if "about.html" in aux else ""
    # content: decode each map and compare its size with the ground truth's
    pred_kinds = {}
    for iid, p in sorted(maps.items()):
        pred_kind, problem = _check_map(p, dataset[iid])
        if problem:
            malformed.append((p.name, problem))
        pred_kinds[f"{iid}{p.suffix.lower()}"] = pred_kind
    if extra and not strict:
        warnings.extend(f"ignored {e}" for e in extra)
        extra = []
    if missing or extra or malformed:
        raise SubmissionError(root, missing, extra, malformed)
    first = pred_kinds[min(pred_kinds)] if pred_kinds else None
    return maps, kind, name, warnings, about, first


def _check_map(path: Path, item) -> tuple[str | None, str | None]:
    """(prediction kind, None) of a good map, (None, problem) of a bad one. The item's
    shape reads its segmentations only (boundaries are computed lazily)."""
    try:
        if path.suffix.lower() in MAP_EXTS:  # the size from the header, before decoding
            check_same_shape(image_size(path), item.shape, path)
        pred = read_prediction(path)
        check_same_shape(pred, item.shape, path)
    except InputError as exc:
        return None, exc.problem
    return pred.kind, None


# ---------------------------------------------------------------------------------------
# the run


#: Bytes allowed per map when unpacking a submission, per pixel of the largest image
#: plus a fixed part: a 16-bit PNG stored without compression takes 2 bytes a pixel
#: (plus a filter byte a row and its chunks), an 8-bit BMP 1; a ``.mat`` of doubles 8
#: a pixel for each segmentation, 32 for a doubleSize ucm2.
_MAP_ALLOWANCE = (4, 64 * 1024)
_MAT_ALLOWANCE = (64, 1024 * 1024)
#: name.txt, about.html and the odd stray file (a folder's .DS_Store) together.
_TEXT_ALLOWANCE = 1024 * 1024
#: Members beyond one per image: the text files, wrapping folders, stray files.
_SPARE_MEMBERS = 64


def _intake_bound(ds, split: str):
    """(bound, member cap) for unpacking a submission for ``split`` of ``ds``: what
    that many maps of the largest image size can take in their format, plus the text
    files. An archive claiming more is refused before, and while, anything is written."""
    ids = ds.ids(split)
    pixels = 0
    for iid in ids:
        item = ds[iid]
        h, w = image_size(item.image_path) if item.image_path is not None else item.shape
        pixels = max(pixels, h * w)

    def bound(names) -> int:
        per, fixed = (
            _MAT_ALLOWANCE
            if any(n.lower().endswith(".mat") for n in names)
            else _MAP_ALLOWANCE
        )
        return len(ids) * (per * pixels + fixed) + _TEXT_ALLOWANCE

    return bound, len(ids) + _SPARE_MEMBERS


#: The file that marks a run folder as made by :func:`submit` (only such a folder is
#: ever written into again, and only what submit wrote there is replaced).
RUN_MARKER = ".segbench-submission"


def _claim_run_folder(out: Path, src: Path) -> None:
    """Make ``out`` a run folder of ours, or refuse before anything is touched.

    Refused: ``out`` equal to, inside, or containing the submission; a file; a folder
    that holds anything but is not marked as a run folder of :func:`submit`.
    """
    claim_folder(
        out,
        RUN_MARKER,
        "segbench submit",
        "a run folder of segbench submit: "
        "its predictions/ and results are replaced on resubmission\n",
        inputs={"submission": src},
        apart=True,
    )


def _open_presentation(dataset, presentation: str | None):
    """The dataset of ``submit``, its BSDS300 segmentations of ``presentation``."""
    if presentation is None:
        return open_dataset(dataset)
    if not isinstance(dataset, BSDS300):
        ds = open_dataset(dataset, presentation=presentation)
    else:
        ds = (
            dataset
            if dataset.presentation == presentation
            else BSDS300(dataset.root, presentation=presentation)
        )
    if not isinstance(ds, BSDS300):
        raise InputError(
            f"--presentation applies to BSDS300 (segmentations made on "
            f"colour and on grayscale images); this is {ds.name}",
            ds.root,
        )
    return ds


def _check_presentation(ds, split: str, presentation: str | None) -> None:
    """Refuse, before anything is written, a split with images that have no
    segmentation of ``presentation`` (a BSDS300 tree with colour ones only, say)."""
    if presentation is None:
        return
    bare = [iid for iid in ds.ids(split) if not ds[iid].sources]
    if not bare:
        return
    kinds = ("color", "gray") if presentation == "all" else (presentation,)
    others = [
        k
        for k in ("color", "gray")
        if k not in kinds and (Path(ds.root) / "human" / k).is_dir()
    ]
    has = f"; it has {' and '.join(others)} ones" if others else ""
    shown = ", ".join(bare[:10]) + (" ..." if len(bare) > 10 else "")
    raise InputError(
        f"--presentation {presentation}: {len(bare)} of "
        f"{len(ds.ids(split))} images of split {split!r} have no "
        f"{' or '.join(kinds)} segmentation "
        f"(human/{'{' + ','.join(kinds) + '}' if len(kinds) > 1 else kinds[0]}"
        f"/<uid>/<iid>.seg){has}: {shown}",
        ds.root,
    )


def _protocol_of(ds) -> str | None:
    """The boundary protocol a submission to ``ds`` is scored with: a BSDS300 one as
    the BSDS300 page's benchmark scored it (30 thresholds: "we threshold the boundary
    map at many levels, e.g. 30", the page's "benchmark" section, copy in
    ../shared/reference/bsds-site-page-zh.md; segbench 1.2.0 Benchmark/boundaryBench.m
    ``nthresh=30``: the ``bsds300`` preset, segbench.boundary.PROTOCOLS), not BSR's 99;
    None (the benchmark's defaults) for any other dataset."""
    return "bsds300" if isinstance(ds, BSDS300) else None


def submit(
    path: str | PathLike,
    out_dir: str | PathLike,
    *,
    dataset,
    split: str = "test",
    name: str | None = None,
    strict: bool = True,
    workers: int = 1,
    progress: bool = True,
    nthresh: int | None = None,
    max_dist: float | None = None,
    max_bytes: int = 2 * 1024**3,
    plot: bool = True,
    presentation: str | None = None,
) -> SubmissionResult:
    """Validate a submission, run the benchmarks, write a run folder.

    Parameters
    ----------
    path : str or PathLike
        A folder, or a ``.zip``/``.tar``/``.tar.gz``/``.tgz`` archive, holding
        ``<iid>.png|bmp`` maps or ``<iid>.mat`` (ucm2/segs) for every image of the
        split, ``name.txt`` and optionally ``about.html`` (possibly inside one
        wrapping folder).
    out_dir : str or PathLike
        The run folder: new, empty, or one an earlier ``submit`` made (it carries a
        ``.segbench-submission`` marker); rerunning into it resumes the benchmark.
        A folder equal to, inside or containing the submission, or any other folder
        with files in it, is refused before anything is touched.
    dataset : Dataset or str or PathLike
        The dataset, or a root that :func:`~segbench.datasets.open_dataset` opens.
    split : str, default 'test'
    name : str, optional
        The algorithm's name, replacing ``name.txt`` (which is then optional).
    strict : bool, default True
        Refuse files that do not belong (maps of other images, unknown files); with
        False they are ignored and listed in ``meta.json["warnings"]``.
    workers, progress, nthresh, max_dist, plot
        Passed to the benchmark; ``nthresh`` and ``max_dist`` left None take the
        benchmark's defaults (99 and the BSDS 0.0075: :mod:`segbench.families`), on a
        BSDS300 those of its site's benchmark (the ``bsds300`` protocol: 30
        thresholds, human maps thinned), recorded as ``meta.json["protocol"]``.
    presentation : {'color', 'gray', 'all'}, optional
        BSDS300 only: score against the segmentations made on colour images (the
        default), on grayscale ones (the ranking of greyscale algorithms), or both;
        recorded as ``meta.json["presentation"]`` (the site ranks each presentation
        apart). InputError for another dataset.
    max_bytes : int
        Overall cap on the unpacked size of an archive. The cap applied is the smaller
        of this and what the split's maps can legitimately take: per image, 4 bytes a
        pixel + 64 KiB for PNG/BMP maps, 64 bytes a pixel + 1 MiB when the archive holds
        ``.mat`` files, plus 1 MiB for the text files; at most one member per image
        plus 64.

    Returns
    -------
    SubmissionResult

    Raises
    ------
    SubmissionError
        Listing every missing map, extra file and malformed file (unreadable, colour,
        wrong size, a second map for one id, no or empty name.txt); nothing is run.
    UnsafeArchiveError
        An archive member with an absolute path, ``..``, a link, a device or a FIFO
        (nothing is unpacked); symbolic links and special files in a folder
        submission are refused the same way (as malformed entries).

    Notes
    -----
    The run folder::

        meta.json             name, name_html, about_html, kind, date, ... (below)
        predictions/<iid>.*   the submitted maps, copied
        result_boundary.json  boundary Result (metrics ODS/OIS/AP/R50, per image, PR curve)
        eval_bdry*.txt, <iid>_ev1.txt, pr_curve.png    official boundary files
        result_region.json, eval_cover*.txt, eval_RI_VOI*.txt   region (.mat only)
        manifest.json, .segbench-records/   the run folder's (segbench.engine.RunFolder)

    ``meta.json`` holds ``name`` (plain text, escape it), ``name_html`` (escaped),
    ``about_html`` (sanitized, insert as is), ``kind`` (``'boundary'`` or
    ``'boundary+region'``), ``prediction_kind`` (``'soft'``, ``'ucm2'`` or ``'segs'``),
    ``date`` (ISO 8601 UTC), ``dataset`` (name, root, split), ``n_images``,
    ``source`` (file name of the submission), ``files`` (result files by role),
    ``warnings`` and ``segbench`` (version).
    """
    from .engine import holding_run_folder

    src = Path(path)
    if not src.exists():
        raise InputError("submission not found", src)
    ds = _open_presentation(dataset, presentation)
    ds.ids(split)  # InputError naming the splits there are, if there is no such split
    _check_presentation(ds, split, presentation)
    out = Path(out_dir)
    _claim_run_folder(out, src)
    from .api import evaluate
    from .engine import (
        EVERY_FAMILY,
        RunFolder,
        mark_writing,
        refuse_another_algorithm,
        unmark_writing,
    )
    from .io import copy_file

    # the folder held for the whole submission: its copied predictions, the run, the
    # plot and meta.json (a second submission into it meanwhile is refused)
    with holding_run_folder(out):
        with tempfile.TemporaryDirectory(prefix=".upload-", dir=out) as tmp:
            if src.is_dir():
                if src.is_symlink():
                    raise InputError(
                        "the submission folder is a symbolic link; give the real folder",
                        src,
                    )
                root = src
            else:
                bound, members = _intake_bound(ds, split)
                safe_extract(
                    src, Path(tmp), max_bytes=max_bytes, max_members=members, bound=bound
                )  # refuses a non-archive
                root = _content_root(Path(tmp))
            maps, kind, clean, warnings, about_raw, pred_kind = _validate(
                root, ds, split, strict=strict, name=name
            )
            # nothing of the folder changes before the name is known to be its own
            refuse_another_algorithm(
                out, ["boundary", "region"] if kind == "mat" else ["boundary"], clean
            )
            # until meta.json is written, every file of the folder may be of two
            # submissions: marked so (the run's own marks are inside this one)
            mark_writing(out, [EVERY_FAMILY])
            pred_dir = out / "predictions"
            if pred_dir.exists():
                shutil.rmtree(pred_dir)
            pred_dir.mkdir()
            for iid, p in maps.items():
                copy_file(p, pred_dir / f"{iid}{p.suffix.lower()}")
        about_html = sanitize_html(about_raw)
        region = None
        # the benchmark's own defaults where none is given (declared once, in the registry)
        given = {
            "nthresh": nthresh,
            "max_dist": None if max_dist is None else float(max_dist),
        }
        opts: dict[str, Any] = dict(
            split=split,
            name=clean,
            workers=workers,
            progress=progress,
            plot=False,
            **{k: v for k, v in given.items() if v is not None},
        )
        if presentation is not None:
            opts["presentation"] = presentation  # recorded in the results' params
        protocol = _protocol_of(ds)
        if protocol is not None:
            opts["protocol"] = protocol
        if kind == "mat":
            boundary, region = evaluate("all", ds, pred_dir, out, **opts)
        else:
            boundary = evaluate("boundary", ds, pred_dir, out, **opts)
        run = RunFolder(out)
        files = {
            "boundary_result": run.result_path("boundary").name,
            "eval_bdry": "eval_bdry.txt",
            "eval_bdry_img": "eval_bdry_img.txt",
            "eval_bdry_thr": "eval_bdry_thr.txt",
            "predictions": "predictions",
        }
        if plot:
            from .boundary import plot_pr

            m = boundary.metrics
            plot_pr(
                [
                    {
                        "name": clean,
                        "recall": boundary.curves["recall"],
                        "precision": boundary.curves["precision"],
                        "ods": (m["ODS_recall"], m["ODS_precision"], m["ODS"]),
                    }
                ],
                out / "pr_curve.png",
                title=clean,
            )
            files["pr_curve"] = "pr_curve.png"
        if region is not None:
            files.update(
                {
                    "region_result": run.result_path("region").name,
                    "eval_cover": "eval_cover.txt",
                    "eval_RI_VOI": "eval_RI_VOI.txt",
                }
            )
        meta = {
            "name": clean,
            "name_html": html.escape(clean, quote=True),
            "about_html": about_html,
            "kind": "boundary+region" if region is not None else "boundary",
            "prediction_kind": pred_kind,
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "dataset": {
                "name": ds.name,
                "root": None if ds.root is None else str(Path(ds.root).resolve()),
                "split": split,
            },
            **({"presentation": presentation} if presentation is not None else {}),
            **({"protocol": protocol} if protocol is not None else {}),
            "n_images": len(maps),
            "source": src.name,
            "files": files,
            "warnings": warnings,
            "segbench": __version__,
        }
        atomic_write_bytes(
            out / "meta.json",
            (json.dumps(meta, indent=1, ensure_ascii=False) + "\n").encode(),
        )
        unmark_writing(out, [EVERY_FAMILY])
        return SubmissionResult(out, meta, boundary, region, warnings)
