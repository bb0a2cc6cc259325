#!/usr/bin/env python3
"""CPU seconds per image of the granularity segmenters (``kmeans``, ``ncut-superpixel``,
``ncut-2001``), the figures of docs/consistency.md's segmenter list.

"Per image" is what ``segbench granularity`` does with one image: the segmenter at
each distinct number of segments of its annotators (its ``prepare`` shared between
them, as the engine does) and the GCE/LCE against each annotator
(:func:`segbench.region.consistency.granularity_image`). Each segmenter runs in a child
process of its own, one BLAS thread, after a first call on a small image that loads
its compiled kernels; the child reports ``time.process_time``. For ``ncut-2001`` the
eigen-solve (``spectral_eigs``) is timed apart. The script prints figures only; it
asserts nothing.

    python benchmarks/segmenter_speed.py                 # first 5 val images
    python benchmarks/segmenter_speed.py --n 3 --segmenters ncut-2001
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "bsds500"
SEGMENTERS = ("kmeans", "ncut-superpixel", "ncut-2001")


def _child(name: str, data: Path, n: int) -> None:
    import time

    import numpy as np

    from segbench.algorithms import _ncut2001, get_segmenter
    from segbench.io import read_ground_truth, read_image
    from segbench.region.consistency import granularity_image

    eig = [0.0]
    solve = _ncut2001.spectral_eigs

    def timed(*args, **kwargs):          # the eigen-solve's share of ncut-2001
        t = time.process_time()
        try:
            return solve(*args, **kwargs)
        finally:
            eig[0] += time.process_time() - t

    _ncut2001.spectral_eigs = timed
    seg = get_segmenter(name)
    rng = np.random.default_rng(0)
    seg(rng.integers(0, 256, (60, 80, 3), dtype=np.uint8), 3)      # load the kernels
    rows = []
    for gt_path in sorted((data / "groundTruth" / "val").glob("*.mat"))[:n]:
        image = read_image(data / "images" / "val" / f"{gt_path.stem}.jpg")
        gts = read_ground_truth(gt_path)
        eig[0] = 0.0
        t = time.process_time()
        out = granularity_image(image, gts, seg)
        rows.append({"id": gt_path.stem, "cpu": time.process_time() - t,
                     "eig": eig[0], "k": sorted({int(k) for k in out[:, 0]})})
    print(json.dumps(rows))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA,
                    help="BSDS500 data folder (groundTruth/val and images/val)")
    ap.add_argument("--n", type=int, default=5, help="images (the first n val ids)")
    ap.add_argument("--segmenters", nargs="+", choices=SEGMENTERS, default=list(SEGMENTERS))
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        _child(a.child, a.data, a.n)
        return
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    print(f"CPU-s per image, first {a.n} BSDS500 val images, one process:")
    for name in a.segmenters:
        out = subprocess.run([sys.executable, __file__, "--child", name, "--data",
                              str(a.data), "--n", str(a.n)], env=env, cwd=ROOT,
                             capture_output=True, text=True, check=True)
        rows = json.loads(out.stdout.strip().splitlines()[-1])
        cpu = [r["cpu"] for r in rows]
        calls = sum(len(r["k"]) for r in rows)
        line = (f"  {name:<16} median {statistics.median(cpu):6.2f}  range "
                f"{min(cpu):.2f}-{max(cpu):.2f}  ({calls} segmentations, "
                f"{sum(cpu) / calls:.2f} each)")
        if name == "ncut-2001":
            eig = [r["eig"] for r in rows]
            line += f"; eigen-solve median {statistics.median(eig):.2f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
