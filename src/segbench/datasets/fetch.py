"""Download, verify and unpack the official BSDS archives: ``segbench fetch``.

:func:`fetch` downloads each archive of a dataset into ``dest`` (resuming a partial
``.part`` file with an HTTP Range request), verifies its size and SHA-256 when they are
known, unpacks it with :func:`~segbench.datasets.safe_extract`, checks that the result
is a readable dataset of the expected size, and records what it did in
``dest/.segbench-fetch/<name>.json``. A second call with that record and every file
it lists in place returns at once, without touching the network.

Only the standard library (:mod:`urllib`) is used for HTTP.
"""

from __future__ import annotations

import filecmp
import hashlib
import http.client
import json
import os
import re
import shutil
import stat
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from os import PathLike
from pathlib import Path

from ..errors import InputError, SegbenchError, first_names
from ..io import atomic_write_bytes, hold_lock, release_lock
from ._archive import DEFAULT_MAX_BYTES, _ensure_dir, safe_extract
from .bsds import BSDS300, BSDS500

__all__ = ["REGISTRY", "Archive", "FetchError", "Source", "download", "fetch"]

_CHUNK = 1 << 16
_USER_AGENT = "segbench-fetch (Python urllib)"
MARKER_DIR = ".segbench-fetch"


class FetchError(SegbenchError):
    """A download failed (network, HTTP status, interrupted transfer) or did not verify
    (size, SHA-256). ``resumable`` is True when a ``.part`` file was kept and a rerun
    continues where this attempt stopped."""

    def __init__(self, message: str, *, resumable: bool = False):
        self.resumable = resumable
        super().__init__(message)


@dataclass(frozen=True)
class Archive:
    """One file to download.

    Attributes
    ----------
    url : str
        http, https or file URL.
    filename : str
        Name of the downloaded file in ``dest`` (the partial download is
        ``<filename>.part``).
    size : int or None
        Expected size in bytes; checked when known.
    sha256 : str or None
        Expected SHA-256 (hex); checked when known.
    """

    url: str
    filename: str
    size: int | None = None
    sha256: str | None = None


@dataclass(frozen=True)
class Source:
    """A fetchable dataset: its archives and what a good unpacked copy looks like.

    Attributes
    ----------
    name : str
        Registry key, also the name of the record file.
    archives : tuple of Archive
    root : str
        The dataset root inside ``dest`` after unpacking (what the reader opens).
    reader : str
        ``'bsds500'`` or ``'bsds300'``: the reader that must open ``root``; None to
        skip that check.
    counts : dict of str to int
        Expected number of items per split (checked after unpacking); empty to skip.
    description : str
    """

    name: str
    archives: tuple[Archive, ...]
    root: str
    reader: str | None = None
    counts: dict = field(default_factory=dict)
    description: str = ""


_BERKELEY = "https://www2.eecs.berkeley.edu/Research/Projects/CS/vision/grouping"

#: The datasets ``segbench fetch`` knows. The archives' exact sizes and SHA-256 digests
#: are not recorded here: they could not be confirmed from this project's environment
#: (no Internet access), and a wrong value would make every download fail. Until they
#: are filled in, a download is verified by the structure of what it unpacks (the
#: reader opens it and the split sizes match ``counts``), its SHA-256 is printed and
#: stored in the record, and a user who knows the digest passes ``sha256=``
#: (``--sha256``). To pin a digest, set ``sha256`` (and ``size``) below.
REGISTRY: dict[str, Source] = {
    "bsds500": Source(
        "bsds500",
        (
            Archive(
                f"{_BERKELEY}/BSR/BSR_bsds500.tgz",
                "BSR_bsds500.tgz",
                size=None,  # about 70 MB
                sha256=None,
            ),  # unknown here; see the comment above
        ),
        root="BSR/BSDS500/data",
        reader="bsds500",
        counts={"train": 200, "val": 100, "test": 200},
        description="BSDS500 images and ground truth with the BSR benchmark code "
        "(January 2013 update)",
    ),
    "bsds300": Source(
        "bsds300",
        (
            Archive(
                f"{_BERKELEY}/segbench/BSDS300-images.tgz",
                "BSDS300-images.tgz",
                size=None,  # about 22 MB
                sha256=None,
            ),  # unknown here; see the comment above
            Archive(
                f"{_BERKELEY}/segbench/BSDS300-human.tgz",
                "BSDS300-human.tgz",
                size=None,  # about 27 MB
                sha256=None,
            ),  # unknown here; see the comment above
        ),
        root="BSDS300",
        reader="bsds300",
        counts={"train": 200, "test": 100},
        description="BSDS300 images and human segmentations (.seg, colour and gray)",
    ),
}


# ---------------------------------------------------------------------------------------
# hashing and progress


def sha256_file(path: str | PathLike) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _bar(total: int | None, initial: int, desc: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(
        total=total,
        initial=initial,
        desc=desc,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        disable=not enabled,
        file=sys.stderr,
        leave=True,
    )


def _norm_sha(value: str | None) -> str | None:
    if value is None:
        return None
    v = value.strip().lower()
    if not re.fullmatch(r"[0-9a-f]{64}", v):
        raise InputError(f"not a SHA-256 digest (64 hex digits): {value!r}")
    return v


# ---------------------------------------------------------------------------------------
# download


_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")


def _open(url: str, offset: int, timeout: float):
    headers = {"User-Agent": _USER_AGENT, "Accept-Encoding": "identity"}
    if offset > 0:
        headers["Range"] = f"bytes={offset}-"
    req = urllib.request.Request(url, headers=headers)
    return urllib.request.urlopen(req, timeout=timeout)  # noqa: S310 - scheme checked


def _check_scheme(url: str) -> None:
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme not in ("http", "https", "file"):
        raise InputError(f"unsupported URL {url!r}: expected http://, https:// or file://")


def _verify(
    path: Path, size: int | None, sha256: str | None, url: str, *, remove: bool = True
) -> str:
    """Check size and digest; return the digest. Removes the file on a mismatch
    (``remove``: a download; a file found in place is the caller's to keep)."""
    actual = path.stat().st_size
    if size is not None and actual != size:
        if remove:
            path.unlink()
        raise FetchError(
            f"{url}: downloaded {actual} bytes but expected {size}; the file was "
            "removed, rerun to download it again"
            if remove
            else f"{path.name} holds {actual} bytes, not the archive's {size}"
        )
    digest = sha256_file(path)
    if sha256 is not None and digest != sha256:
        if remove:
            path.unlink()
        raise FetchError(
            f"{url}: SHA-256 mismatch: expected {sha256}, got {digest}; "
            "the file was removed (a corrupt or tampered download, or a "
            "changed archive)"
            if remove
            else f"{path.name} has SHA-256 {digest}, not the archive's {sha256}"
        )
    return digest


def _transfer(
    url: str, part: Path, size: int | None, progress: bool, timeout: float
) -> None:
    """One attempt: append to ``part`` (resuming at its length) until complete."""
    offset = part.stat().st_size if part.exists() else 0
    if size is not None and offset > size:
        part.unlink()
        offset = 0
    if size is not None and offset == size:
        return
    try:
        resp = _open(url, offset, timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and offset > 0:
            # Range not satisfiable: the partial file is complete (or longer than the
            # server's file). Complete if the server's length equals ours.
            content_range = exc.headers.get("Content-Range", "") or ""
            exc.close()
            found = re.search(r"/(\d+)\s*$", content_range)
            if found and int(found.group(1)) == offset:
                return
            part.unlink()
            return _transfer(url, part, size, progress, timeout)
        raise FetchError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        reason = getattr(exc, "reason", exc)
        what = "cannot read" if url.lower().startswith("file:") else "cannot connect"
        raise FetchError(f"{url}: {what}: {reason}") from None
    with resp:
        status = getattr(resp, "status", None) or 200
        total: int | None
        if status == 206:
            m = _CONTENT_RANGE.match(resp.headers.get("Content-Range", "") or "")
            if not m or int(m.group(1)) != offset:
                # A range we did not ask for: start over rather than splice.
                part.unlink(missing_ok=True)
                raise FetchError(
                    f"{url}: the server answered the resume request with "
                    "an unexpected range; the partial file was removed, "
                    "rerun to download from the start"
                )
            total = None if m.group(3) == "*" else int(m.group(3))
            mode = "ab"
        else:
            if offset:  # the server ignored Range: the body is the whole file
                offset = 0
            length = resp.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            mode = "wb"
        if size is not None and total is not None and total != size:
            raise FetchError(
                f"{url}: the server reports {total} bytes but {size} are "
                "expected; not downloading (a different or changed archive)"
            )
        expected = total if total is not None else size
        received = offset
        with (
            open(part, mode) as out,
            _bar(expected, offset, part.name[:-5], progress) as bar,
        ):
            try:
                while chunk := resp.read(_CHUNK):
                    out.write(chunk)
                    received += len(chunk)
                    bar.update(len(chunk))
            except (OSError, http.client.HTTPException) as exc:
                raise FetchError(
                    f"{url}: transfer interrupted after {received} bytes "
                    f"({exc.__class__.__name__}); rerun to resume",
                    resumable=True,
                ) from None
        if expected is not None and received < expected:
            raise FetchError(
                f"{url}: transfer interrupted after {received} of {expected} "
                "bytes; rerun to resume",
                resumable=True,
            )


def download(
    url: str,
    path: str | PathLike,
    *,
    size: int | None = None,
    sha256: str | None = None,
    progress: bool = True,
    retries: int = 2,
    timeout: float = 60.0,
) -> tuple[Path, str]:
    """Download ``url`` to ``path``, resuming ``<path>.part``, and verify it.

    Parameters
    ----------
    url : str
        http, https or file URL (redirects are followed).
    path : str or PathLike
        Final file. If it exists already it is verified and kept when it matches
        (and removed when it does not).
    size, sha256 : optional
        Expected size in bytes and hex SHA-256; checked when given.
    progress : bool
        tqdm progress bar on stderr.
    retries : int
        Further attempts after an interrupted transfer, each resuming where the last
        stopped; a resumed file that fails verification is downloaded once more from
        the start.
    timeout : float
        Seconds without data before a connection counts as broken.

    Returns
    -------
    (Path, str)
        The file and its SHA-256.

    Raises
    ------
    FetchError
        Network or HTTP errors, an interrupted transfer after all retries (the
        ``.part`` file is kept, so the next call resumes), a size or SHA-256 mismatch
        (the file is removed).
    """
    _check_scheme(url)
    sha256 = _norm_sha(sha256)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        try:
            return path, _verify(path, size, sha256, url, remove=False)
        except FetchError as exc:
            refused = _refused_name(path)  # kept (perhaps copied there by hand)
            os.replace(path, refused)
            print(
                f"segbench: {path.name} did not verify ({exc}); moved to "
                f"{refused.name}, downloading again",
                file=sys.stderr,
            )
    part = path.with_name(path.name + ".part")
    origin = path.with_name(f".{path.name}.part.url")
    try:
        started_from = origin.read_text(encoding="utf-8")
    except OSError:
        started_from = None
    if part.exists() and started_from not in (None, url):  # another URL's: not spliced
        part.unlink()
    atomic_write_bytes(origin, url.encode())
    try:
        return _download_part(url, path, part, size, sha256, progress, retries, timeout)
    finally:
        if not part.exists():  # done, or nothing left to resume
            origin.unlink(missing_ok=True)


def _download_part(
    url: str,
    path: Path,
    part: Path,
    size: int | None,
    sha256: str | None,
    progress: bool,
    retries: int,
    timeout: float,
) -> tuple[Path, str]:
    """:func:`download`'s attempts at ``part``, then its move to ``path``."""
    attempts = 0
    refetched = False
    while True:
        resumed = part.exists() and part.stat().st_size > 0
        try:
            _transfer(url, part, size, progress, timeout)
        except FetchError as exc:
            attempts += 1
            if attempts > retries or not exc.resumable:
                kept = part.stat().st_size if part.exists() else 0
                if kept and not exc.resumable:  # a retry that failed after a cut
                    raise FetchError(
                        f"{exc}; the {kept} bytes received are kept in {part.name}: "
                        "rerun to resume",
                        resumable=True,
                    ) from None
                raise
            continue
        try:
            digest = _verify(part, size, sha256, url)
        except FetchError:
            if resumed and not refetched:
                refetched = True  # a stale or foreign .part: one fresh download
                continue
            raise
        os.replace(part, path)
        return path, digest


# ---------------------------------------------------------------------------------------
# fetch


def _record_path(dest: Path, name: str) -> Path:
    return dest / MARKER_DIR / f"{name}.json"


def _complete(dest: Path, source: Source, expected: list[Archive]) -> Path | None:
    """The dataset root if a previous fetch finished and nothing it wrote is missing."""
    try:
        rec = json.loads(_record_path(dest, source.name).read_text())
    except (OSError, ValueError):
        return None
    if rec.get("root") != source.root:
        return None
    archives = rec.get("archives", [])
    if len(archives) != len(expected):
        return None
    for got, want in zip(archives, expected):
        if want.sha256 is not None and got.get("sha256") != want.sha256:
            return None
        if want.size is not None and got.get("size") != want.size:
            return None
    mtimes = rec.get("mtimes", {})  # (not in the records of older versions)
    for rel, nbytes in rec.get("files", {}).items():
        p = dest / rel
        try:
            st = p.lstat()
        except OSError:
            return None
        if p.is_symlink() or st.st_size != nbytes:
            return None
        if rel in mtimes and st.st_mtime_ns != mtimes[rel]:  # changed in place
            return None
    return dest / source.root


def _source_path(archive: Path) -> Path:
    return archive.with_name(f".{archive.name}.source.json")


def _remember_source(archive: Path, url: str, digest: str) -> None:
    """Note where a verified archive came from, so a later call can tell it apart."""
    atomic_write_bytes(
        _source_path(archive), json.dumps({"url": url, "sha256": digest}).encode()
    )


def _forget_if_other_source(archive: Path, want: Archive) -> None:
    """Remove an archive this code downloaded earlier when the call asks for another URL,
    or when it changed since (its recorded SHA-256 no longer holds), and no expected
    digest would tell. An archive without a record (copied in by hand) is kept."""
    note = _source_path(archive)
    if want.sha256 is not None or not archive.is_file() or not note.is_file():
        return
    try:
        info = json.loads(note.read_text())
    except (OSError, ValueError):
        info = {}
    if info.get("url") != want.url or info.get("sha256") != sha256_file(archive):
        archive.unlink()
        note.unlink(missing_ok=True)


def _refused_name(archive: Path) -> Path:
    """Where an archive that failed a check is kept: ``<name>.refused``, or
    ``<name>.refused-2``, ... when an earlier one is there (never replaced)."""
    refused, n = archive.with_name(archive.name + ".refused"), 1
    while refused.exists() or refused.is_symlink():
        n += 1
        refused = archive.with_name(f"{archive.name}.refused-{n}")
    return refused


def _set_aside(archive: Path) -> None:
    """An archive that failed a check moves to ``<name>.refused`` (kept for inspection,
    never reused): a later call downloads anew."""
    _source_path(archive).unlink(missing_ok=True)
    if archive.is_file():
        refused = _refused_name(archive)
        os.replace(archive, refused)
        print(
            f"segbench: {archive.name} failed a check and was moved to {refused.name}; "
            "a later fetch downloads it again",
            file=sys.stderr,
        )


def _remove_staging(staging: Path) -> None:
    """Remove the staging folder, and the record folder if that leaves it empty."""
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staging.parent.rmdir()
    except OSError:  # it holds a record: kept
        pass


def _move_into_place(staging: Path, dest: Path) -> dict[str, int]:
    """Move the unpacked files from ``staging`` to the same places in ``dest``; return
    ``{relative path: size}`` of every file. A file already there with the same bytes
    (an earlier fetch's) stays; one with other bytes, or a folder or link in the way,
    is the user's: nothing is moved and InputError names them."""
    staged = sorted(p for p in staging.rglob("*") if p.is_file())
    rels = [p.relative_to(staging) for p in staged]
    conflicts, present = [], set()
    for src, rel in zip(staged, rels):
        target = dest / rel
        try:
            st = os.lstat(target)
        except FileNotFoundError:
            continue
        if stat.S_ISREG(st.st_mode) and filecmp.cmp(src, target, shallow=False):
            present.add(rel)
        else:
            conflicts.append(rel.as_posix())
    if conflicts:
        raise InputError(
            f"{len(conflicts)} file(s) here differ from the archive's and would be "
            f"replaced: {first_names(conflicts)}; nothing was unpacked. Move them "
            "away, or fetch into another --dest",
            dest,
        )
    files = {}
    for src, rel in zip(staged, rels):
        if rel not in present:
            parent = _ensure_dir(dest, rel.parts[:-1])  # never through a link
            os.replace(src, parent / rel.name)
        files[rel.as_posix()] = (dest / rel).stat().st_size
    return files


def _check_dataset(root: Path, source: Source) -> None:
    if source.reader is None:
        return
    ds = (BSDS500 if source.reader == "bsds500" else BSDS300)(root)
    for split, n in source.counts.items():
        got = len(ds.ids(split)) if split in ds.splits else 0
        if got != n:
            raise FetchError(
                f"the unpacked {source.name} has {got} {split} images, "
                f"expected {n}: not the official archive, or damaged"
            )


def _per_archive(value, n: int, what: str) -> list:
    if value is None:
        return [None] * n
    if isinstance(value, str):
        value = [value]
    value = list(value)
    if len(value) != n:
        raise InputError(
            f"{n} archive(s) to fetch but {len(value)} {what} given; give "
            f"one per archive, in order"
        )
    return value


def fetch(
    name: str | Source,
    dest: str | PathLike,
    *,
    url: str | Sequence[str] | None = None,
    sha256: str | Sequence[str] | None = None,
    progress: bool = True,
    keep_archive: bool = False,
    retries: int = 2,
    timeout: float = 60.0,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Path:
    """Download, verify and unpack a dataset; return its root.

    Parameters
    ----------
    name : {'bsds500', 'bsds300'} or Source
        A key of :data:`REGISTRY`, or a :class:`Source` describing other archives.
    dest : str or PathLike
        Folder to unpack into (created). BSDS500 ends up in
        ``dest/BSR/BSDS500/data``, BSDS300 in ``dest/BSDS300``.
    url : str or list of str, optional
        Replacement URL(s) (a mirror, or ``file://`` for a local copy), one per
        archive in registry order (BSDS300 has two: images, then human). The
        registry's size and digest still apply unless ``sha256`` is given.
        ``None`` entries keep the registry URL.
    sha256 : str or list of str, optional
        Expected SHA-256 digest(s), one per archive; overrides the registry.
    progress : bool
        Progress bars on stderr.
    keep_archive : bool
        Keep the downloaded archives in ``dest`` (they are removed after a verified
        extraction by default; the record file keeps their digests).
    retries, timeout
        As :func:`download`.
    max_bytes : int
        Cap on the bytes one archive may unpack to.

    Returns
    -------
    Path
        The dataset root, ready for :class:`~segbench.datasets.BSDS500` or
        :class:`~segbench.datasets.BSDS300`.

    Raises
    ------
    FetchError
        Download or verification failure (see :func:`download`), or an unpacked
        dataset that is not the expected one.
    UnsafeArchiveError
        An archive member with an absolute path, ``..``, a link, a device or a FIFO:
        nothing of that archive is unpacked.

    Notes
    -----
    The archives are unpacked into ``dest/.segbench-fetch/staging-<name>`` and moved
    into ``dest`` only once the unpacked dataset passed its checks: a damaged or wrong
    archive leaves nothing in ``dest``. A file already in ``dest`` with the bytes the
    archive holds stays; one with other bytes (the user's) is never replaced: the call
    stops with InputError naming it, before anything is moved.

    Idempotent: after a successful fetch, ``dest/.segbench-fetch/<name>.json`` lists
    the archives' digests and every unpacked file with its size; a later call that
    finds all of them (and digests matching any expected ones) returns immediately.
    An archive already present in ``dest`` (e.g. copied there by hand) is verified
    and used instead of downloading.
    """
    if isinstance(name, Source):
        source = name
    else:
        if name not in REGISTRY:
            raise InputError(
                f"unknown dataset {name!r}; choose one of {', '.join(sorted(REGISTRY))}"
            )
        source = REGISTRY[name]
    urls = _per_archive(url, len(source.archives), "URLs")
    shas = [
        _norm_sha(s) for s in _per_archive(sha256, len(source.archives), "SHA-256 digests")
    ]
    # An explicit digest replaces the registry's size and digest (it pins the file).
    archives = [
        replace(a, url=u or a.url, sha256=s or a.sha256, size=a.size if s is None else None)
        for a, u, s in zip(source.archives, urls, shas)
    ]
    for a in archives:
        _check_scheme(a.url)
    dest = Path(dest).expanduser()  # ("~/data" from Python, or quoted on a shell)
    done = _complete(dest, source, archives)
    if done is not None:
        return done
    dest.mkdir(parents=True, exist_ok=True)
    (dest / MARKER_DIR).mkdir(exist_ok=True)
    lock = hold_lock(
        dest / MARKER_DIR / f"{source.name}.lock",
        "another segbench fetch of " + source.name + " into this folder is running"
        "{holder}: wait for it to end",
        dest,
    )
    try:
        return _fetch_locked(
            source, archives, dest, keep_archive, progress, retries, timeout, max_bytes
        )
    finally:
        release_lock(lock)
        if lock is not None:  # a failed fetch leaves nothing in dest
            (dest / MARKER_DIR / f"{source.name}.lock").unlink(missing_ok=True)
            try:
                (dest / MARKER_DIR).rmdir()
            except OSError:  # it holds a record: kept
                pass


def _hand_copied(archive: Path) -> tuple | None:
    """(inode, mtime) of an archive in ``dest`` that no fetch downloaded (no source
    record: copied there by hand), or None. Such a file is used and kept."""
    try:
        st = archive.stat()
    except OSError:
        return None
    return None if _source_path(archive).is_file() else (st.st_ino, st.st_mtime_ns)


def _fetch_locked(
    source: Source,
    archives: list[Archive],
    dest: Path,
    keep_archive: bool,
    progress: bool,
    retries: int,
    timeout: float,
    max_bytes: int,
) -> Path:
    """:func:`fetch` once it holds the folder's lock."""
    done = _complete(dest, source, archives)  # (another call may have finished it)
    if done is not None:
        return done
    hand = {a.filename: _hand_copied(dest / a.filename) for a in archives}
    # unpacked here first, moved into dest only once every check has passed: a damaged
    # or wrong archive leaves nothing in dest, and no file of the user's is replaced
    staging = dest / MARKER_DIR / f"staging-{source.name}"
    shutil.rmtree(staging, ignore_errors=True)  # what an interrupted call left
    records = []
    try:
        for a in archives:
            _forget_if_other_source(dest / a.filename, a)
            path, digest = download(
                a.url,
                dest / a.filename,
                size=a.size,
                sha256=a.sha256,
                progress=progress,
                retries=retries,
                timeout=timeout,
            )
            st = path.stat()
            if hand[a.filename] != (st.st_ino, st.st_mtime_ns):  # downloaded here
                hand[a.filename] = None
                _remember_source(path, a.url, digest)
            if a.sha256 is None:
                print(
                    f"segbench: {a.filename}: SHA-256 {digest} (no expected digest "
                    "known; pass --sha256 to pin it)",
                    file=sys.stderr,
                )
            safe_extract(path, staging, max_bytes=max_bytes)
            records.append(
                {
                    "url": a.url,
                    "filename": a.filename,
                    "size": path.stat().st_size,
                    "sha256": digest,
                    "verified": a.sha256 is not None,
                }
            )
        if not (staging / source.root).is_dir():
            raise FetchError(
                f"the archive(s) did not unpack to {source.root}/ in "
                f"{dest}: not the expected archive"
            )
        _check_dataset(staging / source.root, source)
    except (FetchError, InputError):  # UnsafeArchiveError is an InputError
        _remove_staging(staging)
        for a in archives:  # never reused by a later call
            _set_aside(dest / a.filename)
        raise
    try:
        files = _move_into_place(staging, dest)
    finally:
        _remove_staging(staging)
    root = dest / source.root
    rec = {
        "name": source.name,
        "root": source.root,
        "archives": records,
        "files": files,
        "mtimes": {rel: (dest / rel).lstat().st_mtime_ns for rel in files},
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    marker = _record_path(dest, source.name)
    marker.parent.mkdir(exist_ok=True)
    atomic_write_bytes(marker, (json.dumps(rec, indent=1) + "\n").encode())
    if not keep_archive:
        for a in archives:  # those it downloaded; one copied in by hand is the user's
            if hand[a.filename] is None:
                (dest / a.filename).unlink(missing_ok=True)
                _source_path(dest / a.filename).unlink(missing_ok=True)
    return root
