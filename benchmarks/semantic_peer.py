"""Time hotcoco's SemanticEval on the cached benchmark pairs; prints one JSON line.

Run by semantic_speed.py with the peer's interpreter (benchmarks/.peer-venv-semantic),
so hotcoco is never installed beside segbench. Only numpy and hotcoco needed.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from semantic_data import load  # noqa: E402


def feed(ev, gt, pred, batch):
    for i in range(0, len(gt), batch):
        ev.update(gt[i:i + batch] if batch > 1 else gt[i],
                  pred[i:i + batch] if batch > 1 else pred[i])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", required=True)
    ap.add_argument("--cache", default=None)
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    from hotcoco import semantic
    import hotcoco

    gt, pred, classes = load(a.set, a.cache)
    gt, pred = np.array(gt), np.array(pred)  # into memory, as ours
    warm = semantic.SemanticEval(classes)
    warm.update(gt[0], pred[0])
    out = {"hotcoco": hotcoco.__version__, "timings": {}}
    for batch in (int(b) for b in a.batches.split(",")):
        best = float("inf")
        for _ in range(a.repeat):
            ev = semantic.SemanticEval(classes)
            t = time.perf_counter()
            feed(ev, gt, pred, batch)
            best = min(best, time.perf_counter() - t)
        out["timings"][str(batch)] = best
        out["stats"] = dict(zip(semantic.METRIC_NAMES, ev.stats))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
