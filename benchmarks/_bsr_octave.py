"""Build the MEX files of BSR's gPb-owt-ucm (Arbelaez, Maire, Fowlkes, Malik 2011) for
GNU Octave with ``mkoctfile --mex``, from an unmodified BSR ``grouping`` folder.

The source tree is only read: ``lib/*.m`` is copied into the cache folder and every
object, archive and ``.mex`` file is written there. What ``source/build.sh`` builds
(with MATLAB's ``mex``) is built here the same way, and the fixes a modern g++ needs
are compiler flags only:

* the C++ library of ``gpb_src/src`` compiles at ``-std=gnu++98`` (its Makefile asks
  for ``-ansi``) into a static archive the ``gpb_src`` wrappers link against;
* the MEX wrappers compile at ``-std=gnu++11``, which Octave's ``mex.h`` needs;
* ``load_smatrix.cc`` uses ``printf`` without ``<stdio.h>``: ``-include stdio.h``;
* ``buildW`` of the GitHub copy of BSR keeps the dual lattice in OpenCV's ``cv::Mat``
  (``create``, ``at<float>``, nothing else): a 20-line stand-in for that class, in the
  cache folder's include path, takes the place of OpenCV, so OpenCV is not needed.

    python benchmarks/_bsr_octave.py BSR/grouping ~/.cache/segbench-bench/bsr-octave

(``benchmarks/gpb_speed.py --octave-bsr BSR/grouping`` calls ``build_bsr``.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

OPT = "-O2"
# name of the MEX -> (sources under source/, include folders under source/, extra
# flags, links gpb_src's library); the list of source/build.sh
MEX: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], bool]] = {
    "load_smatrix": (("gpb_src/matlab/segmentation/load_smatrix.cc",), (),
                     ("-include", "stdio.h"), False),
    **{name: ((f"gpb_src/matlab/segmentation/{name}.cc",), (), (), True)
       for name in ("mex_contour_sides", "mex_nonmax_oriented",
                    "mex_pb_parts_final_selected", "mex_pb_parts_lg",
                    "mex_pb_parts_sm", "mex_line_inds")},
    # with the objects of util/libutil.a, which buildW's Makefile links in (without
    # them Octave refuses the MEX file: undefined Util::String, Configure::getInt)
    "buildW": (("buildW/buildW.cpp", "buildW/smatrix.cc", "buildW/ic.cc",
                "buildW/affinity.cc",
                *(f"buildW/util/{name}.cc" for name in (
                    "configFileLexer", "configure", "exception", "random", "regex",
                    "string", "timer", "util", "kmeans", "image", "message",
                    "segmentation"))),
               ("buildW", "buildW/util"), (), False),
    "savgol_border": (("savgol/savgol_border.cpp",), (), (), False),
    "ucm_mean_pb": (("ucm/ucm_mean_pb.cpp",), (), (), False),
    "uvt": (("uvt/uvt.cpp",), (), (), False),
}
SOURCE_SUFFIXES = {".cc", ".cpp", ".c", ".hh", ".h", ".hpp"}
SOURCE_DIRS = ("gpb_src/src", "gpb_src/include", "gpb_src/matlab/segmentation",
               "buildW", "savgol", "ucm", "uvt")

_CV_SHIM = """\
// segbench: stand-in for the part of OpenCV's cv::Mat that BSR's buildW uses
// (a dense row-major matrix of float: create(rows, cols, CV_32F), at<float>(i, j)).
#ifndef SEGBENCH_BSR_CV_SHIM
#define SEGBENCH_BSR_CV_SHIM
#include <cstddef>
#include <vector>
#define CV_32F 5
namespace cv {
class Mat {
 public:
  Mat() : rows(0), cols(0) {}
  void create(int r, int c, int) {
    rows = r; cols = c; data_.assign(static_cast<std::size_t>(r) * c, 0.0f);
  }
  template <typename T> T& at(int i, int j) {
    return *reinterpret_cast<T*>(&data_[static_cast<std::size_t>(i) * cols + j]);
  }
  template <typename T> const T& at(int i, int j) const {
    return *reinterpret_cast<const T*>(&data_[static_cast<std::size_t>(i) * cols + j]);
  }
  int rows, cols;
 private:
  std::vector<float> data_;
};
}  // namespace cv
#endif
"""


class BuildError(RuntimeError):
    pass


def _log(msg: str) -> None:
    print(f"bsr-octave: {msg}", file=sys.stderr, flush=True)


def _run(cmd: list[str], what: Path, env: dict | None = None, cwd: Path | None = None
         ) -> None:
    try:
        out = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    except FileNotFoundError as e:
        raise BuildError(f"cannot run {cmd[0]!r} to build {what} ({e}); is Octave's "
                         f"liboctave-dev (mkoctfile, g++) installed?") from None
    if out.returncode != 0:
        tail = "\n".join((out.stdout + out.stderr).strip().splitlines()[-25:])
        raise BuildError(f"building {what} failed (exit {out.returncode}):\n"
                         f"  $ {' '.join(cmd)}\n{tail}")


def _sources(grouping: Path) -> list[Path]:
    src = grouping / "source"
    files = [p for d in SOURCE_DIRS for p in (src / d).rglob("*")
             if p.suffix in SOURCE_SUFFIXES and p.is_file()]
    return files + sorted((grouping / "lib").glob("*.m")) + [Path(__file__)]


def _check_grouping(grouping: Path) -> None:
    missing = [str(grouping / "source" / s) for srcs, *_ in MEX.values() for s in srcs
               if not (grouping / "source" / s).is_file()]
    if not (grouping / "lib" / "globalPb.m").is_file():
        missing.insert(0, str(grouping / "lib" / "globalPb.m"))
    if missing:
        raise BuildError(f"{grouping} is not BSR's grouping folder; missing: "
                         + ", ".join(missing[:5]))


def _copy_m(grouping: Path, cache: Path) -> None:
    for m in sorted((grouping / "lib").glob("*.m")):
        dst = cache / m.name
        st = m.stat()
        if (not dst.exists() or dst.stat().st_size != st.st_size
                or dst.stat().st_mtime < st.st_mtime):
            shutil.copy2(m, dst)


def _gpb_library(src: Path, build: Path, cxx: str) -> Path:
    """gpb_src/src/**/*.cc -> build/libgpb.a (gnu++98, as its Makefile's -ansi)."""
    root = src / "gpb_src"
    ccs = sorted((root / "src").rglob("*.cc"))
    objdir = build / "gpb_obj"
    objdir.mkdir(parents=True, exist_ok=True)

    def one(cc: Path) -> Path:
        obj = objdir / (str(cc.relative_to(root / "src").with_suffix(".o"))
                        .replace(os.sep, "__"))
        _run([cxx, "-std=gnu++98", OPT, "-fPIC", "-pthread", "-fexceptions", "-w",
              "-iquote", str(root / "include"), "-c", str(cc), "-o", str(obj)], cc)
        return obj

    t = time.perf_counter()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as ex:
        objs = list(ex.map(one, ccs))
    lib = build / "libgpb.a"
    lib.unlink(missing_ok=True)
    _run(["ar", "rcs", str(lib), *map(str, objs)], lib)
    _log(f"built {lib.name} from {len(ccs)} files of gpb_src/src "
         f"({time.perf_counter() - t:.0f} s)")
    return lib


def _mex(name: str, src: Path, build: Path, cache: Path, gpb: Path | None) -> None:
    srcs, incs, extra, _ = MEX[name]
    odir = build / name
    odir.mkdir(parents=True, exist_ok=True)
    inc = [f"-I{build / 'include'}"] + [f"-I{src / d}" for d in incs]
    if gpb is not None:
        inc += ["-iquote", str(src / "gpb_src" / "include")]
    flags = ["-std=gnu++11", OPT, "-fPIC", "-pthread", "-fexceptions", "-w",
             "-DNDEBUG", "-D_GNU_SOURCE", *extra, *inc]
    # mkoctfile takes CXXFLAGS from the environment (-iquote and -include are not
    # among the options it passes on itself)
    env = {**os.environ, "CXXFLAGS": " ".join(flags)}
    t = time.perf_counter()
    objs = []
    for s in srcs:
        obj = odir / (Path(s).stem + ".o")
        _run(["mkoctfile", "--mex", "-c", str(src / s), "-o", str(obj)], src / s,
             env=env, cwd=odir)
        objs.append(str(obj))
    out = cache / f"{name}.mex"
    tmp = odir / f"{name}.mex"
    link = [*objs, *([str(gpb)] if gpb is not None else []), "-pthread"]
    _run(["mkoctfile", "--mex", "-o", str(tmp), *link], out, env=env, cwd=odir)
    os.replace(tmp, out)
    _log(f"built {out.name} ({time.perf_counter() - t:.1f} s)")


def build_bsr(grouping: Path, cache: Path) -> Path:
    """Build BSR's MEX files for Octave into ``cache`` (once) and return ``cache``,
    a folder holding ``lib/*.m`` and the ``.mex`` files, ready for ``addpath``.

    Nothing is built when every ``.mex`` file is there and newer than the sources
    (and than this file); the ``.m`` files are refreshed each call. Raises
    ``BuildError`` naming the file and quoting the compiler's last lines."""
    grouping = Path(grouping).expanduser().resolve()
    cache = Path(cache).expanduser().resolve()
    _check_grouping(grouping)
    cache.mkdir(parents=True, exist_ok=True)
    _copy_m(grouping, cache)
    mexes = [cache / f"{n}.mex" for n in MEX]
    newest = max(p.stat().st_mtime for p in _sources(grouping))
    if all(p.exists() and p.stat().st_mtime > newest for p in mexes):
        return cache
    if shutil.which("mkoctfile") is None:
        raise BuildError("mkoctfile not found: install Octave's development files "
                         "(Debian: apt-get install liboctave-dev)")
    src = grouping / "source"
    build = cache / "build"
    shutil.rmtree(build, ignore_errors=True)
    (build / "include" / "opencv2" / "core").mkdir(parents=True)
    (build / "include" / "opencv2" / "core" / "core.hpp").write_text(_CV_SHIM)
    cxx = subprocess.run(["mkoctfile", "-p", "CXX"], capture_output=True,
                         text=True).stdout.strip() or "g++"
    _log(f"building BSR's MEX files from {src} into {cache}")
    gpb = _gpb_library(src, build, cxx.split()[0])
    for name, (*_, uses_gpb) in MEX.items():
        _mex(name, src, build, cache, gpb if uses_gpb else None)
    shutil.rmtree(build, ignore_errors=True)
    return cache


def resolve_lib(path: Path, cache: Path) -> Path:
    """A folder for Octave's ``addpath``: ``path`` itself when it holds
    ``globalPb.m`` and ``.mex`` files, else the build of the BSR ``grouping`` folder
    ``path`` (or of its parent, when ``path`` is a ``lib`` without MEX files)."""
    path = Path(path).expanduser().resolve()
    if (path / "globalPb.m").is_file():
        if any(path.glob("*.mex")):
            return path
        if (path.parent / "source").is_dir():
            return build_bsr(path.parent, cache)
        raise BuildError(f"{path} has globalPb.m but no .mex files; pass BSR's "
                         f"grouping folder to build them")
    return build_bsr(path, cache)


if __name__ == "__main__":
    print(build_bsr(Path(sys.argv[1]), Path(sys.argv[2])))
