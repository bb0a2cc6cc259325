"""OWT-UCM (``segbench.algorithms.owt_ucm``) and ``segbench ucm``.

The ultrametric's defining properties on random contour signals (every threshold gives
closed boundaries, and the segmentations nest as it rises), flat regions recovered
exactly, the merge rule against a direct transcription of ``ucm_mean_pb`` in plain
Python, the grid layout the benchmarks read, determinism, bad inputs and the command.
"""

from __future__ import annotations

import heapq

import numpy as np
import pytest
import scipy.io
from PIL import Image
from scipy import ndimage

from segbench.algorithms import owt_ucm, ucm_sigmoid
from segbench.algorithms import _ucm_kernels as _k
from segbench.algorithms._owt_ucm import _corner_labels
from segbench.cli import main
from segbench.errors import InputError
from segbench.io import read_prediction
from segbench.region._levels import ucm_segmentation


def _smooth_signal(seed, h=40, w=56):
    rng = np.random.default_rng(seed)
    return ndimage.gaussian_filter(rng.random((h, w)), 2.0)


def _regions(k_side=2, h=72, w=96):
    """A piecewise-constant partition: a k_side x k_side grid of blocks and a disc
    inside the first block."""
    lab = (np.arange(h)[:, None] * k_side // h) * k_side + np.arange(w)[None, :] * k_side // w
    yy, xx = np.mgrid[:h, :w]
    cy, cx = h // (2 * k_side), w // (2 * k_side)
    lab[(yy - cy) ** 2 + (xx - cx) ** 2 < (h // (4 * k_side)) ** 2] = k_side ** 2
    return lab


def _edges_and_tangent(lab, sigma=1.2):
    """Soft boundaries of a partition and each pixel's boundary tangent (from the
    gradient of the smoothed label edges' distance)."""
    edge = np.zeros(lab.shape)
    edge[:-1][lab[:-1] != lab[1:]] = 1
    edge[1:][lab[:-1] != lab[1:]] = 1
    edge[:, :-1][lab[:, :-1] != lab[:, 1:]] = 1
    edge[:, 1:][lab[:, :-1] != lab[:, 1:]] = 1
    soft = ndimage.gaussian_filter(edge, sigma)
    soft /= soft.max()
    gy = ndimage.sobel(ndimage.gaussian_filter(lab.astype(float), 1.0), 0)
    gx = ndimage.sobel(ndimage.gaussian_filter(lab.astype(float), 1.0), 1)
    tangent = np.mod(np.arctan2(gy, gx) + np.pi / 2, np.pi)  # normal turned by pi/2
    return soft, tangent


def _cells_between(ucm2):
    """The boundary cells of a doubleSize grid and the two region cells each separates:
    (values, (r1, c1), (r2, c2)) for the vertical and horizontal neighbours."""
    vert = ucm2[2:-1:2, 1::2], (slice(1, -2, 2), slice(1, None, 2)), (slice(3, None, 2),
                                                                       slice(1, None, 2))
    horz = ucm2[1::2, 2:-1:2], (slice(1, None, 2), slice(1, -2, 2)), (slice(1, None, 2),
                                                                       slice(3, None, 2))
    return vert, horz


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_threshold_gives_closed_nested_boundaries(seed):
    u = owt_ucm(_smooth_signal(seed))
    assert u.shape == (81, 113) and u.min() >= 0 and u.max() <= 1
    levels = np.unique(u[u > 0])
    assert levels.size >= 5
    previous = None
    for t in np.concatenate([[0.0], levels[:-1], [levels[-1]]]):
        seg = ucm_segmentation(u, t)
        lab = np.zeros(u.shape, np.int64)
        lab[1::2, 1::2] = seg
        for vals, s1, s2 in _cells_between(u):
            # a cell above the level separates two regions; one at or below it does not
            differ = lab[s1] != lab[s2]
            assert np.array_equal(differ, vals > t)
        if previous is not None:   # nesting: each finer region lies in one coarser one
            pairs = np.unique(np.stack([previous.ravel(), seg.ravel()]), axis=1)
            assert np.unique(pairs[0]).size == pairs.shape[1]
        previous = seg
    assert np.unique(ucm_segmentation(u, levels[-1])).size == 1


@pytest.mark.parametrize("k_side", [1, 2, 3])
def test_flat_regions_are_recovered_exactly(k_side):
    lab = _regions(k_side)
    soft, tangent = _edges_and_tangent(lab)
    u = owt_ucm(soft, tangent)
    k = len(np.unique(lab))
    seg = ucm_segmentation(u, 0.05)
    assert len(np.unique(seg)) == k
    # each found region is one true region (away from the half-pixel boundary shift)
    for r in np.unique(seg):
        core = ndimage.binary_erosion(seg == r, iterations=2)
        assert core.any() and np.unique(lab[core]).size == 1


def test_oriented_stack_is_read_at_the_arc_direction():
    """A vertical boundary whose oriented signal says "horizontal" fades: the oriented
    transform reads each arc at its own direction, not the strongest channel."""
    h, w = 40, 50
    x = np.arange(w)[None, :]
    ridge = np.broadcast_to(np.exp(-0.5 * ((x - 25) / 1.5) ** 2), (h, w))
    bump = ndimage.gaussian_filter(np.random.default_rng(3).random((h, w)), 3) * 0.05
    angles = np.arange(8) * np.pi / 8

    def stack(tangent):
        tuning = np.cos(angles - tangent) ** 2       # a detector's angular response
        return (ridge + bump)[..., None] * tuning[None, None, :]

    right = owt_ucm(stack(np.pi / 2), raw=True)    # the ridge is vertical: tangent pi/2
    wrong = owt_ucm(stack(0.0), raw=True)
    assert right[:, 45:56].max() > 0.3     # a mean of the ridge's line pixels
    assert wrong[:, 45:56].max() < 0.3 * right[:, 45:56].max()


def _reference_ucm_mean(grid, sp, nreg):
    """``ucm_mean_pb`` transcribed directly: per-region neighbour tables and boundary
    lists, the lexicographic heap of (energy, region1, region2), the smaller id merged
    into the larger, every boundary cell of the absorbed region raised to the level."""
    h, w = sp.shape
    gh = 2 * h + 1
    bdry = {c: [] for c in range(nreg)}
    for j in range(w):
        for i in range(h):
            for di, dj in ((1, 0), (0, 1), (-1, 0), (0, -1)):
                ii, jj = i + di, j + dj
                if 0 <= ii < h and 0 <= jj < w and sp[ii, jj] != sp[i, j]:
                    bdry[sp[i, j]].append((sp[ii, jj], (i + ii + 1) + (j + jj + 1) * gh))
    flat = grid.ravel(order="F")
    nbr = {c: {} for c in range(nreg)}
    heap = []
    for c in range(nreg):
        for n, cell in sorted(bdry[c]):
            t, ln, _ = nbr[c].get(n, (0.0, 0.0, 0.0))
            nbr[c][n] = (t + flat[cell], ln + 1.0, 0.0)
        for n, (t, ln, _) in nbr[c].items():
            nbr[c][n] = (t, ln, t / ln)
            if n > c:
                heapq.heappush(heap, (t / ln, c, n))
    label = list(range(nreg))
    ucm = np.zeros(gh * (2 * w + 1))
    while heap:
        e, r1, r2 = heapq.heappop(heap)
        if label[r1] != r1 or label[r2] != r2 or nbr[r1][r2][2] != e:
            continue
        sal = nbr[r1][r2][0] / nbr[r1][r2][1]
        son, father = min(r1, r2), max(r1, r2)
        bdry[father] = [b for b in bdry[father] if label[b[0]] != son]
        for n, cell in bdry[son]:
            ucm[cell] = max(ucm[cell], sal)
        for r in range(nreg):
            if label[r] == son:
                label[r] = father
        bdry[father] += [b for b in bdry[son] if label[b[0]] != father]
        for n, (t, ln, _) in nbr[son].items():
            if label[n] != n or n == father:
                continue
            ft, fl, _ = nbr[father].get(n, (0.0, 0.0, 0.0))
            nbr[father][n] = (ft + t, fl + ln, 0.0)
            nt, nl, _ = nbr[n].get(father, (0.0, 0.0, 0.0))
            nbr[n][father] = (nt + t, nl + ln, 0.0)
        nbr[father] = {n: v for n, v in nbr[father].items() if label[n] == n}
        nbr[son] = {}
        for n in sorted(nbr[father]):
            t, ln, _ = nbr[father][n]
            nbr[father][n] = (t, ln, t / ln)
            nt, nl, _ = nbr[n][father]
            nbr[n][father] = (nt, nl, t / ln)
            heapq.heappush(heap, (t / ln, n, father))
    ucm = ucm.reshape((2 * w + 1, gh)).T
    for x in range(0, gh, 2):
        for y in range(0, 2 * w + 1, 2):
            vals = [ucm[x + dx, y + dy] for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))
                    if 0 <= x + dx < gh and 0 <= y + dy < 2 * w + 1]
            ucm[x, y] = max([0.0] + vals)
    return ucm


@pytest.mark.parametrize("seed, quantize", [(4, None), (5, 8), (6, 3)])
def test_merge_matches_a_direct_transcription_of_ucm_mean_pb(seed, quantize):
    """Quantized signals make many equal means: the tie order decides those."""
    sig = _smooth_signal(seed, 30, 36)
    sig = (sig - sig.min()) / np.ptp(sig)
    if quantize:
        sig = np.round(sig * quantize) / quantize
    ws = _k._watershed(sig)
    wt = np.where(ws == 0, sig, 0.0)
    grid = _k._super_grid(wt)
    nreg, sp = _corner_labels(grid)
    assert nreg > 5
    ours = _k._ucm_mean(grid, sp, nreg)
    assert np.array_equal(ours, _reference_ucm_mean(grid, sp, nreg))


def test_formats_and_determinism():
    sig = _smooth_signal(7)
    u = owt_ucm(sig)
    assert np.array_equal(owt_ucm(sig, fmt="imageSize"), u[2::2, 2::2])
    assert owt_ucm(sig).tobytes() == u.tobytes()
    raw = owt_ucm(sig, raw=True)
    assert np.allclose(ucm_sigmoid(raw), u, atol=0, rtol=0)
    # region cells are never boundaries; vertices hold the max of their four edges
    assert not u[1::2, 1::2].any()


def test_sigmoid_constants():
    # normalize_output: 1/(1+exp(2.7487 - 11.1189 u)), shifted by 0.0602 and rescaled
    assert ucm_sigmoid(0.0) == 0.0
    s = 1 / (1 + np.exp(2.7487 - 11.1189 * 0.5))
    assert ucm_sigmoid(0.5) == pytest.approx((s - 0.0602) / (1 - 0.0602), abs=1e-15)
    assert ucm_sigmoid(10.0) == 1.0


@pytest.mark.parametrize("bad, match", [
    (np.zeros((1, 1)), "at least 3x3"),
    (np.full((8, 8), np.nan), "NaN"),
    (np.zeros((8, 8), np.int32), "unsupported type"),
    (np.zeros((2, 3, 4, 5)), r"\(H, W\) or \(H, W, K\)"),
])
def test_bad_arrays_are_refused(bad, match):
    with pytest.raises(InputError, match=match):
        owt_ucm(bad)


def test_theta_with_a_stack_or_of_another_shape_is_refused():
    with pytest.raises(InputError, match="theta is for a 2-D map"):
        owt_ucm(np.zeros((5, 5, 8)), np.zeros((5, 5)))
    with pytest.raises(InputError, match="theta has shape"):
        owt_ucm(np.zeros((5, 5)), np.zeros((4, 5)))
    with pytest.raises(InputError, match="fmt must be"):
        owt_ucm(np.zeros((5, 5)), fmt="double")


def _write_maps(folder, n=3):
    folder.mkdir()
    for i in range(n):
        sig = _smooth_signal(10 + i, 30, 40)
        sig = (sig - sig.min()) / np.ptp(sig)
        Image.fromarray(np.rint(sig * 65535).astype(np.uint16)).save(folder / f"{i}.png")
    return folder


def test_command_writes_ucm2_the_benchmarks_read(tmp_path):
    pred = _write_maps(tmp_path / "soft")
    out = tmp_path / "ucm"
    assert main(["ucm", "--pred", str(pred), "--out", str(out), "--quiet"]) == 0
    for i in range(3):
        mat = scipy.io.loadmat(out / f"{i}.mat")
        assert mat["ucm2"].dtype == np.float64 and mat["ucm2"].shape == (61, 81)
        pb = np.asarray(Image.open(pred / f"{i}.png"), dtype=np.float64) / 65535
        assert np.array_equal(mat["ucm2"], owt_ucm(pb))
        pred_read = read_prediction(out / f"{i}.mat")
        assert pred_read.kind == "ucm2"
    # the same bytes with two workers, and a rerun into its own folder is allowed
    out2 = tmp_path / "ucm2"
    assert main(["ucm", "--pred", str(pred), "--out", str(out2), "--quiet",
                 "--workers", "2"]) == 0
    for i in range(3):
        assert np.array_equal(scipy.io.loadmat(out2 / f"{i}.mat")["ucm2"],
                              scipy.io.loadmat(out / f"{i}.mat")["ucm2"])
    assert main(["ucm", "--pred", str(pred), "--out", str(out), "--quiet"]) == 0


def test_command_refuses_a_foreign_folder_and_names_a_bad_map(tmp_path, capsys):
    pred = _write_maps(tmp_path / "soft", 1)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("my notes")
    assert main(["ucm", "--pred", str(pred), "--out", str(mine), "--quiet"]) == 2
    assert (mine / "notes.txt").read_text() == "my notes"
    assert len(list(mine.iterdir())) == 1
    bad = tmp_path / "bad"
    bad.mkdir()
    np.save(bad / "nan.npy", np.full((10, 10), np.nan))
    capsys.readouterr()
    assert main(["ucm", "--pred", str(bad), "--out", str(tmp_path / "o"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nan.npy" in err[0] and "Traceback" not in err[0]


def test_thinned_maps_are_smoothed_on_request_and_flagged(tmp_path, capsys):
    """The watershed of one-pixel lines floods through their gaps; a blur of 1 px
    restores the basins (the command warns when a map looks thinned)."""
    from segbench.algorithms._owt_ucm import looks_thinned, thin_line_smoothing
    lab = _regions(2)
    thin = np.zeros(lab.shape)
    thin[:-1][lab[:-1] != lab[1:]] = 0.8
    thin[:, :-1][lab[:, :-1] != lab[:, 1:]] = 0.8
    yy, xx = np.mgrid[:lab.shape[0], :lab.shape[1]]
    thin[(yy + xx) % 7 == 0] = 0.0                         # one-pixel gaps in every line
    assert looks_thinned(thin) and not looks_thinned(_edges_and_tangent(lab)[0])
    raw = len(np.unique(ucm_segmentation(owt_ucm(thin), 0.05)))
    smooth = thin_line_smoothing(thin, 1.0)
    line = np.zeros((30, 30))
    line[:, 15] = 0.8
    assert thin_line_smoothing(line, 1.0)[:, 15] == pytest.approx(0.8)   # keeps its height
    fixed = len(np.unique(ucm_segmentation(owt_ucm(smooth), 0.05)))
    assert raw < len(np.unique(lab)) <= fixed
    pred = tmp_path / "nms"
    pred.mkdir()
    Image.fromarray(np.rint(thin * 255).astype(np.uint8)).save(pred / "a.png")
    capsys.readouterr()
    assert main(["ucm", "--pred", str(pred), "--out", str(tmp_path / "u"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "looks thinned" in err and "--smooth 1" in err
    assert main(["ucm", "--pred", str(pred), "--out", str(tmp_path / "v"), "--quiet",
                 "--smooth", "1"]) == 0
    assert "looks thinned" not in capsys.readouterr().err
    assert np.array_equal(scipy.io.loadmat(tmp_path / "v" / "a.mat")["ucm2"],
                          owt_ucm(thin_line_smoothing(np.rint(thin * 255) / 255, 1.0)))


def test_rerun_drops_hierarchies_it_does_not_write_again(tmp_path):
    """A rerun of ucm into its own folder over fewer maps removes the earlier run's
    other .mat files, which 'segbench region' would otherwise score with this run's."""
    pred = _write_maps(tmp_path / "soft", 3)
    out = tmp_path / "ucm"
    assert main(["ucm", "--pred", str(pred), "--out", str(out), "--quiet"]) == 0
    (pred / "2.png").unlink()
    assert main(["ucm", "--pred", str(pred), "--out", str(out), "--quiet"]) == 0
    assert sorted(p.name for p in out.glob("*.mat")) == ["0.mat", "1.mat"]
