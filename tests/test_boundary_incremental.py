"""The per-threshold boundary counts of the incremental matcher (issue 41, item 5).

``evaluate_image`` matches every annotator against the thinned maps of all thresholds in
one walk, repairing the previous optimum. These tests pin its counts:

* against the implementation before the speed work of issue 41 item 5: a digest of
  (cntR, sumR, cntP, sumP) per input, recorded from that implementation, for random,
  noisy and smooth soft maps with one and three annotators, the official self-test
  images and BSDS500 HED maps. cntP (pixels matched to any annotator) depends on which
  of several optimal matchings each annotator gets, so it is pinned too: a change of
  tie-breaking shows here even when every count stays valid (update the digests only
  on purpose);
* against matching every threshold from scratch: cntR is the optimum's matched count
  (unique), sumR and sumP are exact, cntP lies within the bounds any optimum gives;
* the helper kernels against the numpy calls they replace.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from conftest import DATA, FIXTURES, require
from scipy import ndimage

from segbench.boundary import evaluate_image
from segbench.io import read_ground_truth, read_prediction
from segbench.primitives._boundary_counts import default_thresholds
from segbench.primitives._correspond import Matcher
from segbench.primitives._solver import positions_in, sorted_union
from segbench.primitives._thin import thin


def _soft_maps() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(41)
    h, w = 61, 83
    noise = rng.random((h, w))
    noisy = ndimage.gaussian_filter(rng.random((h, w)), 1.0) * 2 - 0.5
    noisy = np.clip(noisy + 0.2 * rng.random((h, w)), 0, 1)
    yy, xx = np.mgrid[0:h, 0:w]
    smooth = 0.5 + 0.5 * np.sin(xx / 7.0) * np.cos(yy / 5.0)
    return {"random": noise, "noisy": noisy, "smooth": smooth}


def _humans(shape, seed) -> list[np.ndarray]:
    """Three annotators: region boundaries of smoothed random blobs."""
    rng = np.random.default_rng(seed)
    maps = []
    for _ in range(3):
        lab = ndimage.label(ndimage.gaussian_filter(rng.random(shape), 3) > 0.5)[0]
        b = np.zeros(shape, bool)
        b[:, 1:] |= lab[:, 1:] != lab[:, :-1]
        b[1:, :] |= lab[1:, :] != lab[:-1, :]
        maps.append(b)
    return maps


def _digest(c) -> str:
    h = hashlib.sha256()
    for a in (c.cnt_r, c.sum_r, c.cnt_p, c.sum_p):
        h.update(np.ascontiguousarray(a, np.int64).tobytes())
    return h.hexdigest()[:16]


#: Counts of the implementation before issue 41 item 5 (sha256 of cntR, sumR, cntP,
#: sumP as int64, first 16 hex digits): synthetic maps "<map>-<gt seed>-<annotators>"
#: (nthresh 25, max_dist 0.03), and the default settings on real images.
BEFORE = {
    "random-1-1": "222bc1ea5a135974",
    "random-1-3": "b2948879cf2c0839",
    "random-2-1": "7a6dee8f11c18fc4",
    "random-2-3": "3bb49929653f31a4",
    "noisy-1-1": "5d0319ec5ba0c006",
    "noisy-1-3": "76fdd2e225943800",
    "noisy-2-1": "95c2b46c686cf440",
    "noisy-2-3": "f1b45abca1d61349",
    "smooth-1-1": "7a826e2df8ddb67b",
    "smooth-1-3": "e95f2bdb66121abc",
    "smooth-2-1": "a15e8706ab2605c3",
    "smooth-2-3": "5acfe683d771f17d",
    "bsr-2018": "2e8554d3eb53afd0",
    "bsr-3063": "f0dfb715ddf23eff",
    "bsr-5096": "1cbb5cba59d7b259",
    "bsr-6046": "c47e254a3755fad3",
    "bsr-8068": "e70cd3e04550ff13",
    "hed-100007": "64317899cfb28ec3",
    "hed-100039": "5eb26c7497b795db",
    "hed-100099": "619bd08eb71421ee",
    "hed-10081": "6c9d0bad7ec1567a",
    "hed-101027": "df9ce35c924266d5",
}

SYNTHETIC = [k for k in BEFORE if not k.startswith(("bsr-", "hed-"))]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("key", SYNTHETIC)
def test_synthetic_counts_unchanged(key, threads):
    name, seed, n_gt = key.split("-")
    pb = _soft_maps()[name]
    gts = _humans(pb.shape, int(seed))[: int(n_gt)]
    c = evaluate_image(pb, gts, nthresh=25, max_dist=0.03, threads=threads)
    assert _digest(c) == BEFORE[key]


def _real(key):
    kind, iid = key.split("-")
    if kind == "bsr":
        inp = require(FIXTURES / "bsr-official" / "inputs")
        return inp / "png" / f"{iid}.png", inp / "groundTruth" / f"{iid}.mat"
    pred = require(DATA / "bsds500-hed-nms" / "test" / f"{iid}.png")
    gt = require(DATA / "bsds500" / "groundTruth" / "test" / f"{iid}.mat")
    return pred, gt


@pytest.mark.parametrize("key", [k for k in BEFORE if k not in SYNTHETIC])
def test_real_image_counts_unchanged(key):
    pred, gt = _real(key)
    pb = read_prediction(pred).pb
    c = evaluate_image(pb, [g.boundaries for g in read_ground_truth(gt)], threads=1)
    assert _digest(c) == BEFORE[key]


@pytest.mark.parametrize("name", ["random", "noisy", "smooth"])
def test_counts_equal_solving_every_threshold_afresh(name):
    """The walk's counts against one exact solve per threshold and annotator."""
    pb = _soft_maps()[name]
    gts = _humans(pb.shape, 3)
    nthresh, max_dist = 12, 0.03
    c = evaluate_image(pb, gts, nthresh=nthresh, max_dist=max_dist, threads=1)
    matcher = Matcher(pb.shape, max_dist)
    for k, t in enumerate(default_thresholds(nthresh)):
        det = thin(pb >= t)
        assert c.sum_p[k] == det.sum()
        assert c.sum_r[k] == sum(g.sum() for g in gts)
        matched_det = []
        n_matched = 0
        for g in gts:
            m_det, m_gt = matcher.match(det, g)
            assert m_det.sum() == m_gt.sum()
            n_matched += int(m_gt.sum())
            matched_det.append(m_det)
        # the optimum's matched count is unique: the walk must reach it at every threshold
        assert c.cnt_r[k] == n_matched
        # cntP is a union over annotators of one optimum each: any optimum's union lies
        # between the largest single annotator's matched pixels and their sum
        sizes = [int(m.sum()) for m in matched_det]
        assert max(sizes, default=0) <= c.cnt_p[k] <= min(sum(sizes), c.sum_p[k])


def test_sorted_union_is_union1d():
    rng = np.random.default_rng(7)
    for n_a, n_b in [(0, 0), (0, 5), (7, 0), (300, 40), (1000, 1000)]:
        a = np.sort(rng.choice(5000, n_a, replace=False)).astype(np.int64)
        b = rng.integers(0, 5000, n_b).astype(np.int64)  # unsorted, repeats
        out = sorted_union(a, b)
        assert out.dtype == np.int64
        np.testing.assert_array_equal(out, np.union1d(a, b))


def test_positions_in_is_searchsorted():
    rng = np.random.default_rng(8)
    for width in (1, 7, 64, 300):
        union = np.unique(rng.integers(0, 9000, 700)).astype(np.int64)
        pixels = rng.choice(union, 2000).astype(np.int64)
        np.testing.assert_array_equal(
            positions_in(union, pixels, width), np.searchsorted(union, pixels)
        )
    assert positions_in(union[:0], pixels[:0], 10).size == 0
