"""The df.lsh accessor: column handling and delegation."""

import pandas as pd
import pytest

import lsh_frame as lf


@pytest.fixture
def frame():
    return pd.DataFrame(
        {
            "name": ["ann lee", "anne lee", None],
            "address": ["1 high st", "1 high street", "x"],
            "age": [30, 31, 40],
        },
        index=pd.Index([10, 20, 30], name="id"),
    )


def test_accessor_is_registered(frame):
    assert isinstance(frame.lsh, lf.accessor.LshAccessor)


def test_missing_column_suggests_the_closest(frame):
    with pytest.raises(
        lf.ColumnError,
        match=(
            r"Column 'adress' is not in the frame\. Did you mean 'address'\? "
            r"Columns: name, address, age\."
        ),
    ) as info:
        frame.lsh.minhash("adress")
    assert isinstance(info.value, KeyError)
    with pytest.raises(KeyError, match=r"'zzz' is not in the frame\. Columns"):
        frame.lsh.shingles("zzz")


def test_several_columns_give_a_frame(frame):
    result = frame.lsh.minhash(["name", "address"], num_perm=16)
    assert list(result.columns) == ["name__minhash", "address__minhash"]
    assert result.index.equals(frame.index)
    pd.testing.assert_series_equal(
        result["address__minhash"], frame.lsh.minhash("address", num_perm=16)
    )


def test_column_list_errors(frame):
    with pytest.raises(lf.ConfigError, match="at least one column"):
        frame.lsh.minhash([])
    with pytest.raises(lf.ConfigError, match="more than once"):
        frame.lsh.minhash(["name", "name"])
    tagged = frame.assign(tags=[["a"], ["b"], None])
    with pytest.raises(lf.ColumnTypeError, match=r"'tags'.*object.*list"):
        tagged.lsh.minhash("tags")


def test_typed_column_is_signed_as_its_text(frame):
    as_text = frame.assign(age=frame["age"].astype(str))
    pd.testing.assert_series_equal(
        frame.lsh.minhash("age", num_perm=16), as_text.lsh.minhash("age", num_perm=16)
    )


def test_duplicate_column_labels_are_ambiguous():
    frame = pd.DataFrame([["a", "b"]], columns=["x", "x"])
    with pytest.raises(lf.ColumnError, match="more than once in the frame"):
        frame.lsh.minhash("x")


def test_non_string_labels_work():
    frame = pd.DataFrame({0: ["ann", "bob"], 1: ["x", "y"]})
    assert frame.lsh.minhash(0).name == "0__minhash"


def test_empty_frame():
    frame = pd.DataFrame({"name": pd.Series([], dtype="str")})
    assert len(frame.lsh.minhash("name")) == 0
