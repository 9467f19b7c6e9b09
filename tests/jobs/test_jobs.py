"""The one-call jobs: dedupe, drop_duplicates, link, merge."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lsh_frame as lf
from lsh_frame.decide.one_to_one import one_to_one_edges

COLUMNS = ["given_name", "surname", "street_address", "date_of_birth", "email"]


@pytest.fixture(scope="module")
def customers() -> pd.DataFrame:
    frame = lf.datasets.make_customers(1_500, seed=5)
    # A non-default index and dtypes the jobs must carry through untouched.
    frame.index = pd.Index([f"r{i:05d}" for i in range(len(frame))], name="rid")
    frame["age_band"] = pd.Categorical(np.arange(len(frame)) % 3)
    frame["weight"] = np.arange(len(frame), dtype=np.int16)
    return frame


@pytest.fixture(scope="module")
def labelled(customers: pd.DataFrame) -> pd.DataFrame:
    return customers.lsh.dedupe(COLUMNS)


def _frozen(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.copy(deep=True)


# ----------------------------------------------------------------------------
# dedupe


def test_dedupe_adds_entity_and_size_and_keeps_everything_else(
    customers: pd.DataFrame, labelled: pd.DataFrame
) -> None:
    assert list(labelled.columns) == [*customers.columns, "cluster_id", "cluster_size"]
    pd.testing.assert_frame_equal(labelled[customers.columns], customers)
    assert labelled["cluster_id"].dtype == np.int64
    sizes = labelled.groupby("cluster_id")["cluster_id"].transform("size")
    assert (labelled["cluster_size"] == sizes).all()
    info = labelled.attrs["lsh_frame"]
    assert info["entities"] == labelled["cluster_id"].nunique()
    assert info["matches"] > 0
    assert info["pairs"] >= info["matches"]


def test_dedupe_is_pairs_then_cluster(
    customers: pd.DataFrame, labelled: pd.DataFrame
) -> None:
    scored = customers.lsh.pairs(COLUMNS)
    expected = customers.lsh.cluster(scored)
    assert (labelled["cluster_id"] == expected).all()
    quality = lf.evaluate(labelled["cluster_id"], customers["entity_id"])
    assert quality.f1 > 0.85


def test_dedupe_leaves_the_input_alone(customers: pd.DataFrame) -> None:
    before = _frozen(customers)
    customers.lsh.dedupe(COLUMNS, min_score=0.8)
    pd.testing.assert_frame_equal(customers, before)


def test_dedupe_does_not_depend_on_row_order(
    customers: pd.DataFrame, labelled: pd.DataFrame
) -> None:
    shuffled = customers.sample(frac=1.0, random_state=3)
    again = shuffled.lsh.dedupe(COLUMNS)
    assert (again["cluster_id"].reindex(labelled.index) == labelled["cluster_id"]).all()


def test_dedupe_refuses_to_overwrite_a_column(customers: pd.DataFrame) -> None:
    taken = customers.assign(cluster_id=1)
    with pytest.raises(lf.ColumnError, match="id_column"):
        taken.lsh.dedupe(COLUMNS)
    renamed = taken.lsh.dedupe(COLUMNS, id_column="entity", min_score=0.8)
    assert (renamed["cluster_id"] == 1).all()
    assert "entity" in renamed
    with pytest.raises(lf.ConfigError, match="same label"):
        customers.lsh.dedupe(COLUMNS, id_column="x", size_column="x")


def test_dedupe_empty_and_one_row() -> None:
    empty = pd.DataFrame({"name": pd.Series([], dtype="string")})
    out = empty.lsh.dedupe("name")
    assert list(out.columns) == ["name", "cluster_id", "cluster_size"]
    assert len(out) == 0
    one = pd.DataFrame({"name": ["ann"]}, index=["only"])
    out = one.lsh.dedupe("name")
    assert out.index.tolist() == ["only"]
    assert out[["cluster_id", "cluster_size"]].values.tolist() == [[0, 1]]


def test_dedupe_rejects_bad_input(customers: pd.DataFrame) -> None:
    with pytest.raises(lf.ColumnError, match="nope"):
        customers.lsh.dedupe(["nope"])
    with pytest.raises(lf.ConfigTypeError, match="progress"):
        customers.lsh.dedupe(COLUMNS, progress="yes")
    duplicated = customers.iloc[[0, 0, 1]]
    with pytest.raises(lf.LshFrameError, match="unique"):
        duplicated.lsh.dedupe(COLUMNS)


def test_dedupe_shows_progress_on_request(capsys: pytest.CaptureFixture) -> None:
    frame = lf.datasets.make_customers(200, seed=1)
    frame.lsh.dedupe(COLUMNS, progress=True)
    assert "dedupe" in capsys.readouterr().err
    frame.lsh.dedupe(COLUMNS)
    assert capsys.readouterr().err == ""


def test_steps_with_known_work_report_all_of_it() -> None:
    # Signing, the neighbours' look-ups and scoring say how much work they
    # have; what they report done adds up to it, so the line ends at 100%.
    from lsh_frame import _progress

    events: list[tuple[str, int | None, int]] = []

    class Listener:
        def start(self, label: str, total: int | None) -> None:
            events.append((label, total, 0))

        def advance(self, amount: int) -> None:
            label, total, done = events[-1]
            events[-1] = (label, total, done + amount)

    frame = lf.datasets.make_customers(3_000, seed=2)
    copies = frame.iloc[[0] * 400].set_axis(range(10**6, 10**6 + 400))
    frame = pd.concat([frame, copies])  # a group of copies, collapsed to one
    with _progress._listening(Listener()):
        frame.lsh.dedupe(["given_name", "surname", "street_address", "email"])
    counted = {
        label.split(" ")[0]: (total, done) for label, total, done in events if total
    }
    assert {"signing", "finding", "building", "scoring", "deciding"} <= set(counted)
    for label, total, done in events:
        assert done == (total or done), label
    with _progress.recording() as steps:
        frame.lsh.dedupe(["given_name", "surname"])
    assert [label for label, _ in steps][-1] == "clustering"


# ----------------------------------------------------------------------------
# drop_duplicates


def _reference_keep(labelled: pd.DataFrame, keep: object) -> pd.Index:
    ids = labelled["cluster_id"]
    if keep == "first":
        return labelled.index[~ids.duplicated(keep="first")]
    if keep == "last":
        return labelled.index[~ids.duplicated(keep="last")]
    if keep is False:
        return labelled.index[~ids.duplicated(keep=False)]
    raise AssertionError(keep)


@pytest.mark.parametrize("keep", ["first", "last", False])
def test_drop_duplicates_keeps_like_pandas(
    customers: pd.DataFrame, labelled: pd.DataFrame, keep: object
) -> None:
    kept = customers.lsh.drop_duplicates(COLUMNS, keep=keep)
    assert kept.index.equals(_reference_keep(labelled, keep))
    pd.testing.assert_frame_equal(kept, customers.loc[kept.index])


def test_drop_duplicates_most_complete(
    customers: pd.DataFrame, labelled: pd.DataFrame
) -> None:
    holey = customers.copy()
    holey.loc[holey.index[::2], ["email", "phone"]] = None
    holey.loc[holey.index[1::4], "city"] = "   "  # blank text counts as missing
    kept = holey.lsh.drop_duplicates(COLUMNS, keep="most_complete", min_score=0.75)
    ids = holey.lsh.dedupe(COLUMNS, min_score=0.75)["cluster_id"]
    filled = holey.notna() & ~holey.apply(
        lambda column: column.astype("string").str.strip().eq("").fillna(False)
    )
    counts = filled.sum(axis=1)
    assert kept.index.is_monotonic_increasing
    assert ids.loc[kept.index].is_unique
    assert len(kept) == ids.nunique()
    best = counts.groupby(ids).transform("max")
    assert (counts.loc[kept.index] == best.loc[kept.index]).all()
    # Ties go to the first row of the entity.
    first_best = counts[counts == best].groupby(ids[counts == best]).head(1)
    assert kept.index.equals(first_best.index)


def test_drop_duplicates_with_a_function(
    customers: pd.DataFrame, labelled: pd.DataFrame
) -> None:
    kept = customers.lsh.drop_duplicates(
        COLUMNS, keep=lambda group: group["weight"].idxmax()
    )
    assert kept.index.equals(_reference_keep(labelled, "last"))
    with pytest.raises(lf.ConfigError, match="index label"):
        customers.lsh.drop_duplicates(COLUMNS, keep=lambda group: "not a label")


def test_drop_duplicates_options(customers: pd.DataFrame) -> None:
    before = _frozen(customers)
    kept = customers.lsh.drop_duplicates(COLUMNS, ignore_index=True)
    assert kept.index.equals(pd.RangeIndex(len(kept)))
    pd.testing.assert_frame_equal(customers, before)
    with pytest.raises(lf.ConfigError, match="keep"):
        customers.lsh.drop_duplicates(COLUMNS, keep="middle")
    one = pd.DataFrame({"name": ["ann"]})
    assert one.lsh.drop_duplicates("name").equals(one)
    empty = one.iloc[:0]
    assert len(empty.lsh.drop_duplicates("name", keep="most_complete")) == 0


# ----------------------------------------------------------------------------
# link and merge


@pytest.fixture(scope="module")
def two_tables(customers: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    left = customers.iloc[::2]
    right = customers.iloc[1::2].rename(
        columns={"given_name": "first", "surname": "last"}
    )
    right.index = pd.Index([f"b{i}" for i in range(len(right))], name="bid")
    return left, right


def test_link_maps_columns(two_tables: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    left, right = two_tables
    on = ["given_name", "surname", "date_of_birth", "email"]
    right_on = ["first", "last", "date_of_birth", "email"]
    linked = left.lsh.link(right, left_on=on, right_on=right_on)
    renamed = right.rename(columns={"first": "given_name", "last": "surname"})
    expected = lf.pairs(left, on, other=renamed)
    pd.testing.assert_frame_equal(linked, expected)
    assert linked["right"].isin(right.index).all()
    assert linked.attrs["lsh_frame"]["link"] is True


def test_link_rejects_bad_mappings(
    two_tables: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    left, right = two_tables
    with pytest.raises(lf.ConfigError, match="together"):
        left.lsh.link(right, left_on="given_name")
    with pytest.raises(lf.ConfigError, match="one to one"):
        left.lsh.link(right, left_on=["given_name", "surname"], right_on=["first"])
    with pytest.raises(lf.ColumnError, match="frist"):
        left.lsh.link(right, left_on="given_name", right_on="frist")
    with pytest.raises(lf.ColumnError, match="left_on"):
        left.lsh.link(right, ["email"], left_on="given_name", right_on="first")
    with pytest.raises(lf.ColumnError, match="given_name"):
        left.lsh.link(right, ["given_name"])  # not in the right table
    with pytest.raises(lf.ConfigError, match="fields"):
        left.lsh.link(right)


def _greedy_reference(
    left: np.ndarray, right: np.ndarray, rank: np.ndarray
) -> np.ndarray:
    taken = np.zeros(left.size, dtype=bool)
    used_left: set[int] = set()
    used_right: set[int] = set()
    for edge in np.argsort(rank):
        if left[edge] not in used_left and right[edge] not in used_right:
            taken[edge] = True
            used_left.add(int(left[edge]))
            used_right.add(int(right[edge]))
    return taken


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8)), max_size=40, unique=True),
    st.randoms(use_true_random=False),
)
def test_one_to_one_is_the_greedy_matching(edges: list, random: object) -> None:
    left = np.array([a for a, _ in edges], dtype=np.int64)
    right = np.array([b for _, b in edges], dtype=np.int64)
    rank = np.arange(left.size, dtype=np.int64)
    random.shuffle(rank)  # type: ignore[attr-defined]
    np.testing.assert_array_equal(
        one_to_one_edges(left, right, rank), _greedy_reference(left, right, rank)
    )


def _mapped_merge(
    left: pd.DataFrame, right: pd.DataFrame, **options: object
) -> pd.DataFrame:
    return left.lsh.merge(
        right,
        left_on=["given_name", "surname", "date_of_birth", "email"],
        right_on=["first", "last", "date_of_birth", "email"],
        **options,
    )


def test_merge_inner_is_the_matched_pairs(
    two_tables: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    left, right = two_tables
    before = (_frozen(left), _frozen(right))
    merged = _mapped_merge(left, right)
    # merge keeps every match unless asked (one_to_one=False, its default).
    linked = left.lsh.link(
        right,
        left_on=["given_name", "surname", "date_of_birth", "email"],
        right_on=["first", "last", "date_of_birth", "email"],
        one_to_one=False,
    )
    matched = linked[linked["match"]]
    assert len(merged) == len(matched)
    assert merged.index.name == "rid"
    assert sorted(merged.index) == sorted(matched["left"])
    shared = ["entity_id", "street_address", "city", "postcode", "phone", "weight"]
    for column in shared:
        assert f"{column}_x" in merged and f"{column}_y" in merged
    assert {"first", "last", "given_name", "surname"} <= set(merged.columns)
    assert merged.columns[-2:].tolist() == ["score", "match_probability"]
    assert merged["weight_x"].dtype == np.int16
    assert isinstance(merged["age_band_x"].dtype, pd.CategoricalDtype)
    # Rows follow the left table's order.
    positions = left.index.get_indexer(merged.index)
    assert (np.diff(positions) >= 0).all()
    # Most merged rows join records of the same person.
    assert (merged["entity_id_x"] == merged["entity_id_y"]).mean() > 0.9
    pd.testing.assert_frame_equal(left, before[0])
    pd.testing.assert_frame_equal(right, before[1])


def test_merge_left_one_to_one_keeps_every_left_row_once(
    two_tables: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    left, right = two_tables
    merged = _mapped_merge(left, right, how="left", one_to_one=True)
    assert merged.index.equals(left.index)
    matched = merged["score"].notna()
    assert merged.loc[matched, "entity_id_y"].notna().all()
    assert merged.loc[~matched, ["first", "last", "score"]].isna().all().all()
    # No right record is used twice: its entity/phone pairs are unique.
    right_rows = merged.loc[matched, ["entity_id_y", "phone_y", "first", "last"]]
    assert not right_rows.duplicated().any()
    pd.testing.assert_frame_equal(
        merged[[f"{c}_x" for c in ["entity_id", "city"]]].set_axis(
            ["entity_id", "city"], axis=1
        ),
        left[["entity_id", "city"]],
    )
    inner = _mapped_merge(left, right, one_to_one=True)
    assert len(inner) == int(matched.sum())


def test_merge_left_without_one_to_one_repeats_left_rows(
    two_tables: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    left, right = two_tables
    merged = _mapped_merge(left, right, how="left", min_score=0.5)
    assert set(merged.index) == set(left.index)
    counts = merged.index.value_counts()
    assert counts.max() > 1  # a loose cut links some left rows to several rows
    unmatched = merged["score"].isna()
    assert merged.index[unmatched].is_unique
    # Several matches of one left row come best first.
    best_first = merged.groupby(level=0, sort=False)["score"].apply(
        lambda values: values.dropna().is_monotonic_decreasing
    )
    assert best_first.all()


def test_merge_rejects_bad_options(
    two_tables: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    left, right = two_tables
    # "outer" is a merge now (issue 17); a cross join on similarity is not.
    with pytest.raises(lf.ConfigError, match=r"'how'.*'outer'.*Got 'cross'"):
        _mapped_merge(left, right, how="cross")
    with pytest.raises(lf.ConfigError, match="suffixes"):
        _mapped_merge(left, right, suffixes=("_a", "_a"))
    with pytest.raises(lf.ConfigTypeError, match="suffixes"):
        _mapped_merge(left, right, suffixes="_a")
    clash = left.rename(columns={"city": "score"})
    with pytest.raises(lf.ColumnError, match="score"):
        _mapped_merge(clash, right)


def test_merge_small_cases() -> None:
    people = pd.DataFrame({"name": ["john smith", "mary jones"]}, index=[10, 20])
    staff = pd.DataFrame({"name": pd.Series([], dtype=object)})
    merged = people.lsh.merge(staff, "name", how="left")
    assert merged.index.tolist() == [10, 20]
    assert merged["name_y"].isna().all()
    assert len(people.lsh.merge(staff, "name")) == 0
    one = pd.DataFrame({"name": ["jon smith"]}, index=["s"])
    merged = people.lsh.merge(one, "name", threshold=0.3, min_score=0.8)
    assert merged.index.tolist() == [10]
    assert merged["name_y"].tolist() == ["jon smith"]


def test_one_to_one_on_a_long_chain_is_the_greedy_matching():
    # Ranks falling along a chain take one edge per round; the walk finishes it.
    size = 3_000
    left = np.concatenate([np.arange(size), np.arange(1, size + 1)])
    right = np.concatenate([np.arange(size), np.arange(size)])
    rank = np.concatenate([2 * np.arange(size), 2 * np.arange(size) + 1])[::-1].copy()
    np.testing.assert_array_equal(
        one_to_one_edges(left, right, rank), _greedy_reference(left, right, rank)
    )
    with pytest.raises(lf.ConfigError, match="distinct ranks"):
        one_to_one_edges(np.array([0, 0]), np.array([0, 1]), np.array([0, 0]))


def test_jobs_check_their_options_before_blocking(
    two_tables: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    left, right = two_tables
    with pytest.raises(lf.ConfigError, match="dedupe"):
        left.lsh.dedupe(COLUMNS, min_score=1.5)
    with pytest.raises(lf.ConfigError, match="learned on the fields"):
        left.lsh.dedupe(
            COLUMNS[:3], min_score=left.lsh.pairs(COLUMNS).attrs["lsh_frame"]["model"]
        )
    credit = left.assign(score=1.0)
    with pytest.raises(lf.ColumnError, match="rename"):
        _mapped_merge(credit, right)
    with pytest.raises(lf.ConfigError, match="keep"):
        left.lsh.drop_duplicates(COLUMNS, keep=0)


def test_internal_column_names_cannot_collide(customers: pd.DataFrame) -> None:
    odd = customers.assign(__lsh_id=7, __lsh_size=8)
    labelled = odd.lsh.dedupe(COLUMNS)
    assert (labelled["__lsh_id"] == 7).all() and (labelled["__lsh_size"] == 8).all()
    kept = odd.lsh.drop_duplicates(COLUMNS)
    assert list(kept.columns) == list(odd.columns)


def test_most_complete_treats_blank_categories_as_missing() -> None:
    frame = pd.DataFrame(
        {
            "name": ["john smith", "jon smith"],
            "city": pd.Categorical(["  ", "leeds"]),
            "team": pd.Categorical(["", "sales"]),
        }
    )
    kept = frame.lsh.drop_duplicates("name", keep="most_complete", min_score=0.8)
    assert kept.index.tolist() == [1]


def test_link_and_merge_with_empty_or_one_row_tables() -> None:
    people = pd.DataFrame({"name": ["john smith", "mary jones"]}, index=["a", "b"])
    empty = people.iloc[:0]
    one = pd.DataFrame({"name": ["jon smith"]}, index=["s"])
    assert len(empty.lsh.link(people, "name")) == 0
    assert len(people.lsh.link(empty, "name")) == 0
    linked = people.lsh.link(one, "name", threshold=0.3, min_score=0.8)
    assert linked.loc[linked["match"], ["left", "right"]].values.tolist() == [
        ["a", "s"]
    ]
    merged = empty.lsh.merge(people, "name", how="left")
    assert len(merged) == 0
    assert list(merged.columns[:3]) == ["name_x", "index_right", "name_y"]
    left = one.lsh.merge(people, "name", how="left", one_to_one=True, min_score=0.8)
    assert left.index.tolist() == ["s"]
    assert left["name_y"].tolist() == ["john smith"]


# ----------------------------------------------------------------------------
# pandas' keywords and methods (issue 17)

#: Records that differ in every column and share no shingle: only exact copies
#: of a record can be duplicates of it, as in pandas.
_WORDS = np.random.default_rng(0).choice(list("abcdefghijklmnopqrstuvwxyz"), (12, 3, 9))
POOL = pd.DataFrame(
    {
        "name": ["".join(row[0]) + " " + "".join(row[1][:5]) for row in _WORDS],
        "city": ["".join(row[2]) for row in _WORDS],
        "code": [str(10_000_000 + 7_919 * number) for number in range(12)],
    }
)


def _copies(picks: list[int], labels: list[int]) -> pd.DataFrame:
    frame = POOL.iloc[picks].reset_index(drop=True)
    frame.index = pd.Index(labels[: len(picks)])
    return frame


@settings(max_examples=25, deadline=None)
@given(
    picks=st.lists(st.integers(0, len(POOL) - 1), min_size=1, max_size=40),
    labels=st.permutations(range(100)),
    subset=st.sampled_from([["name"], ["city", "code"], ["code", "name", "city"]]),
    keep=st.sampled_from(["first", "last", False]),
)
def test_exact_copies_are_duplicates_as_in_pandas(picks, labels, subset, keep):
    frame = _copies(picks, labels)
    marked = frame.lsh.duplicated(subset=subset, keep=keep)
    pd.testing.assert_series_equal(marked, frame.duplicated(subset=subset, keep=keep))
    kept = lf.drop_duplicates(frame, subset=subset, keep=keep)
    pd.testing.assert_frame_equal(kept, frame.drop_duplicates(subset=subset, keep=keep))


def test_a_large_group_of_copies_is_one_entity_as_in_pandas() -> None:
    # More than 64 copies are collapsed before blocking; pandas' answer still.
    picks = [3] * 90 + list(range(12)) + [5, 5]
    frame = _copies(picks, list(np.random.default_rng(1).permutation(500)))
    for keep in ("first", "last", False):
        pd.testing.assert_series_equal(
            frame.lsh.duplicated(keep=keep), frame.duplicated(keep=keep)
        )


@pytest.mark.parametrize("keep", ["first", "last", "most_complete", False])
def test_drop_duplicates_is_the_rows_duplicated_leaves(
    customers: pd.DataFrame, keep: object
) -> None:
    marked = customers.lsh.duplicated(COLUMNS, keep=keep)
    assert marked.dtype == bool and marked.index.equals(customers.index)
    assert 0 < marked.sum() < len(customers)
    kept = customers.lsh.drop_duplicates(subset=COLUMNS, keep=keep)
    pd.testing.assert_frame_equal(kept, customers[~marked])
    assert marked.attrs["lsh_frame"] == kept.attrs["lsh_frame"]


def test_keywords_name_the_columns_as_in_pandas(customers: pd.DataFrame) -> None:
    small = customers.iloc[:300]
    before = _frozen(small)
    positional = small.lsh.dedupe(COLUMNS)
    pd.testing.assert_frame_equal(small.lsh.dedupe(subset=COLUMNS), positional)
    pd.testing.assert_frame_equal(lf.dedupe(small, subset=COLUMNS), positional)
    pd.testing.assert_series_equal(
        lf.duplicated(small, subset=COLUMNS), small.lsh.duplicated(COLUMNS)
    )
    # No columns: every column, as pandas' subset=None.
    pd.testing.assert_frame_equal(
        small.lsh.drop_duplicates(), small.lsh.drop_duplicates(list(small.columns))
    )
    pd.testing.assert_series_equal(
        lf.duplicated(small, keep="last"),
        small.lsh.duplicated(subset=list(small.columns), keep="last"),
    )
    pd.testing.assert_frame_equal(small, before)


def test_columns_given_twice_or_a_bad_choice_are_refused(
    customers: pd.DataFrame, two_tables: tuple[pd.DataFrame, pd.DataFrame]
) -> None:
    left, right = two_tables
    for call in (
        lambda: customers.lsh.drop_duplicates(COLUMNS, subset=COLUMNS),
        lambda: lf.duplicated(customers, "surname", subset=["surname"]),
        lambda: customers.lsh.dedupe("surname", subset="surname"),
        lambda: left.lsh.merge(right, "city", on="city"),
        lambda: lf.link(left, right, "city", on=["city"]),
    ):
        with pytest.raises(lf.ConfigTypeError, match="columns twice"):
            call()
    with pytest.raises(lf.ConfigError, match=r"'keep'.*'first', 'last'.*Got 'middle'"):
        customers.lsh.duplicated(COLUMNS, keep="middle")
    with pytest.raises(lf.ConfigError, match=r"'how'.*'right', 'outer'.*Got 'full'"):
        lf.merge(left, right, on="city", how="full")
    with pytest.raises(lf.ConfigError, match=r"'validate'.*'one_to_one'.*Got '1:2'"):
        left.lsh.merge(right, on="city", validate="1:2")
    with pytest.raises(lf.ConfigTypeError, match="indicator"):
        left.lsh.merge(right, on="city", indicator=1)
    with pytest.raises(lf.ColumnError, match="_merge"):
        left.assign(_merge=1).lsh.merge(right, on="city", indicator=True)
    with pytest.raises(lf.ColumnError, match="index_right"):
        left.lsh.merge(right.assign(index_right=1), on="city")
    with pytest.raises(lf.ConfigError, match="no columns"):
        lf.drop_duplicates(customers[[]])


def test_merge_on_equals_fields_and_keeps_the_right_label(
    two_tables: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    left, right = two_tables
    fields = ["date_of_birth", "email", "city"]
    merged = lf.merge(left, right, on=fields)
    pd.testing.assert_frame_equal(merged, left.lsh.merge(right, fields))
    linked = left.lsh.link(right, on=fields, one_to_one=False)
    pd.testing.assert_frame_equal(
        linked, lf.link(left, right, fields, one_to_one=False)
    )
    matched = linked[linked["match"]]
    assert sorted(zip(merged.index, merged["index_right"], strict=True)) == sorted(
        zip(matched["left"], matched["right"], strict=True)
    )
    # Between the left and the right table's columns.
    position = merged.columns.get_loc("index_right")
    assert list(merged.columns[position - 1 : position + 2]) == [
        "weight_x",
        "index_right",
        "entity_id_y",
    ]


def test_merge_how_right_and_outer(two_tables: tuple[pd.DataFrame, pd.DataFrame]):
    left, right = two_tables
    before = (_frozen(left), _frozen(right))
    options = {"on": ["date_of_birth", "email", "city"], "indicator": True}
    inner = left.lsh.merge(right, **options)
    merged = {how: left.lsh.merge(right, how=how, **options) for how in _HOWS}
    matched = {(a, b) for a, b in zip(inner.index, inner["index_right"], strict=True)}
    lonely_left = left.index[~left.index.isin(inner.index)]
    lonely_right = right.index[~right.index.isin(inner["index_right"])]
    assert len(lonely_left) and len(lonely_right)
    for how, result in merged.items():
        both = result["_merge"] == "both"
        assert list(result["_merge"].cat.categories) == [
            "left_only",
            "right_only",
            "both",
        ]
        pairs = set(
            zip(result.index[both], result.loc[both, "index_right"], strict=True)
        )
        assert pairs == matched
        only_left = result.index[result["_merge"] == "left_only"]
        only_right = result.loc[result["_merge"] == "right_only", "index_right"]
        assert sorted(only_left) == (
            sorted(lonely_left) if how in ("left", "outer") else []
        )
        assert sorted(only_right) == (
            sorted(lonely_right) if how in ("right", "outer") else []
        )
        # A missing side is missing everywhere, as in pandas.
        assert result.loc[result["_merge"] == "right_only", "city_x"].isna().all()
        assert result.loc[result["_merge"] == "left_only", "city_y"].isna().all()
        assert result.loc[~both, "score"].isna().all()
    # Rows follow the right table's order with how="right".
    right_order = right.index.get_indexer(merged["right"]["index_right"])
    assert (np.diff(right_order) >= 0).all() and len(right_order) == len(
        merged["right"]
    )
    # Outer: the left merge, then the right rows without a match in their order.
    outer = merged["outer"]
    head = outer.iloc[: len(merged["left"])]
    pd.testing.assert_frame_equal(
        head.reset_index(drop=True),
        merged["left"].reset_index(drop=True),
        check_dtype=False,
        check_categorical=False,
    )
    assert outer["index_right"].iloc[len(merged["left"]) :].tolist() == list(
        lonely_right
    )
    assert outer.index[len(merged["left"]) :].isna().all()
    named = left.lsh.merge(right, on=options["on"], how="outer", indicator="source")
    assert named["source"].equals(outer["_merge"].rename("source"))
    pd.testing.assert_frame_equal(left, before[0])
    pd.testing.assert_frame_equal(right, before[1])


_HOWS = ("inner", "left", "right", "outer")


def test_merge_validate_checks_the_matches(
    two_tables: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    left, right = two_tables
    options = {"on": ["date_of_birth", "email", "city"], "min_score": 0.5}
    loose = left.lsh.merge(right, **options)
    several = loose.index[loose.index.duplicated()]  # in the left table's order
    assert len(several) and loose["index_right"].duplicated().any()
    for validate in ("one_to_one", "1:1", "many_to_one", "m:1"):
        with pytest.raises(
            lf.MergeError, match=r"left rows? match(es)? several right"
        ) as e:
            left.lsh.merge(right, validate=validate, **options)
        assert f"left row {several[0]!r} matches" in str(e.value)
        assert isinstance(e.value, pd.errors.MergeError)
    with pytest.raises(lf.MergeError, match=r"right rows? match(es)? several left"):
        left.lsh.merge(right, validate="one_to_many", **options)
    pd.testing.assert_frame_equal(
        left.lsh.merge(right, validate="many_to_many", **options), loose
    )
    # The one-to-one choice is made first, and passes.
    chosen = left.lsh.merge(right, one_to_one=True, validate="1:1", **options)
    assert chosen.index.is_unique and chosen["index_right"].is_unique


@pytest.mark.parametrize("how", _HOWS)
def test_merge_on_exact_keys_joins_as_pandas(how: str) -> None:
    left = _copies([0, 1, 2, 3, 3, 5], [10, 11, 12, 13, 14, 15])
    right = _copies([1, 3, 3, 4, 6, 0], [20, 21, 22, 23, 24, 25])
    ours = left.lsh.merge(right, on="code", how=how, indicator=True)
    theirs = pd.merge(
        left.rename_axis("left").reset_index(),
        right.rename_axis("right").reset_index(),
        on="code",
        how=how,
        indicator=True,
    )

    def rows(left_labels, right_labels, source):
        return sorted(
            zip(
                [None if pd.isna(x) else int(x) for x in left_labels],
                [None if pd.isna(x) else int(x) for x in right_labels],
                list(source),
                strict=True,
            ),
            key=str,
        )

    assert rows(ours.index, ours["index_right"], ours["_merge"]) == rows(
        theirs["left"], theirs["right"], theirs["_merge"]
    )


def test_merge_keeps_tuple_labels_of_a_multiindex() -> None:
    people = pd.DataFrame(
        {"name": ["john smith", "mary jones"]},
        index=pd.MultiIndex.from_tuples([("a", 1), ("b", 2)], names=["k", "n"]),
    )
    staff = pd.DataFrame(
        {"name": ["jon smith", "peter pan"]},
        index=pd.MultiIndex.from_tuples([("x", 1), ("y", 2)]),
    )
    options = {"on": "name", "threshold": 0.3, "min_score": 0.8}
    left = people.lsh.merge(staff, how="left", **options)
    assert left.index.equals(people.index)
    assert left["index_right"].tolist()[0] == ("x", 1)
    assert pd.isna(left["index_right"].iloc[1])
    outer = people.lsh.merge(staff, how="outer", **options)
    assert outer.index.tolist()[:2] == [("a", 1), ("b", 2)]
    assert pd.isna(outer.index[2]) and outer["index_right"].iloc[2] == ("y", 2)
