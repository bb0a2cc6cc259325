"""Issue 39 item 3: one way in per family. The api_* modules' runners moved to
``segbench.runners`` (reached through ``segbench.evaluate(family, ...)``); every old
name still works for one release, with a DeprecationWarning naming the new way in."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

import segbench
from segbench import runners
from segbench.families import runner

OLD = {
    ("api_semantic", "evaluate_semantic"): "segbench.evaluate('semantic'",
    ("api_stats", "run_stats"): "segbench.evaluate('stats'",
    ("api_agreement", "run_agreement"): "segbench.evaluate('agreement'",
    ("api_agreement", "DEFAULT_MAX_DIST"): "segbench.families.DEFAULT_MAX_DIST",
    ("api_superpixel", "run_superpixel"): "segbench.evaluate('superpixel'",
    ("api_superpixel", "run_sweep"): "segbench.runners.run_sweep",
    ("api_consistency", "run_consistency"): "segbench.evaluate('consistency'",
    ("api_consistency", "run_granularity"): "segbench.runners.run_granularity",
    ("api_consistency", "evaluate_granularity"): "segbench.runners.evaluate_granularity",
    ("api_consistency", "human_consistency"): "segbench.runners.human_consistency",
}


@pytest.mark.parametrize(("module", "name"), sorted(OLD))
def test_old_names_warn_and_give_the_new_object(module, name):
    old = importlib.import_module(f"segbench.{module}")
    with pytest.warns(DeprecationWarning) as caught:
        value = getattr(old, name)
    text = str(caught[0].message)
    assert f"segbench.{module}.{name}" in text and OLD[module, name] in text
    family = module.removeprefix("api_")
    if name in runners.__all__:
        assert value is getattr(runners, name)
    elif name != "DEFAULT_MAX_DIST":
        assert value is runner(family)  # what segbench.evaluate(family) calls
    with pytest.raises(AttributeError):
        old.no_such_name  # noqa: B018


def test_from_import_of_an_old_name_warns_at_the_users_line():
    code = (
        "import warnings; warnings.simplefilter('error', DeprecationWarning)\n"
        "from segbench.api_stats import run_stats\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode != 0 and "segbench.evaluate('stats'" in r.stderr


def test_the_public_runners_are_the_non_family_commands_and_load_nothing_heavy():
    assert runners.__all__ == sorted(
        ["evaluate_granularity", "human_consistency", "run_granularity", "run_sweep"]
    )
    r = subprocess.run(
        [sys.executable, "-c",
         "import sys, segbench.runners; print('numpy' in sys.modules)"],
        capture_output=True, text=True, check=True,
    )
    assert r.stdout.strip() == "False"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert callable(runners.run_sweep) and callable(segbench.evaluate)
    with pytest.raises(AttributeError):
        runners.run_semantic  # noqa: B018 - family runs go through segbench.evaluate
