"""Issue 40, items 5 and 6: segbench ucm on a float64 .npy oriented stack (a read-only
memory map, never written), and gPb's rsz (and --protocol martin2004's halving)
refused in one line naming the smallest usable size."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import DATA, require

from segbench.algorithms import gpb, owt_ucm
from segbench.cli import main
from segbench.errors import InputError

IMAGE = DATA / "bsds500" / "images" / "test" / "100007.jpg"


def test_ucm_reads_a_float64_oriented_stack_and_leaves_it_as_it_was(tmp_path, capsys):
    rng = np.random.default_rng(0)
    stack = rng.random((40, 50, 8)) - 0.1          # negatives count as 0
    (tmp_path / "p").mkdir()
    np.save(tmp_path / "p" / "a.npy", stack)
    before = (tmp_path / "p" / "a.npy").read_bytes()
    assert main(["ucm", "--pred", str(tmp_path / "p"), "--out", str(tmp_path / "o"),
                 "--quiet"]) == 0
    assert (tmp_path / "p" / "a.npy").read_bytes() == before
    import scipy.io
    got = scipy.io.loadmat(tmp_path / "o" / "a.mat")["ucm2"]
    kept = stack.copy()
    np.testing.assert_array_equal(got, owt_ucm(stack))
    np.testing.assert_array_equal(stack, kept)     # the caller's array not clamped
    ro = stack.copy()
    ro.setflags(write=False)
    np.testing.assert_array_equal(owt_ucm(ro), got)


def _crop(h, w):
    from segbench.io import read_image
    require(IMAGE)
    return read_image(IMAGE)[:h, :w]


def test_gpb_names_the_smallest_usable_rsz(tmp_path, capsys):
    from PIL import Image
    (tmp_path / "i").mkdir()
    Image.fromarray(_crop(40, 60)).save(tmp_path / "i" / "a.png")
    code = main(["detect", "--images", str(tmp_path / "i"), "--out", str(tmp_path / "o"),
                 "--detector", "gpb", "--rsz", "1e-10", "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "a.png: rsz=1e-10 leaves gPb's eigenproblem 1 x 1 pixels" in err
    smallest = float(err.rsplit(" ", 1)[1])
    orient, _, _ = gpb(_crop(40, 60), rsz=smallest)       # the factor named works
    assert orient.shape == (40, 60, 8) and np.isfinite(orient).all()
    with pytest.raises(InputError, match="smallest usable rsz here is"):
        gpb(_crop(40, 60), rsz=smallest * 0.9)


def test_martin2004_names_the_half_resolution(tmp_path, capsys):
    from PIL import Image
    (tmp_path / "i").mkdir()
    Image.fromarray(_crop(4, 40)).save(tmp_path / "i" / "a.png")
    code = main(["detect", "--images", str(tmp_path / "i"), "--out", str(tmp_path / "o"),
                 "--detector", "pb-cgtg", "--protocol", "martin2004", "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "at half resolution (--protocol martin2004 halves this 4x40 (HxW) image to " \
           "2x20)" in err
