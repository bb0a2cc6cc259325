"""HTML helpers of the site: the about-text allow-list, the Jinja2 environment, filters."""

from __future__ import annotations

import html
import math
from html.parser import HTMLParser
from urllib.parse import urlsplit

from markupsafe import Markup

#: Tags kept by :func:`sanitize_html` (everything else is dropped, its text kept).
ALLOWED_TAGS = frozenset({"a", "p", "br", "em", "strong", "i", "b", "ul", "ol", "li",
                          "code"})
_VOID = frozenset({"br"})
_DROP_CONTENT = frozenset({"script", "style", "iframe", "object", "embed", "template",
                           "noscript", "svg", "math", "textarea", "title", "head"})
_SCHEMES = ("http", "https", "mailto")


class _Sanitizer(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.open: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in _DROP_CONTENT:
            self.skip += 1
            return
        if self.skip or tag not in ALLOWED_TAGS:
            return
        if tag == "a":
            href = next((v for k, v in attrs if k == "href" and v), None)
            ok = False
            if href is not None:
                href = href.strip()
                try:
                    ok = urlsplit(href).scheme.lower() in _SCHEMES
                except ValueError:
                    ok = False
            if ok:
                self.out.append(f'<a href="{html.escape(href, quote=True)}" '
                                'rel="nofollow noopener noreferrer">')
            else:
                self.out.append("<a>")
        else:
            self.out.append(f"<{tag}>")
        if tag not in _VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        if tag in _VOID and not self.skip:
            self.out.append(f"<{tag}>")

    def handle_endtag(self, tag):
        if tag in _DROP_CONTENT:
            self.skip = max(0, self.skip - 1)
            return
        if self.skip or tag not in self.open:
            return
        while self.open:                  # close what was left open inside it
            t = self.open.pop()
            self.out.append(f"</{t}>")
            if t == tag:
                break

    def handle_data(self, data):
        if not self.skip:
            self.out.append(html.escape(data, quote=False))


def sanitize_html(text: str) -> Markup:
    """Reduce ``text`` to an allow-list of HTML: links, emphasis, paragraphs, lists.

    Links keep only an ``href`` with an http, https or mailto scheme (and get
    ``rel="nofollow noopener noreferrer"``); every other attribute, tag, comment and
    the content of script-like elements is removed; text is escaped. Applied to
    ``about_html`` even when the submission step sanitized it already (idempotent), so a
    hand-written ``meta.json`` cannot inject script either.
    """
    p = _Sanitizer()
    p.feed(str(text or ""))
    p.close()
    out = "".join(p.out) + "".join(f"</{t}>" for t in reversed(p.open))
    return Markup(out)


def fmt(x, digits: int = 3) -> str:
    """A number for a table cell: NaN/None as an em dash."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return "\u2014"
    return "\u2014" if not math.isfinite(v) else f"{v:.{digits}f}"


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
    env = jinja2.Environment(loader=jinja2.PackageLoader("segbench.report", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["fmt"] = fmt
    env.filters["sortval"] = sort_value
    return env
