"""Issue 40, item 19 (part): no empty progress bar after ``segbench demo`` and ``segbench
site``. A bar for no work (a site rebuilt from its cache) drew "0img"; in a log (stderr
not a terminal) the last state of a bar whose work ended before its first redraw was
its empty 0 % line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_STATE = re.compile(r"^(?P<desc>.+?):\s+\d+%\|.*?\|\s*(?P<n>\d+)/(?P<total>\d+)\s")
_NO_WORK = re.compile(r":\s+0img\s")


def _segbench(*argv, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "segbench.cli", *argv], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, env=env)


def _bars(stderr: str) -> list[tuple[str, int, int]]:
    """(description, count, total) of the last state each bar drew, in order."""
    bars = []
    for piece in re.split(r"[\r\n]", stderr):
        m = _STATE.match(piece.strip())
        if m is None:
            continue
        state = (m["desc"], int(m["n"]), int(m["total"]))
        if bars and bars[-1][0] == state[0] and 0 < state[1]:
            bars[-1] = state                 # the same bar, redrawn
        else:
            bars.append(state)
    return bars


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "d"
    proc = _segbench("demo", "--out", str(out), "--n-images", "2")
    assert proc.returncode == 0, proc.stderr
    return out, proc.stderr


def test_demo_log_ends_every_bar_full(demo):
    _, stderr = demo
    bars = _bars(stderr)
    assert bars, f"no progress bar found in {stderr!r}"
    empty = [b for b in bars if b[1] < b[2]]
    assert not empty, f"bars left short of their total: {empty}"
    assert not _NO_WORK.search(stderr)


def test_site_rebuild_prints_no_bar_for_no_work(demo, tmp_path):
    out, _ = demo
    argv = ["site", "--gt", str(out / "dataset"), "--results",
            *sorted(str(p) for p in (out / "results").iterdir()), "--out", str(tmp_path / "s")]
    first = _segbench(*argv)
    assert first.returncode == 0, first.stderr
    again = _segbench(*argv)          # the human figures come from the site's cache
    assert again.returncode == 0, again.stderr
    assert not _NO_WORK.search(again.stderr), again.stderr
    assert all(n == total for _, n, total in _bars(again.stderr)), _bars(again.stderr)


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_site_rebuild_in_a_terminal_draws_no_empty_bar(demo, tmp_path):
    import fcntl
    import struct
    import termios

    out, _ = demo
    argv = [sys.executable, "-m", "segbench.cli", "site", "--gt", str(out / "dataset"),
            "--results", *sorted(str(p) for p in (out / "results").iterdir()),
            "--out", str(tmp_path / "s")]
    assert subprocess.run(argv, cwd=ROOT, capture_output=True, timeout=600).returncode == 0
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=follower)
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:                    # the terminal closed with the process
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert proc.wait(timeout=600) == 0
    text = seen.decode("utf-8", "replace")
    assert "site:" in text
    assert not _NO_WORK.search(text), text
