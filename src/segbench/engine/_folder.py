"""The run folder: what a benchmark's ``--out`` holds, and the one reader of it.

A run folder is marked by :data:`RUN_MARKER` (or, made by an older segbench, by its
record store). :class:`RunFolder` owns its layout:

- ``result_<family>.json`` and ``per_item_<family>.csv`` for each family run into it,
  named by family (so ``segbench region --out runs/hed`` beside an earlier ``segbench
  boundary --out runs/hed`` adds its own files, and a rerun of either replaces only
  its own); folders made before segbench 0.9 hold the first family's result in
  ``result.json``/``per_item.csv``, which are still read;
- ``.segbench-records/``: one record per (family, image), so a rerun resumes;
- ``manifest.json``: the families run here (in the order first run), the inputs of
  the latest run of each (ground truth, the prediction folder) and its command line;
- each family's own files (official text files, plots);
- a submission's (``segbench submit``) ``meta.json`` (name, about text, kind, date,
  presentation, where its predictions are) and its copy of the predictions in
  ``predictions/``.

Every reader of a run folder (``segbench compare``, ``segbench site``, ``segbench
submit``, :func:`segbench.api.read_run`, :meth:`segbench.Result.from_json` given a
folder) goes through :class:`RunFolder`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from contextlib import contextmanager
from os import PathLike
from pathlib import Path

from .._version import __version__
from ..errors import InputError
from ..io import atomic_write_text, claim_folder
from ..result import Result
from ._store import RECORDS_DIR, RecordStore, records_digest

#: The file that marks a folder as a segbench run folder (every benchmark command).
RUN_MARKER = ".segbench-run"
#: Entries that also mark a run folder: the record store of a run made before the
#: marker existed, and a ``segbench submit`` run folder (which the benchmark fills).
RUN_ACCEPTS = (RECORDS_DIR, ".segbench-submission")
#: The markers of the map folders of ``segbench nms``, ``ucm`` and ``detect``
#: (:mod:`segbench.algorithm_folders`): they keep records too, so their
#: ``.segbench-records/`` must not make them run folders.
MAP_FOLDER_MARKERS = {
    "nms": ".segbench-nms",
    "ucm": ".segbench-ucm",
    "detect": ".segbench-detect",
}
#: The run folder's manifest: families, inputs and command line (:class:`RunFolder`).
MANIFEST = "manifest.json"
#: A submission's description of itself (:meth:`RunFolder.meta`).
META = "meta.json"
#: A submission's copy of the predictions it was scored on.
PREDICTIONS = "predictions"
#: The environment variable through which the command line reaches the manifest
#: (set by ``segbench``'s entry point; the engine never imports the CLI).
COMMAND_ENV = "SEGBENCH_COMMAND_LINE"
_NOTE = (
    "a run folder of segbench: the result, per-item and official files of each "
    "benchmark family run here, and the records in .segbench-records/ that let a "
    "rerun resume; a rerun of a family replaces only that family's files\n"
)


def _paths(inputs) -> dict:
    """The input folders among ``inputs`` (option -> path, paths only)."""
    out = {}
    for option, value in (inputs or {}).items():
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if isinstance(v, (str, PathLike)) and Path(v).is_dir():
                out[f"{option} {v}" if len(values) > 1 else option] = v
    return out


def claim_run_folder(out, inputs: Mapping | None = None) -> Path:
    """Make ``out`` a run folder, or refuse before anything is written
    (:func:`segbench.io.claim_folder`: new, empty, or already a segbench run folder;
    never one of the ``inputs`` folders).

    Parameters
    ----------
    out : path
    inputs : mapping of option to path, optional
        The run's input folders (``{'--gt': gt, '--pred': pred}``); entries that are
        not folders on disk (a Dataset, a mapping of files) are ignored.

    Returns
    -------
    Path

    Raises
    ------
    InputError
        As :func:`segbench.io.claim_folder`, and for a map folder of ``segbench nms``,
        ``ucm`` or ``detect`` (its maps and a run's files would mix).
    """
    for command, marker in MAP_FOLDER_MARKERS.items():
        if (Path(out) / marker).exists():
            raise InputError(
                f"this is a folder of maps written by segbench {command} ({marker} in "
                "it), not a run folder: nothing was changed; give the benchmark's "
                "results another --out (score the maps with --pred)",
                out,
            )
    return claim_folder(
        out,
        RUN_MARKER,
        "segbench",
        _NOTE,
        accept=RUN_ACCEPTS,
        inputs=_paths(inputs),
        # a run folder inside the ground truth is read as an image of it next time
        inside=True,
        what="segbench run folder",
    )


#: The file a run holds locked while it writes into its folder.
RUN_LOCK = ".segbench-lock"
#: Present while a run writes its result, per-item and official files, removed after:
#: a folder that still holds it has files of two runs (the last one stopped midway).
#: It names the families whose files are being written: a later run of another family
#: leaves the mark of those it does not rewrite.
RUN_WRITING = ".segbench-writing"
_WRITING_NOTE = (
    "segbench is writing this run's files; if this file stays, the run stopped "
    "midway and the folder may mix two runs: rerun it\n"
)


#: A writing mark's name for every family's files (a submission's run, plot and
#: meta.json written together).
EVERY_FAMILY = "*"


def writing_families(out) -> set[str] | None:
    """The families whose files a run into ``out`` stopped writing (None: none; an
    empty set: a mark of an older segbench, which named none, so every family; so
    does :data:`EVERY_FAMILY` among them)."""
    try:
        text = (Path(out) / RUN_WRITING).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("families:"):
            return set(line.split(":", 1)[1].split())
    return set()


def mark_writing(out, names) -> None:
    """Mark ``out`` as being written by the families ``names`` (joining those a stopped
    run left marked)."""
    from ..io import atomic_write_text

    marked = writing_families(out) or set()
    families = " ".join(sorted(marked | set(names)))
    atomic_write_text(Path(out) / RUN_WRITING, f"{_WRITING_NOTE}families: {families}\n")


def unmark_writing(out, names) -> None:
    """The files of ``names`` are written: their mark goes (the file with the last)."""
    from ..io import atomic_write_text

    marked = writing_families(out)
    if marked is None:
        return
    left = (marked - set(names)) if marked else set()
    path = Path(out) / RUN_WRITING
    if left:
        atomic_write_text(path, f"{_WRITING_NOTE}families: {' '.join(sorted(left))}\n")
    else:
        path.unlink(missing_ok=True)


#: The folders this thread holds locked for a whole command (:func:`holding_run_folder`),
#: inside which a run's own lock is the command's.
_HELD = threading.local()


@contextmanager
def holding_run_folder(out):
    """Hold the lock of run folder ``out`` for a whole command (``submit``: its copied
    predictions, the run, its plot and meta.json); the runs it makes inside take this
    thread's lock as theirs (:func:`lock_run_folder` returns None). A run of another
    process is refused as ever."""
    handle = lock_run_folder(out)
    key = Path(out).resolve()
    held = getattr(_HELD, "paths", None)
    if held is None:
        held = _HELD.paths = set()
    held.add(key)
    try:
        yield
    finally:
        held.discard(key)
        release_run_folder(handle)


def lock_run_folder(out):
    """Lock the run folder ``out`` for this run, or refuse a second run writing there.

    Two runs writing into one folder at once would each replace the other's files.
    The lock is ``flock`` on :data:`RUN_LOCK`, released when the returned file is
    closed or the process ends (a killed run leaves no stale lock). Where ``flock`` is
    not available (Windows) or not supported (some network file systems), the run
    goes on unlocked.

    Returns
    -------
    file object or None
        Keep it open while the run writes; :func:`release_run_folder` ends the lock
        (and empties the file, which names the holder's pid while it runs).

    Raises
    ------
    InputError
        Another process holds the lock (its pid is named).
    """
    from ..io import hold_lock

    if Path(out).resolve() in getattr(_HELD, "paths", ()):
        return None  # held by this thread's command (holding_run_folder)
    return hold_lock(
        Path(out) / RUN_LOCK,
        "another segbench run is writing into this folder{holder}: wait for it to "
        "end, or give this run another --out",
        out,
    )


def release_run_folder(handle) -> None:
    """End a lock of :func:`lock_run_folder` (None: nothing to do). The file is left
    empty, so a finished run folder holds the same bytes whatever process ran it."""
    from ..io import release_lock

    release_lock(handle)


def family_of(path: Path) -> str | None:
    """The family a result file holds (None if there is no such file).

    Raises
    ------
    InputError
        The file is there but is not a segbench result (it is never replaced).
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(
            f"not a readable segbench result ({exc}); nothing was changed: "
            "move it away or choose another --out",
            path,
        ) from None
    family = data.get("family") if isinstance(data, dict) else None
    if not isinstance(family, str) or not family:
        raise InputError(
            "not a segbench result (no family); nothing was changed: move "
            "it away or choose another --out",
            path,
        )
    return family


def result_names(out, families) -> dict[str, tuple[str, str]]:
    """``{family: (result file, per-item file)}``: ``result_<family>.json`` and
    ``per_item_<family>.csv`` for each of ``families`` (names or specs)."""
    names = [f if isinstance(f, str) else f.name for f in families]
    return {n: (f"result_{n}.json", f"per_item_{n}.csv") for n in names}


def result_file(folder, family: str | None = None) -> Path | None:
    """:meth:`RunFolder.result_file` of ``folder``."""
    return RunFolder(folder).result_file(family)


class RunFolder:
    """The layout of a run folder, and the one reader of it.

    Parameters
    ----------
    path : path
        The run folder, or a result file in it (``result_<family>.json``, an older
        run's ``result.json``): then :meth:`read` without a family reads that file.
    """

    def __init__(self, path):
        path = Path(path)
        self.file = path if path.suffix == ".json" and not path.is_dir() else None
        self.path = path.parent if self.file is not None else path

    def __repr__(self) -> str:
        return f"RunFolder({str(self.path)!r})"

    # -- layout -----------------------------------------------------------------
    def result_path(self, family: str) -> Path:
        """Where ``family``'s result is written: ``result_<family>.json``."""
        return self.path / result_names(self.path, [family])[family][0]

    def per_item_path(self, family: str) -> Path:
        """Where ``family``'s per-item table is written: ``per_item_<family>.csv``."""
        return self.path / result_names(self.path, [family])[family][1]

    def _legacy_family(self) -> str | None:
        try:
            return family_of(self.path / "result.json")
        except InputError:
            return None

    def families(self) -> list[str]:
        """The families with a result here: the manifest's order, then an older run's
        ``result.json`` (first in a folder without a manifest: the family first run
        into it), then any other ``result_<family>.json``."""
        found = [
            f for f in self.manifest().get("families", []) if self.result_path(f).is_file()
        ]
        legacy = self._legacy_family()
        if legacy is not None and legacy not in found:
            # an older folder's result.json holds the family first run into it
            found.insert(0 if not found else len(found), legacy)
        for p in sorted(self.path.glob("result_*.json")):
            name = p.stem[len("result_") :]
            if name and name not in found:
                found.append(name)
        return found

    def result_file(self, family: str | None = None) -> Path | None:
        """The result file of ``family`` (its ``result_<family>.json``, or an older
        run's ``result.json`` that holds it); for no family, the file this folder was
        opened on, else the first family's (:meth:`families`). None if there is none."""
        if family is None:
            if self.file is not None:
                return self.file if self.file.is_file() else None
            names = self.families()
            return self.result_file(names[0]) if names else None
        new = self.result_path(family)
        if new.is_file():
            return new
        return self.path / "result.json" if self._legacy_family() == family else None

    def read(self, family: str | None = None):
        """The :class:`~segbench.result.Result` of ``family`` (see :meth:`result_file`).

        Raises
        ------
        InputError
            No such result here (naming the folder), or an unreadable one (naming the
            file).
        """

        found = self.result_file(family)
        stopped = writing_families(self.path)
        held = None if found is None else family_of(found)
        if stopped is not None and (
            not stopped or EVERY_FAMILY in stopped or held in stopped or held is None
        ):
            raise InputError(
                "the last run into this folder stopped while writing its "
                + (f"{held} " if stopped and held else "")
                + "files (disk full, or killed), so they may mix two runs: rerun the "
                "command that made it",
                self.path,
            )
        if found is None:
            if self.file is not None:
                raise InputError("file not found", self.file)
            what = "no result file" if family is None else f"no {family} result"
            if (self.path / "sweep.json").is_file():  # superpixel-sweep's folder
                raise InputError(
                    "a superpixel-sweep folder (sweep.json: curves over K), not a "
                    f"benchmark run ({what}: result_<family>.json); compare and site "
                    "take runs of 'segbench superpixel' at one K each",
                    self.path,
                )
            raise InputError(f"not a run folder ({what}: result_<family>.json)", self.path)
        return Result.from_json(found)

    def records(self, spec, result) -> tuple[list, list]:
        """``(keys, records)``: the per-image records ``result`` was summarized from,
        read from the record store in the result's item order and checked against the
        digest the result recorded, so records changed by a later run are never mixed
        in.

        Raises
        ------
        InputError
            No digest recorded (an older run), a record missing or damaged, or records
            that are not those the result was made from.
        """

        where = self.file or self.path
        digest = result.provenance.get("records")
        if digest is None:
            raise InputError(
                "this result records no digest of its per-image records "
                "(made by an older segbench or without --out): rerun the "
                "same command with --out, which reuses every record",
                where,
            )
        store = RecordStore(self.path)
        keyed, records = [], []
        for row in result.per_item:
            iid = str(row["id"])
            saved = store.saved(spec, iid)
            if saved is None:
                raise InputError(
                    f"the record of image {iid} is missing or damaged in "
                    f"{store.root}: rerun the command that made this run",
                    self.path,
                )
            keyed.append((iid, saved[0]))
            records.append(saved[1])
        if records_digest(keyed) != digest:
            raise InputError(
                "the records in this folder are not those its result was "
                "made from (a later run with other inputs or parameters, or "
                f"{Path(where).name} edited: its per_item rows name the records): "
                "rerun the command that made this run",
                self.path,
            )
        return [k for _, k in keyed], records

    def retire_legacy(self, family: str) -> None:
        """Remove an older run's ``result.json`` and ``per_item.csv`` when they hold
        ``family``, whose ``result_<family>.json`` has just replaced them (as a rerun
        always replaced its own files); those of another family stay."""
        if self._legacy_family() == family:
            for name in ("result.json", "per_item.csv"):
                (self.path / name).unlink(missing_ok=True)

    # -- manifest ---------------------------------------------------------------
    def manifest(self) -> dict:
        """The manifest (``{}`` for a folder made before it existed, or a damaged
        one: it only orders and describes; results and records are checked on their
        own)."""
        try:
            data = json.loads((self.path / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _recorded_param(self, family: str | None, key: str):
        found = self.result_file(family)
        if found is None:
            return None
        try:
            data = json.loads(found.read_text(encoding="utf-8"))
            return data.get("provenance", {}).get("params", {}).get(key)
        except (OSError, UnicodeDecodeError, ValueError, AttributeError):
            return None

    def prediction_folder(self, family: str | None = None) -> Path | None:
        """The prediction folder of the latest run of ``family`` (default: the first
        family): the first that exists of the one the manifest records (else its
        result's provenance); a submission's (:meth:`meta` ``pred_dir``, relative to
        the run folder); ``predictions/`` or ``pred/`` in the run folder; a relative
        ``pred_dir`` of the result's provenance (folders older than the manifest) from
        the run folder, its parent or grandparent. None for predictions held in
        memory or a folder no longer there."""
        name = family or next(iter(self.families()), None)
        recorded = None if name is None else self._recorded_param(name, "pred_dir")
        pred = (self.manifest().get("runs", {}).get(name) or {}).get("pred_dir")
        pred = recorded if pred is None else pred
        if pred and Path(pred).is_dir():
            return Path(pred)
        cands = []
        meta_pred = self.meta().get("pred_dir")
        if isinstance(meta_pred, str):
            p = Path(meta_pred)
            cands.append(p if p.is_absolute() else self.path / p)
        cands += [self.path / PREDICTIONS, self.path / "pred"]
        if isinstance(recorded, str) and not Path(recorded).is_absolute():
            cands += [
                self.path / recorded,
                self.path.parent / recorded,
                self.path.parent.parent / recorded,
            ]
        return next((c for c in cands if c.is_dir()), None)

    def meta(self) -> dict:
        """A submission's ``meta.json`` (``{}`` where there is none).

        Raises
        ------
        InputError
            The file is there but is not readable JSON holding an object.
        """
        path = self.path / META
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise InputError(f"unreadable JSON: {exc}", path) from None
        if not isinstance(data, dict):
            raise InputError("meta.json must hold a JSON object", path)
        return data

    def downloads(self, families, official: Mapping | None = None) -> list[Path]:
        """The files of ``families`` a reader may take away, those present as regular
        files (a symbolic link is not followed out of the folder): each family's
        result and per-item table (an older run's ``result.json`` and ``per_item.csv``
        in the place of the family they hold), then each family's own files
        (``official``: family -> file names, in order)."""
        legacy = self._legacy_family()
        names: list[str] = []
        for family in families:
            names += ["result.json", "per_item.csv"] if family == legacy else []
            names += [self.result_path(family).name, self.per_item_path(family).name]
        for family in families:
            names += list((official or {}).get(family, ()))
        out = []
        for name in dict.fromkeys(names):
            p = self.path / name
            if p.is_file() and not p.is_symlink():
                out.append(p)
        return out

    def note_run(self, families, where: Mapping) -> None:
        """Record a run of ``families`` in the manifest: their names (kept in the
        order first run), the inputs ``where`` (``gt_dir``, ``pred_dir``, ``split``,
        ``presentation``) and the command line, when segbench's CLI ran it."""
        import os

        data = self.manifest()
        names = [f if isinstance(f, str) else f.name for f in families]
        order = [f for f in data.get("families", []) if isinstance(f, str)]
        order += [n for n in names if n not in order]
        runs = data.get("runs")
        if not isinstance(runs, dict):
            runs = {}
        entry = {k: where.get(k) for k in ("gt_dir", "pred_dir", "split", "presentation")}
        # absolute: a relative folder would be looked up from wherever the folder is
        # read next (the site, built elsewhere, showed another algorithm's maps)
        for k in ("gt_dir", "pred_dir"):
            entry[k] = _absolute(entry[k])
        # no time stamp: the same run writes the same bytes (results carry 'created')
        entry.update(command=os.environ.get(COMMAND_ENV), segbench=__version__)
        for n in names:
            runs[n] = entry
        atomic_write_text(
            self.path / MANIFEST,
            json.dumps({"families": order, "runs": runs}, indent=1, sort_keys=True) + "\n",
        )


def _absolute(value):
    """A recorded folder (or list of folders) as an absolute path; None stays."""
    if isinstance(value, list):
        return [_absolute(v) for v in value]
    if not isinstance(value, str):
        return value
    try:
        return str(Path(value).resolve())
    except (OSError, RuntimeError):  # a link loop: kept as given
        return value


__all__ = [
    "RUN_LOCK",
    "RUN_WRITING",
    "EVERY_FAMILY",
    "holding_run_folder",
    "mark_writing",
    "unmark_writing",
    "lock_run_folder",
    "release_run_folder",
    "MANIFEST",
    "META",
    "PREDICTIONS",
    "RUN_ACCEPTS",
    "RUN_MARKER",
    "RunFolder",
    "claim_run_folder",
    "family_of",
    "result_file",
    "result_names",
]
