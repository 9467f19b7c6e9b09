"""The one-call jobs: dedupe, drop_duplicates, link, merge."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lsh_frame as lf
from lsh_frame.jobs import one_to_one_edges

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
    with _progress._listening(Listener()):
        frame.lsh.dedupe(["given_name", "surname", "street_address", "email"])
    counted = {
        label.split(" ")[0]: (total, done) for label, total, done in events if total
    }
    assert {"signing", "finding", "scoring"} <= set(counted)
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
    with pytest.raises(lf.ConfigError, match="how"):
        _mapped_merge(left, right, how="outer")
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
    assert list(merged.columns[:2]) == ["name_x", "name_y"]
    left = one.lsh.merge(people, "name", how="left", one_to_one=True, min_score=0.8)
    assert left.index.tolist() == ["s"]
    assert left["name_y"].tolist() == ["john smith"]
