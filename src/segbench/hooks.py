"""Late-bound functions: what a lower layer calls and a higher one provides.

The package's top level (``segbench/__init__.py``, the composition root) fills these
slots when ``segbench`` is imported, so a lower module calls a higher one's function
without importing it: :meth:`segbench.Result.compare` calls :data:`compare`, which is
:func:`segbench.comparison.compare` (the comparison layer sits above the result shape).
"""

from __future__ import annotations

from collections.abc import Callable

#: ``compare(*runs, **options)``: :func:`segbench.comparison.compare`, set by
#: ``segbench/__init__.py``.
compare: Callable | None = None
