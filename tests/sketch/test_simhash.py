"""SimHash fingerprints and the exact Hamming search, against brute force."""

import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lsh_frame as lf
from lsh_frame._kernels import simhash as kernels
from lsh_frame.sketch.simhash import fingerprint_codes

VALUES = [
    "the quick brown fox jumps over the lazy dog",
    "the quick brown fox jumped over the lazy dog",
    "an entirely different sentence about something else",
    None,
    "",
    "Zoë and 東京 in one line",
]
TEXT = pd.Series(VALUES, name="text")


# ----------------------------------------------------------------------------
# The fingerprint kernel against a per-bit Python reference


def reference_fingerprint(features, weights=None):
    """Charikar's definition, one bit at a time."""
    value = 0
    for bit in range(64):
        total = sum(
            (1 if (int(f) >> bit) & 1 else -1) * (1 if weights is None else int(w))
            for f, w in zip(
                features,
                weights if weights is not None else [1] * len(features),
                strict=True,
            )
        )
        if total > 0:
            value |= 1 << bit
    return value


@given(
    lengths=st.lists(st.integers(0, 300), min_size=1, max_size=6),
    weighted=st.booleans(),
    seed=st.integers(0, 2**32),
)
def test_fingerprint_kernel_matches_reference(lengths, weighted, seed):
    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    hashes = rng.integers(0, 2**64, size=offsets[-1], dtype=np.uint64)
    weights = (
        rng.integers(1, 256, size=hashes.size).astype(np.uint64) if weighted else None
    )
    tag = np.uint64(seed)
    result = kernels.fingerprints(hashes, offsets, bits=64, seed_tag=tag,
                                  weights=weights)  # fmt: skip
    (features,) = kernels.token_features(hashes, tag, 1)
    for row in range(len(lengths)):
        part = slice(offsets[row], offsets[row + 1])
        expected = reference_fingerprint(
            features[part], None if weights is None else weights[part]
        )
        assert int(result[row, 0]) == expected


def test_bits_differ_with_probability_angle_over_pi():
    """Charikar: P(bit differs) = θ / π, within binomial bounds."""
    rng = np.random.default_rng(3)
    shared, only = 60, 40  # two token sets: cosine = 60 / 100
    pairs = 300
    sets = []
    for _ in range(pairs):
        tokens = rng.integers(0, 2**64, size=shared + 2 * only, dtype=np.uint64)
        sets += [tokens[: shared + only], np.r_[tokens[:shared], tokens[-only:]]]
    hashes = np.concatenate(sets)
    offsets = np.concatenate([[0], np.cumsum([s.size for s in sets])]).astype(np.int64)
    prints = kernels.fingerprints(hashes, offsets, bits=64, seed_tag=np.uint64(1))
    differing = kernels.hamming(prints[0::2], prints[1::2]).sum()
    trials = pairs * 64
    expected = np.arccos(shared / (shared + only)) / np.pi
    bound = 4 * np.sqrt(expected * (1 - expected) / trials)
    assert abs(differing / trials - expected) < bound


# ----------------------------------------------------------------------------
# The public function


def test_simhash_column():
    result = lf.simhash(TEXT)
    assert result.name == "text__simhash"
    assert result.index.equals(TEXT.index)
    assert result.isna().tolist() == [False, False, False, True, True, False]
    assert isinstance(result.iloc[0], int)
    distances = lf.hamming_distance(result, result.iloc[0])
    assert distances.iloc[0] == 0
    assert distances.iloc[1] < distances.iloc[2]
    assert distances.iloc[3:5].isna().all()


def test_golden_fingerprints_for_seed_1():
    """Pins the hashes: a change in tokens, hashing or bit order shows here."""
    result = lf.simhash(TEXT.iloc[:3])
    assert result.tolist() == [
        1893010999865730643,
        1965068557446770193,
        1447925349066295765,
    ]


def test_deterministic_across_processes():
    script = textwrap.dedent(
        f"""
        import pandas as pd, lsh_frame as lf
        text = pd.Series({VALUES!r})
        for kind, bits in [("word", 64), ("char", 128), ("word", 32)]:
            print(lf.simhash(text, kind=kind, bits=bits, weights="idf").tolist())
        """
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": str(seed), "PATH": ""},
        ).stdout
        for seed in (1, 2)
    }
    assert len(outputs) == 1
    here = "".join(
        f"{lf.simhash(TEXT, kind=kind, bits=bits, weights='idf').tolist()}\n"
        for kind, bits in [("word", 64), ("char", 128), ("word", 32)]
    )
    assert outputs == {here}


@pytest.mark.parametrize("bits", [32, 64, 128])
def test_bits(bits):
    result = lf.simhash(TEXT, bits=bits)
    values = [v for v in result.tolist() if v is not pd.NA]
    assert all(0 <= v < 2**bits for v in values)
    assert max(v.bit_length() for v in values) > bits - 8  # the top bits are used
    assert lf.hamming_distance(result, result).dropna().eq(0).all()


def test_seed_kind_and_length_change_fingerprints():
    base = lf.simhash(TEXT).tolist()
    for options in ({"seed": 2}, {"kind": "char"}, {"k": 2}, {"bits": 32}):
        assert lf.simhash(TEXT, **options).tolist() != base, options


def test_idf_weights_favour_rare_words():
    # 'common' is in every record: with IDF its weight is the least, so the
    # records' own words decide more bits than with plain counts.
    rare = pd.Series([f"common common common common word{i}" for i in range(200)])
    counted = fingerprint_codes(lf.simhash(rare)).matrix[:, 0]
    weighted = fingerprint_codes(lf.simhash(rare, weights="idf")).matrix[:, 0]
    spread_counted = np.bitwise_count(counted ^ counted[0]).mean()
    spread_weighted = np.bitwise_count(weighted ^ weighted[0]).mean()
    assert spread_weighted > spread_counted + 5


def test_chunks_and_threads_do_not_change_results():
    text = pd.Series(
        [f"record {i} with words {i % 7} and {i % 13}" for i in range(500)]
    )
    baseline = lf.simhash(text, weights="idf")
    for chunk_size, workers in [(7, 1), (64, 2), (10_000, 3)]:
        pd.testing.assert_series_equal(
            lf.simhash(text, weights="idf", chunk_size=chunk_size, workers=workers),
            baseline,
        )


def test_automatic_chunks_hold_about_a_mebibyte_of_text():
    import pyarrow as pa

    from lsh_frame.sketch.minhash import (
        CHUNK_TEXT_BYTES,
        DEFAULT_CHUNK_SIZE,
        chunk_rows,
    )

    def rows(length, n=50_000):
        return chunk_rows(pa.array(["x" * length] * n, pa.large_string()), None)

    assert rows(1_000) == CHUNK_TEXT_BYTES // 1_000
    assert rows(10) == DEFAULT_CHUNK_SIZE  # short text: the row cap
    assert rows(100_000, n=20) == 256  # very long text: the row floor
    assert rows(0) == DEFAULT_CHUNK_SIZE  # nothing but empty strings
    assert chunk_rows(pa.array([], pa.large_string()), None) == DEFAULT_CHUNK_SIZE
    assert chunk_rows(pa.array(["abc"], pa.large_string()), 5) == 5
    # Long text is cut into several chunks, and that does not change results.
    long = pd.Series(
        [" ".join(["word"] * (400 + i % 50)) + f" {i}" for i in range(800)]
    )
    assert rows(2_000) < len(long)
    pd.testing.assert_series_equal(lf.simhash(long), lf.simhash(long, chunk_size=10**6))


@pytest.mark.parametrize("fmt", ["parquet", "feather"])
def test_round_trip_keeps_values_and_configuration(tmp_path, fmt):
    frame = TEXT.to_frame()
    frame["f64"] = lf.simhash(TEXT, seed=7, weights="idf")
    frame["f128"] = lf.simhash(TEXT, bits=128, kind="char", k=4)
    path = tmp_path / f"prints.{fmt}"
    getattr(frame, f"to_{fmt}")(path)
    loaded = getattr(pd, f"read_{fmt}")(path)
    for column in ("f64", "f128"):
        assert loaded[column].dtype == frame[column].dtype
        assert loaded[column].dtype.pyarrow_dtype.config == (
            frame[column].dtype.pyarrow_dtype.config
        )
        assert loaded[column].tolist() == frame[column].tolist()


def test_accessor_leaves_the_frame_alone():
    frame = pd.DataFrame({"text": TEXT, "other": range(len(TEXT))})
    before = frame.copy()
    result = frame.lsh.simhash("text")
    pairs = frame.lsh.simhash_pairs("text", distance=16)
    pd.testing.assert_frame_equal(frame, before)
    pd.testing.assert_series_equal(result, lf.simhash(TEXT))
    assert (0, 1) in set(zip(pairs["left"], pairs["right"], strict=True))


# ----------------------------------------------------------------------------
# Bad input


def test_bad_parameters():
    with pytest.raises(lf.ConfigError, match=r"'bits' parameter of SimHashConfig.*48"):
        lf.simhash(TEXT, bits=48)
    with pytest.raises(lf.ConfigError, match=r"'weights'.*'tfidf'"):
        lf.simhash(TEXT, weights="tfidf")
    with pytest.raises(lf.ConfigTypeError, match=r"unexpected parameter.*num_perm"):
        lf.simhash(TEXT, num_perm=3)
    with pytest.raises(lf.ConfigTypeError, match="must be a pandas Series"):
        lf.simhash(TEXT.tolist())
    with pytest.raises(lf.ConfigError, match="both 'config' and 'bits'"):
        lf.simhash(TEXT, config=lf.SimHashConfig(), bits=32)
    codes = np.arange(10, dtype=np.uint64)
    with pytest.raises(lf.ConfigError, match=r"'distance'.*in \[0, 16\]. Got 17"):
        lf.hamming_pairs(codes, distance=17)
    with pytest.raises(lf.ConfigError, match=r"'distance'.*Got -1"):
        lf.hamming_pairs(codes, distance=-1)
    with pytest.raises(lf.ConfigError, match="'top'"):
        lf.hamming_nearest(codes, codes, top=0)


@pytest.mark.parametrize(
    "values",
    [TEXT, pd.Series([1.5, 2.0]), ["a"], np.array([1.0, 2.0]), pd.Series([True])],
)
def test_not_fingerprints(values):
    with pytest.raises(lf.ColumnTypeError, match="must hold fingerprints"):
        lf.hamming_pairs(values)


def test_mismatched_configurations_raise():
    first, second = lf.simhash(TEXT), lf.simhash(TEXT, seed=2)
    with pytest.raises(lf.SignatureMismatchError, match="seed=1 vs 2"):
        lf.hamming_pairs(first, other=second)
    with pytest.raises(lf.SignatureMismatchError, match="seed=1 vs 2"):
        lf.hamming_distance(first, second)
    wide = lf.simhash(TEXT, bits=128)
    with pytest.raises(lf.SignatureMismatchError):
        lf.hamming_nearest(first, wide)
    two_words = np.zeros((3, 2), dtype=np.uint64)
    with pytest.raises(lf.SignatureMismatchError, match="64 and 128 bits"):
        lf.hamming_pairs(np.zeros(3, dtype=np.uint64), other=two_words)


def test_fingerprint_column_with_options_raises():
    frame = pd.DataFrame({"prints": lf.simhash(TEXT)})
    with pytest.raises(lf.ConfigError, match="holds fingerprints already"):
        frame.lsh.simhash_pairs("prints", bits=32)


def test_max_pairs():
    codes = np.zeros(100, dtype=np.uint64)  # 4,950 identical pairs
    with pytest.raises(lf.TooManyPairsError, match="at least 4,950 pairs"):
        lf.hamming_pairs(codes, max_pairs=1000)
    near = np.arange(100, dtype=np.uint64) << np.uint64(20)  # distinct, all near
    with pytest.raises(lf.TooManyPairsError, match="max_pairs=10"):
        lf.hamming_pairs(near, distance=6, max_pairs=10)
    assert len(lf.hamming_pairs(codes, max_pairs=4950)) == 4950


# ----------------------------------------------------------------------------
# The search against brute force


def brute_force(left, right, distance):
    if right is None:
        words = left
        d = sum(
            np.bitwise_count(words[:, None, w] ^ words[None, :, w]).astype(int)
            for w in range(words.shape[1])
        )
        i, j = np.nonzero(np.triu(d <= distance, 1))
    else:
        d = sum(
            np.bitwise_count(left[:, None, w] ^ right[None, :, w]).astype(int)
            for w in range(left.shape[1])
        )
        i, j = np.nonzero(d <= distance)
    return {(int(a), int(b), int(d[a, b])) for a, b in zip(i, j, strict=True)}


def planted(rng, n, words, bits, max_flips):
    """Random fingerprints, then near copies (and exact copies) of some."""
    codes = rng.integers(0, 2**64, size=(n, words), dtype=np.uint64)
    if bits == 32:
        codes &= np.uint64(0xFFFFFFFF)
    copies = codes[rng.integers(0, n, size=n // 2)].copy()
    flips = rng.integers(0, max_flips + 1, size=copies.shape[0])
    for row, count in enumerate(flips):
        for bit in rng.choice(bits, size=count, replace=False):
            copies[row, bit // 64] ^= np.uint64(1) << np.uint64(bit % 64)
    codes = np.concatenate([codes, copies])
    return codes[rng.permutation(codes.shape[0])]


def found(frame):
    return set(zip(frame["left"], frame["right"], frame["distance"], strict=True))


search_cases = st.fixed_dictionaries(
    {
        "seed": st.integers(0, 2**32),
        "n": st.integers(0, 120),
        "shape": st.sampled_from([(1, 64), (1, 32), (2, 128)]),
        "distance": st.integers(0, 8),
        "forced_blocks": st.booleans(),
    }
)


@given(search_cases)
def test_dedupe_equals_brute_force(case):
    rng = np.random.default_rng(case["seed"])
    words, bits = case["shape"]
    codes = planted(rng, case["n"], words, bits, case["distance"] + 2)
    blocks = (
        case["distance"] + 1 + int(rng.integers(0, 4))
        if case["forced_blocks"]
        else None
    )
    array = codes[:, 0] if words == 1 else codes
    if bits == 32:
        series = pd.Series(codes[:, 0])
        codes_in = series
    else:
        codes_in = array
    result = lf.hamming_pairs(codes_in, distance=case["distance"], blocks=blocks)
    assert found(result) == brute_force(codes, None, case["distance"])
    assert (result["left"] < result["right"]).all()
    assert not result.duplicated(["left", "right"]).any()


@given(search_cases)
def test_link_equals_brute_force(case):
    rng = np.random.default_rng(case["seed"])
    words, bits = case["shape"]
    codes = planted(rng, case["n"], words, bits, case["distance"] + 2)
    cut = int(rng.integers(0, codes.shape[0] + 1))
    left, right = codes[:cut], codes[cut:]
    result = lf.hamming_pairs(
        left if words > 1 else left[:, 0],
        other=right if words > 1 else right[:, 0],
        distance=case["distance"],
    )
    assert found(result) == brute_force(left, right, case["distance"])


@given(search_cases, st.integers(1, 4))
def test_nearest_equals_brute_force(case, top):
    rng = np.random.default_rng(case["seed"])
    words, bits = case["shape"]
    codes = planted(rng, case["n"], words, bits, case["distance"] + 2)
    cut = int(rng.integers(0, codes.shape[0] + 1))
    queries, saved = codes[:cut], codes[cut:]
    result = lf.hamming_nearest(queries, saved, distance=case["distance"], top=top)
    every = sorted(brute_force(queries, saved, case["distance"]),
                   key=lambda t: (t[0], t[2], t[1]))  # fmt: skip
    expected, rank, last = [], 0, None
    for query, match, distance in every:
        rank = rank + 1 if query == last else 1
        last = query
        if rank <= top:
            expected.append((query, match, distance, rank))
    assert list(result.itertuples(index=False, name=None)) == expected


def test_search_keeps_labels_and_skips_missing():
    prints = lf.simhash(TEXT).set_axis(list("abcdef"))
    doubled = pd.concat([prints, prints.set_axis(list("ghijkl"))])
    result = lf.hamming_pairs(doubled, distance=0)
    assert set(zip(result["left"], result["right"], strict=True)) == {
        ("a", "g"),
        ("b", "h"),
        ("c", "i"),
        ("f", "l"),
    }


def test_plan_uses_more_blocks_for_larger_tables():
    small = kernels.search_plan(64, 3, 1_000, None, None)
    large = kernels.search_plan(64, 3, 10_000_000, None, None)
    assert len(small.blocks) < len(large.blocks)
    assert all(len(table) == len(plan.blocks) - 3
               for plan in (small, large) for table in plan.tables)  # fmt: skip


@pytest.mark.parametrize(("bits", "wide"), [(32, 2**40), (32, -1), (64, 2**70)])
def test_hamming_distance_refuses_a_fingerprint_wider_than_the_series(bits, wide):
    """Issue 38, defect 16: 2**70 against 64 bits lost bit 70; 2**40 against 32
    bits counted bit 40 as differing."""
    fingerprints = lf.simhash(pd.Series(["a b c", "x y z"]), bits=bits)
    with pytest.raises(lf.ConfigError, match=rf"fingerprints have {bits} bits"):
        lf.hamming_distance(fingerprints, wide)
    with pytest.raises(lf.ConfigError, match="'a' argument"):
        lf.hamming_distance(wide, fingerprints)
    # The widest fingerprint that fits is taken, and distances stay within the bits.
    top = (1 << bits) - 1
    distances = lf.hamming_distance(fingerprints, top)
    assert distances.between(0, bits).all()
    assert lf.hamming_distance(fingerprints, 0).tolist() == [
        bin(int(value)).count("1") for value in fingerprints
    ]
