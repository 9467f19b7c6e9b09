"""Progress of the long steps of a job: a tqdm line on stderr, or a record.

The stages announce themselves with :func:`step`, and a step whose amount of
work is known (rows signed, postings looked up, pairs scored) says how much
with ``total=`` and reports it done with :func:`advance`: the line then shows
its share done and the time left. A step without a total that reports work
done shows its count. Nothing happens unless a caller opened
:func:`reporting` (the command line does so when stderr is a terminal, the job
functions by default when stderr is a terminal or they run in a notebook,
where ``tqdm.auto`` draws a widget) or :func:`recording` (benchmarks and tests
time the steps with it). Steps are announced from the calling thread only.
The first listener opened wins; inner ones are quiet.

The line moves while a step works without reporting (one long numpy call): a
thread redraws it every ``REFRESH`` seconds, so its clock never stands still.
Opened with ``enabled=None`` it appears only once the job has run ``DELAY``
seconds: a job that ends sooner prints nothing. The time left is the step's
elapsed time scaled by the work left (tqdm's ``smoothing=0``), which a step
that reports its work in even pieces keeps within a factor of two.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol


class _Listener(Protocol):
    def start(self, label: str, total: int | None) -> None: ...

    def advance(self, amount: int) -> None: ...


_LISTENER: ContextVar[_Listener | None] = ContextVar("lsh_frame_progress", default=None)

#: The line of a step without a known amount of work, with a count of work
#: done, and with its share done.
_ELAPSED = "{desc} [{elapsed}]"
_COUNT = "{desc}: {n_fmt} [{elapsed}, {rate_fmt}]"
_SHARE = "{desc}: {percentage:3.0f}% [{elapsed}<{remaining}]"
#: Seconds between redraws of a line whose step reports nothing.
REFRESH = 0.5
#: Least seconds between redraws for reported work (tqdm's ``mininterval``).
INTERVAL = 0.5
#: Seconds a job runs before its line appears, when shown by default.
DELAY = 5.0


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
    """One tqdm line: the current step, and its share (or count) done.

    The bar is made ``delay`` seconds after the job starts, showing the step
    under way then; until then the steps are only noted.
    """

    def __init__(self, description: str, delay: float = 0.0) -> None:
        self.description = description
        self.delay = delay
        self.began = time.monotonic()
        self.lock = threading.Lock()
        self.bar: Any = None
        self.label = ""
        self.total: int | None = None
        self.done = 0
        self.step_began = time.time()
        self.closed = threading.Event()
        self.ticker = threading.Thread(target=self._tick, daemon=True)
        with self.lock:
            self._show_when_due()
        self.ticker.start()

    def _format(self) -> str:
        if self.total:
            return _SHARE
        return _COUNT if self.done else _ELAPSED

    def _show_when_due(self) -> None:
        """Make the bar once the delay has passed (under the lock)."""
        if self.bar is not None or time.monotonic() - self.began < self.delay:
            return
        from tqdm.auto import tqdm  # imported only when a line is shown

        self.bar = tqdm(
            total=self.total or None,
            initial=self.done,
            desc=self._description(),
            file=sys.stderr,
            bar_format=self._format(),
            leave=False,
            mininterval=INTERVAL,
            smoothing=0,
        )
        self.bar.start_t = self.step_began  # the step's clock, not the bar's
        self.bar.refresh()

    def _description(self) -> str:
        return f"{self.description}: {self.label}" if self.label else self.description

    def _tick(self) -> None:
        while not self.closed.wait(REFRESH):
            with self.lock:
                if self.closed.is_set():
                    return
                self._show_when_due()
                if self.bar is not None:
                    self.bar.refresh()

    def start(self, label: str, total: int | None) -> None:
        with self.lock:
            self.label, self.total, self.done = label, total, 0
            self.step_began = time.time()
            self._show_when_due()
            if self.bar is not None:
                self.bar.set_description_str(self._description(), refresh=False)
                self.bar.bar_format = self._format()
                self.bar.reset(total=total or None)  # redraws, with the time from 0

    def advance(self, amount: int) -> None:
        with self.lock:
            self.done += amount
            if self.bar is not None:
                if not self.total and self.done == amount:  # the first count
                    self.bar.bar_format = _COUNT
                self.bar.update(amount)

    def close(self) -> None:
        with self.lock:
            self.closed.set()
            if self.bar is not None:
                self.bar.close()
        self.ticker.join()


class _Record:
    """``(label, perf_counter())`` of every step started, and the work reported.

    ``work`` holds ``(label, total, [(perf_counter(), done so far), ...])``
    per step: what the line would have shown, for tests and benchmarks.
    """

    def __init__(self) -> None:
        self.steps: list[tuple[str, float]] = []
        self.work: list[tuple[str, int | None, list[tuple[float, int]]]] = []

    def start(self, label: str, total: int | None) -> None:
        self.steps.append((label, time.perf_counter()))
        self.work.append((label, total, []))

    def advance(self, amount: int) -> None:
        if self.work:
            done = self.work[-1][2]
            done.append((time.perf_counter(), (done[-1][1] if done else 0) + amount))


def interactive() -> bool:
    """Whether someone watches: stderr is a terminal, or this runs in a notebook."""
    try:
        if sys.stderr is not None and sys.stderr.isatty():
            return True
    except (AttributeError, ValueError):  # a closed or odd stream
        pass
    shell = getattr(sys.modules.get("IPython"), "get_ipython", None)
    if shell is None:
        return False
    try:
        return type(shell()).__name__ == "ZMQInteractiveShell"
    except Exception:
        return False


@contextmanager
def reporting(enabled: bool | None, description: str) -> Iterator[None]:
    """Show the steps announced inside the block as one progress line.

    ``enabled=None`` shows it when someone watches (:func:`interactive`) and
    the job lasts more than ``DELAY`` seconds.
    """
    if enabled is None:
        enabled, delay = interactive(), DELAY
    else:
        delay = 0.0
    if not enabled or _LISTENER.get() is not None:
        yield
        return
    line = _Line(description, delay)
    try:
        with _listening(line):
            yield
    finally:
        line.close()


@contextmanager
def recording() -> Iterator[list[tuple[str, float]]]:
    """Collect ``(label, perf_counter())`` of every step announced in the block.

    :func:`recording_work` also collects the work each step reported.
    """
    record = _Record()
    with _listening(record):
        yield record.steps


@contextmanager
def recording_work() -> Iterator[list[tuple[str, int | None, list[tuple[float, int]]]]]:
    """Collect every step's label, total and ``(perf_counter(), done)`` reports."""
    record = _Record()
    with _listening(record):
        yield record.work


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


def listening() -> bool:
    """Whether anyone listens (a caller may then report work in pieces)."""
    return _LISTENER.get() is not None
