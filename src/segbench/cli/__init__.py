"""Command line: ``segbench <command>``. Argument parsing and printing only.

One module per command group; each imports the library inside its command functions,
so ``segbench --help`` and ``segbench CMD --help`` load no numerical library.
"""

from __future__ import annotations

import os
import signal
import sys

#: What every command prints when Ctrl-C stops it (exit status 130).
INTERRUPTED = "segbench: interrupted; finished images are saved, rerun to resume"
#: ... and the commands whose work is not images.
INTERRUPTED_BY_COMMAND = {
    "fetch": "segbench: interrupted; rerun to resume (a download where it stopped; "
    "an unpacking starts again)",
    "train": "segbench: interrupted; finished trees are saved, rerun to resume",
    # computed whole, nothing saved on the way
    "compare": "segbench: interrupted; no comparison was written: rerun it",
    "site": "segbench: interrupted; the site is not finished (its pictures drawn so "
    "far are kept): rerun to build it",
    "serve": "segbench: stopped serving",
}


def _interrupted_line(argv) -> str:
    """The line an interrupted ``segbench ARGV`` prints (its command's)."""
    words = [w for w in (sys.argv[1:] if argv is None else argv) if w[:1] != "-"]
    return INTERRUPTED_BY_COMMAND.get(words[0] if words else "", INTERRUPTED)


def _interrupted_while_starting(signum, frame):
    """Ctrl-C while the command is still importing, before :func:`main` takes over: its
    one line and status 130 (Python's own handler would print a traceback of the import
    it cut). Nothing has started, so the process just ends."""
    os.write(2, (_interrupted_line(None) + "\n").encode())
    os._exit(130)


# Running as the command (``python -m segbench.cli`` shows '-m' while its package
# imports; the console script, its name): from here, not from main(), so that a Ctrl-C
# in the imports below is one line too. A caller's own handler, or SIGINT ignored (a
# background job), is left alone, and an import by another program changes nothing.
if (
    sys.argv[:1] == ["-m"] or os.path.basename(sys.argv[0]) in ("segbench", "segbench.exe")
) and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _interrupted_while_starting)

import argparse  # noqa: E402
import re  # noqa: E402

from .._version import __version__  # noqa: E402
from ._common import HelpFormatter  # noqa: E402

# No command does linear algebra large enough for BLAS threads to pay; commands run in
# parallel with --workers and --threads. OpenBLAS's idle threads cost 0.05-0.1 CPU-s at
# numpy's import, a tenth of a one-image run. A user's own setting is kept.
if not any(
    os.environ.get(v)
    for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "GOTO_NUM_THREADS")
):
    os.environ["OPENBLAS_NUM_THREADS"] = "1"

#: Command-group modules, each with ``add_parsers(subparsers)``, in help order.
_GROUPS = (
    "benchmark",
    "detect",
    "compare",
    "consistency",
    "agreement",
    "semantic",
    "superpixel",
    "stats",
    "datasets",
    "site",
    "baselines",
    "annotate",
)


#: Commands that are not benchmarks of the registry -> their group.
_OTHER_COMMANDS = {
    "demo": "benchmark",
    "import-run": "benchmark",
    "detect": "detect",
    "nms": "detect",
    "ucm": "detect",
    "train": "detect",
    "compare": "compare",
    "granularity": "consistency",
    "superpixel-sweep": "superpixel",
    "fetch": "datasets",
    "submit": "datasets",
    "serve": "site",
    "site": "site",
    "baselines": "baselines",
    "annotate": "annotate",
    "annotate-export": "annotate",
}


def _registry_commands() -> dict:
    """The built-in benchmarks' commands -> their group, from the registry (a generic
    one is made by the benchmark group)."""
    from ..families import BENCHMARKS

    return {
        name.replace("_", "-"): "benchmark" if entry.group == "generic" else entry.group
        for name, entry in dict.items(BENCHMARKS)
        if entry.group is not None
    }


#: Command -> its group, so that ``segbench CMD ...`` builds only that group's parser
#: (the whole parser costs 20 ms; tests check this map against the groups).
_COMMAND_GROUPS = {**_registry_commands(), **_OTHER_COMMANDS}

#: Groups whose commands run Numba kernels (they import Numba the lean way first).
#: ``semantic`` is not one: without boundary IoU its pairs are counted by the C
#: extension, and the command imports Numba itself only when it will use it.
_KERNEL_GROUPS = {
    "benchmark",
    "detect",
    "consistency",
    "agreement",
    "superpixel",
    "stats",
    "baselines",
}


def _group_of(command: str) -> str | None:
    """The group of a command: the table above, or for a benchmark registered with
    no command of its own (segbench.families), the benchmark group's generic one."""
    if command in _COMMAND_GROUPS:
        return _COMMAND_GROUPS[command]
    from ..families import BENCHMARKS

    entry = BENCHMARKS.get(command.replace("-", "_"))
    return "benchmark" if entry is not None and entry.group == "generic" else None


def build_parser(groups=_GROUPS) -> argparse.ArgumentParser:
    """The ``segbench`` parser with the commands of ``groups`` (default: all)."""
    from importlib import import_module

    parser = argparse.ArgumentParser(
        prog="segbench",
        formatter_class=HelpFormatter,
        description="The Berkeley Segmentation Benchmark, exact and fast. "
        "'segbench CMD --help' describes each command.",
    )
    parser.add_argument("--version", action="version", version=f"segbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="CMD")
    for group in groups:
        import_module(f"{__name__}.{group}").add_parsers(sub)
    for name, p in sub.choices.items():
        p.formatter_class = HelpFormatter
        if not p.description:
            p.description = next(a.help for a in sub._choices_actions if a.dest == name)
    return parser


class _Warnings:
    """Library warnings (a damaged record recomputed, ...) as one plain line each."""

    def __enter__(self):
        import warnings

        self._saved = warnings.showwarning
        warnings.showwarning = self._show
        return self

    @staticmethod
    def _show(message, category, filename, lineno, file=None, line=None):
        print(f"segbench: warning: {message}", file=sys.stderr)

    def __exit__(self, *exc):
        import warnings

        warnings.showwarning = self._saved
        return False


class _Notes:
    """The library's notes (logger ``segbench``, level INFO: a resumed run's reuse) as
    one line each on stderr."""

    def __enter__(self):
        import logging

        class AboveTheBar(logging.StreamHandler):
            """A note said while a progress bar is drawn goes on a line of its own
            above it (tqdm.write), not onto the bar's line."""

            def emit(self, record):
                tqdm = sys.modules.get("tqdm")
                if tqdm is None or not getattr(tqdm.tqdm, "_instances", None):
                    return super().emit(record)
                try:
                    tqdm.tqdm.write(self.format(record), file=self.stream)
                except Exception:  # noqa: BLE001 - as logging's own handlers do
                    self.handleError(record)

        self._log = logging.getLogger("segbench")
        self._handler = AboveTheBar(sys.stderr)
        self._handler.setFormatter(logging.Formatter("segbench: %(message)s"))
        self._saved = (self._log.level, self._log.propagate)
        self._log.addHandler(self._handler)
        self._log.setLevel(logging.INFO)
        self._log.propagate = False
        return self

    def __exit__(self, *exc):
        self._log.removeHandler(self._handler)
        self._log.setLevel(self._saved[0])
        self._log.propagate = self._saved[1]
        return False


class _CtrlC:
    """Ctrl-C raises KeyboardInterrupt as usual, and is remembered: an interrupt that
    lands inside a compiled kernel or Numba's unpickling surfaces as another error
    (``SystemError: CPUDispatcher(...) returned a result with an exception set``), or
    is wrapped by a library ``except``; the command still ends as interrupted."""

    seen = False
    pid = 0  # the process whose command this is (a forked worker inherits the handlers)
    #: SIGTERM (timeout, scancel, docker stop) ends a command as Ctrl-C does: its
    #: workers stopped, finished work kept, one line; exit status 143.
    terminated = False

    def __enter__(self):
        import signal

        _CtrlC.seen = _CtrlC.terminated = False
        _CtrlC.pid = os.getpid()
        self._saved = self._saved_term = None
        try:  # only Python's own handler is replaced (not a notebook's or a caller's)
            if signal.getsignal(signal.SIGINT) in (
                signal.default_int_handler,
                _interrupted_while_starting,
            ):
                self._saved = signal.signal(signal.SIGINT, self._handler)
            # (a background job's SIGINT is ignored; its SIGTERM is still ours)
            if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
                self._saved_term = signal.signal(signal.SIGTERM, self._term)
        except ValueError:  # not the main thread: no handler can be set
            pass
        if self._saved is not None or self._saved_term is not None:
            self._unraisable_before = sys.unraisablehook
            sys.unraisablehook = self._unraisable
        return self

    @staticmethod
    def _handler(signum, frame):
        if _CtrlC._in_a_worker(signum):
            return
        _CtrlC.seen = True
        if _in_compiler_or_import(frame):
            # raised inside llvmlite's ctypes callbacks (Numba loading a kernel) the
            # interrupt is swallowed ("Exception ignored") or leaves its state broken;
            # inside an import, a compiled module's numpy set-up prints it as
            # "ImportError: _multiarray_umath failed to import": deliver it again in
            # 20 ms, once the interpreter is back in our code
            _CtrlC._deliver_later()
            return  # (__exit__ cancels it if the run ends first)
        raise KeyboardInterrupt

    @staticmethod
    def _in_a_worker(signum) -> bool:
        """A worker forked before its own set-up has these handlers: there SIGTERM (the
        pool ending it) ends it silently and Ctrl-C is left to the parent."""
        import signal

        if os.getpid() == _CtrlC.pid:
            return False
        if signum == signal.SIGTERM:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
        return True

    @staticmethod
    def _term(signum, frame):
        if os.getpid() == _CtrlC.pid:  # (in a worker, _handler ends it)
            _CtrlC.terminated = True
        _CtrlC._handler(signum, frame)

    @staticmethod
    def _deliver_later() -> None:
        import signal

        signal.signal(signal.SIGALRM, _CtrlC._again)
        signal.setitimer(signal.ITIMER_REAL, 0.02)

    def _unraisable(self, unraisable) -> None:
        """A Ctrl-C raised where Python cannot pass it on (a weakref callback such as
        the import system's, a ``__del__``, a ctypes callback) would be printed as
        "Exception ignored" and lost: it is delivered again 20 ms later instead."""
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            _CtrlC._deliver_later()
            return
        self._unraisable_before(unraisable)

    @staticmethod
    def _again(signum, frame):
        import signal

        os.kill(os.getpid(), signal.SIGTERM if _CtrlC.terminated else signal.SIGINT)

    def quiet(self) -> None:
        """Ignore a second Ctrl-C while the interrupted run reports itself."""
        import signal

        if self._saved is not None:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        if self._saved_term is not None:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if self._saved is not None or self._saved_term is not None:
            self._no_redelivery()

    @staticmethod
    def _no_redelivery() -> None:
        import signal

        signal.setitimer(signal.ITIMER_REAL, 0)  # a pending re-delivery: off
        signal.signal(signal.SIGALRM, signal.SIG_DFL)

    def __exit__(self, *exc):
        import signal

        if self._saved is not None or self._saved_term is not None:
            self._no_redelivery()
            sys.unraisablehook = self._unraisable_before
        if self._saved is not None:
            signal.signal(signal.SIGINT, self._saved)
        if self._saved_term is not None:
            signal.signal(signal.SIGTERM, self._saved_term)
        return False


def _in_compiler_or_import(frame) -> bool:
    """Whether ``frame`` is the import system's own code (a module's top-level code is
    not), or it or a caller is running llvmlite or Numba's own code."""
    if frame is not None and frame.f_globals.get("__name__", "").startswith(
        "importlib._bootstrap"
    ):
        return True
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name.startswith(("llvmlite", "numba.")):
            return True
        frame = frame.f_back
    return False


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was raised because of, a Ctrl-C."""
    seen = set()
    link: BaseException | None = exc  # then its cause or context, up the chain
    while link is not None and id(link) not in seen:
        if isinstance(link, KeyboardInterrupt):
            return True
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return _CtrlC.seen


def main(argv=None) -> int:
    """Run ``segbench ARGV``. Returns the exit status: 0, 2 for bad input (one line on
    stderr), 130 when interrupted (one line, whatever was running), 143 likewise when
    terminated (SIGTERM), 141 (quietly) when the reader of its output closed the
    pipe."""
    try:
        with _CtrlC() as ctrl_c:
            try:
                return _main(argv)
            except BaseException as exc:
                if isinstance(exc, SystemExit) or not _interrupted(exc):
                    raise
                ctrl_c.quiet()
                return _report_interrupt(argv)
    except KeyboardInterrupt:
        # a Ctrl-C delivered again (_CtrlC._deliver_later) just as the run ended, in
        # _CtrlC.__exit__ before it could cancel the delivery: still one line
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        return _report_interrupt(argv)


def _report_interrupt(argv) -> int:
    """Print the interrupted command's one line; its exit status (130, or 143 after
    SIGTERM)."""
    line = _interrupted_line(argv)
    if _CtrlC.terminated:
        line = line.replace("interrupted", "terminated (SIGTERM)", 1)
    print(line, file=sys.stderr)
    return 143 if _CtrlC.terminated else 130


def console_main() -> None:
    """The ``segbench`` command: :func:`main`, then exit. After Ctrl-C the process ends
    at once (``os._exit``) once its line is printed: the interrupt may have cut a
    library's own state short (Numba's kernel loading), and the interpreter's clean-up
    of such state is where an interrupted command could still crash. Finished work is
    already on disk (every file is written whole, then renamed)."""
    status = main()
    if status in (130, 143):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)


def _negative_lists_joined(argv: list) -> list:
    """``--thresholds -0.1,0.5`` as ``--thresholds=-0.1,0.5`` (any long option followed
    by a word that starts as a negative number: ``--k -5,100``): argparse takes a value
    starting with '-' for an option unless it is one plain negative number, and said
    'expected one argument' instead of what is wrong with the value. No segbench
    option is a flag that a negative number may follow."""
    out, k = [], 0
    while k < len(argv):
        word = argv[k]
        follows = argv[k + 1] if k + 1 < len(argv) else ""
        if re.fullmatch(r"--[A-Za-z][\w-]*", word) and re.match(r"-\.?\d", follows):
            out.append(f"{word}={follows}")
            k += 2
            continue
        out.append(word)
        k += 1
    return out


#: The options that name files or folders (their ``dest``): an empty value is refused.
_PATH_OPTIONS = (
    "gt",
    "pred",
    "out",
    "images",
    "results",
    "seg_dir",
    "dest",
    "ids",
)


def _empty_path_option(args) -> str | None:
    """The first path option given as an empty string (``--out ""``), as typed."""
    for dest in _PATH_OPTIONS:
        value = getattr(args, dest, None)
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, str) and not v.strip() for v in values):
            return "--" + dest.replace("_", "-")
    return None


def _main(argv) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    with _Warnings():  # (an installed family that fails to load: one line)
        group = _group_of(argv[0]) if argv else None
        parser = build_parser((group,) if group else _GROUPS)
    args = parser.parse_args(_negative_lists_joined(argv))
    if args.command is None:
        parser.print_help()
        return 0
    name = getattr(args, "name", None)
    if isinstance(name, str) and not name.strip():  # it would fall back to the default
        print("segbench: error: --name is empty: give a name", file=sys.stderr)
        return 2
    empty = _empty_path_option(args)
    if empty is not None:  # "--out $OUT" with OUT unset would mean the current folder
        wanted = "ids (a list or a file)" if empty == "--ids" else "a path"
        print(f"segbench: error: {empty} is empty: give {wanted}", file=sys.stderr)
        return 2
    from ..errors import SegbenchError

    if group in _KERNEL_GROUPS:
        from ..compilation import import_numba_lean

        import_numba_lean()
    # the run folder's manifest records the command line (the engine reads it from
    # the environment: it never imports the CLI); restored after, for in-process calls
    import shlex

    before = os.environ.get("SEGBENCH_COMMAND_LINE")
    os.environ["SEGBENCH_COMMAND_LINE"] = shlex.join(["segbench", *argv])
    try:
        with _Warnings(), _Notes():
            return args.func(args)
    except SegbenchError as exc:
        if _interrupted(exc):  # a read cut short by Ctrl-C: main reports the interrupt
            raise
        print(f"segbench: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader of stdout left (``segbench ... --json | head -1``): stop quietly,
        # as a process killed by SIGPIPE would (its status, 128 + 13), and point
        # stdout at /dev/null so that the flush at exit does not fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 141
    except MemoryError as exc:  # numpy's "Unable to allocate ..." is one too
        if _interrupted(exc):
            raise
        print(
            f"segbench: error: out of memory ({exc or 'an allocation failed'}); the "
            "images finished before are saved: rerun with fewer --workers, a coarser "
            "setting, or more memory",
            file=sys.stderr,
        )
        return 2
    except OSError as exc:  # a file the library did not wrap: name it, no traceback
        if _interrupted(exc):
            raise
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        print(f"segbench: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    finally:
        if before is None:
            os.environ.pop("SEGBENCH_COMMAND_LINE", None)
        else:
            os.environ["SEGBENCH_COMMAND_LINE"] = before


__all__ = ["build_parser", "console_main", "main"]
