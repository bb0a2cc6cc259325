"""human_counts matches each unordered pair of annotators once (Matcher.match takes the
smaller map as its rows either way round): the counts equal the definition, every
ordered pair matched on its own, including maps of equal size, which are solved twice."""

from __future__ import annotations

import numpy as np

from segbench.boundary import shared_matcher
from segbench.primitives import human_counts


def _ordered_pairs(humans, max_dist):
    """The definition: annotator j as the detection against every other k."""
    rows = np.zeros((len(humans), 4), np.int64)
    matcher = shared_matcher(humans[0].shape, max_dist)
    for j, hj in enumerate(humans):
        acc = np.zeros(hj.shape, bool)
        for k, hk in enumerate(humans):
            if k != j:
                m1, m2 = matcher.match(hj, hk)
                acc |= m1
                rows[j, 0] += int(m2.sum())
                rows[j, 1] += int(np.count_nonzero(hk))
        rows[j, 2:] = int(acc.sum()), int(np.count_nonzero(hj))
    return rows


def _lines(rng, shape, n):
    m = np.zeros(shape, bool)
    for _ in range(n):
        y, x = rng.integers(0, shape[0]), rng.integers(0, shape[1] - 20)
        m[y, x:x + rng.integers(5, 20)] = True
        y, x = rng.integers(0, shape[0] - 20), rng.integers(0, shape[1])
        m[y:y + rng.integers(5, 20), x] = True
    return m


def test_one_match_per_pair_gives_the_ordered_pairs_counts():
    rng = np.random.default_rng(5)
    shape = (60, 80)
    for trial in range(20):
        humans = [_lines(rng, shape, rng.integers(1, 6)) for _ in range(rng.integers(2, 6))]
        if trial % 4 == 0:       # two maps of exactly the same size (solved twice)
            humans.append(np.roll(humans[0], 2, axis=1))
        expected = _ordered_pairs(humans, 0.02)
        assert (human_counts(humans, max_dist=0.02, per_annotator=True) == expected).all()
        assert (human_counts(humans, max_dist=0.02) == expected.sum(axis=0)).all()


def test_maps_of_equal_size_in_parallel_lines():
    """Equal sizes, several optimal matchings: still each direction's own solve."""
    a = np.zeros((30, 40), bool)
    a[10, 5:30] = True
    b = np.zeros((30, 40), bool)
    b[11, 6:31] = True
    c = np.zeros((30, 40), bool)
    c[12, 4:29] = True
    humans = [a, b, c]
    assert (human_counts(humans, max_dist=0.05, per_annotator=True)
            == _ordered_pairs(humans, 0.05)).all()
