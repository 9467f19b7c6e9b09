"""Warnings that point at the user's line, not at lsh_frame's."""

from __future__ import annotations

import os
import sys
import warnings

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """Warn with the location of the first caller outside the lsh_frame package.

    The same warning is raised from several public functions (``pairs``,
    ``score``, ``dedupe``, the accessor, the Dask versions) at different
    depths, so a fixed ``stacklevel`` would point into the library.
    """
    frame = sys._getframe(0)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    warnings.warn(message, category, stacklevel=level)
