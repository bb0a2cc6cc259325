"""Streaming boundary evaluator: update latency, compute cost against the folder run,
memory per image.

On N BSDS500 test images (the HED maps of ../shared/data/bsds500-hed-nms, 481x321;
without them, synthetic maps of that size) in memory, as a validation loop has them:

- **update latency** with ``workers=2``: wall time of each ``update`` call (one image),
  median and 95th percentile; the work goes on in the pool;
- **CPU**: process CPU-seconds (every thread) of the stream, first ``update`` to
  ``compute`` returned, beside ``segbench.evaluate("boundary", ...)`` on the same maps
  saved as 16-bit PNG (one process, ``workers=1``), minus that run's file reading
  (reading the PNGs and .mat files alone, measured in the same run); ratio stream /
  (folder - reading);
- **memory**: what the evaluator holds per image once the pool is done (traced
  allocations with ``tracemalloc``, and its pickled size).

Medians of ``--repeat`` runs, each on warm (compiled) kernels. The numbers must be the
same: the script checks that both give identical metrics.

    python benchmarks/stream_speed.py                  # 100 images, 3 repeats
    python benchmarks/stream_speed.py --images 20 --repeat 1
"""

from __future__ import annotations

import argparse
import gc
import pickle
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

import segbench
from segbench.io import read_ground_truth, read_prediction, write_soft_map

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
HED = SHARED / "bsds500-hed-nms" / "test"
GT = SHARED / "bsds500" / "groundTruth" / "test"


def _synthetic(n: int, root: Path):
    """481x321 synthetic images with 5 annotators and blurred soft maps."""
    from scipy import ndimage

    from segbench.boundary import seg2bdry
    from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
    items = make_synthetic_dataset(n, shape=(321, 481), n_annotators=5, seed=7)
    write_synthetic_dataset(root, items)
    rng = np.random.default_rng(0)
    maps = {}
    for it in items:
        e = ndimage.gaussian_filter(seg2bdry(it.segmentations[0], "imageSize") * 1.0, 1.0)
        m = e + 0.05 * rng.random(e.shape)
        maps[it.iid] = np.rint(m / m.max() * 255) / 255
    return root / "groundTruth" / "test", maps


def _data(n: int, root: Path):
    if HED.is_dir() and GT.is_dir():
        ids = sorted(p.stem for p in HED.glob("*.png"))[:n]
        return GT, {i: read_prediction(HED / f"{i}.png").pb for i in ids}, "HED (BSDS500 test)"
    gt, maps = _synthetic(n, root)
    return gt, maps, "synthetic 481x321"


def _stream(maps, gts, workers: int, step: float = 0.0):
    """(result, CPU-s, update wall times); ``step`` seconds of "model" between
    updates (a sleep: a forward pass on the GPU leaves the CPU to the pool)."""
    ev = segbench.BoundaryEval(workers=workers)
    lat = []
    c0 = time.process_time()
    for iid, pb in maps.items():
        if step:
            time.sleep(step)
        t = time.perf_counter()
        ev.update(pb, gts[iid], ids=iid)
        lat.append(time.perf_counter() - t)
    res = ev.compute()
    cpu = time.process_time() - c0
    ev.close()
    return res, cpu, lat


def _folder(gt_dir, pngs, ids):
    c0 = time.process_time()
    res = segbench.evaluate("boundary", gt=gt_dir, pred=pngs, ids=ids, workers=1,
                            progress=False, plot=False)
    return res, time.process_time() - c0


def _reading(gt_dir, pngs, ids):
    c0 = time.process_time()
    for iid in ids:
        read_prediction(pngs / f"{iid}.png")
        read_ground_truth(gt_dir / f"{iid}.mat")
    return time.process_time() - c0


def _held(ev) -> int:
    """Bytes reachable from the evaluator's state: its ids and records (each record's
    object and its arrays)."""
    total = sys.getsizeof(ev._ids) + sys.getsizeof(ev._records) + sys.getsizeof(ev._named)
    for iid in ev._ids:
        total += sys.getsizeof(iid)
    for rec in ev._records:
        total += sys.getsizeof(rec) + sys.getsizeof(rec.__dict__)
        for arr in rec.__dict__.values():
            total += sys.getsizeof(arr)            # numpy counts the data it owns
    return total


def _memory(maps, gts) -> tuple[float, float, float]:
    """Per image, once the pool is done: (bytes the evaluator's state holds, traced
    allocations the process gained from the first half of the images to all of them,
    pickled bytes). The traced growth also moves with the kernels' per-thread scratch
    arrays, which keep the last image's matching (replaced by the next, not per
    image)."""
    ev = segbench.BoundaryEval(workers=2)
    items = list(maps.items())
    half = len(items) // 2
    tracemalloc.start()
    for iid, pb in items[:half]:
        ev.update(pb, gts[iid], ids=iid)
    ev._items()                                       # waits for the pool
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    for iid, pb in items[half:]:
        ev.update(pb, gts[iid], ids=iid)
    ev._items()
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    n = len(items)
    out = (_held(ev) / n, grown / (n - half), len(pickle.dumps(ev)) / n)
    ev.close()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--images", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--step-ms", type=float, default=60.0,
                    help="model time between updates in the latency loop (sleep)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        gt_dir, maps, what = _data(args.images, tmp / "synth")
        ids = list(maps)
        gts = {i: [h.boundaries for h in read_ground_truth(gt_dir / f"{i}.mat")]
               for i in ids}
        pngs = tmp / "pngs"
        for iid, pb in maps.items():
            write_soft_map(pngs / f"{iid}.png", pb, bits=16)
        maps = {i: read_prediction(pngs / f"{i}.png").pb for i in ids}   # the same maps
        print(f"{len(ids)} images, {what}; {args.repeat} repeats (medians)")
        _stream(dict(list(maps.items())[:2]), gts, 2)       # compile / load kernels
        rows = []
        for _ in range(args.repeat):
            res_s, cpu_s, lat = _stream(maps, gts, 2)
            res_f, cpu_f = _folder(gt_dir, pngs, ids)
            cpu_r = _reading(gt_dir, pngs, ids)
            if res_s.metrics != res_f.metrics:
                print("MISMATCH: the stream and the folder run disagree", file=sys.stderr)
                return 1
            _, _, lat_loop = _stream(maps, gts, 2, args.step_ms / 1e3)
            rows.append((cpu_s, cpu_f, cpu_r, statistics.median(lat_loop),
                         float(np.quantile(lat_loop, 0.95)), statistics.median(lat)))
        cpu_s, cpu_f, cpu_r, lat50, lat95, burst = (statistics.median(c)
                                                   for c in zip(*rows))
        held, grown, pickled = _memory(maps, gts)
    print(f"update latency (workers=2, {args.step_ms:g} ms of model between updates): "
          f"median {lat50 * 1e3:.2f} ms, p95 {lat95 * 1e3:.2f} ms per image   "
          f"(target <= 5 ms)")
    print(f"update latency (workers=2, updates back to back: the pool is the bottleneck "
          f"and update waits for a slot): median {burst * 1e3:.2f} ms")
    print(f"stream CPU (update..compute): {cpu_s:.2f} CPU-s  ({cpu_s / len(ids):.3f} per "
          f"image)")
    print(f"segbench boundary (folder):   {cpu_f:.2f} CPU-s, of which reading the files "
          f"{cpu_r:.2f}")
    ratio = cpu_s / (cpu_f - cpu_r)
    print(f"ratio stream / (folder - reading): {ratio:.2f}   (target <= 1.2)")
    print(f"memory per image after the pool: the evaluator holds {held / 1e3:.1f} KB "
          f"(pickled {pickled / 1e3:.1f} KB)   (target <= 50 KB); the process grew "
          f"{grown / 1e3:.1f} KB per image over the second half (kernel scratch "
          f"included)")
    print(f"ODS {res_s.metrics['ODS']:.4f} OIS {res_s.metrics['OIS']:.4f} AP "
          f"{res_s.metrics['AP']:.4f} (identical in both)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
