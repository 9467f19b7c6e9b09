"""A person's answers: pair F1 as the defaults learn from 10, 25 and 50 of them.

What it measures
----------------
For each data set, a simulated person answers the questions the library asks,
truthfully, from the ground truth (as someone who looked at both records
would), 10 at a time (then 5, 5, 10, 10), and the whole default job is run
again with all the answers so far after each batch::

    scored = lf.pairs(left, columns, other=right)           # no answers
    asked = lf.uncertain_pairs(scored, n=10, labels=answers)
    answers = pd.concat([answers, <asked with the person's match column>])
    scored = lf.pairs(left, columns, other=right, labels=answers)

The same curve is drawn with questions chosen at random among the candidate
pairs (seeded), to show that the choice of questions matters. Reported per
data set and way of asking: the pair F1 of the match decision with 0, 10, 20,
25, 30, 40 and 50 answers, whether it is never lower than with none, and the
issue's bar after 50 answers (PASS/MISS). Nothing is tuned on the truth; it
only answers and scores.

Data: ``../shared/data`` next to the repository or ``$LSH_FRAME_DATA`` (see
``../shared/data/README.md`` for the sources); a missing set is skipped.

How to run::

    python benchmarks/labels.py                     # the five sets and fake_1000
    python benchmarks/labels.py --only cora abt_buy # some of them
    python benchmarks/labels.py --ways uncertain    # without the random curve
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common
from _datasets import HOLDOUT, LOADERS, SYNTHETIC, Task

import lsh_frame as lf

#: The issue's bars: pair F1 after 50 answers at least.
BARS = {
    "walmart_amazon": 0.85,
    "abt_buy": 0.95,
    "imdb_dbpedia": 0.93,
    "cora": 0.95,
    "historical_50k": 0.95,
}

#: Questions answered between two runs of the job (50 in all).
BATCHES = (10, 10, 5, 5, 10, 10)

DEFAULT_SETS = [
    "abt_buy",
    "cora",
    "fake_1000",
    "walmart_amazon",
    "historical_50k",
    "imdb_dbpedia",
]


def truthful(task: Task, asked: pd.DataFrame) -> np.ndarray:
    """The answers of a person who knows the truth."""
    truth = task.truth
    known = set(zip(truth["left"], truth["right"], strict=True))
    if task.right is None:
        known |= {(b, a) for a, b in known}
    return np.array(
        [(a, b) in known for a, b in zip(asked["left"], asked["right"], strict=True)]
    )


def _run(task: Task, answers: pd.DataFrame | None) -> pd.DataFrame:
    options = {} if task.right_on is None else {"right_on": task.right_on}
    return lf.pairs(
        task.left, task.columns, other=task.right, labels=answers, **options
    )


def _random_questions(
    scored: pd.DataFrame, answers: pd.DataFrame | None, n: int, rng: np.random.Generator
) -> pd.DataFrame:
    pool = scored[scored["found_by"].astype(str) != "labels"]
    if answers is not None:
        done = pd.MultiIndex.from_frame(answers[["left", "right"]])
        pool = pool[~pd.MultiIndex.from_frame(pool[["left", "right"]]).isin(done)]
    return pool.iloc[
        np.sort(rng.choice(len(pool), size=min(n, len(pool)), replace=False))
    ]


def curve(task: Task, way: str, log) -> tuple[list[float], float]:
    """F1 with 0 answers and after each batch, and the seconds it took."""
    started = time.perf_counter()
    scored = _run(task, None)
    scores = [lf.evaluate(scored, task.truth).f1]
    answers: pd.DataFrame | None = None
    rng = np.random.default_rng(0)
    for n in BATCHES:
        asked = (
            lf.uncertain_pairs(scored, n=n, labels=answers)
            if way == "uncertain"
            else _random_questions(scored, answers, n, rng)
        )
        batch = pd.DataFrame(
            {
                "left": asked["left"].to_numpy(),
                "right": asked["right"].to_numpy(),
                "match": truthful(task, asked),
            }
        )
        answers = (
            batch if answers is None else pd.concat([answers, batch], ignore_index=True)
        )
        scored = _run(task, answers)
        scores.append(lf.evaluate(scored, task.truth).f1)
        log(
            f"{way}: {len(answers)} answers "
            f"({int(answers['match'].sum())} yes), F1 {scores[-1]:.4f}"
        )
    return scores, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", default=DEFAULT_SETS)
    parser.add_argument(
        "--ways",
        nargs="+",
        default=["uncertain", "random"],
        choices=["uncertain", "random"],
    )
    args = parser.parse_args()
    loaders = {**LOADERS, **SYNTHETIC, **HOLDOUT}
    print(_common.report_header("Labels: F1 as answers come in", ["pandas", "numpy"]))
    counts = np.cumsum((0, *BATCHES))
    headers = [
        "data set",
        "questions",
        *(f"F1 @{n}" for n in counts),
        "never lower",
        "bar @50",
        "time",
    ]
    rows = []
    for name in args.only:
        log = _common.log_to_stderr(name)
        try:
            task = loaders[name]()
        except FileNotFoundError as missing:
            log(f"skipped: {missing}")
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for way in args.ways:
                scores, seconds = curve(task, way, log)
                bar = BARS.get(name)
                rows.append(
                    [
                        task.name,
                        way,
                        *(f"{score:.4f}" for score in scores),
                        _common.pass_miss(min(scores[1:]) >= scores[0]),
                        "n/a"
                        if bar is None
                        else f"≥ {bar:.2f} {_common.pass_miss(scores[-1] >= bar)}",
                        f"{seconds:.0f} s",
                    ]
                )
                print(
                    _common.markdown_table(
                        headers,
                        rows[-1:],
                    ),
                    file=sys.stderr,
                    flush=True,
                )
    print(
        _common.markdown_table(
            headers,
            rows,
        )
    )


if __name__ == "__main__":
    main()
