"""Build lsh_frame's compiled kernels (everything else is in pyproject.toml).

The kernels are one C extension, ``lsh_frame._kernels._native``, built with the
machine's C compiler from ``lsh_frame/_kernels/c``. It is optional: when it
cannot be compiled (no compiler, no Python headers), setuptools says so in the
build log, the install still succeeds, and lsh_frame runs on its numpy kernels
and warns once when imported. Set ``LSH_FRAME_REQUIRE_KERNELS=1`` to make a
failed compile fail the build (the wheels are built that way).

A build from a source checkout (``pip install .`` builds in the tree) also
leaves the built extension beside its sources, as ``pip install -e .`` does:
``python -m pytest`` in the checkout imports the package from the working tree
(the current directory comes first on ``sys.path``), and must find the
compiled kernels there too, not only in the installed copy.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCES = sorted(str(path) for path in Path("lsh_frame/_kernels/c").glob("*.c"))
HERE = Path(__file__).resolve().parent


class BuildKernels(build_ext):
    """Compile with optimisation and without floating-point contraction.

    Contraction (fused multiply-add) would change the last bit of the
    neighbours' cosines against numpy's, so it is turned off.
    """

    def build_extensions(self) -> None:
        """Choose the compiler's flags, then build (a failure is not fatal)."""
        if self.compiler.compiler_type == "msvc":
            arguments = ["/O2", "/fp:precise"]
        else:
            arguments = ["-O3", "-ffp-contract=off", "-fno-math-errno"]
        for extension in self.extensions:
            extension.extra_compile_args = arguments
        super().build_extensions()

    def run(self) -> None:
        """Build, then copy each built extension into the source tree."""
        super().run()
        if self.inplace:
            return
        for extension in self.extensions:
            built = Path(self.get_ext_fullpath(extension.name))
            target = HERE / self.get_ext_filename(extension.name)
            if not built.is_file() or not target.parent.is_dir():
                continue  # not built (no compiler), or not a source tree
            try:
                if built.resolve() != target.resolve():
                    shutil.copyfile(built, target)
            except OSError:  # a read-only checkout keeps the installed copy only
                pass


setup(
    ext_modules=[
        Extension(
            "lsh_frame._kernels._native",
            sources=SOURCES,
            depends=[str(path) for path in Path("lsh_frame/_kernels/c").glob("*.h")],
            optional=os.environ.get("LSH_FRAME_REQUIRE_KERNELS") != "1",
        )
    ],
    cmdclass={"build_ext": BuildKernels},
)
