"""The package's annotations, checked where CI runs: mypy on ``src/segbench`` with the
committed configuration (pyproject.toml ``[tool.mypy]``: the files, the Python version,
the third-party modules that ship no types)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _mypy() -> list[str]:
    exe = Path(sys.executable).with_name("mypy")
    if exe.is_file():
        return [str(exe)]
    found = shutil.which("mypy")
    if found is None:
        pytest.skip("mypy is not installed (pip install -e '.[test]' installs it)")
    return [found]


def test_mypy_is_clean_on_src():
    # no file arguments: the configuration's ``files`` says what is checked
    proc = subprocess.run(_mypy(), cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
