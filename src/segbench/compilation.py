"""A one-line notice when segbench's compiled kernels are built, the first time only.

Numba compiles each kernel on first use and caches the machine code on disk; later runs
load it in milliseconds. The first run in a fresh environment therefore spends tens of
seconds compiling, which looks like a hung progress bar. :func:`announce_compiles`
registers a Numba event listener that prints, on stderr, one line per group of kernels
the first time any of them really compiles (a kernel loaded from the cache raises no
compile event), e.g.::

    segbench: compiling the boundary matcher for this machine, once (about 25 s);
    later runs start at once

The notice goes to a terminal only (stderr a TTY), as progress does; set
``SEGBENCH_COMPILE_NOTICE=1`` to print it anyway, ``0`` never to.

The engine compiles a family's kernels in the main process before it starts worker
processes (``Family.warm_up``), so a run prints each notice once and its workers inherit
the compiled code.
"""

from __future__ import annotations

import os
import sys

__all__ = ["announce_compiles"]

#: Kernel module -> (what the notice calls it, seconds to compile it once, measured on
#: the 2-core development machine; a rough figure for the notice only).
GROUPS = {
    "segbench.boundary._solver": ("the boundary matcher", 25),
    "segbench.boundary._correspond": ("the boundary matcher", 25),
    "segbench.boundary._thin": ("boundary thinning", 5),
    "segbench.boundary._seg2bdry": ("boundary extraction", 1),
    "segbench.region._table": ("the region tables", 2),
    "segbench.region._levels": ("the ucm2 levels", 2),
    "segbench.superpixel._image": ("the superpixel measures", 5),
    "segbench.superpixel._boundary": ("the superpixel boundary scores", 3),
    "segbench.semantic._kernels": ("the semantic counters", 5),
    "segbench.stats._measure": ("the dataset statistics", 3),
    "segbench.stats._regions": ("the dataset statistics", 3),
    "segbench.algorithms.edges": ("the baseline detectors", 2),
    "segbench.boundary._nms": ("the edge NMS", 4),
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
    return (f"segbench: compiling {name} for this machine, once (about {seconds} s); "
            f"later runs start at once")


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
