"""Compiled kernel of the 2001 Normalized Cuts graph (:mod:`._ncut2001`): the texture
affinity on the sparsity pattern of the intervening-contour affinity."""

from __future__ import annotations

import math

import numba

from ..compilation import prepare_kernels

prepare_kernels()

__all__ = []


@numba.njit(cache=True)
def texture_affinity(indptr, indices, hist, inv_sigma, data):
    """Multiply ``data`` (W's CSR values) by ``exp(-chi2(h_i, h_j) / sigma_tx)``.

    ``hist`` (n, K) float64 rows are unit-sum texton histograms; ``chi2 = 1/2 sum_b
    (h_ib - h_jb)^2 / (h_ib + h_jb)`` (bins with both zero skipped) lies in [0, 1].
    ``inv_sigma`` is ``1 / sigma_tx``. One pass over the stored pairs, so W keeps its
    pattern (the stencil form the eigensolver needs).
    """
    n, nb = hist.shape
    for i in range(n):
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            if j == i:
                continue
            c = 0.0
            for b in range(nb):
                s = hist[i, b] + hist[j, b]
                if s > 0.0:
                    d = hist[i, b] - hist[j, b]
                    c += d * d / s
            data[p] *= math.exp(-0.5 * c * inv_sigma)
