"""The version of lsh_frame, and what it runs on."""

from __future__ import annotations

import platform
import sys
from importlib import metadata

from lsh_frame._kernels import native

__version__ = "0.1.0.dev0"

#: Packages whose versions :func:`show_versions` prints: the dependencies,
#: then the optional ones (extras ``dask``, ``plot``).
DEPENDENCIES = ("numpy", "pandas", "pyarrow", "rapidfuzz", "xxhash", "tqdm")
OPTIONAL = ("dask", "distributed", "matplotlib")


def _installed(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def show_versions() -> None:
    """Print the versions of lsh_frame and its dependencies, and which kernels run.

    The kernels are the compiled ones (a C extension built when lsh_frame was
    installed on a machine with a C compiler) or the numpy ones, which give the
    same results more slowly; the line says which, and why (the environment
    variable ``LSH_FRAME_KERNELS`` chooses: ``auto``, ``compiled`` or
    ``numpy``). Paste the output into a bug report.

    Examples
    --------
    >>> import lsh_frame as lf
    >>> lf.show_versions()  # doctest: +ELLIPSIS
    lsh_frame ...
    python ...
    ...
    numpy ...
    ...
    kernels ...
    """
    kernels = native.kernels_in_use()
    rows = [
        ("lsh_frame", __version__),
        ("python", f"{platform.python_version()} ({sys.executable})"),
        ("platform", platform.platform()),
        *((package, _installed(package)) for package in DEPENDENCIES),
        *((package, _installed(package)) for package in OPTIONAL),
        ("kernels", f"{kernels['kernels']} ({kernels['reason']})"),
        (native.ENVIRONMENT, kernels["choice"].partition("=")[2]),
    ]
    if "build" in kernels:
        rows.append(("kernels build", kernels["build"]))
    width = max(len(name) for name, _ in rows) + 1
    for name, value in rows:
        print(f"{name:<{width}}{value}")
