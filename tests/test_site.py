"""The benchmark site: ranking, escaping, links, thumbnails, determinism, serving, CLI."""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import re
import shutil
import threading
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from segbench.errors import InputError
from segbench.report._site_html import sanitize_html
from segbench.report._site_images import THUMB, overlay_counts
from segbench.report.site import build_site, make_server
from test_site_helpers import (HOSTILE_ABOUT, expected_order, internal_links, make_inputs,
                               ranking_slugs, resolve)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return make_inputs(tmp_path_factory.mktemp("site-inputs"))


@pytest.fixture(scope="module")
def site(inputs, tmp_path_factory):
    out = tmp_path_factory.mktemp("site") / "site"
    index = build_site(inputs["dataset"], inputs["runs"], out,
                       pred_dirs=inputs["pred_dirs"], progress=False)
    return index.parent


@pytest.fixture(scope="module")
def site_overlays(inputs, tmp_path_factory):
    out = tmp_path_factory.mktemp("site-overlays") / "site"
    return build_site(inputs["dataset"], inputs["runs"], out, pred_dirs=inputs["pred_dirs"],
                      progress=False, overlays=True).parent


@pytest.fixture(scope="module")
def site300(inputs, tmp_path_factory):
    out = tmp_path_factory.mktemp("site300") / "site"
    return build_site(inputs["bsds300"], inputs["runs"][:2], out,
                      pred_dirs=inputs["pred_dirs"], progress=False).parent


def _pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def _tree(site: Path) -> dict:
    return {str(p.relative_to(site)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(site.rglob("*")) if p.is_file()}


# --------------------------------------------------------------------------- pages


def test_pages_exist(site, inputs):
    ids = [it.iid for it in inputs["items"]]
    for rel in ("index.html", "human.html", "algorithms/index.html", "images/index.html",
                "images/easy.html", "static/site.css", "static/site.js", "plots/pr.png"):
        assert (site / rel).is_file(), rel
    for iid in ids:
        assert (site / "images" / f"{iid}.html").is_file()
    assert len(list((site / "algorithms").glob("*.html"))) == 1 + len(inputs["runs"])
    assert not (site / "subjects").exists()      # BSDS500 layout: subjects unknown


def test_ranking_order_and_human_row(site, inputs):
    html = (site / "index.html").read_text()
    assert ranking_slugs(html) == expected_order(inputs["runs"])
    pinned = html.split('<tbody class="pinned">', 1)[1].split("</tbody>", 1)[0]
    assert ">Human</a>" in pinned
    # the region measures appear because one run has them; '—' where a run has none
    assert "Cov ODS" in html and "PRI ODS" in html and "VI OIS" in html
    m = json.loads((inputs["runs"][0] / "result_boundary.json").read_text())["metrics"]
    row = html.split('<tr data-slug="gradient">', 1)[1].split("</tr>", 1)[0]
    assert f">{m['ODS']:.3f}<" in row and f">{m['AP']:.3f}<" in row and "\u2014" in row


def test_images_ordered_by_best_f(site, inputs):
    best = {}
    for d in inputs["runs"]:
        for row in json.loads((d / "result_boundary.json").read_text())["per_item"]:
            best[row["id"]] = max(best.get(row["id"], -1), row["f"])
    hard = sorted(best, key=lambda i: (best[i], i))
    for name, order in (("index.html", hard), ("easy.html", hard[::-1])):
        html = (site / "images" / name).read_text()
        got = [h.split('"', 1)[0] for h in html.split('data-iid="')[1:]]
        assert got == order, name


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_hostile_name_and_about_are_neutralised(site):
    for page in _pages(site):
        text = page.read_text()
        assert "<script>alert" not in text and "<style>" not in text, page
        assert "javascript:" not in text, page
        assert "<iframe" not in text and "<img src=x" not in text, page
        assert "<b>x</b>" not in text, page
        tags = _Tags()
        tags.feed(text)
        for tag, attrs in tags.tags:       # unknown tags show as inert text: no handlers
            assert not any(k.startswith("on") for k in attrs), (page, tag, attrs)
            assert tag not in ("iframe", "style", "svg"), (page, tag)
    home = (site / "index.html").read_text()
    assert "&lt;script&gt;alert(&#34;name&#34;)&lt;/script&gt; &amp; &#34;quotes&#34;" in home
    alg = next(p for p in (site / "algorithms").glob("script*.html"))
    text = alg.read_text()
    assert ('<a href="https://example.org/paper" rel="nofollow noopener">'
            'the paper</a>') in text
    assert "<em>method</em>" in text and "<li>one" in text
    assert "<style>" not in text and "display:none" not in text  # dropped with content
    # the '$' of the name did not break the matplotlib legend: its plot exists
    assert (site / "plots" / f"{alg.stem}.png").stat().st_size > 1000


def test_about_is_sanitized_as_submissions_are():
    """The site renders ``about_html`` through the submission allow-list (one table of
    cases in test_submit.py), as Markup so Jinja2 does not escape it again."""
    from markupsafe import Markup

    from segbench.submit import sanitize_html as submit_sanitize
    out = sanitize_html(HOSTILE_ABOUT)
    assert isinstance(out, Markup) and str(out) == submit_sanitize(HOSTILE_ABOUT)
    assert str(sanitize_html(None)) == ""


def test_internal_links_resolve_on_disk(site, site300):
    for root in (site, site300):
        for page in _pages(root):
            for link in internal_links(page):
                target = resolve(page, link)
                assert target.is_file(), f"{page.relative_to(root)}: {link}"
                assert root.resolve() in target.parents, link   # never outside the site


class _Thumbs(HTMLParser):
    """(href, img src) of every thumbnail link."""

    def __init__(self):
        super().__init__()
        self.pairs, self._href = [], None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and "thumb" in (a.get("class") or "").split():
            self._href = a.get("href")
        elif tag == "img" and self._href is not None:
            self.pairs.append((self._href, a["src"]))

    def handle_endtag(self, tag):
        if tag == "a":
            self._href = None


@pytest.mark.parametrize("with_overlays", [False, True])
def test_thumbnails_link_to_full_size(site, site_overlays, inputs, with_overlays):
    item = inputs["items"][0]
    h, w = item.image.shape[:2]
    page = (site_overlays if with_overlays else site) / "images" / f"{item.iid}.html"
    p = _Thumbs()
    p.feed(page.read_text())
    # photo, all humans, boundaries + regions per annotator, output (+ overlay) per run,
    # and a soft output's boundaries at its ODS threshold (3 soft runs; issue 40 item 17)
    per_run = 2 if with_overlays else 1
    assert len(p.pairs) == 2 + 2 * len(item.segmentations) + per_run * len(
        inputs["runs"]) + 3
    for full, thumb in p.pairs:
        assert full != thumb
        with Image.open(resolve(page, full)) as im:
            assert im.size == (w, h)
        with Image.open(resolve(page, thumb)) as im:
            assert max(im.size) <= THUMB


def test_overlay_pictures_for_every_run_with_predictions(site, site_overlays, inputs):
    iid = inputs["items"][0].iid
    folder = site_overlays / "img" / iid
    names = sorted(p.name for p in folder.glob("a_*_ov.png"))
    assert len(names) == 4      # gradient, canny, hostile (own folder), kmeans (segs)
    # opt-in: by default the site runs no matcher, so draws no overlay
    assert not list((site / "img" / iid).glob("a_*_ov.png"))
    # output per run + at the ODS threshold per soft run, + thumbnails
    assert len(list((site / "img" / iid).glob("a_*.png"))) == 2 * (4 + 3)


def test_subjects_pages(site300, inputs):
    subjects = site300 / "subjects"
    assert sorted(p.stem for p in subjects.glob("*.html")) == ["1001", "1002", "1003",
                                                                "2001", "2002", "index"]
    text = (subjects / "1002.html").read_text()
    for it in inputs["items"]:
        assert f'href="../images/{it.iid}.html"' in text
    human = (site300 / "human.html").read_text()
    assert 'id="human-subjects"' in human and 'href="subjects/1003.html"' in human
    page = (site300 / "images" / f"{inputs['items'][0].iid}.html").read_text()
    assert 'subject <a href="../subjects/1001.html">1001</a> (colour)' in page


def test_human_figures_match_run_human(site, inputs):
    from segbench import evaluate
    h = evaluate("human_boundary", inputs["gt"], progress=False).metrics
    html = (site / "human.html").read_text()
    assert f"<td>Boundary F</td><td>{h['F']:.3f} " in html


def test_missing_predictions_are_not_fatal(inputs, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    res = json.loads((inputs["runs"][1] / "result_boundary.json").read_text())
    res["provenance"]["params"]["pred_dir"] = str(tmp_path / "gone")
    (run / "result_boundary.json").write_text(json.dumps(res))
    site = build_site(inputs["dataset"], [run], tmp_path / "site", progress=False).parent
    page = (site / "images" / f"{inputs['items'][0].iid}.html").read_text()
    assert "output not available" in page


# --------------------------------------------------------------------------- output


def test_deterministic_and_independent_of_workers(inputs, site, tmp_path):
    again = build_site(inputs["dataset"], inputs["runs"], tmp_path / "again",
                       pred_dirs=inputs["pred_dirs"], progress=False, workers=2).parent
    assert _tree(again) == _tree(site)


def test_rebuild_and_refuse_foreign_folder(inputs, tmp_path):
    out = tmp_path / "site"
    build_site(inputs["dataset"], inputs["runs"][:1], out, progress=False)
    assert (out / "algorithms" / "gradient.html").exists()
    build_site(inputs["dataset"], inputs["runs"][1:2], out, progress=False)
    assert not (out / "algorithms" / "gradient.html").exists()  # the last build's page
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(InputError, match="not a segbench site"):
        build_site(inputs["dataset"], [], foreign, progress=False)
    assert (foreign / "notes.txt").read_text() == "keep me"


def test_a_rebuild_keeps_the_users_files_and_refuses_them_in_its_folders(inputs, tmp_path):
    out = tmp_path / "site"
    build_site(inputs["dataset"], inputs["runs"][:1], out, progress=False)
    (out / "about.html").write_text("mine")
    (out / "extra").mkdir()
    (out / "extra" / "paper.pdf").write_text("pdf")
    build_site(inputs["dataset"], inputs["runs"][:1], out, progress=False)
    assert (out / "about.html").read_text() == "mine"
    assert (out / "extra" / "paper.pdf").read_text() == "pdf"
    (out / "images" / "notes.html").write_text("mine too")
    with pytest.raises(InputError, match=r"not written by segbench site: images/notes\.html"):
        build_site(inputs["dataset"], inputs["runs"][:1], out, progress=False)
    assert (out / "images" / "notes.html").read_text() == "mine too"
    assert (out / "index.html").exists()  # refused before anything was removed


def test_a_rebuild_after_an_interrupted_build_takes_its_files_as_the_sites(inputs, tmp_path):
    from segbench.report.site import _prepare_out, _remember_written

    out = tmp_path / "site"
    build_site(inputs["dataset"], inputs["runs"][:1], out, progress=False)
    _prepare_out(out)  # a build starts ...
    _remember_written(out, complete=False)
    (out / "images").mkdir(exist_ok=True)
    (out / "images" / "half-written.html").write_text("...")  # ... and is stopped
    build_site(inputs["dataset"], inputs["runs"][:1], out, progress=False)
    assert not (out / "images" / "half-written.html").exists()
    (out / "images" / "mine.html").write_text("mine")  # after a whole build: the user's
    with pytest.raises(InputError, match="not written by segbench site: images/mine.html"):
        build_site(inputs["dataset"], inputs["runs"][:1], out, progress=False)


def test_a_run_folder_inside_the_site_folder_is_refused(inputs, tmp_path):
    out = tmp_path / "site"
    build_site(inputs["dataset"], [], out, progress=False)
    inside = _copy_run(Path(inputs["runs"][0]), out / "myrun")
    with pytest.raises(InputError, match="inside the site folder"):
        build_site(inputs["dataset"], [inside], out, progress=False)
    assert (inside / "result_boundary.json").is_file()


def test_dataset_only_site(inputs, tmp_path):
    site = build_site(inputs["dataset"], [], tmp_path / "s", progress=False).parent
    assert ranking_slugs((site / "index.html").read_text()) == []
    assert "No algorithm results" in (site / "algorithms" / "index.html").read_text()


def test_bsds300_without_photographs(inputs, tmp_path):
    root = tmp_path / "b300"
    shutil.copytree(inputs["bsds300"] / "human", root / "human")
    site = build_site(root, [], tmp_path / "s", progress=False, max_images=2).parent
    pages = sorted(p.name for p in (site / "images").glob("*.html"))
    assert pages == sorted([f"{it.iid}.html" for it in inputs["items"][:2]] +
                           ["easy.html", "index.html"])
    assert "no photo" in (site / "images" / f"{inputs['items'][0].iid}.html").read_text()
    # no split to name without photographs (issue 40 item 19): not "(unknown)"
    home = (site / "index.html").read_text()
    assert "(unknown)" not in home and "b300 (every segmented image)" in home
    for page in _pages(site):
        for link in internal_links(page):
            assert resolve(page, link).is_file(), link


def test_bad_inputs(inputs, tmp_path):
    with pytest.raises(InputError):
        build_site(tmp_path / "nowhere", [], tmp_path / "s", progress=False)
    with pytest.raises(InputError, match="run folder"):
        build_site(inputs["dataset"], [tmp_path], tmp_path / "s2", progress=False)


# --------------------------------------------------------------------------- pictures


def test_overlay_counts_and_colours():
    h = np.zeros((40, 40), bool)
    h[20, 5:35] = True
    det = np.zeros_like(h)
    det[21, 5:20] = True        # within tolerance: true positives
    det[5, 5:15] = True         # far away: false positives
    pic, counts = overlay_counts(det, [h, h], 0.0075 * 4)
    assert counts.tolist() == [2 * 15, 2 * 30, 15, 25]
    assert tuple(pic[5, 10]) == (178, 204, 255)      # false positive: light blue
    assert tuple(pic[21, 10]) == (0, 178, 0)         # true positive: green
    assert tuple(pic[20, 30]) == (255, 0, 0)         # missed by both annotators: red
    assert tuple(pic[35, 35]) == (255, 255, 255)


def test_human_rows_by_hand():
    """Each annotator against the others, as the site's human rows are made (the
    HUMAN_BOUNDARY family's records, its defaults): cntR, sumR (the others' matched /
    all pixels), cntP, sumP (its own pixels matched to anyone / all). The tolerance
    (0.0075 of a 28-pixel diagonal) is below one pixel, so only identical pixels
    match."""
    from segbench.boundary import HUMAN_BOUNDARY, subject_counts

    def human_rows(maps):
        p = HUMAN_BOUNDARY.resolve({})
        return subject_counts(maps, users=[None] * len(maps), max_dist=p["max_dist"],
                              thin_gt=p["thin_gt"], lone=p["lone"]).counts
    a, b, c = (np.zeros((20, 20), bool) for _ in range(3))
    a[5, 2:12] = True                      # 10 pixels
    b[5, 2:7] = True                       # 5 shared with a
    b[15, 2:5] = True                      # 3 shared with c
    c[15, 2:8] = True                      # 6 pixels
    assert human_rows([a, b, c]).tolist() == [[5, 8 + 6, 5, 10],
                                              [5 + 3, 10 + 6, 8, 8],
                                              [3, 10 + 8, 3, 6]]
    assert human_rows([a, b]).tolist() == [[5, 8, 5, 10], [5, 10, 5, 8]]
    assert human_rows([]).shape == (0, 4)


# --------------------------------------------------------------------------- serve, CLI


def test_server_serves_files_only_on_localhost(site):
    server = make_server(site, port=0, quiet=True)
    assert server.server_address[0] == "127.0.0.1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        with urllib.request.urlopen(base + "/index.html") as r:
            assert r.status == 200 and b"Ranking by algorithm" in r.read()
            assert r.headers["X-Content-Type-Options"] == "nosniff"
        for bad in ("/img/", "/../../etc/passwd", "/nope.html"):   # no listings
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(base + bad)
            assert err.value.code == 404, bad
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(InputError, match="not a site"):
        make_server(site / "img", port=0)


def test_server_stays_inside_the_site_folder(tmp_path):
    """A link in the site folder that leads out of it (QA: ``ln -s /etc leak``) and
    the build's hidden files are not served; a link within the site is."""
    site, outside = tmp_path / "site", tmp_path / "outside"
    (site / "img").mkdir(parents=True)
    outside.mkdir()
    (site / "index.html").write_text("<p>home</p>")
    (site / "img" / "a.png").write_bytes(b"png")
    (site / ".segbench-site").write_text("{}")
    (outside / "secret.txt").write_text("secret")
    (outside / "index.html").write_text("secret index")
    (site / "leak").symlink_to(outside)
    (site / "host.txt").symlink_to(outside / "secret.txt")
    (site / "same.png").symlink_to(site / "img" / "a.png")
    server = make_server(site, port=0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        for good, body in (("/", b"<p>home</p>"), ("/img/a.png", b"png"),
                           ("/same.png", b"png")):
            with urllib.request.urlopen(base + good) as r:
                assert r.status == 200 and r.read() == body, good
        for bad in ("/leak/secret.txt", "/leak/", "/host.txt", "/.segbench-site"):
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(base + bad)
            assert err.value.code == 404, bad
    finally:
        server.shutdown()
        server.server_close()


def test_cli_parsers(inputs, tmp_path, capsys):
    from segbench.cli.site import add_parsers
    parser = argparse.ArgumentParser(prog="segbench")
    add_parsers(parser.add_subparsers(dest="command", required=True))
    a = parser.parse_args(["serve", "somewhere"])
    assert (a.host, a.port) == ("127.0.0.1", 8000)
    out = tmp_path / "site"
    a = parser.parse_args(["site", "--dataset", str(inputs["dataset"]), "--results",
                           str(inputs["runs"][0]), str(inputs["runs"][3]), "--out",
                           str(out), "--quiet"])
    assert a.func(a) == 0
    assert capsys.readouterr().out.strip() == str(out / "index.html")
    assert ranking_slugs((out / "index.html").read_text()) == ["gradient", "kmeans"]


def test_demo_site(inputs, tmp_path):
    from segbench.report.demo_site import build_demo_site
    demo = tmp_path / "demo"
    (demo / "results").mkdir(parents=True)
    for d in inputs["runs"][:2]:
        (demo / "results" / d.name).mkdir()
        for f in d.iterdir():
            if f.is_file():
                (demo / "results" / d.name / f.name).write_bytes(f.read_bytes())
    (demo / "predictions").symlink_to(inputs["root"] / "predictions")
    (demo / "dataset").symlink_to(inputs["dataset"])
    index = build_demo_site(demo, progress=False)
    assert index == demo / "site" / "index.html"
    assert "<title>Ranking &middot; segbench demo</title>" in index.read_text()
    assert len(list((demo / "site" / "img").glob("*/a_*_ov.png"))) == 2 * len(
        inputs["items"])


def test_overlay_counts_equal_the_benchmark_counts_at_ods(inputs, tmp_path):
    """The pictures' counts are the run's own ``_ev1.txt`` row at its ODS threshold."""
    from segbench.report._site_data import open_dataset
    from segbench.report._site_images import ImageTask, RunSpec, render_image
    from segbench.report.official import read_ev1
    ds = open_dataset(inputs["dataset"])
    run = inputs["runs"][0]
    t = json.loads((run / "result_boundary.json").read_text())["metrics"]["ODS_threshold"]
    pred = inputs["pred_dirs"][run]
    for iid in ds.ids:
        spec = RunSpec("g", str(pred / f"{iid}.png"), t, True, 0.0075, False, overlay=True)
        info = render_image(ImageTask(ds.item(iid), iid, str(tmp_path), (spec,)))
        ev = read_ev1(run / f"{iid}_ev1.txt")
        k = int(np.argmin(np.abs(ev.thresholds - t)))
        assert info["runs"]["g"]["counts"] == [int(ev.cnt_r[k]), int(ev.sum_r[k]),
                                               int(ev.cnt_p[k]), int(ev.sum_p[k])]


# --------------------------------------------------------------------------- issue 16.6


def _table(html: str, table_id: str) -> str:
    return html.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]


def _row_values(html: str, table_id: str, slug: str) -> list[str]:
    """data-value of every cell of a ranking row: rank, name, the measures, date."""
    row = _table(html, table_id).split(f'<tr data-slug="{slug}">', 1)[1].split("</tr>")[0]
    return re.findall(r'<td[^>]*data-value="([^"]*)"', row)


def _pinned(html: str, table_id: str) -> str:
    return _table(html, table_id).split('<tbody class="pinned">', 1)[1].split("</tbody>")[0]


@pytest.fixture(scope="module")
def site_grey(inputs, tmp_path_factory):
    out = tmp_path_factory.mktemp("site-grey") / "site"
    return build_site(inputs["bsds300"], inputs["runs"] + [inputs["grey_run"]], out,
                      pred_dirs=inputs["pred_dirs"], progress=False).parent


def test_colour_and_grey_rankings(site_grey, inputs):
    """BSDS300 colour and greyscale presentations are ranked apart, each with its own
    human row: each segmentation against the others of its presentation."""
    from segbench import evaluate
    html = (site_grey / "index.html").read_text()
    colour = re.findall(r'<tr data-slug="([^"]+)"', _table(html, "ranking"))
    grey = re.findall(r'<tr data-slug="([^"]+)"', _table(html, "ranking-grey"))
    assert colour == expected_order(inputs["runs"]) and grey == ["gradient-grey"]
    human = inputs["bsds300"] / "human"
    for table, gt, pres in (("ranking", human / "color", None),
                            ("ranking-grey", human / "gray", "gray")):
        f = evaluate("human_boundary", gt, presentation=pres, progress=False).metrics["F"]
        assert f"<td>{f:.3f}</td>" in _pinned(html, table), table
    # the grey run's figures are its own (scored against the grey segmentations)
    m = json.loads((inputs["grey_run"] / "result_boundary.json").read_text())["metrics"]
    assert _row_values(html, "ranking-grey", "gradient-grey")[2:4] == [
        repr(round(m["ODS"], 6)), repr(round(m["OIS"], 6))]
    human_page = (site_grey / "human.html").read_text()
    assert 'id="human-colour"' in human_page and 'id="human-grey"' in human_page
    assert (site_grey / "plots" / "pr-grey.png").is_file()
    alg = (site_grey / "algorithms" / "gradient-grey.html").read_text()
    assert "Rank 1 of 1 (greyscale images)" in alg


def test_grey_overlay_counts_are_the_grey_run_counts(inputs, tmp_path):
    """A grey run's overlay is matched against the grey segmentations only: its counts
    are the run's own ``_ev1.txt`` row at its ODS threshold."""
    from segbench.report._site_data import open_dataset
    from segbench.report._site_images import ImageTask, RunSpec, render_image
    from segbench.report.official import read_ev1
    ds = open_dataset(inputs["bsds300"])
    run = inputs["grey_run"]
    t = json.loads((run / "result_boundary.json").read_text())["metrics"]["ODS_threshold"]
    pred = inputs["pred_dirs"][run]
    for iid in ds.ids:
        spec = RunSpec("g", str(pred / f"{iid}.png"), t, True, 0.0075, False, "grey",
                       overlay=True)
        info = render_image(ImageTask(ds.item(iid), iid, str(tmp_path), (spec,)))
        ev = read_ev1(run / f"{iid}_ev1.txt")
        k = int(np.argmin(np.abs(ev.thresholds - t)))
        assert info["runs"]["g"]["counts"] == [int(ev.cnt_r[k]), int(ev.sum_r[k]),
                                               int(ev.cnt_p[k]), int(ev.sum_p[k])]
        assert [a["kind"] for a in info["annotators"]] == ["colour"] * 3 + ["grey"] * 2


def _expected_segmentation_scores(root) -> dict:
    """(uid, iid) -> F of that segmentation against the other segmentations of the
    image of the same presentation, through the benchmark's own evaluate_image (the
    segmentation's boundary map as a binary detection, not thinned again)."""
    from segbench.boundary import evaluate_image, summarize_human
    from segbench.datasets import open_dataset
    out = {}
    for item in open_dataset(root, presentation="all").items():
        anns = item.annotations
        for k, a in enumerate(anns):
            others = [b.boundaries for j, b in enumerate(anns) if j != k and b.gray == a.gray]
            if not others:
                continue
            c = evaluate_image(a.boundaries.astype(float), others, thresholds=[0.5],
                               thin=False)
            f = summarize_human([c.cnt_r[0], c.sum_r[0], c.cnt_p[0], c.sum_p[0]])[2]
            out[str(a.user), item.iid] = f
    return out


def _subject_scores(site: Path) -> dict:
    got = {}
    for page in (site / "subjects").glob("*.html"):
        if page.stem == "index":
            continue
        for iid, f in re.findall(r'<tr data-iid="([^"]+)">.*?<td class="f" data-value="'
                                 r'([^"]*)"', page.read_text(), flags=re.DOTALL):
            got[page.stem, iid] = float(f) if f else math.nan
    return got


def test_subject_pages_score_each_segmentation(site_grey, inputs):
    expected = _expected_segmentation_scores(inputs["bsds300"])
    got = _subject_scores(site_grey)
    assert set(got) == set(expected) and len(got) == 5 * len(inputs["items"])
    for key, f in expected.items():
        assert got[key] == pytest.approx(f, abs=1e-6), key
    page = (site_grey / "subjects" / "2001.html").read_text()
    assert "(grey)" in page and "against 1 other" in page


def test_max_images_recomputes_every_figure(inputs, tmp_path):
    """With --max-images every figure is that of the images shown: the same as a fresh
    benchmark run on those images."""
    from segbench import evaluate
    ids = [it.iid for it in inputs["items"][:2]]
    site = build_site(inputs["dataset"], inputs["runs"], tmp_path / "s", max_images=2,
                      pred_dirs=inputs["pred_dirs"], progress=False).parent
    html = (site / "index.html").read_text()
    preds = {"gradient": "gradient", "canny": "canny", "hostile": "gradient",
             "kmeans": "kmeans"}
    slugs = dict(zip(preds, (expected_order([d])[0] for d in inputs["runs"])))
    for run in inputs["runs"]:
        pred = inputs["root"] / "predictions" / preds[run.name]
        fresh = evaluate("boundary", inputs["gt"], pred, ids=ids, progress=False,
                         plot=False).metrics
        values = _row_values(html, "ranking", slugs[run.name])
        for k, key in enumerate(("ODS", "OIS", "AP", "R50"), start=2):
            want = fresh[key]
            assert (float(values[k]) if values[k] else math.nan) == pytest.approx(
                want, abs=2e-6, nan_ok=True), (run.name, key)
        page = (site / "algorithms" / f"{slugs[run.name]}.html").read_text()
        assert f"threshold {fresh['ODS_threshold']:.2f})" in page
        assert "recomputed on the 2 images shown" in page
    region = evaluate("region", inputs["gt"], inputs["root"] / "predictions" / "kmeans",
                      ids=ids, progress=False).metrics
    values = _row_values(html, "ranking", "kmeans")
    for k, key in enumerate(("covering_ODS", "covering_OIS", "covering_best", "PRI_ODS",
                             "PRI_OIS", "VI_ODS", "VI_OIS"), start=6):
        assert float(values[k]) == pytest.approx(region[key], abs=2e-6), key
    human = evaluate("human_boundary", inputs["gt"], ids=ids, progress=False).metrics
    assert f"<td>{human['F']:.3f}</td>" in _pinned(html, "ranking")
    assert "\u2020" not in html and "notes-colour" not in html      # nothing flagged
    assert "summarized on these from their per-image records" in html


def _copy_run(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".segbench-records"))
    return dst


def test_figures_that_cannot_be_recomputed_are_flagged(inputs, tmp_path):
    run = _copy_run(inputs["runs"][1], tmp_path / "bare")
    for p in run.glob("*_ev1.txt"):
        p.unlink()
    site = build_site(inputs["dataset"], [run], tmp_path / "s", max_images=2,
                      progress=False).parent
    html = (site / "index.html").read_text()
    m = json.loads((run / "result_boundary.json").read_text())["metrics"]
    row = html.split('<tr data-slug="canny">', 1)[1].split("</tr>", 1)[0]
    assert f">{m['ODS']:.3f}<span class=\"flag\"" in row and row.count("&dagger;") == 4
    assert 'href="#notes-colour"' in row
    notes = html.split('id="notes-colour"', 1)[1].split("</ul>", 1)[0]
    assert "on all 3 images it evaluated, not on the 2 shown" in notes
    page = (site / "algorithms" / "canny.html").read_text()
    assert '<p class="caveat">' in page and "not on the 2 shown" in page
    # all images shown: the run's own figures are those of the images shown
    site = build_site(inputs["dataset"], [run], tmp_path / "s2", progress=False).parent
    assert "&dagger;" not in (site / "index.html").read_text()


def test_run_covering_fewer_images_is_flagged(inputs, tmp_path):
    from segbench import evaluate
    run = tmp_path / "two"
    evaluate("boundary", inputs["gt"], inputs["root"] / "predictions" / "canny", run,
             ids=[it.iid for it in inputs["items"][:2]], progress=False, plot=False)
    site = build_site(inputs["dataset"], [run], tmp_path / "s", progress=False).parent
    html = (site / "index.html").read_text()
    assert "on 2 of the 3 images shown" in html and 'href="#notes-colour"' in html


def _with_intervals(src: Path, dst: Path) -> Path:
    run = Path(shutil.copytree(src, dst))       # with its records: a view reads them
    res = json.loads((run / "result_boundary.json").read_text())
    res["intervals"] = {"ODS": [0.55, 0.6], "OIS": [0.58, 0.63], "AP": [0.4, 0.5],
                        "R50": [None, None]}
    res["provenance"]["ci"] = {"resamples": 1000, "level": 0.95, "seed": 0}
    (run / "result_boundary.json").write_text(json.dumps(res))
    return run


def test_intervals_in_the_ranking(inputs, tmp_path):
    run = _with_intervals(inputs["runs"][1], tmp_path / "canny-ci")
    site = build_site(inputs["dataset"], [run, inputs["runs"][0]], tmp_path / "s",
                      progress=False).parent
    html = (site / "index.html").read_text()
    m = json.loads((run / "result_boundary.json").read_text())["metrics"]
    row = html.split('<tr data-slug="canny">', 1)[1].split("</tr>", 1)[0]
    assert f'>{m["ODS"]:.3f}<span class="ci">[0.550, 0.600]</span></td>' in row
    assert '<span class="ci">[undefined]</span>' in row                  # R50
    other = html.split('<tr data-slug="gradient">', 1)[1].split("</tr>", 1)[0]
    assert 'class="ci"' not in other                         # absent: unchanged
    assert "95% bootstrap intervals over images" in html
    page = (site / "algorithms" / "canny.html").read_text()
    assert "[0.550, 0.600]" in page
    assert "95% bootstrap percentile intervals over images, 1000 resamples, seed 0" in page
    # recomputed on fewer images: the intervals (of all images) are not shown
    site = build_site(inputs["dataset"], [run], tmp_path / "s2", max_images=2,
                      progress=False).parent
    assert 'class="ci"' not in (site / "index.html").read_text()
    assert "intervals not shown" in (site / "algorithms" / "canny.html").read_text()


def test_vs_next_column_is_the_paired_bootstrap_p(inputs, tmp_path):
    """Each ranked run's cell: the Holm-corrected p of the paired bootstrap of its ODS
    difference with the next row, as segbench.compare gives it on the same images."""
    from segbench.comparison import compare, holm
    from segbench.report._site_runs import load_run, rank_runs
    runs = inputs["runs"][:3]
    html = (build_site(inputs["dataset"], runs, tmp_path / "a",
                       progress=False).parent / "index.html").read_text()
    ranked = rank_runs([load_run(Path(r)) for r in runs])
    raw = [compare(a.dir, b.dir)["pairs"][0]["bootstrap"]["ODS"]["p"]
           for a, b in zip(ranked, ranked[1:])]
    assert "vs. next" in html and len(raw) == 2
    for p in holm(raw):
        text = f"p = {p:.3f}" if p >= 0.001 else f"p = {p:.0e}"
        assert f'data-value="{p!r}">{text}</td>' in html or \
            f">{text}</td>" in html


def test_vs_next_column_hook(inputs, tmp_path, monkeypatch):
    """The "vs. next" column is hidden while the hook returns no cell text."""
    import segbench.report.site as site_mod
    monkeypatch.setattr(site_mod, "vs_next", lambda ranked, ids: [None] * len(ranked))
    html = (build_site(inputs["dataset"], inputs["runs"][:2], tmp_path / "a",
                       progress=False).parent / "index.html").read_text()
    assert "vs. next" not in html
    seen = {}

    def fake(ranked, ids):
        seen["ids"] = list(ids)
        return [("p = 0.012", 0.012)] + [None] * (len(ranked) - 1)
    monkeypatch.setattr(site_mod, "vs_next", fake)
    html = (build_site(inputs["dataset"], inputs["runs"][:2], tmp_path / "b",
                       progress=False).parent / "index.html").read_text()
    assert seen["ids"] == [it.iid for it in inputs["items"]]
    assert '<th data-sort="num" data-lower-better title="paired' in html
    assert '<td class="vs-next" data-value="0.012">p = 0.012</td>' in html


def test_algorithms_ordered_by_benchmark_date(inputs, tmp_path):
    dates = {"a": (None, "2025-03-01T09:00:00+00:00"),
             "b": ("2024-06-01T10:00:00Z", "2026-01-01T00:00:00+00:00"),   # submission
             "c": (None, "2025-03-01T09:00:00+02:00"),                      # = 07:00 UTC
             "d": (None, None)}
    runs = []
    for name, (meta, created) in dates.items():
        run = _copy_run(inputs["runs"][0], tmp_path / name)
        res = json.loads((run / "result_boundary.json").read_text())
        res["name"] = name
        if created is None:
            del res["provenance"]["created"]
        else:
            res["provenance"]["created"] = created
        (run / "result_boundary.json").write_text(json.dumps(res))
        if meta:
            (run / "meta.json").write_text(json.dumps({"date": meta}))
        runs.append(run)
    site = build_site(inputs["dataset"], runs[::-1], tmp_path / "s", progress=False).parent
    page = (site / "algorithms" / "index.html").read_text()
    assert re.findall(r'<tr data-slug="([^"]+)"', page) == ["b", "c", "a", "d"]
    assert 'data-value="2024-06-01T10:00:00" title="2024-06-01T10:00:00Z">2024-06-01<' in page
    home = (site / "index.html").read_text()
    assert "when the algorithm was benchmarked" in home
    assert _row_values(home, "ranking", "c")[-1] == "2025-03-01T07:00:00"


def test_run_names_cannot_take_the_site_pages(inputs, tmp_path):
    runs = []
    for name in ("index", "pr"):
        run = _copy_run(inputs["runs"][0], tmp_path / name)
        (run / "meta.json").write_text(json.dumps({"name": name}))
        runs.append(run)
    site = build_site(inputs["dataset"], runs, tmp_path / "s", progress=False).parent
    assert "By algorithm" in (site / "algorithms" / "index.html").read_text()
    assert {p.name for p in (site / "plots").iterdir()} == {"pr.png", "index-2.png",
                                                             "pr-2.png"}


def test_downloads_are_the_run_files(site, inputs):
    # each family's result and per-item table, then the official files, families in
    # the registry's order (an older run's result.json in the place of its family)
    order = ("result_boundary.json", "per_item_boundary.csv", "result.json",
             "per_item.csv", "result_region.json", "per_item_region.csv",
             "eval_bdry.txt", "eval_bdry_thr.txt", "eval_bdry_img.txt",
             "eval_cover.txt", "eval_cover_th.txt", "eval_cover_img.txt",
             "eval_RI_VOI.txt", "eval_RI_VOI_thr.txt")
    for run in inputs["runs"]:
        slug = expected_order([run])[0]
        page = site / "algorithms" / f"{slug}.html"
        links = [lk for lk in internal_links(page) if lk.startswith("../downloads/")]
        names = [lk.rsplit("/", 1)[1] for lk in links]
        assert names == [n for n in order if (run / n).is_file()]
        assert {"result_boundary.json", "per_item_boundary.csv", "eval_bdry.txt",
                "eval_bdry_thr.txt", "eval_bdry_img.txt"} <= set(names)
        for link in links:
            assert link == f"../downloads/{slug}/{link.rsplit('/', 1)[1]}"
            assert resolve(page, link).read_bytes() == (run / link.rsplit("/", 1)[1]
                                                        ).read_bytes()
    kmeans = [lk.rsplit("/", 1)[1] for lk in internal_links(site / "algorithms" /
                                                            "kmeans.html")
              if lk.startswith("../downloads/")]
    assert {"result_region.json", "eval_cover.txt", "eval_RI_VOI.txt"} <= set(kmeans)


def test_ranking_columns_are_all_sortable(site_grey):
    html = (site_grey / "index.html").read_text()
    for table in ("ranking", "ranking-grey"):
        head = _table(html, table).split("</thead>", 1)[0]
        ths = re.findall(r"<th(?:\s[^>]*)?>", head)
        assert len(ths) >= 7 and all("data-sort=" in th for th in ths), ths


def test_real_bsds300_subjects_and_grey(tmp_path):
    """The BSDS300 segmentations (colour, and two of them copied as greyscale): subject
    pages score every segmentation as the benchmark would."""
    from conftest import DATA, require

    from segbench.io import read_seg, write_seg
    src = require(DATA / "bsds300-seg-subset" / "human" / "color")
    root = tmp_path / "BSDS300"
    shutil.copytree(src, root / "human" / "color")
    by_image: dict = {}
    for f in sorted(src.glob("*/*.seg")):
        by_image.setdefault(f.stem, []).append(f)
    files = max(sorted(by_image.items()), key=lambda kv: len(kv[1]))[1]
    for k, f in enumerate(files[:2]):
        seg = read_seg(f)
        grey = root / "human" / "gray" / str(9001 + k) / f.name
        grey.parent.mkdir(parents=True)
        write_seg(grey, dataclasses.replace(seg, gray=True, user=9001 + k))
        assert b"gray 1" in grey.read_bytes()
    site = build_site(root, [], tmp_path / "site", progress=False).parent
    expected = _expected_segmentation_scores(root)
    got = _subject_scores(site)
    assert set(got) == set(expected) and len(got) > 30
    for key, f in expected.items():
        assert got[key] == pytest.approx(f, abs=1e-6), key
    html = (site / "index.html").read_text()
    from segbench import evaluate
    for table, gt, pres in (("ranking", root / "human" / "color", None),
                            ("ranking-grey", root / "human" / "gray", "gray")):
        f = evaluate("human_boundary", gt, presentation=pres, progress=False).metrics["F"]
        assert f"<td>{f:.3f}</td>" in _pinned(html, table), table
    for page in _pages(site):
        for link in internal_links(page):
            assert resolve(page, link).is_file(), (page, link)


def test_site_of_a_fresh_annotation_tree_says_no_one_to_compare_with(tmp_path, capsys):
    """A tree written by ``segbench annotate`` where each image has one subject (a
    fresh collection): the subject page says there is no one to compare with; no crash."""
    from segbench.annotate.server import make_server as annotate_server
    from segbench.cli import main
    images = tmp_path / "images"
    images.mkdir()
    rng = np.random.default_rng(0)
    for k in range(2):
        Image.fromarray(rng.integers(0, 255, (16, 24, 3), dtype=np.uint8)).save(
            images / f"im{k:02d}.png")
    srv = annotate_server(images, tmp_path / "gt", port=0, subject="ana")
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        lab = (np.arange(16 * 24).reshape(16, 24) // 100 % 3).astype("<u2")
        req = urllib.request.Request(srv.url.rstrip("/") + "/api/submit/im01",
                                     data=lab.tobytes(), method="POST",
                                     headers={"X-Segbench": "1", "X-Segments": "3"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            assert resp.status == 200
    finally:
        srv.shutdown()
        srv.server_close()
    assert main(["site", "--gt", str(tmp_path / "gt"), "--out", str(tmp_path / "site"),
                 "--quiet"]) == 0
    capsys.readouterr()
    page = (tmp_path / "site" / "subjects" / "1.html").read_text()
    assert "no one to compare with" in page
    assert "pooled against" not in page


def test_compact_pictures_hold_the_same_pixels(tmp_path):
    """Human pictures are written bilevel / palette: decoded, the same pixels as the
    RGB and grey arrays they replace (unlabelled pixels white, edges darkened), and the
    RGB array where there are too many regions for a palette."""
    from PIL import Image

    from segbench.report._site_images import (MAX_PALETTE_REGIONS, _picture,
                                              boundary_image, boundary_picture,
                                              region_image, region_picture)
    rng = np.random.default_rng(3)
    seg = np.repeat(np.repeat(rng.integers(0, 9, (6, 8)), 5, 0), 7, 1)  # 0: unlabelled
    assert (seg == 0).any()
    names = _picture(region_image(seg), tmp_path / "r.png")
    with Image.open(tmp_path / names[0]) as im:
        assert im.mode == "P"
        assert (np.asarray(im.convert("RGB")) == region_picture(seg)).all()
    bmap = seg != np.roll(seg, 1, axis=1)
    _picture(boundary_image(bmap), tmp_path / "b.png", lines=True)
    with Image.open(tmp_path / "b.png") as im:
        assert im.mode == "1"
        assert (np.asarray(im.convert("L")) == boundary_picture(bmap)).all()
    many = np.arange(40 * 40).reshape(40, 40) // 10 + 1        # 160 regions
    assert many.max() > MAX_PALETTE_REGIONS
    fallback = region_image(many)
    assert isinstance(fallback, np.ndarray)
    assert (fallback == region_picture(many)).all()
