"""Refactoring guard: every command's output files byte-identical before and after.

What this guards: BYTE IDENTITY across refactors, not correctness. It runs ``segbench
boundary``, ``region``, ``semantic``, ``superpixel``, ``stats`` and ``site`` (over the
boundary and region run folders) on copies of the shared fixtures' inputs in a temporary
folder, hashes every file of every output folder (hidden records and markers included)
and compares the hashes with the golden ones in ``tests/data/output_digests.json``. That
the numbers are right is tested elsewhere, against the official outputs (the *_parity
tests); here a change of any byte is a failure, and the message lists the files added,
removed and changed, so a refactor sees exactly what moved.

The commands run in a child process whose numerical libraries are held to the same
kernels on every x86-64 machine that has AVX2 and FMA (x86-64-v3): numpy's SIMD dispatch
capped at X86_V3 and OpenBLAS's Haswell kernels. The last bits of a float depend on
them (a BLAS dot product splits its sum by the vector width; numpy's AVX-512 log is not
its AVX2 one), so without the cap a golden made on an AVX-512 machine fails on an AVX2
one by a unit in the last place (the region records, the stats fit). Elsewhere (no
AVX2, not x86-64) the test skips, saying why.

Before hashing, a text file is normalized by the few rules of :func:`normalize`, which
remove only what differs between two runs of the same code: timestamps and dates, and
the temporary folder's absolute path (it is in the manifests' command lines and input
folders). Everything else, PNG and JPEG bytes included, is hashed as written.

When a change of output is intended, regenerate the golden file from the new code and
commit it with the change (review the diff of the JSON: it names the files that moved)::

    .venv/bin/python tests/test_output_bytes.py --write

``PYTHONPATH=<checkout>/src`` in front of that command generates it from another
checkout (e.g. a ``git worktree`` of the commit before a refactor); the script prints
which ``segbench`` it imported.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures"
BSR = FIXTURES / "bsr-official" / "inputs"
SUPERPIXEL = FIXTURES / "superpixel" / "inputs"
SEMANTIC = FIXTURES / "semantic" / "public"
GOLDEN = ROOT / "tests" / "data" / "output_digests.json"

#: semantic/public cases run, one run folder each: 4 pairs of mixed shapes; classes
#: predicted but absent from every gt; reduce_zero_label; 16-bit maps.
SEMANTIC_CASES = (
    "004_small_mixed_shapes",
    "011_pred_only_class",
    "017_rzl_small",
    "024_uint16_small_C",
)
#: the ten superpixel-fixture images, as SLIC (n_segments=200) labels.
SUPERPIXEL_ALGO = "slic200"

#: What replaces the temporary folder's absolute path (the first rule of normalize()).
TMP = "<TMP>"
#: The other normalization rules: (the files they apply to: names ending so, "" for every
#: text file; pattern; replacement). Two runs of the same code in two temporary folders
#: differ by these and by nothing else.
RULES = (
    # An ISO 8601 time with its date: result_*.json "created": "2026-12-05T21:09:02+00:00"
    # (and the site's copies of it), the site's title="..." and data-value="..." of it.
    (
        "",
        re.compile(
            rb"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?"
        ),
        b"<DATETIME>",
    ),
    # The date alone, as the site prints when a run was benchmarked ('benchmarked <span
    # class="date" title="2026-12-05">2026-12-05</span>', the ranking's date column).
    (".html", re.compile(rb"\b(?:19|20)\d{2}-[01]\d-[0-3]\d\b"), b"<DATE>"),
    # The size the site prints beside each download ('<span class="sub">2.4 kB</span>'):
    # the downloaded result_*.json holds the temporary path, so its size follows that
    # path's length. The downloaded file's own bytes are compared (under downloads/).
    (
        ".html",
        re.compile(rb'<span class="sub">\d+(?:\.\d+)? (?:bytes|kB|MB)</span>'),
        b'<span class="sub"><SIZE></span>',
    ),
)


def _inputs(base: Path) -> dict[str, Path]:
    """Copies of the fixtures' inputs under ``base/inputs`` (their paths are then under
    the temporary folder, which :func:`normalize` replaces), and the semantic cases
    written as the label-map PNG folders ``segbench semantic`` reads."""
    from PIL import Image

    inp = base / "inputs"
    bsr = inp / "bsr"
    for sub in ("images", "groundTruth", "png", "ucm2"):
        shutil.copytree(BSR / sub, bsr / sub)
    sp = inp / "superpixel"
    for sub in ("images", "gt", f"sp/{SUPERPIXEL_ALGO}"):
        shutil.copytree(SUPERPIXEL / sub, sp / sub)
    cases = json.loads((SEMANTIC / "cases.json").read_text())["cases"]
    sem = {}
    for case in SEMANTIC_CASES:
        folder = inp / "semantic" / case
        with np.load(SEMANTIC / "inputs" / f"{case}.npz") as z:
            for i in range(cases[case]["n_pairs"]):
                for side in ("gt", "pred"):
                    (folder / side).mkdir(parents=True, exist_ok=True)
                    # uint8 -> 8-bit gray (L), uint16 -> 16-bit gray (I;16)
                    Image.fromarray(z[f"{side}{i}"]).save(folder / side / f"p{i}.png")
        sem[case] = folder
    return {"bsr": bsr, "sp": sp, "semantic": sem, "cases": cases}


def _argv(command: str, **options) -> list[str]:
    """``[command, --option, value, ...]`` in the order given: ``nthresh=5`` is
    ``--nthresh 5``, ``reduce_zero_label=True`` the flag alone (False: left out), a
    list several values."""
    argv = [command]
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            argv.append(flag)
        elif value is not False:
            values = value if isinstance(value, list) else [value]
            argv += [flag, *map(str, values)]
    return argv


def run_commands(base: Path) -> dict[str, Path]:
    """Run every covered command in ``base`` (in process, through the CLI's main);
    return run name -> its output folder."""
    from segbench.cli import main

    d = _inputs(base)
    bsr, sp, out = d["bsr"], d["sp"], base / "out"
    gt = bsr / "groundTruth"
    runs, argvs = {}, []

    def add(run: str, command: str, **options):
        runs[run] = out / run
        argvs.append(_argv(command, **options, out=runs[run], quiet=True))

    # the official self-test's soft maps (its test_2: nthresh 5), then its ucm2 (test_1,
    # test_5: nthresh 5); in this order the site lists them the same way every time (by
    # date, ties by name)
    add("boundary", "boundary", gt=gt, pred=bsr / "png", nthresh=5)
    add("region", "region", gt=gt, pred=bsr / "ucm2", nthresh=5)
    for case, folder in d["semantic"].items():
        c = d["cases"][case]
        add(
            f"semantic-{case}",
            "semantic",
            gt=folder / "gt",
            pred=folder / "pred",
            classes=c["num_classes"],
            ignore_index=c["ignore_index"],
            reduce_zero_label=c["reduce_zero_label"],
            name=case,
        )
    # default measures, and the C++ benchmark's results.csv too
    add(
        "superpixel",
        "superpixel",
        gt=sp / "gt",
        pred=sp / "sp" / SUPERPIXEL_ALGO,
        images=sp / "images",
        stutz=True,
    )
    add("stats", "stats", gt=gt)  # the photographs: images/ beside groundTruth/
    # the dataset root (images/, groundTruth/) and the two runs; no overlays
    add("site", "site", gt=bsr, results=[runs["boundary"], runs["region"]])
    for argv in argvs:
        status = main(argv)
        assert status == 0, f"segbench {' '.join(argv)} exited {status}"
    return runs


def normalize(data: bytes, base: Path, name: str) -> bytes:
    """The bytes of one file (named ``name``) with what legitimately varies
    between two runs replaced. Binary files (not UTF-8: PNG, JPEG) are returned as
    written."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    # The temporary folder (where the inputs were copied and the runs written): in the
    # manifests' "command", "gt_dir" and "pred_dir", the results' provenance, the site's
    # copies of them.
    for path in {str(base.resolve()), str(base)}:
        data = data.replace(path.encode(), TMP.encode())
    for suffixes, pattern, repl in RULES:
        if name.endswith(suffixes):
            data = pattern.sub(repl, data)
    return data


def digest(folder: Path, base: Path) -> dict[str, str]:
    """Every file under ``folder`` (hidden ones too): relative path -> sha256 of its
    normalized bytes."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(
            normalize(p.read_bytes(), base, p.name)
        ).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def digests(base: Path) -> dict[str, str]:
    """Run everything in ``base``: '<run>/<relative path>' -> sha256, sorted."""
    out = {}
    for name, folder in run_commands(base).items():
        out.update({f"{name}/{rel}": h for rel, h in digest(folder, base).items()})
    return dict(sorted(out.items()))


def differences(golden: dict[str, str], current: dict[str, str]) -> str:
    """The files added, removed and changed, one per line; '' when identical."""
    added = sorted(set(current) - set(golden))
    removed = sorted(set(golden) - set(current))
    changed = sorted(k for k in set(golden) & set(current) if golden[k] != current[k])
    lines = []
    for label, names in (("added", added), ("removed", removed), ("changed", changed)):
        if names:
            lines.append(f"{len(names)} file(s) {label}:")
            lines += [f"  {n}" for n in names]
    return "\n".join(lines)


def libraries() -> dict[str, str]:
    """The versions that shape output bytes besides segbench's code (results record
    them; matplotlib writes its version into every plot and renders by it)."""
    import matplotlib
    import numba
    import numpy
    import PIL
    import scipy
    import skimage

    return {
        "python": platform.python_version(),
        **{m.__name__: m.__version__ for m in (numpy, scipy, numba, matplotlib, skimage)},
        "pillow": PIL.__version__,
    }


#: numpy dispatch targets above x86-64-v3 (AVX-512 and later), turned off in the child.
_NUMPY_ABOVE_V3 = ("X86_V4", "AVX512_SKX", "AVX512_CLX", "AVX512_CNL", "AVX512_ICL",
                   "AVX512_SPR")


def pinned_environment() -> tuple[dict[str, str] | None, str]:
    """The environment that holds numpy and OpenBLAS to their x86-64-v3 kernels, and
    ''; or None and why it cannot be held here."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    if platform.machine().lower() not in ("x86_64", "amd64"):
        return None, f"the golden is of x86-64 kernels; this is {platform.machine()}"
    if not (__cpu_features__.get("AVX2") and __cpu_features__.get("FMA3")):
        return None, "the golden is of AVX2/FMA kernels, which this CPU lacks"
    env = dict(os.environ, OPENBLAS_CORETYPE="Haswell")
    above = [t for t in __cpu_dispatch__ if t in _NUMPY_ABOVE_V3]
    if above:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(above)
    else:
        env.pop("NPY_DISABLE_CPU_FEATURES", None)
    return env, ""


def pinned_digests(base: Path, env: dict[str, str]) -> dict[str, str]:
    """:func:`digests` of ``base``, computed in a child process under ``env`` (what
    :func:`pinned_environment` gives)."""
    out = base / "digests.json"
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(base), str(out)],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text())


def test_output_files_are_byte_identical_to_the_golden(tmp_path):
    if not (BSR.is_dir() and SUPERPIXEL.is_dir() and SEMANTIC.is_dir()):
        pytest.skip(f"reference data not available: {FIXTURES}")
    env, why = pinned_environment()
    if env is None:
        pytest.skip(why)
    doc = json.loads(GOLDEN.read_text())
    made_with = doc.get("libraries")
    if made_with != libraries():
        # bytes are comparable only under the same libraries: say so, do not pass
        pytest.skip(
            f"the golden was made with {made_with}, this is {libraries()}: "
            "regenerate it at the commit before the change under test"
        )
    golden = doc["files"]
    current = pinned_digests(tmp_path / "run", env)
    diff = differences(golden, current)
    assert not diff, (
        "output files differ from tests/data/output_digests.json (if the change is "
        "intended, regenerate it: python tests/test_output_bytes.py --write)\n" + diff
    )


def _source() -> dict:
    """The commit of the imported segbench, and whether its checkout has local edits."""
    import segbench

    src = Path(segbench.__file__).resolve().parent
    git = ["git", "-C", str(src)]
    try:
        commit = subprocess.run(
            [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            [*git, "status", "--porcelain", "--", "."], capture_output=True, text=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "local_edits": None}
    return {"commit": commit, "local_edits": bool(dirty)}


def _script(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--write", action="store_true", help=f"write {GOLDEN}")
    parser.add_argument("--child", nargs=2, metavar=("BASE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:  # the pinned child of pinned_digests: digests of BASE into OUT
        base, out = map(Path, args.child)
        Path(out).write_text(json.dumps(digests(base)))
        return 0
    import segbench

    print(f"segbench: {segbench.__file__}")
    env, why = pinned_environment()
    if env is None:
        raise SystemExit(f"cannot make or check the golden here: {why}")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="segbench-bytes-") as tmp:
        current = pinned_digests(Path(tmp) / "run", env)
    print(f"{len(current)} files in {time.perf_counter() - t0:.1f} s")
    if args.write:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        doc = {
            "about": "sha256 of every output file of tests/test_output_bytes.py's "
            "commands, normalized; regenerate: python tests/test_output_bytes.py --write",
            "source": _source(),
            "libraries": libraries(),
            "files": current,
        }
        GOLDEN.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"wrote {GOLDEN}")
        return 0
    diff = differences(json.loads(GOLDEN.read_text())["files"], current)
    print(diff or "identical to the golden")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(_script())
