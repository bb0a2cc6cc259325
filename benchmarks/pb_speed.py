#!/usr/bin/env python3
"""CPU time of each ``segbench detect`` detector per BSDS500 image, beside a floor.

For the first ``--n`` BSDS500 val images (sorted ids, 481x321 or 321x481) every
detector of ``segbench detect`` runs ``--repeat`` times per image after one warm-up
call (which compiles the kernels; its time is printed); reported is the median over
images of the median over repeats, in CPU seconds (``time.process_time``) in one
process with every thread pool limited to one thread. Reading and writing files are not
timed. The floor is one FFT convolution of the grey image with a 27x27 filter (the
largest of the texton bank), so the ratio says how many such passes a detector costs.
The script prints figures only and asserts nothing.

    python benchmarks/pb_speed.py [--n 5] [--repeat 3] [--detectors pb-cgtg gm]
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

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "bsds500"


def cpu(fn, repeat: int) -> float:
    ts = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        ts.append(time.process_time() - t)
    return statistics.median(ts)


def main() -> int:
    from segbench.algorithms import DETECTORS, detect, filter_bank
    from segbench.io import read_image
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--images", type=Path, default=DATA / "images" / "val")
    p.add_argument("--n", type=int, default=5)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--detectors", nargs="+", default=list(DETECTORS))
    a = p.parse_args()
    paths = sorted(a.images.glob("*.jpg"))[:a.n]
    if not paths:
        print(f"no images in {a.images}")
        return 2
    imgs = [read_image(x) for x in paths]
    from scipy.signal import fftconvolve
    big = filter_bank()[-1]
    floors = [cpu(lambda im=im: fftconvolve(im.mean(axis=2), big, mode="same"),
                  a.repeat) for im in imgs]
    floor = statistics.median(floors)
    print(f"{len(imgs)} images ({imgs[0].shape[1]}x{imgs[0].shape[0]} first), "
          f"median of {a.repeat} runs each, CPU s, one thread")
    print(f"floor: one 27x27 FFT convolution of the grey image: {floor * 1e3:.1f} ms")
    print(f"{'detector':10s} {'warm-up s':>9s} {'CPU s':>8s} {'x floor':>8s}")
    for det in a.detectors:
        t = time.process_time()
        detect(imgs[0], det)
        warm = time.process_time() - t
        med = statistics.median(cpu(lambda im=im, det=det: detect(im, det), a.repeat)
                                for im in imgs)
        print(f"{det:10s} {warm:9.2f} {med:8.3f} {med / floor:8.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
