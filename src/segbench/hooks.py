"""Late-bound functions: what a lower layer calls and a higher one provides.

The package's top level (``segbench/__init__.py``, the composition root) fills these
slots when ``segbench`` is imported, so a lower module calls a higher one's function
without importing it: :meth:`segbench.Result.compare` calls :data:`compare`, which is
:func:`segbench.comparison.compare` (the comparison layer sits above the result shape);
:meth:`segbench.semantic.SemanticEval.update_folders` calls :data:`evaluate`, which is
:func:`segbench.evaluate` (the registry and the engine sit above the families).
"""

from __future__ import annotations

from collections.abc import Callable

#: ``compare(*runs, **options)``: :func:`segbench.comparison.compare`, set by
#: ``segbench/__init__.py``.
compare: Callable | None = None

#: ``evaluate(benchmark, gt, pred=None, out=None, **options)``: :func:`segbench.evaluate`,
#: the one way into a benchmark's folder run, set by ``segbench/__init__.py``. A family
#: calls it to run its own benchmark over folders (``SemanticEval.update_folders``):
#: the registry and the engine import the families, so a family cannot import them.
evaluate: Callable | None = None
