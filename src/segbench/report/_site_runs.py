"""Run folders as the site sees them: name, about text, date, presentation, the result
of each family the site ranks, the scores on the images the site shows, their
intervals, downloads and predictions.

A run is read through :class:`segbench.engine.RunFolder` as ``{family: Result}``; which
families the site ranks, and by which metrics, is the registry's
(:func:`segbench.families.ranked_families`, :meth:`Benchmark.site_metrics
<segbench.families.Benchmark.site_metrics>`).
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..families import BENCHMARKS, ranked_families, result_entry
from ..io import list_files

PRED_EXTS = ("png", "bmp", "npy", "mat", "tif", "tiff")

#: Presentations a run can be ranked under: the segmentations it was scored against
#: (BSDS300 ``--presentation``). BSDS500 ground truth is the BSDS300 colour set.
PRESENTATIONS = ("colour", "grey", "all")


def num(x) -> float:
    """A JSON number as float; None/absent/non-numeric as NaN (never a fake 0)."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return math.nan
    return v


def entry_of(family: str):
    """The registry's :class:`~segbench.families.Benchmark` of a ranked family."""

    got = result_entry(family)
    if got is None:
        raise KeyError(family)
    return got[0]


@dataclass(frozen=True)
class Column:
    """One column of the ranking: a family's metric as the registry declares it."""

    family: str
    key: str
    label: str
    long: str
    higher_is_better: bool


def columns_of(families) -> list[Column]:
    """The ranking's columns for runs of ``families`` (registry order): each family's
    site metrics (:meth:`~segbench.families.Benchmark.site_metrics`); without any
    family (a site of the dataset alone), the boundary benchmark's."""

    found = ranked_families(families) or ranked_families(["boundary"])
    return [
        Column(family, m.key, m.title, m.long_title, m.higher_is_better)
        for family, entry in found
        for m in entry.site_metrics()
    ]


@dataclass
class Scope:
    """Which images one family's figures of a run are computed on (see
    :func:`restrict_run`).

    Attributes
    ----------
    n_run : int
        Images the run evaluated (its per-item rows).
    n_scored : int
        Of the images the site shows, those the run has: the figures shown are on these.
    recomputed : bool
        The figures are the family's summary of the run's records of the images shown
        (the run covers more images than the site shows).
    stale : bool
        They should have been summarized on the images shown but could not be (no
        records, or not those the result was made from): the figures shown are the
        run's own, on all ``n_run`` images. Pages flag them.
    """

    n_run: int = 0
    n_scored: int = 0
    recomputed: bool = False
    stale: bool = False


@dataclass
class Run:
    """One algorithm's run folder, loaded: ``results`` is ``{family: Result}`` of the
    families the site ranks, in the registry's order."""

    dir: Path
    name: str
    slug: str = ""
    about_html: str = ""
    kind: str = ""
    date: str = ""  # meta.json date, else the result's created
    presentation: str = "colour"  # one of PRESENTATIONS
    results: dict = field(default_factory=dict)  # family -> segbench.Result
    files: dict = field(default_factory=dict)  # family -> its result file
    #: Other run folders of the same algorithm merged into this one
    #: (:func:`merge_runs`: a boundary run and a region run are one row).
    also: list = field(default_factory=list)
    pred_dir: Path | None = None
    preds: dict = field(default_factory=dict)  # iid -> prediction file
    #: Figures on the images the site shows, where they differ from the run's own
    #: (:func:`restrict_run`), per family; :meth:`metric` reads these first.
    shown: dict = field(default_factory=dict)
    shown_curves: dict = field(default_factory=dict)  # family -> curves on those images
    scope: dict = field(default_factory=dict)  # family -> Scope
    #: The ranking's "vs. next" column (see :func:`vs_next`): text shown in the cell,
    #: e.g. ``"p = 0.012"``, and the value the column sorts by. Empty: no cell text.
    vs_next: str = ""
    vs_next_value: float = math.nan
    _rows: dict = field(default_factory=dict, repr=False)  # family -> {iid: row}
    _records: dict = field(default_factory=dict, repr=False)  # family -> RunRecords

    @property
    def boundary(self):
        """The boundary benchmark's result, or None."""
        return self.results.get("boundary")

    @property
    def region(self):
        """The region benchmark's result, or None."""
        return self.results.get("region")

    def records(self, family: str):
        """The family's records the result was summarized from
        (:class:`~segbench.report._site_records.RunRecords`), or None where the run
        folder has none that match its result; read once."""
        if family not in self._records:
            from ._site_records import read_records

            res = self.results.get(family)
            got = None
            if res is not None and family in self.files:
                try:
                    got = read_records(self.files[family], res)
                except (InputError, OSError, ValueError):
                    got = None
            self._records[family] = got
        return self._records[family]

    def _family_of(self, key: str) -> str | None:
        return next((f for f, res in self.results.items() if key in res.metrics), None)

    def metric(self, key: str, family: str | None = None) -> float:
        """A figure as the site shows it: on the images shown (recomputed where the
        run covers more), else the run's own; NaN where the run has none."""
        family = family or self._family_of(key)
        if family is None or family not in self.results:
            return math.nan
        shown = self.shown.get(family, {})
        if key in shown:
            return num(shown[key])
        return num(self.results[family].metrics.get(key))

    def interval(self, key: str, family: str | None = None) -> tuple[float, float] | None:
        """The run's recorded interval ``[lo, hi]`` of a metric (the result's
        ``intervals``), or None: none recorded, or the figure shown was recomputed on
        fewer images than the interval was (it would not belong to the number)."""
        family = family or self._family_of(key)
        if family not in self.results or self.scope.get(family, Scope()).recomputed:
            return None
        iv = (self.results[family].intervals or {}).get(key)
        if not isinstance(iv, (list, tuple)) or len(iv) != 2:
            return None
        return num(iv[0]), num(iv[1])

    def ci(self, family: str = "boundary") -> dict:
        """The provenance ``ci`` settings of a family's intervals (resamples, level,
        seed), or {}."""
        res = self.results.get(family)
        prov = (res.provenance if res is not None else None) or {}
        ci = prov.get("ci", (prov.get("params") or {}).get("ci"))
        return ci if isinstance(ci, dict) else {}

    def has_intervals(self, family: str | None = None) -> bool:
        fams = (family,) if family else tuple(self.results)
        return any(
            self._had_intervals(f) and not self.scope.get(f, Scope()).recomputed
            for f in fams
        )

    def stale(self, key: str, family: str | None = None) -> bool:
        """Whether a metric could not be recomputed on the images shown."""
        family = family or self._family_of(key)
        return family is not None and self.scope.get(family, Scope()).stale

    def curves(self, family: str = "boundary") -> dict:
        """The family's curves on the images shown (else the run's own)."""
        if family in self.shown_curves:
            return self.shown_curves[family]
        res = self.results.get(family)
        return (res.curves if res is not None else None) or {}

    def scope_notes(self, n_images: int) -> list[tuple[str, bool]]:
        """Sentences saying on which images this run's figures are computed, where that
        is not simply the ``n_images`` images the site shows: ``(text, caveat)``, with
        ``caveat`` True where the figures are *not* those of the images shown."""
        notes = []
        for family in self.results:
            sc = self.scope.get(family)
            if sc is None:
                continue
            what = family.replace("_", " ").capitalize()
            if sc.stale:
                text = (
                    f"{what} figures are the run's own, on all {sc.n_run} images it "
                    f"evaluated, not on the {n_images} shown: the run folder has no "
                    f"per-image records (.segbench-records) that match its result "
                    f"to summarize them from."
                )
                notes.append((text, True))
            elif sc.recomputed:
                ivs = (
                    f"; intervals not shown: they were computed on all {sc.n_run}"
                    if self._had_intervals(family)
                    else ""
                )
                text = (
                    f"{what} figures recomputed on the {sc.n_scored} images shown "
                    f"from the run's per-image records (the run evaluated "
                    f"{sc.n_run}; its downloads are on all {sc.n_run}{ivs})."
                )
                notes.append((text, False))
            if not sc.stale and sc.n_scored < n_images:
                text = (
                    f"{what} figures are on {sc.n_scored} of the {n_images} images "
                    "shown: the run has no result for the others."
                )
                notes.append((text, True))
        return notes

    def _had_intervals(self, family: str) -> bool:
        res = self.results.get(family)
        return res is not None and isinstance(res.intervals, dict) and bool(res.intervals)

    def per_item(self, family: str) -> dict:
        """The per-image rows of a family by image id (empty where the run has no
        result of it); built once (do not modify the result)."""
        if family not in self._rows:
            res = self.results.get(family)
            self._rows[family] = (
                {} if res is None else {str(row.get("id")): row for row in res.per_item}
            )
        return self._rows[family]

    @property
    def date_key(self) -> str:
        """:attr:`date` as a sortable UTC ISO string ('' if absent or unreadable)."""
        return date_key(self.date)

    @property
    def params(self) -> dict:
        for res in self.results.values():
            return (res.provenance or {}).get("params") or {}
        return {}

    def overlay_threshold(self) -> float:
        """The threshold of the TP/FP/miss overlay: boundary ODS, else covering ODS."""
        t = self.metric("ODS_threshold", "boundary")
        if math.isnan(t):
            t = self.metric("covering_ODS_threshold", "region")
        return t


def date_key(text: str) -> str:
    """An ISO 8601 date or time as a sortable UTC string ``YYYY-MM-DDTHH:MM:SS``
    (a date alone is its midnight; a time without zone is taken as UTC); '' if it
    is not ISO 8601."""
    try:
        t = datetime.fromisoformat(str(text).strip().replace("Z", "+00:00"))
    except ValueError:
        return ""
    if t.tzinfo is not None:
        t = t.astimezone(timezone.utc).replace(tzinfo=None)
    return t.isoformat(timespec="seconds")


def presentation_of(value) -> str:
    """A presentation name as the site says it: 'colour', 'grey' or 'all' (BSDS300
    ``color``/``gray``; anything else, or nothing, is colour: the BSDS500 ground truth)."""
    v = str(value or "").strip().lower()
    if v in ("gray", "grey", "grayscale", "greyscale"):
        return "grey"
    return "all" if v == "all" else "colour"


def slugify(text: str, taken: set) -> str:
    """A file-name-safe, unique, deterministic slug of a user string."""
    s = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode()
    s = re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:40].strip("-") or "algorithm"
    slug, k = s, 2
    while slug in taken:
        slug, k = f"{s}-{k}", k + 1
    taken.add(slug)
    return slug


def load_run(run_dir, *, pred_dir=None) -> Run:
    """Read a run folder written by a benchmark command (``segbench boundary``,
    ``region``, ``all``, ``submit``, or any family the site ranks) through
    :class:`segbench.engine.RunFolder`: ``{family: Result}`` of the families the
    registry ranks, the submission's ``meta.json`` and the prediction folder.

    ``meta.json`` (name, about_html, kind, date) is optional; without it the name is
    the one the result records (``--name``, ``name.txt`` or the prediction folder),
    else the folder name. Predictions (for the per-image pictures) are in ``pred_dir``
    if given, else the folder :meth:`RunFolder.prediction_folder
    <segbench.engine.RunFolder.prediction_folder>` finds.

    The date (:attr:`Run.date`) is ``meta.json``'s (a submission's), else the
    ``provenance.created`` of the result; the presentation (the BSDS300 segmentations
    the run was scored against) is ``meta.json``'s ``presentation``, else the one the
    result records, else colour.
    """
    from ..engine import RunFolder

    d = Path(run_dir)
    if not d.is_dir():
        raise InputError("run folder not found", d)
    folder = RunFolder(d)
    meta = folder.meta()
    results, files = {}, {}
    for family, _entry in ranked_families(folder.families()):
        path = folder.result_file(family)
        if path is None:
            continue
        res = folder.read(family)
        if res.family == family:
            results[family], files[family] = res, path
    if not results:
        raise InputError(
            "no result of a family the site ranks (result_boundary.json, "
            "result_region.json, result_<family>.json): is this a run folder?",
            d,
        )

    def text(key):
        v = meta.get(key)
        return v.strip() if isinstance(v, str) else ""

    recorded = next((r.name for r in results.values() if r.name.strip()), "")
    created = next(
        (
            r.provenance["created"]
            for r in results.values()
            if isinstance(r.provenance.get("created"), str)
        ),
        "",
    )
    run = Run(
        d,
        text("name") or recorded.strip() or d.resolve().name,
        about_html=text("about_html"),
        kind=text("kind"),
        date=text("date") or created.strip(),
        results=results,
        files=files,
    )
    run.presentation = presentation_of(
        meta.get("presentation") or run.params.get("presentation")
    )
    for family in results:
        run.per_item(family)
    explicit = Path(pred_dir) if pred_dir is not None else None
    run.pred_dir = explicit if explicit is not None and explicit.is_dir() else None
    if run.pred_dir is None:
        run.pred_dir = folder.prediction_folder()
    if run.pred_dir is not None:
        try:
            # (folders=False: the run refused a folder of an image it scored)
            run.preds = list_files(run.pred_dir, PRED_EXTS, folders=False)
        except InputError:
            run.preds = {}
        _drop_unscored_predictions(run, d)
    return run


def _drop_unscored_predictions(run: Run, run_dir: Path) -> None:
    """Leave out of ``run.preds`` the files that are not those the run scored (its
    records' keys hold each prediction's SHA-256): a map changed since, or a folder
    found under the same name that is another algorithm's. Their pictures would show
    one map beside another's scores; a warning says how many. A run without records
    that match its result (an older run) keeps its files."""
    import warnings

    from ..engine import fingerprint

    keys: dict = next(
        (got.keys for f in run.results if (got := run.records(f)) is not None), {}
    )
    unscored = []
    for iid, path in run.preds.items():
        scored = ((keys.get(iid) or {}).get("inputs") or {}).get("pred")
        if isinstance(scored, list) and scored and fingerprint(path) not in scored:
            unscored.append(iid)
    for iid in unscored:
        del run.preds[iid]
    if unscored:
        warnings.warn(
            f"{run_dir}: {len(unscored)} prediction files in {run.pred_dir} are not "
            f"those the run scored (e.g. {unscored[0]}: changed since, or another "
            "algorithm's folder); their pictures are left out: rerun the benchmark "
            "to draw them",
            stacklevel=3,
        )


class SiteCoverageWarning(UserWarning):
    """A run given to the site covers none of the images it shows."""


def restrict_run(run: Run, ids) -> None:
    """Make the run's figures those of the images the site shows (``ids``).

    Where the run evaluated exactly images that are shown, its own figures stand.
    Where it evaluated others too (``--max-images``, or a split that differs), each
    family's figures and curves are the family's own summary of the run's records of
    the shown images it has (:meth:`RunRecords.view
    <segbench.report._site_records.RunRecords.view>`): a view, not a second
    evaluation. If the folder has no records that match its result, the figures stay
    the run's own and :class:`Scope` ``stale`` says so, for the pages to flag.
    """
    shown = list(ids)
    for family, res in run.results.items():
        rows = run.per_item(family)
        have = [i for i in shown if i in rows]
        sc = Scope(n_run=len(rows), n_scored=len(have))
        run.scope[family] = sc
        if len(have) == len(rows):  # every image the run has is shown
            continue
        if not have:  # none of the images shown: no figure
            import warnings

            warnings.warn(
                f"{run.name}: its {family} run covers none of the {len(shown)} images "
                f"the site shows (another split, or other images?): ranked without "
                "figures",
                SiteCoverageWarning,
                stacklevel=2,
            )
            sc.recomputed = True
            run.shown[family] = {k: math.nan for k in res.metrics}
            run.shown_curves[family] = {}
            continue
        recs = run.records(family)
        if recs is None:
            sc.stale = True
            continue
        view = recs.view(have, run.name)
        sc.recomputed = True
        run.shown[family] = {k: view.metrics.get(k, math.nan) for k in res.metrics}
        run.shown_curves[family] = {
            k: np.asarray(v).tolist() for k, v in (view.curves or {}).items()
        }


def merge_runs(runs: list[Run]) -> list[Run]:
    """One run per algorithm: runs of the same name and presentation whose families
    differ (two folders, as ``segbench boundary`` and ``segbench region`` write them)
    become one, as ``segbench all`` writes one folder.

    Runs are taken in the order given; the first of a pair keeps its place, folder and
    meta.json, and takes the other's family results (files, records, predictions where
    it has none). Runs that both hold a family, or differ in name or presentation,
    stay apart.
    """
    out: list[Run] = []
    for run in runs:
        mate = next(
            (
                r
                for r in out
                if r.name == run.name
                and r.presentation == run.presentation
                and not set(r.results) & set(run.results)
            ),
            None,
        )
        if mate is None:
            out.append(run)
            continue
        mate.results.update(run.results)
        mate.files.update(run.files)
        order = {f: n for n, f in enumerate(_registry_order())}
        mate.results = dict(
            sorted(mate.results.items(), key=lambda fr: order.get(fr[0], 0))
        )
        for family in run.results:
            mate._rows.pop(family, None)
            mate._records.pop(family, None)
        mate.about_html = mate.about_html or run.about_html
        mate.kind = mate.kind or run.kind
        if not mate.date or (
            run.date_key and mate.date_key and run.date_key < mate.date_key
        ):
            mate.date = run.date or mate.date  # benchmarked when first scored
        if mate.pred_dir is None and run.pred_dir is not None:
            mate.pred_dir, mate.preds = run.pred_dir, run.preds
        mate.also.append(run.dir)
    return out


def _registry_order() -> list[str]:

    return list(BENCHMARKS)


def downloads(run: Run) -> list[tuple[Path, str]]:
    """The run's files offered for download: ``(file, name)`` as
    :meth:`RunFolder.downloads <segbench.engine.RunFolder.downloads>` lists them (each
    family's result and per-item table, then its own files as the registry names
    them); of a merged run (:func:`merge_runs`) also those of its other folders,
    named ``<folder>-<file>`` where a name is taken."""
    from ..engine import RunFolder

    families = list(run.results)
    official = {f: entry_of(f).files for f in families}
    out, taken = [], set()
    for folder in (run.dir, *run.also):
        for p in RunFolder(folder).downloads(families, official):
            dst = p.name if p.name not in taken else f"{Path(folder).name}-{p.name}"
            taken.add(dst)
            out.append((p, dst))
    return out


def vs_next(ranked: list[Run], ids: list) -> list[tuple[str, float] | None]:
    """HOOK for the ranking's "vs. next" column: one cell per ranked run, comparing it
    with the run ranked just below it.

    ``ranked`` are the runs of one ranking (one presentation), best first, with their
    figures restricted to the images shown (``ids``, sorted; see :func:`restrict_run`
    and :attr:`Run.scope`). Return, per run, ``(text, sort_value)`` such as
    ``("p = 0.012", 0.012)``, or None for an empty cell (the last run has no next row).
    The column appears on the ranking only when some cell has text; it sorts by
    ``sort_value``.

    Each cell is the two-sided p-value of the paired bootstrap of the difference in
    the ranking's first metric (the headline of the first family the runs share that
    ``segbench compare`` takes: boundary ODS on a boundary site) between the run and
    the next one (:func:`segbench.comparison.compare`, 1000 draws, seed 0, on the
    images shown), Holm-corrected across the ranking's adjacent pairs; empty where
    either run has no records of it in its folder.
    """
    import warnings

    from ..comparison import SmallSampleWarning, compare, holm

    pvalues = []
    for a, b in zip(ranked, ranked[1:]):
        family = next(
            (
                f
                for f in a.results
                if f in b.results
                and (got := result_entry(f)) is not None  # ranked: never None
                and got[0].compare
            ),
            None,
        )
        try:
            if family is None:
                raise KeyError(family)
            head = entry_of(family).site_metrics()[0].key
            with warnings.catch_warnings():  # once per pair: the docs say it once
                warnings.simplefilter("ignore", SmallSampleWarning)
                res = compare(
                    a.files.get(family, a.dir),
                    b.files.get(family, b.dir),
                    ids=[str(i) for i in ids],
                    per_image=False,
                )
            pvalues.append(res["pairs"][0]["bootstrap"][head]["p"])
        except (InputError, KeyError):
            pvalues.append(math.nan)
    cells: list = []
    for p in holm(pvalues):
        cells.append(
            None if math.isnan(p) else (f"p = {p:.3f}" if p >= 0.001 else f"p = {p:.0e}", p)
        )
    return cells + [None] * (len(ranked) - len(cells))


#: The settings that make boundary figures comparable, with the values a run that does
#: not record one was scored with (the BSR protocol).
SETTINGS_DEFAULTS = {
    "protocol": "bsr",
    "nthresh": 99,
    "max_dist": 0.0075,
    "min_agreement": None,
    "max_dist_px": None,
    "resolution": "full",
    "alpha": 0.5,  # F's weight of precision: 0.5 is the harmonic F every table ranks
    "calibrated_on": None,  # ODS at a threshold chosen on another run, not the best
}


def settings_of(run: Run) -> tuple:
    """``((key, value), ...)`` of :data:`SETTINGS_DEFAULTS` as the run was scored:
    runs with other settings are ranked in separate tables."""
    params = run.params
    return tuple(
        (k, v if params.get(k) is None else params[k]) for k, v in SETTINGS_DEFAULTS.items()
    )


def settings_text(settings) -> str:
    """How a ranking table says its settings: ``'protocol bsr, 99 thresholds,
    max_dist 0.0075'`` (and ``'min_agreement 3'`` where set)."""
    d = {**SETTINGS_DEFAULTS, **dict(settings)}
    parts = [
        f"protocol {d['protocol']}",
        f"{d['nthresh']} thresholds",
        f"max_dist {d['max_dist']:g}"
        if isinstance(d["max_dist"], (int, float))
        else f"max_dist {d['max_dist']}",
    ]
    if d["max_dist_px"] is not None:  # it overrides the fraction
        parts[-1] = f"max_dist {d['max_dist_px']:g} px"
    if d["resolution"] != "full":
        parts.append(f"{d['resolution']} resolution")
    if d["min_agreement"] is not None:
        parts.append(f"min_agreement {d['min_agreement']}")
    if d["alpha"] != 0.5:
        parts.append(f"F weighted by alpha {d['alpha']:g}")
    if d["calibrated_on"] is not None:
        parts.append("threshold calibrated on another run")
    return ", ".join(parts)


def tell_apart(runs: list[Run]) -> None:
    """Give runs that share a name distinct names, by their folders: ``'hed (runs/a)'``
    and ``'hed (runs/b)'`` (:func:`segbench.comparison.distinct_names`)."""
    from ..comparison import distinct_names

    for run, name in zip(
        runs, distinct_names([r.name for r in runs], [r.dir for r in runs])
    ):
        run.name = name


def rank_runs(runs: list[Run]) -> list[Run]:
    """Best first: by the ranking metric of each family the runs have (the first of
    its site metrics; ascending where lower is better), in the registry's order
    (boundary ODS, then region covering ODS, ...), then by name (NaN last)."""

    families = ranked_families({f for r in runs for f in r.results})
    heads = [(f, e.site_metrics()[0]) for f, e in families]

    def key(r: Run):
        out: list = []
        for family, m in heads:
            v = r.metric(m.key, family)
            nan = math.isnan(v)
            out += [nan, 0.0 if nan else (-v if m.higher_is_better else v)]
        return (*out, r.name, r.slug)

    return sorted(runs, key=key)


def by_date(runs: list[Run]) -> list[Run]:
    """Oldest first, as the runs were benchmarked (:attr:`Run.date`); undated last,
    ties by name."""
    return sorted(runs, key=lambda r: (r.date_key == "", r.date_key, r.name, r.slug))
