"""SEEDS-recipe UE above 1: the recipe does not keep the [0, 1] its reference states. The
command says so under the number, and UE / (1 + UE) (``ue_norm``, ``--ue normalized``,
``seeds_ue(normalized=True)``) is offered as the figure that stays in range."""

from __future__ import annotations

import json

import numpy as np
import pytest

from segbench.cli import main
from segbench.datasets import write_ground_truth
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.io import write_label_map
from segbench.superpixel import (achanta_ue, normalized_seeds_ue, seeds_ue,
                                 undersegmentation_error)

SHAPE = (20, 20)


def _blocks():
    """Annotator 1: 16 segments of 5 x 5; annotator 2: top and bottom halves."""
    r, c = np.indices(SHAPE)
    return (1 + 4 * (r // 5) + c // 5).astype(np.uint16), (1 + r // 10).astype(np.uint16)


#: Superpixels: the left and the right half (200 px each).
SP = (np.indices(SHAPE)[1] // 10).astype(np.uint16)


@pytest.fixture()
def folders(tmp_path):
    """By hand, T = 400. Annotator 1: each half touches 8 segments and is charged
    7 x 200: UE = 2800 / 400 = 7, normalized 2800 / (2 x 8 x 200) = 7/8. Annotator 2:
    each half touches both: UE = 2 x 200 / 400 = 1, normalized 400 / 800 = 1/2."""
    gt, pred = tmp_path / "gt", tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    write_ground_truth(gt / "a.mat", list(_blocks()))
    write_label_map(pred / "a.png", SP)
    return gt, pred


def test_functions_by_hand():
    fine, halves = _blocks()
    assert seeds_ue(SP, fine) == pytest.approx(7.0)
    assert seeds_ue(SP, fine, normalized=True) == pytest.approx(7 / 8)
    assert seeds_ue(SP, halves, normalized=True) == pytest.approx(0.5)
    assert undersegmentation_error(SP, fine, variant="seeds-normalized") == \
        pytest.approx(7 / 8)
    assert normalized_seeds_ue(7.0) == pytest.approx(7 / 8)


@pytest.mark.parametrize("seed", range(5))
def test_normalized_stays_in_range_and_order(seed):
    rng = np.random.default_rng(seed)
    sp = rng.integers(0, 3, SHAPE)              # few superpixels, many segments
    gt = rng.integers(1, 30, SHAPE)
    ue = seeds_ue(sp, gt)
    assert ue > 1                                # the recipe leaves [0, 1] ...
    un = seeds_ue(sp, gt, normalized=True)
    assert 0 <= un < 1 and un == pytest.approx(ue / (1 + ue))   # ... this does not
    assert un == pytest.approx(normalized_seeds_ue(achanta_ue(sp, gt, min_overlap=0)))


def test_command_reports_both(folders, capsys):
    gt, pred = folders
    assert main(["superpixel", "--gt", str(gt), "--pred", str(pred), "--quiet",
                 "--json"]) == 0
    m = json.loads(capsys.readouterr().out)["metrics"]
    assert m["ue"] == pytest.approx((7 + 1) / 2) and m["ue_best"] == pytest.approx(1)
    assert m["ue_norm"] == pytest.approx((7 / 8 + 1 / 2) / 2)
    assert m["ue_norm_best"] == pytest.approx(0.5)


def test_command_says_the_range_is_not_kept(folders, capsys):
    gt, pred = folders
    assert main(["superpixel", "--gt", str(gt), "--pred", str(pred), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "[0, 1]" in out and "here up to 7.000 against one annotator" in out
    assert "--ue normalized" in out
    assert main(["superpixel", "--gt", str(gt), "--pred", str(pred), "--quiet",
                 "--ue", "normalized"]) == 0
    out = capsys.readouterr().out
    header, mean_row = out.splitlines()[1:3]
    assert "UE-norm" in header and "0.6875" in mean_row
    assert "UE/(1+UE)" in out


def test_sweep_notes_and_normalizes(tmp_path, capsys):
    root = tmp_path / "data"
    write_synthetic_dataset(root, make_synthetic_dataset(2, shape=(40, 56),
                                                         n_annotators=2), split="val")
    argv = ["superpixel-sweep", "--gt", str(root), "--split", "val", "--k", "8,16",
            "--quiet"]
    assert main(argv) == 0
    assert "[0, 1]" in capsys.readouterr().out
    out = tmp_path / "sweep"
    assert main(argv + ["--ue", "normalized", "--out", str(out), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    c = res["curves"]["slic"]
    assert all(0 <= v < 1 for v in c["ue_norm"])
    # a mean of x / (1 + x) is at most the same of the mean (concave)
    assert all(n <= u / (1 + u) + 1e-12 for n, u in zip(c["ue_norm"], c["ue"]))
    assert "ue_norm" in (out / "sweep.csv").read_text().splitlines()[0]
