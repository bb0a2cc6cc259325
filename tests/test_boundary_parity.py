"""Parity with the official BSR boundary benchmark (fixtures in ../shared)."""

from __future__ import annotations

import glob
from pathlib import Path

import numpy as np
import pytest

from conftest import FIXTURES, cached_runs, require
from segbench.boundary import BoundaryCounts, summarize
from segbench import evaluate
from segbench.report.official import read_ev1

BSR = FIXTURES / "bsr-official"
INPUTS = BSR / "inputs"

# (fixture folder, prediction folder, nthresh, has per-image counts)
CASES = [
    ("matlab/test_2", "png", 5, False),
    ("matlab/test_3", "segs", 5, False),
    ("matlab/test_1", "ucm2", 5, False),
    ("matlab/test_4", "segs", 5, False),
    ("octave/png_bdry_n99", "png", 99, True),
    ("octave/test_3_segs_bdry_n99", "segs", 99, True),
    ("octave/ucm2_all_n99", "ucm2", 99, True),
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One segbench run per (prediction kind, nthresh), shared by the cases."""
    return cached_runs(tmp_path_factory, "", lambda kind, nthresh, out: evaluate(
        "boundary", INPUTS / "groundTruth", INPUTS / kind, out, nthresh=nthresh,
        progress=False, plot=False))


@pytest.mark.parametrize("case,kind,nthresh,has_counts", CASES,
                         ids=[c[0] for c in CASES])
def test_eval_bdry_matches_official(runs, case, kind, nthresh, has_counts):
    ref = require(BSR / case)
    out = runs(kind, nthresh)
    ours = np.loadtxt(out / "eval_bdry.txt")
    official = np.loadtxt(ref / "eval_bdry.txt")
    assert ours.shape == official.shape == (8,)
    # threshold, R, P, F at ODS; R, P, F at OIS; AP
    np.testing.assert_allclose(ours, official, atol=0.0015, rtol=0)
    img = np.loadtxt(out / "eval_bdry_img.txt")
    img_ref = np.loadtxt(ref / "eval_bdry_img.txt")
    np.testing.assert_array_equal(img[:, 0], img_ref[:, 0])
    np.testing.assert_allclose(img[:, 4], img_ref[:, 4], atol=0.003, rtol=0)
    thr = np.loadtxt(out / "eval_bdry_thr.txt")
    thr_ref = np.loadtxt(ref / "eval_bdry_thr.txt")
    np.testing.assert_allclose(thr[:, 0], thr_ref[:, 0], atol=1e-5)
    np.testing.assert_allclose(thr[:, 1:], thr_ref[:, 1:], atol=0.005)


@pytest.mark.parametrize("case,kind,nthresh",
                         [(c, k, n) for c, k, n, has in CASES if has])
def test_per_image_counts_match_official(runs, case, kind, nthresh):
    ref = require(BSR / case)
    out = runs(kind, nthresh)
    runs_ref = [ref] + ([BSR / "octave/png_bdry_n99_run2"] if case.endswith("png_bdry_n99")
                        else [])
    for path in sorted(ref.glob("*_ev1.txt")):
        ours = read_ev1(out / path.name)
        offs = [read_ev1(r / path.name) for r in runs_ref]
        off = offs[0]
        np.testing.assert_allclose(ours.thresholds, off.thresholds, atol=1e-6)
        # totals do not depend on matching: thinning and ground truth are exact
        np.testing.assert_array_equal(ours.sum_r, off.sum_r)
        np.testing.assert_array_equal(ours.sum_p, off.sum_p)
        # an exact matcher matches at least as many human pixels as any official run
        best_r = np.max([o.cnt_r for o in offs], axis=0)
        assert np.all(ours.cnt_r >= best_r), path.name
        for mine, theirs in ((ours.cnt_r, off.cnt_r), (ours.cnt_p, off.cnt_p)):
            rel = np.abs(mine - theirs) / np.maximum(theirs, 1)
            assert rel.max() <= 0.01, (path.name, rel.max())


@pytest.mark.parametrize("case", ["octave/png_bdry_n99", "octave/png_bdry_n99_run2",
                                  "octave/test_3_segs_bdry_n99", "octave/ucm2_all_n99"])
def test_summary_of_official_counts_reproduces_official_scores(case):
    """collect_eval_bdry alone: the official counts in, the official numbers out."""
    ref = require(BSR / case)
    files = sorted(ref.glob("*_ev1.txt"))
    summary = summarize([read_ev1(f) for f in files])
    ours = np.array([*summary.ods, *summary.ois, summary.ap])
    # the official files print 6 significant digits
    np.testing.assert_allclose(ours, np.loadtxt(ref / "eval_bdry.txt"), atol=2e-6)
    img = np.loadtxt(ref / "eval_bdry_img.txt")
    np.testing.assert_allclose(summary.per_image, img[:, 1:], atol=2e-6)
    thr = np.loadtxt(ref / "eval_bdry_thr.txt")
    np.testing.assert_allclose(np.column_stack([summary.thresholds, summary.recall,
                                                summary.precision, summary.f]),
                               thr, atol=2e-6)


def test_ev1_files_use_official_layout(runs):
    require(BSR / "octave/png_bdry_n99")
    out = runs("png", 99)
    ours = (out / "2018_ev1.txt").read_text().splitlines()
    ref = (BSR / "octave/png_bdry_n99/2018_ev1.txt").read_text().splitlines()
    assert len(ours) == len(ref) == 99
    # same fixed-width columns: '%10g' x 5 separated by single spaces
    assert [len(x) for x in ours] == [len(x) for x in ref]
    assert ours[0].split()[0] == ref[0].split()[0]
