"""Per-image class areas from sparse records (the engine's per-image rows and bootstrap):
the compiled pass gives the sums of each image's dense confusion matrix."""

from __future__ import annotations

import numpy as np

from segbench.semantic._family import _areas


def test_areas_of_sparse_records_are_the_dense_row_and_column_sums():
    rng = np.random.default_rng(3)
    c = 7
    records, dense = [], []
    for density in (0.0, 0.1, 0.5, 1.0, 1.0):
        conf = rng.integers(1, 1000, (c, c)) * (rng.uniform(size=(c, c)) < density)
        nz = np.flatnonzero(conf)
        records.append((nz, conf.ravel()[nz]))
        dense.append(conf)
    tp, gt_area, pred_area = _areas(records, c)
    for k, conf in enumerate(dense):
        np.testing.assert_array_equal(tp[k], np.diag(conf))
        np.testing.assert_array_equal(gt_area[k], conf.sum(axis=1))
        np.testing.assert_array_equal(pred_area[k], conf.sum(axis=0))
    assert tp.dtype == gt_area.dtype == pred_area.dtype == np.float64
    assert all(a.shape == (0, c) for a in _areas([], c))
