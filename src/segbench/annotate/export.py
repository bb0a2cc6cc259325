"""``segbench annotate-export``: an annotation folder as BSDS500 ground truth."""

from __future__ import annotations

from os import PathLike
from pathlib import Path

from ..errors import InputError
from .ledger import Ledger
from .server import DB_NAME, IID, MARKER, AnnotateWarning

EXPORT_MARKER = ".segbench-annotate-export"


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
    return written
