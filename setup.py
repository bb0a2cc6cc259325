"""Build of segbench's one C extension; the metadata is pyproject.toml's.

``segbench.semantic._native`` decodes PNG label-map pairs and counts their confusion
cells without Numba, so that ``segbench semantic`` starts without loading Numba's
kernels (docs/semantic.md). It is optional: when it cannot be built (no C compiler),
the install goes on and segbench counts with its Numba kernels, the same numbers.
"""

from __future__ import annotations

import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

_ARGS = [] if sys.platform == "win32" else ["-O3", "-fno-strict-aliasing"]


class _OptionalBuildExt(build_ext):
    """build_ext that leaves an extension out (with a warning) when it cannot build."""

    def run(self):
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - no compiler: the Numba path remains
            print(f"warning: segbench's C extension was not built ({exc}); "
                  "the Numba kernels are used instead", file=sys.stderr)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            print(f"warning: {ext.name} was not built ({exc}); "
                  "the Numba kernels are used instead", file=sys.stderr)


setup(
    ext_modules=[
        Extension(
            "segbench.semantic._native",
            ["src/segbench/semantic/_native.c"],
            extra_compile_args=_ARGS,
        )
    ],
    cmdclass={"build_ext": _OptionalBuildExt},
)
