"""The site renders records (issue 30): the numbers its pages show are the runs' own
result.json numbers (or the family's summary of their records on the images shown);
a boundary run and a region run of one algorithm are one row; the site runs no
evaluator of its own."""

from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from segbench.report.site import build_site
from test_site_helpers import make_inputs

RANKED = ("ODS", "OIS", "AP", "R50", "covering_ODS", "covering_OIS", "covering_best",
          "PRI_ODS", "PRI_OIS", "VI_ODS", "VI_OIS")


class _Rows(HTMLParser):
    """``{table id: {row key: [data-value of each cell]}}`` of a page; a row's key is
    its ``data-slug``, else the data-value of its first cell."""

    def __init__(self):
        super().__init__()
        self.tables: dict = {}
        self._table = self._row = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._table = self.tables.setdefault(a.get("id"), {})
        elif tag == "tr" and self._table is not None:
            self._row = [a["data-slug"]] if "data-slug" in a else []
        elif tag == "td" and self._row is not None:
            self._row.append(a.get("data-value"))

    def handle_endtag(self, tag):
        if tag == "tr" and self._row:
            key, *cells = self._row
            if key is not None:          # the pinned human row has no key
                self._table[key] = cells
        if tag == "tr":
            self._row = None
        elif tag == "table":
            self._table = None


def _tables(page: Path) -> dict:
    p = _Rows()
    p.feed(page.read_text(encoding="utf-8"))
    return p.tables


def _num(text) -> float:
    return float(text) if text not in (None, "") else math.nan


def _result(folder: Path, family: str) -> dict:
    for name in ("result.json", f"result_{family}.json"):
        p = folder / name
        if p.is_file():
            data = json.loads(p.read_text())
            if data["family"] == family:
                return data
    raise FileNotFoundError(folder)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Small runs: two detectors (boundary), k-means by ``segbench all`` (one folder)
    and the same k-means predictions by a boundary run and a region run under one name
    (two folders)."""
    from segbench import evaluate
    root = tmp_path_factory.mktemp("site-records")
    inputs = make_inputs(root, n_images=3)
    kmeans = root / "predictions" / "kmeans"
    split = []
    for family in ("boundary", "region"):
        out = root / "results" / f"segments-{family}"
        evaluate(family, inputs["gt"], kmeans, out, name="segments", progress=False,
                 **({"plot": False} if family == "boundary" else {}))
        split.append(out)
    runs = [inputs["runs"][0], inputs["runs"][1], inputs["runs"][3], *split]
    site = build_site(inputs["dataset"], runs, root / "site", progress=False,
                      pred_dirs={**inputs["pred_dirs"], split[0]: kmeans,
                                 split[1]: kmeans}).parent
    return {"inputs": inputs, "runs": runs, "split": split, "site": site}


def test_ranking_shows_the_result_json_numbers(made):
    ranking = _tables(made["site"] / "index.html")["ranking"]
    expect = {"gradient": [made["runs"][0]], "canny": [made["runs"][1]],
              "kmeans": [made["runs"][2]], "segments": made["split"]}
    assert set(ranking) == set(expect)            # the split pair is one row
    for slug, folders in expect.items():
        metrics = {}
        for folder in folders:
            for family in ("boundary", "region"):
                try:
                    metrics.update(_result(folder, family)["metrics"])
                except FileNotFoundError:
                    pass
        cells = ranking[slug][2:2 + len(RANKED)]        # after rank and name
        for key, cell in zip(RANKED, cells):
            want = metrics.get(key, math.nan)
            assert _num(cell) == pytest.approx(want, abs=1e-6, nan_ok=True), (slug, key)
    # the split pair shows both families, as the run of 'segbench all' does
    assert ranking["segments"][2:2 + len(RANKED)] == ranking["kmeans"][2:2 + len(RANKED)]


def test_algorithm_pages_show_the_per_item_numbers(made):
    from segbench.report.official import read_ev1
    for slug, folder, region_folder in (("gradient", made["runs"][0], None),
                                        ("kmeans", made["runs"][2], made["runs"][2]),
                                        ("segments", made["split"][0], made["split"][1])):
        rows = _tables(made["site"] / "algorithms" / f"{slug}.html")["per-image"]
        b = _result(folder, "boundary")
        t = b["metrics"]["ODS_threshold"]
        region = ({r["id"]: r for r in _result(region_folder, "region")["per_item"]}
                  if region_folder else {})
        assert set(rows) == {r["id"] for r in b["per_item"]}
        for item in b["per_item"]:
            cells = [_num(c) for c in rows[item["id"]]]
            want = [item["threshold"], item["recall"], item["precision"], item["f"]]
            assert cells[:4] == pytest.approx(want, abs=1e-6), (slug, item["id"])
            # F at the ODS threshold: the run's own counts there (its _ev1.txt row)
            ev = read_ev1(folder / f"{item['id']}_ev1.txt")
            k = min(range(len(ev.thresholds)), key=lambda j: abs(ev.thresholds[j] - t))
            r = ev.cnt_r[k] / ev.sum_r[k] if ev.sum_r[k] else math.nan
            p = ev.cnt_p[k] / ev.sum_p[k] if ev.sum_p[k] else math.nan
            f = 2 * p * r / (p + r) if p + r > 0 else math.nan
            assert cells[4] == pytest.approx(f, abs=1e-6, nan_ok=True), (slug, item["id"])
            if region:
                g = region[item["id"]]
                assert cells[5:8] == pytest.approx([g["ois_covering"], g["pri"], g["vi"]],
                                                   abs=1e-6), (slug, item["id"])


def test_human_page_shows_the_human_families_numbers(made):
    from segbench import evaluate
    gt = made["inputs"]["gt"]
    hb = evaluate("human_boundary", gt, progress=False).metrics
    hr = evaluate("human_region", gt, progress=False).metrics
    html = (made["site"] / "human.html").read_text()
    assert f"<td>Boundary F</td><td>{hb['F']:.3f} " in html
    assert f"<td>Covering</td><td>{hr['covering']:.3f}</td>" in html
    assert f"<td>PRI</td><td>{hr['PRI']:.3f}</td>" in html
    # the records are in the site's cache, and a rebuild reuses them
    cache = made["site"] / ".segbench-cache" / "human-colour" / ".segbench-records"
    assert len(list((cache / "human_boundary").glob("*.json"))) == 3


def test_restricted_view_is_the_summary_of_the_records(made, tmp_path, monkeypatch):
    """--max-images: each run's family summarizes its records of the images shown; no
    per-image file is read and no evaluator runs."""
    import segbench.primitives._boundary_counts as counts
    import segbench.region._image as region_image
    from segbench import evaluate
    from segbench.report import official

    def refuse(*a, **k):
        raise AssertionError("the site evaluated or read an official per-image file")
    for mod, name in ((counts, "evaluate_image"), (region_image, "evaluate_image"),
                      (official, "read_ev1")):
        monkeypatch.setattr(mod, name, refuse)
    inputs = made["inputs"]
    ids = [it.iid for it in inputs["items"][:2]]
    site = build_site(inputs["dataset"], made["runs"], tmp_path / "s", max_images=2,
                      progress=False).parent
    monkeypatch.undo()
    ranking = _tables(site / "index.html")["ranking"]
    fresh_b = evaluate("boundary", inputs["gt"], inputs["root"] / "predictions" / "kmeans",
                       ids=ids, progress=False, plot=False).metrics
    fresh_r = evaluate("region", inputs["gt"], inputs["root"] / "predictions" / "kmeans",
                       ids=ids, progress=False).metrics
    want = {**fresh_b, **fresh_r}
    for slug in ("kmeans", "segments"):
        for key, cell in zip(RANKED, ranking[slug][2:2 + len(RANKED)]):
            assert _num(cell) == pytest.approx(want[key], abs=2e-6, nan_ok=True), (slug, key)


def test_downloads_of_a_merged_run(made):
    page = (made["site"] / "algorithms" / "segments.html").read_text()
    names = re.findall(r'href="\.\./downloads/segments/([^"]+)"', page)
    # each folder's result is named by its family: both are offered, byte for byte
    assert "result_boundary.json" in names and "result_region.json" in names
    assert "eval_cover.txt" in names and "eval_bdry.txt" in names
    got = made["site"] / "downloads" / "segments" / "result_region.json"
    assert got.read_bytes() == (made["split"][1] / "result_region.json").read_bytes()


def _tree(site: Path) -> dict:
    import hashlib
    return {str(p.relative_to(site)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(site.rglob("*")) if p.is_file()}


def test_rebuild_equals_a_fresh_build(made, tmp_path):
    """A rebuild keeps the pictures whose inputs did not change and the human records;
    what it writes is byte for byte what a build into a new folder writes, after runs,
    images and a prediction file changed."""
    import numpy as np

    from segbench.io import write_soft_map
    inputs = made["inputs"]
    preds = tmp_path / "preds"
    preds.mkdir()
    for p in sorted((inputs["root"] / "predictions" / "gradient").iterdir()):
        (preds / p.name).write_bytes(p.read_bytes())
    pred_dirs = {made["runs"][0]: preds, made["runs"][1]: inputs["pred_dirs"][made["runs"][1]]}
    out = tmp_path / "s"
    build_site(inputs["dataset"], made["runs"][:3], out, max_images=2, progress=False,
               pred_dirs=pred_dirs)
    first = next(preds.iterdir())
    write_soft_map(first, np.full((120, 180), 0.25))          # another output
    runs = made["runs"][:2] + made["runs"][3:]
    build_site(inputs["dataset"], runs, out, progress=False, pred_dirs=pred_dirs)
    fresh = build_site(inputs["dataset"], runs, tmp_path / "f", progress=False,
                       pred_dirs=pred_dirs).parent
    assert _tree(out) == _tree(fresh)


def test_a_human_run_lends_its_records(made, tmp_path):
    """A segbench human run folder among the results is no algorithm: its records are
    taken into the site's cache and reused (the engine checks their keys), leaving the
    run folder untouched; the pages equal those of a site that scored the annotators
    itself."""
    from segbench import evaluate
    inputs = made["inputs"]
    human = tmp_path / "human"
    evaluate("human", inputs["gt"], None, human, progress=False)
    before = _tree(human)
    site = build_site(inputs["dataset"], [*made["runs"], human], tmp_path / "s",
                      progress=False, pred_dirs={**inputs["pred_dirs"],
                                                 made["split"][0]: inputs["root"] /
                                                 "predictions" / "kmeans",
                                                 made["split"][1]: inputs["root"] /
                                                 "predictions" / "kmeans"}).parent
    assert _tree(human) == before
    cache = site / ".segbench-cache" / "human-colour" / ".segbench-records"
    for family in ("human_boundary", "human_region"):
        for rec in (human / ".segbench-records" / family).glob("*.json"):
            assert (cache / family / rec.name).read_bytes() == rec.read_bytes()
    ranking = _tables(site / "index.html")["ranking"]
    assert set(ranking) == set(_tables(made["site"] / "index.html")["ranking"])
    for page in ("human.html", "index.html"):
        assert (site / page).read_text() == (made["site"] / page).read_text()


def test_a_consistency_run_shows_on_the_human_page(made, tmp_path):
    """A segbench consistency run folder among the results is no algorithm: the human
    page shows its mean GCE/LCE (those of result_consistency.json) and the 2001 paper's
    figures it holds, copied byte for byte; the ranking is unchanged."""
    from segbench.runners._consistency import run_consistency
    from segbench.engine import RunFolder
    from segbench.report.site import CONSISTENCY_FIGURES
    inputs = made["inputs"]
    folder = tmp_path / "consistency"
    run_consistency(inputs["gt"], folder, pairs=20, progress=False, figures=True,
                    figure_images=3, images=inputs["dataset"] / "images" / "test")
    drawn = [name for name, _ in CONSISTENCY_FIGURES if (folder / name).is_file()]
    assert drawn == [name for name, _ in CONSISTENCY_FIGURES]    # all seven
    site = build_site(inputs["dataset"], [*made["runs"], folder], tmp_path / "s",
                      progress=False, max_images=2).parent
    assert set(_tables(site / "index.html")["ranking"]) == \
        set(_tables(made["site"] / "index.html")["ranking"])
    html = (site / "human.html").read_text()
    m = RunFolder(folder).read("consistency").metrics
    for key in ("GCE_same", "LCE_same", "GCE_different", "LCE_different"):
        assert f"{m[key]:.3f}" in html
    assert f"on <code>{inputs['gt']}</code>" in html        # which ground truth
    for name in drawn:
        assert f'src="consistency/1/{name}"' in html
        assert (site / "consistency" / "1" / name).read_bytes() == \
            (folder / name).read_bytes()
    plain = build_site(inputs["dataset"], made["runs"], tmp_path / "p", progress=False,
                       max_images=2).parent
    assert "Consistency of the segmentations" not in (plain / "human.html").read_text()


def test_a_consistency_run_of_another_split_is_refused(made, tmp_path):
    """Issue 40 item 19: a test-split site refuses a consistency run made on other
    images (a val run), naming the folder, before it writes anything."""
    import shutil

    from segbench.runners._consistency import run_consistency
    from segbench.errors import InputError
    inputs = made["inputs"]
    val = tmp_path / "val-gt"
    val.mkdir()
    for k, mat in enumerate(sorted(inputs["gt"].glob("*.mat"))):
        shutil.copyfile(mat, val / f"val{k:03d}.mat")      # other images: other ids
    folder = tmp_path / "consistency-val"
    run_consistency(val, folder, pairs=10, progress=False, figures=False)
    with pytest.raises(InputError, match=r"not in the site's split 'test'.*another split") \
            as err:
        build_site(inputs["dataset"], [*made["runs"], folder], tmp_path / "s",
                   progress=False, max_images=2)
    assert str(folder) in str(err.value)
    assert not (tmp_path / "s").exists()
