"""The annotation server at the edges of HTTP and over a network: the answers that
http.server makes by itself (malformed or unsupported requests) carry the same security
headers as every other, ``--host`` warns when it is not loopback, and ``--tls-cert`` /
``--tls-key`` serve https with the standard library's ssl."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from segbench.annotate import make_server

SECURITY = {"content-security-policy": "default-src 'none'",
            "x-content-type-options": "nosniff",
            "cache-control": "no-store",
            "referrer-policy": "same-origin"}


def _images(folder: Path, n: int = 2) -> Path:
    folder.mkdir()
    rng = np.random.default_rng(0)
    for k in range(n):
        Image.fromarray(rng.integers(0, 255, (16, 24, 3), dtype=np.uint8)).save(
            folder / f"im{k:02d}.png")
    return folder


@pytest.fixture
def served(tmp_path):
    srv = make_server(_images(tmp_path / "images"), tmp_path / "out", port=0,
                      subject="Ada")
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _raw(addr, data: bytes) -> tuple[int, dict, bytes]:
    """Send bytes on a fresh socket; (status, headers lower-cased, body) of the reply,
    read until the server closes the connection."""
    with socket.create_connection(addr, timeout=10) as s:
        s.sendall(data)
        chunks = []
        while True:
            try:
                got = s.recv(65536)
            except ConnectionResetError:
                break
            if not got:
                break
            chunks.append(got)
    reply = b"".join(chunks)
    head, _, body = reply.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers, body


def test_errors_made_by_http_server_itself_carry_the_security_headers(served):
    addr = served.server_address[:2]
    host = f"Host: 127.0.0.1:{addr[1]}\r\n".encode()
    cases = {
        "DELETE": (b"DELETE /api/draft/im00 HTTP/1.1\r\n" + host + b"\r\n", 501),
        "OPTIONS": (b"OPTIONS / HTTP/1.1\r\n" + host + b"\r\n", 501),
        "URI too long": (b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n" + host + b"\r\n",
                         414),
        "header line too long": (b"GET / HTTP/1.1\r\n" + host + b"X-Long: " +
                                 b"b" * 70000 + b"\r\n\r\n", 431),
        "too many headers": (b"GET / HTTP/1.1\r\n" + host +
                             b"".join(b"X-H%d: 1\r\n" % k for k in range(120)) +
                             b"\r\n", 431),
        "bad request line": (b"THIS IS NOT HTTP\r\n\r\n", 400),
        "bad version": (b"GET / HTTP/1.x\r\n" + host + b"\r\n", 400),
        "HTTP/2 line": (b"GET / HTTP/2.0\r\n" + host + b"\r\n", 505),
        # no version: answered as HTTP/1.0 with headers (no Host: refused), not as 0.9
        "HTTP/0.9 line": (b"GET /\r\n\r\n", 421),
        "HTTP/0.9 POST": (b"POST /login\r\n\r\n", 400),
    }
    for what, (request, expected) in cases.items():
        status, headers, body = _raw(addr, request)
        assert status == expected, what
        for name, value in SECURITY.items():
            assert value in headers.get(name, ""), (what, name, headers)
        if expected != 421:   # refused by http.server: the connection is not reused
            assert headers.get("connection") == "close", what
        # the body says what was wrong, as JSON like every other error
        assert headers["content-type"] == "application/json", what
        assert json.loads(body)["error"], what
    # the server still answers normally afterwards
    status, headers, _ = _raw(addr, b"GET / HTTP/1.1\r\n" + host +
                              b"Connection: close\r\n\r\n")
    assert status == 200 and "nosniff" in headers["x-content-type-options"]
