import sys
from pathlib import Path

import numpy as np
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


def pytest_report_header(config):
    from lsh_frame._kernels import native

    kernels = native.kernels_in_use()
    return f"lsh_frame kernels: {kernels['kernels']} ({kernels['reason']})"


#: The fields the tests of swapped names and familiar forms score.
PEOPLE_FIELDS = ["given_name", "surname", "date_of_birth", "email"]


#: The fields of ``people_with_copies``.
COPIES_FIELDS = ["name", "town", "born"]


@pytest.fixture(scope="session")
def people_with_copies() -> pd.DataFrame:
    """People with three to six records each, each record a little off.

    Clusters of copies (``entity`` is the truth) whose pairs the match model
    misses now and then, for closing clusters (lsh_frame.decide.closing).
    """
    rng = np.random.default_rng(3)
    given = ["anna", "bert", "carla", "dmitri", "elif", "farid", "greta", "hugo"]
    family = ["kowalski", "nakamura", "okafor", "lindqvist", "moreau", "silva"]
    rows = []
    for person in range(60):
        name = f"{given[person % len(given)]} {family[person % len(family)]}"
        town = f"town{person}"
        born = f"19{50 + person % 40}-0{1 + person % 9}-1{person % 10}"
        for _ in range(int(rng.integers(3, 7))):
            spelt = list(name)
            at = int(rng.integers(0, len(spelt)))
            spelt[at] = "xyz"[int(rng.integers(0, 3))]
            rows.append(
                {
                    "name": "".join(spelt),
                    "town": town if rng.random() < 0.8 else None,
                    "born": born if rng.random() < 0.7 else None,
                    "entity": person,
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture(scope="session")
def people_1500() -> pd.DataFrame:
    """make_customers with swapped names and familiar forms of given names."""
    return lf.datasets.make_customers(1_500, seed=5)


@pytest.fixture(scope="session")
def people_1500_pairs(people_1500: pd.DataFrame) -> pd.DataFrame:
    """The ``pairs`` of ``people_1500`` on ``PEOPLE_FIELDS``, pair by pair.

    Defaults but ``transitive=False``: the tests of a reading (crossed names,
    familiar forms, the match cut) compare its decisions with those without
    it, and closing clusters would add matches of its own to both.
    """
    return lf.pairs(people_1500, PEOPLE_FIELDS, transitive=False)


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
    model = scored.attrs["lsh_frame"]["model"]
    got = lf.score(frame, part, fields, min_score=model)
    columns = [f"{label}_score" for label in fields]
    columns += ["score", *extra, "match_probability"]
    want = scored.loc[part.index]
    pd.testing.assert_frame_equal(got[columns], want[columns])
    # A pair that its cluster closed (lsh_frame.decide.closing) is a match of the
    # whole run only: a part of the pairs holds too little of its cluster.
    decided = want["match"] & (want["match_probability"] >= model["match_cut"])
    pd.testing.assert_series_equal(got["match"], decided.rename("match"))
    return got


def saved_model_again(
    frame: pd.DataFrame,
    scored: pd.DataFrame,
    fields: list,
    reading: str,
    columns: tuple,
) -> tuple[lf.decide.model.MatchModel, pd.DataFrame]:
    """The saved model of ``scored``, checked to keep ``reading`` through its JSON
    form and to give ``columns`` again as ``pairs(min_score=model)``."""
    learned = scored.attrs["lsh_frame"]["model"]
    model = lf.decide.model.MatchModel.from_dict(learned)
    again_model = lf.decide.model.MatchModel.from_dict(model.to_dict())
    assert getattr(again_model, reading) == getattr(model, reading)
    # The same decision: closing clusters as the run did, or not.
    rule = scored.attrs["lsh_frame"]["transitive"]["rule"]
    again = lf.pairs(frame, fields, min_score=learned, transitive=rule)
    for column in columns:
        pd.testing.assert_series_equal(again[column], scored[column])
    return model, again


def chained_people() -> tuple[pd.DataFrame, list[lf.Field]]:
    """Ten people of five records: key ``k1`` joins A-D, ``k2`` joins B-E.

    A and E share no key; too few pairs for a model, so a number decides.
    """
    rows = [
        {
            "k1": None if copy == "E" else f"x{person}",
            "k2": None if copy == "A" else f"y{person}",
            "name": f"person number {person} smith{copy.lower()}",
        }
        for person in range(10)
        for copy in "ABCDE"
    ]
    fields = [
        lf.Field("k1", blocking="exact", weight=0),
        lf.Field("k2", blocking="exact", weight=0),
        lf.Field("name", blocking=None),
    ]
    return pd.DataFrame(rows), fields


PRODUCT_BRANDS = ["epson", "sony", "canon", "hp", "lg", "bosch"]
PRODUCT_KINDS = [
    "replacement lamp for projector",
    "ink cartridge black",
    "wireless mouse",
    "hdmi cable 2m",
    "laptop battery pack",
]


def catalogues(size: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, set]:
    """Two product catalogues: each left product once on the right, which also
    lists look-alikes (the same product for another model: its code differs)."""
    rng = np.random.default_rng(seed)
    left, right, truth = [], [], set()
    for i in range(size):
        brand = PRODUCT_BRANDS[rng.integers(len(PRODUCT_BRANDS))]
        kind = PRODUCT_KINDS[rng.integers(len(PRODUCT_KINDS))]
        code = f"{brand[:2]}{rng.integers(100, 999)}{'abcdx'[rng.integers(5)]}"
        left.append(
            {"title": f"{brand} {kind} {code}", "price": str(rng.integers(5, 500))}
        )
        truth.add((f"L{i}", f"R{len(right)}"))
        right.append(
            {
                "title": f"{brand.upper()} {code.upper()} {kind}",
                "price": str(rng.integers(5, 500)),
            }
        )
        for extra in range(rng.integers(0, 3)):
            other = f"{code[:-1]}{'efghk'[extra]}"
            right.append(
                {
                    "title": f"{brand.upper()} {other.upper()} {kind}",
                    "price": str(rng.integers(5, 500)),
                }
            )
    left_frame = pd.DataFrame(left, index=[f"L{i}" for i in range(len(left))])
    right_frame = pd.DataFrame(right, index=[f"R{i}" for i in range(len(right))])
    return left_frame, right_frame, truth
