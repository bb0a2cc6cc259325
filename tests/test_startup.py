"""Start-up: a command imports only what it uses, and the first compilation of each
group of kernels says so once (issue 17)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from segbench.datasets import write_ground_truth
from segbench.io import write_soft_map


@pytest.fixture(scope="module")
def one_image(tmp_path_factory):
    root = tmp_path_factory.mktemp("one")
    seg = np.ones((40, 50), np.int32)
    seg[:, 25:] = 2
    write_ground_truth(root / "gt" / "1.mat", [seg, seg])
    pb = np.zeros((40, 50))
    pb[:, 24] = 0.8
    write_soft_map(root / "pred" / "1.png", pb)
    return root


def _modules_after(args, env=None) -> set[str]:
    code = ("import sys\nfrom segbench.cli import main\n"
            f"rc = main({args!r})\nassert rc == 0, rc\n"
            "print('MODULES', ' '.join(sorted(sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("MODULES "))
    return set(line.split()[1:])


def test_boundary_imports_only_what_it_uses(one_image, tmp_path):
    base = ["boundary", "--gt", str(one_image / "gt"), "--pred", str(one_image / "pred"),
            "--quiet"]
    mods = _modules_after([*base, "--out", str(tmp_path / "a"), "--no-plot"])
    assert "numba" in mods and "scipy.io" in mods            # it reads .mat, matches
    for unused in ("matplotlib", "scipy.ndimage", "scipy.stats", "tqdm", "pandas",
                   "dask", "jinja2", "urllib.request"):
        assert unused not in mods, unused
    with_plot = _modules_after([*base, "--out", str(tmp_path / "b")])
    assert "matplotlib" in with_plot and "matplotlib.pyplot" not in with_plot


def test_first_compilation_says_so_once(tmp_path):
    code = ("import numpy as np\nfrom segbench.region import compact_labels\n"
            "compact_labels(np.zeros((2, 2), np.int32))\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               SEGBENCH_COMPILE_NOTICE="1")

    def run(environ):
        return subprocess.run([sys.executable, "-c", code], capture_output=True,
                              text=True, timeout=300, env=environ).stderr.splitlines()
    first = run(env)
    assert first == ["segbench: compiling the region tables for this machine, once "
                     "(about 2 s); later runs start at once"]
    assert run(env) == []                        # loaded from the cache: nothing said
    quiet = dict(env, NUMBA_CACHE_DIR=str(tmp_path / "cache2"))
    quiet.pop("SEGBENCH_COMPILE_NOTICE")
    assert run(quiet) == []                      # stderr is not a terminal here
