"""Teach the match model with a few answers: the questions chosen, then at random.

Run from the repository root:

    python examples/teach_with_answers.py              # Walmart-Amazon if found
    python examples/teach_with_answers.py --synthetic  # two tables of make_customers

A person is asked "same product or not?" about ten pairs at a time, chosen by
``lf.uncertain_pairs``; the answers go back into ``lf.link`` as ``labels=``, and the
next ten are asked of the refitted model, up to 50 answers. Here the "person" answers
from the ground truth, so the example can print the pair F1 after each batch, and the
same curve when the ten pairs are drawn at random from the candidates instead: the
choice of questions is what makes a few answers count.

It links Walmart's 2,554 products to Amazon's 22,074 (853 true pairs) when the
project's shared data folder sits beside the checkout
(``../shared/data/walmart_amazon/``, from the pyJedAI repository, Apache-2.0); point
``LSH_FRAME_DATA`` at a folder holding ``walmart_amazon/walmart.csv``, ``amazon.csv``
and ``gt.csv`` to use your own copy. Without it, the example links two tables made
from built-in synthetic customers. To answer yourself instead, see
``docs/guide-labels.md`` (``lsh-frame label`` and ``lf.label_pairs``).
"""

from __future__ import annotations

import argparse
import time
from typing import NamedTuple

import numpy as np
import pandas as pd
from _data import locate

import lsh_frame as lf


class Task(NamedTuple):
    left: pd.DataFrame
    right: pd.DataFrame
    columns: list[str]
    truth: pd.DataFrame


def walmart_amazon(synthetic: bool) -> Task:
    """Walmart × Amazon products, or two tables of synthetic customers."""
    folder = locate(
        "walmart_amazon/gt.csv",
        "Walmart-Amazon",
        "two tables of synthetic customers",
        skip=synthetic,
    )
    if folder is not None:
        read = {"sep": "|", "dtype": str, "na_filter": False, "index_col": "id"}
        walmart = pd.read_csv(folder.parent / "walmart.csv", **read)
        amazon = pd.read_csv(folder.parent / "amazon.csv", **read)
        truth = pd.read_csv(folder, sep="|", dtype=str)
        truth.columns = ["left", "right"]
        return Task(walmart, amazon, ["title", "modelno", "brand", "price"], truth)
    people = lf.datasets.make_customers(6_000, seed=4)
    first = people.groupby("entity_id").cumcount() == 0
    left, right = people[first], people[~first]
    truth = left.reset_index().merge(right.reset_index(), on="entity_id")
    truth = truth.rename(columns={"record_id_x": "left", "record_id_y": "right"})
    columns = ["given_name", "surname", "date_of_birth", "city", "postcode"]
    return Task(
        left.drop(columns="entity_id"),
        right.drop(columns="entity_id"),
        columns,
        truth[["left", "right"]],
    )


def answer(asked: pd.DataFrame, true_pairs: set[tuple[object, object]]) -> pd.DataFrame:
    """Answer as a careful person would (here: from the ground truth)."""
    same = [
        (left, right) in true_pairs
        for left, right in zip(asked["left"], asked["right"], strict=True)
    ]
    return asked[["left", "right"]].assign(match=same)


def curve(task: Task, *, chosen: bool, answers: int, batch: int) -> list[float]:
    """Pair F1 with 0, batch, 2 × batch ... answers."""
    true_pairs = set(zip(task.truth["left"], task.truth["right"], strict=True))
    random = np.random.default_rng(1)
    scored = lf.link(task.left, task.right, task.columns)
    given: pd.DataFrame | None = None
    scores = [lf.evaluate(scored, task.truth).f1]
    while (0 if given is None else len(given)) < answers:
        if chosen:
            asked = lf.uncertain_pairs(scored, n=batch, labels=given)
        else:
            fresh = scored
            if given is not None:
                known = pd.MultiIndex.from_frame(given[["left", "right"]])
                fresh = scored[
                    ~pd.MultiIndex.from_frame(scored[["left", "right"]]).isin(known)
                ]
            asked = fresh.iloc[random.choice(len(fresh), batch, replace=False)]
        given = pd.concat([given, answer(asked, true_pairs)], ignore_index=True)
        scored = lf.link(task.left, task.right, task.columns, labels=given)
        scores.append(lf.evaluate(scored, task.truth).f1)
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--synthetic", action="store_true", help="use synthetic customers"
    )
    parser.add_argument("--answers", type=int, default=50, help="answers in all (50)")
    parser.add_argument("--batch", type=int, default=10, help="asked per refit (10)")
    arguments = parser.parse_args()
    task = walmart_amazon(arguments.synthetic)
    print(
        f"{len(task.left):,} × {len(task.right):,} records, "
        f"{len(task.truth):,} true pairs; pair F1 after each batch of answers:"
    )
    counts = range(0, arguments.answers + 1, arguments.batch)
    print(f"  {'answers':<16}" + "".join(f"{count:>7}" for count in counts))
    for chosen, name in ((True, "uncertain_pairs"), (False, "at random")):
        started = time.perf_counter()
        scores = curve(
            task, chosen=chosen, answers=arguments.answers, batch=arguments.batch
        )
        print(
            f"  {name:<16}"
            + "".join(f"{score:>7.3f}" for score in scores)
            + f"   ({time.perf_counter() - started:.0f} s)"
        )


if __name__ == "__main__":
    main()
