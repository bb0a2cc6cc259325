#!/usr/bin/env python3
"""Speed of segbench's superpixel measures: per-image time and the ratio to the floor.

Per image, the timed work is what a user pays to score one superpixel map against all
the annotators of its image: read the superpixel map and the ground truth (and the
image, for the explained variation), then compute every measure (``evaluate_image``:
five undersegmentation errors, ASA, OE, boundary recall and precision, compactness,
explained variation, connected components). The floor is the part no implementation
can skip: reading the maps and building the overlap tables against every annotator
(``superpixel_tables``, segbench's region contingency tables). Times are wall
milliseconds, one process, median over images of the best of ``--repeat`` runs, after a
warm-up (Numba compilation is cached on disk and excluded).

Inputs:
  * default: the superpixel fixtures (``<fixtures>/superpixel/inputs``: 10 BSDS500 val
    images 481x321, 5 annotators each as ``.npz``, superpixels ``slic200`` and ``fh``
    as ``.npz``);
  * ``--bsds``: the BSDS500 split itself (``<data>/bsds500``: ground truth ``.mat``,
    JPEG images, all annotators), with SLIC superpixels at ``--k`` computed first and
    written as 16-bit PNG (not timed).

Also printed: the cost of the other boundary windows ('square', 'matched') and of the
C++ benchmark's full rows (``stutz_rows``, all annotators at once), and, on the fixtures,
the whole runner (``segbench.evaluate("superpixel", ...)`` through the engine: pairing,
reading, every measure, the records and the output files; one process, best of 3) on a
fresh output folder and again on the same folder (every record reused). The C++
benchmark is not run here (it needs OpenCV, Boost and glog); the script prints figures
only.

    python benchmarks/superpixel_speed.py
    python benchmarks/superpixel_speed.py --bsds --n 50 --k 400
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_DATA = REPO.parent / "shared" / "data"
DEFAULT_FIXTURES = REPO.parent / "shared" / "fixtures"


def _best(fn, repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1000, out


def _time_image(sp_path, gt_paths, image_path, repeat: int, extras: bool) -> dict:
    from segbench.io import read_annotators, read_image, read_superpixels
    from segbench.superpixel import evaluate_image, stutz_rows, superpixel_tables
    t_read, (sp, gts) = _best(lambda: (read_superpixels(sp_path),
                                       read_annotators(gt_paths)), repeat)
    t_img, image = _best(lambda: read_image(image_path), repeat)
    t_tab, _ = _best(lambda: superpixel_tables(sp, gts), repeat)
    t_all, rec = _best(lambda: evaluate_image(sp, gts, image), repeat)
    row = {"read": t_read, "read_image": t_img, "tables": t_tab, "all": t_all,
           "floor": t_read + t_tab, "total": t_read + t_img + t_all,
           "annotators": len(gts), "superpixels": rec.n_superpixels}
    if extras:
        row["square"] = _best(lambda: evaluate_image(sp, gts, image, window="square"),
                              repeat)[0]
        row["matched"] = _best(lambda: evaluate_image(sp, gts, image, window="matched"),
                               1)[0]
        row["stutz"] = _best(lambda: stutz_rows(sp, gts, image), 1)[0]
    return row


def _time_runner(gt_dir, sp_dir, image_dir, repeat: int = 3) -> tuple[float, float]:
    """Best wall ms of ``run_superpixel`` on a fresh folder, and rerun on it."""
    from segbench.runners._superpixel import run_superpixel
    from segbench.engine._store import _sha256      # the digests a process remembers
    fresh = rerun = float("inf")
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            kw = dict(images=image_dir, out=tmp, progress=False)
            t0 = time.perf_counter()
            run_superpixel(gt_dir, sp_dir, **kw)
            _sha256.cache_clear()       # a rerun is a new process: it hashes again
            t1 = time.perf_counter()
            run_superpixel(gt_dir, sp_dir, **kw)
            t2 = time.perf_counter()
        fresh, rerun = min(fresh, t1 - t0), min(rerun, t2 - t1)
    return fresh * 1000, rerun * 1000


def _med(rows, key) -> float:
    return statistics.median(r[key] for r in rows)


def _report(name: str, rows: list[dict]) -> None:
    ann = statistics.fmean(r["annotators"] for r in rows)
    nsp = statistics.fmean(r["superpixels"] for r in rows)
    floor, total = _med(rows, "floor"), _med(rows, "total")
    print(f"{name}: {len(rows)} images, {ann:.1f} annotators, {nsp:.0f} superpixels "
          "(median ms per image)")
    print(f"  read maps {_med(rows, 'read'):6.2f}   read image {_med(rows, 'read_image'):6.2f}"
          f"   overlap tables {_med(rows, 'tables'):6.2f}")
    print(f"  floor (read maps + tables)          {floor:7.2f}")
    print(f"  all measures (evaluate_image)       {_med(rows, 'all'):7.2f}")
    print(f"  total (read maps + image + all)     {total:7.2f}   = {total / floor:.2f} x "
          f"floor")
    extra = [r for r in rows if "square" in r]
    if extra:
        print(f"  variants on {len(extra)} images: window='square' "
              f"{_med(extra, 'square'):.2f}, window='matched' {_med(extra, 'matched'):.2f}, "
              f"stutz_rows (all annotators) {_med(extra, 'stutz'):.2f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bsds", action="store_true",
                    help="use the BSDS500 split (.mat ground truth) instead of fixtures")
    ap.add_argument("--split", default="val", choices=("train", "val", "test"))
    ap.add_argument("--n", type=int, default=20, help="first N images with --bsds")
    ap.add_argument("--k", type=int, default=400, help="SLIC K for --bsds")
    ap.add_argument("--repeat", type=int, default=5, help="runs per image (best taken)")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES)
    a = ap.parse_args(argv)

    import segbench
    print(f"segbench {segbench.__version__}, Python {platform.python_version()}, "
          f"numpy {np.__version__}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "")

    if not a.bsds:
        inputs = a.fixtures / "superpixel" / "inputs"
        if not inputs.is_dir():
            print(f"fixtures not found: {inputs} (use --bsds)", file=sys.stderr)
            return 2
        ids = sorted(p.stem for p in (inputs / "gt").glob("*.npz"))
        for algo in ("slic200", "fh"):
            paths = [(inputs / "sp" / algo / f"{i}.npz", [inputs / "gt" / f"{i}.npz"],
                      inputs / "images" / f"{i}.png") for i in ids]
            _time_image(*paths[0], 1, True)                   # warm-up
            rows = [_time_image(*p, a.repeat, k < 5) for k, p in enumerate(paths)]
            _report(f"fixtures/{algo}", rows)
            fresh, rerun = _time_runner(inputs / "gt", inputs / "sp" / algo,
                                        inputs / "images")
            print(f"  runner (run_superpixel, {len(ids)} images, with --out): "
                  f"{fresh:.0f} ms, {fresh / len(ids):.1f} ms per image; rerun from the "
                  f"records {rerun:.0f} ms")
        return 0

    from segbench.algorithms.superpixels import slic
    from segbench.io import read_image, write_label_map
    gt_dir = a.data / "bsds500" / "groundTruth" / a.split
    img_dir = a.data / "bsds500" / "images" / a.split
    if not gt_dir.is_dir():
        print(f"data not found: {gt_dir}", file=sys.stderr)
        return 2
    ids = sorted(p.stem for p in gt_dir.glob("*.mat"))[:a.n]
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i in ids:
            sp_path = Path(tmp) / f"{i}.png"
            write_label_map(sp_path, slic(read_image(img_dir / f"{i}.jpg"), a.k))
            paths.append((sp_path, [gt_dir / f"{i}.mat"], img_dir / f"{i}.jpg"))
        _time_image(*paths[0], 1, True)
        rows = [_time_image(*p, a.repeat, k < 5) for k, p in enumerate(paths)]
    _report(f"bsds500/{a.split} slic K={a.k} (16-bit PNG, .mat ground truth)", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
