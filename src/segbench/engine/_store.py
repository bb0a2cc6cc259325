"""The record store: one JSON file per (family, image), keyed by everything it depends on.

A record is reused only when its key is equal: family, record version, parameters and
the SHA-256 of every input file. Writes are atomic, so a killed run leaves whole
records or none; a record that cannot be read or does not validate is recomputed with
a warning naming it, never trusted and never a crash.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from functools import lru_cache
from pathlib import Path

from ..errors import SegbenchError
from ..io import atomic_write_text, ensure_dir

RECORDS_DIR = ".segbench-records"


class RecordWarning(UserWarning):
    """A saved record was damaged or unreadable and is computed again."""


class ExcludedWarning(UserWarning):
    """Items were left out of a result because they cannot be scored (the reason is
    the family's, see :attr:`segbench.spec.Family.excluded`)."""


def fingerprint(path) -> str:
    """SHA-256 of a file, computed once per (path, mtime, size) in each process."""
    st = Path(path).stat()
    return _sha256(str(path), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=8192)
def _sha256(path: str, mtime_ns: int, size: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def record_key(family, params: dict, inputs: dict) -> dict:
    """The key of one record: what it was computed from.

    ``inputs`` maps a role (``'gt'``, ``'pred'``) to the SHA-256 digests of its files
    (or of its in-memory content)."""
    return {
        "family": family.name,
        "version": family.version,
        "params": params,
        "inputs": dict(sorted(inputs.items())),
    }


def records_digest(keyed) -> str:
    """SHA-256 of ``[(id, record key), ...]``: what a result was summarized from, so a
    reader of the run folder can check that the records there are those records."""
    text = json.dumps([[i, k] for i, k in keyed], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class RecordStore:
    """Records of one output folder, ``<out>/.segbench-records/<family>/<id>.json``.

    Parameters
    ----------
    out_dir : path or None
        None keeps nothing (a run without ``--out``): every load misses, saves are
        dropped.
    """

    def __init__(self, out_dir=None):
        self.root = None if out_dir is None else Path(out_dir) / RECORDS_DIR

    def _path(self, family, iid: str) -> Path:
        return self.root / family.name / f"{iid}.json"

    def has_record(self, family, iid: str) -> bool:
        """Whether the store holds a record of ``family`` for ``iid`` (of any key)."""
        return self.root is not None and self._path(family, iid).is_file()

    def prepare(self, families) -> None:
        """Create the record folders (OutputError if that is impossible)."""
        if self.root is not None:
            for family in families:
                ensure_dir(self.root / family.name)

    def load(self, family, iid: str, key: dict):
        """The saved record of ``iid`` if its key equals ``key``, else None."""
        if self.root is None:
            return None
        return self._load(self._path(family, iid), key, _reader(family, key))

    def load_joint(self, family, task_key: str, key: dict):
        """The saved joint record named ``task_key`` if its key equals ``key``."""
        if self.root is None:
            return None
        return self._load(
            self.root / family.name / "joint" / f"{task_key}.json",
            key,
            family.joint_from_json,
        )

    def save_joint(self, family, task_key: str, key: dict, record) -> None:
        """Write one joint record atomically."""
        if self.root is None:
            return
        path = self.root / family.name / "joint" / f"{task_key}.json"
        ensure_dir(path.parent)
        self._write(path, task_key, key, family.joint_to_json(record))

    def _load(self, path: Path, key: dict, from_json):
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            return _damaged(path, f"unreadable ({exc})")
        try:
            data = json.loads(text)
        except ValueError:
            return _damaged(path, "not valid JSON (a run was killed while writing?)")
        if not isinstance(data, dict) or "key" not in data or "record" not in data:
            return _damaged(path, "not a segbench record")
        if data["key"] != key:
            return None  # other parameters or changed inputs: recompute quietly
        try:
            return from_json(data["record"])
        except (
            KeyError,
            IndexError,
            TypeError,
            ValueError,
            AttributeError,
            OverflowError,  # a 400-digit count does not fit a float
            SegbenchError,
        ) as exc:
            return _damaged(path, f"does not validate ({exc})")

    def saved(self, family, iid: str):
        """``(key, record)`` saved for ``iid`` whatever its key (None if absent or
        damaged): for readers of a finished run, who check the keys themselves."""
        if self.root is None:
            return None
        path = self._path(family, iid)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return data["key"], _reader(family, data["key"])(data["record"])
        except (
            OSError,
            UnicodeDecodeError,
            ValueError,
            KeyError,
            IndexError,
            TypeError,
            AttributeError,
            OverflowError,
            SegbenchError,
        ):
            return None

    def save(self, family, iid: str, key: dict, record) -> None:
        """Write one record atomically (OutputError if it cannot be written)."""
        if self.root is None:
            return
        self._write(self._path(family, iid), iid, key, family.to_json(record))

    @staticmethod
    def _write(path: Path, name: str, key: dict, payload) -> None:
        atomic_write_text(
            path,
            json.dumps({"id": name, "key": key, "record": payload}, separators=(",", ":")),
        )


def _reader(family, key):
    """``payload -> record``: the family's ``from_json``, then its ``validate`` against
    the parameters of the record's key."""
    if family.validate is None:
        return family.from_json

    def read(payload):
        record = family.from_json(payload)
        family.validate(record, key["params"])
        return record

    return read


def _damaged(path: Path, why: str):
    warnings.warn(
        f"{path}: the record is {why}; computing it again"
        if why.startswith(("unreadable", "not "))
        else f"{path}: the record {why}; computing it again",
        RecordWarning,
        stacklevel=3,
    )
    return None
