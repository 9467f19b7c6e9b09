"""``lsh-frame label`` with answers piped in, and its one-line errors."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import lsh_frame as lf
from lsh_frame import cli

COLUMNS = "given_name,surname,date_of_birth,city"


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    return lf.datasets.make_customers(300, seed=3)


@pytest.fixture
def people_csv(tmp_path: Path, people: pd.DataFrame) -> Path:
    path = tmp_path / "people.csv"
    people.to_csv(path)  # record_id first, as a column
    return path


def _label(people_csv: Path, *options: str) -> list[str]:
    labels = str(people_csv.parent / "labels.csv")
    return ["label", str(people_csv), "--on", COLUMNS, "-o", labels, *options]


def _type(monkeypatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))


def test_piped_answers_are_read_echoed_and_written(people_csv, monkeypatch, capsys):
    _type(monkeypatch, "y\nn\nu\n")  # then the end of input: quit
    assert cli.main(_label(people_csv, "--index-col", "record_id")) == 0
    out, err = capsys.readouterr()
    labels = pd.read_csv(people_csv.parent / "labels.csv")
    assert labels.columns.tolist() == ["left", "right", "match"]
    assert labels["match"].tolist()[:2] == [True, False]
    assert labels["match"].isna().tolist() == [False, False, True]
    shown = re.findall(r"left (\d+)\s+right (\d+)", out)
    assert [tuple(map(int, pair)) for pair in shown[:3]] == list(
        zip(labels["left"], labels["right"], strict=True)
    )
    # the replies piped in are echoed after their prompt
    assert "[q]uit: y\n" in out and "[q]uit: n\n" in out
    assert out.count("expected precision") == 3
    assert "\x1b[" not in out  # no colour off a terminal
    assert "300 records → 1,852 candidate pairs" in err
    assert "3 answers in" in err and "0 answers read" in err


def test_a_second_run_continues_from_the_file(people_csv, monkeypatch, capsys):
    _type(monkeypatch, "y\nn\n")
    assert cli.main(_label(people_csv, "--index-col", "record_id", "-q")) == 0
    first = pd.read_csv(people_csv.parent / "labels.csv")
    capsys.readouterr()
    _type(monkeypatch, "y\nq\n")
    assert cli.main(_label(people_csv, "--index-col", "record_id")) == 0
    out, err = capsys.readouterr()
    second = pd.read_csv(people_csv.parent / "labels.csv")
    pd.testing.assert_frame_equal(second.iloc[:2], first)
    assert len(second) == 3
    assert "2 answers read" in err
    assert out.count("Pair 3:") == 1 and "Pair 1:" not in out


def test_questions_stops_after_that_many(people_csv, monkeypatch, capsys):
    _type(monkeypatch, "n\n" * 5)
    assert cli.main(_label(people_csv, "-n", "2", "--batch", "2", "-q")) == 0
    assert len(pd.read_csv(people_csv.parent / "labels.csv")) == 2
    out = capsys.readouterr().out
    assert out.count("expected precision") == 1  # one refit, after the batch


def test_a_link_labels_pairs_of_the_two_tables(people, tmp_path, monkeypatch, capsys):
    left, right = tmp_path / "left.csv", tmp_path / "right.csv"
    people.iloc[::2].to_csv(left)
    people.iloc[1::2].rename(columns={"surname": "family_name"}).to_csv(right)
    _type(monkeypatch, "y\nn\n")
    argv = [
        "label", str(left), "--other", str(right), "--on", COLUMNS,
        "--right-on", "given_name,family_name,date_of_birth,city",
        "--index-col", "record_id", "-o", str(tmp_path / "labels.csv"),
        "--show", "email",
    ]  # fmt: skip
    assert cli.main(argv) == 0
    labels = pd.read_csv(tmp_path / "labels.csv")
    assert labels["left"].isin(people.index[::2]).all()
    assert labels["right"].isin(people.index[1::2]).all()
    out = capsys.readouterr().out
    assert "email" in out


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--on", "given_name,surnme"], "Column 'surnme' is not in the frame"),
        (["--input", "nope.csv"], "cannot read input"),
        (["-o", "labels.parquet"], "must be a .csv file"),
        (["-o", "missing/labels.csv"], "does not exist"),
        (["--input", "-"], "the tables must be files"),
        (["--right-on", "a"], "give --other"),
        (["--bad-labels"], "exactly the columns left, right, match"),
        (["--foreign-labels"], "not in the table"),
        (["--same-file"], "is the input"),
        (["--show", "emial"], "Column 'emial'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    people_csv, monkeypatch, capsys, options, message
):
    labels = people_csv.parent / "labels.csv"
    source = str(people_csv)
    extra: list[str] = []
    on = COLUMNS
    output = str(labels)
    if options[0] == "--on":
        on = options[1]
    elif options[0] == "--input":
        source = options[1]
    elif options[0] == "-o":
        output = str(people_csv.parent / options[1])
    elif options[0] == "--bad-labels":
        labels.write_text("pair,answer\n1,y\n")
    elif options[0] == "--foreign-labels":
        labels.write_text("left,right,match\nx17,x18,true\n")
    elif options[0] == "--same-file":
        output = source = str(people_csv.with_suffix(".csv"))
    else:
        extra = options
    _type(monkeypatch, "")
    argv = ["label", source, "--on", on, "-o", output, *extra]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("lsh-frame label: error: ")
    assert message in err
    assert "\n" not in err
    if options[0] == "--bad-labels":
        assert labels.read_text() == "pair,answer\n1,y\n"  # left as it was


def test_python_dash_m_runs_label(people_csv):
    result = subprocess.run(
        [sys.executable, "-m", "lsh_frame", *_label(people_csv, "-q")],
        input="n\nq\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert len(pd.read_csv(people_csv.parent / "labels.csv")) == 1


def _pairs_output(argv: list[str], path: Path) -> pd.DataFrame:
    assert cli.main(argv) == 0
    return pd.read_csv(path)


def test_dedupe_decides_answered_pairs_by_their_answers(people_csv, capsys):
    # The answers contradict the decision without them: each pair flips.
    folder = people_csv.parent
    base = ["dedupe", str(people_csv), "--on", COLUMNS, "--index-col", "record_id",
            "-o", str(folder / "out.csv"),
            "--pairs-output", str(folder / "p.csv")]  # fmt: skip
    before = _pairs_output(base, folder / "p.csv")
    matched = before[before["match"]].iloc[0]
    unmatched = before[~before["match"]].iloc[0]
    labels = folder / "answers.csv"
    labels.write_text(
        "left,right,match\n"
        f"{matched['left']},{matched['right']},false\n"
        f"{unmatched['left']},{unmatched['right']},true\n"
    )
    after = _pairs_output([*base, "--labels", str(labels)], folder / "p.csv")
    decided = after.set_index(["left", "right"])["match"]
    assert not decided[(matched["left"], matched["right"])]
    assert decided[(unmatched["left"], unmatched["right"])]
    entities = pd.read_csv(folder / "out.csv", index_col="record_id")["cluster_id"]
    assert entities[unmatched["left"]] == entities[unmatched["right"]]


def test_a_merge_joins_the_pair_answered_yes(people, tmp_path, capsys):
    left, right = tmp_path / "left.csv", tmp_path / "right.csv"
    people.iloc[::2].to_csv(left)
    people.iloc[1::2].to_csv(right)
    common = [str(left), str(right), "--on", COLUMNS, "--index-col", "record_id"]
    pairs = _pairs_output(
        ["link", *common, "--pairs", "-o", str(tmp_path / "p.csv")],
        tmp_path / "p.csv",
    )
    unmatched = pairs[~pairs["match"]].iloc[0]
    labels = tmp_path / "answers.csv"
    labels.write_text(f"left,right,match\n{unmatched['left']},{unmatched['right']},1\n")
    merged = tmp_path / "merged.csv"
    argv = ["link", *common, "-o", str(merged), "--labels", str(labels)]
    assert cli.main(argv) == 0
    joined = pd.read_csv(merged)
    assert {"record_id_x", "record_id_y"} <= set(joined.columns)
    rows = joined[joined["record_id_x"] == unmatched["left"]]
    assert unmatched["right"] in rows["record_id_y"].tolist()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--labels", "absent.csv"], "there is no such file"),
        (["--labels", "answers.csv", "--method", "simhash"], "--labels does not apply"),
    ],
)
def test_labels_of_the_jobs_refuse_what_they_cannot_use(
    people_csv, capsys, extra, message
):
    (people_csv.parent / "answers.csv").write_text("left,right,match\n")
    extra = [str(people_csv.parent / name) if name.endswith(".csv") else name
             for name in extra]  # fmt: skip
    argv = ["dedupe", str(people_csv), "--on", COLUMNS, "-o", "-", *extra]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
