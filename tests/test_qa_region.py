"""Region, superpixel and granularity runs as a user meets them (QA round of
2026-12-07, helper-46)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from segbench.cli import main
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """3 synthetic images (val): ground truth, photographs, grid superpixels."""
    root = tmp_path_factory.mktemp("qa_region")
    items = make_synthetic_dataset(3, shape=(48, 64), n_annotators=3, seed=4)
    write_synthetic_dataset(root, items, split="val")
    sp = root / "sp"
    sp.mkdir()
    rows, cols = np.mgrid[0:48, 0:64]
    grid = (rows // 8 * 8 + cols // 8).astype(np.uint16)
    for it in items:
        Image.fromarray(grid).save(sp / f"{it.iid}.png")
    return root / "groundTruth" / "val", root / "images" / "val", sp


@pytest.mark.parametrize("command", ["superpixel", "superpixel-sweep", "granularity"])
def test_out_inside_the_ground_truth_is_refused(data, tmp_path, capsys, command):
    """These runs take the ground truth as a Dataset: --out inside it was accepted, and
    the next run read the run folder as an image of the ground truth."""
    import shutil
    gt_src, img, sp = data
    gt = tmp_path / "gt"
    shutil.copytree(gt_src, gt)
    args = {
        "superpixel": ["--pred", str(sp)],
        "superpixel-sweep": ["--images", str(img), "--k", "20,30", "--max-images", "1"],
        "granularity": ["--images", str(img), "--segmenter", "kmeans", "--max-images",
                        "1", "--no-plot"],
    }[command]
    assert main([command, "--gt", str(gt), *args, "--out", str(gt / "run"),
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--out is inside the --gt folder" in err, err
    assert sorted(p.name for p in gt.iterdir()) == sorted(p.name for p in gt_src.iterdir())


def test_a_logical_mat_ucm2_is_boundaries_of_strength_one(data, tmp_path, capsys):
    """QA (helper-46): a MATLAB logical ucm2 (scipy reads it as uint8 0/1) was read as
    1/255, so a binary hierarchy scored as one region with no boundary; MATLAB's
    benchmark compares it raw. An 8-bit ucm2 of levels is refused, not rescaled."""
    import json

    import scipy.io
    gt, _, _ = data
    iid = sorted(p.stem for p in gt.glob("*.mat"))[0]
    seg = scipy.io.loadmat(gt / f"{iid}.mat")["groundTruth"][0, 0]["Segmentation"][0, 0]
    h, w = seg.shape
    ucm2 = np.zeros((2 * h + 1, 2 * w + 1))
    ucm2[1::2, 2:-1:2] = seg[:, :-1] != seg[:, 1:]       # edges between columns
    ucm2[2:-1:2, 1::2] = seg[:-1, :] != seg[1:, :]       # edges between rows
    ucm2[2:-1:2, 2:-1:2] = np.maximum.reduce(             # junctions: closed contours
        [ucm2[1:-2:2, 2:-1:2], ucm2[3::2, 2:-1:2], ucm2[2:-1:2, 1:-2:2],
         ucm2[2:-1:2, 3::2]])
    scores = {}
    for kind, value in (("double", ucm2), ("logical", ucm2 > 0)):
        folder = tmp_path / kind
        folder.mkdir()
        scipy.io.savemat(folder / f"{iid}.mat", {"ucm2": value})
        assert main(["region", "--gt", str(gt), "--ids", iid, "--pred", str(folder),
                     "--nthresh", "5", "--quiet", "--json"]) == 0
        scores[kind] = json.loads(capsys.readouterr().out)["metrics"]
    assert scores["logical"] == scores["double"]
    assert scores["double"]["covering_ODS"] > 0.5
    levels = tmp_path / "levels"
    levels.mkdir()
    scipy.io.savemat(levels / f"{iid}.mat", {"ucm2": (ucm2 * 200).astype(np.uint8)})
    assert main(["region", "--gt", str(gt), "--ids", iid, "--pred", str(levels),
                 "--quiet"]) == 2
    assert "ucm2 is an integer array (uint8, values up to 200)" in capsys.readouterr().err


def test_superpixel_images_need_only_the_ids_asked_for(data, tmp_path, capsys):
    """QA (helper-46): --images with --ids asked for every image's photograph."""
    import json
    import shutil
    gt, img, sp = data
    iid = sorted(p.stem for p in gt.glob("*.mat"))[1]
    one = tmp_path / "img"
    one.mkdir()
    shutil.copy(next(img.glob(f"{iid}.*")), one)
    assert main(["superpixel", "--gt", str(gt), "--pred", str(sp), "--ids", iid,
                 "--images", str(one), "--quiet", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert [row["id"] for row in got["per_item"]] == [iid]
    assert got["per_item"][0]["ev"] is not None


def test_ev_over_some_images_only_is_said(data, tmp_path, capsys):
    """QA (helper-46): with photographs for some images only, EV was the mean over
    those, under the run's image count, without a word."""
    import shutil
    gt, img, sp = data
    root = tmp_path / "root"
    shutil.copytree(gt, root / "groundTruth" / "val")
    (root / "images" / "val").mkdir(parents=True)
    first = sorted(img.iterdir())[0]
    shutil.copy(first, root / "images" / "val")
    assert main(["superpixel", "--gt", str(root), "--split", "val", "--pred", str(sp),
                 "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "EV is the mean over 1 of the 3 images: 2 have no photograph" in err, err


def test_undefined_region_scores_are_named(data, tmp_path, capsys):
    """QA (helper-46): one image whose ucm2 is boundaries everywhere made the run's PRI
    and VI NaN, exit 0, without naming the image."""
    import scipy.io
    gt, _, _ = data
    ids = sorted(p.stem for p in gt.glob("*.mat"))
    pred = tmp_path / "pred"
    pred.mkdir()
    for k, iid in enumerate(ids):
        h, w = scipy.io.loadmat(gt / f"{iid}.mat")["groundTruth"][0, 0][
            "Segmentation"][0, 0].shape
        ucm2 = np.zeros((2 * h + 1, 2 * w + 1))
        ucm2[:, 2 * (w // 2)] = 0.5
        scipy.io.savemat(pred / f"{iid}.mat", {"ucm2": np.ones_like(ucm2) if k == 1
                                               else ucm2})
    assert main(["region", "--gt", str(gt), "--pred", str(pred), "--nthresh", "5",
                 "--quiet"]) == 0
    err = capsys.readouterr().err
    assert f"PRI and VI are undefined (NaN) for 1 of the 3 images ({ids[1]})" in err, err


def test_human_scores_without_any_annotator_pair_are_undefined(data, tmp_path, capsys):
    """QA (helper-46): ground truth of one annotator an image gave human boundary F =
    0.0000 beside a region covering of NaN (0 pairs)."""
    import json

    import scipy.io
    gt, _, _ = data
    one = tmp_path / "one"
    one.mkdir()
    for p in sorted(gt.glob("*.mat")):
        g = scipy.io.loadmat(p)["groundTruth"]
        cell = np.empty((1, 1), dtype=object)
        cell[0, 0] = g[0, 0]
        scipy.io.savemat(one / p.name, {"groundTruth": cell})
    assert main(["human", "--gt", str(one), "--quiet", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["boundary"]["F"] is None and got["boundary"]["recall"] is None


def test_figure_7_titles_stay_above_their_own_row():
    """QA (helper-46): in fig7_ncuts.png the second row's titles lay on the first
    row's pictures (tight_layout packed the rows)."""
    from segbench.region.consistency_figures import _examples_figure
    rng = np.random.default_rng(0)
    examples = []
    for iid, shape in (("a", (60, 90)), ("b", (60, 90)), ("c", (90, 60))):
        image = rng.integers(0, 255, (*shape, 3), dtype=np.uint8)
        labels = np.arange(shape[0])[:, None] // 20 * 5 + np.arange(shape[1])[None] // 30
        examples.append({"id": iid, "image": image,
                         "pairs": [(0, 4, labels, labels, 0.49, 0.4),
                                   (4, 25, labels, labels, 0.19, 0.18)]})
    fig = _examples_figure(examples, "kmeans")
    renderer = fig.canvas.get_renderer()
    fig.draw(renderer)
    axes = fig.axes
    for ax in axes:
        title = ax.title.get_window_extent(renderer)
        for other in axes:
            if other is not ax:
                assert not title.overlaps(other.get_window_extent(renderer)), \
                    (ax.get_title(), other.get_title())
