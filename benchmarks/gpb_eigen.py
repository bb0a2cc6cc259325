"""gPb's spectral cue: eigensolvers compared on CPU-s, peak memory and parity with BSR.

For each image and solver configuration, a fresh process (so peak memory is its own)
runs the three stages of :func:`segbench.algorithms._gpb_spectral.spectral_pb` on
BSR's ``mPb_nmax`` (the input of buildW), after compiling the kernels on a small
image, and prints CPU-s (``time.process_time``) per stage, the peak resident memory,
and against the BSR reference run (Octave, the original code): eigenvalues' relative
difference, per-vector |correlation| of the eigenvectors, sPb per-channel correlation
and max / median |difference| (our channel order).

Configurations (``--configs``):

- ``lanczos:TOL`` ARPACK on the normalised affinity.
- ``chebyshev:TOL`` ARPACK on a Chebyshev polynomial of it, W in float32 stencil form
  (the library's default solver on images).
- ``lobpcg-amg:TOL`` LOBPCG on ``(D - W, D)`` with a pyamg smoothed-aggregation
  preconditioner (needs ``pip install pyamg``; not a segbench dependency).
- ``rsz0.5:TOL`` BSR's ``rsz = 0.5`` path with Lanczos: the weighted cues
  ``mPb_all`` resized by 0.5 (bicubic, antialiased), thinned here by a stand-in
  non-max suppression (Martin's ``nonmax`` at the max channel's tangent, x1.2,
  clipped, border zeroed; BSR's own ``nonmax_channels`` is the cue code's), the
  eigenvectors resized back. There is no BSR reference at rsz < 1: its parity is
  against BSR's full-size sPb.

Set ``OPENBLAS_NUM_THREADS=1`` (and ``OMP_NUM_THREADS=1``) for single-thread figures.
Usage::

    python benchmarks/gpb_eigen.py --ref /path/to/bsr_ref --ids 101085 101087
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

DEFAULT_CONFIGS = ["lanczos:0", "lanczos:1e-6", "chebyshev:1e-6", "lanczos:1e-4",
                   "lobpcg-amg:1e-5", "rsz0.5:1e-6"]


def _lobpcg_amg(W, nvec, tol):
    import numpy as np
    import pyamg
    import scipy.sparse as sparse
    from scipy.sparse.linalg import lobpcg

    from segbench.algorithms._gpb_spectral import _fix_vectors
    deg = np.asarray(W.sum(axis=0)).ravel()
    D = sparse.diags(deg).tocsr()
    L = (D - W).tocsr()
    ml = pyamg.smoothed_aggregation_solver(L + 1e-6 * D, max_coarse=500)
    X = np.random.default_rng(0).standard_normal((W.shape[0], nvec + 3))
    lam, V = lobpcg(L, X, B=D, M=ml.aspreconditioner(), largest=False, tol=tol,
                    maxiter=200)
    order = np.argsort(lam)[:nvec]
    return lam[order], _fix_vectors(V[:, order], deg)


def _stand_in_nmax_rsz(mpb_all, rsz):
    """BSR's mPb_nmax_rsz with a stand-in thinning (see the module docstring)."""
    import numpy as np

    from segbench.algorithms._gpb_spectral import imresize_bicubic
    from segbench.algorithms._pb import pb_nonmax
    h, w, _ = mpb_all.shape
    shape = (int(np.ceil(h * rsz)), int(np.ceil(w * rsz)))
    small = np.stack([imresize_bicubic(mpb_all[:, :, j], shape) for j in range(8)])
    j = np.argmax(small, axis=0)
    tangent = np.mod(np.pi / 2 - j * np.pi / 8, np.pi)        # BSR channel j+1 -> ours
    out = pb_nonmax(np.maximum(small.max(axis=0), 0.0), tangent)
    out = np.clip(1.2 * out, 0, 1)
    out[[0, -1], :] = 0
    out[:, [0, -1]] = 0
    return out


def run_one(ref: str, iid: str, config: str) -> dict:
    import numpy as np
    import scipy.io as sio

    from segbench.algorithms import _gpb_spectral as S
    kind, tol = config.split(":")
    tol = float(tol)
    mats = {name: sio.loadmat(os.path.join(ref, iid, f"{name}.mat"))
            for name in ("mPb", "eigs", "sPb")}
    mpb = mats["mPb"]["mPb_nmax"]
    H, W_ = mpb.shape
    S.spectral_pb(mpb[:40, :40])                                # compile / load kernels
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if kind.startswith("rsz"):
        mpb = _stand_in_nmax_rsz(mats["mPb"]["mPb_all"], float(kind[3:]))
    h, w = mpb.shape
    t0 = time.process_time()
    W = S.affinity_matrix(mpb)
    t1 = time.process_time()
    if kind == "lobpcg-amg":
        lam, V = _lobpcg_amg(W, 17, tol)
    else:   # 'lanczos' / 'chebyshev', or the default solver at reduced size
        solver = kind if kind in S.SOLVERS else "auto"
        lam, V = S.spectral_eigs(W, 17, solver=solver, tol=tol, shape=(h, w))
    t2 = time.process_time()
    del W
    lam, V = lam[1:], V[:, 1:]
    vecs = V.T.reshape(-1, h, w)
    work = np.empty((16, H, W_))
    for i in range(16):
        img = vecs[i] if (h, w) == (H, W_) else S.imresize_bicubic(vecs[i], (H, W_))
        work[i] = (img - img.min()) / (img.max() - img.min()) / np.sqrt(lam[i])
    spb = S.oriented_response(work)
    t3 = time.process_time()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    out = {"id": iid, "config": config, "solve_size": [h, w],
           "cpu_W": round(t1 - t0, 3), "cpu_eigs": round(t2 - t1, 3),
           "cpu_sPb": round(t3 - t2, 3), "cpu_total": round(t3 - t0, 3),
           "peak_rss_MB": round(rss), "rss_before_MB": round(rss0)}
    ref_lam = mats["eigs"]["EigVal"].ravel()[1:17]
    ref_vec = mats["eigs"]["vect"][:, :, 1:17]
    ref_spb = mats["sPb"]["sPb"]
    out["lam_reldiff_max"] = float(np.max(np.abs(lam - ref_lam) / ref_lam))
    out["lam_reldiff_median"] = float(np.median(np.abs(lam - ref_lam) / ref_lam))
    if (h, w) == (H, W_):
        cors = [abs(np.corrcoef(work[i].ravel(), ref_vec[:, :, i].ravel())[0, 1])
                for i in range(16)]
        out["vec_abscorr_min"] = float(np.min(cors))
        out["vec_abscorr"] = [round(float(c), 6) for c in cors]
    chans = []
    for k in range(8):
        r = ref_spb[:, :, (4 - k) % 8]
        d = np.abs(spb[k] - r)
        chans.append([float(np.corrcoef(spb[k].ravel(), r.ravel())[0, 1]),
                      float(d.max()), float(np.median(d))])
    chans = np.array(chans)
    out["spb_corr_min"] = float(chans[:, 0].min())
    out["spb_maxdiff"] = float(chans[:, 1].max())
    out["spb_mediandiff_max"] = float(chans[:, 2].max())
    out["spb_ref_max"] = float(ref_spb.max())
    out["spb_channels"] = [[round(c, 6), float(f"{m:.3e}"), float(f"{md:.3e}")]
                           for c, m, md in chans]
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ref", required=True, help="folder of BSR reference runs (<id>/*.mat)")
    p.add_argument("--ids", nargs="+", default=["101085", "101087"])
    p.add_argument("--configs", nargs="+", default=DEFAULT_CONFIGS)
    p.add_argument("--one", nargs=2, metavar=("ID", "CONFIG"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one:
        print(json.dumps(run_one(args.ref, *args.one)))
        return 0
    for iid in args.ids:
        for config in args.configs:
            res = subprocess.run([sys.executable, __file__, "--ref", args.ref,
                                  "--one", iid, config], capture_output=True, text=True)
            if res.returncode:
                print(json.dumps({"id": iid, "config": config,
                                  "error": res.stderr.strip().splitlines()[-1:]}))
            else:
                print(res.stdout.strip().splitlines()[-1], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
