"""Pooling per-segmentation records into every statistic (the in-memory functions and the
STATS family both end here)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..primitives import compact_labels
from ..result import Result, provenance
from ._measure import SegmentationRecord
from ._summary import GroupStatistics, split_groups, summarize_group


def count_segments(segmentation: np.ndarray) -> int:
    """Number of distinct labels of a label map."""
    return compact_labels(segmentation, void=None)[1]


@dataclass(frozen=True, eq=False)
class EcologicalStatistics:
    """All statistics, for every group: 'all', and 'gray'/'color' when known.

    Attributes
    ----------
    groups : dict of str -> GroupStatistics
    params : dict
        The parameters of the run (samples, seed, bins, normaliser, ...).
    records : list of SegmentationRecord
        The per-segmentation counts everything was computed from, sorted by key.
    """

    groups: dict
    params: dict
    records: list = field(default_factory=list, repr=False)

    @property
    def all(self) -> GroupStatistics:
        return self.groups["all"]

    def to_result(self, **extra_params) -> Result:
        """The common segbench result shape (``result_stats.json`` is its JSON); one row per
        segmentation, ``id`` its key."""
        rows = [
            {
                "id": r.key,
                "image": r.image_id,
                "gray": r.gray,
                "height": r.shape[0],
                "width": r.shape[1],
                "segments": r.n_segments,
                "convexity_median": float(np.median(r.convexity)),
            }
            for r in self.records
        ]
        return Result(
            family="stats",
            metrics=self.all.metrics(),
            per_item=rows,
            curves={k: g.to_dict() for k, g in self.groups.items()},
            provenance=provenance(**self.params, **extra_params),
        )


def summarize(
    records: Iterable[SegmentationRecord],
    *,
    cue_bins: int = 32,
    convexity_bins: int = 20,
    min_pairs: int = 20,
    bins_per_decade: int = 5,
    max_fraction: float = 0.25,
    min_area: float = 1000.0,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    params: dict | None = None,
) -> EcologicalStatistics:
    """Pool per-segmentation records into every statistic, split by the gray flag.

    The result depends only on the set of records, not on their order.
    """
    records = sorted(records, key=lambda r: r.key)
    opts: dict[str, Any] = dict(
        cue_bins=cue_bins,
        convexity_bins=convexity_bins,
        min_pairs=min_pairs,
        bins_per_decade=bins_per_decade,
        max_fraction=max_fraction,
        min_area=min_area,
        n_boot=n_boot,
        confidence=confidence,
        seed=seed,
    )
    p = dict(params or {})
    # which proximity axis the records were binned on (names the axis only)
    norm = (
        "image"
        if p.get("normalize") == "image" and p.get("max_scaled_distance") is None
        else "dataset"
    )
    groups = {
        name: summarize_group(recs, name, normalize=norm, **opts)
        for name, recs in split_groups(records).items()
    }
    p.update(opts)
    return EcologicalStatistics(groups, p, records)
