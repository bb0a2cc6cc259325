"""Folder runners of the algorithms: a boundary detector over a folder of photographs
(:func:`detect_folder`), Dollar's edge NMS (:func:`nms_folder`) and OWT-UCM
(:func:`ucm_folder`) over a folder of soft maps. ``segbench detect``, ``segbench nms``
and ``segbench ucm`` are these functions with their options parsed.

Each one checks its options, claims the output folder (refusing, before anything is
written, a folder that another command or the user made, and the input folder itself),
removes the maps that its records say an earlier run of its own wrote and that this run
will not write again (never a file of the user's: those are named in a warning), and
maps the per-file function of :mod:`segbench.algorithms` over the inputs through
:func:`map_items`, keeping a record of every map so that a rerun with the same settings
reuses it (:class:`MapRecords`).

They live in the engine, not in :mod:`segbench.algorithms`: the algorithms are a layer
below the engine and never import its executor. The algorithms are imported on first
call, so importing :mod:`segbench.engine` loads no detector.
"""

from __future__ import annotations

import json
import math
import numbers
import os
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from functools import partial
from os import PathLike
from pathlib import Path
from typing import Any

from .datasets import BSDS500, parse_ids
from .engine import (
    MAP_FOLDER_MARKERS,
    MapRecords,
    check_workers,
    fingerprint,
    lock_run_folder,
    made_and_recorded,
    map_items,
    open_executor,
    release_run_folder,
    scheduler_address,
)
from .errors import ClusterLostError, InputError, OutputError, first_names
from .io import (
    check_all_present,
    claim_folder,
    list_files,
    read_image,
    read_prediction,
    write_soft_map,
)

#: The file that marks a folder as written by :func:`nms_folder` (``segbench nms``),
#: :func:`ucm_folder` (``segbench ucm``) or :func:`detect_folder` (``segbench
#: detect``): only such a folder (or an empty or new one) is ever written into.
MARKERS = MAP_FOLDER_MARKERS

#: Inputs of nms_folder and ucm_folder: soft maps (and, for ucm, .npy oriented stacks).
SOFT_EXTS = (".png", ".bmp", ".npy")
#: Inputs of detect_folder: photographs.
IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff")
#: The gPb detectors (their own runner, :func:`segbench.algorithms.gpb_file`): its
#: output and the suffix of the maps.
GPB_DETECTORS = {"gpb": ("soft", ".png"), "gpb-owt-ucm": ("ucm", ".mat")}
#: Detectors that run a model file of the user's (``--model``): structured edges.
MODEL_DETECTORS = ("se",)
_LEVELS = ("sigmoid", "mean")
_PROTOCOLS = ("martin2004",)


@dataclass(frozen=True)
class FolderResult:
    """What a folder runner wrote.

    Attributes
    ----------
    command : {'nms', 'ucm', 'detect'}
        The runner (and the ``segbench`` command) that wrote the folder.
    out : Path
        The output folder.
    n_maps : int
        Maps in the folder after the run, one per input file (for ``detect``: per
        image; :meth:`to_dict` calls it ``n_images`` there).
    n_reused : int
        Of these, the maps kept from an earlier run with the same settings and input.
    settings : dict
        Everything the maps depend on besides their inputs, as recorded in the folder's
        marker and records (``source`` is the input folder).
    kind : {'soft', 'ucm2', 'orientation'}
        ``'orientation'``: structured edges' orientation maps ``<id>.npy``
        (``detect --detector se --orientation``);
        ``'soft'``: soft boundary maps in [0, 1] (``<id>.png``, 16-bit unless ``nms``
        wrote ``png8``, or ``<id>.npy``) for ``segbench boundary``; ``'ucm2'``:
        doubleSize ultrametric contour maps ``<id>.mat`` for ``segbench region`` and
        ``segbench all``.
    ids : tuple of str or None
        The images ``--ids`` chose (None: every input of the folder).
    """

    command: str
    out: Path
    n_maps: int
    n_reused: int
    settings: dict[str, Any] = field(hash=False)
    kind: str
    ids: tuple[str, ...] | None = None

    def _reused_note(self) -> str:
        # MapRecords.note's words, from the counts alone
        return (
            f" ({self.n_reused} of {self.n_maps} map{'' if self.n_maps == 1 else 's'} "
            "reused from the earlier run)"
            if self.n_reused
            else ""
        )

    def _ids_option(self) -> str:
        """`` --ids ...`` for the scoring command a headline suggests: the maps cover
        only these images."""
        if self.ids is None:
            return ""
        return " --ids " + (",".join(self.ids) if len(self.ids) <= 5 else "<the same ids>")

    def headline(self) -> str:
        """The one line ``segbench nms|ucm|detect`` prints."""
        s, out, n, note = self.settings, self.out, self.n_maps, self._reused_note()
        ids = self._ids_option()
        maps = "map" if n == 1 else "maps"
        if self.command == "nms":
            smooth = "convTri(E, 1) first" if s["presmooth"] else "no presmoothing"
            return (
                f"thinned {n} {maps} into {out} ({s['format']}; r={s['r']} s={s['s']} "
                f"m={s['m']:g}, {smooth}){note}"
            )
        if self.command == "ucm":
            return (
                f"wrote {n} ultrametric contour {maps} into {out} (ucm2 .mat, "
                f"doubleSize){note}: score them with 'segbench region --pred {out}{ids}'"
            )
        detector, weights = s["detector"], s["weights"]
        multigrid = s.get("multigrid_images") or 0
        solver = (
            f", the multigrid eigensolver for {multigrid} of {n} images"
            + (
                f" (above {s['multigrid_above'] / 1e6:g} MP)"
                if s["eigensolver"] == "auto"
                else ""
            )
            if multigrid
            else ""
        )
        if detector == "gpb-owt-ucm":
            return (
                f"wrote {n} ultrametric contour {maps} of gPb-owt-ucm into {out} "
                f"(ucm2 .mat{solver}){note}: score them with 'segbench all --pred "
                f"{out}{ids}'"
            )
        how = (
            ""
            if weights is None
            else f" ({weights} weights)"
            if isinstance(weights, str)
            else f" (weights of {weights['file']})"
        )
        size = ", half resolution" if s["resolution"] == "half" else ""
        if detector == "se":
            how = f" (model {s['model']['file']}, sharpen {s['sharpen']}" + (
                ", multiscale)" if s["multiscale"] else ")"
            )
            if s.get("output") == "orientation":
                return (
                    f"wrote {n} orientation {maps} of se{how} into {out} (.npy, float32 "
                    f"radians in [0, pi)){note}"
                )
            return (
                f"wrote {n} soft {maps} of se{how} into {out} (16-bit PNG, unthinned)"
                f"{note}: score them with 'segbench boundary --pred {out} --nms presmooth=0{ids}'"
            )
        return (
            f"wrote {n} soft {maps} of {detector}{how} into {out} (16-bit PNG{size}"
            f"{solver}){note}"
        )

    def to_dict(self) -> dict[str, Any]:
        """What ``segbench nms|ucm|detect --json`` prints: the counts, the output folder
        and the settings (JSON-serializable)."""
        count = "n_images" if self.command == "detect" else "n_maps"
        return {
            count: self.n_maps,
            "n_reused": self.n_reused,
            "out": str(self.out),
            **self.settings,
            **({} if self.ids is None else {"ids": list(self.ids)}),
        }


# -- per-file work (module level, so that worker processes can run it) --------------


def _nms_one(job, **options):
    from .algorithms import nms_file

    src, dst = job
    nms_file(src, dst, **options)
    return dst


def _ucm_one(job, **options):
    from .algorithms import ucm_file

    src, dst = job
    ucm_file(src, dst, **options)
    return dst


def _detect_half(src, dst, detector: str, weights):
    """``detect_file`` on the photograph at half resolution (the 2004 protocol's cells,
    :func:`segbench.boundary.halve_image`); errors name ``src``."""
    from .algorithms import detect
    from .boundary import halve_image

    image, half = read_image(src), None
    try:
        half = halve_image(image)
        pb = detect(half, detector, weights=weights)
    except InputError as e:
        if e.path is None:
            if half is not None:  # the detector saw the halved image: say so
                raise InputError(
                    f"{e.problem} at half resolution (--protocol martin2004 "
                    f"halves this {image.shape[0]}x{image.shape[1]} (HxW) image to "
                    f"{half.shape[0]}x{half.shape[1]})",
                    src,
                ) from None
            raise InputError(e.problem, src) from None
        raise
    return write_soft_map(dst, pb, bits=16)


def _detect_one(
    job,
    *,
    detector: str,
    weights,
    half: bool,
    rsz: float,
    se_options=None,
    model: str | None = None,
    eigensolver: str = "auto",
):
    src, dst = job
    if detector in MODEL_DETECTORS:
        from .algorithms import se_file

        se_file(src, dst, model, **(se_options or {}))
    elif half:
        _detect_half(src, dst, detector, weights)
    elif detector in GPB_DETECTORS:
        from .algorithms import gpb_file

        gpb_file(
            src, dst, output=GPB_DETECTORS[detector][0], rsz=rsz, eigensolver=eigensolver
        )
    else:
        from .algorithms import detect_file

        detect_file(src, dst, detector, weights=weights)
    return dst


# -- the shared steps -----------------------------------------------------------------


def _check_workers(workers, scheduler) -> None:
    """Refused before the folder is claimed (the executor would only see it later)."""
    if scheduler is not None:
        scheduler_address(scheduler)  # its form; it is reached when the work starts
    else:
        check_workers(workers)


def _select(found: dict, ids, folder: Path, what: str) -> dict:
    """The inputs of ``--ids`` (all of them without it), in the folder's order;
    InputError naming the ids that have no input file in ``folder``."""

    wanted = parse_ids(ids)
    if wanted is None:
        return found
    check_all_present(
        wanted,
        found,
        "ids of --ids have no file in this folder",
        folder,
        note=f"it holds {len(found)} {what}",
    )
    keep = set(wanted)
    return {iid: path for iid, path in found.items() if iid in keep}


def _claim(
    out: Path,
    source: Path,
    option: str,
    command: str,
    settings: dict,
    ids,
    suffix: str,
    others=(),
):
    """Make ``out`` a folder of ``segbench <command>`` (marked by its marker, which
    records the settings), or refuse before anything is written; never the input
    folder. In a folder of an earlier run, the maps (``.png``, ``.npy``, ``.mat``) of
    that run that this one will not write again are removed: an earlier run's maps of
    other images, or in another format, would otherwise be read with this run's. The
    maps of ``others`` (inputs left out by ``--ids``) made with these same settings
    stay. Only files that the command's records say it wrote, as they still are, are
    removed; any other map-like file is left and named in one warning. Returns the
    folder's lock (:func:`segbench.engine.lock_run_folder`), which :func:`_run`
    releases: a second run into the folder meanwhile is refused, naming this one."""

    marker, owner = MARKERS[command], f"segbench {command}"
    earlier = (out / marker).is_file() and not out.is_symlink()
    note = (
        f"written by {owner}; its maps are replaced when it runs again\n"
        + json.dumps(settings, indent=1)
        + "\n"
    )
    # a second run into the folder at once would remove and replace this one's maps
    # and its marker's settings: in a folder of an earlier run, the lock comes first
    lock = lock_run_folder(out) if earlier else None
    try:
        claim_folder(out, marker, owner, note, inputs={option: source})
        if lock is None:  # a new folder: made by the claim, locked now
            lock = lock_run_folder(out)
        if earlier:
            _replace_earlier(out, command, owner, settings, ids, suffix, others)
    except BaseException:
        release_run_folder(lock)
        raise
    return lock


def _replace_earlier(out, command, owner, settings, ids, suffix, others) -> None:
    """:func:`_claim` in a folder of an earlier run: its maps this run will not write
    again removed (those of ``others`` made with these settings kept), a user's maps
    refused or named."""
    keep = {f"{iid}{suffix}" for iid in ids}
    spare = {f"{iid}{suffix}" for iid in others}
    # a file this run would write over that the records do not say it wrote, as it is
    # now: the user's (or one edited since). Refused before anything is touched.
    theirs = sorted(
        name
        for name in keep
        if (out / name).exists() and MapRecords.written(out, command, out / name) is None
    )
    if theirs:
        raise InputError(
            f"{len(theirs)} file(s) this run would replace were not written by {owner} "
            f"or were changed since: {first_names(theirs, 5)}; move them away (or "
            "delete them if a run stopped as it wrote them), then rerun",
            out,
        )
    current = MapRecords.recorded_settings(settings)
    foreign = []
    for old in sorted(out.iterdir()):
        if old.suffix not in (".png", ".npy", ".mat") or not old.is_file():
            continue
        key = MapRecords.written(out, command, old)
        if old.name in keep:
            # made with other settings: removed now, not when this run comes to it, so
            # a run stopped midway leaves no map of the old settings under the new
            if key is not None and key.get("settings") != current:
                old.unlink()
                (MapRecords.folder(out, command) / f"{old.stem}.json").unlink(
                    missing_ok=True
                )
            continue
        if key is None:
            foreign.append(old.name)
        elif not (old.name in spare and key.get("settings") == current):
            old.unlink()
            (MapRecords.folder(out, command) / f"{old.stem}.json").unlink(missing_ok=True)
    if foreign:
        import warnings

        shown = ", ".join(foreign[:5]) + (" ..." if len(foreign) > 5 else "")
        warnings.warn(
            f"{out}: {len(foreign)} file{'s' if len(foreign) > 1 else ''} "
            f"that {owner} did not write left in place: {shown}",
            stacklevel=3,
        )


def _run(
    command: str,
    out: Path,
    settings: dict,
    jobs: list,
    work,
    *,
    kind: str,
    workers: int,
    scheduler,
    progress: bool,
    desc: str,
    ids=None,
    lock=None,
) -> FolderResult:
    """Make the maps of ``jobs`` that no earlier run left as they are now wanted,
    recording each one as it arrives (a killed run keeps every finished map); then
    release ``lock`` (:func:`_claim`'s)."""
    resume, kept = None, 0
    try:
        resume = MapRecords(out, command, settings, jobs)
        # each map recorded where it is made: a killed run leaves no map without a record
        recorded = partial(made_and_recorded, work, str(resume.root))
        if scheduler is None:
            # no executor: map_items starts worker processes only when there is work
            done = map_items(
                recorded, resume.jobs(), workers=workers, progress=progress, desc=desc
            )
            for _ in done:
                kept += 1
        else:
            with open_executor(workers, scheduler) as executor:
                for _ in map_items(
                    recorded, resume.jobs(), executor=executor, progress=progress, desc=desc
                ):
                    kept += 1
    except ClusterLostError as exc:  # or WorkerDiedError: counted over the folder
        reused = 0 if resume is None else resume.reused
        raise type(exc)(reused + kept, len(jobs)) from None
    finally:
        release_run_folder(lock)
    return FolderResult(command, out, len(jobs), resume.reused, settings, kind, ids)


def _warn_if_thinned(path: Path) -> None:
    """One warning when the first map looks NMS-thinned (its watershed would flood
    through the gaps of its lines)."""
    import warnings

    import numpy as np

    from .algorithms import looks_thinned

    try:
        if path.suffix.lower() == ".npy" and np.load(path, mmap_mode="r").ndim == 3:
            return
        pb = read_prediction(path, kind="soft").pb
    except Exception:  # noqa: BLE001 - any bad file: the run names it when it reaches it
        return
    if looks_thinned(pb):
        warnings.warn(
            f"{path.name} looks thinned (NMS): the watershed of one-pixel "
            "lines floods through their gaps; use --smooth 1 (or the raw, "
            "unthinned maps)",
            stacklevel=3,
        )


# -- the runners ----------------------------------------------------------------------


def nms_folder(
    pred: str | PathLike,
    out: str | PathLike,
    *,
    r: int = 1,
    s: int = 5,
    m: float = 1.01,
    presmooth: bool = True,
    fmt: str = "png16",
    ids=None,
    workers: int = 1,
    scheduler: str | None = None,
    progress: bool = True,
) -> FolderResult:
    """Thin every soft map of a folder with Dollar's edge NMS (``segbench nms``).

    Parameters
    ----------
    pred : path
        Folder of raw soft maps ``<id>.png|.bmp|.npy`` (8/16-bit grey PNG, BMP, or
        ``.npy`` with values in [0, 1]); ids are the file stems.
    out : path
        Output folder: new, empty, or one this function wrote (marked by
        ``.segbench-nms``, which records the settings); any other folder, and ``pred``
        itself, is refused before anything is written.
    r : int, default 1
        Suppression radius in pixels along the normal.
    s : int, default 5
        Border band in pixels, ramped linearly to 0.
    m : float, default 1.01
        Tolerance: a pixel survives while ``m * value`` >= its neighbours.
    presmooth : bool, default True
        ``convTri(E, 1)`` first (False for maps that are smooth already).
    fmt : {'png16', 'png8', 'npy'}
        ``OUT/<id>.png`` as 16-bit (``round(65535 v)``) or 8-bit (``round(255 v)``, as
        the MATLAB scripts save) PNG, or ``OUT/<id>.npy`` with the exact values.
    ids : list of str, str or path, optional
        Only these ids of ``pred`` (as ``--ids``: a list, ``'a,b'`` or a file of ids);
        an id without a file there is an InputError. Maps of the others made earlier
        with the same settings stay in ``out``.
    workers : int, default 1
        Local worker processes; the maps are identical for any number.
    scheduler : str, optional
        A ``dask.distributed`` scheduler (``tcp://host:port`` or its ``.json`` file) to
        run on instead; ``out`` must be a folder its workers can write.
    progress : bool, default True
        A progress bar on stderr.

    Returns
    -------
    FolderResult
        ``command='nms'``, ``kind='soft'``.

    Raises
    ------
    InputError
        A bad option, no soft map in ``pred``, an ``out`` that is not this function's,
        or an unreadable map (the message names the file).

    Notes
    -----
    The recipe of the edges toolbox as HED, RCF and PiDiNet are evaluated:
    :func:`segbench.algorithms.edge_nms` on each map
    (:func:`segbench.algorithms.nms_file`).
    A rerun into ``out`` with the same settings reuses each map whose input is
    unchanged and which is still as written; maps of an earlier run that this one does
    not write (other ids, the other suffix) are removed, but only those its records say
    it wrote (and as it wrote them): any other file is left and named in one warning.
    """
    from .algorithms import NMS_FORMATS
    from .primitives import nms_options

    pred, out = Path(pred), Path(out)
    if not isinstance(m, numbers.Real) or isinstance(m, bool):
        raise InputError(f"--m must be a number, got {m!r}")
    nms_options(r, s, m, prefix="--")  # the kernel's own bounds, before any file
    if fmt not in NMS_FORMATS:
        raise InputError(f"--format must be one of {', '.join(NMS_FORMATS)}, got {fmt!r}")
    _check_workers(workers, scheduler)
    every = list_files(pred, SOFT_EXTS)
    if not every:
        raise InputError(f"no soft maps ({', '.join(SOFT_EXTS)}) in this folder", pred)
    maps = _select(every, ids, pred, "soft maps")
    # the CLI's types, so that a folder made from Python resumes from the CLI and back
    r, s, m, presmooth = int(r), int(s), float(m), bool(presmooth)
    suffix = NMS_FORMATS[fmt][0]
    settings = {
        "r": r,
        "s": s,
        "m": m,
        "presmooth": presmooth,
        "format": fmt,
        "source": str(pred),
    }
    lock = _claim(
        out,
        pred,
        "--pred",
        "nms",
        settings,
        maps,
        suffix,
        others=[i for i in every if i not in maps],
    )
    jobs = [(str(path), str(out / f"{iid}{suffix}")) for iid, path in maps.items()]
    work = partial(_nms_one, fmt=fmt, r=r, s=s, m=m, presmooth=presmooth)
    return _run(
        "nms",
        out,
        settings,
        jobs,
        work,
        kind="soft",
        workers=workers,
        scheduler=scheduler,
        progress=progress,
        desc="nms",
        ids=None if ids is None else tuple(maps),
        lock=lock,
    )


def ucm_folder(
    pred: str | PathLike,
    out: str | PathLike,
    *,
    orientations: int = 8,
    smooth: float = 0.0,
    levels: str = "sigmoid",
    radius: float = 5.0,
    ids=None,
    workers: int = 1,
    scheduler: str | None = None,
    progress: bool = True,
) -> FolderResult:
    """Ultrametric contour maps (OWT-UCM) of every contour map of a folder
    (``segbench ucm``).

    Parameters
    ----------
    pred : path
        Folder of soft maps ``<id>.png|.bmp|.npy`` (values in [0, 1]; raw, not
        NMS-thinned, maps give the watershed its basins) or ``.npy`` oriented stacks
        (H, W, K) in the convention of :func:`segbench.algorithms.owt_ucm`.
    out : path
        Output folder: new, empty, or one this function wrote (marked by
        ``.segbench-ucm``); any other folder, and ``pred`` itself, is refused before
        anything is written. Receives ``OUT/<id>.mat`` (variable ``ucm2``, doubleSize:
        (2H+1, 2W+1)).
    orientations : int, default 8
        Directions at which a 2-D map is read along each arc (BSR reads a detector's 8
        channels); 0 reads at the arc's exact direction (MCG's contours2OWT).
    smooth : float, default 0.0
        For 2-D maps: a Gaussian blur of this sigma in pixels first, a one-pixel line
        keeping its height (1 for NMS-thinned maps); 0: none. With 0, a first map that
        looks thinned gives one ``UserWarning``.
    levels : {'sigmoid', 'mean'}
        The levels of the hierarchy: the mean boundary strengths mapped by BSR's
        logistic (fitted to gPb), or the mean strengths themselves.
    radius : float, default 5.0
        Accepted for the records of earlier runs, unused (the size of an older line
        fit); pixels, at least 1.
    ids, workers, scheduler, progress
        As :func:`nms_folder`.

    Returns
    -------
    FolderResult
        ``command='ucm'``, ``kind='ucm2'``.

    Raises
    ------
    InputError
        A bad option, no contour map in ``pred``, an ``out`` that is not this
        function's, or an unreadable map (the message names the file).
    """

    pred, out = Path(pred), Path(out)
    if not isinstance(radius, numbers.Real) or radius < 1 or not math.isfinite(radius):
        raise InputError(f"--radius must be a number >= 1 (pixels), got {radius}")
    if not isinstance(orientations, numbers.Integral) or not 0 <= orientations <= 1024:
        raise InputError(
            f"--orientations must be 0 (exact) or a count up to 1024, got {orientations}"
        )
    if levels not in _LEVELS:
        raise InputError(f"--levels must be one of {', '.join(_LEVELS)}, got {levels!r}")
    _check_workers(workers, scheduler)
    every = list_files(pred, SOFT_EXTS)  # soft maps, and .npy oriented stacks
    if not every:
        raise InputError(f"no contour maps ({', '.join(SOFT_EXTS)}) in this folder", pred)
    maps = _select(every, ids, pred, "contour maps")
    if not isinstance(smooth, numbers.Real) or smooth < 0 or not math.isfinite(smooth):
        raise InputError(f"--smooth must be a number >= 0 (pixels), got {smooth}")
    orientations, radius, smooth = int(orientations), float(radius), float(smooth)
    settings = {
        "orientations": orientations,
        "radius": radius,
        "smooth": smooth,
        "levels": levels,
        "source": str(pred),
    }
    lock = _claim(
        out,
        pred,
        "--pred",
        "ucm",
        settings,
        maps,
        ".mat",
        others=[i for i in every if i not in maps],
    )
    if smooth == 0:  # once the folder is taken: a refused --out says that alone
        _warn_if_thinned(next(iter(maps.values())))
    jobs = [(str(path), str(out / f"{iid}.mat")) for iid, path in maps.items()]
    work = partial(
        _ucm_one,
        orientations=orientations or None,
        radius=radius,
        smooth=smooth,
        raw=levels == "mean",
    )
    return _run(
        "ucm",
        out,
        settings,
        jobs,
        work,
        kind="ucm2",
        workers=workers,
        scheduler=scheduler,
        progress=progress,
        desc="ucm",
        ids=None if ids is None else tuple(maps),
        lock=lock,
    )


def _multigrid_count(photos: dict, rsz: float, eigensolver: str) -> int:
    """How many of ``photos`` gPb solves by the multigrid eigensolver (read from their
    headers: the size solved is the image's, times ``rsz``)."""
    from .algorithms import eigensolver_for
    from .io import image_size

    if eigensolver == "exact":
        return 0
    if eigensolver == "multigrid":
        return len(photos)
    count = 0
    for path in photos.values():
        h, w = image_size(path)
        solved = (max(1, round(h * rsz)), max(1, round(w * rsz)))
        count += eigensolver_for("auto", solved) == "multigrid"
    return count


def _se_detect_options(model, multiscale, sharpen, n_trees_eval) -> dict:
    """The checked keywords of :func:`segbench.algorithms.se` (the model is loaded
    here once, so that a bad file is one line before the folder is claimed)."""
    from .algorithms import load_forest

    forest = load_forest(model)
    if not forest.complete:
        raise InputError(
            f"the forest is not finished (trees {', '.join(map(str, forest.missing))} "
            "missing): rerun 'segbench train' with the same options to finish it",
            model,
        )
    opts = forest.options
    sharpen = opts.sharpen if sharpen is None else sharpen
    n_eval = opts.n_trees_eval if n_trees_eval is None else n_trees_eval
    for name, value, low, high in (
        ("--sharpen", sharpen, 0, 1000),  # pixels (the toolbox: 2)
        ("--trees-eval", n_eval, 1, 2**31 - 1),
    ):
        if (
            isinstance(value, bool)
            or not isinstance(value, numbers.Integral)
            or not low <= int(value) <= high
        ):
            raise InputError(f"{name} must be an integer in [{low}, {high}], got {value!r}")
    if n_eval > opts.n_trees:
        raise InputError(
            f"--trees-eval {n_eval}: the model has {opts.n_trees} trees", model
        )
    return {
        "multiscale": bool(multiscale),
        "sharpen": int(sharpen),
        "n_trees_eval": int(n_eval),
    }


def detect_folder(
    images: str | PathLike,
    out: str | PathLike,
    detector: str,
    *,
    weights: str | PathLike = "trained",
    rsz: float = 1.0,
    eigensolver: str = "auto",
    protocol: str | None = None,
    model: str | PathLike | None = None,
    multiscale: bool = False,
    sharpen: int | None = None,
    n_trees_eval: int | None = None,
    orientation: bool = False,
    ids=None,
    workers: int = 1,
    scheduler: str | None = None,
    progress: bool = True,
) -> FolderResult:
    """Run a boundary detector on every image of a folder (``segbench detect``).

    Parameters
    ----------
    images : path
        Folder of photographs ``<id>.jpg|.jpeg|.png|.bmp|.tif|.tiff`` (8-bit colour or
        grey); ids are the file stems.
    out : path
        Output folder: new, empty, or one this function wrote (marked by
        ``.segbench-detect``, which records the settings); any other folder, and
        ``images`` itself, is refused before anything is written.
    detector : str
        One of :data:`segbench.algorithms.DETECTORS` (the Pb family ``pb-cgtg``,
        ``pb-bgtg``, ``pb-bg``, ``pb-cg``, ``pb-tg``; ``2mm``, ``gm``, ``canny``), which
        write ``OUT/<id>.png``, 16-bit soft maps in [0, 1] (``round(65535 pb)``);
        ``gpb`` (the same, of gPb's soft map) or ``gpb-owt-ucm`` (``OUT/<id>.mat``
        holding ``ucm2``, doubleSize); ``se``: structured edges of a trained forest
        (``model``), 16-bit soft maps, unthinned (the toolbox evaluates them after
        its NMS, without a second convTri: ``segbench boundary --nms presmooth=0`` or
        ``segbench nms --no-presmooth``).
    weights : {'trained', 'published'} or path, default 'trained'
        Logistic weights of the Pb detectors and 2mm: fitted on BSDS500 train (shipped),
        those of the 2003 MATLAB code (Pb family only), or a weights file that
        ``tools/train_pb.py --out FILE`` writes (recorded with its SHA-256). Other
        detectors take only 'trained'.
    rsz : float in (0, 1], default 1.0
        gPb detectors only: the eigenproblem is solved at ``rsz`` times the image size
        (BSR's ``rsz``; 0.5 is about 3x faster at some loss of accuracy).
    eigensolver : {'auto', 'exact', 'multigrid'}, default 'auto'
        gPb detectors only: :func:`segbench.algorithms.gpb`'s; 'auto' solves exactly
        up to :data:`segbench.algorithms.MULTIGRID_ABOVE` pixels and by the approximate
        multigrid solver above (the headline says for how many images).
    protocol : {None, 'martin2004'}
        'martin2004': the detector runs on each image at half resolution (each 2x2
        cell's mean), as the 2004 Pb paper; score with ``protocol='martin2004'``. Not
        for the gPb detectors.
    model : path, optional
        ``se`` only, and required there: a forest written by :func:`train_se` (recorded
        with its SHA-256).
    multiscale : bool
        ``se`` only: average the detections at 1/2, 1 and 2 times the image size.
    sharpen : int, optional
        ``se`` only: sharpening radius in pixels (default 2, the toolbox's; 0 none).
    n_trees_eval : int, optional
        ``se`` only: trees evaluated per location (default 4 of the forest's 8).
    orientation : bool
        ``se`` only: write the toolbox's orientation ``O`` (``OUT/<id>.npy``, float32
        radians in [0, pi)) instead of the soft maps.
    ids, workers, scheduler, progress
        As :func:`nms_folder` (``ids``: of the images).

    Returns
    -------
    FolderResult
        ``command='detect'``; ``kind='soft'``, or ``'ucm2'`` for gpb-owt-ucm.

    Raises
    ------
    InputError
        An unknown detector or a bad option, a weights file that is missing or wrong
        (naming it), no image in ``images``, an ``out`` that is not this function's,
        or an unreadable image (naming the file).

    Examples
    --------
    >>> res = detect_folder("images/", "maps/gm", "gm", progress=False)  # doctest: +SKIP
    >>> print(res.headline())                                            # doctest: +SKIP
    wrote 2 soft maps of gm into maps/gm (16-bit PNG)
    """
    from .algorithms import DETECTORS, WEIGHTED

    images, out = Path(images), Path(out)
    if detector not in (*DETECTORS, *GPB_DETECTORS, *MODEL_DETECTORS):
        raise InputError(
            f"unknown detector {detector!r}; one of "
            f"{', '.join((*DETECTORS, *GPB_DETECTORS, *MODEL_DETECTORS))}"
        )
    se_given = [
        name
        for name, value, default in (
            ("--model", model, None),
            ("--multiscale", multiscale, False),
            ("--sharpen", sharpen, None),
            ("--trees-eval", n_trees_eval, None),
            ("--orientation", orientation, False),
        )
        if value != default
    ]
    if detector != "se" and se_given:
        raise InputError(f"{', '.join(se_given)} applies to --detector se, not {detector}")
    se_options = None
    if detector == "se":
        if model is None:
            raise InputError(
                "--detector se needs --model FILE, a forest written by 'segbench train "
                "--detector se'"
            )
        se_options = _se_detect_options(model, multiscale, sharpen, n_trees_eval)
        if orientation:
            se_options["output"] = "orientation"
    if weights != "trained" and detector not in WEIGHTED:
        raise InputError(f"--weights applies to {', '.join(WEIGHTED)}, not {detector}")
    if weights == "published" and detector == "2mm":
        raise InputError(
            "2mm has no published weights that fit its features; use --weights trained"
        )
    # what the detector gets (a name, or the file's weights) and what the record says
    values: str | PathLike | list[float] = weights
    recorded: str | PathLike | dict[str, str] | None = (
        weights if detector in WEIGHTED else None
    )
    if detector in WEIGHTED and weights not in ("trained", "published"):
        from .algorithms import read_weight_file

        path = Path(weights)
        values = [float(v) for v in read_weight_file(path, detector)]
        recorded = {"file": str(path), "sha256": fingerprint(path)}
    if not isinstance(rsz, numbers.Real):
        raise InputError(f"--rsz must be in (0, 1], got {rsz}")
    if rsz != 1.0 and detector not in GPB_DETECTORS:
        raise InputError(f"--rsz applies to {', '.join(GPB_DETECTORS)}, not {detector}")
    if eigensolver != "auto" and detector not in GPB_DETECTORS:
        raise InputError(
            f"--eigensolver applies to {', '.join(GPB_DETECTORS)}, not {detector}"
        )
    from .algorithms import eigensolver_for

    eigensolver_for(eigensolver, (0, 0))  # the name checked
    if not 0 < rsz <= 1:
        raise InputError(f"--rsz must be in (0, 1], got {rsz}")
    if protocol is not None and protocol not in _PROTOCOLS:
        raise InputError(
            f"--protocol must be {' or '.join(_PROTOCOLS)} (or none), got {protocol!r}"
        )
    rsz, half = float(rsz), protocol == "martin2004"
    if half and (detector in GPB_DETECTORS or detector in MODEL_DETECTORS):
        raise InputError(
            f"--protocol martin2004 (half-resolution images) applies to the "
            f"2004 detectors, not to {detector}"
        )
    _check_workers(workers, scheduler)
    every = list_files(images, IMAGE_EXTS)
    if not every:
        raise InputError(f"no images ({', '.join(IMAGE_EXTS)}) in this folder", images)
    found = _select(every, ids, images, "images")
    settings = {
        "detector": detector,
        "source": str(images),
        "weights": recorded,
        "resolution": "half" if half else "full",
    }
    if detector in GPB_DETECTORS:
        settings["rsz"] = rsz
        settings["eigensolver"] = eigensolver
        settings["multigrid_images"] = _multigrid_count(found, rsz, eigensolver)
        if eigensolver == "auto":
            from .algorithms import MULTIGRID_ABOVE

            settings["multigrid_above"] = MULTIGRID_ABOVE
    if se_options is not None:
        settings["weights"] = None
        settings["model"] = {"file": str(model), "sha256": fingerprint(model)}
        settings.update(se_options)
    kind, suffix = GPB_DETECTORS.get(detector, ("soft", ".png"))
    if se_options is not None and se_options.get("output") == "orientation":
        kind, suffix = "orientation", ".npy"
    lock = _claim(
        out,
        images,
        "--images",
        "detect",
        settings,
        found,
        suffix,
        others=[i for i in every if i not in found],
    )
    jobs = [(str(path), str(out / f"{iid}{suffix}")) for iid, path in found.items()]
    work = partial(
        _detect_one,
        detector=detector,
        weights=values,
        half=half,
        rsz=rsz,
        se_options=se_options,
        model=None if model is None else str(model),
        eigensolver=eigensolver,
    )
    return _run(
        "detect",
        out,
        settings,
        jobs,
        work,
        kind={"ucm": "ucm2", "orientation": "orientation"}.get(kind, "soft"),
        workers=workers,
        scheduler=scheduler,
        progress=progress,
        desc=detector,
        ids=None if ids is None else tuple(found),
        lock=lock,
    )


# -- training a structured edge forest -------------------------------------------------


@dataclass(frozen=True)
class TrainResult:
    """What :func:`train_se` left in its model file.

    Attributes
    ----------
    out : Path
        The model file (``.npz``).
    n_trees : int
        Trees of the finished forest.
    n_reused : int
        Of these, the trees kept from an earlier, interrupted or finished, run.
    options : dict
        The model's options (:class:`~segbench.algorithms.SEForestOptions`, our names).
    source : str
        The data folder and split trained on.
    """

    out: Path
    n_trees: int
    n_reused: int
    options: dict[str, Any] = field(hash=False)
    source: str = ""

    def headline(self) -> str:
        """The one line ``segbench train`` prints."""
        reused = (
            f" ({self.n_reused} of {self.n_trees} trees kept from the earlier run)"
            if self.n_reused
            else ""
        )
        return (
            f"trained a structured edge forest of {self.n_trees} "
            f"tree{'' if self.n_trees == 1 else 's'} into {self.out} "
            f"from {self.source}{reused}: detect with 'segbench detect --detector se "
            f"--model {self.out} --images IMG_DIR --out DIR'"
        )

    def to_dict(self) -> dict[str, Any]:
        """What ``segbench train --json`` prints."""
        return {
            "out": str(self.out),
            "n_trees": self.n_trees,
            "n_reused": self.n_reused,
            "source": self.source,
            "options": dict(self.options),
        }


def _train_se_tree(index: int, *, items, options):
    """One tree (a worker process's job): ``(index, tree)``."""
    from .algorithms import train_tree

    return index, train_tree(items, options, tree_index=index)


def _inside_package(path: Path) -> bool:
    package = Path(__file__).resolve().parent
    try:
        path.resolve().relative_to(package)
    except ValueError:
        return False
    return True


def train_se(
    data: str | PathLike,
    out: str | PathLike,
    *,
    split: str = "train",
    options=None,
    workers: int = 1,
    scheduler: str | None = None,
    progress: bool = True,
) -> TrainResult:
    """Train a structured edge forest on a BSDS500 split (``segbench train --detector se``).

    Parameters
    ----------
    data : path
        The BSDS500 ``data`` folder (``BSR/BSDS500/data``) or a folder above it.
    out : path
        The model file, ``.npz``. Written after every finished tree, atomically, so a
        killed training keeps its finished trees and a rerun with the same options
        trains only the missing ones (a finished model is reused as it is). A file that
        is not a segbench structured edge model, a model trained with other options,
        and a path inside the segbench package are refused before any work.
    split : str
        The split trained on: ``'train'`` (the toolbox's; choose parameters on
        ``'val'``, report on ``'test'``).
    options : SEForestOptions or mapping, optional
        Model options (our names or the toolbox's, :func:`segbench.algorithms.
        forest_options`); default the toolbox's: 8 trees, 5e5 positive and 5e5
        negative 32 x 32 patches per tree, depth 64, seed 1.
    workers : int
        Trees grown at once, each in its own process (about 1.6 GB each at the
        default options). The trees do not depend on it: tree ``i`` draws from the
        random stream ``(seed, i)``.
    scheduler : str, optional
        A Dask scheduler to grow the trees on instead.
    progress : bool
        A progress bar over the trees on stderr.

    Returns
    -------
    TrainResult

    Raises
    ------
    InputError
        A data folder that is not a BSDS500, a split it lacks, bad options, or an
        ``out`` refused as above (one line naming the file).
    """
    from .algorithms import BSDSTrainingSet, SEForest, forest_options, load_forest

    opts = forest_options(options)
    out = Path(out)
    if out.suffix != ".npz":
        raise InputError("the model file must end in .npz", out)
    if _inside_package(out):
        raise InputError(
            "is inside the segbench package; write the model where your data is", out
        )
    if out.is_dir():
        raise InputError("is a folder; --out names the model file (.npz)", out)
    _check_workers(workers, scheduler)
    root = BSDS500(data).root
    if not (root / "images" / split).is_dir():
        raise InputError(f"no split {split!r} (no images/{split} folder)", root)
    items = BSDSTrainingSet(root, split, n_images=opts.n_images)
    if split == "test":
        import warnings

        warnings.warn(
            "training on the test split: any score of this model on the test split "
            "is a score on its own training images (train on 'train', choose settings "
            "on 'val')",
            stacklevel=2,
        )
    import hashlib

    # what the trees are trained on: a resumed training draws from the same images
    training = {
        "split": split,
        "ids": hashlib.sha256("\n".join(items.ids).encode()).hexdigest(),
    }
    if out.exists():
        try:
            forest = load_forest(out)
        except InputError as exc:
            raise InputError(
                f"exists and is not a structured edge model this segbench can resume "
                f"({exc.problem}); it is left as it is: give another --out",
                out,
            ) from None
        theirs, ours = forest.options.training_fields(), opts.training_fields()
        if theirs != ours:
            diff = sorted(k for k in ours if theirs.get(k) != ours[k])
            raise InputError(
                f"holds a forest trained with other options ({', '.join(diff)}); it is "
                f"left as it is: give another --out or the same options",
                out,
            )
        if forest.training is not None and forest.training != training:
            what = (
                f"the {forest.training.get('split')!r} split"
                if forest.training.get("split") != split
                else "other images of this split"
            )
            raise InputError(
                f"holds trees trained on {what}, not the {split!r} images of {root}: "
                "one model would mix both; it is left as it is: give another --out, "
                "or the data it was trained on",
                out,
            )
        forest.training = training  # (a model of an older segbench recorded none)
    else:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(out.parent, exc.strerror or str(exc)) from None
        forest = SEForest(opts, training=training)
    # a model that cannot be saved is said before the first tree's minutes, not after
    if not os.access(out.parent, os.W_OK):
        raise OutputError(out.parent, "Permission denied")
    missing = forest.missing
    reused = opts.n_trees - len(missing)
    work = partial(_train_se_tree, items=items, options=opts)
    done = 0
    try:
        # no executor for local workers: map_items starts processes only for work
        with open_executor(workers, scheduler) if scheduler else nullcontext() as executor:
            for index, tree in map_items(
                work,
                missing,
                workers=workers,
                executor=executor,
                progress=progress,
                desc="se trees",
                unit="tree",
            ):
                forest.add_tree(index, tree)
                forest.save(out)  # a killed run keeps every finished tree
                done += 1
    except ClusterLostError as exc:  # or WorkerDiedError: counted over the forest
        raise type(exc)(reused + done, opts.n_trees, unit="trees") from None
    return TrainResult(
        out,
        opts.n_trees,
        reused,
        asdict(opts),
        source=f"{root} ({split}, {len(items)} image{'' if len(items) == 1 else 's'})",
    )


__all__ = [
    "FolderResult",
    "GPB_DETECTORS",
    "IMAGE_EXTS",
    "MARKERS",
    "MODEL_DETECTORS",
    "SOFT_EXTS",
    "TrainResult",
    "detect_folder",
    "nms_folder",
    "train_se",
    "ucm_folder",
]
