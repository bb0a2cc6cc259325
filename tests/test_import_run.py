"""A finished MATLAB boundary run (``<iid>_ev1.txt``) read into a run folder.

The official code's own run (BSR under Octave, nthresh 99, the 5-image self-test) is
imported and its summary must equal that run's ``eval_bdry.txt`` (printed to 6 digits);
the folder then serves ``compare`` against a segbench run of the same images; malformed
count files are named in one line.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import segbench
from conftest import FIXTURES, require
from segbench.api import import_run
from segbench.errors import InputError
from segbench.io import read_eval_bdry

OFFICIAL = FIXTURES / "bsr-official" / "octave" / "png_bdry_n99"


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "segbench.cli", *map(str, args)],
                          capture_output=True, text=True)


def test_the_official_run_imports_to_its_own_figures(tmp_path):
    require(OFFICIAL)
    res = import_run(OFFICIAL, tmp_path / "run", name="bsr", plot=False)
    theirs = read_eval_bdry(OFFICIAL / "eval_bdry.txt")
    assert res.provenance["imported"] == theirs
    for ours, key in (("ODS", "ods_f"), ("OIS", "ois_f"), ("AP", "ap"),
                      ("ODS_recall", "ods_recall"), ("ODS_precision", "ods_precision"),
                      ("OIS_recall", "ois_recall")):
        assert res.metrics[ours] == pytest.approx(theirs[key], abs=6e-7), ours
    assert res.provenance["params"]["nthresh"] == 99
    assert res.provenance["params"].get("thresholds") is None   # the grid, recognised
    again = segbench.Result.from_json(tmp_path / "run" / "result_boundary.json")
    assert again.provenance["imported"] == theirs


def test_an_imported_run_compares_with_a_segbench_run(tmp_path):
    require(OFFICIAL)
    inputs = FIXTURES / "bsr-official" / "inputs"
    ours = segbench.evaluate("boundary", gt=inputs / "groundTruth", pred=inputs / "png",
                             out=tmp_path / "ours", plot=False, progress=False)
    alone = _cli("import-run", OFFICIAL, "--out", tmp_path / "alone", "--no-plot",
                 "--quiet")
    assert alone.returncode == 0, alone.stderr
    refused = _cli("compare", tmp_path / "ours", tmp_path / "alone")
    assert refused.returncode == 2 and "other ground truth" in refused.stderr
    proc = _cli("import-run", OFFICIAL, "--gt", inputs / "groundTruth", "--out",
                tmp_path / "bsr", "--name", "bsr", "--no-plot", "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert "the MATLAB run's eval_bdry.txt: ODS 0.7617" in proc.stdout
    cmp = _cli("compare", tmp_path / "ours", tmp_path / "bsr", "--json")
    assert cmp.returncode == 0, cmp.stderr
    # exact matching finds at least the official matcher's pixels: ODS as high or higher
    bsr = segbench.Result.from_json(tmp_path / "bsr" / "result_boundary.json")
    assert ours.metrics["ODS"] >= bsr.metrics["ODS"] - 1e-3


def _write(folder, name, text):
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)


@pytest.mark.parametrize("text, message", [
    ("0.5 1 2 3\n", "rows of 5 numbers"),
    ("0.5 3 2 1 4\n", "exceeds its total"),
    ("0.5 1.5 2 1 4\n", "whole numbers"),
    ("0.6 1 2 1 4\n0.5 1 2 1 4\n", "must increase"),
    ("zero one two\n", "not a per-image counts file"),
])
def test_malformed_count_files_are_named(tmp_path, text, message):
    _write(tmp_path / "ev", "7_ev1.txt", text)
    with pytest.raises(InputError, match=message) as err:
        import_run(tmp_path / "ev", tmp_path / "run", plot=False)
    assert "7_ev1.txt" in str(err.value)
    proc = _cli("import-run", tmp_path / "ev", "--out", tmp_path / "run2", "--quiet")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_other_grids_are_kept_and_mixed_grids_refused(tmp_path):
    rows = np.array([[0.2, 5, 10, 4, 8], [0.5, 4, 10, 4, 5], [0.7, 2, 10, 2, 2]])
    for iid in ("1", "2"):
        np.savetxt(tmp_path / f"{iid}_ev1.txt", rows, fmt="%g")
    res = import_run(tmp_path, tmp_path / "run", plot=False)
    assert res.provenance["params"]["thresholds"] == [0.2, 0.5, 0.7]
    assert list(res.curves["thresholds"]) == [0.2, 0.5, 0.7]
    # recall 0.4, precision 0.8 at 0.5 on both images: F 0.533 there
    assert res.curves["f"][1] == pytest.approx(2 * 0.4 * 0.8 / 1.2)
    np.savetxt(tmp_path / "3_ev1.txt", rows[:2], fmt="%g")
    with pytest.raises(InputError, match="thresholds differ"):
        import_run(tmp_path, tmp_path / "run3", plot=False)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no <iid>_ev1.txt"):
        import_run(tmp_path / "empty", tmp_path / "run4", plot=False)


def test_a_first_row_at_threshold_zero_is_kept(tmp_path):
    """SAUGE's and EDTER's count files start at t = 0 (every pixel): kept as an
    explicit grid."""
    rows = np.array([[0.0, 9, 10, 9, 100], [0.5, 4, 10, 4, 5], [0.9, 2, 10, 2, 2]])
    np.savetxt(tmp_path / "1_ev1.txt", rows, fmt="%g")
    res = import_run(tmp_path, tmp_path / "run", plot=False)
    assert res.provenance["params"]["thresholds"] == [0.0, 0.5, 0.9]


def test_several_folders_are_scored_as_the_best_of_the_granularities(tmp_path):
    """Two granularities: per image and threshold the counts of the one with the
    higher F (MuGE/SAUGE), written as the run's own <iid>_ev1.txt."""
    g0 = {"1": [[0.3, 8, 10, 4, 10], [0.6, 5, 10, 5, 5]],
          "2": [[0.3, 2, 10, 2, 4], [0.6, 1, 10, 1, 1]]}
    g1 = {"1": [[0.3, 6, 10, 6, 8], [0.6, 2, 10, 2, 2]],
          "2": [[0.3, 9, 10, 8, 9], [0.6, 3, 10, 3, 3]]}
    for name, g in (("g0", g0), ("g1", g1)):
        (tmp_path / name).mkdir()
        for iid, rows in g.items():
            np.savetxt(tmp_path / name / f"{iid}_ev1.txt", np.array(rows), fmt="%g")
    res = import_run([tmp_path / "g0", tmp_path / "g1"], tmp_path / "best", plot=False)
    # image 1: t=.3 F(g0)=.5, F(g1)=.675 -> g1; t=.6 F(g0)=.667, F(g1)=.333 -> g0
    # image 2: t=.3 g1 (F .87 > .33); t=.6 g1 (F .46 > .18)
    expect = {"1": [[0.3, 6, 10, 6, 8], [0.6, 5, 10, 5, 5]],
              "2": [[0.3, 9, 10, 8, 9], [0.6, 3, 10, 3, 3]]}
    from segbench.io import read_ev1
    for iid, rows in expect.items():
        assert np.array_equal(read_ev1(tmp_path / "best" / f"{iid}_ev1.txt"),
                              np.array(rows, float)), iid
    assert "imported" not in res.provenance
    proc = _cli("import-run", tmp_path / "g0", tmp_path / "g1", "--out",
                tmp_path / "best2", "--no-plot", "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert "(best of 2)" in proc.stdout and "g0" in proc.stdout


def test_boundary_takes_several_prediction_folders_as_granularities(tmp_path):
    """--pred g1 g2: each run alone into out/granularities/, the best of them into
    out; its OIS is at least each granularity's (the best per image of every (g, t))."""
    from scipy import ndimage

    from segbench.datasets import make_synthetic_dataset, write_synthetic_dataset
    from segbench.io import read_ground_truth, write_soft_map
    items = make_synthetic_dataset(3, shape=(48, 64), n_annotators=2, seed=8)
    write_synthetic_dataset(tmp_path / "ds", items)
    gt = tmp_path / "ds" / "groundTruth" / "test"
    rng = np.random.default_rng(2)
    for it in items:
        b = read_ground_truth(gt / f"{it.iid}.mat")[0].boundaries.astype(float)
        for k, sigma in enumerate((0.7, 2.0)):
            soft = np.clip(ndimage.gaussian_filter(b, sigma) * 3 + 0.1 * rng.random(b.shape),
                           0, 1)
            write_soft_map(tmp_path / f"g{k}" / f"{it.iid}.png", soft)
    proc = _cli("boundary", "--gt", gt, "--pred", tmp_path / "g0", tmp_path / "g1",
                "--out", tmp_path / "run", "--quiet", "--no-plot")
    assert proc.returncode == 0, proc.stderr
    assert "(best of 2)" in proc.stdout
    best = segbench.Result.from_json(tmp_path / "run" / "result_boundary.json")
    singles = sorted((tmp_path / "run" / "granularities").iterdir())
    assert [p.name for p in singles] == ["1-g0", "2-g1"]
    again = import_run(singles, None, plot=False)
    assert again.metrics["ODS"] == best.metrics["ODS"]
    for g in best.provenance["granularities"]:
        assert best.metrics["OIS"] >= g["OIS"] - 1e-12
    # --ids: the best of the granularities on those images (it was refused: the
    # images left out had no counts file)
    first_two = ",".join(it.iid for it in items[:2])
    proc = _cli("boundary", "--gt", gt, "--pred", tmp_path / "g0", tmp_path / "g1",
                "--out", tmp_path / "run-ids", "--quiet", "--no-plot", "--ids", first_two)
    assert proc.returncode == 0, proc.stderr
    subset = segbench.Result.from_json(tmp_path / "run-ids" / "result_boundary.json")
    assert [r["id"] for r in subset.per_item] == [it.iid for it in items[:2]]
    alone = import_run(sorted((tmp_path / "run-ids" / "granularities").iterdir()), None,
                       plot=False)
    assert alone.metrics["ODS"] == subset.metrics["ODS"]


def test_the_output_is_never_a_folder_being_read(tmp_path):
    rows = np.array([[0.5, 4, 10, 4, 5]])
    np.savetxt(tmp_path / "1_ev1.txt", rows, fmt="%g")
    before = (tmp_path / "1_ev1.txt").read_bytes()
    with pytest.raises(InputError, match="--out is one of the folders read"):
        import_run(tmp_path, tmp_path, plot=False)
    assert (tmp_path / "1_ev1.txt").read_bytes() == before


def test_a_granularity_warning_names_its_folder(tmp_path):
    """With several --pred folders, a warning about one says which (it did not)."""
    from segbench.boundary._family import EmptyPredictionWarning
    from segbench.datasets import make_synthetic_dataset, write_synthetic_dataset
    from segbench.io import write_soft_map
    items = make_synthetic_dataset(2, shape=(32, 40), n_annotators=1, seed=3)
    write_synthetic_dataset(tmp_path / "ds", items)
    gt = tmp_path / "ds" / "groundTruth" / "test"
    for it in items:
        write_soft_map(tmp_path / "fine" / f"{it.iid}.png", np.full((32, 40), 0.6))
        write_soft_map(tmp_path / "blank" / f"{it.iid}.png", np.zeros((32, 40)))
    with pytest.warns(EmptyPredictionWarning, match=f"^{tmp_path / 'blank'}: 2 of 2"):
        segbench.evaluate("boundary", gt=gt, pred=[tmp_path / "fine", tmp_path / "blank"],
                          progress=False, plot=False)


def test_the_command_imports_a_run_of_some_images_of_the_ground_truth(tmp_path, capsys):
    """QA (helper-47): a MATLAB run on a subset of a split could not be imported with
    --gt (every other image of the ground truth lacked its _ev1.txt); --ids says which."""
    from segbench.cli import main
    from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
    items = make_synthetic_dataset(4, shape=(24, 32), n_annotators=2, seed=3)
    write_synthetic_dataset(tmp_path / "data", items, split="test")
    gt = tmp_path / "data" / "groundTruth" / "test"
    counts = tmp_path / "counts"
    counts.mkdir()
    ids = [it.iid for it in items][:2]
    for iid in ids:
        np.savetxt(counts / f"{iid}_ev1.txt", np.array([[0.5, 4, 10, 4, 5]]), fmt="%g")
    args = ["import-run", str(counts), "--gt", str(gt), "--quiet", "--no-plot"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 2
    assert "2 images of the ground truth have no <iid>_ev1.txt" in capsys.readouterr().err
    assert main([*args, "--ids", ",".join(ids), "--out", str(tmp_path / "b")]) == 0
    assert "images: 2" in capsys.readouterr().out
    assert main([*args, "--ids", ",".join(ids), "--out", str(tmp_path / "c"),
                 "--name", " "]) == 2
    assert "--name is empty: give a name" in capsys.readouterr().err
