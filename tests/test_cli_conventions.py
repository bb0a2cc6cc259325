"""One convention in every command's help (issue 28 item 18): defaults written one way,
every value named by a metavar, ``--name`` and ``--out`` saying what they do, one name
for the bootstrap draws."""

from __future__ import annotations

import argparse
import re

import pytest

from segbench.cli import build_parser

#: The annotation tool's commands are another branch's (issue 28 items 11-15).
SKIP = {"annotate", "annotate-export"}


def _commands():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: p for name, p in sub.choices.items() if name not in SKIP}


COMMANDS = _commands()


def _options(p):
    return [a for a in p._actions if a.option_strings and a.help is not argparse.SUPPRESS]


def _flag(a) -> str:
    return max(a.option_strings, key=len)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_defaults_are_written_one_way(name):
    """'(default: X)', as the help formatter writes it; never 'default X'."""
    for a in _options(COMMANDS[name]):
        text = " ".join((a.help or "").split())
        for m in re.finditer(r"\bdefault\b", text):
            before, after = text[:m.start()], text[m.end():]
            assert after.startswith(":") or before.endswith(("the ", "by ")), \
                f"segbench {name} {_flag(a)}: {text!r}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_value_has_a_readable_metavar(name):
    """Each option's value is named (N, PX, FILE, DIR ...) or lists its choices; never
    argparse's upper-cased option name (N_BOOT, CUE_BINS, MIN_AREA)."""
    for a in _options(COMMANDS[name]):
        if a.nargs == 0:
            continue
        assert a.metavar or a.choices, f"segbench {name} {_flag(a)} has no metavar"
        assert "_" not in str(a.metavar) or str(a.metavar).endswith("_DIR"), \
            f"segbench {name} {_flag(a)}: {a.metavar}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_name_help_mentions_pred_only_with_pred(name):
    p = COMMANDS[name]
    flags = {f for a in p._actions for f in a.option_strings}
    for a in _options(p):
        if "--name" in a.option_strings:
            assert ("PRED" in a.help) == ("--pred" in flags), f"segbench {name}: {a.help}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_an_optional_out_says_nothing_is_saved_without_it(name):
    for a in _options(COMMANDS[name]):
        if "--out" in a.option_strings and not a.required and a.default is None:
            assert "without --out nothing is saved" in " ".join(a.help.split()), \
                f"segbench {name} --out: {a.help}"


def test_bootstrap_draws_have_one_name():
    """--resamples everywhere; stats keeps --n-boot as an alias of it."""
    for name, p in COMMANDS.items():
        flags = {f for a in p._actions for f in a.option_strings}
        if any("boot" in f or "resample" in f for f in flags):
            assert "--resamples" in flags, name
    stats = COMMANDS["stats"]
    a = stats.parse_args(["--gt", "x", "--n-boot", "7"])
    b = stats.parse_args(["--gt", "x", "--resamples", "7"])
    assert a.resamples == b.resamples == 7
    assert "--n-boot" not in stats.format_usage()        # shown once, as --resamples
