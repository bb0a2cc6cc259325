"""Where segbench's C semantic counter spends its time: each stage of a pair (read and
parse both files, inflate, check the zlib trailers' Adler-32, unfilter, count the byte
pairs, fold the table into the record) timed alone, in ms of CPU per ``--pairs`` pairs,
medians of ``--repeat``.

It builds ``benchmarks/_semantic_stages.c`` (which includes the extension's source, so
the stages are the extension's own functions) with the C compiler Python was built with,
links it to libpython, and runs it on the texture sets of
``benchmarks/semantic_folders.py`` (the same cache; written there, or here on first
use). Figures only, no assertion; the whole-call and peer figures are
semantic_folders.py's.

    python benchmarks/semantic_stages.py --repeat 7
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sysconfig
import tempfile
from pathlib import Path

from semantic_folders import SETS, default_cache, folders

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "src" / "segbench" / "semantic" / "_native.c"


def build(out: Path) -> Path:
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        raise SystemExit(f"no C compiler ({cc}) to build the stage harness")
    exe = out / "semantic_stages"
    libdir = sysconfig.get_config_var("LIBDIR")
    libpython = "python" + sysconfig.get_config_var("VERSION")
    libpython += sysconfig.get_config_var("ABIFLAGS") or ""
    cmd = [
        cc, "-O3", "-fno-strict-aliasing",  # the flags of setup.py's extension build
        f'-DSEGBENCH_NATIVE_SOURCE="{SOURCE}"',
        "-I", sysconfig.get_paths()["include"],
        str(HERE / "_semantic_stages.c"), "-o", str(exe),
        "-L", libdir, f"-Wl,-rpath,{libdir}",
        f"-l{libpython}",
        "-lm",
    ]
    subprocess.run(cmd, check=True)
    return exe


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--cache", type=Path, default=default_cache())
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(Path(tmp))
        rows = {}
        for name, (_, _, classes, _) in SETS.items():
            folder, _ = folders(name, args.pairs, args.cache)
            out = subprocess.run(
                [str(exe), str(folder), str(args.pairs), str(args.repeat), str(classes)],
                check=True, capture_output=True, text=True,
            ).stdout
            rows[name] = dict(line.rsplit(" ", 1) for line in out.splitlines())
    stages = list(next(iter(rows.values())))
    print(f"ms of CPU per {args.pairs} pairs, medians of {args.repeat}")
    print("set        " + "".join(f"{s:>12}" for s in stages))
    for name, row in rows.items():
        print(f"{name:<11}" + "".join(f"{float(row[s]):12.1f}" for s in stages))


if __name__ == "__main__":
    main()
