"""The Pb family (issue 15 part 2): every stage checked against a slow, direct
computation (half-disc histograms counted pixel by pixel, per-pixel least squares,
the filter formulas), the detectors' determinism and contracts, ``segbench detect``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.signal import hilbert

from conftest import DATA, require
from segbench.algorithms import (DETECTORS, assign_textons, brightness_gradient,
                                 color_gradient, detect, filter_bank, filter_responses,
                                 fit_parab,
                                 histogram_gradient, pb_2mm, pb_bg, pb_bgtg, pb_cg,
                                 pb_cgtg, pb_cues, pb_nonmax, pb_tg, pb_weights,
                                 texton_map, texture_gradient)
from segbench.algorithms._pb import _bins, _colour_similarity, _grey, _lab01
from segbench.algorithms._pb_textons import _dawson_profile2, kmeans, oe_filter
from segbench.cli import main
from segbench.errors import InputError

THETAS = np.arange(8) / 8 * np.pi


def direct_gradient(lab, nbins, r, theta, sim=None):
    """tgso.m's definition, pixel by pixel: the two half-disc histograms counted
    directly, each divided by half the disc's pixel count."""
    h, w = lab.shape
    wr = int(np.floor(max(1.0, r)))
    r = max(1.0, r)
    pts = [(v, u) for v in range(-wr, wr + 1) for u in range(-wr, wr + 1)
           if u * u + v * v <= r * r and (u, v) != (0, 0)]
    half = len(pts) / 2
    out = np.zeros((h, w))
    for y in range(h):
        for x in range(w):
            left, right = np.zeros(nbins), np.zeros(nbins)
            for v, u in pts:
                if 0 <= y + v < h and 0 <= x + u < w:
                    side = np.mod(np.arctan2(v, u) - theta, 2 * np.pi) < np.pi
                    (right if side else left)[lab[y + v, x + u]] += 1
            lo, ri = left / half, right / half
            if sim is None:
                s = lo + ri
                out[y, x] = 0.5 * np.sum(np.where(s > 0, (lo - ri) ** 2
                                                  / np.where(s > 0, s, 1), 0))
            else:
                d = np.abs(lo - ri)
                out[y, x] = d @ sim @ d
    return out


@pytest.fixture(scope="module")
def tiny():
    """A 20x24 colour image with structure (a disc, a ramp, noise), uint8."""
    rng = np.random.default_rng(3)
    yy, xx = np.mgrid[:20, :24]
    img = np.zeros((20, 24, 3))
    img[..., 0] = ((yy - 9) ** 2 + (xx - 11) ** 2 < 30) * 0.6 + 0.2
    img[..., 1] = xx / 24
    img[..., 2] = 0.5 + 0.1 * rng.standard_normal((20, 24))
    return np.round(255 * np.clip(img, 0, 1)).astype(np.uint8)


@pytest.mark.parametrize("r", [0.6, 2.0, 4.3])
def test_histogram_gradient_matches_direct_chi2(r):
    lab = np.random.default_rng(0).integers(0, 7, (20, 24)).astype(np.int32)
    g = histogram_gradient(lab, 7, r)
    for o, th in enumerate(THETAS):
        np.testing.assert_allclose(g[o], direct_gradient(lab, 7, r, th), atol=1e-14)


def test_histogram_gradient_matches_direct_similarity_form():
    lab = np.random.default_rng(1).integers(0, 9, (20, 24)).astype(np.int32)
    sim = _colour_similarity(9, 0.1)
    g = histogram_gradient(lab, 9, 3.5, similarity=sim)
    for o, th in enumerate(THETAS):
        np.testing.assert_allclose(g[o], direct_gradient(lab, 9, 3.5, th, sim),
                                   atol=1e-14)


@pytest.mark.parametrize("norient", [4, 6])
def test_histogram_gradient_other_orientation_counts(norient):
    """The shared kernel's slices follow norient (2 norient slices), both distances."""
    lab = np.random.default_rng(norient).integers(0, 9, (20, 24)).astype(np.int32)
    sim = _colour_similarity(9, 0.1)
    thetas = np.arange(norient) / norient * np.pi
    for s in (None, sim):
        g = histogram_gradient(lab, 9, 3.5, norient=norient, similarity=s)
        assert g.shape == (norient, 20, 24)
        for o, th in enumerate(thetas):
            np.testing.assert_allclose(g[o], direct_gradient(lab, 9, 3.5, th, s),
                                       atol=1e-14)


@pytest.mark.parametrize("r", [0.6, 1.5, 2.0, 4.3, 5.77, 11.54, 16.0])
def test_pb_half_discs_are_runs_of_slices(r):
    """tgso.m's half discs, mod(atan2(v, u) - theta, 2 pi) < pi over the disc without
    its centre, are exactly the slices o .. o + 7 of the shared kernel's slice map."""
    from segbench.algorithms._half_disc import pb_slice_map
    offmap, count, wr = pb_slice_map(r, 8)
    rr = max(1.0, r)
    v, u = np.mgrid[-wr:wr + 1, -wr:wr + 1]
    disc = (u * u + v * v <= rr * rr) & ((u != 0) | (v != 0))
    assert count == disc.sum() and np.array_equal(offmap >= 0, disc)
    for o, th in enumerate(THETAS):
        right = disc & (np.mod(np.arctan2(v, u) - th, 2 * np.pi) < np.pi)
        np.testing.assert_array_equal(disc & (np.mod(offmap - o, 16) < 8), right)


def test_cues_are_the_histogram_gradients_of_their_channels(tiny):
    """BG on the binned grey image, CG on the binned L*a*b* channels, TG on the texton
    map, radii as fractions of the diagonal (unsmoothed, to compare with the direct
    counts)."""
    img = tiny / 255.0
    diag = np.hypot(20, 24)
    sim = _colour_similarity(32, 0.1)
    bg, th = brightness_gradient(tiny, radius=0.1, smooth=False)
    np.testing.assert_array_equal(th, THETAS)
    ref = direct_gradient(_bins(_grey(img), 32), 32, 0.1 * diag, THETAS[3], sim)
    np.testing.assert_allclose(bg[3], ref, atol=1e-14)
    bg2, _ = brightness_gradient(tiny, radius=0.1, smooth=False, distance="chi2")
    ref = direct_gradient(_bins(_grey(img), 32), 32, 0.1 * diag, THETAS[5])
    np.testing.assert_allclose(bg2[5], ref, atol=1e-14)
    cg, _ = color_gradient(tiny, radius=(0.05, 0.1, 0.15), smooth=False)
    lab = _lab01(img)
    for c, r in enumerate((0.05, 0.1, 0.15)):
        ref = direct_gradient(_bins(lab[..., c], 32), 32, r * diag, THETAS[c + 1], sim)
        np.testing.assert_allclose(cg[c, c + 1], ref, atol=1e-14)
    tg, _ = texture_gradient(tiny, radius=0.1, smooth=False)
    ref = direct_gradient(texton_map(tiny), 64, 0.1 * diag, THETAS[6])
    np.testing.assert_allclose(tg[6], ref, atol=1e-14)


def test_lab_channels_follow_rgb2lab():
    """White maps to L* = 100, a* = b* = 0 (scaled to 1 and 73/168); black to 0."""
    lab = _lab01(np.array([[[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]]))
    np.testing.assert_allclose(lab[0, 0], [1.0, 73 / 168, 73 / 168], atol=2e-4)
    np.testing.assert_allclose(lab[0, 1], [0.0, 73 / 168, 73 / 168], atol=1e-12)


@pytest.mark.parametrize("ra,rb,theta", [(3.7, 1.6, 0.4), (2.5, 2.5, 1.9),
                                         (5.2, 1.3, np.pi / 2)])
def test_fit_parab_is_the_local_least_squares_parabola(ra, rb, theta):
    z = np.random.default_rng(2).random((15, 17))
    got = fit_parab(z, ra, rb, theta)
    ra, rb = max(1.5, ra), max(1.5, rb)
    wr = int(np.floor(max(ra, rb)))
    ref = np.zeros_like(z)
    for y in range(15):
        for x in range(17):
            rows = []
            for u in range(-wr, wr + 1):
                for v in range(-wr, wr + 1):
                    d = -u * np.sin(theta) + v * np.cos(theta)
                    e = u * np.cos(theta) + v * np.sin(theta)
                    if (d * d / ra ** 2 + e * e / rb ** 2 <= 1 and 0 <= y + v < 15
                            and 0 <= x + u < 17):
                        rows.append((1.0, d, d * d, z[y + v, x + u]))
            a = np.array(rows)
            ref[y, x] = np.linalg.lstsq(a[:, :3], a[:, 3], rcond=None)[0][0]
    np.testing.assert_allclose(got, ref, atol=1e-10)


def direct_nonmax(im, theta):
    """Suppression across theta from the normal (cos phi, sin phi) directly: on each
    side the value between the two bracketing 8-neighbours, by linear interpolation."""
    h, w = im.shape
    out = im.copy()
    for y in range(h):
        for x in range(w):
            phi = np.mod(theta[y, x] + np.pi / 2, np.pi)
            c, s = np.cos(phi), np.sin(phi)
            for sg in (1, -1):
                cx, cy = sg * c, sg * s
                if abs(cx) >= abs(cy):
                    a = (x + int(np.sign(cx)), y)
                    b = (x + int(np.sign(cx)), y + int(np.sign(cy)))
                    d = abs(cy / cx)
                else:
                    a = (x, y + int(np.sign(cy)))
                    b = (x + int(np.sign(cx)), y + int(np.sign(cy)))
                    d = abs(cx / cy)
                if not all(0 <= p[0] < w and 0 <= p[1] < h for p in (a, b)):
                    continue
                if im[y, x] < im[a[1], a[0]] * (1 - d) + im[b[1], b[0]] * d:
                    out[y, x] = 0
    return out


def test_nonmax_matches_the_interpolated_comparison():
    rng = np.random.default_rng(4)
    im = rng.random((12, 14))
    theta = rng.uniform(0, np.pi, (12, 14))
    np.testing.assert_array_equal(pb_nonmax(im, theta), direct_nonmax(im, theta))


def test_nonmax_thins_a_ridge_across_its_tangent():
    x = np.arange(21.0)
    ridge = np.tile(np.exp(-0.5 * ((x - 10.3) / 2) ** 2), (15, 1))  # vertical ridge
    thin = pb_nonmax(ridge, np.pi / 2)  # tangent along y
    assert set(np.flatnonzero(thin[7])) == {10}
    assert (pb_nonmax(ridge, 0.0) == ridge).all()  # along the ridge nothing goes


def test_oe_filter_is_the_pixel_sampled_formula():
    """With one sample per pixel the filter is the formula at the pixel centres,
    zero mean, unit L1 norm."""
    sx, sy, th = 2.0, 1.0, 0.4
    f = oe_filter((sx, sy), th, deriv=2, rate=1)
    c = np.arange(-6, 7.0)
    yy, xx = np.meshgrid(c, c, indexing="ij")
    su = xx * np.sin(th) + yy * np.cos(th)
    sv = xx * np.cos(th) - yy * np.sin(th)
    ref = np.exp(-su ** 2 / (2 * sx ** 2)) * np.exp(-sv ** 2 / (2 * sy ** 2)) \
        * (sv ** 2 / sy ** 2 - 1)
    ref -= ref.mean()
    np.testing.assert_allclose(f, ref / np.abs(ref).sum(), atol=1e-15)


def test_odd_profile_is_the_hilbert_transform():
    v = np.linspace(-400, 400, 2 ** 18 + 1)
    s = 1.3
    prof = np.exp(-v ** 2 / (2 * s * s)) * (v ** 2 / s ** 2 - 1)
    near = np.abs(v) < 8
    np.testing.assert_allclose(_dawson_profile2(v[near], s),
                               np.imag(hilbert(prof))[near], atol=1e-8)


def test_filter_bank_shape_and_symmetries():
    fb = filter_bank()
    assert len(fb) == 26
    assert [f.shape[0] for f in fb[:13]] == [13] * 12 + [19]
    assert [f.shape[0] for f in fb[13:]] == [19] * 12 + [27]
    for i, f in enumerate(fb):
        assert abs(f.sum()) < 1e-14 and abs(np.abs(f).sum() - 1) < 1e-12
        even = i % 13 == 12 or i % 13 % 2 == 0  # even filters and centre-surround
        np.testing.assert_allclose(f[::-1, ::-1], f if even else -f, atol=1e-15)
    # orientation 3 of 6 is theta + pi/2: the filter turned by 90 degrees
    np.testing.assert_allclose(np.rot90(fb[1]), fb[7], atol=1e-15)
    np.testing.assert_allclose(np.rot90(fb[0]), fb[6], atol=1e-15)
    assert len(filter_bank(center_surround=False)) == 24


def test_filter_responses_are_convolutions_with_reflected_borders():
    from scipy.signal import convolve2d
    img = np.random.default_rng(5).random((30, 34))
    fb = filter_bank(n_scales=1)
    got = filter_responses(img, fb)
    r = max(f.shape[0] for f in fb) // 2
    pad = np.pad(img, r, mode="symmetric")
    for i in (0, 3, 12):
        ref = convolve2d(pad, fb[i], mode="same")[r:-r, r:-r]
        np.testing.assert_allclose(got[..., i], ref, atol=1e-13)


def test_textons_are_nearest_centres_and_kmeans_is_seeded():
    rng = np.random.default_rng(6)
    data = rng.standard_normal((600, 3)) + rng.integers(0, 4, (600, 1)) * 3.0
    c1, c2 = kmeans(data, 5, seed=1), kmeans(data, 5, seed=1)
    np.testing.assert_array_equal(c1, c2)
    resp = data.reshape(20, 30, 3)
    ref = ((resp[..., None, :] - c1) ** 2).sum(-1).argmin(-1)
    np.testing.assert_array_equal(assign_textons(resp, c1), ref)


def test_shipped_textons_and_weights():
    tmap = texton_map(np.random.default_rng(7).random((25, 30)))
    assert tmap.dtype == np.int32 and tmap.min() >= 0 and tmap.max() < 64
    # the published fits are pbCGTG.m's beta ./ fstd
    np.testing.assert_allclose(pb_weights("pb-cgtg", "published"),
                               np.array([-4.5015774, 0.6684504, 0.13588346, 0.19537985,
                                         0.53922927]) / np.array([1, 0.39505238,
                                         0.14210176, 0.19449891, 0.19178634]))
    for det in ("pb-bg", "pb-cg", "pb-tg", "pb-bgtg", "pb-cgtg", "2mm"):
        assert np.isfinite(pb_weights(det)).all()
    with pytest.raises(InputError):
        pb_weights("pb-cgtg", "nonsense")
    with pytest.raises(InputError):
        pb_weights("pb-bg", [1.0, 2.0, 3.0])


@pytest.fixture(scope="module")
def scene():
    """48x64 colour scene: a square brighter and of another hue than the background,
    a little noise."""
    rng = np.random.default_rng(8)
    yy, xx = np.mgrid[:48, :64]
    inside = (abs(yy - 24) < 12) & (abs(xx - 30) < 14)
    img = 0.3 + 0.3 * inside[..., None] * np.array([1.0, 0.6, 1.4])
    img = img + 0.01 * rng.standard_normal(img.shape)
    return np.round(255 * np.clip(img, 0, 1)).astype(np.uint8), inside


@pytest.mark.parametrize("fn", [pb_bg, pb_cg, pb_tg, pb_bgtg, pb_cgtg, pb_2mm])
def test_detectors_are_deterministic_and_strongest_on_edges(scene, fn):
    img, inside = scene
    pb, theta = fn(img)
    pb2, theta2 = fn(img)
    np.testing.assert_array_equal(pb, pb2)
    np.testing.assert_array_equal(theta, theta2)
    assert pb.shape == theta.shape == (48, 64)
    assert pb.min() >= 0 and pb.max() <= 1
    assert (0 <= theta).all() and (theta < np.pi).all()
    # the strongest responses lie on the square's outline
    from scipy import ndimage
    edge = ndimage.binary_dilation(inside, iterations=2) & ~ndimage.binary_erosion(
        inside, iterations=2)
    top = pb >= 0.5 * pb.max()
    assert edge[top].mean() > 0.7


def test_pb_contract(scene):
    img, _ = scene
    pb, theta = pb_cgtg(img, weights="published")
    assert (pb[0] == 0).all() and (pb[-1] == 0).all()
    assert (pb[:, 0] == 0).all() and (pb[:, -1] == 0).all()
    assert set(np.unique(theta)) <= set(THETAS)
    feats, _ = pb_cues(img, "pb-cgtg")
    assert feats.shape == (4, 8, 48, 64) and (feats >= 0).all()
    np.testing.assert_array_equal(detect(img, "pb-cgtg", weights="published"), pb)
    grey = _grey(img / 255.0)
    np.testing.assert_array_equal(pb_bgtg(img)[0], pb_bgtg(grey)[0])


def test_bad_inputs():
    with pytest.raises(InputError, match="at least 3x3"):
        pb_bg(np.zeros((2, 5)))
    with pytest.raises(InputError, match="in \\[0, 1\\]"):
        pb_cgtg(np.full((9, 9, 3), 2.0))
    with pytest.raises(InputError, match="shape"):
        pb_tg(np.zeros((9, 9, 5)))
    with pytest.raises(InputError, match="radius"):
        color_gradient(np.zeros((9, 9, 3)), radius=(0.1, -1, 0.1))
    with pytest.raises(InputError, match="distance"):
        brightness_gradient(np.zeros((9, 9)), distance="l1")
    with pytest.raises(InputError, match="published"):
        pb_2mm(np.zeros((9, 9)), weights="published")
    with pytest.raises(InputError, match="unknown detector"):
        detect(np.zeros((9, 9)), "sobel")


def _scene_dataset(root, scene):
    from segbench.datasets import write_ground_truth
    from segbench.io import write_image
    img, inside = scene
    # twice the size, so that the benchmark's tolerance (0.0075 of the diagonal) is
    # more than a pixel: a step between two pixels may be marked on either
    img = np.kron(img, np.ones((2, 2, 1), np.uint8))
    seg = np.kron(inside.astype(np.int32) + 1, np.ones((2, 2), np.int32))
    for i, iid in enumerate(("11", "22")):
        write_image(root / "img" / f"{iid}.png", np.roll(img, 3 * i, axis=1))
        write_ground_truth(root / "gt" / f"{iid}.mat", [np.roll(seg, 3 * i, axis=1)] * 2)


def test_cli_detect_then_boundary(scene, tmp_path, capsys):
    _scene_dataset(tmp_path, scene)
    out = tmp_path / "maps"
    assert main(["detect", "--detector", "pb-cgtg", "--images", str(tmp_path / "img"),
                 "--out", str(out), "--quiet", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["n_images"] == 2 and info["detector"] == "pb-cgtg"
    from segbench.io import read_prediction
    pb = pb_cgtg(np.asarray(__import__("PIL.Image").Image.open(
        tmp_path / "img" / "11.png")))[0]
    got = read_prediction(out / "11.png").pb
    np.testing.assert_allclose(got, np.rint(pb * 65535) / 65535, atol=1e-12)
    assert main(["boundary", "--gt", str(tmp_path / "gt"), "--pred", str(out),
                 "--out", str(tmp_path / "run"), "--quiet", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["metrics"]["ODS"] > 0.8
    # a rerun into its own folder is allowed; gm and canny run too
    assert main(["detect", "--detector", "gm", "--images", str(tmp_path / "img"),
                 "--out", str(out), "--quiet"]) == 0
    assert "gm" in capsys.readouterr().out
    # a rerun on other images leaves none of the earlier run's maps to be read with it
    (tmp_path / "img2").mkdir()
    (tmp_path / "img" / "22.png").rename(tmp_path / "img2" / "33.png")
    assert main(["detect", "--detector", "gm", "--images", str(tmp_path / "img2"),
                 "--out", str(out), "--quiet"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [".segbench-detect", ".segbench-lock",
                                                     ".segbench-records", "33.png"]


def test_cli_detect_errors(scene, tmp_path, capsys):
    _scene_dataset(tmp_path, scene)
    img = tmp_path / "img"
    (img / "33.jpg").write_bytes(b"not a jpeg")
    assert main(["detect", "--detector", "pb-bg", "--images", str(img), "--out",
                 str(tmp_path / "o"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "33.jpg" in err and "Traceback" not in err
    (img / "33.jpg").unlink()
    assert main(["detect", "--detector", "gm", "--weights", "published", "--images",
                 str(img), "--out", str(tmp_path / "o2"), "--quiet"]) == 2
    assert "--weights" in capsys.readouterr().err
    (tmp_path / "theirs").mkdir()
    (tmp_path / "theirs" / "x.txt").write_text("x")
    assert main(["detect", "--detector", "gm", "--images", str(img), "--out",
                 str(tmp_path / "theirs"), "--quiet"]) == 2
    assert "did not make" in capsys.readouterr().err
    assert main(["detect", "--detector", "gm", "--images", str(tmp_path / "none"),
                 "--out", str(tmp_path / "o3"), "--quiet"]) == 2


@pytest.mark.parametrize("detector", DETECTORS)
def test_every_detector_runs_on_a_photograph(detector):
    """One BSDS500 val image at full size: a finite map in [0, 1] of its shape, not
    empty (the scores themselves are checked by the benchmark, see docs/detectors.md)."""
    from segbench.io import read_image
    path = require(DATA / "bsds500" / "images" / "val") / "101085.jpg"
    img = read_image(require(path))
    pb = detect(img, detector)
    assert pb.shape == img.shape[:2] and np.isfinite(pb).all()
    assert pb.min() >= 0 and pb.max() <= 1 and pb.max() > 0


def test_cli_detect_workers_give_the_same_maps(scene, tmp_path):
    _scene_dataset(tmp_path, scene)
    outs = [tmp_path / "w1", tmp_path / "w2"]
    for out, n in zip(outs, ("1", "2")):
        assert main(["detect", "--detector", "pb-bgtg", "--images", str(tmp_path / "img"),
                     "--out", str(out), "--workers", n, "--quiet"]) == 0
    for iid in ("11", "22"):
        assert (outs[0] / f"{iid}.png").read_bytes() == (outs[1] / f"{iid}.png").read_bytes()


def test_cli_lists_every_detector():
    """``segbench detect`` keeps its detector names apart (so ``--help`` imports no
    numerical library): they must be the library's."""
    from segbench.algorithms import DETECTORS
    from segbench.algorithms._pb import WEIGHTED
    from segbench.cli import detect
    from segbench.algorithm_folders import MODEL_DETECTORS
    assert set(detect._DETECTORS) == set(DETECTORS) | set(detect._GPB) | set(MODEL_DETECTORS)
    assert set(detect._WEIGHTED) == set(WEIGHTED)
