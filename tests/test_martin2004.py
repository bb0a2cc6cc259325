"""The 2004 Pb paper's protocol (``--protocol martin2004``: half resolution, d_max 1% of
the diagonal) and tolerances in pixels (``--max-dist-px``), as a user runs them."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest

from conftest import DATA, require
from segbench.boundary import halve_image, halve_soft_map, seg2bmap
from segbench.cli import main
from segbench.boundary import seg2bdry, thin
from segbench.io import read_ev1_table, read_prediction, write_ground_truth

#: The 4x4 case worked by hand below: three regions, a boundary map of 5 pixels.
SEG = np.array([[1, 1, 2, 2],
                [1, 1, 2, 2],
                [3, 3, 3, 3],
                [3, 3, 3, 3]], np.uint16)


def _case(tmp_path):
    """A one-image dataset of SEG (two identical annotators) and a 4x4 soft map."""
    gt, pred = tmp_path / "gt", tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    b = np.asarray(thin(seg2bdry(SEG)), np.uint8)
    write_ground_truth(gt / "1.mat", [SEG, SEG], boundaries=[b, b])
    pb = np.zeros((4, 4))
    pb[0, 0], pb[1, 1], pb[3, 3] = 0.9, 0.3, 0.5
    np.save(pred / "1.npy", pb)
    return gt, pred


def _run(gt, pred, out, *extra):
    rc = main(["boundary", "--gt", str(gt), "--pred", str(pred), "--out", str(out),
               "--no-plot", "--quiet", *extra])
    return rc, read_ev1_table(out / "1_ev1.txt")


def test_the_2004_resampling_of_a_4x4_case():
    # seg2bmap marks a pixel whose east, south or south-east neighbour differs:
    # row 0 only at (0, 1) (east 1 != 2), all of row 1 (south is region 3).
    full = seg2bmap(SEG)
    assert full.astype(int).tolist() == [[0, 1, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0],
                                         [0, 0, 0, 0]]
    # seg2bmap(seg, 2, 2): pixel (y, x) -> cell (y * 2 // 4, x * 2 // 4); a cell is
    # marked if any of its pixels is: both top cells, neither bottom cell.
    assert seg2bmap(SEG, (2, 2)).astype(int).tolist() == [[1, 1], [0, 0]]
    pb = np.zeros((4, 4))
    pb[0, 0], pb[1, 1], pb[3, 3] = 0.9, 0.3, 0.5
    assert halve_soft_map(pb).tolist() == [[0.9, 0.0], [0.0, 0.5]]   # cell maxima
    im = np.arange(16, dtype=np.uint8).reshape(4, 4)
    # cell means 2.5, 4.5, 10.5, 12.5, rounded half up as MATLAB's round
    assert halve_image(im).tolist() == [[3, 5], [11, 13]]
    # 481 x 321 -> 240 x 160 (the paper's size): floor(k * 160 / 321) puts pixels
    # 0, 1, 2 in cell 0 (2 * 160 < 321), and 2 pixels in every other cell
    big = np.zeros((321, 481), np.uint8)
    big[:3, :3] = 90
    small = halve_image(big)
    assert small.shape == (160, 240) and small[0, 0] == 90 and small[1, 1] == 0
    big[:3, :3], big[-2:, -2:] = 0, 90
    assert halve_image(big)[-1, -1] == 90 and halve_image(big)[-2, -2] == 0


def test_martin2004_counts_of_the_4x4_case(tmp_path):
    """Half-resolution human map [[1, 1], [0, 0]] (sumR 2 per annotator), soft map
    [[0.9, 0], [0, 0.5]]; 30 thresholds k/31. The tolerance 0.01 * sqrt(8) = 0.03 px
    matches only (0, 0); (1, 1) is 1 px from the human (0, 1)."""
    gt, pred = _case(tmp_path)
    rc, table = _run(gt, pred, tmp_path / "run", "--protocol", "martin2004")
    assert rc == 0
    assert table.shape == (30, 5)
    np.testing.assert_allclose(table[:, 0], np.arange(1, 31) / 31, rtol=1e-5)  # %g
    k = np.arange(1, 31)
    want = np.zeros((30, 4))
    want[:, 1] = 4                                     # sumR: 2 pixels x 2 annotators
    want[k <= 27, 0] = 2                               # cntR: (0, 0) in both maps
    want[k <= 27, 2] = 1                               # cntP: (0, 0)
    want[k <= 27, 3] = 1                               # sumP: 0.9 >= k/31
    want[k <= 15, 3] = 2                               # and 0.5 >= k/31
    np.testing.assert_array_equal(table[:, 1:], want)
    res = json.loads((tmp_path / "run" / "result_boundary.json").read_text())
    params = res["provenance"]["params"]
    assert (params["protocol"], params["resolution"], params["max_dist"],
            params["nthresh"], params["thin_gt"]) == ("martin2004", "half", 0.01, 30, True)

    # 1 px of tolerance: (1, 1) matches the human (0, 1) as well, wherever it is kept
    rc, px = _run(gt, pred, tmp_path / "px", "--protocol", "martin2004",
                  "--max-dist-px", "1")
    assert rc == 0
    want[k <= 15, 0] = 4
    want[k <= 15, 2] = 2
    np.testing.assert_array_equal(px[:, 1:], want)


def test_a_half_size_soft_map_is_scored_as_it_is(tmp_path):
    gt, pred = _case(tmp_path)
    np.save(pred / "1.npy", np.array([[0.9, 0.0], [0.0, 0.5]]))
    _, half = _run(gt, pred, tmp_path / "half", "--protocol", "martin2004")
    np.save(pred / "1.npy", np.kron(np.array([[0.9, 0.0], [0.0, 0.5]]), np.ones((2, 2))))
    _, full = _run(gt, pred, tmp_path / "full", "--protocol", "martin2004")
    np.testing.assert_array_equal(half, full)


def test_bad_sizes_and_tolerances_are_one_line(tmp_path, capsys):
    gt, pred = _case(tmp_path)
    np.save(pred / "1.npy", np.zeros((3, 3)))
    assert main(["boundary", "--gt", str(gt), "--pred", str(pred), "--protocol",
                 "martin2004", "--quiet", "--no-plot"]) != 0
    err = capsys.readouterr().err.strip()
    assert "half resolution" in err and "4x4" in err and "Traceback" not in err
    assert len(err.splitlines()) == 1
    for extra in (["--max-dist-px", "-2"], ["--max-dist-px", "2", "--max-dist", "0.01"]):
        np.save(pred / "1.npy", np.zeros((4, 4)))
        assert main(["boundary", "--gt", str(gt), "--pred", str(pred), "--quiet",
                     "--no-plot", *extra]) != 0
        err = capsys.readouterr().err.strip()
        assert "--max-dist-px" in err or "max_dist_px" in err
        assert len(err.splitlines()) == 1


def test_max_dist_px_gives_the_counts_of_the_equivalent_fraction(tmp_path):
    """On a real image at full (481 x 321) and at half resolution (240 x 160): 3 px is
    3 / hypot(H, W) of the diagonal matched."""
    images = require(DATA / "bsds500" / "images" / "val")
    gts = require(DATA / "bsds500" / "groundTruth" / "val")
    iid = "101085"
    src, gt = tmp_path / "img", tmp_path / "gt"
    src.mkdir()
    gt.mkdir()
    shutil.copy(images / f"{iid}.jpg", src)
    shutil.copy(gts / f"{iid}.mat", gt)
    assert main(["detect", "--detector", "gm", "--images", str(src), "--out",
                 str(tmp_path / "gm"), "--quiet"]) == 0
    for shape, proto in (((321, 481), []), ((160, 240), ["--protocol", "martin2004"])):
        frac = 3 / math.hypot(*shape)
        assert frac * math.hypot(*shape) == 3          # no rounding to correct here
        tag = "-".join(map(str, shape))
        a = main(["boundary", "--gt", str(gt), "--pred", str(tmp_path / "gm"), "--out",
                  str(tmp_path / f"px{tag}"), "--max-dist-px", "3", "--no-plot",
                  "--quiet", *proto])
        b = main(["boundary", "--gt", str(gt), "--pred", str(tmp_path / "gm"), "--out",
                  str(tmp_path / f"f{tag}"), "--max-dist", repr(frac), "--no-plot",
                  "--quiet", *proto])
        assert a == b == 0
        ta = read_ev1_table(tmp_path / f"px{tag}" / f"{iid}_ev1.txt")
        tb = read_ev1_table(tmp_path / f"f{tag}" / f"{iid}_ev1.txt")
        np.testing.assert_array_equal(ta, tb)
        assert ta[:, 2].min() > 0
    # ... and differ from the default tolerance (4.34 px at full size)
    dflt = tmp_path / "default"
    assert main(["boundary", "--gt", str(gt), "--pred", str(tmp_path / "gm"), "--out",
                 str(dflt), "--no-plot", "--quiet"]) == 0
    assert not np.array_equal(read_ev1_table(dflt / f"{iid}_ev1.txt"),
                              read_ev1_table(tmp_path / "px321-481" / f"{iid}_ev1.txt"))


def test_detect_at_half_resolution(tmp_path, capsys):
    images = require(DATA / "bsds500" / "images" / "val")
    src = tmp_path / "img"
    src.mkdir()
    shutil.copy(images / "101085.jpg", src)
    out = tmp_path / "gm"
    assert main(["detect", "--detector", "gm", "--images", str(src), "--out", str(out),
                 "--protocol", "martin2004", "--quiet"]) == 0
    assert "half resolution" in capsys.readouterr().out
    assert read_prediction(out / "101085.png").pb.shape in ((160, 240), (240, 160))
    assert main(["detect", "--detector", "gpb", "--images", str(src), "--out",
                 str(tmp_path / "gpb"), "--protocol", "martin2004", "--quiet"]) != 0
    err = capsys.readouterr().err.strip()
    assert "martin2004" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "gpb").exists()


def test_the_site_ranks_other_tolerances_and_resolutions_apart():
    from pathlib import Path

    from segbench.report._site_runs import Run, settings_of, settings_text

    def run(**params):
        from segbench import Result

        res = Result("boundary", {}, provenance={"params": params})
        return Run(dir=Path("."), name="x", results={"boundary": res})

    old = run(protocol="bsr", nthresh=99, max_dist=0.0075)      # recorded before either
    assert settings_of(old) == settings_of(run(protocol="bsr", nthresh=99,
                                               max_dist=0.0075, max_dist_px=None,
                                               resolution="full"))
    px = run(protocol="bsr", nthresh=99, max_dist=0.0075, max_dist_px=3.0)
    half = run(protocol="martin2004", nthresh=30, max_dist=0.01, resolution="half")
    assert len({settings_of(r) for r in (old, px, half)}) == 3
    assert settings_text(settings_of(px)) == "protocol bsr, 99 thresholds, max_dist 3 px"
    assert settings_text(settings_of(half)) == ("protocol martin2004, 30 thresholds, "
                                                "max_dist 0.01, half resolution")
