"""The 2001 protocol as engine families: human consistency under GCE/LCE, and the
matched-granularity score of a segmenter.

``CONSISTENCY`` keeps, per image, its shape, its annotators' segment counts and its
same-image pairs; the different-image pairs are joint tasks (blocks of at most two
groups of 16 images of equal shape, so each task reads few files), planned from the
per-image records by the seeded sample of :func:`~segbench.region.consistency.
sample_image_pairs`. :func:`granularity_family` builds the family of one segmenter.
Both are specs (:class:`segbench.spec.Family`) run by :func:`segbench.engine.run`.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..primitives import prepare_ground_truth
from ..result import Result
from ..spec import Family, JointTask
from ._family import float_rows
from .consistency import (
    BLOCK,
    ConsistencyReport,
    GranularityReport,
    _cross,
    _granularity_rows,
    _same_image_rows,
    plot_consistency,
    plot_granularity,
    sample_image_pairs,
)
from .consistency_figures import (
    PAPER_IMAGES,
    matrix_images,
    matrix_report,
    plot_error_matrices,
)


def _prepared(sample):
    try:
        return prepare_ground_truth(sample.ground_truth(), void=None)  # no void in 2001
    except InputError as exc:
        if exc.path is None:
            raise InputError(
                f"image {sample.id}: {exc.problem}",
                sample.item.sources[0] if sample.item.sources else None,
            ) from None
        raise


# --- human consistency -------------------------------------------------------------


def _evaluate(sample, params: dict) -> dict:
    gts = sample.ground_truth()
    flat, counts = _prepared(sample)
    return {
        "shape": [int(n) for n in gts[0].shape],
        "counts": [int(k) for k in counts],
        "same": _same_image_rows(flat, counts),
    }


def _to_json(rec: dict) -> dict:
    return {
        "shape": rec["shape"],
        "counts": rec["counts"],
        "same": np.asarray(rec["same"]).tolist(),
    }


def _from_json(d: dict) -> dict:
    shape = [int(n) for n in d["shape"]]
    counts = [int(k) for k in d["counts"]]
    same = float_rows(d["same"], 4, "the same-image rows")
    k = len(counts)
    if len(shape) != 2 or min(shape) < 1 or len(same) != k * (k - 1) // 2:
        raise ValueError(
            "a consistency record has a shape, one count per annotator and "
            "one row per pair of annotators"
        )
    _check_errors(same[:, 2:], "the same-image rows")
    return {"shape": shape, "counts": counts, "same": same}


def _check_errors(errors: np.ndarray, what: str) -> None:
    """ValueError unless every GCE and LCE is a number in [0, 1]."""
    if not np.isfinite(errors).all() or (errors < 0).any() or (errors > 1 + 1e-9).any():
        raise ValueError(f"{what} hold a GCE or LCE outside [0, 1]")


def _check(params: dict) -> None:
    if params["pairs"] < 0:
        raise InputError(f"pairs must be a non-negative integer, got {params['pairs']}")


def _joint_tasks(ids, records, params) -> list[JointTask]:
    """Blocks of the sampled different-image pairs: grouped by (block of a, block of b)
    within each shape group, ``BLOCK`` images a block."""
    shapes = [tuple(r["shape"]) for r in records]
    sample, _ = sample_image_pairs(shapes, params["pairs"], params["seed"])
    return _blocks(ids, shapes, sample.tolist())


def _blocks(ids, shapes, pairs) -> list[JointTask]:
    """Joint tasks of image pairs ``(a, b)`` (indices into ``ids``, equal shapes):
    grouped by (block of a, block of b) within each shape group, ``BLOCK`` images a
    block, so a task reads at most ``2 * BLOCK`` images."""
    pos: dict[int, tuple] = {}  # image -> (its shape, its block in that shape)
    counter: dict[tuple, int] = {}  # shape -> images of it so far
    for n, s in enumerate(shapes):
        pos[n] = (s, counter.setdefault(s, 0) // BLOCK)
        counter[s] += 1
    groups: dict = {}
    for a, b in pairs:
        groups.setdefault((pos[a], pos[b]), []).append((a, b))
    tasks = []
    for n, key in enumerate(sorted(groups)):
        pairs = groups[key]
        need = sorted({i for p in pairs for i in p})
        tasks.append(
            JointTask(
                f"block{n:05d}",
                tuple(ids[i] for i in need),
                [[ids[a], ids[b]] for a, b in pairs],
            )
        )
    return tasks


def _evaluate_joint(samples, payload, params) -> np.ndarray:
    """Rows ``(i, j, gce, lce)`` of every annotator pair of each image pair, in order."""
    cache = {}
    for iid, sample in samples.items():
        flat, counts = _prepared(sample)
        dtype = np.uint16 if max(counts, default=0) < 65535 else np.int32
        cache[iid] = (flat.astype(dtype), counts)
    rows = [_cross(*cache[a], *cache[b]) for a, b in payload]
    sizes = [len(r) for r in rows]
    out = np.concatenate(rows) if rows else np.zeros((0, 4))
    return (
        np.column_stack([np.repeat(np.arange(len(rows)), sizes), out])
        if len(out)
        else np.zeros((0, 5))
    )


def _joint_to_json(rows: np.ndarray) -> dict:
    return {"rows": np.asarray(rows).tolist()}


def _joint_from_json(d: dict) -> np.ndarray:
    rows = float_rows(d["rows"], 5, "a block of consistency rows")
    _check_errors(rows[:, 3:], "a block of consistency rows")
    return rows


def report_of(ids, records, params, joint=()) -> ConsistencyReport:
    """The :class:`ConsistencyReport` of per-image and joint records (sorted as the
    protocol requires, so any worker count gives the same report)."""
    index = {iid: n for n, iid in enumerate(ids)}
    same_parts = [
        np.column_stack([np.full(len(r["same"]), n), r["same"]])
        for n, r in enumerate(records)
    ]
    same = np.concatenate(same_parts) if same_parts else np.zeros((0, 5))
    same = same[np.lexsort((same[:, 2], same[:, 1], same[:, 0]))]
    tasks = _joint_tasks(ids, records, params)
    diff_parts = []
    for task, rows in zip(tasks, joint):
        for p, (a, b) in enumerate(task.payload):
            sel = rows[rows[:, 0] == p][:, 1:]
            diff_parts.append(
                np.column_stack(
                    [np.full(len(sel), index[a]), np.full(len(sel), index[b]), sel]
                )
            )
    diff = np.concatenate(diff_parts) if diff_parts else np.zeros((0, 6))
    if len(diff):
        diff = diff[np.lexsort((diff[:, 3], diff[:, 2], diff[:, 1], diff[:, 0]))]
    shapes = [tuple(r["shape"]) for r in records]
    n_pairs = sum(len(t.payload) for t in tasks)
    _, total = sample_image_pairs(shapes, 0, params["seed"])
    return ConsistencyReport(
        list(ids),
        shapes,
        [r["counts"] for r in records],
        same,
        diff,
        int(n_pairs),
        total,
        int(params["seed"]),
        {
            "pairs": int(params["pairs"]),
            "seed": int(params["seed"]),
            "pairing": "equal shape",
            "n_images": len(ids),
        },
    )


def _summarize(ids, records, params, options, joint=()) -> Result:
    report = report_of(ids, records, params, joint)
    result = report.to_result()
    result.detail = report
    return result


def _write(out, result, ids, records, options) -> None:
    """``consistency_pairs.csv`` (every scored pair) and, unless ``options['plot']`` is
    False, Figures 4 and 6."""
    result.detail.write_pairs_csv(out / "consistency_pairs.csv")
    if (options or {}).get("plot", True):
        plot_consistency(result.detail, out)


CONSISTENCY = Family(
    name="consistency",
    version=1,
    defaults={"pairs": 1000, "seed": 0},
    evaluate=_evaluate,
    to_json=_to_json,
    from_json=_from_json,
    summarize=_summarize,
    write=_write,
    check=_check,
    label="GCE/LCE same image",
    joint_tasks=_joint_tasks,
    evaluate_joint=_evaluate_joint,
    joint_to_json=_joint_to_json,
    joint_from_json=_joint_from_json,
)


# --- Figure 5: every pair of the segmentations of a subset of images ----------------


def _matrix_subset(ids, records, params) -> list[int]:
    """Indices (into ``ids``) of Figure 5's images (:func:`matrix_images`)."""
    chosen = set(matrix_images(ids, params["figure_images"], params["seed"]))
    return [n for n, iid in enumerate(ids) if iid in chosen]


def _matrix_joint_tasks(ids, records, params) -> list[JointTask]:
    """Every pair of distinct images of Figure 5's subset that have equal shapes."""
    shapes = [tuple(r["shape"]) for r in records]
    sub = _matrix_subset(ids, records, params)
    pairs = [
        (a, b) for x, a in enumerate(sub) for b in sub[x + 1 :] if shapes[a] == shapes[b]
    ]
    return _blocks(ids, shapes, pairs)


def _matrix_check(params: dict) -> None:
    if params["figure_images"] < 0:
        raise InputError(
            "the images of Figure 5 must be a non-negative number (0: all), "
            f"got {params['figure_images']}"
        )


def _matrix_summarize(ids, records, params, options, joint=()) -> Result:
    sub = _matrix_subset(ids, records, params)
    index = {iid: n for n, iid in enumerate(ids)}
    local = {n: x for x, n in enumerate(sub)}
    cross = {}
    for task, rows in zip(_matrix_joint_tasks(ids, records, params), joint):
        for p, (a, b) in enumerate(task.payload):
            cross[local[index[a]], local[index[b]]] = rows[rows[:, 0] == p][:, 1:]
    report = matrix_report(
        [ids[n] for n in sub],
        [records[n]["shape"] for n in sub],
        [records[n]["counts"] for n in sub],
        [records[n]["same"] for n in sub],
        cross,
        n_images_total=len(ids),
        seed=int(params["seed"]),
        params={
            "figure_images": int(params["figure_images"]),
            "seed": int(params["seed"]),
            "pairing": "equal shape",
        },
    )
    result = report.to_result()
    result.detail = report
    return result


def _matrix_write(out, result, ids, records, options) -> None:
    """``fig5_errors.npz`` (the matrices) and, unless ``options['plot']`` is False,
    Figure 5 (``fig5_gce.png``, ``fig5_lce.png``)."""
    result.detail.write_npz(out / "fig5_errors.npz")
    if (options or {}).get("plot", True):
        plot_error_matrices(result.detail, out)


#: Figure 5 of the 2001 paper: the same per-image records as :data:`CONSISTENCY` and,
#: as joint tasks, every pair of distinct images of equal shape among a seeded subset
#: of ``figure_images`` images (0: all; the paper's figure has 50).
CONSISTENCY_MATRIX = Family(
    name="consistency_matrix",
    version=1,
    defaults={"figure_images": PAPER_IMAGES, "seed": 0},
    evaluate=_evaluate,
    to_json=_to_json,
    from_json=_from_json,
    summarize=_matrix_summarize,
    write=_matrix_write,
    check=_matrix_check,
    label="GCE/LCE all pairs (Fig. 5)",
    joint_tasks=_matrix_joint_tasks,
    evaluate_joint=_evaluate_joint,
    joint_to_json=_joint_to_json,
    joint_from_json=_joint_from_json,
)


# --- matched granularity -----------------------------------------------------------


def _bind(segmenter, iid: str):
    bind = getattr(segmenter, "for_image", None)
    return bind(iid) if callable(bind) else segmenter


def needs_image(segmenter) -> bool:
    """Whether a segmenter reads the photograph (a folder of precomputed maps does not)."""
    return not callable(getattr(segmenter, "for_image", None))


def _evaluate_granularity(sample, params: dict, *, segmenter) -> dict:
    from ..io import write_label_map

    gts = sample.ground_truth()
    image = None
    if needs_image(segmenter):
        if sample.item.image_path is None:
            raise InputError(
                f"image {sample.id!r}: the segmenter needs the photograph; "
                "give the image folder (--images)",
                sample.item.sources[0] if sample.item.sources else None,
            )
        image = sample.item.image
        if image.shape[:2] != gts[0].shape:
            raise InputError(
                f"image is {image.shape[0]}x{image.shape[1]} (HxW) but its "
                f"ground truth is {gts[0].shape[0]}x{gts[0].shape[1]}",
                sample.item.image_path,
            )
    compact: dict = {}
    flat, counts = _prepared(sample)
    try:
        rows = _granularity_rows(
            image, flat, counts, gts[0].shape, _bind(segmenter, sample.id), {}, compact
        )
    except InputError as exc:
        if exc.path is None:
            raise InputError(
                f"image {sample.id}: {exc.problem}", sample.item.image_path
            ) from None
        raise
    if params["save_dir"]:
        from pathlib import Path

        for k, (cm, _) in compact.items():
            write_label_map(Path(params["save_dir"]) / f"{sample.id}_{int(k)}.png", cm - 1)
    return {"rows": rows, "human": _same_image_rows(flat, counts)}


def _granularity_inputs(sample, params: dict, *, segmenter) -> dict:
    files = {}
    if needs_image(segmenter) and sample.item.image_path is not None:
        files["image"] = [sample.item.image_path]
    folder = getattr(segmenter, "folder", None)
    if folder is not None:
        files["segmentations"] = sorted(folder.glob(f"{sample.id}_*"))
    return files


def _gran_to_json(rec: dict) -> dict:
    return {
        "rows": np.asarray(rec["rows"]).tolist(),
        "human": np.asarray(rec["human"]).tolist(),
    }


def _gran_from_json(d: dict) -> dict:
    """Rows ``(k, regions made, gce, lce, annotator)`` and the same-image human rows;
    ValueError where an error is outside [0, 1] or a region count is not positive."""
    rows = float_rows(d["rows"], 5, "the granularity rows")
    human = float_rows(d["human"], 4, "the human rows")
    _check_errors(rows[:, 2:4], "the granularity rows")
    _check_errors(human[:, 2:], "the human rows")
    if not np.isfinite(rows).all() or (rows[:, :2] < 1).any():
        raise ValueError("the granularity rows hold region counts below 1")
    return {"rows": rows, "human": human}


def _gran_summarize(ids, records, params, options) -> Result:
    report = GranularityReport(
        list(ids),
        [r["rows"] for r in records],
        [r["human"] for r in records],
        params["segmenter"],
        {"segmenter": params["segmenter"], "n_images": len(ids)},
    )
    result = report.to_result()
    result.detail = report
    return result


def _gran_write(out, result, ids, records, options) -> None:
    """Figure 8 (``granularity.png``) unless ``options['plot']`` is False."""
    if (options or {}).get("plot", True):
        plot_granularity(result.detail, out / "granularity.png")


def segmenter_name(segmenter) -> str:
    """The name a segmenter's records are keyed by (``name``, ``__name__``, or that of
    the function of a ``functools.partial``)."""
    name = getattr(segmenter, "name", None) or getattr(segmenter, "__name__", None)
    if name is None and hasattr(segmenter, "func"):  # functools.partial
        name = getattr(segmenter.func, "__name__", None)
    return name or repr(segmenter)


def segmenter_identity(segmenter) -> str:
    """What a segmenter's records are keyed by besides its display name: the
    function's module and qualified name, a ``functools.partial``'s bound arguments,
    an object's class (and its ``folder``, a FolderSegmenter's, whose files are keyed
    too). So ``--name`` renames a run without letting one segmenter's records stand
    for another's. Nothing run-specific (no object address), so a rerun resumes."""
    if isinstance(segmenter, partial):
        args = ", ".join(
            [repr(a) for a in segmenter.args]
            + [f"{k}={v!r}" for k, v in sorted(segmenter.keywords.items())]
        )
        return f"{segmenter_identity(segmenter.func)}({args})"
    if hasattr(segmenter, "__qualname__") and hasattr(segmenter, "__module__"):
        return f"{segmenter.__module__}.{segmenter.__qualname__}"
    kind = type(segmenter)
    folder = getattr(segmenter, "folder", None)
    where = f"({Path(folder).resolve()})" if folder is not None else ""
    return f"{kind.__module__}.{kind.__qualname__}{where}"


def granularity_family(segmenter, *, name: str | None = None) -> Family:
    """The matched-granularity family of one segmenter ``(image, k) -> labels``.

    Records are keyed by the segmenter's name (``name`` or :func:`segmenter_name`), its
    identity (:func:`segmenter_identity`: a renamed run never reuses another
    segmenter's records), the photograph and, for a
    :class:`~segbench.algorithms.segmenters.FolderSegmenter`, its ``<iid>_<k>`` files.
    With several workers the segmenter must pickle (a module-level function, a
    ``functools.partial`` of one, or such an object).
    """
    label = name or segmenter_name(segmenter)
    return Family(
        name="granularity",
        version=1,
        defaults={
            "segmenter": label,
            "segmenter_code": segmenter_identity(segmenter),
            "save_dir": "",
        },
        evaluate=partial(_evaluate_granularity, segmenter=segmenter),
        to_json=_gran_to_json,
        from_json=_gran_from_json,
        summarize=_gran_summarize,
        write=_gran_write,
        label="granularity",
        input_files=partial(_granularity_inputs, segmenter=segmenter),
    )
