"""The HTML allow-list of user text (a submission's ``about.html``, a run's
``about_html`` on the site): one sanitizer for both."""

from __future__ import annotations

import html
import unicodedata
from html.parser import HTMLParser
from urllib.parse import urlsplit

__all__ = ["ABOUT_MAX", "sanitize_html"]

#: Input beyond this many characters is cut off before sanitizing.
ABOUT_MAX = 20_000
#: Tags kept (without attributes, but an ``a``'s safe ``href``).
_ALLOWED = {"a", "em", "strong", "b", "i", "p", "ul", "ol", "li", "br"}
_VOID = {"br"}
_SCHEMES = {"http", "https", "mailto"}
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


class _Sanitizer(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.open: list[str] = []

    def _escape_raw(self) -> None:
        raw = self.get_starttag_text()
        if raw:
            self.out.append(html.escape(raw, quote=True))

    def handle_starttag(self, tag, attrs):
        if tag not in _ALLOWED:
            self._escape_raw()
            return
        self._implied_end(tag)
        if tag == "a":
            href = _safe_href(dict(attrs).get("href"))
            if href is None:
                self.out.append("<a>")
            else:
                self.out.append(f'<a href="{html.escape(href, quote=True)}" '
                                'rel="nofollow noopener noreferrer">')
        else:
            self.out.append(f"<{tag}>")
        if tag not in _VOID:
            self.open.append(tag)

    def _close_to(self, tag: str) -> None:
        while self.open:
            t = self.open.pop()
            self.out.append(f"</{t}>")
            if t == tag:
                break

    def _implied_end(self, tag: str) -> None:
        """Close what HTML closes implicitly, so the output nests as a browser reads
        the input: a new ``li`` ends the previous item of its list, a new ``a`` ends an
        open link, and a block (``p``, ``ul``, ``ol``) ends an open paragraph."""
        scope = {"li": ("li", {"ul", "ol"}), "a": ("a", set()),
                 "p": ("p", set()), "ul": ("p", set()), "ol": ("p", set())}.get(tag)
        if scope is None:
            return
        target, barriers = scope
        for t in reversed(self.open):
            if t == target:
                self._close_to(target)
                return
            if t in barriers:
                return

    def handle_startendtag(self, tag, attrs):
        if tag not in _ALLOWED:
            self._escape_raw()
            return
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag not in _ALLOWED:
            self.out.append(html.escape(f"</{tag}>"))
            return
        if tag in _VOID or tag not in self.open:
            return  # a stray end tag: dropped
        self._close_to(tag)

    def handle_data(self, data):
        self.out.append(html.escape(data, quote=True))

    # Comments, declarations (<!DOCTYPE>), processing instructions and CDATA carry
    # nothing a reader needs: dropped.
    def handle_comment(self, data):
        pass

    def handle_decl(self, decl):
        pass

    def handle_pi(self, data):
        pass

    def unknown_decl(self, data):
        pass

    def result(self) -> str:
        self.close()
        while self.open:
            self.out.append(f"</{self.open.pop()}>")
        return "".join(self.out)


def sanitize_html(text: str, *, max_length: int = ABOUT_MAX) -> str:
    """Reduce HTML to a small allow-list; everything else becomes visible, inert text.

    Kept: ``a`` (only an absolute ``http``, ``https`` or ``mailto`` ``href``; other
    attributes dropped; ``rel="nofollow noopener noreferrer"`` added), ``em``,
    ``strong``, ``b``, ``i``, ``p``, ``ul``, ``ol``, ``li``, ``br`` without attributes.
    Every other tag (``<script>``, ``<img onerror=...>``, ``<style>``, ``<iframe>``
    ...) is escaped, so it shows as text and never runs; comments and declarations
    are dropped; text is escaped; unclosed allowed tags are closed.

    Parameters
    ----------
    text : str
        Untrusted HTML (e.g. a submission's ``about.html``).
    max_length : int
        Input beyond this many characters is cut off first.

    Returns
    -------
    str
        HTML safe to insert into a page as is.

    Examples
    --------
    >>> sanitize_html('<p onclick="x()">Hi <script>alert(1)</script></p>')
    '<p>Hi &lt;script&gt;alert(1)&lt;/script&gt;</p>'
    >>> sanitize_html('<a href="javascript:alert(1)">x</a> <a href="https://a.org/">y</a>')
    '<a>x</a> <a href="https://a.org/" rel="nofollow noopener noreferrer">y</a>'
    """
    p = _Sanitizer()
    p.feed(str(text)[:max_length])
    return p.result()
