import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, settings

import lsh_frame as lf

sys.path.insert(0, str(Path(__file__).parent))

settings.register_profile(
    "default",
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("ci", max_examples=60, deadline=None)
settings.load_profile("default")


#: The fields the tests of swapped names and familiar forms score.
PEOPLE_FIELDS = ["given_name", "surname", "date_of_birth", "email"]


@pytest.fixture(scope="session")
def people_1500() -> pd.DataFrame:
    """make_customers with swapped names and familiar forms of given names."""
    return lf.datasets.make_customers(1_500, seed=5)


@pytest.fixture(scope="session")
def people_1500_pairs(people_1500: pd.DataFrame) -> pd.DataFrame:
    """The default ``pairs`` of ``people_1500`` on ``PEOPLE_FIELDS``."""
    return lf.pairs(people_1500, PEOPLE_FIELDS)


def learned_part(model: dict) -> dict:
    """A saved model without its match cut (and the F1 that set it).

    The cut is read from the probabilities of the decision, which readings of
    the pairs (crossed, shifted, familiar forms) change; the rest is what the
    model learned.
    """
    kept = {name: value for name, value in model.items() if name != "match_cut"}
    kept["fit"] = {
        name: value for name, value in model["fit"].items() if name != "expected_f1"
    }
    return kept


def dask_pairs_as_pandas(frame: pd.DataFrame, fields: list) -> pd.DataFrame:
    """``pairs`` on four Dask partitions of ``frame``, checked equal to pandas'.

    Returns pandas' pairs (attrs included) for the caller's own checks.
    """
    dask = pytest.importorskip("dask")
    import dask.dataframe as dd

    import lsh_frame.dask  # noqa: F401  (registers ddf.lsh)

    with dask.config.set(scheduler="synchronous"):
        ddf = dd.from_pandas(frame, npartitions=4, sort=False)
        got = ddf.lsh.pairs(fields).compute()
        want = lf.pairs(ddf.compute(), fields)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got.attrs == want.attrs
    return want


def part_scores_as_all(
    frame: pd.DataFrame,
    scored: pd.DataFrame,
    part: pd.DataFrame,
    fields: list,
    extra: tuple = (),
) -> pd.DataFrame:
    """Score ``part`` of ``scored`` with its own model, checked equal to its rows.

    Compares each field's score, ``score``, the ``extra`` columns, the match
    probability and the match; returns the part's scores.
    """
    got = lf.score(frame, part, fields, min_score=scored.attrs["lsh_frame"]["model"])
    columns = [f"{label}_score" for label in fields]
    columns += ["score", *extra, "match_probability", "match"]
    pd.testing.assert_frame_equal(got[columns], scored.loc[part.index, columns])
    return got


def saved_model_again(
    frame: pd.DataFrame,
    scored: pd.DataFrame,
    fields: list,
    reading: str,
    columns: tuple,
) -> tuple[lf.compare.MatchModel, pd.DataFrame]:
    """The saved model of ``scored``, checked to keep ``reading`` through its JSON
    form and to give ``columns`` again as ``pairs(min_score=model)``."""
    learned = scored.attrs["lsh_frame"]["model"]
    model = lf.compare.MatchModel.from_dict(learned)
    again_model = lf.compare.MatchModel.from_dict(model.to_dict())
    assert getattr(again_model, reading) == getattr(model, reading)
    again = lf.pairs(frame, fields, min_score=learned)
    for column in columns:
        pd.testing.assert_series_equal(again[column], scored[column])
    return model, again
