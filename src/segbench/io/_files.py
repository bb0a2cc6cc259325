"""Finding files: existence checks and id -> path listings of a folder."""

from __future__ import annotations

import os
from collections.abc import Iterable
from os import PathLike
from pathlib import Path

from ..errors import InputError


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
        raise InputError(
            f"a link to a missing file (target {os.readlink(path)!r}); fix or remove it",
            path,
        )


def refuse_folder(path: Path, suffix: str | None = None) -> None:
    """InputError naming ``path`` when it is a folder: a listing took it by its name
    (``100007.mat``, ending in ``suffix``, by default its own) and would otherwise
    leave it out without a word."""
    if path.is_dir():
        raise InputError(
            "this is a folder, not a file, though named like the "
            f"{suffix or path.suffix} files read here: rename or move it",
            path,
        )


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
        If the folder does not exist or is not a folder, a listed name is a link to a
        missing file or a folder (unless ``folders`` is False), or if two files share an
        id (e.g. ``100007.png`` and ``100007.bmp``): which one is the prediction would
        be a guess, so the user must remove one.
    """
    folder = Path(folder)
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
    ``"; <note>"`` when given) and names ``path`` (the folder where they were looked
    for).
    """
    needed = set(needed)
    missing = sorted(needed - set(available))
    if missing:
        shown = ", ".join(missing[:20]) + (" ..." if len(missing) > 20 else "")
        tail = f"; {note}" if note else ""
        raise InputError(f"{len(missing)} of {len(needed)} {what}: {shown}{tail}", path)
