"""The benchmark site: ranking, escaping, links, thumbnails, determinism, serving, CLI."""

from __future__ import annotations

import argparse
import hashlib
import json
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
from segbench.report._site_images import THUMB, human_rows, overlay_counts
from segbench.report.site import build_site, make_server
from test_site_helpers import (HOSTILE_ABOUT, expected_order, internal_links, make_inputs, ranking_slugs,
                               resolve)


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
    m = json.loads((inputs["runs"][0] / "result.json").read_text())["metrics"]
    row = html.split('<tr data-slug="gradient">', 1)[1].split("</tr>", 1)[0]
    assert f">{m['ODS']:.3f}<" in row and f">{m['AP']:.3f}<" in row and "\u2014" in row


def test_images_ordered_by_best_f(site, inputs):
    best = {}
    for d in inputs["runs"]:
        for row in json.loads((d / "result.json").read_text())["per_item"]:
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


def test_thumbnails_link_to_full_size(site, inputs):
    item = inputs["items"][0]
    h, w = item.image.shape[:2]
    page = site / "images" / f"{item.iid}.html"
    p = _Thumbs()
    p.feed(page.read_text())
    # photo, all humans, boundaries + regions per annotator, output + overlay per run
    assert len(p.pairs) == 2 + 2 * len(item.segmentations) + 2 * len(inputs["runs"])
    for full, thumb in p.pairs:
        assert full != thumb
        with Image.open(resolve(page, full)) as im:
            assert im.size == (w, h)
        with Image.open(resolve(page, thumb)) as im:
            assert max(im.size) <= THUMB


def test_overlay_pictures_for_every_run_with_predictions(site, inputs):
    iid = inputs["items"][0].iid
    folder = site / "img" / iid
    names = sorted(p.name for p in folder.glob("a_*_ov.png"))
    assert len(names) == 4      # gradient, canny, hostile (own folder), kmeans (segs)


def test_subjects_pages(site300, inputs):
    subjects = site300 / "subjects"
    assert sorted(p.stem for p in subjects.glob("*.html")) == ["1001", "1002", "1003",
                                                                "index"]
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
    res = json.loads((inputs["runs"][1] / "result.json").read_text())
    res["provenance"]["params"]["pred_dir"] = str(tmp_path / "gone")
    (run / "result.json").write_text(json.dumps(res))
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
    (out / "images" / "stale.html").write_text("old")
    build_site(inputs["dataset"], inputs["runs"][1:2], out, progress=False)
    assert not (out / "images" / "stale.html").exists()
    assert not (out / "algorithms" / "gradient.html").exists()
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(InputError, match="not a segbench site"):
        build_site(inputs["dataset"], [], foreign, progress=False)
    assert (foreign / "notes.txt").read_text() == "keep me"


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
    """Each annotator against the others: cntR, sumR (the others' matched / all pixels),
    cntP, sumP (its own pixels matched to anyone / all). The tolerance (0.0075 of a
    28-pixel diagonal) is below one pixel, so only identical pixels match."""
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
    t = json.loads((run / "result.json").read_text())["metrics"]["ODS_threshold"]
    pred = inputs["pred_dirs"][run]
    for iid in ds.ids:
        spec = RunSpec("g", str(pred / f"{iid}.png"), t, True, 0.0075, False)
        info = render_image(ImageTask(ds.item(iid), iid, str(tmp_path), (spec,)))
        ev = read_ev1(run / f"{iid}_ev1.txt")
        k = int(np.argmin(np.abs(ev.thresholds - t)))
        assert info["runs"]["g"]["counts"] == [int(ev.cnt_r[k]), int(ev.sum_r[k]),
                                               int(ev.cnt_p[k]), int(ev.sum_p[k])]
