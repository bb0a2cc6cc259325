"""PNG label maps decoded by segbench's own decoder: the same labels Pillow gives, for every
way a user's tools write them, in their stored type; malformed files still fail with one
line naming the file."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from segbench.errors import InputError
from segbench.io import read_label_map
from segbench.io._png import decode_label_png


def _blobs(rng, h, w, classes):
    small = rng.integers(0, classes, (h // 8 + 1, w // 8 + 1))
    maps = np.repeat(np.repeat(small, 8, 0), 8, 1)[:h, :w]
    noise = rng.uniform(size=(h, w)) < 0.05
    maps[noise] = rng.integers(0, classes, noise.sum())
    return maps


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(
        ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _png(samples, *, filters, level=6, strategy=zlib.Z_DEFAULT_STRATEGY, idat=8192,
         palette=False):
    """A PNG written by hand: each row with the given filter type (0-4, cycled), the
    stream by zlib with this level and strategy, split into IDAT chunks of ``idat``."""
    samples = np.asarray(samples)
    depth = 16 if samples.dtype == np.uint16 else 8
    h, w = samples.shape
    data = samples.astype(">u2").view(np.uint8).reshape(h, -1) if depth == 16 else \
        samples.astype(np.uint8)
    bpp = depth // 8
    rows = []
    prev = np.zeros(data.shape[1], np.int64)
    for r in range(h):
        x = data[r].astype(np.int64)
        f = filters[r % len(filters)]
        left = np.r_[np.zeros(bpp, np.int64), x[:-bpp]]
        ul = np.r_[np.zeros(bpp, np.int64), prev[:-bpp]]
        if f == 0:
            pred = np.zeros_like(x)
        elif f == 1:
            pred = left
        elif f == 2:
            pred = prev
        elif f == 3:
            pred = (left + prev) // 2
        else:
            p = left + prev - ul
            pa, pb, pc = abs(p - left), abs(p - prev), abs(p - ul)
            pred = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, prev, ul))
        rows.append(bytes([f]) + ((x - pred) & 255).astype(np.uint8).tobytes())
        prev = x
    co = zlib.compressobj(level, zlib.DEFLATED, 15, 9, strategy)
    stream = co.compress(b"".join(rows)) + co.flush()
    ctype = 3 if palette else 0
    out = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, ctype,
                                                              0, 0, 0))
    if palette:
        out += _chunk(b"PLTE", bytes(range(256)) * 3)
    out += _chunk(b"tEXt", b"Software\x00segbench test")
    for k in range(0, len(stream), idat):
        out += _chunk(b"IDAT", stream[k:k + idat])
    return out + _chunk(b"IEND", b"")


def _pillow(path):
    with Image.open(path) as im:
        return np.asarray(im)


@pytest.mark.parametrize("filters", [[0], [1], [2], [3], [4], [0, 1, 2, 3, 4], [4, 2, 1]])
@pytest.mark.parametrize("strategy", ["default", "filtered", "huffman", "rle", "fixed",
                                      "stored"])
def test_hand_written_pngs_decode_as_pillow_does(tmp_path, filters, strategy):
    rng = np.random.default_rng(len(filters) * 7 + len(strategy))
    labels = _blobs(rng, 61, 77, 150)
    labels[5, :] = rng.integers(0, 256, 77)           # a row of noise
    level = 0 if strategy == "stored" else 6
    zs = {"default": zlib.Z_DEFAULT_STRATEGY, "filtered": zlib.Z_FILTERED,
          "huffman": zlib.Z_HUFFMAN_ONLY, "rle": zlib.Z_RLE, "fixed": zlib.Z_FIXED,
          "stored": zlib.Z_DEFAULT_STRATEGY}[strategy]
    path = tmp_path / "m.png"
    path.write_bytes(_png(labels, filters=filters, level=level, strategy=zs, idat=1000))
    got = read_label_map(path, dtype=None)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, _pillow(path))
    np.testing.assert_array_equal(got, labels)


@pytest.mark.parametrize("filters", [[0], [1], [2], [3], [4], [1, 4, 3]])
def test_sixteen_bit_and_palette(tmp_path, filters):
    rng = np.random.default_rng(3)
    deep = _blobs(rng, 40, 33, 3000).astype(np.uint16)
    (tmp_path / "d.png").write_bytes(_png(deep, filters=filters))
    got = read_label_map(tmp_path / "d.png", dtype=None)
    assert got.dtype == np.uint16
    np.testing.assert_array_equal(got, deep)
    np.testing.assert_array_equal(got, _pillow(tmp_path / "d.png"))
    np.testing.assert_array_equal(read_label_map(tmp_path / "d.png"), deep)  # int32
    pal = _blobs(rng, 40, 33, 200)
    (tmp_path / "p.png").write_bytes(_png(pal, filters=filters, palette=True))
    np.testing.assert_array_equal(read_label_map(tmp_path / "p.png", dtype=None), pal)


@pytest.mark.parametrize("mode,kw", [("L", {}), ("L", {"optimize": True}),
                                     ("L", {"compress_level": 0}),
                                     ("L", {"compress_level": 1}),
                                     ("L", {"compress_level": 9}), ("P", {}),
                                     ("I;16", {}), ("L", {"interlace": 1}), ("1", {})])
def test_pillow_written_files(tmp_path, mode, kw):
    """What ``Image.save`` writes, any setting (interlaced and 1-bit go to Pillow)."""
    rng = np.random.default_rng(5)
    labels = _blobs(rng, 97, 131, 2 if mode == "1" else 150)
    if mode == "1":
        im = Image.fromarray(labels.astype(bool))
    elif mode == "I;16":
        im = Image.fromarray((labels * 300).astype(np.uint16))
    else:
        im = Image.fromarray(labels.astype(np.uint8))
        if mode == "P":
            im = im.convert("L").convert("P")
            im = Image.fromarray(labels.astype(np.uint8), "P")
    path = tmp_path / "m.png"
    im.save(path, **kw)
    want = _pillow(path).astype(np.int64)
    got = read_label_map(path)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(read_label_map(path, dtype=None), want)


def test_random_maps_of_every_size(tmp_path):
    """Widths around the decoder's 8-byte copies, one row, one column."""
    rng = np.random.default_rng(11)
    for h, w in [(1, 1), (1, 9), (9, 1), (3, 7), (2, 8), (5, 16), (17, 65), (64, 300)]:
        for maps in (rng.integers(0, 256, (h, w)), _blobs(rng, h, w, 4)):
            path = tmp_path / f"{h}x{w}.png"
            Image.fromarray(maps.astype(np.uint8)).save(path)
            np.testing.assert_array_equal(read_label_map(path, dtype=None), maps)


def test_paeth_by_bounds_is_the_spec_predictor_for_every_byte_triple():
    from numba import njit

    from segbench.io._png import _paeth_by_bounds

    @njit
    def mismatches():
        bad = 0
        for a in range(256):
            for b in range(256):
                for c in range(256):
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    spec = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                    bad += _paeth_by_bounds(np.int64(a), np.int64(b), np.int64(c)) != spec
        return bad

    assert mismatches() == 0


def test_paeth_rows_under_rows_without_runs_and_over_regions(tmp_path):
    """Paeth rows whose row above has no runs take the predictor from bounds on b and
    c (not the spec's three distances): 262k random triples of bytes, and rows where
    the left, above and above-left values tie; under a flat row, eight pixels at a time
    where nothing changes."""
    rng = np.random.default_rng(12)
    noise = rng.integers(0, 256, (512, 512))
    ties = rng.integers(0, 3, (64, 512)) * 127        # 0, 127, 254: many equal values
    # large regions (rows above mostly flat: eight pixels at a time where nothing
    # changes), edges at every offset within a word, a width that is not whole words
    flat = np.zeros((90, 203), np.int64)
    flat[10:60, 5:120] = 7
    flat[30:80, 90:203] = 200
    for r in range(90):
        flat[r, (r * 3) % 203] = 33                   # a diagonal edge
    for name, labels in (("noise", noise), ("ties", ties), ("flat", flat)):
        path = tmp_path / f"{name}.png"
        path.write_bytes(_png(labels.astype(np.uint8), filters=[4]))
        np.testing.assert_array_equal(read_label_map(path, dtype=None), labels)


def test_malformed_streams_are_left_to_pillow_and_fail_in_one_line(tmp_path):
    rng = np.random.default_rng(2)
    good = _png(_blobs(rng, 50, 60, 20), filters=[4, 2], idat=300)
    cases = {
        "truncated": good[:len(good) // 2],
        "zeroed stream": good.replace(good[good.index(b"IDAT") + 40:
                                           good.index(b"IDAT") + 140], bytes(100)),
        "bad filter": _png(np.zeros((4, 4), np.uint8), filters=[0], level=0).replace(
            b"\x00\x00\x00\x00\x00\x00", b"\x07\x00\x00\x00\x00\x00", 1),
    }
    for name, data in cases.items():
        assert decode_label_png(data, 10**8) is None, name
        path = tmp_path / f"{name}.png"
        path.write_bytes(data)
        with pytest.raises(InputError) as info:
            read_label_map(path)
        assert str(path) in str(info.value) and "\n" not in str(info.value), name


def test_random_bytes_never_crash_the_decoder():
    """Flipped bytes anywhere in the stream: a result of the right shape or None."""
    rng = np.random.default_rng(4)
    good = bytearray(_png(_blobs(rng, 30, 40, 12), filters=[0, 1, 2, 3, 4], idat=10**6))
    start = good.index(b"IDAT") + 4
    for _ in range(300):
        bad = bytearray(good)
        for i in rng.integers(start, len(good) - 12, 3):
            bad[i] = rng.integers(0, 256)
        out = decode_label_png(bytes(bad), 10**8)
        assert out is None or out.shape == (30, 40)


def test_decompression_bomb_header_goes_to_pillow_check(tmp_path):
    head = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", 100000, 100000,
                                                             8, 0, 0, 0, 0))
    path = tmp_path / "bomb.png"
    path.write_bytes(head + _chunk(b"IDAT", zlib.compress(b"\x00" * 10)) + _chunk(b"IEND",
                                                                                   b""))
    with pytest.raises(InputError, match="too large|megapixels"):
        read_label_map(path)


def test_a_named_buffer_gives_the_same_labels_and_is_reused(tmp_path):
    from segbench.io import read_stored_labels
    rng = np.random.default_rng(5)
    maps = [_blobs(rng, 40, 50, 30).astype(np.uint8), _blobs(rng, 30, 20, 30).astype(np.uint8)]
    paths = []
    for i, m in enumerate(maps):
        paths.append(tmp_path / f"{i}.png")
        Image.fromarray(m).save(paths[-1])
    first = read_stored_labels(paths[0], buffer="test")
    assert first.dtype == np.uint8
    np.testing.assert_array_equal(first, maps[0])
    second = read_stored_labels(paths[1], buffer="test")
    np.testing.assert_array_equal(second, maps[1])
    assert np.shares_memory(first, second)      # the documented reuse
    np.save(tmp_path / "m.npy", maps[0])
    np.testing.assert_array_equal(read_stored_labels(tmp_path / "m.npy", buffer="test"),
                                  maps[0])


_STRATEGIES = {"default": (6, zlib.Z_DEFAULT_STRATEGY), "huffman": (6, zlib.Z_HUFFMAN_ONLY),
               "fixed": (6, zlib.Z_FIXED), "stored": (0, zlib.Z_DEFAULT_STRATEGY)}


@pytest.mark.parametrize("first", ["default", "huffman", "fixed", "stored"])
@pytest.mark.parametrize("second", ["default", "huffman", "stored"])
def test_pairs_decoded_together_as_pillow_decodes_each(tmp_path, first, second):
    """Two streams inflated at once (literal-heavy random maps beside blob maps, every
    block kind, other sizes and depths on the two sides) give each file's labels."""
    from segbench.io import read_stored_label_pair
    from segbench.io._png import decode_label_png_pair, read_into_scratch
    rng = np.random.default_rng(len(first) * 13 + len(second))
    # random beside random: inflated together; beside blobs: one after the other
    sides = [(rng.integers(0, 150, (70, 90)), first),
             (rng.integers(0, 150, (53, 47)), second)]
    if second == "default":
        sides[1] = (_blobs(rng, 53, 47, 150), second)
        if first == "default":
            sides[1] = (_blobs(rng, 53, 47, 3000).astype(np.uint16), second)
    paths = []
    for i, (labels, strategy) in enumerate(sides):
        level, zs = _STRATEGIES[strategy]
        paths.append(tmp_path / f"{i}.png")
        paths[-1].write_bytes(_png(labels, filters=[1, 2, 4, 0, 3], level=level,
                                   strategy=zs, idat=999))
    for a, b in (paths, paths[::-1], (paths[0], paths[0])):
        got_a, got_b = read_stored_label_pair(a, b)
        np.testing.assert_array_equal(got_a, _pillow(a))
        np.testing.assert_array_equal(got_b, _pillow(b))
        assert got_a.dtype == _pillow(a).dtype and got_b.dtype == _pillow(b).dtype
        # by the pair decoder itself: read_stored_label_pair falls back to decoding
        # each file alone, which would hide a pair decoder that gives up
        pair = decode_label_png_pair(read_into_scratch(a, "gt"), read_into_scratch(b, "pred"),
                                     10**8, "gt", "pred")
        assert pair is not None
        np.testing.assert_array_equal(pair[0], _pillow(a))
        np.testing.assert_array_equal(pair[1], _pillow(b))


def test_a_malformed_file_in_a_pair_is_named(tmp_path):
    from segbench.io import read_stored_label_pair
    rng = np.random.default_rng(8)
    good = _png(rng.integers(0, 150, (40, 60)), filters=[1], idat=500)
    bad = good[:len(good) // 2]                   # truncated
    (tmp_path / "good.png").write_bytes(good)
    (tmp_path / "bad.png").write_bytes(bad)
    for a, b in (("good", "bad"), ("bad", "good")):
        with pytest.raises(InputError) as info:
            read_stored_label_pair(tmp_path / f"{a}.png", tmp_path / f"{b}.png")
        assert str(tmp_path / "bad.png") in str(info.value)
        assert "\n" not in str(info.value)


def test_random_bytes_never_crash_the_pair_decoder():
    """Flipped bytes in either stream of a pair: both decoded right, or None."""
    from segbench.io._png import decode_label_png_pair
    rng = np.random.default_rng(9)
    want = rng.integers(0, 150, (30, 40)).astype(np.uint8)
    good = bytearray(_png(want, filters=[1, 2], idat=10**6))
    start = good.index(b"IDAT") + 4
    for _ in range(200):
        bad = bytearray(good)
        for i in rng.integers(start, len(good) - 12, 3):
            bad[i] = rng.integers(0, 256)
        for a, b in ((bad, good), (good, bad)):
            files = [(np.frombuffer(bytearray(x) + bytes(16), np.uint8), len(x)) for x in (a, b)]
            out = decode_label_png_pair(files[0], files[1], 10**8, "x", "y")
            assert out is None or (out[0].shape == (30, 40) and out[1].shape == (30, 40))


def test_pair_buffers_grow_while_the_other_file_waits_as_read(tmp_path):
    """In a fresh thread (empty buffers), pairs whose sides need their buffers grown at
    different calls, with many IDAT chunks (gathered in place only once both fit)."""
    import threading

    from segbench.io import read_stored_label_pair
    rng = np.random.default_rng(12)
    shapes = [((20, 30), (20, 30)), ((20, 30), (90, 120)), ((150, 40), (90, 120)),
              ((15, 15), (200, 210))]
    cases = []
    for k, shapes_k in enumerate(shapes):
        paths = []
        for side, shape in zip("ab", shapes_k):
            paths.append(tmp_path / f"{k}{side}.png")
            paths[-1].write_bytes(_png(rng.integers(0, 150, shape), filters=[1, 4],
                                       idat=700))
        cases.append(paths)
    got = []
    worker = threading.Thread(target=lambda: got.extend(
        [tuple(x.copy() for x in read_stored_label_pair(a, b)) for a, b in cases]))
    worker.start()
    worker.join()
    assert len(got) == len(cases)
    for (a, b), (ga, gb) in zip(cases, got):
        np.testing.assert_array_equal(ga, _pillow(a))
        np.testing.assert_array_equal(gb, _pillow(b))
