#!/usr/bin/env python3
"""Speed of ``segbench site`` over five runs of the 200 BSDS500 test images.

The runs are made once with the real CLI and kept under ``--work`` (default: a folder
in the system's temp directory, reused by the next call):

* ``hed``: ``segbench boundary`` over the HED soft maps (NMS-thinned PNGs);
* ``gpb-boundary`` and ``gpb-region``: ``segbench boundary`` and ``segbench region``
  over the authors' gPb-owt-ucm ucm2 maps, both named ``gpb-owt-ucm`` (one algorithm,
  a boundary and a region run: one row of the ranking);
* ``gm`` and ``canny``: ``segbench detect --detector gm|canny`` on the test images,
  then ``segbench boundary`` over their soft maps.

Then ``segbench site --quiet`` over the five folders is timed as a whole process:
CPU seconds of the child (user + system, from ``resource.getrusage(RUSAGE_CHILDREN)``
before and after) and wall seconds. The first build is into a new folder (cold: the
site runs the human families into its ``.segbench-cache``); then ``--repeat``
rebuilds of the same folder (warm: they reuse those records, as a user's rebuild
does); the cold figures and the rebuilds' medians are printed. CPU seconds are the
figure to compare where other work shares the machine. The script prints figures
only; it asserts nothing.

    python benchmarks/site_speed.py                           # prepare once, cold + 3 rebuilds
    python benchmarks/site_speed.py --work /tmp/site-speed --repeat 5
    python benchmarks/site_speed.py --site-args --workers 2   # extra options for site
    python benchmarks/site_speed.py --human                   # also a segbench human run

``--human`` also makes ``segbench human --out WORK/human`` once (its time printed) and
gives it to the site among the results: the cold build then reuses its records of the
annotators instead of scoring them (the pages are the same).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parent.parent / "shared" / "data"


def segbench(*args) -> list[str]:
    """The CLI as a child process of this interpreter (the installed segbench)."""
    return [sys.executable, "-m", "segbench.cli", *map(str, args)]


def timed(cmd: list[str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one child process run to completion."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def prepare(work: Path, data: Path, workers: int) -> list[Path]:
    """The five run folders under ``work`` (made once; a finished one is kept)."""
    gt = data / "bsds500"
    ucm = data / "bsds500-gpb-owt-ucm" / "test"
    common = ["--gt", gt, "--split", "test", "--quiet", "--workers", workers]
    plan = [
        ("hed", None, ["boundary", "--pred", data / "bsds500-hed-nms" / "test",
                       "--name", "hed", "--no-plot"]),
        ("gpb-boundary", None, ["boundary", "--pred", ucm, "--name", "gpb-owt-ucm",
                                "--no-plot"]),
        ("gpb-region", None, ["region", "--pred", ucm, "--name", "gpb-owt-ucm"]),
        ("gm", "gm", ["boundary", "--name", "gm", "--no-plot"]),
        ("canny", "canny", ["boundary", "--name", "canny", "--no-plot"]),
    ]
    runs = []
    for name, detector, args in plan:
        out = work / name
        runs.append(out)
        if any(out.glob("result_*.json")):
            continue
        if detector is not None:
            pred = work / f"{name}-pred"
            if not (pred / "100007.png").is_file() or \
                    len(list(pred.glob("*.png"))) < 200:
                print(f"detecting {name} ...", file=sys.stderr, flush=True)
                subprocess.run(segbench("detect", "--detector", detector, "--images",
                                        gt / "images" / "test", "--out", pred,
                                        "--quiet", "--workers", workers), check=True,
                               stdout=subprocess.DEVNULL)
            args = [*args, "--pred", pred]
        print(f"running {name} ...", file=sys.stderr, flush=True)
        cpu, wall = timed(segbench(*args, *common, "--out", out))
        print(f"  {name}: {cpu:.1f} CPU-s, {wall:.1f} s wall", file=sys.stderr)
    return runs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) /
                    "segbench-site-speed", help="folder of the runs, made once and "
                    "reused (default: %(default)s)")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA,
                    help="folder holding bsds500/, bsds500-hed-nms/, "
                         "bsds500-gpb-owt-ucm/ (default: %(default)s)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="rebuilds timed after the cold build")
    ap.add_argument("--workers", type=int, default=1,
                    help="workers of the runs made once (not of the site)")
    ap.add_argument("--human", action="store_true",
                    help="also make a segbench human run once and give it to the site")
    ap.add_argument("--site-args", nargs=argparse.REMAINDER, default=[],
                    help="further options for segbench site (last on the line)")
    a = ap.parse_args(argv)
    a.work.mkdir(parents=True, exist_ok=True)
    runs = prepare(a.work, a.data, a.workers)
    if a.human:
        human = a.work / "human"
        if not any(human.glob("result_*.json")):
            print("running human ...", file=sys.stderr, flush=True)
            cpu, wall = timed(segbench("human", "--gt", a.data / "bsds500", "--split",
                                       "test", "--quiet", "--workers", a.workers,
                                       "--out", human))
            print(f"  human: {cpu:.1f} CPU-s, {wall:.1f} s wall", file=sys.stderr)
        runs = [*runs, human]
    site = a.work / "site"
    if site.exists():                  # a cold build: nothing cached from before
        shutil.rmtree(site)
    cmd = segbench("site", "--gt", a.data / "bsds500", "--split", "test", "--results",
                   *runs, "--out", site, "--quiet", *a.site_args)
    cold = timed(cmd)
    print(f"cold build: {cold[0]:.1f} CPU-s, {cold[1]:.1f} s wall", file=sys.stderr)
    cpus, walls = [], []
    for k in range(a.repeat):
        cpu, wall = timed(cmd)
        cpus.append(cpu)
        walls.append(wall)
        print(f"rebuild {k + 1}: {cpu:.1f} CPU-s, {wall:.1f} s wall", file=sys.stderr)
    n_rows = (site / "index.html").read_text(encoding="utf-8").count("<tr data-slug=")
    figures = {"runs": [r.name for r in runs], "images": 200, "repeat": a.repeat,
               "human_run": a.human,
               "cold_cpu_s": round(cold[0], 2), "cold_wall_s": round(cold[1], 2),
               "rebuild_cpu_s_median": round(statistics.median(cpus), 2) if cpus else None,
               "rebuild_wall_s_median": round(statistics.median(walls), 2) if walls
               else None,
               "rebuild_cpu_s": [round(c, 2) for c in cpus],
               "rebuild_wall_s": [round(w, 2) for w in walls],
               "ranking_rows": n_rows, "site": str(site), "site_args": a.site_args,
               "python": sys.version.split()[0], "cores": os.cpu_count()}
    print(json.dumps(figures, indent=1))
    print(f"segbench site, 5 runs x 200 images: cold {cold[0]:.1f} CPU-s, "
          f"{cold[1]:.1f} s wall", end="")
    if cpus:
        print(f"; rebuild {figures['rebuild_cpu_s_median']:.1f} CPU-s, "
              f"{figures['rebuild_wall_s_median']:.1f} s wall (median of {a.repeat})",
              end="")
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
