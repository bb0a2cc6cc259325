"""Ground truth beyond the BSDS ``.mat``: edge-map images and label maps.

The reader's rule on hand-made maps (every stored kind: 0/255, 0/1, 1-bit, 16-bit, a
gray map saved as RGB, graded maps, .npy, .mat variables, sparse); whole runs on
edge-map and label-map folders written from BSDS-format ground truth, whose counts must
equal the runs on the ``.mat`` files they came from (the same maps, another container);
several annotators per image in both namings; the void labels; the folder sniffing and
its one-line refusals; record keys that change with the reading; ``--thresholds`` and
``--nms`` settings.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.io
import scipy.sparse
from PIL import Image

import segbench
from segbench.datasets import (GT_FORMATS, EdgeMapFolder, GroundTruthFormat,
                               LabelMapGroundTruth, label_annotation, make_synthetic_dataset,
                               open_ground_truth, sniff_folder, write_synthetic_dataset)
from segbench.errors import InputError
from segbench.io import read_edge_map, read_ev1_table, read_ground_truth, write_soft_map


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "segbench.cli", *map(str, args)],
                          capture_output=True, text=True)


def _png(path, arr, mode=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    (Image.fromarray(arr, mode) if mode else Image.fromarray(arr)).save(path)
    return path


# ---------------------------------------------------------------------------------------
# the reader's rule

EDGES = np.zeros((6, 7), bool)
EDGES[2, 1:6] = True
EDGES[1:5, 3] = True


@pytest.mark.parametrize("scale", [255, 1])
def test_binary_8bit_maps_are_edges_where_nonzero(tmp_path, scale):
    path = _png(tmp_path / "e.png", (EDGES * scale).astype(np.uint8))
    assert np.array_equal(read_edge_map(path), EDGES)


def test_one_bit_sixteen_bit_and_gray_rgb_maps(tmp_path):
    one = tmp_path / "one.png"
    Image.fromarray(EDGES).convert("1").save(one)
    assert np.array_equal(read_edge_map(one), EDGES)
    sixteen = _png(tmp_path / "s.png", (EDGES * 65535).astype(np.uint16))
    assert np.array_equal(read_edge_map(sixteen), EDGES)
    rgb = _png(tmp_path / "rgb.png", np.repeat((EDGES * 255).astype(np.uint8)[..., None],
                                               3, axis=2))
    assert np.array_equal(read_edge_map(rgb), EDGES)


def test_graded_maps_are_cut_at_half_scale_or_the_given_threshold(tmp_path):
    graded = np.array([[0, 1, 127, 128, 200, 255]], np.uint8)
    path = _png(tmp_path / "g.png", graded)
    assert read_edge_map(path).tolist() == [[False, False, False, True, True, True]]
    assert read_edge_map(path, threshold=1 / 255).tolist() == \
        [[False, True, True, True, True, True]]
    assert read_edge_map(path, threshold=0.75).tolist() == \
        [[False, False, False, False, True, True]]
    # an explicit threshold applies to binary maps too: 0/1 maps at 0.5 have no edge
    ones = _png(tmp_path / "ones.png", EDGES.astype(np.uint8))
    assert not read_edge_map(ones, threshold=0.5).any()


def test_a_binary_map_saved_as_jpeg_reads_back_close_to_itself(tmp_path):
    wide = np.zeros((40, 40), np.uint8)
    wide[10:30, 18:22] = 255
    path = tmp_path / "e.jpg"
    Image.fromarray(wide).save(path, quality=90)
    got = read_edge_map(path)
    assert np.count_nonzero(got != (wide > 0)) <= 0.02 * wide.size


def test_arrays_and_mat_variables(tmp_path):
    np.save(tmp_path / "b.npy", EDGES)
    assert np.array_equal(read_edge_map(tmp_path / "b.npy"), EDGES)
    np.save(tmp_path / "f.npy", EDGES * 0.7)
    assert np.array_equal(read_edge_map(tmp_path / "f.npy"), EDGES)
    scipy.io.savemat(tmp_path / "m.mat", {"edge": EDGES.astype(np.double),
                                          "other": np.eye(3)})
    assert np.array_equal(read_edge_map(tmp_path / "m.mat", variable="edge"), EDGES)
    with pytest.raises(InputError, match="several 2-D numeric variables.*--gt-variable"):
        read_edge_map(tmp_path / "m.mat")
    scipy.io.savemat(tmp_path / "sp.mat", {"b": scipy.sparse.csc_matrix(EDGES * 1.0)})
    assert np.array_equal(read_edge_map(tmp_path / "sp.mat", variable="b"), EDGES)


@pytest.mark.parametrize("make, message", [
    (lambda p: Image.fromarray(EDGES.astype(np.uint8)).convert("P").save(p),
     "palette image .* --gt-format labels"),
    (lambda p: Image.fromarray(np.dstack([EDGES * 255, EDGES * 0, EDGES * 0])
                               .astype(np.uint8)).save(p), "colour image whose channels"),
    (lambda p: p.write_bytes(b"not a png"), "not an image"),
])
def test_bad_edge_maps_are_named(tmp_path, make, message):
    path = tmp_path / "bad.png"
    make(path)
    with pytest.raises(InputError, match=message) as err:
        read_edge_map(path)
    assert str(path) in str(err.value)


def test_bad_arrays_and_thresholds_are_named(tmp_path):
    np.save(tmp_path / "big.npy", EDGES * 2.0)
    with pytest.raises(InputError, match=r"values in \[0, 1\]"):
        read_edge_map(tmp_path / "big.npy")
    np.save(tmp_path / "cube.npy", np.zeros((2, 2, 2)))
    with pytest.raises(InputError, match="2-D edge map"):
        read_edge_map(tmp_path / "cube.npy")
    _png(tmp_path / "e.png", (EDGES * 255).astype(np.uint8))
    for bad in (0, 1.5, -0.1):
        with pytest.raises(InputError, match=r"threshold is a fraction in \(0, 1\]"):
            read_edge_map(tmp_path / "e.png", threshold=bad)


# ---------------------------------------------------------------------------------------
# whole runs: the same maps in another container give the same counts


@pytest.fixture(scope="module")
def bsds_like(tmp_path_factory):
    """Six synthetic images (3 annotators) as BSDS .mat, soft maps, and the run on the
    .mat files."""
    root = tmp_path_factory.mktemp("edgegt")
    items = make_synthetic_dataset(6, shape=(72, 96), n_annotators=3, seed=21)
    write_synthetic_dataset(root, items)
    gt = root / "groundTruth" / "test"
    rng = np.random.default_rng(3)
    pred = root / "pred"
    from scipy import ndimage
    for it in items:
        b = read_ground_truth(gt / f"{it.iid}.mat")[0].boundaries.astype(float)
        soft = np.clip(ndimage.gaussian_filter(b, 1.0) * 2.5 + 0.2 * rng.random(b.shape),
                       0, 1)
        write_soft_map(pred / f"{it.iid}.png", soft)
    ref = segbench.evaluate("boundary", gt=gt, pred=pred, out=root / "ref", plot=False,
                            progress=False)
    return {"root": root, "gt": gt, "pred": pred, "items": items, "ref": ref,
            "ids": [it.iid for it in items]}


def _same_counts(run_a, run_b, ids):
    for iid in ids:
        assert np.array_equal(read_ev1_table(run_a / f"{iid}_ev1.txt"),
                              read_ev1_table(run_b / f"{iid}_ev1.txt")), iid


def test_edge_pngs_one_annotator_equal_the_mat_run(bsds_like, tmp_path):
    """Annotator 1's Boundaries written as 0/255 PNGs (found and read without
    --gt-format) score as a .mat holding that annotator alone."""
    one_mat, pngs = tmp_path / "one_mat", tmp_path / "pngs"
    one_mat.mkdir()
    for iid in bsds_like["ids"]:
        h = read_ground_truth(bsds_like["gt"] / f"{iid}.mat")[0]
        _png(pngs / f"{iid}.png", (h.boundaries * 255).astype(np.uint8))
        segbench.datasets.write_ground_truth(one_mat / f"{iid}.mat", [h.segmentation],
                                             boundaries=[h.boundaries])
    a = segbench.evaluate("boundary", gt=one_mat, pred=bsds_like["pred"],
                          out=tmp_path / "a", plot=False, progress=False)
    proc = _cli("boundary", "--gt", pngs, "--pred", bsds_like["pred"], "--out",
                tmp_path / "b", "--no-plot", "--quiet", "--json")
    assert proc.returncode == 0, proc.stderr
    _same_counts(tmp_path / "a", tmp_path / "b", bsds_like["ids"])
    b = segbench.Result.from_json(tmp_path / "b" / "result_boundary.json")
    assert b.metrics["ODS"] == a.metrics["ODS"]


@pytest.mark.parametrize("naming", ["folders", "pattern"])
def test_several_annotators_equal_the_mat_run(bsds_like, tmp_path, naming):
    """Every annotator of each .mat as its own 0/1 PNG: in <iid>/ folders, or named
    <iid>.<k>.png and grouped by a pattern; counts equal the .mat run's."""
    folder = tmp_path / "gt"
    for iid in bsds_like["ids"]:
        for k, h in enumerate(read_ground_truth(bsds_like["gt"] / f"{iid}.mat"), 1):
            name = f"{iid}/{k}.png" if naming == "folders" else f"{iid}.{k}.png"
            _png(folder / name, h.boundaries.astype(np.uint8))
    if naming == "folders":
        ds = open_ground_truth(folder, gt_format="edges")
    else:
        ds = EdgeMapFolder(folder, annotators=r"(?P<iid>\d+|synth\d+)\.(?P<annotator>\d)"
                                              r"\.png")
    assert ds.ids() == bsds_like["ids"]
    assert len(ds[bsds_like["ids"][0]].annotations) == 3
    segbench.evaluate("boundary", gt=ds, pred=bsds_like["pred"], out=tmp_path / "run",
                      plot=False, progress=False)
    _same_counts(bsds_like["root"] / "ref", tmp_path / "run", bsds_like["ids"])


def test_label_maps_as_boundaries_and_regions_equal_the_mat_run(bsds_like, tmp_path):
    """Each annotator's Segmentation as a 16-bit PNG label map: boundaries drawn as the
    official files relate them to their segmentations (thin(seg2bdry)), so the
    boundary counts and the human region scores equal those of the .mat files."""
    folder = tmp_path / "labels"
    for iid in bsds_like["ids"]:
        for k, h in enumerate(read_ground_truth(bsds_like["gt"] / f"{iid}.mat"), 1):
            _png(folder / iid / f"{k}.png", h.segmentation.astype(np.uint16))
    ds = open_ground_truth(folder, gt_format="labels")
    segbench.evaluate("boundary", gt=ds, pred=bsds_like["pred"], out=tmp_path / "run",
                      plot=False, progress=False)
    _same_counts(bsds_like["root"] / "ref", tmp_path / "run", bsds_like["ids"])
    _, human_labels = segbench.evaluate("human", gt=ds, progress=False)
    _, human_mat = segbench.evaluate("human", gt=bsds_like["gt"], progress=False)
    for k in ("covering", "PRI", "VI"):
        assert human_labels.metrics[k] == pytest.approx(human_mat.metrics[k], abs=1e-12)


def test_void_labels_are_no_region_and_draw_no_boundary():
    labels = np.array([[1, 1, 255, 2, 2],
                       [1, 1, 255, 2, 2],
                       [3, 3, 255, 2, 2],
                       [3, 3, 3, 3, 3]], np.uint8)
    plain = label_annotation(labels)
    voided = label_annotation(labels, (255,))
    assert set(np.unique(plain.segmentation)) == {1, 2, 3, 4}
    assert set(np.unique(voided.segmentation)) == {0, 1, 2, 3}
    assert (voided.segmentation == 0).sum() == 3
    assert not voided.boundaries[labels == 255].any()
    # away from the void column the boundaries are those of the plain reading
    keep = np.ones_like(labels, bool)
    keep[:, 1:4] = False
    assert np.array_equal(voided.boundaries[keep], plain.boundaries[keep])


def test_an_unlabelled_area_draws_no_boundary_on_any_side():
    """A void square inside one region: no ground-truth boundary around it, on any
    side (the rule dropped only the boundary pixels on void pixels, so the square's top
    and left sides, whose boundary lies on the labelled pixels, were drawn)."""
    labels = np.ones((50, 60), np.uint8)
    labels[:, 30:] = 2
    labels[20:30, 10:20] = 0
    for flip in (lambda a: a, np.flipud, np.fliplr, np.transpose):
        lab = np.ascontiguousarray(flip(labels))
        got = label_annotation(lab, (0,)).boundaries
        region_edge = label_annotation(np.where(lab == 0, 1, lab)).boundaries
        assert np.array_equal(got, region_edge)


def test_seg2bdry_void_in_both_formats():
    """seg2bdry's void rule: the (H, W) map is the doubled grid's corners, as without
    it, and an edge between two labelled pixels is drawn as without it."""
    from segbench.primitives import seg2bdry

    rng = np.random.default_rng(4)
    for _ in range(20):
        seg = rng.integers(0, 4, (9, 11)).astype(np.int32)
        double = seg2bdry(seg, "doubleSize", void=0)
        assert np.array_equal(seg2bdry(seg, void=0), double[2::2, 2::2])
        full = seg2bdry(seg, "doubleSize")
        assert not (double & ~full).any()
        # edges between two labelled pixels are kept
        both = np.zeros_like(full)
        both[2::2, 1::2][:-1] = (seg[:-1] != seg[1:]) & (seg[:-1] > 0) & (seg[1:] > 0)
        assert np.array_equal(double[2::2, 1::2][:-1], both[2::2, 1::2][:-1])
    assert np.array_equal(seg2bdry(np.array([[1, 0], [1, 0]]), void=0), np.zeros((2, 2), bool))


def test_sniffing_decides_edges_labels_or_names_the_choices(tmp_path):
    gray = tmp_path / "gray"
    _png(gray / "a.png", (EDGES * 255).astype(np.uint8))
    assert sniff_folder(gray) == "edges"
    pal = tmp_path / "pal"
    pal.mkdir()
    Image.fromarray(EDGES.astype(np.uint8)).convert("P").save(pal / "a.png")
    assert sniff_folder(pal) == "labels"
    # 16-bit: thin lines are an edge map (0/65535 and the like), regions a label map
    deep = tmp_path / "deep"
    _png(deep / "a.png", (EDGES * 3000).astype(np.uint16))
    assert sniff_folder(deep) == "edges"
    regions = np.zeros(EDGES.shape, np.uint16)
    regions[:, : EDGES.shape[1] // 2] = 300
    regions[EDGES.shape[0] // 2 :, :] = 7000
    deep_labels = tmp_path / "deep_labels"
    _png(deep_labels / "a.png", regions)
    assert sniff_folder(deep_labels) == "labels"
    colour = tmp_path / "colour"
    _png(colour / "a.png", np.dstack([EDGES * 255, EDGES * 0, EDGES * 9]).astype(np.uint8))
    with pytest.raises(InputError, match="--gt-format edges .* or labels"):
        sniff_folder(colour)
    proc = _cli("boundary", "--gt", colour, "--pred", colour, "--quiet")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "a.png" in proc.stderr


def test_split_folders_of_edge_maps_take_split(tmp_path):
    for split in ("train", "test"):
        _png(tmp_path / "gt" / split / f"{split}1.png", (EDGES * 255).astype(np.uint8))
    with pytest.raises(InputError, match="several splits"):
        open_ground_truth(tmp_path / "gt")
    assert open_ground_truth(tmp_path / "gt", split="test").ids() == ["test1"]


def test_options_that_do_not_fit_the_format_are_refused(tmp_path, bsds_like):
    _png(tmp_path / "gt" / "a.png", (EDGES * 255).astype(np.uint8))
    with pytest.raises(InputError, match="--gt-void names labels"):
        open_ground_truth(tmp_path / "gt", gt_format=GroundTruthFormat("edges", void=(0,)))
    with pytest.raises(InputError, match="--gt-threshold binarizes edge maps"):
        open_ground_truth(tmp_path / "gt",
                          gt_format=GroundTruthFormat("labels", threshold=0.5))
    with pytest.raises(InputError, match="not BSDS .mat/.seg"):
        open_ground_truth(bsds_like["gt"], gt_format=GroundTruthFormat("bsds",
                                                                        threshold=0.5))
    with pytest.raises(InputError, match="unknown ground-truth format 'nope'"):
        open_ground_truth(tmp_path / "gt", gt_format="nope")


def test_a_changed_reading_recomputes_the_records(tmp_path):
    """The same files read at another threshold are other ground truth: a rerun with
    --gt-threshold changed recomputes; the same settings reuse every record."""
    graded = np.zeros((40, 50), np.uint8)
    graded[20, 5:45] = 255
    graded[10, 5:45] = 100          # an edge only at thresholds <= 100/255
    _png(tmp_path / "gt" / "a.png", graded)
    pb = np.zeros((40, 50))
    pb[10, 5:45] = 0.9
    write_soft_map(tmp_path / "pred" / "a.png", pb)
    common = ("boundary", "--gt", tmp_path / "gt", "--pred", tmp_path / "pred", "--out",
              tmp_path / "out", "--no-plot", "--quiet", "--json")
    first = _cli(*common)
    assert first.returncode == 0, first.stderr
    low = _cli(*common, "--gt-threshold", "0.3")
    assert low.returncode == 0, low.stderr
    import json
    f_half, f_low = (json.loads(p.stdout)["metrics"]["ODS"] for p in (first, low))
    assert f_half == 0.0 and f_low > 0.6
    res = segbench.Result.from_json(tmp_path / "out" / "result_boundary.json")
    assert res.provenance["params"]["gt_format"]["threshold"] == 0.3


def test_gt_format_choices_are_the_readers():
    from segbench.cli._common import GT_FORMAT_CHOICES
    assert set(GT_FORMAT_CHOICES) == set(GT_FORMATS)


def test_label_map_folder_reads_mat_variables(tmp_path):
    seg = np.array([[1, 1, 2], [1, 3, 2], [3, 3, 2]], np.double)
    scipy.io.savemat(tmp_path / "a.mat", {"seg": seg, "depth": seg * 0.5})
    ds = LabelMapGroundTruth(tmp_path, variable="seg")
    assert np.array_equal(ds["a"].annotations[0].segmentation, seg.astype(int))


# ---------------------------------------------------------------------------------------
# thresholds and NMS settings


def test_an_explicit_threshold_list_scores_those_thresholds(bsds_like, tmp_path):
    from segbench.boundary import evaluate_image
    from segbench.io import read_prediction
    ts = [0.2, 0.5, 0.8]
    res = segbench.evaluate("boundary", gt=bsds_like["gt"], pred=bsds_like["pred"],
                            out=tmp_path / "run", thresholds=ts, plot=False,
                            progress=False)
    assert list(res.curves["thresholds"]) == ts
    iid = bsds_like["ids"][0]
    direct = evaluate_image(read_prediction(bsds_like["pred"] / f"{iid}.png"),
                            read_ground_truth(bsds_like["gt"] / f"{iid}.mat"),
                            thresholds=ts)
    table = read_ev1_table(tmp_path / "run" / f"{iid}_ev1.txt")
    assert np.array_equal(table[:, 1:].astype(np.int64),
                          np.stack([direct.cnt_r, direct.sum_r, direct.cnt_p,
                                    direct.sum_p], axis=1))
    # a count is nthresh; a bad list is one line
    proc = _cli("boundary", "--gt", bsds_like["gt"], "--pred", bsds_like["pred"],
                "--thresholds", "0.5,1.5", "--quiet")
    assert proc.returncode == 2 and "must lie in [0, 1]" in proc.stderr
    counted = segbench.evaluate("boundary", gt=bsds_like["gt"], pred=bsds_like["pred"],
                                thresholds=9, plot=False, progress=False)
    assert counted.provenance["params"]["nthresh"] == 9
    assert len(counted.curves["thresholds"]) == 9


def test_nms_settings_on_the_command_line():
    from segbench.families import _nms
    assert _nms(True) is True
    assert _nms("r=2,m=1.05,presmooth=0") == {"r": 2, "m": 1.05, "presmooth": False}
    with pytest.raises(InputError, match="r=, s=, m=, presmooth="):
        _nms("radius=2")


# ---------------------------------------------------------------------------------------
# datasets as distributed


def test_a_biped_tree_is_found_with_its_photographs(tmp_path):
    root = tmp_path / "BIPED"
    for iid in ("RGB_008", "RGB_010"):
        _png(root / "edges" / "edge_maps" / "test" / "rgbr" / f"{iid}.png",
             (EDGES * 255).astype(np.uint8))
        _png(root / "edges" / "imgs" / "test" / "rgbr" / f"{iid}.jpg",
             np.zeros((6, 7, 3), np.uint8))
    # train keeps its maps in augmentation folders: left out
    _png(root / "edges" / "edge_maps" / "train" / "rgbr" / "aug" / "x.png",
         (EDGES * 255).astype(np.uint8))
    for where in (root, root / "edges"):
        ds = open_ground_truth(where)
        assert ds.ids() == ["RGB_008", "RGB_010"] and ds.splits == ("test",)
        item = ds["RGB_008"]
        assert item.image_path.name == "RGB_008.jpg"
        assert np.array_equal(item.ground_truth()[0].boundaries, EDGES)


def test_a_multicue_tree_needs_its_annotations_named(tmp_path):
    root = tmp_path / "multicue"
    for kind, k_max in (("edges", 6), ("boundaries", 5)):
        for k in range(1, k_max + 1):
            e = EDGES.copy()
            e[0, k] = True                     # each annotator a little different
            _png(root / "ground-truth" / "images" / kind / f"4100_left_2268.{k}.png",
                 (e * 255).astype(np.uint8))
    _png(root / "images" / "4100_left_2268.png", np.zeros((6, 7, 3), np.uint8))
    with pytest.raises(InputError, match="multicue-edges or multicue-boundaries"):
        open_ground_truth(root)
    for fmt, k_max in (("multicue-edges", 6), ("multicue-boundaries", 5)):
        ds = open_ground_truth(root, gt_format=fmt)
        assert ds.ids() == ["4100_left_2268"]
        anns = ds["4100_left_2268"].ground_truth()
        assert len(anns) == k_max
        assert [int(np.flatnonzero(a.boundaries[0])[0]) for a in anns] == \
            list(range(1, k_max + 1))           # in annotator order
        assert ds["4100_left_2268"].image_path.name == "4100_left_2268.png"
    # the annotation folder itself: the .<k> naming is grouped without being named
    ds = open_ground_truth(root / "ground-truth" / "images" / "edges")
    assert ds.ids() == ["4100_left_2268"] and len(ds["4100_left_2268"].ground_truth()) == 6
    with pytest.raises(InputError, match="reads a Multicue tree"):
        open_ground_truth(tmp_path / "multicue" / "images", gt_format="multicue-edges")


def test_bsds_rind_types_are_splits_of_its_testgt(bsds_like, tmp_path):
    import shutil
    for kind in ("depth", "normal", "reflectance", "illumination"):
        shutil.copytree(bsds_like["gt"], tmp_path / "testgt" / kind)
    with pytest.raises(InputError, match="depth, illumination, normal, reflectance"):
        open_ground_truth(tmp_path / "testgt")
    assert open_ground_truth(tmp_path / "testgt", split="normal").ids() == \
        bsds_like["ids"]


# ---------------------------------------------------------------------------------------
# presets


def test_presets_set_their_values_record_them_and_yield_to_options(bsds_like, tmp_path):
    from segbench.boundary import PROTOCOLS
    from segbench.boundary._protocols import SOURCES
    from segbench.families import PRESETS
    assert set(PRESETS) == set(PROTOCOLS)
    for name in ("bsds500", "nyud", "biped", "multicue", "bsds-rind"):
        assert set(SOURCES[name]) >= set(PROTOCOLS[name]) - {"reported"} | {"reported"}
    assert PROTOCOLS["nyud"]["max_dist"] == 0.011
    proc = _cli("boundary", "--gt", bsds_like["gt"], "--pred", bsds_like["pred"],
                "--preset", "nyud", "--out", tmp_path / "nyud", "--no-plot", "--quiet")
    assert proc.returncode == 0, proc.stderr
    res = segbench.Result.from_json(tmp_path / "nyud" / "result_boundary.json")
    p = res.provenance["params"]
    assert (p["protocol"], p["max_dist"], p["nms"]) == \
        ("nyud", 0.011, {"r": 4, "s": 5, "m": 1.01, "presmooth": False})
    # the same run through the parameters themselves gives the same numbers
    same = segbench.evaluate("boundary", gt=bsds_like["gt"], pred=bsds_like["pred"],
                             max_dist=0.011, nms={"r": 4, "presmooth": False},
                             plot=False, progress=False)
    assert same.metrics["ODS"] == res.metrics["ODS"]
    # every value yields to an option: NMS off and another tolerance
    proc = _cli("boundary", "--gt", bsds_like["gt"], "--pred", bsds_like["pred"],
                "--preset", "nyud", "--nms", "off", "--max-dist", "0.0075", "--quiet",
                "--json", "--no-plot")
    assert proc.returncode == 0, proc.stderr
    import json
    data = json.loads(proc.stdout)
    assert data["metrics"]["ODS"] == bsds_like["ref"].metrics["ODS"]
    assert data["provenance"]["params"]["nms"] is None
    with pytest.raises(InputError, match="name two protocols"):
        segbench.evaluate("boundary", gt=bsds_like["gt"], pred=bsds_like["pred"],
                          preset="nyud", protocol="biped")


def test_gray_label_maps_are_told_from_edge_maps(tmp_path):
    """8-bit gray label maps (Cityscapes trainIds, masks) are regions, not edges."""
    labels = np.zeros((40, 50), np.uint8)
    labels[:, 20:] = 7
    labels[25:, :] = 13
    path = _png(tmp_path / "labels" / "a.png", labels)
    from segbench.datasets import sniff_file
    assert sniff_file(path) == "labels"
    assert sniff_folder(tmp_path / "labels") == "labels"
    blurred = np.zeros((40, 50), np.uint8)
    blurred[:, 19], blurred[:, 20], blurred[:, 21] = 90, 255, 90   # anti-aliased line
    assert sniff_file(_png(tmp_path / "b.png", blurred)) == "edges"


def test_streaming_takes_edge_png_ground_truth_paths(bsds_like, tmp_path):
    """BoundaryEval given an edge-map PNG path scores it as the same map in memory."""
    iid = bsds_like["ids"][0]
    h = read_ground_truth(bsds_like["gt"] / f"{iid}.mat")[0]
    path = _png(tmp_path / f"{iid}.png", (h.boundaries * 255).astype(np.uint8))
    from segbench.io import read_prediction
    pb = read_prediction(bsds_like["pred"] / f"{iid}.png").pb
    by_path, by_array = segbench.BoundaryEval(), segbench.BoundaryEval()
    by_path.update([pb], [path])
    by_array.update([pb], [[h.boundaries]])
    assert by_path.compute().metrics["ODS"] == by_array.compute().metrics["ODS"]


def test_void_pixels_are_left_out_of_the_region_measures(tmp_path):
    """A label map read with --gt-void scores as the region measures' own void rule
    on the raw map (pixels of the void label left out of both maps)."""
    from segbench.region import covering, rand_index, variation_of_information
    raw = np.array([[1, 1, 255, 2, 2, 2],
                    [1, 1, 255, 2, 2, 2],
                    [3, 3, 255, 255, 4, 4],
                    [3, 3, 3, 4, 4, 4]], np.uint8)
    seg = np.array([[1, 1, 1, 2, 2, 2],
                    [1, 1, 2, 2, 2, 2],
                    [3, 3, 3, 3, 2, 2],
                    [3, 3, 3, 3, 3, 3]], np.int32)
    _png(tmp_path / "gt" / "a.png", raw)
    ds = open_ground_truth(tmp_path / "gt", gt_format=GroundTruthFormat("labels",
                                                                        void=(255,)))
    gt = ds["a"].annotations[0].segmentation
    for measure in (covering, rand_index, variation_of_information):
        assert measure(seg, gt) == pytest.approx(
            measure(seg, raw.astype(np.int32), void=255), abs=1e-12), measure.__name__
