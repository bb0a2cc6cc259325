"""Write docs/options.md: each benchmark's options as the registry declares them
(:data:`segbench.families.BENCHMARKS`: its parameters, the command-line options and
keywords of :func:`segbench.evaluate`, and its run options), so the docs' option tables
are derived from the one declaration. tests/test_docs_options.py checks the file is
current.

    python tools/option_tables.py            # rewrite docs/options.md
    python tools/option_tables.py --check    # exit 1 if it is not current
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs" / "options.md"


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _default(p) -> str:
    if p.default_text:
        return p.default_text
    if p.default_text is None and p.default is not None and not isinstance(p.default, bool):
        return repr(p.default) if isinstance(p.default, str) else str(p.default)
    if p.default is True:
        return "on"
    return "off" if p.type is bool or p.default is False else ""


def _command_flags() -> dict[str, set[str]]:
    """Each command's option strings, as its parser takes them: an option the registry
    declares but a command does not take (``human`` has no thresholds) is not listed
    for it."""
    import argparse

    from segbench.cli import build_parser

    parser = build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {
        name: {s for a in sub._actions for s in a.option_strings}
        for name, sub in subs.choices.items()
    }


def render() -> str:
    from segbench.families import BENCHMARKS

    flags_of = _command_flags()

    lines = [
        "# Options of each benchmark",
        "",
        "Generated from the registry (`segbench.families.BENCHMARKS`) by "
        "`python tools/option_tables.py`; do not edit by hand. The options every "
        "benchmark command shares (`--gt`, `--pred`, `--out`, `--ids`, `--workers`, "
        "...) are in [engine.md](engine.md). Each option below is also a keyword of "
        "`segbench.evaluate(name, ...)`. Options of a command's output alone (its "
        "figures: `--no-plot`; `--threads`; `human --no-region`, ...) are in its "
        "`--help`.",
        "",
    ]
    for name, entry in BENCHMARKS.items():
        if entry.group is None:
            continue  # a part of another benchmark, no command of its own
        taken = flags_of.get(name.replace("_", "-"))
        params = [p for p in entry.params if p.cli and (taken is None or p.option in taken)]
        options = [
            o
            for o in entry.options
            if o.name not in {p.name for p in entry.params}
            and (taken is None or not o.cli or o.option in taken)
        ]
        if not params and not options:
            continue
        lines += [f"## segbench {name.replace('_', '-')}", "", _cell(entry.help), ""]
        lines += ["| option | keyword | default | meaning |", "|---|---|---|---|"]
        for p in params:
            flags = ", ".join(f"`{f}`" for f in (p.option, *p.aliases))
            lines.append(
                f"| {flags} | `{p.name}` | {_cell(_default(p))} | {_cell(p.help)} |"
            )
        for o in options:
            flag = f"`{o.option}`" if o.cli else "(keyword only)"
            lines.append(f"| {flag} | `{o.name}` | | {_cell(o.help)} |")
        lines.append("")
    return "\n".join(lines)


def main(argv) -> int:
    text = render()
    if "--check" in argv:
        current = DOCS.read_text(encoding="utf-8") if DOCS.is_file() else ""
        if current != text:
            print(f"{DOCS} is not current: run python tools/option_tables.py")
            return 1
        return 0
    DOCS.write_text(text, encoding="utf-8")
    print(f"wrote {DOCS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
