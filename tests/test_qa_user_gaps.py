"""What users would still miss after the QA round of 2026-12-07, mended: each test fails
on the code before the mend."""

from __future__ import annotations

import copy
import csv
import functools
import pickle

import numpy as np
import pytest
import scipy.io as sio
from PIL import Image

from segbench.cli import main
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.errors import InputError


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    """Three 48x64 images with three annotators each, in the BSDS500 layout."""
    root = tmp_path_factory.mktemp("synth")
    items = make_synthetic_dataset(3, shape=(48, 64), n_annotators=3, seed=5)
    write_synthetic_dataset(root, items, split="val")
    return root, items


def _random_maps(folder, items, seed):
    """One 8-bit soft map of uniform noise per item, ``<iid>.png`` in ``folder``."""
    folder.mkdir()
    rng = np.random.default_rng(seed)
    for it in items:
        Image.fromarray((rng.random(it.image.shape[:2]) * 255).astype(np.uint8)).save(
            folder / f"{it.iid}.png")
    return folder


# --- a .mat ucm2 that holds no numbers -------------------------------------------------


def test_a_mat_ucm2_of_text_or_cells_says_so(tmp_path):
    from segbench.io import read_prediction

    sio.savemat(tmp_path / "text.mat", {"ucm2": "hello"})
    cells = np.empty(2, object)
    cells[0], cells[1] = np.zeros((3, 3)), np.ones((2, 2))
    sio.savemat(tmp_path / "cells.mat", {"ucm2": cells})
    with pytest.raises(InputError, match="ucm2 holds text, not numbers"):
        read_prediction(tmp_path / "text.mat")
    with pytest.raises(InputError, match=r"ucm2 holds objects \(a MATLAB cell"):
        read_prediction(tmp_path / "cells.mat")


# --- photographs ----------------------------------------------------------------------


def test_sweep_without_photographs_names_the_option(synth, capsys):
    root, _ = synth
    assert main(["superpixel-sweep", "--gt", str(root / "groundTruth" / "val"),
                 "--k", "10,20", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--images" in err and "give image_dir" not in err


def test_consistency_figures_without_photographs_fail_before_the_work(synth, capsys):
    root, _ = synth
    out = root.parent / "cons_no_images"
    assert main(["consistency", "--gt", str(root / "groundTruth" / "val"), "--figures",
                 "--segmenter", "kmeans", "--pairs", "2", "--out", str(out),
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "3 of 3 images have none (synth000, synth001, synth002)" in err
    assert not out.exists()  # refused before the human part wrote anything


def test_granularity_names_the_images_without_a_photograph(synth, tmp_path):
    import shutil

    from segbench.algorithms.segmenters import kmeans_segmenter
    from segbench.runners._consistency import evaluate_granularity

    root, _ = synth
    copy_root = tmp_path / "root"
    shutil.copytree(root, copy_root)
    (copy_root / "images" / "val" / "synth000.png").unlink()
    seg = functools.partial(kmeans_segmenter, step=1)
    with pytest.raises(InputError, match=r"1 of 3 images has none \(synth000\)"):
        evaluate_granularity(copy_root, seg, split="val", progress=False)


def test_granularity_save_segs_is_refused_as_the_run_folder_and_taken_inside_it(
    synth, tmp_path, capsys
):
    root, _ = synth
    args = ["granularity", "--gt", str(root), "--split", "val", "--segmenter",
            "kmeans", "--quiet"]
    out = tmp_path / "run"
    assert main([*args, "--out", str(out), "--save-segs", str(out)]) == 2
    assert "--save-segs is the --out folder" in capsys.readouterr().err
    assert not out.exists()
    assert main([*args, "--out", str(out), "--save-segs", str(out / "segs")]) == 0
    assert (out / "result_granularity.json").is_file()
    saved = [p.name for p in (out / "segs").iterdir() if p.name[0] != "."]
    assert saved and all(n.startswith("synth00") and n.endswith(".png") for n in saved)
    assert main([*args, "--out", str(out), "--save-segs", str(out / "segs")]) == 0


# --- region --labels on boundary maps --------------------------------------------------


def test_region_labels_on_boundary_maps_warns_and_on_label_maps_does_not(
    synth, tmp_path, capsys
):
    from skimage.segmentation import find_boundaries

    root, items = synth
    soft, labels = tmp_path / "soft", tmp_path / "labels"
    soft.mkdir()
    labels.mkdir()
    for item in items:
        seg = np.asarray(item.segmentations[0]).astype(np.uint8)
        edges = find_boundaries(seg, mode="inner")
        grey = np.where(edges, 40 + (np.arange(seg.size).reshape(seg.shape) % 200), 0)
        Image.fromarray(grey.astype(np.uint8)).save(soft / f"{item.iid}.png")
        seg[edges] = 0  # 0 on the lines between regions, as a watershed writes
        Image.fromarray(seg).save(labels / f"{item.iid}.png")
    gt = str(root / "groundTruth" / "val")
    assert main(["region", "--gt", gt, "--pred", str(soft), "--labels", "--quiet"]) == 0
    assert "look like boundary maps, not label maps" in capsys.readouterr().err
    assert main(["region", "--gt", gt, "--pred", str(labels), "--labels", "--quiet"]) == 0
    assert "look like boundary maps" not in capsys.readouterr().err


# --- superpixels ------------------------------------------------------------------------


def test_per_annotator_csv_has_ue_norm_and_the_table_says_ev_is_missing(
    synth, tmp_path, capsys
):
    root, items = synth
    pred = tmp_path / "sp"
    pred.mkdir()
    for item in items:
        h, w = item.image.shape[:2]
        grid = (np.arange(h)[:, None] // 8) * 8 + np.arange(w)[None, :] // 8
        Image.fromarray(grid.astype(np.uint16)).save(pred / f"{item.iid}.png")
    out = tmp_path / "run"
    assert main(["superpixel", "--gt", str(root / "groundTruth" / "val"), "--pred",
                 str(pred), "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "EV n/a: explained variation needs the photographs" in printed
    assert " nan" not in printed
    with open(out / "per_annotator.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0])[:5] == ["image", "annotator", "ue", "ue_norm", "cue"]
    for row in rows:
        ue = float(row["ue"])
        assert float(row["ue_norm"]) == pytest.approx(ue / (1 + ue), rel=1e-5)


def test_a_negative_k_list_is_read_as_a_value(synth, capsys):
    root, _ = synth
    assert main(["superpixel-sweep", "--gt", str(root), "--split", "val",
                 "--k", "-5,100", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "K values must be positive integers, got [-5, 100]" in err
    assert "expected one argument" not in err


# --- streaming evaluators: a shard merged twice ---------------------------------------


def _semantic_shard(seed):
    from segbench.semantic import SemanticEval

    rng = np.random.default_rng(seed)
    ev = SemanticEval(3)
    ev.update(rng.integers(0, 3, (2, 8, 8)), rng.integers(0, 3, (2, 8, 8)))
    return ev


def test_the_same_shard_merged_twice_is_refused():
    from segbench.semantic import SemanticEval

    a, b = _semantic_shard(0), _semantic_shard(1)
    total = SemanticEval(3)
    total.merge(a)
    total.merge(b.state_dict())
    whole = total.confusion().copy()
    for again in (a, b.state_dict(), pickle.loads(pickle.dumps(a.state_dict()))):
        with pytest.raises(InputError, match="merged already"):
            total.merge(again)
    assert (total.confusion() == whole).all()
    outer = SemanticEval(3)
    outer.merge(total)
    with pytest.raises(InputError, match="merged already"):
        outer.merge(a)  # inside total already


def test_copies_of_an_empty_evaluator_and_a_reset_one_merge_as_shards():
    from segbench.semantic import SemanticEval

    rng = np.random.default_rng(3)
    gt, pred = rng.integers(0, 3, (2, 8, 8)), rng.integers(0, 3, (2, 8, 8))
    workers = [copy.deepcopy(SemanticEval(3)) for _ in range(3)]
    total = SemanticEval(3)
    for w in workers:
        w.update(pred, gt)
        total.merge(pickle.loads(pickle.dumps(w)))
    reused, again = SemanticEval(3), SemanticEval(3)
    for _ in range(3):
        reused.update(pred, gt)
        again.merge(reused.state_dict())
        reused.reset()
    one = SemanticEval(3)
    for _ in range(3):
        one.update(pred, gt)
    assert (total.confusion() == one.confusion()).all()
    assert (again.confusion() == one.confusion()).all()


def test_a_boundary_evaluator_merged_twice_is_refused_without_ids():
    import segbench

    rng = np.random.default_rng(0)
    gt = np.zeros((32, 32), bool)
    gt[16, :] = True
    ev = segbench.BoundaryEval()
    ev.update(rng.random((32, 32)), gt)
    total = segbench.BoundaryEval()
    total.merge(ev.state_dict())
    with pytest.raises(InputError, match="merged already"):
        total.merge(ev.state_dict())


# --- masked arrays ----------------------------------------------------------------------


def test_masked_arrays_with_pixels_masked_are_refused_and_others_read():
    import segbench
    from segbench.io import as_prediction
    from segbench.semantic import SemanticEval

    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, (8, 8))
    masked = np.ma.masked_array(labels, mask=np.zeros((8, 8), bool))
    ev = SemanticEval(3)
    ev.update(labels, masked)  # nothing masked: read as its data
    assert ev.results()["n_pixels"] == 64
    masked[:4] = np.ma.masked
    with pytest.raises(InputError, match="32 pixel.s. masked"):
        ev.update(labels, masked)
    gt = np.zeros((32, 32), bool)
    gt[16] = True
    soft = np.ma.masked_array(rng.random((32, 32)), mask=np.zeros((32, 32), bool))
    soft[:8] = np.ma.masked
    with pytest.raises(InputError, match="mask would be ignored"):
        segbench.BoundaryEval().update(soft, gt)
    with pytest.raises(InputError, match="^gt: a masked array"):
        segbench.BoundaryEval().update(rng.random((32, 32)), np.ma.masked_array(gt, gt))
    with pytest.raises(InputError, match="mask would be ignored"):
        as_prediction(soft)


def test_compare_of_a_sweep_folder_says_what_it_is(synth, tmp_path, capsys):
    root, _ = synth
    sweep = tmp_path / "sweep"
    assert main(["superpixel-sweep", "--gt", str(root), "--split", "val", "--k", "10,20",
                 "--out", str(sweep), "--no-plot", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["compare", str(sweep), str(sweep)]) == 2
    assert "a superpixel-sweep folder (sweep.json" in capsys.readouterr().err


def test_the_first_bad_file_is_named_when_it_is_met(synth, tmp_path, capsys):
    """A run of many images named its bad files only at its end; the first is now
    said at once (the run goes on and still names them all at its end)."""
    from segbench.io import write_soft_map

    root, items = synth
    pred = tmp_path / "pred"
    pred.mkdir()
    for item in items:
        write_soft_map(pred / f"{item.iid}.png", np.full(item.image.shape[:2], 0.5))
    (pred / "synth001.png").write_text("not a png")
    args = ["boundary", "--gt", str(root / "groundTruth" / "val"), "--pred", str(pred)]
    assert main(args) == 2  # with its progress shown
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "segbench:" in ln]
    warned = [ln[ln.index("segbench: "):] for ln in lines if "the run goes on" in ln]
    assert len(warned) == 1 and warned[0].startswith("segbench: warning: ")
    assert warned[0].count("synth001.png") == 1
    assert lines[-1].startswith("segbench: error: ") and "synth001.png" in lines[-1]
    assert main([*args, "--quiet"]) == 2  # a script's run: its error alone
    assert capsys.readouterr().err.count("\n") == 1


# --- QA round of 2026-12-07 night (helper-50): streaming evaluators -----------------------


def test_boundary_eval_takes_the_presets_nms_unless_given(synth):
    """BoundaryEval(protocol='nyud') recorded the preset but scored without its NMS
    (nms defaulted to False over the preset's)."""
    import segbench
    from segbench.api import protocol_params

    root, items = synth
    preset = protocol_params("boundary", "nyud")["nms"]
    assert isinstance(preset, dict) and preset["r"] == 4
    rng = np.random.default_rng(1)
    maps = {it.iid: rng.random(it.image.shape[:2]) for it in items}
    gt = root / "groundTruth" / "val"
    ev = segbench.BoundaryEval(protocol="nyud")
    for iid, m in maps.items():
        ev.update(m, str(gt / f"{iid}.mat"))
    assert ev.params["nms"]["r"] == 4
    folder = segbench.evaluate("boundary", gt=gt, pred=maps, protocol="nyud",
                               progress=False)
    assert ev.compute().metrics["ODS"] == folder.metrics["ODS"]
    assert segbench.BoundaryEval(protocol="nyud", nms=False).params["nms"] in (None, False)
    assert segbench.BoundaryEval().params["nms"] in (None, False)


def test_graded_edge_arrays_in_memory_are_read_as_their_png_is(synth, tmp_path):
    """A uint8 ground truth of anti-aliased strokes was read as a label map in memory
    (each grey level a region), while its PNG is an edge map cut at half scale."""
    from scipy import ndimage

    import segbench

    _, items = synth
    rng = np.random.default_rng(2)
    mem, files = segbench.BoundaryEval(), segbench.BoundaryEval()
    for it in items:
        from segbench.primitives import seg2bdry

        bdry = np.asarray(seg2bdry(it.segmentations[0]), float)
        graded = np.clip(ndimage.gaussian_filter(bdry, 0.5) * 510, 0, 255).astype(np.uint8)
        assert len(np.unique(graded)) > 3
        Image.fromarray(graded).save(tmp_path / f"{it.iid}.png")
        pb = rng.random(graded.shape)
        mem.update(pb, [graded], ids=it.iid)
        files.update(pb, str(tmp_path / f"{it.iid}.png"), ids=it.iid)
    a, b = mem.compute().metrics, files.compute().metrics
    assert a.keys() == b.keys()
    assert all(a[k] == b[k] or (a[k] != a[k] and b[k] != b[k]) for k in a)  # NaN R50


def test_an_earlier_updates_error_raised_by_a_later_update_keeps_the_later_one(synth):
    """With workers, update 2 raised update 1's error (found in the pool) and its own
    image was dropped without a word: a loop that catches the error lost a batch."""
    import time

    import segbench

    root, items = synth
    gt = root / "groundTruth" / "val"
    rng = np.random.default_rng(4)
    ev = segbench.BoundaryEval(workers=2)
    ev.update(rng.random((64, 48)), str(gt / "synth000.mat"), ids="bad")  # transposed
    deadline = time.time() + 30
    while ev._pending and not ev._pending[0][1].done() and time.time() < deadline:
        time.sleep(0.01)  # the model's forward pass: the pool finds the error
    raised = []
    for iid in ("synth001", "synth002"):
        try:
            ev.update(rng.random((48, 64)), str(gt / f"{iid}.mat"), ids=iid)
        except InputError as exc:
            raised.append(str(exc))
    assert len(raised) == 1 and "nothing of update 1 is counted" in raised[0]
    assert "update 2, is counted" in raised[0]
    assert [r["id"] for r in ev.compute().per_item] == ["synth001", "synth002"]


# --- QA round of 2026-12-07 night (helper-51): folders at the edges ----------------------


def test_a_run_of_another_family_leaves_a_stopped_runs_mark(synth, tmp_path):
    """A run that stopped while writing its boundary files left the mark; a later
    region run into the folder removed it, and the mixed boundary files were read."""
    from segbench.api import read_run

    root, items = synth
    soft, labels = tmp_path / "soft", tmp_path / "labels"
    soft.mkdir()
    labels.mkdir()
    for it in items:
        Image.fromarray((np.random.default_rng(0).random(it.image.shape[:2]) * 255)
                        .astype(np.uint8)).save(soft / f"{it.iid}.png")
        Image.fromarray(np.asarray(it.segmentations[0]).astype(np.uint8)).save(
            labels / f"{it.iid}.png")
    gt, out = str(root / "groundTruth" / "val"), tmp_path / "run"
    assert main(["boundary", "--gt", gt, "--pred", str(soft), "--out", str(out),
                 "--name", "algo", "--no-plot", "--quiet"]) == 0
    # as a boundary rerun stopped midway leaves it
    (out / ".segbench-writing").write_text("stopped\nfamilies: boundary\n")
    assert main(["region", "--gt", gt, "--pred", str(labels), "--labels", "--out",
                 str(out), "--name", "algo", "--quiet"]) == 0
    assert len(read_run(out, "region").per_item) == 3
    with pytest.raises(InputError, match="stopped while writing its boundary files"):
        read_run(out, "boundary")
    assert main(["boundary", "--gt", gt, "--pred", str(soft), "--out", str(out),
                 "--name", "algo", "--no-plot", "--quiet"]) == 0
    assert len(read_run(out, "boundary").per_item) == 3
    assert not (out / ".segbench-writing").exists()


def test_a_map_rerun_with_other_settings_leaves_no_map_of_the_old_ones(
    synth, tmp_path, monkeypatch
):
    """An nms rerun with new settings, stopped midway, left maps of the old settings
    under a marker of the new ones, and they were scored without a word."""
    import segbench.algorithm_folders as af

    _, items = synth
    raw = _random_maps(tmp_path / "raw", items, 5)
    out = tmp_path / "maps"
    af.nms_folder(raw, out, progress=False)
    assert len(list(out.glob("*.png"))) == 3

    def stopped(job, **options):
        raise KeyboardInterrupt  # the run is stopped before any map of r=3 is made

    monkeypatch.setattr(af, "_nms_one", stopped)
    with pytest.raises(KeyboardInterrupt):
        af.nms_folder(raw, out, r=3, progress=False)
    assert list(out.glob("*.png")) == []  # none of r=1 left under the marker of r=3
    monkeypatch.undo()
    af.nms_folder(raw, out, r=3, progress=False)
    assert len(list(out.glob("*.png"))) == 3


def test_a_map_run_refused_by_the_lock_leaves_the_folders_settings(synth, tmp_path):
    from segbench.algorithm_folders import nms_folder
    from segbench.engine import lock_run_folder, release_run_folder

    _, items = synth
    raw = tmp_path / "raw"
    raw.mkdir()
    for it in items:
        Image.fromarray(np.zeros(it.image.shape[:2], np.uint8)).save(raw / f"{it.iid}.png")
    out = tmp_path / "maps"
    nms_folder(raw, out, progress=False)
    marker = (out / ".segbench-nms").read_text()
    held = lock_run_folder(out)  # another run writing there
    try:
        with pytest.raises(InputError, match="another segbench run is writing"):
            nms_folder(raw, out, r=3, progress=False)
    finally:
        release_run_folder(held)
    assert (out / ".segbench-nms").read_text() == marker


@pytest.fixture(scope="module")
def site_inputs(synth, tmp_path_factory):
    """A copy of the synthetic root (its photographs may be damaged) and a boundary
    run on it."""
    import shutil

    root, items = synth
    base = tmp_path_factory.mktemp("site_inputs")
    copy_root = base / "root"
    shutil.copytree(root, copy_root)
    pred = _random_maps(base / "pred", items, 6)
    run = base / "run"
    assert main(["boundary", "--gt", str(copy_root / "groundTruth" / "val"), "--pred",
                 str(pred), "--out", str(run), "--no-plot", "--quiet"]) == 0
    return copy_root, run


def _files(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_a_site_build_into_a_folder_being_built_is_refused_untouched(site_inputs,
                                                                     tmp_path, capsys):
    from segbench.io import hold_lock, release_lock

    root, run = site_inputs
    site = tmp_path / "site"
    args = ["site", "--gt", str(root), "--split", "val", "--results", str(run), "--out",
            str(site), "--quiet"]
    assert main(args) == 0
    before = _files(site)
    held = hold_lock(site / ".segbench-lock", "busy{holder}")  # another build
    try:
        assert main(args) == 2
        assert "another segbench site is building this folder" in capsys.readouterr().err
    finally:
        release_lock(held)
    assert _files(site) == before
    assert main(args) == 0


def test_a_truncated_photograph_is_named_and_the_last_site_kept(site_inputs, tmp_path,
                                                                capsys):
    import shutil

    root, run = site_inputs
    damaged = tmp_path / "root"
    shutil.copytree(root, damaged)
    site = tmp_path / "site"
    args = ["site", "--gt", str(damaged), "--split", "val", "--results", str(run),
            "--out", str(site), "--quiet"]
    assert main(args) == 0
    capsys.readouterr()
    pages = [f for f in _files(site) if f.endswith(".html")]
    photo = damaged / "images" / "val" / "synth001.png"
    photo.write_bytes(photo.read_bytes()[:200])
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "synth001.png: corrupt or truncated photograph" in err
    assert [f for f in _files(site) if f.endswith(".html")] == pages


# --- QA round of 2026-12-07 night (helper-49): detector and map commands ------------------


@pytest.mark.parametrize("option,value,words", [
    ("--s", "99999999999999999999", "--s must be at most 1000 pixels"),
    ("--r", "2000000", "--r must be at most 1000 pixels"),  # hours that Ctrl-C can't stop
    ("--m", "1e39", "--m must be a finite number above 0 in float32's range"),
    ("--m", "1e-50", "--m must be a finite number above 0 in float32's range"),
])
def test_nms_options_out_of_range_are_one_line_before_anything(synth, tmp_path, capsys,
                                                               option, value, words):
    _, items = synth
    raw = tmp_path / "raw"
    raw.mkdir()
    Image.fromarray(np.zeros(items[0].image.shape[:2], np.uint8)).save(raw / "a.png")
    out = tmp_path / "out"
    assert main(["nms", "--pred", str(raw), "--out", str(out), option, value]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()


def test_ucm_orientations_out_of_range_are_one_line(tmp_path, capsys):
    raw = tmp_path / "raw"
    raw.mkdir()
    Image.fromarray(np.zeros((8, 8), np.uint8)).save(raw / "a.png")
    assert main(["ucm", "--pred", str(raw), "--out", str(tmp_path / "o"),
                 "--orientations", "99999999999999999999"]) == 2
    assert "--orientations must be 0 (exact) or a count up to 1024" in \
        capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_a_file_that_is_not_numpy_under_an_npy_name_says_so(tmp_path):
    """A PNG renamed .npy was said to hold pickled objects (numpy's advice to load it
    unsafely passed through, in ucm)."""
    from segbench.algorithms._owt_ucm import _read_signal
    from segbench.io import read_prediction

    f = tmp_path / "x.npy"
    Image.fromarray(np.zeros((4, 4), np.uint8)).save(f, format="PNG")
    for read in (read_prediction, _read_signal):
        with pytest.raises(InputError) as err:
            read(f)
        assert "not a NumPy .npy file" in str(err.value)
        assert "pickle" not in str(err.value)


def test_a_16_bit_colour_png_is_refused_not_cut_to_8_bits(tmp_path):
    from segbench.io import read_image

    rgb16 = tmp_path / "rgb16.png"
    data = (np.arange(8 * 8 * 3).reshape(8, 8, 3) * 257).astype(">u2")
    import zlib, struct  # noqa: E401 - a 16-bit RGB PNG, which Pillow cannot write

    raw = b"".join(b"\x00" + row.tobytes() for row in data)

    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))

    rgb16.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(
        ">IIBBBBB", 8, 8, 16, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b""))
    with pytest.raises(InputError, match="a 16-bit RGB PNG, which is read at 8 bits"):
        read_image(rgb16)


def test_thinned_maps_denser_than_15_percent_are_said_to_be_thinned():
    """segbench's own gm maps (22% nonzero, thin lines) were not caught, so
    ucm --smooth 0 flooded through them without a warning."""
    from scipy import ndimage

    from segbench.algorithms import looks_thinned

    grid = np.zeros((90, 90))
    grid[::9, :] = 0.7
    grid[:, ::9] = 0.4
    assert 0.2 < (grid > 0).mean() < 0.25
    assert looks_thinned(grid)
    assert not looks_thinned(ndimage.gaussian_filter(grid, 2))  # a raw, blurred map


def test_result_files_reproduce_byte_for_byte(site_inputs, tmp_path, monkeypatch):
    """Two identical runs differed in their results' creation time, and a rerun that
    reused every record rewrote it."""
    import time

    root, _ = site_inputs
    pred = root.parent / "pred"
    gt = str(root / "groundTruth" / "val")

    def run(out):
        assert main(["boundary", "--gt", gt, "--pred", str(pred), "--out", str(out),
                     "--no-plot", "--quiet"]) == 0
        return (out / "result_boundary.json").read_bytes()

    first = run(tmp_path / "a")
    time.sleep(1.1)
    assert run(tmp_path / "a") == first  # every record reused: not a byte changed
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    b = run(tmp_path / "b")
    time.sleep(1.1)
    assert run(tmp_path / "c") == b and b"2023-11-14T22:13:20+00:00" in b


def test_messages_of_the_edges(site_inputs, tmp_path, capsys):
    """compare's Ctrl-C line promised saved images; a link to itself was 'a link to a
    missing file'; a site built into its run folder said the run was inside it."""
    from segbench.cli import _interrupted_line

    assert "no comparison was written" in _interrupted_line(["compare", "a", "b"])
    assert "site is not finished" in _interrupted_line(["site", "--out", "s"])
    root, run = site_inputs
    loop = tmp_path / "pred"
    loop.mkdir()
    (loop / "synth000.png").symlink_to("synth000.png")
    assert main(["boundary", "--gt", str(root / "groundTruth" / "val"), "--pred",
                 str(loop), "--ids", "synth000"]) == 2
    assert "a loop of links" in capsys.readouterr().err
    assert main(["site", "--gt", str(root), "--split", "val", "--results", str(run),
                 "--out", str(run), "--quiet"]) == 2
    assert "one of its own inputs" in capsys.readouterr().err


def test_semantic_messages_for_swapped_arguments_and_mixed_sizes():
    from segbench.semantic import SemanticEval

    gt = np.zeros((4, 4), np.uint8)
    gt[1, 1] = 255  # an ignored pixel of the ground truth
    ev = SemanticEval(3)
    with pytest.raises(InputError, match="were the two swapped"):
        ev.update(np.zeros_like(gt), gt)  # (pred, gt): the BoundaryEval order
    with pytest.raises(InputError, match="a batch of maps of different sizes"):
        ev.update([gt[:2], gt], [gt[:2], gt])


def test_a_palette_edge_map_is_said_to_be_a_palette(synth, tmp_path, capsys):
    _, items = synth
    gt, pred = tmp_path / "gt", tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    lines = np.zeros((48, 64), np.uint8)
    lines[::8] = 1
    im = Image.fromarray(lines, mode="P")
    im.putpalette([0, 0, 0, 255, 255, 255])
    im.save(gt / "a.png")
    Image.fromarray(lines * 255).save(pred / "a.png")
    assert main(["boundary", "--gt", str(gt), "--pred", str(pred), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "a palette image of two values (0, 1)" in err and "strokes are wide" not in err


def test_a_folder_refused_as_the_users_names_its_files_and_ignores_desktop_notes(
    synth, tmp_path, capsys
):
    _, items = synth
    raw = tmp_path / "raw"
    raw.mkdir()
    Image.fromarray(np.zeros(items[0].image.shape[:2], np.uint8)).save(raw / "a.png")
    finder = tmp_path / "finder"
    finder.mkdir()
    (finder / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    assert main(["nms", "--pred", str(raw), "--out", str(finder), "--quiet"]) == 0
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    assert main(["nms", "--pred", str(raw), "--out", str(mine), "--quiet"]) == 2
    assert "did not make (notes.txt;" in capsys.readouterr().err
    assert (mine / "notes.txt").read_text() == "mine"


def test_detector_messages_say_what_is_wrong():
    from segbench.algorithms import pb_cgtg

    image = np.zeros((16, 16, 3), np.uint8)
    with pytest.raises(InputError, match="needs finite weights; 5 of its 5 are NaN"):
        pb_cgtg(image, weights=[float("nan")] * 5)


def test_a_float_photograph_says_what_it_is(tmp_path):
    from segbench.io import read_image

    Image.fromarray(np.zeros((4, 4), np.float32)).save(tmp_path / "f.tif")
    with pytest.raises(InputError, match="a floating-point image") as err:
        read_image(tmp_path / "f.tif")
    assert "16-bit" not in str(err.value)


def test_training_on_the_test_split_is_warned(tmp_path):
    from segbench.algorithm_folders import train_se

    items = make_synthetic_dataset(2, seed=3)
    write_synthetic_dataset(tmp_path / "d", items, split="test")
    with pytest.warns(UserWarning, match="training on the test split"):
        train_se(tmp_path / "d", tmp_path / "m.npz", split="test", progress=False,
                 options={"n_trees": 1, "n_pos": 200, "n_neg": 200, "max_depth": 3})
