"""The 2001 protocol: human consistency (pairs, sampling, separation) and matched granularity."""

from __future__ import annotations

import functools
import itertools
import os

import numpy as np
import pytest

from conftest import DATA, require
from segbench.algorithms.segmenters import FolderSegmenter, kmeans_segmenter
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.errors import InputError
from segbench.datasets import write_ground_truth
from segbench.region import gce, lce
from segbench.runners._consistency import (evaluate_granularity, human_consistency,
                                      run_consistency, run_granularity)
from segbench.region.consistency import (ConsistencyReport, cross_image_errors,
                                         granularity_image, pair_errors, plot_consistency,
                                         sample_image_pairs, same_image_errors, separation,
                                         wrong_side)

BSDS = DATA / "bsds500"


# ---------------------------------------------------------------- small fixtures


def _blocks(h, w, rows, cols, shift=0):
    """A grid segmentation with labels 1..rows*cols, boundaries moved by ``shift``."""
    r = np.clip((np.arange(h)[:, None] + shift) * rows // h, 0, rows - 1)
    c = np.clip((np.arange(w)[None, :] + shift) * cols // w, 0, cols - 1)
    return (r * cols + c + 1).astype(np.int32)


@pytest.fixture(scope="module")
def gt_folder(tmp_path_factory):
    """Five landscape images (K = 2..4 annotators) and three portrait images."""
    root = tmp_path_factory.mktemp("gt")
    rng = np.random.default_rng(7)
    spec = [("a1", (30, 40), 3), ("a2", (30, 40), 2), ("a3", (30, 40), 4),
            ("a4", (30, 40), 3), ("a5", (30, 40), 2),
            ("p1", (40, 30), 3), ("p2", (40, 30), 2), ("p3", (40, 30), 3)]
    for iid, (h, w), k in spec:
        rows, cols = rng.integers(1, 4, size=2)
        segs = [_blocks(h, w, int(rows) + a % 2, int(cols), shift=int(rng.integers(0, 4)))
                for a in range(k)]
        write_ground_truth(root / f"{iid}.mat", segs)
    return root, {iid: (shape, k) for iid, shape, k in spec}


# ---------------------------------------------------------------- pure pieces


def test_pair_errors_match_the_measures():
    a = _blocks(20, 30, 2, 3)
    b = _blocks(20, 30, 3, 2, shift=2)
    assert pair_errors(a, b) == (gce(a, b), lce(a, b))
    assert pair_errors(a, a) == (0.0, 0.0)


def test_identical_segmentations_give_zero():
    seg = _blocks(24, 32, 3, 3)
    rows = same_image_errors([seg, seg.copy(), seg + 5])   # relabelled: still identical
    assert rows.shape == (3, 4)
    np.testing.assert_array_equal(rows[:, :2], [[0, 1], [0, 2], [1, 2]])
    np.testing.assert_array_equal(rows[:, 2:], 0.0)
    cross = cross_image_errors([seg, seg + 1], [seg])
    np.testing.assert_array_equal(cross[:, 2:], 0.0)


def test_same_and_cross_rows_equal_brute_force():
    rng = np.random.default_rng(1)
    ga = [rng.integers(1, 4, (12, 15)) for _ in range(3)]
    gb = [rng.integers(1, 6, (12, 15)) for _ in range(2)]
    same = same_image_errors(ga)
    for i, j, g, e in same:
        assert (g, e) == pytest.approx(pair_errors(ga[int(i)], ga[int(j)]))
    cross = cross_image_errors(ga, gb)
    assert [tuple(r[:2]) for r in cross] == list(itertools.product(range(3), range(2)))
    for i, j, g, e in cross:
        assert (g, e) == pytest.approx(pair_errors(ga[int(i)], gb[int(j)]))
        assert e <= g + 1e-12
    with pytest.raises(InputError):
        cross_image_errors(ga, [np.ones((15, 12), int)])
    from segbench.region import prepare_ground_truth
    once = cross_image_errors(prepare_ground_truth(ga, void=None),
                              prepare_ground_truth(gb, void=None), prepared=True)
    np.testing.assert_array_equal(once, cross)      # compacted once: the same rows


def test_separation_constructed_case():
    same = [0.00, 0.02, 0.05, 0.20]            # one same-image pair far up
    diff = [0.10, 0.30, 0.40, 0.50, 0.60]      # one different-image pair far down
    r = separation(same, diff)
    # best: a threshold between 0.05 and 0.10 -> only 0.20 (same) is wrong ... or between
    # 0.20 and 0.30 -> only 0.10 (different) is wrong: equal, the lower one is returned
    assert r["threshold"] == pytest.approx(0.075)
    assert r["wrong"] == pytest.approx(1 / 9)
    assert r["wrong_same"] == pytest.approx(1 / 4) and r["wrong_different"] == 0.0
    # weighting the different-image pairs: at 3 the tie is gone (0.10 on the wrong side
    # would cost 3 of 4 + 15), the threshold stays below 0.10 and the weight shows in the
    # fraction; at 0.5 the threshold moves up, giving up the different-image pair 0.10
    r3 = separation(same, diff, diff_weight=3.0)
    assert r3["threshold"] == pytest.approx(0.075)
    assert r3["wrong"] == pytest.approx(1 / (4 + 3 * 5))
    assert r3["wrong_different"] == 0.0
    r_half = separation(same, diff, diff_weight=0.5)
    assert r_half["threshold"] == pytest.approx(0.25)
    assert r_half["wrong"] == pytest.approx(0.5 / (4 + 2.5))
    # perfectly separated sets: nothing wrong
    assert separation([0.0, 0.1], [0.3, 0.4])["wrong"] == 0.0
    # the fraction at a given threshold
    assert wrong_side(same, diff, 0.12) == pytest.approx(2 / 9)
    assert wrong_side(same, diff, 0.12, diff_weight=2.0) == pytest.approx(3 / 14)
    assert np.isnan(separation([], diff)["wrong"]) and np.isnan(wrong_side(same, [], 0.1))


def test_separation_ties_are_never_on_the_threshold():
    r = separation([0.0, 0.0, 0.0], [0.0, 0.5])
    # the zero-valued different pair is wrong whatever the threshold
    assert r["wrong"] == pytest.approx(1 / 5) and r["threshold"] == pytest.approx(0.25)


def test_sample_image_pairs():
    shapes = [(3, 4)] * 5 + [(4, 3)] * 3 + [(5, 5)]
    allp, total = sample_image_pairs(shapes, 10 ** 6, seed=0)
    assert total == 10 + 3 and len(allp) == total
    assert all(shapes[a] == shapes[b] and a < b for a, b in allp)
    assert len({tuple(p) for p in allp.tolist()}) == total
    s1, _ = sample_image_pairs(shapes, 6, seed=3)
    s2, _ = sample_image_pairs(shapes, 6, seed=3)
    s3, _ = sample_image_pairs(shapes, 6, seed=4)
    np.testing.assert_array_equal(s1, s2)
    assert len(s1) == 6 and not np.array_equal(s1, s3)
    assert (np.diff(s1[:, 0] * 100 + s1[:, 1]) > 0).all()            # sorted, unique
    assert sample_image_pairs(shapes, 0, seed=0)[0].shape == (0, 2)
    with pytest.raises(InputError):
        sample_image_pairs(shapes, -1, seed=0)


def test_pair_rank_mapping_is_uniform():
    """Every image pair is drawn equally often over many seeds (uniform inclusion)."""
    shapes = [(2, 2)] * 6 + [(3, 3)] * 4
    counts = {}
    for seed in range(400):
        for a, b in sample_image_pairs(shapes, 7, seed)[0].tolist():
            counts[(a, b)] = counts.get((a, b), 0) + 1
    assert len(counts) == 15 + 6
    freq = np.array(list(counts.values())) / 400
    assert freq.min() > 0.25 and freq.max() < 0.42
    # the (2, 2) and (3, 3) groups are drawn alike: mean inclusion ~1/3 in both. Per seed
    # the draws from the 15-pair group are hypergeometric (7 of 21), variance
    # 7 (15/21)(6/21)(14/20) = 1; the 6-pair group gets the rest, so over 400 seeds the
    # difference of the group means has sd 20 (1/(15*400) + 1/(6*400)); allow 4 sd.
    small = np.mean([counts.get((a, b), 0) for a in range(6) for b in range(a + 1, 6)]) / 400
    large = np.mean([counts.get((a, b), 0) for a in range(6, 10)
                     for b in range(a + 1, 10)]) / 400
    var = 7 * (15 / 21) * (6 / 21) * (14 / 20)
    sd = np.sqrt(400 * var) * (1 / (15 * 400) + 1 / (6 * 400))
    assert abs(small - large) < 4 * sd
    assert abs(small - 1 / 3) < 4 * sd and abs(large - 1 / 3) < 4 * sd


# ---------------------------------------------------------------- the protocol on folders


def test_pair_counts_and_equal_shape_pairing(gt_folder):
    root, spec = gt_folder
    rep = human_consistency(root, pairs=10 ** 6, seed=0, progress=False)
    ks = {iid: k for iid, (_, k) in spec.items()}
    assert rep.ids == sorted(spec)
    assert len(rep.same) == sum(k * (k - 1) // 2 for k in ks.values())
    land = [i for i in spec if i.startswith("a")]
    port = [i for i in spec if i.startswith("p")]
    expect = sum(ks[a] * ks[b] for grp in (land, port) for a, b in itertools.combinations(grp, 2))
    assert len(rep.different) == expect
    assert rep.n_image_pairs == rep.n_image_pairs_total == 10 + 3
    for a, b in rep.different[:, :2].astype(int):
        assert rep.shapes[a] == rep.shapes[b]
    m = rep.metrics()
    assert m["n_segmentations"] == sum(ks.values()) and m["LCE_le_GCE"]
    assert m["GCE_same"] >= m["LCE_same"] and m["GCE_different"] >= m["LCE_different"]
    # all pairs taken: the weight is 1, the pooled fraction is the paper's
    assert rep.diff_weight == 1.0
    s, d = rep.same[:, 3], rep.different[:, 4]
    assert m["GCE_wrong_side"] == separation(s, d)["wrong"]
    rows = rep.per_image()
    assert [r["n_pairs"] for r in rows] == [ks[i] * (ks[i] - 1) // 2 for i in rep.ids]


def test_deterministic_for_seed_and_workers(gt_folder):
    root, _ = gt_folder
    a = human_consistency(root, pairs=5, seed=11, workers=1, progress=False)
    b = human_consistency(root, pairs=5, seed=11, workers=2, progress=False)
    c = human_consistency(root, pairs=5, seed=12, workers=1, progress=False)
    np.testing.assert_array_equal(a.same, b.same)
    np.testing.assert_array_equal(a.different, b.different)
    assert a.metrics() == b.metrics()
    assert a.n_image_pairs == 5 and a.diff_weight == pytest.approx(13 / 5)
    assert not np.array_equal(a.different[:, :2], c.different[:, :2])


def test_pairs_zero_and_multiple_folders(gt_folder, tmp_path):
    root, spec = gt_folder
    rep = human_consistency(root, pairs=0, progress=False)
    m = rep.metrics()
    assert m["n_different_pairs"] == 0 and np.isnan(m["GCE_different"])
    assert np.isnan(m["GCE_wrong_side"]) and np.isnan(m["GCE_wrong_side_balanced"])
    assert rep.to_result().to_json()                     # NaN written as null
    other = tmp_path / "other"
    other.mkdir()
    write_ground_truth(other / "z1.mat", [_blocks(30, 40, 2, 2)] * 2)
    rep2 = human_consistency([root, other], pairs=100, progress=False)
    assert rep2.ids[-1] == "z1" and rep2.n_image_pairs_total == 15 + 3
    write_ground_truth(other / "a1.mat", [_blocks(30, 40, 2, 2)] * 2)
    with pytest.raises(InputError, match="in two ground-truth folders"):
        human_consistency([root, other], progress=False)


def test_errors_name_the_input(tmp_path):
    with pytest.raises(InputError, match="no ground truth"):
        human_consistency(tmp_path, progress=False)
    (tmp_path / "bad.mat").write_bytes(b"not a mat file")
    with pytest.raises(InputError, match="bad.mat"):
        human_consistency(tmp_path, progress=False)


def test_run_consistency_writes_files(gt_folder, tmp_path):
    root, _ = gt_folder
    res, rep = run_consistency(root, tmp_path / "out", pairs=4, progress=False)
    out = tmp_path / "out"
    for name in ("result_consistency.json", "per_item_consistency.csv", "consistency_pairs.csv",
                 "consistency_hist.png", "consistency_gce_lce.png"):
        assert (out / name).stat().st_size > 0
    assert (out / "consistency_hist.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    lines = (out / "consistency_pairs.csv").read_text().splitlines()
    assert len(lines) == 1 + len(rep.same) + len(rep.different)
    assert lines[1].startswith("same,a1,1,a1,2,")
    assert res.family == "consistency" and res.provenance["params"]["pairs"] == 4
    assert sum(res.curves["GCE_same"]) == len(rep.same)


def test_plot_empty_report(tmp_path):
    rep = ConsistencyReport(["x"], [(2, 2)], [[1]], np.zeros((0, 5)), np.zeros((0, 6)),
                            0, 0, 0)
    paths = plot_consistency(rep, tmp_path)
    assert all(p.exists() for p in paths)


# ---------------------------------------------------------------- matched granularity


def _oracle(gts):
    """A segmenter that knows the people: for k, the first annotator with k segments."""
    by_k = {}
    for g in gts:
        by_k.setdefault(len(np.unique(g)), g)
    return lambda image, k: by_k[k]


def test_granularity_image_oracle_and_counts():
    segs = [_blocks(20, 30, 2, 2), _blocks(20, 30, 3, 3), _blocks(20, 30, 2, 2, shift=3)]
    calls = []

    def seg(image, k):
        calls.append(k)
        return _oracle(segs)(image, k)

    rows = granularity_image(None, segs, seg)
    assert rows.shape == (3, 5)
    np.testing.assert_array_equal(rows[:, 0], [4, 9, 4])
    np.testing.assert_array_equal(rows[:, 1], rows[:, 0])
    np.testing.assert_array_equal(rows[:2, 2:4], 0.0)            # itself: zero error
    assert rows[2, 2] > 0                                        # shifted person
    assert calls == [4, 9]                                       # once per distinct k
    with pytest.raises(InputError, match="label map"):
        granularity_image(None, segs, lambda im, k: np.zeros((5, 5), int))


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    root = tmp_path_factory.mktemp("synth")
    items = make_synthetic_dataset(3, shape=(48, 64), n_annotators=3, seed=5)
    write_synthetic_dataset(root, items, split="val")
    return root / "groundTruth" / "val", root / "images" / "val"


def test_evaluate_granularity_workers_and_folder_round_trip(synth, tmp_path):
    gt, img = synth
    seg = functools.partial(kmeans_segmenter, step=1)
    a = evaluate_granularity(gt, seg, images=img, save_dir=tmp_path / "s",
                             progress=False)
    b = evaluate_granularity(gt, seg, images=img, workers=2, progress=False)
    assert a.metrics() == b.metrics()
    m = a.metrics()
    assert m["n_images"] == 3 and m["n_pairs"] == 9 and m["n_k_mismatch"] == 0
    assert m["segmenter"] == "kmeans_segmenter"
    per = [r[:, 2].mean() for r in a.rows]
    assert m["GCE"] == pytest.approx(np.mean(per))
    assert 0 < m["LCE"] <= m["GCE"] < 1
    files = sorted(f for f in os.listdir(tmp_path / "s") if f != ".segbench-segmentations")
    assert files and all(f.startswith("synth00") and f.endswith(".png") for f in files)
    c = evaluate_granularity(gt, FolderSegmenter(tmp_path / "s"), progress=False)
    mc = c.metrics()
    assert mc["segmenter"] == "folder"
    assert {k: v for k, v in mc.items() if k != "segmenter"} == \
        {k: v for k, v in m.items() if k != "segmenter"}


def test_ncut_granularity_same_for_any_worker_count(synth):
    gt, img = synth
    from segbench.algorithms.segmenters import ncut_segmenter
    a = evaluate_granularity(gt, ncut_segmenter, images=img, progress=False)
    b = evaluate_granularity(gt, ncut_segmenter, images=img, workers=2, progress=False)
    for ra, rb in zip(a.rows, b.rows):
        np.testing.assert_array_equal(ra, rb)
    assert a.metrics()["n_k_mismatch"] == 0


def test_evaluate_granularity_subsets_and_errors(synth, tmp_path):
    gt, img = synth
    r = evaluate_granularity(gt, kmeans_segmenter, images=img, max_images=2,
                             progress=False)
    assert r.ids == ["synth000", "synth001"]
    r = evaluate_granularity(gt, kmeans_segmenter, images=img, ids=["synth002"],
                             progress=False)
    assert r.ids == ["synth002"]
    with pytest.raises(InputError, match="needs the photographs"):
        evaluate_granularity(gt, kmeans_segmenter, progress=False)
    with pytest.raises(InputError, match="synth009"):
        evaluate_granularity(gt, kmeans_segmenter, images=img, ids=["synth009"])
    with pytest.raises(InputError, match=r"synth000_\d+"):
        evaluate_granularity(gt, FolderSegmenter(tmp_path), progress=False)
    empty = tmp_path / "img"
    empty.mkdir()
    with pytest.raises(InputError, match="synth000"):
        evaluate_granularity(gt, kmeans_segmenter, images=empty, progress=False)


def test_run_granularity_files(synth, tmp_path):
    gt, img = synth
    res, rep = run_granularity(gt, kmeans_segmenter, tmp_path, images=img,
                               max_images=1, progress=False)
    assert (tmp_path / "result_granularity.json").exists()
    assert (tmp_path / "granularity.png").stat().st_size > 0
    assert res.family == "granularity" and res.per_item[0]["id"] == "synth000"
    assert res.name == "kmeans_segmenter"


def test_a_renamed_run_never_takes_another_segmenters_records(synth, tmp_path):
    """QA (helper-46): granularity's records were keyed by the run's name, so
    ``--segmenter ncut-superpixel --name kmeans_segmenter`` into a k-means run's
    folder reported k-means's numbers under ncut's flag."""
    gt, img = synth
    coarse = functools.partial(kmeans_segmenter, spatial_weight=0.2)
    fine = functools.partial(kmeans_segmenter, spatial_weight=5.0)
    out = tmp_path / "run"
    first, _ = run_granularity(gt, coarse, out, images=img, max_images=2, name="seg",
                               progress=False, plot=False)
    again, _ = run_granularity(gt, fine, out, images=img, max_images=2, name="seg",
                               progress=False, plot=False)
    alone, _ = run_granularity(gt, fine, None, images=img, max_images=2, name="seg",
                               progress=False, plot=False)
    assert again.metrics == alone.metrics
    assert again.metrics != first.metrics


def test_save_segs_never_replaces_a_users_file(synth, tmp_path):
    """--save-segs follows the one folder rule: a folder of the user's files, or an
    input folder, is refused before anything is written (a user's <iid>_<k>.png was
    replaced); a folder it made before is written again."""
    gt, img = synth
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "synth000_3.png").write_text("my own segmentation")
    with pytest.raises(InputError, match="did not make"):
        run_granularity(gt, kmeans_segmenter, None, images=img, max_images=1,
                        save_dir=mine, progress=False)
    assert (mine / "synth000_3.png").read_text() == "my own segmentation"
    with pytest.raises(InputError, match="--save-segs is the --images folder"):
        run_granularity(gt, kmeans_segmenter, None, images=img, max_images=1,
                        save_dir=img, progress=False)
    saved = tmp_path / "saved"
    for _ in range(2):
        run_granularity(gt, kmeans_segmenter, None, images=img, max_images=1,
                        save_dir=saved, progress=False)
    assert sorted(p.suffix for p in saved.iterdir() if not p.name.startswith("."))


# ---------------------------------------------------------------- real data (BSDS500 val)


@pytest.fixture(scope="module")
def bsds_small(tmp_path_factory):
    """Six BSDS500 val ground-truth files (linked, not copied) in a temporary folder."""
    val = require(BSDS / "groundTruth" / "val")
    files = sorted(val.glob("*.mat"))[:6]
    root = tmp_path_factory.mktemp("bsds")
    for f in files:
        (root / f.name).symlink_to(f)
    return root


def test_bsds_val_human_consistency(bsds_small):
    rep = human_consistency(bsds_small, pairs=10 ** 6, seed=0, progress=False)
    m = rep.metrics()
    assert m["n_images"] == 6 and m["n_same_pairs"] >= 6 * 10
    assert m["n_image_pairs"] == m["n_image_pairs_total"] > 0
    assert m["LCE_le_GCE"]
    # humans agree far better on the same image than across images (paper: 0.11 / 0.39)
    assert m["GCE_same"] < 0.2 < m["GCE_different"]
    assert m["LCE_same"] < m["GCE_same"] and m["LCE_different"] < m["GCE_different"]
    assert m["GCE_wrong_side_balanced"] < 0.3


def test_bsds_val_granularity(bsds_small):
    require(BSDS / "images" / "val")
    iid = sorted(p.stem for p in bsds_small.glob("*.mat"))[0]
    rep = evaluate_granularity(bsds_small, kmeans_segmenter,
                               images=BSDS / "images" / "val", ids=[iid],
                               progress=False)
    m = rep.metrics()
    assert m["n_k_mismatch"] == 0
    # a machine is worse than the people, and better than a random segmentation
    assert m["human_GCE_same"] < m["GCE"] < 0.5


# ---------------------------------------------------------------- the 2001 reference scene


def _reference_scene():
    """The rendered scene of ../shared/reference/bsds-2001-paper.md (0-based labels)."""
    H, W = 120, 180
    yy, xx = np.mgrid[:H, :W]

    def scene(shift=0):
        lab = np.where(yy < 70, 0, 1)
        wall = (yy >= 45) & (yy < 90) & (xx >= 30 + shift) & (xx < 90 + shift)
        roof = (yy >= 25) & (yy < 45) & (np.abs(xx - 60 - shift) <= (yy - 25) * 1.5)
        lab[wall], lab[roof] = 2, 3
        lab[(yy >= 65) & (yy < 90) & (xx >= 52 + shift) & (xx < 66 + shift)] = 4
        lab[(yy >= 52) & (yy < 62) & (xx >= 72 + shift) & (xx < 84 + shift)] = 5
        lab[(yy >= 60) & (yy < 95) & (xx >= 128) & (xx < 136)] = 6
        lab[(yy - 45) ** 2 + (xx - 132) ** 2 <= 22 ** 2] = 7
        return lab

    def merge(lab, groups):
        out = lab.copy()
        for g in groups:
            out[np.isin(lab, g)] = g[0]
        return out

    fine = scene()
    house, tree = [2, 3, 4, 5], [6, 7]
    people = {"coarse": merge(fine, [house, tree]), "house parts": merge(fine, [tree]),
              "tree parts": merge(fine, [house]),
              "shifted": merge(scene(shift=3), [house, tree])}
    other = np.where(xx < 90, 0, 1) + 2 * (yy > 60) + 4 * ((xx - 40) ** 2
                                                           + (yy - 90) ** 2 < 400)
    return fine, people, other


def test_reference_scene_with_0_based_labels():
    """The values the reference document prints (3 decimals): label 0 is a region, as
    the 2001 measures have no void label (issue 16, item 1)."""
    fine, people, other = _reference_scene()
    h, w = fine.shape
    cases = [(people["coarse"], people["house parts"], 0.000, 0.000),
             (people["house parts"], people["tree parts"], 0.018, 0.000),
             (people["coarse"], people["shifted"], 0.035, 0.035),
             (people["coarse"], other, 0.401, 0.347),
             (people["coarse"], np.zeros_like(fine), 0.000, 0.000),
             (people["coarse"], np.arange(fine.size).reshape(h, w), 0.000, 0.000)]
    for a, b, g, e in cases:
        assert (round(gce(a, b), 3), round(lce(a, b), 3)) == (g, e)
        assert tuple(round(v, 3) for v in pair_errors(a, b)) == (g, e)
    # an explicit void label is still available, and changes the answer here
    assert round(gce(people["coarse"], other, void=0), 3) != 0.401
    rows = same_image_errors([people["coarse"], other])
    assert tuple(np.round(rows[0, 2:], 3)) == (0.401, 0.347)
