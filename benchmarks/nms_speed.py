#!/usr/bin/env python3
"""Speed of segbench's edge NMS next to pyEdgeEval 0.2.8's ``fast_nms``, on real maps.

Both get the same N raw soft maps, made from the first N BSDS500 test images (sorted
ids), float64 in [0, 1]:

* ``--source hed`` (default): the HED maps of ``<data>/bsds500-hed-nms/test/<iid>.png``
  (uint8 / 255) blurred by a Gaussian of ``--sigma`` pixels (default 2), which
  un-thins them into something like a raw network output;
* ``--source gm``: segbench's colour gradient magnitude of the photographs
  ``<data>/bsds500/images/test/<iid>.jpg`` without its own suppression
  (``gradient_magnitude(img, nms=False)``).

Timed per map: the whole recipe from the raw map to the thinned one, with the defaults
of both (convTri(E, 1) first, r=1, s=5, m=1.01): ``segbench.algorithms.edge_nms(E)``
and ``pyEdgeEval.preprocess.fast_nms(E)``. Reading and writing files are not timed.
Times are CPU seconds (``time.process_time``) in one process with every thread pool
limited to one thread, the median of ``--repeat`` runs per map, then the median over
maps; segbench's kernels are compiled (and the compile time printed) before timing.
Also printed: the fraction of pixels that one keeps and the other suppresses, and the
maximum per-pixel difference.

pyEdgeEval (``pip install pyedgeeval==0.2.8 opencv-python-headless``, in the test
extras) is imported in this process; without it only segbench is timed. The script
prints figures only and asserts nothing about timing.

    python benchmarks/nms_speed.py                   # 20 HED maps, sigma 2
    python benchmarks/nms_speed.py --source gm --n 10
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
           "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _maps(source: str, n: int, sigma: float, data: Path):
    from PIL import Image
    from scipy import ndimage
    if source == "hed":
        files = sorted((data / "bsds500-hed-nms" / "test").glob("*.png"))[:n]
        for f in files:
            raw = np.asarray(Image.open(f), np.float64) / 255
            yield f.stem, ndimage.gaussian_filter(raw, sigma) if sigma else raw
    else:
        from segbench.algorithms import gradient_magnitude
        from segbench.io import read_image
        files = sorted((data / "bsds500" / "images" / "test").glob("*.jpg"))[:n]
        for f in files:
            yield f.stem, gradient_magnitude(read_image(f), nms=False)


def _cpu(fn, E, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn(E)
        times.append(time.process_time() - t)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", choices=("hed", "gm"), default="hed")
    ap.add_argument("--n", type=int, default=20, help="number of maps (default 20)")
    ap.add_argument("--sigma", type=float, default=2.0, help="HED blur (default 2)")
    ap.add_argument("--repeat", type=int, default=7, help="runs per map (default 7)")
    ap.add_argument("--data", type=Path, default=DATA)
    a = ap.parse_args()

    t = time.process_time()
    from segbench.algorithms import edge_nms
    edge_nms(np.random.default_rng(0).random((16, 16)))
    print(f"segbench import + first call (compiles once, then cached): "
          f"{time.process_time() - t:.2f} CPU-s")
    try:
        from pyEdgeEval.preprocess import fast_nms
    except ImportError as exc:
        fast_nms = None
        print(f"pyEdgeEval not importable ({exc}); timing segbench only")

    rows = []
    for iid, E in _maps(a.source, a.n, a.sigma, a.data):
        ours = _cpu(edge_nms, E, a.repeat)
        row = {"iid": iid, "shape": E.shape, "ours": ours}
        if fast_nms is not None:
            row["peer"] = _cpu(fast_nms, E, a.repeat)
            o, p = edge_nms(E).astype(np.float64), fast_nms(E)
            row["disagree"] = float(((o > 0) != (p > 0)).mean())
            row["maxdiff"] = float(np.abs(o - p).max())
        rows.append(row)
    if not rows:
        print(f"no maps found under {a.data}")
        return 1

    what = (f"HED maps blurred by sigma {a.sigma:g}" if a.source == "hed"
            else "gradient magnitude without suppression")
    print(f"{len(rows)} BSDS500 test maps ({what}), median of {a.repeat} runs each, "
          "CPU ms per map")
    head = f"{'id':>8} {'HxW':>8} {'segbench':>9}"
    if fast_nms is not None:
        head += f" {'pyEdgeEval':>10} {'ratio':>6} {'differ':>8} {'max diff':>8}"
    print(head)
    for r in rows:
        line = f"{r['iid']:>8} {r['shape'][0]:>3}x{r['shape'][1]:<4} {1e3 * r['ours']:9.2f}"
        if fast_nms is not None:
            line += (f" {1e3 * r['peer']:10.2f} {r['peer'] / r['ours']:6.1f}"
                     f" {100 * r['disagree']:7.3f}% {r['maxdiff']:8.4f}")
        print(line)
    ours = statistics.median(r["ours"] for r in rows)
    line = f"{'median':>8} {'':>8} {1e3 * ours:9.2f}"
    if fast_nms is not None:
        peer = statistics.median(r["peer"] for r in rows)
        line += (f" {1e3 * peer:10.2f} {peer / ours:6.1f}"
                 f" {100 * statistics.median(r['disagree'] for r in rows):7.3f}%"
                 f" {max(r['maxdiff'] for r in rows):8.4f}")
    print(line)
    print("ratio = pyEdgeEval / segbench; differ = pixels kept by one and suppressed by "
          "the other")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
