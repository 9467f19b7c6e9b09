"""``lsh-frame label`` in a real terminal: typed answers, the file after each, SIGKILL.

The command runs as a child process whose standard input, output and error
are a pseudo-terminal (``os.openpty``): it sees a terminal, as a person's
shell gives it (line editing by the terminal, echo, colour). The test reads
what the child writes until the next prompt appears (with a timeout, never a
fixed sleep), types a reply, and reads the answers file between replies. A
SIGKILL while the model refits loses no answer; a second run with the same
file asks none of them again.
"""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import lsh_frame as lf

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="pseudo-terminals are POSIX"
)

COLUMNS = "given_name,surname,date_of_birth,city"
PROMPT = "Same entity? [y]es [n]o [u]nsure [b]ack [q]uit: "
ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: Seconds to wait for the child to say something (starting Python and
#: scoring 300 records takes about two).
TIMEOUT = 60


def _default_interrupt() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Terminal:
    """A child process on a pseudo-terminal, and what it wrote so far."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        self.master, slave = os.openpty()
        environment = {
            key: value for key, value in os.environ.items() if key != "NO_COLOR"
        }
        environment.update(TERM="xterm", COLUMNS="100", LINES="40")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "lsh_frame", *argv],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env=environment,
            start_new_session=True,
            # A test run started in the background (``pytest &``) ignores
            # SIGINT, and an ignored signal stays ignored across exec: give the
            # child the default, as a terminal would, so Ctrl-C reaches it.
            preexec_fn=_default_interrupt,
        )
        os.close(slave)
        self.output = ""

    def read_until(self, count: int, text: str = PROMPT) -> str:
        """Read until ``text`` appears ``count`` times; return the text (no ANSI)."""
        deadline = time.monotonic() + TIMEOUT
        while ANSI.sub("", self.output).count(text) < count:
            left = deadline - time.monotonic()
            ended = False
            if left > 0 and self._ready(min(left, 1.0)):
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the child closed the terminal (EIO)
                    chunk = b""
                ended = not chunk
                self.output += chunk.decode("utf-8", "replace")
            if left <= 0 or ended:
                raise AssertionError(
                    f"no {text!r} #{count} from the child; it wrote:\n{self.output}"
                )
        return ANSI.sub("", self.output)

    def _ready(self, timeout: float) -> bool:
        return bool(select.select([self.master], [], [], timeout)[0])

    def type(self, reply: str) -> None:
        os.write(self.master, f"{reply}\n".encode())

    def last_pair(self) -> tuple[int, int]:
        pairs = re.findall(r"left (\d+)\s+right (\d+)", ANSI.sub("", self.output))
        left, right = pairs[-1]
        return int(left), int(right)

    def wait(self) -> int:
        try:
            while self._ready(0.1):  # drain, so the child never blocks writing
                self.output += os.read(self.master, 65536).decode("utf-8", "replace")
        except OSError:
            pass
        code = self.process.wait(timeout=TIMEOUT)
        os.close(self.master)
        return code

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=TIMEOUT)
        os.close(self.master)


def _answers(path: Path) -> list[tuple[int, int, object]]:
    table = pd.read_csv(path)
    assert table.columns.tolist() == ["left", "right", "match"]
    return [
        (int(left), int(right), None if pd.isna(match) else bool(match))
        for left, right, match in table.itertuples(index=False)
    ]


def _wait_for_answers(path: Path, count: int) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not path.exists() or len(pd.read_csv(path)) < count:
        assert time.monotonic() < deadline, "the answer was never written"
        time.sleep(0.01)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    lf.datasets.make_customers(300, seed=3).to_csv(tmp_path / "people.csv")
    return tmp_path


ARGV = ["label", "people.csv", "--on", COLUMNS, "--index-col", "record_id"]


def test_typed_answers_are_written_one_by_one_and_survive_a_kill(folder):
    labels = folder / "labels.csv"
    terminal = Terminal([*ARGV, "-o", "labels.csv"], folder)
    asked: list[tuple[int, int]] = []
    expected: list[tuple[int, int, object]] = []
    for number, (reply, answer) in enumerate(
        [("y", True), ("n", False), ("u", None)], start=1
    ):
        terminal.read_until(number)
        asked.append(terminal.last_pair())
        terminal.type(reply)
        terminal.read_until(number + 1)  # the next pair: the answer is written
        expected.append((*asked[-1], answer))
        assert _answers(labels) == expected
    shown = terminal.read_until(4)
    # a terminal gets the differing characters in colour, the caret line too
    assert "\x1b[1;31m" in terminal.output
    assert "^" in shown and "expected precision" in shown
    assert "[q]uit: y\r\n" in shown  # the terminal echoed what was typed

    # b: the last answer is taken back (the file rewritten) and asked again
    terminal.type("b")
    terminal.read_until(5)
    assert terminal.last_pair() == asked[-1]
    assert _answers(labels) == expected[:-1]
    terminal.type("y")
    terminal.read_until(6)
    expected[-1] = (*asked[-1], True)
    assert _answers(labels) == expected

    # an answer, then SIGKILL as soon as it is on disk: the refit is cut short
    fourth = terminal.last_pair()
    terminal.type("n")
    _wait_for_answers(labels, 4)
    terminal.kill()
    expected.append((*fourth, False))
    assert _answers(labels) == expected
    assert sorted(entry.name for entry in folder.iterdir()) == [
        "labels.csv",
        "people.csv",
    ]

    # a restart continues from the file: it asks none of those pairs again
    again = Terminal([*ARGV, "-o", "labels.csv"], folder)
    shown = again.read_until(1)
    assert "4 answers read from labels.csv" in shown
    assert "Pair 5:" in shown
    answered = {(left, right) for left, right, _ in expected}
    assert again.last_pair() not in answered
    again.type("q")
    assert again.wait() == 0
    assert _answers(labels) == expected
    assert "4 answers in labels.csv (2 same, 2 different, 0 unsure" in ANSI.sub(
        "", again.output
    )


def test_a_kill_at_any_moment_leaves_a_whole_file(folder):
    # Kill the child right after typing, whatever it is doing (reading, writing
    # the file, refitting): the file holds the answers before, and this one or not.
    labels = folder / "labels.csv"
    terminal = Terminal([*ARGV, "-o", "labels.csv"], folder)
    for number in (1, 2):
        terminal.read_until(number)
        terminal.type("n")
    terminal.read_until(3)
    before = _answers(labels)
    terminal.type("y")
    terminal.kill()
    after = _answers(labels)
    assert after in (before, [*before, (*terminal.last_pair(), True)])
    assert len(before) == 2


def test_an_interrupt_keeps_the_answers_and_says_so(folder):
    labels = folder / "labels.csv"
    terminal = Terminal([*ARGV, "-o", "labels.csv"], folder)
    terminal.read_until(1)
    first = terminal.last_pair()
    terminal.type("y")
    terminal.read_until(2)
    terminal.process.send_signal(signal.SIGINT)  # Ctrl-C at the prompt
    terminal.read_until(1, "1 answer in labels.csv (1 same")
    assert terminal.wait() == 130
    assert _answers(labels) == [(*first, True)]
