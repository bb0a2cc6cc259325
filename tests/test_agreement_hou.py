"""Hou, Yuille and Koch (2013) agreement figures: orphan and unanimous fractions counted
in labels (a boundary drawn by l annotators is one label), checked by hand on a tiny set
and against the paper's figures on the real BSDS data."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import segbench
from conftest import DATA, require
from segbench.runners._agreement import run_agreement
from segbench.cli import main
from segbench.datasets import write_ground_truth
from segbench.errors import InputError

SHAPE = (20, 20)
#: 1.5 px on a 20x20 image: the lines below are 4 px or more apart, none within reach.
MD15 = 1.5 / math.hypot(*SHAPE)


def _map(*segments):
    b = np.zeros(SHAPE, bool)
    for rows, cols in segments:
        b[rows, cols] = True
    return b


#: Drawn by all three: column 5, rows 2..11 (10 px each, 10 labels).
ALL3 = (slice(2, 12), 5)
#: Drawn by annotator A only: column 15, rows 2..5 (4 px, 4 labels).
ONLY_A = (slice(2, 6), 15)
#: Drawn by A and B: row 16, columns 2..7 (6 px each, 6 labels).
A_AND_B = (16, slice(2, 8))


@pytest.fixture()
def hand_gt(tmp_path):
    """Image ``h``: K = 3; 46 boundary pixels, 20 labels: 4 orphan, 6 of level 2, 10
    unanimous. Image ``g``: K = 2, both annotators draw the same 8 px (8 labels)."""
    root = tmp_path / "gt"
    root.mkdir()
    seg = np.ones(SHAPE, np.uint16)
    write_ground_truth(root / "h.mat", [seg] * 3, boundaries=[
        _map(ALL3, ONLY_A, A_AND_B), _map(ALL3, A_AND_B), _map(ALL3)])
    write_ground_truth(root / "g.mat", [seg] * 2,
                       boundaries=[_map((slice(4, 12), 9))] * 2)
    return root


def _json(argv, capsys):
    assert main(argv + ["--quiet", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_labels_by_hand(hand_gt, capsys):
    res = _json(["agreement", "--gt", str(hand_gt), "--ids", "h", "--max-dist", str(MD15)],
                capsys)
    m = res["metrics"]
    assert m["orphan_fraction"] == pytest.approx(4 / 20)
    assert m["unanimous_fraction"] == pytest.approx(10 / 20)
    assert m["level_2"] == pytest.approx(6 / 20)
    assert m["n_labels"] == pytest.approx(20) and m["n_boundary_pixels"] == 46
    # both units are given whatever the headline unit
    assert m["orphan_pixel_fraction"] == pytest.approx(4 / 46)
    assert m["unanimous_pixel_fraction"] == pytest.approx(30 / 46)
    assert res["curves"]["labels"] == pytest.approx([4, 6, 10])
    assert res["curves"]["pixels"] == [4, 12, 30]
    assert res["provenance"]["params"]["unit"] == "label"
    row, = res["per_item"]
    assert row["labels"] == pytest.approx(20) and row["orphan_fraction"] == \
        pytest.approx(0.2)


def test_pixel_unit_keeps_the_old_count(hand_gt, capsys):
    m = _json(["agreement", "--gt", str(hand_gt), "--ids", "h", "--max-dist", str(MD15),
               "--unit", "pixel"], capsys)["metrics"]
    assert m["orphan_fraction"] == pytest.approx(4 / 46)
    assert m["unanimous_fraction"] == pytest.approx(30 / 46)
    assert m["orphan_label_fraction"] == pytest.approx(4 / 20)


def test_images_pool_labels(hand_gt, capsys):
    """Labels of both images pooled: 28, of which 4 orphan and 10 + 8 unanimous."""
    m = _json(["agreement", "--gt", str(hand_gt), "--max-dist", str(MD15)],
              capsys)["metrics"]
    assert m["orphan_fraction"] == pytest.approx(4 / 28)
    assert m["unanimous_fraction"] == pytest.approx(18 / 28)
    assert m["orphan_fraction_image_mean"] == pytest.approx((4 / 20 + 0) / 2)
    assert m["mean_agreement"] == pytest.approx((4 / 3 + 6 * 2 / 3 + 10 + 8) / 28)
    # the public API, and a rerun in the other unit reuses the records
    res = segbench.evaluate("agreement", hand_gt, max_dist=MD15, progress=False,
                            unit="pixel")
    assert res.metrics["orphan_fraction"] == pytest.approx(4 / 62)


def test_text_names_the_unit(hand_gt, capsys):
    assert main(["agreement", "--gt", str(hand_gt), "--ids", "h", "--max-dist",
                 str(MD15), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "orphan (level 1): 20.00%   unanimous (level K): 50.00%   (labels" in text
    assert "in pixels: orphan 8.70%   unanimous 65.22%" in text


def test_bad_unit(hand_gt, capsys):
    with pytest.raises(InputError, match="unit must be 'label'.*'pixels'"):
        run_agreement(hand_gt, unit="pixels", progress=False)
    with pytest.raises(SystemExit) as exc:
        main(["agreement", "--gt", str(hand_gt), "--unit", "pixels"])
    assert exc.value.code == 2 and "--unit" in capsys.readouterr().err


# --- the paper's figures, on the real data ---------------------------------------------

#: Hou, Yuille and Koch (2013), percent of boundary labels: (orphan, unanimous).
PAPER_BSDS500_TEST = (30.58, 30.15)
PAPER_BSDS300 = (29.40, 28.99)


def _figures(gt):
    m = run_agreement(gt, progress=False, plot=False, maps=False).metrics
    return 100 * m["orphan_fraction"], 100 * m["unanimous_fraction"]


def test_bsds500_test_reproduces_hou():
    gt = require(DATA / "bsds500" / "groundTruth" / "test")
    orphan, unanimous = _figures(gt)
    assert orphan == pytest.approx(PAPER_BSDS500_TEST[0], abs=1.0)
    assert unanimous == pytest.approx(PAPER_BSDS500_TEST[1], abs=1.0)


def test_bsds300_reproduces_hou():
    """The BSDS300 is BSDS500 train + val; their .mat files hold its 1633 colour
    segmentations (each .seg equals one annotator's Segmentation - 1)."""
    root = require(DATA / "bsds500" / "groundTruth")
    orphan, unanimous = _figures([root / "train", root / "val"])
    assert orphan == pytest.approx(PAPER_BSDS300[0], abs=1.0)
    assert unanimous == pytest.approx(PAPER_BSDS300[1], abs=1.0)
