"""The semantic-boundary benchmark as an engine family (:class:`segbench.spec.Family`).

Per image: read the ground truth (:class:`GroundTruth`) and the per-class soft maps
(:class:`PredictionMaps`), count every class on the exact matcher
(:func:`evaluate_classes`). Summary: each class's ODS, OIS, AP, R50 and their means
(MF-ODS, MF-OIS, MAP).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..families import SEMANTIC_BOUNDARY_PARAMS, defaults, summary_defaults
from ..primitives import default_thresholds
from ..result import Result
from ..spec import Family
from ._core import (
    SemanticBoundaryCounts,
    SemanticBoundarySummary,
    evaluate_classes,
    resampler,
    summarize_classes,
)
from ._datasets import (
    _CITY_LABELS,
    SemanticBoundaryDataset,
    class_folder_predictions,
    open_cityscapes,
    open_multilabel,
    open_sbd,
)
from ._protocols import check_params, class_names
from ._readers import GroundTruth, PredictionMaps, _crop, class_file, ground_truth_source

#: Prediction files the family reads (``class_NNN/<id>.png`` through the first class's
#: folder, ``<id>.npy`` / ``<id>.npz`` arrays, multi-label ``<id>.png``).
PRED_EXTS = ("npy", "npz", "png")


def _source(item):
    if not item.sources:
        raise InputError(f"image {item.iid!r} has no ground-truth file")
    return ground_truth_source(item.sources[0])


def read_ground_truth(item, params: dict) -> GroundTruth:
    """The :class:`GroundTruth` of a dataset item under resolved parameters."""
    return GroundTruth(
        _source(item),
        gt_edges=params["gt_edges"],
        instance_sensitive=params["instance_sensitive"],
        scale=params["scale"],
        margin=params["margin"],
        n_classes=params["n_classes"],
    )


def _evaluate(sample, params: dict) -> SemanticBoundaryCounts:
    gt = read_ground_truth(sample.item, params)
    if sample.prediction is None:
        raise InputError(f"image {sample.id!r} has no prediction")
    pred = PredictionMaps(sample.prediction, gt.n_classes, gt.shape)
    m = params["margin"]
    try:
        return evaluate_classes(
            lambda c: _crop(pred(c), m),
            gt.edges,
            regions=gt.region if params["kill_internal"] else None,
            n_classes=gt.n_classes,
            nthresh=params["nthresh"],
            thresholds=params.get("thresholds"),
            max_dist=params["max_dist"],
            thin=params["thin"],
            kill_internal=params["kill_internal"],
            skip_if_nonexistent=params["skip_if_nonexistent"],
            nms=params["nms"],
            kind=gt.kind,
        )
    except InputError as exc:
        if exc.path is None:
            raise InputError(exc.problem, sample.prediction) from None
        raise


def _input_files(sample, params: dict) -> dict:
    """The files a record reads besides the ground truth and the prediction file: the
    other classes' files of the per-class layout, and the instance file."""
    out = {}
    if sample.prediction is not None and sample.value is None:
        try:
            first = class_file(sample.prediction, 0)
        except InputError:
            first = None
        if first is not None:
            n = params["n_classes"] or _n_classes(sample.item)
            files = [class_file(sample.prediction, c) for c in range(n)]
            missing = [p for p in files if not p.is_file()]
            if missing:
                raise InputError(
                    f"{len(missing)} of the {n} class folders have no "
                    f"prediction of image {sample.id!r}",
                    missing[0],
                )
            out["pred_classes"] = files
    if params["instance_sensitive"]:
        src = _source(sample.item)
        if src.instances is not None:
            if not src.instances.is_file():
                raise InputError(
                    "instance-sensitive boundaries read this file; it is "
                    "missing (or score without instance_sensitive)",
                    src.instances,
                )
            out["gt_instances"] = [src.instances]
    return out


def _n_classes(item) -> int:
    kind = _source(item).kind
    if kind == "multilabel":
        raise InputError(
            "a multi-label edge PNG does not say how many classes it "
            "encodes: give n_classes",
            item.sources[0],
        )
    return 20 if kind == "sbd" else 19


def _validate(rec: SemanticBoundaryCounts, params: dict) -> None:
    explicit = params.get("thresholds")
    expected = (
        default_thresholds(params["nthresh"])
        if explicit is None
        else np.asarray(explicit, dtype=np.float64)
    )
    if not np.array_equal(rec.thresholds, expected):
        given = (
            f"nthresh = {params['nthresh']}"
            if explicit is None
            else f"the {len(explicit)} given"
        )
        raise ValueError(f"{rec.thresholds.size} thresholds, not those of {given}")
    if params["n_classes"] is not None and rec.n_classes != params["n_classes"]:
        raise ValueError(f"{rec.n_classes} classes, not n_classes = {params['n_classes']}")


def _summary(ids, records, params):
    kind = records[0].kind if records else ""
    names = class_names(kind, records[0].n_classes) if records else ()
    return summarize_classes(records, ids, names=names, alpha=params.get("alpha", 0.5))


def _summarize(ids, records, params, options) -> Result:
    s = _summary(ids, records, params)
    per_item = [
        {"id": iid, "f": float(f), "n_classes": int(np.count_nonzero(rec.sum_r[:, 0]))}
        for iid, f, rec in zip(ids, s.per_image_f, records)
    ]
    notes = {}
    if s.metrics["n_classes_scored"] < s.metrics["n_classes"]:
        notes["MF_ODS"] = (
            f"mean over the {s.metrics['n_classes_scored']} of "
            f"{s.metrics['n_classes']} classes that have ground-truth "
            "boundaries in these images (the others are NaN)"
        )
    return Result(
        "semantic_boundary",
        s.metrics,
        per_item,
        curves={"thresholds": records[0].thresholds if records else []},
        detail=s,
        notes=notes,
    )


#: A class folder's files (:func:`segbench.io.write_eval_bdry`).
_CLASS_FILES = ("eval_bdry.txt", "eval_bdry_img.txt", "eval_bdry_thr.txt")


def _write(out, result: Result, ids, records, options) -> None:
    """``class_NNN/eval_bdry.txt``, ``eval_bdry_thr.txt``, ``eval_bdry_img.txt`` of each
    class with ground truth (the boundary benchmark's files, as SEAL and pyEdgeEval
    write one folder per class) and ``eval_semantic_bdry.txt``: one line per class
    (number, ODS threshold, R, P, F, OIS F, AP, name) and the means. A class without
    ground truth in this run has no folder: an earlier run's files of it are removed
    (the folder too when nothing else is in it)."""
    from ..io import atomic_write_text, ensure_dir, write_eval_bdry

    s = result.detail
    assert isinstance(s, SemanticBoundarySummary)  # as _summarize made it
    lines = []
    for row, summary in zip(s.table, s.classes):
        folder = out / f"class_{row['class']:03d}"
        if summary is not None:
            write_eval_bdry(ensure_dir(folder), summary)
        else:  # no ground truth of the class in this run: an earlier run's files go
            for name in _CLASS_FILES:
                (folder / name).unlink(missing_ok=True)
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        lines.append(
            " ".join(
                f"{row[k]:.6g}"
                for k in (
                    "class",
                    "ODS_threshold",
                    "ODS_recall",
                    "ODS_precision",
                    "ODS",
                    "OIS",
                    "AP",
                )
            )
            + f" {row['name']}"
        )
    m = s.metrics
    lines.append(
        f"mean MF-ODS {m['MF_ODS']:.6g} MF-OIS {m['MF_OIS']:.6g} MAP {m['MAP']:.6g}"
    )
    atomic_write_text(out / "eval_semantic_bdry.txt", "\n".join(lines) + "\n")


def _resampler(ids, records, params, options):
    return resampler(records, alpha=params.get("alpha", 0.5))


def _warm_up(params: dict) -> None:
    """The matcher once on an 8 x 8 map (compiles it before worker processes start)."""
    gt = np.zeros((1, 8, 8), bool)
    gt[0, 2:6, 3] = True
    pb = np.zeros((1, 8, 8))
    pb[0, 2:6, 3:5] = 0.7
    evaluate_classes(
        pb,
        gt,
        nthresh=params["nthresh"],
        thresholds=params.get("thresholds"),
        max_dist=params["max_dist"],
        thin=params["thin"],
    )


def _exts(params: dict) -> tuple[str, ...]:
    return PRED_EXTS


def _missing_hint(params: dict, found) -> str:
    return (
        "predictions are <id>.npy or <id>.npz (C, H, W) arrays, multi-label "
        "<id>.png, or one folder per class: then give the first class's folder, "
        "PRED/class_001 (the others are read beside it)"
    )


_LAYOUTS = (
    "SBD's dataset folder (cls/, inst/, train.txt, val.txt) with --split, or its cls/ "
    "folder; a Cityscapes tree (gtFine/<split>/<city>/<name>_gtFine_labelIds.png); or "
    "multi-label edge PNGs (RGB, pyEdgeEval's encoding)"
)


def _open_ground_truth(gt, split):
    """SBD's dataset folder (``cls/``, the split lists), a Cityscapes tree (``gtFine``)
    or a folder of pyEdgeEval's multi-label edge PNGs; None for anything else."""
    from pathlib import Path

    root = Path(gt)
    if not root.is_dir():
        return None
    if root.name == "cls" and (split or any(root.glob("*.mat"))):
        # SBD's cls/: with --split, the list beside it; without, every <id>.mat
        return open_sbd(root.parent, split)
    if (root / "cls").is_dir():
        lists = sorted(p.stem for p in root.glob("*.txt"))
        if split is None and len(lists) > 1:
            raise InputError(
                f"SBD holds several splits ({', '.join(f'{n}.txt' for n in lists)}): "
                "choose one with --split (SEAL and pyEdgeEval score val), or give "
                "--gt its cls/ folder to score every file",
                root,
            )
        return open_sbd(root, split)
    if root.name == "gtFine" or (root / "gtFine").is_dir():
        return open_cityscapes(root, split or "val")
    if root.parent.name == "gtFine":  # gtFine/<split>
        if split and split != root.name:
            raise InputError(
                f"--gt is the {root.name!r} split's folder but --split is {split!r}: "
                f"give --gt gtFine --split {split}, or --gt alone",
                root,
            )
        return open_cityscapes(root.parent, root.name)
    entries = sorted(root.iterdir())
    if any(p.name.endswith(_CITY_LABELS) for p in entries):  # one city's folder
        files = {
            p.name[: -len(_CITY_LABELS)]: p
            for p in entries
            if p.name.endswith(_CITY_LABELS) and p.is_file()
        }
        return SemanticBoundaryDataset(root, files, split or root.parent.name)
    if not any(p.is_dir() or p.suffix.lower() in (".png", ".mat") for p in entries):
        raise InputError(
            f"no semantic-boundary ground truth here: expected {_LAYOUTS}", root
        )
    first = next((p for p in entries if p.suffix.lower() == ".png"), None)
    if first is not None:
        from PIL import Image

        try:
            with Image.open(first) as im:
                mode = im.mode
        except OSError:
            return None
        if mode == "RGB":  # bits of classes in R, G, B
            return open_multilabel(root, split=split or "test")
        raise InputError(
            f"a {mode} image: semantic-boundary ground truth is {_LAYOUTS}", first
        )
    return None


def _pair_predictions(ids, pred_dir):
    """One folder per class (``class_001`` ...): the first class's files stand for
    each image, the others are read beside them; None for other layouts."""
    from pathlib import Path

    root = Path(pred_dir)
    if root.name == "class_001" and root.is_dir():  # the first class's folder given
        root = root.parent
    if not (root / "class_001").is_dir():
        return None
    first = root / "class_001"
    ids = list(ids.ids() if hasattr(ids, "ids") else ids)
    flat, city = "{id}.png", "{city}/{id}_leftImg8bit.png"  # city: pyEdgeEval's Cityscapes

    def found(pattern):
        return sum(
            (first / pattern.format(id=i, city=i.split("_")[0])).is_file() for i in ids
        )

    # the layout the files are in: a stray subfolder (.ipynb_checkpoints) decides nothing
    n_flat = found(flat)
    pattern = city if n_flat < len(ids) and found(city) > n_flat else flat
    return class_folder_predictions(root, ids, pattern)


SEMANTIC_BOUNDARY = Family(
    name="semantic_boundary",
    version=1,
    defaults=defaults(SEMANTIC_BOUNDARY_PARAMS),
    evaluate=_evaluate,
    to_json=SemanticBoundaryCounts.to_json,
    from_json=SemanticBoundaryCounts.from_json,
    validate=_validate,
    summarize=_summarize,
    write=_write,
    prediction_exts=_exts,
    missing_hint=_missing_hint,
    check=check_params,
    label="semantic boundary",
    input_files=_input_files,
    summary_defaults=summary_defaults(SEMANTIC_BOUNDARY_PARAMS),
    resampler=_resampler,
    item_score="f",
    warm_up=_warm_up,
    open_ground_truth=_open_ground_truth,
    pair_predictions=_pair_predictions,
)
