#!/usr/bin/env python3
"""The first run in a fresh environment: the README's first command, from a fresh clone.

Clones this repository (its committed HEAD) into a temporary folder, makes a fresh venv
and installs the package there (timed apart: it is pip's cost, not ours), then times
``segbench demo`` as the README runs it, twice: the first run compiles and caches every
Numba kernel it calls, the second starts from the cache. Printed: install wall seconds,
first and second demo wall and CPU seconds, the compile share (first - second), and the
notices the first run printed (``SEGBENCH_COMPILE_NOTICE=1``).

    python benchmarks/first_run.py [--keep]

Needs the package index pip uses here (the packages are installed, not downloaded at
run time by segbench).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _timed(cmd, cwd, env=None) -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if proc.returncode:
        raise SystemExit(f"failed: {' '.join(map(str, cmd))}\n{proc.stderr[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stderr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keep", action="store_true", help="keep the temporary clone")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="segbench-first-run-"))
    try:
        clone = work / "segbench"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        wall, _, _ = _timed([sys.executable, "-m", "venv", ".venv"], clone)
        iw, _, _ = _timed([".venv/bin/pip", "install", "-q", "-e", "."], clone)
        # bytecode written, as on a user's machine (this sandbox sets the variable)
        env = dict(os.environ, SEGBENCH_COMPILE_NOTICE="1", PYTHONDONTWRITEBYTECODE="0")
        env.pop("NUMBA_CACHE_DIR", None)
        w1, c1, err = _timed([".venv/bin/segbench", "demo", "--quiet"], clone, env)
        shutil.rmtree(clone / "segbench-demo")
        w2, c2, _ = _timed([".venv/bin/segbench", "demo", "--quiet"], clone, env)
        print(f"venv + pip install -e . : {wall + iw:6.1f} s wall (not counted)")
        print(f"segbench demo, first run : {w1:6.1f} s wall  {c1:6.1f} CPU-s")
        print(f"segbench demo, second run: {w2:6.1f} s wall  {c2:6.1f} CPU-s")
        print(f"compiling on the first run: {w1 - w2:5.1f} s wall")
        notices = [line for line in err.splitlines() if "compiling" in line]
        print("notices of the first run:")
        for line in notices:
            print(f"  {line}")
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept: {work}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
