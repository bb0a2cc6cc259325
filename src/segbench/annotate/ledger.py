"""The annotation ledger: subjects, images, assignments, drafts and submissions in SQLite.

The database (``OUT/annotate.sqlite``) is the source of truth; the ``.seg`` files are
derived from it. A submission is committed (labels included) before its file is written,
and :meth:`Ledger.unwritten` lists those whose file a crash kept from being written, so a
restart rewrites them: a killed server loses no acknowledged submission.

Every change runs in one ``BEGIN IMMEDIATE`` transaction (one writer at a time, readers
never blocked: WAL mode), so concurrent requests cannot break an assignment rule.
"""

from __future__ import annotations

import random
import secrets
import sqlite3
import threading
import time
import zlib
from collections.abc import Collection
from contextlib import contextmanager
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

from ..errors import InputError
from .assign import choose, choose_gray

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS subjects (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS images (
    iid TEXT PRIMARY KEY, number INTEGER NOT NULL UNIQUE, width INTEGER NOT NULL,
    height INTEGER NOT NULL, path TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS assignments (
    subject INTEGER NOT NULL REFERENCES subjects(id),
    iid TEXT NOT NULL REFERENCES images(iid),
    gray INTEGER NOT NULL, invert INTEGER NOT NULL, flipflop INTEGER NOT NULL,
    assigned REAL NOT NULL, done INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (subject, iid));
CREATE TABLE IF NOT EXISTS drafts (
    subject INTEGER NOT NULL, iid TEXT NOT NULL, gray INTEGER NOT NULL,
    segments INTEGER NOT NULL, labels BLOB NOT NULL, saved REAL NOT NULL,
    PRIMARY KEY (subject, iid, gray));
CREATE TABLE IF NOT EXISTS submissions (
    subject INTEGER NOT NULL, iid TEXT NOT NULL, gray INTEGER NOT NULL,
    invert INTEGER NOT NULL, flipflop INTEGER NOT NULL, segments INTEGER NOT NULL,
    date TEXT NOT NULL, labels BLOB NOT NULL, submitted REAL NOT NULL,
    written INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (subject, iid, gray));
"""


@dataclass(frozen=True)
class Presentation:
    """How an image is shown: the ``gray``, ``invert`` and ``flipflop`` header fields."""

    gray: bool = False
    invert: bool = False
    flipflop: bool = False


@dataclass(frozen=True)
class Submission:
    """One submitted segmentation as the ledger holds it (labels in image orientation,
    0-based, ``segments`` of them, as zlib-compressed little-endian uint16)."""

    subject: int
    iid: str
    presentation: Presentation
    segments: int
    date: str
    labels: bytes
    #: the ledger knows the ``.seg`` file to be on disk (fsynced) with these labels
    written: bool = False

    def label_array(self, width: int, height: int):
        """The labels as an (height, width) uint16 array.

        Raises
        ------
        ValueError
            The stored labels are damaged or do not cover a ``width`` x ``height`` image.
        """
        import numpy as np

        try:
            raw = unpack_labels(self.labels)
        except zlib.error as exc:
            raise ValueError(f"damaged labels ({exc})") from None
        if len(raw) != 2 * width * height:
            raise ValueError(f"{len(raw) // 2} labels for a {width}x{height} image")
        labels = np.frombuffer(raw, "<u2").reshape(height, width)
        if labels.size and int(labels.max()) >= self.segments:
            raise ValueError(f"a label is {int(labels.max())}, not below {self.segments}")
        return labels


#: ``assignments.done``: 0 open (a reservation), 1 submitted, 2 released (given up)
_STATES = {0: "open", 1: "done", 2: "released"}


#: Seconds a request waits for the ledger's write lock (held by another request for
#: milliseconds; longer means another program holds it)
BUSY_SECONDS = 15.0


def _locked(exc: sqlite3.OperationalError) -> bool:
    """Whether an SQLite error is a lock another connection holds."""
    return "locked" in str(exc) or "busy" in str(exc)


class AnnotateWarning(UserWarning):
    """Something the annotation tool worked around and the user should know: a
    photograph left out, a submission exported from the ledger before its file existed,
    a wait for the ledger's lock."""


class RuleError(Exception):
    """A request the assignment rules or the ledger's state refuse (HTTP 409)."""


def pack_labels(raw: bytes) -> bytes:
    """Compress a little-endian uint16 label buffer for the ledger."""
    return zlib.compress(raw, 6)


def unpack_labels(blob: bytes) -> bytes:
    """Inverse of :func:`pack_labels`."""
    return zlib.decompress(blob)


class Ledger:
    """The SQLite ledger of an annotation folder.

    Parameters
    ----------
    path : str or PathLike
        The database file; created with its tables if absent.

    Notes
    -----
    One connection per thread (``sqlite3`` connections are not shared across threads);
    ``synchronous=FULL`` so that a committed transaction survives a power loss, not only
    a killed process.
    """

    def __init__(self, path: str | PathLike, *, lock_wait: float = 4.0):
        import warnings

        self.path = Path(path)
        self._local = threading.local()
        # short waits while opening: a lock held by another program is said at once and
        # ends the start in seconds, not after the minute a request may wait
        self._busy = 0.25
        deadline, said = time.monotonic() + lock_wait, False
        while True:
            try:
                with self.transaction() as db:
                    for statement in _SCHEMA.split(";"):  # executescript commits early
                        if statement.strip():
                            db.execute(statement)
                    if (
                        db.execute("SELECT 1 FROM meta WHERE key='secret'").fetchone()
                        is None
                    ):
                        db.execute(
                            "INSERT INTO meta VALUES ('secret', ?)",
                            (secrets.token_bytes(32),),
                        )
                break
            except sqlite3.OperationalError as exc:
                if not _locked(exc):
                    self.close()
                    raise InputError(
                        f"cannot open the annotation ledger: {exc}", self.path
                    ) from None
                if time.monotonic() > deadline:
                    self.close()
                    raise InputError(
                        f"the ledger is locked by another program (another segbench "
                        f"annotate on this folder, or an SQLite tool with it open); gave "
                        f"up after {lock_wait:g} s: stop that program and start again",
                        self.path,
                    ) from None
                if not said:
                    warnings.warn(
                        f"{self.path}: waiting for the ledger lock held by "
                        f"another program (at most {lock_wait:g} s)",
                        AnnotateWarning,
                        stacklevel=2,
                    )
                    said = True
                self.close()
                time.sleep(0.2)
            except sqlite3.Error as exc:  # not a database, read-only, ...
                self.close()
                raise InputError(
                    f"cannot open the annotation ledger: {exc}", self.path
                ) from None
        self._busy = BUSY_SECONDS
        self.close()  # the next connection of this thread waits as requests should

    # -- plumbing --------------------------------------------------------------------
    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(
                self.path, timeout=self._busy, isolation_level=None, check_same_thread=False
            )
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=FULL")
                db.execute("PRAGMA foreign_keys=ON")
            except BaseException:
                db.close()
                raise
            self._local.db = db
        return db

    @contextmanager
    def transaction(self):
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on any exception)."""
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def close(self) -> None:
        """Close this thread's connection."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None

    def secret(self) -> bytes:
        """The key that signs subject cookies (kept, so cookies survive a restart)."""
        return bytes(
            self._db().execute("SELECT value FROM meta WHERE key='secret'").fetchone()[0]
        )

    # -- subjects and images ---------------------------------------------------------
    def subject_id(self, name: str) -> int:
        """The stable integer id of subject ``name`` (the ``user`` of the ``.seg``
        header and the folder name), created on first use from 1 up."""
        with self.transaction() as db:
            row = db.execute("SELECT id FROM subjects WHERE name=?", (name,)).fetchone()
            if row:
                return row[0]
            return db.execute(
                "INSERT INTO subjects (name, created) VALUES (?, ?)", (name, time.time())
            ).lastrowid

    def subjects(self) -> dict[int, str]:
        """Subject id -> name."""
        return dict(self._db().execute("SELECT id, name FROM subjects ORDER BY id"))

    def add_images(self, images) -> None:
        """Record images ``(iid, width, height, path)``; known ones keep their number.

        The number (the ``image`` of the ``.seg`` header) is the id itself when it is a
        decimal number not yet taken, else the next free number from 1 000 000 up.

        Raises
        ------
        RuleError
            A known image id whose size changed (its segmentations would not fit).
        """
        with self.transaction() as db:
            known = {
                r[0]: (r[1], r[2])
                for r in db.execute("SELECT iid, width, height FROM images")
            }
            numbers = {r[0] for r in db.execute("SELECT number FROM images")}
            for iid, width, height, path in images:
                if iid in known:
                    if known[iid] != (width, height):
                        raise RuleError(
                            f"{path}: image {iid!r} was {known[iid][0]}x"
                            f"{known[iid][1]} (WxH) when first annotated and "
                            f"is {width}x{height} now"
                        )
                    db.execute("UPDATE images SET path=? WHERE iid=?", (str(path), iid))
                    continue
                number = int(iid) if iid.isdigit() and len(iid) < 10 else None
                if number is None or number in numbers:
                    number = max([n for n in numbers if n >= 1_000_000] + [999_999]) + 1
                numbers.add(number)
                db.execute(
                    "INSERT INTO images VALUES (?, ?, ?, ?, ?)",
                    (iid, number, width, height, str(path)),
                )

    def image(self, iid: str) -> tuple[int, int, int, str] | None:
        """(number, width, height, path) of image ``iid``, or None if unknown."""
        return (
            self._db()
            .execute("SELECT number, width, height, path FROM images WHERE iid=?", (iid,))
            .fetchone()
        )

    def image_ids(self) -> list[str]:
        """Every image id, sorted."""
        return [r[0] for r in self._db().execute("SELECT iid FROM images ORDER BY iid")]

    # -- assignments -----------------------------------------------------------------
    def open_assignment(self, subject: int) -> tuple[str, Presentation] | None:
        """The subject's unfinished assignment (oldest first), if any."""
        row = (
            self._db()
            .execute(
                "SELECT iid, gray, invert, flipflop FROM assignments WHERE subject=? AND "
                "done=0 ORDER BY assigned, iid LIMIT 1",
                (subject,),
            )
            .fetchone()
        )
        return None if row is None else (row[0], Presentation(*map(bool, row[1:])))

    def assignment(self, subject: int, iid: str) -> tuple[Presentation, str] | None:
        """(presentation, state) of the subject's assignment of ``iid``, or None; the
        state is ``'open'``, ``'done'`` (submitted) or ``'released'`` (skipped by the
        subject, or a reservation that expired)."""
        row = (
            self._db()
            .execute(
                "SELECT gray, invert, flipflop, done FROM assignments WHERE subject=? AND "
                "iid=?",
                (subject, iid),
            )
            .fetchone()
        )
        return None if row is None else (Presentation(*map(bool, row[:3])), _STATES[row[3]])

    def assign(
        self,
        subject: int,
        per_image: int,
        rng: random.Random,
        *,
        invert: bool = False,
        flipflop: bool = False,
        images: Collection[str] | None = None,
        expire_after: float | None = None,
    ) -> tuple[str, Presentation] | None:
        """The subject's open assignment, else a new one under the 2001 rules.

        Parameters
        ----------
        subject, per_image, rng
            Who asks, the most subjects per image, the random choice.
        invert, flipflop : bool
            The presentation of a new assignment (grey is chosen by the rules).
        images : collection of str, optional
            The images that may be given now (default: every image of the ledger); the
            others still count for the rule that no two sets are the same.
        expire_after : float, optional
            Seconds: open assignments of anyone whose last change (the assignment or its
            latest draft) is older are released first, so an image reserved by a subject
            who never came back goes to others. The subject keeps the draft in the
            ledger but is not given that image again.

        Returns
        -------
        (str, Presentation) or None
            None when no image may be given to this subject.

        Notes
        -----
        The choice and the insert are one transaction, so concurrent requests see each
        other's reservations.
        """
        with self.transaction() as db:
            if expire_after is not None:
                db.execute(
                    "UPDATE assignments SET done=2 WHERE done=0 AND max(assigned, coalesce("
                    "(SELECT max(saved) FROM drafts d WHERE d.subject=assignments.subject "
                    "AND d.iid=assignments.iid), 0)) < ?",
                    (time.time() - expire_after,),
                )
            row = db.execute(
                "SELECT iid, gray, invert, flipflop FROM assignments WHERE subject=? AND "
                "done=0 ORDER BY assigned, iid LIMIT 1",
                (subject,),
            ).fetchone()
            if row is not None:
                return row[0], Presentation(*map(bool, row[1:]))
            sets: dict[str, set] = {
                r[0]: set() for r in db.execute("SELECT iid FROM images")
            }
            per_gray: dict[str, list[int]] = {i: [0, 0] for i in sets}
            exclude = set() if images is None else set(sets) - set(images)
            for s, iid, gray, done in db.execute(
                "SELECT subject, iid, gray, done FROM assignments"
            ):
                if done == 2:  # given up: a free place, but not for this subject
                    if s == subject:
                        exclude.add(iid)
                    continue
                sets[iid].add(s)
                per_gray[iid][gray] += 1
            iid = choose(
                subject,
                {i: frozenset(s) for i, s in sets.items()},
                per_image,
                rng,
                exclude=exclude,
            )
            if iid is None:
                return None
            colour, grey = per_gray[iid]
            total = (
                sum(c[0] for c in per_gray.values()),
                sum(c[1] for c in per_gray.values()),
            )
            gray = choose_gray((colour, grey), total, rng)
            db.execute(
                "INSERT INTO assignments VALUES (?, ?, ?, ?, ?, ?, 0)",
                (subject, iid, int(gray), int(invert), int(flipflop), time.time()),
            )
            return iid, Presentation(gray, invert, flipflop)

    def release(self, subject: int, iid: str) -> None:
        """The subject gives up the open assignment of ``iid`` (a photograph that does
        not load, say): its place goes to others, the draft stays in the ledger, and the
        subject is not given the image again.

        Raises
        ------
        RuleError
            No open assignment of ``iid`` for this subject.
        """
        with self.transaction() as db:
            if (
                db.execute(
                    "UPDATE assignments SET done=2 WHERE subject=? AND iid=? AND done=0",
                    (subject, iid),
                ).rowcount
                != 1
            ):
                raise RuleError(f"image {iid!r} is not an open assignment of yours")

    def assignment_sets(self) -> dict[str, frozenset]:
        """Image id -> the subjects assigned to it, open or submitted (every image, empty
        sets included; released assignments are not members)."""
        sets: dict[str, set] = {i: set() for i in self.image_ids()}
        for s, iid in self._db().execute(
            "SELECT subject, iid FROM assignments WHERE done<2"
        ):
            sets[iid].add(s)
        return {i: frozenset(s) for i, s in sets.items()}

    # -- drafts and submissions ------------------------------------------------------
    def save_draft(
        self, subject: int, iid: str, gray: bool, segments: int, raw: bytes
    ) -> None:
        """Keep the work in progress (labels in image orientation)."""
        with self.transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO drafts VALUES (?, ?, ?, ?, ?, ?)",
                (subject, iid, int(gray), segments, pack_labels(raw), time.time()),
            )

    def draft_ids(self, subject: int, gray: bool) -> set[str]:
        """The images on which ``subject`` has a draft (of one presentation)."""
        return {
            r[0]
            for r in self._db().execute(
                "SELECT iid FROM drafts WHERE subject=? AND gray=?", (subject, int(gray))
            )
        }

    def draft(self, subject: int, iid: str, gray: bool) -> tuple[int, bytes] | None:
        """(segments, raw labels) of the draft, else of the submission, else None."""
        db = self._db()
        for table in ("drafts", "submissions"):
            row = db.execute(
                f"SELECT segments, labels FROM {table} WHERE subject=? AND "
                "iid=? AND gray=?",
                (subject, iid, int(gray)),
            ).fetchone()
            if row is not None:
                return row[0], unpack_labels(row[1])
        return None

    def submit(
        self,
        subject: int,
        iid: str,
        presentation: Presentation,
        segments: int,
        raw: bytes,
        date: str,
        *,
        collect: bool,
    ) -> Submission:
        """Record a finished segmentation; in collection mode it closes the subject's open
        assignment of ``iid`` (and is refused without one), otherwise it replaces an
        earlier submission of the same presentation.

        Raises
        ------
        RuleError
            Collection mode and no open assignment of ``iid`` for this subject.
        """
        gray = int(presentation.gray)
        with self.transaction() as db:
            if collect:
                row = db.execute(
                    "SELECT done FROM assignments WHERE subject=? AND iid=?", (subject, iid)
                ).fetchone()
                if row is None:
                    raise RuleError(f"image {iid!r} is not assigned to you")
                if row[0] == 1:
                    raise RuleError(f"image {iid!r} is already submitted")
                if row[0] == 2:
                    raise RuleError(
                        f"you gave up image {iid!r} (skipped, or the reservation expired)"
                    )
                db.execute(
                    "UPDATE assignments SET done=1 WHERE subject=? AND iid=?",
                    (subject, iid),
                )
            blob = pack_labels(raw)
            db.execute(
                "INSERT OR REPLACE INTO submissions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
                (
                    subject,
                    iid,
                    gray,
                    int(presentation.invert),
                    int(presentation.flipflop),
                    segments,
                    date,
                    blob,
                    time.time(),
                ),
            )
            db.execute(
                "DELETE FROM drafts WHERE subject=? AND iid=? AND gray=?",
                (subject, iid, gray),
            )
        return Submission(subject, iid, presentation, segments, date, blob)

    def mark_written(self, sub: Submission) -> None:
        """Note that the ``.seg`` file of ``sub`` is on disk."""
        with self.transaction() as db:
            db.execute(
                "UPDATE submissions SET written=1 WHERE subject=? AND iid=? AND "
                "gray=? AND date=?",
                (sub.subject, sub.iid, int(sub.presentation.gray), sub.date),
            )

    def submissions(self, *, unwritten_only: bool = False) -> list[Submission]:
        """Every submission (or those whose file is not known to be written), ordered by
        image, presentation (colour first) and subject."""
        where = " WHERE written=0" if unwritten_only else ""
        rows = (
            self._db()
            .execute(
                "SELECT subject, iid, gray, invert, flipflop, segments, date, labels, written "
                f"FROM submissions{where} ORDER BY iid, gray, subject"
            )
            .fetchall()
        )
        return [
            Submission(
                r[0], r[1], Presentation(*map(bool, r[2:5])), r[5], r[6], r[7], bool(r[8])
            )
            for r in rows
        ]

    def submitted_ids(self, subject: int, gray: bool | None = None) -> set[str]:
        """The images ``subject`` has submitted (of one presentation, or of any)."""
        if gray is None:
            rows = self._db().execute(
                "SELECT iid FROM submissions WHERE subject=?", (subject,)
            )
        else:
            rows = self._db().execute(
                "SELECT iid FROM submissions WHERE subject=? AND gray=?",
                (subject, int(gray)),
            )
        return {r[0] for r in rows}

    def progress(self) -> dict:
        """Counts for the progress page: per image (assigned, open, colour, grey
        submitted) and per subject (name, open, submitted)."""
        db = self._db()
        images = {
            i: {"assigned": 0, "open": 0, "color": 0, "gray": 0} for i in self.image_ids()
        }
        for iid, done, n in db.execute(
            "SELECT iid, done, count(*) FROM assignments WHERE done<2 GROUP BY iid, done"
        ):
            images[iid]["assigned"] += n
            if not done:
                images[iid]["open"] += n
        for iid, gray, n in db.execute(
            "SELECT iid, gray, count(*) FROM submissions GROUP BY iid, gray"
        ):
            images[iid]["gray" if gray else "color"] += n
        subjects = {
            i: {"name": name, "open": 0, "submitted": 0}
            for i, name in self.subjects().items()
        }
        for s, n in db.execute(
            "SELECT subject, count(*) FROM assignments WHERE done=0 GROUP BY subject"
        ):
            subjects[s]["open"] = n
        for s, n in db.execute(
            "SELECT subject, count(*) FROM submissions GROUP BY subject"
        ):
            subjects[s]["submitted"] = n
        return {"images": images, "subjects": subjects}
