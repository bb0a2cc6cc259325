"""A family in another installed package registers through the entry-point group
``segbench.families`` (issue 39 item 5) and then has its command, ``evaluate`` and
``compare`` like a built-in one.

The package is installed the way pip leaves it, without pip: a module and its
``*.dist-info`` (METADATA, entry_points.txt) in a folder on the subprocess's
``PYTHONPATH`` (importlib.metadata reads exactly these)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.io import write_soft_map

TOY = Path(__file__).with_name("toy_family.py")


def _install(site: Path, entry_points: str) -> None:
    pkg = site / "segbench_toy_plugin"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(TOY.read_text())
    info = site / "segbench_toy_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: segbench-toy-plugin\n"
                                   "Version: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):
    base = tmp_path_factory.mktemp("plugin")
    _install(base / "site", "[segbench.families]\nboundary_count = "
                            "segbench_toy_plugin:ENTRY\n")
    items = make_synthetic_dataset(3, shape=(40, 48), n_annotators=2, seed=5)
    write_synthetic_dataset(base / "data", items, split="test")
    rng = np.random.default_rng(2)
    for name in ("soft", "noisy"):
        for it in items:
            write_soft_map(base / name / f"{it.iid}.png", rng.random((40, 48)))
    return base


def _run(base: Path, *args, site: str = "site"):
    env = {**os.environ, "PYTHONPATH": str(base / site)}
    return subprocess.run([sys.executable, "-m", "segbench.cli", *map(str, args)],
                          capture_output=True, text=True, env=env, cwd=base)


def test_an_installed_family_has_its_command_evaluate_and_compare(plugin):
    gt = plugin / "data" / "groundTruth" / "test"
    listing = _run(plugin, "--help")
    assert listing.returncode == 0 and "boundary-count" in listing.stdout, listing.stderr
    for name in ("soft", "noisy"):
        done = _run(plugin, "boundary-count", "--gt", gt, "--pred", plugin / name,
                    "--out", plugin / "runs" / name, "--threshold", "0.6", "--quiet")
        assert done.returncode == 0, done.stderr
        assert re.match(rf"boundary_count {name}: ratio \d", done.stdout), done.stdout
    table = _run(plugin, "compare", plugin / "runs" / "soft", plugin / "runs" / "noisy",
                 "--resamples", "40")
    assert table.returncode == 0, table.stderr
    assert re.search(r"^run +ratio$", table.stdout, re.M), table.stdout
    code = ("import segbench; r = segbench.evaluate('boundary_count', {gt!r}, {pred!r}, "
            "threshold=0.6, progress=False); print(repr(r.metrics['ratio']))")
    py = subprocess.run([sys.executable, "-c", code.format(gt=str(gt),
                                                          pred=str(plugin / "soft"))],
                        capture_output=True, text=True,
                        env={**os.environ, "PYTHONPATH": str(plugin / "site")})
    assert py.returncode == 0, py.stderr
    import json
    saved = json.loads((plugin / "runs" / "soft" / "result_boundary_count.json").read_text())
    assert float(py.stdout) == saved["metrics"]["ratio"]
    # and the site ranks its runs by its headline, as it ranks a built-in family's
    site = _run(plugin, "site", "--gt", plugin / "data", "--results", plugin / "runs" / "soft",
                plugin / "runs" / "noisy", "--out", plugin / "site-out", "--quiet")
    assert site.returncode == 0, site.stderr
    html = (plugin / "site-out" / "index.html").read_text()
    ranking = html.split('id="ranking"', 1)[1].split("</table>", 1)[0]
    assert re.search(r'<th data-sort="num">ratio</th>', ranking), ranking
    ratios = {n: json.loads((plugin / "runs" / n / "result_boundary_count.json").read_text())[
        "metrics"]["ratio"] for n in ("soft", "noisy")}
    order = re.findall(r'<tr data-slug="([^"]+)">', ranking)
    assert order == sorted(ratios, key=lambda n: -ratios[n]), (order, ratios)


def test_a_broken_plugin_is_one_warning_and_segbench_works(plugin, tmp_path):
    _install(tmp_path / "broken", "[segbench.families]\nmissing = "
                                  "segbench_no_such_module:ENTRY\n")
    done = _run(tmp_path, "--help", site="broken")
    assert done.returncode == 0
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "entry point 'missing'" in lines[0] and \
        "ModuleNotFoundError" in lines[0], done.stderr
    assert "boundary" in done.stdout
