"""SBD-sized speed of the semantic-boundary benchmark: segbench's command beside
pyEdgeEval 0.2.8, CPU seconds per image, and segbench's peak memory for 20 and 5 classes.

    python benchmarks/semantic_boundary_speed.py [--images 8] [--size 375x500] [--no-peer]

The raw protocol (SEAL's "Raw" on the original SBD ground truth, without its margin):
20 classes, radius-2 ground-truth bands drawn from the segmentation, no thinning, no
kill, no skip, max-dist 0.02, 99 thresholds, on ``--images`` synthetic SBD-like images
(``make_sbd_set`` of benchmarks/semantic_boundary_peer.py: three classes drawn in each
image, soft maps for all 20 classes; absent classes get noise and a faint false
rectangle).

- segbench: the whole command as a child process, ``segbench semantic-boundary --gt
  ROOT --split val --pred ROOT/pred --preset sbd-seal --gt-edges raw --thin off
  --margin 0 --out ...`` (one worker; its default threads, ``cpu_count // workers``),
  after one untimed run on one image (the compiled kernels are cached on disk, as on any
  machine after the first run). CPU = user + sys of the child,
  ``resource.getrusage(RUSAGE_CHILDREN)`` read by a small wrapper process that runs only
  that child; peak memory = the same call's ``ru_maxrss``.
- pyEdgeEval: its per-sample function ``sbd_eval_single`` for every image and class, in
  one process (one worker; OMP/BLAS threads 1), on the same radius-2 bands encoded as its
  edge PNG (``edges_raw/``), ``apply_thinning=False``, ``kill_internal=False``,
  ``skip_if_nonexistent=False``. CPU measured the same way (the whole process, imports
  included), and ``time.process_time`` around its loop alone.
- Memory flat in the classes: segbench with multi-label edge PNG ground truth
  (``--gt ROOT/edges_raw --n-classes C``) on two sets of the same size and images
  count, three classes drawn in each image: the 20-class set above and one made with
  classes 1-5 only (``--n-classes 5``: class_001 .. class_005 read); peak RSS of each
  command.

The per-image figures are extrapolated to 5,498 images (labelled as such).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from semantic_boundary_peer import DRIVER, PEER, ROOT, _ods, make_sbd_set  # noqa: E402

SEGBENCH = Path(sys.executable).with_name("segbench")
EXTRAPOLATE_TO = 5498

#: Runs a command and reports the child's CPU and peak RSS (RUSAGE_CHILDREN of this
#: wrapper, which has no other child); the command's stdout goes to argv[1].
WRAPPER = r"""
import json, resource, subprocess, sys
with open(sys.argv[1], "w") as out:
    p = subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.PIPE, text=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": p.returncode, "user": r.ru_utime, "sys": r.ru_stime,
                  "maxrss_kb": r.ru_maxrss, "stderr": p.stderr[-3000:]}))
"""

RAW = {"max_dist": 0.02, "thresholds": 99, "apply_thinning": False, "apply_nms": False,
       "kill_internal": False, "skip_if_nonexistent": False, "scale": 1.0,
       "num_classes": 20}


def measure(cmd, stdout_path: Path, env=None) -> dict:
    """CPU (user + sys) and peak RSS of ``cmd`` run as a child; its wall time."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", WRAPPER, str(stdout_path),
                           *map(str, cmd)], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise RuntimeError(proc.stderr[-3000:])
    r = json.loads(proc.stdout)
    if r["rc"]:
        raise RuntimeError(f"{cmd[0]} failed (rc {r['rc']}):\n{r['stderr']}")
    r["cpu"] = r["user"] + r["sys"]
    r["wall"] = wall
    return r


def segbench_cmd(gt, pred, out, *extra):
    return [SEGBENCH, "semantic-boundary", "--gt", gt, "--pred", pred, "--out", out,
            "--preset", "sbd-seal", "--gt-edges", "raw", "--thin", "off", "--margin", "0",
            "--max-dist", "0.02", "--nthresh", "99", "--workers", "1", "--quiet", *extra]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=8)
    ap.add_argument("--size", default="375x500", help="HxW (SBD's usual 500x375 WxH)")
    ap.add_argument("--no-peer", action="store_true", help="segbench only")
    ap.add_argument("--keep", metavar="DIR", help="write the data here and keep it")
    a = ap.parse_args()
    shape = tuple(int(v) for v in a.size.lower().split("x"))
    run_peer = not a.no_peer
    if run_peer and not PEER.is_file():
        print(f"no peer environment at {PEER}; use --no-peer", file=sys.stderr)
        return 1
    tmp = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="sbd_speed_"))
    try:
        root = tmp / "data"
        if root.exists():
            shutil.rmtree(root)
        t0 = time.perf_counter()
        ids = make_sbd_set(root, n=a.images, shape=shape, classes=range(1, 21),
                           per_image=3, seed=0, raw_edges=True)
        print(f"data: {a.images} images {shape[0]}x{shape[1]} (HxW), 20 classes, 3 drawn "
              f"in each; generated in {time.perf_counter() - t0:.1f} s")
        print("raw protocol: radius-2 ground-truth bands, no thinning, no kill, no skip, "
              "max-dist 0.02, 99 thresholds, no margin")
        # one image first, untimed: kernels compiled and cached as after any first run
        warm = tmp / "warm"
        (warm / "cls").mkdir(parents=True, exist_ok=True)
        shutil.copy(root / "cls" / f"{ids[0]}.mat", warm / "cls")
        (warm / "val.txt").write_text(ids[0] + "\n")
        measure(segbench_cmd(warm, root / "pred", tmp / "out_warm", "--split", "val"),
                tmp / "warm.txt")

        ours = measure(segbench_cmd(root, root / "pred", tmp / "out20", "--split", "val"),
                       tmp / "ours.txt")
        res = json.loads((tmp / "out20" / "result_semantic_boundary.json").read_text())
        n = a.images
        print(f"\nsegbench (`segbench semantic-boundary`, whole command, 1 worker): "
              f"{ours['cpu']:.2f} CPU-s ({ours['user']:.2f} user + {ours['sys']:.2f} sys), "
              f"{ours['wall']:.2f} s wall, peak RSS {ours['maxrss_kb'] / 1024:.0f} MiB; "
              f"MF-ODS {res['metrics']['MF_ODS']:.4f}")
        print(f"  {ours['cpu'] / n:.3f} CPU-s per image")

        if run_peer:
            cfg = {"items": [{"iid": i, "edge": str(root / "edges_raw" / f"{i}.png"),
                              "seg": str(root / "seg" / f"{i}.png")} for i in ids],
                   "pred": str(root / "pred"), "classes": list(range(1, 21)),
                   "params": RAW, "seed": 1, "summary": False}
            cfg_path = tmp / "peer_cfg.json"
            cfg_path.write_text(json.dumps(cfg))
            env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                   "MKL_NUM_THREADS": "1"}
            theirs = measure([PEER, "-c", DRIVER, cfg_path], tmp / "peer.json", env=env)
            peer = json.loads((tmp / "peer.json").read_text())
            print(f"pyEdgeEval {peer['version']} (sbd_eval_single per image and class, one "
                  f"process): {theirs['cpu']:.2f} CPU-s whole process "
                  f"({theirs['user']:.2f} user + {theirs['sys']:.2f} sys; its loop alone "
                  f"{peer['cpu']:.2f}), {theirs['wall']:.2f} s wall, peak RSS "
                  f"{theirs['maxrss_kb'] / 1024:.0f} MiB")
            print(f"  {theirs['cpu'] / n:.3f} CPU-s per image")
            ratio = ours["cpu"] / theirs["cpu"]
            print(f"ratio segbench / pyEdgeEval (CPU): {ratio:.4f} "
                  f"(pyEdgeEval {1 / ratio:.1f}x segbench's CPU time)")
            # the same work? per-class ODS from pyEdgeEval's counts beside segbench's
            from segbench.semantic_boundary import SBD_CLASSES
            counts = {i: [peer["counts"][f"{i}/{c}"] for c in range(1, 21)] for i in ids}
            f_peer = _ods(counts, ids)
            f_ours = np.array([res["metrics"].get(f"ODS_{name}", np.nan) or np.nan
                               for name in SBD_CLASSES], dtype=float)
            d = np.abs(f_ours - f_peer)
            print(f"  check: per-class ODS F (both summarized by segbench) differ by "
                  f"{np.nanmax(d):.4f} at most over {int((~np.isnan(d)).sum())} classes")
            per_img = (ours["cpu"] / n, theirs["cpu"] / n)
        else:
            per_img = (ours["cpu"] / n, None)

        print(f"\nextrapolated to {EXTRAPOLATE_TO:,} images (per-image CPU x "
              f"{EXTRAPOLATE_TO:,}; not measured):")
        for name, v in zip(("segbench", "pyEdgeEval"), per_img):
            if v is not None:
                print(f"  {name:10s} {v * EXTRAPOLATE_TO:10.0f} CPU-s = "
                      f"{v * EXTRAPOLATE_TO / 3600:7.2f} CPU-h")

        print(f"\nsegbench peak memory by number of classes ({n} images "
              f"{shape[0]}x{shape[1]}, 3 classes drawn in each, multi-label edge PNG "
              "ground truth):")
        root5 = tmp / "data5"
        if root5.exists():
            shutil.rmtree(root5)
        make_sbd_set(root5, n=a.images, shape=shape, classes=range(1, 6), per_image=3,
                     seed=0, raw_edges=True)
        for k, data in ((20, root), (5, root5)):
            r = measure(segbench_cmd(data / "edges_raw", data / "pred", tmp / f"ml{k}",
                                     "--n-classes", k), tmp / f"ml{k}.txt")
            print(f"  {k:2d} classes: peak RSS {r['maxrss_kb'] / 1024:6.1f} MiB "
                  f"({r['maxrss_kb']} KiB), {r['cpu']:.2f} CPU-s")
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
