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
import urllib.error
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


# ---- over a network: --host, --tls-cert/--tls-key, --public-url ------------------------

def _self_signed(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, made here: with the
    ``cryptography`` package when installed, else ``openssl req``, else skip."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    try:
        import datetime

        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        if shutil.which("openssl") is None:
            pytest.skip("neither the cryptography package nor openssl is installed")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                        "-keyout", str(key), "-out", str(cert), "-days", "2",
                        "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                       check=True, capture_output=True)
        return cert, key
    import ipaddress
    pk = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    crt = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
           .public_key(pk.public_key()).serial_number(x509.random_serial_number())
           .not_valid_before(now - datetime.timedelta(hours=1))
           .not_valid_after(now + datetime.timedelta(days=2))
           .add_extension(x509.SubjectAlternativeName(
               [x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                x509.DNSName("localhost")]), critical=False)
           .sign(pk, hashes.SHA256()))
    cert.write_bytes(crt.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(pk.private_bytes(serialization.Encoding.PEM,
                                     serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()))
    return cert, key


def _start(args):
    proc = subprocess.Popen([sys.executable, "-m", "segbench.cli", "annotate", *args,
                             "--port", "0", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if "serving" not in line:
        proc.kill()
        pytest.fail(f"no serving line: {line!r} {proc.stderr.read()!r}")
    return proc, line.split("serving ")[1].split()[0]


def _stop(proc) -> str:
    """Ctrl-C the server; its stderr."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.stderr.read()


def test_tls_serves_https_with_a_certificate_made_here(tmp_path):
    cert, key = _self_signed(tmp_path)
    images = _images(tmp_path / "images")
    proc, url = _start(["--collect", "--images", str(images), "--out",
                        str(tmp_path / "out"), "--tls-cert", str(cert),
                        "--tls-key", str(key)])
    try:
        assert url.startswith("https://127.0.0.1:")
        # the certificate is checked, host name included: a real https client
        ctx = ssl.create_default_context(cafile=str(cert))
        with urllib.request.urlopen(url, context=ctx, timeout=20) as r:
            assert r.status == 200 and b"Your name" in r.read()
            assert "nosniff" in r.headers["X-Content-Type-Options"]
            assert "max-age" in r.headers["Strict-Transport-Security"]
        login = urllib.request.Request(
            url + "api/login", data=json.dumps({"name": "Ada"}).encode(), method="POST",
            headers={"Content-Type": "application/json", "X-Segbench": "1",
                     "Origin": url.rstrip("/")})
        with urllib.request.urlopen(login, context=ctx, timeout=20) as r:
            assert r.status == 200 and json.loads(r.read())["name"] == "Ada"
            assert "; Secure" in r.headers["Set-Cookie"]   # never sent in the clear
        # plain HTTP to the TLS port gets no page; the server carries on
        host, port = url.split("//")[1].rstrip("/").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            try:
                got = s.recv(4096)
            except ConnectionResetError:
                got = b""
        assert b"Your name" not in got
        with urllib.request.urlopen(url, context=ctx, timeout=20) as r:
            assert r.status == 200
        # an https client that does not know the certificate refuses it
        with pytest.raises(urllib.error.URLError):
            urllib.request.urlopen(url, context=ssl.create_default_context(), timeout=20)
    finally:
        err = _stop(proc)
    assert "Traceback" not in err and "warning" not in err


def test_bad_certificate_or_key_is_one_line_naming_the_file(tmp_path, capsys):
    from segbench.cli import main
    cert, key = _self_signed(tmp_path)
    images = _images(tmp_path / "images")
    out = tmp_path / "out"
    base = ["annotate", "--subject", "Ada", "--images", str(images), "--out", str(out),
            "--port", "0"]

    def run(*extra):
        assert main(base + list(extra)) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, err
        return err

    missing = tmp_path / "nope.pem"
    err = run("--tls-cert", str(missing), "--tls-key", str(key))
    assert str(missing) in err and "--tls-cert" in err and "not found" in err
    err = run("--tls-cert", str(cert), "--tls-key", str(missing))
    assert str(missing) in err and "--tls-key" in err
    err = run("--tls-cert", str(key), "--tls-key", str(key))     # a key is no certificate
    assert str(key) in err and "cannot load" in err
    other = tmp_path / "other"
    other.mkdir()
    _, key2 = _self_signed(other)
    err = run("--tls-cert", str(cert), "--tls-key", str(key2))   # someone else's key
    assert "does not match" in err and str(cert) in err
    assert "--tls-key" in run("--tls-cert", str(cert))            # one without the other
    assert "--public-url" in run("--public-url", "annotate.example.org/x")
    assert not out.exists()   # refused before anything was written


def test_a_host_that_is_not_loopback_is_warned_about(tmp_path):
    images = _images(tmp_path / "images")
    proc, url = _start(["--subject", "Ada", "--images", str(images), "--out",
                        str(tmp_path / "out"), "--host", "0.0.0.0"])
    try:
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=20) as r:
            assert r.status == 200
    finally:
        err = _stop(proc)
    lines = [ln for ln in err.splitlines() if "warning" in ln]
    assert len(lines) == 1 and "--host 0.0.0.0 is not a loopback address" in lines[0]
    assert "no password" in lines[0] and "plain HTTP" in lines[0]
    assert "Traceback" not in err


def test_behind_a_reverse_proxy_the_public_origin_is_the_one_accepted(tmp_path):
    import http.client
    srv = make_server(_images(tmp_path / "images"), tmp_path / "out", port=0,
                      collect=True, public_url="https://annotate.example.org")
    threading.Thread(target=srv.serve_forever, daemon=True).start()

    def login(host, origin):
        conn = http.client.HTTPConnection(*srv.server_address[:2], timeout=10)
        conn.request("POST", "/api/login", body=json.dumps({"name": "Ada"}),
                     headers={"Host": host, "Origin": origin, "X-Segbench": "1",
                              "Content-Type": "application/json"})
        r = conn.getresponse()
        r.read()
        conn.close()
        return r.status, r.getheader("Set-Cookie") or ""

    try:
        # what the proxy forwards (Host: the public name): the public origin is accepted
        status, cookie = login("annotate.example.org", "https://annotate.example.org")
        assert status == 200 and "; Secure" in cookie
        assert login("annotate.example.org", "http://annotate.example.org")[0] == 403
        assert login("annotate.example.org", "https://evil.example")[0] == 403
        assert login("evil.example", "https://annotate.example.org")[0] == 421
        port = srv.server_address[1]   # the loopback address itself still works
        assert login(f"127.0.0.1:{port}", f"http://127.0.0.1:{port}")[0] == 200
    finally:
        srv.shutdown()
        srv.server_close()
