"""Start-up: a command imports only what it uses, and the first compilation of each
group of kernels says so once (issue 17)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import run_command_modules
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
    return run_command_modules(args, env)[1]


def test_boundary_imports_only_what_it_uses(one_image, tmp_path):
    base = ["boundary", "--gt", str(one_image / "gt"), "--pred", str(one_image / "pred"),
            "--quiet"]
    _modules_after([*base, "--out", str(tmp_path / "warm"), "--no-plot"])   # compiles
    mods = _modules_after([*base, "--out", str(tmp_path / "a"), "--no-plot"])
    assert "numba" in mods and "segbench.io._mat5" in mods   # it reads .mat, matches
    # scipy.io: the ground truth is read by io._mat5; yaml: Numba imports it at its own
    # import, for nothing a command needs (compilation.import_numba_lean). Loading
    # cached kernels is Numba's own (its target refresh imports scipy.linalg)
    for unused in ("yaml", "matplotlib", "scipy.io",
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


def test_no_numba_internals_are_patched(one_image, tmp_path):
    """A command loads cached kernels as Numba does (issue 41: the CLI's patch of
    ``FunctionCache.load_overload`` is gone; ``segbench semantic`` starts fast by not
    loading Numba at all, tests/test_semantic_native.py)."""
    from segbench import compilation

    assert not hasattr(compilation, "lean_cache_loading")
    args = ["boundary", "--gt", str(one_image / "gt"), "--pred", str(one_image / "pred"),
            "--quiet", "--no-plot", "--out", str(tmp_path / "o")]
    code = ("from segbench.cli import main\n"
            f"assert main({args!r}) == 0\n"
            "from numba.core.caching import FunctionCache\n"
            "print('LOADER', FunctionCache.load_overload.__module__)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "LOADER numba.core.caching" in proc.stdout


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
