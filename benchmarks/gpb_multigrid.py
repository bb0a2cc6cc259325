"""gPb's spectral step: the coarse-to-fine eigensolver prototype against the exact one.

For one BSDS image (default 101085) the thinned mPb is computed with segbench's own
:func:`segbench.algorithms._gpb.mpb` on the photograph and on its 2x and 4x Pillow
bicubic enlargements (481 x 321, 962 x 642, 1924 x 1284 pixels; cached under --cache).
For each size a fresh process (so peak memory is its own) runs either

- ``exact``: the library's solve (stencil W, then ARPACK on the Chebyshev-filtered
  normalised affinity, as :func:`spectral_pb` does), or
- ``multigrid``: :func:`segbench.algorithms._gpb_multigrid.multigrid_eigs`,

each from the mPb (W included), after compiling the kernels on a small crop. Printed per
size: CPU-s (``time.process_time``) and peak RSS of each, the cost exponent between
sizes (log CPU ratio / log pixel ratio), and the multigrid's accuracy against the exact
solve: each non-trivial eigenvalue's relative error, the principal angles between the
16 non-trivial eigenvector subspaces (in the D inner product), and the correlation of
sPb (``oriented_response`` of the min-max normalised vectors / sqrt(lambda), as
spectral_pb computes it). The exact solve is skipped above --exact-max pixels (its
cost extrapolated from the smaller sizes with the measured exponent is printed).

Set ``OPENBLAS_NUM_THREADS=1``. Usage::

    python benchmarks/gpb_multigrid.py --id 101085 --factors 1 2 4
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared/data/bsds500/images/val"


def _thin(iid: str, factor: int, cache: Path) -> Path:
    out = cache / f"thin_{iid}_{factor}.npy"
    if not out.exists():
        from PIL import Image

        from segbench.algorithms._gpb import mpb

        img = Image.open(DATA / f"{iid}.jpg").convert("RGB")
        if factor > 1:
            img = img.resize((img.width * factor, img.height * factor), Image.BICUBIC)
        np.save(out, mpb(np.asarray(img))[2])
    return out


def _child(method: str, src: str, dst: str, kwargs: str) -> None:
    from segbench.algorithms._gpb_multigrid import multigrid_eigs
    from segbench.algorithms._gpb_spectral import _affinity_stencil, _chebyshev_stencil_eigs

    a = np.load(src)
    warm = a[:120, :100]
    kw = json.loads(kwargs)
    # load every compiled kernel (the exact solver's too: stencil_product,
    # chebyshev_filter, chebyshev_step); not the exact solve itself on a small grid,
    # where its cuts fail and it retries for minutes
    multigrid_eigs(warm, levels=1)
    t = time.process_time()
    if method == "exact":
        lam, V = _chebyshev_stencil_eigs(*_affinity_stencil(a), 17, 1e-6)
    else:
        lam, V = multigrid_eigs(a, **kw)
    cpu = time.process_time() - t
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    np.savez(dst, lam=lam, V=V.astype(np.float64))
    print(json.dumps({"cpu": cpu, "rss_mb": rss}))


def _run(method, src, dst, kwargs):
    out = subprocess.run(
        [sys.executable, __file__, "--child", method, str(src), str(dst), kwargs],
        capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _spb(lam, V, shape):
    from segbench.algorithms._gpb_spectral import oriented_response

    h, w = shape
    vecs = V[:, 1:].T.reshape(-1, h, w)
    work = np.stack([(v - v.min()) / (v.max() - v.min()) / np.sqrt(l)
                     for v, l in zip(vecs, lam[1:]) if l > 0])
    return oriented_response(work)


def _compare(a, ex, mg):
    import scipy.linalg

    from segbench.algorithms._gpb_multigrid import _degrees
    from segbench.algorithms._gpb_spectral import _affinity_stencil

    sq = np.sqrt(_degrees(*_affinity_stencil(a)).ravel())[:, None]
    rel = np.abs(mg["lam"][1:] - ex["lam"][1:]) / ex["lam"][1:]
    ang = np.degrees(scipy.linalg.subspace_angles(ex["V"][:, 1:] * sq, mg["V"][:, 1:] * sq))
    s0, s1 = _spb(ex["lam"], ex["V"], a.shape), _spb(mg["lam"], mg["V"], a.shape)
    corr = np.corrcoef(s0.ravel(), s1.ravel())[0, 1]
    medrel = np.median(np.abs(s1 - s0)) / np.median(np.abs(s0))
    return rel, ang, corr, medrel, s0, s1


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--id", default="101085")
    p.add_argument("--factors", type=int, nargs="+", default=[1, 2, 4])
    p.add_argument("--cache", default="/tmp/gpb_multigrid")
    p.add_argument("--exact-max", type=int, default=1_000_000,
                   help="skip the exact solve above this many pixels (default 1e6)")
    p.add_argument("--mg", default="{}", help="multigrid_eigs keywords as JSON")
    p.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        _child(*args.child)
        return
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    rows = []
    print(f"image {args.id}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}"
          f", multigrid {args.mg}")
    for f in args.factors:
        src = _thin(args.id, f, cache)
        a = np.load(src)
        n = a.size
        row = {"f": f, "shape": a.shape, "n": n}
        mg_dst = cache / f"mg_{args.id}_{f}.npz"
        row["mg"] = _run("multigrid", src, mg_dst, args.mg)
        if n <= args.exact_max:
            ex_dst = cache / f"exact_{args.id}_{f}.npz"
            row["ex"] = _run("exact", src, ex_dst, "{}")
            rel, ang, corr, medrel, _, _ = _compare(a, np.load(ex_dst), np.load(mg_dst))
            row.update(rel=rel, ang=ang, corr=corr, medrel=medrel)
        rows.append(row)
        ex = row.get("ex")
        print(f"\n{a.shape[0]} x {a.shape[1]} ({n} px)")
        print("  exact     : " + (f"{ex['cpu']:7.1f} CPU-s {ex['rss_mb']:7.0f} MB"
                                  if ex else "skipped (over --exact-max)"))
        print(f"  multigrid : {row['mg']['cpu']:7.1f} CPU-s {row['mg']['rss_mb']:7.0f} MB")
        if ex:
            np.set_printoptions(precision=4, linewidth=200)
            print(f"  eigenvalue rel. error: max {row['rel'].max():.2e} "
                  f"median {np.median(row['rel']):.2e}\n    {row['rel']}")
            print(f"  principal angles (deg): max {row['ang'].max():.2f}\n    {row['ang']}")
            print(f"  sPb correlation {corr:.5f}, median |diff| / median sPb {medrel:.4f}")
        sys.stdout.flush()
    print("\ncost exponents (log CPU ratio / log pixel ratio):")
    for r0, r1 in zip(rows, rows[1:]):
        k = np.log(r1["n"] / r0["n"])
        mg = np.log(r1["mg"]["cpu"] / r0["mg"]["cpu"]) / k
        line = f"  {r0['shape']} -> {r1['shape']}: multigrid {mg:.3f}"
        if "ex" in r0 and "ex" in r1:
            line += f", exact {np.log(r1['ex']['cpu'] / r0['ex']['cpu']) / k:.3f}"
        print(line)
    r0, r1 = rows[0], rows[-1]
    if len(rows) > 1:
        ratio = r1["mg"]["cpu"] / r0["mg"]["cpu"]
        print(f"  multigrid {r0['shape']} -> {r1['shape']}: x{ratio:.1f} CPU for "
              f"x{r1['n'] / r0['n']:.1f} pixels (1.2 x linear: x{1.2 * r1['n'] / r0['n']:.1f})")
        ex = [r for r in rows if "ex" in r]
        if len(ex) >= 2 and "ex" not in r1:
            e = np.log(ex[-1]["ex"]["cpu"] / ex[-2]["ex"]["cpu"]) / np.log(ex[-1]["n"] / ex[-2]["n"])
            est = ex[-1]["ex"]["cpu"] * (r1["n"] / ex[-1]["n"]) ** e
            print(f"  exact at {r1['shape']} extrapolated (exponent {e:.2f}): ~{est:.0f} CPU-s")


if __name__ == "__main__":
    main()
