"""gPb's block kernels (segbench.algorithms._gpb_block_kernels) against the
single-vector stencil kernels and the sparse matrix, and the cue sums formed cue by
cue (local_cue_sums) against the sums of the whole cue stack: all equal bit for bit,
which is why the multigrid solver and gPb keep their published numbers."""

from __future__ import annotations

import numpy as np
import pytest

from segbench.algorithms import _gpb_block_kernels as _b
from segbench.algorithms import _gpb_spectral_kernels as _k
from segbench.algorithms._gpb import GPB_WEIGHTS, MPB_WEIGHTS, _weighted
from segbench.algorithms._gpb_cues import local_cue_sums, local_cues
from segbench.algorithms._gpb_multigrid import _coarsen, _interpolate
from segbench.algorithms._gpb_spectral import _affinity_stencil


@pytest.fixture(scope="module")
def stencil():
    """W of a 37 x 29 mPb-like map (a ring and noise), in half-stencil form."""
    rng = np.random.default_rng(5)
    m = 0.05 * rng.random((37, 29))
    yy, xx = np.mgrid[:37, :29]
    m[np.abs(np.hypot(yy - 17, xx - 13) - 9) < 0.6] = 0.8
    half, diag, ody, odx = _affinity_stencil(m)
    return m, half, diag, ody, odx


def _dense(half, diag, ody, odx):
    """The symmetric matrix the half stencil stands for."""
    h, _, w = half.shape
    W = np.diag(diag.astype(np.float64))
    for k in range(len(ody)):
        for y in range(h - ody[k]):
            for x in range(max(0, -odx[k]), min(w, w - odx[k])):
                p, q = y * w + x, (y + ody[k]) * w + x + odx[k]
                W[p, q] = W[q, p] = half[y, k, x]
    return W


@pytest.mark.parametrize("m", [1, 5, 8, 22])
def test_block_product_is_the_matrix_product(stencil, m):
    a, half, diag, ody, odx = stencil
    h, w = a.shape
    z = np.random.default_rng(m).standard_normal((h, w, m))
    out = np.empty_like(z)
    _b.block_product(half, diag, ody, odx, z, out)
    W = _dense(half, diag, ody, odx)
    expected = (W @ z.reshape(h * w, m)).reshape(h, w, m)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
    single = np.empty((h, w))
    for j in range(m):
        _k.stencil_product(half, diag, ody, odx, np.ascontiguousarray(z[:, :, j]), single)
        assert np.array_equal(out[:, :, j], single)  # the single-vector bits


@pytest.mark.parametrize("degree", [1, 3, 8])
def test_block_chebyshev_filter_equals_single_vector_filter(stencil, degree):
    a, half, diag, ody, odx = stencil
    h, w = a.shape
    deg = np.empty((h, w))
    _k.stencil_product(half, diag, ody, odx, np.ones((h, w)), deg)
    scale = 1.0 / np.sqrt(deg)
    m = 11
    x0 = np.random.default_rng(degree).standard_normal((h, w, m))
    coef = (1.3, -0.2, 2.6, -0.4, degree)
    out = np.empty_like(x0)
    _b.block_chebyshev_filter(half, diag, ody, odx, scale, x0, *coef, out)
    single = np.empty((h, w))
    for j in range(m):
        col = np.ascontiguousarray(x0[:, :, j])
        _k.chebyshev_filter(half, diag, ody, odx, scale, col, *coef, single)
        assert np.array_equal(out[:, :, j], single)
    if degree >= 3:  # in place: the same bits
        inplace = x0.copy()
        _b.block_chebyshev_filter(half, diag, ody, odx, scale, inplace, *coef, inplace)
        assert np.array_equal(inplace, out)


def test_block_interpolate_is_the_affinity_weighted_mean(stencil):
    a, half, diag, ody, odx = stencil
    h, w = a.shape
    _, _, d = _coarsen(half, diag, ody, odx, 5)
    hc, wc = (h + 1) // 2, (w + 1) // 2
    coarse = np.random.default_rng(1).standard_normal((hc * wc, 4))
    fine = _interpolate(half, diag, ody, odx, d, coarse)
    W = _dense(half, diag, ody, odx)
    spread = np.zeros((h, w, 4))
    spread[::2, ::2] = coarse.reshape(hc, wc, 4)
    expected = (W @ spread.reshape(h * w, 4)) / d.reshape(-1, 1)
    np.testing.assert_allclose(fine, expected, rtol=1e-12, atol=1e-12)


def test_cue_sums_equal_the_sums_of_the_stack():
    rng = np.random.default_rng(2)
    yy, xx = np.mgrid[:64, :72]
    img = np.stack([(yy * 3) % 256, (xx * 5) % 256, ((yy + xx) * 2) % 256], -1)
    img = np.clip(img + rng.integers(-20, 20, img.shape), 0, 255).astype(np.uint8)
    cues, _ = local_cues(img)
    sets = (MPB_WEIGHTS["color"], GPB_WEIGHTS["color"][:12])
    sums = local_cue_sums(img, sets)
    for got, weights in zip(sums, sets):
        assert np.array_equal(got, _weighted(cues, weights))


def test_normalized_band_is_a_band_of_the_normalized_product(stencil):
    a, half, diag, ody, odx = stencil
    h, w = a.shape
    deg = np.empty((h, w))
    _k.stencil_product(half, diag, ody, odx, np.ones((h, w)), deg)
    scale = 1.0 / np.sqrt(deg)
    u = np.random.default_rng(9).standard_normal((h, w, 6))
    whole = np.empty_like(u)
    _b.block_chebyshev_filter(half, diag, ody, odx, scale, u, 1.0, 0.0, 1.0, 0.0, 1, whole)
    for y0, y1 in ((0, 7), (7, 30), (30, h), (0, h)):
        band = _b.block_normalized_band(
            half, diag, ody, odx, scale, u, y0, y1, np.empty((y1 - y0, w, 6))
        )
        assert np.array_equal(band, whole[y0:y1])
