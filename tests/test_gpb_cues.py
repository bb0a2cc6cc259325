"""gPb's local cues (BSR's mPb): the slice map, the 16-slice histogram gradient against
a direct pixel-by-pixel transcription of its definition, the orientation convention,
the parabola fit against :func:`fit_parab`, the texton filter bank, determinism and bad
inputs. (Parity with BSR's own outputs needs the Octave reference, outside the suite.)"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import DATA, require
from segbench.algorithms import fit_parab
from segbench.algorithms._gpb_cues import (BORDER, BSR_CHANNEL, CUE_RADII, _GTHETA,
                                           lab_bins, local_cues, slice_gradient,
                                           slice_map, smooth_cue, texton_filters,
                                           textons)
from segbench.errors import InputError

SPEC_COUNTS = {
    3: [3, 1, 4, 3, 2, 1, 2, 2, 1, 0, 2, 1, 2, 0, 3, 2],
    5: [6, 5, 9, 6, 5, 4, 7, 4, 3, 3, 6, 3, 4, 3, 8, 5],
    10: [22, 19, 27, 22, 21, 17, 23, 18, 17, 14, 21, 17, 18, 16, 24, 21],
    20: [83, 77, 92, 83, 81, 73, 85, 75, 73, 67, 81, 73, 75, 71, 87, 81],
}


@pytest.mark.parametrize("r", sorted(SPEC_COUNTS))
def test_slice_map_counts(r):
    sm = slice_map(r)
    assert sm.shape == (2 * r + 1, 2 * r + 1)
    assert np.bincount(sm[sm >= 0], minlength=16).tolist() == SPEC_COUNTS[r]
    assert sm[r, r] == 2  # the centre element, by the half-pixel offset


def test_slice_map_r3_exact():
    want = [[2, 1, 1, 0, 15, 14, 14], [2, 2, 1, 0, 15, 14, 14],
            [2, 2, 2, 0, 15, 14, 13], [3, 3, 3, 2, 14, 12, 12],
            [4, 4, 4, 6, 10, 11, 11], [5, 5, 6, 7, 8, 10, 10],
            [5, 6, 6, 7, 8, 9, 10]]
    sm = slice_map(3)
    inside = sm >= 0  # the spec's map covers the window; the disc keeps 29 of 49
    assert inside.sum() == 29
    np.testing.assert_array_equal(sm[inside], np.array(want)[inside])


def direct_gradient(lab, r, sigma, nbins, border):
    """BSR's hist_gradient_2D transcribed pixel by pixel: 16 slice histograms counted
    through the flipped window, each smoothed by 'same' convolution with the truncated
    Gaussian, L1-normalised, the halves summed, chi-squared; BSR orientation o goes to
    our channel (4 - o) mod 8."""
    sm = slice_map(r)
    if sigma is not None:
        t = int(np.ceil(3 * sigma))
        x = np.arange(-t, t + 1)
        taps = np.exp(-x * x / (2 * sigma * sigma))
        taps /= taps.sum()
    h, w = lab.shape[0] - 2 * border, lab.shape[1] - 2 * border
    out = np.zeros((8, h, w))
    for y in range(h):
        for x in range(w):
            hs = np.zeros((16, nbins))
            cy, cx = border + y + r, border + x + r
            for ox in range(2 * r + 1):
                for oy in range(2 * r + 1):
                    if sm[ox, oy] >= 0:  # the window is flipped: a convolution
                        hs[sm[ox, oy], lab[cy - ox, cx - oy]] += 1
            if sigma is not None:
                hs = np.array([np.convolve(v, taps)[t:t + nbins] for v in hs])
            tot = hs.sum(axis=1, keepdims=True)
            hs = np.divide(hs, tot, out=np.zeros_like(hs), where=tot != 0)
            for o in range(8):
                left = hs[o:o + 8].sum(axis=0)
                right = hs[np.r_[o + 8:16, 0:o]].sum(axis=0)
                m = left != right
                out[(4 - o) % 8, y, x] = 0.5 * np.sum((left[m] - right[m]) ** 2
                                                      / (left[m] + right[m]))
    return out


@pytest.mark.parametrize("r, sigma, nbins", [(3, 2.5, 25), (3, 2.5, 6), (5, 1.25, 9),
                                             (5, None, 12), (6, 2.5, 25), (4, None, 3)])
def test_slice_gradient_matches_direct(r, sigma, nbins):
    rng = np.random.default_rng(r * 100 + nbins)
    b = r + 1
    # mostly one label with islands: the sliding updates must cancel exactly
    lab = np.where(rng.random((9 + 2 * b, 13 + 2 * b)) < 0.3,
                   rng.integers(0, nbins, (9 + 2 * b, 13 + 2 * b)), nbins - 1)
    got = slice_gradient(lab, r, sigma_bins=sigma, nbins=nbins, border=b)
    np.testing.assert_allclose(got, direct_gradient(lab, r, sigma, nbins, b),
                               rtol=0, atol=1e-12)


def test_slice_gradient_nbins_default_is_max_label_plus_one():
    lab = np.random.default_rng(5).integers(0, 7, (20, 22))
    np.testing.assert_array_equal(slice_gradient(lab, 3, sigma_bins=2.5, border=3),
                                  slice_gradient(lab, 3, sigma_bins=2.5, nbins=7,
                                                 border=3))


@pytest.mark.parametrize("vertical", [True, False])
@pytest.mark.parametrize("r, sigma", [(3, 2.5), (5, 1.25), (10, None)])
def test_step_edge_peaks_in_its_tangent_channel(vertical, r, sigma):
    n = 2 * r + 21
    yy, xx = np.mgrid[:n, :n]
    lab = np.where((xx if vertical else yy) >= n // 2, 20, 4)
    g = slice_gradient(lab, r, sigma_bins=sigma, nbins=25, border=r)
    c = g.shape[1] // 2
    prof = g[:, c, c] if vertical else g[:, c, c]
    want = 4 if vertical else 0  # tangent pi/2 (down the rows), tangent 0 (along +x)
    assert int(np.argmax(prof)) == want
    assert prof[want] > 1.0  # about 8 - the half of the disc that sees both labels


@pytest.mark.parametrize("shape", [(47, 52), (31, 44), (45, 33)])
def test_smooth_cue_matches_fit_parab(shape):
    z = np.random.default_rng(2).random((8,) + shape)  # some narrower than 2 x 20
    for r in (3, 5, 10, 20):
        want = np.stack([fit_parab(z[k], r, r / 4, _GTHETA[BSR_CHANNEL[k]])
                         for k in range(8)])
        np.testing.assert_allclose(smooth_cue(z, r), want, rtol=0, atol=1e-12)


def test_channel_map_is_bsr_involution():
    assert BSR_CHANNEL == (4, 3, 2, 1, 0, 7, 6, 5)
    th = np.array(_GTHETA)[list(BSR_CHANNEL)]  # our channel k's fit angle
    np.testing.assert_allclose(th, np.arange(8) * np.pi / 8, atol=1e-4)


def test_texton_filters():
    fb = texton_filters()
    assert len(fb) == 34
    assert [f.shape[0] for f in fb] == [13] * 17 + [19] * 17
    for f in fb:
        assert abs(f.sum()) < 1e-12 and abs(np.abs(f).sum() - 1) < 1e-12
    even0 = fb[0]  # ori 0: elongated down the rows, 2nd derivative across the columns
    assert np.allclose(even0, even0[::-1, :]) and np.allclose(even0, even0[:, ::-1])
    assert abs(even0[6, 6]) > abs(even0[0, 6])
    odd0 = fb[8]
    assert np.allclose(odd0, -odd0[:, ::-1], atol=1e-12)  # odd across the columns
    np.testing.assert_allclose(fb[4], fb[0].T, atol=1e-12)  # ori pi/2 = transpose


def step_image(h=40, w=44):
    img = np.zeros((h, w, 3), np.uint8)
    img[:, : w // 2] = (200, 40, 30)
    img[:, w // 2:] = (30, 90, 200)
    img[h // 2:, :, 1] += 60  # a horizontal edge in green too
    return img


def test_local_cues_shapes_determinism_and_edges():
    img = step_image()
    cues, tex = local_cues(img, raw=True)
    assert cues.shape == (12, 8, 40, 44) and cues.dtype == np.float64
    assert tex.shape == (40, 44) and tex.dtype == np.int32
    assert np.all(cues >= 0) and np.all(cues <= 8 + 1e-12)
    again, tex2 = local_cues(img, raw=True)
    assert again.tobytes() == cues.tobytes() and tex.tobytes() == tex2.tobytes()
    # the vertical colour edge: the a* gradient peaks in channel 4 on the edge
    for i in (3, 4, 5):
        assert int(np.argmax(cues[i, :, 10, 22])) == 4
    smoothed, _ = local_cues(img)
    want = smooth_cue(cues[1], CUE_RADII[1])
    np.testing.assert_array_equal(smoothed[1], want)


def test_smallest_image():
    img = np.random.default_rng(4).integers(0, 256, (31, 31, 3), dtype=np.uint8)
    cues, tex = local_cues(img)
    assert cues.shape == (12, 8, 31, 31) and np.isfinite(cues).all()


def test_grey_input_is_replicated():
    img = step_image()[..., 0]
    a, _ = local_cues(img, raw=True)
    b, _ = local_cues(np.repeat(img[..., None], 3, axis=2), raw=True)
    np.testing.assert_array_equal(a, b)


def test_lab_bins_mirror_and_range():
    img = step_image()
    lq, aq, bq, grey = lab_bins(img)
    for q in (lq, aq, bq):
        assert q.shape == (100, 104) and q.dtype == np.int32
        assert q.min() >= 0 and q.max() <= 24
        np.testing.assert_array_equal(q[BORDER - 1], q[BORDER])  # edge repeated
    assert grey[BORDER, BORDER] == pytest.approx(
        (0.29894 * 200 + 0.58704 * 40 + 0.11402 * 30) / 255)


def test_textons_remirrored_and_compact():
    img = step_image()
    _, _, _, grey = lab_bins(img)
    lab, centres = textons(grey, seed=1)
    assert lab.shape == grey.shape
    inner = lab[BORDER:-BORDER, BORDER:-BORDER]
    np.testing.assert_array_equal(lab, np.pad(inner, BORDER, mode="symmetric"))
    assert set(np.unique(lab)) <= set(range(centres.shape[0]))
    # the filters are zero-mean: flat areas share one texton, edges take others
    flat = inner[5, 5]
    assert inner[5, -5] == inner[-5, 5] == inner[-5, -5] == flat
    assert inner[5, 22] != flat and inner[20, 5] != flat


@pytest.mark.parametrize("bad, what", [
    (np.zeros((40, 40, 3)), "uint8"),
    (np.zeros((40, 40, 4), np.uint8), "shape"),
    (np.zeros(50, np.uint8), "shape"),
    (np.zeros((30, 40, 3), np.uint8), "31 px"),
    (np.zeros((40, 12), np.uint8), "31 px"),
])
def test_bad_input(bad, what):
    with pytest.raises(InputError, match=what):
        local_cues(bad)


def test_slice_gradient_bad_input():
    with pytest.raises(InputError):
        slice_gradient(np.zeros((20, 20)), 3, border=3)  # float labels
    with pytest.raises(InputError):
        slice_gradient(np.zeros((20, 20), np.int32), 5, border=3)  # r > border
    with pytest.raises(InputError):
        slice_gradient(-np.ones((20, 20), np.int32), 3, border=3)


def test_real_photograph_crop():
    from segbench.io import read_image
    path = require(DATA / "bsds500" / "images" / "val" / "101087.jpg")
    img = read_image(path)[100:180, 60:150]
    cues, tex = local_cues(img)
    assert cues.shape == (12, 8, 80, 90) and np.isfinite(cues).all()
    raw, _ = local_cues(img, raw=True)
    assert raw.min() >= 0 and raw.max() <= 8 + 1e-12
    assert tex.max() < 64
