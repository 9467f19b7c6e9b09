"""compare="tfidf": TF-IDF weighted word cosine; "auto" chooses it for long text."""

from __future__ import annotations

import json
import math
import unicodedata
from collections import Counter
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lsh_frame as lf
from lsh_frame._kernels import tfidf as kernel
from lsh_frame.compare import tfidf
from lsh_frame.decide.model import MatchModel
from lsh_frame.text.shingle import PUNCTUATION_CHARACTER, codepoints

# ----------------------------------------------------------------------------
# A plain-Python reference of the documented definition


def reference_tokens(value: Any) -> Counter[str]:
    """Token counts of one value: word parts (½ when split) and split words joined."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Counter()
    text = " ".join(unicodedata.normalize("NFKC", value).lower().split())
    counts: Counter[str] = Counter()
    for word in text.split():
        spaced = "".join(
            " " if unicodedata.category(char)[0] in "PS" else char for char in word
        )
        parts = spaced.split()
        for part in parts:
            counts[part] += 0.5 if len(parts) > 1 else 1.0
        if len(parts) > 1:
            counts["".join(parts)] += 1.0
    return counts


def reference_scores(
    tables: list[list[Any]], pairs: list[tuple[Any, Any]]
) -> list[float]:
    """Cosine of (log2(1 + tf) * log((N + 1) / df)) vectors, df over every record."""
    documents = [reference_tokens(value) for table in tables for value in table]
    holders = Counter(token for tokens in documents for token in tokens)
    records = sum(1 for tokens in documents if tokens)

    def vector(value: Any) -> dict[str, float]:
        return {
            token: math.log2(1 + count) * math.log((records + 1) / holders[token])
            for token, count in reference_tokens(value).items()
        }

    scores = []
    for left, right in pairs:
        first, second = vector(left), vector(right)
        if not first or not second:
            scores.append(math.nan)
            continue
        dot = sum(weight * second.get(token, 0.0) for token, weight in first.items())
        norms = math.sqrt(sum(w * w for w in first.values())) * math.sqrt(
            sum(w * w for w in second.values())
        )
        scores.append(min(dot / norms, 1.0))
    return scores


# ----------------------------------------------------------------------------
# Product titles: brand and kind words are common, model codes rare


BRANDS = ["Sony", "Samsung", "LG", "Panasonic", "Philips", "Canon", "Toshiba"]
KINDS = [
    "LCD HDTV",
    "Digital Camera",
    "Blu-ray Disc Player",
    "Home Theater System",
    "DVD Recorder",
    "Wireless Router",
]
EXTRAS = ["Black", "Silver", "40''", "1080p", "HDMI", "16GB", "WiFi", "Remote"]


def products(size: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two tables of product titles; row i of each is the same product."""
    rng = np.random.default_rng(seed)
    left, right = [], []
    for _ in range(size):
        brand = BRANDS[rng.integers(len(BRANDS))]
        kind = KINDS[rng.integers(len(KINDS))]
        letters = "".join(rng.choice(list("ABCDKLMPSX"), 3))
        digits = f"{rng.integers(10, 99)}{rng.choice(list('ABV'))}"
        code = f"{letters}{digits}{rng.integers(100, 9999)}"
        extras = list(rng.choice(EXTRAS, 3, replace=False))
        left.append(f"{brand} {kind} {code} {' '.join(extras)}")
        split_code = f"{code[:3]}-{code[3:]}" if rng.random() < 0.5 else code.lower()
        words = [brand.upper(), *kind.split()[::-1], split_code, *extras[:2]]
        right.append(" ".join(words))
    return (
        pd.DataFrame({"title": left}, index=pd.RangeIndex(size).map(lambda i: f"a{i}")),
        pd.DataFrame(
            {"title": right}, index=pd.RangeIndex(size).map(lambda i: f"b{i}")
        ),
    )


def tfidf_scores(frame: pd.DataFrame, pairs: pd.DataFrame, **options: Any) -> Any:
    scored = lf.score(
        frame, pairs, [lf.Field("title", compare="tfidf")], min_score=0.5, **options
    )
    return scored["title_score"].to_numpy(dtype=float)


# ----------------------------------------------------------------------------
# The comparison against the reference

TEXT = st.text(alphabet="ab cdé-./'K1 2", max_size=14) | st.none()


@given(values=st.lists(TEXT, min_size=2, max_size=12), data=st.data())
def test_dedupe_scores_equal_the_reference(values: list[Any], data: Any) -> None:
    frame = pd.DataFrame({"title": values})
    count = len(values)
    lefts = data.draw(st.lists(st.integers(0, count - 1), min_size=1, max_size=20))
    rights = data.draw(
        st.lists(st.integers(0, count - 1), min_size=len(lefts), max_size=len(lefts))
    )
    pairs = pd.DataFrame({"left": lefts, "right": rights})
    want = reference_scores(
        [values], [(values[a], values[b]) for a, b in zip(lefts, rights, strict=True)]
    )
    got = tfidf_scores(frame, pairs)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, equal_nan=True)
    finite = got[~np.isnan(got)]
    assert ((finite >= 0) & (finite <= 1)).all()


@given(
    left=st.lists(TEXT, min_size=1, max_size=8),
    right=st.lists(TEXT, min_size=1, max_size=8),
)
def test_link_scores_equal_the_reference_with_both_tables_counted(
    left: list[Any], right: list[Any]
) -> None:
    pairs = pd.DataFrame(
        [(a, b) for a in range(len(left)) for b in range(len(right))],
        columns=["left", "right"],
    )
    scored = lf.score(
        pd.DataFrame({"title": left}),
        pairs,
        [lf.Field("title", compare="tfidf")],
        other=pd.DataFrame({"title": right}),
        min_score=0.5,
    )
    want = reference_scores(
        [left, right], [(left[a], right[b]) for a, b in pairs.itertuples(index=False)]
    )
    np.testing.assert_allclose(
        scored["title_score"], want, rtol=1e-9, atol=1e-12, equal_nan=True
    )


def test_rare_words_weigh_most_and_codes_meet_with_or_without_hyphens() -> None:
    frame = pd.DataFrame(
        {
            "title": [
                "Sony BRAVIA 40'' LCD HDTV KDL40V4100",
                "Sony Bravia KDL-40V4100 40 LCD TV",
                "Sony Bravia KDL-46V5100 46 LCD TV",
                *["Sony LCD TV"] * 20,
            ]
        }
    )
    pairs = pd.DataFrame({"left": [0, 1], "right": [1, 2]})
    same_model, other_model = tfidf_scores(frame, pairs)
    assert same_model > 0.6 > other_model
    # token_sort_ratio sees the two as nearly alike.
    fuzzy = lf.score(
        frame, pairs, [lf.Field("title", compare="token_sort_ratio")], min_score=0.5
    )["title_score"]
    assert fuzzy.iloc[1] > 0.8
    # Only the code is shared: it meets through the joined word.
    codes = pd.DataFrame({"title": ["kdl-40v4100", "KDL40V4100", "kdl 40v4100"]})
    joined, parts = tfidf_scores(codes, pd.DataFrame({"left": [0, 0], "right": [1, 2]}))
    assert joined > 0.5 and parts > 0.5
    assert tfidf_scores(codes, pd.DataFrame({"left": [1], "right": [2]}))[0] == 0.0


def test_missing_blank_and_tokenless_values_give_nan() -> None:
    frame = pd.DataFrame(
        {"title": ["sony tv", "Sony  TV", None, "   ", "--", "--", "sony"]}
    )
    pairs = pd.DataFrame(
        {"left": [0, 0, 0, 0, 2, 4, 0], "right": [1, 2, 3, 4, 3, 5, 6]}
    )
    got = tfidf_scores(frame, pairs)
    assert got[0] == 1.0  # values that normalise alike
    assert np.isnan(got[1:6]).all()  # missing, blank, punctuation only (even equal)
    assert 0 < got[6] < 1


def test_frequencies_come_from_every_record_not_from_the_pairs() -> None:
    left, _ = products(60, seed=2)
    frame = pd.concat([left, left.set_axis([f"c{i}" for i in range(60)])])
    everything = pd.DataFrame({"left": np.arange(60), "right": np.arange(60, 120)})
    everything = everything.assign(
        left=frame.index[everything["left"]], right=frame.index[everything["right"]]
    )
    everything.loc[::2, "right"] = frame.index[(np.arange(0, 60, 2) + 61) % 120]
    full = tfidf_scores(frame, everything)
    # A few pairs alone (scoring reads only their rows) and any part of them
    # score exactly as among all of them.
    for part in (everything.iloc[:3], everything.iloc[10:40:7], everything.iloc[::-1]):
        np.testing.assert_array_equal(
            tfidf_scores(frame, part), full[everything.index.get_indexer(part.index)]
        )
    values = frame["title"].tolist()
    position = {label: at for at, label in enumerate(frame.index)}
    want = reference_scores(
        [values],
        [
            (values[position[a]], values[position[b]])
            for a, b in everything[["left", "right"]].itertuples(index=False)
        ],
    )
    np.testing.assert_allclose(full, want, rtol=1e-9)


def test_chunks_do_not_change_the_scores(monkeypatch: pytest.MonkeyPatch) -> None:
    left, right = products(80, seed=4)
    pairs = pd.DataFrame(
        {"left": np.repeat(left.index, 3), "right": np.tile(right.index[:3], 80)}
    )
    fields = [lf.Field("title", compare="tfidf")]
    whole = lf.score(left, pairs, fields, other=right, min_score=0.5)
    monkeypatch.setattr(kernel, "_CHUNK_TOKENS", 17)
    chunked = lf.score(left, pairs, fields, other=right, min_score=0.5)
    assert whole["title_score"].between(0.01, 0.99).any()
    pd.testing.assert_frame_equal(chunked, whole, check_exact=True)


# ----------------------------------------------------------------------------
# "auto"


def auto_comparison(values: list[Any]) -> str:
    frame = pd.DataFrame({"text": values})
    scored = lf.score(
        frame, pd.DataFrame({"left": [0], "right": [1]}), "text", min_score=0.5
    )
    return str(scored.attrs["lsh_frame"]["compare"]["text"])


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (products(50, seed=1)[0]["title"].tolist(), "tfidf"),
        (
            [
                "Learning to rank with partially labeled data in practice",
                "A theory of the learnable, revisited for noisy examples",
            ]
            * 10,
            "tfidf",
        ),
        (
            ["M. Kearns, Y. Mansour and A. Ng", "R. Schapire and Y. Singer"] * 10,
            "tfidf",
        ),
        (
            ["12 main street", "4 high st", "flat 2 17 park road"] * 10,
            "token_sort_ratio",
        ),
        (["John Smith", "Mary Ann Jones", "Lee"] * 10, "token_sort_ratio"),
        (["london", "new york", "paris", "oslo"] * 10, "ratio"),
        (["1980-01-02", "KDL-40V4100", None, ""] * 10, "ratio"),
        # The median decides: five words is long text, four is not.
        (["one two three four five", "a b c d e f", "x"] * 10, "tfidf"),
        (["one two three four", "a b c d e f", "x"] * 10, "token_sort_ratio"),
    ],
)
def test_auto_chooses_tfidf_for_long_multi_word_text(
    values: list[Any], expected: str
) -> None:
    assert auto_comparison(values) == expected


def test_auto_counts_words_of_both_tables_and_ignores_blanks() -> None:
    words = ["alpha beta gamma delta epsilon zeta"] * 5
    assert auto_comparison([*words, *[""] * 20, *[None] * 20]) == "tfidf"
    left = pd.DataFrame({"text": ["a b"] * 10})
    right = pd.DataFrame({"text": words * 3})
    scored = lf.score(
        left,
        pd.DataFrame({"left": [0], "right": [0]}),
        "text",
        other=right,
        min_score=0.5,
    )
    assert scored.attrs["lsh_frame"]["compare"] == {"text": "tfidf"}


# ----------------------------------------------------------------------------
# Names, saved models, explain


def test_the_name_is_a_comparison_everywhere() -> None:
    assert lf.Field("title", compare="tfidf").compare == "tfidf"
    with pytest.raises(lf.errors.ConfigError, match="tfidf"):
        lf.Field("title", compare="tf-idf")


def test_a_saved_model_scores_a_later_batch_with_tfidf_deterministically() -> None:
    left, right = products(300, seed=5)
    scored = lf.pairs(left, [lf.Field("title", compare="tfidf")], other=right)
    assert scored.attrs["lsh_frame"]["compare"] == {"title": "tfidf"}
    learned = scored.attrs["lsh_frame"]["model"]
    # The titles hold model numbers: the identifier codes are read too.
    both = {"title": "tfidf", "codes": "codes"}
    assert learned is not None and learned["compare"] == both
    saved = json.loads(json.dumps(learned))
    model = MatchModel.from_dict(saved)
    assert model.compare == both and model.codes == "codes"
    assert model.to_dict() == MatchModel.from_dict(model.to_dict()).to_dict()

    # A later batch whose titles are short: "auto" alone would not choose tfidf.
    batch = pd.DataFrame({"title": ["Sony TV", "LG DVD"]}, index=["n0", "n1"])
    right = pd.DataFrame(
        {"title": ["SONY kdl-40 TV", "lg dvd player", "sony tv"]},
        index=["b0", "b1", "b2"],
    )
    pairs = pd.DataFrame({"left": ["n0", "n1", "n0"], "right": ["b0", "b1", "b2"]})
    assert (
        lf.score(batch, pairs, ["title"], other=right, min_score=0.5).attrs[
            "lsh_frame"
        ]["compare"]["title"]
        == "token_sort_ratio"
    )
    first = lf.score(batch, pairs, ["title"], other=right, min_score=saved)
    again = lf.score(batch, pairs, ["title"], other=right, min_score=model)
    assert first.attrs["lsh_frame"]["compare"] == {"title": "tfidf"}
    pd.testing.assert_frame_equal(first, again, check_exact=True)
    # Its frequencies are those of the tables given to this call.
    values = [*batch["title"], *right["title"]]
    want = reference_scores(
        [values],
        [
            (batch.loc[a, "title"], right.loc[b, "title"])
            for a, b in pairs.itertuples(index=False)
        ],
    )
    np.testing.assert_allclose(first["title_score"], want, rtol=1e-9)


def test_explain_shows_the_tfidf_score() -> None:
    left, right = products(40, seed=6)
    fields = [lf.Field("title", compare="tfidf")]
    scored = lf.pairs(left, fields, other=right, min_score=0.5)
    row = scored.iloc[0]
    explained = lf.explain(left, row, fields, other=right)
    (item,) = explained.fields
    assert item.comparison == "tfidf"
    assert item.score == row["title_score"]
    assert "tfidf" in str(explained)


# ----------------------------------------------------------------------------
# Dask: every partition scores with the frequencies of the whole tables


def as_dask(frame: pd.DataFrame, partitions: int) -> tuple[dd.DataFrame, pd.DataFrame]:
    ddf = dd.from_pandas(frame, npartitions=partitions, sort=False)
    return ddf, ddf.compute()


def same(got: pd.DataFrame, want: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got.attrs == want.attrs


@pytest.mark.parametrize("partitions", [1, 3, 7])
def test_dask_dedupe_equals_pandas(partitions: int) -> None:
    pytest.importorskip("lsh_frame.dask")
    left, right = products(150, seed=7)
    both = pd.concat([left, right])
    ddf, df = as_dask(both, partitions)
    fields = [lf.Field("title", compare="tfidf")]
    with dask.config.set(scheduler="synchronous"):
        got = ddf.lsh.pairs(fields).compute()
    want = df.lsh.pairs(fields)
    # The titles hold model numbers: the identifier codes are read too.
    assert want.attrs["lsh_frame"]["model"]["compare"] == {
        "title": "tfidf",
        "codes": "codes",
    }
    assert want["title_score"].between(0, 0.999).any()
    same(got, want)


@pytest.mark.parametrize(("left_parts", "right_parts"), [(1, 1), (3, 2)])
def test_dask_link_equals_pandas(left_parts: int, right_parts: int) -> None:
    pytest.importorskip("lsh_frame.dask")
    left, right = products(150, seed=8)
    dleft, left = as_dask(left, left_parts)
    dright, right = as_dask(right, right_parts)
    fields = [lf.Field("title", compare="tfidf")]
    with dask.config.set(scheduler="synchronous"):
        got = dleft.lsh.pairs(fields, other=dright).compute()
        # Pairs spread over partitions score as pandas scores all of them.
        pairs = left.lsh.candidates(fields, other=right)
        scored = dleft.lsh.score(
            dd.from_pandas(pairs, npartitions=4, sort=False),
            fields,
            other=dright,
            min_score=0.5,
        ).compute()
    same(got, left.lsh.pairs(fields, other=right))
    same(scored, left.lsh.score(pairs, fields, other=right, min_score=0.5))


@given(
    st.lists(
        st.text(
            alphabet=st.one_of(
                st.characters(codec="utf-8"),
                st.sampled_from(
                    list("kdl-40 \u00a9\u00b7\u2013\u2014\u201c\u2018!?.,;:/@#$%^&*()")
                ),
            ),
            max_size=30,
        ),
        max_size=8,
    )
)
def test_punctuation_as_spaces_is_the_regular_expression(strings):
    """The look-up replaces exactly what ``[\\p{P}\\p{S}]`` matches."""
    array = pa.array(strings, pa.large_string())
    points, _ = codepoints(array)
    replaced = pc.replace_substring_regex(array, PUNCTUATION_CHARACTER, " ")
    expected, _ = codepoints(replaced)
    got = tfidf.punctuation_as_spaces(points)
    assert got.dtype == np.uint32
    np.testing.assert_array_equal(got, expected)
