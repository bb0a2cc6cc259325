"""``segbench fetch`` and safe extraction, against a local HTTP server on 127.0.0.1.

The server (http.server in a thread) serves archives the tests build, supports Range
requests and can cut a transfer short or ignore Range. No test touches the Internet.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import io
import re
import stat
import tarfile
import threading
import zipfile
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from segbench.datasets._archive import UnsafeArchiveError, archive_kind, safe_extract
from segbench.cli.datasets import add_parsers
from segbench.datasets.bsds import BSDS300, BSDS500, SyntheticDataset
from segbench.datasets.fetch import Archive, FetchError, Source, download, fetch

# the module, not the function of the same name that segbench.datasets may export
fetch_mod = importlib.import_module("segbench.datasets.fetch")
from segbench.errors import InputError
from segbench.io import SegFile, write_seg

# ---------------------------------------------------------------------------------------
# a local server


class _Server:
    """Files by URL path; records every request's path and Range header."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.requests: list[tuple[str, str | None]] = []
        self.cut_after: dict[str, int] = {}  # path -> bytes sent before dropping (once)
        self.ignore_range = False
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                outer.requests.append((self.path, self.headers.get("Range")))
                body = outer.files.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                start = 0
                rng = None if outer.ignore_range else self.headers.get("Range")
                if rng:
                    m = re.fullmatch(r"bytes=(\d+)-", rng)
                    start = int(m.group(1))
                    if start >= len(body):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(body)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header(
                        "Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}"
                    )
                else:
                    self.send_response(200)
                chunk = body[start:]
                self.send_header("Content-Length", str(len(chunk)))
                self.send_header("Content-Type", "application/octet-stream")
                self.end_headers()
                cut = outer.cut_after.pop(self.path, None)
                if cut is not None:
                    self.wfile.write(chunk[:cut])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(chunk)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, args=(0.02,), daemon=True
        )
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = _Server()
    yield s
    s.close()


# ---------------------------------------------------------------------------------------
# archives


def _tar_bytes(members, mode="w:gz") -> bytes:
    """members: list of (TarInfo, bytes or None)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
            else:
                tf.addfile(info)
    return buf.getvalue()


def _info(name, type_=tarfile.REGTYPE, linkname=""):
    ti = tarfile.TarInfo(name)
    ti.type = type_
    ti.linkname = linkname
    ti.mode = 0o4755  # setuid: must not survive
    return ti


def _tree_tar(root) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for p in sorted(root.rglob("*")):
            tf.add(p, arcname=p.relative_to(root).as_posix(), recursive=False)
    return buf.getvalue()


@pytest.fixture(scope="module")
def mini500(tmp_path_factory):
    """A tiny BSR_bsds500.tgz: BSR/BSDS500/data with 2 test images and 1 train image."""
    base = tmp_path_factory.mktemp("mini500")
    data = base / "BSR" / "BSDS500" / "data"
    ds = SyntheticDataset(n_images=3, shape=(16, 24), n_annotators=2)
    items = ds.synthetic_items
    from segbench.datasets.synthetic import write_synthetic_dataset

    write_synthetic_dataset(data, items[:2], split="test")
    write_synthetic_dataset(data, items[2:], split="train")
    (base / "BSR" / "README").write_text("benchmark code would be here\n")
    return _tree_tar(base)


def _source(server, body, *, name="mini500", size=None, sha=None, counts=None):
    server.files["/BSR_bsds500.tgz"] = body
    return Source(
        name,
        (
            Archive(
                server.url("/BSR_bsds500.tgz"), "BSR_bsds500.tgz", size=size, sha256=sha
            ),
        ),
        root="BSR/BSDS500/data",
        reader="bsds500",
        counts={"test": 2, "train": 1} if counts is None else counts,
    )


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


# ---------------------------------------------------------------------------------------
# fetch


def test_fetch_verifies_extracts_and_is_idempotent(server, mini500, tmp_path):
    src = _source(server, mini500, size=len(mini500), sha=_sha(mini500))
    root = fetch(src, tmp_path, progress=False)
    assert root == tmp_path / "BSR" / "BSDS500" / "data"
    assert BSDS500(root).ids("test") == ["synth000", "synth001"]
    assert not (tmp_path / "BSR_bsds500.tgz").exists()  # archive removed
    assert (tmp_path / ".segbench-fetch" / "mini500.json").is_file()
    n = len(server.requests)
    assert fetch(src, tmp_path, progress=False) == root
    assert len(server.requests) == n  # nothing downloaded the second time
    # a lost file makes the record stale: fetched again
    (root / "images" / "test" / "synth000.png").unlink()
    assert fetch(src, tmp_path, progress=False) == root
    assert len(server.requests) == n + 1
    assert (root / "images" / "test" / "synth000.png").is_file()


def test_fetch_keep_archive_and_local_copy(server, mini500, tmp_path):
    src = _source(server, mini500, sha=_sha(mini500))
    fetch(src, tmp_path, progress=False, keep_archive=True)
    assert (tmp_path / "BSR_bsds500.tgz").is_file()
    # an archive already in dest (say, copied by hand) is verified and used
    other = tmp_path / "other"
    other.mkdir()
    (other / "BSR_bsds500.tgz").write_bytes(mini500)
    n = len(server.requests)
    fetch(src, other, progress=False)
    assert len(server.requests) == n


def test_fetch_resumes_a_truncated_transfer(server, mini500, tmp_path):
    src = _source(server, mini500, sha=_sha(mini500))
    server.cut_after["/BSR_bsds500.tgz"] = 1000
    with pytest.raises(FetchError, match="interrupted after 1000 .*rerun to resume") as e:
        fetch(src, tmp_path, progress=False, retries=0)
    assert e.value.resumable
    part = tmp_path / "BSR_bsds500.tgz.part"
    assert part.stat().st_size == 1000
    root = fetch(src, tmp_path, progress=False, retries=0)
    assert server.requests[-1][1] == "bytes=1000-"
    assert BSDS500(root).ids("train") == ["synth002"]
    assert not part.exists()


def test_fetch_retries_within_one_call(server, mini500, tmp_path):
    src = _source(server, mini500, size=len(mini500), sha=_sha(mini500))
    server.cut_after["/BSR_bsds500.tgz"] = 777
    fetch(src, tmp_path, progress=False)
    assert [r for _, r in server.requests] == [None, "bytes=777-"]


def test_download_server_ignoring_range(server, tmp_path):
    body = bytes(range(256)) * 40
    server.files["/f.bin"] = body
    (tmp_path / "f.bin.part").write_bytes(body[:100])
    server.ignore_range = True
    path, digest = download(
        server.url("/f.bin"), tmp_path / "f.bin", sha256=_sha(body), progress=False
    )
    assert path.read_bytes() == body and digest == _sha(body)


def test_download_complete_part_gets_416(server, tmp_path):
    body = b"x" * 5000
    server.files["/f.bin"] = body
    (tmp_path / "f.bin.part").write_bytes(body)
    path, _ = download(server.url("/f.bin"), tmp_path / "f.bin", progress=False)
    assert path.read_bytes() == body
    assert server.requests[-1][1] == "bytes=5000-"


def test_download_stale_part_is_replaced(server, tmp_path):
    """A .part from another file fails the digest: one fresh download, not splicing."""
    body = b"new content " * 500
    server.files["/f.bin"] = body
    (tmp_path / "f.bin.part").write_bytes(b"OLD" * 100)
    path, _ = download(
        server.url("/f.bin"), tmp_path / "f.bin", sha256=_sha(body), progress=False
    )
    assert path.read_bytes() == body
    assert [r for _, r in server.requests] == ["bytes=300-", None]


def test_wrong_hash_is_refused_and_removed(server, mini500, tmp_path):
    src = _source(server, mini500, sha="0" * 64)
    with pytest.raises(FetchError, match="SHA-256 mismatch"):
        fetch(src, tmp_path, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing kept or extracted


def test_wrong_size_is_refused(server, mini500, tmp_path):
    src = _source(server, mini500, size=len(mini500) + 1)
    with pytest.raises(FetchError, match="reports .* bytes but .* are expected"):
        fetch(src, tmp_path, progress=False)
    assert not (tmp_path / "BSR").exists()


def test_user_sha256_overrides(server, mini500, tmp_path):
    src = _source(server, mini500, sha=_sha(mini500))
    with pytest.raises(FetchError, match="SHA-256 mismatch"):
        fetch(src, tmp_path, sha256="f" * 64, progress=False)
    root = fetch(src, tmp_path / "ok", sha256=_sha(mini500).upper(), progress=False)
    assert root.is_dir()


def test_unexpected_content_is_refused(server, tmp_path):
    body = _tar_bytes([(_info("BSR/BSDS500/data/images/test/a.txt"), b"x")])
    src = _source(server, body)
    with pytest.raises(InputError, match="not a BSDS500 layout"):
        fetch(src, tmp_path, progress=False)
    assert not (tmp_path / ".segbench-fetch").exists()
    src = _source(server, body, counts={})
    src = replace(src, root="elsewhere", reader=None)
    with pytest.raises(FetchError, match="did not unpack to elsewhere"):
        fetch(src, tmp_path / "b", progress=False)


def test_counts_are_checked(server, mini500, tmp_path):
    src = _source(server, mini500, counts={"test": 200})
    with pytest.raises(FetchError, match="has 2 test images, expected 200"):
        fetch(src, tmp_path, progress=False)


def test_http_errors_and_bad_arguments(server, tmp_path):
    src = Source("x", (Archive(server.url("/missing.tgz"), "m.tgz"),), root="m")
    with pytest.raises(FetchError, match="HTTP 404"):
        fetch(src, tmp_path, progress=False)
    with pytest.raises(InputError, match="unknown dataset"):
        fetch("bsds9000", tmp_path)
    with pytest.raises(InputError, match="2 archive.* but 1 URLs"):
        fetch("bsds300", tmp_path, url="http://127.0.0.1:1/x.tgz")
    with pytest.raises(InputError, match="not a SHA-256"):
        fetch("bsds500", tmp_path, sha256="abc")
    with pytest.raises(InputError, match="unsupported URL"):
        fetch("bsds500", tmp_path, url="ftp://example.org/x.tgz")
    closed = Source("y", (Archive("http://127.0.0.1:9/x.tgz", "x.tgz"),), root="x")
    with pytest.raises(FetchError, match="cannot connect"):
        fetch(closed, tmp_path, progress=False, timeout=5)


def test_registry_entries():
    for name, src in fetch_mod.REGISTRY.items():
        assert src.name == name and src.archives
        for a in src.archives:
            assert a.url.startswith("https://") and a.url.endswith(a.filename)
            assert a.sha256 is None or re.fullmatch(r"[0-9a-f]{64}", a.sha256)
    assert fetch_mod.REGISTRY["bsds300"].counts == {"train": 200, "test": 100}


def test_bsds300_two_archives_via_cli(server, tmp_path, monkeypatch, capsys):
    """``segbench fetch bsds300 --url ... --url ...`` with the registry entry shrunk."""
    base = tmp_path / "build"
    rng = np.random.default_rng(0)
    from PIL import Image

    for split, iid in (("train", "1"), ("test", "2")):
        p = base / "BSDS300" / "images" / split
        p.mkdir(parents=True)
        Image.fromarray(rng.integers(0, 255, (6, 8, 3), np.uint8)).save(p / f"{iid}.jpg")
    (base / "BSDS300" / "iids_train.txt").write_text("1\n")
    images = _tree_tar(base)
    hbase = tmp_path / "hbuild"
    for kind, uid, iid in (("color", 1101, "1"), ("gray", 1102, "2")):
        d = hbase / "BSDS300" / "human" / kind / str(uid)
        d.mkdir(parents=True)
        write_seg(d / f"{iid}.seg", SegFile(labels=np.zeros((6, 8), np.int32), user=uid))
    human = _tree_tar(hbase)
    server.files["/i.tgz"], server.files["/h.tgz"] = images, human
    reg = dict(fetch_mod.REGISTRY)
    reg["bsds300"] = replace(reg["bsds300"], counts={"train": 1, "test": 1})
    monkeypatch.setattr(fetch_mod, "REGISTRY", reg)
    parser = argparse.ArgumentParser()
    add_parsers(parser.add_subparsers(dest="command"))
    dest = tmp_path / "dest"
    args = parser.parse_args(
        [
            "fetch",
            "bsds300",
            "--dest",
            str(dest),
            "--quiet",
            "--url",
            server.url("/i.tgz"),
            "--url",
            server.url("/h.tgz"),
            "--sha256",
            _sha(images),
            "--sha256",
            _sha(human),
        ]
    )
    assert args.func(args) == 0
    assert str(dest / "BSDS300") in capsys.readouterr().out
    ds = BSDS300(dest, presentation="all")
    assert ds.ids("train") == ["1"] and ds["2"].gray == [True]
    n = len(server.requests)
    assert args.func(args) == 0 and len(server.requests) == n


# ---------------------------------------------------------------------------------------
# malicious archives


MALICIOUS_TAR = {
    "absolute path": [(_info("/tmp/segbench-evil.txt"), b"x")],
    "dot-dot": [(_info("ok/../../evil.txt"), b"x")],
    "symlink": [(_info("link", tarfile.SYMTYPE, "/etc/passwd"), None)],
    "symlink then write through it": [
        (_info("d", tarfile.SYMTYPE, ".."), None),
        (_info("d/evil.txt"), b"x"),
    ],
    "hardlink": [(_info("hard", tarfile.LNKTYPE, "/etc/passwd"), None)],
    "char device": [(_info("dev", tarfile.CHRTYPE), None)],
    "block device": [(_info("blk", tarfile.BLKTYPE), None)],
    "fifo": [(_info("fifo", tarfile.FIFOTYPE), None)],
    "file under a file": [(_info("a"), b"1"), (_info("a/b"), b"2")],
}


@pytest.mark.parametrize("case", sorted(MALICIOUS_TAR))
def test_malicious_tar_is_refused(case, tmp_path):
    archive = tmp_path / "evil.tar.gz"
    archive.write_bytes(_tar_bytes([(_info("good.txt"), b"fine")] + MALICIOUS_TAR[case]))
    dest = tmp_path / "dest"
    with pytest.raises(UnsafeArchiveError, match="unsafe archive, nothing extracted") as e:
        safe_extract(archive, dest)
    assert e.value.members
    assert not dest.exists() or not any(dest.iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.tar.gz"]


def _zip_bytes(entries) -> bytes:
    """entries: (name, data, unix mode or None)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data, mode in entries:
            zi = zipfile.ZipInfo(name)
            if mode is not None:
                zi.create_system = 3
                zi.external_attr = mode << 16
            zf.writestr(zi, data)
    return buf.getvalue()


@pytest.mark.parametrize(
    "entry",
    [
        ("/abs.txt", b"x", None),
        ("../up.txt", b"x", None),
        ("a\\..\\..\\win.txt", b"x", None),
        ("C:/win.txt", b"x", None),
        ("link", b"/etc/passwd", stat.S_IFLNK | 0o777),
        ("fifo", b"", stat.S_IFIFO | 0o644),
        ("dev", b"", stat.S_IFCHR | 0o644),
    ],
)
def test_malicious_zip_is_refused(entry, tmp_path):
    archive = tmp_path / "evil.zip"
    archive.write_bytes(_zip_bytes([("good.txt", b"ok", None), entry]))
    with pytest.raises(UnsafeArchiveError):
        safe_extract(archive, tmp_path / "dest")
    assert not (tmp_path / "dest").exists() or not any((tmp_path / "dest").iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.zip"]


def test_fetch_refuses_a_malicious_archive(server, tmp_path):
    body = _tar_bytes(
        [(_info("BSR/BSDS500/data/x.txt"), b"x"), (_info("../../escape.txt"), b"x")]
    )
    src = _source(server, body)
    with pytest.raises(UnsafeArchiveError):
        fetch(src, tmp_path / "dest", progress=False)
    assert not (tmp_path / "escape.txt").exists()
    assert not (tmp_path / "dest" / ".segbench-fetch").exists()


def test_existing_symlink_in_dest_is_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "sub").symlink_to(outside)
    archive = tmp_path / "a.tar"
    archive.write_bytes(_tar_bytes([(_info("sub/evil.txt"), b"x")], mode="w"))
    with pytest.raises(UnsafeArchiveError, match="symbolic link"):
        safe_extract(archive, dest)
    assert not any(outside.iterdir())
    # a file that is a symlink is not written through either
    (dest / "f.txt").symlink_to(outside / "target.txt")
    archive.write_bytes(_tar_bytes([(_info("f.txt"), b"x")], mode="w"))
    with pytest.raises(UnsafeArchiveError, match="link or special file"):
        safe_extract(archive, dest)
    assert not (outside / "target.txt").exists()


def test_safe_extract_neutralises_modes_and_caps_size(tmp_path):
    archive = tmp_path / "ok.tgz"
    archive.write_bytes(
        _tar_bytes([(_info("d/x.sh"), b"#!/bin/sh\n"), (_info("./d/./y.txt"), b"y" * 5000)])
    )
    written = safe_extract(archive, tmp_path / "out")
    assert [p.relative_to(tmp_path / "out").as_posix() for p in written] == [
        "d/x.sh",
        "d/y.txt",
    ]
    mode = stat.S_IMODE((tmp_path / "out" / "d" / "x.sh").stat().st_mode)
    assert mode == 0o644  # no setuid, no exec
    with pytest.raises(InputError, match="more than 1000 bytes"):
        safe_extract(archive, tmp_path / "small", max_bytes=1000)
    with pytest.raises(InputError, match="more than 1 members"):
        safe_extract(archive, tmp_path / "few", max_members=1)


def test_zip_and_plain_tar_extract(tmp_path):
    z = tmp_path / "a.zip"
    z.write_bytes(_zip_bytes([("top/", b"", None), ("top/f.txt", b"zip!", 0o100644)]))
    safe_extract(z, tmp_path / "z")
    assert (tmp_path / "z" / "top" / "f.txt").read_bytes() == b"zip!"
    t = tmp_path / "noext"
    t.write_bytes(_tar_bytes([(_info("g.txt"), b"tar!")], mode="w:bz2"))
    assert archive_kind(t) == "tar"
    safe_extract(t, tmp_path / "t")
    assert (tmp_path / "t" / "g.txt").read_bytes() == b"tar!"
    bad = tmp_path / "bad.tgz"
    bad.write_bytes(b"not an archive at all")
    with pytest.raises(InputError, match="corrupt or unsupported archive"):
        safe_extract(bad, tmp_path / "b")
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00" * 10)
    with pytest.raises(InputError, match="not a .zip or .tar"):
        archive_kind(junk)


def test_fetch_from_a_file_url(mini500, tmp_path):
    local = tmp_path / "copy" / "BSR_bsds500.tgz"
    local.parent.mkdir()
    local.write_bytes(mini500)
    src = Source(
        "mini500",
        (Archive("https://unused.invalid/BSR_bsds500.tgz", "BSR_bsds500.tgz"),),
        root="BSR/BSDS500/data",
        reader="bsds500",
        counts={"test": 2},
    )
    root = fetch(
        src, tmp_path / "dest", url=local.as_uri(), sha256=_sha(mini500), progress=False
    )
    assert BSDS500(root).ids("test") == ["synth000", "synth001"]


def test_refused_archive_is_not_reused_and_a_retry_downloads(server, mini500, tmp_path):
    """A refused archive never stays where a later call would take it again: the retry
    with a good --url downloads (issue 14, item 4)."""
    bad = _tar_bytes(
        [(_info("BSR/BSDS500/data/x.txt"), b"x"), (_info("../../escape.txt"), b"x")]
    )
    server.files["/bad.tgz"] = bad
    src = _source(server, mini500)
    dest = tmp_path / "dest"
    with pytest.raises(UnsafeArchiveError):
        fetch(src, dest, url=server.url("/bad.tgz"), progress=False)
    assert not (dest / "BSR_bsds500.tgz").exists()
    assert (dest / "BSR_bsds500.tgz.refused").read_bytes() == bad  # kept aside
    server.requests.clear()
    root = fetch(src, dest, progress=False)
    assert root == dest / "BSR" / "BSDS500" / "data"
    assert [p for p, _ in server.requests] == ["/BSR_bsds500.tgz"]


def test_archive_of_another_url_is_downloaded_again(server, mini500, tmp_path):
    """A kept archive is reused only for the URL it came from (its SHA-256 recorded)."""
    src = _source(server, mini500)
    dest = tmp_path / "dest"
    fetch(src, dest, progress=False, keep_archive=True)
    (dest / ".segbench-fetch" / "mini500.json").unlink()  # force a second pass
    server.files["/mirror.tgz"] = mini500
    server.requests.clear()
    fetch(src, dest, progress=False, keep_archive=True)
    assert server.requests == []  # same URL: reused
    fetch_rec = dest / ".segbench-fetch" / "mini500.json"
    fetch_rec.unlink()
    fetch(src, dest, url=server.url("/mirror.tgz"), progress=False)
    assert [p for p, _ in server.requests] == ["/mirror.tgz"]  # other URL: downloaded
    # a dataset that fails its count check is set aside too
    fetch_rec.unlink()
    wrong = _source(server, mini500, counts={"test": 5})
    with pytest.raises(FetchError, match="expected 5"):
        fetch(wrong, dest, progress=False)
    assert (dest / "BSR_bsds500.tgz.refused").exists()


# ---------------------------------------------------------------------------------------
# damaged archives and the user's files (QA sweep, stop 52)


def _damaged(body: bytes) -> bytes:
    """The archive with bytes flipped in the middle of its deflate stream; the first
    attempt that still inflates (so only the gzip checksum can tell) is kept."""
    import gzip
    import zlib

    for at in range(len(body) // 2, len(body) - 16):
        d = bytearray(body)
        d[at] ^= 0x01
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(bytes(d))) as g:
                g.read()
        except (OSError, EOFError, zlib.error):
            try:  # inflates, and only the trailer's CRC fails: the case wanted
                zlib.decompress(bytes(d)[10:-8], -15)
                return bytes(d)
            except zlib.error:
                continue
    raise AssertionError("no single flipped bit left the stream inflatable")


def test_an_archive_whose_gzip_checksum_fails_is_refused_and_nothing_unpacked(
    server, mini500, tmp_path
):
    bad = _damaged(mini500)
    src = _source(server, bad)  # no digest known: the archive's own checksum must tell
    with pytest.raises(InputError, match="gzip stream does not check out"):
        fetch(src, tmp_path, progress=False)
    assert not (tmp_path / "BSR").exists()
    assert (tmp_path / "BSR_bsds500.tgz.refused").is_file()


def test_a_spliced_deflate_stream_is_one_line_not_a_traceback(tmp_path, mini500):
    d = bytearray(mini500)
    d[len(d) // 3 : len(d) // 3 + 64] = bytes(64)  # a block of zeros: bad codes
    (tmp_path / "a.tgz").write_bytes(bytes(d))
    with pytest.raises(InputError) as err:
        safe_extract(tmp_path / "a.tgz", tmp_path / "out")
    assert "\n" not in str(err.value)
    assert not (tmp_path / "out").exists()


def test_a_file_that_is_not_an_archive_is_one_line(tmp_path):
    (tmp_path / "a.tgz").write_bytes(bytes(range(256)) * 12)
    with pytest.raises(InputError) as err:
        safe_extract(tmp_path / "a.tgz", tmp_path / "out")
    assert "\n" not in str(err.value)


def test_fetch_never_replaces_a_file_of_the_users(server, mini500, tmp_path):
    mine = tmp_path / "BSR" / "BSDS500" / "data" / "groundTruth" / "test" / "synth000.mat"
    mine.parent.mkdir(parents=True)
    mine.write_bytes(b"MY OWN ANNOTATION")
    src = _source(server, mini500, sha=_sha(mini500))
    with pytest.raises(InputError, match=r"1 file\(s\) here differ .*synth000\.mat"):
        fetch(src, tmp_path, progress=False)
    assert mine.read_bytes() == b"MY OWN ANNOTATION"
    assert not (tmp_path / "BSR" / "BSDS500" / "data" / "images").exists()
    assert (tmp_path / "BSR_bsds500.tgz").is_file()  # the archive was fine: kept
    mine.unlink()
    root = fetch(src, tmp_path, progress=False)  # the same archive, now unpacked
    assert BSDS500(root).ids("test") == ["synth000", "synth001"]


def test_an_archive_failing_the_layout_check_leaves_nothing_unpacked(
    server, mini500, tmp_path
):
    src = _source(server, mini500, counts={"test": 3, "train": 1})
    with pytest.raises(FetchError, match="has 2 test images, expected 3"):
        fetch(src, tmp_path, progress=False)
    assert not (tmp_path / "BSR").exists()
    assert not (tmp_path / ".segbench-fetch").exists()


def test_a_partial_download_of_another_url_is_not_resumed(server, tmp_path):
    server.files["/a.bin"] = b"a" * 5000
    server.files["/b.bin"] = b"b" * 5000
    server.cut_after["/a.bin"] = 2000
    with pytest.raises(FetchError):
        download(server.url("/a.bin"), tmp_path / "f.bin", progress=False, retries=0)
    assert (tmp_path / "f.bin.part").stat().st_size == 2000
    path, _ = download(server.url("/b.bin"), tmp_path / "f.bin", progress=False)
    assert path.read_bytes() == b"b" * 5000  # not a's first 2000 bytes and b's rest
    assert server.requests[-1] == ("/b.bin", None)
    assert not (tmp_path / ".f.bin.part.url").exists()


def test_ctrl_c_during_fetch_speaks_of_the_download(monkeypatch, capsys):
    from segbench.cli import main

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(fetch_mod, "fetch", interrupted)
    assert main(["fetch", "bsds500", "--dest", "unused"]) == 130
    assert "a download where it stopped" in capsys.readouterr().err


# --- QA round of 2026-12-07 night (helper-50) -----------------------------------------


def test_a_hand_copied_archive_stays_and_a_bad_one_is_set_aside(server, mini500, tmp_path):
    src = _source(server, mini500, sha=_sha(mini500))
    dest = tmp_path / "hand"
    dest.mkdir()
    (dest / "BSR_bsds500.tgz").write_bytes(mini500)
    n = len(server.requests)
    fetch(src, dest, progress=False)
    assert len(server.requests) == n  # used, not downloaded
    assert (dest / "BSR_bsds500.tgz").read_bytes() == mini500  # and kept: the user's
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "BSR_bsds500.tgz").write_bytes(b"my own notes, not the archive")
    fetch(src, bad, progress=False)
    assert (bad / "BSR_bsds500.tgz.refused").read_bytes() == b"my own notes, not the archive"
    assert not (bad / "BSR_bsds500.tgz").exists()  # the one it downloaded is removed


def test_a_file_changed_in_place_is_noticed_and_named(server, mini500, tmp_path):
    src = _source(server, mini500, sha=_sha(mini500))
    root = fetch(src, tmp_path, progress=False)
    f = root / "images" / "test" / "synth000.png"
    data = bytearray(f.read_bytes())
    data[-20] ^= 0xFF  # same size, other bytes
    f.write_bytes(bytes(data))
    with pytest.raises(InputError, match="differ from the archive's.*synth000.png"):
        fetch(src, tmp_path, progress=False)


def test_fetch_expands_the_home_folder(server, mini500, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    src = _source(server, mini500, sha=_sha(mini500))
    root = fetch(src, "~/data", progress=False)
    assert root == tmp_path / "home" / "data" / "BSR" / "BSDS500" / "data"
    assert not (tmp_path / "~").exists()


def test_a_second_fetch_into_the_folder_at_once_is_refused(server, mini500, tmp_path):
    from segbench.io import hold_lock, release_lock

    src = _source(server, mini500, sha=_sha(mini500))
    (tmp_path / ".segbench-fetch").mkdir()
    held = hold_lock(tmp_path / ".segbench-fetch" / "mini500.lock", "busy{holder}")
    try:  # flock is per open file: a second open in this process is refused too
        with pytest.raises(InputError, match="another segbench fetch of mini500"):
            fetch(src, tmp_path, progress=False)
    finally:
        release_lock(held)
    assert fetch(src, tmp_path, progress=False).is_dir()


def test_a_server_gone_after_a_cut_says_what_is_kept(server, mini500, tmp_path,
                                                     monkeypatch):
    import urllib.error

    src = _source(server, mini500, sha=_sha(mini500))
    server.cut_after["/BSR_bsds500.tgz"] = 1000
    real_open = fetch_mod._open
    calls = []

    def dies(url, offset, timeout):
        calls.append(offset)
        if len(calls) > 1:  # the server was killed after the cut
            raise urllib.error.URLError(ConnectionResetError(104, "Connection reset"))
        return real_open(url, offset, timeout)

    monkeypatch.setattr(fetch_mod, "_open", dies)
    with pytest.raises(FetchError, match="the 1000 bytes received are kept in "
                       r"BSR_bsds500.tgz.part: rerun to resume") as err:
        fetch(src, tmp_path, progress=False, retries=1)
    assert err.value.resumable


def test_a_missing_local_file_is_not_a_connection(tmp_path):
    with pytest.raises(FetchError, match="cannot read"):
        fetch_mod.download((tmp_path / "nope.tgz").as_uri(), tmp_path / "x.tgz",
                           progress=False)


def test_an_archive_set_aside_never_replaces_one_set_aside_before(server, mini500,
                                                                 tmp_path):
    src = _source(server, mini500, sha=_sha(mini500))
    (tmp_path / "BSR_bsds500.tgz.refused").write_bytes(b"the first one")
    (tmp_path / "BSR_bsds500.tgz").write_bytes(b"the second one")
    fetch(src, tmp_path, progress=False)
    assert (tmp_path / "BSR_bsds500.tgz.refused").read_bytes() == b"the first one"
    assert (tmp_path / "BSR_bsds500.tgz.refused-2").read_bytes() == b"the second one"
