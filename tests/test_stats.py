"""Ecological statistics on synthetic segmentations whose answers are known in closed form."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import ConvexHull

from segbench.errors import InputError
from segbench.stats import (Item, convexity, ecological_statistics, fit_power_law,
                            max_scaled_distance, measure, proximity, region_area,
                            region_shapes, similarity, summarize)


def squares(rows: int, cols: int, side: int) -> np.ndarray:
    """A partition of a (rows*side) x (cols*side) image into equal squares, labels 1..N."""
    return np.kron(np.arange(1, rows * cols + 1).reshape(rows, cols),
                   np.ones((side, side), np.int32))


def half_planes(h: int, w: int) -> np.ndarray:
    seg = np.zeros((h, w), np.int32)
    seg[:, w // 2:] = 1
    return seg


# --- convexity and area ------------------------------------------------------------------

def test_equal_squares_convexity_one_and_one_area():
    seg = squares(3, 4, 7)
    areas, conv = region_shapes(seg)
    assert areas.tolist() == [49] * 12
    np.testing.assert_array_equal(conv, 1.0)
    h = convexity([(None, seg)], bins=10)
    assert h.counts.tolist() == [0] * 9 + [12] and h.median == 1.0
    fit = region_area([(None, seg)], n_boot=0, min_area=1)
    assert fit.counts.sum() == 12 and np.count_nonzero(fit.counts) == 1
    b = np.flatnonzero(fit.counts)[0]
    assert fit.edges[b] <= 49 < fit.edges[b + 1]


def test_convexity_closed_forms():
    # an L of three unit squares: hull is the 2x2 square minus a half-square triangle
    seg = np.array([[1, 0], [1, 1]])
    areas, conv = region_shapes(seg)
    assert areas.tolist() == [1, 3]
    assert conv.tolist() == [1.0, 3 / 3.5]
    # two separate pixels of one label, 1 and 3 columns apart: hull 1 x 4, area 2
    seg = np.zeros((1, 4), int)
    seg[0, [0, 3]] = 1
    assert region_shapes(seg)[1].tolist() == [2 / 2, 2 / 4]
    # a diagonal line of n pixels: hull area n + (n-1) (two half-pixel strips)
    n = 6
    seg = np.eye(n, dtype=int)
    assert region_shapes(seg)[1][1] == pytest.approx(n / (2 * n - 1))


def test_convexity_against_scipy_hull():
    rng = np.random.default_rng(3)
    seg = (rng.random((40, 50)) * 5).astype(int)
    from scipy import ndimage as ndi
    seg = ndi.median_filter(seg, 5)  # blobby, some disconnected regions
    labels = np.unique(seg)
    areas, conv = region_shapes(seg)
    for k, lab in enumerate(labels):
        r, c = np.nonzero(seg == lab)
        corners = np.concatenate([np.c_[r + dr, c + dc] for dr in (0, 1) for dc in (0, 1)])
        assert areas[k] == r.size
        assert conv[k] == pytest.approx(r.size / ConvexHull(corners).volume, rel=1e-12)


def test_labels_need_not_be_contiguous():
    seg = squares(2, 2, 3) * 1000 - 7
    assert region_shapes(seg)[0].tolist() == [9] * 4
    big = squares(2, 2, 3).astype(np.int64) * (1 << 40)
    assert region_shapes(big)[0].tolist() == [9] * 4


# --- proximity ---------------------------------------------------------------------------

def test_half_planes_one_row_exact():
    """A 1 x W row split in halves, every pair scored: at separation D there are W - D
    pairs, max(W - 2D, 0) of them on one side."""
    w, nb = 64, 10
    c = proximity([(None, half_planes(1, w))], samples=10_000, bins=nb,
                  normalize="image", min_pairs=1)
    d = np.arange(1, w)
    b = np.minimum(d * nb // (w - 1), nb - 1)      # x = D / (W - 1), never on an edge
    pairs = np.bincount(b, w - d, nb)
    same = np.bincount(b, np.maximum(w - 2 * d, 0), nb)
    np.testing.assert_array_equal(c.pairs, pairs)
    np.testing.assert_allclose(c.pooled, same / pairs, rtol=0, atol=1e-15)
    np.testing.assert_allclose(c.mean, same / pairs, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(c.std, 0.0)


def test_half_planes_2d_exact_against_all_pairs():
    """All pixels of a 12 x 16 half-plane image: the binned curve equals brute force over
    every pair, and P(same | column gap D) = (W - 2D) / (W - D)."""
    h, w, nb = 12, 16, 8
    seg = half_planes(h, w)
    rec = measure(seg, key="hp", scale=None, samples=h * w, proximity_bins=nb)
    rr, cc = np.divmod(np.arange(h * w), w)
    i, j = np.triu_indices(h * w, 1)
    dist = np.hypot(rr[i] - rr[j], cc[i] - cc[j])
    x = dist / np.hypot(h - 1, w - 1)
    b = np.minimum((x * nb).astype(int), nb - 1)
    same = seg.ravel()[i] == seg.ravel()[j]
    np.testing.assert_array_equal(rec.proximity[:, 0], np.bincount(b, minlength=nb))
    np.testing.assert_array_equal(rec.proximity[:, 1], np.bincount(b, same, nb))
    gap = np.abs(cc[i] - cc[j])
    for g in range(w):
        sel = gap == g
        want = max(w - 2 * g, 0) / (w - g)
        assert same[sel].mean() == pytest.approx(want)


def test_sampled_half_planes_close_to_closed_form():
    """With 1,000 samples the curve of a big half-plane image tracks the exact one."""
    h, w, nb = 120, 160, 10
    seg = half_planes(h, w)
    c = proximity([(None, seg)], bins=nb, normalize="image", seed=1)
    # exact per-bin probability from offset counts: unordered pairs at offset (dr, dc)
    # number (h - dr)(w - dc), twice when both are nonzero (dc of either sign); of them
    # (h - dr) * max(w - 2 dc, 0) lie on one side
    dr, dc = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    mult = np.where((dr > 0) & (dc > 0), 2, 1) * (h - dr) * (w - dc)
    mult[0, 0] = 0
    same_mult = np.where((dr > 0) & (dc > 0), 2, 1) * (h - dr) * np.maximum(w - 2 * dc, 0)
    same_mult[0, 0] = 0
    x = np.hypot(dr, dc) / np.hypot(h - 1, w - 1)
    b = np.minimum((x * nb).astype(int), nb - 1)
    p = np.bincount(b.ravel(), same_mult.ravel(), nb) / np.bincount(b.ravel(),
                                                                   mult.ravel(), nb)
    ok = c.pairs > 2000
    assert ok.sum() >= 6
    np.testing.assert_allclose(c.pooled[ok], p[ok], atol=0.03)


def test_proximity_scaling_by_segment_count():
    """Dataset normalisation: d * sqrt(n / A) over the largest such value."""
    coarse = half_planes(20, 30)
    fine = squares(4, 6, 5)                      # 24 segments on the same 20 x 30 image
    s = max_scaled_distance((20, 30), 24)
    assert s == pytest.approx(np.hypot(19, 29) * np.sqrt(24 / 600))
    rc = measure(coarse, key="c", scale=s, samples=600, proximity_bins=10)
    rf = measure(fine, key="f", scale=s, samples=600, proximity_bins=10)
    top = lambda r: np.flatnonzero(r.proximity[:, 0])[-1]
    assert top(rf) == 9                            # the finest reaches x = 1
    assert top(rc) == int(np.sqrt(2 / 24) * 10)    # the coarse one only sqrt(2/24)
    c = proximity([(None, coarse), (None, fine)], bins=10, samples=600)
    assert c.pairs.sum() == rc.proximity[:, 0].sum() + rf.proximity[:, 0].sum()


def test_single_segment_is_always_same():
    c = proximity([(None, np.zeros((30, 40), int))], bins=5)
    ok = np.isfinite(c.mean)
    np.testing.assert_array_equal(c.mean[ok], 1.0)
    np.testing.assert_array_equal(c.std[ok], 0.0)


def test_mean_and_std_over_segmentations():
    """Mean +- std are over segmentations, the pooled value over pairs."""
    one = np.zeros((1, 10), int)                  # every pair same
    two = np.arange(10)[None, :]                  # no pair same
    c = proximity([(None, one), (None, two)], bins=1, samples=100, min_pairs=1)
    assert c.mean[0] == 0.5 and c.std[0] == 0.5 and c.pooled[0] == 0.5
    assert c.segmentations[0] == 2 and c.pairs[0] == 90


# --- similarity --------------------------------------------------------------------------

def checkerboard(cells: int, side: int, lo: int = 40, hi: int = 200) -> np.ndarray:
    board = np.kron(np.indices((cells, cells)).sum(0) % 2, np.ones((side, side), int))
    return np.where(board == 1, hi, lo).astype(np.uint8)


def test_checkerboard_uniform_objects():
    """Segments = the two grey classes: P = 1 at difference 0 and 0 at |hi - lo|."""
    img = checkerboard(4, 5)
    seg = (img == 200).astype(int)
    c = similarity([(img, seg)], bins=256, samples=10_000, min_pairs=1)
    n = img.size // 2
    assert c.pairs[0] == 2 * n * (n - 1) // 2 and c.pooled[0] == 1.0
    assert c.pairs[160] == n * n and c.pooled[160] == 0.0
    assert c.pairs.sum() == c.pairs[0] + c.pairs[160]


def test_checkerboard_cells_as_segments():
    """Each cell its own segment: P(same | equal grey) = cells * C(s^2, 2) / pairs of one
    colour, and 0 between colours."""
    k, s = 4, 5
    img = checkerboard(k, s)
    seg = squares(k, k, s)
    c = similarity([(img, seg)], bins=32, samples=10_000, min_pairs=1)
    n = img.size // 2
    want = k * k * (s * s * (s * s - 1) // 2) / (n * (n - 1))
    assert c.pooled[0] == pytest.approx(want)
    assert c.pooled[160 // 8] == 0.0


def test_checkerboard_colour_and_texture():
    img = np.zeros((20, 20, 3), np.uint8)
    img[:, :10] = (255, 0, 0)
    img[:, 10:] = (0, 0, 255)
    seg = half_planes(20, 20)
    col = similarity([(img, seg)], cue="color", bins=256, samples=10_000, min_pairs=1)
    from skimage.color import rgb2lab
    de = np.linalg.norm(rgb2lab(np.array([[[1.0, 0, 0]]]))
                        - rgb2lab(np.array([[[0, 0, 1.0]]])))
    assert col.pooled[0] == 1.0 and col.pooled[int(de)] == 0.0
    assert col.pairs[0] + col.pairs[int(de)] == col.pairs.sum()
    flat = similarity([(np.full((20, 20, 3), 90, np.uint8), seg)], cue="texture",
                      bins=256, samples=10_000, min_pairs=1)
    assert flat.pairs[0] == flat.pairs.sum()      # no texture anywhere: difference 0


def test_texture_separates_stripes_from_flat():
    img = np.full((40, 40), 128, np.uint8)
    img[:, :20] = np.where(np.arange(40)[:, None] % 4 < 2, 60, 200)[:, :1]
    seg = half_planes(40, 40)
    c = similarity([(img, seg)], cue="texture", bins=32, samples=1600, min_pairs=50)
    ok = np.flatnonzero(np.isfinite(c.pooled))
    assert c.pooled[ok[0]] > 0.9 and c.pooled[ok[-1]] < 0.1


def test_items_without_image_skip_similarity():
    seg = half_planes(10, 10)
    res = ecological_statistics([Item(None, seg, id="a"),
                                 Item(checkerboard(2, 5), seg, id="b")], n_boot=0)
    assert res.all.similarity["gray"].n_items == 1
    assert res.all.proximity.n_items == 2


# --- power law ---------------------------------------------------------------------------

@pytest.mark.parametrize("alpha", [1.0, 1.5])
def test_power_law_recovered(alpha):
    """Areas at the quantiles of a continuous power law density x^-alpha on [1000, 1e5]."""
    lo, hi = 1000.0, 1e5
    q = (np.arange(40_000) + 0.5) / 40_000
    if alpha == 1.0:
        x = lo * (hi / lo) ** q
    else:
        a1 = 1 - alpha
        x = (lo ** a1 + q * (hi ** a1 - lo ** a1)) ** (1 / a1)
    areas = np.floor(x).astype(np.int64)
    per_image = np.array_split(areas[np.random.default_rng(0).permutation(areas.size)], 40)
    fit = fit_power_law(per_image, 4e5, min_area=1000, n_boot=200)
    assert fit.alpha == pytest.approx(alpha, abs=0.02)
    assert fit.alpha_ci[0] <= fit.alpha <= fit.alpha_ci[1]
    assert fit.alpha_ci[1] - fit.alpha_ci[0] < 0.1
    assert fit.alpha_log_bins == pytest.approx(alpha - 1, abs=0.02)
    assert not fit.fitted[fit.edges[1:] > 1e5].any()     # above the 25% cutoff: out


def test_power_law_cutoff_and_min_area():
    areas = [np.array([1, 5, 50, 500, 5000, 50_000, 90_000])]
    fit = fit_power_law(areas, 100_000, min_area=10, n_boot=0)
    assert fit.cutoff == 25_000
    used = fit.counts[fit.fitted]
    assert used.sum() == 3                       # 50, 500, 5000
    assert np.isnan(fit.alpha_ci[0])


def test_bootstrap_deterministic():
    rng = np.random.default_rng(5)
    per_image = [np.floor(1000 * (1 - rng.random(50)) ** -1.0).astype(int) for _ in range(30)]
    a = fit_power_law(per_image, 1e6, n_boot=100, seed=3)
    b = fit_power_law(per_image, 1e6, n_boot=100, seed=3)
    assert a.alpha_ci == b.alpha_ci


# --- pipeline properties -----------------------------------------------------------------

def _items():
    rng = np.random.default_rng(0)
    out = []
    for k in range(6):
        img = (rng.random((24, 36, 3)) * 255).astype(np.uint8)
        seg = squares(2, 3, 12) if k % 2 else half_planes(24, 36)
        out.append(Item(img, seg, id=f"im{k // 2}/{k % 2 + 1}", gray=bool(k % 3 == 0)))
    return out


def test_order_free_and_seeded():
    items = _items()
    # regions here are 144 and 432 px of 864: fit from 1 px up to the whole image so the
    # power law (and its bootstrap interval) is defined and the comparison is meaningful
    fit = dict(min_area=1, max_fraction=1.0)
    a = ecological_statistics(items, samples=200, n_boot=50, **fit)
    b = ecological_statistics(items[::-1], samples=200, n_boot=50, **fit)
    for g in a.groups:
        np.testing.assert_array_equal(a.groups[g].proximity.pairs,
                                      b.groups[g].proximity.pairs)
        np.testing.assert_array_equal(a.groups[g].similarity["gray"].mean,
                                      b.groups[g].similarity["gray"].mean)
        assert np.isfinite(a.groups[g].area.alpha)
        assert np.all(np.isfinite(a.groups[g].area.alpha_ci))
        assert a.groups[g].area.alpha_ci == b.groups[g].area.alpha_ci
    c = ecological_statistics(items, samples=200, n_boot=50, seed=1)
    assert not np.array_equal(a.all.similarity["gray"].pairs,
                              c.all.similarity["gray"].pairs)


def test_gray_split():
    res = ecological_statistics(_items(), samples=100, n_boot=0)
    assert set(res.groups) == {"all", "gray", "color"}
    assert res.groups["gray"].n_segmentations == 2
    assert res.groups["color"].n_segmentations == 4
    np.testing.assert_array_equal(
        res.groups["gray"].proximity.pairs + res.groups["color"].proximity.pairs,
        res.all.proximity.pairs)
    plain = ecological_statistics([(None, half_planes(8, 8))], n_boot=0)
    assert set(plain.groups) == {"all"}


def test_result_json_round_trip(tmp_path):
    res = ecological_statistics(_items(), samples=100, n_boot=20)
    r = res.to_result()
    text = r.to_json(tmp_path / "s.json")
    import json
    d = json.loads(text)
    assert d["family"] == "stats" and d["metrics"]["n_segmentations"] == 6
    assert set(d["curves"]) == {"all", "gray", "color"}
    assert len(d["per_item"]) == 6


def test_summarize_records_equals_direct():
    items = _items()
    res = ecological_statistics(items, samples=150, n_boot=0)
    again = summarize(res.records[::-1], n_boot=0)
    np.testing.assert_array_equal(again.all.proximity.mean, res.all.proximity.mean)


def test_input_errors():
    with pytest.raises(InputError):
        proximity([np.zeros((3, 3))])
    with pytest.raises(InputError):
        proximity([(None, np.zeros(5, int))])
    with pytest.raises(InputError):
        proximity([(None, np.zeros((3, 3)))])               # float labels
    with pytest.raises(InputError):
        similarity([(None, np.zeros((3, 3), int))], cue="sound")
    with pytest.raises(InputError):
        similarity([(np.zeros((4, 4, 3), np.uint8), np.zeros((3, 3), int))])
    with pytest.raises(InputError):
        similarity([(np.zeros((3, 3, 3), np.uint8), np.zeros((3, 3), int))], bins=7)
    with pytest.raises(InputError):
        proximity([Item(None, np.zeros((3, 3), int), id="a")] * 2)
    with pytest.raises(InputError):
        proximity([(None, np.zeros((3, 3), int))], normalize="nope")


def test_confidence_and_axis_label_reach_the_result():
    rng = np.random.default_rng(2)
    items = []
    for k in range(8):                            # stripes of random widths: many areas
        cuts = np.sort(rng.choice(np.arange(1, 64), 12, replace=False))
        seg = np.repeat(np.searchsorted(cuts, np.arange(64), side="right")[None, :], 64, 0)
        items.append(Item(None, seg, id=f"s{k}"))
    wide = ecological_statistics(items, samples=100, n_boot=200, confidence=0.99,
                                 min_area=1)
    narrow = ecological_statistics(items, samples=100, n_boot=200, confidence=0.5,
                                   min_area=1)
    lo99, hi99 = wide.all.area.alpha_ci
    lo50, hi50 = narrow.all.area.alpha_ci
    assert lo99 <= lo50 <= hi50 <= hi99 and wide.all.area.confidence == 0.99
    per_image = ecological_statistics(items, samples=100, n_boot=0, normalize="image")
    assert per_image.all.proximity.x_label == "distance / image diagonal"
    assert "segments" in wide.all.proximity.x_label
