"""Parity of the region benchmark with the official BSR code (fixtures in ../shared)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import FIXTURES, cached_runs, require
from segbench import evaluate
from segbench.io import read_ground_truth, read_prediction
from segbench.region import evaluate_image, summarize
from segbench.report.official_region import (read_eval_cover, read_eval_ri_voi,
                                             read_region_image_files, write_eval_region)

BSR = FIXTURES / "bsr-official"
INPUTS = BSR / "inputs"
IDS = ("2018", "3063", "5096", "6046", "8068")
FILES = ("eval_cover.txt", "eval_cover_img.txt", "eval_cover_th.txt", "eval_RI_VOI.txt",
         "eval_RI_VOI_thr.txt")

# (fixture folder, prediction folder, nthresh)
CASES = [
    ("matlab/test_1", "ucm2", 5),
    ("matlab/test_4", "segs", 5),
    ("matlab/test_5", "segs", 5),
    ("octave/ucm2_all_n99", "ucm2", 99),
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One segbench run per (prediction kind, nthresh), shared by the cases."""
    return cached_runs(tmp_path_factory, "region_", lambda kind, nthresh, out: evaluate(
        "region", INPUTS / "groundTruth", INPUTS / kind, out, nthresh=nthresh,
        progress=False))


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("case,kind,nthresh", CASES, ids=[c[0] for c in CASES])
def test_dataset_files_match_official(runs, case, kind, nthresh, name):
    ref = require(BSR / case / name)
    out = runs(kind, nthresh)
    ours = np.loadtxt(out / name, ndmin=2)
    official = np.loadtxt(ref, ndmin=2)
    assert ours.shape == official.shape
    np.testing.assert_allclose(ours, official, atol=1e-4, rtol=0)
    # in fact the files are identical, byte for byte
    assert (out / name).read_text() == ref.read_text()


@pytest.mark.parametrize("iid", IDS)
def test_per_image_files_match_official_n99(runs, iid):
    ref_dir = require(BSR / "octave" / "ucm2_all_n99")
    out = runs("ucm2", 99)
    for suffix in ("ev2", "ev3", "ev4"):
        ours = np.loadtxt(out / f"{iid}_{suffix}.txt", ndmin=2)
        official = np.loadtxt(ref_dir / f"{iid}_{suffix}.txt", ndmin=2)
        assert ours.shape == official.shape
        np.testing.assert_allclose(ours, official, atol=1e-4, rtol=0)
        assert (out / f"{iid}_{suffix}.txt").read_text() == \
            (ref_dir / f"{iid}_{suffix}.txt").read_text()


def test_exact_values_within_print_precision_of_official():
    """The unrounded record agrees with the official %10g files to 6 digits."""
    ref_dir = require(BSR / "octave" / "ucm2_all_n99")
    iid = "2018"
    rec = evaluate_image(read_prediction(INPUTS / "ucm2" / f"{iid}.mat"),
                         read_ground_truth(INPUTS / "groundTruth" / f"{iid}.mat"))
    off = read_region_image_files(ref_dir, iid)
    np.testing.assert_allclose(rec.ev2_table(), off.ev2_table(), rtol=5e-6, atol=1e-6)
    np.testing.assert_allclose(rec.ev4_table(), off.ev4_table(), rtol=5e-6, atol=1e-6)
    assert rec.cnt_r_best == pytest.approx(off.cnt_r_best, rel=5e-6)


def test_summary_of_official_per_image_files(tmp_path):
    """collect_eval_reg.m alone: the official per-image files in, the official summary out."""
    ref_dir = require(BSR / "octave" / "ucm2_all_n99")
    records = [read_region_image_files(ref_dir, iid) for iid in IDS]
    write_eval_region(tmp_path, summarize(records, IDS))
    for name in FILES:
        assert (tmp_path / name).read_text() == (ref_dir / name).read_text()
    cover = read_eval_cover(tmp_path / "eval_cover.txt")
    assert cover["ods"] == pytest.approx(0.6634, abs=1e-4)      # summary.txt
    assert cover["ois"] == pytest.approx(0.7689, abs=1e-4)
    assert cover["best"] == pytest.approx(0.8369, abs=1e-4)
    ri = read_eval_ri_voi(tmp_path / "eval_RI_VOI.txt")
    assert ri["pri_ods"] == pytest.approx(0.8318, abs=1e-4)
    assert ri["vi_ods"] == pytest.approx(1.3588, abs=1e-4)


def test_result_json_and_metrics(runs):
    import json
    out = runs("ucm2", 5)
    res = json.loads(Path(out / "result_region.json").read_text())
    assert res["family"] == "region"
    m = res["metrics"]
    assert m["covering_ODS"] == pytest.approx(0.654023, abs=1e-6)
    assert m["covering_OIS"] == pytest.approx(0.725074, abs=1e-6)
    assert m["covering_best"] == pytest.approx(0.749811, abs=1e-6)
    assert m["PRI_ODS"] == pytest.approx(0.826926, abs=1e-6)
    assert m["VI_OIS"] == pytest.approx(1.11563, abs=1e-5)
    assert [r["id"] for r in res["per_item"]] == list(IDS)
    assert len(res["curves"]["covering"]) == 5
