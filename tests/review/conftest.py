"""Records and their scored pairs, shared by the review page's and the loop's tests.

A test module that wants other records defines its own ``people``; ``scored``
then pairs those.
"""

from __future__ import annotations

import pandas as pd
import pytest

import lsh_frame as lf

FIELDS = ["given_name", "surname", "date_of_birth", "city"]


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    return lf.datasets.make_customers(300, seed=3)


@pytest.fixture(scope="module")
def scored(people: pd.DataFrame) -> pd.DataFrame:
    return lf.pairs(people, FIELDS)
