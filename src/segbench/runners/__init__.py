"""Runs over folders that the engine alone does not make: the benchmarks with a runner of
their own (semantic, superpixel, consistency, agreement, stats), reached through
``segbench.evaluate(family, ...)`` (the registry, :mod:`segbench.families`, names each
one's runner), and the commands that are not one family's benchmark:

- :func:`run_sweep`: superpixel algorithms over a range of K (``segbench
  superpixel-sweep``);
- :func:`run_granularity` / :func:`evaluate_granularity`: a segmenter's GCE/LCE against
  the annotators at several granularities (``segbench granularity``);
- :func:`human_consistency`: every pair of annotators' GCE/LCE without output files.

They sit on the engine (one layer above it, below :mod:`segbench.api`). The modules are
imported on first use, so importing this package loads no numerical library.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from importlib import import_module

#: The public names -> the module that holds them.
_PUBLIC = {
    "run_sweep": "_superpixel",
    "run_granularity": "_consistency",
    "evaluate_granularity": "_consistency",
    "human_consistency": "_consistency",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)


#: The names of the old ``segbench.api_*`` modules, kept for one release: old module ->
#: {name: (``module:attribute`` of its new home, the new way in as users should write it)}.
MOVED = {
    "segbench.api_semantic": {
        "evaluate_semantic": (
            "segbench.runners._semantic:evaluate_semantic",
            "segbench.evaluate('semantic', gt, pred, out, classes=...)",
        ),
    },
    "segbench.api_stats": {
        "run_stats": (
            "segbench.runners._stats:run_stats",
            "segbench.evaluate('stats', gt, out, ...)",
        ),
    },
    "segbench.api_agreement": {
        "run_agreement": (
            "segbench.runners._agreement:run_agreement",
            "segbench.evaluate('agreement', gt, out, ...)",
        ),
        "DEFAULT_MAX_DIST": (
            "segbench.families:DEFAULT_MAX_DIST",
            "segbench.families.DEFAULT_MAX_DIST",
        ),
    },
    "segbench.api_superpixel": {
        "run_superpixel": (
            "segbench.runners._superpixel:run_superpixel",
            "segbench.evaluate('superpixel', gt, pred, out, ...)",
        ),
        "run_sweep": (
            "segbench.runners._superpixel:run_sweep",
            "segbench.runners.run_sweep",
        ),
    },
    "segbench.api_consistency": {
        "run_consistency": (
            "segbench.runners._consistency:run_consistency",
            "segbench.evaluate('consistency', gt, out, ...)",
        ),
        **{
            name: (f"segbench.runners._consistency:{name}", f"segbench.runners.{name}")
            for name in ("run_granularity", "evaluate_granularity", "human_consistency")
        },
    },
}


def moved(old: str) -> Callable[[str], object]:
    """The module ``__getattr__`` of an old module of :data:`MOVED`: each name warns
    (``DeprecationWarning`` naming the new way in) and is then taken from its new home."""
    names = MOVED[old]

    def __getattr__(name: str):
        target = names.get(name)
        if target is None:
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        home, new = target
        module, attribute = home.split(":")
        warnings.warn(
            f"{old}.{name} is deprecated and goes in the next release: use {new}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(import_module(module), attribute)

    return __getattr__
