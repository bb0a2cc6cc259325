"""Atomic file writes for the dataset tools (the bytes twin of
:func:`segbench.report.official.atomic_write_text`)."""

from __future__ import annotations

import os
from pathlib import Path


def atomic_write_bytes(path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a crash never leaves a half-written file."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
