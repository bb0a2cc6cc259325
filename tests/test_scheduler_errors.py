"""``--scheduler`` when the cluster is not there, not an address, or goes away: one line
on stderr, exit 2, in bounded time; finished records are kept and a rerun resumes to the
bytes of a clean run. A worker killed mid-run does not change the result."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("dask.distributed")

N_IMAGES = 30
LOST = re.compile(r"segbench: error: the Dask cluster went away after (\d+) of "
                  rf"{N_IMAGES} images; finished images are saved, rerun to resume")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A synthetic dataset, gradient-magnitude soft maps, and a clean local run."""
    from segbench.algorithms.edges import gradient_magnitude
    from segbench.cli import main
    from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
    from segbench.io import write_soft_map
    tmp = tmp_path_factory.mktemp("sched")
    items = make_synthetic_dataset(N_IMAGES, shape=(90, 120), n_annotators=3, seed=5)
    root = write_synthetic_dataset(tmp / "ds", items)
    for it in items:
        write_soft_map(tmp / "soft" / f"{it.iid}.png", gradient_magnitude(it.image))
    gt, pred = root / "groundTruth" / "test", tmp / "soft"
    assert main(["boundary", "--gt", str(gt), "--pred", str(pred), "--out",
                 str(tmp / "clean"), "--quiet", "--no-plot"]) == 0
    return tmp, gt, pred


def outputs(out: Path) -> dict:
    """The official files and the per-image table of a run folder."""
    files = sorted(out.glob("*.txt")) + [out / "per_item_boundary.csv"]
    return {p.name: p.read_bytes() for p in files}


def segbench(*args, timeout=120):
    """Run the command line in a fresh process: (exit status, stdout, stderr, seconds)."""
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "segbench.cli", *args], capture_output=True,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t0


def boundary_args(data, out, scheduler):
    tmp, gt, pred = data
    return ["boundary", "--gt", str(gt), "--pred", str(pred), "--out", str(out),
            "--quiet", "--no-plot", "--threads", "1", "--scheduler", str(scheduler)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("segbench: error: "), err
    return lines[0]


def test_missing_scheduler_file_is_one_line_at_once(data, tmp_path):
    missing = tmp_path / "nowhere" / "scheduler.json"
    rc, _, err, took = segbench(*boundary_args(data, tmp_path / "out", missing), timeout=60)
    assert rc == 2 and took < 20
    line = one_error_line(err)
    assert str(missing) in line and "no such scheduler file" in line


def test_scheduler_file_without_address_names_it(data, tmp_path):
    bad = tmp_path / "scheduler.json"
    bad.write_text(json.dumps({"type": "Scheduler"}))
    rc, _, err, _ = segbench(*boundary_args(data, tmp_path / "out", bad), timeout=60)
    assert rc == 2
    assert str(bad) in one_error_line(err) and "not a Dask scheduler file" in err


@pytest.mark.parametrize("address, why", [
    ("notanaddress", "not a scheduler address"),
    ("127.0.0.1:notaport", "port must be a number"),
    ("udp://127.0.0.1:1", "unknown scheme udp://"),
    ("tcp://127.0.0.1:99999", "port must be a number")])
def test_malformed_address_is_one_line_at_once(data, tmp_path, address, why):
    rc, _, err, took = segbench(*boundary_args(data, tmp_path / "out", address), timeout=60)
    assert rc == 2 and took < 8          # no connection is tried: interpreter start only
    line = one_error_line(err)
    assert address in line and why in line
    assert not (tmp_path / "out").exists()       # refused before anything was written


def test_unreachable_scheduler_is_one_line_within_20_s(data, tmp_path):
    address = f"tcp://127.0.0.1:{free_port()}"   # nothing listens there
    rc, _, err, took = segbench(*boundary_args(data, tmp_path / "out", address), timeout=60)
    assert rc == 2 and took <= 20
    line = one_error_line(err)
    assert "cannot reach the Dask scheduler" in line and address in line


def _start(args, **kw):
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, **kw)


def _kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


@pytest.fixture
def cluster(tmp_path):
    """``start(n_workers)``: a ``dask scheduler`` on 127.0.0.1 and ``n_workers``
    one-thread workers without nannies, as separate processes: (scheduler file,
    scheduler process, worker processes). All are killed at the end."""
    procs = []

    def start(n_workers):
        sf = tmp_path / "scheduler.json"
        procs.append(_start([sys.executable, "-m", "distributed.cli.dask_scheduler",
                             "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                             "--scheduler-file", str(sf)]))
        workers = [_start([sys.executable, "-m", "distributed.cli.dask_worker",
                           "--scheduler-file", str(sf), "--nthreads", "1", "--no-nanny",
                           "--no-dashboard"]) for _ in range(n_workers)]
        procs.extend(workers)
        with distributed.Client(scheduler_file=str(sf), timeout="30s") as c:
            c.wait_for_workers(n_workers, timeout=60)
        return sf, procs[-1 - n_workers], workers
    yield start
    for p in procs:
        _kill(p)


def _run_until_records(args, out: Path, n: int):
    """Start the command; return it once ``n`` records of the run are saved."""
    proc = subprocess.Popen([sys.executable, "-m", "segbench.cli", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    records = out / ".segbench-records" / "boundary"
    t0 = time.monotonic()
    while not (records.is_dir() and len(list(records.glob("*.json"))) >= n):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() - t0 < 120
        time.sleep(0.05)
    return proc, records


def test_lost_cluster_is_one_line_and_the_rerun_resumes(data, cluster, tmp_path):
    tmp, gt, pred = data
    sf, scheduler, workers = cluster(1)
    out = tmp_path / "run"
    proc, records = _run_until_records(boundary_args(data, out, sf), out, 3)
    _kill(scheduler)
    for w in workers:
        _kill(w)
    t0 = time.monotonic()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and time.monotonic() - t0 < 20
    m = LOST.fullmatch(one_error_line(err))
    assert m, err
    done = int(m.group(1))
    assert 3 <= done < N_IMAGES and len(list(records.glob("*.json"))) == done
    assert not (out / "eval_bdry.txt").exists()
    # the rerun (here on one local process) reuses them and ends as a clean run
    rc, stdout, _, _ = segbench("boundary", "--gt", str(gt), "--pred", str(pred), "--out",
                                str(out), "--quiet", "--no-plot")
    assert rc == 0
    assert outputs(out) == outputs(tmp / "clean")


def test_a_worker_killed_mid_run_changes_nothing(data, cluster, tmp_path):
    tmp, gt, pred = data
    sf, _, workers = cluster(2)
    out = tmp_path / "run"
    proc, _ = _run_until_records(boundary_args(data, out, sf), out, 3)
    _kill(workers[0])
    _, err = proc.communicate(timeout=120)
    if proc.returncode != 0:          # failing is allowed, but cleanly, then resumable
        assert proc.returncode == 2 and LOST.fullmatch(one_error_line(err)), err
        rc, _, _, _ = segbench(*boundary_args(data, out, sf))
        assert rc == 0
    assert outputs(out) == outputs(tmp / "clean")
