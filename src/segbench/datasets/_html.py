"""The HTML allow-list of user text (a submission's ``about.html``, a run's
``about_html`` on the site): one sanitizer for both."""

from __future__ import annotations

import unicodedata
from urllib.parse import urlsplit

import nh3

__all__ = ["ABOUT_MAX", "sanitize_html"]

#: Input beyond this many characters is cut off before sanitizing.
ABOUT_MAX = 20_000
#: Tags kept (without attributes, but an ``a``'s safe ``href``).
_ALLOWED = {"a", "em", "strong", "b", "i", "p", "ul", "ol", "li", "br"}
#: Tags dropped with everything inside them.
_DROPPED = {"script", "style"}
_SCHEMES = {"http", "https", "mailto"}
#: Added to every link: the page does not vouch for it, and it gets no window handle.
_LINK_REL = "nofollow noopener"
_C0_AND_SPACE = "".join(map(chr, range(0x21)))


def _safe_href(value: str | None) -> str | None:
    """The URL if it is an absolute http(s) or mailto URL, else None.

    Browsers ignore ASCII tab/newline inside URLs and strip leading control characters
    and spaces, so ``java\\tscript:`` is ``javascript:``; those characters are removed
    before the scheme is checked.
    """
    if value is None:
        return None
    url = "".join(ch for ch in value if ch not in "\t\n\r").strip(_C0_AND_SPACE)
    if any(unicodedata.category(ch) in ("Cc", "Cf") for ch in url) or " " in url:
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in _SCHEMES:
        return None
    if parts.scheme.lower() in ("http", "https") and not parts.netloc:
        return None
    if parts.scheme.lower() == "mailto" and not parts.path:
        return None
    return url


def _only_safe_hrefs(tag: str, attribute: str, value: str) -> str | None:
    """nh3 attribute filter: an ``a``'s ``href`` only if absolute http(s)/mailto."""
    if tag == "a" and attribute == "href":
        return _safe_href(value)
    return value


def sanitize_html(text: str, *, max_length: int = ABOUT_MAX) -> str:
    """Reduce HTML to a small allow-list with ``nh3`` (the Rust ``ammonia`` sanitizer).

    Kept: ``a`` (only an absolute ``http``, ``https`` or ``mailto`` ``href``; other
    attributes dropped; ``rel="nofollow noopener"`` added), ``em``, ``strong``, ``b``,
    ``i``, ``p``, ``ul``, ``ol``, ``li``, ``br`` without attributes. ``<script>`` and
    ``<style>`` are dropped with their content; every other tag is dropped and its text
    kept (``<iframe>``, ``<img onerror=...>``, ``<svg>`` ...); comments are dropped;
    text is escaped; unclosed tags are closed.

    Parameters
    ----------
    text : str
        Untrusted HTML (e.g. a submission's ``about.html``).
    max_length : int
        Input beyond this many characters is cut off first.

    Returns
    -------
    str
        HTML safe to insert into a page as is (the site also sends a
        Content-Security-Policy that forbids scripts).

    Examples
    --------
    >>> sanitize_html('<p onclick="x()">Hi <script>alert(1)</script></p>')
    '<p>Hi </p>'
    >>> sanitize_html('<a href="javascript:alert(1)">x</a> <a href="https://a.org/">y</a>')
    '<a rel="nofollow noopener">x</a> <a href="https://a.org/" rel="nofollow noopener">y</a>'
    """
    return nh3.clean(
        str(text)[:max_length],
        tags=_ALLOWED,
        clean_content_tags=_DROPPED,
        attributes={"a": {"href"}, "*": set()},
        attribute_filter=_only_safe_hrefs,
        url_schemes=_SCHEMES,
        link_rel=_LINK_REL,
        strip_comments=True,
    )
