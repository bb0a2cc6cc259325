"""One result shape for every benchmark family: metrics, per-item rows, curves, provenance."""

from __future__ import annotations

import json
import math
import platform
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from . import __version__


def _plain(obj):
    """JSON-ready copy: numpy to Python, NaN and inf to None (null), never a fake 0."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _plain(obj.tolist())
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if math.isfinite(f) else None
    return obj


def provenance(**params) -> dict:
    """Who computed a result, when, and with which parameters."""
    return {
        "segbench": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "params": params,
    }


@dataclass
class Result:
    """The outcome of one benchmark run.

    Attributes
    ----------
    family : str
        'boundary', 'region', ... .
    metrics : dict of str -> float
        Headline numbers (NaN where not computed).
    per_item : list of dict
        One row per image.
    curves : dict of str -> list
        Named curves (e.g. thresholds, recall, precision, f).
    provenance : dict
        Versions, time and parameters.
    """

    family: str
    metrics: dict
    per_item: list = field(default_factory=list)
    curves: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return _plain({"family": self.family, "metrics": self.metrics,
                       "per_item": self.per_item, "curves": self.curves,
                       "provenance": self.provenance})

    def to_json(self, path=None, *, indent: int = 1) -> str:
        """JSON text (NaN as null); written to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=indent, allow_nan=False)
        if path is not None:
            Path(path).write_text(text + "\n")
        return text
