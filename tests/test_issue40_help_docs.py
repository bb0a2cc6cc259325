"""Issue 40, items 19 and 20 (parts): ``segbench stats --name`` names the run; the help
names every detector; the README says what the browser tests need and which command
gives its test count; the docs give one cost for gPb, beside the script that measures
it, and time the consistency runs with the script that does."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from segbench.cli import main
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md")}


def _help(*argv) -> str:
    return subprocess.run([sys.executable, "-m", "segbench.cli", *argv, "--help"],
                          capture_output=True, text=True, check=True, cwd=ROOT).stdout


def _flat(text: str) -> str:
    return " ".join(text.split())


# ---- segbench stats --name ------------------------------------------------------------


@pytest.fixture(scope="module")
def gt(tmp_path_factory):
    root = tmp_path_factory.mktemp("stats")
    write_synthetic_dataset(root, make_synthetic_dataset(2, shape=(40, 56), n_annotators=2,
                                                         seed=1), split="val")
    return root / "groundTruth" / "val"


@pytest.mark.parametrize("name, expected", [(["--name", "mine"], "mine"), ([], "human")])
def test_stats_name_is_the_name_of_the_run(gt, tmp_path, name, expected):
    out = tmp_path / "stats"
    assert main(["stats", "--gt", str(gt), "--out", str(out), "--samples", "50",
                 "--resamples", "10", "--no-plot", "--quiet", *name]) == 0
    assert json.loads((out / "result_stats.json").read_text())["name"] == expected


def test_stats_json_is_strict_json(gt, capsys):
    """Not computed is null, as in result_stats.json (it printed NaN, which strict
    parsers refuse)."""
    assert main(["stats", "--gt", str(gt), "--samples", "50", "--resamples", "10",
                 "--min-area", "1e9", "--no-plot", "--quiet", "--json"]) == 0

    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")
    groups = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert groups["all"]["alpha"] is None


def test_stats_help_says_where_the_name_goes():
    text = _flat(_help("stats"))
    assert "--name NAME name of the run in result_stats.json (default: 'human')" in text


# ---- segbench --help: detect ----------------------------------------------------------


def test_top_level_help_names_every_detector():
    """Each ``--detector`` choice is named on ``detect``'s line of ``segbench --help``,
    by itself or by its family (the Pb detectors pb-cgtg, pb-bg... as 'Pb')."""
    choices = re.search(r"--detector \{([^}]*)\}", _help("detect"))[1].split(",")
    top = _flat(_help())
    line = re.search(r"\bdetect (run a boundary detector .*?) on a folder of images", top)[1]
    named = {w.lower().replace("-", "") for w in re.findall(r"[\w-]+", line)}
    missing = [c for c in choices
               if c.replace("-", "") not in named and c.split("-")[0] not in named]
    assert not missing, f"'segbench --help' does not name {missing}: {line!r}"


# ---- README ---------------------------------------------------------------------------


def test_readme_names_the_browser_tests_packages():
    text = _flat(README)
    assert "apt-get install chromium chromium-driver" in text


def test_readme_test_count_and_time_name_their_command():
    """The suite's size and time sit beside the command that counts and times it."""
    text = _flat(README)
    m = re.search(r"The whole suite \(([^)]*)\)", text)
    assert m, "no sentence on the whole suite's size"
    assert "pytest --collect-only -q" in m[1], m[1]
    i = text.index(m[0])
    timed = text[i:i + 400]
    assert re.search(r"[\d,]+ tests in \d+ min", timed) and "with the command above" in timed
    assert "python -m pytest -q" in text[:i]          # the command above


# ---- the docs' figures ------------------------------------------------------------------


_GPB_COST = re.compile(r"gPb-owt-ucm(?: costs|,(?: about)?)? ([\d.]+) CPU-s (?:an|per)")


def test_one_cost_for_gpb_beside_its_script():
    """gPb-owt-ucm's cost per image is stated once, in docs/detectors.md beside
    ``benchmarks/gpb_speed.py`` (issue 41); the README and baselines link to it."""
    texts = {"README.md": README, **DOCS}
    costs = {}
    for name, text in texts.items():
        flat = _flat(text)
        for m in _GPB_COST.finditer(flat):
            costs.setdefault(m[1], []).append(name)
            near = flat[max(0, m.start() - 400):m.end() + 300]
            assert "benchmarks/gpb_speed.py" in near, \
                f"{name}: gPb's cost {m[1]} without its script: {near[-420:-300]!r}"
    assert [n for v in costs.values() for n in v] == ["detectors.md"], \
        f"gPb-owt-ucm's cost stated elsewhere or more than once: {costs}"
    for name in ("README.md", "baselines.md"):
        assert 'docs/detectors.md ("Speed")' in _flat(texts[name]) or \
            'docs/detectors.md, "Speed"' in _flat(texts[name]), f"{name} does not link it"


def test_consistency_times_name_their_script():
    flat = _flat(DOCS["consistency.md"])
    i = flat.index("| run on BSDS500 val (the script's row) | CPU | wall | peak memory |")
    assert "benchmarks/consistency_speed.py" in flat[i - 700:i]
    assert "segbench consistency --figures" in flat[i:i + 1500] or \
        "`figures`" in flat[i:i + 1500]
    assert "when the default segmenter was `ncut-superpixel`" not in flat
    for each in ("0.04-0.35 s CPU per image", "About 0.15 s CPU per image"):
        assert each not in flat, f"{each!r}: no script makes it"
    assert "benchmarks/segmenter_speed.py" in flat
