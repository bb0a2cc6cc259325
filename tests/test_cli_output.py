"""One convention in the commands' output (issue 28 item 18): thresholds in per_item.csv
as they are defined, counts worded right, semantic in one unit, a resumed run saying
what it reused."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from segbench.cli import main

N = 6


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A synthetic dataset and two detectors' soft maps."""
    from segbench.algorithms.edges import gradient_magnitude
    from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
    from segbench.io import write_soft_map
    tmp = tmp_path_factory.mktemp("out")
    items = make_synthetic_dataset(N, shape=(90, 120), n_annotators=3, seed=11)
    root = write_synthetic_dataset(tmp / "ds", items)
    for it in items:
        g = gradient_magnitude(it.image)
        write_soft_map(tmp / "gm" / f"{it.iid}.png", g)
        write_soft_map(tmp / "gm2" / f"{it.iid}.png", np.sqrt(g))
    return tmp, root / "groundTruth" / "test"


def boundary(data, pred, out, *extra):
    tmp, gt = data
    return main(["boundary", "--gt", str(gt), "--pred", str(tmp / pred), "--out", str(out),
                 "--quiet", "--no-plot", *extra])


def test_per_item_thresholds_are_printed_as_defined(data, tmp_path):
    """With 9 thresholds k/10, an image whose best F is at a threshold shows 0.3, not
    linspace's 0.30000000000000004; interpolated ones are kept as computed, and the
    official per-image file says the same numbers."""
    out = tmp_path / "run"
    assert boundary(data, "gm", out, "--nthresh", "9") == 0
    rows = list(csv.DictReader((out / "per_item_boundary.csv").open()))
    text = [r["threshold"] for r in rows]
    grid = {repr(k / 10) for k in range(1, 10)}
    on_grid = [t for t in text if t in grid]
    assert on_grid, text                       # this data has some, at 0.3 and 0.7
    for t in text:                             # never 0.30000000000000004
        assert t in grid or min(abs(float(t) - k / 10) for k in range(1, 10)) > 1e-9, t
    official = np.loadtxt(out / "eval_bdry_img.txt")[:, 1]
    np.testing.assert_allclose([float(t) for t in text], official, rtol=1e-5)


def test_compare_says_pair_and_pairs(data, tmp_path, capsys):
    assert boundary(data, "gm", tmp_path / "a", "--name", "a") == 0
    assert boundary(data, "gm2", tmp_path / "b", "--name", "b") == 0
    assert boundary(data, "gm2", tmp_path / "c", "--name", "c", "--max-dist", "0.0075") == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--resamples",
                 "50"]) == 0
    out = capsys.readouterr().out
    assert "one pair, so no Holm correction" in out and "1 pairs" not in out
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), str(tmp_path / "c"),
                 "--resamples", "50"]) == 0
    assert "Holm-corrected across the 3 pairs" in capsys.readouterr().out


def test_human_names_what_it_counts(data, capsys):
    tmp, gt = data
    assert main(["human", "--gt", str(gt), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"({N * 3} image-annotator pairs)" in out, out


def test_a_resumed_run_says_how_many_images_it_reused(data, tmp_path, capsys):
    out = tmp_path / "run"
    assert boundary(data, "gm", out) == 0
    assert "reused" not in capsys.readouterr().err
    assert boundary(data, "gm", out) == 0
    err = capsys.readouterr().err
    assert f"segbench: resumed: {N} of {N} images reused from the records in {out}" in err
    next(out.glob(".segbench-records/boundary/*.json")).unlink()
    assert boundary(data, "gm", out, "--json") == 0
    cap = capsys.readouterr()
    assert (f"resumed: {N - 1} of {N} images reused from the records in {out}; "
            "computing the other 1") in cap.err
    assert cap.out.startswith("{")               # stdout stays the JSON alone


def test_semantic_prints_one_unit(tmp_path, capsys):
    """The table is in percent: so are the intervals beside it."""
    rng = np.random.default_rng(0)
    for d in ("gt", "pred"):
        (tmp_path / d).mkdir()
    for i in range(6):
        g = rng.integers(0, 3, (20, 30)).astype(np.uint8)
        p = g.copy()
        p[rng.random(g.shape) < 0.3] = 1
        Image.fromarray(g).save(tmp_path / "gt" / f"{i}.png")
        Image.fromarray(p).save(tmp_path / "pred" / f"{i}.png")
    assert main(["semantic", "--gt", str(tmp_path / "gt"), "--pred", str(tmp_path / "pred"),
                 "--classes", "3", "--ci", "--resamples", "100", "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    means = next(line for line in lines if line.startswith("mIoU"))
    ci = next(line for line in lines if "intervals" in line)
    for metric in ("mIoU", "mAcc", "aAcc"):
        value = re.search(rf"\b{metric} ([\d.]+)", means).group(1)
        shown = re.search(rf"\b{metric} ([\d.]+) \[([\d.]+), ([\d.]+)\]", ci)
        assert shown.group(1) == value, (means, ci)
        assert float(shown.group(2)) <= float(value) <= float(shown.group(3))
        assert float(value) > 1                          # percent, not a fraction
