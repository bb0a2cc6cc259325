"""``segbench.compare`` (this module, segbench.comparison): are the differences between runs
on the same images real?

For two or more runs of one family on the same images, from their per-image records:

- each run's headline scores with bootstrap intervals, all from the same draws;
- for each pair, the paired bootstrap of every score difference (interval, two-sided
  p-value; :func:`segbench.resampling.paired_differences`);
- for each pair, image-by-image tests on the family's per-image score (boundary: each
  image's best F): win counts, the sign test (``scipy.stats.binomtest``, ties left out)
  and the Wilcoxon signed-rank test (``scipy.stats.wilcoxon``, zero differences left
  out, as its default ``zero_method='wilcox'``);
- Holm's correction of each kind of p-value across the pairs.

Definitions follow ../shared/reference/reporting-statistics.md; docs/statistics.md
says the same for users. The paper behind the idea (Arbeláez et al. 2011, Fig. 18)
gives no script, so these are our tests, not a reproduction of theirs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import InputError
from .resampling import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    bootstrap_indices,
    check_settings,
    differences_of_draws,
    draws,
    percentile_interval,
    warn_if_few_resamples,
)
from .result import Result, json_ready

if TYPE_CHECKING:
    from .spec import Family

__all__ = [
    "Comparison",
    "compare",
    "distinct_names",
    "holm",
    "load_run",
    "write_comparison",
]


@dataclass
class ComparedRun:
    """A run as a comparison reads it: its result, records and family spec."""

    result: Result
    records: list
    family: Family
    path: str | None = None
    #: The record keys (what each record was computed from), when read from a folder.
    keys: list | None = None
    #: The result file read (for messages about its content).
    file: str | None = None
    #: Whether every image of the result file is here (not a :meth:`subset`).
    whole: bool = True

    @property
    def ids(self) -> list[str]:
        return [str(row["id"]) for row in self.result.per_item]

    def subset(self, ids) -> ComparedRun:
        """The run on these images only (InputError naming those it lacks)."""
        from dataclasses import replace

        index = {iid: k for k, iid in enumerate(self.ids)}
        missing = [i for i in ids if i not in index]
        if missing:
            raise InputError(
                f"the run {self.result.name!r} has no record of "
                f"{len(missing)} of the images: {', '.join(missing[:20])}",
                self.path,
            )
        keep = [index[i] for i in ids]
        result = replace(self.result, per_item=[self.result.per_item[k] for k in keep])
        return ComparedRun(
            result,
            [self.records[k] for k in keep],
            self.family,
            self.path,
            None if self.keys is None else [self.keys[k] for k in keep],
            self.file,
            self.whole and len(keep) == len(self.ids),
        )


class Comparison(dict):
    """What :func:`compare` returns: the comparison as plain data, with readers.

    A ``dict`` of the JSON shape ``compare.json`` holds (``family``, ``n_images``,
    ``settings``, ``item_score``, ``runs``, ``pairs``), so
    ``cmp["pairs"][0]["bootstrap"]["ODS"]["p_holm"]`` and ``json.dumps(cmp)`` work as
    they always did; the methods give tables and files.
    """

    #: The images compared, in order (set by :func:`compare`; not part of the JSON).
    ids: list[str] | None = None

    def __repr__(self) -> str:
        names = ", ".join(r["name"] for r in self["runs"])
        return f"<Comparison {self['family']}: {names} on {self['n_images']} images>"

    @property
    def family(self) -> str:
        return self["family"]

    @property
    def names(self) -> list[str]:
        """The runs' names, in the order given."""
        return [r["name"] for r in self["runs"]]

    def to_dict(self) -> dict:
        """The comparison as JSON-ready plain data (NaN as None): ``compare.json``."""

        return json_ready(dict(self))

    def to_json(self, path=None, *, indent: int = 1) -> str:
        """JSON text of :meth:`to_dict`; written atomically to ``path`` when given."""
        import json

        text = json.dumps(self.to_dict(), indent=indent, allow_nan=False)
        if path is not None:
            from .io import atomic_write_text

            atomic_write_text(path, text + "\n")
        return text

    def to_pandas(self, table: str = "pairs"):
        """A ``pandas.DataFrame`` (needs pandas) of one table of the comparison.

        Parameters
        ----------
        table : {'pairs', 'runs'}, default 'pairs'
            'pairs': one row per (pair, score), indexed by ``a``, ``b``, ``score``:
            the paired bootstrap's ``diff`` (a - b), ``lo``, ``hi``, ``p`` and
            ``p_holm``, then the pair's image-by-image tests (the same on every score
            row of the pair). 'runs': one row per (run, score), indexed by ``name`` and
            ``score``: ``value`` and its interval ``lo``, ``hi``.
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "Comparison.to_pandas needs pandas: pip install pandas"
            ) from None
        data = self.to_dict()
        nan = float("nan")

        def num(v):
            return nan if v is None else v

        if table == "runs":
            rows = [
                {
                    "name": r["name"],
                    "score": s,
                    "value": num(v),
                    "lo": num(r["intervals"].get(s, [None, None])[0]),
                    "hi": num(r["intervals"].get(s, [None, None])[1]),
                }
                for r in data["runs"]
                for s, v in r["metrics"].items()
            ]
            return pd.DataFrame(rows).set_index(["name", "score"])
        if table != "pairs":
            raise ValueError(f"table must be 'pairs' or 'runs', not {table!r}")
        rows = []
        for pair in data["pairs"]:
            tests = {k: num(v) for k, v in (pair.get("per_image") or {}).items()}
            for score, b in pair["bootstrap"].items():
                rows.append(
                    {
                        "a": pair["a"],
                        "b": pair["b"],
                        "score": score,
                        **{k: num(b.get(k)) for k in ("diff", "lo", "hi", "p", "p_holm")},
                        **tests,
                    }
                )
        return pd.DataFrame(rows).set_index(["a", "b", "score"])

    def write(self, out, runs) -> list[Path]:
        """:func:`write_comparison` of this comparison and the ``runs`` compared."""
        return write_comparison(out, self, runs)


def _spec(result: Result, where):
    """The spec that resamples ``result`` (the registry's benchmarks marked
    ``compare``)."""
    from .families import comparable, comparable_spec

    try:
        return comparable_spec(result.family)
    except KeyError:
        raise InputError(
            f"runs of the {result.family!r} family cannot be compared (one "
            f"of {', '.join(comparable())})",
            where,
        ) from None


def load_run(run) -> ComparedRun:
    """A run folder (its first family's result), a result file, or a :class:`Result`
    computed in this process, with the per-image records it was summarized from.

    The records are read from the folder's record store and checked against the
    digest the result recorded, so records changed by a later run are never mixed in.
    """
    if isinstance(run, ComparedRun):
        return run
    if isinstance(run, Result):
        if run.records is None:
            raise InputError(
                f"the result {run.name!r} carries no per-image records to resample "
                f"({run.family} results are compared from their run folders, and a "
                "result read from JSON has none): pass its run folder instead"
            )
        return ComparedRun(run, list(run.records), _spec(run, None))
    from .engine import RunFolder

    folder = RunFolder(run)
    result = folder.read()
    family = _spec(result, run)
    keys, records = folder.records(family, result)
    return ComparedRun(result, records, family, str(run), keys, str(folder.result_file()))


#: Below this many images a paired bootstrap over images is warned of: few distinct
#: draws, so its intervals are too narrow and its p-values too small (with every image
#: favouring one run, p sits at its floor 2 / (B + 1) whatever the number of images).
MIN_BOOTSTRAP_IMAGES = 10


class SmallSampleWarning(UserWarning):
    """A comparison on too few images for the bootstrap to mean much."""


def holm(pvalues) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given (NaN stays NaN).

    The k-th smallest of m p-values is multiplied by (m - k + 1), made monotone
    (never below the previous adjusted value) and capped at 1.
    """
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    running = 0.0
    for rank, i in enumerate(ok[np.argsort(p[ok], kind="stable")]):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out.tolist()


def _params(run: ComparedRun) -> dict:
    given = run.result.provenance.get("params", {})
    try:
        return {**run.family.resolve(given), **run.family.resolve_summary(given)}
    except (TypeError, ValueError) as exc:  # a hand-edited result.json
        raise InputError(
            f"its recorded parameters do not validate ({exc})", run.path
        ) from None


#: Parameters in which two runs of one family may differ and still score the same task:
#: how the predictions are read or thinned (``nms``, ``labels``), extra outputs
#: (``stutz``), a calibration of the run's own.
_NOT_SETTINGS = {
    "nms",
    "labels",
    "stutz",
    "calibrated_threshold",
    "calibrated_on",
    "calibrated_name",
}


def _where(run: ComparedRun) -> str:
    return run.path or repr(run.result.name)


def _ground_truth_named(run: ComparedRun) -> tuple:
    """(ground-truth folders resolved, or None for a streamed result; split;
    presentation) as a result in memory records them."""
    p = run.result.provenance.get("params", {})
    gt_dir = p.get("gt_dir")
    folders = gt_dir if isinstance(gt_dir, list) else [gt_dir]
    return (
        None if gt_dir is None else tuple(str(Path(g).resolve()) for g in folders),
        p.get("split"),
        p.get("presentation"),
    )


def _check_comparable(base: ComparedRun, other: ComparedRun) -> None:
    """Refuse runs scored against other ground truth or under other settings
    (protocol, nthresh, max_dist, min_agreement, ...): their differences are not the
    algorithms'."""
    if base.keys is not None and other.keys is not None:  # the records name the files
        gt = [
            iid
            for iid, a, b in zip(base.ids, base.keys, other.keys)
            if a.get("inputs", {}).get("gt") != b.get("inputs", {}).get("gt")
        ]
        if gt:
            raise InputError(
                f"runs scored against other ground truth cannot be compared: "
                f"{_where(base)} and {_where(other)} differ on {len(gt)} of "
                f"{len(base.ids)} images ({', '.join(gt[:5])}): other files, "
                "split or presentation"
            )
    else:  # Results in memory: the ground truth they name, if any
        sa, sb = (_ground_truth_named(r) for r in (base, other))
        if sa[0] is None or sb[0] is None:  # a streamed result names no files
            import warnings

            warnings.warn(
                f"cannot check that {_where(base)} and {_where(other)} were scored "
                "against the same ground truth: a result streamed in memory records "
                "no ground-truth files (the images' ids do match)",
                stacklevel=3,
            )
        elif sa != sb:
            raise InputError(
                f"runs scored against other ground truth cannot be compared: "
                f"{_where(base)} and {_where(other)} name other ground-truth folders, "
                f"split or presentation ({sa} vs {sb})"
            )
    a, b = _params(base), _params(other)
    differ = [
        f"{k} {a.get(k)!r} vs {b.get(k)!r}"
        for k in sorted(set(a) | set(b))
        if k not in _NOT_SETTINGS and a.get(k) != b.get(k)
    ]
    if differ:
        raise InputError(
            f"runs scored with other settings cannot be compared: "
            f"{_where(base)} vs {_where(other)}: {'; '.join(differ)}"
        )


def _statistic(run: ComparedRun):
    # a benchmark marked compare resamples (families.Benchmark.compare): _spec gave it
    assert run.family.resampler is not None
    return run.family.resampler(run.ids, run.records, _params(run), {})


def _summary(run: ComparedRun) -> Result:
    """The run's result recomputed from its records (checked against the digest by
    :func:`load_run`): per-image scores, metrics and curves on exactly the images
    compared, never the result file's own rows, which nothing checks. Its warnings
    (images without ground truth, ...) were given when the run was scored."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summary = run.family.summarize(list(run.ids), run.records, _params(run), {})
    _check_file_rows(run, summary)
    return summary


def _check_file_rows(run: ComparedRun, summary: Result) -> None:
    """InputError naming the result file when its per-image scores (or, on all its
    images, its curves) are not those of its records: a file edited by hand, whose
    figures nothing else checks."""
    if run.file is None:
        return
    col = run.family.item_score

    def same(a, b) -> bool:
        try:
            x = np.asarray(a, np.float64)
            y = np.asarray(b, np.float64)
        except (TypeError, ValueError):
            return False
        return x.shape == y.shape and bool(
            np.all((x == y) | (np.isnan(x) & np.isnan(y)) | np.isclose(x, y, rtol=1e-9))
        )

    def score(row):
        v = row.get(col)
        return math.nan if v is None else v

    mine = {str(r["id"]): score(r) for r in run.result.per_item}
    rows_ok = all(same(mine.get(str(r["id"])), score(r)) for r in summary.per_item)
    curves = run.result.curves or {}
    curves_ok = not run.whole or all(
        same(curves[k], v) for k, v in (summary.curves or {}).items() if k in curves
    )
    if not (rows_ok and curves_ok):
        raise InputError(
            "not a segbench result as written: its "
            + ("per-image scores" if not rows_ok else "curves")
            + " are not those of the records it was made from (edited by hand?)",
            run.file,
        )


def _item_scores(run: ComparedRun) -> np.ndarray:
    col = run.family.item_score
    rows = _summary(run).per_item
    try:
        return np.array([float(row.get(col, math.nan)) for row in rows])
    except (TypeError, ValueError):  # a hand-edited result.json
        raise InputError(
            f"not a segbench result: a per_item {col} is not a number", run.file
        ) from None


def _image_tests(a: np.ndarray, b: np.ndarray) -> dict:
    from scipy import stats

    ok = np.isfinite(a) & np.isfinite(b)
    d = a[ok] - b[ok]
    wins_a, wins_b = int((d > 0).sum()), int((d < 0).sum())
    ties = int(d.size - wins_a - wins_b)
    sign_p = (
        float(stats.binomtest(wins_a, wins_a + wins_b, 0.5).pvalue)
        if wins_a + wins_b
        else 1.0
    )
    if wins_a + wins_b:
        w = stats.wilcoxon(a[ok], b[ok])
        wil_stat, wil_p = float(w.statistic), float(w.pvalue)
    else:
        wil_stat, wil_p = math.nan, 1.0
    return {
        "n_images": int(ok.sum()),
        "wins_a": wins_a,
        "wins_b": wins_b,
        "ties": ties,
        "sign_p": sign_p,
        "wilcoxon_statistic": wil_stat,
        "wilcoxon_p": wil_p,
    }


def _first_ids(ids, shown: int = 20) -> str:
    return ", ".join(ids[:shown]) + (
        f" ... ({len(ids)} in all)" if len(ids) > shown else ""
    )


def distinct_names(names, folders) -> list[str]:
    """``names`` made distinct by their folders: runs that share a name become
    ``'hed (a/hed)'`` and ``'hed (b/hed)'``, with as many trailing folder names as it
    takes (a name without a folder, or still shared, gets ``#k``); the site and
    ``compare`` label runs this way."""
    names, out = list(names), list(names)
    for name in set(names):
        same = [k for k, n in enumerate(names) if n == name]
        if len(same) < 2:
            continue
        parts = {
            k: Path(folders[k]).resolve().parts for k in same if folders[k] is not None
        }
        depth = 1
        while depth < max((len(p) for p in parts.values()), default=1) and len(
            {p[-depth:] for p in parts.values()}
        ) < len(parts):
            depth += 1
        for k in same:
            if k in parts:
                # Path.parts starts with the root "/": join it as a path, not as a part
                out[k] = f"{name} ({Path(*parts[k][-depth:])})"
    seen: set = set()
    for k, n in enumerate(out):
        while out[k] in seen:
            out[k] = f"{n}#{k + 1}"
            n = out[k]
        seen.add(out[k])
    return out


def _names(runs: list[ComparedRun]) -> list[str]:
    names, folders = [], []
    for k, r in enumerate(runs):
        names.append(r.result.name or (Path(r.path).name if r.path else f"run{k + 1}"))
        folders.append(
            None
            if r.path is None
            else (r.path if Path(r.path).is_dir() else str(Path(r.path).parent))
        )
    return distinct_names(names, folders)


def compare(
    *runs,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
    ids=None,
    per_image: bool = True,
) -> Comparison:
    """Compare two or more runs of one family on the same images.

    Parameters
    ----------
    *runs : path or Result
        Run folders (their first family's result), result files, or Results returned by
        a benchmark in this process (they carry their records).
    resamples, level, seed
        Bootstrap settings: B draws of the images (at least 2; below 200 a
        :class:`~segbench.resampling.FewResamplesWarning` says the intervals are
        coarse), the interval coverage, the seed. Every run and pair uses the same
        draws.
    ids : sequence of str, optional
        Compare on these images only (every run must have them).
    per_image : bool, default True
        Also run the image-by-image tests (sign test, Wilcoxon); False leaves the
        pairs' ``per_image`` out (and scipy.stats unimported).

    Returns
    -------
    Comparison
        A dict of plain data (:meth:`Comparison.to_pandas` gives the pairs
        or the runs as a table, :meth:`Comparison.to_json` ``compare.json``):
        ``family``, ``n_images``, ``settings``, ``item_score`` (the per-image column the
        image-by-image tests compare), ``runs`` (per run: ``name``, ``path``,
        ``metrics`` and ``intervals`` of every resampled score) and ``pairs`` (per pair
        ``a``, ``b``: ``bootstrap`` {score: diff, lo, hi, p, p_holm} and ``per_image``
        {n_images, wins_a, wins_b, ties, sign_p, sign_p_holm, wilcoxon_statistic,
        wilcoxon_p, wilcoxon_p_holm}).

    Raises
    ------
    InputError
        Fewer than 2 resamples, fewer than two runs, runs of different families, runs
        on different images (the ids that differ are named), against other ground
        truth (other files, split or presentation: from the record keys), or under
        other settings (the protocol, ``nthresh``, ``max_dist``, ``min_agreement``,
        ``alpha``, ...: every recorded parameter but how predictions are read, each one
        that differs named).
    """

    check_settings(resamples, level)
    loaded = [load_run(r) for r in runs]
    if ids is not None:  # a list, "a,b" or a file of ids, as everywhere
        from .datasets import parse_ids

        wanted = parse_ids(ids) or []
        loaded = [r.subset(sorted(wanted)) for r in loaded]
    if len(loaded) < 2:
        raise InputError("a comparison needs at least two runs")
    seen: dict = {}
    for r in loaded:  # a folder given twice: a pair of a run with itself, p = 1
        if r.file is not None:
            first = seen.setdefault(str(Path(r.file).resolve()), r)
            if first is not r:
                raise InputError(
                    f"the run {r.path} is given twice (as {first.path} and {r.path}): "
                    "compare different runs"
                )
    families = {r.result.family for r in loaded}
    if len(families) > 1:
        raise InputError(
            f"runs of different families cannot be compared: {', '.join(sorted(families))}"
        )
    base = loaded[0]
    for other in loaded[1:]:
        if other.ids != base.ids:
            only_a = sorted(set(base.ids) - set(other.ids))
            only_b = sorted(set(other.ids) - set(base.ids))
            sides = [
                f"{len(only)} only in {run.path or run.result.name} ({_first_ids(only)})"
                for only, run in ((only_a, base), (only_b, other))
                if only
            ]
            raise InputError(
                "runs on different images cannot be compared: " + "; ".join(sides)
            )
    for other in loaded[1:]:
        _check_comparable(base, other)
    names = _names(loaded)
    n = len(base.ids)
    settings = {"resamples": int(resamples), "level": float(level), "seed": int(seed)}
    stats = [_statistic(r) for r in loaded]
    ones = np.ones((1, n))
    observed = [{k: float(v[0]) for k, v in s(ones).items()} for s in stats]
    warn_if_few_resamples(int(resamples))  # the runs checked: the draws are made
    idx = bootstrap_indices(n, resamples, seed)
    drawn = [draws(s, idx, n) for s in stats]  # once per run: intervals and pairs
    out_runs = []
    nan = float("nan")
    if n < MIN_BOOTSTRAP_IMAGES:
        import warnings

        warnings.warn(
            f"{n} image{'s' if n > 1 else ''}: "
            + (
                "one image gives every bootstrap draw the same scores, so there is "
                "no interval and no p-value (NaN)"
                if n == 1
                else f"below {MIN_BOOTSTRAP_IMAGES} images the bootstrap's intervals "
                "are too narrow and its p-values too small (few distinct draws); the "
                "sign test is exact"
            ),
            SmallSampleWarning,
            stacklevel=2,
        )
    for name, run, obs, d in zip(names, loaded, observed, drawn):
        bounds = {
            k: [nan, nan] if n == 1 else list(percentile_interval(v, level))
            for k, v in d.items()
        }
        out_runs.append(
            {"name": name, "path": run.path, "metrics": obs, "intervals": bounds}
        )
    item = [_item_scores(r) for r in loaded]
    pairs = []
    for i in range(len(loaded)):
        for j in range(i + 1, len(loaded)):
            boot = differences_of_draws(drawn[i], drawn[j], observed[i], observed[j], level)
            if n == 1:  # every draw is the one image: nothing resampled
                for v in boot.values():
                    v.update(lo=nan, hi=nan, p=nan)
            pair: dict[str, Any] = {"a": names[i], "b": names[j], "bootstrap": boot}
            if per_image:
                pair["per_image"] = _image_tests(item[i], item[j])
            pairs.append(pair)
    for score in pairs[0]["bootstrap"]:
        adjusted = holm([p["bootstrap"][score]["p"] for p in pairs])
        for p, q in zip(pairs, adjusted):
            p["bootstrap"][score]["p_holm"] = q
    for test in ("sign_p", "wilcoxon_p") if per_image else ():
        adjusted = holm([p["per_image"][test] for p in pairs])
        for p, q in zip(pairs, adjusted):
            p["per_image"][f"{test}_holm"] = q
    result = Comparison(
        {
            "family": base.result.family,
            "n_images": n,
            "settings": settings,
            "item_score": base.family.item_score,
            "runs": out_runs,
            "pairs": pairs,
        }
    )
    result.ids = list(base.ids)  # what write() subsets the runs' files to
    return result


def per_image_table(runs, names) -> tuple[list[str], list[list]]:
    """(header, rows) of every run's numeric per-image columns side by side, one row
    per image: ``id``, then ``<run>:<column>``."""
    loaded = [load_run(r) for r in runs]
    per_item = [_summary(run).per_item for run in loaded]
    header, columns = ["id"], []
    for name, rows_of_run in zip(names, per_item):
        cols = (
            [
                k
                for k, v in rows_of_run[0].items()
                if k != "id" and isinstance(v, (int, float))
            ]
            if rows_of_run
            else []
        )
        header += [f"{name}:{c}" for c in cols]
        columns.append(cols)
    rows = []
    for k, iid in enumerate(loaded[0].ids):
        row = [iid]
        for rows_of_run, cols in zip(per_item, columns):
            row += [rows_of_run[k].get(c) for c in cols]
        rows.append(row)
    return header, rows


def claim_comparison_folder(out) -> Path:
    """``out`` as a folder of ``segbench compare`` (new, empty or made by it before),
    or InputError before anything is computed or written (:func:`segbench.io.claim_folder`)."""
    from .io import claim_folder

    return claim_folder(
        out,
        ".segbench-compare",
        "segbench compare",
        "written by segbench compare; its files are replaced when it runs again\n",
    )


def write_comparison(out, comparison: dict, runs) -> list[Path]:
    """Write ``compare.json``, ``per_item.csv`` (all runs side by side) and, for
    boundary runs, ``pr_curve.png`` (every run's curve and ODS point, iso-F curves, the
    human point when a run knows it) to the folder ``out``: a new or empty folder, or
    one this function made before; any other is refused
    (:func:`segbench.io.claim_folder`). Returns the paths."""
    import csv
    import io
    import json

    from .io import atomic_write_text

    loaded = [load_run(r) for r in runs]
    # the images compared (compare(ids=...) on a subset): the files hold those only
    ids = getattr(comparison, "ids", None)
    if ids is not None:
        loaded = [r.subset(ids) for r in loaded]
    names = [r["name"] for r in comparison["runs"]]
    if len(loaded) != len(names) or any(
        len(r.ids) != comparison["n_images"] for r in loaded
    ):
        raise InputError(
            f"the comparison is of {len(names)} runs on {comparison['n_images']} "
            "images; pass the runs it compared (and compare's ids)"
        )
    out = claim_comparison_folder(out)
    written = [out / "compare.json", out / "per_item.csv"]
    atomic_write_text(
        written[0],
        json.dumps(json_ready(dict(comparison)), indent=1, allow_nan=False) + "\n",
    )
    header, rows = per_image_table(loaded, names)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for row in json_ready(rows):
        w.writerow(
            ["" if v is None else (repr(v) if isinstance(v, float) else v) for v in row]
        )
    atomic_write_text(written[1], buf.getvalue())
    if comparison["family"] == "boundary":
        from .boundary import plot_pr

        curves, human = [], None
        for name, run in zip(names, loaded):
            summary = _summary(run)  # the images compared, from the checked records
            m, c = summary.metrics, summary.curves
            try:
                r = np.asarray(c["recall"], np.float64)
                p = np.asarray(c["precision"], np.float64)
                ods = tuple(float(m[k]) for k in ("ODS_recall", "ODS_precision", "ODS"))
                if r.ndim != 1 or r.shape != p.shape:
                    raise ValueError
            except (KeyError, TypeError, ValueError):  # a hand-edited result.json
                raise InputError(
                    "not a segbench result: no boundary PR curve and ODS point to plot",
                    run.file,
                ) from None
            curves.append({"name": name, "recall": r, "precision": p, "ods": ods})
            if human is None and "human_F" in m:
                human = (m["human_recall"], m["human_precision"], m["human_F"])
        written.append(out / "pr_curve.png")
        plot_pr(curves, written[-1], human=human)
    return written
