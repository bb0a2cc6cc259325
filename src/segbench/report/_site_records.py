"""What the site takes from records: the runs' per-image records, views of them, and
the human families run through the engine.

The site scores nothing itself. A view of a run (the images the site shows) is the
family's own summary over that subset of the run's records
(:func:`segbench.engine.summarize_records`); the counts at a run's ODS threshold are
its records' row at that threshold; the human figures are the records of the
``HUMAN_BOUNDARY`` and ``HUMAN_REGION`` families, run by :func:`segbench.engine.run`
into a cache folder of the site, so a rebuild reuses them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..families import result_entry
from ..result import Result
from ..spec import Family

#: The site's cache, kept when the site is rebuilt (the human families' records).
CACHE_DIR = ".segbench-cache"


@dataclass
class RunRecords:
    """One family's records of a run, as its result was summarized from them.

    Attributes
    ----------
    family : segbench.spec.Family
    params : dict
        The record and summary parameters the result records, resolved.
    records : dict
        Image id -> record, for every image of the result's per-item rows.
    keys : dict
        Image id -> the record's key (what it was computed from: the input files'
        SHA-256 digests among it).
    """

    family: Family
    params: dict
    records: dict
    keys: dict = field(default_factory=dict)

    def view(self, ids, name: str):
        """The family's :class:`~segbench.result.Result` on ``ids`` (a subset of the
        run's images, in order): its own summary over those records."""
        from ..engine import summarize_records

        return summarize_records(
            self.family,
            list(ids),
            [self.records[i] for i in ids],
            self.params,
            {},
            name=name,
        )


def read_records(result_path, result=None) -> RunRecords:
    """The records a run's result was summarized from, checked against its digest.

    Parameters
    ----------
    result_path : path
        A result file (``result.json``, ``result_<family>.json``); the records are in
        the record store of its folder.
    result : segbench.Result, optional
        The file's result, when already read.

    Raises
    ------
    InputError
        No family of the registry makes results of its family, no digest recorded
        (an older segbench, a run without ``--out``), a record missing or damaged,
        or records that are not those the result was made from (a later run with
        other inputs): the site cannot take a view of that run.

    Notes
    -----
    The check is the run folder's (:meth:`segbench.engine.RunFolder.records`), the
    one ``segbench compare`` makes.
    """
    from ..engine import RunFolder

    path = Path(result_path)
    if result is None:
        result = Result.from_json(path)
    got = result_entry(result.family)
    if got is None:
        raise InputError(f"no records of a {result.family!r} result", path)
    family = got[1]
    given = (result.provenance or {}).get("params") or {}
    try:
        params = {**family.resolve(given), **family.resolve_summary(given)}
    except (TypeError, ValueError) as exc:
        raise InputError(f"its recorded parameters do not validate ({exc})", path) from None
    keys, found = RunFolder(path).records(family, result)
    ids = [str(row["id"]) for row in result.per_item]
    return RunRecords(family, params, dict(zip(ids, found)), dict(zip(ids, keys)))


def counts_at(record, threshold: float) -> list[int] | None:
    """cntR, sumR, cntP, sumP of a boundary record at the threshold nearest
    ``threshold`` (the dataset's ODS threshold lies between two of the record's), or
    None for NaN."""
    if threshold != threshold:
        return None
    k = int(np.argmin(np.abs(np.asarray(record.thresholds, np.float64) - threshold)))
    return [
        int(record.cnt_r[k]),
        int(record.sum_r[k]),
        int(record.cnt_p[k]),
        int(record.sum_p[k]),
    ]


@dataclass
class HumanGroup:
    """The human families' results of one presentation group.

    Attributes
    ----------
    boundary, region : Result
        ``human_boundary`` and ``human_region`` over the images with two or more
        segmentations of the group (their ``records`` in the order of ``ids``);
        ``region`` is None for ground truth of edge maps (no regions to compare).
    ids : list of str
    """

    boundary: Result
    region: Result | None
    ids: list

    def __post_init__(self):
        self._index = {i: n for n, i in enumerate(self.ids)}

    def rows(self, iid: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(K, 4) boundary counts and (K, 6) region table of the group's segmentations
        of ``iid``, each against the others; None where the image was not scored."""
        k = self._index.get(iid)
        if k is None:
            return None
        # results of engine.run in this process: they carry their records
        assert self.boundary.records is not None
        counts = np.asarray(self.boundary.records[k].counts, np.int64)
        if self.region is None:
            return counts, np.full((counts.shape[0], 6), np.nan)
        assert self.region.records is not None
        return counts, np.asarray(self.region.records[k], np.float64).reshape(-1, 6)


def _seed(cache: Path, seeds, specs) -> None:
    """Copy the human families' records of ``seeds`` (``segbench human`` run folders)
    into ``cache`` where it has none of that image: the engine then reuses each one
    whose key matches and computes the rest (a record of other ground truth or other
    parameters has another key). Nothing in a seed folder is written."""
    from ..engine import RECORDS_DIR
    from ..io import copy_file

    for seed in seeds or ():
        for spec in specs:
            src = Path(seed) / RECORDS_DIR / spec.name
            if not src.is_dir():
                continue
            dst = cache / RECORDS_DIR / spec.name
            dst.mkdir(parents=True, exist_ok=True)
            for rec in sorted(src.glob("*.json")):
                if rec.is_file() and not rec.is_symlink() and not (dst / rec.name).exists():
                    copy_file(rec, dst / rec.name)


def human_groups(
    dataset, ids_of: dict, cache: Path, *, workers: int = 1, progress: bool = True, seeds=()
) -> dict:
    """Run ``HUMAN_BOUNDARY`` and ``HUMAN_REGION`` per presentation group.

    Parameters
    ----------
    dataset : SiteDataset
    ids_of : dict
        Group ('colour', 'grey', 'all') -> the image ids with two or more of its
        segmentations.
    cache : path
        Folder of the runs' records (``<cache>/human-<group>``): a rebuild reuses them.
    seeds : sequence of paths
        ``segbench human`` run folders whose records are taken into the cache first
        (:func:`_seed`): the engine reuses those whose keys match.

    Returns
    -------
    dict
        Group -> :class:`HumanGroup` (groups without images are left out).
    """
    import logging

    from ..api import family_spec
    from ..engine import run

    specs = [family_spec("HUMAN_BOUNDARY"), family_spec("HUMAN_REGION")]
    first = next((dataset.item(i) for ids in ids_of.values() for i in ids), None)
    if first is not None and not all(
        getattr(a, "has_segmentation", True) for a in first.annotations
    ):
        specs = specs[:1]  # edge maps: boundaries only, no regions
    out = {}
    log = logging.getLogger("segbench")
    level = log.level
    log.setLevel(max(level, logging.WARNING))  # the site's own cache reused: no news
    try:
        for group, ids in ids_of.items():
            if not ids:
                continue
            view = dataset.presentation(group).subset(ids)
            _seed(Path(cache) / f"human-{group}", seeds, specs)
            b, *r = run(
                specs,
                view,
                out=Path(cache) / f"human-{group}",
                name="human",
                workers=workers,
                progress=progress,
                save_results=False,
            )
            out[group] = HumanGroup(b, r[0] if r else None, list(ids))
    finally:
        log.setLevel(level)
    return out
