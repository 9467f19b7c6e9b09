"""Progress on a terminal: does every long step of ``lsh-frame dedupe`` show a bar?

    python benchmarks/progress_pty.py                  # 1,000,000 records (minutes)
    python benchmarks/progress_pty.py --rows 200000    # a quicker run

``make_customers(rows)`` is written to a CSV file (without its truth column),
then ``lsh-frame dedupe FILE --on <every column> -o out.csv`` runs with its
stderr on a pseudo-terminal, as a user's terminal would give it. Every redraw
of the progress line is read with the time it arrived. Per step (the label the
line shows): its seconds, how many redraws, the longest time without one, and
whether the line showed a share done (``45%``) or a count of work done; for a
step with a share, the time left the line predicted at about a quarter and at
half of its work against the time it took. Bar (issue 44): every step over 2 s
shows a share or a count, and a redraw at least every 2 s.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common

import lsh_frame as lf

log = _common.log_to_stderr("progress_pty")

#: "lsh-frame dedupe: <step>: 45% [00:03<00:04]", "...: 1,234 [00:03, 5.2it/s]",
#: "... [00:03]": the step, then what the line shows.
_SHARE = re.compile(
    r"^(?P<step>.*?): +(?P<share>\d+)% \[(?P<elapsed>[\d:]+)<(?P<left>[\d:?]+)"
)
_COUNT = re.compile(r"^(?P<step>.*?): (?P<count>[\d.,]+[kMG]?) \[(?P<elapsed>[\d:]+),")
_CLOCK = re.compile(r"^(?P<step>.*?) \[(?P<elapsed>[\d:]+)\]")


def _seconds(clock: str) -> float | None:
    if "?" in clock:
        return None
    parts = [int(part) for part in clock.split(":")]
    total = 0
    for part in parts:
        total = total * 60 + part
    return float(total)


def run(rows: int, seed: int) -> tuple[list[tuple[float, str]], float]:
    """Run the dedupe on a pseudo-terminal; every line drawn, with its time."""
    frame = lf.datasets.make_customers(rows, seed=seed).drop(columns="entity_id")
    folder = Path(tempfile.mkdtemp(prefix="progress_pty_"))
    source = folder / "customers.csv"
    frame.to_csv(source, index_label="record_id")
    command = [
        sys.executable, "-m", "lsh_frame", "dedupe", str(source),
        "--index-col", "record_id", "--on", ",".join(frame.columns),
        "-o", str(folder / "out.csv"), "--pairs-output", str(folder / "pairs.csv"),
    ]  # fmt: skip
    log(" ".join(command[2:]))
    leader, follower = pty.openpty()
    # A terminal of 160 columns (a new pseudo-terminal has 0: tqdm draws nothing).
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 160, 0, 0))
    started = time.perf_counter()
    child = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=follower
    )
    os.close(follower)
    drawn: list[tuple[float, str]] = []
    pending = ""
    while True:
        ready, _, _ = select.select([leader], [], [], 0.1)
        if not ready:
            if child.poll() is not None:
                break
            continue
        try:
            chunk = os.read(leader, 65536).decode("utf-8", "replace")
        except OSError:  # the child closed the terminal
            break
        now = time.perf_counter() - started
        pending += chunk
        *complete, pending = re.split(r"[\r\n]", pending)
        drawn.extend((now, line.strip()) for line in complete if line.strip())
    child.wait()
    total = time.perf_counter() - started
    os.close(leader)
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()
    return drawn, total


def steps(drawn: list[tuple[float, str]]) -> list[dict[str, object]]:
    """Group the redraws by step, in order."""
    found: list[dict[str, object]] = []
    for at, line in drawn:
        match = _SHARE.match(line) or _COUNT.match(line) or _CLOCK.match(line)
        if match is None:
            continue
        step = match["step"]
        if not found or found[-1]["step"] != step:
            found.append({"step": step, "times": [], "shares": [], "counted": False})
        current = found[-1]
        current["times"].append(at)  # type: ignore[attr-defined]
        if "share" in match.groupdict():
            left = _seconds(match["left"])
            current["shares"].append((at, int(match["share"]), left))  # type: ignore[attr-defined]
        if "count" in match.groupdict():
            current["counted"] = True
    for number, current in enumerate(found):
        times = current["times"]
        ended = found[number + 1]["times"][0] if number + 1 < len(found) else times[-1]  # type: ignore[index]
        current["seconds"] = ended - times[0]  # type: ignore[operator,index]
        gaps = [b - a for a, b in zip(times, [*times[1:], ended], strict=True)]  # type: ignore[call-overload]
        current["gap"] = max(gaps) if gaps else 0.0
        current["ended"] = ended
    return found


def _predicted(step: dict[str, object], near: int) -> str:
    """The time left the line said near ``near``% against the time it took."""
    shares = [item for item in step["shares"] if item[2] is not None]  # type: ignore[attr-defined]
    if not shares:
        return ""
    at, share, left = min(shares, key=lambda item: abs(item[1] - near))
    actual = step["ended"] - at  # type: ignore[operator]
    return f"{share}%: {left:.0f} s said, {actual:.1f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    arguments = parser.parse_args()
    print(_common.report_header("Progress on a terminal (issue 44)", []))
    drawn, total = run(arguments.rows, arguments.seed)
    found = steps(drawn)
    rows, ok = [], True
    for step in found:
        long = step["seconds"] > 2  # type: ignore[operator]
        shows = bool(step["shares"]) or bool(step["counted"])
        moving = step["gap"] <= 2.0  # type: ignore[operator]
        if long and not (shows and moving):
            ok = False
        rows.append([
            step["step"], f"{step['seconds']:.1f}", len(step["times"]),  # type: ignore[arg-type]
            f"{step['gap']:.1f}",
            "share" if step["shares"] else ("count" if step["counted"] else ""),
            _predicted(step, 25), _predicted(step, 50),
        ])  # fmt: skip
    print("\n".join([
        f"`lsh-frame dedupe` of {arguments.rows:,} records, stderr on a "
        f"pseudo-terminal: {total:.1f} s, {len(drawn):,} redraws. Load average after: "
        f"{_common.load_average()}.",
        "",
        _common.markdown_table(
            ["step", "seconds", "redraws", "longest without a redraw (s)", "shows",
             "time left said near 25%", "near 50%"],
            rows, "lrrrlll",
        ),
        "",
        f"Bar (every step over 2 s shows a share or a count, redrawn at least every "
        f"2 s): {_common.pass_miss(ok)}.",
        "",
    ]))  # fmt: skip


if __name__ == "__main__":
    main()
