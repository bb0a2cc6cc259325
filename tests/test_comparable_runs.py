"""Runs that cannot be compared are not (issue 28, item 0c): ``compare`` refuses runs
scored against other ground truth or under other settings in one line; the site ranks
them in separate tables, each saying its settings; two runs of one name are told
apart by their folders."""

from __future__ import annotations

import re

import numpy as np
import pytest

from segbench.cli import main
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.io import write_soft_map


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Boundary runs of one detector's maps on 4 synthetic images: the BSR protocol
    twice (two folders, one name), --protocol bsds300, --min-agreement 2, and against
    other ground truth of the same ids."""
    from segbench.algorithms.edges import gradient_magnitude
    base = tmp_path_factory.mktemp("comparable")
    items = make_synthetic_dataset(4, shape=(40, 48), n_annotators=3, seed=7)
    write_synthetic_dataset(base / "data", items, split="test")
    other = make_synthetic_dataset(4, shape=(40, 48), n_annotators=3, seed=8)
    write_synthetic_dataset(base / "other", other, split="test")
    maps = base / "maps" / "gm"
    maps.mkdir(parents=True)
    for it in items:
        write_soft_map(maps / f"{it.iid}.png", gradient_magnitude(it.image))
    gt = base / "data" / "groundTruth" / "test"
    out = {}
    for key, gt_dir, extra in (("a", gt, []), ("b", gt, []),
                               ("bsds300", gt, ["--protocol", "bsds300"]),
                               ("strong", gt, ["--min-agreement", "2"]),
                               ("alpha", gt, ["--alpha", "0.3"]),
                               ("other", base / "other" / "groundTruth" / "test", [])):
        out[key] = base / key / "gm"           # a and b: two folders both named gm
        argv = ["boundary", "--gt", str(gt_dir), "--pred", str(maps), "--out",
                str(out[key]), "--no-plot", "--quiet", *extra]
        assert main(argv) == 0
    out["root"] = base / "data"
    return out


def _refused(capsys, *runs) -> str:
    capsys.readouterr()
    assert main(["compare", *(str(r) for r in runs), "--resamples", "20"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("segbench: error:"), err
    assert "Traceback" not in err
    return err


def test_compare_refuses_runs_of_another_protocol(runs, capsys):
    err = _refused(capsys, runs["a"], runs["bsds300"])
    assert "other settings cannot be compared" in err
    assert "protocol 'bsr' vs 'bsds300'" in err and "nthresh 99 vs 30" in err
    assert str(runs["a"]) in err and str(runs["bsds300"]) in err


def test_compare_refuses_runs_against_strong_boundaries_only(runs, capsys):
    err = _refused(capsys, runs["a"], runs["strong"])
    assert "min_agreement None vs 2" in err


def test_compare_refuses_runs_against_other_ground_truth(runs, capsys):
    err = _refused(capsys, runs["a"], runs["other"])
    assert "other ground truth cannot be compared" in err and "4 of 4 images" in err


def test_compare_of_comparable_runs_of_one_name_tells_them_apart(runs, capsys, tmp_path):
    capsys.readouterr()
    assert main(["compare", str(runs["a"]), str(runs["b"]), "--resamples", "20"]) == 0
    text = capsys.readouterr().out
    assert "gm (a/gm) - gm (b/gm)" in text, text


def _tables(html: str) -> dict:
    """Ranking table id -> (its section's heading, the names ranked in it)."""
    out = {}
    for sec in re.findall(r'<section class="group".*?</section>', html, flags=re.S):
        tid = re.search(r'<table class="sortable ranking" id="([^"]+)"', sec).group(1)
        head = re.search(r"<h2>(.*?)</h2>", sec)
        names = re.findall(r'<td class="name" data-value="([^"]*)"', sec)
        out[tid] = (head.group(1) if head else "", names)
    return out


def test_site_ranks_runs_of_other_settings_in_their_own_tables(runs, tmp_path, capsys):
    site = tmp_path / "site"
    assert main(["site", "--gt", str(runs["root"]), "--results",
                 *(str(runs[k]) for k in ("a", "b", "bsds300", "strong")), "--out",
                 str(site), "--quiet"]) == 0
    capsys.readouterr()
    html = (site / "index.html").read_text()
    assert "<title>Ranking &middot; segbench: " in html        # the site's own title
    tables = _tables(html)
    assert len(tables) == 3, tables
    first = tables["ranking"]
    assert "protocol bsr, 99 thresholds, max_dist 0.0075" in first[0]
    assert sorted(first[1]) == ["gm (a/gm)", "gm (b/gm)"]        # one name, two runs
    rest = {head: names for tid, (head, names) in tables.items() if tid != "ranking"}
    assert any("protocol bsds300, 30 thresholds" in h and len(n) == 1
               for h, n in rest.items()), rest
    assert any("min_agreement 2" in h and len(n) == 1 for h, n in rest.items()), rest
    # each algorithm page says which table it is ranked in
    pages = sorted((site / "algorithms").glob("gm*.html"))
    assert any("min_agreement 2" in p.read_text() for p in pages)


def test_site_of_runs_of_one_setting_is_one_table_as_before(runs, tmp_path, capsys):
    site = tmp_path / "site"
    assert main(["site", "--gt", str(runs["root"]), "--results", str(runs["a"]),
                 "--out", str(site), "--quiet"]) == 0
    capsys.readouterr()
    html = (site / "index.html").read_text()
    assert list(_tables(html)) == ["ranking"] and "<h2>Colour" not in html
    assert "<title>Ranking &middot; segbench: " in html
    assert "protocol bsr" not in html


def test_site_ranks_a_run_of_weighted_f_in_its_own_table(runs, tmp_path, capsys):
    """QA (helper-47): a run scored with --alpha 0.3 was ranked beside plain-F runs,
    its F_0.3 shown as "ODS F", and could rank first."""
    site = tmp_path / "site"
    assert main(["site", "--gt", str(runs["root"]), "--results", str(runs["a"]),
                 str(runs["alpha"]), "--out", str(site), "--quiet"]) == 0
    capsys.readouterr()
    tables = _tables((site / "index.html").read_text())
    assert len(tables) == 2, tables
    assert tables["ranking"][1] == ["gm (a/gm)"]
    (head, names), = (v for k, v in tables.items() if k != "ranking")
    assert "F weighted by alpha 0.3" in head and names == ["gm (alpha/gm)"]
    pages = [p.read_text() for p in sorted((site / "algorithms").glob("gm*.html"))]
    weighted = [p for p in pages if "ODS F<sub>&alpha;=0.3</sub>" in p]
    assert len(pages) == 2 and len(weighted) == 1
    assert "f weighted by alpha 0.3" in weighted[0]     # the table it is ranked in



def test_site_orders_images_by_the_f_of_one_setting(runs, tmp_path, capsys):
    """QA: the hardest images took each image's best F over every run, a lenient
    tolerance's F (another measure) beside the BSR protocol's."""
    import csv
    import re

    lenient = tmp_path / "lenient" / "gm"
    maps = runs["root"].parent / "maps" / "gm"
    gt = runs["root"] / "groundTruth" / "test"
    assert main(["boundary", "--gt", str(gt), "--pred", str(maps), "--out", str(lenient),
                 "--no-plot", "--quiet", "--max-dist", "0.05"]) == 0
    site = tmp_path / "site"
    assert main(["site", "--gt", str(runs["root"]), "--results", str(runs["a"]),
                 str(lenient), "--out", str(site), "--quiet"]) == 0
    capsys.readouterr()

    def per_image_f(run):
        with open(run / "per_item_boundary.csv", newline="") as f:
            return {row["id"]: float(row["f"]) for row in csv.DictReader(f)}

    plain, loose = per_image_f(runs["a"]), per_image_f(lenient)
    assert any(loose[i] > plain[i] + 0.01 for i in plain)  # the test can tell them apart
    shown = dict(re.findall(r'<a href="[^"]+\.html">([^<]+)</a> <span class="score" '
                            r'title="best F">([0-9.]+)</span>',
                            (site / "images" / "index.html").read_text()))
    assert shown and {i: float(v) for i, v in shown.items()} == \
        {i: pytest.approx(plain[i], abs=6e-4) for i in shown}


def test_site_warns_of_a_run_of_none_of_its_images(runs, tmp_path, capsys):
    """QA (helper-47): a run of another split was ranked as a row of dashes ("0 of 200
    images shown") without a word."""
    from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
    other = tmp_path / "other_root"
    import dataclasses
    items = [dataclasses.replace(it, iid="val" + it.iid)   # ids the run does not have
             for it in make_synthetic_dataset(2, shape=(40, 48), n_annotators=2, seed=9)]
    write_synthetic_dataset(other, items, split="test")
    site = tmp_path / "site"
    assert main(["site", "--gt", str(other), "--results", str(runs["a"]), "--out",
                 str(site), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "covers none of the 2 images the site shows" in err, err
