"""``segbench all``: both benchmarks in one pass, identical to running each alone."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import FIXTURES, require
from segbench.cli import main
from segbench import evaluate

BSR = FIXTURES / "bsr-official"
REGION_FILES = ("eval_cover.txt", "eval_cover_img.txt", "eval_cover_th.txt",
                "eval_RI_VOI.txt", "eval_RI_VOI_thr.txt")


@pytest.mark.parametrize("kind,case", [("ucm2", "test_1"), ("segs", "test_4")])
def test_all_matches_official_and_separate_runs(tmp_path, kind, case):
    ref = require(BSR / "matlab" / case)
    gt, pred = BSR / "inputs" / "groundTruth", BSR / "inputs" / kind
    b, r = evaluate("all", gt, pred, tmp_path / "all", nthresh=5, progress=False,
                    plot=False)
    np.testing.assert_allclose(np.loadtxt(tmp_path / "all" / "eval_bdry.txt"),
                               np.loadtxt(ref / "eval_bdry.txt"), atol=0.0015)
    for name in REGION_FILES:
        np.testing.assert_allclose(np.loadtxt(tmp_path / "all" / name),
                                   np.loadtxt(ref / name), atol=1e-4)
    # the same numbers as the two benchmarks run separately
    b2 = evaluate("boundary", gt, pred, tmp_path / "b", nthresh=5, progress=False,
                  plot=False)
    r2 = evaluate("region", gt, pred, tmp_path / "r", nthresh=5, progress=False)
    assert b.metrics == b2.metrics and r.metrics == r2.metrics
    # and the records it left let each benchmark resume without recomputing
    for name in ("eval_bdry.txt", *REGION_FILES):
        assert (tmp_path / "all" / name).read_text() == (
            tmp_path / ("b" if name.startswith("eval_bdry") else "r") / name).read_text()


def test_cli_all_and_human_json(tmp_path, capsys):
    gt = require(BSR / "inputs" / "groundTruth")
    assert main(["all", "--gt", str(gt), "--pred", str(BSR / "inputs" / "ucm2"), "--out",
                 str(tmp_path), "--nthresh", "5", "--quiet", "--no-plot"]) == 0
    assert "covering" in capsys.readouterr().out
    assert main(["human", "--gt", str(gt), "--quiet", "--json"]) == 0
    h = json.loads(capsys.readouterr().out)
    assert 0 < h["boundary"]["F"] < 1 and 0 < h["region"]["covering"] < 1
