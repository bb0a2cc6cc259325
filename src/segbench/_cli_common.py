"""Options and output helpers shared by every ``segbench`` sub-command."""

from __future__ import annotations

import argparse


def add_common(p: argparse.ArgumentParser, *, workers: bool = True) -> None:
    """``--workers`` (optional), ``--json`` and ``--quiet``, the same on every command."""
    if workers:
        p.add_argument("--workers", type=int, default=1,
                       help="worker processes (results are identical for any number)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def print_table(rows: list[tuple], header: tuple) -> None:
    """Print rows as a plain aligned table: first column left, the others right."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        print("  ".join(str(v).rjust(w) if i else str(v).ljust(w)
                        for i, (v, w) in enumerate(zip(r, widths))))
