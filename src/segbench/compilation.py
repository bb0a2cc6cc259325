"""A one-line notice when segbench's compiled kernels are built, the first time only.

Numba compiles each kernel on first use and caches the machine code on disk; later runs
load it in milliseconds. The first run in a fresh environment therefore spends tens of
seconds compiling, which looks like a hung progress bar. :func:`announce_compiles`
registers a Numba event listener that prints, on stderr, one line per group of kernels
the first time any of them really compiles (a kernel loaded from the cache raises no
compile event), e.g.::

    segbench: compiling the boundary matcher for this machine, once (about 10 s);
    later runs start at once

The notice goes to a terminal only (stderr a TTY), as progress does; set
``SEGBENCH_COMPILE_NOTICE=1`` to print it anyway, ``0`` never to.

:func:`prepare_kernels`, which every kernel module calls, registers that notice. The
``segbench`` command (not the library) imports Numba without two modules it does not
need (:func:`import_numba_lean`); loading cached kernels is Numba's own, unchanged.
Loading them costs about 0.4 CPU-s a process (Numba refreshes its CPU target first), so
the command that must start fastest, ``segbench semantic``, counts its pairs with a C
extension (``segbench.semantic._native``) and imports no Numba at all.

The engine compiles a family's kernels in the main process before it starts worker
processes (``Family.warm_up``), so a run prints each notice once and its workers inherit
the compiled code. On a first run, :func:`compile_ahead` compiles the matcher in a
background process while this one compiles and runs what comes before it.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

__all__ = [
    "announce_compiles",
    "compile_ahead",
    "import_numba_lean",
    "is_cached",
    "prepare_kernels",
    "wait_ahead",
]

#: Kernel module -> (what the notice calls it, seconds to compile it once, measured on
#: the 2-core development machine; a rough figure for the notice only).
GROUPS = {
    "segbench.primitives._solver": ("the boundary matcher", 10),
    "segbench.primitives._correspond": ("the boundary matcher", 10),
    "segbench.primitives._thin": ("boundary thinning", 5),
    "segbench.primitives._seg2bdry": ("boundary extraction", 1),
    "segbench.primitives._labels": ("the region tables", 2),
    "segbench.primitives._contingency": ("the region tables", 2),
    "segbench.primitives._union_find": ("the union-find", 1),
    "segbench.region._levels": ("the ucm2 levels", 2),
    "segbench.superpixel._image": ("the superpixel measures", 5),
    "segbench.superpixel._boundary": ("the superpixel boundary scores", 3),
    "segbench.semantic._kernels": ("the semantic counters", 5),
    "segbench.io._png": ("the PNG decoder", 3),
    "segbench.stats._measure": ("the dataset statistics", 3),
    "segbench.stats._regions": ("the dataset statistics", 3),
    "segbench.algorithms.edges": ("the baseline detectors", 2),
    "segbench.primitives._edge_nms": ("the edge NMS", 4),
    "segbench.algorithms._pb_kernels": ("the Pb detectors", 5),
    "segbench.algorithms._half_disc_kernels": ("the half-disc gradients (Pb, gPb)", 4),
    "segbench.algorithms._gpb_cue_kernels": ("gPb's local cues", 1),
    "segbench.algorithms._gpb_kernels": ("gPb's non-max suppression", 1),
    "segbench.algorithms._gpb_spectral_kernels": ("gPb's affinity and sPb", 5),
    "segbench.algorithms._gpb_block_kernels": ("gPb's multigrid eigensolver", 3),
    "segbench.algorithms._ucm_kernels": ("the watershed and UCM", 5),
    "segbench.algorithms._owt_contours_kernels": ("the OWT contour fit", 8),
    "segbench.algorithms._ncut2001_kernels": ("the 2001 normalized cuts graph", 1),
    "segbench.algorithms._se_kernels": ("the structured edge channels", 2),
    "segbench.algorithms._se_forest_kernels": ("the structured edge forests", 25),
}

_registered = False
_told: set[str] = set()


def _notice(module: str) -> str | None:
    if not module.startswith("segbench."):
        return None
    name, seconds = GROUPS.get(module, ("segbench's compiled kernels", 10))
    if name in _told:
        return None
    _told.add(name)
    return (
        f"segbench: compiling {name} for this machine, once (about {seconds} s); "
        f"later runs start at once"
    )


def _wanted() -> bool:
    setting = os.environ.get("SEGBENCH_COMPILE_NOTICE", "")
    if setting in ("0", "1"):
        return setting == "1"
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def announce_compiles() -> None:
    """Register the notice (idempotent). Call from every module that defines kernels."""
    global _registered
    if _registered:
        return
    from numba.core import event

    class _Listener(event.Listener):
        def on_start(self, ev):
            disp = ev.data.get("dispatcher")
            text = _notice(getattr(getattr(disp, "py_func", None), "__module__", "") or "")
            if text is not None and _wanted():
                print(text, file=sys.stderr, flush=True)

        def on_end(self, ev):
            pass

    event.register("numba:compile", _Listener())
    _registered = True


def prepare_kernels() -> None:
    """Call at the top of every module that defines kernels (idempotent): registers the
    compile notice (:func:`announce_compiles`). Loading is Numba's own: segbench
    changes nothing in Numba."""
    announce_compiles()


def import_numba_lean() -> None:
    """Import Numba without two modules it imports for nothing in a segbench command.

    At its import Numba imports SciPy only to check SciPy's version (0.02-0.03 CPU-s)
    and PyYAML only to read a ``.numba_config.yaml`` in the working directory (0.015).
    Both are hidden from Numba's import (each one only if it is not imported already;
    PyYAML only if no such file is there, so a user's file is still read) and visible
    again to everything after it. For the command-line process, which calls this
    before a command that runs kernels: a library must not change how its host
    imports Numba. Does nothing if Numba is imported already.
    """
    if "numba" in sys.modules:
        return
    hidden = ["scipy"] if "scipy" not in sys.modules else []
    if "yaml" not in sys.modules and not os.path.isfile(".numba_config.yaml"):
        hidden.append("yaml")
    for name in hidden:
        # "import name" raises ImportError
        sys.modules[name] = None  # type: ignore[assignment]  # typeshed allows no None
    try:
        import numba  # noqa: F401
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def is_cached(dispatcher) -> bool:
    """Whether a Numba kernel has machine code in its disk cache for this source.

    Reads Numba's cache index (not a public API: any failure answers True, so a caller
    then simply does not compile ahead)."""
    try:
        return bool(dispatcher._cache._cache_file._load_index())
    except Exception:  # noqa: BLE001 - a guess for a speed-up, never an error
        return True


_ahead: list[subprocess.Popen[bytes]] = []


def compile_ahead(entry: str, *, announce: str | None = None) -> None:
    """Start a background process that runs ``entry`` (``"module:function"``), a
    function that compiles kernels into the disk cache, and return at once.

    On a first run the matcher takes most of the compile time, in one process; this
    process meanwhile compiles and runs what comes before it, then waits
    (:func:`wait_ahead`) and loads the matcher from the cache. A kernel this process
    reaches before the child has cached it, it compiles itself (the cache is written
    atomically, so both may write it): the child can save time, never results. It
    prints nothing and is stopped when this process exits; ``announce`` (a kernel
    module of :data:`GROUPS`) prints that group's notice here instead.
    """
    import atexit
    import subprocess

    module, func = entry.split(":")
    code = f"from {module} import {func}; {func}()"
    env = dict(os.environ, SEGBENCH_COMPILE_NOTICE="0")
    text = _notice(announce) if announce else None
    if text is not None and _wanted():
        print(text, file=sys.stderr, flush=True)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", code],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return
    if not _ahead:
        atexit.register(_stop_ahead)
    _ahead.append(proc)


def wait_ahead(timeout: float = 600.0) -> None:
    """Wait until the processes of :func:`compile_ahead` have finished (or ``timeout``
    seconds); a child that failed only means this process compiles for itself."""
    import subprocess

    for proc in _ahead:
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return


def _stop_ahead() -> None:
    for proc in _ahead:
        if proc.poll() is None:
            proc.terminate()
            proc.wait()
