"""Baseline detectors: range, thinness, response on true boundaries, exact hysteresis."""

import numpy as np
import pytest
from scipy import ndimage

from segbench.algorithms.edges import canny_soft, gradient_magnitude, hysteresis_levels
from segbench.boundary import seg2bdry
from segbench.datasets.synthetic import make_synthetic_dataset
from segbench.errors import InputError

DETECTORS = [gradient_magnitude, canny_soft]


@pytest.fixture(scope="module")
def items():
    return make_synthetic_dataset(4, seed=11)


def _step(h=40, w=50, col=25, lo=0.2, hi=0.8):
    img = np.full((h, w), lo)
    img[:, col:] = hi
    return img


@pytest.mark.parametrize("detect", DETECTORS)
def test_range_dtype_shape(detect, items):
    img = items[0].image
    for x in (img, img.astype(np.float64) / 255, img[..., 0], img[..., :1]):
        pb = detect(x)
        assert pb.shape == img.shape[:2] and pb.dtype == np.float64
        assert pb.min() >= 0.0 and pb.max() < 1.0
        assert pb.max() > 0.8  # the strongest edges approach 1 without a plateau at 1
        assert np.count_nonzero(pb >= 0.99) < 0.002 * pb.size


@pytest.mark.parametrize("detect", DETECTORS)
def test_step_edge_is_thin_and_strong(detect):
    pb = detect(_step())
    rows = pb[5:-5]  # away from the top and bottom borders
    assert np.all(rows[:, 23:27].max(axis=1) > 0.8)
    assert np.all(np.count_nonzero(rows, axis=1) <= 2)  # suppressed to a thin line
    assert pb[:, :15].max() == 0.0 and pb[:, 36:].max() == 0.0


def test_colour_edge_seen_in_lab_not_grey():
    # Two colours of equal luminance: only the colour gradient sees the boundary.
    img = np.zeros((30, 40, 3))
    img[:, :20] = (0.6, 0.3, 0.5)
    img[:, 20:] = (0.3, 0.4, 0.9)
    grey = img @ np.array([0.2125, 0.7154, 0.0721])
    img[:, 20:] *= grey[0, 0] / grey[0, 30]
    lab = gradient_magnitude(img, scale=5.0)
    flat = gradient_magnitude(img, color="grey", scale=5.0)
    assert lab[:, 19:21].max(axis=1).min() > 0.9
    assert flat.max() < 0.05


@pytest.mark.parametrize("detect", DETECTORS)
def test_higher_on_true_boundaries(detect, items):
    for it in items:
        pb = detect(it.image)
        bdry = seg2bdry(it.truth)
        near = ndimage.binary_dilation(bdry, iterations=1)
        far = ndimage.distance_transform_edt(~bdry) > 4
        # The best response across a boundary, against the typical one far from all.
        on = ndimage.maximum_filter(pb, size=3)[bdry].mean()
        off = pb[far].mean()
        assert on > 4 * off, (it.iid, on, off)
        assert pb[near].mean() > 2.5 * off


def test_scaling_per_image_vs_fixed():
    img = _step()
    half = 0.5 + 0.5 * (img - 0.5)  # the same scene at half the contrast
    for detect in DETECTORS:
        np.testing.assert_allclose(detect(img), detect(half), atol=1e-12)
    strong = gradient_magnitude(img, color="grey", scale=100.0, nms=False)
    weak = gradient_magnitude(half, color="grey", scale=100.0, nms=False)
    np.testing.assert_allclose(-np.log1p(-weak), -np.log1p(-strong) / 2, atol=1e-12)


def test_canny_threshold_is_hysteresis(items):
    img = items[1].image
    # Both maps are 1 - exp(-x / s) with the same per-image s; undo it to compare.
    level = -np.log1p(-canny_soft(img))
    ridge = -np.log1p(-gradient_magnitude(img, color="grey", sigma=2.0))
    for t in (0.3, 0.8, 1.5, 3.0):
        assert np.array_equal(level >= t, _hysteresis_reference(ridge, 0.4 * t, t)), t
    # Hysteresis lifts weak ridge pixels that lie on strong contours, never lowers any.
    assert np.count_nonzero(level > ridge * (1 + 1e-9)) > 0
    assert np.all(level >= ridge * (1 - 1e-9))


def _hysteresis_reference(m, low, high):
    lab, n = ndimage.label(m >= low, structure=np.ones((3, 3)))
    if n == 0:
        return np.zeros(m.shape, bool)
    top = np.asarray(ndimage.maximum(m, lab, np.arange(n + 1)))
    return (lab > 0) & (top[lab] >= high)


@pytest.mark.parametrize("ratio", [0.25, 0.4, 0.7, 1.0])
def test_hysteresis_levels_exact(ratio):
    rng = np.random.default_rng(int(ratio * 100))
    m = rng.random((45, 60)) * (rng.random((45, 60)) < 0.55)
    m[rng.random(m.shape) < 0.2] = 0.5  # ties
    f = hysteresis_levels(m, ratio)
    for t in np.linspace(0.01, 0.99, 99):
        assert np.array_equal(f >= t, _hysteresis_reference(m, ratio * t, t)), t
    assert np.all(f[m == 0] == 0)


@pytest.mark.parametrize("bad", [dict(sigma=0), dict(percentile=0), dict(scale=-1.0),
                                 dict(color="hsv")])
def test_bad_options(bad):
    with pytest.raises(InputError):
        gradient_magnitude(_step(), **bad)


def test_bad_inputs():
    with pytest.raises(InputError):
        gradient_magnitude(np.zeros((4, 4, 2)))
    with pytest.raises(InputError):
        canny_soft(_step(), low_ratio=0.0)
    assert gradient_magnitude(np.zeros((8, 8))).max() == 0.0  # flat image: no edges


@pytest.mark.parametrize("detect", DETECTORS)
@pytest.mark.parametrize("angle", [0.0, 0.5, 1.2, 2.4])
def test_orientation_is_the_tangent(detect, angle):
    """A straight step edge at angle a (its tangent, from +x towards +y, rows down):
    theta on the edge is a (mod pi), and the map is the one returned without it."""
    h = w = 64
    y, x = np.mgrid[:h, :w] - 31.5
    normal = np.array([-np.sin(angle), np.cos(angle)])          # (x, y) components
    img = np.where(x * normal[0] + y * normal[1] > 0, 0.8, 0.2)
    pb, theta = detect(img, orientation=True)
    assert np.array_equal(pb, detect(img))
    on = pb > 0.5
    on[:8] = on[-8:] = False
    on[:, :8] = on[:, -8:] = False
    err = np.abs((theta[on] - angle + np.pi / 2) % np.pi - np.pi / 2)
    assert on.sum() > 20 and np.median(err) < 0.05
