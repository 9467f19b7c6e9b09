from __future__ import annotations

import doctest
import hashlib
import itertools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pandas.testing import assert_frame_equal

from lsh_frame.datasets import corruption, population
from lsh_frame.datasets import customers as customers_module
from lsh_frame.datasets import wordlists as _wordlists
from lsh_frame.datasets.customers import make_customers, true_pairs
from lsh_frame.errors import LshFrameError

COLUMNS = [
    "entity_id",
    "given_name",
    "surname",
    "street_address",
    "city",
    "postcode",
    "phone",
    "date_of_birth",
    "email",
]
TEXT = COLUMNS[1:]
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def customers() -> pd.DataFrame:
    return make_customers(10_000, seed=3)


@pytest.fixture(scope="module")
def pair_frames(customers: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The two records of every true pair, row-aligned."""
    pairs = true_pairs(customers["entity_id"])
    left = customers.loc[pairs["left"]].reset_index(drop=True)
    right = customers.loc[pairs["right"]].reset_index(drop=True)
    return left, right


def agreement(left: pd.DataFrame, right: pd.DataFrame) -> pd.DataFrame:
    """Per pair and field: equal values, or both missing."""
    return pd.DataFrame(
        {
            column: (left[column] == right[column]).fillna(False).astype(bool)
            | (left[column].isna() & right[column].isna())
            for column in TEXT
        }
    )


def reference_pairs(ids: pd.Series) -> list[tuple[object, object]]:
    groups: dict[object, list[object]] = {}
    for label, entity in ids.items():
        if pd.notna(entity):
            groups.setdefault(entity, []).append(label)
    pairs = [
        pair
        for labels in groups.values()
        for pair in itertools.combinations(sorted(labels), 2)
    ]
    return sorted(pairs)


# --- shape of the output -------------------------------------------------------------


def assert_contract(frame: pd.DataFrame, n: int) -> None:
    assert list(frame.columns) == COLUMNS
    assert len(frame) == n
    assert frame["entity_id"].dtype == np.int64
    default_string = pd.Series(["x"], dtype="str").dtype
    for column in TEXT:
        assert frame[column].dtype == default_string, column
    assert isinstance(frame.index, pd.RangeIndex)
    assert frame.index.name == "record_id"
    assert frame.index.equals(pd.RangeIndex(n))


def test_columns_dtypes_and_index(customers: pd.DataFrame) -> None:
    assert_contract(customers, 10_000)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 1_001])
def test_exact_row_count(n: int) -> None:
    assert_contract(make_customers(n), n)


def test_one_row_is_a_person() -> None:
    frame = make_customers(1, duplicate_rate=0.9)
    assert frame["entity_id"].tolist() == [0]
    assert frame["surname"].notna().all()


def test_empty_frame_has_the_same_dtypes(customers: pd.DataFrame) -> None:
    empty = make_customers(0, seed=9)
    assert empty.empty
    assert empty.dtypes.equals(customers.dtypes)


def test_entities_are_numbered_by_first_appearance(customers: pd.DataFrame) -> None:
    first = customers["entity_id"].drop_duplicates()
    assert first.tolist() == list(range(len(first)))


def test_duplicates_are_not_left_next_to_their_original(
    customers: pd.DataFrame,
) -> None:
    adjacent = (customers["entity_id"].diff() == 0).sum()
    assert adjacent < 10


def test_field_formats(customers: pd.DataFrame) -> None:
    assert customers["postcode"].dropna().str.fullmatch(r"\d{4,5}").all()
    assert customers["phone"].dropna().str.fullmatch(r"0\d{9}").all()
    dates = customers["date_of_birth"].dropna()
    assert dates.str.fullmatch(r"\d{4}-\d{2}-\d{2}").all()
    parsed = pd.to_datetime(dates, format="%Y-%m-%d", errors="raise")
    assert parsed.dt.year.between(1930, 2010).all()
    assert customers["email"].dropna().str.contains("@", regex=False).mean() > 0.99
    address = customers["street_address"].dropna()
    assert address.str.fullmatch(r"(\d+/)?\d+ [A-Za-z' ]+").mean() > 0.95
    assert address.str.contains("/", regex=False).mean() > 0.05


def test_missing_values_are_missing_not_empty(customers: pd.DataFrame) -> None:
    for column in TEXT:
        values = customers[column].dropna()
        assert not (values.str.strip() == "").any(), column
    missing = customers[TEXT].isna().mean()
    assert (missing > 0).sum() >= 6
    assert missing["email"] > 0.03
    assert missing.max() < 0.2


# --- determinism ------------------------------------------------------------------


def test_same_seed_same_frame() -> None:
    assert_frame_equal(make_customers(3_000, seed=5), make_customers(3_000, seed=5))


def test_different_seed_different_frame() -> None:
    first, second = make_customers(3_000, seed=5), make_customers(3_000, seed=6)
    assert not first.equals(second)
    same_rows = (first[TEXT] == second[TEXT]).fillna(False).all(axis=1)
    assert same_rows.mean() < 0.01


def frame_digest(frame: pd.DataFrame) -> str:
    return hashlib.sha256(frame.to_csv().encode()).hexdigest()


def test_identical_in_another_process(customers: pd.DataFrame) -> None:
    code = (
        "import hashlib\n"
        "from lsh_frame.datasets import make_customers\n"
        "frame = make_customers(10_000, seed=3)\n"
        "print(hashlib.sha256(frame.to_csv().encode()).hexdigest())\n"
    )
    environment = dict(os.environ)
    # A different string-hash seed proves nothing depends on hash() or set order.
    environment["PYTHONHASHSEED"] = "12345"
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(REPO), environment.get("PYTHONPATH", "")]
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
        cwd=REPO,
    )
    assert result.stdout.strip() == frame_digest(customers)


def test_golden_head() -> None:
    # Pins the generator: if this changes on purpose, update the expected rows.
    head = make_customers(1_000, seed=1).head(3)
    index = pd.RangeIndex(3, name="record_id")
    columns = list(zip(*GOLDEN_HEAD, strict=True))
    expected = pd.DataFrame(
        {
            name: pd.Series(values, index=index, dtype="int64" if i == 0 else "str")
            for i, (name, values) in enumerate(zip(COLUMNS, columns, strict=True))
        }
    )
    assert_frame_equal(head, expected)


GOLDEN_HEAD: list[list[object]] = [
    [0, "Phillip", "Harris", "238 Station Drive", None, "2871", "0455888227",
     "2006-05-30", "phillipharris87@gmail.com"],
    [1, "Seth", "Knight", "221 Arthur Street", "Bundaberg", "4670", "0441293333",
     "1937-07-12", "sethknight78@icolud.com"],
    [2, "Catherine", "Ferguson", "22 Grace Drive", "Newcastle", "2300", "0475089873",
     "1976-12-02", "t.ferguson86@optusnet.com.au"],
]  # fmt: skip


# --- duplicates ---------------------------------------------------------------------


@pytest.mark.parametrize("rate", [0.0, 0.05, 0.2, 0.4])
def test_duplicate_rate_is_honoured(rate: float) -> None:
    frame = make_customers(5_000, seed=11, duplicate_rate=rate)
    duplicate_rows = int(frame["entity_id"].duplicated().sum())
    assert duplicate_rows == round(5_000 * rate)
    sizes = frame["entity_id"].value_counts()
    pairs = true_pairs(frame["entity_id"])
    assert len(pairs) == int((sizes * (sizes - 1) // 2).sum())
    if rate:
        # 1-3 duplicates per duplicated person, most often one.
        assert sizes.max() <= 4
        assert (sizes == 2).sum() > (sizes == 3).sum() > (sizes == 4).sum()
        assert 1.2 < len(pairs) / duplicate_rows < 1.75
    else:
        assert pairs.empty


def test_high_duplicate_rate_still_gives_n_rows() -> None:
    frame = make_customers(2_000, duplicate_rate=0.9)
    assert len(frame) == 2_000
    assert frame["entity_id"].nunique() == 200


def test_duplicates_differ_but_stay_close(
    pair_frames: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    same = agreement(*pair_frames)
    assert (~same.all(axis=1)).mean() > 0.9
    assert (same["surname"] | same["date_of_birth"]).mean() > 0.5
    # On average most of the eight fields still agree.
    assert same.sum(axis=1).mean() > 5


def one_substitution(left: str, right: str) -> bool:
    return (
        len(left) == len(right)
        and sum(a != b for a, b in zip(left, right, strict=True)) == 1
    )


def test_every_corruption_kind_occurs(
    pair_frames: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    left, right = pair_frames
    rows = list(zip(left.to_dict("records"), right.to_dict("records"), strict=True))
    full_to_short = {full: short for full, short, _ in _wordlists.STREET_TYPES}

    def found(test) -> int:
        return sum(bool(test(a, b) or test(b, a)) for a, b in rows)

    def given_pair(a, b):
        return isinstance(a["given_name"], str) and isinstance(b["given_name"], str)

    def nickname(a, b):
        return given_pair(a, b) and b["given_name"] in _wordlists.NICKNAMES.get(
            a["given_name"], ()
        )

    def initial(a, b):
        return (
            given_pair(a, b)
            and len(b["given_name"]) == 1
            and len(a["given_name"]) > 1
            and a["given_name"][0] == b["given_name"]
        )

    def swapped(a, b):
        return (
            a["given_name"] == b["surname"]
            and a["surname"] == b["given_name"]
            and a["given_name"] != a["surname"]
        )

    def abbreviated(a, b):
        if not (
            isinstance(a["street_address"], str)
            and isinstance(b["street_address"], str)
        ):
            return False
        words = a["street_address"].split(" ")
        short = full_to_short.get(words[-1])
        return (
            short is not None and " ".join([*words[:-1], short]) == b["street_address"]
        )

    def day_month_swapped(a, b):
        if not (
            isinstance(a["date_of_birth"], str) and isinstance(b["date_of_birth"], str)
        ):
            return False
        year, month, day = a["date_of_birth"].split("-")
        return month != day and b["date_of_birth"] == f"{year}-{day}-{month}"

    def phone_digit(a, b):
        return (
            isinstance(a["phone"], str)
            and isinstance(b["phone"], str)
            and one_substitution(a["phone"], b["phone"])
        )

    def surname_typo(a, b):
        return (
            isinstance(a["surname"], str)
            and isinstance(b["surname"], str)
            and a["surname"] != b["surname"]
            and abs(len(a["surname"]) - len(b["surname"])) <= 1
            and a["given_name"] == b["given_name"]
        )

    def blanked(a, b):
        return any(isinstance(a[c], str) and pd.isna(b[c]) for c in TEXT)

    for test in (
        nickname,
        initial,
        swapped,
        abbreviated,
        day_month_swapped,
        phone_digit,
        surname_typo,
        blanked,
    ):
        assert found(test) > 50, test.__name__


# --- hard negatives -----------------------------------------------------------------


def test_families_share_surname_and_address(customers: pd.DataFrame) -> None:
    present = customers.dropna(subset=["surname", "street_address", "city"])
    entities = present.groupby(["surname", "street_address", "city"])[
        "entity_id"
    ].nunique()
    assert (entities >= 2).sum() > 100
    phones = customers.dropna(subset=["phone"]).groupby("phone")["entity_id"].nunique()
    assert (phones >= 2).sum() > 20


def test_unrelated_people_share_birthdays(customers: pd.DataFrame) -> None:
    people = customers.dropna(subset=["date_of_birth"]).drop_duplicates("entity_id")
    entities = people.groupby("date_of_birth")["entity_id"].nunique()
    assert (entities >= 2).sum() > 100


def test_common_names_are_common(customers: pd.DataFrame) -> None:
    people = customers.drop_duplicates("entity_id")
    surnames = people["surname"].value_counts(normalize=True)
    assert "Smith" in surnames.index[:3]
    assert 0.01 < surnames.iloc[0] < 0.06
    given_names = people["given_name"].value_counts(normalize=True)
    assert {"John", "Mary"} & set(given_names.index[:3])
    # ... and a long tail: many names are rare.
    assert given_names.size > 300
    assert (surnames < 0.001).sum() > 100


# --- true_pairs -----------------------------------------------------------------------


def test_true_pairs_matches_reference(customers: pd.DataFrame) -> None:
    sample = customers["entity_id"].iloc[:2_000]
    pairs = true_pairs(sample)
    assert list(pairs.columns) == ["left", "right"]
    assert list(pairs.itertuples(index=False, name=None)) == reference_pairs(sample)
    assert pairs.index.equals(pd.RangeIndex(len(pairs)))


def test_true_pairs_uses_index_labels_in_label_order() -> None:
    ids = pd.Series(
        ["a", "b", "a", None, "b", "a"], index=["z", "y", "x", "w", "v", "u"]
    )
    pairs = true_pairs(ids)
    expected = pd.DataFrame(
        {"left": ["u", "u", "v", "x"], "right": ["x", "z", "y", "z"]}
    )
    assert_frame_equal(pairs, expected, check_dtype=False)


def test_true_pairs_accepts_arrays_and_empty_input() -> None:
    assert true_pairs(np.array([5, 6, 5])).values.tolist() == [[0, 2]]
    empty = true_pairs(pd.Series([], dtype="int64"))
    assert list(empty.columns) == ["left", "right"]
    assert empty.empty


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.integers(0, 6)), max_size=40).flatmap(
        lambda ids: st.tuples(
            st.just(ids),
            st.lists(
                st.integers(-1_000, 1_000),
                min_size=len(ids),
                max_size=len(ids),
                unique=True,
            ),
        )
    )
)
def test_true_pairs_property(data: tuple[list[int | None], list[int]]) -> None:
    ids, labels = data
    series = pd.Series(ids, index=labels, dtype="Int64")
    pairs = true_pairs(series)
    assert list(pairs.itertuples(index=False, name=None)) == reference_pairs(series)


# --- parameters -----------------------------------------------------------------------


def test_duplicate_rate_message() -> None:
    with pytest.raises(ValueError) as error:
        make_customers(10, duplicate_rate=1.5)
    assert str(error.value) == (
        "The 'duplicate_rate' parameter of make_customers must be in [0, 1). "
        "Got 1.5 instead."
    )


@pytest.mark.parametrize(
    ("n", "options", "error", "name"),
    [
        (-1, {}, ValueError, "'n'"),
        (2.5, {}, TypeError, "'n'"),
        (True, {}, TypeError, "'n'"),
        ("10", {}, TypeError, "'n'"),
        (10, {"seed": 1.5}, TypeError, "'seed'"),
        (10, {"seed": True}, TypeError, "'seed'"),
        (10, {"seed": "1"}, TypeError, "'seed'"),
        (10, {"seed": -3}, ValueError, "'seed'"),
        (10, {"duplicate_rate": 1.0}, ValueError, "'duplicate_rate'"),
        (10, {"duplicate_rate": -0.1}, ValueError, "'duplicate_rate'"),
        (10, {"duplicate_rate": float("nan")}, ValueError, "'duplicate_rate'"),
        (10, {"duplicate_rate": "0.2"}, TypeError, "'duplicate_rate'"),
        (10, {"duplicate_rate": True}, TypeError, "'duplicate_rate'"),
    ],
)
def test_bad_parameters_raise(n, options, error, name) -> None:
    with pytest.raises(error, match=name) as caught:
        make_customers(n, **options)
    assert isinstance(caught.value, LshFrameError)
    assert "make_customers" in str(caught.value)
    assert str(caught.value).endswith("instead.")


def test_options_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        make_customers(10, 2)  # type: ignore[misc]


def test_numpy_integers_are_accepted() -> None:
    assert_frame_equal(
        make_customers(np.int64(50), seed=np.int32(4)), make_customers(50, seed=4)
    )


@pytest.mark.parametrize(
    ("entity_ids", "error", "fragment"),
    [
        (pd.DataFrame({"entity_id": [1, 1]}), TypeError, "DataFrame"),
        (np.zeros((2, 2)), ValueError, "one-dimensional"),
        (pd.Series([1, 1], index=[4, 4]), ValueError, "unique"),
    ],
)
def test_true_pairs_bad_input(entity_ids, error, fragment) -> None:
    with pytest.raises(error, match=fragment) as caught:
        true_pairs(entity_ids)
    assert "'entity_ids'" in str(caught.value)


# --- kernels --------------------------------------------------------------------------


def optimal_string_alignment(left: str, right: str) -> int:
    rows, columns = len(left) + 1, len(right) + 1
    distance = [[0] * columns for _ in range(rows)]
    for i in range(rows):
        distance[i][0] = i
    for j in range(columns):
        distance[0][j] = j
    for i in range(1, rows):
        for j in range(1, columns):
            cost = left[i - 1] != right[j - 1]
            distance[i][j] = min(
                distance[i - 1][j] + 1,
                distance[i][j - 1] + 1,
                distance[i - 1][j - 1] + cost,
            )
            if (
                i > 1
                and j > 1
                and left[i - 1] == right[j - 2]
                and left[i - 2] == right[j - 1]
            ):
                distance[i][j] = min(distance[i][j], distance[i - 2][j - 2] + 1)
    return distance[-1][-1]


def test_keyboard_typos_make_exactly_one_edit() -> None:
    words = np.array(
        [*_wordlists.SURNAMES, "J", "12 Harbour Street", "4/17 Kings Road", "Zoë"]
    )
    edited = corruption._keyboard_typos(words, population._Random(2))
    for before, after in zip(words.tolist(), edited.tolist(), strict=True):
        assert optimal_string_alignment(before, after) == 1, (before, after)
        assert after


def test_keyboard_typos_use_neighbouring_keys() -> None:
    words = np.array(["Mmmm"] * 500)
    edited = corruption._keyboard_typos(words, population._Random(3)).tolist()
    substituted = [word for word in edited if len(word) == 4 and word != "Mmmm"]
    assert substituted
    letters = {letter for word in substituted for letter in word.lower()}
    assert letters <= {"m", "n", "j", "k"}


def test_digit_errors_keep_prefix_and_length() -> None:
    phones = np.array(["0412345678", "0298765432", "0400000000"] * 100)
    edited = corruption._digit_errors(phones, population._Random(4), keep=2)
    for before, after in zip(phones.tolist(), edited.tolist(), strict=True):
        assert after != before
        assert after[:2] == before[:2]
        assert len(after) == 10 and after.isdigit()


def test_birth_day_shift_swaps_day_and_month_or_moves_a_day() -> None:
    dates = np.array(["1980-03-07", "1980-03-03", "1999-12-25", "2001-11-12"])
    days = (dates.astype("datetime64[D]") - np.datetime64("1970-01-01")).astype(int)
    shifted = corruption._shift_birth_days(days, population._Random(5))
    result = (np.datetime64("1970-01-01") + shifted).astype(str).tolist()
    assert result[0] == "1980-07-03"
    assert result[1] in {"1980-03-02", "1980-03-04"}
    assert result[2] in {"1999-12-24", "1999-12-26"}
    assert result[3] == "2001-12-11"


# --- word lists and docs ------------------------------------------------------------


def test_word_lists_are_distinct_and_sized() -> None:
    given_names = _wordlists.MALE_GIVEN_NAMES + _wordlists.FEMALE_GIVEN_NAMES
    for words in (
        given_names,
        _wordlists.SURNAMES,
        _wordlists.STREET_NAMES,
        [full for full, _, _ in _wordlists.STREET_TYPES],
        [city for city, _ in _wordlists.CITIES],
        [domain for domain, _ in _wordlists.EMAIL_DOMAINS],
    ):
        assert len(set(words)) == len(words)
    assert len(given_names) >= 400
    assert len(_wordlists.SURNAMES) >= 400
    assert len(_wordlists.STREET_NAMES) >= 200
    assert len(_wordlists.STREET_TYPES) == 20
    assert len(_wordlists.CITIES) >= 150
    assert set(_wordlists.NICKNAMES) <= set(given_names)
    assert all(postcode.isdigit() for _, postcode in _wordlists.CITIES)


def test_keyboard_neighbours_are_mutual() -> None:
    neighbours = _wordlists.KEYBOARD_NEIGHBOURS
    for key, keys in neighbours.items():
        if key.isalpha():
            for near in keys:
                assert key in neighbours[near], (key, near)


def test_docstring_examples() -> None:
    result = doctest.testmod(customers_module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
