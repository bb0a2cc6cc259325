"""Edge-detection datasets as a user meets them (QA round of 2026-12-07): maps thinned
twice without a word, images with no ground-truth boundary, a BIPED tree without its
photographs, a damaged first file, and NYUDv2's boundaries-only files on the site."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.io
from PIL import Image

from segbench.cli import main
from segbench.datasets import open_ground_truth
from segbench.errors import InputError

EDGES = np.zeros((40, 48), np.uint8)
EDGES[12, 4:44] = 255
EDGES[4:36, 24] = 255


def _png(path, arr):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(arr).save(path)
    return path


def _folders(tmp_path, n=3, empty=()):
    gt, pred = tmp_path / "gt", tmp_path / "pred"
    for i in range(n):
        _png(gt / f"im{i}.png", np.zeros_like(EDGES) if i in empty else EDGES)
        _png(pred / f"im{i}.png", (EDGES // 2).astype(np.uint8))
    return gt, pred


def test_maps_that_segbench_nms_wrote_are_not_thinned_again_silently(tmp_path, capsys):
    gt, pred = _folders(tmp_path)
    assert main(["nms", "--pred", str(pred), "--out", str(tmp_path / "nms")]) == 0
    capsys.readouterr()
    base = ["boundary", "--gt", str(gt), "--pred", str(tmp_path / "nms"), "--quiet"]
    assert main([*base, "--preset", "nyud"]) == 0
    err = capsys.readouterr().err
    assert "thinned by segbench nms already" in err and "--nms off" in err
    assert main([*base, "--preset", "nyud", "--nms", "off"]) == 0
    assert "thinned" not in capsys.readouterr().err


def test_images_without_a_ground_truth_boundary_are_named(tmp_path, capsys):
    gt, pred = _folders(tmp_path, empty=(1,))
    code = main(["boundary", "--gt", str(gt), "--pred", str(pred), "--quiet", "--json",
                 "--gt-format", "edges"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "1 of 3 images have no ground-truth boundary pixel (im1)" in err
    assert json.loads(out)["metrics"]["ODS"] > 0


def test_a_biped_tree_without_its_photographs_is_found(tmp_path):
    root = tmp_path / "BIPED"
    for iid in ("RGB_001", "RGB_002"):
        _png(root / "edges" / "edge_maps" / "test" / "rgbr" / f"{iid}.png", EDGES)
    ds = open_ground_truth(root)
    assert ds.ids() == ["RGB_001", "RGB_002"] and ds.splits == ("test",)


def test_a_damaged_first_ground_truth_file_is_named_as_damaged(tmp_path):
    gt, _ = _folders(tmp_path)
    (gt / "im0.png").write_bytes((gt / "im0.png").read_bytes()[:40])  # cut short
    with pytest.raises(InputError) as got:
        open_ground_truth(gt)
    msg = str(got.value)
    assert "im0.png" in msg and "not an image that can be read" in msg
    assert "--gt-format" not in msg


def test_the_site_draws_boundaries_only_ground_truth(tmp_path, capsys):
    gt = tmp_path / "nyud"
    gt.mkdir()
    pred = tmp_path / "pred"
    for i in range(2):
        cell = np.empty((1, 1), object)
        cell[0, 0] = {"Boundaries": (EDGES > 0).astype(np.uint8)}
        scipy.io.savemat(gt / f"img_500{i}.mat", {"groundTruth": cell})
        _png(pred / f"img_500{i}.png", EDGES)
    run = tmp_path / "run"
    assert main(["boundary", "--gt", str(gt), "--pred", str(pred), "--out", str(run),
                 "--quiet"]) == 0
    code = main(["site", "--gt", str(gt), "--results", str(run), "--out",
                 str(tmp_path / "site"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert (tmp_path / "site" / "index.html").is_file()


def _multicue(tmp_path, k_max=6, images=("0001_left_0001", "0002_left_0001")):
    root = tmp_path / "multicue"
    for iid in images:
        for k in range(1, k_max + 1):
            _png(root / "ground-truth" / "images" / "edges" / f"{iid}.{k}.png", EDGES)
    return root


def test_a_stray_file_in_multicues_annotations_is_named(tmp_path):
    root = _multicue(tmp_path)
    stray = _png(root / "ground-truth" / "images" / "edges" / "0001_left_0001.png", EDGES)
    with pytest.raises(InputError) as got:
        open_ground_truth(root, gt_format="multicue-edges")
    assert str(stray) in str(got.value) and "<name>.<k>.png" in str(got.value)


def test_a_multicue_image_with_an_annotator_missing_is_warned(tmp_path):
    root = _multicue(tmp_path)
    (root / "ground-truth" / "images" / "edges" / "0002_left_0001.3.png").unlink()
    with pytest.warns(UserWarning, match=r"fewer annotators than the 6 .*0002_left_0001 \(5\)"):
        ds = open_ground_truth(root, gt_format="multicue-edges")
    assert len(ds["0002_left_0001"].ground_truth()) == 5


def test_reading_options_that_would_do_nothing_are_refused(tmp_path):
    from segbench.datasets import GroundTruthFormat

    root = tmp_path / "BIPED"
    _png(root / "edges" / "edge_maps" / "test" / "rgbr" / "RGB_001.png", EDGES)
    for fmt in (GroundTruthFormat("bsds"), GroundTruthFormat("labels"),
                GroundTruthFormat("edges", void=(0,))):
        with pytest.raises(InputError, match="a BIPED tree holds edge maps"):
            open_ground_truth(root, gt_format=fmt)
    mats = tmp_path / "nyud"
    mats.mkdir()
    cell = np.empty((1, 1), object)
    cell[0, 0] = {"Boundaries": (EDGES > 0).astype(np.uint8)}
    scipy.io.savemat(mats / "img_5001.mat", {"groundTruth": cell})
    assert open_ground_truth(mats).ids() == ["img_5001"]
    with pytest.raises(InputError, match="BSDS .mat/.seg files are read as they are"):
        open_ground_truth(mats, gt_format=GroundTruthFormat("auto", threshold=0.3))


def test_thick_two_valued_maps_guessed_as_labels_are_warned(tmp_path):
    from scipy.ndimage import binary_dilation

    thick = (binary_dilation(EDGES > 0, iterations=3) * 255).astype(np.uint8)
    _png(tmp_path / "gt" / "a.png", thick)
    with pytest.warns(UserWarning, match="a map of two values \\(0, 255\\).*--gt-format edges"):
        open_ground_truth(tmp_path / "gt")


def test_a_run_named_in_a_script_the_font_lacks_plots_without_glyph_warnings(tmp_path,
                                                                            capsys):
    gt, pred = _folders(tmp_path)
    assert main(["boundary", "--gt", str(gt), "--pred", str(pred), "--name", "模型 日本",
                 "--out", str(tmp_path / "run"), "--quiet", "--gt-format", "edges"]) == 0
    assert (tmp_path / "run" / "pr.png").is_file() or any((tmp_path / "run").glob("*.png"))
    assert "Glyph" not in capsys.readouterr().err


def test_every_bad_prediction_is_named_in_one_run_and_the_others_are_saved(tmp_path,
                                                                          capsys):
    gt, pred = _folders(tmp_path, n=4)
    for name in ("im1.png", "im3.png"):  # one pixel too tall: a resize gone wrong
        _png(pred / name, np.zeros((41, 48), np.uint8))
    run = tmp_path / "run"
    base = ["boundary", "--gt", str(gt), "--pred", str(pred), "--out", str(run),
            "--gt-format", "edges"]
    assert main([*base, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1  # one problem: one line
    assert err.startswith(f"segbench: error: {pred / 'im1.png'}: prediction is 41x48")
    assert err.rstrip().endswith("(and 1 other image likewise: im3.png)")
    _png(pred / "im3.png", (np.zeros((40, 48, 3)) + [255, 0, 0]).astype(np.uint8))
    assert main([*base, "--quiet"]) == 2
    lines = [x for x in capsys.readouterr().err.splitlines() if "error:" in x]
    # another problem: its own line, before the last
    assert len(lines) == 2 and "im3.png" in lines[0] and "im1.png" in lines[1]
    assert "1 other problems, named above, in 2 of the 4 images" in lines[1]
    for name in ("im1.png", "im3.png"):
        _png(pred / name, (EDGES // 2).astype(np.uint8))
    assert main(base) == 0
    assert "2 of 4 images reused" in capsys.readouterr().err


def test_agreement_without_an_image_of_two_annotators_is_an_error(tmp_path, capsys):
    """QA (helper-47): agreement on ground truth of one annotator an image (a folder of
    edge maps) exited 0 with NaN figures and wrote a result."""
    gt, _ = _folders(tmp_path)
    out = tmp_path / "agreement"
    assert main(["agreement", "--gt", str(gt), "--gt-format", "edges", "--out", str(out),
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "none of the 3 images has two or more annotators" in err, err
    assert not (out / "result_agreement.json").exists()


def test_one_problem_of_every_file_is_one_line(tmp_path, capsys):
    """QA (helper-47): stats on a folder of edge maps printed one error line per file,
    each naming its file twice, and said "the others are scored" when none was."""
    gt, _ = _folders(tmp_path)
    assert main(["stats", "--gt", str(gt), "--quiet",
                 "--out", str(tmp_path / "stats")]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(errors) == 1, errors
    assert errors[0].count(str(gt / "im0.png")) == 1
    assert "(and 2 other images likewise: im1.png, im2.png)" in errors[0]
    assert "the others are scored" not in errors[0]
