"""Run folders as the site sees them: name, about text, results, predictions."""

from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError

PRED_EXTS = ("png", "bmp", "npy", "mat", "tif", "tiff")

#: Boundary columns of the ranking: (metric key, header).
BOUNDARY_COLUMNS = (("ODS", "ODS"), ("OIS", "OIS"), ("AP", "AP"), ("R50", "R50"))
#: Region columns, shown when any run has region results.
REGION_COLUMNS = (("covering_ODS", "Cov ODS"), ("covering_OIS", "Cov OIS"),
                  ("covering_best", "Cov Best"), ("PRI_ODS", "PRI ODS"),
                  ("PRI_OIS", "PRI OIS"), ("VI_ODS", "VI ODS"), ("VI_OIS", "VI OIS"))


def num(x) -> float:
    """A JSON number as float; None/absent/non-numeric as NaN (never a fake 0)."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return math.nan
    return v


@dataclass
class Run:
    """One algorithm's run folder, loaded."""

    dir: Path
    name: str
    slug: str = ""
    about_html: str = ""
    kind: str = ""
    date: str = ""
    boundary: dict | None = None          # result.json of family 'boundary'
    region: dict | None = None            # result_region.json, or result.json 'region'
    pred_dir: Path | None = None
    preds: dict = field(default_factory=dict)   # iid -> prediction file
    _rows: dict = field(default_factory=dict, repr=False)  # family -> {iid: row}

    def metric(self, key: str) -> float:
        for res in (self.boundary, self.region):
            if res is not None and key in res.get("metrics", {}):
                return num(res["metrics"][key])
        return math.nan

    def per_item(self, family: str) -> dict:
        """The per-image rows of a family ('boundary' or 'region') by image id; built
        once (do not modify the result)."""
        if family not in self._rows:
            res = self.boundary if family == "boundary" else self.region
            self._rows[family] = ({} if res is None else
                                  {str(row.get("id")): row
                                   for row in res.get("per_item", [])})
        return self._rows[family]

    @property
    def params(self) -> dict:
        for res in (self.boundary, self.region):
            if res is not None:
                return (res.get("provenance") or {}).get("params") or {}
        return {}

    def overlay_threshold(self) -> float:
        """The threshold of the TP/FP/miss overlay: boundary ODS, else covering ODS."""
        t = self.metric("ODS_threshold")
        if math.isnan(t):
            t = self.metric("covering_ODS_threshold")
        return t


def slugify(text: str, taken: set) -> str:
    """A file-name-safe, unique, deterministic slug of a user string."""
    s = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode()
    s = re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:40].strip("-") or "algorithm"
    slug, k = s, 2
    while slug in taken:
        slug, k = f"{s}-{k}", k + 1
    taken.add(slug)
    return slug


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise InputError(f"unreadable JSON: {exc}", path) from None


def _find_pred_dir(run_dir: Path, meta: dict, params: dict, explicit) -> Path | None:
    cands = []
    if explicit is not None:
        cands.append(Path(explicit))
    if isinstance(meta.get("pred_dir"), str):
        p = Path(meta["pred_dir"])
        cands.append(p if p.is_absolute() else run_dir / p)
    cands += [run_dir / "predictions", run_dir / "pred"]
    if isinstance(params.get("pred_dir"), str):
        p = Path(params["pred_dir"])
        cands.append(p)
        if not p.is_absolute():
            cands += [run_dir / p, run_dir.parent / p, run_dir.parent.parent / p]
    for c in cands:
        if c.is_dir():
            return c
    return None


def load_run(run_dir, *, pred_dir=None) -> Run:
    """Read a run folder written by ``segbench boundary``/``region``/``all``/``submit``.

    ``meta.json`` (name, about_html, kind, date) is optional; without it the name is
    the one the result records (``--name``, ``name.txt`` or the prediction folder),
    else the folder name. Predictions (for the per-image pictures) are found in
    ``pred_dir`` if given, else ``meta.json``'s ``pred_dir``, ``RUN_DIR/predictions``,
    ``RUN_DIR/pred``, or the ``pred_dir`` recorded in the result's provenance.
    """
    d = Path(run_dir)
    if not d.is_dir():
        raise InputError("run folder not found", d)
    meta = _read_json(d / "meta.json") or {}
    if not isinstance(meta, dict):
        raise InputError("meta.json must hold a JSON object", d / "meta.json")
    res = _read_json(d / "result.json")
    reg = _read_json(d / "result_region.json")
    boundary = region = None
    if isinstance(res, dict):
        if res.get("family") == "region":
            region = res
        elif res.get("family", "boundary") == "boundary":
            boundary = res
    if isinstance(reg, dict):
        region = reg
    if boundary is None and region is None:
        raise InputError("no result.json or result_region.json (is this a run folder?)", d)

    def text(key):
        v = meta.get(key)
        return v.strip() if isinstance(v, str) else ""

    recorded = next((r.get("name") for r in (boundary, region)
                     if r is not None and isinstance(r.get("name"), str)
                     and r.get("name").strip()), "")
    run = Run(d, text("name") or recorded.strip() or d.resolve().name,
              about_html=text("about_html"),
              kind=text("kind"), date=text("date"), boundary=boundary, region=region)
    for family in ("boundary", "region"):
        run.per_item(family)
    run.pred_dir = _find_pred_dir(d, meta, run.params, pred_dir)
    if run.pred_dir is not None:
        from ..io import list_files
        try:
            run.preds = list_files(run.pred_dir, PRED_EXTS)
        except InputError:
            run.preds = {}
    return run


def rank_runs(runs: list[Run]) -> list[Run]:
    """Best first: boundary ODS, then region covering ODS, then name (NaN last)."""
    def key(r: Run):
        ods, cov = r.metric("ODS"), r.metric("covering_ODS")
        return (math.isnan(ods), -ods if not math.isnan(ods) else 0.0,
                math.isnan(cov), -cov if not math.isnan(cov) else 0.0, r.name, r.slug)
    return sorted(runs, key=key)
