"""Progress of the long steps of a job: a tqdm line on stderr, or a record.

The stages announce themselves with :func:`step`; nothing happens unless a
caller opened :func:`reporting` with ``enabled=True`` (the command line does so
when stderr is a terminal, the job functions when given ``progress=True``) or
:func:`recording` (benchmarks time the steps with it). Steps are announced from
the calling thread only. The first listener opened wins; inner ones are quiet.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_LISTENER: ContextVar[Callable[[str], None] | None] = ContextVar(
    "lsh_frame_progress", default=None
)


@contextmanager
def _listening(listener: Callable[[str], None]) -> Iterator[bool]:
    if _LISTENER.get() is not None:
        yield False
        return
    token = _LISTENER.set(listener)
    try:
        yield True
    finally:
        _LISTENER.reset(token)


@contextmanager
def reporting(enabled: bool, description: str) -> Iterator[None]:
    """Show the steps announced inside the block as one progress line."""
    if not enabled or _LISTENER.get() is not None:
        yield
        return
    from tqdm.auto import tqdm  # imported only when a line is shown

    bar = tqdm(
        total=None,
        desc=description,
        file=sys.stderr,
        unit="step",
        bar_format="{desc} [{elapsed}]",
        leave=False,
    )

    def show(label: str) -> None:
        bar.set_description_str(f"{description}: {label}")
        bar.update(1)

    try:
        with _listening(show):
            yield
    finally:
        bar.close()


@contextmanager
def recording() -> Iterator[list[tuple[str, float]]]:
    """Collect ``(label, perf_counter())`` of every step announced in the block."""
    steps: list[tuple[str, float]] = []
    with _listening(lambda label: steps.append((label, time.perf_counter()))):
        yield steps


def step(label: str) -> None:
    """Announce the step that starts now (no-op when nobody listens)."""
    listener = _LISTENER.get()
    if listener is not None:
        listener(label)
