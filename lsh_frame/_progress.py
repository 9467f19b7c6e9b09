"""Progress of the long steps of a job: a tqdm line on stderr, or a record.

The stages announce themselves with :func:`step`, and a step whose amount of
work is known (rows signed, postings looked up, pairs scored) says how much
with ``total=`` and reports it done with :func:`advance`: the line then shows
its share done and the time left. Nothing happens unless a caller opened
:func:`reporting` with ``enabled=True`` (the command line does so when stderr
is a terminal, the job functions when given ``progress=True``; ``tqdm.auto``
draws a widget in a notebook) or :func:`recording` (benchmarks time the steps
with it). Steps are announced from the calling thread only. The first listener
opened wins; inner ones are quiet.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol


class _Listener(Protocol):
    def start(self, label: str, total: int | None) -> None: ...

    def advance(self, amount: int) -> None: ...


_LISTENER: ContextVar[_Listener | None] = ContextVar("lsh_frame_progress", default=None)

#: The line of a step without a known amount of work, and of one with it.
_ELAPSED = "{desc} [{elapsed}]"
_SHARE = "{desc}: {percentage:3.0f}% [{elapsed}<{remaining}]"


@contextmanager
def _listening(listener: _Listener) -> Iterator[bool]:
    if _LISTENER.get() is not None:
        yield False
        return
    token = _LISTENER.set(listener)
    try:
        yield True
    finally:
        _LISTENER.reset(token)


class _Line:
    """One tqdm line: the current step, and its share done when known."""

    def __init__(self, description: str) -> None:
        from tqdm.auto import tqdm  # imported only when a line is shown

        self.description = description
        self.bar: Any = tqdm(
            total=None,
            desc=description,
            file=sys.stderr,
            bar_format=_ELAPSED,
            leave=False,
            mininterval=0.5,
        )

    def start(self, label: str, total: int | None) -> None:
        self.bar.set_description_str(f"{self.description}: {label}", refresh=False)
        self.bar.bar_format = _SHARE if total else _ELAPSED
        self.bar.reset(total=total or None)  # redraws, with the time from 0

    def advance(self, amount: int) -> None:
        self.bar.update(amount)


class _Record:
    """``(label, perf_counter())`` of every step started."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, float]] = []

    def start(self, label: str, total: int | None) -> None:
        self.steps.append((label, time.perf_counter()))

    def advance(self, amount: int) -> None:
        pass


@contextmanager
def reporting(enabled: bool, description: str) -> Iterator[None]:
    """Show the steps announced inside the block as one progress line."""
    if not enabled or _LISTENER.get() is not None:
        yield
        return
    line = _Line(description)
    try:
        with _listening(line):
            yield
    finally:
        line.bar.close()


@contextmanager
def recording() -> Iterator[list[tuple[str, float]]]:
    """Collect ``(label, perf_counter())`` of every step announced in the block."""
    record = _Record()
    with _listening(record):
        yield record.steps


def step(label: str, total: int | None = None) -> None:
    """Announce the step that starts now, with its amount of work when known.

    A no-op when nobody listens.
    """
    listener = _LISTENER.get()
    if listener is not None:
        listener.start(label, total)


def advance(amount: int) -> None:
    """Report ``amount`` more of the current step's work done."""
    listener = _LISTENER.get()
    if listener is not None and amount:
        listener.advance(int(amount))
