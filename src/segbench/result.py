"""One result shape for every benchmark family: metrics, per-item rows, curves, provenance."""

from __future__ import annotations

import json
import math
import platform
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from . import hooks
from ._version import __version__


def json_ready(obj):
    """JSON-ready copy: numpy to Python, NaN and inf to None (null), never a fake 0."""
    if isinstance(obj, dict):
        return {str(k): json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_ready(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return json_ready(obj.tolist())
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if math.isfinite(f) else None
    return obj


_plain = json_ready  # the former private name, kept for callers outside segbench


def _now() -> str:
    """The time a result is made, ISO 8601 UTC; ``SOURCE_DATE_EPOCH`` (seconds since
    1970, the reproducible-builds convention) fixes it, so two runs give the same
    bytes."""
    import os

    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    when = (
        datetime.fromtimestamp(int(epoch), timezone.utc)
        if epoch.isdigit()
        else datetime.now(timezone.utc)
    )
    return when.isoformat(timespec="seconds")


def provenance(**params) -> dict:
    """Who computed a result, when, and with which parameters."""
    return {
        "segbench": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "created": _now(),
        "params": params,
    }


def _read_text(path) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _created_in(path) -> str | None:
    """The ``created`` time of the result file at ``path``, if there is one."""
    text = _read_text(path)
    try:
        created = json.loads(text)["provenance"]["created"] if text else None
    except (ValueError, KeyError, TypeError):
        return None
    return created if isinstance(created, str) else None


def _number(v) -> bool:
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))


def check_result_data(data, path=None) -> None:
    """Check that ``data`` (a parsed ``result.json``) has the shape
    :meth:`Result.to_dict` writes, before any reader trusts it.

    ``family`` a non-empty string; ``name`` a string or null; ``metrics`` a mapping;
    ``per_item`` a list of mappings, each keyed ``"id"``; ``curves``, ``provenance``
    (and its ``params``) mappings; ``intervals`` a mapping of metric to ``[lo, hi]``
    numbers. :meth:`Result.from_json`, ``segbench compare`` and the site all read
    result files through this check, so a malformed one is one line naming it.

    Raises
    ------
    InputError
        Naming ``path`` and the first thing that is not as written.
    """
    from .errors import InputError

    def bad(what):
        raise InputError(f"not a segbench result: {what}", path)

    if not isinstance(data, dict) or not {"family", "metrics"} <= set(data):
        bad("no family and metrics")
    if not isinstance(data["family"], str) or not data["family"]:
        bad(f"its family is {data['family']!r}, not a name")
    if data.get("name") is not None and not isinstance(data["name"], str):
        bad(f"its name is {data['name']!r}, not a string")
    if not isinstance(data["metrics"], dict):
        bad("its metrics are not a mapping of name to value")
    for key in ("curves", "provenance", "intervals"):
        if data.get(key) is not None and not isinstance(data[key], dict):
            bad(
                f"its {key} are not a mapping"
                if key != "provenance"
                else "its provenance is not a mapping"
            )
    params = (data.get("provenance") or {}).get("params")
    if params is not None and not isinstance(params, dict):
        bad("its provenance params are not a mapping")
    rows = data.get("per_item")
    if rows is not None and not isinstance(rows, list):
        bad(f"its per_item is {type(rows).__name__} {rows!r:.40}, not a list of rows")
    for k, row in enumerate(rows or []):
        if (
            not isinstance(row, dict)
            or not isinstance(row.get("id"), (str, int))
            or isinstance(row.get("id"), bool)
        ):
            bad(f"per_item row {k} is not a mapping with an id")
    for k, v in (data.get("intervals") or {}).items():
        if not isinstance(v, list) or len(v) != 2 or not all(_number(b) for b in v):
            bad(f"its interval of {k} is not [lo, hi]")


@dataclass
class Result:
    """The outcome of one benchmark run.

    Attributes
    ----------
    family : str
        'boundary', 'region', 'human_boundary', ... .
    metrics : dict of str -> float
        Headline numbers (NaN where not computed).
    per_item : list of dict
        One row per image, keyed ``"id"`` first.
    curves : dict of str -> 1-D ndarray or list
        Named curves (e.g. thresholds, recall, precision, f): numpy arrays in a result
        just computed, lists in one read from JSON (:meth:`to_dict` and
        :meth:`to_json` give lists either way).
    provenance : dict
        Versions, time and parameters.
    name : str
        The name of the run (the algorithm), as plots and the site show it.
    intervals : dict of str -> (lo, hi)
        Bootstrap intervals of headline metrics, when asked for (``--ci``); their
        settings are in ``provenance['ci']``.
    detail : object
        The family's full summary object (e.g. a ``BoundarySummary``), for writers;
        not saved.
    records : list
        The per-item records the result was summarized from (sorted ids), for
        comparisons in the same process; not saved (they stay in the run folder's
        record store).
    notes : dict of str -> str
        What a reader must know to read a metric (e.g. ``{"AP": "..."}`` where the
        protocol makes it incomparable with published numbers); saved as ``notes``,
        printed beside the table.
    """

    family: str
    metrics: dict
    per_item: list = field(default_factory=list)
    curves: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)
    name: str = ""
    intervals: dict = field(default_factory=dict)
    # each family's own summary object (a BoundarySummary, a RegionSummary, a
    # ConsistencyReport, a dict, ...): its family's writers and callers know which,
    # so it is Any rather than a union every reader would have to narrow
    detail: Any = field(default=None, repr=False, compare=False)
    records: list | None = field(default=None, repr=False, compare=False)
    notes: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        head = ", ".join(
            f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}"
            for k, v in list(self.metrics.items())[:4]
        )
        return (
            f"<Result {self.family} {self.name!r}: {head}"
            f"{', ...' if len(self.metrics) > 4 else ''}; "
            f"{len(self.per_item)} items>"
        )

    def _repr_html_(self) -> str:
        """What a notebook shows: the headline metrics in a compact table (with
        intervals when computed) and, for a boundary result, its PR plot inline as PNG
        (:func:`segbench.notebook.result_html`)."""
        from .notebook import result_html

        return result_html(self)

    def plot(self, ax=None, *, human=None, label: str | None = None):
        """Draw this boundary result's PR curve on matplotlib axes, in the BSDS style.

        Call it on several results with the same ``ax`` to draw them together: the
        iso-F contours (F = 0.1 ... 0.9) are drawn once, each curve gets its ODS point
        and its ODS F in the legend.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Default: a new figure (``matplotlib.pyplot.subplots``).
        human : HumanScores, human_boundary Result or (recall, precision[, F]), optional
            The human point (a black star); default the result's ``human_*`` metrics
            (``compute(human=...)``, ``--human``), if any.
        label : str, optional
            The legend name (default ``name``).

        Returns
        -------
        matplotlib Axes

        Raises
        ------
        InputError
            A result without a PR curve (not a boundary result).
        """
        from .notebook import plot_pr_axes

        return plot_pr_axes([self], ax, human=human, label=label)

    def compare(self, *others, **options):
        """:func:`segbench.compare` of this result and ``others`` (results computed in
        this process, which carry their records, or run folders): paired bootstrap
        differences and image-by-image tests, a :class:`segbench.comparison.Comparison`.
        ``options`` as :func:`segbench.compare` (``resamples``, ``level``, ``seed``,
        ``ids``, ``per_image``). A result streamed in memory names no ground-truth
        files: the runs' image ids are checked, and a UserWarning says that the
        ground truth could not be."""
        # the comparison layer sits above the result shape: its function reaches
        # here through the slot segbench/__init__.py fills, not an import

        if hooks.compare is None:  # pragma: no cover - segbench/__init__ always sets it
            raise RuntimeError("segbench.hooks.compare is not set: import segbench")
        return hooks.compare(self, *others, **options)

    def to_dict(self) -> dict:
        out = {"family": self.family, "name": self.name, "metrics": self.metrics}
        if self.intervals:
            out["intervals"] = {k: list(v) for k, v in self.intervals.items()}
        if self.notes:
            out["notes"] = dict(self.notes)
        out.update(per_item=self.per_item, curves=self.curves, provenance=self.provenance)
        return json_ready(out)

    def headline(self, metrics=None) -> str:
        """One line: the family, the run's name, its headline metrics (with their
        intervals where computed) and how many items it scored.

        Parameters
        ----------
        metrics : sequence of str, optional
            The metrics to show; default the registry's headline of this family
            (:data:`segbench.families.BENCHMARKS`), else its first four numbers.
        """
        from .families import BENCHMARKS

        entry = BENCHMARKS.get(self.family)
        if metrics is None:
            metrics = (
                entry.headline
                if entry is not None and entry.headline
                else [
                    k
                    for k, v in self.metrics.items()
                    if isinstance(v, (int, float)) and not isinstance(v, bool)
                ][:4]
            )
        shown = "  ".join(
            f"{k} {self.interval_text(k)}" for k in metrics if k in self.metrics
        )
        name = f" {self.name}" if self.name else ""
        n = len(self.per_item)
        return f"{self.family}{name}: {shown}  ({n} item{'s' if n != 1 else ''})"

    def interval_text(self, metric: str, digits: int = 4) -> str:
        """``'0.7889 [0.781, 0.797]'``: the metric with its interval when there is one
        (bounds one digit shorter), ``'nan'`` where not computed."""
        value = self.metrics.get(metric, float("nan"))
        text = f"{value:.{digits}f}"
        if metric in self.intervals:
            lo, hi = self.intervals[metric]
            text += f" [{lo:.{digits - 1}f}, {hi:.{digits - 1}f}]"
        return text

    def to_json(self, path=None, *, indent: int = 1) -> str:
        """JSON text (NaN as null); written atomically to ``path`` when given. A file
        there that differs only in its ``created`` time is left as it is (and this
        result takes its time): a rerun that changes nothing changes no byte."""
        text = json.dumps(self.to_dict(), indent=indent, allow_nan=False)
        if path is not None:
            from .io import atomic_write_text

            old = _created_in(path)
            if old is not None and old != self.provenance.get("created"):
                fresh = self.provenance["created"]
                self.provenance["created"] = old
                same = json.dumps(self.to_dict(), indent=indent, allow_nan=False)
                if _read_text(path) == same + "\n":
                    return same
                self.provenance["created"] = fresh
            atomic_write_text(path, text + "\n")
        return text

    @classmethod
    def from_json(cls, path) -> Result:
        """Read a result file written by :meth:`to_json` (null back to NaN); a run
        folder's results are read by :func:`segbench.api.read_run`
        (:class:`segbench.engine.RunFolder`).

        Raises
        ------
        InputError
            If the file cannot be read or is not a segbench result.
        """
        from .errors import InputError

        if Path(path).is_dir():  # the run folder's layout is the engine's, above
            raise InputError(
                "a run folder, not a result file: read it with "
                "segbench.api.read_run(folder[, family])",
                path,
            )
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError("file not found", path) from None
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise InputError(f"not a readable JSON result: {exc}", path) from None
        check_result_data(data, path)
        nan = float("nan")
        bounds = data.get("intervals") or {}
        if not isinstance(bounds, dict):
            raise InputError("its intervals are not a mapping of metric to [lo, hi]", path)
        notes = data.get("notes") or {}
        if not isinstance(notes, dict):
            raise InputError("its notes are not a mapping of metric to text", path)
        return cls(
            family=data["family"],
            intervals={
                k: tuple(nan if b is None else b for b in v) for k, v in bounds.items()
            },
            metrics={k: nan if v is None else v for k, v in data["metrics"].items()},
            per_item=[
                {k: nan if v is None else v for k, v in row.items()}
                for row in data.get("per_item") or []
            ],
            curves=data.get("curves") or {},
            provenance=data.get("provenance") or {},
            name=data.get("name") or "",
            notes={str(k): str(v) for k, v in notes.items()},
        )

    def _columns(self) -> list[str]:
        cols: list[str] = []
        for row in self.per_item:
            cols.extend(k for k in row if k not in cols)
        if "id" in cols:
            cols.remove("id")
            cols.insert(0, "id")
        return cols

    def to_csv(self, path=None) -> str:
        """The per-item rows as CSV (one row per item, ``id`` first; NaN as empty; a
        nested value, such as superpixels' per-annotator lists, as compact JSON);
        written atomically to ``path`` when given."""
        import csv
        import io
        import json

        buf = io.StringIO()
        cols = self._columns()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(cols)
        for row in json_ready(self.per_item):
            writer.writerow(
                [
                    ""
                    if row.get(c) is None
                    else repr(row[c])
                    if isinstance(row[c], float)
                    else json.dumps(row[c], separators=(",", ":"))
                    if isinstance(row[c], (dict, list))
                    else row[c]
                    for c in cols
                ]
            )
        text = buf.getvalue()
        if path is not None:
            from .io import atomic_write_text

            atomic_write_text(path, text)
        return text

    def to_pandas(self):
        """The per-item rows as a ``pandas.DataFrame`` indexed by ``id`` (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Result.to_pandas needs pandas: pip install pandas") from None
        frame = pd.DataFrame(json_ready(self.per_item), columns=self._columns())
        return frame.set_index("id") if "id" in frame.columns else frame
