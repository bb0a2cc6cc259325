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


def cached_runs(tmp_path_factory, prefix: str, run):
    """``get(kind, nthresh)``: the output folder of ``run(kind, nthresh, out)``, run once
    per (kind, nthresh) in a module; skips without the official fixtures."""
    require(FIXTURES / "bsr-official")
    cache = {}

    def get(kind, nthresh):
        if (kind, nthresh) not in cache:
            out = tmp_path_factory.mktemp(f"{prefix}{kind}{nthresh}")
            run(kind, nthresh, out)
            cache[kind, nthresh] = out
        return cache[kind, nthresh]
    return get
