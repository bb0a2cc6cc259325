"""CPU seconds and peak memory of gPb-owt-ucm per photograph, by stage, beside the
original BSR code under GNU Octave when it is built here.

Each image runs in a child process of its own (one process, one thread of BLAS), which
first loads the compiled kernels on a small image, so the figures are those of a run
after compilation; the child reports ``time.process_time`` per stage and its own peak
resident memory (``VmHWM``). With ``--octave-bsr PATH``, the same images go through
BSR's ``globalPb`` and ``contours2ucm`` in GNU Octave (``pkg load image``; Debian's
``octave``, ``octave-image`` and ``liboctave-dev``), timed by ``cputime``. PATH is BSR's
unmodified ``grouping`` folder, whose MEX files are then built once with ``mkoctfile
--mex`` into ``--bsr-cache`` (``benchmarks/_bsr_octave.py``), or a folder with
``globalPb.m`` and the MEX files already built. BSR takes about 6 GB of memory and
50-80 CPU-s per image.

    python benchmarks/gpb_speed.py --n 3
    python benchmarks/gpb_speed.py --n 3 --rsz 0.5
    python benchmarks/gpb_speed.py --n 2 --octave-bsr /path/to/BSR/grouping

``--rsz`` is BSR's factor for the eigenproblem's size (1.0, the published setting, by
default); Octave gets the same factor.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BSR_CACHE = Path("~/.cache/segbench-bench/bsr-octave")
IMAGES = ROOT.parent / "shared" / "data" / "bsds500" / "images" / "val"
STAGES = ("mPb", "W", "eigenvectors", "sPb", "OWT-UCM")


def _child(path: str, rsz: float, scale: int, eigensolver: str) -> None:
    import time

    import numpy as np

    from segbench.algorithms import gpb_owt_ucm
    from segbench.io import read_image
    rng = np.random.default_rng(0)
    # load the kernels (the multigrid's too: a grid it coarsens twice)
    gpb_owt_ucm(rng.integers(0, 256, (48, 64, 3), dtype=np.uint8))
    gpb_owt_ucm(rng.integers(0, 256, (200, 240, 3), dtype=np.uint8),
                eigensolver=eigensolver)
    img = read_image(path)
    if scale > 1:  # a larger photograph: Pillow's bicubic enlargement
        from PIL import Image
        h, w = img.shape[:2]
        img = np.asarray(Image.fromarray(img).resize((w * scale, h * scale),
                                                     Image.BICUBIC))
    timings: dict = {}
    t = time.process_time()
    gpb_owt_ucm(img, rsz=rsz, eigensolver=eigensolver, timings=timings)
    timings["total"] = time.process_time() - t
    with open("/proc/self/status") as f:
        hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))
    print(json.dumps({"timings": timings, "peak_mb": hwm / 1024}))


def _ours(path: Path, rsz: float, scale: int = 1, eigensolver: str = "auto") -> dict:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, __file__, "--child", str(path), "--rsz",
                          str(rsz), "--scale", str(scale), "--eigensolver", eigensolver],
                         env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


_OCTAVE = """
pkg load image
addpath('{lib}');
t0 = cputime; [gPb_orient] = globalPb('{img}', '', {rsz}); t1 = cputime;
ucm2 = contours2ucm(gPb_orient, 'doubleSize'); t2 = cputime;
printf('SEGBENCH %.3f %.3f\\n', t1 - t0, t2 - t1);
"""


def _quote(path: Path) -> str:
    return str(path).replace("'", "''")          # inside Octave's '...'


def _octave(path: Path, lib: Path, rsz: float) -> dict:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "segbench_bsr.m"  # not run.m: a core function's name
        script.write_text(_OCTAVE.format(lib=_quote(lib), img=_quote(path), rsz=rsz))
        out = subprocess.run(["octave", "--no-gui", "-q", str(script)], env=env,
                             capture_output=True, text=True, cwd=tmp)
    line = next((x for x in out.stdout.splitlines() if x.startswith("SEGBENCH")), None)
    if line is None:
        raise SystemExit(f"octave failed on {path}:\n{out.stderr[-2000:]}")
    gpb, ucm = map(float, line.split()[1:])
    return {"gPb": gpb, "OWT-UCM": ucm, "total": gpb + ucm}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--images", type=Path, default=IMAGES)
    ap.add_argument("--n", type=int, default=3, help="images (the first n, sorted)")
    ap.add_argument("--octave-bsr", type=Path, default=None, metavar="PATH",
                    help="BSR's grouping folder (its MEX files are built for Octave "
                         "into --bsr-cache), or a folder with globalPb.m and the "
                         "MEX files built")
    ap.add_argument("--bsr-cache", type=Path, default=BSR_CACHE, metavar="DIR",
                    help=f"where BSR's MEX files are built (default: {BSR_CACHE})")
    ap.add_argument("--rsz", type=float, default=1.0,
                    help="BSR's eigenproblem size factor in (0, 1] (default: 1.0)")
    ap.add_argument("--scales", type=int, nargs="+", default=None, metavar="S",
                    help="also time each image enlarged S times on a side (Pillow "
                         "bicubic) and print the cost against linear in the pixels, "
                         "e.g. --scales 1 4 --eigensolver multigrid")
    ap.add_argument("--scale", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--eigensolver", default="auto",
                    choices=("auto", "exact", "multigrid"),
                    help="gpb's eigensolver (default: auto)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        _child(a.child, a.rsz, a.scale, a.eigensolver)
        return
    if a.scales:
        _scales(a)
        return
    paths = sorted(a.images.glob("*.jpg"))[:a.n]
    if not paths:
        raise SystemExit(f"no .jpg images in {a.images}")
    lib = None
    if a.octave_bsr:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from _bsr_octave import BuildError, resolve_lib
        try:
            lib = resolve_lib(a.octave_bsr, a.bsr_cache)
        except BuildError as e:
            raise SystemExit(f"--octave-bsr: {e}") from None
    rows = []
    for p in paths:
        r = _ours(p, a.rsz)
        if lib is not None:
            r["bsr"] = _octave(p, lib, a.rsz)
        rows.append(r)
        t = r["timings"]
        line = "  ".join(f"{s} {t.get(s, float('nan')):.2f}" for s in STAGES)
        bsr = f"  | BSR/Octave {r['bsr']['total']:.1f}" if "bsr" in r else ""
        print(f"{p.stem}: {line}  total {t['total']:.2f} CPU-s, peak "
              f"{r['peak_mb']:.0f} MB{bsr}", flush=True)
    med = {s: statistics.median(r["timings"].get(s, float("nan")) for r in rows)
           for s in (*STAGES, "total")}
    print(f"\nmedian over {len(rows)} images (CPU-s per image, one process, rsz "
          f"{a.rsz}):")
    for s in (*STAGES, "total"):
        print(f"  {s:<13} {med[s]:7.2f}")
    print(f"  peak memory   {statistics.median(r['peak_mb'] for r in rows):7.0f} MB")
    if lib is not None:
        bsr = statistics.median(r["bsr"]["total"] for r in rows)
        ucm = statistics.median(r["bsr"]["OWT-UCM"] for r in rows)
        print(f"  BSR under Octave: {bsr:.1f} CPU-s per image (contours2ucm {ucm:.2f}); "
              f"segbench is {bsr / med['total']:.1f}x faster (OWT-UCM "
              f"{ucm / med['OWT-UCM']:.1f}x)")


def _scales(a) -> None:
    """Whole gPb-owt-ucm per image at each enlargement, and the cost's growth."""
    paths = sorted(a.images.glob("*.jpg"))[:a.n]
    if not paths:
        raise SystemExit(f"no .jpg images in {a.images}")
    by_scale: dict[int, list] = {s: [] for s in a.scales}
    for p in paths:
        for s in a.scales:  # the sizes of one image in turn: a drifting machine
            r = _ours(p, a.rsz, s, a.eigensolver)  # slows them alike
            by_scale[s].append(r)
            t = r["timings"]
            line = "  ".join(f"{k} {t.get(k, float('nan')):.2f}" for k in STAGES)
            print(f"{p.stem} x{s}: {line}  total {t['total']:.2f} CPU-s, peak "
                  f"{r['peak_mb']:.0f} MB", flush=True)
    base = min(a.scales)
    cost = {s: statistics.median(r["timings"]["total"] for r in rs)
            for s, rs in by_scale.items()}
    print(f"\nmedian over {len(paths)} images, eigensolver {a.eigensolver}:")
    for s in a.scales:
        peak = max(r["peak_mb"] for r in by_scale[s])
        pixels = (s / base) ** 2
        grow = cost[s] / cost[base]
        print(f"  x{s}: {cost[s]:8.2f} CPU-s, peak {peak:5.0f} MB; {grow:6.2f}x the "
              f"cost of x{base} for {pixels:.0f}x the pixels: {grow / pixels:.2f} x "
              f"linear")


if __name__ == "__main__":
    main()
