"""``segbench annotate-export``: an annotation folder as BSDS500 ground truth."""

from __future__ import annotations

from os import PathLike
from pathlib import Path

from ..errors import InputError

EXPORT_MARKER = ".segbench-annotate-export"


def export_ground_truth(out: str | PathLike, split: str, *,
                        dest: str | PathLike | None = None, presentation: str = "all",
                        copy_images: bool = True) -> list[Path]:
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

    Notes
    -----
    One cell of annotators per image, ordered colour before grey, then by subject id
    (the order :class:`segbench.datasets.BSDS300` reads); ``Segmentation`` is 1-based
    and ``Boundaries`` is ``thin(seg2bdry(seg))``, as in the official files.
    """
    from ..datasets import BSDS300, write_ground_truth
    from ..io import atomic_write_bytes, claim_folder, ensure_dir
    from .ledger import Ledger
    from .server import DB_NAME, IID, MARKER
    out = Path(out)
    if not (out / MARKER).is_file() or not (out / DB_NAME).is_file():
        raise InputError(f"not an annotation folder of segbench annotate (no {MARKER} "
                         f"and {DB_NAME})", out)
    if not IID.match(split):
        raise InputError(f"a split name is letters, digits, '_', '.', '-'; got {split!r}")
    if presentation not in ("all", "color", "gray"):
        raise InputError(f"presentation must be all, color or gray, not {presentation!r}")
    human = out / "human"
    if not human.is_dir():
        raise InputError("no segmentation submitted yet (no human folder)", out)
    dataset = BSDS300.from_subject_folders(human, presentation=presentation)
    dest = Path(dest) if dest is not None else out / "bsds500"
    claim_folder(dest, EXPORT_MARKER, "segbench annotate-export",
                 "BSDS500 ground truth exported by segbench annotate-export\n")
    items = [item for item in dataset.items() if item.n_annotations]
    photos = {}
    if copy_images:                      # every photograph checked before anything is written
        ledger = Ledger(out / DB_NAME)
        try:
            for item in items:
                known = ledger.image(item.iid)
                if known is None or not Path(known[3]).is_file():
                    raise InputError(f"the photograph of image {item.iid!r} is gone",
                                     known[3] if known else out)
                photos[item.iid] = Path(known[3])
        finally:
            ledger.close()
    gt_dir = ensure_dir(dest / "groundTruth" / split)
    img_dir = ensure_dir(dest / "images" / split) if copy_images else None
    written = []
    for item in items:
        path = gt_dir / f"{item.iid}.mat"
        write_ground_truth(path, item.segmentations)
        written.append(path)
        if copy_images:
            src = photos[item.iid]
            try:
                data = src.read_bytes()
            except OSError as exc:
                raise InputError(f"cannot read the photograph: {exc.strerror or exc}",
                                 src) from None
            atomic_write_bytes(img_dir / f"{item.iid}{src.suffix.lower()}", data)
    return written
