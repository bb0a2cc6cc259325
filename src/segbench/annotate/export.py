"""``segbench annotate-export``: an annotation folder as BSDS500 ground truth."""

from __future__ import annotations

from os import PathLike
from pathlib import Path

from ..errors import InputError
from .ledger import Ledger
from .server import DB_NAME, IID, MARKER, AnnotateWarning

EXPORT_MARKER = ".segbench-annotate-export"
#: In an export folder: the files each split's last export wrote (JSON, split -> paths
#: relative to the folder), so the next export of that split removes those it no
#: longer writes, and only those.
EXPORT_FILES = ".segbench-annotate-export-files.json"


def export_ground_truth(
    out: str | PathLike,
    split: str,
    *,
    dest: str | PathLike | None = None,
    presentation: str = "all",
    copy_images: bool = True,
) -> list[Path]:
    """Write the submitted segmentations of an annotation folder as BSDS500 ``.mat`` files.

    Parameters
    ----------
    out : str or PathLike
        The ``--out`` folder of ``segbench annotate``.
    split : str
        Split name the images are filed under (``train``, ``val``, ``test`` or another
        plain name).
    dest : str or PathLike, optional
        Dataset root to write (default ``out/bsds500``): ``groundTruth/<split>/<iid>.mat``
        and, with ``copy_images``, ``images/<split>/<iid>.<ext>``, so that ``dest`` opens
        as a BSDS500 layout.
    presentation : {'all', 'color', 'gray'}
        Which segmentations become annotators: all of them (default), or those made on
        the colour (or grey) presentation only.
    copy_images : bool
        Copy the photographs beside the ground truth.

    Returns
    -------
    list of Path
        The ``.mat`` files written, one per image with at least one segmentation.

    Raises
    ------
    InputError
        Not an annotation folder; a submission whose labels the ledger cannot give back
        (each one named); a ``.seg`` file under ``human/`` that the ledger does not know
        (each one named); a photograph that is gone. Nothing is written then.

    Warns
    -----
    AnnotateWarning
        Submissions whose ``.seg`` file is missing or older than the ledger (the server
        stopped between taking them and writing the file): they are exported from the
        ledger all the same, and ``segbench annotate`` writes their files when it next
        starts on ``out``.

    Notes
    -----
    The ledger, not the ``.seg`` files, is what is exported: it holds every
    acknowledged submission with its labels, while a file may be missing (or still the
    previous submission's) when the server died between the commit and the write.
    One cell of annotators per image, ordered colour before grey, then by subject id
    (the order :class:`segbench.datasets.BSDS300` reads); ``Segmentation`` is 1-based
    and ``Boundaries`` is ``thin(seg2bdry(seg))``, as in the official files.
    """
    import warnings

    import numpy as np

    from ..datasets import write_ground_truth
    from ..io import atomic_write_bytes, claim_folder, ensure_dir

    out = Path(out)
    if not (out / MARKER).is_file() or not (out / DB_NAME).is_file():
        raise InputError(
            f"not an annotation folder of segbench annotate (no {MARKER} and {DB_NAME})",
            out,
        )
    if not IID.match(split):
        raise InputError(f"a split name is letters, digits, '_', '.', '-'; got {split!r}")
    if presentation not in ("all", "color", "gray"):
        raise InputError(f"presentation must be all, color or gray, not {presentation!r}")
    ledger = Ledger(out / DB_NAME)
    try:
        subs = ledger.submissions()
        images = {iid: ledger.image(iid) for iid in {s.iid for s in subs}}
    finally:
        ledger.close()
    if not subs:
        raise InputError("no segmentation submitted yet", out)

    def seg_name(s) -> str:
        return f"human/{'gray' if s.presentation.gray else 'color'}/{s.subject}/{s.iid}.seg"

    # every check before anything is written: the ledger's labels, stray files, photos
    known = {seg_name(s) for s in subs}
    stray = sorted(
        p.relative_to(out).as_posix()
        for p in (out / "human").glob("*/*/*.seg")
        if p.relative_to(out).as_posix() not in known
    )
    if stray:
        raise InputError(
            f"{len(stray)} .seg file(s) that the ledger does not hold "
            f"(written by something else? move them out of the folder): "
            f"{', '.join(stray)}",
            out / "human",
        )
    wanted = [
        s
        for s in subs
        if presentation == "all" or s.presentation.gray == (presentation == "gray")
    ]
    per_image: dict[str, list] = {}
    damaged = []
    for s in wanted:
        image = images[s.iid]
        assert image is not None  # a submission's image is in the ledger
        _, width, height, _ = image
        try:
            labels = s.label_array(width, height)
        except ValueError as exc:
            damaged.append(f"{seg_name(s)} ({exc})")
            continue
        per_image.setdefault(s.iid, []).append(labels.astype(np.int32) + 1)
    if damaged:
        raise InputError(
            f"the ledger cannot give back {len(damaged)} submission(s), so "
            f"the export would lack them: {'; '.join(damaged)}",
            out / DB_NAME,
        )
    if not per_image:  # (subs is not empty: the presentation chose none of them)
        other = "colour" if presentation == "gray" else "grey"
        raise InputError(
            f"no segmentation was made on the {'grey' if presentation == 'gray' else 'colour'}"
            f" presentation ({len(subs)} on the {other} one): nothing to export; "
            "--presentation all exports every one",
            out,
        )
    photos = {}
    if copy_images:
        for iid in per_image:
            image = images[iid]
            assert image is not None  # a submission's image is in the ledger
            path = Path(image[3])
            if not path.is_file():
                raise InputError(f"the photograph of image {iid!r} is gone", path)
            photos[iid] = path
    late = [
        seg_name(s) for s in wanted if not s.written or not (out / seg_name(s)).is_file()
    ]
    if late:
        warnings.warn(
            f"{len(late)} submission(s) had no up-to-date .seg file (the server "
            f"stopped before writing it): exported from the ledger; segbench "
            f"annotate writes the file(s) when it next starts on this folder: "
            f"{', '.join(late)}",
            AnnotateWarning,
            stacklevel=2,
        )
    dest = Path(dest) if dest is not None else out / "bsds500"
    claim_folder(
        dest,
        EXPORT_MARKER,
        "segbench annotate-export",
        "BSDS500 ground truth exported by segbench annotate-export\n",
    )
    gt_dir = ensure_dir(dest / "groundTruth" / split)
    img_dir = ensure_dir(dest / "images" / split) if copy_images else None
    before = _exported_files(dest)
    written = []
    for iid in sorted(per_image):
        path = gt_dir / f"{iid}.mat"
        write_ground_truth(path, per_image[iid])
        written.append(path)
        if img_dir is not None:  # copy_images
            src = photos[iid]
            try:
                data = src.read_bytes()
            except OSError as exc:
                raise InputError(
                    f"cannot read the photograph: {exc.strerror or exc}", src
                ) from None
            atomic_write_bytes(img_dir / f"{iid}{src.suffix.lower()}", data)
    _forget_earlier_files(dest, split, before, written, img_dir, photos)
    return written


def _exported_files(dest: Path) -> dict:
    """split -> the files (relative paths) the last export of each split wrote."""
    import json

    try:
        data = json.loads((dest / EXPORT_FILES).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _forget_earlier_files(dest, split, before, written, img_dir, photos) -> None:
    """Remove the files an earlier export of ``split`` wrote that this one did not
    (another --presentation, a subject's segmentations gone), so the split holds this
    export alone; record this export's files. Files of the split folders that no
    export wrote (the user's own) are left, and warned of."""
    import json
    import warnings

    from ..io import atomic_write_text

    now = [p.relative_to(dest).as_posix() for p in written]
    if img_dir is not None:
        now += [
            (img_dir / f"{iid}{src.suffix.lower()}").relative_to(dest).as_posix()
            for iid, src in photos.items()
        ]
    ours = (f"groundTruth/{split}/", f"images/{split}/")
    for rel in sorted(set(before.get(split) or []) - set(now)):
        # only a file of this split's folders, as an export names it (the record is a
        # file anyone can edit: never an absolute path or one that climbs out)
        parts = str(rel).split("/")
        if str(rel).startswith(ours) and len(parts) == 3 and ".." not in parts:
            (dest / rel).unlink(missing_ok=True)
    record = {**before, split: sorted(now)}
    atomic_write_text(dest / EXPORT_FILES, json.dumps(record, indent=1) + "\n")
    folders = [dest / "groundTruth" / split] + ([img_dir] if img_dir is not None else [])
    theirs = sorted(
        p.relative_to(dest).as_posix()
        for folder in folders
        for p in folder.iterdir()
        if p.is_file() and p.relative_to(dest).as_posix() not in set(now)
    )
    if theirs:
        warnings.warn(
            f"{dest}: {len(theirs)} file(s) beside this export that no export wrote "
            f"(left as they are, and read with it as one dataset): "
            f"{', '.join(theirs[:5])}{' ...' if len(theirs) > 5 else ''}",
            AnnotateWarning,
            stacklevel=3,
        )
