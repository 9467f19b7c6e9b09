"""The review page's data and file, without a browser (see test_review_browser)."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pandas as pd
import pytest

import lsh_frame as lf
from lsh_frame.review.page import render
from lsh_frame.review.payload import build_payload

FIELDS = ["given_name", "surname", "date_of_birth", "city"]


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    return lf.datasets.make_customers(600, seed=5)


@pytest.fixture(scope="module")
def payload(scored: pd.DataFrame, people: pd.DataFrame) -> dict:
    return build_payload(scored, people)


def _data_of(page: str) -> dict:
    found = re.search(
        r'<script type="application/json" id="lsh-data">(.*?)</script>', page, re.S
    )
    assert found is not None
    return json.loads(found.group(1))


def test_the_waterfall_is_explains_reading(scored, people, payload):
    model = payload["model"]
    # One pair of every set of keys that found pairs (weak keys alone among them),
    # and a few matches.
    kinds = scored.reset_index(drop=True).groupby("found_by", observed=True).head(1)
    rows = [*np.flatnonzero(scored["match"].to_numpy())[:3].tolist(), *kinds.index]
    assert len(set(model["starts"])) > 1  # a prior for pairs a weak key alone found
    for row in rows:
        explained = lf.explain(people, scored.iloc[row], FIELDS)
        bits = model["starts"][model["start"][row]]
        assert bits == pytest.approx(np.log2(explained.prior / (1 - explained.prior)))
        shown = [entry["field"] for entry in model["fields"]]
        assert shown == [item.field for item in explained.fields]
        for entry, item in zip(model["fields"], explained.fields, strict=True):
            level, weight = entry["readings"][entry["code"][row]]
            assert weight == pytest.approx(item.model_weight, abs=1e-4)
            assert entry["levels"][level] == item.level
            bits += weight
            running = 1 / (1 + 2.0**-bits)
            assert running == pytest.approx(item.running_probability, abs=1e-4)


def test_entities_are_the_clusters_of_the_matches(scored, people, payload):
    table = payload["tables"][0]
    entity = pd.Series(payload["entities"], index=table["labels"])
    clusters = lf.cluster(people, scored).loc[entity.index]
    # The same partition of the records, whatever the numbering.
    assert entity.groupby(clusters.to_numpy()).nunique().eq(1).all()
    assert clusters.groupby(entity.to_numpy()).nunique().eq(1).all()


def test_only_the_records_of_the_pairs_travel(scored, payload, people):
    table = payload["tables"][0]
    named = set(scored["left"]) | set(scored["right"])
    assert set(table["labels"]) == named
    left = [table["labels"][code] for code in np.cumsum(payload["pairs"]["left"])]
    assert left == scored["left"].tolist()
    first = table["labels"].index(int(scored["right"].iloc[0]))
    assert (
        table["columns"]["surname"][first]
        == people.loc[scored["right"].iloc[0], "surname"]
    )


def test_the_page_holds_everything_and_no_value_closes_its_script(tmp_path):
    frame = pd.DataFrame({"name": ["</script><b>x", "</script><b>y", "zz"]})
    scored = pd.DataFrame(
        {
            "left": [0, 0],
            "right": [1, 2],
            "name_score": [0.9, np.nan],
            "score": [0.9, 0.1],
            "match": [True, False],
        }
    )
    title = "__DATA__ & <__SCRIPT__>"
    page = lf.review(scored, frame, path=tmp_path / "page.html", title=title)
    page = page.read_text("utf-8")
    assert "<title>__DATA__ &amp; &lt;__SCRIPT__&gt;</title>" in page
    assert page.count("</script>") == 2  # the data's and the code's
    assert "http://" not in page and "https://" not in page
    data = _data_of(page)
    assert data["tables"][0]["columns"]["name"][0] == "</script><b>x"
    assert data["pairs"]["fields"]["name"] == [900, -1]
    assert [item.name for item in tmp_path.iterdir()] == ["page.html"]


def test_a_link_sends_both_tables(tmp_path):
    left = pd.DataFrame({"name": ["ann lee", "bo chan"]}, index=["a1", "a2"])
    right = pd.DataFrame({"full_name": ["anne lee", "bob chan"]}, index=["b1", "b2"])
    scored = lf.pairs(
        left, ["name"], other=right, right_on=["full_name"], min_score=0.5
    )
    data = build_payload(scored, left, right, right_on=["full_name"])
    assert data["link"] is True
    assert data["tables"][1]["labels"] == ["b1", "b2"]
    assert data["tables"][1]["columns"]["name"] == ["anne lee", "bob chan"]
    assert data["entities"] == [0, 1, 0, 1]


def test_a_model_given_reads_pairs_that_lost_their_attrs(scored, people, payload):
    bare = pd.DataFrame(scored)
    bare.attrs = {}
    model = scored.attrs["lsh_frame"]["model"]
    data = build_payload(bare, people, model=model)
    assert data["model"]["fields"][0] == payload["model"]["fields"][0]
    assert build_payload(bare, people)["model"] is None


def test_bad_input_is_refused(scored, people, tmp_path):
    with pytest.raises(lf.ColumnError, match="not in the frame"):
        build_payload(scored, people.iloc[:10])
    with pytest.raises(lf.ColumnError, match="'score'"):
        build_payload(scored.drop(columns="score"), people)
    with pytest.raises(lf.ConfigTypeError, match="'path'"):
        lf.review(scored, people, path=3)


def test_a_failed_write_leaves_the_earlier_page(scored, people, tmp_path, monkeypatch):
    target = tmp_path / "review.html"
    target.write_text("earlier", encoding="utf-8")

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="disk full"):
        lf.review(scored, people, path=target)
    assert target.read_text(encoding="utf-8") == "earlier"
    assert [item.name for item in tmp_path.iterdir()] == ["review.html"]


def test_render_is_deterministic(payload):
    assert render(payload) == render(payload)


def test_special_readings_name_their_pairs(scored, payload):
    listed = sorted(tuple(item["pairs"]) for item in payload["readings"])
    flagged = sorted(
        tuple(np.flatnonzero(scored[column].to_numpy()).tolist())
        for column in ("given_name_nickname", "given_name_initial")
    )
    assert all(flagged) and listed == flagged
    texts = " ".join(item["text"] for item in payload["readings"])
    assert "familiar forms" in texts and "an initial" in texts


def test_answers_given_before_start_the_page(scored, people):
    shown = scored.iloc[[3, 5]]
    unshown = [i for i in people.index if i not in set(scored["left"])][:2]
    labels = pd.DataFrame(
        {
            # A dedupe's pair in either order; one answer unsure.
            "left": [shown["right"].iloc[0], shown["left"].iloc[1], unshown[0]],
            "right": [shown["left"].iloc[0], shown["right"].iloc[1], unshown[1]],
            "match": [True, None, False],
        }
    )
    answers = build_payload(scored, people, labels=labels)["answers"]
    assert answers["pairs"] == [3, 5]
    assert answers["match"] == [1, None]
    assert answers["others"] == {
        "left": [unshown[0]],
        "right": [unshown[1]],
        "match": [0],
    }
    assert build_payload(scored, people)["answers"] is None
    with pytest.raises(lf.ColumnError, match="'match'"):
        build_payload(scored, people, labels=labels[["left", "right"]])
