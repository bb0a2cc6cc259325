"""The MAT-file v5 reader gives what scipy.io.loadmat gives, or defers to it."""

from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse

from segbench.errors import InputError
from segbench.io._mat import load_mat
from segbench.io._mat5 import read_mat5

SHARED = Path(__file__).resolve().parents[2] / "shared"


def _scipy(path):
    out = scipy.io.loadmat(path, squeeze_me=False, struct_as_record=True)
    return {k: v for k, v in out.items() if not k.startswith("__")}


def _assert_same(ours, ref, where="value"):
    """Same Python type, dtype, shape and values, recursively through cells and structs."""
    assert type(ours) is type(ref), f"{where}: {type(ours)} vs {type(ref)}"
    assert ours.dtype == ref.dtype, f"{where}: {ours.dtype} vs {ref.dtype}"
    assert ours.shape == ref.shape, f"{where}: {ours.shape} vs {ref.shape}"
    if ref.dtype.names:
        flat_o, flat_r = ours.reshape(-1), ref.reshape(-1)
        for name in ref.dtype.names:
            for i in range(ref.size):
                _assert_same(flat_o[i][name], flat_r[i][name], f"{where}[{i}].{name}")
    elif ref.dtype == object:
        for i, (o, r) in enumerate(zip(ours.reshape(-1), ref.reshape(-1))):
            _assert_same(o, r, f"{where}[{i}]")
    else:
        assert np.array_equal(ours, ref), f"{where}: values differ"
        assert ours.flags.writeable and ours.flags.f_contiguous == ref.flags.f_contiguous


def _assert_reads_like_scipy(path):
    ours, ref = read_mat5(path), _scipy(path)
    assert ours is not None, f"{path}: deferred to scipy"
    assert list(ours) == list(ref)
    for name in ref:
        _assert_same(ours[name], ref[name], f"{path.name}:{name}")


@pytest.mark.parametrize("compress", [False, True])
def test_variables_written_by_scipy(tmp_path, compress):
    rng = np.random.default_rng(0)
    struct = np.empty((2, 3), dtype=[("Segmentation", object), ("Boundaries", object)])
    for i in range(6):
        struct.reshape(-1)[i] = (rng.integers(1, 9, (4, 5)).astype(np.uint16),
                                 rng.random((4, 5)) > 0.5)
    cell = np.empty((1, 4), dtype=object)
    cell[0, 0] = np.arange(12.0).reshape(3, 4)
    cell[0, 1] = struct[:1, :1]
    cell[0, 2] = np.zeros((0, 3))
    cell[0, 3] = np.array([[7]], dtype=np.int8)
    variables = {f"a_{np.dtype(t).name}": rng.integers(0, 100, (3, 7)).astype(t)
                 for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                           np.int64, np.uint64, np.float32, np.float64)}
    variables.update(logical=rng.random((5, 2)) > 0.5, volume=rng.random((2, 3, 4)),
                     scalar=3.5, small_ints=np.array([[1.0, 2.0, 255.0]]),
                     groundTruth=cell, records=struct, empty=np.zeros((0, 0)))
    path = tmp_path / "v.mat"
    scipy.io.savemat(path, variables, do_compression=compress)
    _assert_reads_like_scipy(path)


def test_what_it_defers_to_scipy(tmp_path):
    """Char, complex, sparse, v4, big-endian and damaged files: None, and load_mat goes
    on to scipy.io, which reads them or is refused with the file named."""
    cases = {"char": {"name": "bsds"}, "complex": {"z": np.array([[1 + 2j]])},
             "sparse": {"s": scipy.sparse.eye(3, format="csc")}}
    for label, variables in cases.items():
        path = tmp_path / f"{label}.mat"
        scipy.io.savemat(path, variables)
        assert read_mat5(path) is None, label
        assert list(load_mat(path)) == list(variables), label
    v4 = tmp_path / "v4.mat"
    scipy.io.savemat(v4, {"x": np.eye(2)}, format="4")
    assert read_mat5(v4) is None
    assert np.array_equal(load_mat(v4)["x"], np.eye(2))

    good = tmp_path / "good.mat"
    scipy.io.savemat(good, {"x": np.arange(100.0).reshape(10, 10)}, do_compression=True)
    data = good.read_bytes()
    big_endian = tmp_path / "be.mat"
    big_endian.write_bytes(data[:126] + b"MI" + data[128:])
    truncated = tmp_path / "truncated.mat"
    truncated.write_bytes(data[:-20])
    not_mat = tmp_path / "text.mat"
    not_mat.write_bytes(b"not a mat file at all\n" * 20)
    for path in (big_endian, truncated, not_mat):
        assert read_mat5(path) is None, path.name
        with pytest.raises(InputError, match=path.name):
            load_mat(path)


SAMPLES = [SHARED / "data" / "bsds500" / "groundTruth",
           SHARED / "data" / "bsds500-gpb-owt-ucm",
           SHARED / "fixtures" / "bsr-official" / "inputs"]


@pytest.mark.skipif(not all(p.is_dir() for p in SAMPLES), reason="needs ../shared data")
def test_bsds_files_read_as_scipy_reads_them():
    """Every official and fixture .mat file of a sample: ground truth of every split,
    gPb-owt-ucm ucm2 maps, the BSR fixture segs/ucm2/groundTruth."""
    files = []
    for root in SAMPLES:
        found = sorted(root.rglob("*.mat"))
        files += found if len(found) < 20 else found[::7]
    assert len(files) > 100
    for path in files:
        _assert_reads_like_scipy(path)


def test_a_zlib_bomb_is_refused_not_inflated(tmp_path, monkeypatch):
    import segbench.io._mat5 as mat5
    path = tmp_path / "bomb.mat"
    scipy.io.savemat(path, {"x": np.zeros((1024, 1024))}, do_compression=True)  # 8 MB
    assert path.stat().st_size < 100_000
    monkeypatch.setattr(mat5, "MAX_VARIABLE_BYTES", 1 << 20)
    with pytest.raises(InputError, match="bomb.mat.*more than 1 MB"):
        load_mat(path)
    monkeypatch.setattr(mat5, "MAX_VARIABLE_BYTES", 16 << 20)
    assert load_mat(path)["x"].shape == (1024, 1024)
