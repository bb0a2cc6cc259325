"""The benchmark site: a static HTML site of a dataset and the runs of algorithms on it.

What the original BSDS pages offered, generated from a lab's own results:

- ``index.html``: the ranking by algorithm (boundary ODS/OIS/AP/R50 and the region
  measures where present, recorded intervals under them, the date benchmarked, the
  human row on top), one per presentation of the BSDS300 (colour, greyscale), and a PR
  plot per ranking overlaying every algorithm with iso-F curves and the human point.
- ``algorithms/``: the algorithms in the order they were benchmarked; per algorithm its
  PR curve, its per-image scores (sortable), its name, sanitized about text, and its
  result files for download (``downloads/<slug>/``, copied byte for byte).
- ``images/``: every image ordered by the best F any algorithm reached on it (hard
  first in ``index.html``, easy first in ``easy.html``); per image the photo, every
  human segmentation (boundaries and a coloured region map) and each algorithm's
  output as given (a soft map in grey levels) and, for a soft map, its thinned
  boundaries at its ODS threshold (and, on request, a true-positive/false-positive/miss
  overlay there).
- ``subjects/``: every segmentation a person made, each with its score against the
  other segmentations of the same image and presentation, where subjects are known.
- ``human.html``: each annotator scored against the others.

The site renders records; it scores nothing. Every figure is that of the images the
site shows: a run that evaluated more is summarized by its family on the records of
those images, or flagged where its folder has none
(:func:`segbench.report._site_runs.restrict_run`); the per-image counts at a run's
ODS threshold are its records' row there; the human figures are the records of the
``HUMAN_BOUNDARY`` and ``HUMAN_REGION`` families, run by the engine into
``.segbench-cache/`` (kept when the site is rebuilt, so a rebuild reuses them). A
boundary run and a region run of one algorithm are one row
(:func:`segbench.report._site_runs.merge_runs`). The true-positive/false-positive/miss
overlays are drawn on request only (``overlays=True``): drawing one runs the matcher
on the image. Links are relative, so the pages
work from the file system and from :func:`serve`, and at a phone's width. Every user
string is escaped (Jinja2 autoescape); ``about_html`` is reduced to an allow-list. The
output is deterministic: the same inputs give the same bytes.
"""

from __future__ import annotations

import errno
import json
import math
import os
import shutil
import sys
from importlib import resources
from pathlib import Path

import numpy as np

from .._version import __version__
from ..boundary import DEFAULT_MAX_DIST, plot_pr, summarize_human
from ..datasets.bsds import valid_iid
from ..errors import CLIENT_GONE, InputError, first_names
from ..io import atomic_write_bytes, claim_folder, copy_file, hold_lock, release_lock
from ._site_data import open_dataset
from ._site_html import environment, sanitize_html
from ._site_images import (
    ImageTask,
    RunSpec,
    group_members,
    presentation_group,
    render_image,
)
from ._site_records import CACHE_DIR, counts_at, human_groups
from ._site_runs import (
    PRESENTATIONS,
    SETTINGS_DEFAULTS,
    Column,
    Run,
    by_date,
    columns_of,
    date_key,
    downloads,
    entry_of,
    load_run,
    merge_runs,
    num,
    rank_runs,
    restrict_run,
    settings_of,
    settings_text,
    slugify,
    tell_apart,
    vs_next,
)

__all__ = ["build_site", "make_server", "serve"]

MARKER = ".segbench-site"


def _ratio(a, b) -> float:
    return a / b if b > 0 else math.nan


def _prf(c) -> tuple[float, float, float]:
    """(recall, precision, F) of cntR, sumR, cntP, sumP (:func:`summarize_human`), for
    display: NaN (an em dash) where 0/0, not the 0 the benchmark pools."""
    r, p, f = summarize_human(c)
    r = r if c[1] > 0 else math.nan
    p = p if c[3] > 0 else math.nan
    return r, p, f if not (math.isnan(r) or math.isnan(p)) else math.nan


def _key(text: str, taken: set) -> str:
    """A file-name-safe unique key of an image or subject id (kept as is when safe)."""
    if valid_iid(text) and text.lower() not in taken:
        taken.add(text.lower())
        return text
    return slugify(text, taken)


#: What a rebuild keeps: the marker, the cache of records, and the pictures (each
#: folder of img/ is redrawn where its stamp says its inputs changed, see
#: :func:`segbench.report._site_images.render_image`).
#: The file a build holds locked (the name of a run folder's lock, engine.RUN_LOCK).
LOCK = ".segbench-lock"
_KEPT = (MARKER, CACHE_DIR, "img", LOCK)
#: Every name a build writes at the top of the site folder. Anything else there is the
#: user's: a rebuild leaves it alone and never writes to it.
GENERATED = (
    "index.html",
    "human.html",
    "algorithms",
    "images",
    "subjects",
    "plots",
    "static",
    "downloads",
    "consistency",
    "img",
)
#: The files the last build wrote (relative paths), in the cache folder: a rebuild
#: tells the user's files inside the site's folders from its own by it.
_WRITTEN = "site-files.json"


def _written_before(out: Path) -> set[str] | None:
    """The files the last build wrote; None when it is not known: a site of an earlier
    version (no list), or a build that was interrupted (its list was not finished, and
    the files it wrote are the site's)."""
    try:
        data = json.loads((out / CACHE_DIR / _WRITTEN).read_text(encoding="utf-8"))
        return set(data["files"]) if data.get("complete") else None
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _site_files(out: Path) -> list[str]:
    """The files under the generated names of ``out``, relative, sorted."""
    found = []
    for name in GENERATED:
        top = out / name
        if top.is_file() or top.is_symlink():
            found.append(name)
        elif top.is_dir():
            found += [
                p.relative_to(out).as_posix()
                for p in top.rglob("*")
                if p.is_file() or p.is_symlink()
            ]
    return sorted(found)


def _remember_written(out: Path, complete: bool = True) -> None:
    """List the site's files (``complete``: at the end of a build), or mark a build as
    under way (its list unknown until it ends: an interrupted build leaves that mark)."""
    (out / CACHE_DIR).mkdir(exist_ok=True)
    files = _site_files(out) if complete else []
    atomic_write_bytes(
        out / CACHE_DIR / _WRITTEN,
        json.dumps({"complete": complete, "files": files}, indent=0).encode(),
    )


def _refuse_inputs_inside(out: Path, folders) -> None:
    """No run or prediction folder may lie in the site folder (as ``submit`` refuses
    an output inside its submission): a rebuild could replace it."""
    site = out.resolve()
    for folder in folders:
        if Path(folder).resolve() == site:
            raise InputError(
                f"the site would be built into {folder}, one of its own inputs (a run or "
                "prediction folder): give the site another --out",
                out,
            )
        if Path(folder).resolve().is_relative_to(site):
            raise InputError(
                f"{folder} is inside the site folder, where a rebuild replaces what "
                "it holds: move it out of the site folder",
                out,
            )


def _prepare_out(out: Path) -> None:
    """Create ``out``, or empty what a site we built wrote there (but for
    :data:`_KEPT`); refuse any other folder (:func:`segbench.io.claim_folder`).

    Names at the top that a build never writes (:data:`GENERATED`) are the user's and
    stay. A file inside the site's own folders that the last build did not write is
    the user's too: the rebuild is refused, naming it, before anything is removed (a
    site of an earlier version, which kept no list, is emptied as before).
    """

    claim_folder(
        out,
        MARKER,
        "segbench site",
        "written by segbench site; rebuilt each "
        "time (records in .segbench-cache/ and unchanged pictures in img/ are "
        "kept; files and folders of other names are yours and left alone)\n",
        what="segbench site",
    )
    before = _written_before(out)
    if before is not None:
        foreign = [f for f in _site_files(out) if f not in before]
        if foreign:
            raise InputError(
                f"{len(foreign)} file(s) in the site's own folders were not written by "
                f"segbench site: {first_names(foreign)}; a rebuild would replace them, "
                "so move them out (files of other names at the top of the folder are kept)",
                out,
            )


def _empty_out(out: Path) -> None:
    """Remove what the last build wrote at the top of ``out`` (but for :data:`_KEPT`),
    once this build's images are drawn: a build that fails before leaves the last site
    whole."""
    for e in list(out.iterdir()):
        if e.name not in GENERATED or e.name in _KEPT:
            continue
        if e.is_dir() and not e.is_symlink():
            shutil.rmtree(e)
        else:
            e.unlink()


def _copy_static(out: Path) -> None:
    dst = out / "static"
    dst.mkdir(exist_ok=True)
    for entry in sorted(
        resources.files("segbench.report").joinpath("static").iterdir(),
        key=lambda e: e.name,
    ):
        if entry.is_file() and not entry.name.startswith("."):
            (dst / entry.name).write_bytes(entry.read_bytes())


def _curve(run: Run) -> dict | None:
    if run.boundary is None:
        return None
    c = run.curves("boundary")
    r = np.array([num(v) for v in c.get("recall", [])], float)
    p = np.array([num(v) for v in c.get("precision", [])], float)
    if r.size == 0 or r.size != p.size:
        return None
    ods = (run.metric("ODS_recall"), run.metric("ODS_precision"), run.metric("ODS"))
    out = {"name": run.name, "recall": r, "precision": p}
    if not any(math.isnan(v) for v in ods):
        out["ods"] = ods
    return out


#: How the pages name each presentation's ranking.
GROUP_TITLES = {
    "colour": "Colour images",
    "grey": "Greyscale images",
    "all": "Colour and greyscale segmentations together",
}
GROUP_LEDES = {
    "colour": "Algorithms scored against the segmentations people made on the colour "
    "images; the human row scores each of those against the other colour "
    "segmentations of the same image.",
    "grey": "Algorithms scored against the segmentations people made on the greyscale "
    "images (as the BSDS300 grey benchmark); the human row scores each of those "
    "against the other greyscale segmentations of the same image.",
    "all": "Algorithms scored against every segmentation of each image, colour and "
    "greyscale; the human row scores each against all the others.",
}


def _seg_scores(info, k) -> dict:
    """One human segmentation against the others of its presentation."""
    scored = info["n_others"][k] >= 1
    r, p, f = _prf(info["human"][k]) if scored else (math.nan,) * 3
    g = info["human_region"][k]
    return {
        "recall": r,
        "precision": p,
        "f": f,
        "covering": _ratio(g[0], g[1]),
        "pri": g[4],
        "vi": g[5],
        "n_others": info["n_others"][k],
    }


def _human_group(group: str, got) -> dict:
    """Pooled human figures of one presentation: the ``human_boundary`` and
    ``human_region`` results of its segmentations, each against the others of the same
    presentation of the same image (for 'all': against every other segmentation)."""
    if got is None:
        counts, (r, p, f), region, n_images, n_segs = [0] * 4, (math.nan,) * 3, None, 0, 0
    else:
        m = got.boundary.metrics
        counts = [int(c) for c in m["counts"]]
        r, p, f = _prf(counts)
        # summarize_human_region of the tables; none for edge-map ground truth
        region = dict(got.region.metrics) if got.region is not None else None
        n_images = len(got.ids)
        n_segs = sum(len(rec.users) for rec in got.boundary.records)
    return {
        "key": group,
        "title": GROUP_TITLES[group],
        "recall": r,
        "precision": p,
        "F": f,
        "counts": counts,
        "region": region,
        "n_images": n_images,
        "n_segs": n_segs,
    }


def _human_rows(infos: dict, humans: dict) -> None:
    """Per image, each segmentation's rows against the others of its presentation
    (``human``, ``human_region``, ``n_others``; ``human_all``, ``human_all_region``
    with the 'all' group) from the human families' records."""
    for iid, info in infos.items():
        kinds = [a["kind"] for a in info["annotators"]]
        n = len(kinds)
        human = np.zeros((n, 4), np.int64)
        region = np.full((n, 6), np.nan)
        others = [0] * n
        for group in ("colour", "grey"):
            idx = group_members(kinds, group)
            for k in idx:
                others[k] = len(idx) - 1
            got = humans.get(group)
            rows = got.rows(iid) if got is not None else None
            if rows is not None:
                human[idx], region[idx] = rows
        info["human"], info["human_region"] = human.tolist(), region.tolist()
        info["n_others"] = others
        if "all" in humans:
            rows = humans["all"].rows(iid)
            info["human_all"] = (rows[0] if rows else np.zeros((n, 4), np.int64)).tolist()
            info["human_all_region"] = (
                rows[1] if rows else np.full((n, 6), np.nan)
            ).tolist()


def _human_summary(infos: dict, groups: list, humans: dict) -> dict:
    """Pooled human figures per presentation, per subject, per (image, segmentation);
    ``humans`` are the human families' results per group (:func:`human_groups`)."""
    pairs: list[dict] = []
    subjects: dict[str, dict] = {}  # subject -> its pooled "counts" and "reg" rows
    for iid, info in infos.items():
        for k, ann in enumerate(info["annotators"]):
            if info["n_others"][k] < 1:
                continue
            sc = _seg_scores(info, k)
            pairs.append(
                {
                    "iid": iid,
                    "key": info["key"],
                    "k": k,
                    "subject": ann["subject"],
                    "subject_key": ann["subject_key"],
                    "kind": ann["kind"],
                    **sc,
                }
            )
            if ann["subject"] is not None:
                s = subjects.setdefault(
                    ann["subject"], {"counts": np.zeros(4, np.int64), "reg": []}
                )
                s["counts"] += np.asarray(info["human"][k], np.int64)
                s["reg"].append(info["human_region"][k])
    per_subject = {}
    for uid, s in subjects.items():
        sr, sp, sf = _prf(s["counts"])
        reg = np.asarray(s["reg"], float).reshape(-1, 6)
        cov = _ratio(reg[:, 0].sum(), reg[:, 1].sum()) if reg.shape[0] else math.nan
        per_subject[uid] = {
            "recall": sr,
            "precision": sp,
            "f": sf,
            "covering": cov,
            "pri": float(np.nanmean(reg[:, 4])) if reg.shape[0] else math.nan,
            "vi": float(np.nanmean(reg[:, 5])) if reg.shape[0] else math.nan,
        }
    return {
        "groups": {g: _human_group(g, humans.get(g)) for g in groups},
        "pairs": pairs,
        "subjects": per_subject,
    }


def _run_kind(folder) -> str:
    """``'human'`` (a ``segbench human`` run folder: the human families only),
    ``'consistency'`` (a ``segbench consistency`` one) or ``'algorithm'``."""
    from ..engine import RunFolder

    found = set(RunFolder(folder).families()) if Path(folder).is_dir() else set()
    if found and found <= {"human_boundary", "human_region"}:
        return "human"
    if "consistency" in found and found <= _CONSISTENCY_FAMILIES:
        return "consistency"
    return "algorithm"


#: The figures of a ``segbench consistency`` run folder (Martin et al., ICCV 2001) that
#: the human page shows, in the paper's order; each is shown where the folder has it.
CONSISTENCY_FIGURES = (
    (
        "consistency_hist.png",
        "Figure 4: LCE and GCE of pairs of segmentations of the same "
        "image (top) and of different images (bottom), as percentages of pairs",
    ),
    (
        "fig5_gce.png",
        "Figure 5: GCE of every pair of segmentations of the sampled images, "
        "sorted by image (dark: low error); the strips give each one's number of segments",
    ),
    ("fig5_lce.png", "Figure 5: LCE of the same pairs"),
    (
        "consistency_gce_lce.png",
        "Figure 6: GCE against LCE for every pair (all on or above the diagonal)",
    ),
    (
        "fig7_ncuts.png",
        "Figure 7: the segmenter's output beside the human segmentations "
        "with the fewest and the most segments, at the same number of segments",
    ),
    (
        "granularity.png",
        "Figure 8: the segmenter against the humans at each person's number of segments",
    ),
    (
        "fig9_gce_boxplot.png",
        "Figure 9: per image, the GCE of every pair of human "
        "segmentations (grey) and of the segmenter against each person (white)",
    ),
)
_CONSISTENCY_FAMILIES = {"consistency", "consistency_matrix", "granularity"}


def _consistency_results(folders, ds) -> list:
    """The consistency runs' results, each checked to be of the site's split.

    Raises
    ------
    InputError
        Naming the run folder, the split and an image not in it.
    """
    from ..engine import RunFolder

    in_split = set(ds.ids)
    results = []
    for folder in folders:
        result = RunFolder(folder).read("consistency")
        results.append(result)
        ids = [str(row.get("id")) for row in result.per_item]
        foreign = [i for i in ids if i not in in_split]
        if foreign:
            raise InputError(
                f"a consistency run on {len(foreign)} of its {len(ids)} images that "
                f"are not in the site's split {ds.split!r} (e.g. {foreign[0]}): it was "
                "run on another split; run segbench consistency on this one",
                folder,
            )
    return results


def _consistency_views(out: Path, folders, results) -> list[dict]:
    """Copy each consistency run's figures into ``consistency/<k>/`` (same bytes); per
    run its headline (mean GCE/LCE, same and different images) and the figures found."""
    from ..engine import RunFolder

    views = []
    for k, (folder, result) in enumerate(zip(folders, results), start=1):
        run_folder = RunFolder(folder)
        made = (run_folder.manifest().get("runs") or {}).get("consistency") or {}
        figures = []
        for name, caption in CONSISTENCY_FIGURES:
            src = Path(folder) / name
            if src.is_file() and not src.is_symlink():
                dst = out / "consistency" / str(k) / name
                dst.parent.mkdir(parents=True, exist_ok=True)
                copy_file(src, dst)
                figures.append({"href": f"consistency/{k}/{name}", "caption": caption})
        m = result.metrics
        views.append(
            {
                "name": Path(folder).name,
                "figures": figures,
                "gt": ", ".join(made["gt_dir"])
                if isinstance(made.get("gt_dir"), list)
                else made.get("gt_dir"),
                "split": made.get("split"),
                "metrics": {
                    key: num(m.get(key))
                    for key in ("GCE_same", "LCE_same", "GCE_different", "LCE_different")
                },
                "n_images": num(m.get("n_images")),
            }
        )
    return views


def build_site(
    dataset_root,
    run_dirs,
    out_dir,
    *,
    split: str = "test",
    pred_dirs: dict | None = None,
    title: str | None = None,
    workers: int = 1,
    progress: bool = True,
    max_images: int | None = None,
    ids=None,
    overlays: bool = False,
    gt_format=None,
) -> Path:
    """Write the benchmark site of a dataset split and the runs of algorithms on it.

    Parameters
    ----------
    dataset_root : path
        A BSDS500 (``images/`` + ``groundTruth/``) or BSDS300 (``images/`` +
        ``human/``, colour and greyscale segmentations) dataset, or other ground truth
        of edge or label maps (``gt_format``); see :mod:`segbench.report._site_data`.
    run_dirs : sequence of paths
        Run folders written by ``segbench boundary``/``region``/``all``/``submit``
        (``result_boundary.json``, ``result_region.json``, optional ``meta.json`` with
        name, about_html, kind, date, presentation). May be empty: the site then shows
        the dataset and the human figures. A boundary run and a region run of the same
        name are one algorithm (one row). A ``segbench human`` run folder among them is
        no algorithm: its records of the human families are taken into the site's
        cache, where the engine reuses those whose keys match (the same ground-truth
        files and parameters) instead of scoring the annotators again. A ``segbench
        consistency`` run folder is no algorithm either: the human page shows its
        GCE/LCE and the 2001 paper's figures it holds (:data:`CONSISTENCY_FIGURES`).
    out_dir : path
        Site folder: created, or rebuilt if it holds a site built before (its
        ``.segbench-cache/`` of human records is kept); any other non-empty folder is
        refused.
    split : str, default 'test'
    pred_dirs : dict, optional
        Run folder -> folder of its predictions, for the per-image pictures, where the
        run folder does not say (see :func:`segbench.report._site_runs.load_run`).
        A run whose predictions are not found is ranked without pictures.
    title : str, optional
        Site title (default: the dataset's layout and split).
    workers : int, default 1
        Worker processes for the per-image work; the output is the same for any number.
    progress : bool, default True
        Progress bar on stderr.
    max_images : int, optional
        Only the first N images of the split (sorted ids): a quick preview. Every
        figure is then that of those N images: each run's family summarizes its
        records of them (:func:`segbench.report._site_runs.restrict_run`); where a
        run folder has no records that match its result, its figures are flagged as
        the run's own.
    ids : sequence of str, optional
        Only these images of the split.
    overlays : bool, default False
        Also draw each run's true-positive/false-positive/miss overlay per image at its
        ODS threshold. Off by default: a picture of the matching needs the matcher run
        again on every image of every run (the numbers beside it come from the records
        either way).

    Returns
    -------
    Path
        ``out_dir/index.html``.
    """
    from ..engine import map_items

    if max_images is not None and (int(max_images) != max_images or max_images < 1):
        raise InputError(
            f"max_images (--max-images) must be a positive integer, got {max_images!r}"
        )
    ds = open_dataset(Path(dataset_root), split, gt_format)
    wanted = None if ids is None else set(ids)
    shown = ds.ids if wanted is None else [i for i in ds.ids if i in wanted]
    ids = list(shown[:max_images] if max_images else shown)
    pred_dirs = {Path(k).resolve(): v for k, v in (pred_dirs or {}).items()}
    run_dirs = list(run_dirs)
    seen: dict = {}
    for k, d in enumerate(run_dirs):  # a folder given twice would rank against itself
        first = seen.setdefault(Path(d).resolve(), k)
        if first != k:
            raise InputError(
                f"the run {d} is given twice (as {run_dirs[first]} and {d}): give each "
                "run once"
            )
    kinds = [_run_kind(d) for d in run_dirs]
    human_dirs = [d for d, k in zip(run_dirs, kinds) if k == "human"]
    consistency_dirs = [d for d, k in zip(run_dirs, kinds) if k == "consistency"]
    consistency_results = _consistency_results(consistency_dirs, ds)
    runs = [
        load_run(d, pred_dir=pred_dirs.get(Path(d).resolve()))
        for d, k in zip(run_dirs, kinds)
        if k == "algorithm"
    ]
    runs = merge_runs(runs)  # a boundary and a region run: one algorithm
    tell_apart(runs)  # two runs of one name: two names
    # slugs name algorithms/<slug>.html and plots/<slug>.png: keep the site's own names
    taken = {"index", "pr", "pr-grey", "pr-all"}
    for run in runs:
        run.slug = slugify(run.name, taken)
        restrict_run(run, ids)
    out = Path(out_dir)
    _refuse_inputs_inside(
        out, list(run_dirs) + [p for p in pred_dirs.values() if p is not None]
    )
    _prepare_out(out)
    # one build at a time: a second into the folder is refused before it removes or
    # draws anything (it would empty the first one's pages and images)
    lock = hold_lock(
        out / LOCK,
        "another segbench site is building this folder{holder}: wait for it to end",
        out,
    )
    try:
        _remember_written(out, complete=False)  # a build under way, until it ends

        keys: dict[str, str] = {}  # image id -> its file-name-safe key
        key_taken: set[str] = set()
        for iid in ids:
            keys[iid] = _key(iid, key_taken)
        tasks = []
        for iid in ids:
            rs = []
            for run in runs:
                path = run.preds.get(iid)
                params = run.params
                rs.append(
                    RunSpec(
                        run.slug,
                        None if path is None else str(path),
                        run.overlay_threshold(),
                        bool(params.get("thin", True)),
                        float(params.get("max_dist", DEFAULT_MAX_DIST)),
                        run.boundary is None,
                        run.presentation,
                        overlays,
                    )
                )
            tasks.append(ImageTask(ds.item(iid), keys[iid], str(out), tuple(rs)))
        infos = {}
        for info in map_items(
            render_image, tasks, workers=workers, progress=progress, desc="site"
        ):
            infos[info["iid"]] = info
        infos = {iid: infos[iid] for iid in ids}
        _empty_out(out)  # the images drawn: the last build's pages go now
        shown_keys = set(keys.values())
        for e in list((out / "img").iterdir()) if (out / "img").is_dir() else []:
            if e.name not in shown_keys:  # an image no longer shown
                shutil.rmtree(e) if e.is_dir() and not e.is_symlink() else e.unlink()
        for run in runs:
            _ods_counts(run, ids, infos)

        subj_taken: set = set()
        subject_keys: dict = {}
        for iid in ids:
            infos[iid]["key"] = keys[iid]
            for ann in infos[iid]["annotators"]:
                uid = ann["subject"]
                if uid is not None and uid not in subject_keys:
                    subject_keys[uid] = _key(uid, subj_taken)
                ann["subject_key"] = subject_keys.get(uid)
        present = {
            presentation_group(a["kind"]) for i in infos.values() for a in i["annotators"]
        } | {r.presentation for r in runs}
        groups = [g for g in PRESENTATIONS if g in present] or ["colour"]
        # the human families score the images with two or more segmentations of a group
        ids_of = {
            g: [
                iid
                for iid in ids
                if len(group_members([a["kind"] for a in infos[iid]["annotators"]], g)) >= 2
            ]
            for g in groups
        }
        humans = human_groups(
            ds,
            ids_of,
            out / CACHE_DIR,
            workers=workers,
            progress=progress,
            seeds=human_dirs,
        )
        _human_rows(infos, humans)
        human = _human_summary(infos, groups, humans)
        human["consistency"] = _consistency_views(
            out, consistency_dirs, consistency_results
        )
        _write_pages(
            out,
            ds,
            ids,
            infos,
            runs,
            groups,
            human,
            subject_keys,
            title or f"segbench: {ds.name}",
        )
        _remember_written(out)
        if progress:
            print(f"site: {out / 'index.html'}", file=sys.stderr)
        return out / "index.html"
    finally:
        release_lock(lock)


def _ods_counts(run: Run, ids, infos: dict) -> None:
    """Each shown image's counts at the run's (shown) ODS threshold, from its boundary
    records, into ``infos[iid]['runs'][slug]['counts']`` (None without records)."""
    recs = run.records("boundary") if run.boundary is not None else None
    t = run.metric("ODS_threshold")
    for iid in ids:
        entry = infos[iid]["runs"].setdefault(run.slug, {"output": False})
        rec = None if recs is None else recs.records.get(iid)
        entry["counts"] = None if rec is None else counts_at(rec, t)


# ---------------------------------------------------------------------------------------
# pages


def _settings_order(settings) -> tuple:
    """Sort key of :func:`settings_of` values: the BSR protocol's first."""
    return (settings != tuple(SETTINGS_DEFAULTS.items()), repr(settings))


def _image_entries(ids, infos, runs):
    """Per image: best F reached by any algorithm (image OIS F) and by which."""
    per_item = {r.slug: r.per_item("boundary") for r in runs}
    out = []
    for iid in ids:
        best, who = math.nan, None
        for run in runs:
            f = num(per_item[run.slug].get(iid, {}).get("f"))
            if not math.isnan(f) and (math.isnan(best) or f > best):
                best, who = f, run
        info = infos[iid]
        out.append(
            {
                "iid": iid,
                "key": info["key"],
                "best": best,
                "best_name": who.name if who else None,
                "best_slug": who.slug if who else None,
                "photo": info["photo"],
                "n_humans": len(info["human"]),
            }
        )
    return out


def _order(entries, hard_first: bool):
    def k(e):
        b = e["best"]
        return (
            math.isnan(b),
            (b if hard_first else -b) if not math.isnan(b) else 0.0,
            e["iid"],
        )

    return sorted(entries, key=k)


def _show_date(text: str) -> str:
    """The day of an ISO date or time (as given if it is not ISO 8601)."""
    key = date_key(text)
    return key[:10] if key else text


def _copy_downloads(out: Path, run: Run) -> list[dict]:
    """Copy the run's result files into ``downloads/<slug>/`` (same bytes); their
    links relative to the run's page, names and sizes."""
    files = downloads(run)
    if not files:
        return []
    dst = out / "downloads" / run.slug
    dst.mkdir(parents=True, exist_ok=True)
    got = []
    for src, name in files:
        data = src.read_bytes()
        (dst / name).write_bytes(data)
        got.append(
            {
                "name": name,
                "href": f"../downloads/{run.slug}/{name}",
                "size": _size(len(data)),
            }
        )
    return got


def _size(n: int) -> str:
    return (
        f"{n} bytes"
        if n < 1000
        else (f"{n / 1000:.1f} kB" if n < 1_000_000 else f"{n / 1_000_000:.1f} MB")
    )


def _cell(run: Run, column: Column) -> dict:
    return {
        "key": column.key,
        "value": run.metric(column.key, column.family),
        "iv": run.interval(column.key, column.family),
        "stale": run.stale(column.key, column.family),
    }


def _ci_text(runs) -> str:
    """How the ranking names the intervals it shows ('' when there are none)."""
    levels = set()
    for r in runs:
        if r.has_intervals():
            ci = r.ci("boundary" if r.has_intervals("boundary") else "region")
            levels.add(num(ci.get("level")))
    if not levels:
        return ""
    if len(levels) == 1 and not math.isnan(next(iter(levels))):
        return f"{next(iter(levels)) * 100:g}% bootstrap intervals over images"
    return "bootstrap intervals over images (levels as each algorithm's page says)"


#: The human figures beside an algorithm's: the boundary F of each annotator against
#: the others for ODS and OIS, the region measures for both of theirs.
_HUMAN_OF = {
    ("boundary", "ODS"): "F",
    ("boundary", "OIS"): "F",
    ("region", "covering_ODS"): "covering",
    ("region", "covering_OIS"): "covering",
    ("region", "PRI_ODS"): "PRI",
    ("region", "PRI_OIS"): "PRI",
    ("region", "VI_ODS"): "VI",
    ("region", "VI_OIS"): "VI",
}


def _human_value(column: Column, f: float, region: dict):
    """The human row's figure in a ranking column (None: no human figure there)."""
    name = _HUMAN_OF.get((column.family, column.key))
    if name is None:
        return None
    return f if name == "F" else region.get(name)


def _write_pages(out, ds, ids, infos, runs, groups, human, subject_keys, title):
    env = environment()
    _copy_static(out)
    (out / "plots").mkdir(exist_ok=True)
    for sub in ("algorithms", "images") + (("subjects",) if ds.has_subjects else ()):
        (out / sub).mkdir(exist_ok=True)

    multi = len(groups) > 1
    hpoints = {}
    for g in groups:
        h = human["groups"][g]
        hpoints[g] = (
            (h["recall"], h["precision"], h["F"]) if not math.isnan(h["F"]) else None
        )
    has_region = any(r.region is not None for r in runs)
    columns = columns_of({f for r in runs for f in r.results})
    # each family's ranking metric, as the list of algorithms shows it
    heads = [
        c for n, c in enumerate(columns) if n == 0 or c.family != columns[n - 1].family
    ]

    curve = {r.slug: _curve(r) for r in runs}
    has_plot, rank_of, group_views = {}, {}, []
    # one table per presentation and per scoring settings: runs scored under another
    # protocol, nthresh, max_dist or min_agreement are not ranked against each other
    tables = []
    for g in groups:
        members = [r for r in runs if r.presentation == g]
        kinds = sorted(
            {settings_of(r) for r in members},  # the BSR protocol first
            key=_settings_order,
        )
        for n, k in enumerate(kinds or [None]):
            tables.append(
                (g, n, k, len(kinds) > 1, [r for r in members if settings_of(r) == k])
            )
    several = len(tables) > 1
    for g, n, settings, split, members in tables:
        ranked = rank_runs(members)
        for r, cell in zip(ranked, vs_next(ranked, ids)):
            if cell:
                r.vs_next, r.vs_next_value = str(cell[0]), num(cell[1])
        plot = "pr.png" if g == "colour" else f"pr-{g}.png"
        table_title = GROUP_TITLES[g]
        lede = GROUP_LEDES[g]
        key = g
        if n:  # '--' never appears in a slug, so no run's plot or page is taken
            plot, key = plot.replace(".png", f"--{n + 1}.png"), f"{g}--{n + 1}"
        if split:
            table_title = f"{table_title}: {settings_text(settings)}"
            lede = (
                f"{lede} Scored with {settings_text(settings)}; runs scored with "
                "other settings are ranked in their own tables, never against "
                "these."
            )
        for pos, r in enumerate(ranked):
            rank_of[r.slug] = (pos + 1, len(ranked), table_title)
        curves = [curve[r.slug] for r in ranked if curve[r.slug] is not None]
        plot_pr(
            curves,
            out / "plots" / plot,
            human=hpoints[g],
            title="Boundaries" + (f" ({table_title.lower()})" if several else ""),
        )
        for r in ranked:
            c = curve[r.slug]
            has_plot[r.slug] = c is not None
            if c is not None:
                plot_pr([c], out / "plots" / f"{r.slug}.png", human=hpoints[g])
        h = human["groups"][g]
        hr = h["region"] or {}
        notes = [
            {"slug": r.slug, "name": r.name, "text": t}
            for r in ranked
            for t, c in r.scope_notes(len(ids))
            if c
        ]
        group_views.append(
            {
                "key": key,
                "title": table_title,
                "lede": lede,
                "table_id": "ranking" if key == "colour" else f"ranking-{key}",
                "plot": plot,
                "human": h,
                "human_cells": [_human_value(c, h["F"], hr) for c in columns],
                "ranking": [
                    {
                        "rank": i + 1,
                        "name": r.name,
                        "slug": r.slug,
                        "kind": r.kind,
                        "date": _show_date(r.date),
                        "date_full": r.date,
                        "date_key": r.date_key,
                        "cells": [_cell(r, c) for c in columns],
                        "vs_next": r.vs_next,
                        "vs_next_value": r.vs_next_value,
                        "flagged": any(c for _, c in r.scope_notes(len(ids))),
                    }
                    for i, r in enumerate(ranked)
                ],
                "has_vs_next": any(r.vs_next for r in ranked),
                "ci_text": _ci_text(ranked),
                "notes": notes,
            }
        )
    # best F of an image among runs of one setting: an F at another alpha, tolerance
    # or calibration is another measure (the BSR protocol's, when any run has it)
    main_settings = min(
        {settings_of(r) for r in runs},
        key=_settings_order,
        default=None,
    )
    entries = _image_entries(
        ids, infos, [r for r in runs if settings_of(r) == main_settings]
    )
    hard, easy = _order(entries, True), _order(entries, False)
    base = {
        "site_title": title,
        "version": __version__,
        "has_subjects": ds.has_subjects,
        "dataset": ds.name,
        "n_images": len(ids),
        "has_region": has_region,
        "multi": multi,
    }

    def write(rel: str, template: str, **ctx):
        depth = rel.count("/")
        html = env.get_template(template).render(root="../" * depth, **base, **ctx)
        (out / rel).write_text(html, encoding="utf-8")

    write(
        "index.html",
        "home.html",
        page="home",
        columns=columns,
        groups=group_views,
        n_runs=len(runs),
        several=several,
        any_flagged=any(r["flagged"] for v in group_views for r in v["ranking"]),
        any_recomputed=any(sc.recomputed for r in runs for sc in r.scope.values()),
        hard=hard[:6],
        easy=easy[:6],
    )
    write(
        "algorithms/index.html",
        "algorithms.html",
        page="algorithms",
        heads=heads,
        runs=[
            {
                "name": r.name,
                "slug": r.slug,
                "kind": r.kind,
                "presentation": r.presentation,
                "date": _show_date(r.date),
                "date_full": r.date,
                "date_key": r.date_key,
                "heads": [r.metric(c.key, c.family) for c in heads],
                "n_pred": len(r.preds),
            }
            for r in by_date(runs)
        ],
    )
    for run in runs:
        _write_algorithm(
            write, out, run, ids, infos, has_plot[run.slug], rank_of[run.slug], several
        )
    for name, order, hard_first in (("index.html", hard, True), ("easy.html", easy, False)):
        write(
            f"images/{name}",
            "images.html",
            page="images",
            entries=order,
            hard_first=hard_first,
        )
    ranked_all = [
        r for g in groups for r in rank_runs([x for x in runs if x.presentation == g])
    ]
    for pos, e in enumerate(hard):
        _write_image(
            write,
            e,
            infos[e["iid"]],
            ranked_all,
            hard[pos - 1] if pos > 0 else None,
            hard[pos + 1] if pos + 1 < len(hard) else None,
        )
    write(
        "human.html",
        "human.html",
        page="human",
        human=human,
        subject_keys=subject_keys,
        groups=[human["groups"][g] for g in groups],
        pairs=sorted(human["pairs"], key=lambda p: (p["iid"], p["k"])),
    )
    if ds.has_subjects:
        _write_subjects(write, infos, ids, human, subject_keys)


_SHOWN = (
    "ODS",
    "ODS_threshold",
    "ODS_recall",
    "ODS_precision",
    "OIS",
    "AP",
    "R50",
    "covering_ODS",
    "covering_OIS",
    "covering_best",
    "PRI_ODS",
    "PRI_OIS",
    "VI_ODS",
    "VI_OIS",
)


def _other_families(run: Run) -> list[tuple[str, list, tuple]]:
    """``(family, ranking columns, per-image metrics)`` of the run's families other
    than boundary and region (whose pages are their own), as the registry declares
    them."""
    found = []
    for family in run.results:
        if family in ("boundary", "region"):
            continue
        entry = entry_of(family)
        cols = [c for c in columns_of([family]) if c.family == family]
        found.append((family, cols, entry.per_image))
    return found


def _write_algorithm(write, out, run, ids, infos, has_plot, rank, multi):
    bd, rg = run.per_item("boundary"), run.per_item("region")
    others = _other_families(run)
    rows = []
    for iid in ids:
        b, g = bd.get(iid, {}), rg.get(iid, {})
        c = (infos[iid]["runs"].get(run.slug) or {}).get("counts")
        ods = _prf(c) if c else (math.nan,) * 3
        rows.append(
            {
                "iid": iid,
                "key": infos[iid]["key"],
                "photo": infos[iid]["photo"],
                "threshold": num(b.get("threshold")),
                "recall": num(b.get("recall")),
                "precision": num(b.get("precision")),
                "f": num(b.get("f")),
                "ods_f": ods[2],
                "covering": num(g.get("ois_covering")),
                "pri": num(g.get("pri")),
                "vi": num(g.get("vi")),
                "others": [
                    num(run.per_item(fam).get(iid, {}).get(c.key))
                    for fam, _, per_image in others
                    for c in per_image
                ],
            }
        )
    m = {k: run.metric(k) for k in _SHOWN}
    iv = {k: run.interval(k) for k in _SHOWN}
    stale = {k: run.stale(k) for k in _SHOWN}
    cis = [(fam, run.ci(fam)) for fam in run.results if run.has_intervals(fam)]
    params = run.params
    write(
        f"algorithms/{run.slug}.html",
        "algorithm.html",
        page="algorithms",
        run={
            "name": run.name,
            "slug": run.slug,
            "kind": run.kind,
            "date": _show_date(run.date),
            "date_full": run.date,
            "presentation": run.presentation,
            "group_title": rank[2] if multi else "",
            "about": sanitize_html(run.about_html),
            "rank": rank[0],
            "of": rank[1],
            "has_boundary": run.boundary is not None,
            "has_region": run.region is not None,
            "has_plot": has_plot,
            "n_pred": len(run.preds),
            "n_thresholds": len(
                run.curves("boundary" if run.boundary is not None else "region").get(
                    "thresholds"
                )
                or []
            ),
            "max_dist": params.get("max_dist"),
            "alpha": params.get("alpha")
            if params.get("alpha") not in (None, 0.5)
            else None,
            "notes": run.scope_notes(len(ids)),
            "cis": cis,
            "others": [
                {
                    "title": family.replace("_", " ").capitalize(),
                    "cells": [{"label": c.label, **_cell(run, c)} for c in cols],
                    "per_image": per_image,
                }
                for family, cols, per_image in others
            ],
            "downloads": _copy_downloads(out, run),
        },
        m=m,
        iv=iv,
        stale=stale,
        rows=rows,
    )


def _write_image(write, entry, info, ranked, prev, nxt):
    iid = entry["iid"]
    humans = [
        {"k": k, **ann, **_seg_scores(info, k)} for k, ann in enumerate(info["annotators"])
    ]
    algs = []
    for run in ranked:
        b = run.per_item("boundary").get(iid, {})
        g = run.per_item("region").get(iid, {})
        got = info["runs"].get(run.slug) or {}
        ods = _prf(got["counts"]) if got.get("counts") else (math.nan,) * 3
        algs.append(
            {
                "name": run.name,
                "slug": run.slug,
                "output": got.get("output", False),
                "overlay": got.get("overlay", False),
                "at_threshold": got.get("at_threshold", False),
                "presentation": run.presentation,
                "threshold": run.overlay_threshold(),
                "ods_r": ods[0],
                "ods_p": ods[1],
                "ods_f": ods[2],
                "ois_f": num(b.get("f")),
                "covering": num(g.get("ois_covering")),
                "pri": num(g.get("pri")),
                "vi": num(g.get("vi")),
            }
        )
    write(
        f"images/{entry['key']}.html",
        "image.html",
        page="images",
        e=entry,
        info=info,
        humans=humans,
        algs=algs,
        prev=prev,
        next=nxt,
    )


def _write_subjects(write, infos, ids, human, subject_keys):
    segs: dict = {}
    for iid in ids:
        info = infos[iid]
        for k, ann in enumerate(info["annotators"]):
            if ann["subject"] is None:
                continue
            segs.setdefault(ann["subject"], []).append(
                {
                    "iid": iid,
                    "key": info["key"],
                    "k": k,
                    "kind": ann["kind"],
                    "photo": info["photo"],
                    **_seg_scores(info, k),
                }
            )

    def order(uid):
        return (0, int(uid), uid) if uid.isdigit() else (1, 0, uid)

    subjects = []
    for uid in sorted(segs, key=order):
        s = human["subjects"].get(uid, {})
        kinds = sorted({g["kind"] for g in segs[uid] if g["kind"]})
        subjects.append(
            {
                "uid": uid,
                "key": subject_keys[uid],
                "n": len(segs[uid]),
                "kinds": ", ".join(kinds),
                "f": s.get("f", math.nan),
                "covering": s.get("covering", math.nan),
            }
        )
    write("subjects/index.html", "subjects.html", page="subjects", subjects=subjects)
    for s in subjects:
        # a subject with no other segmentation of the same image and presentation
        # (a fresh collection) has no pooled score: the page says so
        stats = human["subjects"].get(s["uid"])
        write(
            f"subjects/{s['key']}.html",
            "subject.html",
            page="subjects",
            s=s,
            stats=stats or {},
            compared=stats is not None,
            segs=segs[s["uid"]],
        )


# ---------------------------------------------------------------------------------------
# serving


def make_server(
    site_dir, host: str = "127.0.0.1", port: int = 8000, *, quiet: bool = False
):
    """An HTTP server of ``site_dir`` (not yet serving); ``port=0`` picks a free port.

    Serves files only (no directory listings), binds ``127.0.0.1`` unless told
    otherwise. Call ``serve_forever()`` on it, and ``server_close()`` when done.
    """
    import functools
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    root = Path(site_dir)
    if not (root / "index.html").is_file():
        raise InputError(
            "no index.html: not a site folder (build it with segbench site)", root
        )

    base = os.path.realpath(root)

    class Handler(SimpleHTTPRequestHandler):
        def list_directory(self, path):
            self.send_error(404, "No such file")
            return None

        def send_head(self):
            # the site's own files only: not through a link that leads out of the
            # folder (to /etc, say), and not its hidden files (.segbench-cache)
            if not self._inside_site(self.translate_path(self.path)):
                self.send_error(404, "No such file")
                return None
            return super().send_head()

        @staticmethod
        def _inside_site(path) -> bool:
            real = os.path.realpath(path)
            if os.path.isdir(real):
                real = os.path.realpath(os.path.join(real, "index.html"))
            rel = os.path.relpath(real, base)
            parts = Path(rel).parts
            return rel != os.pardir and not any(
                part == os.pardir or part.startswith(".") for part in parts
            )

        def end_headers(self):
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Cache-Control", "no-cache")
            super().end_headers()

        def log_message(self, format, *args):
            if not quiet:
                super().log_message(format, *args)

    class Server(ThreadingHTTPServer):
        def handle_error(self, request, client_address):
            # socketserver would print a traceback for a client that went away
            if not isinstance(sys.exc_info()[1], CLIENT_GONE):
                super().handle_error(request, client_address)

    handler = functools.partial(Handler, directory=str(root.resolve()))
    try:
        return Server((host, int(port)), handler)
    except (OSError, OverflowError) as exc:  # port in use or out of range, ...
        raise InputError(
            f"cannot serve on {host}:{port}: {getattr(exc, 'strerror', None) or exc}"
            + (
                " (choose another --port, or 0 for any free one)"
                if getattr(exc, "errno", None) == errno.EADDRINUSE
                else ""
            )
        ) from None


def serve(site_dir, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve a built site over HTTP until interrupted (Ctrl-C).

    Binds ``127.0.0.1`` by default, so only this machine can browse it; pass
    ``host='0.0.0.0'`` to share it on the network.
    """
    server = make_server(site_dir, host, port)
    h, p = server.server_address[:2]
    print(f"serving {site_dir} at http://{h}:{p}/  (Ctrl-C to stop)", file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
