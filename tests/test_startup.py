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
    _modules_after([*base, "--out", str(tmp_path / "warm"), "--no-plot"])   # compiles
    mods = _modules_after([*base, "--out", str(tmp_path / "a"), "--no-plot"])
    assert "numba" in mods and "segbench.io._mat5" in mods   # it reads .mat, matches
    # scipy.io: the ground truth is read by io._mat5; numba.np.arraymath (and through
    # it scipy.linalg): the cached kernels load without Numba's target refresh
    # scipy and yaml: Numba imports them at its own import, for nothing a command needs
    # (compilation.import_numba_lean)
    for unused in ("scipy", "yaml", "matplotlib", "scipy.io", "scipy.linalg",
                   "numba.np.arraymath",
                   "scipy.ndimage", "scipy.stats", "tqdm", "pandas", "dask", "jinja2",
                   "urllib.request"):
        assert unused not in mods, unused
    with_plot = _modules_after([*base, "--out", str(tmp_path / "b")])
    assert (tmp_path / "b" / "pr_curve.png").stat().st_size > 1000
    # the PR plot: matplotlib's Agg canvas, imported by the drawing only, no pyplot
    assert "matplotlib" in with_plot and "matplotlib.pyplot" not in with_plot


def test_lean_numba_import_hides_nothing_afterwards(tmp_path):
    """Numba imported without scipy and yaml; both import normally afterwards, and a
    Numba config file in the working directory is still read through yaml."""
    pytest.importorskip("scipy")
    code = ("import sys\nfrom segbench.compilation import import_numba_lean\n"
            "import_numba_lean()\nimport numba.core.config as c\n"
            "print('BEFORE', 'scipy' in sys.modules, 'yaml' in sys.modules, c._HAVE_YAML)\n"
            "import scipy, scipy.ndimage\nprint('AFTER', scipy.ndimage.label.__name__)\n")

    def run(cwd):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=300, cwd=cwd)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split()
    out = run(tmp_path)
    assert out[:3] == ["BEFORE", "False", "False"] and out[-2:] == ["AFTER", "label"]
    try:
        import yaml  # noqa: F401
    except ImportError:
        return
    (tmp_path / ".numba_config.yaml").write_text("{}\n")
    out = run(tmp_path)
    assert out[:4] == ["BEFORE", "False", "True", "True"]   # the file is honoured


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


_KERNEL = '''
import numba

@numba.njit(cache=True)
def twice(x):
    return 2 * x
'''


def _run(code, cache, cwd):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(cwd))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_is_cached_and_compile_ahead(tmp_path):
    """A kernel is not cached in a fresh cache; compile_ahead's child compiles it into
    the cache while the parent goes on; the parent then finds it cached."""
    (tmp_path / "tiny_kernel.py").write_text(_KERNEL)
    cache = tmp_path / "cache"
    ask = "from segbench.compilation import is_cached; import tiny_kernel; "
    assert _run(ask + "print(is_cached(tiny_kernel.twice))", cache, tmp_path) == "False"
    (tmp_path / "tiny_entry.py").write_text("def warm():\n    import tiny_kernel\n"
                                            "    tiny_kernel.twice(3)\n")
    code = ("from segbench import compilation\n"
            "compilation.compile_ahead('tiny_entry:warm')\n"
            "assert compilation._ahead[0].wait(120) == 0\n"
            "import tiny_kernel\nprint(compilation.is_cached(tiny_kernel.twice))\n")
    assert _run(code, cache, tmp_path) == "True"


def test_compile_ahead_child_is_stopped_at_exit(tmp_path):
    (tmp_path / "slow_entry.py").write_text("def warm():\n    import time\n"
                                            "    time.sleep(60)\n")
    code = ("from segbench import compilation\n"
            "compilation.compile_ahead('slow_entry:warm')\n"
            "print(compilation._ahead[0].pid)\n")
    pid = int(_run(code, tmp_path / "cache", tmp_path))
    with pytest.raises(ProcessLookupError):   # terminated and reaped by the parent
        os.kill(pid, 0)


def test_demo_first_run_steps_run():
    """The demo's first-run steps run without error: the matcher's warm-up (the
    background process's entry) and the later kernels (here from a warm cache: what
    they save is measured by benchmarks/first_run.py, not a test)."""
    from segbench.boundary import matcher_cached, warm_up_matcher
    from segbench.demo import compile_later_kernels
    warm_up_matcher()
    assert matcher_cached()
    compile_later_kernels()


def test_wait_ahead_returns_when_the_children_are_done(tmp_path):
    (tmp_path / "quick_entry.py").write_text("def warm():\n    pass\n")
    code = ("import time\nfrom segbench import compilation\n"
            "compilation.compile_ahead('quick_entry:warm')\n"
            "t = time.time(); compilation.wait_ahead(60)\n"
            "print(compilation._ahead[0].returncode, time.time() - t < 60)\n")
    assert _run(code, tmp_path / "cache", tmp_path) == "0 True"


_LOAD = """
import sys
import numpy as np
{setup}
from numba.core.caching import FunctionCache
from segbench.region import compact_labels
labels, n = compact_labels(np.array([[5, 5], [9, 0]], np.int32))
print(on, labels.tolist(), n, "numba.np.arraymath" in sys.modules,
      FunctionCache.load_overload.__module__)
"""
_LIBRARY = _LOAD.format(setup="on = None")
_COMMAND = _LOAD.format(setup="from segbench.compilation import lean_cache_loading\n"
                              "on = lean_cache_loading()")
_OTHER_NUMBA = _LOAD.format(setup="import numba\nnumba.__version__ = '0.99.0'\n"
                                  "from segbench.compilation import lean_cache_loading\n"
                                  "on = lean_cache_loading()")


def test_lean_loading_in_the_command_only_with_a_tested_fallback(tmp_path):
    """The library loads cached kernels as Numba does and changes nothing in Numba; the
    command's process (lean_cache_loading, as segbench.cli.main calls it) skips Numba's
    full target refresh (which imports numba.np.arraymath and scipy.linalg). Turned off,
    or on a Numba outside LEAN_NUMBA, it falls back to Numba's loading: same numbers.
    Compiling after a lean load still works."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))

    def run(code, **extra):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True,
                              text=True, timeout=300, env=dict(env, **extra))
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split("\n")

    compiled = run(_LIBRARY)[0].split(" ", 1)[1]                  # cache empty: compiles
    assert compiled.endswith("True numba.core.caching")
    result = compiled.rsplit(" ", 2)[0]
    numba_loads = f"{result} True numba.core.caching"
    assert run(_LIBRARY)[0] == f"None {numba_loads}"            # the library: Numba's
    assert run(_COMMAND)[0] == f"True {result} False segbench.compilation"     # lean
    assert run(_COMMAND, SEGBENCH_LEAN_LOAD="0")[0] == f"False {numba_loads}"
    assert run(_OTHER_NUMBA)[0] == f"False {numba_loads}"       # untested release
    then_compile = _COMMAND + ("import numba\n"
                               "f = numba.njit(lambda a: np.cumsum(a).sum())\n"
                               "print(f(np.arange(5.0)))\n")
    lines = run(then_compile)
    assert lines[0].startswith("True ") and lines[1] == "20.0"   # 0+1+3+6+10


@pytest.mark.parametrize("version, tested", [
    ("0.68.1", True), ("0.58.0rc1", True), ("0.63.0", True), ("0.57.1", False),
    ("0.69.0", False), ("1.0.0", False), ("dev", False)])
def test_lean_loading_only_on_tested_numba_releases(version, tested):
    from segbench.compilation import lean_loading_supported
    assert lean_loading_supported(version) is tested


def test_command_fallback_gives_the_same_result(one_image, tmp_path):
    """A boundary run with Numba's own loading (SEGBENCH_LEAN_LOAD=0) writes the same
    numbers as a lean one."""
    import json
    base = ["boundary", "--gt", str(one_image / "gt"), "--pred", str(one_image / "pred"),
            "--quiet", "--no-plot"]
    _modules_after([*base, "--out", str(tmp_path / "warm")])                 # compiles
    lean = _modules_after([*base, "--out", str(tmp_path / "lean")])
    full = _modules_after([*base, "--out", str(tmp_path / "full")],
                          env=dict(os.environ, SEGBENCH_LEAN_LOAD="0"))
    assert "numba.np.arraymath" not in lean and "numba.np.arraymath" in full
    a, b = (json.loads((tmp_path / d / "result_boundary.json").read_text())
            for d in ("lean", "full"))
    assert (a["metrics"], a["curves"], a["per_item"]) == \
        (b["metrics"], b["curves"], b["per_item"])


def test_command_map_names_every_command_of_its_group():
    """``segbench CMD`` builds only CMD's group; the map must hold every command."""
    import argparse
    from importlib import import_module

    from segbench.cli import _COMMAND_GROUPS, _GROUPS, build_parser
    found = {}
    for group in _GROUPS:
        sub = argparse.ArgumentParser().add_subparsers()
        import_module(f"segbench.cli.{group}").add_parsers(sub)
        found.update(dict.fromkeys(sub.choices, group))
    assert found == _COMMAND_GROUPS
    full = build_parser()._subparsers._group_actions[0].choices
    assert set(full) == set(_COMMAND_GROUPS)
