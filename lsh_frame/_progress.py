"""Progress of the long steps of a job, shown as a tqdm bar on stderr.

The stages announce themselves with :func:`step`; nothing is shown unless a
caller opened :func:`reporting` with ``enabled=True`` (the command line does so
when stderr is a terminal, the job functions when given ``progress=True``).
Steps are announced from the calling thread only.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_BAR: ContextVar[Any] = ContextVar("lsh_frame_progress", default=None)


@contextmanager
def reporting(enabled: bool, description: str) -> Iterator[None]:
    """Show the steps announced inside the block as one progress line."""
    if not enabled or _BAR.get() is not None:
        yield
        return
    from tqdm.auto import tqdm  # imported only when a bar is shown

    bar = tqdm(
        total=None,
        desc=description,
        file=sys.stderr,
        unit="step",
        bar_format="{desc} [{elapsed}]",
        leave=False,
    )
    token = _BAR.set((bar, description))
    try:
        yield
    finally:
        _BAR.reset(token)
        bar.close()


def step(label: str) -> None:
    """Announce the step that starts now (no-op when nothing is shown)."""
    current = _BAR.get()
    if current is None:
        return
    bar, description = current
    bar.set_description_str(f"{description}: {label}")
    bar.update(1)
