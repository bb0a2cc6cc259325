#!/usr/bin/env python3
"""What a command costs before and around its work: whole processes, CPU-seconds.

Each case runs ``--repeats`` times (default 5) as a separate process, the cases in
turn (round-robin, so that a drift of the machine's speed reaches all alike); printed are the
min and median CPU-seconds (user + system of the child, from ``resource.getrusage``),
and the median wall seconds, beside floors measured in the same run:

* ``python -c "import numpy"``: the interpreter and numpy, which every command needs
  (the first row is also the machine's speed gauge: 0.15 on a quiet machine);
* ``import numpy, numba``: what any command with a compiled kernel pays before it loads
  one;
* ``numpy + scipy.io + numba + one cached kernel, loaded as Numba loads it``: what such
  a command pays before its own work (Numba refreshes its CPU target before it loads a
  cached kernel: about 0.4 CPU-s a process; segbench loads kernels as Numba does).

Cases (the targets of issue 17 in brackets):

* ``segbench --help``                                  [<= 0.3]
* ``segbench boundary`` on one BSDS500 image, with the PR plot   [<= 1.0]
* ``segbench boundary`` on one image, ``--no-plot``             [<= 0.7]
* ``segbench superpixel`` on the 10 fixture images (../shared/fixtures/superpixel),
  beside the C++ superpixel benchmark's CLI measured at 1.4 CPU-s   [<= 1.5]
* ``segbench semantic --no-boundary-iou`` on one 512x512 pair (the fixed cost: its C
  extension counts, no Numba is loaded)   [<= 0.2, issue 41]

Kernels are compiled and cached before timing (one untimed run of each case). Outputs
go to a fresh temporary folder per run, so nothing is resumed.

    python benchmarks/startup.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def _run(cmd: list[str], env: dict) -> tuple[float, float]:
    """(CPU-s, wall-s) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=env)
    _, err = proc.communicate()
    wall = time.perf_counter() - t
    if proc.returncode:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{err.decode()[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def _semantic_pair(root: Path) -> None:
    """One 512x512 pair of 8-bit label maps (150 classes), written by Pillow."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    for side in ("gt", "pred"):
        (root / side).mkdir(parents=True)
        coarse = rng.integers(0, 150, (64, 64)).astype(np.uint8)
        Image.fromarray(np.kron(coarse, np.ones((8, 8), np.uint8))).save(
            root / side / "0.png")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    py = sys.executable
    seg = [py, "-m", "segbench.cli"]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="0")
    work = Path(tempfile.mkdtemp(prefix="segbench-startup-"))
    one = work / "one"
    (one / "gt").mkdir(parents=True)
    (one / "pred").mkdir()
    gt = SHARED / "data" / "bsds500" / "groundTruth" / "test" / "100007.mat"
    pb = SHARED / "data" / "bsds500-hed-nms" / "test" / "100007.png"
    sp = SHARED / "fixtures" / "superpixel" / "inputs"
    floor_mod = work / "floor_kernel.py"
    floor_mod.write_text("import numba\n\n@numba.njit(cache=True)\ndef f(x):\n"
                         "    return x + 1\n")
    sem = work / "semantic"
    _semantic_pair(sem)
    cases = [("python -c 'import numpy'", lambda o: [py, "-c", "import numpy"], None),
             ("import numpy, numba", lambda o: [py, "-c", "import numpy, numba"], None),
             ("numpy + scipy.io + numba + 1 kernel, Numba's loading",
              lambda o: [py, "-c", f"import sys; sys.path.insert(0, {str(work)!r}); "
                                   "import numpy, scipy.io, floor_kernel; "
                                   "floor_kernel.f(1)"], None),
             ("segbench --help", lambda o: [*seg, "--help"], 0.3),
             ("segbench semantic --no-boundary-iou, 1 pair 512x512",
              lambda o: [*seg, "semantic", "--gt", str(sem / "gt"), "--pred",
                         str(sem / "pred"), "--classes", "150", "--no-boundary-iou",
                         "--quiet"], 0.2)]
    if gt.is_file() and pb.is_file():
        shutil.copy(gt, one / "gt")
        shutil.copy(pb, one / "pred")
        base = [*seg, "boundary", "--gt", str(one / "gt"), "--pred", str(one / "pred"),
                "--quiet"]
        cases += [("segbench boundary, 1 image, with plot",
                   lambda o: [*base, "--out", str(o)], 1.0),
                  ("segbench boundary, 1 image, --no-plot",
                   lambda o: [*base, "--out", str(o), "--no-plot"], 0.7)]
    else:
        print(f"(no BSDS500 data under {SHARED / 'data'}: boundary cases skipped)")
    if sp.is_dir():
        cases.append(("segbench superpixel, 10 fixture images (C++ CLI: 1.4)",
                      lambda o: [*seg, "superpixel", "--gt", str(sp / "gt"), "--pred",
                                 str(sp / "sp" / "fh"), "--images", str(sp / "images"),
                                 "--out", str(o), "--quiet"], 1.5))
    print(f"{'case':58s} {'min CPU':>8s} {'median':>8s} {'wall':>6s} {'target':>7s}")
    try:
        for k, (label, cmd, target) in enumerate(cases):
            _run(cmd(work / f"warm{k}"), env)          # compile and cache, untimed
        # round-robin: this VM's speed drifts within minutes, so every case sees the
        # same stretch of it
        cpus = {k: [] for k in range(len(cases))}
        walls = {k: [] for k in range(len(cases))}
        for r in range(a.repeats):
            for k, (label, cmd, target) in enumerate(cases):
                cpu, wall = _run(cmd(work / f"c{k}r{r}"), env)
                cpus[k].append(cpu)
                walls[k].append(wall)
        for k, (label, cmd, target) in enumerate(cases):
            t = "" if target is None else f"{target:.2f}"
            print(f"{label:58s} {min(cpus[k]):8.2f} {statistics.median(cpus[k]):8.2f} "
                  f"{statistics.median(walls[k]):6.2f} {t:>7s}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
