"""Real SIGKILLs at random moments of a save: the index at the path stays whole.

A child process saves an index over another (``Index.save(overwrite=True)``),
or runs the command line's ``lsh-frame index add`` (load, add, save in place);
the test kills it with SIGKILL after a random delay within the time a save
takes, then loads the index at the path: it must hold and answer as the old
index or the new one, whole. Children start ahead, so each kill costs about a
save. The default run kills ten times per kind; ``pytest -m slow`` runs
the loop of fifty kills per kind.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import lsh_frame as lf
from lsh_frame import cli

COLUMNS = "given_name,surname,street_address,date_of_birth,email"

#: The child: ready once imported (and the indexes to save loaded); each line
#: on its standard input names the job to run.
CHILD = r"""
import sys, time, warnings
warnings.simplefilter("ignore")
import lsh_frame as lf
from lsh_frame.cli.main import main
target, *sources = sys.argv[1:]
indexes = {source: lf.Index.load(source) for source in sources if source.endswith("ix")}
print("ready", flush=True)
job = sys.stdin.readline().strip()
start = time.perf_counter()
if job in indexes:
    indexes[job].save(target, overwrite=True)
else:
    main(["index", "add", target, job, "--index-col", "record_id", "-q"])
print(f"done {time.perf_counter() - start:.6f}", flush=True)
"""


class Child:
    """A child process waiting to run one job (see CHILD)."""

    def __init__(self, target: Path, sources: list[Path]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(target), *map(str, sources)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def ready(self) -> None:
        """Wait until the child has imported lsh_frame."""
        assert self.process.stdout is not None and self.process.stderr is not None
        line = self.process.stdout.readline()
        assert line == "ready\n", self.process.stderr.read()

    def start(self, job: Path) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{job}\n")
        self.process.stdin.flush()

    def finish(self) -> float:
        """Wait for the job; return how long it took."""
        out, err = self.process.communicate(timeout=120)
        assert self.process.returncode == 0, err
        return float(out.split()[-1])


def answers(path: Path, new: pd.DataFrame) -> tuple[pd.Series, pd.DataFrame]:
    """What the index at ``path`` holds and answers (loads it with every check)."""
    loaded = lf.Index.load(path)
    return loaded.entity_ids, loaded.query(new, k=3)


def which(
    path: Path, new: pd.DataFrame, expected: dict[str, tuple[pd.Series, pd.DataFrame]]
) -> str:
    """Name the expected index the one at ``path`` is, or fail."""
    ids, found = answers(path, new)
    for name, (expected_ids, expected_found) in expected.items():
        if ids.equals(expected_ids) and found.equals(expected_found):
            return name
    raise AssertionError(f"the index at {path} is neither of {sorted(expected)}")


def strays(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(".lsh_frame"))


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """Two saved indexes (old, new), and CSV files for the command line."""
    folder = tmp_path_factory.mktemp("kills")
    people = lf.datasets.make_customers(3_000, seed=7).drop(columns="entity_id")
    people.index = people.index.map(lambda label: f"r{label}").rename("record_id")
    people.iloc[:2_000].to_csv(folder / "saved.csv")
    people.iloc[2_000:2_600].to_csv(folder / "more.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, rows in (("old.ix", 2_000), ("new.ix", 2_500)):
            lf.Index.build(people.iloc[:rows], COLUMNS.split(",")).save(folder / name)
        assert (
            cli.main(["index", "build", str(folder / "cli-old.ix"),
                      str(folder / "saved.csv"), "--index-col", "record_id",
                      "--on", COLUMNS, "-q"]) == 0
        )  # fmt: skip
    return folder, people.iloc[2_600:2_700]


def kill_loop(
    folder: Path,
    new: pd.DataFrame,
    kills: int,
    *,
    cli_add: bool,
    seed: int,
) -> Counter:
    """SIGKILL ``kills`` jobs at random moments; return the outcomes."""
    target = folder / ("cli-target" if cli_add else "target")
    work = folder / ("cli-work" if cli_add else "work")
    for path in (target, work):
        shutil.rmtree(path, ignore_errors=True)
    work.mkdir()
    target = work / target.name
    old = folder / ("cli-old.ix" if cli_add else "old.ix")
    sources = [] if cli_add else [folder / "old.ix", folder / "new.ix"]
    shutil.copytree(old, target)
    expected = {"old": answers(old, new)}
    # Jobs that are not killed: the new index, and how long a job lives
    # (from its start to its exit, with the next child starting beside it, as
    # in the loop).
    lives = []
    for job in [folder / "more.csv"] * 3 if cli_add else [folder / "new.ix", old] * 2:
        child = Child(target, sources)
        child.ready()
        ahead = Child(target, sources)
        started = time.perf_counter()
        child.start(job)
        child.finish()
        lives.append(time.perf_counter() - started)
        ahead.process.kill()
        ahead.process.communicate()
        expected.setdefault("new", answers(target, new))
        if cli_add:
            shutil.rmtree(target)
            shutil.copytree(old, target)
    # Kills within the usual life of a job (a few land after its exit).
    life = 1.2 * float(np.median(lives))
    print(f"a job lives {min(lives):.3f}-{max(lives):.3f} s")
    rng = np.random.default_rng(seed)
    outcomes: Counter = Counter()
    current = "old"
    ahead = Child(target, sources)
    while outcomes["killed"] < kills:
        child, ahead = ahead, Child(target, sources)
        if cli_add:
            job = folder / "more.csv"
        else:
            job = folder / ("new.ix" if current == "old" else "old.ix")
        child.ready()
        child.start(job)
        time.sleep(rng.uniform(0, life))
        child.process.send_signal(signal.SIGKILL)
        child.process.communicate(timeout=120)
        if child.process.returncode == -signal.SIGKILL:
            outcomes["killed"] += 1
        else:  # it had ended
            assert child.process.returncode == 0
            outcomes["finished"] += 1
        current = which(target, new, expected)
        outcomes[current] += 1
        if cli_add and current == "new":  # the next add starts from the old one
            shutil.rmtree(target)
            shutil.copytree(old, target)
            current = "old"
        assert outcomes["finished"] + outcomes["killed"] < 4 * kills, outcomes
    ahead.process.kill()
    ahead.process.communicate()
    # The next save removes whatever the killed ones left beside the path.
    lf.Index.load(folder / "new.ix").save(target, overwrite=True)
    assert strays(work) == []
    return outcomes


@pytest.mark.parametrize("cli_add", [False, True], ids=["save", "cli_add"])
def test_ten_kills_leave_a_whole_index(setup, cli_add):
    folder, new = setup
    outcomes = kill_loop(folder, new, 10, cli_add=cli_add, seed=1)
    assert outcomes["killed"] >= 10
    print(f"{'cli add' if cli_add else 'save'}: {dict(outcomes)}")


@pytest.mark.slow
@pytest.mark.parametrize("cli_add", [False, True], ids=["save", "cli_add"])
def test_fifty_kills_leave_a_whole_index(setup, cli_add):
    folder, new = setup
    outcomes = kill_loop(folder, new, 50, cli_add=cli_add, seed=2)
    assert outcomes["killed"] >= 50
    # Kills landed before and after the new index moved in.
    assert outcomes["old"] > 0 and outcomes["new"] > 0
    print(f"{'cli add' if cli_add else 'save'}: {dict(outcomes)}")
