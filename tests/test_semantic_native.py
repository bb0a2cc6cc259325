"""The C extension path of semantic scoring (segbench.semantic._native, issue 41): the
same records and results as the Numba path, its fall-backs, and a ``segbench
semantic`` command that imports no Numba."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from conftest import run_command_modules
from segbench.semantic import SemanticEval, _core, _family

native = _core.native()
needs_native = pytest.mark.skipif(native is None, reason="C extension not built")


@pytest.fixture
def numba_path(monkeypatch):
    """Counting as if the extension were absent."""
    monkeypatch.setattr(_core, "_NATIVE", [None])


def _blob(rng, h, w, classes):
    coarse = rng.integers(0, classes, (h // 8 + 1, w // 8 + 1)).astype(np.uint8)
    return np.repeat(np.repeat(coarse, 8, 0), 8, 1)[:h, :w].copy()


def _pairs(rng, kind, n, h, w, classes):
    out = []
    for _ in range(n):
        if kind == "random":
            g = rng.integers(0, classes, (h, w), dtype=np.uint8)
            p = rng.integers(0, classes, (h, w), dtype=np.uint8)
        else:
            g = _blob(rng, h, w, classes)
            p = _blob(rng, h, w, classes)
            p[: h // 2] = g[: h // 2]
            if kind == "salt":
                wrong = rng.uniform(size=p.shape) < 0.08
                p[wrong] = rng.integers(0, classes, int(wrong.sum()))
            g[rng.uniform(size=g.shape) < 0.03] = 255
        out.append((g, p))
    return out


def _write(root, pairs, **save):
    for side in ("gt", "pred"):
        (root / side).mkdir(parents=True, exist_ok=True)
    for i, (g, p) in enumerate(pairs):
        Image.fromarray(g).save(root / "gt" / f"{i}.png", **save)
        Image.fromarray(p).save(root / "pred" / f"{i}.png", **save)
    return root / "gt", root / "pred"


def _run(gt, pred, classes, **kw):
    ev = SemanticEval(classes, boundary_dilation=None, **kw)
    ev.update_folders(gt, pred)
    return ev


@needs_native
@pytest.mark.parametrize("kind", ["blob", "salt", "random"])
@pytest.mark.parametrize("save", [{}, {"compress_level": 0}, {"compress_level": 1},
                                  {"compress_level": 9}])
def test_native_counts_equal_the_numba_path(tmp_path, kind, save, monkeypatch):
    rng = np.random.default_rng(len(kind) + len(save))
    h, w = (37, 53) if save else (96, 130)
    gt, pred = _write(tmp_path, _pairs(rng, kind, 3, h, w, 20), **save)
    fast = _run(gt, pred, 20)
    monkeypatch.setattr(_core, "_NATIVE", [None])
    slow = _run(gt, pred, 20)
    assert (fast.confusion() == slow.confusion()).all()
    assert fast.confusion().sum() > 0
    assert fast.report()["metrics"]["mIoU"] == slow.report()["metrics"]["mIoU"]


@needs_native
@pytest.mark.parametrize("options", [{"ignore_index": None}, {"ignore_index": 0},
                                     {"reduce_zero_label": True}])
def test_native_options_equal_the_numba_path(tmp_path, options, monkeypatch):
    rng = np.random.default_rng(3)
    pairs = _pairs(rng, "salt", 2, 40, 60, 12)
    ignore = options.get("ignore_index", 255)
    if ignore != 255:  # 255 is then a label out of range
        pairs = [(np.where(g == 255, ignore or 0, g).astype(np.uint8), p) for g, p in pairs]
    gt, pred = _write(tmp_path, pairs)
    classes = 11 if options.get("reduce_zero_label") else 12
    if options.get("reduce_zero_label"):  # predictions in the reduced space
        pairs = [(g, np.minimum(p, 10)) for g, p in pairs]
    gt, pred = _write(tmp_path, pairs)
    fast = _run(gt, pred, classes, **options)
    monkeypatch.setattr(_core, "_NATIVE", [None])
    slow = _run(gt, pred, classes, **options)
    assert (fast.confusion() == slow.confusion()).all()


@needs_native
def test_native_record_is_the_numba_record(tmp_path):
    from segbench.semantic._kernels import take_cells

    rng = np.random.default_rng(5)
    gt, pred = _write(tmp_path, _pairs(rng, "random", 1, 30, 31, 7))
    got = native.count_png_pair(str(gt / "0.png"), str(pred / "0.png"), 7, 255, False)
    cells, counts, itemsize = got
    assert itemsize == 4
    g = np.asarray(Image.open(gt / "0.png")).reshape(-1)
    p = np.asarray(Image.open(pred / "0.png")).reshape(-1)
    conf = np.zeros(49, np.int64)
    np.add.at(conf, g.astype(np.int64) * 7 + p, 1)
    nz, vals = take_cells(conf)
    assert (np.frombuffer(cells, np.int32) == nz).all()
    assert (np.frombuffer(counts, np.int32) == vals).all()


@needs_native
@pytest.mark.parametrize("cell_type", [np.int32, np.int64])
@pytest.mark.parametrize("count_type", [np.int32, np.int64])
@pytest.mark.parametrize("order", ["increasing", "shuffled"])
def test_native_record_areas_equal_the_kernel(cell_type, count_type, order):
    """Every pairing of int32 and int64 cells and counts (counting gives int32, JSON
    read back int64); cells in any order, though records hold them increasing."""
    from segbench.semantic._kernels import record_areas

    rng = np.random.default_rng(1)
    c = 9
    nz = np.sort(rng.choice(c * c, 30, replace=False)).astype(cell_type)
    if order == "shuffled":
        nz = rng.permutation(nz)
    w = rng.integers(1, 1000, 30).astype(count_type)
    want = [np.zeros((2, c), np.int64) for _ in range(3)]
    got = [np.zeros((2, c), np.int64) for _ in range(3)]
    conf_a, conf_b = np.zeros(c * c, np.int64), np.zeros(c * c, np.int64)
    record_areas(nz, w, c, 1, *want, conf_a)
    native.record_areas(nz, w, c, got[0][1], got[1][1], got[2][1], conf_b)
    for a, b in zip(want, got):
        assert (a == b).all()
    assert (conf_a == conf_b).all()
    with pytest.raises(ValueError):
        native.record_areas(np.array([c * c], np.int64), np.array([1], np.int64), c,
                            got[0][1], got[1][1], got[2][1], conf_b)


@needs_native
def test_pairs_the_extension_leaves_go_the_python_way(tmp_path):
    """16-bit maps, shapes that differ, bad labels, non-PNG files: None from the
    extension, and the Python path's result or error naming the file."""
    from segbench.errors import InputError

    rng = np.random.default_rng(2)
    (g, p), = _pairs(rng, "blob", 1, 20, 24, 5)
    gt, pred = _write(tmp_path / "a", [(g, p)])
    Image.fromarray(g.astype(np.uint16)).save(gt / "0.png")         # 16-bit grey
    assert native.count_png_pair(str(gt / "0.png"), str(pred / "0.png"), 5, 255, False) \
        is None
    ev = _run(gt, pred, 5)
    assert ev.n_images == 1
    gt, pred = _write(tmp_path / "b", [(g, np.full_like(p, 7))])     # label 7 >= 5
    assert native.count_png_pair(str(gt / "0.png"), str(pred / "0.png"), 5, 255, False) \
        is None
    with pytest.raises(InputError, match="prediction pixel"):
        _run(gt, pred, 5)
    gt, pred = _write(tmp_path / "c", [(g, p[:, :20].copy())])         # shapes differ
    with pytest.raises(InputError, match="20x24"):
        _run(gt, pred, 5)
    (tmp_path / "d").mkdir()
    assert native.count_png_pair(str(tmp_path / "d"), str(tmp_path / "d"), 5, 255, False) \
        is None
    assert native.count_png_pair(str(tmp_path / "none.png"), str(pred / "0.png"), 5, 255,
                                 False) is None


@needs_native
def test_palette_and_truncated_files(tmp_path):
    rng = np.random.default_rng(4)
    (g, p), = _pairs(rng, "random", 1, 16, 16, 6)
    gt, pred = _write(tmp_path, [(g, p)])
    for side, arr in (("gt", g), ("pred", p)):
        im = Image.fromarray(arr, "L").convert("P")
        im.putpalette([v for i in range(256) for v in (i, i, i)])
        im = Image.fromarray(arr, "P")
        im.putpalette([v for i in range(256) for v in (i, 255 - i, 0)])
        im.save(tmp_path / side / "0.png")
    got = native.count_png_pair(str(gt / "0.png"), str(pred / "0.png"), 6, 255, False)
    assert got is not None and np.frombuffer(got[1], np.int32).sum() == 256
    data = (gt / "0.png").read_bytes()
    for cut in (10, 40, len(data) // 2, len(data) - 20):
        (gt / "0.png").write_bytes(data[:cut])
        assert native.count_png_pair(str(gt / "0.png"), str(pred / "0.png"), 6, 255,
                                     False) is None


@needs_native
def test_semantic_command_imports_no_numba(tmp_path):
    """The fixed cost of ``segbench semantic`` (issue 41: <= 0.2 CPU-s) is reached by
    not loading Numba at all; with boundary IoU (Numba's band kernel) it does."""
    rng = np.random.default_rng(6)
    gt, pred = _write(tmp_path, _pairs(rng, "salt", 2, 30, 40, 10))
    base = ["semantic", "--gt", str(gt), "--pred", str(pred), "--classes", "10", "--quiet",
            "--json"]
    out, mods = run_command_modules([*base, "--no-boundary-iou"])
    assert not any(m == "numba" or m.startswith(("numba.", "llvmlite")) for m in mods)
    assert "segbench.semantic._kernels" not in mods and "segbench.io._png" not in mods
    fast = json.loads(out.split("MODULES")[0])["metrics"]
    import os

    env = dict(os.environ, SEGBENCH_NATIVE="0")
    out, mods = run_command_modules([*base, "--no-boundary-iou"], env)
    assert "numba" in mods
    slow = json.loads(out.split("MODULES")[0])["metrics"]
    assert fast == slow
    _, mods = run_command_modules(base)
    assert "numba" in mods


def test_numba_path_alone(tmp_path, numba_path):
    """Without the extension (not built, or SEGBENCH_NATIVE=0) everything still counts."""
    assert _core.native() is None
    rng = np.random.default_rng(8)
    gt, pred = _write(tmp_path, _pairs(rng, "blob", 2, 20, 20, 4))
    ev = _run(gt, pred, 4)
    assert ev.n_images == 2 and ev.confusion().sum() > 0
    _family._warm_up({"classes": 4, "ignore_index": 255, "reduce_zero_label": False,
                      "boundary_dilation": None})


def _filtered_png(path, img, filters, level=6, strategy=None):
    """An 8-bit grey PNG whose row r is written with PNG filter ``filters[r]`` (Pillow
    chooses its own): every unfilter path of the extension, on any width. ``strategy``
    is zlib's (``zlib.Z_FIXED``: fixed Huffman codes, ``Z_HUFFMAN_ONLY``: literals only,
    ``Z_RLE``: matches at distance 1 only)."""
    import struct
    import zlib

    h, w = img.shape
    x = img.astype(np.int64)
    rows = []
    for r in range(h):
        a = np.concatenate([[0], x[r, :-1]])                       # left
        b = x[r - 1] if r else np.zeros(w, np.int64)               # up
        c = np.concatenate([[0], b[:-1]])                          # up-left
        f = filters[r]
        if f == 4:
            pa, pb, pc = np.abs(b - c), np.abs(a - c), np.abs(a + b - 2 * c)
            pred = np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))
        else:
            pred = [np.zeros(w, np.int64), a, b, (a + b) // 2][f]
        rows.append(bytes([f]) + ((x[r] - pred) % 256).astype(np.uint8).tobytes())

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    ihdr = struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
                     + chunk(b"IDAT", _deflated(b"".join(rows), level, strategy))
                     + chunk(b"IEND", b""))


def _deflated(data, level, strategy):
    import zlib

    if strategy is None:
        return zlib.compress(data, level)
    z = zlib.compressobj(level, zlib.DEFLATED, 15, 8, strategy)
    return z.compress(data) + z.flush()


def _idat_span(data):
    """(start, end) of the first IDAT chunk's payload in a PNG's bytes."""
    import struct

    i = 8
    while i < len(data):
        n, kind = struct.unpack(">I4s", data[i : i + 8])
        if kind == b"IDAT":
            return i + 8, i + 8 + n
        i += 12 + n
    raise AssertionError("no IDAT")


def _portable_build(tmp_path, flag="-DSEGBENCH_NO_SIMD"):
    """The extension built without its SSE2 code (``-DSEGBENCH_NO_SIMD``): what a
    machine other than x86-64 runs; or with ``flag`` ``-DSEGBENCH_NO_AVX2``, the SSE2
    code a processor without AVX2 runs. None where no C compiler is at hand."""
    import importlib.util
    import shutil
    import subprocess
    import sysconfig
    from pathlib import Path

    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        return None
    source = Path(_core.__file__).with_name("_native.c")
    target = tmp_path / ("_native" + sysconfig.get_config_var("EXT_SUFFIX"))
    cmd = [cc, "-shared", "-fPIC", "-O2", "-fno-strict-aliasing", flag,
           "-I", sysconfig.get_paths()["include"], "-o", str(target), str(source)]
    if subprocess.run(cmd, capture_output=True).returncode:
        return None
    spec = importlib.util.spec_from_file_location("segbench.semantic._native", target)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def portable(tmp_path_factory):
    module = _portable_build(tmp_path_factory.mktemp("portable"))
    if module is None:
        pytest.skip("no C compiler to build the portable variant")
    return module


@pytest.fixture(scope="module")
def sse2(tmp_path_factory):
    module = _portable_build(tmp_path_factory.mktemp("sse2"), "-DSEGBENCH_NO_AVX2")
    if module is None:
        pytest.skip("no C compiler to build the SSE2 variant")
    return module


@needs_native
@pytest.mark.parametrize("build", ["native", "portable"])
@pytest.mark.parametrize("kind", ["blob", "salt", "random"])
def test_native_counts_every_filter_and_width(tmp_path, kind, build, request):
    """Widths 1 to 70 (the 16- and 64-pixel steps of the change marks and of the Sub
    prefix sums, and their tails), every filter on every row, three textures: the
    extension's counts equal numpy's, with its SSE2 code and without."""
    module = native if build == "native" else request.getfixturevalue("portable")
    rng = np.random.default_rng(len(kind))
    for w in [*range(1, 41), 63, 64, 65, 70]:
        h = int(rng.integers(1, 6))
        (g, p), = _pairs(rng, kind, 1, max(h, 8), max(w, 8), 12)
        g, p = g[:h, :w].copy(), p[:h, :w].copy()
        g[g == 255] = 11
        for side, arr in (("g", g), ("p", p)):
            _filtered_png(tmp_path / f"{side}.png", arr, rng.integers(0, 5, h),
                          level=int(rng.integers(0, 10)))
        got = module.count_png_pair(str(tmp_path / "g.png"), str(tmp_path / "p.png"), 12,
                                    255, False)
        assert got is not None, (kind, w, h)
        cells, counts, itemsize = got
        want = np.bincount(g.reshape(-1).astype(np.int64) * 12 + p.reshape(-1),
                           minlength=144)
        assert (np.frombuffer(cells, np.int32) == np.flatnonzero(want)).all(), (kind, w, h)
        assert (np.frombuffer(counts, np.int32) == want[want > 0]).all(), (kind, w, h)


@needs_native
@pytest.mark.parametrize("build", ["native", "portable", "sse2"])
@pytest.mark.parametrize("kind", ["blob", "salt", "random"])
def test_native_counts_large_maps_every_deflate_kind(tmp_path, kind, build, request):
    """Maps large enough for the inflate's fast loop (it leaves the last 258 bytes of
    the output and 32 of the input to the careful loop), each deflate strategy: dynamic
    codes at levels 1, 6 and 9, fixed codes, literals only (salt: rare differences get
    codes longer than the first table level) and runs only. Counts equal numpy's."""
    import zlib

    module = native if build == "native" else request.getfixturevalue(build)
    rng = np.random.default_rng(10 + len(kind))
    classes = 150
    settings = [(1, None), (6, None), (9, None), (6, zlib.Z_FIXED),
                (6, zlib.Z_HUFFMAN_ONLY), (6, zlib.Z_RLE), (6, zlib.Z_FILTERED)]
    for (h, w), (level, strategy) in zip([(120, 161), (64, 517), (97, 240), (150, 150),
                                          (83, 333), (128, 128), (77, 401)], settings):
        (g, p), = _pairs(rng, kind, 1, h, w, classes)
        g[g == 255] = classes - 1
        for side, arr in (("g", g), ("p", p)):
            _filtered_png(tmp_path / f"{side}.png", arr, rng.integers(0, 5, h),
                          level=level, strategy=strategy)
        got = module.count_png_pair(str(tmp_path / "g.png"), str(tmp_path / "p.png"),
                                    classes, 255, False)
        assert got is not None, (kind, level, strategy)
        cells, counts, itemsize = got
        dtype = np.int32 if itemsize == 4 else np.int64
        want = np.bincount(g.reshape(-1).astype(np.int64) * classes + p.reshape(-1),
                           minlength=classes * classes)
        assert (np.frombuffer(cells, dtype) == np.flatnonzero(want)).all(), (kind, level)
        assert (np.frombuffer(counts, dtype) == want[want > 0]).all(), (kind, level)


@needs_native
def test_corrupted_streams_are_refused_or_unchanged(tmp_path):
    """A bit flipped anywhere in the compressed stream (the chunk CRCs are not checked,
    as Pillow does not): the zlib trailer's Adler-32 is, so the extension returns None
    (then the Python path, then Pillow, which names the file), or, where the flip
    changed no inflated byte, the counts of the intact file; never other counts, and
    never a read or write outside its buffers (a crash fails the run)."""
    rng = np.random.default_rng(12)
    (g, p), = _pairs(rng, "salt", 1, 90, 310, 40)
    g[g == 255] = 39
    gt, pred = _write(tmp_path, [(g, p)])
    data = bytearray((pred / "0.png").read_bytes())
    intact = native.count_png_pair(str(gt / "0.png"), str(pred / "0.png"), 256, 255, False)
    start, end = _idat_span(data)
    refused = 0
    for trial in range(400):
        bad = bytearray(data)
        for _ in range(1 + trial % 3):
            pos = int(rng.integers(start + 2, end))  # past the zlib header
            bad[pos] ^= 1 << int(rng.integers(0, 8))
        (pred / "0.png").write_bytes(bytes(bad))
        got = native.count_png_pair(str(gt / "0.png"), str(pred / "0.png"), 256, 255,
                                    False)
        if got is None:
            refused += 1
        else:
            assert got == intact, trial
    assert refused > 350


@pytest.mark.parametrize("path", ["native", "numba"])
def test_a_damaged_file_is_an_error_naming_it(tmp_path, path, monkeypatch):
    """A flipped bit that still inflates, to other bytes (found with zlib's raw inflate,
    which checks no trailer): both decoders refuse the file, and the run stops with an
    error naming it instead of counting labels the file does not hold. (Before the
    checksum was checked, the extension and the Numba decoder counted it.)"""
    import zlib

    from segbench.errors import InputError
    from segbench.io import _png

    if path == "native" and native is None:
        pytest.skip("C extension not built")
    if path == "numba":
        monkeypatch.setattr(_core, "_NATIVE", [None])
    rng = np.random.default_rng(14)
    (g, p), = _pairs(rng, "salt", 1, 60, 200, 20)
    g[g == 255] = 19
    gt, pred = _write(tmp_path, [(g, p)])
    data = (pred / "0.png").read_bytes()
    start, end = _idat_span(data)
    want = zlib.decompress(data[start:end])
    for pos in range(start + 20, end - 4):
        bad = bytearray(data)
        bad[pos] ^= 0x10
        raw = zlib.decompressobj(-15)
        try:
            got = raw.decompress(bytes(bad[start + 2 : end]))
        except zlib.error:
            continue
        if raw.eof and len(got) == len(want) and got != want:
            break
    else:
        pytest.fail("no flip of the stream inflated to other bytes")
    (pred / "0.png").write_bytes(bytes(bad))
    assert _png.decode_label_png(bytes(bad), 10**8) is None
    if native is not None:
        assert native.count_png_pair(str(gt / "0.png"), str(pred / "0.png"), 20, 255,
                                     False) is None
    with pytest.raises(InputError, match=r"0\.png"):
        _run(gt, pred, 20)


@needs_native
@pytest.mark.parametrize("build", ["native", "portable", "sse2"])
def test_checksum_of_the_largest_sums(tmp_path, build, request):
    """Maps of label 255 stored uncompressed and compressed: every inflated byte 255 but
    the filter bytes, the largest sums the checksum's blocks accumulate (an overflow in
    any of its SIMD lanes refuses the file). Sizes around its 5,552-byte blocks."""
    module = native if build == "native" else request.getfixturevalue(build)
    for h, w in [(1, 5551), (1, 5552), (2, 5552), (3, 1850), (11, 1009), (64, 700)]:
        img = np.full((h, w), 255, np.uint8)
        for level in (0, 6):
            _filtered_png(tmp_path / "m.png", img, np.zeros(h, np.int64), level=level)
            got = module.count_png_pair(str(tmp_path / "m.png"), str(tmp_path / "m.png"),
                                        256, 300, False)
            assert got is not None, (h, w, level)


def test_numba_checksum_equals_zlibs():
    import zlib

    from segbench.io import _png

    rng = np.random.default_rng(16)
    data = rng.integers(0, 256, 30000, dtype=np.uint8)
    full = np.full(30000, 255, np.uint8)
    for n in (0, 1, 15, 5551, 5552, 5553, 11104, 11105, 30000):
        assert _png._adler32(data, n) == zlib.adler32(data[:n].tobytes()), n
        assert _png._adler32(full, n) == zlib.adler32(full[:n].tobytes()), n
