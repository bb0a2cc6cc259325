"""segbench: the Berkeley Segmentation Benchmark, exact and fast.

``segbench.evaluate("boundary", gt=..., pred=..., out=...)`` runs a benchmark over a
folder; ``segbench.Result.from_json(path)`` reads a saved result;
``segbench.compare(run_dir, run_dir, ...)`` tests the differences between runs;
``segbench.BoundaryEval`` and ``segbench.RegionEval`` score arrays in a training loop
(``update``/``compute``/``merge``), ``segbench.human_scores`` the annotators;
``segbench.detect_folder``, ``segbench.nms_folder`` and ``segbench.ucm_folder`` make
folders of soft maps and hierarchies (``segbench detect``, ``nms``, ``ucm``). All are
imported on first use, so ``import segbench`` (and ``segbench --help``) loads no
numerical library.
"""

import sys as _sys
import types as _types

from . import hooks as _hooks
from ._version import __version__


class _MovedModule(_types.ModuleType):
    """``segbench.compare`` as a module: its contents are ``segbench.comparison`` (the
    name ``segbench.compare`` is the function). Each name taken from it warns once per
    place; kept for one release."""

    def __getattr__(self, name):
        import warnings

        from . import comparison

        if name.startswith("__"):  # import machinery's own look-ups
            raise AttributeError(name)
        warnings.warn(
            "the module segbench.compare is now segbench.comparison "
            f"(segbench.compare is the function); import {name} from there",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(comparison, name)


# registered, not a file: a file would make the attribute segbench.compare the module
_sys.modules.setdefault(f"{__name__}.compare", _MovedModule(f"{__name__}.compare"))

__all__ = [
    "BoundaryEval",
    "FolderResult",
    "HumanScores",
    "RegionEval",
    "Result",
    "SemanticBoundaryEval",
    "compare",
    "detect_folder",
    "evaluate",
    "human_scores",
    "nms_folder",
    "ucm_folder",
    "__version__",
]

_STREAM = (
    "BoundaryEval",
    "HumanScores",
    "RegionEval",
    "SemanticBoundaryEval",
    "human_scores",
)
_FOLDERS = ("FolderResult", "detect_folder", "nms_folder", "ucm_folder")


def _compare(*runs, **options):
    """:func:`segbench.comparison.compare`, imported on first use (the slot
    :data:`segbench.hooks.compare` that :meth:`segbench.Result.compare` calls)."""
    from .comparison import compare

    return compare(*runs, **options)


def _evaluate(*args, **options):
    """:func:`segbench.evaluate`, imported on first use (the slot
    :data:`segbench.hooks.evaluate` through which
    :meth:`segbench.semantic.SemanticEval.update_folders` runs its benchmark)."""
    from .api import evaluate

    return evaluate(*args, **options)


_hooks.compare = _compare
_hooks.evaluate = _evaluate


def __getattr__(name):
    if name == "evaluate":
        from .api import evaluate

        return evaluate
    if name == "compare":
        from .comparison import compare

        return compare
    if name in _STREAM:
        from . import stream

        return getattr(stream, name)
    if name in _FOLDERS:
        from . import algorithm_folders

        return getattr(algorithm_folders, name)
    if name == "Result":
        from .result import Result

        return Result
    raise AttributeError(f"module 'segbench' has no attribute {name!r}")
