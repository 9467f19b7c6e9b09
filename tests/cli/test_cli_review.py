"""``lsh-frame review``: the review page of pairs saved by dedupe and link."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import lsh_frame as lf
from lsh_frame import cli

COLUMNS = ["given_name", "surname", "date_of_birth", "postcode"]


@pytest.fixture(scope="module")
def customers() -> pd.DataFrame:
    return lf.datasets.make_customers(500, seed=8)


def _data(page: Path) -> dict:
    found = re.search(
        r'id="lsh-data">(.*?)</script>', page.read_text(encoding="utf-8"), re.S
    )
    assert found is not None
    return json.loads(found.group(1))


@pytest.mark.parametrize("index_col", [None, "record_id"])
def test_review_of_saved_dedupe_pairs(customers, tmp_path, capsys, index_col):
    table = tmp_path / "customers.csv"
    customers.to_csv(table, index=index_col is not None)
    pairs, model, page = (
        tmp_path / "pairs.csv",
        tmp_path / "model.json",
        tmp_path / "review.html",
    )
    ids = [] if index_col is None else ["--index-col", index_col]
    argv = [
        "dedupe",
        str(table),
        "--on",
        ",".join(COLUMNS),
        "-o",
        str(tmp_path / "out.csv"),
        "--pairs-output",
        str(pairs),
        "--save-model",
        str(model),
        "--digits",
        "all",
        *ids,
    ]  # fmt: skip
    assert cli.main(argv) == 0
    argv = [
        "review",
        str(pairs),
        str(table),
        "--model",
        str(model),
        "-o",
        str(page),
        *ids,
    ]  # fmt: skip
    assert cli.main(argv) == 0
    assert "open it in a browser" in capsys.readouterr().err
    data = _data(page)
    saved_pairs = pd.read_csv(pairs, dtype=str)
    answers = tmp_path / "answers.csv"
    answers.write_text(
        f"left,right,match\n{saved_pairs['left'][1]},{saved_pairs['right'][1]},False\n",
        encoding="utf-8",
    )
    again = tmp_path / "again.html"
    argv = ["review", str(pairs), str(table), "--labels", str(answers),
            "-o", str(again), *ids]  # fmt: skip
    assert cli.main(argv) == 0
    assert _data(again)["answers"]["pairs"] == [1]
    assert _data(again)["answers"]["match"] == [0]
    saved = pd.read_csv(pairs)
    assert len(data["pairs"]["score"]) == len(saved)
    assert data["pairs"]["match"] == saved["match"].astype(int).tolist()
    assert [field["field"] for field in data["model"]["fields"]] == COLUMNS
    labels = data["tables"][0]["labels"]
    left = np.cumsum(data["pairs"]["left"])
    assert [str(labels[at]) for at in left] == saved["left"].astype(str).tolist()


def test_review_of_saved_link_pairs(tmp_path):
    left = pd.DataFrame({"id": ["a1", "a2"], "name": ["ann lee", "bo chan"]})
    right = pd.DataFrame({"key": ["b1", "b2"], "full": ["anne lee", "bob chan"]})
    left_path, right_path = tmp_path / "left.csv", tmp_path / "right.csv"
    left.to_csv(left_path, index=False)
    right.to_csv(right_path, index=False)
    pairs, page = tmp_path / "pairs.csv", tmp_path / "review.html"
    argv = [
        "link",
        str(left_path),
        str(right_path),
        "--on",
        "name",
        "--right-on",
        "full",
        "--index-col",
        "id",
        "--right-index-col",
        "key",
        "--pairs",
        "--min-score",
        "0.5",
        "-o",
        str(pairs),
        "-q",
    ]  # fmt: skip
    assert cli.main(argv) == 0
    argv = [
        "review",
        str(pairs),
        str(left_path),
        str(right_path),
        "--index-col",
        "id",
        "--right-index-col",
        "key",
        "--right-on",
        "full",
        "-o",
        str(page),
        "-q",
    ]  # fmt: skip
    assert cli.main(argv) == 0
    data = _data(page)
    assert data["link"] is True
    assert data["tables"][1]["columns"]["name"] == ["anne lee", "bob chan"]


def test_review_refuses_pairs_of_other_records(customers, tmp_path, capsys):
    table = tmp_path / "customers.csv"
    customers.to_csv(table, index=False)
    pairs = tmp_path / "pairs.csv"
    pd.DataFrame(
        {"left": [0], "right": [9999], "score": [0.5], "match": [False]}
    ).to_csv(pairs, index=False)
    code = cli.main(["review", str(pairs), str(table), "-o", str(tmp_path / "r.html")])
    assert code == 2
    assert "not in the frame" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize(
    ("output", "message"),
    [("missing/review.html", "does not exist"), ("review.csv", "give -o a .html")],
)
def test_review_refuses_an_output_it_cannot_write(tmp_path, capsys, output, message):
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("left,right,score\n", encoding="utf-8")
    code = cli.main(["review", str(pairs), str(pairs), "-o", str(tmp_path / output)])
    assert code == 2
    assert message in capsys.readouterr().err
