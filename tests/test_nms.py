"""Dollar's edge NMS (``segbench.algorithms.edge_nms``) and ``segbench nms``.

The definition on small synthetic maps (a ridge survives only at its crest, the border
band, the tolerance m), each stage against an independent computation (scipy's filters,
numpy's gradient, a direct float64 transcription of the suppression rule), determinism,
parity with pyEdgeEval 0.2.8's ``fast_nms`` on real HED maps, and the command.
"""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image
from scipy import ndimage

from conftest import DATA, require
from segbench.algorithms import edge_nms, edge_orientation
from segbench.cli import main
from segbench.errors import InputError

HED = DATA / "bsds500-hed-nms" / "test"


def _ridge(h=40, w=48, centre=23.0, width=3.0, axis=1, tilt=0.0):
    """A straight Gaussian ridge along axis 0 (axis=1: a vertical ridge, its profile
    across the columns) or along axis 1 (axis=0), its centre moving by ``tilt`` pixels
    per pixel along the ridge."""
    y, x = np.mgrid[:h, :w].astype(float)
    across, along = (x, y) if axis == 1 else (y, x)
    return np.exp(-0.5 * ((across - centre - tilt * along) / width) ** 2)


@pytest.mark.parametrize("axis, tilt", [(1, 0.0), (1, 0.05), (0, 0.05), (0, -0.1)])
def test_ridge_is_kept_only_at_its_crest(axis, tilt):
    E = _ridge(axis=axis, tilt=tilt)
    out = edge_nms(E)
    assert out.dtype == np.float32 and out.shape == E.shape
    inner = out[6:-6, 6:-6] if axis == 1 else out[6:-6, 6:-6].T
    along = np.arange(6, (E.shape[0] if axis == 1 else E.shape[1]) - 6)
    crest = np.rint(23 + tilt * along).astype(int) - 6
    kept = [np.flatnonzero(line) for line in inner]
    assert all(1 <= len(k) <= 2 and np.all(np.abs(k - c) <= 1)
               for k, c in zip(kept, crest))
    # m = 1.01 keeps both pixels where the crest falls between them; m = 1 one only
    strict = edge_nms(E, m=1.0)
    strict = strict[6:-6, 6:-6] if axis == 1 else strict[6:-6, 6:-6].T
    assert np.mean([np.count_nonzero(line) == 1 for line in strict]) > 0.9


def test_orientation_is_the_normal():
    """Vertical ridge: normal along x, O = 0 (or pi); a nearly horizontal one: O near
    pi/2."""
    ov = edge_orientation(_ridge(axis=1))[10:-10, 20:27]
    oh = edge_orientation(_ridge(axis=0, tilt=0.02))[20:27, 10:-10]
    assert np.all(np.minimum(ov, np.pi - ov) < 1e-3)
    assert np.allclose(oh, np.pi / 2, atol=0.05)


def test_exactly_horizontal_ridge_follows_the_formula():
    """Dollar's formula multiplies by sign(-Oxy): where Oxy is exactly 0 (a ridge
    constant along x) O is atan(0) = 0, so the normal is taken along x and the ridge
    is not thinned across y. Reproduced as defined, not 'fixed'."""
    E = _ridge(axis=0)
    assert np.all(edge_orientation(E) == 0)
    out = edge_nms(E)
    assert np.count_nonzero(out[6:-6, 20]) == E.shape[0] - 12


def test_diagonal_ridge_is_one_pixel_wide():
    y, x = np.mgrid[:64, :64]
    E = np.exp(-0.5 * ((x - y) / (2.5 * np.sqrt(2))) ** 2)
    out = edge_nms(E)
    inner = out[8:-8, 8:-8]
    assert np.all(np.diag(inner) > 0.9)
    assert np.count_nonzero(inner) == inner.shape[0]


def _ramp(n, s):
    f = np.ones(n, np.float32)
    for k in range(s):
        f[k] *= np.float32(k) / np.float32(s)
        f[n - 1 - k] *= np.float32(k) / np.float32(s)
    return f


@pytest.mark.parametrize("s", [0, 1, 5, 9])
def test_border_band_is_ramped_to_zero(s):
    """A constant map survives everywhere (m > 1); the band is x/s, then y/s."""
    h, w = 21, 30
    out = edge_nms(np.full((h, w), 0.5), s=s)
    s_eff = min(s, w // 2, h // 2)
    fx, fy = _ramp(w, s_eff), _ramp(h, s_eff)
    want = (np.float32(0.5) * fx[None, :]) * fy[:, None]
    assert np.array_equal(out, want.astype(np.float32))
    if s:
        assert np.all(out[0] == 0) and np.all(out[:, -1] == 0)
        assert np.all(out[s_eff:h - s_eff, s_eff:w - s_eff] == np.float32(0.5))


def test_border_band_is_capped_at_half_the_image():
    out = edge_nms(np.full((7, 40), 0.25), s=5)  # s' = min(5, 20, 3) = 3
    third = np.float32(0.25) * (np.float32(2) / np.float32(3))
    assert np.all(out[3, 3:-3] == np.float32(0.25))
    assert np.all(out[2, 3:-3] == third) and np.all(out[4, 3:-3] == third)
    assert np.all(out[3, :3] < 0.25) and np.all(out[0] == 0)


def test_m_is_the_tolerance_of_a_near_tie():
    """Two columns 0.5 and 0.504 along the normal: m = 1.01 keeps both (0.505 >=
    0.504), m = 1 keeps the larger only; m is taken in float32, as the MEX does."""
    E = np.zeros((12, 12))
    E[:, 5], E[:, 6] = 0.5, 0.504
    O = np.zeros_like(E)
    kw = dict(presmooth=False, orientation=O, s=0)
    both = edge_nms(E, m=1.01, **kw)
    one = edge_nms(E, m=1.0, **kw)
    assert np.all(both[:, 5] == np.float32(0.5)) and np.all(both[:, 6] > 0)
    assert np.all(one[:, 5] == 0) and np.all(one[:, 6] == np.float32(0.504))
    # exactly at the boundary of the rule: keep where m * e >= neighbour
    E[:, 6] = float(np.float32(0.5) * np.float32(1.25))
    assert np.all(edge_nms(E, m=1.25, **kw)[:, 5] > 0)
    assert np.all(edge_nms(E, m=1.2499, **kw)[:, 5] == 0)


def test_radius_compares_further_neighbours():
    E = np.zeros((10, 16))
    E[:, 5], E[:, 7] = 0.8, 0.9  # two pixels apart along the normal
    kw = dict(presmooth=False, orientation=np.zeros_like(E), s=0)
    assert np.all(edge_nms(E, r=1, **kw)[:, 5] == np.float32(0.8))
    assert np.all(edge_nms(E, r=2, **kw)[:, 5] == 0)
    assert np.array_equal(edge_nms(E, r=0, **kw), E.astype(np.float32))


def test_zero_stays_zero_and_range_is_kept():
    rng = np.random.default_rng(0)
    E = ndimage.gaussian_filter(rng.random((50, 60)), 2)
    E[10:20, 10:20] = 0
    out = edge_nms(E, presmooth=False)
    assert np.all(out[10:20, 10:20] == 0)
    assert out.min() >= 0 and out.max() <= E.max()
    kept = out > 0
    inner = np.zeros_like(kept)
    inner[5:-5, 5:-5] = True
    assert np.array_equal(out[kept & inner], E.astype(np.float32)[kept & inner])


def test_inputs_are_checked():
    with pytest.raises(InputError, match="2-D"):
        edge_nms(np.zeros((3, 4, 3)))
    with pytest.raises(InputError, match="2x2"):
        edge_nms(np.zeros((1, 9)))
    with pytest.raises(InputError, match="NaN"):
        edge_nms(np.full((5, 5), np.nan))
    with pytest.raises(InputError, match="ambiguous"):
        edge_nms(np.zeros((5, 5), np.int32))
    with pytest.raises(InputError, match="non-negative integer"):
        edge_nms(np.zeros((5, 5)), r=-1)
    with pytest.raises(InputError, match="orientation is"):
        edge_nms(np.zeros((5, 5)), orientation=np.zeros((5, 6)))
    u8 = (np.arange(64, dtype=np.uint8).reshape(8, 8) * 4)
    assert np.array_equal(edge_nms(u8), edge_nms(u8 / np.float32(255)))


def test_deterministic():
    rng = np.random.default_rng(3)
    E = ndimage.gaussian_filter(rng.random((70, 90)), 1.5)
    assert np.array_equal(edge_nms(E), edge_nms(E.copy()))


# ---------------------------------------------------------------------------------------
# each stage against an independent computation


def test_presmoothing_is_the_121_filter():
    """With r = 0 and s = 0 nothing is suppressed: the output is convTri(E, 1)."""
    rng = np.random.default_rng(1)
    E = rng.random((23, 31))
    f = np.array([1.0, 2.0, 1.0]) / 4
    want = ndimage.convolve1d(ndimage.convolve1d(E, f, axis=1, mode="nearest"), f,
                              axis=0, mode="nearest")
    got = edge_nms(E, r=0, s=0)
    assert np.abs(got - want).max() < 3e-7


def _orientation_reference(E):
    """Float64 from the formula: scipy's triangle filter (half-sample symmetric, scipy
    'reflect') and numpy's gradient (central inside, one-sided at the borders)."""
    t = np.array([1, 2, 3, 4, 5, 4, 3, 2, 1], float) / 25
    S = ndimage.convolve1d(ndimage.convolve1d(E, t, axis=1, mode="reflect"), t, axis=0,
                           mode="reflect")
    oy, ox = np.gradient(S)
    _, oxx = np.gradient(ox)
    oyy, oxy = np.gradient(oy)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.mod(np.arctan(oyy * np.sign(-oxy) / (oxx + 1e-5)), np.pi), oxx


def test_orientation_matches_a_float64_reference():
    rng = np.random.default_rng(2)
    E = ndimage.gaussian_filter(rng.random((60, 80)), 2.0)
    want, oxx = _orientation_reference(E)
    got = edge_orientation(E)
    d = np.abs(got - want)
    d = np.minimum(d, np.pi - d)  # O and O + pi are one normal
    well_posed = np.abs(oxx + 1e-5) > 1e-4
    assert well_posed.mean() > 0.5
    assert d[well_posed].max() < 1e-3


def _suppress_reference(E, O, r, s, m):
    """edgesNms transcribed directly, in float64 (x the column, y the row)."""
    h, w = E.shape
    out = E.copy()

    def interp(x, y):
        x = min(max(x, 0.0), w - 1.001)
        y = min(max(y, 0.0), h - 1.001)
        x0, y0 = int(x), int(y)
        dx, dy = x - x0, y - y0
        return (E[y0, x0] * (1 - dx) * (1 - dy) + E[y0, x0 + 1] * dx * (1 - dy)
                + E[y0 + 1, x0] * (1 - dx) * dy + E[y0 + 1, x0 + 1] * dx * dy)

    for y in range(h):
        for x in range(w):
            e = E[y, x]
            if e == 0:
                continue
            for d in [d for d in range(-r, r + 1) if d]:
                if m * e < interp(x + d * np.cos(O[y, x]), y + d * np.sin(O[y, x])):
                    out[y, x] = 0
                    break
    s = min(s, w // 2, h // 2)
    for k in range(s):
        out[:, k] *= k / s
        out[:, w - 1 - k] *= k / s
    for k in range(s):
        out[k, :] *= k / s
        out[h - 1 - k, :] *= k / s
    return out


@pytest.mark.parametrize("r, s, m", [(1, 5, 1.01), (2, 3, 1.0), (1, 0, 1.05)])
def test_suppression_matches_a_direct_transcription(r, s, m):
    rng = np.random.default_rng(r + s)
    E = ndimage.gaussian_filter(rng.random((40, 52)), 1.2).astype(np.float32)
    O = (rng.random(E.shape) * np.pi).astype(np.float32)
    got = edge_nms(E, r=r, s=s, m=m, presmooth=False, orientation=O)
    want = _suppress_reference(E.astype(np.float64), O.astype(np.float64), r, s,
                               float(np.float32(m)))
    disagree = (got > 0) != (want > 0)
    assert disagree.mean() <= 2e-3  # float32 vs float64 near-ties only
    both = (got > 0) & (want > 0)
    assert np.abs(got[both] - want[both]).max() < 1e-6


# ---------------------------------------------------------------------------------------
# parity with pyEdgeEval 0.2.8


def _hed_maps(n=6, sigmas=(0.0, 1.0, 2.0)):
    files = sorted(require(HED).glob("*.png"))[:n]
    for f in files:
        raw = np.asarray(Image.open(f), np.float64) / 255
        for sigma in sigmas:
            yield f.stem, sigma, ndimage.gaussian_filter(raw, sigma) if sigma else raw


def test_suppression_parity_with_pyedgeeval():
    """The same smoothed map and orientation into both: identical maps but for
    float32-vs-float64 near-ties (pyEdgeEval's benms computes in double)."""
    pytest.importorskip("pyEdgeEval.preprocess")  # needs cv2 too
    from pyEdgeEval._lib import nms as peer_suppress
    from pyEdgeEval.preprocess.nms.toolbox import conv_tri, grad2
    worst = 0.0
    for iid, sigma, E in _hed_maps():
        edge = conv_tri(E, 1)
        ox, oy = grad2(conv_tri(edge, 4))
        oxx, _ = grad2(ox)
        oxy, oyy = grad2(oy)
        oxx[oxx == 0] = 1e-5
        ori = np.mod(np.arctan(oyy * np.sign(-oxy) / oxx), np.pi)
        ours = edge_nms(edge, presmooth=False, orientation=ori).astype(np.float64)
        peer = peer_suppress(edge, ori)
        disagree = ((ours > 0) != (peer > 0)).mean()
        assert disagree < 1e-4, (iid, sigma, disagree)
        both = (ours > 0) & (peer > 0)
        worst = max(worst, float(np.abs(ours[both] - peer[both]).max()))
    assert worst < 1e-6


def test_full_parity_with_pyedgeeval_fast_nms():
    """The whole recipe: pyEdgeEval divides by Oxx (0 replaced by 1e-5) where Dollar
    divides by Oxx + 1e-5, and computes in float64; the thinned maps agree on more
    than 99% of pixels. Prints the maximum per-pixel difference."""
    pytest.importorskip("pyEdgeEval.preprocess")
    from pyEdgeEval.preprocess import fast_nms
    worst, fractions = 0.0, []
    for iid, sigma, E in _hed_maps():
        ours = edge_nms(E).astype(np.float64)
        peer = fast_nms(E)
        assert ours.shape == peer.shape
        fractions.append(((ours > 0) != (peer > 0)).mean())
        worst = max(worst, float(np.abs(ours - peer).max()))
        same = (ours > 0) & (peer > 0)
        assert np.abs(ours[same] - peer[same]).max() < 1e-6
    print(f"\nedge_nms vs fast_nms: max per-pixel difference {worst:.4f}; pixels kept "
          f"by one only: mean {np.mean(fractions):.2e}, max {np.max(fractions):.2e}")
    assert max(fractions) < 0.01


# ---------------------------------------------------------------------------------------
# the command


@pytest.fixture()
def raw(tmp_path):
    d = tmp_path / "raw"
    d.mkdir()
    rng = np.random.default_rng(5)
    maps = {}
    for k, (h, w) in enumerate([(30, 40), (41, 33)]):
        E = ndimage.gaussian_filter(rng.random((h, w)), 1.5)
        E = (E - E.min()) / (E.max() - E.min())
        maps[f"im{k}"] = E
    Image.fromarray(np.rint(maps["im0"] * 65535).astype(np.uint16)).save(d / "im0.png")
    np.save(d / "im1.npy", maps["im1"])
    (d / "notes.txt").write_text("not a map")
    maps["im0"] = np.rint(maps["im0"] * 65535) / 65535
    return d, maps


@pytest.mark.parametrize("fmt, ext, dtype", [("png16", ".png", np.uint16),
                                              ("png8", ".png", np.uint8),
                                              ("npy", ".npy", np.float64)])
def test_cli_formats(raw, tmp_path, capsys, fmt, ext, dtype):
    d, maps = raw
    out = tmp_path / "out"
    assert main(["nms", "--pred", str(d), "--out", str(out), "--format", fmt,
                 "--quiet"]) == 0
    assert "thinned 2 maps" in capsys.readouterr().out
    for iid, E in maps.items():
        path = out / f"{iid}{ext}"
        got = np.load(path) if ext == ".npy" else np.asarray(Image.open(path))
        want = edge_nms(E).astype(np.float64)
        if ext == ".npy":
            assert got.dtype == dtype and np.array_equal(got, want)
        else:
            assert got.dtype == dtype or (dtype == np.uint16 and got.dtype == np.int32)
            scale = np.iinfo(dtype).max
            assert np.array_equal(got, np.rint(want * scale))
    assert (out / ".segbench-nms").is_file()


def test_cli_options_and_workers(raw, tmp_path):
    d, maps = raw
    a, b = tmp_path / "a", tmp_path / "b"
    opts = ["--r", "2", "--s", "3", "--m", "1.0", "--no-presmooth", "--format", "npy",
            "--quiet"]
    assert main(["nms", "--pred", str(d), "--out", str(a), *opts]) == 0
    assert main(["nms", "--pred", str(d), "--out", str(b), "--workers", "2", *opts]) == 0
    for iid, E in maps.items():
        got = np.load(a / f"{iid}.npy")
        assert np.array_equal(got, edge_nms(E, r=2, s=3, m=1.0, presmooth=False))
        assert np.array_equal(got, np.load(b / f"{iid}.npy"))


def test_cli_refuses_a_folder_it_did_not_make(raw, tmp_path, capsys):
    d, _ = raw
    out = tmp_path / "theirs"
    out.mkdir()
    (out / "keep.png").write_bytes(b"precious")
    assert main(["nms", "--pred", str(d), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert str(out) in err and "did not make" in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in out.iterdir()) == ["keep.png"]
    assert (out / "keep.png").read_bytes() == b"precious"
    assert main(["nms", "--pred", str(d), "--out", str(d), "--quiet"]) == 2
    assert "--pred folder" in capsys.readouterr().err


def test_cli_reruns_into_its_own_folder(raw, tmp_path):
    d, _ = raw
    out = tmp_path / "ours"
    assert main(["nms", "--pred", str(d), "--out", str(out), "--quiet"]) == 0
    assert main(["nms", "--pred", str(d), "--out", str(out), "--quiet",
                 "--format", "npy"]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == [".segbench-lock", ".segbench-nms", ".segbench-records", "im0.npy",
                     "im1.npy"]  # no two files per id


def test_cli_names_a_bad_file(raw, tmp_path, capsys):
    d, _ = raw
    (d / "broken.png").write_bytes(b"not a png at all")
    assert main(["nms", "--pred", str(d), "--out", str(tmp_path / "o"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "broken.png" in err
    assert err.startswith("segbench: error:")


def test_cli_empty_folder(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["nms", "--pred", str(tmp_path / "empty"), "--out",
                 str(tmp_path / "o"), "--quiet"]) == 2
    assert "no soft maps" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------
# segbench boundary --nms


@pytest.fixture()
def raw_with_gt(tmp_path):
    """Two images: a ground truth of three regions and a raw map, its boundaries
    blurred into ridges several pixels wide (as a CNN's output is)."""
    from segbench.datasets import write_ground_truth
    gt, pred = tmp_path / "gt", tmp_path / "raw"
    gt.mkdir()
    pred.mkdir()
    rng = np.random.default_rng(11)
    for k in range(2):
        seg = np.ones((96, 128), np.uint16)    # 1.2 px tolerance
        seg[:, 40 + 5 * k:] = 2
        seg[60 - 3 * k:, 80:] = 3
        write_ground_truth(gt / f"im{k}.mat", [seg])
        edges = np.zeros(seg.shape)
        edges[:, 1:] += seg[:, 1:] != seg[:, :-1]
        edges[1:, :] += seg[1:, :] != seg[:-1, :]
        E = ndimage.gaussian_filter(np.minimum(edges, 1), 2.0) + 0.02 * rng.random(seg.shape)
        np.save(pred / f"im{k}.npy", E / E.max())
    return gt, pred


def test_boundary_nms_equals_thinning_first(raw_with_gt, tmp_path):
    """``boundary --nms`` scores what ``segbench nms --format npy`` writes, count for
    count, and records Dollar's settings in the run's parameters."""
    import json
    gt, raw = raw_with_gt
    thinned = tmp_path / "thinned"
    assert main(["nms", "--pred", str(raw), "--out", str(thinned), "--format", "npy",
                 "--quiet"]) == 0
    direct, after, plain = tmp_path / "direct", tmp_path / "after", tmp_path / "plain"
    common = ["--gt", str(gt), "--no-plot", "--quiet", "--nthresh", "20"]
    assert main(["boundary", "--pred", str(raw), "--out", str(direct), "--nms",
                 *common]) == 0
    assert main(["boundary", "--pred", str(thinned), "--out", str(after), *common]) == 0
    assert main(["boundary", "--pred", str(raw), "--out", str(plain), *common]) == 0
    for k in range(2):
        a = (direct / f"im{k}_ev1.txt").read_text()
        assert a == (after / f"im{k}_ev1.txt").read_text()
        assert a != (plain / f"im{k}_ev1.txt").read_text()
    res = json.loads((direct / "result_boundary.json").read_text())
    assert res["provenance"]["params"]["nms"] == {"r": 1, "s": 5, "m": 1.01,
                                                  "presmooth": True}
    plain_res = json.loads((plain / "result_boundary.json").read_text())
    assert plain_res["provenance"]["params"]["nms"] is None
    # thresholded low, the blurred ridges thin into spurs and double lines: NMS
    # keeps precision high across thresholds
    assert res["metrics"]["AP"] > plain_res["metrics"]["AP"] + 0.05
    assert res["metrics"]["ODS"] >= plain_res["metrics"]["ODS"]


def test_nms_settings_are_checked(raw_with_gt):
    import segbench
    gt, raw = raw_with_gt
    with pytest.raises(InputError, match="nms must be"):
        segbench.evaluate("boundary", gt, raw, nms={"radius": 2}, progress=False,
                          plot=False)
    with pytest.raises(InputError, match="non-negative"):
        segbench.evaluate("boundary", gt, raw, nms={"r": -1}, progress=False, plot=False)
    for m in ("abc", None):                       # a clear error, not a ValueError
        with pytest.raises(InputError, match="m must be"):
            segbench.evaluate("boundary", gt, raw, nms={"m": m}, progress=False,
                              plot=False)
    res = segbench.evaluate("boundary", gt, raw, nms={"r": 2, "presmooth": False},
                            progress=False, plot=False, nthresh=5)
    assert res.provenance["params"]["nms"] == {"r": 2, "s": 5, "m": 1.01,
                                               "presmooth": False}


def test_nms_refuses_a_segmentation(tmp_path, capsys):
    from segbench.datasets import write_ground_truth
    from segbench.io import write_segs
    gt, pred = tmp_path / "gt", tmp_path / "segs"
    gt.mkdir()
    pred.mkdir()
    seg = np.ones((20, 30), np.uint16)
    seg[:, 15:] = 2
    write_ground_truth(gt / "a.mat", [seg])
    write_segs(pred / "a.mat", [seg])
    assert main(["boundary", "--gt", str(gt), "--pred", str(pred), "--nms", "--quiet",
                 "--no-plot"]) == 2
    err = capsys.readouterr().err
    assert "a.mat" in err and "--nms thins soft boundary maps" in err
