"""HTML helpers of the site: the Jinja2 environment, filters, the about-text allow-list."""

from __future__ import annotations

import math

from markupsafe import Markup

from ..datasets import sanitize_html as _sanitize


def sanitize_html(text) -> Markup:
    """``about_html`` reduced to the submission allow-list
    (:func:`segbench.datasets.sanitize_html`), as Markup for the templates.

    Applied even when the submission step sanitized it already (idempotent), so a
    hand-written ``meta.json`` cannot inject script either.
    """
    return Markup(_sanitize(str(text or "")))


def fmt(x, digits: int = 3) -> str:
    """A number for a table cell: NaN/None as an em dash."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return "\u2014"
    return "\u2014" if not math.isfinite(v) else f"{v:.{digits}f}"


def interval(iv, digits: int = 3) -> str:
    """An interval ``(lo, hi)`` as ``[lo, hi]``; ``[undefined]`` when its ends are not
    numbers (a bootstrap draw where the score is undefined)."""
    lo, hi = (fmt(v, digits) for v in iv)
    return "[undefined]" if "\u2014" in (lo, hi) else f"[{lo}, {hi}]"


def sort_value(x) -> str:
    """The ``data-value`` of a sortable cell: a number, or '' for missing."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return ""
    return "" if not math.isfinite(v) else repr(round(v, 6))


def environment():
    """The Jinja2 environment: package templates, autoescape on, undefined is an error."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("segbench.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["fmt"] = fmt
    env.filters["sortval"] = sort_value
    env.filters["interval"] = interval
    return env
