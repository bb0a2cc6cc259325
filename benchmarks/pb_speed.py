#!/usr/bin/env python3
"""CPU time of each ``segbench detect`` detector per BSDS500 image, beside a floor, and
optionally beside the same detectors from another git revision (``--baseline``).

For the first ``--n`` BSDS500 val images (sorted ids, 481x321 or 321x481) every
detector of ``segbench detect`` runs ``--repeat`` times per image after one warm-up
call (which compiles the kernels; its time is printed); reported is the median over
images of the median over repeats, in CPU seconds (``time.process_time``) in one
process with every thread pool limited to one thread. Reading and writing files are not
timed. The floor is one FFT convolution of the grey image with a 27x27 filter (the
largest of the texton bank), so the ratio says how many such passes a detector costs.

``--baseline REV`` (e.g. ``main``) times the detectors (default then: pb-cgtg) of
``git archive REV src`` too, extracted once into the temporary directory (its kernels
compile there once, in the warm-up), each side in its own child process, the two sides
alternating for ``--rounds`` rounds so that both see the same machine load; reported
are the median over rounds of each side's figure and the ratio after / before.
The script prints figures only and asserts nothing.

    python benchmarks/pb_speed.py [--n 5] [--repeat 3] [--detectors pb-cgtg gm]
    python benchmarks/pb_speed.py --baseline main [--rounds 3]
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
           "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "bsds500"


def cpu(fn, repeat: int) -> float:
    ts = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        ts.append(time.process_time() - t)
    return statistics.median(ts)


def measure(paths, detectors, repeat):
    """{detector: (warm-up s, median over images of the median over repeats)}."""
    from segbench.algorithms import detect
    from segbench.io import read_image
    imgs = [read_image(x) for x in paths]
    out = {}
    for det in detectors:
        t = time.process_time()
        detect(imgs[0], det)
        warm = time.process_time() - t
        med = statistics.median(cpu(lambda im=im, det=det: detect(im, det), repeat)
                                for im in imgs)
        out[det] = (warm, med)
    return out


def baseline_src(rev: str) -> Path:
    """``src`` of git revision ``rev`` of this repository, extracted once."""
    sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", rev], check=True,
                         capture_output=True, text=True).stdout.strip()
    root = Path(tempfile.gettempdir()) / f"segbench-baseline-{sha[:12]}"
    if not (root / "src" / "segbench").is_dir():
        root.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(REPO), "archive", sha, "src"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    return root / "src"


def child(src: Path, a) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src))
    cmd = [sys.executable, __file__, "--child", "--images", str(a.images), "--n",
           str(a.n), "--repeat", str(a.repeat), "--detectors", *a.detectors]
    res = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    got = json.loads(res.stdout.strip().splitlines()[-1])
    if not got["module"].startswith(str(src)):
        raise SystemExit(f"child imported segbench from {got['module']}, not {src}")
    return got


def compare(paths, a) -> int:
    before_src = baseline_src(a.baseline)
    after_src = REPO / "src"
    runs = {"before": [], "after": []}
    for _ in range(a.rounds):
        runs["before"].append(child(before_src, a))
        runs["after"].append(child(after_src, a))
    print(f"{len(paths)} images, median of {a.repeat} runs each, {a.rounds} rounds "
          f"alternating, CPU s per image, one thread")
    print(f"before: {a.baseline} ({before_src}); after: this tree")
    print(f"{'detector':10s} {'before':>8s} {'after':>8s} {'ratio':>6s}   "
          f"(rounds before / after)")
    for det in a.detectors:
        b = [r["times"][det][1] for r in runs["before"]]
        f = [r["times"][det][1] for r in runs["after"]]
        mb, mf = statistics.median(b), statistics.median(f)
        print(f"{det:10s} {mb:8.3f} {mf:8.3f} {mf / mb:6.2f}   "
              f"({' '.join(f'{x:.3f}' for x in b)} / {' '.join(f'{x:.3f}' for x in f)})")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--images", type=Path, default=DATA / "images" / "val")
    p.add_argument("--n", type=int, default=5)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--detectors", nargs="+", default=None)
    p.add_argument("--baseline", metavar="REV", default=None,
                   help="git revision to time beside this tree (e.g. main)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    paths = sorted(a.images.glob("*.jpg"))[:a.n]
    if not paths:
        print(f"no images in {a.images}")
        return 2
    if a.child:
        import segbench
        print(json.dumps({"module": segbench.__file__,
                          "times": measure(paths, a.detectors, a.repeat)}))
        return 0
    if a.baseline is not None:
        a.detectors = a.detectors or ["pb-cgtg"]
        return compare(paths, a)
    from segbench.algorithms import DETECTORS, filter_bank
    from segbench.io import read_image
    a.detectors = a.detectors or list(DETECTORS)
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
    for det, (warm, med) in measure(paths, a.detectors, a.repeat).items():
        print(f"{det:10s} {warm:9.2f} {med:8.3f} {med / floor:8.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
