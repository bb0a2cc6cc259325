"""Submissions: validation, safe unpacking, neutralised user text, the benchmark run."""

from __future__ import annotations

import argparse
import importlib
import io
import json
import os
import tarfile
import zipfile
from html.parser import HTMLParser

import numpy as np
import pytest
from PIL import Image

from segbench.algorithms.edges import gradient_magnitude
from segbench.datasets._archive import UnsafeArchiveError
from segbench.cli.datasets import add_parsers
from segbench.datasets.bsds import BSDS300, SyntheticDataset
from segbench.datasets.synthetic import write_synthetic_dataset
from segbench.errors import InputError
from segbench.io import SegFile, write_seg, write_segs, write_soft_map

submit_mod = importlib.import_module("segbench.submit")
submit, sanitize_html, clean_name = (submit_mod.submit, submit_mod.sanitize_html,
                                     submit_mod.clean_name)
SubmissionError = submit_mod.SubmissionError

SHAPE = (40, 56)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """A synthetic BSDS500 tree: 3 test images and 1 train image."""
    root = tmp_path_factory.mktemp("data")
    synth = SyntheticDataset(n_images=4, shape=SHAPE, n_annotators=3)
    write_synthetic_dataset(root, synth.synthetic_items[:3], split="test")
    write_synthetic_dataset(root, synth.synthetic_items[3:], split="train")
    return root, synth


def _good(folder, synth, *, ids=("synth000", "synth001", "synth002"), ext="png",
          name="Gradient magnitude", about=None):
    folder.mkdir(parents=True, exist_ok=True)
    for iid in ids:
        pb = gradient_magnitude(synth[iid].image)
        if ext == "png":
            write_soft_map(folder / f"{iid}.png", pb)
        else:
            Image.fromarray(np.round(pb * 255).astype(np.uint8)).save(folder / f"{iid}.{ext}")
    if name is not None:
        (folder / "name.txt").write_text(name + "\n")
    if about is not None:
        (folder / "about.html").write_text(about)
    return folder


# ---------------------------------------------------------------------------------------
# good submissions


def test_good_folder_is_benchmarked(dataset, tmp_path):
    root, synth = dataset
    sub = _good(tmp_path / "sub", synth, about="<p>Sobel-like <em>baseline</em></p>")
    res = submit(sub, tmp_path / "run", dataset=root, progress=False)
    out = tmp_path / "run"
    m = res.boundary.metrics
    assert 0 < m["ODS"] <= m["OIS"] <= 1 and res.region is None
    meta = json.loads((out / "meta.json").read_text())
    assert meta == res.meta
    assert meta["name"] == "Gradient magnitude" and meta["kind"] == "boundary"
    assert meta["prediction_kind"] == "soft" and meta["n_images"] == 3
    assert meta["about_html"] == "<p>Sobel-like <em>baseline</em></p>"
    assert meta["dataset"]["split"] == "test" and meta["dataset"]["name"] == "BSDS500"
    assert meta["date"].endswith("+00:00")
    for f in meta["files"].values():
        assert (out / f).exists()
    assert sorted(p.name for p in (out / "predictions").iterdir()) == \
        ["synth000.png", "synth001.png", "synth002.png"]
    assert [r["id"] for r in json.loads((out / "result_boundary.json").read_text())["per_item"]] \
        == ["synth000", "synth001", "synth002"]
    # the same maps benchmarked directly give the same numbers
    from segbench import evaluate
    ref = evaluate("boundary", root / "groundTruth" / "test", sub, tmp_path / "ref",
                   plot=False, progress=False)
    assert ref.metrics["ODS"] == m["ODS"] and ref.metrics["AP"] == m["AP"]


def _archive(folder, path, kind, wrap="algo"):
    files = sorted(p for p in folder.iterdir() if p.is_file())
    if kind == "zip":
        with zipfile.ZipFile(path, "w") as zf:
            for p in files:
                zf.write(p, f"{wrap}/{p.name}" if wrap else p.name)
            zf.writestr("__MACOSX/._junk", b"junk")
    else:
        with tarfile.open(path, "w:gz" if kind == "tgz" else "w") as tf:
            for p in files:
                tf.add(p, f"{wrap}/{p.name}" if wrap else p.name)
    return path


@pytest.mark.parametrize("kind,wrap", [("tgz", "algo"), ("zip", "algo"), ("tar", None)])
def test_archives_with_or_without_a_wrapping_folder(dataset, tmp_path, kind, wrap):
    root, synth = dataset
    sub = _good(tmp_path / "sub", synth, ext="bmp")
    arc = _archive(sub, tmp_path / f"sub.{'tar.gz' if kind == 'tgz' else kind}", kind,
                   wrap)
    res = submit(arc, tmp_path / "run", dataset=root, progress=False, plot=False)
    assert res.meta["source"] == arc.name and res.meta["n_images"] == 3
    assert not [p for p in (tmp_path / "run").iterdir() if p.name.startswith(".upload")]


def test_mat_submission_runs_region_too(dataset, tmp_path):
    root, synth = dataset
    sub = tmp_path / "sub"
    sub.mkdir()
    for iid in ("synth000", "synth001", "synth002"):
        write_segs(sub / f"{iid}.mat", [synth[iid].segmentations[0], np.ones(SHAPE, int)])
    (sub / "name.txt").write_text("Annotator one\n")
    res = submit(sub, tmp_path / "run", dataset=root, progress=False)
    assert res.meta["kind"] == "boundary+region" and res.meta["prediction_kind"] == "segs"
    assert res.region is not None and 0 < res.region.metrics["covering_ODS"] <= 1
    for f in ("result_region.json", "eval_cover.txt", "eval_RI_VOI.txt"):
        assert (tmp_path / "run" / f).is_file()


def test_bsds300_dataset_is_read_directly(tmp_path):
    synth = SyntheticDataset(n_images=2, shape=(24, 32), n_annotators=2)
    root = tmp_path / "BSDS300"
    (root / "images" / "test").mkdir(parents=True)
    for k, it in enumerate(synth.synthetic_items):
        Image.fromarray(it.image).save(root / "images" / "test" / f"{k + 1}.jpg")
        for u, seg in enumerate(it.segmentations):
            d = root / "human" / "color" / str(1100 + u)
            d.mkdir(parents=True, exist_ok=True)
            write_seg(d / f"{k + 1}.seg", SegFile(labels=seg - 1, user=1100 + u))
    sub = tmp_path / "sub"
    sub.mkdir()
    for k, it in enumerate(synth.synthetic_items):
        write_soft_map(sub / f"{k + 1}.png", gradient_magnitude(it.image))
    res = submit(sub, tmp_path / "run", dataset=BSDS300(root), name="cli name",
                 progress=False, plot=False)
    assert res.meta["dataset"]["name"] == "BSDS300"
    assert not (tmp_path / "run" / "groundTruth").exists()   # the .seg files are read
    assert [r["id"] for r in res.boundary.per_item] == ["1", "2"]
    assert res.boundary.name == "cli name"


# ---------------------------------------------------------------------------------------
# validation


def test_every_problem_is_listed(dataset, tmp_path):
    root, synth = dataset
    sub = _good(tmp_path / "sub", synth, ids=("synth000", "synth001", "synth003"),
                name=None)
    rgb = np.zeros((*SHAPE, 3), np.uint8)
    rgb[..., 0] = 200
    Image.fromarray(rgb).save(sub / "synth001.png")                      # colour
    Image.fromarray(np.zeros((10, 10), np.uint8)).save(sub / "synth000.bmp")  # duplicate
    (sub / "readme.md").write_text("hello")
    (sub / "deep").mkdir()
    (sub / "deep" / "synth002.png").write_bytes(b"")
    with pytest.raises(SubmissionError) as e:
        submit(sub, tmp_path / "run", dataset=root, progress=False)
    err = e.value
    assert err.missing == ["synth002"]
    assert any("synth003" in x and "another split" in x for x in err.extra)
    assert any(x.startswith("readme.md") for x in err.extra)
    assert any(x.startswith("deep/synth002.png") for x in err.extra)
    bad = dict(err.malformed)
    assert "colour" in bad["synth001.png"]
    assert "second map" in bad["synth000.png"] or "second map" in bad.get(
        "synth000.bmp", "")
    assert "missing" in bad["name.txt"]
    text = str(err)
    assert "missing (1)" in text and "synth002" in text and "extra (3)" in text
    assert not (tmp_path / "run" / "result_boundary.json").exists()  # nothing was run


def test_wrong_size_and_corrupt_maps(dataset, tmp_path):
    root, synth = dataset
    sub = _good(tmp_path / "sub", synth)
    write_soft_map(sub / "synth000.png", np.zeros((SHAPE[1], SHAPE[0])))  # transposed
    (sub / "synth001.png").write_bytes(b"\x89PNG garbage")
    with pytest.raises(SubmissionError) as e:
        submit(sub, tmp_path / "run", dataset=root, progress=False)
    bad = dict(e.value.malformed)
    assert set(bad) == {"synth000.png", "synth001.png"}
    assert "transposed" in bad["synth000.png"], bad["synth000.png"]


def test_lenient_ignores_extras(dataset, tmp_path):
    root, synth = dataset
    sub = _good(tmp_path / "sub", synth, ids=("synth000", "synth001", "synth002",
                                               "synth003"))
    (sub / "notes.txt").write_text("x")
    res = submit(sub, tmp_path / "run", dataset=root, strict=False, progress=False,
                 plot=False)
    assert len(res.meta["warnings"]) == 2 and res.meta["n_images"] == 3


def test_bad_arguments(dataset, tmp_path):
    root, synth = dataset
    sub = _good(tmp_path / "sub", synth)
    with pytest.raises(InputError, match="no split 'val'"):
        submit(sub, tmp_path / "run", dataset=root, split="val")
    with pytest.raises(InputError, match="submission not found"):
        submit(tmp_path / "nope", tmp_path / "run", dataset=root)
    (tmp_path / "x.txt").write_text("hi")
    with pytest.raises(InputError, match="not a .zip or .tar"):
        submit(tmp_path / "x.txt", tmp_path / "run", dataset=root)
    (sub / "name.txt").write_text(" \n\t\n")
    with pytest.raises(SubmissionError, match="name.txt: empty"):
        submit(sub, tmp_path / "run", dataset=root)


# ---------------------------------------------------------------------------------------
# hostile submissions


def test_archive_with_traversal_is_refused(dataset, tmp_path):
    root, synth = dataset
    sub = _good(tmp_path / "sub", synth)
    arc = tmp_path / "evil.tar.gz"
    with tarfile.open(arc, "w:gz") as tf:
        for p in sorted(sub.iterdir()):
            tf.add(p, p.name)
        data = b"pwned"
        for name in ("../../outside.png", "/tmp/segbench-abs.png"):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))
        ti = tarfile.TarInfo("link.png")
        ti.type, ti.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tf.addfile(ti)
        ti = tarfile.TarInfo("dev")
        ti.type = tarfile.CHRTYPE
        tf.addfile(ti)
    with pytest.raises(UnsafeArchiveError) as e:
        submit(arc, tmp_path / "run", dataset=root)
    assert len(e.value.members) == 4
    assert not (tmp_path.parent / "outside.png").exists()
    assert not (tmp_path / "run" / "result_boundary.json").exists()


def test_symlinks_and_fifos_in_a_folder_are_refused(dataset, tmp_path):
    root, synth = dataset
    sub = _good(tmp_path / "sub", synth, ids=("synth000", "synth001"))
    os.symlink(sub / "synth000.png", sub / "synth002.png")
    os.mkfifo(sub / "pipe")
    with pytest.raises(SubmissionError) as e:
        submit(sub, tmp_path / "run", dataset=root)
    bad = dict(e.value.malformed)
    assert bad["synth002.png"] == "symbolic link" and bad["pipe"] == "not a regular file"


XSS_NAME = ('<script>alert("name")</script>\u202e Evil "algo" & co\n'
            'second line <img src=x onerror=alert(2)>')
XSS_ABOUT = """<!DOCTYPE html><html><head><style>body{display:none}</style>
<script>alert(1)</script></head><body onload="alert(2)">
<p class="x" onclick="alert(3)">We <b>detect</b> <i>edges</i>.</p>
<img src=x onerror=alert(4)><svg onload=alert(5)><iframe src="javascript:alert(6)"></iframe>
<a href="javascript:alert(7)">js</a> <a href="JaVaScRiPt&#x3A;alert(8)">js2</a>
<a href=" java&#x09;script:alert(9)">js3</a> <a href="data:text/html,<script>">data</a>
<a href="//evil.example/x">proto-relative</a> <a href="https://ok.example/?a=1&b=<2>">ok</a>
<a href="mailto:me@example.org" onmouseover="alert(10)">mail</a>
<ul><li>one<li>two</ul><!-- <script>alert(11)</script> -->
<p>unclosed <em>emphasis <a href="http://x.example/">link
</body></html><scr<script>ipt>alert(12)</script>"""


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_xss_in_name_and_about_is_neutralised(dataset, tmp_path):
    root, synth = dataset
    sub = _good(tmp_path / "sub", synth, name=None, about=XSS_ABOUT)
    (sub / "name.txt").write_text(XSS_NAME)
    res = submit(sub, tmp_path / "run", dataset=root, progress=False, plot=True)
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    # the name: one line, no control or bidi characters, escaped in its HTML form
    assert "\n" not in meta["name"] and "\u202e" not in meta["name"]
    assert meta["name"].startswith('<script>alert("name")</script>')
    assert "<" not in meta["name_html"] and '"' not in meta["name_html"]
    assert "second line" not in meta["name"]
    # about: only allow-listed tags and safe links survive as markup
    about = meta["about_html"]
    tags = _Collect()
    tags.feed(about)
    assert {t for t, _ in tags.tags} <= {"a", "em", "strong", "b", "i", "p", "ul", "ol",
                                         "li", "br"}
    for tag, attrs in tags.tags:
        if tag == "a":
            assert set(attrs) <= {"href", "rel"}
            if "href" in attrs:
                assert attrs["href"].split(":")[0] in ("http", "https", "mailto")
        else:
            assert attrs == {}
    hrefs = [a.get("href") for t, a in tags.tags if t == "a" and "href" in a]
    # parsed as a browser parses it (HTML5): the links written after the unclosed <svg>
    # are SVG elements, not HTML links, and are dropped with the rest of the SVG
    assert hrefs == ["http://x.example/"]
    low = about.lower()
    for needle in ("<script", "<img", "<svg", "<iframe", "<style", "onload=\"",
                   "javascript:alert(7)\"", "<!--"):
        assert needle not in low
    assert "alert(1)" not in about                  # script dropped with its content
    assert "<b>detect</b>" in about and "<i>edges</i>" in about
    assert res.boundary.metrics["ODS"] > 0


@pytest.mark.parametrize("raw,expected", [
    ("plain text", "plain text"),
    ("<b onclick=x>bold</b>", "<b>bold</b>"),
    ("<p>a<br/>b</p>", "<p>a<br>b</p>"),
    ("a < b & c > d", "a &lt; b &amp; c &gt; d"),
    ("<em>open", "<em>open</em>"),
    ("</p>stray", "<p></p>stray"),                     # HTML5 parsing of a stray </p>
    ('<a href="https://x.org" title="t">x</a>',
     '<a href="https://x.org" rel="nofollow noopener">x</a>'),
    ('<a href="/relative">x</a>', '<a rel="nofollow noopener">x</a>'),
    ('<a href="vbscript:msgbox">x</a>', '<a rel="nofollow noopener">x</a>'),
    ("<ol><li>x</ol>", "<ol><li>x</li></ol>"),
    ("<ul><li>one<li>two</ul>", "<ul><li>one</li><li>two</li></ul>"),
    ("<p>a<p>b", "<p>a</p><p>b</p>"),
    ("<STRONG>loud</STRONG>", "<strong>loud</strong>"),
    ('<a href="https://x.org/"onclick=alert(1)>x</a>',
     '<a href="https://x.org/" rel="nofollow noopener">x</a>'),
    # the cases the site tested (the site renders about_html with this sanitizer)
    ("<p>a <b>b</b></p>", "<p>a <b>b</b></p>"),
    ('<a href="JAVASCRIPT:x()">l</a>', '<a rel="nofollow noopener">l</a>'),
    ('<a href=" https://x.org/?a=1&b=2 " title=t>l</a>',
     '<a href="https://x.org/?a=1&amp;b=2" rel="nofollow noopener">l</a>'),
    # script and style go with their content; other tags go, their text stays
    ("<script>alert(1)</script>ok", "ok"),
    ("<style>p{}</style>kept", "kept"),
    ("<iframe src=x>in</iframe>", "in"),
    ("<!-- c -->t", "t"),
    ("<p>unclosed <em>em", "<p>unclosed <em>em</em></p>"),
    ("</p>stray & <odd>", "<p></p>stray &amp; "),
    ("<svg><script>x</script></svg><br/>", "<br>"),
    ("&lt;script&gt;", "&lt;script&gt;"),
])
def test_sanitize_html_cases(raw, expected):
    assert sanitize_html(raw) == expected
    assert sanitize_html(expected) == expected          # idempotent


def test_sanitize_html_length_and_clean_name():
    assert len(sanitize_html("x" * 50_000)) == 20_000
    assert clean_name("\n\n  hello\tworld  \nsecond") == "hello world"
    long = clean_name("y" * 200)
    assert len(long) == 80 and long.endswith("\u2026")
    assert clean_name("a\u202eb\x00c") == "a b c"


def test_cli_submit(dataset, tmp_path, capsys):
    root, synth = dataset
    sub = _good(tmp_path / "sub", synth, name="CLI algo")
    parser = argparse.ArgumentParser()
    add_parsers(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["submit", str(sub), "--out", str(tmp_path / "run"),
                              "--dataset", str(root), "--quiet", "--json"])
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["meta"]["name"] == "CLI algo" and out["boundary"]["metrics"]["ODS"] > 0
    args = parser.parse_args(["submit", str(sub), "--out", str(tmp_path / "run"),
                              "--dataset", str(root), "--quiet"])
    assert args.func(args) == 0
    assert "ODS" in capsys.readouterr().out


def test_sanitize_html_is_idempotent():
    """The site may sanitize ``about_html`` again when it renders: nothing changes."""
    once = sanitize_html(XSS_ABOUT)
    assert sanitize_html(once) == once


def test_in_memory_dataset(tmp_path):
    synth = SyntheticDataset(n_images=2, shape=(24, 32), n_annotators=2)
    sub = _good(tmp_path / "sub", synth, ids=("synth000", "synth001"))
    res = submit(sub, tmp_path / "run", dataset=synth, progress=False, plot=False)
    assert res.meta["dataset"] == {"name": "synthetic", "root": None, "split": "test"}
    assert [r["id"] for r in res.boundary.per_item] == ["synth000", "synth001"]
    # records of in-memory ground truth are keyed by its content: other annotations
    # in the same folder are not mistaken for these
    other = SyntheticDataset(n_images=2, shape=(24, 32), n_annotators=2, seed=9)
    res2 = submit(sub, tmp_path / "run", dataset=other, progress=False, plot=False)
    assert res2.boundary.per_item != res.boundary.per_item


def test_write_segs_reads_back_as_segs(tmp_path):
    from segbench.io import read_prediction
    a = np.arange(12).reshape(3, 4) % 3 + 1
    path = write_segs(tmp_path / "x.mat", [a, np.ones((3, 4), int)])
    pred = read_prediction(path)
    assert pred.kind == "segs" and len(pred.segs) == 2
    assert np.array_equal(pred.segs[0], a) and (pred.segs[1] == 1).all()
    with pytest.raises(InputError):
        write_segs(tmp_path / "y.mat", [a, np.ones((2, 2), int)])


# ---------------------------------------------------------------------------------------
# the run folder: nothing of the user's is deleted or overwritten (issue 14, item 1)


def _tree(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_out_equal_to_inside_or_containing_the_submission_is_refused(dataset, tmp_path):
    root, synth = dataset
    work = tmp_path / "W"
    sub = _good(work / "predictions", synth)
    before = _tree(work)
    for out, what in ((work, "contains the submission"), (sub, "is the submission"),
                      (sub / "run", "is inside the submission")):
        with pytest.raises(InputError, match=what):
            submit(sub, out, dataset=root, progress=False, plot=False)
        assert _tree(work) == before                     # nothing touched
    assert not (sub / "run").exists()


def test_a_foreign_folder_is_refused_never_replaced(dataset, tmp_path):
    root, synth = dataset
    sub = _good(tmp_path / "sub", synth)
    out = tmp_path / "W"
    (out / "predictions").mkdir(parents=True)
    (out / "predictions" / "mine.txt").write_text("the user's own work")
    with pytest.raises(InputError, match="did not make"):
        submit(sub, out, dataset=root, progress=False, plot=False)
    assert _tree(out) == {"predictions/mine.txt": b"the user's own work"}
    # a run folder submit made is reused, and resubmitting replaces only its own files
    run = tmp_path / "run"
    first = submit(sub, run, dataset=root, progress=False, plot=False)
    assert (run / ".segbench-submission").is_file()
    again = submit(sub, run, dataset=root, progress=False, plot=False)
    assert again.boundary.metrics["ODS"] == first.boundary.metrics["ODS"]
    assert _tree(sub) == _tree(tmp_path / "sub")         # the submission is untouched


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_archive_bomb_is_refused_before_writing_past_the_bound(dataset, tmp_path, kind):
    """A small archive of zeros that the three maps could never need is refused: the
    bound comes from the split's images, and nothing past it is written (issue 14,
    item 3)."""
    import tarfile
    import zipfile
    root, synth = dataset
    zeros = 64 * 1024 * 1024                        # far above 3 maps of 40x56
    arc = tmp_path / f"sub.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(arc, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("name.txt", "bomb\n")
            with zf.open("synth000.png", "w") as f:
                block = bytes(1 << 20)
                for _ in range(zeros >> 20):
                    f.write(block)
    else:
        with tarfile.open(arc, "w:gz") as tf:
            info = tarfile.TarInfo("name.txt")
            info.size = 5
            tf.addfile(info, io.BytesIO(b"bomb\n"))
            info = tarfile.TarInfo("synth000.png")
            info.size = zeros
            tf.addfile(info, io.BytesIO(bytes(zeros)))
    assert arc.stat().st_size < 1_000_000
    run = tmp_path / "run"
    with pytest.raises(InputError, match="more than") as err:
        submit(arc, run, dataset=root, progress=False, plot=False)
    bound = 3 * (4 * SHAPE[0] * SHAPE[1] + 64 * 1024) + 1024 * 1024
    assert str(bound) in str(err.value)
    assert not list(run.glob(".upload-*"))           # the temporary folder is gone
    assert sum(p.stat().st_size for p in run.rglob("*") if p.is_file()) < 4096


# --- QA round of 2026-12-07 night (helper-51) -------------------------------------------


def test_a_refused_submission_leaves_the_folder_as_it_was(dataset, tmp_path):
    """A submission of another name was refused only after it had replaced the run
    folder's predictions: the folder then held one's maps under the other's result."""
    root, synth = dataset
    out = tmp_path / "run"
    submit(_good(tmp_path / "a", synth, name="Algo A"), out, dataset=root, progress=False)
    before = {p.name: p.read_bytes() for p in (out / "predictions").iterdir()}
    other = _good(tmp_path / "b", synth, name="Algo B", ext="bmp")
    with pytest.raises(InputError, match="results of 'Algo A'"):
        submit(other, out, dataset=root, progress=False)
    assert {p.name: p.read_bytes() for p in (out / "predictions").iterdir()} == before
    assert not (out / ".segbench-writing").exists()


def test_a_submission_into_a_folder_another_process_writes_is_refused(dataset, tmp_path):
    from segbench.engine import lock_run_folder, release_run_folder

    root, synth = dataset
    out = tmp_path / "run"
    sub = _good(tmp_path / "a", synth, name="Algo A")
    submit(sub, out, dataset=root, progress=False)
    before = {p.name: p.read_bytes() for p in (out / "predictions").iterdir()}
    held = lock_run_folder(out)  # as another submission's process holds it
    try:
        with pytest.raises(InputError, match="another segbench run is writing"):
            submit(_good(tmp_path / "a2", synth, name="Algo A", ext="bmp"), out,
                   dataset=root, progress=False)
    finally:
        release_run_folder(held)
    assert {p.name: p.read_bytes() for p in (out / "predictions").iterdir()} == before


def test_a_submission_stopped_before_its_meta_marks_every_file(dataset, tmp_path,
                                                                monkeypatch):
    """submit wrote pr_curve.png and meta.json after the run's writing mark was gone:
    a stop between them left the old plot and meta beside the new result."""
    from segbench.api import read_run

    root, synth = dataset
    out = tmp_path / "run"
    sub = _good(tmp_path / "a", synth, name="Algo A")
    submit(sub, out, dataset=root, progress=False)

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(submit_mod, "atomic_write_bytes", full)  # meta.json fails
    with pytest.raises(OSError):
        submit(sub, out, dataset=root, progress=False)
    with pytest.raises(InputError, match="stopped while writing"):
        read_run(out, "boundary")
    monkeypatch.undo()
    submit(sub, out, dataset=root, progress=False)
    assert read_run(out, "boundary").name == "Algo A"
