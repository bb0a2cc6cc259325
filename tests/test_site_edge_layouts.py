"""``segbench site`` over ground truth that is not BSDS (issue 38, item 1: "for the boundary
benchmark (CLI, evaluate, BoundaryEval, site)"): a BIPED tree and a Multicue tree, as
``segbench boundary --gt`` reads them, give a site whose ranking shows the runs' numbers,
whose pages link only files that exist, and that draws no regions for edge maps."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from segbench.cli import main

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def layouts(tmp_path_factory):
    spec = importlib.util.spec_from_file_location(
        "edge_datasets_bench", REPO / "benchmarks" / "edge_datasets.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    root = tmp_path_factory.mktemp("site_edges")
    return root, bench.make_parity_set(root / "data")


def _links(site: Path) -> list:
    broken = []
    for page in site.rglob("*.html"):
        for ref in re.findall(r'(?:src|href)="([^"#?]+)"', page.read_text()):
            if not ref.startswith(("http", "mailto", "data:")) and \
                    not (page.parent / ref).resolve().exists():
                broken.append(f"{page.relative_to(site)} -> {ref}")
    return broken


@pytest.mark.parametrize("layout", ["biped", "multicue"])
def test_a_site_of_an_edge_layout(layouts, layout, capsys):
    root, sets = layouts
    m = sets[layout]
    fmt = ["--gt-format", m["gt_format"]] if m["gt_format"] else []
    run = root / f"run-{layout}"
    assert main(["boundary", "--gt", str(m["gt"]), *fmt, "--pred", str(m["pred"]),
                 "--preset", m["preset"], "--out", str(run), "--quiet"]) == 0
    site = root / f"site-{layout}"
    assert main(["site", "--gt", str(m["gt"]), *fmt, "--results", str(run), "--out",
                 str(site), "--quiet"]) == 0, capsys.readouterr().err
    ods = json.loads((run / "result_boundary.json").read_text())["metrics"]["ODS"]
    index = (site / "index.html").read_text()
    assert f'data-value="{ods:.6g}"' in index
    assert not _links(site)
    pages = list((site / "images").glob("*.html"))
    assert len(pages) > len(json.loads((run / "result_boundary.json").read_text())
                            ["per_item"])       # one per image, and the index pages
    assert not list(site.rglob("h0_r.png"))      # edge maps: no region pictures
    assert list(site.rglob("h0_b.png"))


def test_an_edge_layout_that_is_not_one_is_one_line(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    code = main(["site", "--gt", str(tmp_path / "empty"), "--out", str(tmp_path / "s"),
                 "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err


def test_the_image_page_shows_the_soft_map_and_its_boundaries_at_ods(layouts, capsys):
    """Issue 40 item 17: the page said each output was shown "at its ODS threshold" but
    showed the soft map. Now it shows both, each named: the soft output, and the
    boundaries the benchmark scores at the run's ODS threshold (fewer pixels drawn)."""
    import numpy as np
    from PIL import Image
    root, sets = layouts
    m = sets["biped"]
    run = root / "run-soft"
    assert main(["boundary", "--gt", str(m["gt"]), "--pred", str(m["pred"]), "--preset",
                 m["preset"], "--out", str(run), "--quiet"]) == 0
    site = root / "site-soft"
    assert main(["site", "--gt", str(m["gt"]), "--results", str(run), "--out", str(site),
                 "--quiet"]) == 0
    at = sorted(site.rglob("a_*_at.png"))
    assert at, "no picture at the ODS threshold"
    soft = at[0].with_name(at[0].name.replace("_at.png", ".png"))
    ink = [np.count_nonzero(np.asarray(Image.open(p).convert("L")) < 250) for p in (soft, at[0])]
    assert ink[1] < ink[0]        # thinned and thresholded: fewer pixels than the soft map
    page = next((site / "images").glob(f"{at[0].parent.name}.html"), None) or next(
        p for p in (site / "images").glob("*.html") if at[0].stem in p.read_text())
    text = page.read_text()
    assert "soft output, then its boundaries" in text and at[0].stem in text
