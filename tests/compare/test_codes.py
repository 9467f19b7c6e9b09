"""Identifier codes: read across a record's text fields, compared as identities."""

import numpy as np
import pandas as pd
import pytest

import lsh_frame as lf
from lsh_frame.block.fields import Field
from lsh_frame.compare.codes import (
    CONFLICT,
    SHARED_COMMON,
    SHARED_FEW,
    SHARED_RARE,
    CodeEvidence,
    CodeFrequencies,
    RecordCodes,
    code_scores,
    reads_codes,
)


def codes_of(*values: str) -> RecordCodes:
    return RecordCodes.of_table(pd.DataFrame({"t": list(values)}), [Field("t")], "t")


def test_codes_are_tokens_with_digits_and_letters_or_four_digits():
    found = codes_of(
        "Panasonic KX-TG6645B DECT 6.0 phone",  # kxtg6645b; 6.0 is too short
        "Iomega eGo 500GB drive 34945",  # 500gb, 34945
        "printed on page 12 of 80",  # too short
        "no code here",
        "ab1 ab1 ab1",  # each code once per record
    )
    sizes = np.diff(found.offsets).tolist()
    assert sizes == [1, 2, 0, 0, 1]


def test_scores_read_rare_few_common_and_conflicting_codes():
    left = codes_of("lamp elplp12", "lamp elplp12", "phone kxtg66", "cable", "x 500gb")
    right = codes_of(
        "ELPLP12 lamp", "ELPLP13 lamp", "KX-TG66 phone", "hdmi ab12", "500GB y"
    )
    many = codes_of(*["drive 500gb"] * 20)
    frequencies = CodeFrequencies.of([left, right, many])
    scores = code_scores(left, right, frequencies, np.arange(5), np.arange(5))
    # elplp12 is held by three records here (two left, one right): "few".
    assert scores[0] == SHARED_FEW
    assert scores[1] == CONFLICT
    assert scores[2] == SHARED_RARE
    assert np.isnan(scores[3])  # the left record has no code
    assert scores[4] == SHARED_COMMON


def test_frequencies_of_parts_add_up_to_the_whole():
    values = [f"item {code}" for code in ["ab12", "cd34", "ab12", "ef56", "ab12"]]
    whole = CodeFrequencies.of([codes_of(*values)])
    parts = CodeFrequencies.merge(
        [
            CodeFrequencies.of([codes_of(*values[:2])]),
            CodeFrequencies.of([codes_of(*values[2:])]),
        ]
    )
    np.testing.assert_array_equal(whole.codes, parts.codes)
    np.testing.assert_array_equal(whole.counts, parts.counts)
    table = pd.DataFrame({"t": values * 3})
    one = CodeEvidence.of_table(table, [Field("t")], "t")
    split = CodeEvidence.merge(
        [
            CodeEvidence.of_table(table.iloc[:4], [Field("t")], "t"),
            CodeEvidence.of_table(table.iloc[4:], [Field("t")], "t"),
        ]
    )
    assert (one.words, one.present, one.numbered, one.records) == (
        split.words,
        split.present,
        split.numbered,
        split.records,
    )


@pytest.mark.parametrize(
    ("titles", "reads"),
    [
        # Long text, most records with a model number: on.
        (["epson replacement lamp elplp12 for projector"] * 10, True),
        # Long text without model numbers (citations of years and pages): off.
        (["a study of learning in networks pages 123-145"] * 10, False),
        # Model numbers in short values (names, codes alone): off.
        (["kx12"] * 10, False),
    ],
)
def test_the_tables_turn_the_codes_on(titles, reads):
    table = pd.DataFrame({"title": titles})
    assert reads_codes([CodeEvidence.of_table(table, [Field("title")], "t")]) is reads


def test_a_link_of_product_titles_reads_codes_and_a_table_of_people_does_not():
    products = pd.DataFrame(
        {
            "title": [
                f"acme replacement lamp model ac{100 + i}x for projector"
                for i in range(200)
            ]
        }
    )
    scored = products.lsh.link(products.copy(), ["title"])
    model = scored.attrs["lsh_frame"]["model"]
    assert model["codes"] == "codes" and "codes_score" in scored.columns
    people = lf.datasets.make_customers(2_000, seed=3).drop(columns="entity_id")
    plain = people.lsh.pairs(["given_name", "surname", "date_of_birth"])
    assert "codes_score" not in plain.columns
    assert (plain.attrs["lsh_frame"]["model"] or {}).get("codes") is None


def test_a_field_named_codes_keeps_its_name():
    products = pd.DataFrame(
        {
            "title": [
                f"acme replacement lamp model ac{100 + i}x for projector"
                for i in range(200)
            ],
            "codes": [f"ref {i}" for i in range(200)],
        }
    )
    scored = products.lsh.link(products.copy(), ["title", "codes"])
    model = scored.attrs["lsh_frame"]["model"]
    assert model["codes"] == "codes_2"
    assert {"codes_score", "codes_2_score"} <= set(scored.columns)
