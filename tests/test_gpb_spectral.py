"""gPb's spectral cue (segbench.algorithms._gpb_spectral): the intervening-contour
affinity against its definition on lines where Bresenham is unambiguous, the sparse
eigensolver against a dense generalized one, the oriented filters' contracts, MATLAB's
bicubic resize on a ramp, determinism, and sPb's channel for boundaries of known
tangent. BSR parity on real images is measured by benchmarks/gpb_eigen.py."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from segbench.algorithms import _gpb_spectral_kernels as _k
from segbench.algorithms._gpb_spectral import (_affinity_stencil, _chebyshev_eigs,
                                               _dual_lattice, affinity_matrix, imresize_bicubic,
                                               oe_filter, spectral_eigs, spectral_pb)
from segbench.errors import InputError


def c_ic_ss(t):
    """affinity.cc's logistic in float64 (the kernel's float32 agrees to ~1e-7)."""
    return 1.0 / (1.0 + np.exp(-(1.8682 - 1.3113 * np.asarray(t) / 0.3130)))


def w_of(maxpb):
    return np.exp(-(1.0 - c_ic_ss(maxpb)) / 0.1)


@pytest.fixture(scope="module")
def textured():
    """A 20 x 24 mPb-like map: two thin contours and faint noise, in [0, 1]."""
    rng = np.random.default_rng(5)
    m = 0.05 * rng.random((20, 24))
    m[7, 3:20] = 0.9
    m[2:18, 15] = 0.6
    return m


def test_affinity_structure_and_blank_value():
    h, w = 13, 17
    W = affinity_matrix(np.zeros((h, w)))
    assert W.shape == (h * w, h * w)
    assert abs(W - W.T).max() == 0
    assert np.array_equal(W.diagonal(), np.ones(h * w))
    # every pair at most 5 px apart is stored, no other
    r, c = np.divmod(np.arange(h * w), w)
    coo = W.tocoo()
    d2 = (r[coo.row] - r[coo.col]) ** 2 + (c[coo.row] - c[coo.col]) ** 2
    assert d2.max() <= 25
    expected = sum(((r[:, None] - r[None, :]) ** 2 + (c[:, None] - c[None, :]) ** 2
                    <= 25).ravel())
    assert W.nnz == expected
    # BSR's quirk: from a pixel in the last column, the pixels one row below and
    # 1-4 columns to the left are missing from its support map (IC = 1 that way),
    # so after averaging those pairs hold (W(0) + W(1)) / 2
    quirk = np.zeros(coo.nnz, bool)
    for a, b in ((coo.row, coo.col), (coo.col, coo.row)):
        quirk |= ((c[a] == w - 1) & (r[b] == r[a] + 1) & (c[b] >= w - 5) & (c[b] < w - 1))
    off = (coo.row != coo.col) & ~quirk
    np.testing.assert_allclose(coo.data[off], w_of(0.0), rtol=1e-6)  # exp(-(1-C(0))/0.1)
    np.testing.assert_allclose(coo.data[quirk], (w_of(0.0) + w_of(1.0)) / 2, rtol=1e-6)
    assert quirk.sum() == 2 * 4 * (h - 1)
    assert abs(w_of(0.0) - 0.2625) < 1e-4


def test_affinity_on_axis_and_diagonal_lines(textured):
    """Along a row, a column or a 45-degree diagonal the Bresenham line is the
    straight one: maxpb is the max of the crossed values (left / upper pixel of each
    step; a diagonal step the 2x2 block without its bottom-right pixel)."""
    m = textured
    h, w = m.shape
    W = affinity_matrix(m).toarray()
    # BSR's quirk: an image corner seen from its two 4-neighbours gets sim 1
    # (ic.cc's clipped-box corner case), whatever the crossed value: skip those pairs
    corners = {0, w - 1, (h - 1) * w, h * w - 1}
    checked = 0
    for r0 in range(h):
        for c0 in range(w):
            p = r0 * w + c0
            if p in corners or p + 1 in corners or p + w in corners:
                continue
            for k in range(1, 6):
                if c0 + k < w:                                  # to the right
                    mx = m[r0, c0:c0 + k].max()
                    assert W[p, p + k] == pytest.approx(w_of(mx), rel=2e-6)
                    checked += 1
                if r0 + k < h:                                  # downwards
                    mx = m[r0:r0 + k, c0].max()
                    assert W[p, p + k * w] == pytest.approx(w_of(mx), rel=2e-6)
                    checked += 1
            for k in range(1, 4):                               # down-right diagonal
                if r0 + k < h and c0 + k < w:
                    mx = max(max(m[r0 + i, c0 + i], m[r0 + i, c0 + i + 1],
                                 m[r0 + i + 1, c0 + i]) for i in range(k))
                    assert W[p, p + k * w + k] == pytest.approx(w_of(mx), rel=2e-6)
                    checked += 1
    assert checked > 2000


def test_step_cuts_affinity():
    """A contour of strength 1 in column 10 cuts every pair across it; pairs on its
    left stay at the blank value; the second eigenvector splits the two sides."""
    h, w = 16, 21
    m = np.zeros((h, w))
    m[:, 10] = 1.0
    W = affinity_matrix(m).toarray()
    col = np.tile(np.arange(w), h)
    left, right = col < 10, col > 10
    across = W[np.ix_(left, right)]
    assert across[across > 0].max() <= w_of(1.0) * (1 + 1e-6)
    same = W[np.ix_(left, left)]
    same = same[(same > 0) & (same < 1)]
    np.testing.assert_allclose(same, w_of(0.0), rtol=1e-6)
    lam, V = spectral_eigs(affinity_matrix(m), 4, tol=0)
    fiedler = V[:, 1]
    assert np.all(np.sign(fiedler[left]) == np.sign(fiedler[left][0]))
    assert np.all(np.sign(fiedler[right]) == -np.sign(fiedler[left][0]))


def _assert_equal_dense(W, lam, V, nvec=17):
    Wd = W.toarray()
    D = np.diag(Wd.sum(axis=0))
    ref_lam, ref_V = scipy.linalg.eigh(D - Wd, D, subset_by_index=(0, nvec - 1))
    assert np.all(np.diff(ref_lam) > 1e-6)          # distinct, so vectors are unique
    np.testing.assert_allclose(lam, ref_lam, atol=1e-6, rtol=0)
    assert abs(lam[0]) < 1e-10
    d = np.diag(D)
    for i in range(nvec):
        v, r = V[:, i], ref_V[:, i]
        assert v @ (d * v) == pytest.approx(1.0, abs=1e-6)
        r = r / np.sqrt(r @ (d * r))
        np.testing.assert_allclose(abs(v @ (d * r)), 1.0, atol=1e-6)
        np.testing.assert_allclose(np.abs(v), np.abs(r), atol=1e-5 * np.abs(r).max())
    # the constant vector first, and the residual of the generalized problem
    np.testing.assert_allclose(V[:, 0], V[0, 0], rtol=1e-6)
    res = (D - Wd) @ V - (D @ V) * lam[None, :]
    assert np.abs(res).max() < 1e-6


@pytest.mark.parametrize("solver", ["lanczos", "chebyshev"])
def test_generalized_eigs_equal_dense(textured, solver):
    """On 480 pixels the wanted eigenvalues reach 0.59, above every Chebyshev cut:
    'chebyshev' falls back to Lanczos and must still be right."""
    W = affinity_matrix(textured)
    assert W.shape[0] == 480
    lam, V = spectral_eigs(W, 17, solver=solver, tol=0, shape=textured.shape)
    _assert_equal_dense(W, lam, V)
    assert _chebyshev_eigs(W, 17, textured.shape, 5, 0) is None


def test_chebyshev_eigs_equal_dense(textured):
    """On a 40 x 48 map the 17 smallest eigenvalues lie below 0.04, so the Chebyshev
    solver runs (its second cut) on W's float32 stencil: the dense solver's pairs."""
    m = np.kron(textured, np.ones((2, 2)))
    W = affinity_matrix(m)
    found = _chebyshev_eigs(W, 17, m.shape, 5, 0.0)
    assert found is not None
    _assert_equal_dense(W, *found)
    lam, V = spectral_eigs(W.copy(), 17, solver="chebyshev", shape=m.shape, tol=0)
    assert lam.tobytes() == found[0].tobytes() and V.tobytes() == found[1].tobytes()


def test_spectrum_floor_lies_below_the_lowest_eigenvalue(textured):
    """The Chebyshev interval's lower end: an estimate below A's lowest eigenvalue
    (dense), and well above -1 (what the filter gains from)."""
    from segbench.algorithms import _gpb_spectral as S

    m = np.kron(textured, np.ones((2, 2)))
    W = affinity_matrix(m).toarray()
    d = W.sum(axis=0)
    A = W / np.sqrt(np.outer(d, d))
    lowest = scipy.linalg.eigvalsh(A)[0]
    floor = S._spectrum_floor(lambda u: (A @ u.ravel()).reshape(u.shape), m.shape)
    assert -1.0 < floor < lowest < 0.0
    assert lowest - floor < 0.3


def test_chebyshev_eigs_survive_a_floor_estimate_above_the_spectrum(textured,
                                                                  monkeypatch):
    """If the lower end proves wrong (eigenvalues below it are lifted by the filter and
    come out among the 'largest'), the solve is redone on [-1, cut]: still the dense
    solver's pairs, bit for bit the result of an interval from -1."""
    from segbench.algorithms import _gpb_spectral as S

    m = np.kron(textured, np.ones((2, 2)))
    W = affinity_matrix(m)
    monkeypatch.setattr(S, "_spectrum_floor", lambda product, shape: -1.0)
    from_minus_one = S._chebyshev_eigs(W, 17, m.shape, 5, 0.0)
    monkeypatch.setattr(S, "_spectrum_floor", lambda product, shape: 0.0)
    found = S._chebyshev_eigs(W, 17, m.shape, 5, 0.0)
    assert found is not None
    _assert_equal_dense(W, *found)
    assert found[0].tobytes() == from_minus_one[0].tobytes()
    assert found[1].tobytes() == from_minus_one[1].tobytes()


def test_stencil_affinity_is_the_csr_one(textured):
    """W built straight in the solver's half-stencil form holds the bits of the CSR
    matrix's symmetrised entries, borders (offsets leaving the image: 0) included."""
    rng = np.random.default_rng(3)
    m = np.clip(np.kron(textured, np.ones((2, 2)))[:, :45] + 0.2 * rng.random((40, 45)),
                0, 1)
    W = affinity_matrix(m)
    ody, odx = _k.forward_offsets(5)
    half, diag, outside = _k.half_stencil(W.indptr, W.indices, W.data, 40, 45, 5, ody,
                                          odx)
    assert outside == 0
    half2, diag2, _, _ = _affinity_stencil(m)
    assert half2.dtype == np.float32 and half2.shape == (40, ody.size, 45)
    assert half2.tobytes() == half.tobytes() and diag2.tobytes() == diag.tobytes()
    assert (half[-1, ody > 0, :] == 0).all() and (half[:, 0, -1] == 0).all()
    # values 0 and 1 exactly, mixed with others, on a grid whose interior pixels (box
    # inside the image) take the precomputed walk and whose border ones the walk
    pick = rng.integers(0, 3, (31, 26))
    m2 = np.where(pick == 0, 0.0, np.where(pick == 1, 1.0, rng.random((31, 26))))
    W2 = affinity_matrix(m2)
    half3, diag3, _ = _k.half_stencil(W2.indptr, W2.indices, W2.data, 31, 26, 5, ody,
                                      odx)
    half4, diag4, _, _ = _affinity_stencil(m2)
    assert half4.tobytes() == half3.tobytes() and diag4.tobytes() == diag3.tobytes()
    # the precomputed walk of interior pixels against the walk itself, everywhere
    for mm in (m, m2):
        hh, ww = mm.shape
        hl, vl = _dual_lattice(mm)
        args = (hl, vl, hh, ww, 5, 25, np.float32(0.1), np.float32(1.0))
        program = _k.interior_program(5, 25, np.float32(0.1), np.float32(1.0))
        mats = []
        for prog in (program, _k.WALK_ONLY):
            Wm = affinity_matrix(mm)           # the structure; data refilled below
            assert _k.affinity_rows(*args, prog, Wm.indptr, Wm.indices, Wm.data) == 0
            mats.append(Wm.data.copy())
        assert mats[0].tobytes() == mats[1].tobytes()
        assert not np.all(mats[0] == mats[0][0])
    with pytest.raises(ValueError, match="stop early"):   # the program's assumption
        _k.interior_program(5, 25, np.float32(0.1), np.float32(0.5))
    # and spectral_pb, which now solves on that form, gives the CSR route's pairs
    _, lam, vecs = spectral_pb(m, solver="chebyshev", tol=0)
    lam2, V2 = spectral_eigs(W, 17, solver="chebyshev", shape=m.shape, tol=0)
    assert lam.tobytes() == lam2[1:].tobytes()
    assert vecs.tobytes() == np.ascontiguousarray(V2[:, 1:].T).tobytes()


def test_spectral_pb_falls_back_to_lanczos_when_the_cuts_fail(textured):
    """480 pixels: no cut has 17 eigenvalues above it, so sPb's Chebyshev attempt on
    the stencil gives way to Lanczos on the CSR matrix: Lanczos's own result."""
    via = spectral_pb(textured, solver="chebyshev", tol=0)
    direct = spectral_pb(textured, solver="lanczos", tol=0)
    for x, y in zip(via, direct):
        assert x.tobytes() == y.tobytes()


def test_chebyshev_filter_is_its_steps(textured):
    """The one-sweep recurrence (levels R rows apart) gives the bits of the same
    recurrence run one whole product at a time."""
    m = np.kron(textured, np.ones((2, 2)))
    h, w = m.shape
    W = affinity_matrix(m)
    ody, odx = _k.forward_offsets(5)
    half, diag, _ = _k.half_stencil(W.indptr, W.indices, W.data, h, w, 5, ody, odx)
    scale = 1.0 / np.sqrt(np.asarray(W.sum(axis=1)).reshape(h, w))
    x = np.random.default_rng(1).standard_normal((h, w))
    a1, b1, a, b = 1.3, -0.2, 2.6, -0.4
    for degree in (1, 2, 3, 7, 12):
        got = _k.chebyshev_filter(half, diag, ody, odx, scale, x, a1, b1, a, b, degree,
                                  np.empty((h, w)))
        prev, cur, scratch = x, np.empty((h, w)), np.empty((h, w))
        _k.chebyshev_step(half, diag, ody, odx, scale, prev, np.zeros((h, w)), cur,
                          scratch, a1, b1, 0.0)
        for _ in range(2, degree + 1):
            nxt = np.empty((h, w))
            _k.chebyshev_step(half, diag, ody, odx, scale, cur, prev, nxt, scratch, a, b,
                              -1.0)
            prev, cur = cur, nxt
        assert got.tobytes() == cur.tobytes(), degree
        assert not np.allclose(cur, x)


def test_chebyshev_refuses_a_matrix_beyond_the_stencil(textured):
    """A coupling farther than the radius cannot be held by the stencil: the solver
    says so (None) and spectral_eigs solves the matrix as given with Lanczos."""
    m = np.kron(textured, np.ones((2, 2)))
    W = affinity_matrix(m).tolil()
    W[0, 200] = W[200, 0] = 0.5
    W = W.tocsr()
    assert _chebyshev_eigs(W, 17, m.shape, 5, 0.0) is None
    lam, V = spectral_eigs(W, 17, solver="chebyshev", shape=m.shape, tol=0)
    _assert_equal_dense(W, lam, V)
    with pytest.raises(InputError, match="shape"):
        spectral_eigs(W, 17, solver="chebyshev")
    with pytest.raises(InputError, match="does not hold"):
        spectral_eigs(W, 17, shape=(3, 4))


def test_oe_filter_contract():
    for o in range(1, 9):
        f = oe_filter(1.0, 3.0, o * np.pi / 8, 1)
        assert f.shape == (7, 7)
        assert abs(f.sum()) < 1e-15
        assert np.abs(f).sum() == pytest.approx(1.0)
        np.testing.assert_allclose(f, -f[::-1, ::-1], atol=1e-15)   # odd filter
    # theta = pi / 2 differentiates along the columns: a vertical-tangent boundary
    f = oe_filter(1.0, 3.0, np.pi / 2, 1)
    assert np.abs(f.sum(axis=0)).max() > 10 * np.abs(f.sum(axis=1)).max()


def test_imresize_bicubic_reproduces_a_ramp():
    """Keys' cubic reproduces linear functions: away from the mirrored borders an
    upsampled ramp equals the ramp at MATLAB's sample positions."""
    n, m = 11, 23
    ramp = np.tile(np.arange(1, n + 1, dtype=float)[:, None], (1, 5))
    out = imresize_bicubic(ramp, (m, 5))
    s = m / n
    u = np.arange(1, m + 1) / s + 0.5 * (1 - 1 / s)
    inner = (u > 2.5) & (u < n - 1.5)
    np.testing.assert_allclose(out[inner, 2], u[inner], atol=1e-12)
    np.testing.assert_allclose(imresize_bicubic(np.full((7, 9), 0.3), (20, 13)), 0.3,
                               atol=1e-15)


def test_imresize_by_a_scale_factor_samples_at_that_factor():
    """MATLAB's imresize(A, 0.5) of a 481-row image gives ceil(240.5) = 241 rows and
    samples at u = x / 0.5 - 0.5 (the factor as given, not 241 / 481): a ramp comes
    back as those positions away from the borders (the widened cubic reproduces
    linear functions)."""
    ramp = np.tile(np.arange(1, 482, dtype=float)[:, None], (1, 9))
    out = imresize_bicubic(ramp, scale=0.5)
    assert out.shape == (241, 5)
    u = np.arange(1, 242) / 0.5 - 0.5
    inner = (u > 6) & (u < 475)
    np.testing.assert_allclose(out[inner, 2], u[inner], atol=1e-9)
    by_shape = imresize_bicubic(ramp, (241, 5))
    assert not np.allclose(by_shape[inner, 2], u[inner], atol=1e-3)   # 241/481 != 0.5


def test_deterministic_bytes(textured):
    m = np.kron(textured, np.ones((2, 2)))[:30, :40]
    a = spectral_pb(m)
    b = spectral_pb(m.copy())
    for x, y in zip(a, b):
        assert x.tobytes() == y.tobytes()
    spb, lam, vecs = a
    assert spb.shape == (8, 30, 40) and lam.shape == (16,) and vecs.shape == (16, 30, 40)
    assert np.all(np.diff(lam) >= 0) and lam[0] > 0


@pytest.mark.parametrize("kind,channel", [("horizontal", 0), ("vertical", 4),
                                          ("diagonal", 2), ("antidiagonal", 6)])
def test_spb_channel_is_the_tangent(kind, channel):
    """sPb of a two-region map peaks, along the boundary, in the channel of the
    boundary's tangent (k pi / 8 from +x towards +y, row down)."""
    n = 40
    r, c = np.mgrid[:n, :n]
    region = {"horizontal": r >= n // 2, "vertical": c >= n // 2,
              "diagonal": r > c, "antidiagonal": r + c > n}[kind]
    # the thinned boundary: the pixels of one region touching the other
    edge = region & ~np.pad(region, 1, mode="edge")[:-2, 1:-1] \
        | region & ~np.pad(region, 1, mode="edge")[2:, 1:-1] \
        | region & ~np.pad(region, 1, mode="edge")[1:-1, :-2] \
        | region & ~np.pad(region, 1, mode="edge")[1:-1, 2:]
    mpb = edge.astype(float)
    spb, lam, _ = spectral_pb(mpb, nvec=5)
    inner = np.zeros_like(edge)
    inner[8:-8, 8:-8] = True
    totals = spb[:, edge & inner].sum(axis=1)
    assert int(np.argmax(totals)) == channel
    # a first derivative of a Gaussian falls off as cos(angle): next channels are
    # close (cos(pi/8) = 0.92), the perpendicular one is far
    assert totals[channel] > 1.02 * max(totals[(channel + 1) % 8],
                                        totals[(channel - 1) % 8])
    assert totals[(channel + 4) % 8] < 0.6 * totals[channel]


def test_out_shape_resizes_eigenvectors(textured):
    timings = {}
    spb, lam, vecs = spectral_pb(textured, nvec=5, out_shape=(40, 48), timings=timings)
    assert spb.shape == (8, 40, 48) and vecs.shape == (4, 20, 24)
    assert np.isfinite(spb).all() and spb.min() >= 0
    assert set(timings) == {"W", "eigenvectors", "sPb"}
    assert all(t >= 0 for t in timings.values())


@pytest.mark.parametrize("bad", [np.zeros((4, 4, 3)), np.full((5, 5), np.nan),
                                 np.full((5, 5), 1.5), -np.ones((5, 5)), np.zeros((1, 9)),
                                 np.zeros((5, 5), bool)])
def test_input_checks(bad):
    with pytest.raises(InputError):
        spectral_pb(bad)


def test_option_checks(textured):
    with pytest.raises(InputError):
        spectral_pb(textured, nvec=1)
    with pytest.raises(InputError):
        spectral_pb(np.zeros((3, 3)), nvec=17)
    with pytest.raises(InputError):
        spectral_pb(textured, solver="magic")
    with pytest.raises(InputError):
        affinity_matrix(textured, radius=0)


_SPB_DIGEST = """
import hashlib, sys
import numpy as np
from segbench.algorithms._gpb_spectral import spectral_pb
rng = np.random.default_rng(3)
m = 0.05 * rng.random((170, 130))
for k in range(12):  # contours of several strengths, so 16 vectors are far from flat
    m[10 + 13 * k, 5:125] = 0.3 + 0.05 * k
    m[5:165, 8 + 10 * k] = 0.9 - 0.05 * k
out = spectral_pb(m)
print(";".join(hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest() for a in out))
"""


def test_spectral_pb_is_the_same_bytes_at_any_blas_thread_count():
    """OpenBLAS's threaded dot products and ARPACK's orthogonalisation sum by thread;
    the solver runs them on one thread (threadpoolctl), so a library call made
    without OPENBLAS_NUM_THREADS=1 (a notebook, a training script) gives the CLI's
    bytes. Before, the eigenvalues and sPb changed with the thread count."""
    import os
    import subprocess
    import sys

    digests = []
    for threads in ("1", "2"):
        env = {**os.environ, "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads}
        done = subprocess.run([sys.executable, "-c", _SPB_DIGEST], env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        digests.append(done.stdout.strip())
    assert digests[0] == digests[1]
