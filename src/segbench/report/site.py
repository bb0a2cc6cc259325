"""The benchmark site: a static HTML site of a dataset and the runs of algorithms on it.

What the original BSDS pages offered, generated from a lab's own results:

- ``index.html``: the ranking by algorithm (boundary ODS/OIS/AP/R50 and the region
  measures where present, the human row on top) and one PR plot overlaying every
  algorithm with iso-F curves and the human point.
- ``algorithms/``: per algorithm its PR curve, its per-image scores (sortable), its
  name and sanitized about text.
- ``images/``: every image ordered by the best F any algorithm reached on it (hard
  first in ``index.html``, easy first in ``easy.html``); per image the photo, every
  human segmentation (boundaries and a coloured region map) and each algorithm's
  output with a true-positive/false-positive/miss overlay at its ODS threshold.
- ``subjects/``: every segmentation a person made, where subjects are known.
- ``human.html``: each annotator scored against the others.

Links are relative, so the pages work from the file system and from :func:`serve`.
Every user string is escaped (Jinja2 autoescape); ``about_html`` is reduced to an
allow-list. The output is deterministic: the same inputs give the same bytes.
"""

from __future__ import annotations

import errno

import math
import shutil
import sys
from importlib import resources
from pathlib import Path

import numpy as np

from .. import __version__
from ..boundary import DEFAULT_MAX_DIST, summarize_human
from ..datasets.bsds import valid_iid
from ..errors import InputError
from ._site_data import open_dataset
from ._site_html import environment, sanitize_html
from ._site_images import ImageTask, RunSpec, render_image
from ._site_runs import (BOUNDARY_COLUMNS, REGION_COLUMNS, Run, load_run, num, rank_runs,
                         slugify)

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


def _prepare_out(out: Path) -> None:
    """Create ``out``, or empty it if it is a site we built; refuse any other folder."""
    if out.exists():
        if not out.is_dir():
            raise InputError("site output exists and is not a folder", out)
        entries = list(out.iterdir())
        if entries and not (out / MARKER).is_file():
            raise InputError("folder is not empty and is not a segbench site; choose an "
                             "empty or new folder", out)
        for e in entries:
            if e.is_dir() and not e.is_symlink():
                shutil.rmtree(e)
            else:
                e.unlink()
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("written by segbench site; rebuilt from scratch each time\n")


def _copy_static(out: Path) -> None:
    dst = out / "static"
    dst.mkdir(exist_ok=True)
    for entry in sorted(resources.files("segbench.report").joinpath("static").iterdir(),
                        key=lambda e: e.name):
        if entry.is_file() and not entry.name.startswith("."):
            (dst / entry.name).write_bytes(entry.read_bytes())


def _curve(run: Run) -> dict | None:
    if run.boundary is None:
        return None
    c = run.boundary.get("curves") or {}
    r = np.array([num(v) for v in c.get("recall", [])], float)
    p = np.array([num(v) for v in c.get("precision", [])], float)
    if r.size == 0 or r.size != p.size:
        return None
    ods = (run.metric("ODS_recall"), run.metric("ODS_precision"), run.metric("ODS"))
    out = {"name": run.name, "recall": r, "precision": p}
    if not any(math.isnan(v) for v in ods):
        out["ods"] = ods
    return out


def _human_summary(infos: dict) -> dict:
    """Pooled human figures, per-subject and per-(image, annotator) rows."""
    from ..region import summarize_human_region
    total = np.zeros(4, np.int64)
    tables, pairs, subjects = [], [], {}
    for iid, info in infos.items():
        rows = np.asarray(info["human"], np.int64).reshape(-1, 4)
        reg = np.asarray(info["human_region"], float).reshape(-1, 6)
        if rows.shape[0] >= 2:
            total += rows.sum(axis=0)
        if reg.shape[0]:
            tables.append(reg)
        for k, (row, ann) in enumerate(zip(rows, info["annotators"])):
            if rows.shape[0] < 2:
                break
            r, p, f = _prf(row)
            g = reg[k] if k < reg.shape[0] else np.full(6, np.nan)
            pair = {"iid": iid, "key": info["key"], "k": k, "subject": ann["subject"],
                    "subject_key": ann["subject_key"], "kind": ann["kind"], "recall": r,
                    "precision": p, "f": f, "covering": _ratio(g[0], g[1]),
                    "pri": g[4], "vi": g[5]}
            pairs.append(pair)
            if ann["subject"] is not None:
                s = subjects.setdefault(ann["subject"], {"counts": np.zeros(4, np.int64),
                                                         "reg": []})
                s["counts"] += row
                s["reg"].append(g)
    r, p, f = _prf(total)
    region = summarize_human_region(tables) if tables else None
    per_subject = {}
    for uid, s in subjects.items():
        sr, sp, sf = _prf(s["counts"])
        reg = np.asarray(s["reg"], float).reshape(-1, 6)
        cov = _ratio(reg[:, 0].sum(), reg[:, 1].sum()) if reg.shape[0] else math.nan
        per_subject[uid] = {"recall": sr, "precision": sp, "f": sf, "covering": cov,
                            "pri": float(np.nanmean(reg[:, 4])) if reg.shape[0] else math.nan,
                            "vi": float(np.nanmean(reg[:, 5])) if reg.shape[0] else math.nan}
    return {"recall": r, "precision": p, "F": f, "counts": total.tolist(),
            "region": region, "pairs": pairs, "subjects": per_subject,
            "n_images": sum(1 for i in infos.values() if len(i["human"]) >= 2)}


def build_site(dataset_root, run_dirs, out_dir, *, split: str = "test",
               pred_dirs: dict | None = None, title: str | None = None,
               workers: int = 1, progress: bool = True,
               max_images: int | None = None) -> Path:
    """Write the benchmark site of a dataset split and the runs of algorithms on it.

    Parameters
    ----------
    dataset_root : path
        A BSDS500 (``images/`` + ``groundTruth/``) or BSDS300 (``images/`` +
        ``human/``) dataset; see :mod:`segbench.report._site_data`.
    run_dirs : sequence of paths
        Run folders written by ``segbench boundary``/``region``/``all``/``submit``
        (``result.json``, ``result_region.json``, optional ``meta.json`` with name,
        about_html, kind, date). May be empty: the site then shows the dataset and
        the human figures.
    out_dir : path
        Site folder: created, or rebuilt if it holds a site built before; any other
        non-empty folder is refused.
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
        Only the first N images of the split (sorted ids): a quick preview.

    Returns
    -------
    Path
        ``out_dir/index.html``.
    """
    from ..engine import map_items

    ds = open_dataset(Path(dataset_root), split)
    ids = list(ds.ids[:max_images] if max_images else ds.ids)
    pred_dirs = {Path(k).resolve(): v for k, v in (pred_dirs or {}).items()}
    runs, taken = [], set()
    for d in run_dirs:
        run = load_run(d, pred_dir=pred_dirs.get(Path(d).resolve()))
        run.slug = slugify(run.name, taken)
        runs.append(run)
    ranked = rank_runs(runs)
    out = Path(out_dir)
    _prepare_out(out)

    keys, key_taken = {}, set()
    for iid in ids:
        keys[iid] = _key(iid, key_taken)
    tasks = []
    for iid in ids:
        rs = []
        for run in runs:
            path = run.preds.get(iid)
            params = run.params
            rs.append(RunSpec(run.slug, None if path is None else str(path),
                              run.overlay_threshold(), bool(params.get("thin", True)),
                              float(params.get("max_dist", DEFAULT_MAX_DIST)),
                              run.boundary is None))
        tasks.append(ImageTask(ds.item(iid), keys[iid], str(out), tuple(rs)))
    infos = {}
    for info in map_items(render_image, tasks, workers=workers, progress=progress,
                          desc="site"):
        infos[info["iid"]] = info
    infos = {iid: infos[iid] for iid in ids}

    subj_taken: set = set()
    subject_keys: dict = {}
    for iid in ids:
        infos[iid]["key"] = keys[iid]
        for ann in infos[iid]["annotators"]:
            uid = ann["subject"]
            if uid is not None and uid not in subject_keys:
                subject_keys[uid] = _key(uid, subj_taken)
            ann["subject_key"] = subject_keys.get(uid)
    human = _human_summary(infos)
    _write_pages(out, ds, ids, infos, runs, ranked, human, subject_keys,
                 title or f"segbench: {ds.name}")
    if progress:
        print(f"site: {out / 'index.html'}", file=sys.stderr)
    return out / "index.html"


# ---------------------------------------------------------------------------------------
# pages


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
        out.append({"iid": iid, "key": info["key"], "best": best,
                    "best_name": who.name if who else None,
                    "best_slug": who.slug if who else None,
                    "photo": info["photo"], "n_humans": len(info["human"])})
    return out


def _order(entries, hard_first: bool):
    def k(e):
        b = e["best"]
        return (math.isnan(b), (b if hard_first else -b) if not math.isnan(b) else 0.0,
                e["iid"])
    return sorted(entries, key=k)


def _write_pages(out, ds, ids, infos, runs, ranked, human, subject_keys, title):
    env = environment()
    _copy_static(out)
    (out / "plots").mkdir(exist_ok=True)
    for sub in ("algorithms", "images") + (("subjects",) if ds.has_subjects else ()):
        (out / sub).mkdir(exist_ok=True)

    from ..boundary import plot_pr
    hpoint = ((human["recall"], human["precision"], human["F"])
              if not math.isnan(human["F"]) else None)
    curve = {r.slug: _curve(r) for r in runs}
    curves = [curve[r.slug] for r in ranked if curve[r.slug] is not None]
    plot_pr(curves, out / "plots" / "pr.png", human=hpoint, title="Boundaries")
    has_plot = {}
    for run in runs:
        c = curve[run.slug]
        has_plot[run.slug] = c is not None
        if c is not None:
            plot_pr([c], out / "plots" / f"{run.slug}.png", human=hpoint)

    has_boundary = any(r.boundary is not None for r in runs)
    has_region = any(r.region is not None for r in runs)
    columns = list(BOUNDARY_COLUMNS if has_boundary or not has_region else ())
    columns += list(REGION_COLUMNS if has_region else ())
    hr = human["region"] or {}
    human_metrics = {"ODS": human["F"], "OIS": human["F"],
                     "covering_ODS": hr.get("covering"), "covering_OIS": hr.get("covering"),
                     "PRI_ODS": hr.get("PRI"), "PRI_OIS": hr.get("PRI"),
                     "VI_ODS": hr.get("VI"), "VI_OIS": hr.get("VI")}
    ranking = [{"rank": i + 1, "name": r.name, "slug": r.slug, "kind": r.kind,
                "date": r.date, "metrics": {k: r.metric(k) for k, _ in columns}}
               for i, r in enumerate(ranked)]
    entries = _image_entries(ids, infos, runs)
    hard, easy = _order(entries, True), _order(entries, False)
    base = {"site_title": title, "version": __version__, "has_subjects": ds.has_subjects,
            "dataset": ds.name, "n_images": len(ids), "has_region": has_region}

    def write(rel: str, template: str, **ctx):
        depth = rel.count("/")
        html = env.get_template(template).render(root="../" * depth, **base, **ctx)
        (out / rel).write_text(html, encoding="utf-8")

    write("index.html", "home.html", page="home", columns=columns, ranking=ranking,
          human=human, human_metrics=human_metrics, hard=hard[:6], easy=easy[:6])
    write("algorithms/index.html", "algorithms.html", page="algorithms",
          runs=[{"name": r.name, "slug": r.slug, "kind": r.kind, "date": r.date,
                 "ods": r.metric("ODS"), "cov": r.metric("covering_ODS"),
                 "n_pred": len(r.preds)} for r in runs])
    for run in runs:
        _write_algorithm(write, run, ids, infos, has_plot[run.slug], columns,
                         ranked.index(run) + 1)
    for name, order, hard_first in (("index.html", hard, True), ("easy.html", easy, False)):
        write(f"images/{name}", "images.html", page="images", entries=order,
              hard_first=hard_first)
    for pos, e in enumerate(hard):
        _write_image(write, e, infos[e["iid"]], ranked,
                     hard[pos - 1] if pos > 0 else None,
                     hard[pos + 1] if pos + 1 < len(hard) else None)
    write("human.html", "human.html", page="human", human=human, subject_keys=subject_keys,
          pairs=sorted(human["pairs"], key=lambda p: (p["iid"], p["k"])))
    if ds.has_subjects:
        _write_subjects(write, infos, ids, human, subject_keys)


def _write_algorithm(write, run, ids, infos, has_plot, columns, rank):
    bd, rg = run.per_item("boundary"), run.per_item("region")
    rows = []
    for iid in ids:
        b, g = bd.get(iid, {}), rg.get(iid, {})
        c = (infos[iid]["runs"].get(run.slug) or {}).get("counts")
        ods = _prf(c) if c else (math.nan,) * 3
        rows.append({"iid": iid, "key": infos[iid]["key"], "photo": infos[iid]["photo"],
                     "threshold": num(b.get("threshold")), "recall": num(b.get("recall")),
                     "precision": num(b.get("precision")), "f": num(b.get("f")),
                     "ods_f": ods[2], "covering": num(g.get("ois_covering")),
                     "pri": num(g.get("pri")), "vi": num(g.get("vi"))})
    m = {k: run.metric(k) for k in ("ODS", "ODS_threshold", "ODS_recall", "ODS_precision",
                                    "OIS", "AP", "R50", "covering_ODS", "covering_OIS",
                                    "covering_best", "PRI_ODS", "PRI_OIS", "VI_ODS",
                                    "VI_OIS")}
    params = run.params
    write(f"algorithms/{run.slug}.html", "algorithm.html", page="algorithms",
          run={"name": run.name, "slug": run.slug, "kind": run.kind, "date": run.date,
               "about": sanitize_html(run.about_html), "rank": rank,
               "has_boundary": run.boundary is not None,
               "has_region": run.region is not None, "has_plot": has_plot,
               "n_pred": len(run.preds),
               "n_thresholds": len(((run.boundary or run.region or {}).get("curves") or {})
                                   .get("thresholds") or []),
               "max_dist": params.get("max_dist")},
          m=m, rows=rows)


def _write_image(write, entry, info, ranked, prev, nxt):
    iid = entry["iid"]
    humans = []
    rows = np.asarray(info["human"], np.int64).reshape(-1, 4)
    reg = np.asarray(info["human_region"], float).reshape(-1, 6)
    for k, ann in enumerate(info["annotators"]):
        r, p, f = _prf(rows[k]) if rows.shape[0] >= 2 else (math.nan,) * 3
        g = reg[k] if k < reg.shape[0] else np.full(6, np.nan)
        humans.append({"k": k, **ann, "recall": r, "precision": p, "f": f,
                       "covering": _ratio(g[0], g[1]), "pri": g[4], "vi": g[5]})
    algs = []
    for run in ranked:
        b = run.per_item("boundary").get(iid, {})
        g = run.per_item("region").get(iid, {})
        got = info["runs"].get(run.slug) or {}
        ods = _prf(got["counts"]) if got.get("counts") else (math.nan,) * 3
        algs.append({"name": run.name, "slug": run.slug, "output": got.get("output", False),
                     "threshold": run.overlay_threshold(), "ods_r": ods[0],
                     "ods_p": ods[1], "ods_f": ods[2], "ois_f": num(b.get("f")),
                     "covering": num(g.get("ois_covering")), "pri": num(g.get("pri")),
                     "vi": num(g.get("vi"))})
    write(f"images/{entry['key']}.html", "image.html", page="images", e=entry,
          info=info, humans=humans, algs=algs, prev=prev, next=nxt)


def _write_subjects(write, infos, ids, human, subject_keys):
    segs: dict = {}
    for iid in ids:
        info = infos[iid]
        for k, ann in enumerate(info["annotators"]):
            if ann["subject"] is None:
                continue
            segs.setdefault(ann["subject"], []).append(
                {"iid": iid, "key": info["key"], "k": k, "kind": ann["kind"],
                 "photo": info["photo"]})
    def order(uid):
        return (0, int(uid), uid) if uid.isdigit() else (1, 0, uid)
    subjects = []
    for uid in sorted(segs, key=order):
        s = human["subjects"].get(uid, {})
        subjects.append({"uid": uid, "key": subject_keys[uid], "n": len(segs[uid]),
                         "f": s.get("f", math.nan), "covering": s.get("covering", math.nan)})
    write("subjects/index.html", "subjects.html", page="subjects", subjects=subjects)
    for s in subjects:
        write(f"subjects/{s['key']}.html", "subject.html", page="subjects", s=s,
              stats=human["subjects"].get(s["uid"], {}), segs=segs[s["uid"]])


# ---------------------------------------------------------------------------------------
# serving


def make_server(site_dir, host: str = "127.0.0.1", port: int = 8000, *, quiet: bool = False):
    """An HTTP server of ``site_dir`` (not yet serving); ``port=0`` picks a free port.

    Serves files only (no directory listings), binds ``127.0.0.1`` unless told
    otherwise. Call ``serve_forever()`` on it, and ``server_close()`` when done.
    """
    import functools
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    root = Path(site_dir)
    if not (root / "index.html").is_file():
        raise InputError("no index.html: not a site folder (build it with segbench site)",
                         root)

    class Handler(SimpleHTTPRequestHandler):
        def list_directory(self, path):
            self.send_error(404, "No such file")
            return None

        def end_headers(self):
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Cache-Control", "no-cache")
            super().end_headers()

        def log_message(self, format, *args):
            if not quiet:
                super().log_message(format, *args)

    handler = functools.partial(Handler, directory=str(root.resolve()))
    try:
        return ThreadingHTTPServer((host, int(port)), handler)
    except OSError as exc:            # port in use, address not on this machine, ...
        raise InputError(f"cannot serve on {host}:{port}: {exc.strerror or exc}"
                         + (" (choose another --port, or 0 for any free one)"
                            if exc.errno == errno.EADDRINUSE else "")) from None


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
