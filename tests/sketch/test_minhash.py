"""MinHash signatures: accuracy, determinism, storage and every bad input."""

import hashlib
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import reference

import lsh_frame as lf
from lsh_frame._kernels import minhash as kernels
from lsh_frame._kernels import sketch
from lsh_frame.sketch.minhash import signer
from lsh_frame.sketch.minhash_arrow import signature_matrix

NAMES = pd.Series(
    ["john smith", "jon smith", "smith john", "mary o'brien", "東京タワー", "Zoë",
     None, "", "ab", "  "],
    name="name",
)  # fmt: skip


def sets_with_jaccard(rng, union_size, shared):
    """Two random token sets whose Jaccard similarity is shared / union_size."""
    tokens = rng.integers(0, 2**64, size=union_size, dtype=np.uint64)
    only = (union_size - shared) // 2
    left = tokens[: shared + only]
    right = np.concatenate([tokens[:shared], tokens[shared + only :]])
    return left, right


@pytest.mark.parametrize("scheme", ["affine32", "mersenne61", "fss32"])
@pytest.mark.parametrize(
    ("union_size", "shared"), [(40, 4), (40, 20), (60, 48), (200, 100)]
)
def test_estimate_is_unbiased(scheme, union_size, shared):
    """Mean estimate over many pairs is within 3 standard errors of the truth."""
    rng = np.random.default_rng(union_size * 1000 + shared)
    pairs, num_perm = 400, 128
    truth = shared / union_size
    sets = [s for _ in range(pairs) for s in sets_with_jaccard(rng, union_size, shared)]
    values = np.concatenate(sets)
    offsets = np.concatenate([[0], np.cumsum([s.size for s in sets])]).astype(np.int64)
    if scheme == "fss32":
        out = np.zeros((len(sets), num_perm), dtype=np.uint32)
        a, b = sketch.parameters(9, num_perm)
        sketch.sketch(kernels.fold32(values), offsets, a, b, out)
        permute = None
    elif scheme == "affine32":
        tokens = kernels.fold32(values)
        permute = kernels.affine32_permute(*kernels.affine32_parameters(9, num_perm))
        out = np.zeros((len(sets), num_perm), dtype=np.uint32)
    else:
        tokens = kernels.reduce_mersenne61(values)
        permute = kernels.mersenne61_permute(
            *kernels.mersenne61_parameters(9, num_perm)
        )
        out = np.zeros((len(sets), num_perm), dtype=np.uint64)
    if permute is not None:
        kernels.minhash(tokens, offsets, permute, out)
    estimates = (out[0::2] == out[1::2]).mean(axis=1)
    standard_error = np.sqrt(truth * (1 - truth) / num_perm / pairs)
    assert abs(estimates.mean() - truth) < 3 * standard_error
    # The spread matches independent permutations (not correlated ones).
    binomial = np.sqrt(truth * (1 - truth) / num_perm)
    assert estimates.std() < 1.25 * binomial
    if scheme == "fss32" and union_size < num_perm:
        # Short sets are sampled without replacement: less spread than that.
        assert estimates.std() < 0.85 * binomial


@pytest.mark.parametrize("scheme", ["affine32", "fss32"])
def test_bands_collide_as_the_s_curve_says(scheme):
    # A band of r slots agrees with probability J**r: each slot with
    # probability J and (nearly) independently. Measured over many pairs of
    # short sets, where the sketch's slots are least independent.
    rng = np.random.default_rng(17)
    num_perm, pairs, truth = 128, 1_500, 0.75
    sets = [s for _ in range(pairs) for s in sets_with_jaccard(rng, 40, 30)]
    values = np.concatenate(sets)
    offsets = np.concatenate([[0], np.cumsum([s.size for s in sets])]).astype(np.int64)
    config = lf.MinHashConfig(num_perm=num_perm, scheme=scheme)
    out = np.zeros((len(sets), num_perm), dtype=np.uint32)
    signer(config)(values, offsets, out)
    agree = out[0::2] == out[1::2]
    for rows in (2, 4, 8):
        bands = agree.reshape(pairs, -1, rows).all(axis=2).mean(axis=1)
        expected = truth**rows
        # Bands of one pair are not independent: the spread over pairs bounds it.
        error = bands.std() / np.sqrt(pairs)
        assert abs(bands.mean() - expected) < 4 * error + 0.05 * expected


def test_estimate_tracks_exact_jaccard_of_text():
    rng = np.random.default_rng(3)
    alphabet = np.array(list("abcdefghij "))
    base = ["".join(rng.choice(alphabet, 30)) for _ in range(300)]
    edited = [s[:10] + "".join(rng.choice(alphabet, 6)) + s[16:] for s in base]
    left = lf.minhash(pd.Series(base), num_perm=256)
    right = lf.minhash(pd.Series(edited), num_perm=256)
    estimate = lf.estimate_jaccard(left, right).to_numpy()
    norm = lambda s: " ".join(s.split())  # noqa: E731
    exact = np.array(
        [
            reference.jaccard(
                set(reference.char_shingles(norm(a), 3)),
                set(reference.char_shingles(norm(b), 3)),
            )
            for a, b in zip(base, edited, strict=True)
        ]
    )
    assert np.abs(estimate - exact).mean() < 0.035


def test_output_contract():
    frame = NAMES.to_frame().set_index(pd.Index(list("abcdefghij"), name="id"))
    result = frame.lsh.minhash("name", num_perm=32)
    assert result.name == "name__minhash"
    assert result.index.equals(frame.index)
    config = result.dtype.pyarrow_dtype.config
    assert config == lf.MinHashConfig(num_perm=32)
    assert result.dtype.pyarrow_dtype.storage_type == pa.list_(pa.uint32(), 32)
    # Missing, empty, blank and shorter-than-k values get no signature.
    assert result.isna().tolist() == [False] * 6 + [True] * 4
    single = result.iloc[0]
    assert isinstance(single, lf.MinHashSignature)
    assert len(single) == 32 and single.config == config


def test_missing_values_never_look_similar():
    result = lf.minhash(pd.Series(["", None, "  ", ""]))
    estimates = lf.estimate_jaccard(result, result.iloc[::-1].reset_index(drop=True))
    assert estimates.isna().all()


def test_mersenne61_is_uint64_below_the_prime():
    result = lf.minhash(NAMES, scheme="mersenne61", num_perm=64)
    matrix, valid = signature_matrix(result)
    assert matrix.dtype == np.uint64
    assert (matrix[valid] < (1 << 61) - 1).all()


# Golden vectors: the first signature values of fixed strings with seed 1. A
# change here changes every stored signature; bump FORMAT_VERSION if intended.
GOLDEN = {
    "affine32": {
        "john smith": [276600922, 1097513140, 209381286, 202754554,
                       66708717, 390197968, 547576807, 1082504072],
        "東京タワー": [618263109, 8878958, 1714205450, 1195956255,
                       2063207610, 570699183, 2306523124, 71112360],
    },
    "fss32": {
        "john smith": [561165318, 445798810, 107997899, 45750241,
                       210877534, 1250707085, 934546818, 62579900],
        "東京タワー": [784328051, 1935734392, 995047581, 194716777,
                       1381642347, 3145323367, 144410771, 1993164946],
    },
    "mersenne61": {
        "john smith": [51175701835947377, 350629568516600667, 367716489752440027,
                       423017935093572550, 252067500971115320, 290856949007132920,
                       212210483253945335, 124238636784513881],
        "東京タワー": [441577584223310169, 778507817841655477, 77757484230869449,
                       419813278999021141, 293864929021012632, 557351333100917290,
                       984488706127100745, 319043619099404553],
    },
}  # fmt: skip


@pytest.mark.parametrize("scheme", ["affine32", "mersenne61", "fss32"])
def test_golden_vectors(scheme):
    result = lf.minhash(pd.Series(list(GOLDEN[scheme])), num_perm=8, scheme=scheme)
    matrix, _ = signature_matrix(result)
    assert {
        k: row.tolist() for k, row in zip(GOLDEN[scheme], matrix, strict=True)
    } == GOLDEN[scheme]


def test_golden_shingle_hashes():
    hashes = lf.shingles(pd.Series(["Smith"])).iloc[0]
    assert list(hashes) == GOLDEN_SHINGLES


# "smith" → "smi", "mit", "ith"; sorted hashes, also checked by the reference.
GOLDEN_SHINGLES = [3929493443007885336, 3947215531560384666, 4039312493965778108]


def digest(series):
    matrix, valid = signature_matrix(series)
    return hashlib.sha256(matrix[valid].tobytes() + valid.tobytes()).hexdigest()


def test_identical_in_a_separate_process():
    code = textwrap.dedent(
        """
        import hashlib, pandas as pd, lsh_frame as lf
        from lsh_frame.sketch.minhash_arrow import signature_matrix
        values = pd.Series(%r, name="name")
        for scheme in ("affine32", "mersenne61", "fss32"):
            matrix, valid = signature_matrix(lf.minhash(values, scheme=scheme, seed=7))
            print(hashlib.sha256(matrix[valid].tobytes() + valid.tobytes()).hexdigest())
        """
        % [None if pd.isna(value) else value for value in NAMES]
    )
    output = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "123", "PATH": ""},
    ).stdout.split()
    assert output == [
        digest(lf.minhash(NAMES, scheme=scheme, seed=7))
        for scheme in ("affine32", "mersenne61", "fss32")
    ]


@pytest.mark.parametrize("scheme", ["affine32", "fss32"])
def test_independent_of_row_order_chunks_and_threads(scheme):
    customers = lf.datasets.make_customers(3000, seed=4)
    text = customers["given_name"].str.cat(
        customers[["surname", "city"]], sep=" ", na_rep=""
    )
    baseline = lf.minhash(text, scheme=scheme)
    shuffled = text.sample(frac=1.0, random_state=0)
    pd.testing.assert_series_equal(
        lf.minhash(shuffled, scheme=scheme).loc[text.index], baseline
    )
    for chunk_size, workers in [(1, 1), (97, 2), (100_000, 1)]:
        result = lf.minhash(text, chunk_size=chunk_size, workers=workers, scheme=scheme)
        pd.testing.assert_series_equal(result, baseline)


def test_a_sketch_is_comparable_only_with_sketches():
    classic = lf.minhash(NAMES, num_perm=64)
    sketched = lf.minhash(NAMES, num_perm=64, scheme="fss32")
    assert sketched.dtype.pyarrow_dtype.storage_type == pa.list_(pa.uint32(), 64)
    assert sketched.isna().tolist() == classic.isna().tolist()
    with pytest.raises(lf.SignatureMismatchError, match="'affine32' vs 'fss32'"):
        lf.estimate_jaccard(classic, sketched)
    estimate = lf.estimate_jaccard(sketched, sketched.iloc[0])
    assert estimate.iloc[0] == 1.0 and estimate.iloc[1] > 0.3


def test_seed_changes_signatures():
    first, second = lf.minhash(NAMES, seed=1), lf.minhash(NAMES, seed=2)
    assert digest(first) != digest(second)
    with pytest.raises(lf.SignatureMismatchError, match="seed=1 vs 2"):
        lf.estimate_jaccard(first, second)


OLD_PARQUET = int(pa.__version__.split(".")[0]) < 26


@pytest.mark.parametrize("fmt", ["parquet", "feather"])
@pytest.mark.parametrize("with_missing", [False, True])
def test_round_trip_keeps_values_and_parameters(tmp_path, fmt, with_missing):
    if fmt == "parquet" and with_missing and OLD_PARQUET:
        pytest.skip("Parquet keeps missing fixed-size lists from pyarrow 26 on (docs)")
    frame = (NAMES if with_missing else NAMES.iloc[:6]).to_frame()
    names = frame["name"]
    frame["sig"] = lf.minhash(names, num_perm=16, seed=5, k=2, strip_accents=True)
    frame["ref"] = lf.minhash(names, num_perm=8, scheme="mersenne61")
    assert frame["sig"].hasnans == with_missing
    path = tmp_path / f"signatures.{fmt}"
    getattr(frame, f"to_{fmt}")(path)
    loaded = getattr(pd, f"read_{fmt}")(path)
    for column in ("sig", "ref"):
        assert loaded[column].dtype == frame[column].dtype
        assert (
            signature_matrix(loaded[column])[0].dtype
            == signature_matrix(frame[column])[0].dtype
        )
        assert (
            loaded[column].dtype.pyarrow_dtype.config
            == frame[column].dtype.pyarrow_dtype.config
        )
        assert digest(loaded[column]) == digest(frame[column])
    assert lf.estimate_jaccard(loaded["sig"], frame["sig"]).dropna().eq(1.0).all()


def test_sliced_and_concatenated_signatures_read_correctly():
    result = lf.minhash(NAMES)
    tail = result.iloc[3:]
    matrix, valid = signature_matrix(tail)
    full, full_valid = signature_matrix(result)
    np.testing.assert_array_equal(matrix[valid], full[3:][full_valid[3:]])
    doubled = pd.concat([result, result])
    assert lf.estimate_jaccard(doubled, doubled).dropna().eq(1.0).all()


class TestEstimateJaccard:
    def test_series_against_one_signature(self):
        result = lf.minhash(NAMES)
        against_first = lf.estimate_jaccard(result, result.iloc[0])
        assert against_first.iloc[0] == 1.0
        assert 0.3 < against_first.iloc[1] < 0.9  # "jon smith"
        assert against_first.iloc[4] < 0.1
        assert against_first.iloc[6:].isna().all()
        pd.testing.assert_series_equal(
            lf.estimate_jaccard(result.iloc[0], result), against_first
        )

    def test_two_single_signatures(self):
        result = lf.minhash(NAMES)
        value = lf.estimate_jaccard(result.iloc[0], result.iloc[1])
        assert isinstance(value, float)
        assert value == lf.estimate_jaccard(
            np.asarray(result.iloc[0]), list(result.iloc[1])
        )

    def test_mismatches_say_how_to_fix(self):
        a = lf.minhash(NAMES, num_perm=64)
        with pytest.raises(
            lf.SignatureMismatchError, match=r"num_perm=128 vs 64.*same MinHashConfig"
        ):
            lf.estimate_jaccard(lf.minhash(NAMES), a)
        with pytest.raises(lf.SignatureMismatchError, match=r"shingle.k=3 vs 2"):
            lf.estimate_jaccard(lf.minhash(NAMES), lf.minhash(NAMES, k=2))
        with pytest.raises(
            lf.SignatureMismatchError, match=r"strip_accents=False vs True"
        ):
            lf.estimate_jaccard(
                lf.minhash(NAMES), lf.minhash(NAMES, strip_accents=True)
            )
        with pytest.raises(lf.SignatureMismatchError, match="same length"):
            lf.estimate_jaccard(a, a.iloc[:3])
        with pytest.raises(lf.SignatureMismatchError, match="num_perm=64"):
            lf.estimate_jaccard(a, np.zeros(128, dtype=np.uint32))
        with pytest.raises(lf.SignatureMismatchError, match="different lengths"):
            lf.estimate_jaccard(np.zeros(3, np.uint32), np.zeros(4, np.uint32))
        with pytest.raises(lf.SignatureMismatchError, match="num_perm=128 vs 64"):
            lf.estimate_jaccard(lf.minhash(NAMES).iloc[0], a.iloc[0])

    def test_non_signatures_are_rejected(self):
        with pytest.raises(lf.ColumnTypeError, match="signature Series"):
            lf.estimate_jaccard(NAMES, NAMES)
        with pytest.raises(lf.ConfigTypeError, match="1-D array of unsigned"):
            lf.estimate_jaccard("abc", lf.minhash(NAMES))


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        (
            {"num_perm": 0},
            lf.ConfigError,
            "'num_perm' parameter of MinHashConfig must be in \\[1, 8192\\]. Got 0",
        ),
        ({"num_perm": 12.0}, lf.ConfigTypeError, "'num_perm'.*must be an int"),
        ({"k": 0}, lf.ConfigError, "'k' parameter"),
        ({"seed": 1.5}, lf.ConfigTypeError, "'seed'.*must be an int. Got 1.5"),
        ({"seed": True}, lf.ConfigTypeError, "'seed'.*must be an int. Got True"),
        ({"seed": "1"}, lf.ConfigTypeError, "'seed'"),
        ({"seed": -1}, lf.ConfigError, "'seed'.*>= 0"),
        (
            {"scheme": "fast"},
            lf.ConfigError,
            "'scheme'.*'affine32', 'mersenne61', 'fss32'",
        ),
        ({"kind": "letters"}, lf.ConfigError, "'kind'"),
        ({"chunk_size": 0}, lf.ConfigError, "'chunk_size'"),
        ({"workers": 0}, lf.ConfigError, "'workers'"),
        ({"num_perms": 64}, lf.ConfigTypeError, "unexpected parameter.*num_perms"),
        (
            {"config": lf.MinHashConfig(), "seed": 2},
            lf.ConfigError,
            "either a MinHashConfig",
        ),
        ({"config": {"seed": 2}}, lf.ConfigTypeError, "must be a MinHashConfig"),
    ],
)
def test_bad_parameters(options, error, message):
    with pytest.raises(error, match=message):
        lf.minhash(NAMES, **options)


def test_config_object_equals_keywords():
    config = lf.MinHashConfig(
        num_perm=16, seed=3, shingle=lf.ShingleConfig(kind="word")
    )
    by_config = lf.minhash(NAMES, config=config)
    by_keywords = lf.minhash(NAMES, num_perm=16, seed=3, kind="word")
    pd.testing.assert_series_equal(by_config, by_keywords)


def test_numpy_integers_are_accepted():
    result = lf.minhash(NAMES, num_perm=np.int64(16), seed=np.uint8(3))
    assert result.dtype.pyarrow_dtype.config.seed == 3


def test_values_must_be_a_series():
    with pytest.raises(lf.ConfigTypeError, match="pandas Series"):
        lf.minhash(NAMES.tolist())


def test_empty_and_one_row_inputs():
    empty = lf.minhash(pd.Series([], dtype="str", name="x"))
    assert len(empty) == 0 and empty.dtype.pyarrow_dtype.config.num_perm == 128
    one = lf.minhash(pd.Series(["solo"]))
    assert one.notna().all()


def test_duplicate_index_labels_are_kept_positionally():
    values = pd.Series(["ann lee", "bob ray", "ann lee"], index=[7, 7, 8])
    result = lf.minhash(values)
    assert result.index.tolist() == [7, 7, 8]
    assert lf.estimate_jaccard(result.iloc[0], result.iloc[2]) == 1.0
    assert lf.estimate_jaccard(result.iloc[0], result.iloc[1]) < 0.2


def test_repeated_values_are_signed_once_and_copied_exactly():
    # Above a few thousand rows, a column of repeating values is signed per
    # distinct value; rows must get exactly what signing them alone gives.
    from lsh_frame.sketch.minhash_arrow import signature_matrix

    values = pd.Series(["ann lee", "bob", None, "", "ann  lee", "Zoë"] * 1_000)
    many, many_valid = signature_matrix(lf.minhash(values, seed=5))
    few, few_valid = signature_matrix(lf.minhash(values.iloc[:6], seed=5))
    np.testing.assert_array_equal(many, np.tile(few, (1_000, 1)))
    np.testing.assert_array_equal(many_valid, np.tile(few_valid, 1_000))
    assert not many_valid[2] and not many_valid[3]


# -- in_order: work on several threads, results in order ----------------------


def test_in_order_gives_every_result_in_order_on_several_threads():
    import threading
    import time

    from lsh_frame.sketch.minhash import in_order

    seen = set()

    def work(item):
        seen.add(threading.get_ident())
        time.sleep(0.002 * (item % 3))  # later items often finish first
        return item * item

    items = list(range(40))
    assert list(in_order(work, items, workers=4)) == [i * i for i in items]
    assert len(seen) > 1
    assert list(in_order(work, items, workers=1)) == [i * i for i in items]
    assert list(in_order(work, [], workers=4)) == []


def test_in_order_keeps_few_results_under_way_and_stops_when_the_reader_does():
    import threading

    from lsh_frame.sketch.minhash import in_order

    lock = threading.Lock()
    started = []

    def work(item):
        with lock:
            started.append(item)
        return item

    results = in_order(work, list(range(100)), workers=2)
    taken = [next(results) for _ in range(3)]
    results.close()  # the reader stops: nothing more is started
    assert taken == [0, 1, 2]
    assert len(started) <= 3 + 2 * 2


def test_in_order_raises_the_error_of_an_item():
    from lsh_frame.sketch.minhash import in_order

    def work(item):
        if item == 5:
            raise ValueError("item 5")
        return item

    results = in_order(work, list(range(20)), workers=2)
    assert [next(results) for _ in range(5)] == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="item 5"):
        next(results)
