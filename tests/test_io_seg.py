"""BSDS300 .seg files: decoding, exact round trips, parity with BSDS500, corruption."""

from collections import defaultdict

import numpy as np
import pytest
import scipy.io

from conftest import DATA, require
from segbench.errors import InputError
from segbench.io import SegFile, read_seg, write_seg

SEG_DIR = DATA / "bsds300-seg-subset" / "human" / "color"
GT_DIR = DATA / "bsds500" / "groundTruth" / "val"

HEADER = ("format ascii cr\ndate Tue Aug 14 18:08:02 2001\nimage 12\nuser 1121\n"
          "width 4\nheight 3\nsegments 3\ngray 0\ninvert 0\nflipflop 0\ndata\n")
# rows: 0 0 1 1 / 0 2 2 1 / 0 0 0 0
RUNS = "0 0 0 1\n1 0 2 3\n0 1 0 0\n2 1 1 2\n1 1 3 3\n0 2 0 3\n"
LABELS = np.array([[0, 0, 1, 1], [0, 2, 2, 1], [0, 0, 0, 0]])


def _write(tmp_path, text, name="x.seg"):
    path = tmp_path / name
    path.write_bytes(text.encode("latin-1"))
    return path


def _seg_files():
    return sorted(require(SEG_DIR).glob("*/*.seg"))


def test_decode_small_file(tmp_path):
    seg = read_seg(_write(tmp_path, HEADER + RUNS))
    assert seg.labels.dtype == np.int32
    np.testing.assert_array_equal(seg.labels, LABELS)
    assert (seg.width, seg.height, seg.shape) == (4, 3, (3, 4))
    assert (seg.segments, seg.image, seg.user) == (3, 12, 1121)
    assert seg.date == "Tue Aug 14 18:08:02 2001"
    assert seg.format == "ascii cr"
    assert (seg.gray, seg.invert, seg.flipflop) == (False, False, False)


def test_write_read_small_file_is_byte_exact(tmp_path):
    src = _write(tmp_path, HEADER + RUNS)
    write_seg(tmp_path / "y.seg", read_seg(src))
    assert (tmp_path / "y.seg").read_bytes() == src.read_bytes()


def test_runs_in_any_order_and_comments_and_unknown_keys(tmp_path):
    lines = RUNS.strip().split("\n")[::-1]
    text = ("# made by hand\n" + HEADER.replace("gray 0\n", "gray 1   # shown in gray\n")
            .replace("data\n", "tool paint 2.0\ndata\n") + "\n".join(lines) + "\n")
    src = _write(tmp_path, text)
    seg = read_seg(src)
    np.testing.assert_array_equal(seg.labels, LABELS)
    assert seg.gray is True
    assert "# made by hand" in seg.header and "tool paint 2.0" in seg.header
    # header kept verbatim (comments, unknown keys); runs rewritten in raster order
    write_seg(tmp_path / "y.seg", seg)
    out = (tmp_path / "y.seg").read_text()
    assert out.startswith("# made by hand\n")
    assert "gray 1   # shown in gray\n" in out and "tool paint 2.0\n" in out
    assert out.endswith("data\n" + RUNS)
    assert read_seg(tmp_path / "y.seg") == seg


def test_crlf_line_ends_are_accepted(tmp_path):
    seg = read_seg(_write(tmp_path, (HEADER + RUNS).replace("\n", "\r\n")))
    np.testing.assert_array_equal(seg.labels, LABELS)
    assert seg.user == 1121


def test_changed_fields_are_rerendered(tmp_path):
    seg = read_seg(_write(tmp_path, HEADER + RUNS))
    changed = seg.replace(user=7, date=None, flipflop=True,
                          labels=np.zeros((2, 5), np.int32), segments=1)
    write_seg(tmp_path / "y.seg", changed)
    out = (tmp_path / "y.seg").read_text()
    assert "user 7\n" in out and "date" not in out and "flipflop 1\n" in out
    assert "width 5\nheight 2\nsegments 1\n" in out
    assert read_seg(tmp_path / "y.seg") == changed


@pytest.mark.parametrize("seed", range(5))
def test_read_write_round_trip_random(tmp_path, seed):
    rng = np.random.default_rng(seed)
    h, w = rng.integers(1, 30, size=2)
    # blocky labels so that runs longer than one pixel occur
    labels = rng.integers(0, 6, size=(h, (w + 2) // 3)).repeat(3, axis=1)[:, :w]
    seg = SegFile(labels=labels, image=int(seed), user=1000 + seed,
                  date="Mon Jan 1 00:00:00 2001", gray=bool(seed % 2),
                  invert=bool(seed % 3 == 0), segments=int(labels.max()) + 3)
    write_seg(tmp_path / "r.seg", seg)
    back = read_seg(tmp_path / "r.seg")
    assert back == seg
    # and the file written from what was read is identical
    write_seg(tmp_path / "r2.seg", back)
    assert (tmp_path / "r2.seg").read_bytes() == (tmp_path / "r.seg").read_bytes()


def test_in_memory_object_gets_the_official_header(tmp_path):
    seg = SegFile(labels=LABELS, image=12, user=1121, date="Tue Aug 14 18:08:02 2001")
    write_seg(tmp_path / "y.seg", seg)
    assert (tmp_path / "y.seg").read_text() == HEADER + RUNS


def test_segfile_validation():
    with pytest.raises(InputError, match="2-D"):
        SegFile(labels=np.zeros(5, int))
    with pytest.raises(InputError, match=">= 0"):
        SegFile(labels=-np.ones((2, 2), int))
    with pytest.raises(InputError, match="segments=1"):
        SegFile(labels=LABELS, segments=1)
    with pytest.raises(InputError, match="integers"):
        SegFile(labels=np.zeros((2, 2)))


def test_official_files_round_trip_byte_exact(tmp_path):
    for path in _seg_files():
        seg = read_seg(path)
        write_seg(tmp_path / "out.seg", seg)
        assert (tmp_path / "out.seg").read_bytes() == path.read_bytes(), path
        assert read_seg(tmp_path / "out.seg") == seg


def test_official_files_match_bsds500_annotator_in_user_id_order():
    """Each .seg is ``Segmentation - 1`` of the annotator at its user id's rank."""
    require(GT_DIR)
    by_image = defaultdict(list)
    for path in _seg_files():
        seg = read_seg(path)
        assert seg.user == int(path.parent.name) and seg.image == int(path.stem)
        by_image[path.stem].append(seg)
    assert sum(map(len, by_image.values())) == 61
    complete = 0
    for iid, segs in by_image.items():
        mat = scipy.io.loadmat(GT_DIR / f"{iid}.mat")["groundTruth"]
        truth = [mat[0, k]["Segmentation"][0, 0].astype(np.int64) - 1
                 for k in range(mat.shape[1])]
        matches = []
        for seg in sorted(segs, key=lambda s: s.user):
            hits = [k for k, t in enumerate(truth)
                    if t.shape == seg.shape and np.array_equal(t, seg.labels)]
            assert len(hits) == 1, (iid, seg.user)
            assert seg.segments == seg.labels.max() + 1
            matches.append(hits[0])
        assert matches == sorted(matches), iid  # ascending user id = ascending position
        if len(segs) == len(truth):  # every annotator present: position = rank
            complete += 1
            assert matches == list(range(len(truth))), iid
    assert complete >= 10


# --- errors ----------------------------------------------------------------------------

def _error(tmp_path, text):
    path = _write(tmp_path, text, "bad.seg")
    with pytest.raises(InputError) as info:
        read_seg(path)
    assert str(path) in str(info.value)
    return str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="file not found") as info:
        read_seg(tmp_path / "none.seg")
    assert "none.seg" in str(info.value)


def test_truncated_run_line(tmp_path):
    msg = _error(tmp_path, HEADER + RUNS[:-3])  # last line cut to "0 2 0"
    assert "line 17" in msg and "found 3" in msg


def test_truncated_file_misses_pixels(tmp_path):
    msg = _error(tmp_path, HEADER + RUNS.rsplit("0 2 0 3\n", 1)[0])
    assert "row 2, col 0" in msg and "no run" in msg


def test_no_data_line(tmp_path):
    assert "no 'data' line" in _error(tmp_path, HEADER.replace("data\n", ""))


def test_empty_data(tmp_path):
    assert "no run lines" in _error(tmp_path, HEADER)


def test_pixel_named_twice(tmp_path):
    msg = _error(tmp_path, HEADER + RUNS + "2 0 1 1\n")
    assert "row 0, col 1" in msg and "2 times" in msg and "lines 12, 18" in msg


@pytest.mark.parametrize("line, problem", [
    ("3 0 0 0", "segments 3"),
    ("-1 0 0 0", "negative"),
    ("0 3 0 0", "row is outside 0..2"),
    ("0 0 2 4", "columns are outside 0..3"),
    ("0 0 3 2", "c1 > c2"),
    ("0 0 x 2", "'x' is not an integer"),
    ("0 0 1.5 2", "'1.5' is not an integer"),
])
def test_bad_run_names_line(tmp_path, line, problem):
    msg = _error(tmp_path, HEADER + line + "\n" + RUNS)
    assert "line 12" in msg and problem in msg


@pytest.mark.parametrize("old, new, problem", [
    ("width 4", "width four", "'width' must be an integer"),
    ("gray 0", "gray 2", "'gray' must be 0 or 1"),
    ("format ascii cr", "format binary cr", "not supported"),
    ("height 3\n", "", "no 'height' line"),
    ("user 1121", "user 1121\nuser 1122", "given twice"),
    ("width 4", "width 0", "must be positive"),
])
def test_bad_header(tmp_path, old, new, problem):
    assert problem in _error(tmp_path, HEADER.replace(old, new) + RUNS)


def test_binary_garbage(tmp_path):
    path = tmp_path / "bad.seg"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(InputError, match="data") as info:
        read_seg(path)
    assert str(path) in str(info.value)


def test_write_seg_needs_segfile(tmp_path):
    with pytest.raises(InputError, match="SegFile"):
        write_seg(tmp_path / "y.seg", LABELS)


def test_a_durable_write_flushes_the_file_and_its_folder(tmp_path, monkeypatch):
    """durable=True: the file is fsynced before the rename and the folder after it (the
    rename is a folder entry); without it, neither; the bytes are the same."""
    import os
    seg = SegFile(np.array([[0, 0, 1], [1, 1, 2]], np.int32))
    synced = []
    real = os.fsync

    def spy(fd):
        synced.append(os.path.isdir(f"/proc/self/fd/{fd}"))
        return real(fd)
    monkeypatch.setattr(os, "fsync", spy)
    write_seg(tmp_path / "a.seg", seg)
    assert synced == []
    write_seg(tmp_path / "b.seg", seg, durable=True)
    if os.path.isdir("/proc/self/fd"):
        assert synced == [False, True]          # the file, then its folder
    else:
        assert len(synced) >= 1
    assert (tmp_path / "a.seg").read_bytes() == (tmp_path / "b.seg").read_bytes()
