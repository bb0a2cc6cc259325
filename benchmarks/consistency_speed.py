#!/usr/bin/env python3
"""CPU seconds, wall seconds and peak memory of ``segbench consistency`` on BSDS500 val,
the rows of docs/consistency.md's time table.

Each row is one ``segbench consistency`` command into a new folder (no records to
resume from), one worker, run as a child of a child process of this script: that
middle process reports ``resource.getrusage(RUSAGE_CHILDREN)`` (user + system CPU and
the peak resident set of the command), so each row's peak is its own. CPU seconds are
the figure to compare where other work shares the machine; the load average before
and after each row is printed beside it. The script prints figures only; it asserts
nothing.

    python benchmarks/consistency_speed.py                     # every row
    python benchmarks/consistency_speed.py --rows plain figures
    python benchmarks/consistency_speed.py --data ../shared/data/bsds500

Rows (``--rows``):

* ``plain``: ``consistency`` (default ``--pairs 1000``), no figures;
* ``figures``: ``consistency --figures``: the default segmenter (``ncut-2001``) on the
  default 50 images;
* ``figures-superpixel``: the same with ``--segmenter ncut-superpixel``;
* ``figures-all-superpixel``: ``--figures --figure-images 0 --segmenter
  ncut-superpixel`` (all 100 val images).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "bsds500"
ROWS = {
    "plain": [],
    "figures": ["--figures"],
    "figures-superpixel": ["--figures", "--segmenter", "ncut-superpixel"],
    "figures-all-superpixel": ["--figures", "--figure-images", "0",
                               "--segmenter", "ncut-superpixel"],
}


def _command(data: Path, row: str, out: Path) -> list[str]:
    return [sys.executable, "-m", "segbench.cli", "consistency",
            "--gt", str(data / "groundTruth" / "val"),
            "--images", str(data / "images" / "val"),
            "--out", str(out), "--workers", "1", "--quiet", *ROWS[row]]


def _child(argv: list[str]) -> None:
    """Run the command; print its CPU, wall and peak memory as JSON."""
    t = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    if done.returncode:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"cpu": use.ru_utime + use.ru_stime, "wall": wall,
                      "peak_mb": use.ru_maxrss / 1024}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA,
                    help="BSDS500 data folder (groundTruth/val and images/val)")
    ap.add_argument("--rows", nargs="+", choices=tuple(ROWS), default=list(ROWS))
    ap.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        _child(a.child)
        return
    if not (a.data / "groundTruth" / "val").is_dir():
        raise SystemExit(f"no groundTruth/val in {a.data}")
    print(f"{'row':<24} {'CPU s':>7} {'wall s':>7} {'peak MB':>8}  load before/after")
    for row in a.rows:
        with tempfile.TemporaryDirectory() as tmp:
            before = os.getloadavg()[0]
            out = subprocess.run(
                [sys.executable, __file__, "--child",
                 *_command(a.data, row, Path(tmp) / "out")],
                capture_output=True, text=True)
            after = os.getloadavg()[0]
        if out.returncode:
            raise SystemExit(f"row {row}: {out.stderr.strip()[-3000:]}")
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{row:<24} {r['cpu']:7.1f} {r['wall']:7.1f} {r['peak_mb']:8.0f}  "
              f"{before:.1f}/{after:.1f}", flush=True)


if __name__ == "__main__":
    main()
