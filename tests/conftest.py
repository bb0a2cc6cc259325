"""Shared test helpers: where the read-only reference data lives."""

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
FIXTURES = SHARED / "fixtures"
DATA = SHARED / "data"


def require(path: Path) -> Path:
    """Skip the calling test cleanly when a shared fixture or data folder is absent."""
    if not path.exists():
        pytest.skip(f"reference data not available: {path}")
    return path
