"""Large arrays go back to the operating system when they are freed (glibc malloc).

glibc serves an allocation above its mmap threshold with its own mapping, unmapped on
free. But when such a block is freed, glibc raises the threshold to its size (up to
32 MB), so the next arrays of that size come from the heap, where freed space is kept
and fragments. A run over large images then holds far more than any one image needs:
ten 4x BSDS maps at tolerance 0.011 grew to 420 MB, against at most 250 MB for
each image alone (``benchmarks/scale.py``). A fixed threshold of 4 MB ends this: arrays
of a BSDS-size image (under 2 MB) stay on the heap as before, and larger ones are
mapped and unmapped. The same run then peaks at 281 MB.
"""

from __future__ import annotations

import sys

__all__ = ["release_large_arrays"]

#: Allocations of at least this many bytes are mapped, never taken from the heap.
MMAP_THRESHOLD = 4 << 20
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (glibc malloc.h)
_result: bool | None = None


def release_large_arrays() -> bool:
    """Fix glibc's mmap threshold at :data:`MMAP_THRESHOLD` (once per process).

    Returns whether it is set: only on Linux with glibc; elsewhere, or if ``mallopt``
    is missing, nothing changes. It changes where memory comes from, never results.
    """
    global _result
    if _result is None:
        _result = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                _result = bool(ctypes.CDLL(None).mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
            except (OSError, AttributeError):
                pass
    return _result
