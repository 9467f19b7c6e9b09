"""Warnings that point at the user's line, not at lsh_frame's."""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

import numpy as np

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


#: An entity is *giant* when it holds more than ``GIANT_SHARE`` of the rows
#: (and at least ``GIANT_MIN_ROWS`` rows), or more than the caller's
#: ``warn_size``: far more than one real-world entity has in a table, and what
#: a chain of weak links makes (SimHash within 6 bits joined 1,533 of 2,230
#: pages of a corpus whose largest document has 5 pages: they shared a site's
#: boilerplate). The largest true entity of the benchmark tables holds 4.9% of
#: its rows (Cora, 64 of 1,295; fake_1000 0.7%, historical_50k 0.04%).
GIANT_SHARE = 0.1
GIANT_MIN_ROWS = 100


def warn_giant(
    sizes: Any,
    rows: int,
    warn_size: int,
    fix: str = "raise min_score, or block on more specific fields",
) -> None:
    """Warn when an entity is giant (see ``GIANT_SHARE``); ``sizes`` per entity.

    ``fix`` says what to change, in the caller's parameter names.
    """
    if rows == 0 or len(sizes) == 0:
        return
    share_limit = max(GIANT_MIN_ROWS - 1, int(GIANT_SHARE * rows))
    limit = min(warn_size, share_limit)
    largest = int(np.argmax(sizes))
    size = int(sizes[largest])
    if size <= limit:
        return
    over = int((np.asarray(sizes) > limit).sum())
    warn(
        f"{over:,} entit{'y has' if over == 1 else 'ies have'} more than "
        f"{limit:,} rows (the largest, entity {largest}, has {size:,} of the "
        f"{rows:,} rows, {size / rows:.0%}). Weak links may be chaining different "
        f"records together: {fix}."
    )
