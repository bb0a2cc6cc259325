"""A uint8 ground truth beside a wider prediction (and the reverse): labels out of range
on the wide side are reported, on maps without runs (the per-pixel counting path) too."""

from __future__ import annotations

import numpy as np
import pytest

from segbench.errors import InputError
from segbench.semantic import SemanticEval


@pytest.mark.parametrize("wide", [np.int32, np.int64, np.uint16])
@pytest.mark.parametrize("bad", [100000, 300, -5])
def test_out_of_range_label_beside_uint8_is_reported(wide, bad):
    if bad < 0 and np.dtype(wide).kind == "u":
        pytest.skip("an unsigned map holds no negative label")
    if bad > np.iinfo(wide).max:
        pytest.skip("does not fit")
    rng = np.random.default_rng(0)
    narrow = rng.integers(0, 150, (64, 64)).astype(np.uint8)
    other = rng.integers(0, 150, (64, 64)).astype(wide)
    other[10, 10] = bad
    for gt, pred in ((narrow, other), (other, narrow)):
        ev = SemanticEval(150, boundary_dilation=None)
        with pytest.raises(InputError, match=str(bad)):
            ev.update(gt, pred)
        assert ev.n_images == 0
    good = other.copy()
    good[10, 10] = 7
    ev = SemanticEval(150, boundary_dilation=None)
    ev.update(narrow, good)
    want = np.bincount(narrow.astype(np.int64).ravel() * 150 + good.astype(np.int64).ravel(),
                       minlength=150 * 150).reshape(150, 150)
    np.testing.assert_array_equal(ev.confusion(), want)
