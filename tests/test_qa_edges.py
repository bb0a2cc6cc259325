"""Defects found by using the product at its edges (stop 52): labels no class count
reaches, and what the QA sweeps of the detectors, the site and the tools found."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from segbench.semantic import LabelError, SemanticEval


@pytest.mark.parametrize("dtype", ["<u8", ">u8"])
def test_a_uint64_label_beyond_int64_is_named_as_stored(dtype):
    pred = np.zeros((2, 8, 8), dtype)
    pred[1, 4, 5] = 2**64 - 1
    ev = SemanticEval(3)
    with pytest.raises(
        LabelError, match=r"image 1, row 4, col 5\) has label 18446744073709551615"
    ):
        ev.update(np.zeros((2, 8, 8), np.uint8), pred)
    assert ev.n_images == 0  # nothing counted


def test_a_folder_named_like_a_soft_prediction_is_said_to_be_one(tmp_path):
    from segbench.datasets._inputs import pair_predictions
    from segbench.errors import InputError

    (tmp_path / "100007.png").mkdir()
    with pytest.raises(InputError, match=r"100007\.png is a folder, not a file"):
        pair_predictions(["100007"], tmp_path, ("png", "npy"))


def _png_with_damaged_header(path):
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray((np.arange(64).reshape(8, 8) % 3).astype(np.uint8)).save(buf, "PNG")
    data = bytearray(buf.getvalue())
    data[29] ^= 0xFF  # the IHDR chunk's CRC
    path.write_bytes(bytes(data))


def test_a_png_with_a_damaged_header_is_refused_by_every_reader(tmp_path, capsys):
    from segbench.cli import main
    from segbench.errors import InputError
    from segbench.io import read_label_map

    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
    _png_with_damaged_header(tmp_path / "gt" / "a.png")
    with pytest.raises(InputError, match="not an image Pillow can read"):
        read_label_map(tmp_path / "gt" / "a.png")
    from PIL import Image

    Image.fromarray(np.zeros((8, 8), np.uint8)).save(tmp_path / "pred" / "a.png")
    code = main(
        [
            "semantic",
            "--gt",
            str(tmp_path / "gt"),
            "--pred",
            str(tmp_path / "pred"),
            "--classes",
            "3",
            "--quiet",
        ]
    )
    assert code == 2
    assert "gt/a.png: not an image Pillow can read" in capsys.readouterr().err


# --- the Python API in a training loop (QA sweep of the streaming evaluators) ----------


def _line_gt():
    g = np.zeros((32, 32), bool)
    g[16, 4:28] = True
    return g


def test_region_eval_with_workers_copies_segmentations_given_as_a_list():
    import segbench

    seg = np.ones((24, 32), np.int32)
    seg[:, 16:] = 2
    gt = [seg.copy()]
    out = []
    for workers in (0, 2):
        ev = segbench.RegionEval(workers=workers)
        buf = seg.copy()
        ev.update([[buf]], [gt])
        buf[:] = 1  # the loop reuses its buffer before the pool has scored it
        out.append(ev.compute().metrics["covering_ODS"])
    assert out[0] == out[1] == 1.0


def test_semantic_boundary_eval_reads_integer_maps_as_the_files_are_read():
    import segbench

    gt = np.zeros((2, 32, 32), bool)
    gt[0, 16, 4:28] = True
    gt[1, 4:28, 8] = True
    p = gt * 0.9
    p[0, 8, 4:28] = 0.3
    p[1, 4:28, 20] = 0.3

    def mf(x):
        ev = segbench.SemanticBoundaryEval(max_dist=0.0075)
        ev.update(x, gt)
        return ev.compute().metrics["MF_ODS"]

    assert mf(np.round(p * 65535).astype(np.uint16)) == mf(p)
    assert mf(np.round(p * 65535).astype(">u2")) == mf(p)
    from segbench.errors import InputError

    for bad in (np.round(p * 255).astype(np.int64), p.astype(str), p.astype(complex)):
        with pytest.raises(InputError, match="pred"):
            mf(bad)


def test_merge_refuses_rounded_and_unrounded_shards():
    import segbench
    from segbench.errors import InputError

    g = _line_gt()
    a = segbench.BoundaryEval(bits=8)
    a.update(g * 0.8, [g], ids="a")
    b = segbench.BoundaryEval()
    b.update(g * 0.8, [g], ids="b")
    with pytest.raises(InputError, match="bits 8 there, None here"):
        b.merge(a)
    with pytest.raises(InputError, match="bits None there, 8 here"):
        a.merge(b.state_dict())


def test_a_state_holding_an_id_twice_is_refused():
    import segbench
    from segbench.errors import InputError

    g = _line_gt()
    a = segbench.BoundaryEval()
    a.update(g * 0.8, [g], ids="img1")
    st = a.state_dict()
    two = {
        **st,
        "ids": np.array(["img1", "img1"]),
        "lengths": np.r_[st["lengths"], st["lengths"]],
    }
    for k in st["fields"]["per_threshold"]:
        two[k] = np.r_[st[k], st[k]]
    for k in st["fields"]["per_image"]:
        two[k] = np.r_[st[k], st[k]]
    with pytest.raises(InputError, match="'img1' appears more than once"):
        segbench.BoundaryEval().load_state_dict(two)


def test_a_merge_refusal_names_only_what_differs():
    import segbench
    from segbench.errors import InputError

    a, b = segbench.BoundaryEval(max_dist=0.01), segbench.BoundaryEval()
    with pytest.raises(InputError) as err:
        b.merge(a)
    assert "params.max_dist 0.01 there, 0.0075 here" in str(err.value)
    assert "nthresh" not in str(err.value)


SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.mark.skipif(not (SHARED / "bsds500").is_dir(), reason="needs ../shared/data")
def test_an_edge_image_array_scores_as_its_file(tmp_path):
    """A 0/255 edge image as an array scores as the file does (it was read as a label
    map of two labels: 0.8503 against 0.8526 on 100007's first annotator)."""
    import segbench
    from PIL import Image

    from segbench.io import read_ground_truth

    gt = SHARED / "bsds500" / "groundTruth" / "test" / "100007.mat"
    edges = np.asarray(read_ground_truth(gt)[0].boundaries).astype(np.uint8) * 255
    Image.fromarray(edges).save(tmp_path / "a.png")
    pb = np.asarray(Image.open(SHARED / "bsds500-hed-nms" / "test" / "100007.png")) / 255.0

    def ods(g):
        ev = segbench.BoundaryEval(thresholds=9)
        ev.update(pb, g)
        return ev.compute().metrics["ODS"]

    assert ods([edges]) == ods(str(tmp_path / "a.png"))
    blob = np.zeros(edges.shape, np.uint8)
    blob[100:200, 100:300] = 255  # a region: still a label map of two labels
    assert ods([blob]) == ods([(blob > 0).astype(np.int32) + 1])


def test_a_streamed_result_compares_with_a_folder_run_with_a_warning(tmp_path):
    import segbench
    from PIL import Image

    from segbench.io import write_soft_map

    g = _line_gt()
    gt_dir, pred_dir = tmp_path / "gt", tmp_path / "pred"
    gt_dir.mkdir()
    pred_dir.mkdir()
    for i, shift in enumerate((0, 1, 2)):
        Image.fromarray(g.astype(np.uint8) * 255).save(gt_dir / f"im{i}.png")
        pb = np.roll(g, shift, axis=0) * 0.8
        write_soft_map(pred_dir / f"im{i}.png", pb)
    segbench.evaluate(
        "boundary", gt=gt_dir, pred=pred_dir, out=tmp_path / "run", progress=False
    )
    ev = segbench.BoundaryEval(name="mine")
    for i in range(3):
        ev.update(
            np.asarray(Image.open(pred_dir / f"im{i}.png")),
            str(gt_dir / f"im{i}.png"),
            ids=f"im{i}",
        )
    with pytest.warns(UserWarning, match="cannot check that"):
        table = ev.compute().compare(tmp_path / "run")
    assert table is not None


# --- detectors and their folders (QA sweep of the detectors) ---------------------------

needs_shared = pytest.mark.skipif(
    not (SHARED / "bsds500").is_dir(), reason="needs ../shared/data"
)


@needs_shared
def test_crispness_runs_on_worker_processes_and_refuses_ci(tmp_path):
    import shutil

    import segbench
    from segbench.errors import InputError

    pred = tmp_path / "maps"
    pred.mkdir()
    for iid in ("100007", "100039"):
        shutil.copy(SHARED / "bsds500-hed-nms" / "test" / f"{iid}.png", pred)
    gt = SHARED / "bsds500" / "groundTruth" / "test"
    one = segbench.evaluate("crispness", gt, pred, ids=["100007", "100039"], progress=False)
    two = segbench.evaluate(
        "crispness", gt, pred, ids=["100007", "100039"], workers=2, progress=False
    )
    assert one.metrics == two.metrics
    with pytest.raises(InputError, match="crispness has no bootstrap intervals"):
        segbench.evaluate(
            "crispness", gt, pred, ids=["100007"], ci={"resamples": 10}, progress=False
        )


def _soft_folder(folder, n=1):
    from PIL import Image

    folder.mkdir()
    rng = np.random.default_rng(0)
    for k in range(n):
        Image.fromarray((rng.random((24, 32)) * 255).astype(np.uint8)).save(
            folder / f"m{k}.png"
        )
    return folder


def test_nms_never_writes_over_a_file_it_did_not_write(tmp_path):
    from segbench.algorithm_folders import nms_folder
    from segbench.errors import InputError

    raw = _soft_folder(tmp_path / "raw")
    out = tmp_path / "thin"
    nms_folder(raw, out, fmt="npy", progress=False)
    (out / "m0.png").write_bytes(b"mine")  # the user's file, of the next run's name
    with pytest.raises(InputError, match=r"not written by segbench nms .*: m0\.png"):
        nms_folder(raw, out, progress=False)
    assert (out / "m0.png").read_bytes() == b"mine"


def test_detect_resumes_from_the_same_folder_named_otherwise(tmp_path, monkeypatch):
    from segbench.algorithm_folders import detect_folder

    images = _soft_folder(tmp_path / "img", n=2)
    monkeypatch.chdir(tmp_path)
    detect_folder("img", tmp_path / "out", detector="gm", progress=False)
    again = detect_folder(images.resolve(), tmp_path / "out", detector="gm", progress=False)
    assert again.n_reused == 2


# --- compare on too few images (QA sweep of the statistics) -----------------------------


def _hed_and_gpb_runs(tmp_path, ids) -> list:
    """Boundary run folders of the HED maps and the authors' gPb-owt-ucm on ``ids``."""
    import segbench

    gt = SHARED / "bsds500" / "groundTruth" / "test"
    runs = []
    for p in ("hed-nms", "gpb-owt-ucm"):
        out = tmp_path / p
        segbench.evaluate(
            "boundary", gt, SHARED / f"bsds500-{p}" / "test", out, ids=ids, progress=False
        )
        runs.append(out)
    return runs


@needs_shared
def test_compare_on_one_image_gives_no_p_value_and_warns_below_ten(tmp_path):
    from segbench.comparison import SmallSampleWarning, compare

    runs = _hed_and_gpb_runs(tmp_path, ["100007"])
    with pytest.warns(SmallSampleWarning, match="1 image: one image gives"):
        res = compare(*runs, resamples=50)
    boot = res["pairs"][0]["bootstrap"]["ODS"]
    assert np.isnan(boot["p"]) and np.isnan(boot["lo"]) and np.isnan(boot["hi"])
    ods = [r["metrics"]["ODS"] for r in res["runs"]]  # the difference is still given
    assert boot["diff"] == ods[0] - ods[1] and np.isfinite(boot["diff"])


def test_boundary_eval_refuses_settings_it_would_drop_and_checks_alpha_at_once():
    import segbench
    from segbench.errors import InputError

    for kw in ({"calibrated_threshold": 0.5}, {"calibrated_on": "runs/x"}):
        with pytest.raises(InputError, match="cannot be set here"):
            segbench.BoundaryEval(**kw)
    with pytest.raises(InputError, match=r"alpha .* must be in \(0, 1\), got 5"):
        segbench.BoundaryEval(alpha=5)


def test_the_notebook_view_of_a_semantic_result_counts_its_images():
    from segbench.semantic import SemanticEval

    ev = SemanticEval(2)
    ev.update(np.zeros((4, 4), np.uint8), np.zeros((4, 4), np.uint8))
    assert "semantic &middot; 1 image<" in ev.compute()._repr_html_()


def test_option_values_that_meant_nothing_are_refused_in_one_line(tmp_path, capsys):
    from segbench.algorithms._owt_ucm import thin_line_smoothing
    from segbench.cli import main
    from segbench.errors import InputError
    from segbench.primitives import nms_options

    with pytest.raises(SystemExit):  # argparse: one line, exit 2
        main(["stats", "--gt", str(tmp_path), "--seed", "-1"])
    assert "--seed: must be 0 or more, got -1" in capsys.readouterr().err
    with pytest.raises(InputError, match="must be at most the map's larger side"):
        thin_line_smoothing(np.zeros((20, 30)), 1e6)
    for m in (0, -1):
        with pytest.raises(InputError, match="above 0"):
            nms_options(1, 5, m)
    from segbench.resampling import ci_settings

    with pytest.raises(InputError, match="seed must be an integer >= 0"):
        ci_settings({"seed": -3})


def test_the_blur_peak_is_the_two_dimensional_filters_to_the_bit():
    """The peak is computed in one dimension now (a sigma of 3000 made a 24009 x 24009
    kernel, 4.6 GB); it must be the 2-D filter's, bit for bit."""
    from scipy import ndimage

    from segbench.algorithms._owt_ucm import thin_line_smoothing

    pb = np.random.default_rng(1).random((120, 160))
    for sigma in (0.5, 1.0, 3.0, 17.3):
        line = np.zeros((8 * int(np.ceil(sigma)) + 9,) * 2)
        c = line.shape[0] // 2
        line[:, c] = 1.0
        peak = ndimage.gaussian_filter(line, sigma, mode="nearest")[c, c]
        want = np.clip(ndimage.gaussian_filter(pb, sigma, mode="nearest") / peak, 0.0, 1.0)
        assert np.array_equal(thin_line_smoothing(pb, sigma), want)


def test_an_oriented_stack_outside_zero_one_is_refused(tmp_path):
    from segbench.algorithms._owt_ucm import _read_signal
    from segbench.errors import InputError

    np.save(tmp_path / "s.npy", np.full((20, 30, 8), 100.0, np.float32))
    with pytest.raises(InputError, match=r"oriented stack holds values up to 100"):
        _read_signal(tmp_path / "s.npy")


def test_every_mat_file_segbench_writes_is_the_same_bytes_on_every_run(tmp_path):
    import time

    from segbench.algorithms import write_ucm2
    from segbench.io import write_segs

    a = np.random.default_rng(0).random((7, 9))
    write_ucm2(tmp_path / "u1.mat", a)
    write_segs(tmp_path / "s1.mat", [np.ones((5, 5), int)])
    time.sleep(1.1)  # the header scipy writes names the second
    write_ucm2(tmp_path / "u2.mat", a)
    write_segs(tmp_path / "s2.mat", [np.ones((5, 5), int)])
    assert (tmp_path / "u1.mat").read_bytes() == (tmp_path / "u2.mat").read_bytes()
    assert (tmp_path / "s1.mat").read_bytes() == (tmp_path / "s2.mat").read_bytes()


def _one_hed_map(tmp_path):
    """(the test split's ground truth, a folder of 100007's HED map)."""
    import shutil

    pred = tmp_path / "maps"
    pred.mkdir()
    shutil.copy(SHARED / "bsds500-hed-nms" / "test" / "100007.png", pred)
    return SHARED / "bsds500" / "groundTruth" / "test", pred


@needs_shared
def test_crispness_names_the_option_not_a_map(tmp_path, capsys):
    from segbench.cli import main

    gt, pred = _one_hed_map(tmp_path)
    assert main(["crispness", "--gt", str(gt), "--pred", str(pred), "--nms-r", "-1"]) == 2
    err = capsys.readouterr().err
    assert "(--nms-r, --nms-s, --nms-m): r must be" in err and "100007" not in err


@needs_shared
def test_import_run_refuses_a_tolerance_of_zero(tmp_path, capsys):
    from segbench.cli import main

    gt, pred = _one_hed_map(tmp_path)
    assert (
        main(
            [
                "boundary",
                "--gt",
                str(gt),
                "--pred",
                str(pred),
                "--ids",
                "100007",
                "--out",
                str(tmp_path / "b"),
                "--quiet",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert (
        main(
            [
                "import-run",
                str(tmp_path / "b"),
                "--out",
                str(tmp_path / "i"),
                "--max-dist",
                "0",
            ]
        )
        == 2
    )
    assert (
        "max_dist is a fraction of the image diagonal in (0, 1), got 0.0"
        in capsys.readouterr().err
    )


def test_an_image_the_half_resolution_protocol_cannot_halve_is_named_as_an_image():
    from segbench.boundary._half import halve_image
    from segbench.errors import InputError

    with pytest.raises(InputError, match=r"a 160x107 image cannot be halved to 80x53"):
        halve_image(np.zeros((107, 160, 3), np.uint8))


def test_a_superpixel_file_of_two_variables_names_no_option_it_lacks(tmp_path):
    import scipy.io

    from segbench.errors import InputError
    from segbench.io import read_superpixels

    scipy.io.savemat(tmp_path / "a.mat", {"a": np.zeros((8, 9)), "b": np.zeros((8, 9))})
    with pytest.raises(InputError) as err:
        read_superpixels(tmp_path / "a.mat")
    assert "keep one 2-D variable" in str(err.value) and "--gt-variable" not in str(
        err.value
    )


def test_nested_per_item_values_are_json_in_the_csv():
    import json

    from segbench.result import Result

    res = Result(
        "superpixel", {}, [{"id": "a", "ue": 0.5, "per_annotator": {"ue": [0.1, 0.2]}}]
    )
    row = res.to_csv().splitlines()[1]
    assert json.loads(row.split(",", 2)[2].strip('"').replace('""', '"')) == {
        "ue": [0.1, 0.2]
    }


def test_a_detect_headline_counts_one_map_in_the_singular(tmp_path):
    from segbench.algorithm_folders import detect_folder

    images = _soft_folder(tmp_path / "img", n=1)
    res = detect_folder(images, tmp_path / "out", detector="gm", progress=False)
    assert res.headline().startswith("wrote 1 soft map of gm")


def test_an_all_zero_map_left_out_of_the_crispness_mean_is_warned():
    from segbench.boundary._crispness import CrispRecord, _summarize
    from segbench.primitives import BoundaryCounts

    t = np.array([0.5])
    counts = BoundaryCounts(t, np.array([1]), np.array([2]), np.array([1]), np.array([2]))
    records = [CrispRecord(counts, counts, 0.5), CrispRecord(counts, counts, float("nan"))]
    with pytest.warns(
        UserWarning, match="AC is the mean over 1 of 2 images: 1 map is all zero"
    ):
        res = _summarize(["a", "b"], records, {"alpha": 0.5}, {})
    assert res.metrics["AC"] == 0.5


def test_the_python_api_names_a_bad_argument_in_one_segbench_error(tmp_path):
    import segbench
    from segbench.errors import InputError

    gt, pred = tmp_path / "gt", tmp_path / "pred"
    for bad, match in (
        (
            {"workers": "2"},
            r"workers \(--workers\) must be an integer of at least 1, got '2'",
        ),
        (
            {"workers": 2.5},
            r"workers \(--workers\) must be an integer of at least 1, got 2.5",
        ),
        ({"gt": None}, "gt: give the ground truth"),
    ):
        kw = {"gt": gt, "pred": pred, **bad}
        with pytest.raises(InputError, match=match):
            segbench.evaluate("boundary", progress=False, **kw)
    with pytest.raises(InputError, match="max_dist must be a number, got 'x'"):
        segbench.BoundaryEval(max_dist="x")


@needs_shared
def test_compare_reads_ids_given_as_one_string(tmp_path):
    from segbench.comparison import compare

    runs = _hed_and_gpb_runs(tmp_path, ["100007", "100039"])
    with pytest.warns(UserWarning):
        res = compare(*runs, ids="100007,100039", resamples=20)
    assert res["n_images"] == 2


@needs_shared
def test_a_dataset_root_with_an_image_in_two_splits_says_so(tmp_path, capsys):
    import shutil

    from segbench.cli import main

    for split in ("test", "val"):
        (tmp_path / "dup" / "groundTruth" / split).mkdir(parents=True)
        (tmp_path / "dup" / "images" / split).mkdir(parents=True)
        shutil.copy(
            SHARED / "bsds500" / "groundTruth" / "test" / "100007.mat",
            tmp_path / "dup" / "groundTruth" / split,
        )
        shutil.copy(
            SHARED / "bsds500" / "images" / "test" / "100007.jpg",
            tmp_path / "dup" / "images" / split,
        )
    pred = SHARED / "bsds500-hed-nms" / "test"
    assert (
        main(
            [
                "boundary",
                "--gt",
                str(tmp_path / "dup"),
                "--split",
                "test",
                "--pred",
                str(pred),
                "--ids",
                "100007",
            ]
        )
        == 2
    )
    assert "image '100007' is in two splits (test and val)" in capsys.readouterr().err


def test_a_run_name_with_dollars_displays_in_a_notebook():
    import segbench

    g = _line_gt()
    ev = segbench.BoundaryEval(name=r"$\badmacro$ lr=$1e-3$")
    ev.update(g * 0.8, [g])
    res = ev.compute()
    assert "badmacro" in res._repr_html_()  # mathtext raised before


def test_a_human_point_out_of_range_or_not_numbers_is_refused():
    import segbench
    from segbench.errors import InputError

    g = _line_gt()
    ev = segbench.BoundaryEval()
    ev.update(g * 0.8, [g])
    with pytest.raises(InputError, match=r"lie in \[0, 1\]"):
        ev.compute(human=(2, 2, 2))
    with pytest.raises(InputError, match="human: give HumanScores"):
        ev.compute(human="x")


def test_a_mapping_of_arrays_for_a_folder_benchmark_is_refused(tmp_path):
    import segbench
    from segbench.errors import InputError

    with pytest.raises(InputError, match="superpixel benchmark reads a folder"):
        segbench.evaluate("superpixel", tmp_path, {"a": np.zeros((4, 4), np.int32)})


@needs_shared
def test_a_wrongly_sized_precomputed_segmentation_names_its_file(tmp_path, capsys):
    from PIL import Image

    from segbench.cli import main
    from segbench.io import read_ground_truth

    gts = read_ground_truth(SHARED / "bsds500" / "groundTruth" / "val" / "101085.mat")
    seg_dir = tmp_path / "segs"
    seg_dir.mkdir()
    for k in {int(np.unique(g.segmentation).size) for g in gts}:
        Image.fromarray(np.zeros((10, 10), np.uint8)).save(seg_dir / f"101085_{k}.png")
    argv = [
        "granularity",
        "--gt",
        str(SHARED / "bsds500"),
        "--split",
        "val",
        "--segmenter",
        "folder",
        "--seg-dir",
        str(seg_dir),
        "--ids",
        "101085",
        "--quiet",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "segs/101085_" in err and "101085.jpg" not in err


def test_a_map_written_as_nested_lists_is_one_map_not_a_batch_of_rows():
    import segbench

    g = _line_gt()
    ev = segbench.BoundaryEval()
    ev.update((g * 0.8).tolist(), [g])
    assert len(ev) == 1 and ev.compute().metrics["ODS"] == 1.0


def test_messages_fit_the_python_api():
    import segbench
    from segbench.errors import InputError
    from segbench.semantic import SemanticEval

    ev = segbench.RegionEval()
    with pytest.raises(InputError, match=r"give it as floats in \[0, 1\]"):
        ev.update(np.zeros((49, 65), np.uint8), [np.ones((24, 32), np.int32)])
    s = SemanticEval(2)
    s.update(np.zeros((4, 4), np.uint8), np.zeros((4, 4), np.uint8))
    res = s.compute()
    with pytest.raises(
        InputError, match="semantic results are compared from their run folders"
    ):
        res.compare(res)


def test_a_sixteen_bit_photograph_is_refused_with_a_way_forward(tmp_path):
    from PIL import Image

    from segbench.errors import InputError
    from segbench.io import read_image

    Image.fromarray(np.full((8, 9), 40000, np.uint16)).save(tmp_path / "a.png")
    with pytest.raises(InputError, match=r"round\(v / 257\)"):
        read_image(tmp_path / "a.png")


@pytest.mark.parametrize("values, hint", [
    ((0.0, 200.0), "divide by 255"),
    ((-0.5, 0.5), "sigmoid"),
    ((0.0, 1000.0), "rescale them to"),
])
def test_an_out_of_range_soft_map_is_told_a_way_that_fits_it(values, hint):
    """A map centred on 0 was told to divide by 255."""
    from segbench.errors import InputError
    from segbench.io import soft_values
    with pytest.raises(InputError, match=hint):
        soft_values(np.array([values], np.float64), "a.npy")


def test_a_folder_of_annotator_folders_is_told_to_name_its_format(tmp_path):
    """<iid>/ folders of edge maps (docs/datasets.md) need --gt-format: the refusal
    says so (it said "no ground truth here")."""
    from PIL import Image

    import segbench
    from segbench.errors import InputError
    edges = np.zeros((20, 20), np.uint8)
    edges[10, 2:18] = 255
    for who in ("1", "2"):
        (tmp_path / "gt" / "a").mkdir(parents=True, exist_ok=True)
        Image.fromarray(edges).save(tmp_path / "gt" / "a" / f"{who}.png")
    (tmp_path / "pred").mkdir()
    Image.fromarray(edges).save(tmp_path / "pred" / "a.png")
    with pytest.raises(InputError, match="give --gt-format edges or --gt-format labels"):
        segbench.evaluate("boundary", gt=tmp_path / "gt", pred=tmp_path / "pred",
                          progress=False)
    res = segbench.evaluate("boundary", gt=tmp_path / "gt", pred=tmp_path / "pred",
                            gt_format="edges", progress=False)
    assert res.metrics["ODS"] == 1.0


def test_files_grouped_as_annotators_are_said_to_be(tmp_path, caplog):
    """seq.001.png, seq.002.png: read as two annotators of one image (Multicue's
    naming), now said, with the way to read them otherwise."""
    import logging

    from PIL import Image

    from segbench.datasets import open_ground_truth
    edges = np.zeros((20, 20), np.uint8)
    edges[10, 2:18] = 255
    for name in ("seq.001.png", "seq.002.png"):
        Image.fromarray(edges).save(tmp_path / name)
    with caplog.at_level(logging.INFO, logger="segbench"):
        ds = open_ground_truth(tmp_path, gt_format="edges")
    assert ds.ids() == ["seq"]
    assert "2 files named <iid>.<k>.<ext> read as annotators k of 1 image" in caplog.text


@pytest.mark.parametrize("value", ["val_id.txt", "lists/val_ids.txt"])
def test_ids_naming_a_missing_file_is_said_to_be_one(value):
    """A mistyped id list was taken for an image id ('1 requested image ids are not in
    the ground-truth folder: val_id.txt')."""
    from segbench.datasets import parse_ids
    from segbench.errors import InputError
    with pytest.raises(InputError, match="names a file of ids that does not exist"):
        parse_ids(value)
    assert parse_ids("101085") == ["101085"] and parse_ids("a,b") == ["a", "b"]


def test_a_long_list_of_ids_is_a_list():
    """40 BSDS ids joined by commas (over 255 characters) failed with 'File name too
    long': the text was tried as a file first."""
    from segbench.datasets import parse_ids
    ids = [str(100000 + k) for k in range(40)]
    assert parse_ids(",".join(ids)) == ids


def test_a_port_out_of_range_is_one_line(capsys, tmp_path):
    """serve --port 99999 gave an OverflowError traceback."""
    from segbench.cli import main
    from segbench.errors import InputError
    from segbench.report.site import make_server
    for argv in (["serve", ".", "--port", "99999"], ["serve", ".", "--port", "-1"]):
        with pytest.raises(SystemExit):
            main(argv)
        assert "--port" in capsys.readouterr().err
    (tmp_path / "index.html").write_text("<html></html>")
    with pytest.raises(InputError, match="cannot serve on 127.0.0.1:99999"):
        make_server(tmp_path, "127.0.0.1", 99999)


@pytest.mark.parametrize("command", ["site", "superpixel-sweep", "granularity"])
@pytest.mark.parametrize("value", ["0", "-1"])
def test_max_images_below_one_is_refused(command, value, capsys):
    """--max-images 0 took every image, -1 all but the last (Python's slicing)."""
    from segbench.cli import main
    argv = [command, "--gt", ".", f"--max-images={value}"]
    if command == "site":
        argv += ["--out", "site"]
    with pytest.raises(SystemExit):
        main(argv)
    assert "--max-images" in capsys.readouterr().err


def test_max_images_below_one_is_refused_in_python(tmp_path):
    from segbench.errors import InputError
    from segbench.report.site import build_site
    from segbench.runners import run_sweep
    with pytest.raises(InputError, match="max_images"):
        build_site(tmp_path, [], tmp_path / "site", max_images=-1)
    with pytest.raises(InputError, match="max_images"):
        run_sweep(["slic"], [100, 200], tmp_path, tmp_path, max_images=0)


def test_predictions_of_other_images_only_hint_at_another_split(tmp_path):
    """Predictions of the test split against the val ground truth: the refusal says
    none of the files names an image there (it only listed the missing ids)."""
    from segbench.datasets import pair_predictions
    from segbench.errors import InputError
    (tmp_path / "100007.png").write_bytes(b"")
    with pytest.raises(InputError, match="none of its 1 prediction files .* another split"):
        pair_predictions(["101085", "101087"], tmp_path, ("png",))


def test_ids_separated_by_spaces_are_several():
    """``--ids "$(cat ids.txt)"`` gives the ids one per line or space-separated: they
    were taken as one id ('100007 101085') and reported missing."""
    from segbench.datasets import parse_ids
    assert parse_ids("100007 101085") == ["100007", "101085"]
    assert parse_ids("100007\n101085\n") == ["100007", "101085"]
    assert parse_ids("100007, 101085") == ["100007", "101085"]


# --- output folders at file-system edges (QA sweep, 2026-12-07) ---------------------------


@pytest.fixture
def tiny_run_inputs(tmp_path):
    """(ground-truth folder, a folder of soft maps) of two synthetic images."""
    from PIL import Image

    from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset

    write_synthetic_dataset(tmp_path / "ds", make_synthetic_dataset(
        2, shape=(40, 56), n_annotators=2, seed=1), split="val")
    gt = tmp_path / "ds" / "groundTruth" / "val"
    pred = tmp_path / "pred"
    pred.mkdir()
    rng = np.random.default_rng(0)
    for f in sorted(gt.glob("*.mat")):
        Image.fromarray((rng.random((40, 56)) * 255).astype(np.uint8)).save(
            pred / f"{f.stem}.png")
    return gt, pred


def _boundary(gt, pred, out):
    from segbench.cli import main

    return main(["boundary", "--gt", str(gt), "--pred", str(pred), "--out", str(out),
                 "--nthresh", "5", "--quiet", "--no-plot"])


def test_a_run_folder_inside_the_ground_truth_is_refused(tiny_run_inputs, capsys):
    """--out gt/run was taken, and every later run read 'run' as an image of gt."""
    gt, pred = tiny_run_inputs
    assert _boundary(gt, pred, gt / "run") == 2
    err = capsys.readouterr().err
    assert "--out is inside the --gt folder" in err and "Traceback" not in err
    assert not (gt / "run").exists()
    assert _boundary(gt, pred, pred / "run") == 2
    assert "--out is inside the --pred folder" in capsys.readouterr().err


def test_an_output_link_loop_is_one_line(tiny_run_inputs, tmp_path, capsys):
    gt, pred = tiny_run_inputs
    (tmp_path / "loop").symlink_to("loop")
    for out in (tmp_path / "loop", tmp_path / "loop" / "sub"):
        assert _boundary(gt, pred, out) == 2
        err = capsys.readouterr().err
        assert "loop of symbolic links" in err and "Traceback" not in err


def test_an_output_link_to_a_folder_says_what_to_give(tiny_run_inputs, tmp_path, capsys):
    """It said 'the output exists and is not a folder' of a link to a folder."""
    gt, pred = tiny_run_inputs
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert _boundary(gt, pred, tmp_path / "link") == 2
    err = capsys.readouterr().err
    assert "is a symbolic link: give the folder it points to" in err
    assert str(tmp_path / "real") in err and not any((tmp_path / "real").iterdir())


def test_an_empty_output_option_is_refused(tiny_run_inputs, tmp_path, capsys,
                                            monkeypatch):
    """--out "$OUT" with OUT unset wrote the run into the current folder."""
    gt, pred = tiny_run_inputs
    monkeypatch.chdir(tmp_path)
    assert _boundary(gt, pred, "") == 2
    assert "--out is empty" in capsys.readouterr().err
    from segbench.errors import InputError
    from segbench.io import claim_folder

    with pytest.raises(InputError, match="--out is empty"):  # a library call too
        claim_folder("", ".mark", "segbench test", "")
    assert not (tmp_path / ".mark").exists()


def test_running_out_of_memory_is_one_line(tiny_run_inputs, tmp_path, capsys,
                                           monkeypatch):
    """A MemoryError (numpy's 'Unable to allocate', a ulimit, a cgroup) was a
    traceback of 20 frames."""
    import segbench.api

    def exhausted(*args, **kwargs):
        raise MemoryError("Unable to allocate 44.1 MiB for an array")

    monkeypatch.setattr(segbench.api, "evaluate", exhausted)
    gt, pred = tiny_run_inputs
    assert _boundary(gt, pred, tmp_path / "run") == 2
    err = capsys.readouterr().err
    assert err.startswith("segbench: error: out of memory (Unable to allocate 44.1 MiB")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_the_site_leaves_out_maps_the_run_did_not_score(tiny_run_inputs, tmp_path,
                                                        monkeypatch):
    """A run's prediction folder was recorded as typed (relative) and looked up from
    wherever the site was built: another algorithm's folder of the same name, or a map
    changed since, was drawn beside the run's scores."""
    from PIL import Image

    from segbench.report._site_runs import load_run

    gt, pred = tiny_run_inputs
    monkeypatch.chdir(pred.parent)
    assert _boundary(gt, "pred", tmp_path / "run") == 0
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["runs"]["boundary"]["pred_dir"] == str(pred.resolve())
    other = tmp_path / "elsewhere"
    (other / "pred").mkdir(parents=True)
    monkeypatch.chdir(other)  # a folder 'pred' here is not the run's
    run = load_run(tmp_path / "run")
    assert run.pred_dir == pred.resolve() and len(run.preds) == 2
    first = sorted(run.preds)[0]
    Image.fromarray(np.zeros((40, 56), np.uint8)).save(pred / f"{first}.png")
    with pytest.warns(UserWarning, match="1 prediction files in .* are not those the "
                                         "run scored"):
        run = load_run(tmp_path / "run")
    assert sorted(run.preds) == sorted(set(p.stem for p in pred.glob("*.png")) - {first})


def test_a_copy_names_the_file_at_fault(tmp_path, monkeypatch):
    """The site's copies reported a full disk as an error of the photograph they read
    (shutil names the source)."""
    import errno
    import shutil

    from segbench.errors import InputError, OutputError
    from segbench.io import copy_file

    src = tmp_path / "photo.jpg"
    src.write_bytes(b"x")
    with pytest.raises(OutputError, match="missing/photo.jpg: cannot write"):
        copy_file(src, tmp_path / "missing" / "photo.jpg")
    with pytest.raises(InputError, match="nothing.jpg"):
        copy_file(tmp_path / "nothing.jpg", tmp_path / "b.jpg")

    def full(a, b):
        exc = OSError(errno.ENOSPC, "No space left on device")
        exc.filename = str(a)
        raise exc

    monkeypatch.setattr(shutil, "copyfile", full)
    with pytest.raises(OutputError, match=r"site/photo.jpg: cannot write: No space left"):
        copy_file(src, tmp_path / "site" / "photo.jpg")


def test_a_record_with_an_enormous_count_is_recomputed(tiny_run_inputs, tmp_path,
                                                       capsys):
    """A count of 400 digits in a record raised OverflowError (a traceback)."""
    gt, pred = tiny_run_inputs
    out = tmp_path / "run"
    assert _boundary(gt, pred, out) == 0
    first = capsys.readouterr().out
    path = sorted((out / ".segbench-records" / "boundary").glob("*.json"))[0]
    data = json.loads(path.read_text())
    lists = [k for k, v in data["record"].items() if isinstance(v, list) and v
             and isinstance(v[0], int)]
    data["record"][lists[0]][0] = 10**400
    path.write_text(json.dumps(data))
    assert _boundary(gt, pred, out) == 0
    again = capsys.readouterr()
    assert "does not validate" in again.err and "Traceback" not in again.err
    assert again.out == first


def test_ids_from_a_pipe_are_read(tmp_path):
    """--ids <(printf '100007\\n') said '/dev/fd/63: --ids names a file of ids that
    does not exist' (a pipe is not a regular file)."""
    import os

    from segbench.datasets import parse_ids

    r, w = os.pipe()
    os.write(w, b"100007\n101085 # a comment\n")
    os.close(w)
    try:
        assert parse_ids(f"/dev/fd/{r}") == ["100007", "101085"]
    finally:
        os.close(r)


def test_a_huge_npy_is_refused_from_its_header(tmp_path, capsys):
    """A 20000 x 20000 .npy was read whole (3.7 GB, 33 s) before its size was checked;
    PNGs were refused from their header."""
    from segbench.errors import InputError
    from segbench.io import read_prediction

    path = tmp_path / "a.npy"
    with open(path, "wb") as f:  # a header alone: the data it claims is not even there
        np.lib.format.write_array_header_1_0(
            f, {"descr": "<f8", "fortran_order": False, "shape": (20000, 20000)})
    with pytest.raises(InputError, match="20000 x 20000: above the limit of 64 "
                                         "megapixels a map; not read"):
        read_prediction(path)
    np.save(tmp_path / "b.npy", np.zeros((4, 5)))
    assert read_prediction(tmp_path / "b.npy").pb.shape == (4, 5)


def test_a_bad_alpha_is_refused_before_any_work(tiny_run_inputs, tmp_path, capsys):
    """--alpha 0 was refused only after every image had been scored."""
    from segbench.cli import main

    gt, pred = tiny_run_inputs
    out = tmp_path / "run"
    assert main(["boundary", "--gt", str(gt), "--pred", str(pred), "--out", str(out),
                 "--alpha", "0", "--quiet"]) == 2
    assert "must be in (0, 1), got 0.0" in capsys.readouterr().err
    assert not (out / ".segbench-records").exists() or not any(
        (out / ".segbench-records").rglob("*.json"))


def test_a_second_run_into_a_folder_in_use_is_refused(tiny_run_inputs, tmp_path,
                                                      capsys):
    """Two runs into one --out at once both ended 'successfully', the folder holding
    whichever finished last."""
    import os

    from segbench.engine import lock_run_folder

    gt, pred = tiny_run_inputs
    out = tmp_path / "run"
    assert _boundary(gt, pred, out) == 0
    capsys.readouterr()
    held = lock_run_folder(out)  # as another process's run would hold it
    try:
        assert _boundary(gt, pred, out) == 2
        err = capsys.readouterr().err
        assert f"another segbench run is writing into this folder (pid {os.getpid()})" in err
    finally:
        held.close()
    assert _boundary(gt, pred, out) == 0  # released: runs again


@pytest.mark.parametrize("command", ["crispness", "superpixel", "agreement"])
def test_commands_that_read_label_maps_take_gt_format(tmp_path, capsys, command):
    """They read PNG ground truth and said '(--gt-format edges|labels says which)', but
    refused --gt-format as an unrecognized argument."""
    from PIL import Image

    from segbench.cli import main

    gt = tmp_path / "gt"
    gt.mkdir()
    labels = np.ones((40, 56), np.uint8)
    labels[:, 28:] = 2
    if command == "agreement":  # two annotators (<iid>.<k>): agreement compares them
        Image.fromarray(labels).save(gt / "a.1.png")
        Image.fromarray(labels).save(gt / "a.2.png")
    else:
        Image.fromarray(labels).save(gt / "a.png")
    args = [command, "--gt", str(gt), "--gt-format", "labels", "--quiet"]
    if command == "crispness":
        pred = tmp_path / "pred"
        pred.mkdir()
        soft = np.zeros((40, 56), np.uint8)
        soft[:, 27:29] = 255
        Image.fromarray(soft).save(pred / "a.png")
        args += ["--pred", str(pred)]
    elif command == "superpixel":
        args += ["--pred", str(gt)]
    assert main(args) == 0, capsys.readouterr().err


def test_gt_format_bsds_on_a_folder_of_images_is_refused(tmp_path):
    """An explicit --gt-format bsds was overridden: the PNGs were read as label maps."""
    from PIL import Image

    from segbench.datasets import GroundTruthFormat, open_ground_truth
    from segbench.errors import InputError

    Image.fromarray(np.ones((8, 9), np.uint8)).save(tmp_path / "a.png")
    with pytest.raises(InputError, match="--gt-format bsds reads BSDS .mat/.seg files"):
        open_ground_truth(tmp_path, gt_format=GroundTruthFormat("bsds"))


def test_a_file_name_near_the_limit_is_written(tmp_path):
    """An id of 230 characters failed after its image was computed: 'File name too
    long' of a record whose name fits; the temporary file's did not."""
    from segbench.io import atomic_write_text

    target = tmp_path / ("L" * 245 + ".json")
    atomic_write_text(target, "{}")
    assert target.read_text() == "{}"
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_a_run_that_stops_while_writing_marks_its_folder(tiny_run_inputs, tmp_path,
                                                         capsys, monkeypatch):
    """A rerun that failed on a full disk left new official files beside the old
    result, and nothing said so; the folder now says it until a run completes."""
    from segbench.api import read_run
    from segbench.engine import RUN_WRITING
    from segbench.errors import InputError, OutputError
    from segbench.result import Result

    gt, pred = tiny_run_inputs
    out = tmp_path / "run"
    assert _boundary(gt, pred, out) == 0

    def full(self, path, *args, **kwargs):
        raise OutputError(path, "No space left on device")

    monkeypatch.setattr(Result, "to_csv", full)
    from segbench.cli import main

    assert main(["boundary", "--gt", str(gt), "--pred", str(pred), "--out", str(out),
                 "--nthresh", "3", "--quiet", "--no-plot"]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert (out / RUN_WRITING).exists()
    with pytest.raises(InputError, match="stopped while writing its boundary files"):
        read_run(out)
    monkeypatch.undo()
    assert _boundary(gt, pred, out) == 0
    assert not (out / RUN_WRITING).exists()
    assert read_run(out).provenance["params"]["nthresh"] == 5


def test_too_large_tables_name_the_side_with_the_regions():
    """The refusal blamed the prediction (a 1000-superpixel map) when the ground truth
    held 154,401 regions."""
    from segbench.errors import InputError
    from segbench.primitives import stacked_tables

    seg = np.ones(200_000, np.int32)
    with pytest.raises(InputError, match=r"1000 regions in the segmentation against "
                                         r"200000 in the ground truth's 1 annotator"
                                         r".*ground truth's label map"):
        stacked_tables(seg, 1000, [np.arange(1, 200_001)], [200_000])


def test_a_huge_png_is_refused_in_segbench_s_words(tmp_path):
    """A 100 MP PNG printed Pillow's DecompressionBombWarning before segbench's own
    error; one over 179 MP gave Pillow's text quoting Pillow's limit."""
    import warnings

    from PIL import Image

    from segbench.errors import InputError
    from segbench.io import image_size, read_prediction

    big = tmp_path / "big.png"
    Image.new("1", (10_000, 10_000)).save(big)
    huge = tmp_path / "huge.png"
    Image.new("1", (14_000, 13_000)).save(huge)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert image_size(big) == (10_000, 10_000)
        with pytest.raises(InputError, match=r"\(100 megapixels\), above the limit of 64"):
            read_prediction(big)
        with pytest.raises(InputError, match="segbench's limit of 64 megapixels"):
            image_size(huge)


def test_a_utf16_name_txt_names_the_run(tmp_path):
    """Notepad's 'Unicode' (UTF-16 with a byte-order mark) name.txt was ignored."""
    from segbench.datasets import run_name

    (tmp_path / "name.txt").write_bytes("Mon détecteur\r\n".encode("utf-16"))
    assert run_name(tmp_path) == "Mon détecteur"


def test_a_negative_threshold_list_is_judged_by_its_value(tiny_run_inputs, capsys):
    """--thresholds -0.1,0.5 gave argparse's 'expected one argument'."""
    from segbench.cli import main

    gt, pred = tiny_run_inputs
    assert main(["boundary", "--gt", str(gt), "--pred", str(pred),
                 "--thresholds", "-0.1,0.5", "--quiet"]) == 2
    assert "thresholds must lie in [0, 1]" in capsys.readouterr().err


def test_long_bootstraps_show_progress(capsys, monkeypatch):
    """A million resamples sat silent for minutes; the bar appears once the draws take
    a second (none for the usual thousand), and never without ``progress``."""
    import time

    from segbench import resampling

    def slow(weights):
        time.sleep(0.3)
        return {"score": weights.mean(axis=1)}

    got = resampling.intervals(slow, 5, resamples=1000, progress=True)
    assert "bootstrap" in capsys.readouterr().err and got["score"][0] <= got["score"][1]
    resampling.intervals(slow, 5, resamples=1000)
    assert "bootstrap" not in capsys.readouterr().err
    resampling.intervals(lambda w: {"score": w.mean(axis=1)}, 5, resamples=1000,
                         progress=True)
    assert "bootstrap" not in capsys.readouterr().err


# --- bootstraps of one draw, folders named as files, cut count files, ids with spaces ----


def test_a_bootstrap_of_one_draw_is_refused_and_of_few_draws_called_coarse(
        tiny_run_inputs, tmp_path, capsys):
    """--resamples 1 gave an 'interval' of one draw (lo == hi) without a word, in every
    command that resamples."""
    import segbench
    from segbench.cli import main
    from segbench.errors import InputError
    from segbench.resampling import intervals
    from segbench.stats import fit_power_law

    gt, pred = tiny_run_inputs
    args = ["boundary", "--gt", str(gt), "--pred", str(pred), "--nthresh", "5", "--ci",
            "--quiet", "--no-plot"]
    assert main([*args, "--resamples", "1"]) == 2
    assert capsys.readouterr().err == (
        "segbench: error: resamples (--resamples) must be an integer of at least 2 (one "
        "draw gives no interval), got 1\n")
    assert main([*args, "--resamples", "50"]) == 0
    coarse = [w for w in capsys.readouterr().err.splitlines() if "coarse" in w]
    assert len(coarse) == 1 and coarse[0].startswith(
        "segbench: warning: intervals from 50 bootstrap draws (--resamples) are coarse")
    assert main([*args, "--resamples", "200"]) == 0
    assert "coarse" not in capsys.readouterr().err
    for run in ("a", "b"):
        assert _boundary(gt, pred, tmp_path / run) == 0
    capsys.readouterr()
    for argv in (["compare", str(tmp_path / "a"), str(tmp_path / "b")],
                 ["stats", "--gt", str(gt), "--samples", "50", "--no-plot", "--quiet"]):
        assert main([*argv, "--resamples", "1"]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and err.strip().endswith("got 1"), err
    with pytest.raises(InputError, match=r"resamples \(--resamples\) .* got 1"):
        segbench.compare(tmp_path / "a", tmp_path / "b", resamples=1)
    with pytest.raises(InputError, match="got 1"):
        intervals(lambda w: {"m": w.mean(axis=1)}, 5, resamples=1)
    with pytest.raises(InputError, match=r"n_boot .* 0 \(no interval\) or .* got 1"):
        fit_power_law([np.array([5, 50]), np.array([7])], 100.0, n_boot=1)
    assert np.isnan(fit_power_law([np.array([5, 50])], 100.0, n_boot=0).alpha_ci[0])
    g = _line_gt()
    ev = segbench.BoundaryEval(thresholds=5)
    ev.update(g * 0.8, [g], ids="a")
    ev.update(np.roll(g, 1, axis=0) * 0.8, [g], ids="b")
    with pytest.raises(InputError, match="got 1"):
        ev.compute(ci={"resamples": 1})
    from segbench.resampling import FewResamplesWarning

    with pytest.warns(FewResamplesWarning, match="intervals from 20 bootstrap draws"):
        ev.compute(ci={"resamples": 20})


def test_a_folder_named_like_a_file_to_read_is_said_to_be_one(tiny_run_inputs, tmp_path,
                                                              capsys):
    """A folder 100007.mat in --gt (x.png among label maps or maps to thin) was left out
    of the run without a word; a dataset root holding one was read as a BSDS300 tree
    of its photographs ('image ... has no human segmentation')."""
    from PIL import Image

    from segbench.cli import main
    from segbench.datasets import LabelMapFolder, open_ground_truth
    from segbench.errors import InputError
    from segbench.io import list_files

    gt, pred = tiny_run_inputs
    (gt / "zzz.mat").mkdir()
    assert _boundary(gt, pred, tmp_path / "run") == 2
    assert capsys.readouterr().err == (
        f"segbench: error: {gt / 'zzz.mat'}: this is a folder, not a file, though "
        "named like the .mat files read here: rename or move it\n")
    with pytest.raises(InputError, match=r"zzz\.mat: this is a folder, not a file"):
        open_ground_truth(gt.parents[1], split="val")
    (gt / "zzz.mat").rmdir()
    (gt / "notes").mkdir()  # not named like a file: no item, left alone as before
    assert _boundary(gt, pred, tmp_path / "run2") == 0
    (pred / "x.png").mkdir()
    assert main(["nms", "--pred", str(pred), "--out", str(tmp_path / "thin"),
                 "--quiet"]) == 2
    assert "x.png: this is a folder, not a file" in capsys.readouterr().err
    # a pairing names such a folder of an id it needs in its own words, and passes
    # over one of another id, as it would a file
    assert sorted(list_files(pred, "png", folders=False)) == sorted(
        f.stem for f in gt.glob("*.mat"))
    labels = tmp_path / "labels"
    labels.mkdir()
    Image.fromarray(np.zeros((8, 8), np.uint8)).save(labels / "a.png")
    (labels / "b.png").mkdir()
    with pytest.raises(InputError, match=r"b\.png: this is a folder, not a file"):
        LabelMapFolder(labels)
    with pytest.raises(InputError, match=r"b\.png: this is a folder, not a file"):
        open_ground_truth(labels, gt_format="edges")


def test_a_cut_off_count_file_is_named_with_its_rows(tiny_run_inputs, tmp_path, capsys):
    """An <iid>_ev1.txt cut off (a MATLAB run stopped as it wrote) was imported as read
    when it was the only file, and, as the first file, made the whole ones the wrong
    ones."""
    import shutil

    from segbench.api import import_run
    from segbench.cli import main
    from segbench.errors import InputError

    gt, pred = tiny_run_inputs
    run = tmp_path / "run"
    assert _boundary(gt, pred, run) == 0
    first = sorted(run.glob("*_ev1.txt"))[0]
    first.write_text("".join(first.read_text().splitlines(keepends=True)[:2]))
    alone = tmp_path / "alone"
    alone.mkdir()
    for f in (first, run / "eval_bdry_thr.txt"):
        shutil.copy(f, alone)
    for folder in (alone, run):
        with pytest.raises(InputError) as err:
            import_run(folder, tmp_path / f"{folder.name}-imported", plot=False)
        assert str(err.value).startswith(
            f"{folder / first.name}: its thresholds differ from the run's: 2 rows where 5 "
            "are expected (as eval_bdry_thr.txt beside it lists)")
    (run / "eval_bdry_thr.txt").unlink()  # then as most files have (the longer on a tie)
    capsys.readouterr()
    assert main(["import-run", str(run), "--out", str(tmp_path / "i"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and f"{first}: its thresholds differ" in err
    assert "2 rows where 5 are expected (as 1 of the 2 files have)" in err


def test_ids_read_from_a_file_are_one_a_line(tmp_path, capsys):
    """Ids holding spaces could not be chosen: the lines of an id file were split at
    spaces ('cat 01' asked for images 'cat' and '01')."""
    import os

    from PIL import Image

    from segbench.cli import main
    from segbench.datasets import parse_ids

    listed = tmp_path / "ids.txt"
    listed.write_text("cat 01\n\n# the second\n  dog 02  # a comment\r\n")
    assert parse_ids(listed) == parse_ids(str(listed)) == ["cat 01", "dog 02"]
    assert parse_ids("cat 01") == ["cat", "01"]  # on the command line, spaces separate
    r, w = os.pipe()
    os.write(w, b"cat 01\n")
    os.close(w)
    try:
        assert parse_ids(f"/dev/fd/{r}") == ["cat 01"]
    finally:
        os.close(r)
    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
        for name in ("cat 01", "dog 02", "eel 03"):
            Image.fromarray((np.arange(64).reshape(8, 8) % 3).astype(np.uint8)).save(
                tmp_path / side / f"{name}.png")
    assert main(["semantic", "--gt", str(tmp_path / "gt"), "--pred", str(tmp_path / "pred"),
                 "--classes", "3", "--ids", str(listed), "--quiet", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["provenance"]["params"]["n_images"] == 2


# --- names in two Unicode normalisations, folders the user cannot read -----------------


def _label_maps(folder, stems):
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    for stem in stems:
        Image.fromarray(np.zeros((8, 8), np.uint8)).save(folder / f"{stem}.png")


def test_a_name_in_another_unicode_normalisation_is_pointed_out_not_paired(tmp_path,
                                                                           capsys):
    """'café' named on macOS (decomposed, NFD) beside ground truth named elsewhere
    (composed, NFC) was listed as having no prediction, with nothing to tell the two
    spellings apart."""
    import unicodedata

    import segbench
    from segbench.cli import main
    from segbench.datasets import pair_predictions, predictions_by_suffix
    from segbench.errors import InputError
    from segbench.io import check_all_present

    nfc, nfd = (unicodedata.normalize(form, "café") for form in ("NFC", "NFD"))
    gt, pred = tmp_path / "gt", tmp_path / "pred"
    _label_maps(gt, [nfc, "plain"])
    _label_maps(pred, [nfd, "plain"])
    hint = (r"'caf\xe9' is 'cafe\u0301' in this folder: the two names differ only in "
            "Unicode normalisation (NFC/NFD), rename one so they match")
    assert main(["semantic", "--gt", str(gt), "--pred", str(pred), "--classes", "3",
                 "--quiet"]) == 2
    assert capsys.readouterr().err == (
        f"segbench: error: {pred}: 1 of 2 ground-truth files have no prediction named "
        f"<key>.png: {nfc}; {hint}\n")
    # the folder pairing of the other benchmarks, and the other way round
    with pytest.raises(InputError) as err:
        pair_predictions([nfc, "plain"], pred, ("png",))
    assert str(err.value).startswith(f"{pred}: 1 of 2 images have no prediction (.png)")
    assert str(err.value).endswith(f"; {hint}")
    with pytest.raises(InputError) as err:
        predictions_by_suffix([nfd], gt)
    assert str(err.value).endswith(
        r"; 'cafe\u0301' is 'caf\xe9' in this folder: the two names differ only in "
        "Unicode normalisation (NFC/NFD), rename one so they match")
    with pytest.raises(InputError) as err:  # predictions held in a mapping
        segbench.evaluate("boundary", gt, {nfd: np.zeros((8, 8)),
                                           "plain": np.zeros((8, 8))}, progress=False)
    assert str(err.value).endswith(
        r"'caf\xe9' is 'cafe\u0301' among the predictions: the two names differ only "
        "in Unicode normalisation (NFC/NFD), rename one so they match")
    words = ("na\u00efve", "Zo\u00eb", "\u00fcber", "\u00e9t\u00e9")
    with pytest.raises(InputError) as err:  # several: the first three
        check_all_present(words, [unicodedata.normalize("NFD", w) for w in words],
                          "ids have no file", tmp_path)
    assert str(err.value).endswith(
        r"'Zo\xeb' is 'Zoe\u0308', 'na\xefve' is 'nai\u0308ve', '\xe9t\xe9' is "
        r"'e\u0301te\u0301' ... in this folder: each pair differs only in Unicode "
        "normalisation (NFC/NFD), rename one of each so they match")
    with pytest.raises(InputError) as err:  # no look-alike: the message as before
        check_all_present(["caf\u00e8"], [nfd], "ids have no file", tmp_path)
    assert str(err.value) == f"{tmp_path}: 1 of 1 ids have no file: caf\u00e8"


def _unreadable(monkeypatch, folder, mode):
    """Make ``folder`` act as one of that ``mode`` (``'r'`` and/or ``'x'``) does for a
    user other than root (the tests run as root, whom permissions do not stop):
    without read permission it cannot be listed, without search permission nothing in
    it can be reached."""
    import errno
    import os

    top = str(folder)

    def guard(real, refused):
        def call(*args, **kwargs):
            path = args[0] if args else kwargs.get("path", ".")
            if not isinstance(path, int) and refused(os.fsdecode(path)):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
            return real(*args, **kwargs)

        return call

    if "r" not in mode:
        for name in ("scandir", "listdir"):
            monkeypatch.setattr(os, name, guard(getattr(os, name), lambda p: p == top))
    if "x" not in mode:
        for name in ("stat", "lstat"):
            monkeypatch.setattr(os, name, guard(getattr(os, name),
                                                lambda p: p.startswith(top + os.sep)))


@pytest.mark.parametrize("mode", [pytest.param("", id="000"), pytest.param("r", id="600"),
                                  pytest.param("x", id="311")])
@pytest.mark.parametrize("side", ["gt", "pred"])
def test_an_unreadable_folder_is_named_as_given(tiny_run_inputs, tmp_path, monkeypatch,
                                                capsys, side, mode):
    """As a user other than root, a --gt folder without permissions was refused naming
    a path inside it the user never gave ('<gt>/edge_maps: Permission denied', a probe
    for a BIPED tree)."""
    from segbench.datasets import open_ground_truth
    from segbench.errors import InputError

    gt, pred = tiny_run_inputs
    folder = gt if side == "gt" else pred
    _unreadable(monkeypatch, folder, mode)
    assert _boundary(gt, pred, tmp_path / "run") == 2
    assert capsys.readouterr().err == (
        f"segbench: error: {folder}: cannot read this folder: Permission denied\n")
    if side == "gt":
        with pytest.raises(InputError) as err:
            open_ground_truth(gt)
        assert err.value.path == str(gt)


@pytest.mark.parametrize("side", ["gt", "pred", "gt/sub"])
def test_an_unreadable_folder_is_not_walked_as_an_empty_one(tmp_path, monkeypatch,
                                                            capsys, side):
    """--recursive walked an unreadable folder as an empty one ('no ground-truth file
    ending in '.png'', or every key without a prediction) and passed over an unreadable
    subfolder, its ground truth left out of the run, without a word."""
    from segbench.cli import main

    _label_maps(tmp_path / "gt", ["a", "b"])
    _label_maps(tmp_path / "gt" / "sub", ["c"])
    _label_maps(tmp_path / "pred", ["a", "b", "c"])
    _unreadable(monkeypatch, tmp_path / side, "")
    assert main(["semantic", "--gt", str(tmp_path / "gt"), "--pred", str(tmp_path / "pred"),
                 "--classes", "3", "--recursive", "--quiet"]) == 2
    assert capsys.readouterr().err == (
        f"segbench: error: {tmp_path / side}: cannot read this folder: Permission "
        "denied\n")


def test_several_ids_on_one_line_of_an_id_file_are_pointed_out(tiny_run_inputs, tmp_path,
                                                               capsys):
    """Since an id file is read one id a line, a file written 'a b' on one line asks for
    one id 'a b': the error said it was missing though both ids were there."""
    from segbench.cli import main

    gt, pred = tiny_run_inputs
    ids = sorted(f.stem for f in gt.glob("*.mat"))
    listed = tmp_path / "ids.txt"
    listed.write_text(" ".join(ids) + "\n")
    assert main(["boundary", "--gt", str(gt), "--pred", str(pred), "--ids", str(listed),
                 "--nthresh", "5", "--quiet", "--no-plot"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert err.rstrip().endswith(
        f"{ascii(' '.join(ids))} holds several ids: an id file lists one a line"), err
    listed.write_text("nope\n")  # an id simply missing: no such hint
    assert main(["boundary", "--gt", str(gt), "--pred", str(pred), "--ids", str(listed),
                 "--nthresh", "5", "--quiet", "--no-plot"]) == 2
    assert "holds several ids" not in capsys.readouterr().err


def test_more_classes_than_memory_holds_are_refused_before_the_work(tmp_path, capsys,
                                                                    monkeypatch):
    """--classes 20000 allocated its 3.2 GB table (and a copy) and failed with a
    MemoryError only then; it is now weighed against the machine's memory up front."""
    from PIL import Image

    from segbench.cli import main
    from segbench.errors import InputError
    from segbench.semantic import SemanticEval
    from segbench.semantic import _evaluator

    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
        Image.fromarray((np.arange(64).reshape(8, 8) % 3).astype(np.uint8)).save(
            tmp_path / side / "a.png")
    monkeypatch.setattr(_evaluator, "_physical_memory", lambda: 2 * 10**9)
    argv = ["semantic", "--gt", str(tmp_path / "gt"), "--pred", str(tmp_path / "pred"),
            "--quiet", "--out"]
    assert main([*argv, str(tmp_path / "big"), "--classes", "20000"]) == 2
    assert capsys.readouterr().err == (
        "segbench: error: 20000 classes need a 20000 x 20000 confusion table and a copy "
        "of it, about 6.4 GB, more than this machine's 2.0 GB of memory\n")
    assert not (tmp_path / "big").exists()  # before the work: no run folder
    with pytest.raises(InputError, match="about 6.4 GB"):
        SemanticEval(20000)
    assert main([*argv, str(tmp_path / "small"), "--classes", "3"]) == 0
    monkeypatch.setattr(_evaluator, "_physical_memory", lambda: None)  # not said: taken
    assert SemanticEval(20000).num_classes == 20000


def test_soft_maps_given_as_superpixels_are_called_boundary_maps(tiny_run_inputs, tmp_path,
                                                                 capsys):
    """An 8-bit soft boundary map is a valid label map, so superpixel scored HED maps
    as 250 'superpixels' of 26 pieces each without a word."""
    from PIL import Image

    from segbench.cli import main

    gt, soft = tiny_run_inputs
    argv = ["superpixel", "--gt", str(gt), "--quiet", "--pred"]
    assert main([*argv, str(soft)]) == 0
    out = capsys.readouterr()
    warned = [w for w in out.err.splitlines() if "look like boundary maps" in w]
    assert len(warned) == 1 and warned[0].startswith(f"segbench: warning: {soft}: "), out
    blocks = tmp_path / "blocks"  # superpixels: 7 x 8 px blocks, each one piece
    blocks.mkdir()
    labels = (np.arange(40)[:, None] // 7 * 8 + np.arange(56)[None, :] // 8).astype(np.uint16)
    for f in gt.glob("*.mat"):
        Image.fromarray(labels).save(blocks / f"{f.stem}.png")
    assert main([*argv, str(blocks)]) == 0
    assert "look like boundary maps" not in capsys.readouterr().err


def _reset_connection(port):
    """A client that sends half a request and closes with a reset (SO_LINGER 0), as a
    browser dropping a speculative connection does."""
    import socket
    import struct
    import time

    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"GET / HT")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()
    time.sleep(0.3)  # the server's thread meets the reset


def test_a_dropped_connection_is_not_a_traceback_in_the_servers(tmp_path, capsys):
    """Chromium drops speculative connections; the annotation server and `segbench
    serve` printed a ConnectionResetError traceback for each (seen in the browser
    tests' output). Other errors still print theirs."""
    import threading

    from PIL import Image

    from segbench.annotate.server import make_server as annotate_server
    from segbench.report.site import make_server as site_server

    images = tmp_path / "images"
    images.mkdir()
    Image.fromarray(np.zeros((40, 60, 3), np.uint8)).save(images / "a.png")
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<html></html>")
    for srv in (annotate_server(images, tmp_path / "out", port=0, subject="s"),
                site_server(site, port=0, quiet=True)):
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        try:
            _reset_connection(srv.server_address[1])
            err = capsys.readouterr().err
            assert "Traceback" not in err and "ConnectionResetError" not in err, err
            try:  # anything else is still reported
                raise ValueError("a real fault")
            except ValueError:
                srv.handle_error(None, ("127.0.0.1", 1))
            assert "ValueError: a real fault" in capsys.readouterr().err
        finally:
            srv.shutdown()
            srv.server_close()
