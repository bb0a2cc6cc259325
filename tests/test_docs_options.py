"""docs/options.md is derived from the registry (issue 39 item 1): regenerating it from
segbench.families.BENCHMARKS gives the committed file, and each benchmark command's
--help offers the options the file lists for it."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from segbench.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("option_tables", ROOT / "tools" /
                                                  "option_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_options_doc_is_current():
    text = _tool().render()
    assert (ROOT / "docs" / "options.md").read_text(encoding="utf-8") == text, (
        "docs/options.md is stale: run python tools/option_tables.py")


@pytest.mark.parametrize("command", ["boundary", "region", "all"])
def test_each_listed_option_is_offered_by_its_command(command, capsys):
    text = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    section = text.split(f"## segbench {command}\n", 1)[1].split("\n## ", 1)[0]
    flags = re.findall(r"^\| `(--[a-z-]+)`", section, re.M)
    assert flags, section
    with pytest.raises(SystemExit):
        main([command, "--help"])
    help_text = capsys.readouterr().out
    for flag in flags:
        assert flag in help_text, (command, flag)
