"""The answers file: what it holds, that every write is whole, how it is read back."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import lsh_frame as lf
from lsh_frame.review import answers as answers_file
from lsh_frame.review.answers import (
    read_answers,
    remove_stale_copies,
    write_answers,
)


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame({"name": list("abcdef")}, index=[10, 11, 12, 13, 14, 15])


def _labels(left, right, match) -> pd.DataFrame:
    return pd.DataFrame(
        {"left": left, "right": right, "match": pd.array(match, dtype="boolean")}
    )


def test_the_file_is_left_right_match_with_true_false_or_empty(tmp_path, frame):
    path = tmp_path / "labels.csv"
    write_answers(path, _labels([10, 12, 13], [11, 14, 15], [True, False, None]))
    assert path.read_text(encoding="utf-8") == (
        "left,right,match\n10,11,true\n12,14,false\n13,15,\n"
    )


def test_pandas_reads_the_file_as_a_labels_frame_the_jobs_take(tmp_path):
    people = lf.datasets.make_customers(300, seed=3)
    fields = ["given_name", "surname", "date_of_birth", "city"]
    scored = lf.pairs(people, fields)
    asked = lf.uncertain_pairs(scored, n=3)
    path = tmp_path / "labels.csv"
    write_answers(path, _labels(asked["left"], asked["right"], [True, False, None]))
    labels = pd.read_csv(path)
    taught = lf.pairs(people, fields, labels=labels)
    assert taught.attrs["lsh_frame"]["labels"]["given"] == 3
    assert taught.attrs["lsh_frame"]["labels"]["unsure"] == 1


def test_reading_back_gives_the_tables_labels_and_dtypes(tmp_path, frame):
    path = tmp_path / "labels.csv"
    written = _labels([10, 12, 13], [11, 14, 15], [True, False, None])
    write_answers(path, written)
    read = read_answers(path, frame)
    pd.testing.assert_frame_equal(read, written)


def test_text_labels_keep_their_zeros(tmp_path):
    frame = pd.DataFrame({"name": ["a", "b", "c"]}, index=["0800", "800", "x,y"])
    path = tmp_path / "labels.csv"
    written = _labels(["0800", "800"], ["x,y", "0800"], [True, None])
    write_answers(path, written)
    pd.testing.assert_frame_equal(read_answers(path, frame), written)


def test_a_link_reads_right_labels_in_the_other_table(tmp_path, frame):
    other = pd.DataFrame({"name": ["p", "q"]}, index=["r1", "r2"])
    path = tmp_path / "labels.csv"
    write_answers(path, _labels([10, 11], ["r2", "r1"], [True, False]))
    read = read_answers(path, frame, other)
    assert read["left"].tolist() == [10, 11]
    assert read["right"].tolist() == ["r2", "r1"]


def test_no_file_is_no_answer_and_an_empty_file_none_either(tmp_path, frame):
    assert read_answers(tmp_path / "new.csv", frame) is None
    empty = tmp_path / "empty.csv"
    empty.touch()
    assert len(read_answers(empty, frame)) == 0
    header = tmp_path / "header.csv"
    header.write_text("left,right,match\n")
    assert len(read_answers(header, frame)) == 0


@pytest.mark.parametrize(
    ("text", "error", "words"),
    [
        ("a,b\n1,2\n", lf.ColumnError, "exactly the columns left, right, match"),
        (
            "left,right,match,score\n10,11,true,0.5\n",
            lf.ColumnError,
            "has the columns left, right, match, score",
        ),
        ("left,right,match\n10,99,true\n", lf.ConfigError, "not in the table"),
        ("left,right,match\n10,11,maybe\n", lf.ConfigError, "'maybe'"),
        ("left,right,match\n10,,true\n", lf.ConfigError, "row 2"),
        (
            'left,right,match\n"10,11,true\n',
            lf.ConfigError,
            "cannot be read as CSV",
        ),
    ],
)
def test_a_file_that_is_not_an_answers_file_is_refused_by_name(
    tmp_path, frame, text, error, words
):
    path = tmp_path / "labels.csv"
    path.write_text(text)
    with pytest.raises(error, match="The answers file") as raised:
        read_answers(path, frame)
    assert words in str(raised.value)
    assert str(path) in str(raised.value)


def test_a_folder_is_no_answers_file(tmp_path, frame):
    with pytest.raises(lf.ConfigError, match="is a folder"):
        read_answers(tmp_path, frame)


def test_a_failed_write_leaves_the_old_file_whole_and_no_copy(
    tmp_path, frame, monkeypatch
):
    path = tmp_path / "labels.csv"
    write_answers(path, _labels([10], [11], [True]))
    before = path.read_bytes()

    def fail(source, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(answers_file.os, "replace", fail)
    with pytest.raises(OSError, match="No space"):
        write_answers(path, _labels([10, 12], [11, 13], [True, False]))
    assert path.read_bytes() == before
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["labels.csv"]


def test_each_write_is_flushed_before_its_rename(tmp_path, frame, monkeypatch):
    # The order of the steps is what makes a kill harmless: the new copy is on
    # disk before it takes the name, and the folder's entry after.
    steps: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(
        answers_file.os,
        "replace",
        lambda source, target: (steps.append("rename"), real_replace(source, target)),
    )
    import lsh_frame.index.files as files

    monkeypatch.setattr(
        files.os,
        "fsync",
        lambda descriptor: (steps.append("fsync"), real_fsync(descriptor)),
    )
    write_answers(tmp_path / "labels.csv", _labels([10], [11], [False]))
    assert steps == ["fsync", "rename", "fsync"]


def test_copies_a_killed_writer_left_are_removed(tmp_path):
    path = tmp_path / "labels.csv"
    stale = tmp_path / ".labels.csv.1-0badf00d.tmp"
    mine = tmp_path / f".labels.csv.{os.getpid()}-0badf00d.tmp"
    other = tmp_path / ".other.csv.1-0badf00d.tmp"
    for entry in (stale, mine, other):
        entry.write_text("left,right")
    assert remove_stale_copies(path) == 1
    assert not stale.exists()
    assert mine.exists() and other.exists()


def test_answers_text_round_trips_nullable_and_plain_answers():
    plain = pd.DataFrame({"left": [1, 2], "right": [3, 4], "match": ["y", 0]})
    text = answers_file.answers_text(plain)
    assert text.splitlines()[1:] == ["1,3,true", "2,4,false"]
    column = answers_file.answer_column(np.array([np.nan, 1.0]))
    assert column.isna().tolist() == [True, False]


def test_the_path_may_be_text_or_a_path(tmp_path, frame):
    write_answers(str(tmp_path / "labels.csv"), _labels([10], [11], [True]))
    assert Path(tmp_path / "labels.csv").exists()


def test_a_link_names_the_other_table_for_an_unknown_right_record(tmp_path, frame):
    other = pd.DataFrame({"name": ["p"]}, index=["r1"])
    path = tmp_path / "labels.csv"
    path.write_text("left,right,match\n10,r9,true\n")
    with pytest.raises(lf.ConfigError, match=r"not in the other table \(for example"):
        read_answers(path, frame, other)


def test_ids_read_back_as_numbers_are_explained(tmp_path):
    # Text ids such as "0800" or "7" read by pd.read_csv come back as numbers:
    # the error says the labels are there as text, and how to read them.
    frame = pd.DataFrame(
        {"name": ["Ann", "Anne", "Bob"]}, index=pd.Index(["7", "0800", "9"])
    )
    path = tmp_path / "labels.csv"
    write_answers(
        path,
        pd.DataFrame(
            {"left": ["7"], "right": ["9"], "match": pd.array([True], "boolean")}
        ),
    )
    as_numbers = pd.read_csv(path)
    with pytest.raises(lf.ColumnError, match="They are there as text") as error:
        lf.score(frame, as_numbers[["left", "right"]], ["name"], labels=as_numbers)
    assert "dtype={'left': str, 'right': str}" in str(error.value)
    strangers = as_numbers.assign(left=[5])
    with pytest.raises(lf.ColumnError, match="for example") as error:
        lf.score(frame, as_numbers[["left", "right"]], ["name"], labels=strangers)
    assert "as text" not in str(error.value)
