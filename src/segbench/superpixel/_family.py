"""The superpixel benchmark as an engine family, and the ground truth it reads.

``SUPERPIXEL`` scores one superpixel map per image against every annotator of the image
(:func:`evaluate_image`; with ``stutz``, also the C++ benchmark's ``results.csv`` rows).
It is a spec (:class:`segbench.spec.Family`) run by :func:`segbench.engine.run`; see
``segbench.evaluate("superpixel", ...)``. The photograph, for the explained
variation, is an input file of each record: the dataset item's (a dataset root), or
one of ``images`` (:func:`superpixel_dataset`).
"""

from __future__ import annotations

import csv
from io import StringIO
from os import PathLike
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io import (
    SUPERPIXEL_EXTS,
    atomic_write_text,
    check_same_shape,
    read_superpixels,
    write_stutz_results,
)
from ..result import Result
from ..spec import Family
from ._boundary import BOUNDARIES, DEFAULT_TOLERANCE, check_window
from ._evaluate import (
    ANNOTATOR_MEASURES,
    SuperpixelRecord,
    _evaluate_image,
    resampler,
    summarize,
)
from ._measures import ACHANTA_MIN_OVERLAP
from ._stutz import STUTZ_COLUMNS, _check_labels, _stutz_rows, stutz_rows

#: Ground-truth files that only the superpixel benchmark's layouts use.
_OWN_GT_EXTS = (".npz", ".csv")


def superpixel_dataset(
    gt,
    images=None,
    *,
    split: str | None = None,
    presentation: str | None = None,
    required: bool = True,
    gt_format=None,
    ids=None,
):
    """The ground truth of a superpixel run as a :class:`~segbench.datasets.Dataset`.

    Parameters
    ----------
    gt : path, sequence of paths, or Dataset
        Any layout :func:`~segbench.datasets.open_ground_truth` reads (a folder of
        BSDS500 ``<iid>.mat``, a BSDS300 ``human/color`` tree, a dataset root with
        ``split``), or a folder of the superpixel benchmark's ``<iid>.npz``
        (``gt0, gt1, ...``) or the C++ benchmark's ``<iid>-<t>.csv`` files.
    images : path, optional
        Folder of photographs ``<iid>.jpg|png|...``, replacing the layout's own.
    split, presentation, gt_format
        As :func:`~segbench.datasets.open_ground_truth`.
    required : bool, default True
        With ``images``: every image needs a photograph there (False: the others keep
        the layout's, or none).
    ids : list of str, str or path, optional
        These images only (:func:`~segbench.datasets.parse_ids`): only they need a
        photograph.

    Returns
    -------
    Dataset
    """
    from ..datasets import (
        SPLIT_NAMES,
        FolderPairs,
        open_ground_truth,
        parse_ids,
        with_images,
    )

    if isinstance(gt, (str, PathLike)) and _holds(Path(gt), _OWN_GT_EXTS):
        folder = Path(gt)
        gt = FolderPairs(
            None, folder, split=folder.name if folder.name in SPLIT_NAMES else "test"
        )
    ds = open_ground_truth(gt, split=split, presentation=presentation, gt_format=gt_format)
    wanted = parse_ids(ids)
    if wanted is not None:
        ds = ds.subset(wanted)
    if images is not None:
        if not Path(images).is_dir():
            raise InputError("images folder not found", images)
        ds = with_images(ds, images, required=required)
    return ds


def _holds(folder: Path, exts) -> bool:
    """Whether ``folder`` directly holds a (non-hidden) file with one of ``exts``."""
    try:
        return folder.is_dir() and any(
            p.suffix.lower() in exts and not p.name.startswith(".") and p.is_file()
            for p in folder.iterdir()
        )
    except OSError:
        return False


# --- reading one sample ------------------------------------------------------------


def annotators(sample, max_annotators: int | None = None) -> list[np.ndarray]:
    """The annotators' label maps of one sample, as stored (the first
    ``max_annotators`` only, if given)."""
    gts = [np.asarray(getattr(g, "segmentation", g)) for g in sample.ground_truth()]
    return gts if max_annotators is None else gts[:max_annotators]


def photograph(sample, shape, what: str = "the ground truth") -> np.ndarray | None:
    """The sample's photograph (None if its item has none); InputError naming the file
    if it is not ``shape`` (H, W), the size of ``what``."""
    if sample.item.image_path is None and sample.item.image_loader is None:
        return None
    image = sample.item.image
    if image.shape[:2] != tuple(shape):
        raise InputError(
            f"image is {image.shape[0]}x{image.shape[1]} but {what} is "
            f"{shape[0]}x{shape[1]}",
            sample.item.image_path,
        )
    return image


def image_files(sample, params: dict) -> dict:
    """The photograph is an input of the record (its explained variation)."""
    return {"image": [sample.item.image_path]} if sample.item.image_path else {}


# --- the family --------------------------------------------------------------------


def check_evaluation(params: dict) -> None:
    """InputError for a bad value of the evaluation options (any subset of them)."""
    window = params.get("window", "euclidean")
    tolerance = params.get("tolerance", DEFAULT_TOLERANCE)
    check_window(tolerance, "euclidean" if window == "matched" else window)
    if window == "matched" and not tolerance > 0:
        raise InputError("window='matched' needs a positive tolerance")
    if params.get("boundary", "bsds") not in BOUNDARIES:
        raise InputError(
            f"boundary must be one of {', '.join(BOUNDARIES)}, not {params['boundary']!r}"
        )
    if params.get("connectivity", 4) not in (4, 8):
        raise InputError(f"connectivity must be 4 or 8, got {params['connectivity']}")
    if not 0 <= params.get("min_overlap", ACHANTA_MIN_OVERLAP) < 1:
        raise InputError(f"min_overlap must lie in [0, 1), got {params['min_overlap']}")
    n = params.get("max_annotators")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise InputError(f"max_annotators must be a positive integer, got {n!r}")
    void = params.get("void")
    if void is not None and (isinstance(void, bool) or not isinstance(void, int)):
        raise InputError(f"void must be an integer label or None, got {void!r}")


def _evaluate(sample, params: dict) -> SuperpixelRecord:
    gts = annotators(sample, params["max_annotators"])
    sp = sample.read_prediction(read_superpixels)
    if gts:
        check_same_shape(sp, gts[0].shape, sample.prediction)
    image = photograph(sample, sp.shape, "the superpixel map")
    record, built = _evaluate_image(
        sp,
        gts,
        image,
        tolerance=params["tolerance"],
        window=params["window"],
        boundary=params["boundary"],
        min_overlap=params["min_overlap"],
        void=params["void"],
        connectivity=params["connectivity"],
    )
    if not params["stutz"]:
        return record
    if params["void"] is None:  # the tables the benchmark's columns use
        sp, gs = _check_labels(sp, gts)
        rows = _stutz_rows(sp, gs, image, *built)
    else:
        rows = stutz_rows(sp, gts, image)
    return SuperpixelRecord(
        record.per_annotator,
        record.boundary_counts,
        record.n_superpixels,
        record.n_components,
        record.n_split,
        record.co,
        record.ev,
        record.extra,
        tuple(rows),
    )


def _exts(params: dict) -> tuple[str, ...]:
    return SUPERPIXEL_EXTS


def item_rows(ids, records) -> list[dict]:
    """One row per image: the mean over annotators, the best annotator, the image
    measures and the per-annotator values."""
    rows = []
    for iid, r in zip(ids, records):
        row = {"id": iid, "n_annotators": r.n_annotators}
        row.update(r.mean())
        row.update({f"{k}_best": v for k, v in r.best().items()})
        row.update(r.image_measures())
        row["per_annotator"] = {
            k: np.asarray(v).tolist() for k, v in r.per_annotator.items()
        }
        rows.append(row)
    return rows


class PhotographWarning(UserWarning):
    """A superpixel run's EV, the one measure that needs the photographs, covers some
    of its images only."""


def _summarize(ids, records, params, options) -> Result:
    without = [iid for iid, r in zip(ids, records) if r.ev is None or r.ev != r.ev]
    if 0 < len(without) < len(ids):
        import warnings

        from ..errors import first_names

        warnings.warn(
            f"EV is the mean over {len(ids) - len(without)} of the {len(ids)} images: "
            f"{len(without)} {'has' if len(without) == 1 else 'have'} no photograph "
            f"({first_names(without, 5)}); the other "
            "measures cover every image",
            PhotographWarning,
            stacklevel=2,
        )
    s = summarize(records)
    return Result("superpixel", s.metrics(), item_rows(ids, records), detail=s)


def _resampler(ids, records, params, options):
    return resampler(records)


def _write(out, result: Result, ids, records, options) -> None:
    """``per_annotator.csv`` and, when the records hold them, the C++ benchmark's
    ``results.csv`` (rewritten from the records every run)."""
    atomic_write_text(out / "per_annotator.csv", per_annotator_csv(ids, records))
    if records and all(r.stutz is not None for r in records):
        cols = list(STUTZ_COLUMNS)
        rows, vals = [], []
        for iid, r in zip(ids, records):
            for t, c in enumerate(r.stutz):
                rows.append((iid, f"{iid}-{t}"))
                vals.append([c[k] for k in cols])
        write_stutz_results(out / "results.csv", rows, cols, vals)
        return
    # a run without --stutz: an earlier run's results.csv would disagree with the
    # summary; removed when it is the one written here (its header is ours)
    stale = out / "results.csv"
    header = ",".join(["image", "ground_truth", *STUTZ_COLUMNS])
    try:
        with open(stale, encoding="utf-8") as f:
            ours = f.readline().rstrip("\n") == header
    except (OSError, UnicodeDecodeError):
        ours = False
    if ours:
        stale.unlink(missing_ok=True)


def per_annotator_csv(ids, records) -> str:
    """The text of ``per_annotator.csv``: one row per (image, annotator), 6
    significant digits."""
    buf = StringIO()
    w = csv.writer(buf)  # its \r\n line ends, as always
    measures = list(ANNOTATOR_MEASURES)
    measures.insert(measures.index("ue") + 1, "ue_norm")  # as per_item's columns
    w.writerow(
        [
            "image",
            "annotator",
            *measures,
            "n_superpixels",
            "n_components",
            "n_split",
            "co",
            "ev",
        ]
    )
    for iid, r in zip(ids, records):
        img = r.image_measures()
        values = r.annotator_values()
        for k in range(r.n_annotators):
            w.writerow(
                [
                    iid,
                    k,
                    *(f"{values[m][k]:.6g}" for m in measures),
                    img["n_superpixels"],
                    img["n_components"],
                    img["n_split"],
                    f"{img['co']:.6g}",
                    f"{img['ev']:.6g}",
                ]
            )
    return buf.getvalue()


def _to_json(record: SuperpixelRecord) -> dict:
    return record.to_json()


def _from_json(d: dict) -> SuperpixelRecord:
    return SuperpixelRecord.from_json(d)


SUPERPIXEL = Family(
    name="superpixel",
    version=1,
    defaults={
        "tolerance": DEFAULT_TOLERANCE,
        "window": "euclidean",
        "boundary": "bsds",
        "min_overlap": ACHANTA_MIN_OVERLAP,
        "void": None,
        "connectivity": 4,
        "max_annotators": None,
        "stutz": False,
    },
    evaluate=_evaluate,
    to_json=_to_json,
    from_json=_from_json,
    summarize=_summarize,
    write=_write,
    prediction_exts=_exts,
    check=check_evaluation,
    label="superpixel",
    input_files=image_files,
    resampler=_resampler,
    item_score="asa",
)
