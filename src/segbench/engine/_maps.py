"""Records of maps written by the map-making commands (``nms``, ``ucm``, ``detect``,
``baselines``): a rerun with the same settings reuses every map still as written.

One JSON file per map, ``<out>/.segbench-records/<command>/<map stem>.json``, holding
what the map was made from (the settings, the input's SHA-256, the segbench version)
and the SHA-256 of the map itself: a map changed or deleted since is made again.
"""

from __future__ import annotations

import json
from pathlib import Path

from .._version import __version__
from ..io import atomic_write_text, ensure_dir
from ._store import RECORDS_DIR, fingerprint


class MapRecords:
    """The maps of ``jobs`` still to make in ``out``, and the record of each one made.

    Parameters
    ----------
    out : path
        The folder the maps are written to (its records are kept below it).
    command : str
        Names the records' folder (its last word: ``'segbench detect'`` -> ``detect``).
    settings : dict
        Everything the maps depend on besides their input (JSON-serializable).
    jobs : iterable of (src, dst)
        Input file and map file of every map; ``src`` may be a sequence of files when
        a map is made from several.

    Attributes
    ----------
    todo : list of (src, dst)
        The jobs whose map is missing, changed or made with other settings.
    reused : int
        The number of maps kept from an earlier run.
    """

    def __init__(self, out, command: str, settings: dict, jobs):
        self.root = self.folder(out, command)
        self.settings = self.recorded_settings(settings)
        self.todo, self.reused, self._keys = [], 0, {}
        for src, dst in jobs:
            srcs = [src] if isinstance(src, (str, Path)) else list(src)
            key = {
                "settings": self.settings,
                "input": fingerprint(srcs[0])
                if len(srcs) == 1
                else [fingerprint(s) for s in srcs],
            }
            self._keys[str(dst)] = key
            if self._saved(dst) == key:
                self.reused += 1
            else:
                self.todo.append((src, dst))

    @staticmethod
    def folder(out, command: str) -> Path:
        """Where the records of ``command``'s maps in ``out`` are kept."""
        return Path(out) / RECORDS_DIR / command.split()[-1]

    @staticmethod
    def recorded_settings(settings: dict) -> dict:
        """``settings`` as a record holds them (with the segbench version), but for
        ``source``, the input folder as typed: a record keys its input by content, so
        the same folder spelled otherwise (relative, absolute, moved) is reused."""

        kept = {k: v for k, v in settings.items() if k != "source"}
        return json.loads(json.dumps({**kept, "segbench": __version__}))

    @classmethod
    def written(cls, out, command: str, path) -> dict | None:
        """The record key of the map ``path`` if ``command``'s records say it wrote
        that file as it is now, else None (a file of the user's, or one changed since:
        never removed by a rerun)."""
        path = Path(path)
        try:
            data = json.loads(
                (cls.folder(out, command) / f"{path.stem}.json").read_text(encoding="utf-8")
            )
            if data["output"] is None and isinstance(data["key"], dict):
                return data["key"]  # being made when a run stopped: ours to replace
            if path.is_file() and fingerprint(path) == data["output"]:
                return data["key"]
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
            pass
        return None

    def _record(self, dst) -> Path:
        return self.root / f"{Path(dst).stem}.json"

    def _saved(self, dst):
        """The key of ``dst``'s record if the map is still the one it records."""
        try:
            data = json.loads(self._record(dst).read_text(encoding="utf-8"))
            if Path(dst).is_file() and fingerprint(dst) == data["output"]:
                return data["key"]
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
            pass
        return None

    def keep(self, dst) -> None:
        """Record the map ``dst`` just written (atomically: a killed run leaves a whole
        record or none)."""
        record_map(self.root, self._keys[str(dst)], dst)

    def jobs(self) -> list[tuple]:
        """``todo`` with each job's record key: ``(src, dst, key)`` for
        :func:`made_and_recorded`, so that the process that makes a map records it."""
        return [(src, dst, self._keys[str(dst)]) for src, dst in self.todo]

    def note(self, what: str = "maps") -> str:
        """' (N of M maps reused from the earlier run)' when some were, else ''."""
        return (
            (
                f" ({self.reused} of {self.reused + len(self.todo)} {what} reused from "
                "the earlier run)"
            )
            if self.reused
            else ""
        )


def record_map(root, key: dict, dst, *, pending: bool = False) -> None:
    """Write the record of map ``dst`` (its key and its bytes' fingerprint) into the
    records folder ``root``, atomically; ``pending``: before the map is written (no
    fingerprint: :meth:`MapRecords.written` takes the file as one being made)."""
    ensure_dir(root)
    output = None if pending else fingerprint(dst)
    atomic_write_text(
        Path(root) / f"{Path(dst).stem}.json",
        json.dumps({"key": key, "output": output}, separators=(",", ":")),
    )


def made_and_recorded(work, root, job):
    """``work((src, dst))``, then the map's record, in the same process: a run killed
    while results were on their way to the main process leaves every written map
    recorded, so a rerun reuses it (and never takes it for a file of the user's); one
    killed as it wrote the map leaves a pending record (``output`` null), so the rerun
    makes that map again."""
    src, dst, key = job
    # first a record with no output: a run killed after the map is written but before
    # its record leaves the map marked as one this command was making, so the rerun
    # replaces it instead of refusing it as a file of the user's
    record_map(root, key, dst, pending=True)
    made = work((src, dst))
    record_map(root, key, made)
    return made
