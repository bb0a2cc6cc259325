"""SEEDS in the superpixel sweep (``--algorithm seeds``): OpenCV's contrib module as the
optional extra ``segbench[superpixels]``, a one-line error naming it when absent."""

from __future__ import annotations

import csv
import sys

import numpy as np
import pytest

from segbench.algorithms.superpixels import SUPERPIXEL_ALGORITHMS, seeds, seeds_count
from segbench.cli import main
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset


def _has_ximgproc() -> bool:
    try:
        import cv2
    except ImportError:
        return False
    return hasattr(getattr(cv2, "ximgproc", None), "createSuperpixelSEEDS")


needs_cv2 = pytest.mark.skipif(not _has_ximgproc(),
                               reason="opencv-contrib (segbench[superpixels]) absent")


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("seeds")
    write_synthetic_dataset(root, make_synthetic_dataset(2, shape=(64, 96), n_annotators=2,
                                                         seed=3), split="val")
    return root


def test_without_opencv_the_error_names_the_extra(root, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "cv2", None)        # import cv2 -> ImportError
    out = tmp_path / "sweep"
    rc = main(["superpixel-sweep", "--gt", str(root), "--split", "val", "--algorithm",
               "seeds", "--k", "24,96", "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert rc != 0
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "segbench[superpixels]" in err and "SEEDS" in err
    assert not (out / "sweep.json").exists()


def test_seeds_is_listed_in_the_help(capsys):
    with pytest.raises(SystemExit):
        main(["superpixel-sweep", "--help"])
    assert "seeds" in capsys.readouterr().out
    assert "seeds" in SUPERPIXEL_ALGORITHMS


@needs_cv2
def test_seeds_gives_the_library_count_and_is_deterministic():
    from segbench.io import read_image
    from conftest import DATA, require
    img = read_image(require(DATA / "bsds500" / "images" / "val" / "101085.jpg"))
    for k in (200, 400, 600, 800, 1000, 1200):
        a = seeds(img, k)
        n = int(a.max()) + 1
        assert a.dtype == np.int32 and a.shape == img.shape[:2]
        assert set(np.unique(a)) == set(range(n))
        # OpenCV's contract: the grid's count, at most k; every grid cell survives here
        grid = max((seeds_count(img.shape, k, lv) for lv in (4, 3, 2)),
                   key=lambda c: (-abs(np.log(c / k)), 0))
        assert n <= grid <= k
        assert n >= 0.7 * k, (k, n)             # the levels are chosen to come close
        np.testing.assert_array_equal(a, seeds(img, k))
    assert seeds(img, 600, num_levels=4).max() + 1 <= seeds_count(img.shape, 600, 4)


@needs_cv2
def test_sweep_with_seeds(root, tmp_path, capsys):
    out = tmp_path / "sweep"
    assert main(["superpixel-sweep", "--gt", str(root), "--split", "val", "--algorithm",
                 "slic,seeds", "--k", "24,96", "--out", str(out), "--quiet"]) == 0
    assert "seeds K" in capsys.readouterr().out
    rows = [r for r in csv.DictReader((out / "sweep.csv").open()) if r["algorithm"] ==
            "seeds"]
    assert [int(r["k"]) for r in rows] == [24, 96]
    n = [float(r["n_superpixels"]) for r in rows]
    assert 0 < n[0] <= 24 and n[0] < n[1] <= 96
