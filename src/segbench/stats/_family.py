"""The ecological statistics as engine families.

Two passes, as the paper's proximity axis needs the dataset's largest scaled distance
before any pair is binned: ``STATS_SCALE`` (per image: the largest scaled distance of
its segmentations) and ``STATS`` (per image: one :class:`SegmentationRecord` per
segmentation, at the scale of the first pass). Both are specs
(:class:`segbench.spec.Family`) run by :func:`segbench.engine.run`; see
``segbench.evaluate("stats", ...)``.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..result import Result
from ..spec import Family
from ._measure import CUES, ImageCues, SegmentationRecord, max_scaled_distance, measure
from ._plots import plot_stats
from ._pooled import count_segments, summarize


def segmentations(sample) -> list[tuple[str, np.ndarray, bool | None]]:
    """(key, label map, gray flag) of every segmentation of one image.

    Keys are ``<iid>/<uid>`` where the layout records the subject (BSDS300), else
    ``<iid>/<k>`` with ``k`` the 1-based annotator index (BSDS500 .mat), or the
    annotation's own ``key`` where it has one (in-memory items); each key seeds its
    segmentation's pixel sample.
    """
    out = []
    for k, ann in enumerate(sample.ground_truth(), start=1):
        user = getattr(ann, "user", None)
        key = getattr(ann, "key", None)
        if key is None:
            key = f"{sample.id}/{k if user is None else user}"
        out.append((key, ann.segmentation, getattr(ann, "gray", None)))
    keys = [key for key, _, _ in out]
    if len(set(keys)) != len(keys):
        raise InputError(
            f"image {sample.id}: two segmentations by the same subject "
            f"({', '.join(keys)}); choose one presentation",
            sample.item.sources[0] if sample.item.sources else None,
        )
    return out


def _evaluate_scale(sample, params: dict) -> float:
    return max(
        max_scaled_distance(seg.shape, count_segments(seg))
        for _, seg, _ in segmentations(sample)
    )


def _scale_to_json(value: float) -> dict:
    return {"max_scaled_distance": float(value)}


def _scale_from_json(d: dict) -> float:
    value = float(d["max_scaled_distance"])
    if not value > 0:
        raise ValueError("the largest scaled distance is positive")
    return value


def _summarize_scale(ids, records, params, options) -> Result:
    return Result(
        "stats_scale",
        {"max_scaled_distance": max(records)},
        [{"id": i, "max_scaled_distance": r} for i, r in zip(ids, records)],
    )


STATS_SCALE = Family(
    name="stats_scale",
    version=1,
    defaults={},
    evaluate=_evaluate_scale,
    to_json=_scale_to_json,
    from_json=_scale_from_json,
    summarize=_summarize_scale,
    label="stats: counting segments",
)


def _image_files(sample, params: dict) -> dict:
    return {"image": [sample.item.image_path]} if sample.item.image_path else {}


def _evaluate(sample, params: dict) -> list[SegmentationRecord]:
    segs = segmentations(sample)
    cues = None
    if sample.item.image_loader is not None:  # a photograph (file or in memory)
        image = sample.item.image
        if image.shape[:2] != segs[0][1].shape:
            raise InputError(
                f"image {sample.id}: the photograph is {image.shape[0]}x"
                f"{image.shape[1]} but its "
                f"segmentations are {segs[0][1].shape[0]}x"
                f"{segs[0][1].shape[1]}",
                sample.item.image_path,
            )
        cues = ImageCues.of(image)
    return [
        measure(
            seg,
            key=key,
            image_id=sample.id,
            gray=gray,
            cues=cues,
            samples=params["samples"],
            seed=params["seed"],
            scale=params["scale"],
            proximity_bins=params["proximity_bins"],
        )
        for key, seg, gray in segs
    ]


def _record_to_json(r: SegmentationRecord) -> dict:
    return {
        "key": r.key,
        "image_id": r.image_id,
        "gray": r.gray,
        "shape": list(r.shape),
        "n_segments": r.n_segments,
        "proximity": r.proximity.tolist(),
        "cues": {k: v.tolist() for k, v in r.cues.items()},
        "areas": r.areas.tolist(),
        "convexity": r.convexity.tolist(),
    }


def _record_from_json(d: dict) -> SegmentationRecord:
    prox = np.asarray(d["proximity"], dtype=np.int64)
    cues = {k: np.asarray(v, dtype=np.int64) for k, v in d["cues"].items()}
    if (
        prox.ndim != 2
        or prox.shape[1] != 2
        or any(k not in CUES or v.ndim != 2 or v.shape[1] != 2 for k, v in cues.items())
    ):
        raise ValueError("pair counts are (bins, 2) tables")
    areas = np.asarray(d["areas"], dtype=np.int64)
    convexity = np.asarray(d["convexity"], dtype=np.float64)
    if areas.shape != convexity.shape or areas.size != int(d["n_segments"]):
        raise ValueError("one area and one convexity per segment")
    if (
        (areas < 1).any()
        or not np.isfinite(convexity).all()
        or (convexity <= 0).any()
        or (convexity > 1 + 1e-9).any()
    ):
        raise ValueError("areas are positive and convexities in (0, 1] (area over hull)")
    if (prox < 0).any() or any((v < 0).any() for v in cues.values()):
        raise ValueError("pair counts are non-negative")
    gray = d["gray"]
    height, width = (int(n) for n in d["shape"])  # ValueError unless (H, W)
    return SegmentationRecord(
        key=str(d["key"]),
        image_id=str(d["image_id"]),
        gray=None if gray is None else bool(gray),
        shape=(height, width),
        n_segments=int(d["n_segments"]),
        proximity=prox,
        cues=cues,
        areas=areas,
        convexity=convexity,
    )


def _to_json(records: list) -> dict:
    return {"segmentations": [_record_to_json(r) for r in records]}


def _from_json(d: dict) -> list:
    return [_record_from_json(r) for r in d["segmentations"]]


def _summarize(ids, records, params, options) -> Result:
    options = options or {}
    flat = [r for recs in records for r in recs]
    run_params = {
        "samples": params["samples"],
        "seed": params["seed"],
        "proximity_bins": params["proximity_bins"],
        "normalize": options.get("normalize", "dataset"),
        "max_scaled_distance": params["scale"],
    }
    stats = summarize(
        flat, seed=params["seed"], params=run_params, **options.get("summary", {})
    )
    result = stats.to_result()
    result.detail = stats
    return result


def _write(out, result, ids, records, options) -> None:
    """One PNG per figure, unless ``options['plot']`` is False."""
    if (options or {}).get("plot", True):
        plot_stats(result.detail, out)


def _check(params: dict) -> None:
    if params["samples"] < 2:
        raise InputError(f"samples must be at least 2, got {params['samples']}")
    if params["proximity_bins"] < 1:
        raise InputError(f"proximity bins must be positive, got {params['proximity_bins']}")
    if params["scale"] is not None and not params["scale"] > 0:
        raise InputError(f"max_scaled_distance must be positive, got {params['scale']}")


STATS = Family(
    name="stats",
    version=1,
    defaults={"samples": 1000, "seed": 0, "proximity_bins": 20, "scale": None},
    evaluate=_evaluate,
    to_json=_to_json,
    from_json=_from_json,
    summarize=_summarize,
    write=_write,
    check=_check,
    input_files=_image_files,
    label="stats: measuring",
)
