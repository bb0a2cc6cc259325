"""Exact pixel correspondence: against brute force and against the official matcher."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image
from scipy.optimize import linear_sum_assignment

from conftest import FIXTURES, require
from segbench.boundary import Matcher, correspond_pixels
from segbench.errors import InputError

CORRESPOND = FIXTURES / "bsr-official" / "correspond"


def brute_force(b1, b2, max_dist):
    """Optimum of the same objective by a dense assignment (independent solver)."""
    radius = max_dist * math.hypot(*b1.shape)
    outlier = int(np.rint(100 * 100 * radius))
    p1, p2 = np.argwhere(b1), np.argwhere(b2)
    if len(p1) == 0 or len(p2) == 0:
        return 0, 0
    d2 = ((p1[:, None, :] - p2[None, :, :]) ** 2).sum(-1).astype(float)
    cost = np.rint(np.sqrt(d2) * 100) - outlier   # relative to leaving both unmatched
    cost[d2 > radius * radius] = 0                 # not a candidate pair
    r, c = linear_sum_assignment(cost)
    ok = cost[r, c] < 0
    return int(ok.sum()), int(cost[r, c][ok].sum())


def pair_cost(b1, b2, m1, m2, max_dist):
    """Cost of our matching, recovered from a dense re-solve restricted to matched pixels."""
    return brute_force(m1, m2, max_dist)[1]


@pytest.mark.parametrize("seed", range(60))
def test_optimal_on_random_maps(seed):
    rng = np.random.default_rng(seed)
    h, w = rng.integers(5, 30, 2)
    density = rng.uniform(0.02, 0.4)
    b1 = rng.random((h, w)) < density
    b2 = rng.random((h, w)) < density
    max_dist = rng.uniform(0.01, 0.2)
    m1, m2 = correspond_pixels(b1, b2, max_dist)
    n_opt, cost_opt = brute_force(b1, b2, max_dist)
    assert m1.sum() == m2.sum() == n_opt
    assert not (m1 & ~b1).any() and not (m2 & ~b2).any()
    # the matched pixels admit a matching as cheap as the optimum
    assert pair_cost(b1, b2, m1, m2, max_dist) == cost_opt


@pytest.mark.parametrize("seed", range(20))
def test_frames_equal_independent_solves(seed):
    """Warm-started sequence (nested and non-nested frames) equals solving each alone."""
    rng = np.random.default_rng(100 + seed)
    h, w = rng.integers(8, 30, 2)
    fixed = rng.random((h, w)) < 0.2
    max_dist = rng.uniform(0.02, 0.15)
    base = rng.random((h, w))
    frames = [np.flatnonzero(base < t) for t in np.linspace(0.6, 0.05, 6)]
    frames.insert(2, np.flatnonzero(rng.random((h, w)) < 0.3))  # a jump
    frames.insert(5, frames[4])                                  # a repeat
    n_matched, flags = Matcher((h, w), max_dist).match_frames(fixed, frames)
    for f, pix in enumerate(frames):
        frame = np.zeros(h * w, bool)
        frame[pix] = True
        n_opt, _ = brute_force(frame.reshape(h, w), fixed, max_dist)
        assert n_matched[f] == n_opt == flags[f].sum()


@pytest.mark.parametrize("seed", range(12))
def test_match_is_the_walk_of_one_frame(seed):
    """Matcher.match (one frame, called directly) matches the same pixels as a walk of
    that one frame, with either map the larger."""
    rng = np.random.default_rng(300 + seed)
    h, w = rng.integers(10, 40, 2)
    b1 = rng.random((h, w)) < rng.uniform(0.05, 0.3)
    b2 = rng.random((h, w)) < rng.uniform(0.05, 0.3)
    m = Matcher((h, w), rng.uniform(0.03, 0.2))
    m1, m2 = m.match(b1, b2)
    n, flags = m.match_frames(b1, [np.flatnonzero(b2)])
    assert m1.sum() == n[0] == m2.sum()
    assert np.array_equal(np.flatnonzero(m2), np.flatnonzero(b2)[flags[0]])


def test_deterministic_and_symmetric_counts():
    rng = np.random.default_rng(7)
    b1 = rng.random((40, 50)) < 0.15
    b2 = rng.random((40, 50)) < 0.15
    first = correspond_pixels(b1, b2, 0.05)
    for _ in range(3):
        again = correspond_pixels(b1, b2, 0.05)
        assert all(np.array_equal(x, y) for x, y in zip(first, again))
    swapped = correspond_pixels(b2, b1, 0.05)
    assert swapped[0].sum() == first[1].sum()


def test_edge_cases():
    z = np.zeros((10, 12), bool)
    one = z.copy()
    one[3, 4] = True
    assert correspond_pixels(z, z)[0].sum() == 0
    assert correspond_pixels(one, z)[0].sum() == 0
    m1, m2 = correspond_pixels(one, one)
    assert m1[3, 4] and m2[3, 4]
    with pytest.raises(InputError, match="shape"):
        correspond_pixels(z, np.zeros((12, 10)))
    with pytest.raises(InputError, match="max_dist"):
        correspond_pixels(one, one, 0)


def _official_rows():
    path = require(CORRESPOND / "variation.txt")
    for line in path.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        f = line.split()
        yield f[0], float(f[1]), int(f[2]), int(f[3]), [int(x) for x in f[8].split(",")]


def test_against_official_correspond_pixels():
    """>= the best official call everywhere; equal where the official never varies."""
    rows = list(_official_rows())
    assert len(rows) == 42
    for name, max_dist, n1, n2, matched in rows:
        a = np.asarray(Image.open(CORRESPOND / "pairs" / f"{name}_A.png")) != 0
        b = np.asarray(Image.open(CORRESPOND / "pairs" / f"{name}_B.png")) != 0
        assert (a.sum(), b.sum()) == (n1, n2)
        m1, m2 = correspond_pixels(a, b, max_dist)
        assert m1.sum() == m2.sum()
        assert m1.sum() >= max(matched), (name, max_dist, m1.sum(), matched)
        if min(matched) == max(matched):
            assert m1.sum() == matched[0], (name, max_dist)
    # a map matched with itself is matched completely (the official: 440-442 of 442)
    a = np.asarray(Image.open(CORRESPOND / "pairs" / "01_identical_A.png")) != 0
    assert correspond_pixels(a, a)[0].sum() == a.sum()


@pytest.mark.parametrize("seed", range(40))
def test_frames_with_random_churn_equal_independent_solves(seed):
    """Pixels come and go between frames (as thinning makes them); every frame exact."""
    rng = np.random.default_rng(1000 + seed)
    h, w = rng.integers(10, 26, 2)
    fixed = rng.random((h, w)) < rng.uniform(0.1, 0.3)
    max_dist = rng.uniform(0.03, 0.2)
    frame = rng.random((h, w)) < rng.uniform(0.05, 0.5)
    frames = []
    for _ in range(8):
        flip = rng.random((h, w)) < rng.uniform(0.0, 0.15)
        frame = frame ^ flip
        frames.append(np.flatnonzero(frame))
    n_matched, flags = Matcher((h, w), max_dist).match_frames(fixed, frames)
    for f, pix in enumerate(frames):
        bm = np.zeros(h * w, bool)
        bm[pix] = True
        n_opt, _ = brute_force(bm.reshape(h, w), fixed, max_dist)
        assert n_matched[f] == n_opt == flags[f].sum(), (f, n_matched[f], n_opt)


def test_one_matcher_reused_across_annotators_and_frame_lists():
    """The frame pool (frames concatenated, diffs between neighbours) is kept for the
    last list seen: reusing a Matcher with other lists, reordered or edited copies, and
    other fixed maps gives what fresh matchers give."""
    rng = np.random.default_rng(77)
    h, w = 24, 31
    base = rng.random((h, w))
    frames_a = [np.flatnonzero(base < t) for t in np.linspace(0.7, 0.05, 9)]
    frames_b = frames_a[::-1]                       # same arrays, other order
    frames_c = list(frames_a)
    frames_c[3] = np.flatnonzero(rng.random((h, w)) < 0.4)  # one frame replaced
    humans = [rng.random((h, w)) < p for p in (0.1, 0.25, 0.4)]
    shared = Matcher((h, w), 0.1)
    for frames in (frames_a, frames_a, frames_b, frames_c, frames_a):
        for human in humans:
            got_n, got_flags = shared.match_frames(human, frames)
            want_n, want_flags = Matcher((h, w), 0.1).match_frames(human, frames)
            np.testing.assert_array_equal(got_n, want_n)
            for g, wf in zip(got_flags, want_flags):
                np.testing.assert_array_equal(g, wf)


def _check_certificate(rows, cols, end, matcher, shape):
    """The potentials a run ends with certify its matching as optimal (LP duality):
    every candidate edge has reduced cost >= 0, pairs have 0; a matched row's outlier
    edge is not cheaper (u <= outlier), an unmatched row sits on it (u >= outlier);
    matched columns have potential <= 0, free ones >= 0."""
    u, partner, v = end
    partner = np.where(partner >= 0, cols[np.maximum(partner, 0)], -1)   # as pixels
    w = shape[1]
    v_of = dict(zip(cols.tolist(), v.tolist()))
    matched_cols = set(partner[partner >= 0].tolist())
    assert len(matched_cols) == int((partner >= 0).sum())      # one-to-one
    for c, vc in v_of.items():
        assert (vc <= 0) if c in matched_cols else (vc >= 0)
    r2 = matcher.radius ** 2
    for q, uq, pq in zip(rows.tolist(), u.tolist(), partner.tolist()):
        qy, qx = divmod(q, w)
        assert (uq <= matcher.outlier) if pq >= 0 else (uq >= matcher.outlier)
        for c, vc in v_of.items():
            cy, cx = divmod(c, w)
            d2 = (qy - cy) ** 2 + (qx - cx) ** 2
            if d2 <= r2:
                rc = int(np.rint(100 * math.sqrt(d2))) - uq - vc
                assert rc >= 0 and (rc == 0 or c != pq)
            else:
                assert c != pq


@pytest.mark.parametrize("seed", range(12))
def test_runs_hand_over_an_optimum_with_valid_potentials(seed):
    """A run of frames starts from the previous run's optimum with rows and columns
    swapped (``_transposed``); the optimum the last run ends with must carry
    potentials that prove it, and every frame must be exact."""
    from segbench.primitives import _solver as solver
    rng = np.random.default_rng(500 + seed)
    h, w = rng.integers(12, 28, 2)
    fixed = rng.random((h, w)) < 0.2
    max_dist = rng.uniform(0.05, 0.2)
    matcher = Matcher((h, w), max_dist)
    base = rng.random((h, w))
    # frames from far smaller to far larger than the fixed map: the walk crosses over
    frames = [np.flatnonzero(base < t) for t in np.linspace(0.02, 0.5, 7)]
    fixed_pix = np.flatnonzero(fixed)
    sizes = np.array([f.size for f in frames])
    assert sizes.min() < fixed_pix.size < sizes.max()           # a hand-over happens
    pool = matcher._frame_pool(frames)
    n_matched, _, _, _, (rows, cols, end) = solver._walk_frames(
        h, w, fixed_pix, pool, matcher._half, matcher._cost_tab, matcher.outlier,
        matcher._workspace(), matcher._solver(max(fixed_pix.size, sizes.max())))
    _check_certificate(rows, cols, end, matcher, (h, w))
    for f, pix in enumerate(frames):
        bm = np.zeros(h * w, bool)
        bm[pix] = True
        n_opt, _ = brute_force(bm.reshape(h, w), fixed, max_dist)
        assert n_matched[f] == n_opt


def test_frames_from_thin_frames_are_pooled_without_a_copy():
    """Frames that are consecutive views of one array (as thin_frames returns them) are
    used in place; the same frames as separate copies give the same results."""
    from segbench.boundary import thin_frames
    rng = np.random.default_rng(3)
    pb = rng.random((30, 40)) ** 3
    frames = thin_frames(pb, np.linspace(0.05, 0.95, 12))
    fixed = rng.random((30, 40)) < 0.1
    matcher = Matcher((30, 40), 0.05)
    pool = matcher._frame_pool(frames)
    assert np.shares_memory(pool[1], frames[0].base)
    got_n, got_flags = matcher.match_frames(fixed, frames)
    copies = [f.copy() for f in frames]
    fresh = Matcher((30, 40), 0.05)
    assert not np.shares_memory(fresh._frame_pool(copies)[1], copies[0])
    want_n, want_flags = fresh.match_frames(fixed, copies)
    np.testing.assert_array_equal(got_n, want_n)
    for g, w in zip(got_flags, want_flags):
        np.testing.assert_array_equal(g, w)
