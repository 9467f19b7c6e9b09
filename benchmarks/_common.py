"""Helpers shared by the benchmark scripts in this folder.

Not part of the package and not a test: small, dependency-free utilities to
describe the machine, measure peak memory of one measured section, run a
method in a fresh subprocess and print Markdown tables.

Every benchmark runs each method in its own child process (see
:func:`run_child`), so one method's memory and allocator state never leak into
another's numbers.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

MIB = 1024 * 1024


# --------------------------------------------------------------------------------------
# The machine
# --------------------------------------------------------------------------------------


def cpu_model() -> str:
    """CPU model name from /proc/cpuinfo (or platform's best guess)."""
    try:
        with open("/proc/cpuinfo", encoding="utf8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def usable_cores() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def total_ram_bytes() -> int | None:
    """Physical memory, from /proc/meminfo or sysconf."""
    try:
        with open("/proc/meminfo", encoding="utf8") as meminfo:
            for line in meminfo:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def package_version(name: str) -> str:
    """Installed version of a distribution, or "not installed"."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine_description(packages: Iterable[str] = ()) -> str:
    """One Markdown line: CPU, cores, RAM, OS, Python and package versions."""
    ram = total_ram_bytes()
    ram_text = f"{ram / 1024**3:.1f} GiB RAM" if ram else "RAM unknown"
    cores = f"{usable_cores()} usable of {os.cpu_count()} logical cores"
    names = ["numpy", "pandas", "pyarrow", *packages]
    versions = ", ".join(f"{name} {package_version(name)}" for name in names)
    return (
        f"{cpu_model()}, {cores}, {ram_text}; {platform.system()} "
        f"{platform.release()}; Python {platform.python_version()}; {versions}"
    )


def command_line() -> str:
    """The command that started this script, as one would type it."""
    script = os.path.relpath(sys.argv[0])
    return shlex.join(["python", script, *sys.argv[1:]])


def load_average() -> str:
    """The 1, 5 and 15 minute load averages (to spot a busy machine)."""
    try:
        return ", ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


# --------------------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------------------


def _status_bytes(field: str) -> int | None:
    """A memory field of /proc/self/status (``VmRSS``, ``VmHWM``) in bytes."""
    try:
        with open("/proc/self/status", encoding="utf8") as status:
            for line in status:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def current_rss_bytes() -> int:
    """Resident set size of this process now."""
    rss = _status_bytes("VmRSS")
    if rss is not None:
        return rss
    import psutil  # only where /proc is missing

    return int(psutil.Process().memory_info().rss)


def lifetime_peak_rss_bytes() -> int:
    """Peak resident set size over the whole life of the process (``ru_maxrss``)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports KiB, macOS bytes.
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


def peak_rss_bytes() -> int:
    """Peak resident set size since the last :func:`reset_peak_rss`.

    Linux's ``VmHWM`` (the address space's high-water mark, all threads) where
    available; ``ru_maxrss`` otherwise. ``ru_maxrss`` is not reliably reset: it is
    the larger of ``VmHWM`` and a per-process maximum that the kernel updates
    whenever a thread exits, so threads that ended during data preparation (the
    pyarrow and numpy pools) keep reporting that earlier peak.
    """
    peak = _status_bytes("VmHWM")
    return peak if peak is not None else lifetime_peak_rss_bytes()


def release_free_memory() -> None:
    """Collect garbage and hand memory that allocators keep cached back to the OS.

    pyarrow's pool (mimalloc or jemalloc) and glibc's malloc keep freed memory
    resident for reuse, so right after data preparation the RSS holds hundreds of
    MB that the next allocations silently reuse: a baseline taken then is too
    high and "peak - baseline" too low. Releasing it first makes both honest.
    """
    gc.collect()
    pyarrow = sys.modules.get("pyarrow")
    if pyarrow is not None:
        pyarrow.default_memory_pool().release_unused()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):  # not glibc
            ctypes.CDLL("libc.so.6").malloc_trim(0)


def reset_peak_rss() -> bool:
    """Reset this process's peak RSS to its current RSS, where the OS allows it.

    Linux (>= 4.0) resets the high-water mark ``VmHWM`` when "5" is written to
    ``/proc/self/clear_refs``. The peak read after a measured section then
    belongs to that section (plus whatever the process already held), not to the
    data preparation before it. Returns False when the reset is not available;
    the peak then covers the whole life of the process.
    """
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as clear_refs:
            clear_refs.write("5")
    except OSError:
        return False
    return peak_rss_bytes() <= current_rss_bytes() + 16 * MIB


# --------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------


def _busy_cpu_seconds() -> float | None:
    """CPU time all processes have used since boot (from /proc/stat), or None."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    # user nice system idle iowait irq softirq steal ...; idle and iowait are idle.
    ticks = [int(value) for value in fields[1:9]]
    busy = sum(ticks) - ticks[3] - ticks[4]
    return busy / os.sysconf("SC_CLK_TCK")


def _own_cpu_seconds() -> float:
    """CPU time this process (all its threads) has used."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class Measurement:
    """Wall-clock times of repeated runs and the memory they used.

    ``other_cores`` holds, per run, the average number of cores that *other*
    processes kept busy while it ran (machine-wide busy CPU time from /proc/stat
    minus this process's own, over the run's wall time): a run with a value well
    above zero shared the machine and is slower than it should be.
    """

    seconds: list[float]
    baseline_rss: int
    peak_rss: int
    peak_is_section_only: bool
    lifetime_peak_rss: int
    other_cores: list[float | None]

    @property
    def best(self) -> float:
        """Fastest run."""
        return min(self.seconds)

    @property
    def median(self) -> float:
        """Median run."""
        return statistics.median(self.seconds)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "seconds": self.seconds,
            "baseline_rss": self.baseline_rss,
            "peak_rss": self.peak_rss,
            "peak_is_section_only": self.peak_is_section_only,
            "lifetime_peak_rss": self.lifetime_peak_rss,
            "other_cores": self.other_cores,
        }


def measure(
    run: Callable[[], Any],
    *,
    repeat: int,
    disable_gc: bool = False,
    log: Callable[[str], None] | None = None,
) -> tuple[Measurement, Any]:
    """Time ``run()`` ``repeat`` times; return the measurement and the last result.

    Cached free memory is released (:func:`release_free_memory`) and the peak
    RSS reset before the first run; the previous result is dropped before each
    run, so the peak is that of one run on top of the data the process holds.
    The cyclic garbage collector stays on unless ``disable_gc`` (as ``timeit``
    does): code that builds millions of Python containers pays for its
    collections, and a user's script would too.
    """
    release_free_memory()
    section_only = reset_peak_rss()
    baseline = current_rss_bytes()
    seconds: list[float] = []
    other_cores: list[float | None] = []
    result: Any = None
    for attempt in range(repeat):
        result = None
        release_free_memory()
        busy_before, own_before = _busy_cpu_seconds(), _own_cpu_seconds()
        if disable_gc:
            gc.disable()
        try:
            start = time.perf_counter()
            result = run()
            elapsed = time.perf_counter() - start
        finally:
            gc.enable()
        busy_after, own_after = _busy_cpu_seconds(), _own_cpu_seconds()
        seconds.append(elapsed)
        if busy_before is None or busy_after is None:
            other_cores.append(None)
        else:
            other = (busy_after - busy_before) - (own_after - own_before)
            other_cores.append(max(0.0, other) / elapsed)
        if log is not None:
            busy = (
                "" if other_cores[-1] is None else f" (others: {other_cores[-1]:.2f})"
            )
            log(f"run {attempt + 1}/{repeat}: {elapsed:.3f} s{busy}")
    peak = peak_rss_bytes()
    lifetime = lifetime_peak_rss_bytes()
    measurement = Measurement(
        seconds, baseline, peak, section_only, lifetime, other_cores
    )
    return measurement, result


# --------------------------------------------------------------------------------------
# Child processes
# --------------------------------------------------------------------------------------


def run_child(script: str | Path, arguments: Sequence[str]) -> dict[str, Any]:
    """Run ``python script *arguments --out FILE`` in a fresh process; load FILE.

    The child's stderr goes straight to ours (progress); its JSON result comes
    back through the file, so nothing it prints can corrupt it.
    """
    with tempfile.TemporaryDirectory(prefix="lsh_frame_bench_") as folder:
        out = Path(folder) / "result.json"
        command = [sys.executable, str(script), *arguments, "--out", str(out)]
        completed = subprocess.run(command, check=False)
        if completed.returncode != 0:
            raise RuntimeError(
                f"Benchmark child {shlex.join(command)} failed with exit code "
                f"{completed.returncode}; see its error output above."
            )
        return json.loads(out.read_text(encoding="utf8"))


def report_header(title: str, packages: Iterable[str]) -> str:
    """Markdown heading with the machine, the command line and the load at start."""
    load = load_average()
    log_to_stderr(title.split()[0].lower())(f"load average {load}")
    return "\n".join(
        [
            f"# {title}",
            "",
            f"- Machine: {machine_description(packages)}",
            f"- Command: `{command_line()}`",
            f"- Load average (1, 5, 15 min) at start: {load}",
            "",
        ]
    )


def log_to_stderr(prefix: str) -> Callable[[str], None]:
    """A progress logger that writes ``[prefix] message`` to stderr."""

    def log(message: str) -> None:
        print(f"[{prefix}] {message}", file=sys.stderr, flush=True)

    return log


# --------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------


def markdown_table(
    headers: Sequence[str], rows: Iterable[Sequence[Any]], align: str | None = None
) -> str:
    """A GitHub Markdown table; ``align`` has one of "l", "r", "c" per column."""
    align = align or "l" + "r" * (len(headers) - 1)
    marks = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join(marks[a] for a in align) + "|",
    ]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def pass_miss(ok: bool | None) -> str:
    """PASS, MISS, or n/a when the target does not apply to this run."""
    if ok is None:
        return "n/a"
    return "PASS" if ok else "MISS"
