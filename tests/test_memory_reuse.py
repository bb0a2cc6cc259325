"""reuse_freed_memory: within the block a freed large array's pages serve the next one
without page faults; after it, glibc maps and unmaps large arrays again."""

import resource

import numpy as np
import pytest

from segbench import memory

pytestmark = pytest.mark.skipif(
    memory._libc() is None, reason="glibc's mallopt is needed (Linux)"
)

WORDS = 8 << 20  # a 64 MB array: above any mmap threshold glibc may hold


def _faults_of_second_array() -> int:
    """Minor page faults of writing a 64 MB array just after freeing one of that size."""
    first = np.ones(WORDS)
    del first
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    second = np.ones(WORDS)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    del second
    return faults


def test_freed_pages_serve_the_next_array_inside_the_block_only():
    memory.release_large_arrays()
    outside = _faults_of_second_array()
    with memory.reuse_freed_memory():
        with memory.reuse_freed_memory():  # nested blocks: the outer one resets
            inside = _faults_of_second_array()
        still_inside = _faults_of_second_array()
    after = _faults_of_second_array()
    # 64 MB is 32 huge pages or 16,384 small ones: a fresh mapping faults at least 32
    # times; reused heap pages not at all (a few for Python's own small objects)
    assert outside >= 32 and after >= 32
    assert inside <= 4 and still_inside <= 4
    assert memory._reuse_depth == 0


def test_the_heap_goes_back_to_the_system_after_the_block():
    def resident_mb() -> float:
        with open("/proc/self/status") as f:
            kb = next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))
        return kb / 1024

    base = resident_mb()
    with memory.reuse_freed_memory():
        arrays = [np.ones(WORDS) for _ in range(3)]
        held = resident_mb()
        del arrays
    assert held - base >= 150  # three 64 MB arrays were resident
    assert resident_mb() - base < 50  # malloc_trim returned them


def test_an_error_inside_the_block_still_resets():
    with pytest.raises(ZeroDivisionError):
        with memory.reuse_freed_memory():
            1 / 0  # noqa: B018
    assert memory._reuse_depth == 0
    assert _faults_of_second_array() >= 32

