"""Dataset readers: BSDS500, BSDS300, folder pairs and the synthetic dataset.

Real-data tests read ../shared/data and skip without it; the others build tiny layouts.
"""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
from PIL import Image

from segbench.boundary import seg2bdry, thin
from segbench.datasets.bsds import (BSDS300, BSDS500, Annotation, DatasetItem,
                                    FolderPairs, SyntheticDataset, open_dataset)
from segbench.errors import InputError
from segbench.io import SegFile, read_ground_truth, write_seg
from segbench.datasets import write_ground_truth

from conftest import DATA, require

# ---------------------------------------------------------------------------------------
# helpers


def _labels(h, w, k, seed):
    """A label map 0..k-1 of vertical bands with a random cut, for .seg files."""
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.choice(np.arange(1, w), size=k - 1, replace=False))
    return np.searchsorted(cuts, np.arange(w), side="right")[None, :].repeat(h, 0) \
        .astype(np.int32)


def _jpeg(path, h, w, seed=0):
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    Image.fromarray(rng.integers(0, 255, (h, w, 3), dtype=np.uint8)).save(path)


def _bsds300_tree(root, *, with_images=True, id_lists=False):
    """images/{train,test} + human/{color,gray}/<uid>/<iid>.seg with known content."""
    h, w = 12, 16
    layout = {"1001": "train", "2002": "test", "3003": "test"}
    if with_images:
        for iid, split in layout.items():
            _jpeg(root / "images" / split / f"{iid}.jpg", h, w, int(iid))
    segs = {}  # (kind, uid, iid) -> labels
    for kind, uid, iid, k in [("color", 1130, "1001", 3), ("color", 1102, "1001", 2),
                              ("gray", 1102, "1001", 4), ("color", 1130, "2002", 2),
                              ("gray", 1119, "3003", 3)]:
        lab = _labels(h, w, k, (31 * uid + int(iid)) % 1000)  # fixed, unlike hash(str)
        segs[(kind, uid, iid)] = lab
        (root / "human" / kind / str(uid)).mkdir(parents=True, exist_ok=True)
        write_seg(root / "human" / kind / str(uid) / f"{iid}.seg",
                  SegFile(labels=lab, image=int(iid), user=uid, gray=(kind == "gray")))
    if id_lists:
        (root / "iids_train.txt").write_text("1001\n3003\n")
        (root / "iids_test.txt").write_text("2002\n")
    return layout, segs


# ---------------------------------------------------------------------------------------
# real data


def test_bsds500_real():
    root = require(DATA / "bsds500")
    ds = BSDS500(root)
    assert ds.splits == ("train", "val", "test")
    assert [len(ds.ids(s)) for s in ds.splits] == [200, 100, 200]
    assert len(ds) == 500 and "100007" in ds
    item = ds["100007"]
    assert item.split == "test" and item.image_path.suffix == ".jpg"
    assert item.image.shape[2] == 3 and item.image.dtype == np.uint8
    assert item.shape == item.image.shape[:2]
    assert 4 <= item.n_annotations <= 9
    assert all(b.dtype == bool for b in item.boundaries)
    assert all(s.min() >= 1 for s in item.segmentations)
    assert item.users == [None] * item.n_annotations and ds.subjects() == {}
    assert ds.ground_truth_dir("test") == root / "groundTruth" / "test"
    # same annotations as the io reader
    gt = read_ground_truth(item.gt_path)
    assert all(np.array_equal(a.segmentation, g.segmentation)
               and np.array_equal(a.boundaries, g.boundaries)
               for a, g in zip(item.annotations, gt))


def test_bsds300_subset_matches_bsds500():
    subset = require(DATA / "bsds300-seg-subset")
    images = require(DATA / "bsds500" / "images")
    ds = BSDS300(subset, images=images)
    assert len(ds) == 11 and ds.splits == ("val",)  # BSDS300 test = BSDS500 val
    subjects = ds.subjects()
    assert sum(len(v) for v in subjects.values()) == 61
    assert all(e.gray is False and e.path.suffix == ".seg"
               for v in subjects.values() for e in v)
    b500 = BSDS500(DATA / "bsds500")
    for iid in ds.ids()[:2]:
        item, ref = ds[iid], b500[iid]
        assert item.users == sorted(item.users)
        assert item.image.shape == ref.image.shape
        # each .seg equals one BSDS500 annotator, in ascending user-id order
        idx = [next(k for k, r in enumerate(ref.annotations)
                    if np.array_equal(a.segmentation, r.segmentation))
               for a in item.annotations]
        assert idx == sorted(idx)
        for a, k in zip(item.annotations, idx):
            assert np.array_equal(a.boundaries, ref.annotations[k].boundaries)
    # a subject entry points at the annotation it names
    user, entries = next(iter(subjects.items()))
    e = entries[0]
    assert ds[e.iid].annotations[e.index].user == user
    # without photographs the split is unknown and the items have no image
    bare = BSDS300(subset)
    assert bare.splits == ("unknown",) and bare[e.iid].image_path is None
    with pytest.raises(InputError, match="no photograph"):
        bare[e.iid].image


# ---------------------------------------------------------------------------------------
# tiny layouts


def test_bsds500_official_nesting(tmp_path):
    synth = SyntheticDataset(n_images=3, shape=(24, 32), n_annotators=2)
    data = tmp_path / "BSR" / "BSDS500" / "data"
    synth.write(data)
    for start in (tmp_path, tmp_path / "BSR", tmp_path / "BSR" / "BSDS500", data):
        ds = BSDS500(start)
        assert ds.root == data
    assert ds.ids("test") == ["synth000", "synth001", "synth002"]
    item = ds["synth001"]
    ref = synth["synth001"]
    assert np.array_equal(item.image, ref.image)
    for a, b in zip(item.annotations, ref.annotations):
        assert np.array_equal(a.segmentation, b.segmentation)
        assert np.array_equal(a.boundaries, thin(seg2bdry(b.segmentation)))
    assert repr(ds).startswith("<BSDS500 at")


def test_bsds500_wrong_layouts(tmp_path):
    with pytest.raises(InputError, match="not found"):
        BSDS500(tmp_path / "nope")
    (tmp_path / "images").mkdir()
    with pytest.raises(InputError, match="not a BSDS500 layout") as exc:
        BSDS500(tmp_path)
    assert str(tmp_path) in str(exc.value) and "images/" in str(exc.value)
    (tmp_path / "groundTruth").mkdir()
    with pytest.raises(InputError, match="no split folders"):
        BSDS500(tmp_path)
    (tmp_path / "groundTruth" / "test").mkdir()
    with pytest.raises(InputError, match="no ground-truth"):
        BSDS500(tmp_path)
    f = tmp_path / "file.txt"
    f.write_text("x")
    with pytest.raises(InputError, match="is a file"):
        BSDS500(f)


def test_bsds500_duplicate_id_across_splits(tmp_path):
    seg = np.ones((8, 8), np.int32)
    for split in ("train", "test"):
        write_ground_truth(tmp_path / "groundTruth" / split / "42.mat", [seg])
    (tmp_path / "images").mkdir()
    with pytest.raises(InputError, match="two splits"):
        BSDS500(tmp_path)


def test_bsds300_layout(tmp_path):
    layout, segs = _bsds300_tree(tmp_path / "BSDS300")
    ds = BSDS300(tmp_path)  # the folder holding BSDS300/ works too
    assert ds.root == tmp_path / "BSDS300"
    assert ds.splits == ("train", "test") and ds.ids("test") == ["2002", "3003"]
    item = ds["1001"]
    assert item.split == "train" and item.image.shape == (12, 16, 3)
    assert item.users == [1102, 1130] and item.gray == [False, False]
    assert np.array_equal(item.segmentations[0], segs[("color", 1102, "1001")] + 1)
    assert np.array_equal(item.boundaries[0],
                          thin(seg2bdry(segs[("color", 1102, "1001")])))
    assert ds["3003"].annotations == ()  # only a gray segmentation of it
    gray = BSDS300(tmp_path, presentation="gray")
    assert gray["1001"].users == [1102] and gray["1001"].gray == [True]
    both = BSDS300(tmp_path, presentation="all")
    assert both["1001"].users == [1102, 1130, 1102]  # colour first, then gray
    assert both["1001"].gray == [False, False, True]
    subj = both.subjects()
    assert sorted(subj) == [1102, 1119, 1130]
    assert [(e.iid, e.gray) for e in subj[1102]] == [("1001", False), ("1001", True)]
    for user, entries in subj.items():
        for e in entries:
            ann = both[e.iid].annotations[e.index]
            assert ann.user == user and ann.gray == e.gray
    with pytest.raises(InputError, match="presentation"):
        BSDS300(tmp_path, presentation="sepia")
    with pytest.raises(InputError, match="no split 'val'"):
        ds.ids("val")


def test_bsds300_id_lists_and_images_only(tmp_path):
    _bsds300_tree(tmp_path, id_lists=True)
    ds = BSDS300(tmp_path)
    assert ds.split_of("3003") == "train"  # the id list wins over the folder
    # images only (BSDS300-images.tgz alone): items are the photographs
    only = tmp_path / "only"
    _jpeg(only / "images" / "test" / "77.jpg", 8, 8)
    ds = BSDS300(only)
    assert ds.ids() == ["77"] and ds["77"].annotations == ()


def test_bsds300_wrong_layouts(tmp_path):
    with pytest.raises(InputError, match="not a BSDS300 layout"):
        BSDS300(tmp_path)
    (tmp_path / "human").mkdir()
    with pytest.raises(InputError, match="no color/ or gray/"):
        BSDS300(tmp_path)
    (tmp_path / "human" / "color" / "alice").mkdir(parents=True)
    with pytest.raises(InputError, match="numeric user-id") as exc:
        BSDS300(tmp_path)
    assert "alice" in str(exc.value)


def test_bsds300_ground_truth_cache(tmp_path):
    _bsds300_tree(tmp_path / "d")
    ds = BSDS300(tmp_path / "d")
    with pytest.raises(InputError, match="cache_dir"):
        ds.ground_truth_dir("test")
    with pytest.raises(InputError, match="no human segmentation"):
        ds.ground_truth_dir("test", cache_dir=tmp_path / "gt")  # 3003 has none in colour
    ds = BSDS300(tmp_path / "d", presentation="all")
    out = ds.ground_truth_dir("test", cache_dir=tmp_path / "gt")
    assert sorted(p.name for p in out.iterdir()) == ["2002.mat", "3003.mat"]
    gt = read_ground_truth(out / "2002.mat")
    assert np.array_equal(gt[0].segmentation, ds["2002"].segmentations[0])
    stamp = os.stat(out / "2002.mat").st_mtime_ns
    assert ds.ground_truth_dir("test", cache_dir=out) == out
    assert os.stat(out / "2002.mat").st_mtime_ns == stamp  # kept, not rewritten


def test_folder_pairs(tmp_path):
    img, gt = tmp_path / "img", tmp_path / "gt"
    a = np.array([[1, 1, 2, 2]] * 4)
    write_ground_truth(gt / "a.mat", [a, a])
    Image.fromarray(np.array([[0, 0, 5, 5]] * 4, np.uint8)).save(gt / "b.png")
    (gt / "c").mkdir(parents=True)
    write_seg(gt / "c" / "u1.seg", SegFile(labels=np.zeros((4, 4), np.int32), user=9))
    np.save(gt / "c" / "u2.npy", np.array([[3, 3, 3, 4]] * 4))
    (gt / "notes.txt").write_text("ignored")
    for iid in "abc":
        _jpeg(img / f"{iid}.png", 4, 4)
    ds = FolderPairs(img, gt, split="val")
    assert ds.ids("val") == ["a", "b", "c"] and ds.splits == ("val",)
    assert ds["a"].n_annotations == 2 and ds["a"].gt_path == gt / "a.mat"
    assert np.array_equal(ds["b"].segmentations[0], np.array([[1, 1, 2, 2]] * 4))
    c = ds["c"]
    assert c.n_annotations == 2 and c.users == [9, None]
    assert np.array_equal(c.segmentations[1], np.array([[1, 1, 1, 2]] * 4))
    assert ds["c"].image.shape == (4, 4, 3)
    out = ds.ground_truth_dir("val", cache_dir=tmp_path / "cache")
    assert len(list(out.glob("*.mat"))) == 3
    # ground truth alone
    assert FolderPairs(None, gt)["a"].image_path is None
    (img / "c.png").unlink()
    with pytest.raises(InputError, match="1 of 3 ground-truth images have no photograph"):
        FolderPairs(img, gt)
    write_ground_truth(gt / "c.mat", [a])
    with pytest.raises(InputError, match="both a ground-truth file and"):
        FolderPairs(None, gt)
    with pytest.raises(InputError, match="not found"):
        FolderPairs(None, tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no ground truth found"):
        FolderPairs(None, tmp_path / "empty")


def test_folder_pairs_all_mat_uses_folder(tmp_path):
    seg = np.ones((6, 6), np.int32)
    for iid in ("x", "y"):
        write_ground_truth(tmp_path / f"{iid}.mat", [seg])
    ds = FolderPairs(None, tmp_path)
    assert ds.ground_truth_dir("test") == tmp_path


def test_synthetic_dataset(tmp_path):
    ds = SyntheticDataset(n_images=2, shape=(20, 30), n_annotators=3, split="val")
    assert ds.splits == ("val",) and ds.ids() == ["synth000", "synth001"]
    item = ds["synth000"]
    assert isinstance(item, DatasetItem) and item.image.shape == (20, 30, 3)
    assert item.users == [1, 2, 3] and item.gray == [False] * 3
    assert all(isinstance(a, Annotation) for a in item.annotations)
    subj = ds.subjects()
    assert sorted(subj) == [1, 2, 3] and len(subj[2]) == 2
    root = ds.write(tmp_path / "w")
    back = BSDS500(root)
    assert back.ids("val") == ds.ids()
    assert np.array_equal(back["synth001"].image, ds["synth001"].image)
    assert isinstance(open_dataset(root), BSDS500)
    assert open_dataset(ds) is ds


def test_items_are_fresh_lazy_and_picklable(tmp_path):
    ds = SyntheticDataset(n_images=1, shape=(20, 30), n_annotators=2)
    a, b = ds["synth000"], ds["synth000"]
    assert a is not b
    assert "image" not in a.__dict__  # not loaded yet
    a.image
    assert "image" in a.__dict__ and "image" not in b.__dict__
    again = pickle.loads(pickle.dumps(b))
    assert np.array_equal(again.image, a.image)
    with pytest.raises(KeyError):
        ds["nope"]
    # a BSDS500 item pickles with its file loaders
    ds.write(tmp_path)
    item = pickle.loads(pickle.dumps(BSDS500(tmp_path)["synth000"]))
    assert item.n_annotations == 2


def test_open_dataset(tmp_path):
    _bsds300_tree(tmp_path / "b300")
    assert isinstance(open_dataset(tmp_path / "b300"), BSDS300)
    assert open_dataset(tmp_path / "b300", presentation="all")["1001"].n_annotations == 3
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="neither a BSDS500 layout"):
        open_dataset(tmp_path / "empty")
    with pytest.raises(InputError, match="not found"):
        open_dataset(tmp_path / "missing")


def test_annotation_size_mismatch_is_reported(tmp_path):
    (tmp_path / "x").mkdir()
    np.save(tmp_path / "x" / "a.npy", np.zeros((4, 4), np.int64))
    np.save(tmp_path / "x" / "b.npy", np.zeros((4, 5), np.int64))
    with pytest.raises(InputError, match="disagree on the image size"):
        FolderPairs(None, tmp_path)["x"].annotations


def test_annotation_boundaries_are_lazy_and_pickle():
    seg = np.ones((10, 12), np.int32)
    seg[:, 6:] = 2
    a = Annotation(seg, user=7)
    assert a._boundaries is None                       # nothing computed yet
    assert pickle.loads(pickle.dumps(a)).boundaries.tolist() == \
        np.asarray(thin(seg2bdry(seg)), bool).tolist()
    assert np.array_equal(a.boundaries, thin(seg2bdry(seg))) and a._boundaries is not None
    b = pickle.loads(pickle.dumps(a))
    assert b.user == 7 and np.array_equal(b.boundaries, a.boundaries)
    given = np.zeros((10, 12), bool)
    assert Annotation(seg, given).boundaries is given  # as stored (a .mat) wins
    with pytest.raises(AttributeError):
        a.user = 3                                     # still frozen
