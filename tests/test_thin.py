"""thin == MATLAB/Octave bwmorph(B, 'thin', n).

The truth is the Octave oracle in fixtures/bsr-official/thin/. skimage.morphology.thin
implements the same algorithm and agrees with the oracle on every fixture; it is the
independent reference for the hand-built and randomized cases. The one place skimage
differs from MATLAB is ``max_num_iter=0``, which skimage reads as "until stable"
(``max_num_iter or np.inf``) while bwmorph(B, 'thin', 0) returns B: we follow MATLAB and
never compare skimage at 0 iterations.
"""

from pathlib import Path

import numpy as np
import pytest
from scipy import ndimage as ndi
from skimage.morphology import thin as sk_thin

from segbench.primitives._thin import _LUT1, _LUT2, thin, thin_frames
from segbench.errors import InputError

from conftest import FIXTURES, require

THIN_DIR = FIXTURES / "bsr-official" / "thin"
NAMES = (sorted(p.name[: -len("_in.png")] for p in THIN_DIR.glob("*_in.png"))
         if THIN_DIR.is_dir() else ["<fixtures absent>"])


def _png(path: Path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as im:
        return np.asarray(im)


def _summary() -> dict:
    rows = {}
    for line in (THIN_DIR / "thin_summary.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            f = line.split()
            rows[f[0]] = tuple(int(v) for v in f[1:6])
    return rows


# ----------------------------------------------------------------------------------------
# The oracle
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_matches_octave_bwmorph(name):
    require(THIN_DIR)
    raw = _png(THIN_DIR / f"{name}_in.png")
    exp1 = _png(THIN_DIR / f"{name}_thin1.png") > 0
    expinf = _png(THIN_DIR / f"{name}_thinInf.png") > 0
    rows, cols, n_in, n_thin1, n_thininf = _summary()[name]
    assert raw.shape == (rows, cols) and np.count_nonzero(raw) == n_in
    assert (exp1.sum(), expinf.sum()) == (n_thin1, n_thininf)

    before = raw.copy()
    got1 = thin(raw, 1)           # uint8 0/255 input
    gotinf = thin(raw > 0)        # bool input, max_iter=None
    assert np.array_equal(raw, before)
    assert got1.dtype == np.bool_ and got1.shape == raw.shape
    np.testing.assert_array_equal(got1, exp1)
    np.testing.assert_array_equal(gotinf, expinf)
    np.testing.assert_array_equal(thin(raw, np.inf), expinf)
    np.testing.assert_array_equal(thin(gotinf), gotinf)  # idempotent
    # skimage agrees with the oracle here (checked, so a future disagreement is seen)
    np.testing.assert_array_equal(sk_thin(raw > 0, 1), exp1)
    np.testing.assert_array_equal(sk_thin(raw > 0), expinf)


# ----------------------------------------------------------------------------------------
# Hand-built cases (no fixtures needed)
# ----------------------------------------------------------------------------------------


def test_luts_from_definitions():
    # bit k-1 = x_k; x1 = E, x2 = NE, x3 = N, x4 = NW, x5 = W, x6 = SW, x7 = S, x8 = SE
    E, NE, N, NW, W, SW, S, SE = (1 << k for k in range(8))
    assert _LUT1.shape == _LUT2.shape == (256,)
    assert _LUT1[0] == _LUT2[0] == 0            # isolated pixel: X_H = 0
    assert _LUT1[E] == _LUT2[E] == 0            # line end: n1 = n2 = 1 < 2
    assert _LUT1[E | W] == _LUT2[E | W] == 0    # line interior: X_H = 2
    assert _LUT1[255] == _LUT2[255] == 0        # interior pixel: X_H = 0
    # straight top edge of a blob (background to the north): first subiteration only;
    # bottom edge: second only
    top = E | W | SW | S | SE
    assert _LUT1[top] == 1 and _LUT2[top] == 0
    bottom = E | W | NW | N | NE
    assert _LUT1[bottom] == 0 and _LUT2[bottom] == 1
    # west edge (x5 = 0): G3 fails (x1 = 1, x2 = 1), G3' holds (x5 = 0); east: mirrored
    west = N | NE | E | SE | S
    assert _LUT1[west] == 0 and _LUT2[west] == 1
    east = N | NW | W | SW | S
    assert _LUT1[east] == 1 and _LUT2[east] == 0
    # skimage's tables are built independently (hard-coded); they must agree
    from skimage.morphology import _skeletonize as sk_mod

    np.testing.assert_array_equal(_LUT1.astype(bool), np.asarray(sk_mod.G123_LUT, bool))
    np.testing.assert_array_equal(_LUT2.astype(bool), np.asarray(sk_mod.G123P_LUT, bool))


def test_single_pixel_stays():
    b = np.zeros((5, 5), bool)
    b[2, 2] = True
    np.testing.assert_array_equal(thin(b), b)
    c = np.zeros((3, 3), bool)
    c[0, 0] = True                               # at the image corner
    np.testing.assert_array_equal(thin(c), c)
    np.testing.assert_array_equal(thin(np.ones((1, 1), bool)), np.ones((1, 1), bool))


@pytest.mark.parametrize("kind", ["row", "col", "diag", "border_row", "zigzag"])
def test_one_pixel_line_stays(kind):
    b = np.zeros((20, 30), bool)
    if kind == "row":
        b[7, 3:25] = True
    elif kind == "col":
        b[2:18, 11] = True
    elif kind == "diag":
        b[np.arange(15) + 2, np.arange(15) + 5] = True
    elif kind == "border_row":
        b[0, :] = True
    else:
        cols = np.arange(2, 28)
        b[5 + (cols // 3) % 2, cols] = True
        b = sk_thin(b)  # make it 8-thin first; must then be a fixed point
    np.testing.assert_array_equal(thin(b), b)
    np.testing.assert_array_equal(thin(b, 1), b)


def test_filled_rectangle():
    b = np.zeros((15, 40), bool)
    b[3:12, 4:36] = True  # 9 x 32
    got = thin(b)
    ref = sk_thin(b)
    np.testing.assert_array_equal(got, ref)
    assert got.sum() == ref.sum()
    assert not (got & ~b).any()
    # line-like: a horizontal medial segment, one pixel wide, on one row
    rows = np.nonzero(got.any(axis=1))[0]
    assert 4 <= got.sum() <= 32 and len(rows) <= 2
    assert (got.sum(axis=0) <= 1).all()
    # the whole image being foreground: the outside counts as background
    full = np.ones((12, 17), bool)
    np.testing.assert_array_equal(thin(full), sk_thin(full))
    assert 0 < thin(full).sum() < full.sum()


def test_empty_and_degenerate_shapes():
    for shape in [(0, 0), (0, 5), (5, 0), (1, 1), (1, 7), (7, 1)]:
        z = np.zeros(shape, bool)
        out = thin(z)
        assert out.shape == shape and out.dtype == np.bool_ and not out.any()
    for shape in [(1, 7), (7, 1), (2, 9), (9, 2)]:
        o = np.ones(shape, bool)
        np.testing.assert_array_equal(thin(o), sk_thin(o))


def test_max_iter_zero_returns_copy():
    rng = np.random.default_rng(3)
    b = rng.random((20, 20)) > 0.4
    out = thin(b, 0)
    np.testing.assert_array_equal(out, b)
    assert out is not b and not np.shares_memory(out, b)
    out[:] = False
    assert b.any()  # input untouched
    u = (b * 255).astype(np.uint8)
    np.testing.assert_array_equal(thin(u, 0), b)


def test_iterations_compose_and_idempotence():
    x = ndi.gaussian_filter(np.random.default_rng(5).random((60, 80)), 2.0)
    b = x > np.quantile(x, 0.4)
    one = thin(b, 1)
    np.testing.assert_array_equal(thin(one, 1), thin(b, 2))
    np.testing.assert_array_equal(thin(thin(b, 2), 3), thin(b, 5))
    full = thin(b)
    np.testing.assert_array_equal(thin(full), full)
    np.testing.assert_array_equal(thin(b, 10_000), full)
    assert not np.array_equal(one, full)  # the case really needs several iterations


def test_dtypes_layout_and_input_untouched():
    x = ndi.gaussian_filter(np.random.default_rng(7).random((40, 50)), 1.5)
    b = x > np.median(x)
    want = thin(b)
    for arr in [b.astype(np.uint8) * 255, b.astype(np.int32) * -3,
                b.astype(np.float64) * 0.5, b.astype(np.float32), b.astype(np.uint16),
                b.tolist()]:
        np.testing.assert_array_equal(thin(arr), want)
    # non-contiguous views
    np.testing.assert_array_equal(thin(b.T), thin(np.ascontiguousarray(b.T)))
    np.testing.assert_array_equal(thin(b[::2, ::3]), thin(b[::2, ::3].copy()))
    np.testing.assert_array_equal(thin(np.asfortranarray(b)), want)
    u = b.astype(np.uint8)
    u_before = u.copy()
    b_before = b.copy()
    thin(u)
    thin(b)
    assert np.array_equal(u, u_before) and np.array_equal(b, b_before)


def test_invalid_input():
    with pytest.raises(InputError, match="2-D"):
        thin(np.zeros(5, bool))
    with pytest.raises(ValueError, match="2-D"):
        thin(np.zeros((2, 3, 4), bool))
    with pytest.raises(InputError, match="2-D"):
        thin(np.True_)
    with pytest.raises(InputError, match="NaN"):
        thin(np.array([[0.0, np.nan]]))
    with pytest.raises(InputError, match="dtype"):
        thin(np.array([["a", "b"]]))
    for bad in [-1, 1.5, "2", -np.inf]:
        with pytest.raises(InputError, match="max_iter"):
            thin(np.zeros((3, 3), bool), bad)
    # integral floats and numpy integers are fine
    np.testing.assert_array_equal(thin(np.ones((3, 3)), 2.0), thin(np.ones((3, 3)), 2))
    np.testing.assert_array_equal(thin(np.ones((3, 3)), np.int64(1)),
                                  thin(np.ones((3, 3)), 1))


# ----------------------------------------------------------------------------------------
# Randomized comparison against skimage (an independent implementation: dense
# correlation per subiteration, where ours updates a sparse work list)
# ----------------------------------------------------------------------------------------


def _topology(b):
    n_fg = ndi.label(b, np.ones((3, 3)))[1]                       # 8-connected objects
    n_bg = ndi.label(np.pad(~b, 1, constant_values=True))[1]      # 4-connected background
    return n_fg, n_bg


def test_random_blobs_match_skimage():
    rng = np.random.default_rng(20240611)
    for k in range(400):
        h, w = rng.integers(1, 48, size=2)
        x = rng.random((h, w))
        if k % 4:
            x = ndi.gaussian_filter(x, rng.uniform(0.5, 2.5))
        b = x > np.quantile(x, rng.uniform(0.1, 0.9))
        it = [None, 1, 2, 3, 7][k % 5]
        got = thin(b, it)
        np.testing.assert_array_equal(got, sk_thin(b, it), err_msg=f"case {k}, n={it}")
        if it is None:
            assert _topology(got) == _topology(b), f"case {k}"


def test_large_thick_map_matches_skimage():
    # many iterations on a 481 x 321 map: exercises the sparse re-examination
    x = ndi.gaussian_filter(np.random.default_rng(11).random((481, 321)), 6.0)
    b = x > np.quantile(x, 0.45)
    np.testing.assert_array_equal(thin(b), sk_thin(b))
    np.testing.assert_array_equal(thin(b, 4), sk_thin(b, 4))


def test_thin_frames_equal_thinning_each_thresholded_map():
    rng = np.random.default_rng(31)
    for trial in range(40):
        h, w = (int(v) for v in rng.integers(1, 60, 2))
        # smooth fields give thick blobs (much thinning); sparse noise gives thin specks
        pb = ndi.gaussian_filter(rng.uniform(size=(h, w)), float(rng.uniform(0.5, 3)))
        pb = (pb - pb.min()) / (np.ptp(pb) + 1e-12)
        if trial % 3 == 0:
            pb[rng.uniform(size=(h, w)) < 0.7] = 0
        ths = rng.uniform(-0.1, 1.1, int(rng.integers(1, 12)))  # unsorted, some outside
        n_iter = [None, 0, 1, 3][trial % 4]
        got = thin_frames(pb, ths, n_iter)
        assert len(got) == len(ths)
        for t, frame in zip(ths, got):
            want = np.flatnonzero(thin(pb >= t, n_iter))
            np.testing.assert_array_equal(frame, want, err_msg=f"trial {trial} t={t}")
            assert frame.dtype == np.int64


def test_thin_frames_on_a_real_soft_map():
    # a BSDS-sized map with thick ridges: every frame equals thinning its map
    rng = np.random.default_rng(32)
    pb = ndi.gaussian_filter(rng.uniform(size=(321, 481)), 4)
    pb = (pb - pb.min()) / np.ptp(pb)
    ths = np.linspace(0.01, 0.99, 99)
    for t, frame in zip(ths, thin_frames(pb, ths)):
        np.testing.assert_array_equal(frame, np.flatnonzero(thin(pb >= t)))


def test_thin_frames_refuses_bad_input():
    with pytest.raises(InputError, match="NaN"):
        thin_frames(np.full((3, 3), np.nan), [0.5])
    with pytest.raises(InputError, match="2-D"):
        thin_frames(np.zeros(4), [0.5])
    with pytest.raises(InputError, match="max_iter"):
        thin_frames(np.zeros((2, 2)), [0.5], -1)
    assert thin_frames(np.zeros((2, 2)), []) == []
