"""Splink 5 (DuckDB backend) as the reference pipeline of the end-to-end benchmark.

Not part of the package and not a test. :func:`run_splink` deduplicates a
``lsh_frame.datasets.make_customers`` frame the way Splink's own examples do
(see its "deduplicate 50k synthetic" demo): exact-match blocking rules on names,
date of birth, postcode, e-mail, phone and address; Splink's standard
comparisons; an unsupervised model trained with a deterministic estimate of the
prior, random sampling for u and expectation maximisation (EM) for m; prediction
and connected-components clustering at match probability 0.5.

Choices made against Splink's first suggestions, and why:

- Blocking was checked with ``splink.blocking_analysis`` on 1M rows: 19.4M
  candidate pairs, 99.87% of the true pairs among them. ``block_on("postcode",
  "surname")`` alone would add 40M pairs there (postcodes are few, surnames
  Zipf-like) for 0.07% more recall, so it is narrowed by the given name's
  initial, next to ``block_on("postcode", "date_of_birth")``.
- E-mail is compared exactly, not by ``EmailComparison``: addresses are made
  from names, so different people of the same name often have e-mails within a
  few edits (john.smith@ and johnsmith@), whose u, from random pairs, is tiny.
  Fuzzy e-mail levels (Jaro-Winkler or Levenshtein) both misled EM in the
  ``given_name + surname`` block (it drifted to m of an exact date of birth of
  0.1-0.3) and, at 1M rows, made 80k false matches of namesakes.
- City is not compared: it is implied by the postcode, and Fellegi-Sunter would
  count the same evidence twice (households already share street, postcode,
  phone and often e-mail, the main source of false matches on this data).
- Names are two ``NameComparison`` (as in Splink's tutorial) rather than one
  ``ForenameSurnameComparison`` (as in its 50k demo): equal quality at 100k.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
import pandas as pd

from lsh_frame.datasets.customers import TEXT_COLUMNS

#: Columns of ``make_customers`` that Splink sees (``entity_id`` is the truth).
INPUT_COLUMNS = TEXT_COLUMNS
#: Blocking rules of ``predict``: pairs equal on all columns of any one rule.
PREDICT_BLOCKING = (
    ("given_name", "surname"),
    ("surname", "date_of_birth"),
    ("given_name", "date_of_birth"),
    ("postcode", "date_of_birth"),
    ("postcode", "surname", "substr(given_name, 1, 1)"),
    ("email",),
    ("phone",),
    ("street_address",),
)
#: Deterministic rules that estimate the prior (probability two records match).
PRIOR_RULES = (("given_name", "surname", "date_of_birth"), ("email", "date_of_birth"))
#: Recall guessed for :data:`PRIOR_RULES`.
PRIOR_RECALL = 0.7
#: One EM session per rule; between them every comparison gets m estimates.
EM_RULES = (("given_name", "surname"), ("date_of_birth",))
#: Cap on the blocked pairs of one EM session (Splink samples records to meet it).
EM_MAX_PAIRS = 5e6
#: Pairs at or above this match probability are matches; clusters use it too.
THRESHOLD = 0.5


def _comparisons() -> list[tuple[str, Any]]:
    """Splink's standard comparisons, each with a short description."""
    import splink.comparison_library as cl

    return [
        ("NameComparison(given_name)", cl.NameComparison("given_name")),
        ("NameComparison(surname)", cl.NameComparison("surname")),
        (
            "DateOfBirthComparison(date_of_birth)",
            cl.DateOfBirthComparison("date_of_birth", input_is_string=True),
        ),
        ("Levenshtein(postcode, 1)", cl.LevenshteinAtThresholds("postcode", 1)),
        ("ExactMatch(email)", cl.ExactMatch("email")),
        ("Levenshtein(phone, 1/2)", cl.LevenshteinAtThresholds("phone", [1, 2])),
        (
            "Levenshtein(street_address, 1/3)",
            cl.LevenshteinAtThresholds("street_address", [1, 3]),
        ),
    ]


def _rules(rules: tuple[tuple[str, ...], ...]) -> str:
    """Blocking rules as text: ``a+b | c``."""
    return " | ".join("+".join(columns) for columns in rules)


def describe(*, seed: int = 1, max_pairs_u: float = 1e7) -> str:
    """Describe the configuration of :func:`run_splink` for a report."""
    comparisons = ", ".join(text for text, _ in _comparisons())
    return "\n".join(
        [
            f"Splink 5 on DuckDB, dedupe_only; blocking: {_rules(PREDICT_BLOCKING)}",
            f"comparisons (name exact levels with TF): {comparisons}",
            f"prior: {_rules(PRIOR_RULES)} at recall {PRIOR_RECALL}; "
            f"u: random sampling, max_pairs={max_pairs_u:.0e}, seed={seed}; "
            f"m: EM on {_rules(EM_RULES)} (without TF, max_pairs={EM_MAX_PAIRS:.0e})",
            f"predict and cluster at match_probability >= {THRESHOLD}",
        ]
    )


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
    from splink import DuckDBAPI, Linker, SettingsCreator, block_on

    stages: dict[str, float] = {}
    start = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal start
        now = time.perf_counter()
        stages[stage] = now - start
        start = now

    records = df.loc[:, list(INPUT_COLUMNS)].reset_index(drop=True)
    records.insert(0, "unique_id", df.index.to_numpy(dtype=np.int64))
    db_api = DuckDBAPI()
    table = db_api.register(records)
    settings = SettingsCreator(
        link_type="dedupe_only",
        unique_id_column_name="unique_id",
        blocking_rules_to_generate_predictions=[
            block_on(*columns) for columns in PREDICT_BLOCKING
        ],
        comparisons=[comparison for _, comparison in _comparisons()],
    )
    linker = Linker(table, settings, log_level=logging.WARNING)
    lap("setup")

    training = linker.training
    training.estimate_probability_two_random_records_match(
        [block_on(*columns) for columns in PRIOR_RULES], recall=PRIOR_RECALL
    )
    lap("train_prior")
    training.estimate_u_using_random_sampling(max_pairs=max_pairs_u, seed=seed)
    lap("train_u")
    for columns in EM_RULES:
        training.estimate_parameters_using_expectation_maximisation(
            block_on(*columns),
            estimate_without_term_frequencies=True,
            max_pairs=EM_MAX_PAIRS,
        )
    lap("train_em")

    predictions = linker.inference.predict(threshold_match_probability=THRESHOLD)
    pairs = (
        predictions.as_duckdbpyrelation()
        .filter(f"match_probability >= {THRESHOLD}")
        .select(
            'least(unique_id_l, unique_id_r) AS "left", '
            'greatest(unique_id_l, unique_id_r) AS "right"'
        )
        .distinct()
        .order('"left", "right"')
        .df()
        .astype(np.int64)
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
        .astype(np.int64)
        .rename("entity")
    )
    lap("cluster")

    config = describe(seed=seed, max_pairs_u=max_pairs_u)
    return {"stages": stages, "pairs": pairs, "entity": entity, "config": config}
