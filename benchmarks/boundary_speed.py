#!/usr/bin/env python3
"""Speed of segbench's BSDS boundary benchmark next to pyEdgeEval, on real BSDS500 data.

Both evaluators get the same N BSDS500 test images (the first N ids in sorted order): the
HED soft maps in ``<data>/bsds500-hed-nms/test/<iid>.png`` (uint8, read as /255) and the
human ground truth ``<data>/bsds500/groundTruth/test/<iid>.mat``; 99 thresholds, thinning on,
maxDist 0.0075, one worker each.  Per image the timed work is what a user pays: read the map
and the ground truth, evaluate at every threshold.  Times are CPU seconds of the process
doing the work (``time.process_time``), so a busy machine inflates them less than wall time.

Printed per image and overall:
  * CPU-s/image of segbench, of pyEdgeEval, and their ratio pyEdgeEval/segbench;
  * the "floor": read the map + threshold it at the 99 thresholds + thin every thresholded map,
    done the fastest way segbench has (``boundary.thin_frames``) -- work no evaluator can
    avoid -- and segbench's ratio to it; the same work map by map (``thin(pb >= t)`` for each
    t) is printed in a note;
  * each image's best F over the thresholds from both evaluators (and the count agreement),
    so a reader sees they evaluated the same thing.

pyEdgeEval lives in its own virtual environment, ``benchmarks/.peer-venv`` (gitignored),
created on first use; it runs in a subprocess (``_pyedgeeval_driver.py``) that reports its
timings and counts as JSON.  It takes about 95 CPU-s per image, so the default N=5 takes ~8
minutes.  ``--skip-peer`` times segbench and the floor only.

``--parity-peer`` is a separate mode: pyEdgeEval (and segbench, when importable) on the 5
images of the official BSDS500 self-test, compared with the official code's per-image counts
(Octave run, nthresh 99) in ``<fixtures>/bsr-official/octave/png_bdry_n99``.

The script prints figures only: it never asserts anything about timing.

    python benchmarks/boundary_speed.py                 # N=5, both evaluators
    python benchmarks/boundary_speed.py --n 2 --skip-peer
    python benchmarks/boundary_speed.py --parity-peer --json parity.json
"""

from __future__ import annotations

import os

# One worker each: no hidden thread pools in either process (set before numpy/numba load).
_SINGLE_THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
    # segbench's own threads (evaluate_image thins and matches in os.cpu_count() threads
    # by default): one, as the floor (thin_frames, threads=1) and pyEdgeEval get
    "SEGBENCH_THREADS": "1",
}
os.environ.update(_SINGLE_THREAD_ENV)

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_DATA = REPO.parent / "shared" / "data"
DEFAULT_FIXTURES = REPO.parent / "shared" / "fixtures"
PEER_VENV = HERE / ".peer-venv"
PEER_DRIVER = HERE / "_pyedgeeval_driver.py"

# pyEdgeEval 0.2.8 (latest on PyPI, sdist only) builds its Cython/C++ extension here with
# gcc; it declares only numpy and Cython as dependencies but imports scipy, scikit-image and
# OpenCV on the BSDS path.  Versions pinned to the set this benchmark was run with.
PEER_VERSION = "0.2.8"
PEER_REQUIREMENTS = [
    f"pyedgeeval=={PEER_VERSION}",
    "numpy==2.4.6",
    "Cython==3.3.1",
    "scipy==1.17.1",
    "scikit-image==0.26.0",
    "opencv-python-headless==5.0.0.93",
]

NTHRESH = 99
MAX_DIST = 0.0075
THIN = True
OCTAVE_ID = "octave/png_bdry_n99"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- inputs


def hed_items(data: Path, n: int) -> list[dict]:
    gt_dir = data / "bsds500" / "groundTruth" / "test"
    pred_dir = data / "bsds500-hed-nms" / "test"
    if not gt_dir.is_dir() or not pred_dir.is_dir():
        sys.exit(f"data not found: need {gt_dir} and {pred_dir} (use --data)")
    ids = sorted(p.stem for p in gt_dir.glob("*.mat") if (pred_dir / f"{p.stem}.png").is_file())
    if not ids:
        sys.exit(f"no image has both {gt_dir}/<iid>.mat and {pred_dir}/<iid>.png")
    return [
        {"iid": iid, "pred": str(pred_dir / f"{iid}.png"), "gt": str(gt_dir / f"{iid}.mat")}
        for iid in ids[:n]
    ]


def selftest_items(fixtures: Path) -> list[dict]:
    inp = fixtures / "bsr-official" / "inputs"
    ids = sorted(p.stem for p in (inp / "png").glob("*.png"))
    if not ids:
        sys.exit(f"official self-test inputs not found under {inp} (use --fixtures)")
    return [
        {"iid": iid, "pred": str(inp / "png" / f"{iid}.png"),
         "gt": str(inp / "groundTruth" / f"{iid}.mat")}
        for iid in ids
    ]


def bsds_thresholds(n: int = NTHRESH) -> np.ndarray:
    return np.linspace(1.0 / (n + 1), 1.0 - 1.0 / (n + 1), n)


# --------------------------------------------------------------------------- figures


def fmeasure(r, p):
    r = np.asarray(r, float)
    p = np.asarray(p, float)
    return 2 * p * r / (p + r + ((p + r) == 0))


def best_f(counts: dict) -> dict:
    """Best F over the thresholds (no interpolation between thresholds), official R/P."""
    cnt_r, sum_r = np.asarray(counts["cnt_r"], float), np.asarray(counts["sum_r"], float)
    cnt_p, sum_p = np.asarray(counts["cnt_p"], float), np.asarray(counts["sum_p"], float)
    r = cnt_r / (sum_r + (sum_r == 0))
    p = cnt_p / (sum_p + (sum_p == 0))
    f = fmeasure(r, p)
    k = int(np.argmax(f))
    t = np.asarray(counts["thresholds"], float)
    return {"f": float(f[k]), "r": float(r[k]), "p": float(p[k]), "t": float(t[k]), "k": k}


def summed(images: list[dict]) -> dict:
    """Counts summed over images, per threshold (the ODS curve of the set)."""
    out = {"thresholds": images[0]["thresholds"]}
    for key in ("cnt_r", "sum_r", "cnt_p", "sum_p"):
        out[key] = np.sum([np.asarray(im[key], float) for im in images], axis=0).tolist()
    return out


def compare_counts(a: dict, b: dict) -> dict:
    """a minus b per count, over the thresholds: min and max of the signed difference."""
    d = {}
    for key in ("sum_r", "sum_p", "cnt_r", "cnt_p"):
        x, y = np.asarray(a[key], float), np.asarray(b[key], float)
        if x.shape != y.shape or not x.size:
            d[key] = None
        else:
            diff = x - y
            d[key] = {"min": float(diff.min()), "max": float(diff.max()),
                      "n_thresholds_differing": int(np.count_nonzero(diff))}
    return d


def _fmt_range(r: dict | None) -> str:
    if r is None:
        return "n/a"
    lo, hi = int(r["min"]), int(r["max"])
    if lo == hi:
        return f"{lo:+d}" if lo else "0"
    return f"{lo:+d}..{hi:+d}"


# --------------------------------------------------------------------------- segbench side


def load_segbench():
    """segbench's API, or (None, reason) while parts of it are still missing."""
    try:
        import segbench
        from segbench.boundary import evaluate_image, thin, thin_frames
        from segbench.io import read_ground_truth, read_prediction
    except Exception as e:  # ImportError while others are still writing it
        return None, f"{type(e).__name__}: {e}"
    return {
        "version": getattr(segbench, "__version__", "?"),
        "evaluate_image": evaluate_image,
        "thin": thin,
        "thin_frames": thin_frames,
        "read_prediction": read_prediction,
        "read_ground_truth": read_ground_truth,
    }, None


def _ours_once(api: dict, item: dict) -> dict:
    c0 = time.process_time()
    w0 = time.perf_counter()
    pred = api["read_prediction"](item["pred"])
    gts = [g.boundaries for g in api["read_ground_truth"](item["gt"])]
    counts = api["evaluate_image"](pred.pb, gts, nthresh=NTHRESH, max_dist=MAX_DIST, thin=THIN)
    c1 = time.process_time()
    w1 = time.perf_counter()
    return {
        "cpu_s": c1 - c0,
        "wall_s": w1 - w0,
        "thresholds": np.asarray(counts.thresholds, float).tolist(),
        "cnt_r": np.asarray(counts.cnt_r, float).tolist(),
        "sum_r": np.asarray(counts.sum_r, float).tolist(),
        "cnt_p": np.asarray(counts.cnt_p, float).tolist(),
        "sum_p": np.asarray(counts.sum_p, float).tolist(),
    }


def _floor_once(api: dict, item: dict, thresholds: np.ndarray, per_map: bool = False) -> float:
    """Read the map, threshold it at every threshold, thin every thresholded map.

    The floor is that work done the fastest way segbench knows (``thin_frames``, which
    visits only the pixels above the lowest threshold); ``per_map`` times the plain way
    (``thin(pb >= t)`` for each t), reported for reference.
    """
    c0 = time.process_time()
    pb = api["read_prediction"](item["pred"]).pb
    if per_map:
        for t in thresholds:
            api["thin"](pb >= t)
    else:
        api["thin_frames"](pb, thresholds)
    return time.process_time() - c0


def _gt_once(api: dict, item: dict) -> float:
    """Read the ground truth alone: part of segbench's time, not of the floor's."""
    c0 = time.process_time()
    [g.boundaries for g in api["read_ground_truth"](item["gt"])]
    return time.process_time() - c0


def run_ours(api: dict, items: list[dict], repeat: int, with_floor: bool) -> dict:
    thresholds = bsds_thresholds()
    # Warm-up: Numba compiles on first call; that one-off cost is not counted.
    c0 = time.process_time()
    _ours_once(api, items[0])
    if with_floor:
        _floor_once(api, items[0], thresholds[:3])
        _floor_once(api, items[0], thresholds[:3], per_map=True)
    warm = time.process_time() - c0
    log(f"  [segbench] warm-up call on {items[0]['iid']} (Numba JIT compile, not timed): "
        f"{warm:.1f} CPU-s")
    images = []
    for k, item in enumerate(items, 1):
        # segbench and the floor alternate run by run, so that a machine whose speed
        # drifts (shared host) slows both alike; each figure is the median of its runs
        runs, floor_runs, per_map_runs, gt_runs = [], [], [], []
        for _ in range(repeat):
            runs.append(_ours_once(api, item))
            if with_floor:
                floor_runs.append(_floor_once(api, item, thresholds))
                per_map_runs.append(_floor_once(api, item, thresholds, per_map=True))
                gt_runs.append(_gt_once(api, item))
        res = dict(runs[-1])
        res["iid"] = item["iid"]
        res["cpu_s_runs"] = [r["cpu_s"] for r in runs]
        res["cpu_s"] = statistics.median(res["cpu_s_runs"])
        res["wall_s"] = statistics.median(r["wall_s"] for r in runs)
        if with_floor:
            res["floor_cpu_s_runs"] = floor_runs
            res["floor_cpu_s"] = statistics.median(floor_runs)
            res["floor_per_map_cpu_s"] = statistics.median(per_map_runs)
            res["gt_read_cpu_s"] = statistics.median(gt_runs)
        images.append(res)
        fl = f", floor {res['floor_cpu_s']:.3f}" if with_floor else ""
        log(f"  [segbench] {k}/{len(items)} {item['iid']}: {res['cpu_s']:.3f} CPU-s{fl}")
    return {"warmup_cpu_s": warm, "images": images}


# --------------------------------------------------------------------------- peer side


def peer_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def peer_ready(venv: Path) -> str | None:
    py = peer_python(venv)
    if not py.is_file():
        return None
    r = subprocess.run(
        [str(py), "-c",
         "import sys, io; sys.stdout = io.StringIO(); "
         "import pyEdgeEval, pyEdgeEval.datasets.bsds; "
         "sys.__stdout__.write(pyEdgeEval.__version__)"],
        capture_output=True, text=True,
    )
    return r.stdout.strip() if r.returncode == 0 else None


def ensure_peer_venv(venv: Path) -> str:
    version = peer_ready(venv)
    if version:
        return version
    log(f"Creating pyEdgeEval's environment {venv} (first use: builds a C++ extension, ~1 min)")
    if not peer_python(venv).is_file():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    cmd = [str(peer_python(venv)), "-m", "pip", "install", "--quiet", *PEER_REQUIREMENTS]
    log("  " + " ".join(cmd))
    r = subprocess.run(cmd)
    if r.returncode != 0:
        sys.exit(f"pip install into {venv} failed (exit {r.returncode}); "
                 f"delete {venv} and retry, or run with --skip-peer")
    version = peer_ready(venv)
    if not version:
        sys.exit(f"pyEdgeEval installed in {venv} but does not import; delete it and retry")
    return version


def run_peer(venv: Path, items: list[dict]) -> dict:
    cfg = {"items": items, "nthresh": NTHRESH, "max_dist": MAX_DIST, "thin": THIN}
    env = dict(os.environ, **_SINGLE_THREAD_ENV)
    env.pop("PYTHONPATH", None)
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.perf_counter()
    r = subprocess.run(
        [str(peer_python(venv)), str(PEER_DRIVER), json.dumps(cfg)],
        stdout=subprocess.PIPE, stderr=None, text=True, env=env,
    )
    w1 = time.perf_counter()
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"pyEdgeEval driver failed (exit {r.returncode})")
    out = json.loads(r.stdout.strip().splitlines()[-1])
    out["process_cpu_s"] = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    out["process_wall_s"] = w1 - w0
    return out


# --------------------------------------------------------------------------- printing


def _fmt_ratio(x: float | None) -> str:
    return "-" if x is None or not np.isfinite(x) else f"{x:.1f}x"


def _fmt_s(x: float | None, nd: int = 3) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def print_speed(items, ours, peer, notes) -> dict:
    ours_by = {im["iid"]: im for im in ours["images"]} if ours else {}
    peer_by = {im["iid"]: im for im in peer["images"]} if peer else {}
    rows = []
    for item in items:
        iid = item["iid"]
        o, p = ours_by.get(iid), peer_by.get(iid)
        rows.append({
            "iid": iid,
            "floor": o.get("floor_cpu_s") if o else None,
            "ours": o["cpu_s"] if o else None,
            "peer": p["cpu_s"] if p else None,
        })

    def tot(key):
        vals = [r[key] for r in rows]
        return None if any(v is None for v in vals) else float(np.sum(vals))

    n = len(rows)
    total = {k: tot(k) for k in ("floor", "ours", "peer")}
    mean = {k: (None if v is None else v / n) for k, v in total.items()}

    def ratio(a, b):
        return None if a is None or b is None or b == 0 else a / b

    print()
    print("CPU seconds per image (time.process_time of the working process; map + ground truth "
          "read + evaluation at all thresholds)")
    hdr = (f"{'image':>8}  {'floor':>8}  {'segbench':>9}  {'pyEdgeEval':>10}  "
           f"{'pyEdgeEval/segbench':>19}  {'segbench/floor':>14}")
    print(hdr)
    print("-" * len(hdr))
    for r in rows + [dict(iid="mean", **mean)]:
        if r["iid"] == "mean":
            print("-" * len(hdr))
        print(f"{r['iid']:>8}  {_fmt_s(r['floor']):>8}  {_fmt_s(r['ours']):>9}  "
              f"{_fmt_s(r['peer'], 1):>10}  {_fmt_ratio(ratio(r['peer'], r['ours'])):>19}  "
              f"{_fmt_ratio(ratio(r['ours'], r['floor'])):>14}")
    print(f"  overall ratios are of the per-image means (= of the totals over {n} images)")
    for note in notes:
        print(f"  note: {note}")
    return {"rows": rows, "mean": mean, "total": total,
            "ratio_peer_over_ours": ratio(mean["peer"], mean["ours"]),
            "ratio_ours_over_floor": ratio(mean["ours"], mean["floor"])}


def print_agreement(items, sides: dict[str, dict], ref: str | None = None) -> dict:
    """Best F per image from every side, and how each side's counts differ from ``ref``."""
    names = [k for k, v in sides.items() if v]
    by = {k: {im["iid"]: im for im in sides[k]["images"]} for k in names}
    others = [k for k in names if k != ref] if ref in names else []
    result = {"images": [], "overall": {}, "reference": ref if others else None}

    print()
    print(f"Per-image best F over the {NTHRESH} thresholds (no interpolation): F (threshold)")
    print(f"{'image':>8}  {'sumR':>6}" + "".join(f"  {k:>17}" for k in names))
    for item in items:
        iid = item["iid"]
        sum_r = next((by[k][iid]["sum_r"][0] for k in names if iid in by[k]), None)
        line = f"{iid:>8}  {'-' if sum_r is None else int(sum_r):>6}"
        entry = {"iid": iid, "best": {}, "diff": {}}
        for k in names:
            im = by[k].get(iid)
            if im is None:
                line += f"  {'-':>17}"
                continue
            entry["best"][k] = b = best_f(im)
            line += f"  {b['f']:>8.4f} ({b['t']:.2f})"
        for k in others:
            if iid in by[k] and iid in by[ref]:
                entry["diff"][k] = compare_counts(by[k][iid], by[ref][iid])
        print(line)
        result["images"].append(entry)
    line = f"{'all':>8}  {'':>6}"
    for k in names:
        imgs = [by[k][it["iid"]] for it in items if it["iid"] in by[k]]
        if len(imgs) != len(items):
            line += f"  {'-':>17}"
            continue
        result["overall"][k] = b = best_f(summed(imgs))
        line += f"  {b['f']:>8.4f} ({b['t']:.2f})"
    print(line + "   <- counts summed over the images (ODS-style)")

    if others:
        print()
        print(f"Counts minus {ref}'s, over the {NTHRESH} thresholds: min..max "
              f"(0 = identical at every threshold)")
        cols = ("sum_r", "sum_p", "cnt_r", "cnt_p")
        labels = ("sumR", "sumP", "cntR", "cntP")
        widths = (5, 6, 8, 8)
        group = sum(widths) + len(widths) - 1
        print(f"{'':>8}" + "".join(f" | {k:<{group}}" for k in others))
        print(f"{'image':>8}" + "".join(
            " | " + " ".join(f"{lab:>{w}}" for lab, w in zip(labels, widths)) for _ in others))
        for entry in result["images"]:
            line = f"{entry['iid']:>8}"
            for k in others:
                d = entry["diff"].get(k)
                cells = [_fmt_range(d[c]) if d else "-" for c in cols]
                line += " | " + " ".join(f"{c:>{w}}" for c, w in zip(cells, widths))
            print(line)
        print("  sumR (ground-truth pixels) and sumP (pixels of the thinned maps) are "
              "deterministic: they should\n  agree exactly. Matched counts cntR/cntP need not: "
              "the official matcher (correspondPixels, also\n  used by pyEdgeEval) is randomized "
              "and varies by a few pixels from run to run; segbench matches\n  exactly (an "
              "optimal matching per annotator), which also moves cntR/cntP by a few pixels.")
        peer_sum_p_differs = any(
            d["sum_p"]["min"] != 0 or d["sum_p"]["max"] != 0
            for e in result["images"] for k, d in e["diff"].items()
            if d["sum_p"] and "pyEdgeEval" in (k, ref))
        if peer_sum_p_differs:
            print("  A sumP difference involving pyEdgeEval is its thinning: its binary_thin "
                  "stops as soon as the first\n  sub-iteration changes nothing and skips the "
                  "second, so it can keep a pixel that MATLAB's\n  bwmorph(.., 'thin', Inf) "
                  "removes.")
    return result


# --------------------------------------------------------------------------- modes


def environment(api, peer) -> dict:
    env = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "segbench": api["version"] if api else None,
    }
    try:
        import numba
        env["numba"] = numba.__version__
    except ImportError:
        pass
    if peer:
        env["pyedgeeval"] = peer.get("pyedgeeval_version")
        env["peer_numpy"] = peer.get("numpy_version")
    return env


def mode_speed(args) -> dict:
    items = hed_items(args.data, args.n)
    print(f"BSDS boundary benchmark speed: {len(items)} BSDS500 test image(s) "
          f"({', '.join(i['iid'] for i in items)}), HED-NMS maps, {NTHRESH} thresholds, "
          f"thinning on, maxDist {MAX_DIST}, one worker each (thread pools pinned to 1)")
    notes = []
    api, why = load_segbench()
    ours = None
    if api is None:
        print(f"  segbench side UNAVAILABLE ({why}): its columns stay empty")
        notes.append(f"segbench not timed: {why}")
    else:
        log("Running segbench ...")
        ours = run_ours(api, items, args.repeat, with_floor=True)
        notes.append(f"segbench: warm-up call first (Numba JIT compile, "
                     f"{ours['warmup_cpu_s']:.1f} CPU-s, not counted); segbench and floor are "
                     f"the median of {args.repeat} run(s) per image, pyEdgeEval one run")
        notes.append("floor = read the map + threshold at the 99 thresholds + thin each "
                     "thresholded map, the fastest way segbench has (boundary.thin_frames); "
                     "no ground truth, no matching")
        per_map = [im.get("floor_per_map_cpu_s") for im in ours["images"]]
        if all(v is not None for v in per_map):
            pm = float(np.mean(per_map))
            mean_ours = float(np.mean([im["cpu_s"] for im in ours["images"]]))
            notes.append(f"the same floor work map by map (thin(pb >= t) for each t): "
                         f"{pm:.3f} CPU-s/image; segbench/that = {mean_ours / pm:.1f}x")
        gt = [im.get("gt_read_cpu_s") for im in ours["images"]]
        if all(v is not None for v in gt):
            mean_floor = float(np.mean([im["floor_cpu_s"] for im in ours["images"]]))
            mean_ours = float(np.mean([im["cpu_s"] for im in ours["images"]]))
            mean_gt = float(np.mean(gt))
            rest = mean_ours - mean_floor - mean_gt
            notes.append(f"segbench beyond the floor, per image: ground-truth read "
                         f"{mean_gt:.3f} CPU-s (median of its own runs), matching and "
                         f"counting the rest, {rest:.3f}")
    peer = None
    if args.skip_peer:
        notes.append("pyEdgeEval skipped (--skip-peer)")
    else:
        version = ensure_peer_venv(args.peer_venv)
        log(f"Running pyEdgeEval {version} in {args.peer_venv} (about 95 CPU-s per image) ...")
        peer = run_peer(args.peer_venv, items)
        notes.append(
            f"pyEdgeEval {peer['pyedgeeval_version']}: pyEdgeEval.datasets.bsds.bsds_eval_single "
            f"per image in one subprocess; whole subprocess incl. imports "
            f"{peer['process_cpu_s']:.1f} CPU-s, {peer['process_wall_s']:.1f} s wall")
    speed = print_speed(items, ours, peer, notes)
    agree = print_agreement(items, {"pyEdgeEval": peer, "segbench": ours}, ref="pyEdgeEval")
    return {"mode": "speed", "items": items, "environment": environment(api, peer),
            "settings": {"nthresh": NTHRESH, "max_dist": MAX_DIST, "thin": THIN,
                         "repeat_segbench": args.repeat},
            "segbench": ours, "pyedgeeval": peer, "speed": speed, "agreement": agree,
            "notes": notes}


def read_octave(fixtures: Path, iid: str, sub: str = OCTAVE_ID) -> dict | None:
    path = fixtures / "bsr-official" / sub / f"{iid}_ev1.txt"
    if not path.is_file():
        return None
    a = np.loadtxt(path, ndmin=2)
    return {"iid": iid, "thresholds": a[:, 0].tolist(), "cnt_r": a[:, 1].tolist(),
            "sum_r": a[:, 2].tolist(), "cnt_p": a[:, 3].tolist(), "sum_p": a[:, 4].tolist()}


def read_octave_cpu(fixtures: Path) -> dict:
    path = fixtures / "bsr-official" / OCTAVE_ID / "timing.txt"
    out = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            f = line.split()
            if f and not line.startswith("#") and len(f) >= 5:
                try:
                    out[f[0]] = float(f[4])
                except ValueError:
                    pass
    return out


def mode_parity(args) -> dict:
    items = selftest_items(args.fixtures)
    print(f"Parity with the official code: BSDS500 self-test images "
          f"({', '.join(i['iid'] for i in items)}), PNG soft maps, {NTHRESH} thresholds, "
          f"thinning on, maxDist {MAX_DIST}; reference = {OCTAVE_ID} (official code, Octave)")
    octave = {"images": [o for it in items if (o := read_octave(args.fixtures, it["iid"]))]}
    run2 = {"images": [o for it in items
                       if (o := read_octave(args.fixtures, it["iid"], OCTAVE_ID + "_run2"))]}
    api, why = load_segbench()
    ours = None
    if api is None:
        print(f"  segbench side unavailable ({why}): shown for pyEdgeEval only")
    else:
        log("Running segbench ...")
        ours = run_ours(api, items, 1, with_floor=False)
    version = ensure_peer_venv(args.peer_venv)
    log(f"Running pyEdgeEval {version} (about 95 CPU-s per image) ...")
    peer = run_peer(args.peer_venv, items)
    sides = {"official": octave, "official-run2": run2 if run2["images"] else None,
             "pyEdgeEval": peer, "segbench": ours}
    agree = print_agreement(items, sides, ref="official")
    oct_cpu = read_octave_cpu(args.fixtures)
    print()
    print("CPU seconds per image: official (Octave, from timing.txt) vs pyEdgeEval vs segbench")
    peer_by = {im["iid"]: im for im in peer["images"]}
    ours_by = {im["iid"]: im for im in ours["images"]} if ours else {}
    for it in items:
        iid = it["iid"]
        o = oct_cpu.get(iid)
        print(f"{iid:>8}  official {_fmt_s(o, 1):>6}  pyEdgeEval {peer_by[iid]['cpu_s']:>6.1f}  "
              f"segbench {_fmt_s(ours_by[iid]['cpu_s'] if iid in ours_by else None):>7}")
    return {"mode": "parity-peer", "items": items, "environment": environment(api, peer),
            "official": octave, "official_run2": run2, "pyedgeeval": peer, "segbench": ours,
            "official_cpu_s": oct_cpu, "agreement": agree}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=5, help="number of BSDS500 test images (default 5)")
    ap.add_argument("--skip-peer", action="store_true", help="do not run pyEdgeEval")
    ap.add_argument("--parity-peer", action="store_true",
                    help="separate mode: pyEdgeEval vs the official code on its 5-image self-test")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA,
                    help=f"shared data folder (default {DEFAULT_DATA})")
    ap.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES,
                    help=f"shared fixtures folder, for --parity-peer (default {DEFAULT_FIXTURES})")
    ap.add_argument("--repeat", type=int, default=5,
                    help="runs per image for segbench and the floor, alternating; the median is "
                         "reported (default 5; pyEdgeEval always runs once)")
    ap.add_argument("--peer-venv", type=Path, default=PEER_VENV,
                    help=f"pyEdgeEval's virtual environment (default {PEER_VENV})")
    ap.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    args = ap.parse_args(argv)
    if args.n < 1 or args.repeat < 1:
        ap.error("--n and --repeat must be >= 1")

    result = mode_parity(args) if args.parity_peer else mode_speed(args)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
