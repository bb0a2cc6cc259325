#!/usr/bin/env python3
"""CPU seconds of the imports a short command avoids (docs/engine.md, "A command imports
only what it uses"): Numba's CPU-target refresh (which imports every implementation,
``scipy.linalg`` among them) beyond ``import numpy, numba``, what any process that loads
a cached Numba kernel pays (``segbench semantic`` avoids it by counting with its C
extension, issue 41); ``scipy.io`` and matplotlib with its Agg canvas beyond ``import
numpy``; OpenBLAS's thread pool, started by ``import numpy`` unless
``OPENBLAS_NUM_THREADS=1`` (every other case runs with it; ``segbench semantic`` sets it
for its own process unless the user did).

Each case is a separate ``python -c`` process, ``--repeats`` times round-robin; its CPU
is user + system of the child (``resource.getrusage(RUSAGE_CHILDREN)``). Printed: the
median of each case and its median excess over its floor measured in the same run. The
script prints figures only; it asserts nothing.

    python benchmarks/import_costs.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys

#: case -> (code, the case it is measured beyond)
CASES = {
    "numpy": ("import numpy", None),
    # the others run with OPENBLAS_NUM_THREADS=1; this one with OpenBLAS's default
    "numpy, OpenBLAS's default threads": ("import os; os.environ.pop('OPENBLAS_NUM_THREADS'); "
                                          "import numpy", "numpy"),
    "numpy, numba": ("import numpy, numba", None),
    "Numba's target refresh": ("import numpy, numba; from numba.core.registry import "
                               "cpu_target; cpu_target.target_context.refresh()",
                               "numpy, numba"),
    "scipy.linalg": ("import numpy, scipy.linalg", "numpy"),
    "scipy.io": ("import numpy, scipy.io", "numpy"),
    "matplotlib, Agg canvas": ("import numpy; from matplotlib.figure import Figure; from "
                               "matplotlib.backends.backend_agg import FigureCanvasAgg",
                               "numpy"),
}


def _cpu(code: str) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], check=True,
                   env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=7)
    a = ap.parse_args()
    for code, _ in CASES.values():            # warm the file cache, untimed
        _cpu(code)
    times: dict = {name: [] for name in CASES}
    for _ in range(a.repeats):
        for name, (code, _) in CASES.items():
            times[name].append(_cpu(code))
    med = {name: statistics.median(t) for name, t in times.items()}
    print(f"CPU-s, median of {a.repeats} processes (load {os.getloadavg()[0]:.1f}):")
    for name, (_, floor) in CASES.items():
        extra = "" if floor is None else f"   +{med[name] - med[floor]:.2f} over {floor}"
        print(f"  {name:<24} {med[name]:.2f}{extra}")

if __name__ == "__main__":
    main()
