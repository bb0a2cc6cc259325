"""The annotation server without a browser: the 2001 assignment rules, the ledger under
concurrent load and a kill -9, and the safety of the HTTP surface."""

from __future__ import annotations

import http.client
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from segbench.annotate import Ledger, RuleError, candidates, choose, make_server

# ---- the rules -----------------------------------------------------------------------

def _check_rules(ledger: Ledger, per_image: int) -> None:
    """Every rule of the 2001 paper on the ledger's current state."""
    db = ledger._db()
    rows = db.execute("SELECT subject, iid, gray FROM assignments").fetchall()
    pairs = Counter((s, i) for s, i, _ in rows)
    assert max(pairs.values(), default=1) == 1                     # nobody sees one twice
    sets = ledger.assignment_sets()
    assert max(map(len, sets.values())) <= per_image               # at most per_image
    nonempty = [s for s in sets.values() if s]
    assert len(set(nonempty)) == len(nonempty)                     # no two sets the same
    grey = Counter((i, g) for _, i, g in rows)
    for iid in sets:                                               # half grey, per image
        assert abs(grey[iid, 0] - grey[iid, 1]) <= 1, iid
    subs = db.execute("SELECT subject, iid FROM submissions").fetchall()
    assert len(set(subs)) == len(subs)
    assert set(subs) <= set(pairs)                                 # every one was assigned


def test_assignment_rules_hold_over_thousands_of_requests(tmp_path):
    per_image, rng = 4, random.Random(7)
    ledger = Ledger(tmp_path / "ledger.sqlite")
    ledger.add_images([(f"im{k:02d}", 4, 3, f"im{k:02d}.png") for k in range(40)])
    subjects = [ledger.subject_id(f"subject {k}") for k in range(30)]
    refused = given = 0
    for step in range(3000):
        s = rng.choice(subjects)
        before = ledger.assignment_sets()
        got = ledger.assign(s, per_image, rng)
        if got is None:   # refused only when no image is allowed (checked by brute force)
            refused += 1
            for iid, members in before.items():
                others = {v for k, v in before.items() if k != iid and v}
                assert (s in members or len(members) >= per_image
                        or (members | {s}) in others)
            continue
        iid, p = got
        assert s in ledger.assignment_sets()[iid]
        if rng.random() < 0.8:     # most finish; the others keep the image reserved
            ledger.submit(s, iid, p, 1, bytes(24), "date", collect=True)
            given += 1
            with pytest.raises(RuleError):
                ledger.submit(s, iid, p, 1, bytes(24), "date", collect=True)
        if step % 100 == 0:
            _check_rules(ledger, per_image)
    _check_rules(ledger, per_image)
    assert given > 100 and refused > 100       # the load reached the limits
    total = Counter(g for (g,) in ledger._db().execute("SELECT gray FROM assignments"))
    assert abs(total[0] - total[1]) <= 0.05 * (total[0] + total[1])   # half in grey


def test_choice_is_biased_toward_images_already_segmented():
    sets = {"fresh": frozenset(), "one": frozenset({1}), "two": frozenset({1, 2})}
    assert candidates(3, sets, 5) == ["fresh", "one", "two"]
    assert candidates(1, sets, 5) == []         # saw two; alone on one, so fresh -> {1}
    assert candidates(2, sets, 5) == ["fresh"]  # one -> {1, 2}, the set of two
    rng = random.Random(0)
    counts = Counter(choose(3, sets, 5, rng) for _ in range(6000))
    # weights 1 + 4k: 1, 5, 9
    assert counts["two"] > counts["one"] > 3 * counts["fresh"] > 0
    assert abs(counts["two"] / 6000 - 9 / 15) < 0.03


# ---- HTTP helpers --------------------------------------------------------------------

class Client:
    """One subject's browser: urllib with its own cookie."""

    def __init__(self, base: str, cookie: str | None = None):
        self.base, self.cookie = base.rstrip("/"), cookie

    def req(self, method, path, body=None, headers=None, *, api_header=True):
        h = {"X-Segbench": "1"} if api_header else {}
        h.update(headers or {})
        if self.cookie:
            h["Cookie"] = self.cookie
        r = urllib.request.Request(self.base + path, data=body, method=method, headers=h)
        try:
            with urllib.request.urlopen(r, timeout=60) as resp:
                status, data, hdrs = resp.status, resp.read(), resp.headers
        except urllib.error.HTTPError as err:
            status, data, hdrs = err.code, err.read(), err.headers
        if hdrs.get("Set-Cookie"):
            self.cookie = hdrs["Set-Cookie"].split(";")[0]
        return status, data, hdrs

    def login(self, name):
        st, data, _ = self.req("POST", "/api/login", json.dumps({"name": name}).encode(),
                               {"Content-Type": "application/json"})
        assert st == 200, data
        return json.loads(data)["subject"]


def _pattern(subject: int, iid: str, h: int, w: int) -> np.ndarray:
    """The segmentation a simulated subject draws: stripes that depend on both."""
    yy, xx = np.mgrid[:h, :w]
    k = 2 + (subject + int(iid[2:])) % 3
    return ((xx // (1 + subject % 4) + yy) % k).astype(np.uint16)


def _work(base, name, cookie, acked, errors, barrier=None):
    """A subject's session: sign in (or reuse the cookie), then next / draft / submit
    until no image is left or the server is gone."""
    c = Client(base, cookie)
    try:
        if barrier is not None:
            barrier.wait()
        sid = c.login(name) if cookie is None else int(cookie.split("=")[1].split(".")[0])
        acked.setdefault("cookies", {})[name] = c.cookie
        while True:
            st, data, _ = c.req("POST", "/api/next", b"")
            if st != 200:
                errors.append((name, "next", st, data))
                return
            iid = json.loads(data)["iid"]
            if iid is None:
                return
            st, data, _ = c.req("GET", f"/api/task/{iid}")
            if st != 200:                        # (an assert here would only end the thread)
                errors.append((name, "task", st, data))
                return
            task = json.loads(data)
            lab = _pattern(sid, iid, task["height"], task["width"])
            body = lab.astype("<u2").tobytes()
            seg = {"X-Segments": str(int(lab.max()) + 1)}
            st, data, _ = c.req("PUT", f"/api/draft/{iid}", body, seg)
            if st != 200:
                errors.append((name, "draft", st, data))
                return
            st, data, _ = c.req("POST", f"/api/submit/{iid}", body, seg)
            if st != 200:
                errors.append((name, "submit", st, data))
                return
            acked.setdefault("subs", []).append((sid, iid, task["gray"]))
    except (OSError, http.client.HTTPException):   # URLError, reset, truncated reply
        return   # the server was killed under us


def _images(folder: Path, n: int, h=16, w=24) -> Path:
    folder.mkdir()
    rng = np.random.default_rng(0)
    for k in range(n):
        Image.fromarray(rng.integers(0, 255, (h, w, 3), dtype=np.uint8)).save(
            folder / f"im{k:02d}.png")
    return folder


def _start(images, out, per_image):
    proc = subprocess.Popen(
        [sys.executable, "-m", "segbench.cli", "annotate", "--collect", "--images",
         str(images), "--out", str(out), "--per-image", str(per_image), "--port", "0",
         "--quiet", "--seed", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert "serving http://127.0.0.1:" in line, proc.stderr.read()
    return proc, line.split("serving ")[1].split()[0]


def _stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _check_disk(out: Path, per_image: int) -> list:
    """Every ledger submission has its .seg file with the subject's pattern, and there
    is no other file; the rules hold. Returns the ledger's submissions."""
    from segbench.io import read_seg
    ledger = Ledger(out / "annotate.sqlite")
    _check_rules(ledger, per_image)
    subs = ledger.submissions()
    files = sorted((out / "human").rglob("*.seg"))
    assert len(files) == len(subs)
    for s in subs:
        path = out / "human" / ("gray" if s.presentation.gray else "color") / \
            str(s.subject) / f"{s.iid}.seg"
        seg = read_seg(path)
        assert (seg.user, seg.gray) == (s.subject, s.presentation.gray)
        assert (seg.labels == _pattern(s.subject, s.iid, *seg.shape)).all()
    names = json.loads((out / "subjects.json").read_text())
    assert set(map(int, names)) >= {s.subject for s in subs}
    ledger.close()
    return subs


def test_two_dozen_subjects_submitting_at_once(tmp_path):
    images, out, per_image, n = _images(tmp_path / "images", 12), tmp_path / "out", 4, 24
    proc, base = _start(images, out, per_image)
    acked, errors = {}, []
    try:
        barrier = threading.Barrier(n)
        threads = [threading.Thread(target=_work, args=(base, f"subject {k}", None, acked,
                                                        errors, barrier))
                   for k in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert errors == []
        prog = json.loads(urllib.request.urlopen(base + "api/progress").read())
    finally:
        _stop(proc)
    subs = _check_disk(out, per_image)
    done = sorted((s.subject, s.iid, s.presentation.gray) for s in subs)
    assert done == sorted(acked["subs"])                   # each once, none lost
    assert len(done) == 12 * per_image                     # every image filled
    assert sum(c["submitted"] for c in prog["subjects"].values()) == len(done)
    assert all(c["color"] + c["gray"] == per_image for c in prog["images"].values())


def test_kill_9_mid_load_and_restart_lose_nothing(tmp_path):
    images, out, per_image, n = _images(tmp_path / "images", 12), tmp_path / "out", 4, 20
    proc, base = _start(images, out, per_image)
    acked, errors = {}, []
    threads = [threading.Thread(target=_work, args=(base, f"s{k}", None, acked, errors))
               for k in range(n)]
    try:
        for t in threads:
            t.start()
        deadline = time.monotonic() + 60
        while len(acked.get("subs", [])) < 12 and time.monotonic() < deadline:
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        for t in threads:
            t.join(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    before = set(acked.get("subs", []))
    assert 12 <= len(before) < 12 * per_image              # killed mid-load
    proc, base = _start(images, out, per_image)            # restart on the same folder
    try:
        ledger = Ledger(out / "annotate.sqlite")
        kept = {(s.subject, s.iid, s.presentation.gray) for s in ledger.submissions()}
        assert before <= kept                              # nothing acknowledged lost
        ledger.close()
        acked2, errors2 = {}, []
        cookies = acked["cookies"]                         # signed before the kill
        threads = [threading.Thread(target=_work,
                                    args=(base, name, cookie, acked2, errors2))
                   for name, cookie in cookies.items()]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert errors2 == []
    finally:
        _stop(proc)
    subs = _check_disk(out, per_image)
    done = [(s.subject, s.iid, s.presentation.gray) for s in subs]
    assert set(done) == kept | set(acked2.get("subs", []))
    assert len(done) == 12 * per_image


# ---- safety -----------------------------------------------------------------------------

@pytest.fixture
def single(tmp_path):
    images = _images(tmp_path / "images", 2)
    srv = make_server(images, tmp_path / "out", port=0, subject="../../etc/passwd\u00e9")
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv, tmp_path
    srv.shutdown()
    srv.server_close()


def test_requests_are_validated_and_nothing_leaves_out(single):
    srv, tmp = single
    c = Client(srv.url)
    good = np.zeros((16, 24), "<u2").tobytes()
    one = {"X-Segments": "1"}
    for path in ("/", "/edit?iid=im00", "/progress", "/static/editor.js",
                 "/api/task/im00", "/nope"):
        st, _, hdrs = c.req("GET", path)
        assert "script-src 'self'" in hdrs["Content-Security-Policy"], path
    assert c.req("POST", "/api/submit/im00", good[:-2], one)[0] == 400     # short
    assert c.req("POST", "/api/submit/im00", good + b"xx", one)[0] == 413  # too long
    assert c.req("POST", "/api/submit/im00", good, {"X-Segments": "0"})[0] == 400
    bad = np.zeros((16, 24), "<u2")
    bad[3, 4] = 7
    assert c.req("POST", "/api/submit/im00", bad.tobytes(), {"X-Segments": "7"})[0] == 400
    assert c.req("POST", "/api/submit/im00", good, one, api_header=False)[0] == 403
    assert c.req("POST", "/api/submit/im00", good, {**one, "Origin": "http://evil"})[0] \
        == 403
    assert c.req("GET", "/", headers={"Host": "evil.example:80"})[0] == 421
    for iid in ("..%2F..%2Fx", "im00.seg", "%2e%2e"):
        assert c.req("POST", f"/api/submit/{iid}", good, one)[0] == 404
    assert c.req("GET", "/static/..%2Fserver.py")[0] == 404
    st, data, _ = c.req("POST", "/api/submit/im00", good, one)
    assert st == 200 and json.loads(data)["saved"] == "human/color/1/im00.seg"
    # the name is data, never a path: the folder is the subject's number
    names = json.loads((tmp / "out" / "subjects.json").read_text(encoding="utf-8"))
    assert names == {"1": "../../etc/passwd\u00e9"}
    written = {p.relative_to(tmp).as_posix() for p in tmp.rglob("*") if p.is_file()}
    assert {w for w in written if not w.startswith("out/")} == {"images/im00.png",
                                                                "images/im01.png"}


def test_collection_mode_cookie_and_assignment_are_enforced(tmp_path):
    images = _images(tmp_path / "images", 3)
    srv = make_server(images, tmp_path / "out", port=0, collect=True, per_image=2, seed=3)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        anon = Client(srv.url)
        assert anon.req("POST", "/api/next", b"")[0] == 401
        assert anon.req("GET", "/api/task/im00", headers={"Cookie": f"segbench_subject=1."
                                                          f"{'0' * 64}"})[0] == 401
        st, data, _ = anon.req("POST", "/api/login", b'{"name": "bad\\u0007name"}',
                               {"Content-Type": "application/json"})
        assert st == 400
        a = Client(srv.url)
        a.login("alice")
        st, data, _ = a.req("POST", "/api/next", b"")
        iid = json.loads(data)["iid"]
        assert json.loads(a.req("POST", "/api/next", b"")[1])["iid"] == iid   # resumes
        other = next(i for i in ("im00", "im01", "im02") if i != iid)
        assert a.req("GET", f"/api/task/{other}")[0] == 409     # not assigned to alice
        body = np.zeros((16, 24), "<u2").tobytes()
        assert a.req("POST", f"/api/submit/{iid}", body, {"X-Segments": "1"})[0] == 200
        assert a.req("POST", f"/api/submit/{iid}", body, {"X-Segments": "1"})[0] == 409
        assert a.req("GET", f"/api/task/{iid}")[0] == 409       # never the same twice
        page = a.req("GET", "/progress")[1].decode()
        assert "alice" in page and "<script" not in page
        # a restart keeps the cookie valid (the key is in the ledger)
        srv2 = make_server(images, tmp_path / "out", port=0, collect=True, per_image=2)
        assert srv2.app.verify(a.cookie.split("=", 1)[1]) == 1
        srv2.server_close()
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_file_that_cannot_be_written_is_reported_and_written_on_restart(tmp_path,
                                                                          monkeypatch):
    """Disk full (or the like) after the ledger took a submission: a 507 that says the
    work is kept, not an internal error; the next start writes the file."""
    import segbench.io._seg as seg_io
    from segbench.errors import OutputError
    images = _images(tmp_path / "images", 1)
    srv = make_server(images, tmp_path / "out", port=0, subject="x")
    threading.Thread(target=srv.serve_forever, daemon=True).start()

    def full(path, data, **kw):
        raise OutputError(path, "No space left on device")
    try:
        monkeypatch.setattr(seg_io, "atomic_write_bytes", full)
        body = np.zeros((16, 24), "<u2").tobytes()
        st, data, _ = Client(srv.url).req("POST", "/api/submit/im00", body,
                                          {"X-Segments": "1"})
        assert st == 507
        reply = json.loads(data)["error"]
        assert "saved in the ledger" in reply and "No space left on device" in reply
    finally:
        srv.shutdown()
        srv.server_close()
    monkeypatch.undo()
    seg = tmp_path / "out" / "human" / "color" / "1" / "im00.seg"
    assert not seg.exists()
    make_server(images, tmp_path / "out", port=0, subject="x").server_close()
    assert seg.is_file()


def test_cli_errors_name_the_file_without_traceback(tmp_path, capsys):
    from segbench.cli import main
    assert main(["annotate", "--images", str(tmp_path / "none"), "--out",
                 str(tmp_path / "o"), "--subject", "x"]) == 2
    assert f"{tmp_path / 'none'}: images folder not found" in capsys.readouterr().err
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("mine")
    images = _images(tmp_path / "images", 1)
    assert main(["annotate", "--images", str(images), "--out", str(foreign),
                 "--subject", "x"]) == 2
    err = capsys.readouterr().err
    assert str(foreign) in err and "Traceback" not in err
    assert main(["annotate", "--images", str(images), "--out", str(tmp_path / "o")]) == 2
    assert "--subject" in capsys.readouterr().err
    (images / "bad name!.png").write_bytes((images / "im00.png").read_bytes())
    assert main(["annotate", "--images", str(images), "--out", str(tmp_path / "o2"),
                 "--subject", "x"]) == 2
    assert "bad name!.png" in capsys.readouterr().err
    assert main(["annotate-export", str(foreign), "--split", "test"]) == 2
    assert "not an annotation folder" in capsys.readouterr().err
    assert not (tmp_path / "o2").exists() or not any((tmp_path / "o2").iterdir())


def test_saved_segmentations_are_a_dataset_and_export_to_bsds500(single):
    from segbench.datasets import BSDS500, open_ground_truth
    from segbench.io import read_ground_truth
    srv, tmp = single
    c = Client(srv.url)
    lab = _pattern(1, "im01", 16, 24)
    st, _, _ = c.req("POST", "/api/submit/im01", lab.astype("<u2").tobytes(),
                     {"X-Segments": str(int(lab.max()) + 1)})
    assert st == 200
    out = tmp / "out"
    ds = open_ground_truth(out / "human" / "color")   # what segbench boundary --gt reads
    item = ds["im01"]
    assert item.users == [1] and (item.segmentations[0] == lab + 1).all()
    from segbench.cli import main
    assert main(["annotate-export", str(out), "--split", "test"]) == 0
    gt = read_ground_truth(out / "bsds500" / "groundTruth" / "test" / "im01.mat")
    assert len(gt) == 1 and (gt[0].segmentation == lab + 1).all()
    assert BSDS500(out / "bsds500").ids("test") == ["im01"]


def test_a_submission_committed_before_a_crash_is_written_on_restart(tmp_path):
    from segbench.annotate.ledger import Presentation
    from segbench.io import read_seg
    images, out = _images(tmp_path / "images", 2), tmp_path / "out"
    make_server(images, out, port=0, subject="x").server_close()
    ledger = Ledger(out / "annotate.sqlite")   # as if killed between commit and write
    lab = _pattern(1, "im00", 16, 24)
    ledger.submit(1, "im00", Presentation(), int(lab.max()) + 1,
                  lab.astype("<u2").tobytes(), "Tue Aug 14 18:08:02 2001", collect=False)
    ledger.close()
    path = out / "human" / "color" / "1" / "im00.seg"
    assert not path.exists()
    make_server(images, out, port=0, subject="x").server_close()
    seg = read_seg(path)
    assert (seg.labels == lab).all() and seg.date == "Tue Aug 14 18:08:02 2001"


def test_a_refused_body_is_never_read_as_the_next_request(single):
    srv, _ = single
    conn = http.client.HTTPConnection(*srv.server_address[:2], timeout=10)
    smuggled = b"GET /progress HTTP/1.1\r\nHost: x\r\n\r\n"
    conn.request("PUT", "/api/draft/nope", body=smuggled,
                 headers={"X-Segbench": "1", "X-Segments": "1"})
    reply = conn.getresponse()
    assert reply.status == 404 and reply.getheader("Connection") == "close"
    reply.read()
    conn.close()


def test_a_damaged_ledger_is_one_line_naming_it(tmp_path, capsys):
    """An ``annotate.sqlite`` that is not a database (or locked, read-only) stops the
    command with one line naming the file, not a traceback."""
    from segbench.cli import main
    images = _images(tmp_path / "images", 2)
    out = tmp_path / "out"
    out.mkdir()
    (out / ".segbench-annotate").write_text("an annotation folder of segbench annotate\n")
    (out / "annotate.sqlite").write_bytes(b"this is not an SQLite database" * 10)
    assert main(["annotate", "--images", str(images), "--out", str(out),
                 "--subject", "ana", "--port", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "annotate.sqlite" in err
    assert "cannot open the annotation ledger" in err


def test_an_image_requested_by_many_at_once_is_encoded_once(tmp_path, monkeypatch):
    """A group starting together asks for the same photograph at once: one decode and
    encoding, every request the same bytes; an encoding that fails lets the next try."""
    import segbench.io as sio
    from segbench.annotate.ledger import Presentation
    images = _images(tmp_path / "images", 1)
    srv = make_server(images, tmp_path / "out", port=0, subject="x")
    real, calls = sio.read_image, []

    def slow_read(path):
        calls.append(path)
        time.sleep(0.2)
        return real(path)
    try:
        monkeypatch.setattr(sio, "read_image", slow_read)
        got = [None] * 12
        start = threading.Barrier(len(got))

        def ask(k):
            start.wait()
            got[k] = srv.app.png("im00", Presentation(gray=True))
        threads = [threading.Thread(target=ask, args=(k,)) for k in range(len(got))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert len(calls) == 1 and got[0][:8] == b"\x89PNG\r\n\x1a\n"
        assert all(g == got[0] for g in got)

        def broken(path):
            raise OSError("unreadable")
        monkeypatch.setattr(sio, "read_image", broken)
        with pytest.raises(OSError):
            srv.app.png("im00", Presentation())
        monkeypatch.setattr(sio, "read_image", slow_read)
        assert srv.app.png("im00", Presentation())[:4] == b"\x89PNG"
        assert len(calls) == 2
    finally:
        srv.server_close()


# ---- issue 28 ------------------------------------------------------------------------

def test_export_holds_what_the_ledger_acknowledged_before_the_file(tmp_path, capsys):
    """Killed between the commit and the file (item 11): export writes what the ledger
    holds, a fresh submission and one that replaced a file still on disk; a restart
    writes the files; labels the ledger cannot give back are refused by name."""
    from segbench.annotate.ledger import Presentation
    from segbench.cli import main
    from segbench.io import read_ground_truth, read_seg
    images, out = _images(tmp_path / "images", 2), tmp_path / "out"
    srv = make_server(images, out, port=0, subject="x")
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:                                       # im01 submitted and written normally
        old = _pattern(1, "im01", 16, 24)
        assert Client(srv.url).req("POST", "/api/submit/im01", old.astype("<u2").tobytes(),
                                   {"X-Segments": str(int(old.max()) + 1)})[0] == 200
    finally:
        srv.shutdown()
        srv.server_close()
    ledger = Ledger(out / "annotate.sqlite")   # as if killed between commit and write:
    new0, new1 = _pattern(2, "im00", 16, 24), (old + 1) % 3
    for iid, lab in (("im00", new0), ("im01", new1)):   # a new one; a replacement
        ledger.submit(1, iid, Presentation(), int(lab.max()) + 1,
                      lab.astype("<u2").tobytes(), "Tue Aug 14 18:08:02 2001",
                      collect=False)
    ledger.close()
    assert not (out / "human" / "color" / "1" / "im00.seg").exists()
    assert main(["annotate-export", str(out), "--split", "test"]) == 0
    err = capsys.readouterr().err
    assert "2 submission(s) had no up-to-date .seg file" in err
    assert "human/color/1/im00.seg" in err and "human/color/1/im01.seg" in err
    for iid, lab in (("im00", new0), ("im01", new1)):
        gt = read_ground_truth(out / "bsds500" / "groundTruth" / "test" / f"{iid}.mat")
        assert len(gt) == 1 and (gt[0].segmentation == lab + 1).all(), iid
    make_server(images, out, port=0, subject="x").server_close()   # the restart repairs
    for iid, lab in (("im00", new0), ("im01", new1)):
        assert (read_seg(out / "human" / "color" / "1" / f"{iid}.seg").labels == lab).all()
    assert main(["annotate-export", str(out), "--split", "test"]) == 0
    assert "warning" not in capsys.readouterr().err
    # labels the ledger cannot give back: refused, named, nothing written
    db = Ledger(out / "annotate.sqlite")
    with db.transaction() as c:
        c.execute("UPDATE submissions SET labels=? WHERE iid='im00'", (b"not zlib",))
    db.close()
    assert main(["annotate-export", str(out), "--split", "val"]) == 2
    err = capsys.readouterr().err
    assert "human/color/1/im00.seg (damaged labels" in err and "Traceback" not in err
    assert not (out / "bsds500" / "groundTruth" / "val").exists()


def test_a_photograph_that_cannot_be_decoded_is_never_assigned(tmp_path):
    """Item 12: a truncated JPEG and a file that is no image are named at start and
    never assigned; the collection goes on with the others."""
    images = _images(tmp_path / "images", 2)
    buf = __import__("io").BytesIO()
    Image.fromarray(np.full((40, 60, 3), 99, np.uint8)).save(buf, "JPEG")
    (images / "truncated.jpg").write_bytes(buf.getvalue()[:300])   # header fine, no pixels
    (images / "garbage.png").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(200))
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "segbench.cli", "annotate", "--collect", "--images",
         str(images), "--out", str(out), "--per-image", "3", "--port", "0", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert "serving http://127.0.0.1:" in line
        base = line.split("serving ")[1].split()[0]
        given = set()
        for k in range(6):
            c = Client(base)
            c.login(f"s{k}")
            for _ in range(3):
                iid = json.loads(c.req("POST", "/api/next", b"")[1])["iid"]
                if iid is None:
                    break
                given.add(iid)
                assert c.req("GET", f"/api/image/{iid}")[0] == 200
                body = np.zeros((16, 24), "<u2").tobytes()
                assert c.req("POST", f"/api/submit/{iid}", body,
                             {"X-Segments": "1"})[0] == 200
        assert given == {"im00", "im01"}
        page = Client(base).req("GET", "/progress")[1].decode()
        assert "truncated" not in page and "garbage" not in page
    finally:
        _stop(proc)
    err = proc.stderr.read()
    warned = [w for w in err.splitlines() if "left out" in w]
    assert len(warned) == 2, err
    assert any(str(images / "truncated.jpg") in w and "truncated" in w for w in warned)
    assert any(str(images / "garbage.png") in w for w in warned)
    assert "Traceback" not in err
    # nothing decodable at all: one line naming the files, exit 2
    only = tmp_path / "only-bad"
    only.mkdir()
    (only / "garbage.png").write_bytes((images / "garbage.png").read_bytes())
    r = subprocess.run([sys.executable, "-m", "segbench.cli", "annotate", "--collect",
                        "--images", str(only), "--out", str(tmp_path / "o2"), "--port",
                        "0"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "no photograph in this folder can be decoded" in r.stderr
    assert str(only / "garbage.png") in r.stderr and "Traceback" not in r.stderr


def test_reservations_expire_and_a_subject_can_skip_an_image(tmp_path):
    """Item 12: an open assignment left without a change for the stated time goes to
    someone else; a subject can give up an image that fails to load (its draft stays
    in the ledger) and is not given it again."""
    images = _images(tmp_path / "images", 2)
    srv = make_server(images, tmp_path / "out", port=0, collect=True, per_image=1,
                      seed=5, reservation_hours=1.5 / 3600)
    threading.Thread(target=srv.serve_forever, daemon=True).start()

    def nxt(c):
        st, data, _ = c.req("POST", "/api/next", b"")
        assert st == 200, data
        return json.loads(data)["iid"]
    try:
        a, b, c = Client(srv.url), Client(srv.url), Client(srv.url)
        for name, cl in (("a", a), ("b", b), ("c", c)):
            cl.login(name)
        home = a.req("GET", "/")[1].decode()
        assert "without a change for 0.000416667 hours" in home
        x, y = nxt(a), nxt(b)
        assert {x, y} == {"im00", "im01"} and nxt(c) is None     # one subject per image
        body = np.zeros((16, 24), "<u2").tobytes()
        for _ in range(3):   # b keeps working on y (drafts), a does nothing
            time.sleep(0.6)
            assert b.req("PUT", f"/api/draft/{y}", body, {"X-Segments": "1"})[0] == 200
        assert nxt(c) == x                           # a's reservation expired, b's not
        st, data, _ = a.req("GET", f"/api/task/{x}")
        assert st == 409 and "no longer yours" in json.loads(data)["error"]
        assert nxt(a) is None                        # a saw x: never given it again
        # b's photograph turns unreadable while b works: b skips it
        (images / f"{y}.png").write_bytes(b"broken")
        st, data, _ = b.req("GET", f"/api/image/{y}")
        assert st == 400 and "image" in json.loads(data)["error"]
        assert b.req("POST", f"/api/skip/{y}", b"")[0] == 200
        assert b.req("POST", f"/api/skip/{y}", b"")[0] == 409   # only an open one
        assert b.req("GET", f"/api/task/{y}")[0] == 409
        kept = srv.app.ledger.draft_ids(2, False) | srv.app.ledger.draft_ids(2, True)
        assert y in kept                                         # the draft is kept
        assert nxt(b) is None                        # x is c's, y was given up by b
        assert nxt(a) == y                           # y's place went to someone else
        # the home page's form does the same for a browser without script
        st, _, hdrs = a.req("POST", "/skip", f"iid={y}".encode(),
                            {"Content-Type": "application/x-www-form-urlencoded"},
                            api_header=False)
        assert st == 200 and nxt(a) is None          # (urllib followed the 303 home)
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_locked_ledger_is_said_at_once_and_refused_within_5_s(tmp_path):
    """Item 13: another program holds the ledger's lock. The start says so at once,
    then ends with a clear error within 5 s (it used to wait 61 s in silence)."""
    images, out = _images(tmp_path / "images", 1), tmp_path / "out"
    make_server(images, out, port=0, subject="x").server_close()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys, time\n"
         f"db = sqlite3.connect({str(out / 'annotate.sqlite')!r}, isolation_level=None)\n"
         "db.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        t0 = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "segbench.cli", "annotate", "--images", str(images),
             "--out", str(out), "--subject", "x", "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = []                            # (seconds since the start, line)
        reader = threading.Thread(target=lambda: lines.extend(
            (time.monotonic() - t0, ln) for ln in iter(proc.stderr.readline, "")))
        reader.start()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(5)
        t_end = time.monotonic() - t0
    finally:
        holder.kill()
        holder.wait()
    assert lines, "nothing said while waiting"
    t_first, first = lines[0]
    rest = "".join(ln for _, ln in lines[1:])
    assert "waiting for the ledger lock held by another program" in first
    assert t_first < 3.0                      # at once (the interpreter's start included)
    assert proc.returncode == 2
    assert t_end - t_first <= 5.0, (t_first, t_end)
    assert "the ledger is locked by another program" in rest
    assert str(out / "annotate.sqlite") in rest and "Traceback" not in rest
    make_server(images, out, port=0, subject="x").server_close()   # free again: starts


def test_a_request_meeting_a_locked_ledger_is_a_503_to_retry(single):
    import sqlite3
    srv, tmp = single
    srv.app.ledger._busy = 0.3           # (a request waits 15 s before giving up)
    holder = sqlite3.connect(tmp / "out" / "annotate.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        st, data, hdrs = Client(srv.url).req("PUT", "/api/draft/im00",
                                             np.zeros((16, 24), "<u2").tobytes(),
                                             {"X-Segments": "1"})
        assert st == 503 and "try again" in json.loads(data)["error"]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert Client(srv.url).req("PUT", "/api/draft/im00", np.zeros((16, 24), "<u2")
                               .tobytes(), {"X-Segments": "1"})[0] == 200


def test_an_export_holds_that_export_alone(tmp_path, capsys):
    """QA (helper-48): a re-export with another --presentation left the earlier
    export's files (colour ground truth under a grey export, exit 0), and an export
    that selected nothing reported success naming the annotation folder."""
    from segbench.annotate.ledger import Presentation
    from segbench.cli import main
    from segbench.io import read_ground_truth
    images, out = _images(tmp_path / "images", 2), tmp_path / "out"
    make_server(images, out, port=0, subject="x").server_close()
    ledger = Ledger(out / "annotate.sqlite")
    for iid in ("im00", "im01"):
        lab = _pattern(1, iid, 16, 24)
        ledger.submit(1, iid, Presentation(), int(lab.max()) + 1,
                      lab.astype("<u2").tobytes(), "Tue Aug 14 18:08:02 2001",
                      collect=False)
    ledger.close()
    dest = tmp_path / "gt"
    args = ["annotate-export", str(out), "--split", "test", "--dest", str(dest)]
    assert main(args) == 0
    assert sorted(p.name for p in (dest / "groundTruth" / "test").iterdir()) == \
        ["im00.mat", "im01.mat"]
    capsys.readouterr()
    assert main([*args, "--presentation", "gray"]) == 2          # nothing grey
    err = capsys.readouterr().err
    assert "no segmentation was made on the grey presentation (2 on the colour one)" \
        in err, err
    ledger = Ledger(out / "annotate.sqlite")
    lab = _pattern(3, "im01", 16, 24)
    ledger.submit(2, "im01", Presentation(gray=True), int(lab.max()) + 1,
                  lab.astype("<u2").tobytes(), "Tue Aug 14 18:09:02 2001", collect=False)
    ledger.close()
    assert main([*args, "--presentation", "gray"]) == 0
    assert f"1 ground-truth file(s) in {dest / 'groundTruth' / 'test'}" in \
        capsys.readouterr().out
    assert sorted(p.name for p in (dest / "groundTruth" / "test").iterdir()) == ["im01.mat"]
    assert sorted(p.name for p in (dest / "images" / "test").iterdir()) == ["im01.png"]
    gt = read_ground_truth(dest / "groundTruth" / "test" / "im01.mat")
    assert len(gt) == 1 and (gt[0].segmentation == lab + 1).all()
    (dest / "groundTruth" / "test" / "mine.mat").write_text("a file of the user's")
    assert main(args) == 0                                       # all again
    assert "1 file(s) beside this export that no export wrote" in capsys.readouterr().err
    assert (dest / "groundTruth" / "test" / "mine.mat").read_text() == "a file of the user's"
    assert sorted(p.name for p in (dest / "groundTruth" / "test").iterdir()) == \
        ["im00.mat", "im01.mat", "mine.mat"]


def test_an_edited_export_record_deletes_nothing_outside_the_split(tmp_path):
    """The record of exported files is a file anyone can edit: a path in it outside
    the split's folders (absolute, or climbing out) is never deleted."""
    import json

    from segbench.annotate.export import EXPORT_FILES, _forget_earlier_files
    dest = tmp_path / "gt"
    (dest / "groundTruth" / "test").mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    (dest / "keep.txt").write_text("keep")
    before = {"test": [str(victim), "../victim.txt", "keep.txt",
                       "groundTruth/test/../../keep.txt"]}
    (dest / EXPORT_FILES).write_text(json.dumps(before))
    _forget_earlier_files(dest, "test", before, [], None, {})
    assert victim.read_text() == "keep" and (dest / "keep.txt").read_text() == "keep"
