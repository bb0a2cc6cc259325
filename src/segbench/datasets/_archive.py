"""Safe extraction of .zip and .tar(.gz/.bz2/.xz) archives.

Archives come from the network (:func:`segbench.datasets.fetch`) and from strangers
(:func:`segbench.submit.submit`), so nothing in them is trusted. The extractor never
calls ``tarfile.extract``/``zipfile.extract``: it checks every member first, refuses the
whole archive if one member is unsafe, and then writes regular files and folders itself.

Refused (:class:`UnsafeArchiveError`, nothing written):

- absolute paths (``/etc/passwd``, ``C:\\x``, ``\\\\server\\share``), ``..`` components,
  NUL bytes in names;
- symbolic links, hard links, character and block devices, FIFOs and any other member
  that is not a regular file or a folder (tar and zip, Unix modes in zip included);
- a member whose path would lie under a file member, or two file members with one path.

Neutralised while writing:

- permissions from the archive are ignored (files 0644, folders 0755: no setuid, no
  executables), as are owners and timestamps;
- a folder or file already in ``dest`` that is a symbolic link is never followed: the
  write is refused (files are opened with ``O_NOFOLLOW``);
- the total bytes written and the number of members are capped (archive bombs).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from os import PathLike
from pathlib import Path, PurePosixPath

from ..errors import InputError, OutputError

__all__ = ["UnsafeArchiveError", "archive_kind", "safe_extract"]

#: Default caps: well above BSR_bsds500.tgz (about 70 MB packed, under 1,500 files).
DEFAULT_MAX_BYTES = 4 * 1024**3
DEFAULT_MAX_MEMBERS = 100_000
_CHUNK = 1 << 20
_TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")


class UnsafeArchiveError(InputError):
    """An archive holds a member that could write outside the destination, or a link,
    device or FIFO. ``members`` lists ``(name, reason)`` for every offending member."""

    def __init__(self, message: str, path=None, members=()):
        self.members = list(members)
        super().__init__(message, path)


@dataclass(frozen=True)
class _Member:
    name: str  # as stored
    parts: tuple[str, ...]  # safe relative path components
    is_dir: bool
    size: int
    ref: object  # TarInfo or ZipInfo


def archive_kind(path: str | PathLike) -> str:
    """``'zip'`` or ``'tar'`` (any compression), by name and then by content.

    Raises
    ------
    InputError
        If the file is missing or neither a zip nor a tar archive.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("archive not found", path)
    name = path.name.lower()
    if name.endswith(".zip"):
        return "zip"
    if name.endswith(_TAR_SUFFIXES):
        return "tar"
    try:
        if tarfile.is_tarfile(path):
            return "tar"
    except (OSError, tarfile.TarError):
        pass
    if zipfile.is_zipfile(path):
        return "zip"
    raise InputError("not a .zip or .tar(.gz/.bz2/.xz) archive", path)


def _split_name(name: str) -> tuple[tuple[str, ...] | None, str | None]:
    """Safe relative components of a member name, or (None, reason)."""
    if "\x00" in name:
        return None, "NUL byte in the name"
    norm = name.replace("\\", "/")
    if norm.startswith("/") or (len(norm) >= 2 and norm[1] == ":" and norm[0].isalpha()):
        return None, "absolute path"
    parts = [p for p in PurePosixPath(norm).parts if p not in ("", ".")]
    if any(p == ".." for p in parts):
        return None, "'..' in the path (would write outside the destination)"
    return tuple(parts), None


def _tar_members(tf: tarfile.TarFile, bad: list) -> Iterator[_Member]:
    for info in tf:
        parts, why = _split_name(info.name)
        if why is None:
            if info.issym():
                why = f"symbolic link (to {info.linkname!r})"
            elif info.islnk():
                why = f"hard link (to {info.linkname!r})"
            elif info.ischr() or info.isblk():
                why = "device file"
            elif info.isfifo():
                why = "FIFO (named pipe)"
            elif not (info.isreg() or info.isdir()):
                why = "not a regular file or folder"
        if why is not None:
            bad.append((info.name, why))
            continue
        if parts:
            yield _Member(info.name, parts, info.isdir(), int(info.size), info)


def _zip_members(zf: zipfile.ZipFile, bad: list) -> Iterator[_Member]:
    for info in zf.infolist():
        parts, why = _split_name(info.filename)
        mode = (info.external_attr >> 16) & 0xFFFF
        ftype = stat.S_IFMT(mode)
        is_dir = info.filename.endswith(("/", "\\")) or ftype == stat.S_IFDIR
        if why is None and ftype and ftype not in (stat.S_IFREG, stat.S_IFDIR):
            why = {
                stat.S_IFLNK: "symbolic link",
                stat.S_IFCHR: "device file",
                stat.S_IFBLK: "device file",
                stat.S_IFIFO: "FIFO (named pipe)",
                stat.S_IFSOCK: "socket",
            }.get(ftype, "not a regular file or folder")
        if why is None and info.flag_bits & 0x1:
            why = "encrypted member"
        if why is not None:
            bad.append((info.filename, why))
            continue
        if parts:
            yield _Member(info.filename, parts, is_dir, int(info.file_size), info)


def _check_tree(members: list[_Member], bad: list) -> None:
    """A file member may not be a parent of another member, nor appear twice."""
    files: dict[tuple, str] = {}
    for m in members:
        if not m.is_dir:
            if m.parts in files:
                bad.append(
                    (
                        m.name,
                        f"a second file member for the same path "
                        f"(first: {files[m.parts]!r})",
                    )
                )
            files[m.parts] = m.name
    for m in members:
        for k in range(1, len(m.parts)):
            if m.parts[:k] in files:
                bad.append((m.name, f"lies under the file member {files[m.parts[:k]]!r}"))
                break


def _ensure_dir(dest: Path, parts: tuple[str, ...]) -> Path:
    """Create dest/parts... one level at a time, never following a symlink."""
    cur = dest
    for p in parts:
        cur = cur / p
        try:
            st = os.lstat(cur)
        except FileNotFoundError:
            os.mkdir(cur, 0o755)
            continue
        if stat.S_ISLNK(st.st_mode):
            raise UnsafeArchiveError(
                f"refusing to write through the symbolic link {cur} "
                "that already exists in the destination",
                dest,
            )
        if not stat.S_ISDIR(st.st_mode):
            raise InputError(
                f"cannot create folder {cur}: a file of that name exists", dest
            )
    return cur


def safe_extract(
    archive: str | PathLike,
    dest: str | PathLike,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_members: int = DEFAULT_MAX_MEMBERS,
    bound=None,
) -> list[Path]:
    """Extract a zip or tar archive into ``dest`` without trusting its contents.

    Parameters
    ----------
    archive : str or PathLike
        ``.zip``, ``.tar``, ``.tar.gz``/``.tgz``, ``.tar.bz2`` or ``.tar.xz`` (detected
        from the name, else from the content).
    dest : str or PathLike
        Destination folder, created if missing. Existing files with the names of
        members are overwritten; nothing else in it is touched.
    max_bytes : int
        Cap on the total bytes written; exceeding it stops extraction with an error.
    max_members : int
        Cap on the number of members.
    bound : callable, optional
        ``bound(member names) -> bytes``: a tighter cap computed from what the archive
        says it holds (e.g. by :func:`segbench.submit.submit` from the images a
        submission may contain), applied with ``max_bytes`` before and while writing.

    Returns
    -------
    list of Path
        The regular files written, in archive order.

    Raises
    ------
    UnsafeArchiveError
        Before anything is written, when any member has an absolute path, a ``..``
        component, is a link, device, FIFO or other special file, or collides with
        another member (see the module docstring); ``.members`` lists them all.
        Also when ``dest`` holds a symbolic link where a member would be written.
    InputError
        Corrupt or unreadable archive, too many members or bytes.
    """
    archive = Path(archive)
    dest = Path(dest)
    kind = archive_kind(archive)
    bad: list[tuple[str, str]] = []
    try:
        if kind == "tar":
            _check_compressed_stream(archive)
            with tarfile.open(archive, "r:*") as tf:
                return _extract(
                    archive,
                    dest,
                    list(_tar_members(tf, bad)),
                    bad,
                    max_bytes,
                    max_members,
                    tf.extractfile,
                    bound,
                )
        with zipfile.ZipFile(archive) as zf:
            return _extract(
                archive,
                dest,
                list(_zip_members(zf, bad)),
                bad,
                max_bytes,
                max_members,
                zf.open,
                bound,
            )
    except (
        tarfile.TarError,
        zipfile.BadZipFile,
        EOFError,
        RuntimeError,
        NotImplementedError,
        zlib.error,
        lzma.LZMAError,
    ) as exc:
        # tarfile's "could not be opened" lists every method it tried, a line each
        first = str(exc).splitlines()[0].rstrip(": ") if str(exc) else type(exc).__name__
        raise InputError(f"corrupt or unsupported archive: {first}", archive) from None
    except OSError as exc:
        import errno

        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG):
            # the destination's fault (a full disk), not the archive's
            raise OutputError(dest, exc.strerror or str(exc)) from None
        raise InputError(f"cannot extract: {exc}", archive) from None


_COMPRESSED = (
    (b"\x1f\x8b", gzip.open, "gzip"),
    (b"BZh", bz2.open, "bzip2"),
    (b"\xfd7zXZ\x00", lzma.open, "xz"),
)


def _check_compressed_stream(archive: Path) -> None:
    """Decompress a compressed tar to its end before anything is written: tarfile
    stops reading at the tar's end-of-archive blocks, before the gzip (bzip2, xz)
    trailer, so a damaged archive whose checksum fails would otherwise unpack its
    damaged bytes without a word. A plain tar has no checksum to check."""
    with open(archive, "rb") as fh:
        head = fh.read(6)
    for magic, opener, name in _COMPRESSED:
        if head.startswith(magic):
            try:
                with opener(archive, "rb") as stream:
                    while stream.read(_CHUNK):
                        pass
            except (OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
                raise InputError(
                    f"corrupt archive: its {name} stream does not check out ({exc}); "
                    "download it again",
                    archive,
                ) from None
            return


def _extract(
    archive: Path,
    dest: Path,
    members: list[_Member],
    bad: list,
    max_bytes: int,
    max_members: int,
    opener,
    bound=None,
) -> list[Path]:
    if len(members) + len(bad) > max_members:
        raise InputError(f"archive has more than {max_members} members", archive)
    if bound is not None:
        max_bytes = min(max_bytes, int(bound([m.name for m in members if not m.is_dir])))
    _check_tree(members, bad)
    if bad:
        shown = "; ".join(f"{n!r}: {why}" for n, why in bad[:10])
        more = f" (and {len(bad) - 10} more)" if len(bad) > 10 else ""
        raise UnsafeArchiveError(
            f"unsafe archive, nothing extracted: {shown}{more}", archive, bad
        )
    if sum(m.size for m in members if not m.is_dir) > max_bytes:
        raise InputError(f"archive would unpack to more than {max_bytes} bytes", archive)
    dest.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    total = 0
    for m in members:
        if m.is_dir:
            _ensure_dir(dest, m.parts)
            continue
        parent = _ensure_dir(dest, m.parts[:-1])
        target = parent / m.parts[-1]
        if os.path.lexists(target):
            st = os.lstat(target)
            if stat.S_ISDIR(st.st_mode):
                raise InputError(
                    f"cannot write {target}: a folder of that name exists", archive
                )
            if not stat.S_ISREG(st.st_mode):
                raise UnsafeArchiveError(
                    f"refusing to overwrite {target}: it is a link or special file", archive
                )
        src = opener(m.ref)
        if src is None:  # pragma: no cover - regular members always open
            raise InputError(f"cannot read member {m.name!r}", archive)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(target, flags, 0o644)
        try:
            with src, os.fdopen(fd, "wb") as out:
                while chunk := src.read(_CHUNK):
                    total += len(chunk)
                    if total > max_bytes:
                        raise InputError(
                            f"archive unpacks to more than {max_bytes} bytes", archive
                        )
                    out.write(chunk)
        except BaseException:
            target.unlink(missing_ok=True)
            raise
        os.chmod(target, 0o644)
        written.append(target)
    return written
