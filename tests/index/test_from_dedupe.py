"""An index on the table a user keeps: the output of dedupe or drop_duplicates."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import lsh_frame as lf
from lsh_frame.decide.model import MatchModel
from lsh_frame.index import index as index_module

COLUMNS = ["given_name", "surname", "date_of_birth", "postcode", "phone"]


@pytest.fixture(scope="module")
def week() -> tuple[pd.DataFrame, pd.DataFrame, pd.Series]:
    """Last week's records, next week's sign-ups, and the truth of both."""
    people = lf.datasets.make_customers(3_300, seed=11)
    truth = people["entity_id"]
    frame = people[COLUMNS]
    return frame.iloc[:3_000], frame.iloc[3_000:], truth


@pytest.fixture(scope="module")
def deduped(week) -> pd.DataFrame:
    last, _, _ = week
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return last.lsh.dedupe(COLUMNS)


def _joined_right(index: lf.Index, new: pd.DataFrame, truth: pd.Series) -> float:
    """Share of the sign-ups known last week whose match is their own person."""
    found = index.query(new, k=1)
    found = found[found["match"]]
    known = truth.loc[new.index].isin(truth.loc[index.labels])
    right = truth.loc[found["left"]].to_numpy() == truth.loc[found["right"]].to_numpy()
    return right.sum() / known.sum()


def test_from_dedupe_keeps_the_entities_and_the_model(week, deduped) -> None:
    _, new, truth = week
    index = lf.Index.from_dedupe(deduped)
    assert len(index) == len(deduped)
    assert index.entity_ids.equals(
        deduped["cluster_id"].astype(np.int64).rename(index.entity_ids.name)
    )
    assert index.model is not None
    assert index.model.prior == pytest.approx(
        MatchModel.from_dict(deduped.attrs["lsh_frame"]["model"]).prior
    )
    assert "cluster_id" not in index.records().columns
    assert _joined_right(index, new, truth) >= 0.95


def test_from_dedupe_of_drop_duplicates_holds_one_row_per_entity(week) -> None:
    last, new, truth = week
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept = last.lsh.drop_duplicates(COLUMNS)
    index = lf.Index.from_dedupe(kept)
    assert len(index) == index.entities == len(kept)
    assert _joined_right(index, new, truth) >= 0.95


def test_from_dedupe_needs_a_model_once_the_attrs_are_lost(deduped) -> None:
    read_back = deduped.copy()
    read_back.attrs = {}
    with pytest.raises(lf.ConfigError, match="model="):
        lf.Index.from_dedupe(read_back)
    model = deduped.attrs["lsh_frame"]["model"]
    index = lf.Index.from_dedupe(read_back, model=model)
    assert index.model is not None
    assert index.entities == deduped["cluster_id"].nunique()


def test_building_on_a_deduplicated_table_warns_with_what_to_do() -> None:
    # Issue 44: a table without duplicates teaches a weak model or none.
    # Index.build crashed where none was learned; it builds, and says what
    # to index instead.
    last = lf.datasets.make_customers(3_000, seed=11).drop(columns="entity_id")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept = last.lsh.drop_duplicates()
    kept = kept.copy()
    kept.attrs = {}  # as read back from a file
    with pytest.warns(UserWarning, match="from_dedupe"):
        index = kept.lsh.index()
    assert len(index) == len(kept)
    assert index.entities > 0.99 * len(kept)  # identical copies aside, none merged


def test_no_model_learned_matches_identical_records_and_says_so() -> None:
    # The dedupe rejected its model (the provisional matches were relatives):
    # no model and no cut. Queries then match what the dedupe matched.
    info = {"model": None, "min_score": None, "entities": 8_000}
    with pytest.warns(UserWarning, match="agree on every field.*from_dedupe"):
        decision = index_module._learned_decision(info, 8_000, "Index.build")
    assert decision == 1.0
    info = {"model": None, "min_score": 0.7, "entities": 10}
    assert index_module._learned_decision(info, 12, "Index.build") == 0.7
