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
import threading
from contextlib import contextmanager

__all__ = ["release_large_arrays", "reuse_freed_memory"]

#: Allocations of at least this many bytes are mapped, never taken from the heap.
MMAP_THRESHOLD = 4 << 20
_M_MMAP_THRESHOLD = -3  # mallopt's parameter numbers (glibc malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
_GLIBC_MMAP_MAX = 65536  # glibc's defaults, put back after reuse_freed_memory
_GLIBC_TRIM_THRESHOLD = 128 * 1024
_result: bool | None = None
_reuse_depth = 0
_reuse_lock = threading.Lock()


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


def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.mallopt, libc.malloc_trim  # noqa: B018 - glibc's, or not glibc
    except (OSError, AttributeError):
        return None
    return libc


@contextmanager
def reuse_freed_memory():
    """Within the block, freed arrays stay with the process for the next ones (glibc).

    A freshly mapped page costs a fault on its first write: about 1.8 CPU-s for each
    GB on the development machine, a virtual one. gPb at 1924 x 1284 allocates and
    frees tens of GB of temporaries, each mapped afresh by glibc, so that first writes
    were a third of its cost, and its cost grew 1.44 times faster than the pixels
    (``benchmarks/gpb_speed.py --scales 1 4``). Within the block nothing is mapped
    apart (``M_MMAP_MAX`` 0) and the heap is never trimmed, so freed pages are
    written again without faults; the peak is unchanged, as every page in the heap
    was in use at once before. On leaving the outermost block, glibc's limits are put
    back, the free heap is returned to the system (``malloc_trim``) and
    :func:`release_large_arrays`' threshold holds. Elsewhere than glibc, nothing
    changes. Results never change.
    """
    global _reuse_depth
    libc = _libc()
    if libc is None:
        yield
        return
    with _reuse_lock:  # blocks may run in threads: the outermost one sets and resets
        if _reuse_depth == 0:
            libc.mallopt(_M_MMAP_MAX, 0)
            libc.mallopt(_M_TRIM_THRESHOLD, 2**31 - 1)  # an int: 2 GB
        _reuse_depth += 1
    try:
        yield
    finally:
        with _reuse_lock:
            _reuse_depth -= 1
            if _reuse_depth == 0:
                libc.mallopt(_M_MMAP_MAX, _GLIBC_MMAP_MAX)
                libc.mallopt(_M_TRIM_THRESHOLD, _GLIBC_TRIM_THRESHOLD)
                libc.malloc_trim(0)
                release_large_arrays()  # any mallopt ends glibc's moving threshold
