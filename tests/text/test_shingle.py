"""Normalisation, text dtypes, and the shingles() output contract."""

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
import reference
from hypothesis import given
from hypothesis import strategies as st

import lsh_frame as lf
from lsh_frame.config import ShingleConfig
from lsh_frame.text import shingle


def normalized(values, **options):
    return lf.normalize(
        pa.array(values, pa.large_string()), ShingleConfig(**options)
    ).to_pylist()


@pytest.mark.parametrize(
    ("options", "value", "expected"),
    [
        ({}, "  John   SMITH ", "john smith"),
        ({}, "ﬁne ①", "fine 1"),  # NFKC folds ligatures and circled digits
        ({}, "Straße", "straße"),  # lower-casing, not case folding
        ({"lowercase": False}, "John", "John"),
        (
            {"strip_accents": True},
            "José Müller-Lüdenscheidt",
            "jose muller-ludenscheidt",
        ),
        ({"strip_punctuation": True}, "O'Brien, J. (Jr.) & co", "obrien j jr co"),
        ({"collapse_whitespace": False}, " a\t b ", " a\t b "),
        ({"unicode_form": None}, "ﬁ", "ﬁ"),
        ({}, "\u3000東京\u00a0タワー ", "東京 タワー"),
    ],
)
def test_normalize_options(options, value, expected):
    assert normalized([value], **options) == [expected]


@given(
    st.lists(
        st.one_of(st.none(), st.text(alphabet="aB \t\n\x0b\x1c.", max_size=12)),
        max_size=8,
    )
)
def test_ascii_whitespace_is_collapsed_like_split(strings):
    """ASCII text skips the regular expression when nothing needs collapsing."""
    expected = [None if s is None else " ".join(s.lower().split()) for s in strings]
    assert normalized(strings) == expected
    sliced = pa.array(["x", *strings], pa.large_string()).slice(1)
    assert lf.normalize(sliced, ShingleConfig()).to_pylist() == expected


def test_normalize_keeps_nulls():
    assert normalized([None, "A"]) == [None, "a"]


@given(st.lists(st.text(max_size=20), max_size=10))
def test_code_point_collapse_agrees_with_normalize(strings):
    """tokenize() collapses whitespace in numpy; normalize() with pyarrow."""
    config = ShingleConfig(kind="char", k=1)
    expected = normalized(strings)
    tokens = shingle.tokenize(pa.array(strings, pa.large_string()), config)
    got = [
        sorted(tokens.hashes[tokens.offsets[i] : tokens.offsets[i + 1]].tolist())
        for i in range(len(strings))
    ]
    assert got == [sorted(reference.char_shingles(s, 1)) for s in expected]


@given(
    st.lists(st.one_of(st.none(), st.text(max_size=25)), max_size=10), st.integers(1, 4)
)
def test_shingles_are_sorted_distinct_reference_sets(strings, k):
    series = pd.Series(strings, dtype=object)
    result = lf.shingles(
        series, k=k, lowercase=False, unicode_form=None, collapse_whitespace=False
    )
    for value, got in zip(strings, result.tolist(), strict=True):
        if value is None:
            assert got is None or got is pd.NA
        else:
            # Digit-only text is read without its leading zeros, as a number.
            zeros = re.fullmatch(r"0+([0-9]+)", value)
            read = zeros.group(1) if zeros else value
            assert list(got) == sorted(set(reference.char_shingles(read, k)))


def test_shingles_output_contract():
    frame = pd.DataFrame({"name": ["anna smith", "ab", "", None]}, index=[5, 3, 9, 1])
    result = frame.lsh.shingles("name")
    assert result.dtype == pd.ArrowDtype(pa.large_list(pa.uint64()))
    assert result.index.equals(frame.index)
    assert result.name == "name__shingles"
    assert result.list.len().tolist()[:3] == [8, 0, 0]  # "ab" is shorter than k=3
    assert result.isna().tolist() == [False, False, False, True]


def test_word_and_stopword_shingles():
    frame = pd.DataFrame({"text": ["the cat sat on the mat", "A  cat"]})
    words = frame.lsh.shingles("text", kind="word")
    assert words.list.len().tolist() == [5, 2]  # "the" twice counts once
    bigrams = frame.lsh.shingles("text", kind="word", k=2)
    assert bigrams.list.len().tolist() == [5, 1]
    # Stop word followed by the next two words: "the cat sat", "on the mat",
    # "the mat" is too short; "a cat" needs three words.
    stop = frame.lsh.shingles("text", kind="stopword")
    assert stop.list.len().tolist() == [2, 0]
    custom = frame.lsh.shingles("text", kind="stopword", k=1, stopwords=("CAT",))
    assert custom.list.len().tolist() == [1, 1]  # stop words are normalised too


@pytest.mark.parametrize(
    "values",
    [
        pd.Series([["a"], ["b"]], name="tags"),
        pd.Series([{"a": 1}, None], name="attributes"),
        pd.Series(["a", ["b"]], dtype=object, name="mixed"),
        pd.Series([b"ab", b"cd"], dtype=object, name="raw"),
        pd.Series([1 + 2j, 3j], name="complex"),
    ],
)
def test_values_without_text_raise_with_the_fix(values):
    with pytest.raises(lf.ColumnTypeError, match=r"astype\('str'\)") as info:
        lf.shingles(values)
    assert repr(values.name) in str(info.value)
    assert str(values.dtype) in str(info.value)
    assert isinstance(info.value, TypeError)


@pytest.mark.parametrize(
    "values",
    [
        pd.Series(["Ann", None], dtype=object),
        pd.Series(["Ann", None], dtype="string"),
        pd.Series(["Ann", None], dtype=pd.ArrowDtype(pa.string())),
        pd.Series(pd.Categorical(["Ann", None, "Ann"])),
        pd.Series([None, None], dtype=object),
        pd.Series([], dtype=object),
    ],
)
def test_text_dtypes_are_accepted(values):
    result = lf.shingles(values)
    assert len(result) == len(values)
    assert result.isna().tolist() == values.isna().tolist()


def test_shingle_config_rejects_bad_values():
    with pytest.raises(
        lf.ConfigError,
        match=r"'k' parameter of ShingleConfig must be in \[1, 1000\]. Got 0",
    ):
        ShingleConfig(k=0)
    with pytest.raises(lf.ConfigError, match=r"'kind'.*'char', 'word', 'stopword'"):
        ShingleConfig(kind="chars")
    with pytest.raises(lf.ConfigTypeError, match="'stopwords'"):
        ShingleConfig(stopwords="the")
    with pytest.raises(lf.ConfigTypeError, match="'lowercase'"):
        ShingleConfig(lowercase="yes")
    with pytest.raises(lf.ConfigError, match="'unicode_form'"):
        ShingleConfig(unicode_form="NFX")


def test_input_is_not_mutated():
    frame = pd.DataFrame({"name": [" Ann ", None, "BOB"]})
    before = frame.copy()
    frame.lsh.shingles("name")
    frame.lsh.minhash("name")
    pd.testing.assert_frame_equal(frame, before)
    assert np.array_equal(frame.columns, before.columns)


SURROGATE = b"caf\xe9".decode("utf-8", "surrogateescape")


@pytest.mark.parametrize(
    "values",
    [
        ["ann", SURROGATE, "bob", SURROGATE],  # all text
        ["ann", SURROGATE, 12, None],  # text mixed with numbers
    ],
)
@pytest.mark.parametrize(
    "call",
    [
        lambda f: f.lsh.shingles("name"),
        lambda f: f.lsh.candidates(["name"]),
        lambda f: lf.text.shingle.text_array(f["name"], owner="shingles"),
    ],
)
def test_surrogate_escaped_text_names_the_column_and_row(values, call):
    index = pd.Index([10, 20, 30, 40])
    frame = pd.DataFrame({"name": pd.Series(values, index=index, dtype=object)})
    with pytest.raises(
        lf.ColumnTypeError,
        match=(
            r"Column 'name'.*not valid Unicode.*row label 20.*"
            r"\.str\.encode\('utf-8', 'surrogateescape'\)\.str\.decode\('latin-1'\)"
        ),
    ):
        call(frame)


def test_surrogate_escaped_categories_name_the_row():
    categories = pd.Index(["ann", "bob", SURROGATE], dtype=object)
    names = pd.Categorical.from_codes([1, 0, 2], categories=categories)
    frame = pd.DataFrame({"name": names}, index=["a", "b", "c"])
    assert frame["name"].notna().all()
    with pytest.raises(lf.ColumnTypeError, match=r"row label 'c'"):
        frame.lsh.shingles("name")


@pytest.mark.parametrize(
    ("unicode", "ascii"),
    [
        (shingle.PUNCTUATION_CHARACTER, shingle.ASCII_PUNCTUATION_CHARACTER),
        (shingle.NOT_ALPHANUMERIC, shingle.ASCII_NOT_ALPHANUMERIC),
    ],
)
def test_ascii_character_classes_match_the_unicode_ones(unicode, ascii):
    """The cheap ASCII classes used on ASCII text say the same of every character."""
    characters = pa.array([chr(code) for code in range(128)], pa.large_string())
    assert (
        pc.match_substring_regex(characters, unicode).to_pylist()
        == pc.match_substring_regex(characters, ascii).to_pylist()
    )
    assert shingle.character_class(characters, unicode, ascii) == ascii
    accented = pa.array(["é"], pa.large_string())
    assert shingle.character_class(accented, unicode, ascii) == unicode


def test_column_texts_convert_each_column_once_and_only_for_their_frame(monkeypatch):
    frame = pd.DataFrame({"name": ["ann", None], "year": [1999.0, 2.5]})
    converted = []
    text_array = shingle.text_array

    def counting(values, *, owner):
        converted.append(values.name)
        return text_array(values, owner=owner)

    monkeypatch.setattr(shingle, "text_array", counting)
    texts = shingle.ColumnTexts(frame, owner="test")
    first = shingle.column_text(frame, "year", owner="test", texts=texts)
    assert first.to_pylist() == ["1999", "2.5"]
    assert shingle.column_text(frame, "year", owner="test", texts=texts) is first
    assert converted == ["year"]
    # Texts of another frame (a copy, a slice) are not taken for this one.
    other = frame.iloc[:1]
    assert shingle.column_text(
        other, "year", owner="test", texts=texts
    ).to_pylist() == ["1999"]
    assert converted == ["year", "year"]
