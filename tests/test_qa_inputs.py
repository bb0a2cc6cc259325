"""Inputs a user's folders hold that were read wrongly or dropped without a word: low
bit-depth grey PNG label maps, JPEG data named .png, upper-case extensions, links to
missing files, multi-label edge images encoding more classes than asked, a class count
no table can hold, a closed output pipe, and the run name of a class folder."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from segbench.cli import main
from segbench.datasets import run_name
from segbench.datasets._pairs import pair_folders
from segbench.errors import InputError
from segbench.io import list_files, read_label_map
from segbench.semantic import SemanticEval


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = struct.pack(">I", zlib.crc32(kind + data))
    return struct.pack(">I", len(data)) + kind + data + crc


def _save_grey(labels: np.ndarray, path: Path, depth: int) -> None:
    """A grayscale PNG of bit depth 1, 2 or 4 (what optipng writes for few labels):
    Pillow writes none of these for mode L."""
    h, w = labels.shape
    bits = np.unpackbits(labels.astype(np.uint8)[:, :, None], axis=2)[:, :, 8 - depth :]
    bits = bits.reshape(h, -1)
    rows = b"".join(b"\x00" + np.packbits(bits[r]).tobytes() for r in range(h))
    header = struct.pack(">IIBBBBB", w, h, depth, 0, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows))
        + _chunk(b"IEND", b"")
    )


def _labels() -> np.ndarray:
    g = np.zeros((48, 64), np.uint8)
    g[:24] = 1
    g[:, :20] = 2
    g[30:40, 40:50] = 3
    return g


@pytest.mark.parametrize("depth", [2, 4])
def test_low_bit_depth_grey_png_gives_the_stored_labels(tmp_path, depth):
    g = _labels()
    _save_grey(g, tmp_path / "g.png", depth)
    # Pillow itself scales the samples to 0..255 (x85, x17): the bug this guards
    scaled = g * (255 // (2**depth - 1))
    assert np.array_equal(np.asarray(Image.open(tmp_path / "g.png")), scaled)
    assert np.array_equal(read_label_map(tmp_path / "g.png"), g)


def test_one_bit_grey_png_stays_zero_one(tmp_path):
    g = (_labels() > 1).astype(np.uint8)
    _save_grey(g, tmp_path / "g.png", 1)
    assert np.array_equal(read_label_map(tmp_path / "g.png"), g)


def test_semantic_command_scores_a_four_bit_ground_truth(tmp_path, capsys):
    g = _labels()
    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    _save_grey(g, tmp_path / "gt" / "a.png", 4)
    Image.fromarray(g).save(tmp_path / "pred" / "a.png")
    args = ["semantic", "--gt", str(tmp_path / "gt"), "--pred", str(tmp_path / "pred")]
    assert main([*args, "--classes", "4", "--quiet", "--json"]) == 0
    # a perfect prediction (before: 4-bit samples read x17 as labels 0, 17, 34, 51)
    assert json.loads(capsys.readouterr().out)["metrics"]["mIoU"] == 1.0


def test_jpeg_data_under_a_png_name_is_refused(tmp_path):
    Image.fromarray(_labels()).save(tmp_path / "a.png", format="JPEG", quality=90)
    with pytest.raises(InputError, match="JPEG") as err:
        read_label_map(tmp_path / "a.png")
    assert "a.png" in str(err.value)


def test_semantic_pairs_upper_case_extensions(tmp_path):
    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
        for name in ("a.PNG", "b.png"):
            Image.fromarray(_labels()).save(tmp_path / side / name, format="PNG")
    pairs = pair_folders(tmp_path / "gt", tmp_path / "pred")
    assert [key for key, _, _ in pairs] == ["a", "b"]
    ev = SemanticEval(4, boundary_dilation=None)
    assert ev.update_folders(tmp_path / "gt", tmp_path / "pred") == 2


def test_same_key_in_two_cases_is_refused(tmp_path):
    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
    for name in ("a.PNG", "a.png"):
        Image.fromarray(_labels()).save(tmp_path / "gt" / name, format="PNG")
    with pytest.raises(InputError, match="several ground-truth files"):
        pair_folders(tmp_path / "gt", tmp_path / "pred")


def _folders_with_a_dead_link(tmp_path: Path) -> None:
    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
        for name in ("a", "b"):
            Image.fromarray(_labels()).save(tmp_path / side / f"{name}.png")
    os.symlink(tmp_path / "unmounted" / "c.png", tmp_path / "gt" / "c.png")
    Image.fromarray(_labels()).save(tmp_path / "pred" / "c.png")


def test_semantic_refuses_a_link_to_a_missing_ground_truth(tmp_path):
    _folders_with_a_dead_link(tmp_path)
    for recursive in (False, True):
        with pytest.raises(InputError, match="link to a missing") as err:
            pair_folders(tmp_path / "gt", tmp_path / "pred", recursive=recursive)
        assert str(tmp_path / "gt" / "c.png") in str(err.value)


def test_edge_ground_truth_refuses_a_link_to_a_missing_file(tmp_path, capsys):
    _folders_with_a_dead_link(tmp_path)
    args = ["boundary", "--gt", str(tmp_path / "gt"), "--gt-format", "edges"]
    assert main([*args, "--pred", str(tmp_path / "pred"), "--quiet", "--no-plot"]) == 2
    err = capsys.readouterr().err
    assert "c.png" in err and "link to a missing" in err and "Traceback" not in err


def test_listing_refuses_a_link_to_a_missing_file(tmp_path):
    Image.fromarray(_labels()).save(tmp_path / "a.png")
    os.symlink(tmp_path / "gone.png", tmp_path / "b.png")
    with pytest.raises(InputError, match="link to a missing"):
        list_files(tmp_path, ".png")
    os.remove(tmp_path / "b.png")
    assert list(list_files(tmp_path, ".png")) == ["a"]


def _multilabel_folders(tmp_path: Path, edges: np.ndarray) -> None:
    """``gt/0.png`` and ``pred/0.png``: the (C, H, W) boundary maps ``edges`` in
    pyEdgeEval's multi-label RGB encoding (a perfect prediction)."""
    from segbench.semantic_boundary._edges import encode_multilabel

    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
        Image.fromarray(encode_multilabel(edges)).save(tmp_path / side / "0.png")


def _one_class_edges() -> np.ndarray:
    edges = np.zeros((2, 40, 48), bool)
    edges[0, 10, 5:40] = True
    return edges


def test_semantic_boundary_refuses_classes_beyond_n_classes(tmp_path, capsys):
    edges = np.zeros((4, 40, 48), bool)
    edges[0, 10, 5:40] = True
    edges[1, 5:30, 20] = True
    edges[3, 30, 10:30] = True  # class 4 (1-based): bit 3 of B
    _multilabel_folders(tmp_path, edges)
    args = ["semantic-boundary", "--gt", str(tmp_path / "gt")]
    args += ["--pred", str(tmp_path / "pred"), "--quiet"]
    assert main([*args, "--n-classes", "2"]) == 2
    err = capsys.readouterr().err
    assert "0.png" in err and "class 4" in err and "n_classes is 2" in err
    assert main([*args, "--n-classes", "4"]) == 0


def test_a_class_count_no_table_can_hold_is_one_line(tmp_path, capsys):
    with pytest.raises(InputError, match="at most 65536"):
        SemanticEval(100_000)
    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
        Image.fromarray(_labels()).save(tmp_path / side / "a.png")
    args = ["semantic", "--gt", str(tmp_path / "gt"), "--pred", str(tmp_path / "pred")]
    assert main([*args, "--classes", "100000", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("segbench: error: 100000 classes") and "Traceback" not in err


def test_a_closed_output_pipe_ends_the_command_quietly(tmp_path):
    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
        Image.fromarray(_labels()).save(tmp_path / side / "a.png")
    start = "from segbench.cli import console_main; console_main()"
    cmd = [sys.executable, "-c", start, "semantic", "--gt", str(tmp_path / "gt")]
    cmd += ["--pred", str(tmp_path / "pred"), "--classes", "4", "--quiet", "--json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the command writes
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert err == ""


def test_run_name_skips_a_class_folder(tmp_path):
    (tmp_path / "casenet" / "class_001").mkdir(parents=True)
    assert run_name(tmp_path / "casenet" / "class_001") == "casenet"
    (tmp_path / "hed" / "test").mkdir(parents=True)
    assert run_name(tmp_path / "hed" / "test") == "hed"


def _edge_folders(tmp_path: Path, n: int = 4) -> tuple[Path, Path]:
    gt, pred = tmp_path / "gt", tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    for k in range(n):
        e = np.zeros((60, 80), np.uint8)
        e[10 + 5 * k, :] = 255
        e[:, 40] = 255
        Image.fromarray(e).save(gt / f"im{k}.png")
        Image.fromarray(e).save(pred / f"im{k}.png")
    return gt, pred


def test_a_count_of_thresholds_is_checked_before_any_file(tmp_path, capsys):
    _multilabel_folders(tmp_path, _one_class_edges())
    args = ["semantic-boundary", "--gt", str(tmp_path / "gt"), "--n-classes", "2"]
    assert main([*args, "--pred", str(tmp_path / "pred"), "--thresholds", "0"]) == 2
    err = capsys.readouterr().err
    assert err == "segbench: error: nthresh must be a positive integer, got 0\n"


def test_annotators_of_two_sizes_blame_the_ground_truth(tmp_path, capsys):
    gt, pred = tmp_path / "gt" / "im0", tmp_path / "pred"
    gt.mkdir(parents=True)
    pred.mkdir()
    e = np.zeros((60, 80), np.uint8)
    e[20, :] = 255
    Image.fromarray(e).save(gt / "a.png")
    Image.fromarray(e[:50]).save(gt / "b.png")
    Image.fromarray(e).save(pred / "im0.png")
    args = ["boundary", "--gt", str(tmp_path / "gt"), "--pred", str(pred)]
    assert main([*args, "--gt-format", "edges", "--quiet", "--no-plot"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"segbench: error: {gt / 'b.png'}: image 'im0': annotations")


def test_semantic_records_its_prediction_folder(tmp_path):
    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
        Image.fromarray(_labels()).save(tmp_path / side / "a.png")
    out = tmp_path / "run"
    args = ["semantic", "--gt", str(tmp_path / "gt"), "--pred", str(tmp_path / "pred")]
    assert main([*args, "--classes", "4", "--out", str(out), "--quiet"]) == 0
    for name in ("manifest.json", "result_semantic.json"):
        assert f'"pred_dir": "{tmp_path / "pred"}"' in (out / name).read_text()


def test_boundaries_only_ground_truth_is_scored_and_refused_for_regions(tmp_path, capsys):
    import scipy.io as sio

    (tmp_path / "nyud").mkdir()
    (tmp_path / "pred").mkdir()
    e = np.zeros((85, 112), np.uint8)
    e[20, 10:100] = 1
    e[10:80, 60] = 1
    cell = np.empty((1, 1), dtype=object)
    cell[0, 0] = {"Boundaries": e}
    sio.savemat(tmp_path / "nyud" / "img_5001.mat", {"groundTruth": cell})
    Image.fromarray(e * 255).save(tmp_path / "pred" / "img_5001.png")
    args = ["--gt", str(tmp_path / "nyud"), "--pred", str(tmp_path / "pred"), "--quiet"]
    assert main(["boundary", *args, "--preset", "nyud", "--no-plot", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["ODS"] == 1.0
    assert main(["region", *args, "--labels"]) == 2
    assert "has Boundaries but no Segmentation" in capsys.readouterr().err


def test_mixed_boundaries_only_annotators_are_refused(tmp_path):
    import scipy.io as sio

    from segbench.io import read_ground_truth

    e = np.zeros((20, 30), np.uint8)
    e[5, :] = 1
    cell = np.empty((1, 2), dtype=object)
    cell[0, 0] = {"Boundaries": e}
    cell[0, 1] = {"Segmentation": (e + 1).astype(np.uint16), "Boundaries": e}
    sio.savemat(tmp_path / "g.mat", {"groundTruth": cell})
    with pytest.raises(InputError, match="groundTruth\\{1\\} has no Segmentation"):
        read_ground_truth(tmp_path / "g.mat")


def test_sixteen_bit_edge_maps_are_read_as_edges_and_the_guess_recorded(tmp_path, capsys):
    gt8, pred = _edge_folders(tmp_path)
    gt16 = tmp_path / "gt16"
    gt16.mkdir()
    for p in sorted(gt8.iterdir()):
        e = np.asarray(Image.open(p)) > 0
        Image.fromarray((e * 65535).astype(np.uint16)).save(gt16 / p.name)
    scores = []
    for gt in (gt8, gt16):
        out = tmp_path / f"run-{gt.name}"
        args = ["boundary", "--gt", str(gt), "--pred", str(pred), "--out", str(out)]
        assert main([*args, "--quiet", "--no-plot", "--json"]) == 0
        got = capsys.readouterr()
        scores.append(json.loads(got.out)["metrics"])
        assert f"read as edge maps, as its first image {gt / 'im0.png'}" in got.err
        assert '"guessed_from"' in (out / "result_boundary.json").read_text()
    assert scores[0] == scores[1]


def test_a_rerun_on_fewer_images_leaves_no_stale_per_image_file(tmp_path):
    gt, pred = _edge_folders(tmp_path)
    out = tmp_path / "run"
    args = ["boundary", "--gt", str(gt), "--pred", str(pred), "--out", str(out)]
    args += ["--quiet", "--no-plot"]
    assert main(args) == 0
    (out / "notes_ev1.txt").write_text("mine\n")  # the user's: no record of it
    assert main([*args, "--ids", "im0,im1"]) == 0
    assert sorted(p.name for p in out.glob("*_ev1.txt")) == [
        "im0_ev1.txt",
        "im1_ev1.txt",
        "notes_ev1.txt",
    ]
    assert len((out / "eval_bdry_img.txt").read_text().splitlines()) == 2
    assert main(args) == 0  # all again: the files come back from the records
    assert len(list(out.glob("im*_ev1.txt"))) == 4


def test_a_rerun_without_a_class_removes_its_old_class_folder(tmp_path):
    from segbench.semantic_boundary._edges import encode_multilabel

    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
    for i in range(2):
        edges = np.zeros((3, 40, 48), bool)
        edges[0, 10 + i, 5:40] = True
        edges[2, 5:30, 20] = i == 0  # class 3 in the first image only
        for side in ("gt", "pred"):
            Image.fromarray(encode_multilabel(edges)).save(tmp_path / side / f"{i}.png")
    out = tmp_path / "run"
    args = ["semantic-boundary", "--gt", str(tmp_path / "gt"), "--n-classes", "3"]
    args += ["--pred", str(tmp_path / "pred"), "--out", str(out), "--quiet"]
    assert main(args) == 0
    assert (out / "class_003" / "eval_bdry.txt").is_file()
    assert main([*args, "--ids", "1"]) == 0
    assert not (out / "class_003").exists()
    assert (out / "class_001" / "eval_bdry.txt").is_file()


def test_a_map_folder_of_nms_is_not_taken_as_a_run_folder(tmp_path, capsys):
    gt, pred = _edge_folders(tmp_path, 2)
    thin = tmp_path / "thin"
    assert main(["nms", "--pred", str(pred), "--out", str(thin), "--quiet"]) == 0
    before = sorted(p.name for p in thin.iterdir())
    args = ["boundary", "--gt", str(gt), "--pred", str(pred), "--out", str(thin)]
    assert main([*args, "--quiet", "--no-plot"]) == 2
    assert "a folder of maps written by segbench nms" in capsys.readouterr().err
    assert sorted(p.name for p in thin.iterdir()) == before  # nothing written


def _bsds_with_two_algorithms(tmp_path: Path) -> tuple[Path, Path, Path]:
    """BSDS .mat ground truth of 2 images, soft maps in ``hed/`` and segs in ``ucm/``."""
    import scipy.io as sio

    from segbench.datasets import write_ground_truth

    gt, hed, ucm = tmp_path / "gt", tmp_path / "hed", tmp_path / "ucm"
    for d in (gt, hed, ucm):
        d.mkdir()
    for k in range(2):
        seg = np.ones((30, 40), np.uint16)
        seg[:, 20 + k :] = 2
        write_ground_truth(gt / f"im{k}.mat", [seg, seg])
        soft = np.zeros((30, 40), np.uint8)
        soft[:, 19 + k] = 200
        Image.fromarray(soft).save(hed / f"im{k}.png")
        cell = np.empty((1, 2), dtype=object)
        cell[0, 0], cell[0, 1] = seg.astype(float), np.ones((30, 40))
        sio.savemat(ucm / f"im{k}.mat", {"segs": cell})
    return gt, hed, ucm


def test_a_second_algorithm_in_one_run_folder_is_warned(tmp_path, capsys):
    gt, hed, ucm = _bsds_with_two_algorithms(tmp_path)
    base = ["--gt", str(gt), "--out", str(tmp_path / "run"), "--quiet"]
    assert main(["boundary", *base, "--pred", str(hed), "--no-plot"]) == 0
    capsys.readouterr()
    assert main(["human", *base]) == 0  # the annotators: no warning
    assert main(["region", *base, "--pred", str(ucm), "--name", "hed"]) == 0
    assert "warning" not in capsys.readouterr().err  # one algorithm, as --name says
    other = ["--gt", str(gt), "--out", str(tmp_path / "run2"), "--quiet"]
    assert main(["boundary", *other, "--pred", str(hed), "--no-plot"]) == 0
    capsys.readouterr()
    assert main(["region", *other, "--pred", str(ucm)]) == 0
    err = capsys.readouterr().err
    assert "boundary results of 'hed' and now region results of 'ucm'" in err


def test_a_run_never_replaces_another_algorithms_result(tmp_path, capsys):
    """A finished boundary run of 'hed', then one of 'ucm' into the same folder: refused
    before any work (it replaced hed's result, intervals and records without a word)."""
    gt, hed, ucm = _bsds_with_two_algorithms(tmp_path)
    base = ["--gt", str(gt), "--out", str(tmp_path / "run"), "--quiet", "--no-plot"]
    assert main(["boundary", *base, "--pred", str(hed)]) == 0
    result = tmp_path / "run" / "result_boundary.json"
    records = sorted((tmp_path / "run" / ".segbench-records").rglob("*.json"))
    before = result.read_bytes(), [p.read_bytes() for p in records]
    capsys.readouterr()
    assert main(["boundary", *base, "--pred", str(ucm)]) == 2
    assert "holds the boundary results of 'hed'; a run of 'ucm' would replace them" in \
        capsys.readouterr().err
    assert (result.read_bytes(), [p.read_bytes() for p in records]) == before
    assert main(["boundary", *base, "--pred", str(hed)]) == 0  # the same one: resumes


def test_predictions_below_every_threshold_are_warned(tmp_path, capsys):
    gt, pred = _edge_folders(tmp_path, 2)
    for p in pred.iterdir():  # a 0/1 map saved as 8-bit
        a = np.asarray(Image.open(p))
        Image.fromarray((a > 0).astype(np.uint8)).save(p)
    args = ["boundary", "--gt", str(gt), "--pred", str(pred), "--quiet", "--no-plot"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "2 of 2 predictions have no pixel at any threshold (im0, im1)" in err


def test_predictions_of_different_kinds_are_named(tmp_path, capsys):
    import scipy.io as sio

    from segbench.datasets import write_ground_truth

    gt, pred = tmp_path / "gt", tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    for k, n in enumerate((3, 3, 2)):
        seg = np.ones((30, 40), np.uint16)
        seg[:, 20:] = 2
        write_ground_truth(gt / f"im{k}.mat", [seg, seg])
        cell = np.empty((1, n), dtype=object)
        for j in range(n):
            s = np.ones((30, 40))
            s[10 + j :, :] = 2
            cell[0, j] = s
        sio.savemat(pred / f"im{k}.mat", {"segs": cell})
    args = ["--gt", str(gt), "--pred", str(pred), "--quiet"]
    assert main(["region", *args]) == 2
    err = capsys.readouterr().err
    assert "3 thresholds for 2 images (im0, im1); 2 thresholds for 1 image (im2)" in err


def test_a_channel_first_oriented_stack_is_refused():
    from segbench.algorithms import owt_ucm

    with pytest.raises(InputError, match=r"channel-first \(K, H, W\)"):
        owt_ucm(np.zeros((8, 40, 60)))


def test_a_calibration_on_the_same_images_is_warned(tmp_path, capsys):
    gt, pred = _edge_folders(tmp_path, 2)
    base = ["boundary", "--gt", str(gt), "--pred", str(pred), "--quiet", "--no-plot"]
    assert main([*base, "--out", str(tmp_path / "a")]) == 0
    capsys.readouterr()
    calibrated = ["--calibrate-on", str(tmp_path / "a")]
    assert main([*base, "--out", str(tmp_path / "b"), *calibrated]) == 0
    assert "scored 2 of this run's 2 images" in capsys.readouterr().err


def test_both_ucm2_and_segs_tells_a_command_line_user_what_to_do(tmp_path):
    import scipy.io as sio

    from segbench.io import read_prediction

    cell = np.empty((1, 1), dtype=object)
    cell[0, 0] = np.ones((5, 6))
    sio.savemat(tmp_path / "a.mat", {"ucm2": np.zeros((11, 13)), "segs": cell})
    with pytest.raises(InputError, match="keep one of them in the file"):
        read_prediction(tmp_path / "a.mat")


def test_sbd_root_asks_for_a_split_and_its_cls_folder_takes_one(tmp_path):
    from segbench.semantic_boundary._family import _open_ground_truth

    (tmp_path / "cls").mkdir()
    for iid in ("a", "b", "c"):
        (tmp_path / "cls" / f"{iid}.mat").write_bytes(b"")  # listed, not read here
    (tmp_path / "train.txt").write_text("a\nb\n")
    (tmp_path / "val.txt").write_text("c\n")
    with pytest.raises(InputError, match=r"several splits \(train.txt, val.txt\)"):
        _open_ground_truth(tmp_path, None)
    assert _open_ground_truth(tmp_path, "val").ids() == ["c"]
    assert _open_ground_truth(tmp_path / "cls", "val").ids() == ["c"]
    assert _open_ground_truth(tmp_path / "cls", None).ids() == ["a", "b", "c"]  # every file


def test_an_empty_per_image_counts_file_says_so(tmp_path):
    from segbench.io import read_ev1

    (tmp_path / "a_ev1.txt").write_text("\n")
    with pytest.raises(InputError, match="the file is empty"):
        read_ev1(tmp_path / "a_ev1.txt")


def test_compare_labels_and_different_images_read_plainly(tmp_path, capsys):
    from segbench.comparison import distinct_names

    a, b = tmp_path / "x" / "run", tmp_path / "y" / "run"
    assert distinct_names(["hed", "hed"], [a, b]) == ["hed (x/run)", "hed (y/run)"]
    assert "//" not in distinct_names(["hed", "hed"], [a, a])[0]
    gt, pred = _edge_folders(tmp_path, 3)
    base = ["boundary", "--gt", str(gt), "--pred", str(pred), "--quiet", "--no-plot"]
    assert main([*base, "--out", str(tmp_path / "all")]) == 0
    assert main([*base, "--out", str(tmp_path / "sub"), "--ids", "im0,im1"]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "sub"), str(tmp_path / "all")]) == 2
    err = capsys.readouterr().err
    assert "1 only in" in err and "im2" in err and "0 only in" not in err


def test_an_evaluator_is_not_merged_into_itself():
    ev = SemanticEval(4, boundary_dilation=None)
    ev.update(_labels(), _labels())
    with pytest.raises(InputError, match="merged into itself"):
        ev.merge(ev)
    assert ev.n_images == 1


def test_predictions_under_longer_names_are_pointed_out(tmp_path, capsys):
    gt, pred = _edge_folders(tmp_path, 2)
    for p in sorted(pred.iterdir()):
        p.rename(pred / f"{p.stem}_fuse.png")
    args = ["boundary", "--gt", str(gt), "--pred", str(pred), "--quiet", "--no-plot"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "(im0_fuse.png, im1_fuse.png)" in err and "so rename them" in err


def test_a_folder_named_like_a_prediction_is_said_to_be_one(tmp_path):
    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
    Image.fromarray(_labels()).save(tmp_path / "gt" / "x.png")
    (tmp_path / "pred" / "x.png").mkdir()
    with pytest.raises(InputError, match=r"\(x.png is a folder, not a file\)"):
        pair_folders(tmp_path / "gt", tmp_path / "pred")


def test_presentation_is_refused_where_there_are_no_subjects(tmp_path, capsys):
    _multilabel_folders(tmp_path, _one_class_edges())
    args = ["semantic-boundary", "--gt", str(tmp_path / "gt"), "--n-classes", "2"]
    args += ["--pred", str(tmp_path / "pred"), "--presentation", "gray", "--quiet"]
    # (semantic-boundary no longer offers the option: argparse refuses it, status 2)
    with pytest.raises(SystemExit) as stop:
        main(args)
    assert stop.value.code == 2
    assert "unrecognized arguments: --presentation gray" in capsys.readouterr().err
