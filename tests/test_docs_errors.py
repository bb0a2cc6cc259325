"""What the documentation says the code prints, the code can print; and the help says what
the commands do.

Quoted error texts are found in docs/*.md and README.md in these forms:

- ``segbench: error: MESSAGE`` or ``segbench: warning: MESSAGE``, anywhere (in backticks,
  possibly wrapped over lines, or on a line of its own); a MESSAGE ending in ``...`` is a
  quoted beginning;
- an indented block right after a line ending in ``:`` whose paragraph speaks of an
  error or a warning (as docs/python.md quotes ``InputError`` lines): each line is one
  message;
- a text in double quotes in the prose, right after a word that says it is a message
  (``a warning line ("...")``, ``refused ("...")``, ``stops with "..."``, ``is said at
  the start ("...")``); a few such quotes are of other programs or of the past, listed
  in ``NOT_OURS`` with the reason.

Each must be an expansion of one string of the sources: a literal, or an f-string whose
fields may hold anything (a message a ``path`` prefixes, ``path: message``, counts too).
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "src" / "segbench"
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
_PREFIX = re.compile(r"segbench: (?:error|warning): ")
_ELLIPSIS = ("...", "…")


def _norm(text: str) -> str:
    return " ".join(text.split())


def _quoted_cli(text: str) -> list[str]:
    """``segbench: error: ...`` and ``segbench: warning: ...`` messages of a document."""
    out = []
    for m in _PREFIX.finditer(text):
        before = text[:m.start()]
        in_ticks = before.count("`") % 2 == 1       # opened by a backtick: ends at one
        rest = text[m.end():]
        if in_ticks:
            end = rest.find("`")
            msg = rest[:end if end >= 0 else len(rest)]
        else:
            msg = rest.split("\n", 1)[0]
        out.append(_norm(msg))
    return out


def _quoted_blocks(text: str) -> list[str]:
    """Lines of an indented block introduced by a paragraph about an error or warning."""
    out = []
    paras = re.split(r"\n\s*\n", text)
    for prose, block in zip(paras, paras[1:]):
        lines = block.split("\n")
        if not prose.rstrip().endswith(":") or not all(
                ln.startswith("    ") for ln in lines if ln.strip()):
            continue
        last = re.split(r"\.\s", prose.strip())[-1]     # the sentence that introduces it
        if re.search(r"error|warning", last, re.I):
            out += [_norm(ln) for ln in lines if ln.strip()]
    return out


#: The word that makes the quote after it a message (at most 30 characters before it,
#: in the same sentence, no other quote between).
_SAYS = re.compile(r"\b(?:warn\w*|errors?|refus\w*|stops? with|said)\b"
                   r"[^\".;`]{0,30}$", re.I)

#: Quotes of the prose form that are not segbench's messages: (document, message) -> why.
NOT_OURS = {
    ("protocol.md", "must be the same size"):
        "the official MATLAB code's error, in the table of how it differs",
    ("annotate.md", "the contour holds no pixel of the current segment"):
        "what the editor (JavaScript) said before issue 28, quoted as history",
}


def _quoted_prose(text: str) -> list[str]:
    """Double-quoted texts of the prose that a message word introduces."""
    out = []
    fences = [m.start() for m in re.finditer(r"^```", text, re.M)]
    for m in re.finditer(r'"([^"]{3,400}?)"', text, re.S):
        start = m.start()
        if sum(f < start for f in fences) % 2:            # inside a fenced code block
            continue
        line = text[text.rfind("\n", 0, start) + 1:start]
        if line.startswith("    ") or line.count("`") % 2:   # code, or inside backticks
            continue
        before = text[max(0, start - 60):start].split("\n\n")[-1]
        if _SAYS.search(before.rstrip(" (")):
            out.append(_norm(m.group(1)))
    return out


def quoted_messages() -> list[tuple[str, str]]:
    """(document name, message) of every quoted error text."""
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        found += [(doc.name, m) for m in _quoted_cli(text) + _quoted_blocks(text)]
        found += [(doc.name, m) for m in _quoted_prose(text)
                  if (doc.name, m) not in NOT_OURS]
    return found


_FIELD = re.compile(r"\{[^{}]*\}|%[-+ #0]*\d*(?:\.\d+)?[sdrfgeix]")


def _parts(node) -> list:
    """A string node as literal texts and None (a field)."""
    if isinstance(node, ast.Constant):
        parts = []
        for i, piece in enumerate(_FIELD.split(node.value)):   # .format / % fields
            if i:
                parts.append(None)
            parts.append(piece)
        return parts
    parts = []
    for v in node.values:
        parts.append(v.value if isinstance(v, ast.Constant) else None)
    return parts


def _composed() -> list[list]:
    """Messages an error class composes from its class attributes (``_what`` of
    ``ClusterLostError`` and its subclasses), as parts: counts are fields."""
    from segbench import errors

    out = []
    for cls in vars(errors).values():
        if isinstance(cls, type) and issubclass(cls, errors.ClusterLostError):
            for saved in (True, False):
                text = str(cls(111111, 222222, saved=saved))
                parts = []
                for i, piece in enumerate(re.split(r"111111|222222", text)):
                    parts += [None] if i else []
                    parts.append(_norm(piece))
                out.append(parts)
    return out


@lru_cache(maxsize=1)
def templates() -> list[list]:
    """Every string of the package's sources (docstrings aside), as parts, and the
    messages the error classes compose."""
    out = _composed()
    for path in sorted(SOURCES.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(n.value) for n in ast.walk(tree)
                      if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
        joined_parts = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr)
                        for v in n.values}
        for n in ast.walk(tree):
            if id(n) in docstrings or id(n) in joined_parts:
                continue
            if isinstance(n, ast.JoinedStr) or (isinstance(n, ast.Constant)
                                                and isinstance(n.value, str)):
                parts = [p if p is None else _norm(p) for p in _parts(n)]
                if sum(len(p) for p in parts if p):
                    out.append(parts)
    return out


def _regex(parts) -> str:
    out = []
    for p in parts:
        if p is None:
            out.append(".+?")
        elif p:
            out.append(r"\s*".join(re.escape(w) for w in p.split(" ")).replace(
                r"\s*\s*", r"\s*"))
    return "".join(out)


def _expands(parts, msg: str, truncated: bool) -> bool:
    """Whether ``msg`` is an expansion of ``parts`` (a beginning of one if truncated)."""
    literal = sum(len(p) for p in parts if p)
    if literal < min(20, len(msg) // 2):           # "{exc}" and the like match anything
        return False
    if not truncated:
        return re.fullmatch(_regex(parts), msg, re.S) is not None
    for k in range(len(parts)):
        head = _regex(parts[:k])
        m = re.fullmatch(head + r"(?P<tail>.*)", msg, re.S)
        if m and (parts[k] is None or parts[k].startswith(m["tail"])
                  or _norm(m["tail"]).startswith(parts[k])):
            return True
    return False


def printable(msg: str) -> bool:
    """Whether some string of the sources expands to ``msg``, or to ``msg`` without what
    names the input before it (``path: ``, ``batch index 3: ``; at most two such)."""
    truncated = msg.endswith(_ELLIPSIS)
    if truncated:
        msg = msg.rstrip(".… ").rstrip()
    pieces = msg.split(": ")
    candidates = [": ".join(pieces[i:]) for i in range(min(3, len(pieces)))]
    for cand in candidates:
        words = [w for w in re.split(r"[^a-z]+", cand.lower()) if len(w) > 3]
        for parts in templates():
            text = " ".join(p for p in parts if p).lower()
            if words and not any(w in text for w in words):
                continue                                  # cheap filter
            if _expands(parts, cand, truncated):
                return True
    return False


def test_the_forms_are_found():
    """Every form is recognised (a doc that quotes none would pass vacuously)."""
    docs = {d for d, _ in quoted_messages()}
    assert "python.md" in docs and "detectors.md" in docs and "agreement.md" in docs


def test_prose_quotes_are_found():
    """The prose form finds the quotes it was made for, and each exception listed in
    NOT_OURS is still quoted where it says (else the list has gone stale)."""
    found = set(quoted_messages())
    assert ("engine.md", "the Dask cluster went away after N of M images; finished "
            "images are saved, rerun to resume") in found
    assert any(d == "annotate.md" and "waiting for the ledger lock" in m for d, m in found)
    for doc, msg in NOT_OURS:
        assert msg in _quoted_prose((ROOT / "docs" / doc).read_text(encoding="utf-8"))
    assert not printable("the Dask cluster went away after 3 of 7 images; nothing was "
                         "kept")


def test_matcher_refuses_a_text_the_code_cannot_print():
    assert printable("the K range must have k_max > k_min, got [200, 200]: a sweep "
                     "averages each measure over a range of K, so give two or more K "
                     "values (--k) or the range (--k-range LO,HI; k_range in Python)")
    assert not printable("the K range must be increasing, got [200, 200]")
    assert printable("raw/broken.png: not an image Pillow can read (corrupt, or wrong "
                     "format)...")


@pytest.mark.parametrize("doc, msg", quoted_messages())
def test_quoted_error_text_is_printed_by_the_code(doc, msg):
    assert printable(msg), f"{doc} quotes an error text no source string makes: {msg!r}"


# --- the help ------------------------------------------------------------------------


def _help(*argv) -> str:
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "segbench.cli", *argv, "--help"],
                          capture_output=True, text=True, check=True, cwd=ROOT).stdout


def test_sweep_help_does_not_claim_a_human_default():
    text = _norm(_help("superpixel-sweep"))
    assert "(default: 'human')" not in text
    assert "--name NAME name of the run in sweep.json (default: none)" in text
