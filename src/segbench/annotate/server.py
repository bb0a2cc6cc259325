"""The annotation web app: a standard-library HTTP server over the ledger.

Routes (``<iid>`` is always looked up in the ledger, never used as a path)::

    GET  /                     home: the image list (one subject) or name / next (collect)
    GET  /edit?iid=<iid>       the editor (static page; editor.js talks to /api)
    GET  /progress             per-image and per-subject counts
    GET  /static/<name>        the front end, from the package
    POST /login, /next         HTML forms of collection mode (303 redirects)
    GET  /api/task/<iid>       size and presentation of the task, JSON
    GET  /api/image/<iid>      the image as presented (grey, inverted, flipped), PNG
    GET  /api/draft/<iid>      the saved labels (presented orientation), raw uint16 LE
    PUT  /api/draft/<iid>      autosave: raw uint16 LE labels, header X-Segments
    POST /api/submit/<iid>     finish: the same body; writes the .seg file
    POST /skip                 collection mode: give the open image up (a form)
    POST /api/skip/<iid>       the same, JSON
    POST /api/login, /api/next JSON forms of /login and /next
    GET  /api/progress         the progress counts, JSON

The editor works in the presented orientation; the server rotates the labels back when
``flipflop`` is set, so the ledger and the ``.seg`` files are always in the image's own.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import io
import ipaddress
import json
import os
import random
import re
import socket
import sqlite3
import ssl
import sys
import threading
import time
import unicodedata
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from os import PathLike
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

from ..errors import CLIENT_GONE, InputError, OutputError
from .ledger import (
    AnnotateWarning,
    Ledger,
    Presentation,
    RuleError,
    Submission,
    _locked,
    unpack_labels,
)

MARKER = ".segbench-annotate"
DB_NAME = "annotate.sqlite"
COOKIE = "segbench_subject"
#: Image ids must be plain file stems: they name the .seg files.
IID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
MAX_NAME = 64
MAX_SEGMENTS = 65535
_FORM_LIMIT = 4096
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
_STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".png": "image/png",
}


def clean_name(name: str) -> str:
    """A subject name as stored: NFC, surrounding space removed, 1 to 64 printable
    characters.

    Raises
    ------
    InputError
        An empty or too long name, or one with control or formatting characters.
    """
    name = unicodedata.normalize("NFC", str(name)).strip()
    if not name or len(name) > MAX_NAME:
        raise InputError(f"a subject name has 1 to {MAX_NAME} characters")
    if any(unicodedata.category(ch)[0] == "C" for ch in name):
        raise InputError("a subject name cannot hold control or formatting characters")
    return name


def seg_date(when: float | None = None) -> str:
    """The ``date`` header as the BSDS300 files write it (``Tue Aug 14 18:08:02 2001``)."""
    return time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(when))


class AnnotateApp:
    """State of one annotation server: the folders, the ledger, the mode.

    Parameters
    ----------
    images : str or PathLike
        Folder of photographs ``<iid>.<ext>`` (jpg, png, bmp, tif).
    out : str or PathLike
        Annotation folder (new, empty, or one this tool made): the ledger, ``human/``.
    subject : str, optional
        One-subject mode: the annotator's name. Exactly one of ``subject`` and
        ``collect`` is given.
    collect : bool
        Collection mode: subjects enter their names; images are assigned by the rules.
    per_image : int
        Collection mode: the most subjects per image.
    gray, invert, flipflop : bool
        One-subject mode: the presentation. In collection mode ``gray`` is assigned by
        the rules and ``invert``/``flipflop`` apply to every assignment.
    seed : int, optional
        Seed of the assignment's random choices (default: fresh).
    reservation_hours : float
        Collection mode: an open assignment with no change (no draft saved) for this
        long is released when anyone next asks for an image, so that a subject who
        never comes back does not hold an image forever (default 24 hours).

    Warns
    -----
    AnnotateWarning
        A photograph whose header or pixels cannot be decoded: it is left out (never
        listed nor assigned) and named. Every photograph is decoded once at start.
    """

    def __init__(
        self,
        images: str | PathLike,
        out: str | PathLike,
        *,
        subject: str | None = None,
        collect: bool = False,
        per_image: int = 5,
        gray: bool = False,
        invert: bool = False,
        flipflop: bool = False,
        seed: int | None = None,
        reservation_hours: float = 24.0,
    ):
        import warnings

        from ..datasets.bsds import IMAGE_EXTS
        from ..io import claim_folder, image_size, list_files, read_image

        if collect == (subject is not None):
            raise InputError("give either a subject name or collection mode, not both")
        if per_image < 1:
            raise InputError(f"--per-image must be at least 1, got {per_image}")
        if not reservation_hours > 0:
            raise InputError(
                f"reservations must last more than 0 hours, got {reservation_hours}"
            )
        images = Path(images)
        if not images.is_dir():
            raise InputError("images folder not found", images)
        found = list_files(images, IMAGE_EXTS)
        if not found:
            raise InputError(f"no images ({', '.join(IMAGE_EXTS)}) in this folder", images)
        for iid, path in found.items():
            if not IID.match(iid):
                raise InputError(
                    "an image id (file name without extension) must be "
                    "letters, digits, '_', '.', '-' (it names the .seg file)",
                    path,
                )
        self.out = claim_folder(
            out, MARKER, "segbench annotate", "an annotation folder of segbench annotate\n"
        )
        self.root = self.out.resolve()
        self.ledger = Ledger(self.out / DB_NAME)
        entries, bad = [], []
        for iid, path in sorted(found.items()):
            try:  # the header, then every pixel: a photograph that fails is never
                h, w = image_size(path)  # handed to a subject
                if read_image(path).shape[:2] != (h, w):
                    raise InputError(
                        "its pixels do not have the size its header says", path
                    )
            except InputError as exc:
                bad.append(str(exc))
                continue
            entries.append((iid, w, h, path))
        if not entries:
            raise InputError(
                f"no photograph in this folder can be decoded: {'; '.join(bad)}", images
            )
        for problem in bad:
            warnings.warn(
                f"{problem}; left out (neither listed nor assigned)",
                AnnotateWarning,
                stacklevel=2,
            )
        try:
            self.ledger.add_images(entries)
        except RuleError as exc:
            raise InputError(str(exc)) from None
        # the images never change while serving: read once, not on every request
        self._images = {e[0]: self.ledger.image(e[0]) for e in entries}
        #: the images served now, sorted (the ledger may know others, gone or broken)
        self.iids = sorted(self._images)
        self.reservation_hours = float(reservation_hours)
        self.collect = collect
        self.per_image = per_image
        self.presentation = Presentation(gray, invert, flipflop)
        self.rng = random.Random(seed)
        self.secret = self.ledger.secret()
        self.subject = (
            None if subject is None else self.ledger.subject_id(clean_name(subject))
        )
        self._png_lock = threading.Lock()
        self._png_cache: dict = {}
        self._png_pending: dict = {}  # key -> the lock held while it is encoded
        self._names_lock = threading.Lock()
        self.static = _load_static()
        self.write_subjects()
        # acknowledged before a crash, file not yet written (or gone since): the ledger
        # holds the labels, so the file is made again
        for sub in self.ledger.submissions():
            if (
                not sub.written
                or not self.seg_path(sub.subject, sub.iid, sub.presentation.gray).is_file()
            ):
                self.write_submission(sub)

    def image(self, iid: str) -> tuple[int, int, int, str] | None:
        """(number, width, height, path) of image ``iid``, or None if unknown."""
        return self._images.get(iid)

    def known_image(self, iid: str) -> tuple[int, int, int, str]:
        """:meth:`image` of an id known to be in the ledger (checked by the request, or
        an assignment's or submission's)."""
        found = self.image(iid)
        assert found is not None, iid
        return found

    # -- files -------------------------------------------------------------------------
    def seg_path(self, subject: int, iid: str, gray: bool) -> Path:
        """``OUT/human/{color,gray}/<subject id>/<iid>.seg`` (checked to lie in OUT)."""
        if not IID.match(iid) or not isinstance(subject, int):
            raise InputError(f"bad image id {iid!r}")
        kind = "gray" if gray else "color"
        path = self.out / "human" / kind / str(subject) / f"{iid}.seg"
        if not path.resolve().is_relative_to(self.root):
            raise InputError("refusing to write outside the annotation folder", path)
        return path

    def write_submission(self, sub: Submission) -> Path:
        """Write ``sub`` as a ``.seg`` file (atomically, as :func:`segbench.io.write_seg`)."""
        import numpy as np

        from ..io import SegFile, ensure_dir, write_seg

        number, width, height, _ = self.known_image(sub.iid)
        labels = np.frombuffer(unpack_labels(sub.labels), "<u2").reshape(height, width)
        p = sub.presentation
        seg = SegFile(
            labels.astype(np.int32),
            segments=sub.segments,
            image=number,
            user=sub.subject,
            date=sub.date,
            gray=p.gray,
            invert=p.invert,
            flipflop=p.flipflop,
        )
        path = self.seg_path(sub.subject, sub.iid, p.gray)
        ensure_dir(path.parent)
        write_seg(path, seg, durable=True)  # on disk before the ledger says written
        self.ledger.mark_written(sub)
        return path

    def write_subjects(self) -> None:
        """``OUT/subjects.json``: subject id (the folder name) -> name."""
        from ..io import atomic_write_text

        with self._names_lock:
            names = {str(k): v for k, v in self.ledger.subjects().items()}
            atomic_write_text(
                self.out / "subjects.json",
                json.dumps(names, indent=1, ensure_ascii=False) + "\n",
            )

    def png(self, iid: str, p: Presentation) -> bytes:
        """The image as presented, PNG-encoded (cached: a few images are hot). Requests
        for one image that arrive together (a group starting at once) wait for one
        encoding instead of each decoding and encoding the photograph."""
        key = (iid, p)
        with self._png_lock:
            if key in self._png_cache:
                return self._png_cache[key]
            pending = self._png_pending.setdefault(key, threading.Lock())
        with pending:
            with self._png_lock:
                if key in self._png_cache:
                    return self._png_cache[key]
            try:
                data = self._encode_png(iid, p)
            except BaseException:
                with self._png_lock:  # the next request tries again
                    if self._png_pending.get(key) is pending:
                        del self._png_pending[key]
                raise
            with self._png_lock:  # cached and released at once: no gap
                if len(self._png_cache) > 64:
                    self._png_cache.clear()
                self._png_cache[key] = data
                if self._png_pending.get(key) is pending:
                    del self._png_pending[key]
            return data

    def _encode_png(self, iid: str, p: Presentation) -> bytes:
        import numpy as np
        from PIL import Image

        from ..io import read_image

        img = read_image(self.known_image(iid)[3])
        if p.gray:  # ITU-R BT.601 luma, as MATLAB's rgb2gray
            g = np.rint(img.astype(np.float64) @ [0.298936, 0.587043, 0.114021])
            img = np.clip(g, 0, 255).astype(np.uint8)
        if p.invert:
            img = 255 - img
        if p.flipflop:
            img = img[::-1, ::-1]
        buf = io.BytesIO()
        Image.fromarray(np.ascontiguousarray(img)).save(buf, "PNG", compress_level=1)
        return buf.getvalue()

    # -- cookies -----------------------------------------------------------------------
    def sign(self, subject: int) -> str:
        """Cookie value naming ``subject``, signed with the ledger's secret."""
        mac = hmac.new(self.secret, f"subject:{subject}".encode(), hashlib.sha256)
        return f"{subject}.{mac.hexdigest()}"

    def verify(self, value: str | None) -> int | None:
        """The subject id of a cookie value, None if absent, malformed or forged."""
        if not value or "." not in value:
            return None
        sid, _, _ = value.partition(".")
        if not sid.isdigit() or len(sid) > 12:
            return None
        return int(sid) if hmac.compare_digest(self.sign(int(sid)), value) else None

    # -- tasks -------------------------------------------------------------------------
    def task(self, subject: int, iid: str) -> Presentation:
        """The presentation under which ``subject`` may edit ``iid`` now.

        Raises
        ------
        RuleError
            Collection mode and the image is not (or no longer) the subject's to edit.
        LookupError
            Unknown image.
        """
        if self.image(iid) is None:
            raise LookupError(iid)
        if not self.collect:
            return self.presentation
        got = self.ledger.assignment(subject, iid)
        if got is None:
            raise RuleError(f"image {iid!r} is not assigned to you")
        if got[1] == "done":
            raise RuleError(f"you have already segmented image {iid!r}")
        if got[1] == "released":
            raise RuleError(
                f"image {iid!r} is no longer yours: you skipped it, or it was "
                f"left without a change for {self.reservation_hours:g} hours "
                "and went to others"
            )
        return got[0]

    def next_task(self, subject: int) -> tuple[str, Presentation] | None:
        """Collection mode: the subject's open or next assignment (None: nothing left)."""
        return self.ledger.assign(
            subject,
            self.per_image,
            self.rng,
            invert=self.presentation.invert,
            flipflop=self.presentation.flipflop,
            images=self.iids,
            expire_after=3600 * self.reservation_hours,
        )

    def skip(self, subject: int, iid: str) -> None:
        """Collection mode: the subject gives the open assignment of ``iid`` up (it does
        not load, or they cannot segment it); see :meth:`Ledger.release`."""
        self.ledger.release(subject, iid)

    def decode_labels(
        self, body: bytes, iid: str, segments: str | None, p: Presentation, *, compact: bool
    ):
        """Validate a label body; return (segments, raw labels in image orientation).

        The body must be exactly width x height little-endian uint16 and every label
        below ``segments``. ``compact`` renumbers the segments 0..n-1 in order (what a
        submission stores: no empty segment).
        """
        import numpy as np

        _, width, height, _ = self.known_image(iid)
        if len(body) != 2 * width * height:
            raise InputError(
                f"the segmentation has {len(body) // 2} pixels, the image "
                f"{width}x{height} has {width * height}"
            )
        try:
            n = int(segments or "")
        except ValueError:
            raise InputError(
                "header X-Segments (the number of segments) is missing or not an integer"
            ) from None
        if not 1 <= n <= MAX_SEGMENTS:
            raise InputError(f"X-Segments must be 1..{MAX_SEGMENTS}, got {n}")
        labels = np.frombuffer(body, "<u2").reshape(height, width)
        if int(labels.max()) >= n:
            raise InputError(f"a label is {int(labels.max())}, not below X-Segments {n}")
        if p.flipflop:
            labels = labels[::-1, ::-1]
        if compact:
            uniq, inv = np.unique(labels, return_inverse=True)
            labels, n = inv.reshape(height, width), int(uniq.size)
        return n, np.ascontiguousarray(labels, dtype="<u2").tobytes()

    def presented(self, raw: bytes, iid: str, p: Presentation) -> bytes:
        """Labels from image orientation to the presented one."""
        if not p.flipflop:
            return raw
        import numpy as np

        return np.frombuffer(raw, "<u2")[::-1].tobytes()  # 180 degrees = flat reversal

    def submit(self, subject: int, iid: str, body: bytes, segments: str | None) -> dict:
        """Validate, record and write a finished segmentation; JSON reply."""
        p = self.task(subject, iid)
        n, raw = self.decode_labels(body, iid, segments, p, compact=True)
        sub = self.ledger.submit(subject, iid, p, n, raw, seg_date(), collect=self.collect)
        try:
            path = self.write_submission(sub)
        except OutputError as exc:
            # recorded (a retry would be refused as a second submission): say so
            sys.stderr.write(f"segbench annotate: {exc}\n")
            raise _Reply(
                507,
                f"your segmentation is saved in the ledger, but its file "
                f"could not be written ({exc}); it is written when the "
                f"server next starts",
            ) from None
        return {
            "saved": str(path.relative_to(self.out)),
            "segments": n,
            "next": "/" if self.collect else self.next_url(subject, iid),
        }

    def next_url(self, subject: int, after: str) -> str:
        """One-subject mode: the editor of the next image without a submission."""
        done = self.ledger.submitted_ids(subject, self.presentation.gray)
        ids = self.iids
        rest = [i for i in ids if i > after and i not in done] + [
            i for i in ids if i < after and i not in done
        ]
        return f"/edit?iid={quote(rest[0])}" if rest else "/"


def _load_static() -> dict[str, tuple[bytes, str]]:
    """The front end's files by name, read once from the package."""
    from importlib.resources import files

    out = {}
    for entry in files("segbench.annotate").joinpath("static").iterdir():
        ext = os.path.splitext(entry.name)[1]
        if entry.is_file() and ext in _STATIC_TYPES:
            out[entry.name] = (entry.read_bytes(), _STATIC_TYPES[ext])
    return out


# ---------------------------------------------------------------------------------------
# pages rendered on the server (no script: nothing to inject into)


def _page(title: str, body: str) -> bytes:
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width">'
        f"<title>{html.escape(title)}</title>"
        f'<link rel="stylesheet" href="/static/style.css"></head><body>'
        f'<header><a href="/">segbench annotate</a> · <a href="/progress">progress'
        f"</a></header><main>{body}</main></body></html>"
    ).encode()


def _home(app: AnnotateApp, subject: int | None, message: str = "") -> bytes:
    e = html.escape
    note = f'<p class="note">{e(message)}</p>' if message else ""
    if subject is None:  # collection mode, not signed in
        return _page(
            "Sign in",
            note
            + (
                "<h1>Segment images</h1><p>Divide each image into pieces, each a "
                "distinguished thing, of roughly equal importance; between 2 and 20 pieces "
                "should be reasonable for any image.</p>"
                '<form method="post" action="/login">'
                '<label>Your name <input name="name" maxlength="64" required></label> '
                "<button>Start</button></form>"
            ),
        )
    name = app.ledger.subjects().get(subject, "?")
    if app.collect:
        open_ = app.ledger.open_assignment(subject)
        n_done = len(app.ledger.submitted_ids(subject))
        action = (
            f'<p><a class="button" href="/edit?iid={quote(open_[0])}">Continue '
            f'image {e(open_[0])}</a></p><form method="post" action="/skip">'
            f'<input type="hidden" name="iid" value="{e(open_[0])}">'
            "<button>Skip this image</button> (if it does not load, or you cannot "
            "segment it: it goes to someone else)</form>"
            if open_
            else '<form method="post" action="/next"><button>Next image</button></form>'
        )
        return _page(
            "Segment images",
            note + f"<h1>Hello, {e(name)}</h1><p>You have "
            f"segmented {n_done} image(s).</p>{action}<p>An image you leave "
            f"without a change for {app.reservation_hours:g} hours goes to "
            "someone else.</p>",
        )
    rows = []
    done = app.ledger.submitted_ids(subject, app.presentation.gray)
    drafts = app.ledger.draft_ids(subject, app.presentation.gray)
    for iid in app.iids:
        state = "saved" if iid in done else ("draft" if iid in drafts else "")
        rows.append(
            f'<tr><td><a href="/edit?iid={quote(iid)}">{e(iid)}</a></td>'
            f"<td>{state}</td></tr>"
        )
    kind = "grey" if app.presentation.gray else "colour"
    return _page(
        "Images",
        note + f"<h1>{e(name)}: images ({kind})</h1><table><thead><tr>"
        f"<th>image</th><th>state</th></tr></thead><tbody>{''.join(rows)}"
        "</tbody></table>",
    )


def _progress_page(app: AnnotateApp) -> bytes:
    e = html.escape
    prog = app.ledger.progress()
    img_rows = "".join(
        f"<tr><td>{e(iid)}</td><td>{c['assigned']}</td><td>{c['open']}</td>"
        f"<td>{c['color']}</td><td>{c['gray']}</td></tr>"
        for iid, c in prog["images"].items()
    )
    sub_rows = "".join(
        f"<tr><td>{sid}</td><td>{e(c['name'])}</td><td>{c['open']}</td>"
        f"<td>{c['submitted']}</td></tr>"
        for sid, c in prog["subjects"].items()
    )
    total = sum(c["color"] + c["gray"] for c in prog["images"].values())
    limit = f", at most {app.per_image} per image" if app.collect else ""
    return _page(
        "Progress",
        f"<h1>Progress</h1><p>{total} segmentation(s) of "
        f"{len(prog['images'])} image(s) by {len(prog['subjects'])} subject(s)"
        f"{limit}.</p><h2>Images</h2><table><thead><tr><th>image</th>"
        "<th>assigned</th><th>open</th><th>colour</th><th>grey</th></tr></thead>"
        f"<tbody>{img_rows}</tbody></table><h2>Subjects</h2><table><thead><tr>"
        "<th>id</th><th>name</th><th>open</th><th>submitted</th></tr></thead>"
        f"<tbody>{sub_rows}</tbody></table>",
    )


# ---------------------------------------------------------------------------------------
# HTTP


class _Reply(Exception):
    """Abort a request with an HTTP status and a message."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class Handler(BaseHTTPRequestHandler):
    """Routes requests to the :class:`AnnotateApp` of the server."""

    server_version = "segbench-annotate"
    protocol_version = "HTTP/1.1"
    # a request line without a version is answered as HTTP/1.0, never as HTTP/0.9 (a
    # bare body: no status line, so no security header either)
    default_request_version = "HTTP/1.0"
    app: AnnotateApp
    server: AnnotateServer  # the server this handler is bound to

    # -- helpers -----------------------------------------------------------------------
    def log_message(self, fmt, *args):
        if not getattr(self.server, "quiet", True):
            sys.stderr.write(f"{self.address_string()} {fmt % args}\n")

    def _send(
        self,
        status: int,
        body: bytes,
        ctype: str,
        headers=(),
        *,
        close: bool = False,
        reason: str | None = None,
    ) -> None:
        """The one way a response leaves: every answer, http.server's own errors
        included (:meth:`send_error`), gets the security headers here."""
        self.send_response(status, reason)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        # same-origin, not no-referrer: that would make a form's Origin "null"
        self.send_header("Referrer-Policy", "same-origin")
        self.send_header("Cache-Control", "no-store")
        if getattr(self.server, "tls", False):
            self.send_header("Strict-Transport-Security", "max-age=31536000")
        if close or (
            self.command in ("POST", "PUT") and not getattr(self, "_consumed", False)
        ):
            # a refused request's body is unread: it must not be parsed as the next one
            self.close_connection = True
            self.send_header("Connection", "close")
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_error(self, code, message=None, explain=None):
        """http.server's own refusals (a malformed request line, a method it has no
        ``do_`` for, a URI or header over its limits): JSON as every other error, through
        :meth:`_send`, and the connection closed (the request was not understood)."""
        short = self.responses.get(code, ("error", ""))[0]
        self.log_error("code %d, message %s", code, message or short)
        body = (
            b""
            if code < 200 or code in (204, 205, 304)
            else json.dumps({"error": message or short}).encode()
        )
        self._send(code, body, "application/json", close=True, reason=short)

    def _json(self, obj, status: int = 200, headers=()) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json", headers)

    def _redirect(self, where: str, headers=()) -> None:
        self._send(303, b"", "text/plain", (("Location", where),) + tuple(headers))

    def _body(self, limit: int) -> bytes:
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            raise _Reply(411, "a Content-Length is required")
        if int(length) > limit:
            raise _Reply(413, f"request body over {limit} bytes")
        self._consumed = True
        return self.rfile.read(int(length))

    def _subject(self) -> int | None:
        if not self.app.collect:
            return self.app.subject
        cookie = SimpleCookie()
        try:
            cookie.load(self.headers.get("Cookie", ""))
        except Exception:  # noqa: BLE001 - a malformed cookie is no subject, not an error
            return None
        morsel = cookie.get(COOKIE)
        return self.app.verify(morsel.value if morsel else None)

    def _need_subject(self) -> int:
        s = self._subject()
        if s is None:
            raise _Reply(401, "sign in first (your name, on the home page)")
        return s

    def _check_origin(self) -> None:
        """Refuse other sites' pages (CSRF) and other host names (DNS rebinding)."""
        host = self.headers.get("Host", "").lower()  # host names are case-blind
        allowed = getattr(self.server, "allowed_hosts", None)
        if allowed is not None and host not in allowed:
            raise _Reply(421, f"unexpected Host {host!r}")
        if self.command in ("POST", "PUT"):
            origin = self.headers.get("Origin")
            if origin is not None and origin not in self.server.origins(host):
                raise _Reply(403, "cross-origin request refused")
            if self.path.startswith("/api/") and self.headers.get("X-Segbench") != "1":
                raise _Reply(403, "API writes need the header X-Segbench: 1")

    def _iid(self, prefix: str) -> str:
        iid = urlsplit(self.path).path[len(prefix) :]
        if not IID.match(iid) or self.app.image(iid) is None:
            raise _Reply(404, f"no image {iid!r}")
        return iid

    def _form(self) -> dict[str, str]:
        body = self._body(_FORM_LIMIT)
        ctype = self.headers.get("Content-Type", "").split(";")[0].strip()
        try:
            if ctype == "application/json":
                data = json.loads(body or b"{}")
                if not isinstance(data, dict):
                    raise ValueError
                return {str(k): str(v) for k, v in data.items()}
            return {
                k: v[0]
                for k, v in parse_qs(body.decode("utf-8"), strict_parsing=False).items()
            }
        except (ValueError, UnicodeDecodeError):
            raise _Reply(400, "malformed form") from None

    # -- dispatch ----------------------------------------------------------------------
    def _dispatch(self, routes) -> None:
        self._consumed = False
        try:
            self._check_origin()
            path = urlsplit(self.path).path
            for prefix, handler in routes:
                if path == prefix or (
                    len(prefix) > 1 and prefix.endswith("/") and path.startswith(prefix)
                ):
                    handler()
                    return
            raise _Reply(404, "not found")
        except _Reply as r:
            self._json({"error": str(r)}, r.status)
        except RuleError as exc:
            self._json({"error": str(exc)}, 409)
        except InputError as exc:
            self._json({"error": exc.problem}, 400)
        except LookupError as exc:
            self._json({"error": f"not found: {exc}"}, 404)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except sqlite3.OperationalError as exc:
            if not _locked(exc):
                self._internal(exc)
            else:  # another program holds the ledger: the request can be tried again
                sys.stderr.write(
                    f"segbench annotate: {self.command} {self.path}: the "
                    f"ledger is locked by another program\n"
                )
                self._json(
                    {
                        "error": "the ledger is busy (locked by another program); "
                        "try again in a moment"
                    },
                    503,
                )
        except Exception as exc:  # noqa: BLE001 - no traceback to the client; one line
            self._internal(exc)

    def _internal(self, exc: Exception) -> None:
        sys.stderr.write(
            f"segbench annotate: {self.command} {self.path}: {type(exc).__name__}: {exc}\n"
        )
        self._json({"error": "internal error"}, 500)

    def do_GET(self):
        self._dispatch(
            (
                ("/", self.get_home),
                ("/favicon.ico", self.get_favicon),
                ("/edit", self.get_editor),
                ("/progress", self.get_progress),
                ("/static/", self.get_static),
                ("/api/task/", self.get_task),
                ("/api/image/", self.get_image),
                ("/api/draft/", self.get_draft),
                ("/api/progress", self.get_progress_json),
            )
        )

    do_HEAD = do_GET

    def do_POST(self):
        self._dispatch(
            (
                ("/login", self.post_login),
                ("/next", self.post_next),
                ("/skip", self.post_skip),
                ("/api/skip/", self.post_skip),
                ("/api/login", self.post_login),
                ("/api/next", self.post_next),
                ("/api/draft/", self.put_draft),
                ("/api/submit/", self.post_submit),
            )
        )

    def do_PUT(self):
        self._dispatch((("/api/draft/", self.put_draft),))

    # -- pages -------------------------------------------------------------------------
    def get_home(self):
        query = parse_qs(urlsplit(self.path).query)
        message = query.get("msg", [""])[0][:200]
        self._send(
            200, _home(self.app, self._subject(), message), "text/html; charset=utf-8"
        )

    def get_favicon(self):
        self._send(204, b"", "image/x-icon")  # no icon, and no 404 in the console

    def get_editor(self):
        body, ctype = self.app.static["editor.html"]
        self._send(200, body, ctype)

    def get_progress(self):
        self._send(200, _progress_page(self.app), "text/html; charset=utf-8")

    def get_progress_json(self):
        prog = self.app.ledger.progress()
        prog["subjects"] = {str(k): v for k, v in prog["subjects"].items()}
        self._json(prog)

    def get_static(self):
        name = urlsplit(self.path).path[len("/static/") :]
        if name not in self.app.static:
            raise _Reply(404, "not found")
        self._send(200, *self.app.static[name])

    # -- collection mode ---------------------------------------------------------------
    def post_login(self):
        api = self.path.startswith("/api/")
        if not self.app.collect:
            raise _Reply(400, "one-subject mode: there is nothing to sign in to")
        try:
            name = clean_name(self._form().get("name", ""))
        except InputError as exc:
            if api:
                raise
            return self._redirect("/?msg=" + quote(exc.problem))
        subject = self.app.ledger.subject_id(name)
        self.app.write_subjects()
        cookie = (
            f"{COOKIE}={self.app.sign(subject)}; Path=/; HttpOnly; SameSite=Strict; "
            "Max-Age=2592000"
        )
        if self.server.secure:  # https (here or at the proxy): never sent in the clear
            cookie += "; Secure"
        if api:
            self._json(
                {"subject": subject, "name": name}, headers=(("Set-Cookie", cookie),)
            )
        else:
            self._redirect("/", (("Set-Cookie", cookie),))

    def post_next(self):
        api = self.path.startswith("/api/")
        if not self.app.collect:
            raise _Reply(400, "one-subject mode: open any image from the list")
        self._body(_FORM_LIMIT)
        subject = self._need_subject()
        got = self.app.next_task(subject)
        if api:
            self._json(
                {"iid": None}
                if got is None
                else {
                    "iid": got[0],
                    "gray": got[1].gray,
                    "invert": got[1].invert,
                    "flipflop": got[1].flipflop,
                }
            )
        elif got is None:
            self._redirect(
                "/?msg="
                + quote("No image can be given to you now: thank you! Come back later.")
            )
        else:
            self._redirect(f"/edit?iid={quote(got[0])}")

    def post_skip(self):
        """Give the open assignment up: ``/api/skip/<iid>`` (JSON) or the home page's
        form ``/skip`` (field ``iid``)."""
        api = self.path.startswith("/api/")
        if not self.app.collect:
            raise _Reply(400, "one-subject mode: open any other image from the list")
        if api:
            self._body(_FORM_LIMIT)
            iid = urlsplit(self.path).path[len("/api/skip/") :]
        else:
            iid = self._form().get("iid", "")
        subject = self._need_subject()
        if not IID.match(iid):  # known to the ledger, served or not: a broken one too
            raise _Reply(404, f"no image {iid!r}")
        try:
            self.app.skip(subject, iid)
        except RuleError as exc:
            if api:
                raise
            return self._redirect("/?msg=" + quote(str(exc)))
        if api:
            self._json({"skipped": iid})
        else:
            self._redirect("/?msg=" + quote(f"Image {iid} skipped."))

    # -- editing -----------------------------------------------------------------------
    def get_task(self):
        iid, subject = self._iid("/api/task/"), self._need_subject()
        p = self.app.task(subject, iid)
        number, width, height, _ = self.app.image(iid)
        self._json(
            {
                "iid": iid,
                "image": number,
                "width": width,
                "height": height,
                "gray": p.gray,
                "invert": p.invert,
                "flipflop": p.flipflop,
                "collect": self.app.collect,
                "subject": self.app.ledger.subjects().get(subject),
            }
        )

    def get_image(self):
        iid, subject = self._iid("/api/image/"), self._need_subject()
        p = self.app.task(subject, iid)
        self._send(200, self.app.png(iid, p), "image/png")

    def get_draft(self):
        iid, subject = self._iid("/api/draft/"), self._need_subject()
        p = self.app.task(subject, iid)
        got = self.app.ledger.draft(subject, iid, p.gray)
        if got is None:
            return self._send(204, b"", "application/octet-stream")
        self._send(
            200,
            self.app.presented(got[1], iid, p),
            "application/octet-stream",
            (("X-Segments", str(got[0])),),
        )

    def _labels_body(self, iid: str) -> bytes:
        _, width, height, _ = self.app.known_image(iid)
        return self._body(2 * width * height)

    def put_draft(self):
        iid, subject = self._iid("/api/draft/"), self._need_subject()
        p = self.app.task(subject, iid)
        n, raw = self.app.decode_labels(
            self._labels_body(iid), iid, self.headers.get("X-Segments"), p, compact=False
        )
        self.app.ledger.save_draft(subject, iid, p.gray, n, raw)
        self._json({"draft": True, "segments": n})

    def post_submit(self):
        iid, subject = self._iid("/api/submit/"), self._need_subject()
        body = self._labels_body(iid)
        self._json(self.app.submit(subject, iid, body, self.headers.get("X-Segments")))


def is_loopback(host: str) -> bool:
    """True if ``host`` (a name or address to bind) only reaches this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def tls_context(cert: str | PathLike, key: str | PathLike) -> ssl.SSLContext:
    """A server-side TLS context (TLS 1.2 or later) from PEM files.

    Parameters
    ----------
    cert : str or PathLike
        The certificate chain, PEM (the server's certificate first).
    key : str or PathLike
        Its private key, PEM, unencrypted (the server starts unattended).

    Raises
    ------
    InputError
        A missing file, or files that are not a PEM certificate and its matching key.
    """
    for option, path in (("--tls-cert", cert), ("--tls-key", key)):
        if not Path(path).is_file():
            raise InputError(f"{option}: file not found", path)

    def no_password():
        raise InputError(
            "--tls-key: the private key is encrypted; give an unencrypted "
            "key (the server starts without asking for a password)",
            key,
        )

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        ctx.load_cert_chain(cert, key, password=no_password)
    except ssl.SSLError as exc:
        why = (
            "the key does not match the certificate"
            if "KEY_VALUES_MISMATCH" in str(exc)
            else f"not a PEM certificate and private key ({exc.reason or exc})"
        )
        raise InputError(
            f"--tls-cert/--tls-key: cannot load them: {why} (key: {key})", cert
        ) from None
    except OSError as exc:
        raise InputError(
            f"--tls-cert/--tls-key: cannot read them: {exc.strerror or exc}", cert
        ) from None
    return ctx


_DNS_LABEL = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)")
_DEFAULT_PORT = {"http": 80, "https": 443}


def _public_origin(url: str) -> tuple[str, frozenset[str]]:
    """(origin, accepted ``Host`` values) of ``--public-url``.

    The origin is the one a browser sends (its scheme's default port omitted); the host is
    accepted with and without that default port, as clients differ in which they send.
    """

    def bad(why: str) -> InputError:
        return InputError(
            f"--public-url {url!r}: {why}; expected an address such as "
            f"https://annotate.example.org[:port] (scheme and host, no path)"
        )

    try:
        parts = urlsplit(url.strip())
    except ValueError as exc:  # e.g. a '[' without its ']'
        raise bad(
            "an IPv6 address needs its closing ']'"
            if "[" in url and "]" not in url
            else str(exc)
        ) from None
    if parts.scheme not in _DEFAULT_PORT:
        raise bad("the scheme must be http or https")
    if not parts.netloc or "@" in parts.netloc:
        raise bad(
            "no host" if not parts.netloc else "a user name or password is not served"
        )
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise bad("a path, query or fragment is not served")
    try:
        port = parts.port
    except ValueError:
        raise bad(
            f"the port {parts.netloc.rpartition(':')[2]!r} is not a number from 1 to 65535"
        ) from None
    if port == 0:
        raise bad("the port 0 is not a number from 1 to 65535")
    host = parts.hostname or ""
    if parts.netloc.startswith("["):  # an IPv6 literal
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise bad(f"{host!r} is not an IPv6 address") from None
        host = f"[{host}]"
    else:
        try:  # an internationalised name travels in its ASCII (punycode) form
            host = host.encode("idna").decode("ascii").lower()
        except UnicodeError:
            raise bad(f"{host!r} is not a host name") from None
        if not host or not all(
            _DNS_LABEL.fullmatch(lab) for lab in host.removesuffix(".").split(".")
        ):
            raise bad(f"{host!r} is not a host name (letters, digits, '-' and '.' only)")
    default = _DEFAULT_PORT[parts.scheme]
    netloc = host if port in (None, default) else f"{host}:{port}"
    return f"{parts.scheme}://{netloc}", frozenset({netloc, f"{host}:{port or default}"})


class AnnotateServer(ThreadingHTTPServer):
    """:class:`ThreadingHTTPServer` holding an :class:`AnnotateApp`.

    With ``ssl_context`` every connection is wrapped in TLS in its own thread (the
    handshake of a slow or hostile client never holds the others up); ``public_url`` is
    the address subjects open when a reverse proxy stands in front: its host is served
    and it is the origin forms and API writes come from.
    """

    daemon_threads = True
    request_queue_size = 128  # many subjects may connect at the same moment
    handshake_timeout = 10.0  # seconds a client has to finish the TLS handshake

    def __init__(
        self,
        app: AnnotateApp,
        host: str,
        port: int,
        *,
        quiet: bool = True,
        ssl_context: ssl.SSLContext | None = None,
        public_url: str | None = None,
    ):
        self.app, self.quiet = app, quiet
        self.ssl_context, self.tls = ssl_context, ssl_context is not None
        self.public = None if public_url is None else _public_origin(public_url)
        #: cookies get ``Secure``: the browser reaches us over https, here or at a proxy
        self.secure = self.tls or (
            self.public is not None and self.public[0].startswith("https:")
        )
        host = host.strip("[]")  # an IPv6 address may come as in a URL
        if ":" in host:
            self.address_family = socket.AF_INET6
        handler = type("BoundHandler", (Handler,), {"app": app})
        super().__init__((host, port), handler)
        port = self.server_address[1]
        self.loopback = is_loopback(host)
        self.allowed_hosts = (
            {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}
            if self.loopback
            else None
        )
        if self.allowed_hosts is not None and self.public is not None:
            self.allowed_hosts |= self.public[1]

    def origins(self, host: str) -> set[str]:
        """The ``Origin`` values accepted on a write that came with ``Host: host``."""
        scheme = "https" if self.tls else "http"
        own = {f"{scheme}://{host}"}
        if self.public is None:
            return own
        # behind a proxy, the public origin; the proxy's own plain-http name is not one
        return {self.public[0]} | (own if host not in self.public[1] else set())

    def handle_error(self, request, client_address):
        # socketserver would print a traceback for a client that went away
        if not isinstance(sys.exc_info()[1], CLIENT_GONE):
            super().handle_error(request, client_address)

    def finish_request(self, request, client_address):
        if self.ssl_context is None:
            return super().finish_request(request, client_address)
        request.settimeout(self.handshake_timeout)
        try:  # in the request's own thread, not in the accept loop
            conn = self.ssl_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as exc:
            if not self.quiet:
                sys.stderr.write(
                    f"{client_address[0]} TLS handshake failed: "
                    f"{getattr(exc, 'reason', None) or exc}\n"
                )
            return
        conn.settimeout(None)
        try:
            super().finish_request(conn, client_address)
        finally:
            self.shutdown_request(conn)

    @property
    def url(self) -> str:
        """``http://host:port/`` (``https`` with TLS) of the server."""
        address, port = self.server_address[:2]
        host = str(address)  # an IP address (typeshed allows bytes, for AF_UNIX)
        host = f"[{host}]" if ":" in host else host
        return f"{'https' if self.tls else 'http'}://{host}:{port}/"


def make_server(
    images: str | PathLike,
    out: str | PathLike,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    quiet: bool = True,
    tls_cert: str | PathLike | None = None,
    tls_key: str | PathLike | None = None,
    public_url: str | None = None,
    **options,
) -> AnnotateServer:
    """Prepare ``out`` and return the annotation server, bound but not yet serving.

    Parameters
    ----------
    images, out
        See :class:`AnnotateApp`; ``options`` are its keyword arguments (``subject``,
        ``collect``, ``per_image``, ``gray``, ``invert``, ``flipflop``, ``seed``,
        ``reservation_hours``).
    host : str
        Address to bind: 127.0.0.1 unless another one is asked for explicitly. An
        address that is not loopback is warned about (no password guards the server).
    port : int
        Port; 0 picks a free one (see ``server.url``).
    quiet : bool
        No request log on stderr.
    tls_cert, tls_key : str or PathLike, optional
        Serve https: the certificate chain and its unencrypted private key, PEM (both
        or neither). See :func:`tls_context`.
    public_url : str, optional
        Behind a reverse proxy: the address subjects open (``https://host[:port]``).

    Returns
    -------
    AnnotateServer
        Call ``serve_forever()``; ``server.app.ledger`` is the ledger.

    Raises
    ------
    InputError
        A missing or empty images folder, a bad image, a bad subject name, an output
        folder holding files of something else, or a certificate and key that cannot
        be loaded.

    Warns
    -----
    AnnotateWarning
        ``host`` is not a loopback address.
    """
    import warnings

    if (tls_cert is None) != (tls_key is None):
        raise InputError(
            "--tls-cert and --tls-key go together: give both (the "
            "certificate and its private key, PEM files)"
        )
    # both or neither (checked above)
    ctx = None if tls_cert is None or tls_key is None else tls_context(tls_cert, tls_key)
    if public_url is not None:
        _public_origin(public_url)  # refused before anything is written
    app = AnnotateApp(images, out, **options)
    try:
        server = AnnotateServer(
            app, host, port, quiet=quiet, ssl_context=ctx, public_url=public_url
        )
    except (OSError, OverflowError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise InputError(f"cannot listen on {host}:{port}: {why}") from None
    if not server.loopback:
        warnings.warn(
            f"--host {host} is not a loopback address: anyone who can reach port "
            f"{server.server_address[1]} of this machine can sign in and submit (there is "
            f"no password)"
            + (
                ""
                if ctx
                else ", and the traffic is plain HTTP (use "
                "--tls-cert/--tls-key, or a reverse proxy: "
                "docs/annotate.md)"
            ),
            AnnotateWarning,
            stacklevel=2,
        )
    return server
