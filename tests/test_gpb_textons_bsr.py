"""gPb's textons equal BSR's own (issue 41 item 1): its MT19937-64 stream, its randperm,
its sampled coarse-to-fine k-means.

Expected values are outputs of BSR's code (github.com/vrabaud/gPb, grouping/source/gpb_src,
the December 2010 release): the generator's numbers are from the gold log shipped with its
own test (test/math/random/sources/mersenne_twister_64_test/results.gold/
mersenne_twister_64_test.log), which are also the first numbers of Matsumoto and
Nishimura's reference mt19937-64.out for the same key; the permutation and texton labels
were produced by BSR's library built unmodified from that source (g++ -ansi -O3) and called
as ``mex_pb_parts_final_selected.cc`` calls it (``border_mirror_2D``, ``grayscale``,
``texton_filters(8, 2)`` + ``texton_filters(8, 2 sqrt 2)``, ``textons(gray, filters, _, 64)``).
"""

from __future__ import annotations


import numpy as np

from segbench.algorithms._gpb_cues import (
    BORDER,
    bsr_randperm,
    bsr_uniform,
    lab_bins,
    local_cues,
    textons,
)

# mersenne_twister_64_test.log: outputs 1-10 and 996-1000 of the default-seeded source
MT64_FIRST = [7266447313870364031, 4946485549665804864, 16945909448695747420,
              16394063075524226720, 4873882236456199058, 14877448043947020171,
              6740343660852211943, 13857871200353263164, 5249110015610582907,
              10205081126064480383]
MT64_996_1000 = [10197035660403006684, 13004818533162292132, 9831652587047067687,
                 7619315254749630976, 994412663058993407]


def test_generator_is_bsrs_mt19937_64_stream():
    from segbench.algorithms import _gpb_cue_kernels as k
    key = np.array([0x12345, 0x23456, 0x34567, 0x45678], np.uint64)
    x = k._mt64_stream(key, 1000)
    assert x[:10].tolist() == MT64_FIRST
    assert x[995:].tolist() == MT64_996_1000
    # rand_source::gen_uniform_closed_double: the top 53 bits over 2^53 - 1
    u = bsr_uniform(3)
    assert u.tolist() == [float(v >> 11) / (2 ** 53 - 1) for v in MT64_FIRST[:3]]


def test_randperm_is_bsrs():
    # BSR's randperm(10), and entries of its randperm(1000), from its own code
    assert bsr_randperm(10).tolist() == [4, 1, 8, 6, 0, 9, 7, 5, 3, 2]
    p = bsr_randperm(1000)
    assert p[:10].tolist() == [827, 677, 663, 967, 240, 453, 560, 859, 390, 27]
    assert p[-3:].tolist() == [982, 214, 642]
    assert bsr_randperm(10).tolist() == bsr_randperm(10).tolist()  # restarts each call


def tiny_image() -> np.ndarray:
    rng = np.random.default_rng(0)
    return (rng.random((40, 44, 3)) * 255).astype(np.uint8)


# BSR's textons of tiny_image(): labels of the 40 x 44 interior, per-label counts and the
# top-left 3 x 12 block (64 centres survive)
TINY_COUNTS = [42, 40, 61, 38, 19, 1, 72, 0, 54, 27, 30, 37, 42, 23, 5, 0, 38, 0, 45, 20,
               13, 27, 24, 15, 1, 0, 28, 34, 23, 60, 29, 33, 31, 7, 18, 47, 19, 5, 27, 28,
               14, 3, 57, 47, 22, 40, 29, 8, 57, 51, 31, 13, 57, 49, 15, 70, 0, 12, 1, 4,
               2, 49, 57, 9]
TINY_BLOCK = [[6, 43, 47, 13, 16, 4, 28, 62, 55, 45, 52, 32],
              [62, 55, 34, 48, 37, 21, 1, 31, 40, 8, 48, 32],
              [40, 40, 55, 48, 10, 48, 29, 12, 28, 53, 63, 29]]


def test_textons_equal_bsrs_on_a_tiny_image():
    _, _, _, grey = lab_bins(tiny_image())
    lab, centres = textons(grey)
    assert centres.shape == (64, 34)
    inner = lab[BORDER:-BORDER, BORDER:-BORDER]
    assert np.bincount(inner.ravel(), minlength=64).tolist() == TINY_COUNTS
    assert inner[:3, :12].tolist() == TINY_BLOCK
    # the public stage returns the same texton map
    _, tex = local_cues(tiny_image(), raw=True)
    np.testing.assert_array_equal(tex, inner)


def test_the_earlier_variant_stays_available():
    _, _, _, grey = lab_bins(tiny_image())
    lab, _ = textons(grey, seed=1)
    assert lab.shape == grey.shape
    assert not np.array_equal(lab, textons(grey)[0])


# The whole gPb-owt-ucm from these textons against the authors' ucm2 (issue 41's
# criterion, correlation >= 0.999, and per-image F and AP): tests/test_gpb.py::
# test_gpb_owt_ucm_from_the_photographs_is_the_authors_hierarchy, on val 101085, 101087.
