"""Semantic evaluation from folders of PNG label maps: segbench beside hotcoco, in-process
and as whole processes, on maps of four textures.

Each set is ``--pairs`` pairs (default 300) written once to the cache by Pillow's
default ``Image.save`` (what a user's script writes):

- ``blob``: 512x512, 150 classes, the blob maps of benchmarks/semantic_data.py (about
  5% ignored, 10% wrong): long runs of one label;
- ``salt``: the same ground truth, the prediction with 8% of its pixels replaced by a
  random class (salt-and-pepper errors, what an early-epoch model writes): runs broken
  every dozen pixels;
- ``random``: 512x512, 150 classes, every pixel an independent label on both sides: no
  runs, the worst case for PNG compression;
- ``cityscapes``: 2048x1024, 19 classes plus 255 ignore, blob layouts of 60 regions
  (benchmarks/semantic_data.py's ``cityscapes`` set).

Printed per set (medians of ``--repeat`` alternating runs, CPU-seconds: of this
process for in-process runs, ``getrusage`` of the child for processes):

- ``in-process``: hotcoco ``SemanticEval.update_folders`` + ``report`` against
  segbench's ``SemanticEval.update_folders`` + ``report`` (no boundary IoU);
- ``command``: ``segbench semantic --no-boundary-iou --quiet`` against a
  ``python -c`` process doing hotcoco's ``update_folders`` + ``report`` on all pairs;
- ``fixed``: the same two processes on the first pair alone (start-up and loading).

hotcoco runs on one thread (``RAYON_NUM_THREADS=1``, also for its processes). Every
run's mIoU is checked against hotcoco's to 1e-12. hotcoco is a peer for this script
only (``pip install hotcoco==1.3.0``); without it only segbench's rows are printed.
Targets (issue 41): in-process >= 1.5x on every set, command >= 1.0x, segbench's
fixed cost <= 0.2 CPU-s.

    python benchmarks/semantic_folders.py --repeat 5
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
import time
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")  # before hotcoco starts its pool

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from semantic_data import default_cache, make_pair  # noqa: E402

import segbench  # noqa: E402
from segbench.semantic import SemanticEval  # noqa: E402
from segbench.semantic._core import native  # noqa: E402

try:
    import hotcoco
    from hotcoco import semantic as hc_semantic
except ImportError:
    hc_semantic = hotcoco = None

#: name -> (height, width, classes, seeds per map)
SETS = {
    "blob": (512, 512, 150, 40),
    "salt": (512, 512, 150, 40),
    "random": (512, 512, 150, 0),
    "cityscapes": (1024, 2048, 19, 60),
}
SALT = 0.08


def folders(name: str, n: int, cache: Path) -> tuple[Path, Path]:
    """``<cache>/folders/<name>-<n>/{gt,pred}/<i>.png``, written once, and the same
    first pair alone under ``one/``."""
    from PIL import Image

    h, w, classes, seeds = SETS[name]
    root = cache / "folders" / f"{name}-{n}"
    done = root / "done"
    if not done.exists():
        shutil.rmtree(root, ignore_errors=True)
        for side in ("gt", "pred", "one/gt", "one/pred"):
            (root / side).mkdir(parents=True)
        rng = np.random.default_rng(7)
        for i in range(n):
            if name == "random":
                gt = rng.integers(0, classes, (h, w), dtype=np.uint8)
                pred = rng.integers(0, classes, (h, w), dtype=np.uint8)
            else:
                gt, pred = make_pair(rng, h, w, classes, seeds)
                if name == "salt":
                    wrong = rng.uniform(size=pred.shape) < SALT
                    pred[wrong] = rng.integers(0, classes, int(wrong.sum()), dtype=np.uint8)
            Image.fromarray(gt).save(root / "gt" / f"{i:04d}.png")
            Image.fromarray(pred).save(root / "pred" / f"{i:04d}.png")
        for side in ("gt", "pred"):
            shutil.copy(root / side / "0000.png", root / "one" / side / "0000.png")
        done.write_text("")
    return root, root / "one"


def timed(fn):
    c = time.process_time()
    out = fn()
    return time.process_time() - c, out


def child(cmd: list[str], parse=lambda out: float(out.split()[-1])) -> tuple[float, float]:
    """(CPU-s, mIoU) of a child process; ``parse`` reads the mIoU from its stdout (by
    default the last word). The child runs as a user's would, writing and reusing its
    bytecode even where this environment sets PYTHONDONTWRITEBYTECODE (pip compiles
    an installed package's bytecode; an editable one writes it on first import)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, parse(proc.stdout)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    ap.add_argument("--pairs", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=5, help="runs of each, medians")
    ap.add_argument("--cache", type=Path, default=default_cache())
    a = ap.parse_args(argv)
    py = sys.executable
    seg = str(Path(py).with_name("segbench"))
    seg_cmd = [seg] if os.path.exists(seg) else [py, "-m", "segbench.cli"]

    print(
        f"segbench {segbench.__version__} from {Path(segbench.__file__).parent} "
        f"(C extension: {'yes' if native() is not None else 'NO, Numba path'}); "
        + (
            f"hotcoco {hotcoco.__version__}, RAYON_NUM_THREADS="
            f"{os.environ['RAYON_NUM_THREADS']}"
            if hotcoco
            else "hotcoco not installed: segbench rows only"
        ),
        flush=True,
    )
    results = {}
    for name in a.sets:
        h, w, classes, _ = SETS[name]
        root, one = folders(name, a.pairs, a.cache)

        def ours(folder, classes=classes):
            ev = SemanticEval(classes, boundary_dilation=None)
            ev.update_folders(folder / "gt", folder / "pred")
            return ev.report()["metrics"]["mIoU"]

        def ours_cmd(folder, classes=classes):
            # the command prints the table: the mIoU is read from --json instead
            cmd = [*seg_cmd, "semantic", "--gt", str(folder / "gt"), "--pred",
                   str(folder / "pred"), "--classes", str(classes), "--no-boundary-iou",
                   "--quiet", "--json"]
            return child(cmd, lambda out: json.loads(out)["metrics"]["mIoU"])

        runs = {"in-process: segbench": lambda root=root: timed(lambda: ours(root))}
        procs = {
            "command: segbench semantic": lambda root=root: ours_cmd(root),
            "fixed (1 pair): segbench semantic": lambda one=one: ours_cmd(one),
        }
        if hc_semantic is not None:

            def hc(folder, classes=classes):
                ev = hc_semantic.SemanticEval(classes)
                ev.update_folders(str(folder / "gt"), str(folder / "pred"))
                return ev.report()["metrics"]["mIoU"]

            def hc_cmd(folder, classes=classes):
                code = (
                    "from hotcoco import semantic as s\n"
                    f"ev = s.SemanticEval({classes})\n"
                    f"ev.update_folders({str(folder / 'gt')!r}, {str(folder / 'pred')!r})\n"
                    "print(repr(ev.report()['metrics']['mIoU']))"
                )
                return child([py, "-c", code])

            runs = {"in-process: hotcoco": lambda root=root: timed(lambda: hc(root)), **runs}
            procs = {
                "command: hotcoco process": lambda root=root: hc_cmd(root),
                **procs,
                "fixed (1 pair): hotcoco process": lambda one=one: hc_cmd(one),
            }
        ours(one)  # imports and first calls outside the timings
        ours_cmd(one)  # the first process writes segbench's bytecode
        if hc_semantic is not None:
            hc(one)
        everything = {**runs, **procs}
        times = {k: [] for k in everything}
        miou = {}
        for _ in range(a.repeat):  # alternating, so load changes hit all alike
            for label, fn in everything.items():
                cpu, value = fn()
                times[label].append(cpu)
                miou[label] = value
        for whole in ("", "fixed"):
            group = {k: v for k, v in miou.items() if k.startswith("fixed") == bool(whole)}
            ref = next(v for k, v in group.items() if "hotcoco" in k) if hotcoco else None
            ref = group[next(iter(group))] if ref is None else ref
            for label, value in group.items():
                assert abs(value - ref) <= 1e-12, (name, label, value, ref)
        results[name] = {k: statistics.median(v) for k, v in times.items()}
        print(f"  {name}: done (mIoU equal to hotcoco's to 1e-12 in every run)", flush=True)

    print(
        f"\n{a.pairs} pairs a set (fixed: 1 pair); medians of {a.repeat} alternating runs; "
        "CPU-s; ratio = hotcoco's CPU-s / segbench's (> 1: segbench ahead)\n"
    )
    print(f"{'set':<11}{'run':<36}{'CPU-s':>8}{'ms/pair':>9}{'ratio':>8}{'target':>8}")
    for name, rows in results.items():
        for label, cpu in rows.items():
            kind = label.split(":")[0]
            pairs = 1 if kind.startswith("fixed") else a.pairs
            ratio = target = ""
            if "segbench" in label and hotcoco is not None:
                peer = next(v for k, v in rows.items() if k.startswith(kind) and "hotcoco" in k)
                ratio = f"{peer / cpu:.2f}x"
            if "segbench" in label:
                target = {"in-process": ">=1.5x", "command": ">=1.0x"}.get(kind, "<=0.20")
            print(f"{name:<11}{label:<36}{cpu:>8.3f}{1000 * cpu / pairs:>9.2f}{ratio:>8}"
                  f"{target:>8}")


if __name__ == "__main__":
    main()
