"""lsh_frame's defaults beside Splink 5 on historical_50k and FEBRL4: pair F1 and time.

What it measures
----------------
Issue 13 asks for Splink 5 "with its documented settings" side by side on
Splink's own historical_50k (dedupe) and on FEBRL4 (link). For each data set,
in one run:

- ``lsh_frame``: ``lf.pairs(left, columns, other=right)`` with every default,
  no labels; its matches are the pairs with ``match`` true.
- ``splink``: Splink 5 on DuckDB, configured after Splink's own tutorial for
  historical_50k and its FEBRL4 linking example (blocking rules, comparisons,
  prior from deterministic rules, u by random sampling, m by EM, predictions at
  ``match_probability >= 0.5``); written from those documents' descriptions,
  not copied, and printed with the results.

Pair precision, recall and F1 are computed against the data set's truth
(which nothing else reads), and wall time covers the whole call or pipeline
(Splink: settings, training, prediction). Both run in this process, one after
the other; DuckDB uses every core, lsh_frame both threads where it can.

Data: ``../shared/data`` next to the repository or ``$LSH_FRAME_DATA`` (see
``_datasets.py``); Splink: ``pip install 'splink>=5'`` (the ``bench`` extra).

How to run::

    python benchmarks/splink_sets.py
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common
from _datasets import Task, febrl4, historical_50k

import lsh_frame as lf

THRESHOLD = 0.5


def _pair_set(left: Any, right: Any, link: bool) -> set[tuple[Any, Any]]:
    pairs = zip(left, right, strict=True)
    if link:
        return set(pairs)
    return {(a, b) if str(a) <= str(b) else (b, a) for a, b in pairs}


def _quality(found: set, truth: set) -> dict[str, float]:
    hits = len(found & truth)
    precision = hits / len(found) if found else float("nan")
    recall = hits / len(truth) if truth else float("nan")
    f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "found": len(found)}


def run_lsh_frame(task: Task) -> tuple[set, float, int]:
    start = time.perf_counter()
    scored = lf.pairs(task.left, task.columns, other=task.right)
    seconds = time.perf_counter() - start
    matched = scored[scored["match"]]
    found = _pair_set(matched["left"], matched["right"], task.right is not None)
    return found, seconds, len(scored)


def _historical_settings() -> tuple[dict[str, Any], str]:
    """Splink's historical_50k tutorial: names with TF, dob, postcode, place, job."""
    import splink.comparison_library as cl
    from splink import block_on

    settings = {
        "link_type": "dedupe_only",
        "blocking_rules_to_generate_predictions": [
            block_on("first_name", "surname"),
            block_on("surname", "dob"),
        ],
        "comparisons": [
            cl.NameComparison("first_name").configure(term_frequency_adjustments=True),
            cl.NameComparison("surname").configure(term_frequency_adjustments=True),
            cl.DateOfBirthComparison("dob", input_is_string=True),
            cl.PostcodeComparison("postcode_fake"),
            cl.ExactMatch("birth_place").configure(term_frequency_adjustments=True),
            cl.ExactMatch("occupation").configure(term_frequency_adjustments=True),
        ],
    }
    training = {
        "prior_rules": [
            block_on("first_name", "surname", "dob"),
            block_on(
                "substr(first_name, 1, 2)", "surname", "substr(postcode_fake, 1, 2)"
            ),
            block_on("dob", "postcode_fake"),
        ],
        "prior_recall": 0.6,
        "em_rules": [block_on("first_name", "surname"), block_on("dob")],
    }
    text = (
        "blocking first_name+surname | surname+dob; comparisons NameComparison "
        "(first_name, surname; TF), DateOfBirthComparison(dob), "
        "PostcodeComparison(postcode_fake), ExactMatch(birth_place, occupation; TF); "
        "prior from first_name+surname+dob | first_name[:2]+surname+postcode[:2] | "
        "dob+postcode at recall 0.6; u by random sampling (1e6 pairs, seed 1); "
        "EM on first_name+surname, then dob"
    )
    return {**settings, **training}, text


def _febrl4_settings() -> tuple[dict[str, Any], str]:
    """After Splink's FEBRL4 linking example: names, dob, address parts, ssn."""
    import splink.comparison_library as cl
    from splink import block_on

    settings = {
        "link_type": "link_only",
        "blocking_rules_to_generate_predictions": [
            block_on("given_name", "surname"),
            block_on("surname", "date_of_birth"),
            block_on("given_name", "date_of_birth"),
            block_on("postcode", "date_of_birth"),
            block_on("soc_sec_id"),
        ],
        "comparisons": [
            cl.NameComparison("given_name").configure(term_frequency_adjustments=True),
            cl.NameComparison("surname").configure(term_frequency_adjustments=True),
            cl.DateOfBirthComparison(
                "date_of_birth", input_is_string=True, datetime_format="%Y%m%d"
            ),
            cl.DamerauLevenshteinAtThresholds("soc_sec_id", [2]),
            cl.ExactMatch("street_number"),
            cl.LevenshteinAtThresholds("postcode", 1),  # Australian: not UK format
            cl.LevenshteinAtThresholds("address_1", [2, 5]),
            cl.ExactMatch("suburb").configure(term_frequency_adjustments=True),
            cl.ExactMatch("state"),
        ],
    }
    training = {
        "prior_rules": [
            block_on("given_name", "surname", "date_of_birth"),
            block_on("soc_sec_id"),
        ],
        "prior_recall": 0.8,
        "em_rules": [block_on("given_name", "surname"), block_on("date_of_birth")],
    }
    text = (
        "blocking given_name+surname | surname+dob | given_name+dob | postcode+dob | "
        "soc_sec_id; comparisons NameComparison(given_name, surname; TF), "
        "DateOfBirthComparison(date_of_birth, %Y%m%d), DamerauLevenshtein(soc_sec_id, "
        "2), ExactMatch(street_number), Levenshtein(postcode, 1), "
        "Levenshtein(address_1, 2/5), ExactMatch(suburb; TF), ExactMatch(state); prior "
        "from given_name+surname+dob | soc_sec_id at recall 0.8; u by random sampling "
        "(1e6 pairs, seed 1); EM on given_name+surname, then dob"
    )
    return {**settings, **training}, text


def run_splink(task: Task, config: dict[str, Any]) -> tuple[set, float, int]:
    from splink import DuckDBAPI, Linker, SettingsCreator

    start = time.perf_counter()
    link = task.right is not None
    db_api = DuckDBAPI()

    def table(frame: pd.DataFrame) -> Any:
        records = frame.loc[:, task.columns].astype("string").reset_index(drop=True)
        records.insert(0, "unique_id", frame.index.astype(str))
        return db_api.register(records)

    tables = [table(task.left)] + ([table(task.right)] if link else [])
    settings = SettingsCreator(
        link_type=config["link_type"],
        unique_id_column_name="unique_id",
        blocking_rules_to_generate_predictions=config[
            "blocking_rules_to_generate_predictions"
        ],
        comparisons=config["comparisons"],
    )
    linker = Linker(tables if link else tables[0], settings, log_level=logging.WARNING)
    training = linker.training
    training.estimate_probability_two_random_records_match(
        config["prior_rules"], recall=config["prior_recall"]
    )
    training.estimate_u_using_random_sampling(max_pairs=1e6, seed=1)
    for rule in config["em_rules"]:
        training.estimate_parameters_using_expectation_maximisation(rule)
    predictions = linker.inference.predict(threshold_match_probability=THRESHOLD)
    found_frame = (
        predictions.as_duckdbpyrelation()
        .filter(f"match_probability >= {THRESHOLD}")
        .df()
    )
    seconds = time.perf_counter() - start
    if link:
        # Splink names the two tables by their order; keep left → right.
        first = found_frame["source_dataset_l"] == found_frame["source_dataset_l"].min()
        left = np.where(first, found_frame["unique_id_l"], found_frame["unique_id_r"])
        right = np.where(first, found_frame["unique_id_r"], found_frame["unique_id_l"])
    else:
        left, right = found_frame["unique_id_l"], found_frame["unique_id_r"]
    return _pair_set(left, right, link), seconds, len(found_frame)


def _as_str_truth(task: Task) -> set:
    truth = task.truth
    return _pair_set(
        truth["left"].astype(str), truth["right"].astype(str), task.right is not None
    )


def main() -> None:
    logging.getLogger("splink").setLevel(logging.ERROR)
    print(
        _common.report_header(
            "lsh_frame beside Splink 5", ["lsh-frame", "splink", "duckdb"]
        )
    )
    rows, notes = [], []
    for loader, make_settings in (
        (historical_50k, _historical_settings),
        (febrl4, _febrl4_settings),
    ):
        try:
            task = loader()
        except FileNotFoundError as error:
            print(f"{loader.__name__}: data missing ({error}); see the data README")
            continue
        truth = _as_str_truth(task)
        found, seconds, candidates = run_lsh_frame(task)
        found = {(str(a), str(b)) for a, b in found}
        if task.right is None:
            found = _pair_set([a for a, _ in found], [b for _, b in found], False)
        quality = _quality(found, truth)
        rows.append([task.name, "lsh_frame defaults", f"{candidates:,} candidates",
                     f"{quality['precision']:.4f}", f"{quality['recall']:.4f}",
                     f"{quality['f1']:.4f}", f"{seconds:.1f} s"])  # fmt: skip
        try:
            config, text = make_settings()
            found, seconds, predicted = run_splink(task, config)
        except ImportError:
            rows.append([task.name, "Splink 5", "not installed", "", "", "", ""])
            continue
        quality = _quality(found, truth)
        rows.append([task.name, "Splink 5", f"{predicted:,} pairs ≥ {THRESHOLD}",
                     f"{quality['precision']:.4f}", f"{quality['recall']:.4f}",
                     f"{quality['f1']:.4f}", f"{seconds:.1f} s"])  # fmt: skip
        notes.append(f"- {task.name}, Splink settings: {text}.")
    headers = ["data set", "method", "output", "precision", "recall", "F1", "time"]
    print(_common.markdown_table(headers, rows))
    print()
    print("\n".join(notes))


if __name__ == "__main__":
    main()
