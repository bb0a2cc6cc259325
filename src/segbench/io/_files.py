"""Finding files: existence checks and id -> path listings of a folder."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from os import PathLike
from pathlib import Path

from ..errors import InputError, first_names


def require_file(path: str | PathLike) -> Path:
    """Return ``path`` as a Path, or raise InputError if it is not an existing file."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path)
    if not path.is_file():
        raise InputError("expected a file but this is a folder or special file", path)
    return path


def _normalize_exts(exts: str | Iterable[str]) -> tuple[str, ...]:
    if isinstance(exts, str):
        exts = [exts]
    out = []
    for ext in exts:
        ext = ext.lower()
        out.append(ext if ext.startswith(".") else "." + ext)
    if not out:
        raise InputError("list_files needs at least one extension")
    return tuple(out)


def refuse_broken_link(path: Path) -> None:
    """InputError naming ``path`` when it is a link whose target is missing (a drive
    not mounted, a moved dataset): listings would otherwise leave the file out of a
    run without a word."""
    if path.is_symlink() and not path.exists():
        try:
            os.stat(path)
            what = "a link to a missing file"
        except OSError as exc:  # ELOOP: links that lead back to themselves
            looped = getattr(exc, "errno", None) == errno.ELOOP
            what = "a loop of links" if looped else "a link to a missing file"
        raise InputError(
            f"{what} (target {os.readlink(path)!r}); fix or remove it",
            path,
        )


class FolderNamedLikeAFile(InputError):
    """:func:`refuse_folder`'s error: a reader that tries layouts in turn stops at it
    rather than trying the next (whose own complaint would hide it)."""


def refuse_folder(path: Path, suffix: str | None = None) -> None:
    """InputError naming ``path`` when it is a folder: a listing took it by its name
    (``100007.mat``, ending in ``suffix``, by default its own) and would otherwise
    leave it out without a word."""
    if path.is_dir():
        raise FolderNamedLikeAFile(
            "this is a folder, not a file, though named like the "
            f"{suffix or path.suffix} files read here: rename or move it",
            path,
        )


def refuse_unreadable(folder: str | PathLike) -> None:
    """InputError naming ``folder`` when it is a folder that cannot be listed or
    entered (no read or search permission, an I/O error): the probes of a layout would
    otherwise fail on a path inside it the user never gave (``<gt>/edge_maps``), or a
    walk would find nothing in it. A missing folder or a file passes, for the caller's
    own words."""
    folder = Path(folder)
    try:
        if not stat.S_ISDIR(os.stat(folder).st_mode):
            return
        with os.scandir(folder) as entries:  # listing: read permission
            next(entries, None)
        os.stat(os.path.join(folder, os.curdir))  # entering: search permission
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            return  # not a folder, as Path.is_dir sees it
        raise InputError(
            f"cannot read this folder: {exc.strerror or exc}", folder
        ) from None


def list_files(
    folder: str | PathLike, exts: str | Iterable[str], *, folders: bool = True
) -> dict[str, Path]:
    """Map image id (file stem) to path for the files of a folder with given extensions.

    Parameters
    ----------
    folder : str or PathLike
        Folder to list; not searched recursively.
    exts : str or iterable of str
        Extensions to keep, with or without the dot (``'png'`` or ``'.png'``), matched
        case-insensitively. A multi-part extension such as ``'.seg.gz'`` is not supported:
        the stem is the name without its last suffix.
    folders : bool, default True
        Refuse a folder named with one of ``exts`` (``100007.mat/``); False skips it,
        for a caller that names such folders among the ids it needs and no others.

    Returns
    -------
    dict of str to Path
        Sorted by id. Hidden files (names starting with ``.``) are skipped.

    Raises
    ------
    InputError
        If the folder does not exist, is not a folder or cannot be read, a listed name
        is a link to a missing file or a folder (unless ``folders`` is False), or if two
        files share an id (e.g. ``100007.png`` and ``100007.bmp``): which one is the
        prediction would be a guess, so the user must remove one.
    """
    folder = Path(folder)
    refuse_unreadable(folder)
    if not folder.exists():
        raise InputError("folder not found", folder)
    if not folder.is_dir():
        raise InputError("expected a folder but this is a file", folder)
    wanted = _normalize_exts(exts)
    found: dict[str, Path] = {}
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(".") or entry.suffix.lower() not in wanted:
            continue
        refuse_broken_link(entry)
        if not entry.is_file():
            if folders:
                refuse_folder(entry)
            continue
        stem = entry.stem
        if stem in found:
            raise InputError(
                f"two files for image id {stem!r}: {found[stem].name} and {entry.name}; "
                "remove or rename one of them",
                folder,
            )
        found[stem] = entry
    return dict(sorted(found.items()))


def check_all_present(
    needed: Iterable[str],
    available: Iterable[str],
    what: str,
    path: str | PathLike,
    *,
    note: str | None = None,
) -> None:
    """Raise InputError when ids of ``needed`` are not in ``available``.

    The message reads ``"<k> of <n> <what>: <the first 20 missing ids>"`` (then
    ``"; <note>"`` when given, and ``"; <hint>"`` of :func:`normalisation_hint` when a
    missing id is an available one spelled otherwise) and names ``path`` (the folder
    where they were looked for).
    """
    needed = set(needed)
    available = set(available)
    missing = sorted(needed - available)
    if missing:
        shown = ", ".join(missing[:20]) + (" ..." if len(missing) > 20 else "")
        tail = "".join(
            f"; {t}" for t in (note, normalisation_hint(missing, available)) if t
        )
        raise InputError(f"{len(missing)} of {len(needed)} {what}: {shown}{tail}", path)


def normalisation_hint(
    missing: Iterable[str], available: Iterable[str], where: str = "in this folder"
) -> str | None:
    """What to say when missing names are available ones written in another Unicode
    normalisation, or None.

    'café' typed on macOS may be stored decomposed (NFD: 'e' and a combining accent)
    beside a file named elsewhere composed (NFC): the names look the same but do not
    match. They are not paired here (a pairing would then depend on the file system
    that named them), only named, escaped so the difference shows.

    Parameters
    ----------
    missing : iterable of str
        Names looked for and not found.
    available : iterable of str
        Names there (``where``); others than str are passed over.
    where : str, default 'in this folder'
        Where ``available`` are, as the message says it.

    Returns
    -------
    str or None
        E.g. ``"'caf\\xe9' is 'cafe\\u0301' in this folder: the two names differ only
        in Unicode normalisation (NFC/NFD), rename one so they match"``.
    """
    import unicodedata

    # names of another type (a mapping's keys) are passed over: this is said in an
    # error, which must not become a traceback
    by_nfc: dict[str, str] = {}
    for name in available:
        if isinstance(name, str):
            by_nfc.setdefault(unicodedata.normalize("NFC", name), name)
    pairs = [
        (name, by_nfc[nfc])
        for name in missing
        if isinstance(name, str)
        and (nfc := unicodedata.normalize("NFC", name)) in by_nfc
        and by_nfc[nfc] != name
    ]
    if not pairs:
        return None
    shown = first_names(f"{ascii(m)} is {ascii(a)}" for m, a in pairs)
    return f"{shown} {where}: " + (
        "the two names differ only in Unicode normalisation (NFC/NFD), rename one so "
        "they match"
        if len(pairs) == 1
        else "each pair differs only in Unicode normalisation (NFC/NFD), rename one "
        "of each so they match"
    )
