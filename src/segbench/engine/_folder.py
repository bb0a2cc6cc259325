"""The run folder: what a benchmark's ``--out`` holds, and which result file is whose.

A run folder is marked by :data:`RUN_MARKER` (or, made by an older segbench, by its
record store). It holds one result of each family that was run into it: the first
family written there owns ``result.json`` and ``per_item.csv`` (as every command has
always written them), every other family ``result_<family>.json`` and
``per_item_<family>.csv``. So ``segbench region --out runs/hed`` beside an earlier
``segbench boundary --out runs/hed`` adds ``result_region.json`` (the layout
``segbench all`` writes) instead of replacing the boundary result, and a rerun of
either family replaces only its own files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from os import PathLike
from pathlib import Path

from ..errors import InputError
from ._store import RECORDS_DIR

#: The file that marks a folder as a segbench run folder (every benchmark command).
RUN_MARKER = ".segbench-run"
#: Entries that also mark a run folder: the record store of a run made before the
#: marker existed, and a ``segbench submit`` run folder (which the benchmark fills).
RUN_ACCEPTS = (RECORDS_DIR, ".segbench-submission")
_NOTE = ("a run folder of segbench: the result, per-item and official files of each "
         "benchmark family run here, and the records in .segbench-records/ that let a "
         "rerun resume; a rerun of a family replaces only that family's files\n")


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
    """
    from ..io import claim_folder
    return claim_folder(out, RUN_MARKER, "segbench", _NOTE, accept=RUN_ACCEPTS,
                        inputs=_paths(inputs), what="segbench run folder")


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
        raise InputError(f"not a readable segbench result ({exc}); nothing was changed: "
                         "move it away or choose another --out", path) from None
    family = data.get("family") if isinstance(data, dict) else None
    if not isinstance(family, str) or not family:
        raise InputError("not a segbench result (no family); nothing was changed: move "
                         "it away or choose another --out", path)
    return family


def result_names(out, families) -> dict[str, tuple[str, str]]:
    """``{family: (result file, per-item file)}`` of each family written into ``out``.

    The family that owns ``result.json`` keeps it (and ``per_item.csv``); with none
    there, the first of ``families`` takes them; every other family writes
    ``result_<family>.json`` and ``per_item_<family>.csv``.
    """
    names = [f if isinstance(f, str) else f.name for f in families]
    owner = family_of(Path(out) / "result.json") if out is not None else None
    owner = owner or names[0]
    return {n: ("result.json", "per_item.csv") if n == owner else
            (f"result_{n}.json", f"per_item_{n}.csv") for n in names}


def result_file(folder, family: str | None = None) -> Path | None:
    """The result file of ``family`` in a run folder (``result.json`` when it holds
    that family, else ``result_<family>.json``), or ``result.json`` for no family;
    None if there is none."""
    folder = Path(folder)
    main = folder / "result.json"
    if family is None:
        return main if main.is_file() else None
    try:
        if family_of(main) == family:
            return main
    except InputError:
        pass
    other = folder / f"result_{family}.json"
    return other if other.is_file() else None


__all__ = ["RUN_ACCEPTS", "RUN_MARKER", "claim_run_folder", "family_of", "result_file",
           "result_names"]
