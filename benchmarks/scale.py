#!/usr/bin/env python3
"""Memory and growth of the boundary benchmark on large images (issue 17, items 3 and 4).

Inputs, built once into ``--work`` (default ``/tmp/segbench-scale``):

* ``hed-1x``, ``hed-2x``, ``hed-4x``: the first ``--n`` BSDS500 test images (sorted ids),
  the HED soft map (``<data>/bsds500-hed-nms/test/<iid>.png``, 8-bit) upsampled by
  pixel repetition 1, 2 and 4 times in each direction, and every annotator's boundaries
  recomputed from the upsampled segmentation as the BSDS500 ``Boundaries`` are made,
  ``thin(seg2bdry(seg))`` (at 1x: the stored ``Boundaries``, which equal it);
* ``synth``: one 3000x4000 map of level sets of smooth random fields (a scene of
  curved regions about 800 px across): five annotators draw the band boundaries of one
  field, each with its own sub-pixel displacement (two of them skip every other
  level); the detector finds the same boundaries, displaced its own way, with a
  strength that varies smoothly along them, plus weak clutter curves of another field.
  Its density is that of an upsampled BSDS image (about 40,000 human and 60,000
  detected pixels), not of a 12-megapixel photograph's texture.

Each case (input x tolerance 0.0075 / 0.011, 99 thresholds, thinning on, ``threads=1``)
runs in a fresh process: the kernels are loaded on a tiny map first, then every image
of the case is evaluated ``--inner`` times with ``segbench.boundary.evaluate_image``
(the median per image counts; on a shared machine a median of repeats in one process
is steadier than one run). Printed per case: CPU-s of the evaluations (user + system,
``time.process_time``), summed over the images, the process's maximum
resident set (the child's VmHWM: its ``ru_maxrss`` would include this process's memory
at the fork, as Linux folds the peak before ``exec`` into it),
and the fitted growth exponent of CPU-s against pixels over 1x, 2x, 4x (least squares
on the logarithms), of the sum over the images and of each image alone (median and
range over the images). Figures are medians of ``--repeats`` processes. Images grow
quite differently (at 0.011 the first test image's matching grows much faster than most),
so the default is 10 images: a sum over 3 is mostly that one image's.

``--baseline REV`` runs the same cases with the code of a git revision (checked out
once as a detached worktree under ``--work``, put first on ``PYTHONPATH``) in the same
run, alternating with the current code, and checks that both give identical counts on
every case. ``--threads N`` adds the wall time of the 4x image at 0.011 with
``threads=N`` against ``threads=1`` (the current code only), and checks the counts are
identical.

The script prints figures only: it never asserts anything about timing.

    python benchmarks/scale.py --baseline 92b44c4 --threads 2
    python benchmarks/scale.py --cases hed-4x --tols 0.011 --repeats 1
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_DATA = REPO.parent / "shared" / "data"
CASES = ("hed-1x", "hed-2x", "hed-4x", "synth")
TOLS = (0.0075, 0.011)
SYNTH_SHAPE = (3000, 4000)


# --- inputs ---------------------------------------------------------------------------


def _upsampled(a, k: int):
    import numpy as np
    return a if k == 1 else np.repeat(np.repeat(a, k, axis=0), k, axis=1)


def _build_hed(out: Path, data: Path, n: int, factor: int) -> None:
    import numpy as np
    from PIL import Image

    from segbench.boundary import seg2bdry, thin
    from segbench.io import read_ground_truth
    pred_dir = data / "bsds500-hed-nms" / "test"
    gt_dir = data / "bsds500" / "groundTruth" / "test"
    ids = sorted(p.stem for p in pred_dir.glob("*.png"))[:n]
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.npz"):     # this script's own inputs of another --n: every
        if old.stem not in ids:       # case must evaluate the same images
            old.unlink()
    for iid in ids:
        pb = np.asarray(Image.open(pred_dir / f"{iid}.png"))
        if pb.dtype != np.uint8 or pb.ndim != 2:
            raise SystemExit(f"{iid}.png is not an 8-bit grey map")
        gts = read_ground_truth(gt_dir / f"{iid}.mat")
        if factor == 1:
            maps = [np.asarray(g.boundaries, bool) for g in gts]
        else:
            maps = [thin(seg2bdry(_upsampled(np.asarray(g.segmentation), factor)))
                    for g in gts]
        np.savez(out / f"{iid}.npz", pb=_upsampled(pb, factor), gt=np.stack(maps))


def _smooth_field(rng, shape, cell: int):
    """A smooth random field: white noise on a grid of ``cell`` px, cubic-interpolated."""
    from scipy.ndimage import zoom
    h, w = shape
    g = rng.standard_normal((h // cell + 4, w // cell + 4))
    return zoom(g, cell, order=3)[cell:cell + h, cell:cell + w]


def _build_synth(out: Path) -> None:
    import numpy as np

    from segbench.boundary import seg2bdry, thin
    shape = SYNTH_SHAPE
    rng = np.random.default_rng(17)
    scene = _smooth_field(rng, shape, 800)

    def bands(field, levels):
        return thin(seg2bdry(np.floor(field * levels).astype(np.int32)))

    maps = []
    for k in range(5):      # annotators: their own displacement; two skip every other level
        moved = scene + 0.01 * _smooth_field(rng, shape, 40)
        maps.append(bands(moved, 1 if k in (1, 3) else 2))
    strength = 0.05 + 0.95 * np.clip(0.5 + 0.35 * _smooth_field(rng, shape, 150), 0, 1)
    found = bands(scene + 0.01 * _smooth_field(rng, shape, 40), 2)
    clutter = bands(_smooth_field(rng, shape, 1000), 1) & ~found
    weak = 0.01 + 0.35 * np.clip(0.5 + 0.35 * _smooth_field(rng, shape, 150), 0, 1)
    pb = np.zeros(shape)
    pb[found] = strength[found]
    pb[clutter] = weak[clutter]
    out.mkdir(parents=True, exist_ok=True)
    np.savez(out / "synth.npz", pb=np.rint(pb * 255).astype(np.uint8), gt=np.stack(maps))


def build_inputs(work: Path, data: Path, n: int, cases) -> None:
    """Write the inputs of ``cases`` that are missing (a stamp records ``n``)."""
    for case in cases:
        folder = work / "inputs" / case
        stamp = folder / "done.json"
        want = {"n": n if case != "synth" else 1, "version": 1}
        if stamp.is_file() and json.loads(stamp.read_text()) == want:
            continue
        t0 = time.perf_counter()
        if case == "synth":
            _build_synth(folder)
        else:
            _build_hed(folder, data, n, int(case.split("-")[1][:-1]))
        stamp.write_text(json.dumps(want))
        print(f"built {case} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)


# --- one case in a fresh process --------------------------------------------------------


def _child(folder: Path, tol: float, threads: int, inner: int) -> None:
    """Evaluate every input of ``folder`` ``inner`` times (the median per image counts);
    print one JSON line."""
    import inspect

    import numpy as np

    from segbench.boundary import evaluate_image
    kw = {"threads": threads} if "threads" in inspect.signature(
        evaluate_image).parameters else {}
    if threads != 1 and not kw:
        raise SystemExit("this segbench has no threads= option")
    pb = np.zeros((16, 16))
    pb[8, 2:14] = 0.7
    gt = np.zeros((16, 16), bool)
    gt[7, 2:14] = True
    evaluate_image(pb, [gt, gt], max_dist=tol, **kw)         # load the kernels
    cpu = wall = 0.0
    digest = hashlib.sha256()
    info = []
    for path in sorted(folder.glob("*.npz")):
        with np.load(path) as z:
            pb = z["pb"] / 255.0
            gts = list(z["gt"])
        cpus, walls = [], []
        for _ in range(inner):
            c0, w0 = time.process_time(), time.perf_counter()
            counts = evaluate_image(pb, gts, max_dist=tol, **kw)
            cpus.append(time.process_time() - c0)
            walls.append(time.perf_counter() - w0)
        cpu += statistics.median(cpus)
        wall += statistics.median(walls)
        digest.update(np.ascontiguousarray(counts.as_table()).tobytes())
        info.append({"id": path.stem, "shape": list(pb.shape), "cpu": statistics.median(cpus),
                     "detected": int(counts.sum_p[0]), "human": int(counts.sum_r[0])})
        del pb, gts, counts
    hwm = 0
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1])
    import segbench
    print(json.dumps({"cpu": cpu, "wall": wall, "hwm_kb": hwm, "counts": digest.hexdigest(),
                      "images": info, "module": segbench.__file__}))


def run_child(src: Path, folder: Path, tol: float, threads: int = 1, inner: int = 1) -> dict:
    """One case in a fresh interpreter with ``src`` first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(src) + os.pathsep + env.get("PYTHONPATH", "")
    # no hidden thread pools: the threads are the ones asked for
    env.update({k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                 "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")})
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(folder),
           "--child-tol", repr(tol), "--child-threads", str(threads),
           "--child-inner", str(inner)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, cwd="/")
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"child failed ({proc.returncode}): {' '.join(cmd)}")
    res = json.loads(out.decode().strip().splitlines()[-1])
    res["child_cpu"] = usage.ru_utime + usage.ru_stime
    return res


# --- the baseline -----------------------------------------------------------------------


def baseline_src(work: Path, rev: str) -> Path:
    """``src`` of a detached worktree of ``rev`` (created once)."""
    sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", rev + "^{commit}"],
                         check=True, capture_output=True, text=True).stdout.strip()
    tree = work / f"baseline-{sha[:12]}"
    if not (tree / "src" / "segbench").is_dir():
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree),
                        sha], check=True, capture_output=True)
    return tree / "src"


# --- report -----------------------------------------------------------------------------


def _pixels(res: dict) -> int:
    return sum(im["shape"][0] * im["shape"][1] for im in res["images"])


def exponent(points) -> float:
    """Least-squares slope of log(cpu) on log(pixels)."""
    xs = [math.log(p) for p, _ in points]
    ys = [math.log(c) for _, c in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else float("nan")


def _spread(med, name: str, hed, tol: float) -> str:
    """Median, min and max over the images of each image's own growth exponent (an
    image's CPU-s is the median over the processes of its median in a process)."""
    per = []
    for i in range(len(med[(name, hed[0], tol)]["images"])):
        per.append(exponent([(med[(name, c, tol)]["images"][i]["shape"][0]
                              * med[(name, c, tol)]["images"][i]["shape"][1],
                              med[(name, c, tol)]["image_cpu"][i]) for c in hed]))
    return f"{statistics.median(per):.2f} [{min(per):.2f}, {max(per):.2f}]"


def _table(title: str, names, rows) -> None:
    """A markdown table: a header of ``title`` and ``names``, then (label, cells) rows."""
    print(f"\n| {title} |" + "".join(f" {n} |" for n in names))
    print("| --- |" + " --- |" * len(names))
    for label, cells in rows:
        print(f"| {label} |" + "".join(f" {c} |" for c in cells))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--work", type=Path, default=Path("/tmp/segbench-scale"))
    ap.add_argument("--n", type=int, default=10, help="HED images per case (default 10)")
    ap.add_argument("--repeats", type=int, default=3, help="processes per case (median)")
    ap.add_argument("--inner", type=int, default=3,
                    help="evaluations of each image per process, hed cases (median; "
                         "the synthetic map is evaluated once)")
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    ap.add_argument("--tols", nargs="+", type=float, default=list(TOLS))
    ap.add_argument("--baseline", metavar="REV", help="also run this git revision")
    ap.add_argument("--threads", type=int, default=0, metavar="N",
                    help="also time hed-4x at 0.011 with threads=N against threads=1")
    ap.add_argument("--json", type=Path, help="write every measurement here")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--child-tol", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--child-threads", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--child-inner", type=int, default=1, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child is not None:
        _child(a.child, a.child_tol, a.child_threads, a.child_inner)
        return 0

    sys.path.insert(0, str(REPO / "src"))
    build_inputs(a.work, a.data, a.n, a.cases)
    versions = {"after": REPO / "src"}
    if a.baseline:
        versions = {"before": baseline_src(a.work, a.baseline), **versions}
    plan = [(case, tol) for tol in a.tols for case in a.cases
            if not (case == "synth" and tol != 0.0075)]
    for src in versions.values():                 # compile / load each version's kernels
        run_child(src, a.work / "inputs" / plan[0][0], plan[0][1])
    runs: dict = {}
    for rep in range(a.repeats):
        for case, tol in plan:
            for name, src in versions.items():
                res = run_child(src, a.work / "inputs" / case, tol,
                                inner=1 if case == "synth" else a.inner)
                runs.setdefault((name, case, tol), []).append(res)
                print(f"  [{rep + 1}/{a.repeats}] {name:6s} {case:7s} {tol}: "
                      f"{res['cpu']:7.2f} CPU-s  {res['hwm_kb'] / 1024:7.1f} MB",
                      file=sys.stderr)

    med = {k: {"cpu": statistics.median(r["cpu"] for r in v),
               "mb": statistics.median(r["hwm_kb"] for r in v) / 1024,
               "pixels": _pixels(v[0]), "counts": {r["counts"] for r in v},
               "images": v[0]["images"],
               "image_cpu": [statistics.median(r["images"][i]["cpu"] for r in v)
                             for i in range(len(v[0]["images"]))]} for k, v in runs.items()}
    names = list(versions)
    print(f"\nboundary benchmark at scale: {a.n} HED test images per hed case, 99 "
          f"thresholds, threads=1; CPU-s of the evaluations (per image the median of "
          f"{a.inner} in a process, summed), max RSS of the process; medians of "
          f"{a.repeats} processes")
    head = "| case | tolerance | pixels/image | detected / human px, all annotators (first image) |"
    for n in names:
        head += f" {n} CPU-s | {n} max RSS MB |"
    if "before" in versions:
        head += " counts |"
    print(head)
    print("|" + " --- |" * (head.count("|") - 1))
    for case, tol in plan:
        m = med[(names[-1], case, tol)]
        im = m["images"][0]
        row = (f"| {case} | {tol} | {m['pixels'] // len(m['images']):,} | "
               f"{im['detected']:,} / {im['human']:,} |")
        for n in names:
            row += f" {med[(n, case, tol)]['cpu']:.2f} | {med[(n, case, tol)]['mb']:.0f} |"
        if "before" in versions:
            same = med[("before", case, tol)]["counts"] == m["counts"] and len(m["counts"]) == 1
            row += " identical |" if same else " DIFFER |"
        print(row)
    hed = [c for c in ("hed-1x", "hed-2x", "hed-4x") if c in a.cases]
    if len(hed) >= 2:
        _table("growth exponent (CPU-s vs pixels, hed 1x..4x)", names,
               [(f"tolerance {tol}",
                 [f"{exponent([(med[(n, c, tol)]['pixels'], med[(n, c, tol)]['cpu']) for c in hed]):.2f}"
                  for n in names]) for tol in a.tols])
        _table("growth exponent of single images (median [min, max] over the images)",
               names, [(f"tolerance {tol}", [_spread(med, n, hed, tol) for n in names])
                       for tol in a.tols])
        if "hed-1x" in a.cases and "hed-4x" in a.cases:
            _table("memory above the 1x run (max RSS, MB)", names,
                   [(f"hed-4x at {tol}",
                     [f"{med[(n, 'hed-4x', tol)]['mb'] - med[(n, 'hed-1x', tol)]['mb']:.0f}"
                      for n in names]) for tol in a.tols])
    report = {"median": {f"{k[0]} {k[1]} {k[2]}": {**v, "counts": sorted(v["counts"])}
                         for k, v in med.items()}}
    if a.threads > 1:
        folder = a.work / "inputs" / "hed-4x"
        build_inputs(a.work, a.data, a.n, ["hed-4x"])
        walls: dict = {1: [], a.threads: []}
        digests = set()
        for _ in range(max(a.repeats, 3)):
            for t, got in walls.items():
                res = run_child(versions["after"], folder, 0.011, t, a.inner)
                got.append(res["wall"])
                digests.add(res["counts"])
        w1 = statistics.median(walls[1])
        wn = statistics.median(walls[a.threads])
        print(f"\nhed-4x at 0.011, wall s (median of {len(walls[1])} processes): threads=1 {w1:.2f}, "
              f"threads={a.threads} {wn:.2f}: {wn / w1:.2f}x; counts "
              + ("identical" if len(digests) == 1 else "DIFFER"))
        report["threads"] = {"walls": {str(k): v for k, v in walls.items()},
                             "ratio": wn / w1, "identical": len(digests) == 1}
    if a.json:
        a.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
