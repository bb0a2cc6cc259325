"""The code's habits, checked where CI runs: ruff's lint and format check on ``src/``
with the committed configuration (pyproject.toml ``[tool.ruff]``)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff() -> list[str]:
    exe = Path(sys.executable).with_name("ruff")
    if exe.is_file():
        return [str(exe)]
    found = shutil.which("ruff")
    if found is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]' installs it)")
    return [found]


@pytest.mark.parametrize("args", [["check", "src"], ["format", "--check", "src"]],
                         ids=["lint", "format"])
def test_ruff_is_clean_on_src(args):
    proc = subprocess.run(_ruff() + args, cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
