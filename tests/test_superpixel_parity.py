"""Parity with the C++ superpixel benchmark (fixtures in ../shared/fixtures/superpixel).

Each column of its results is matched by the segbench measure named in STUTZ_COLUMNS.
The C++ code accumulates in float32: count-based columns agree to float32 rounding,
colour sums to ~1e-3 relative (see docs/superpixel.md).
"""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from conftest import DATA, FIXTURES, require
from segbench.runners._superpixel import run_superpixel
from segbench.io import read_opencv_matrix, read_stutz_results
from segbench.superpixel import (STUTZ_COLUMNS, achievable_segmentation_accuracy,
                                 boundary_counts, compactness, corrected_ue,
                                 explained_variation, levinshtein_ue, neubert_protzel_ue,
                                 oversegmentation_error, stutz_columns)

SP = FIXTURES / "superpixel"
ALGOS = ("slic200", "fh", "grid10", "single", "slic200_gtraw")
# relative tolerance per column (absolute 1e-7 as well, for zeros)
COUNTS = 5e-7
TOL = {c: COUNTS for c in STUTZ_COLUMNS}
TOL.update({"sse_rgb": 2e-3, "sse_xy": 2e-3, "ev": 2e-3, "icv": 5e-4, "co": 5e-5,
            "mde": 2e-4})


def _inputs(algo, iid, t):
    src = "slic200" if algo == "slic200_gtraw" else algo
    sp = np.load(SP / "inputs" / "sp" / src / f"{iid}.npz")["sp"]
    gt = np.load(SP / "inputs" / "gt" / f"{iid}.npz")[f"gt{t}"]
    if algo == "slic200_gtraw":
        gt = gt + 1       # the un-relabelled 1..N ground truth (same partition)
    image = np.asarray(Image.open(SP / "inputs" / "images" / f"{iid}.png"))
    return sp, gt, image


def _expected(algo):
    rows, cols, _ = read_stutz_results(SP / "outputs" / algo / "results.csv")
    full = read_opencv_matrix(SP / "outputs" / algo / "results.csv.txt")
    return rows, cols, full


@pytest.fixture(scope="module")
def computed():
    require(SP)
    out = {}
    for algo in ALGOS:
        rows, cols, full = _expected(algo)
        ours = []
        for iid, name in rows:
            t = int(name.rsplit("-", 1)[1])
            c = stutz_columns(*_inputs(algo, iid, t))
            ours.append([c[k] for k in cols])
        out[algo] = (rows, cols, full, np.asarray(ours))
    return out


@pytest.mark.parametrize("algo", ALGOS)
def test_every_column(computed, algo):
    rows, cols, full, ours = computed[algo]
    assert cols == list(STUTZ_COLUMNS)
    for j, col in enumerate(cols):
        exp, got = full[:, j], ours[:, j]
        inf = np.isinf(exp)
        np.testing.assert_array_equal(np.isinf(got), inf, err_msg=col)
        np.testing.assert_allclose(got[~inf], exp[~inf], rtol=TOL[col], atol=1e-7,
                                   err_msg=f"{algo} {col}")


def test_results_csv_is_the_same_matrix(computed):
    for algo in ALGOS:
        rows, cols, printed = read_stutz_results(SP / "outputs" / algo / "results.csv")
        full = computed[algo][2]
        fin = np.isfinite(full)
        np.testing.assert_allclose(printed[fin], full[fin], rtol=1e-5)


def test_columns_are_the_named_variants():
    """The mapping of STUTZ_COLUMNS, with the public functions themselves."""
    require(SP)
    rows, cols, full = _expected("slic200")
    col = {c: j for j, c in enumerate(cols)}
    for r, (iid, name) in enumerate(rows[:10]):
        sp, gt, image = _inputs("slic200", iid, int(name[-1]))
        e = full[r]
        bc = boundary_counts(sp, gt, window="square", tolerance=1, boundary="two-sided")
        checks = {
            "ue": corrected_ue(sp, gt),
            "asa": achievable_segmentation_accuracy(sp, gt),
            "oe": oversegmentation_error(sp, gt),
            "ue_np": neubert_protzel_ue(sp, gt),
            "ue_levin": levinshtein_ue(sp, gt),      # relabelled 0..K-1: same denominator
            "rec": bc.recall,
            "pre": bc.stutz_precision,
            "co": compactness(sp),
            "ev": explained_variation(sp, image),
        }
        for k, v in checks.items():
            assert v == pytest.approx(e[col[k]], rel=TOL[k], abs=1e-7), (iid, name, k)
        assert e[col["ue"]] == pytest.approx(1 - e[col["asa"]], abs=1e-6)


def test_summary_means_per_annotator(computed):
    """summary.csv's mean[t] is the mean over images of annotator t's values."""
    for algo in ("slic200", "fh", "slic200_gtraw"):
        rows, cols, _, ours = computed[algo]
        text = (SP / "outputs" / algo / "summary.csv").read_text().splitlines()
        head = text[0].split(",")
        ann = np.array([int(name.rsplit("-", 1)[1]) for _, name in rows])
        for line in text[1:]:
            f = line.split(",")
            j = cols.index(f[0])
            for t in range(5):
                exp = float(f[head.index(f"mean[{t}]")])
                assert ours[ann == t, j].mean() == pytest.approx(
                    exp, rel=max(TOL[f[0]], 2e-5), abs=1e-6), (algo, f[0], t)


def test_levinshtein_denominator_with_raw_bsds_labels():
    """slic200_gtraw against the BSDS500 .mat files themselves (labels 1..N)."""
    require(SP)
    mat_dir = require(DATA / "bsds500" / "groundTruth" / "val")
    from segbench.io import read_ground_truth
    rows, cols, full = _expected("slic200_gtraw")
    j = cols.index("ue_levin")
    for r, (iid, name) in enumerate(rows[:10]):
        gt = read_ground_truth(mat_dir / f"{iid}.mat")[int(name[-1])].segmentation
        sp = np.load(SP / "inputs" / "sp" / "slic200" / f"{iid}.npz")["sp"]
        assert stutz_columns(sp, gt)["ue_levin"] == pytest.approx(full[r, j], rel=COUNTS)
        # the variant itself does not depend on the label values
        assert levinshtein_ue(sp, gt) == pytest.approx(levinshtein_ue(sp, gt - 1))


def test_runner_writes_the_benchmarks_results_csv(tmp_path):
    """run_superpixel(stutz=True) on the fixture folders reproduces results.csv."""
    require(SP)
    res = run_superpixel(SP / "inputs" / "gt", SP / "inputs" / "sp" / "fh",
                         images=SP / "inputs" / "images", out=tmp_path, stutz=True,
                         max_annotators=5, progress=False)
    assert res.metrics["n_images"] == 10
    rows, cols, ours = read_stutz_results(tmp_path / "results.csv")
    exp_rows, exp_cols, full = _expected("fh")
    assert rows == exp_rows and cols == exp_cols
    for j, c in enumerate(cols):
        np.testing.assert_allclose(ours[:, j], full[:, j], rtol=max(TOL[c], 1e-5),
                                   atol=1e-6, err_msg=c)
