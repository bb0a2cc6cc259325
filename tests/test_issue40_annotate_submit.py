"""Issue 40, items 9, 10 and 16: ``annotate --public-url`` is checked in one line and its
default port is the browser's; ``submit --presentation`` names a missing presentation;
BSDS300 submissions are scored as the BSDS300 page's benchmark scored them."""

from __future__ import annotations

import http.client
import json
import threading
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from segbench.annotate import make_server
from segbench.cli import main


def _images(folder: Path, n: int = 2) -> Path:
    folder.mkdir()
    rng = np.random.default_rng(0)
    for k in range(n):
        Image.fromarray(rng.integers(0, 255, (16, 24, 3), dtype=np.uint8)).save(
            folder / f"im{k:02d}.png")
    return folder


# ---- item 9: --public-url ------------------------------------------------------------


@pytest.mark.parametrize("url, named", [
    ("https://[::1", "closing ']'"),
    ("https://ex.org:99999", "'99999'"),
    ("https://ex.org:abc", "'abc'"),
    ("https://ex .org", "'ex .org' is not a host name"),
    ("https://ex.org:0", "port 0"),
])
def test_a_bad_public_url_is_refused_in_one_line(tmp_path, capsys, url, named):
    images = _images(tmp_path / "images")
    out = tmp_path / "out"
    assert main(["annotate", "--subject", "Ada", "--images", str(images), "--out",
                 str(out), "--port", "0", "--public-url", url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "--public-url" in err and repr(url) in err and named in err, err
    assert not out.exists()   # refused before anything was written


@pytest.mark.parametrize("public, hosts, origin", [
    ("https://annotate.example.org:443", ("annotate.example.org",
                                          "annotate.example.org:443"),
     "https://annotate.example.org"),
    ("https://annotate.example.org", ("annotate.example.org:443",),
     "https://annotate.example.org"),
    ("http://annotate.example.org:80", ("annotate.example.org", "annotate.example.org:80"),
     "http://annotate.example.org"),
])
def test_the_default_port_of_the_public_url_is_the_browsers(tmp_path, public, hosts,
                                                            origin):
    srv = make_server(_images(tmp_path / "images"), tmp_path / "out", port=0,
                      collect=True, public_url=public)
    threading.Thread(target=srv.serve_forever, daemon=True).start()

    def login(host, origin):
        conn = http.client.HTTPConnection(*srv.server_address[:2], timeout=10)
        conn.request("POST", "/api/login", body=json.dumps({"name": "Ada"}),
                     headers={"Host": host, "Origin": origin, "X-Segbench": "1",
                              "Content-Type": "application/json"})
        r = conn.getresponse()
        r.read()
        conn.close()
        return r.status

    try:
        for host in hosts:   # a browser omits the default port; a proxy may add it
            assert login(host, origin) == 200, host
        assert login("annotate.example.org:8443", origin) == 421   # another port
        assert login(hosts[0], origin.replace("annotate", "evil")) == 403
    finally:
        srv.shutdown()
        srv.server_close()


# ---- items 10 and 16: submit on a BSDS300 --------------------------------------------


def _bsds300_colour_only(tmp: Path):
    """A BSDS300 tree of 2 test images with colour segmentations only, and a
    submission of gradient-magnitude maps for it."""
    from segbench.algorithms.edges import gradient_magnitude
    from segbench.datasets.bsds import SyntheticDataset
    from segbench.io import SegFile, write_seg, write_soft_map
    root, sub = tmp / "BSDS300", tmp / "sub"
    synth = SyntheticDataset(n_images=2, shape=(24, 32), n_annotators=2)
    (root / "images" / "test").mkdir(parents=True)
    sub.mkdir()
    for k, it in enumerate(synth.synthetic_items):
        iid = str(101085 + k)
        Image.fromarray(it.image).save(root / "images" / "test" / f"{iid}.jpg")
        for u, seg in enumerate(it.segmentations):
            d = root / "human" / "color" / str(1100 + u)
            d.mkdir(parents=True, exist_ok=True)
            write_seg(d / f"{iid}.seg", SegFile(labels=seg - 1, user=1100 + u))
        write_soft_map(sub / f"{iid}.png", gradient_magnitude(it.image))
    (sub / "name.txt").write_text("gm\n")
    return root, sub


def test_submit_names_the_missing_presentation(tmp_path, capsys):
    root, sub = _bsds300_colour_only(tmp_path)
    out = tmp_path / "run"
    assert main(["submit", str(sub), "--out", str(out), "--dataset", str(root),
                 "--presentation", "gray", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "--presentation gray" in err and "no gray segmentation" in err, err
    assert "color ones" in err and "101085" in err and "has no human" not in err, err
    assert not out.exists()   # refused before anything was written


def test_a_bsds300_submission_is_scored_with_the_bsds300_pages_30_thresholds(tmp_path,
                                                                           capsys):
    root, sub = _bsds300_colour_only(tmp_path)
    out = tmp_path / "run"
    assert main(["submit", str(sub), "--out", str(out), "--dataset", str(root),
                 "--quiet"]) == 0
    meta = json.loads((out / "meta.json").read_text())
    assert meta["protocol"] == "bsds300"
    # "e.g. 30" levels (the BSDS300 page); boundaryBench.m's nthresh=30
    rows = (out / "eval_bdry_thr.txt").read_text().split("\n")
    assert len([r for r in rows if r.strip()]) == 30
    # the same files as the boundary benchmark under that protocol
    ref = tmp_path / "b"
    assert main(["boundary", "--gt", str(root), "--split", "test", "--pred", str(sub),
                 "--out", str(ref), "--preset", "bsds300", "--quiet", "--no-plot"]) == 0
    for f in ("eval_bdry.txt", "eval_bdry_thr.txt", "eval_bdry_img.txt"):
        assert (out / f).read_text() == (ref / f).read_text(), f
    capsys.readouterr()
