"""A worker process of ``--workers 2`` killed mid-run (``kill -9``, what the OOM killer
does) ends the command with one clear line and a non-zero status, no traceback; the
rerun resumes to the bytes of a clean run (issue 40, item 3).

The kill is a test-only hook: the command runs in a fresh process whose per-image
function, wrapped here, sends SIGKILL to its own worker process on one image.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest

N_IMAGES = 12
DIED = re.compile(r"segbench: error: a worker process died after (\d+) of "
                  rf"{N_IMAGES} images; finished images are saved, rerun to resume")

# Runs `segbench ARGS` with the engine function NAME of MODULE wrapped so that the
# worker handling the image in $SEGBENCH_TEST_KILL kills itself (the parent never).
HOOK = textwrap.dedent("""
    import functools, importlib, os, signal, sys
    from pathlib import Path
    module_name, name, victim = sys.argv[1], sys.argv[2], os.environ["SEGBENCH_TEST_KILL"]
    module = importlib.import_module(module_name)
    real, parent = getattr(module, name), os.getpid()

    def killing(job, *a, **k):
        item = job[0]
        iid = item.id if hasattr(item, "id") else Path(item).stem
        if iid == victim and os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(job, *a, **k)
    module.__dict__[name] = killing
    killing.__qualname__ = killing.__name__ = "killing"
    from segbench.cli import main
    sys.exit(main(sys.argv[3:]))
""")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    from segbench.algorithms.edges import gradient_magnitude
    from segbench.datasets.synthetic import (
        make_synthetic_dataset,
        write_synthetic_dataset,
    )
    from segbench.io import write_soft_map
    tmp = tmp_path_factory.mktemp("died")
    items = make_synthetic_dataset(N_IMAGES, shape=(60, 80), n_annotators=2, seed=4)
    root = write_synthetic_dataset(tmp / "ds", items)
    for it in items:
        write_soft_map(tmp / "soft" / f"{it.iid}.png", gradient_magnitude(it.image))
    return tmp, root, [it.iid for it in items]


def _segbench(args, hook=None, victim=None):
    if hook is None:
        cmd = [sys.executable, "-m", "segbench.cli", *args]
    else:
        cmd = [sys.executable, "-c", HOOK, *hook, *args]
    env = dict(os.environ, SEGBENCH_TEST_KILL=victim or "")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env,
                       check=False)
    return p.returncode, p.stderr


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_killed_worker_is_one_line_and_the_rerun_resumes(data, tmp_path):
    tmp, root, ids = data
    args = ["boundary", "--gt", str(root / "groundTruth" / "test"), "--pred",
            str(tmp / "soft"), "--no-plot", "--quiet", "--workers", "2"]
    status, err = _segbench([*args, "--out", str(tmp_path / "clean")])
    assert status == 0, err
    cut = tmp_path / "cut"
    status, err = _segbench([*args, "--out", str(cut)],
                            hook=("segbench.engine._run", "_evaluate_group"),
                            victim=ids[N_IMAGES // 2])
    assert status != 0
    m = DIED.fullmatch(_one_line(err))
    assert m, err
    assert int(m[1]) < N_IMAGES
    status, err = _segbench([*args, "--out", str(cut)])
    assert status == 0, err
    for name in ("per_item_boundary.csv", "eval_bdry.txt"):
        assert (cut / name).read_bytes() == (tmp_path / "clean" / name).read_bytes()


def test_killed_worker_of_a_folder_runner_is_one_line(data, tmp_path):
    """The same for the map-making commands (detect, nms, ucm share the runner)."""
    _, root, ids = data
    args = ["detect", "--detector", "gm", "--images", str(root / "images" / "test"),
            "--out", str(tmp_path / "maps"), "--quiet", "--workers", "2"]
    status, err = _segbench(args, hook=("segbench.algorithm_folders",
                                        "_detect_one"), victim=ids[N_IMAGES // 2])
    assert status != 0
    m = DIED.fullmatch(_one_line(err))
    assert m, err
    kept = len(list((tmp_path / "maps").glob("*.png")))
    assert int(m[1]) <= kept < N_IMAGES
    status, err = _segbench(args)
    assert status == 0, err
    assert len(list((tmp_path / "maps").glob("*.png"))) == N_IMAGES
