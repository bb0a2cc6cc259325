"""Structured edge forests (``edgesTrain.m`` / ``edgesDetect.m``, Dollár and Zitnick):
training, detection and the model file.

Expected values, each saying how it was produced:

- **Direct computations**: the structured-label discretisation (binary pair codes,
  centring, PCA by ``numpy.linalg.eigh`` of the covariance, sign of the scores) and the
  Gini split search (every feature, every cut, by brute force) written out here in plain
  numpy from the toolbox's formulas (``edgesTrain.m`` ``discretize``, ``pca.m``,
  ``forestFindThr.cpp``), compared with the compiled ones on small cases.
- **The toolbox's feature layout**: feature ``z*256 + c*16 + r`` is channel z at patch
  row r, column c; self-similarity features difference the cells at rows/columns
  [1, 4, 8, 11, 14] of the 16-pixel patch (values of ``edgesDetectMex.cpp``'s ``locs``
  worked out by hand), per channel, pairs i < j of the column-major 5 x 5 grid.
- **A golden file digest** (``TINY_GOLDEN``): the saved tiny forest's arrays as the
  code before training computed features on the fly wrote them (commit 0bf06d5, which
  stored a features x patches matrix); recomputing features per node must not change a
  single byte. Skipped if numpy's random stream differs from the one the digest was made
  with.
- **OpenCV's model format** (opencv_contrib ``structured_edge_detection.cpp``, the model
  reader): option names, arrays and their layout, parsed back by a small reader here;
  with OpenCV installed (an optional extra), OpenCV's own detector on the exported model.
- **Synthetic images with known boundaries** (rectangles and discs of random colours
  plus noise): a tiny forest trained on 8 of them finds the edges of 4 others. The
  boundary benchmark's ODS F (segbench.BoundaryEval) of its soft map was measured at
  0.75 (sharpen 0), 0.85 (sharpen 2), 0.77 (multiscale), against 0.16 for a uniform
  random map of the same images (the chance baseline); the tests assert >= 0.6 and
  >= 0.35 above chance.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import math
import zipfile

import numpy as np
import pytest

import segbench
from segbench.algorithms import _se_forest_kernels as fk
from segbench.algorithms._se_detect import se, se_orientation
from segbench.algorithms._se_export import OPENCV_OPTION_NAMES, export_opencv
from segbench.algorithms._se_forest import (
    FOREST_FORMAT_VERSION,
    SEForest,
    _collect,
    _image_planes,
    _pad_to_multiple,
    best_gini_split,
    channel_planes,
    discretize_patches,
    feature_offsets,
    forest_options,
    load_forest,
    train_forest,
    train_tree,
)
from segbench.errors import InputError

F32 = np.float32


# ---------------------------------------------------------------------------------------
# synthetic training data: regions with known boundaries


def _synthetic(seed, h=96, w=128):
    """(image uint8 (h, w, 3), [(labels, boundaries)]): up to 5 rectangles / discs of
    random colours on a background, Gaussian noise sigma 12; boundaries are the pixels
    whose right or lower neighbour has another label."""
    rng = np.random.default_rng(seed)
    seg = np.zeros((h, w), np.int64)
    yy, xx = np.mgrid[0:h, 0:w]
    for k in range(1, 6):
        if rng.random() < 0.5:
            y0, x0 = rng.integers(0, h - 20), rng.integers(0, w - 20)
            seg[y0 : y0 + rng.integers(15, 50), x0 : x0 + rng.integers(15, 60)] = k
        else:
            cy, cx = rng.integers(10, h - 10), rng.integers(10, w - 10)
            r = rng.integers(8, 25)
            seg[(yy - cy) ** 2 + (xx - cx) ** 2 < r * r] = k
    colors = rng.integers(30, 225, (6, 3))
    img = colors[seg].astype(float) + rng.normal(0, 12, (h, w, 3))
    img = np.clip(img, 0, 255).astype(np.uint8)
    bd = np.zeros((h, w), bool)
    bd[:, :-1] |= seg[:, :-1] != seg[:, 1:]
    bd[:-1, :] |= seg[:-1, :] != seg[1:, :]
    return img, [(seg + 1, bd)]


TINY = dict(n_pos=2000, n_neg=2000, n_trees=2, max_depth=8, n_trees_eval=2)


@pytest.fixture(scope="module")
def items():
    return [_synthetic(i) for i in range(8)]


@pytest.fixture(scope="module")
def forest(items):
    return train_forest(items, TINY)


# ---------------------------------------------------------------------------------------
# structured labels -> classes (edgesTrain.m discretize, pca.m), directly in numpy


def _direct_discretize(patches, pairs, n_classes):
    n = len(patches)
    flat = patches.reshape(n, -1)
    z = (flat[:, pairs[:, 0]] == flat[:, pairs[:, 1]]).astype(float)
    zs = z - z.mean(axis=0)
    zs = zs[:, np.any(zs != 0, axis=0)]
    if zs.shape[1] == 0:
        return np.zeros(n, int), 0
    rep = int(np.argmin((zs * zs).sum(axis=1)))
    x = zs.T / np.sqrt(n - 1)
    vals, u = np.linalg.eigh(x @ x.T)
    u = u[:, ::-1][:, vals[::-1] > 1e-30]
    d = min(5, u.shape[1], int(np.floor(np.log2(n_classes))))
    scores = zs @ u[:, :d]
    code = sum((scores[:, i] < 0).astype(int) << i for i in range(d))
    return np.unique(code, return_inverse=True)[1], rep


def _edge_patches(rng, n, g=16):
    """Straight two-region edges at random angles and offsets; a third region in a
    random corner of some."""
    yy, xx = np.mgrid[0:g, 0:g]
    out = np.zeros((n, g, g), np.uint8)
    for i in range(n):
        a, o = rng.uniform(0, np.pi), rng.uniform(-6, 6)
        out[i] = np.cos(a) * (xx - 7.5) + np.sin(a) * (yy - 7.5) > o
        if rng.random() < 0.3:
            out[i][rng.integers(0, g) :, : rng.integers(0, g)] = 2
    return out


@pytest.mark.parametrize(
    "n, n_classes",
    [
        (40, 2),  # fewer samples than code bits: pca.m's Gram-matrix branch
        (200, 2),  # covariance branch, dense codes
        (700, 2),  # covariance from bit-packed co-occurrence counts
        (700, 4),  # two principal components
        (150, 8),  # three
    ],
)
def test_discretisation_matches_the_direct_pca(n, n_classes):
    rng = np.random.default_rng(n + n_classes)
    patches = _edge_patches(rng, n)
    i, j = np.triu_indices(256, 1)
    pick = rng.choice(len(i), 256, replace=False)
    pairs = np.stack([i[pick], j[pick]], axis=1)
    got, rep = discretize_patches(patches, n_classes=n_classes, pairs=pairs)
    want, rep_want = _direct_discretize(patches, pairs, n_classes)
    # the same partition (a principal axis' sign is arbitrary: class numbers may swap)
    table = np.zeros((got.max() + 1, want.max() + 1), int)
    np.add.at(table, (got, want), 1)
    assert ((table > 0).sum(axis=1) == 1).all() and ((table > 0).sum(axis=0) == 1).all()
    assert got.max() + 1 <= n_classes
    assert np.array_equal(patches[rep], patches[rep_want])


def test_discretisation_of_a_pure_node():
    patches = np.ones((10, 16, 16), np.uint8)
    patches[3:] = 2  # relabelled uniform patches all code "same segment" everywhere
    classes, rep = discretize_patches(patches)
    assert (classes == 0).all() and rep == 0


# ---------------------------------------------------------------------------------------
# Gini split (forestFindThr.cpp), by brute force


def _direct_gini(features, classes, n_classes):
    n = len(classes)

    def impurity(c):
        if len(c) == 0:
            return 0.0
        p = np.bincount(c, minlength=n_classes) / len(c)
        return 1 - (p * p).sum()

    v_init = impurity(classes)
    best = (0, 0.0, v_init)
    for f, row in enumerate(features):
        vals = np.unique(row)
        for a, b in zip(vals[:-1], vals[1:]):
            if F32(b) - F32(a) < F32(1e-6):
                continue
            thr = F32(0.5) * (F32(a) + F32(b))
            left = row < thr
            v = (
                left.sum() * impurity(classes[left])
                + (~left).sum() * impurity(classes[~left])
            ) / n
            if v < best[2] - 1e-12:
                best = (f, float(thr), v)
    return best[0], best[1], v_init - best[2]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gini_split_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, n_classes = 80, 3
    classes = rng.integers(0, n_classes, n)
    # quantised values (ties), one feature informative, one constant
    feats = np.round(rng.normal(size=(6, n)) * 4) / 4
    feats[2] = np.where(classes == 1, 1.0, 0.0) + rng.normal(0, 0.3, n)
    feats[4] = 0.5
    feats = feats.astype(F32)
    got = best_gini_split(feats, classes, n_classes)
    want = _direct_gini(feats, classes, n_classes)
    assert got[0] == want[0]
    assert got[1] == pytest.approx(want[1], abs=0)
    assert got[2] == pytest.approx(want[2], abs=1e-12)
    assert got[2] > 0


def test_gini_split_without_gain_and_close_values():
    classes = np.array([0, 1, 0, 1])
    assert best_gini_split(np.full((2, 4), 0.3, F32), classes) == (0, 0.0, 0.0)
    # values closer than 1e-6 cannot be separated, however useful
    near = np.array([[0.5, 0.5 + 5e-7, 0.5, 0.5 + 5e-7]], F32)
    assert best_gini_split(near, classes)[2] == 0.0


# ---------------------------------------------------------------------------------------
# feature layout, shared by training and detection


def test_features_follow_the_toolbox_layout():
    opts = forest_options()
    rng = np.random.default_rng(3)
    img = (rng.random((40, 48, 3)) * 255).astype(np.uint8)
    planes = np.ascontiguousarray(np.moveaxis(img, 2, 0), F32)
    reg, sim = channel_planes(planes, 1 / 255, opts)
    cids, c1, c2 = feature_offsets(opts, reg.shape[1], reg.shape[2])
    rows, cols = np.array([0, 3, 4]), np.array([0, 5, 8])
    fids = np.array([0, 17, 3327, 3328, 3328 + 299, 3328 + 300, 7227])
    out = np.zeros((len(fids), 3), F32)
    fk.patch_features(reg, sim, rows, cols, fids, opts.n_chn_ftrs, cids, c1, c2, out, 0)
    locs = [1, 4, 8, 11, 14]
    pairs = [(i, j) for i in range(25) for j in range(i + 1, 25)]

    def direct(f, r0, c0):
        if f < 3328:
            z, rem = divmod(f, 256)
            c, r = divmod(rem, 16)
            return reg[z, r0 + r, c0 + c]
        z, k = divmod(f - 3328, 300)
        i, j = pairs[k]
        ri, ci, rj, cj = locs[i % 5], locs[i // 5], locs[j % 5], locs[j // 5]
        return sim[z, r0 + ri, c0 + ci] - sim[z, r0 + rj, c0 + cj]

    for a, f in enumerate(fids):
        for b in range(3):
            assert out[a, b] == direct(int(f), rows[b], cols[b])


def test_detection_reads_the_features_training_reads():
    """A forest of stumps on known features: the leaf each location reaches is the one
    its feature (read as in training) selects, with the toolbox's tree checkerboard."""
    opts = forest_options(dict(n_trees=2, n_trees_eval=1))
    rng = np.random.default_rng(4)
    img = (rng.random((36, 44, 3)) * 255).astype(np.uint8)
    planes = np.ascontiguousarray(np.moveaxis(img, 2, 0), F32)
    reg, sim = channel_planes(planes, 1 / 255, opts)
    cids, c1, c2 = feature_offsets(opts, reg.shape[1], reg.shape[2])
    fid = np.array([[1000], [5000]])  # tree 0: regular, tree 1: self-similarity
    thr = np.array([[0.2], [0.0]], F32)
    nodes = np.zeros((2, 3, 3), np.int32)  # (left child, feature | leaf id, thr)
    nodes[:, 0, 0] = 1
    nodes[:, 0, 1] = fid[:, 0]
    nodes[:, 0, 2] = thr[:, 0].view(np.int32)
    nodes[:, 1:, 1] = [[0, 1], [2, 3]]
    h1 = (reg.shape[1] - 16) + 1
    w1 = (reg.shape[2] - 16) + 1
    ind = fk.apply_forest(reg, sim, h1, w1, 1, nodes, 1, opts.n_chn_ftrs, cids, c1, c2)
    for r in range(h1):
        for c in range(w1):
            t = (r + c) % 2  # ((r + c) % 2 * n_eval + 0) % n_trees
            v = np.zeros((1, 1), F32)
            fk.patch_features(
                reg, sim, np.array([r]), np.array([c]), fid[t], 3328, cids, c1, c2, v, 0
            )
            assert ind[r, c, 0] == 2 * t + (0 if v[0, 0] < thr[t, 0] else 1)


def test_training_features_from_stored_channels_equal_the_feature_matrix():
    """Training computes each node's features from the images' stored channels instead
    of storing a features x patches matrix: bit-identical to patch_features (the layout
    detection shares) on images of two plane sizes, and the same split found."""
    opts = forest_options(dict(n_pos=150, n_neg=150))
    items = [_synthetic(i) for i in range(2)] + [
        _synthetic(9 + i, 128, 96) for i in range(2)
    ]
    fids = np.sort(np.random.default_rng(0).choice(opts.n_tot_ftrs, 300, replace=False))
    patches = _collect(items, opts, fids, np.random.default_rng(5))
    chn, base, tab, offa, offb = patches.src
    assert offa.shape == offb.shape == (2, 300) and patches.n == 300
    m = patches.matrix()
    start = 0
    for i, (img, _) in enumerate(items):
        planes, nrm = _image_planes(img)
        reg, sim = channel_planes(_pad_to_multiple(planes), nrm, opts)
        size = reg.size + sim.size
        assert np.array_equal(chn[start : start + reg.size], reg.ravel())
        mine = np.nonzero((base >= start) & (base < start + size))[0]
        assert mine.size and (tab[mine] == (0 if i < 2 else 1)).all()
        rows, cols = np.divmod(base[mine] - start, reg.shape[2])
        want = np.zeros((len(fids), mine.size), F32)
        cids, c1, c2 = feature_offsets(opts, reg.shape[1], reg.shape[2])
        fk.patch_features(
            reg, sim, rows, cols, fids, opts.n_chn_ftrs, cids, c1, c2, want, 0
        )
        assert np.array_equal(m[:, mine].view(np.uint32), want.view(np.uint32))
        start += size
    assert start == chn.size
    rng = np.random.default_rng(6)
    for _ in range(5):
        idx = np.sort(rng.choice(patches.n, 120, replace=False)).astype(np.int64)
        feats = rng.choice(len(fids), 43, replace=False).astype(np.int64)
        hs = rng.integers(0, 2, idx.size).astype(np.int32)
        hs[(m[feats[7], idx] > np.median(m[feats[7], idx]))] = 1  # one useful feature
        want = fk.best_split(m, idx, feats, hs, 2)
        assert fk.best_split_stored(patches.src, idx, feats, hs, 2) == want
        np.testing.assert_array_equal(patches.feature(int(feats[0]), idx), m[feats[0], idx])


# ---------------------------------------------------------------------------------------
# leaves (mergeTrees): small segments, edge bands


def test_small_segments_merge_and_edge_bands():
    seg = np.zeros((1, 16, 16), np.uint8)
    seg[0, :, 8:] = 1
    seg[0, 2:4, 2:4] = 2  # 4 px: merged into its surroundings (label 0)
    segs = seg.copy()
    nsegs = fk.clean_segments(segs, 5)
    assert nsegs[0] == 2 and (segs[0, 2:4, 2:4] == 0).all()
    bins, bnds = fk.edge_bands(segs, nsegs, 3)
    band = [np.asarray(bins[bnds[b] : bnds[b + 1]], int) for b in range(3)]
    # band 0: columns 7 and 8 (central differences differ there); bands 1, 2: the
    # next columns out; indices column-major c*16 + r, increasing
    for b, cols in enumerate([(7, 8), (6, 9), (5, 10)]):
        want = sorted(c * 16 + r for c in cols for r in range(16))
        assert band[b].tolist() == want
    one = np.zeros((1, 16, 16), np.uint8)
    assert fk.clean_segments(one, 5)[0] == 1
    assert fk.edge_bands(one, np.array([1], np.int32), 3)[0].size == 0


# ---------------------------------------------------------------------------------------
# training and detection end to end


def test_training_is_deterministic_for_a_seed(items, forest):
    again = train_tree(items, TINY, tree_index=1)
    t = forest.trees[1]
    for name in ("fids", "thrs", "child", "count", "depth", "segs"):
        np.testing.assert_array_equal(getattr(again, name), getattr(t, name))
    other = train_tree(items, {**TINY, "seed": 2}, tree_index=1)
    assert other.n_nodes != t.n_nodes or not np.array_equal(other.fids, t.fids)
    assert not np.array_equal(forest.trees[0].fids, t.fids)  # trees differ
    assert t.count[0] == t.n_samples == 4000
    assert t.depth.max() <= TINY["max_depth"] + 1
    internal = t.child > 0
    assert (t.count[t.child[internal]] >= 8).all()  # min_child


#: SHA-256 over the saved TINY forest's zip entries (name, then the .npy bytes; entries
#: by name), as commit 0bf06d5 wrote it (training from a features x patches matrix).
TINY_GOLDEN = "ee22630d01129d4cadce712491aac518bd3a965c9834850d2434e2cead617302"
#: The first draws of numpy's Generator for tree 0 when the digest was made
#: (``default_rng([1, 0]).choice(7228, 6, replace=False)``, numpy 2.4).
TINY_GOLDEN_STREAM = [5456, 3697, 6868, 3417, 1041, 251]


def test_saved_forest_bytes_are_those_of_the_golden(forest, tmp_path):
    a = forest.save(tmp_path / "a.npz")
    b = forest.save(tmp_path / "b.npz")
    assert a.read_bytes() == b.read_bytes()  # no time stamp in the file
    digest = hashlib.sha256()
    with zipfile.ZipFile(a) as z:
        assert {i.date_time for i in z.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        for name in sorted(z.namelist()):
            digest.update(name.encode())
            digest.update(z.read(name))
    stream = np.random.default_rng([1, 0]).choice(7228, 6, replace=False).tolist()
    if stream != TINY_GOLDEN_STREAM:
        pytest.skip("numpy's random stream is not the one the golden digest was made with")
    assert digest.hexdigest() == TINY_GOLDEN


def _ods(maps, truths):
    ev = segbench.BoundaryEval()
    for e, bd in zip(maps, truths):
        ev.update(e, [bd])
    return ev.compute().metrics["ODS"]


@pytest.mark.parametrize(
    "kw",
    [dict(sharpen=0), dict(sharpen=2), dict(multiscale=True, sharpen=0)],
    ids=["plain", "sharpen2", "multiscale"],
)
def test_trained_forest_finds_the_edges(forest, kw):
    tests = [_synthetic(k) for k in range(100, 104)]
    maps, truths = [], []
    for img, gts in tests:
        e, o = se(img, forest, **kw)
        assert e.shape == o.shape == img.shape[:2]
        assert e.dtype == o.dtype == F32
        assert e.min() >= 0 and e.max() <= 1 and o.min() >= 0 and o.max() < np.pi
        maps.append(e)
        truths.append(gts[0][1])
    rng = np.random.default_rng(1)
    chance = _ods([rng.random(m.shape) for m in maps], truths)
    got = _ods(maps, truths)
    assert got >= 0.6 and got >= chance + 0.35, (got, chance)


def test_detection_takes_grey_float_and_paths(forest, tmp_path):
    img, _ = _synthetic(200)
    e, _ = se(img, forest, sharpen=0)
    e2, _ = se(img.astype(F32) / F32(255), forest, sharpen=0)
    assert np.abs(e - e2).max() < 0.05  # uint8 folds 1/255 into the colour matrix
    grey = img[..., 1]
    eg, _ = se(grey, forest, sharpen=0)
    np.testing.assert_array_equal(
        eg, se(np.repeat(grey[..., None], 3, 2), forest, sharpen=0)[0]
    )
    path = forest.save(tmp_path / "m.npz")
    np.testing.assert_array_equal(se(img, path, sharpen=0)[0], e)


def test_orientation_follows_the_toolbox_formula():
    """edgesDetect.m's O = mod(atan(Oyy sign(-Oxy) / (Oxx + 1e-5)), pi): for a ridge
    with normal angle phi, atan(tan^2 phi) in phi's quadrant - exact at multiples of 45
    degrees; an exactly horizontal edge gets 0 (sign(0) = 0), as in the toolbox."""
    e = np.zeros((40, 40), F32)
    e[:, 20] = 1
    assert se_orientation(e)[20, 20] == pytest.approx(0, abs=1e-6)
    assert se_orientation(e.T)[20, 20] == 0
    d = np.zeros((40, 40), F32)
    np.fill_diagonal(d, 1)  # y = x (rows down): normal at 135 degrees
    assert se_orientation(d)[20, 20] == pytest.approx(3 * np.pi / 4, abs=2e-3)
    assert se_orientation(d[::-1])[20, 20] == pytest.approx(np.pi / 4, abs=2e-3)
    y, x = np.mgrid[0:40, 0:40]
    ridge = np.exp(-((y - 20 - 0.5 * (x - 20)) ** 2) / 2).astype(F32)  # normal tan -2
    assert se_orientation(ridge)[20, 20] == pytest.approx(np.pi - np.arctan(4), abs=0.03)


def test_incomplete_forest_is_refused(forest):
    part = SEForest(forest.options, {0: forest.trees[0]})
    assert part.missing == [1]
    with pytest.raises(InputError, match=r"1 of 2 trees"):
        se(np.zeros((20, 20, 3), np.uint8), part)


def test_training_resumes_from_the_saved_file(items, forest, tmp_path):
    path = tmp_path / "forest.npz"
    SEForest(forest.options, {1: forest.trees[1]}).save(path)
    done = train_forest(items, TINY, path=path)
    for i in (0, 1):
        np.testing.assert_array_equal(done.trees[i].thrs, forest.trees[i].thrs)
    with pytest.raises(InputError, match="other options .*max_depth"):
        train_forest(items, {**TINY, "max_depth": 6}, path=path)


# ---------------------------------------------------------------------------------------
# the model file


def test_save_load_round_trip(forest, tmp_path):
    path = forest.save(tmp_path / "model.npz")
    back = load_forest(path)
    assert back.options == forest.options and sorted(back.trees) == [0, 1]
    for i, t in forest.trees.items():
        for name in ("fids", "thrs", "child", "count", "depth", "segs"):
            a, b = getattr(t, name), getattr(back.trees[i], name)
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)
        assert back.trees[i].n_samples == t.n_samples
    img, _ = _synthetic(300)
    np.testing.assert_array_equal(se(img, back)[0], se(img, forest)[0])


def _arrays(path):
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def _write(path, arrays):
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    path.write_bytes(buf.getvalue())
    return path


def _one_line_naming(exc, path):
    text = str(exc.value)
    assert str(path) in text and "\n" not in text
    return text


def test_damaged_or_foreign_model_files_are_refused(forest, tmp_path):
    good = forest.save(tmp_path / "good.npz")
    data = good.read_bytes()
    cut = tmp_path / "cut.npz"
    cut.write_bytes(data[: len(data) // 2])
    flipped = tmp_path / "flipped.npz"
    b = bytearray(data)
    for k in range(200, len(b) - 400, 997):
        b[k] ^= 0x55
    flipped.write_bytes(bytes(b))
    text = tmp_path / "text.npz"
    text.write_text("not a model\n")
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    arrays = _arrays(good)
    newer = _write(
        tmp_path / "newer.npz", {**arrays, "version": np.array(FOREST_FORMAT_VERSION + 1)}
    )
    foreign = _write(tmp_path / "foreign.npz", {"a": np.zeros(3)})
    child = arrays["child"].copy()
    child[0] = 0 if child[0] else 1
    broken = _write(tmp_path / "broken.npz", {**arrays, "child": child})
    cases = [
        (cut, "damaged"),
        (flipped, "damaged"),
        (text, "not an .npz archive"),
        (empty, "an empty file"),
        (newer, f"version {FOREST_FORMAT_VERSION + 1}"),
        (foreign, "not a segbench structured edge forest"),
        (broken, "damaged model"),
        (tmp_path / "absent.npz", "no such"),
    ]
    for path, words in cases:
        with pytest.raises(InputError) as exc:
            load_forest(path)
        assert words in _one_line_naming(exc, path), path


# ---------------------------------------------------------------------------------------
# export to OpenCV's model format


def _read_opencv_yaml(path):
    """A small reader of the YAML subset OpenCV's FileStorage reads and export_opencv
    writes: ``%YAML:1.0``, a map ``options`` of integers, then top-level keys each
    holding a sequence of flow sequences ``- [a,b,...]``."""
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    lines = raw.decode("ascii").splitlines()
    assert lines[0] == "%YAML:1.0"
    out, key = {}, None
    for line in lines[1:]:
        if line in ("---", ""):
            continue
        if not line.startswith(" "):
            key, colon, rest = line.partition(":")
            assert colon and not rest.strip(), line
            out[key] = {} if key == "options" else []
        elif key == "options":
            name, _, value = line.strip().partition(": ")
            out[key][name] = int(value)
        else:
            item = line.strip()
            assert item.startswith("- [") and item.endswith("]"), item[:40]
            body = item[3:-1]
            conv = float if key == "thresholds" else int
            out[key].append([conv(v) for v in body.split(",")] if body else [])
    return out


def test_opencv_export_writes_what_opencvs_reader_reads(forest, tmp_path):
    path = export_opencv(forest, tmp_path / "tiny.yml.gz")
    m = _read_opencv_yaml(path)
    assert list(m) == [
        "options",
        "childs",
        "featureIds",
        "thresholds",
        "edgeBoundaries",
        "edgeBins",
    ]
    assert m["options"] == {
        "numberOfTrees": 2,
        "numberOfTreesToEvaluate": 2,
        "selfsimilarityGridSize": 5,
        "stride": 2,
        "shrinkNumber": 2,
        "patchSize": 32,
        "patchInnerSize": 16,
        "numberOfGradientOrientations": 4,
        "gradientSmoothingRadius": 0,
        "regFeatureSmoothingRadius": 2,
        "ssFeatureSmoothingRadius": 8,
        "gradientNormalizationRadius": 4,
    }
    assert list(m["options"]) == list(OPENCV_OPTION_NAMES)
    trees = [forest.trees[0], forest.trees[1]]
    n = max(t.n_nodes for t in trees)
    # one row per tree, padded to one length (OpenCV divides the total by the trees)
    for key in ("childs", "featureIds", "thresholds"):
        assert [len(r) for r in m[key]] == [n, n]
    n_bands = forest.options.sharpen + 1
    bnds = np.concatenate([np.array(r, np.int64) for r in m["edgeBoundaries"]])
    bins = np.concatenate([np.array(r, np.int64) for r in m["edgeBins"]])
    assert bnds.shape == (2 * n * n_bands + 1,) and bnds[0] == 0 and bnds[-1] == bins.size
    assert np.all(np.diff(bnds) >= 0) and bins.max() < 16 * 16
    tabs = forest.detection_tables(n_bands)
    leaf = 0
    for t, tree in enumerate(trees):
        k = tree.n_nodes
        inner = tree.child > 0
        childs = np.array(m["childs"][t])
        np.testing.assert_array_equal(childs[:k][inner], tree.child[inner] + 1)
        assert not childs[:k][~inner].any() and not childs[k:].any()
        fids = np.array(m["featureIds"][t])
        np.testing.assert_array_equal(fids[:k][inner], tree.fids[inner])
        thrs = np.array(m["thresholds"][t], np.float64).astype(F32)  # strtod, then float
        assert np.array_equal(
            thrs[:k][inner].view(np.uint32), tree.thrs[inner].view(np.uint32)
        )
        for node in range(n):
            g = (t * n + node) * n_bands
            got = bins[bnds[g] : bnds[g + 1]]
            if node < k and not inner[node]:
                b0, b1 = tabs["bnds"][leaf * n_bands], tabs["bnds"][leaf * n_bands + 1]
                np.testing.assert_array_equal(got, tabs["bins"][b0:b1])
                leaf += 1
            else:
                assert bnds[g + n_bands] == bnds[g]  # internal or padding: no pixels
    plain = export_opencv(forest, tmp_path / "tiny.yml")
    assert gzip.decompress(path.read_bytes()) == plain.read_bytes()
    again = export_opencv(forest, tmp_path / "again.yml.gz")
    assert again.read_bytes() == path.read_bytes()
    eight = _read_opencv_yaml(export_opencv(forest, tmp_path / "e.yaml", n_trees_eval=1))
    assert eight["options"]["numberOfTreesToEvaluate"] == 1


def test_opencv_export_refuses_what_opencv_cannot_hold(forest, tmp_path):
    with pytest.raises(InputError, match=r"\.yml, \.yaml"):
        export_opencv(forest, tmp_path / "model.npz")
    odd = SEForest({**TINY, "chn_smooth": 2.5}, forest.trees)
    with pytest.raises(InputError, match="regFeatureSmoothingRadius"):
        export_opencv(odd, tmp_path / "odd.yml")
    with pytest.raises(InputError, match="1 of 2 trees"):
        export_opencv(SEForest(TINY, {0: forest.trees[0]}), tmp_path / "part.yml")
    with pytest.raises(InputError, match="n_trees_eval"):
        export_opencv(forest, tmp_path / "x.yml", n_trees_eval=3)
    assert not list(tmp_path.iterdir())


def _opencv_kernel(rad):
    """OpenCV's imsmooth kernel (structured_edge_detection.cpp), float32."""
    if rad <= 1:
        p = F32(12) / F32(rad) / F32(rad + 2) - F32(2)
        return np.array([1 / (p + 2), p / (p + 2), 1 / (p + 2)], F32)
    nrml = F32(rad + 1) ** 2
    return np.array([F32(min(i, 2 * rad - i) + 1) / nrml for i in range(2 * rad + 1)], F32)


def test_opencv_runs_the_exported_model_as_we_do(forest, tmp_path):
    """OpenCV's detector on the exported tiny model: our tree evaluation on OpenCV's
    channels gives OpenCV's map (the model file means to OpenCV what it means to us);
    se(), with the toolbox's channels, a close one."""
    cv2 = pytest.importorskip("cv2")
    if not hasattr(cv2, "ximgproc"):
        pytest.skip("OpenCV without the contrib module ximgproc")
    path = export_opencv(forest, tmp_path / "tiny.yml.gz")
    det = cv2.ximgproc.createStructuredEdgeDetection(str(path))
    img = np.ascontiguousarray(_synthetic(400)[0].astype(F32) / F32(255))
    e_cv = det.detectEdges(img)
    # OpenCV's channels of the image padded as detectEdges pads it, smoothed as
    # predictEdges smooths them; then our kernels, placed as predictEdges places them
    src = cv2.copyMakeBorder(img, 8, 8, 8, 8, cv2.BORDER_REFLECT)
    feats = np.zeros((src.shape[0] // 2, src.shape[1] // 2, 13), F32)
    cv2.ximgproc.createRFFeatureGetter().getFeatures(src, feats, 4, 0, 2, 13, 4)
    reg, sim = (
        np.ascontiguousarray(np.moveaxis(cv2.sepFilter2D(feats, -1, k, k), 2, 0))
        for k in (_opencv_kernel(1), _opencv_kernel(4))
    )
    hf, wf = feats.shape[:2]
    h1, w1 = math.ceil((hf * 2 - 32) / 2), math.ceil((wf * 2 - 32) / 2)
    tabs = forest.detection_tables(1)
    cids, c1, c2 = feature_offsets(forest.options, hf, wf)
    ind = fk.apply_forest(reg, sim, h1, w1, 1, tabs["nodes"], 2, 3328, cids, c1, c2)
    acc = np.zeros((h1 * 2 + 16, w1 * 2 + 16), F32)
    fk.accumulate_edges(ind, tabs["bins"], tabs["bnds"], 1, 2, 16, acc)
    h, w = img.shape[:2]
    e = np.zeros((h, w), F32)
    e[: min(h, acc.shape[0]), : min(w, acc.shape[1])] = acc[:h, :w] * F32(2 * 4 / 256 / 2)
    k1 = _opencv_kernel(1)
    e = cv2.sepFilter2D(e, -1, k1, k1)
    np.testing.assert_allclose(e, e_cv, atol=1e-6)
    ours, _ = se(img, forest, sharpen=0)
    inner = (slice(16, -16), slice(16, -16))
    corr = np.corrcoef(ours[inner].ravel(), np.clip(e_cv, 0, 1)[inner].ravel())[0, 1]
    assert corr > 0.8, corr


# ---------------------------------------------------------------------------------------
# options


def test_options_take_the_toolbox_names_and_derive_its_constants():
    opts = forest_options({"nPos": 1e4, "imWidth": 30, "nImgs": math.inf, "nTrees": 4})
    assert opts.n_pos == 10000 and opts.image_width == 32 and opts.n_images is None
    assert opts.n_trees_eval == 4
    d = forest_options()
    assert (d.n_channels, d.n_chn_ftrs, d.n_sim_ftrs, d.n_tot_ftrs) == (
        13,
        3328,
        3900,
        7228,
    )
    with pytest.raises(InputError, match="unknown structured edge option 'nope'"):
        forest_options({"nope": 1})
    with pytest.raises(InputError, match="frac_ftrs"):
        forest_options({"fracFtrs": 0})
