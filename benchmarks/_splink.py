"""Splink 5 (DuckDB backend) as the reference pipeline of the end-to-end benchmark.

Not part of the package and not a test. :func:`run_splink` deduplicates a
``lsh_frame.datasets.make_customers`` frame the way Splink's own examples do
(see its "deduplicate 50k synthetic" demo): exact-match blocking rules on names,
date of birth, postcode, e-mail, phone and address; Splink's out-of-the-box
comparisons; an unsupervised model trained with a deterministic estimate of the
prior, random sampling for u and expectation maximisation for m; prediction and
connected-components clustering at match probability 0.5.

The blocking rules were checked with ``splink.blocking_analysis`` on 1M rows:
about 16M candidate pairs. ``block_on("postcode", "surname")`` alone would add
40M pairs there (postcodes are few, surnames Zipf-like) for 0.07% more blocking
recall, so it is narrowed by the first letter of the given name and paired with
``block_on("postcode", "date_of_birth")`` instead.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
import pandas as pd

#: Columns of ``make_customers`` that Splink sees (``entity_id`` is the truth).
INPUT_COLUMNS = (
    "given_name",
    "surname",
    "street_address",
    "city",
    "postcode",
    "phone",
    "date_of_birth",
    "email",
)
#: Pairs at or above this match probability are matches; clusters use it too.
THRESHOLD = 0.5
#: Recall guessed for the deterministic rules that estimate the prior.
DETERMINISTIC_RECALL = 0.7
#: Cap on the blocked pairs of one EM session (Splink samples records to meet it).
EM_MAX_PAIRS = 5e6

_NAME_CONCAT = "given_name_surname"


def _blocking_rules() -> dict[str, list[Any]]:
    """The prediction, prior and EM blocking rules (Splink ``block_on`` objects)."""
    from splink import block_on

    return {
        "predict": [
            block_on("given_name", "surname"),
            block_on("surname", "date_of_birth"),
            block_on("given_name", "date_of_birth"),
            block_on("postcode", "date_of_birth"),
            block_on("postcode", "surname", "substr(given_name, 1, 1)"),
            block_on("email"),
            block_on("phone"),
            block_on("street_address"),
        ],
        "prior": [
            block_on("given_name", "surname", "date_of_birth"),
            block_on("email", "date_of_birth"),
        ],
        "em": [
            block_on("given_name", "surname"),
            block_on("date_of_birth"),
        ],
    }


def _comparisons() -> list[Any]:
    """Splink's standard comparisons for the customer columns."""
    import splink.comparison_library as cl

    return [
        cl.ForenameSurnameComparison(
            "given_name", "surname", forename_surname_concat_col_name=_NAME_CONCAT
        ),
        cl.DateOfBirthComparison("date_of_birth", input_is_string=True),
        cl.LevenshteinAtThresholds("postcode", 1),
        cl.EmailComparison("email"),
        cl.LevenshteinAtThresholds("phone", [1, 2]),
        cl.LevenshteinAtThresholds("street_address", [1, 3]),
        cl.LevenshteinAtThresholds("city", 2).configure(
            term_frequency_adjustments=True
        ),
    ]


def _describe(rules: dict[str, list[Any]], comparisons: list[Any], **extra: Any) -> str:
    """One line per part of the configuration, for the benchmark's report."""

    def keys(rule: Any) -> str:
        sql = rule.get_blocking_rule("duckdb").blocking_rule_sql
        return "+".join(
            part.split("=")[0].strip().removeprefix("(").removeprefix("l.")
            .replace('"', "")
            for part in sql.split(" AND ")
        )

    def comparison(item: Any) -> str:
        created = item.get_comparison("duckdb")
        return f"{type(item).__name__}({created.output_column_name})"

    lines = [
        "Splink 5 / DuckDB, dedupe_only",
        "blocking: " + ", ".join(keys(rule) for rule in rules["predict"]),
        "comparisons: " + ", ".join(comparison(item) for item in comparisons),
        (
            "training: prior from "
            + " | ".join(keys(rule) for rule in rules["prior"])
            + f" (recall {DETERMINISTIC_RECALL}); u by random sampling "
            + f"(max_pairs={extra['max_pairs_u']:.0e}, seed={extra['seed']}); "
            + "EM on "
            + " | ".join(keys(rule) for rule in rules["em"])
            + f" (without TF, max_pairs={EM_MAX_PAIRS:.0e})"
        ),
        f"predict and cluster at match_probability >= {THRESHOLD}",
    ]
    return "\n".join(lines)


def run_splink(
    df: pd.DataFrame, *, seed: int = 1, max_pairs_u: float = 1e7
) -> dict[str, Any]:
    """Deduplicate ``df`` with Splink 5 on DuckDB and time each stage.

    Parameters
    ----------
    df : pandas.DataFrame
        A ``make_customers`` frame. Its index labels (unique integers) become
        Splink's ``unique_id``; only :data:`INPUT_COLUMNS` are given to Splink
        (never ``entity_id``).
    seed : int, default 1
        Seed of the random sampling that estimates the u probabilities.
    max_pairs_u : float, default 1e7
        Pairs sampled to estimate the u probabilities.

    Returns
    -------
    dict
        ``stages``: stage name -> wall seconds (``setup``, ``train_prior``,
        ``train_u``, ``train_em``, ``predict``, ``cluster``); ``pairs``: the
        predicted matches as int64 ``left`` < ``right`` row labels of ``df``;
        ``entity``: an int64 cluster id per row, indexed like ``df``;
        ``config``: a readable description of the configuration.
    """
    from splink import DuckDBAPI, Linker, SettingsCreator

    stages: dict[str, float] = {}
    start = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal start
        now = time.perf_counter()
        stages[stage] = now - start
        start = now

    rules = _blocking_rules()
    comparisons = _comparisons()
    records = df.loc[:, list(INPUT_COLUMNS)].reset_index(drop=True)
    records.insert(0, "unique_id", df.index.to_numpy(dtype=np.int64))
    # The full name, so that the exact-name level gets term-frequency adjustments.
    records[_NAME_CONCAT] = records["given_name"] + " " + records["surname"]
    db_api = DuckDBAPI()
    table = db_api.register(records)
    settings = SettingsCreator(
        link_type="dedupe_only",
        unique_id_column_name="unique_id",
        blocking_rules_to_generate_predictions=rules["predict"],
        comparisons=comparisons,
    )
    linker = Linker(table, settings, log_level=logging.WARNING)
    lap("setup")

    training = linker.training
    training.estimate_probability_two_random_records_match(
        rules["prior"], recall=DETERMINISTIC_RECALL
    )
    lap("train_prior")
    training.estimate_u_using_random_sampling(max_pairs=max_pairs_u, seed=seed)
    lap("train_u")
    for rule in rules["em"]:
        training.estimate_parameters_using_expectation_maximisation(
            rule, estimate_without_term_frequencies=True, max_pairs=EM_MAX_PAIRS
        )
    lap("train_em")

    predictions = linker.inference.predict(threshold_match_probability=THRESHOLD)
    scored = predictions.as_duckdbpyrelation().select(
        "unique_id_l, unique_id_r, match_probability"
    ).df()
    scored = scored[scored["match_probability"] >= THRESHOLD]
    left = scored["unique_id_l"].to_numpy(dtype=np.int64)
    right = scored["unique_id_r"].to_numpy(dtype=np.int64)
    pairs = (
        pd.DataFrame({"left": np.minimum(left, right), "right": np.maximum(left, right)})
        .drop_duplicates()
        .sort_values(["left", "right"], ignore_index=True)
    )
    lap("predict")

    clusters = linker.clustering.cluster_pairwise_predictions_at_threshold(
        predictions, threshold_match_probability=THRESHOLD
    )
    found = clusters.as_duckdbpyrelation().select("unique_id, cluster_id").df()
    codes = pd.factorize(found["cluster_id"])[0].astype(np.int64)
    entity = (
        pd.Series(codes, index=found["unique_id"].to_numpy(dtype=np.int64))
        .reindex(df.index)
        .rename("entity")
    )
    lap("cluster")

    config = _describe(rules, comparisons, seed=seed, max_pairs_u=max_pairs_u)
    return {"stages": stages, "pairs": pairs, "entity": entity, "config": config}
