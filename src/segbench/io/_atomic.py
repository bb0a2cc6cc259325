"""Writing files so that neither a crash nor a full disk leaves a half-written one."""

from __future__ import annotations

import errno
import os
from os import PathLike
from pathlib import Path

from ..errors import InputError, OutputError

#: errno values that are the destination's fault in a copy.
_WRITE_ERRORS = frozenset(
    getattr(errno, name)
    for name in ("ENOSPC", "EDQUOT", "EROFS", "EFBIG", "ENAMETOOLONG")
    if hasattr(errno, name)
)


#: Files a file manager leaves in any folder it shows, not the user's work.
_DESKTOP_FILES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def ensure_dir(path: str | PathLike) -> Path:
    """Create folder ``path`` (and its parents) if needed.

    Raises
    ------
    OutputError
        If it cannot be created or is not a folder, naming the path and the reason.
    """
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputError(path, "exists and is not a folder") from None
    except OSError as exc:
        raise OutputError(getattr(exc, "filename", None) or path, _reason(exc)) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise OutputError(path, "Permission denied")
    return path


def atomic_write_bytes(path: str | PathLike, data: bytes, *, durable: bool = False) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder.

    Readers see the old file or the new one, never a part. The temporary file's name is
    unique to the call, so threads writing the same path never share one. With
    ``durable`` the data is flushed to disk (``fsync``) before the rename, and the
    folder after it (the rename itself is an entry of the folder), for a caller that
    records elsewhere that the file is written. On any failure the temporary file
    is removed and :class:`~segbench.errors.OutputError` names ``path``.
    """
    import threading

    path = Path(path)
    # process and thread in the name (not mkstemp: its files are private, 0600)
    tmp = path.with_name(
        _temporary_name(path.name, f"{os.getpid()}.{threading.get_ident()}")
    )
    try:
        if durable:
            with open(tmp, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        else:
            tmp.write_bytes(data)
        os.replace(tmp, path)
        if durable:
            _fsync_folder(path.parent)
    except OSError as exc:
        raise OutputError(path, _reason(exc)) from None
    finally:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass


def _temporary_name(name: str, unique: str) -> str:
    """``.<name>.<unique>.tmp``, or, where that would pass the usual 255-byte limit of
    a file name (a long image id), the same with the name's SHA-1 in place of the
    name, so that every file name that fits can be written."""
    full = f".{name}.{unique}.tmp"
    if len(full.encode("utf-8", "surrogateescape")) <= 255:
        return full
    import hashlib

    short = hashlib.sha1(name.encode("utf-8", "surrogateescape")).hexdigest()
    return f".{short}.{unique}.tmp"


def _fsync_folder(folder: Path) -> None:
    """Flush a folder's entries to disk, where the system can (POSIX; Windows cannot
    open a folder, and renames there are journaled by the file system)."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_text(path: str | PathLike, text: str) -> None:
    """:func:`atomic_write_bytes` of ``text`` in UTF-8."""
    atomic_write_bytes(path, text.encode("utf-8"))


def write_if_changed(path: str | PathLike, text: str | bytes) -> bool:
    """Atomically write ``text`` (str as UTF-8, or bytes) unless ``path`` already holds
    exactly it; True if written.

    Used for files derived anew at the end of every run, so that an unchanged file keeps
    its time stamp."""
    path = Path(path)
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    try:
        if (
            path.is_file()
            and path.stat().st_size == len(data)
            and path.read_bytes() == data
        ):
            return False
    except OSError:
        pass
    atomic_write_bytes(path, data)
    return True


def copy_file(src: str | PathLike, dst: str | PathLike) -> None:
    """``shutil.copyfile``, its failures named by the file at fault: a write that fails
    (disk full, read-only) is an :class:`OutputError` of ``dst``, not an error of the
    source as shutil reports it; a source that cannot be read, an
    :class:`InputError` of ``src``."""
    import shutil

    try:
        shutil.copyfile(src, dst)
    except OSError as exc:
        named = getattr(exc, "filename", None)
        if (
            getattr(exc, "filename2", None) is not None
            or exc.errno in _WRITE_ERRORS
            or (named is not None and os.fspath(named) == os.fspath(dst))
        ):
            raise OutputError(dst, _reason(exc)) from None
        raise InputError(f"cannot read: {_reason(exc)}", src) from None


def _resolved(path: Path, option: str) -> Path:
    """``path.resolve()``, or an :class:`InputError` naming a loop of symbolic links."""
    try:
        return path.resolve()
    except (RuntimeError, OSError) as exc:  # Python < 3.13: RuntimeError; then OSError
        raise InputError(
            f"{option} leads into a loop of symbolic links ({exc})", path
        ) from None


def claim_folder(
    out: str | PathLike,
    marker: str,
    owner: str,
    note: str,
    *,
    accept=(),
    inputs=None,
    apart: bool = False,
    inside: bool = False,
    what: str | None = None,
    out_option: str = "--out",
) -> Path:
    """Make ``out`` an output folder of ``owner``, or refuse before anything is written.

    The one rule of every segbench command that writes a folder: a new or empty folder
    is taken, and so is one that holds ``marker`` (a folder this command made before,
    whose files it may replace) or one of the ``accept`` markers; any other folder is
    refused, so nothing a user made is overwritten. Writes ``marker`` with ``note`` in
    it.

    Parameters
    ----------
    out : path
        The output folder.
    marker : str
        Name of the file that marks the folder as ``owner``'s.
    owner : str
        The command, as the refusal names it (``'segbench boundary'``).
    note : str
        Text of the marker file.
    accept : sequence of str, optional
        Other entries (files or folders) that mark a folder as usable too: a folder of
        an older segbench that had no marker, or of a command whose folders this one
        shares.
    inputs : mapping of str to path, optional
        Input folders, by the option that names them (``{'--pred': path}``): ``out``
        may not be one of them (its files would be replaced).
    apart : bool, default False
        ``out`` may not be inside an input folder, nor contain one, either.
    inside : bool, default False
        ``out`` may not be inside an input folder (it may contain one: a submission's
        run folder holds its predictions).
    what : str, optional
        What a folder of ``owner`` is called in the refusal (default: ``'folder of
        <owner>'``).
    out_option : str, default '--out'
        The option that names ``out``, as the refusal names it.

    Returns
    -------
    Path

    Raises
    ------
    InputError
        ``out`` is a symbolic link or a file, an input folder (or, with ``apart``,
        inside or around one), or a folder of other files.
    OutputError
        It cannot be created or written.
    """
    if not os.fspath(out).strip():  # (Path("") is ".": checked before)
        raise InputError(f"{out_option} is empty: give the output folder")
    out = Path(out)
    o = _resolved(out, out_option)  # (a loop of links as --out: named, once)
    for option, src in (inputs or {}).items():
        if src is None:
            continue
        s = _resolved(Path(src), option)
        if o == s:
            problem = "its files would be replaced"
            where = "is"
        elif (apart or inside) and s in o.parents:
            problem = "the output would be read as part of its input"
            where = "is inside"
        elif apart and o in s.parents:
            problem = "the input would be mixed with the output"
            where = "contains"
        else:
            continue
        raise InputError(
            f"{out_option} {where} the {option} folder ({src}): {problem}; choose "
            f"another {out_option}",
            out,
        )
    if out.exists() or out.is_symlink():
        if out.is_symlink():
            raise InputError(
                "the output is a symbolic link: give the folder it points to "
                f"({o}) as {out_option}",
                out,
            )
        if not out.is_dir():
            raise InputError("the output exists and is not a folder", out)
        marked = any((out / m).exists() for m in (marker, *accept))
        # (a file manager's own notes do not make a folder the user's)
        held = sorted(e.name for e in out.iterdir() if e.name not in _DESKTOP_FILES)
        if not marked and held:
            from ..errors import first_names

            raise InputError(
                f"this folder holds files that {owner} did not make "
                f"({first_names(held, 3)}; not a {what or 'folder of ' + owner}: no "
                f"{marker} in it); nothing was changed: choose a new or empty folder",
                out,
            )
    ensure_dir(out)
    if (
        not (out / marker).is_file()
        or (out / marker).read_text(encoding="utf-8", errors="replace") != note
    ):
        atomic_write_text(out / marker, note)
    return out


def hold_lock(path: str | PathLike, busy: str, where=None):
    """Hold ``flock`` on the file ``path`` (made if needed) for this process, or refuse.

    Released when the returned file is closed or the process ends (a killed process
    leaves no stale lock). Where ``flock`` is not available (Windows) or not
    supported (some network file systems), or the file cannot be made, nothing is
    locked.

    Parameters
    ----------
    path : path
        The lock file.
    busy : str
        The refusal's text when another process holds it (its pid is added).
    where : path, optional
        What the refusal names (default ``path``).

    Returns
    -------
    file object or None
        Keep it open while the work goes on; :func:`release_lock` ends the lock and
        empties the file (which names the holder's pid while it runs).

    Raises
    ------
    InputError
        Another process holds the lock.
    """
    try:
        import fcntl
    except ImportError:
        return None
    try:
        handle = open(path, "a+", encoding="utf-8")
    except OSError:
        return None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip()
        handle.close()
        raise InputError(
            busy.format(holder=f" ({holder})" if holder else ""),
            path if where is None else where,
        ) from None
    except OSError:  # no locks here (ENOLCK): unlocked
        handle.close()
        return None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}\n")
    handle.flush()
    return handle


def release_lock(handle) -> None:
    """End a lock of :func:`hold_lock` (None: nothing to do); the file is left empty."""
    if handle is None:
        return
    try:
        handle.seek(0)
        handle.truncate()
    except OSError:
        pass
    handle.close()
