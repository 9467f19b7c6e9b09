"""Every compiled kernel against its numpy twin: the same inputs, the same output.

The numpy kernels are the reference (tests/kernels/test_kernels.py holds them to
plain Python); here each dispatching kernel runs once on each and the results
must be identical, dtype and bits. Inputs cover what the callers pass: empty
input, one record, huge values, code units of every width, arrays that are
slices or not contiguous. Without a built extension these tests are skipped,
unless ``LSH_FRAME_KERNELS=compiled`` asks for it (then they fail).
"""

import itertools
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lsh_frame._kernels import hashing, minhash, native, sketch, text

if native._extension is None and os.environ.get(native.ENVIRONMENT) != "compiled":
    pytest.skip("the compiled kernels are not built", allow_module_level=True)


def twins(function, *arguments, **options):
    """Run ``function`` on the numpy kernels, then on the compiled ones."""
    with native.forced("numpy"):
        expected = function(*arguments, **options)
    with native.forced("compiled"):
        got = function(*arguments, **options)
    return expected, got


def assert_identical(expected, got):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for one, other in zip(expected, got, strict=True):
            assert_identical(one, other)
        return
    expected, got = np.asarray(expected), np.asarray(got)
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def assert_twins(function, *arguments, **options):
    expected, got = twins(function, *arguments, **options)
    assert_identical(expected, got)
    return got


unicode_text = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(list("ab \t\n\x1c\x85\u00a0\u3000\u2028é\u0301東京😀")),
    ),
    max_size=40,
)
ascii_text = st.text(alphabet=st.sampled_from(list("ab cd\t\n.-")), max_size=40)
records = st.lists(st.one_of(unicode_text, st.just("")), min_size=0, max_size=12)
ascii_records = st.lists(ascii_text, min_size=0, max_size=12)


def encode(strings, *, ascii_bytes=False):
    array = pa.array(strings, pa.large_string())
    _, offsets, data = array.buffers()
    offsets = np.frombuffer(offsets, dtype=np.int64)[: len(strings) + 1]
    if not len(strings):
        offsets = np.zeros(1, dtype=np.int64)
    data = (
        np.frombuffer(data, dtype=np.uint8)
        if data is not None
        else np.empty(0, np.uint8)
    )
    return text.utf8_to_codepoints(data, offsets, ascii_bytes=ascii_bytes)


def test_the_extension_is_in_use_by_default():
    if os.environ.get(native.ENVIRONMENT, "auto") in ("", "auto", "compiled"):
        assert native.compiled is not None
        assert native.kernels_in_use()["kernels"] == "compiled"


# ---------------------------------------------------------------------------
# Text and shingles


@given(records)
def test_collapse_whitespace(strings):
    points, offsets = encode(strings)
    assert_twins(text.collapse_whitespace, points, offsets)


@given(ascii_records)
def test_collapse_whitespace_of_ascii_bytes(strings):
    points, offsets = encode(strings, ascii_bytes=True)
    got = assert_twins(text.collapse_whitespace, points, offsets)
    assert got[0].dtype == np.uint8


@given(records, st.integers(1, 6))
def test_char_shingles(strings, k):
    points, offsets = encode(strings)
    tag = hashing.token_tag("char", k, 7)
    assert_twins(hashing.char_shingles, points, offsets, k, tag)


@given(ascii_records, st.integers(1, 4), st.integers(0, 2**64 - 1))
def test_char_shingles_of_bytes_with_a_tag_per_record(strings, k, salt):
    points, offsets = encode(strings, ascii_bytes=True)
    tags = np.arange(len(strings), dtype=np.uint64) * np.uint64(salt | 1)
    assert_twins(hashing.char_shingles, points, offsets, k, tags)


@given(records)
def test_word_hashes(strings):
    points, offsets = encode(strings)
    starts, ends, _ = hashing.word_spans(points, offsets)
    assert_twins(hashing.word_hashes, points, starts, ends)


def test_word_hashes_of_long_words_and_huge_code_points():
    rng = np.random.default_rng(5)
    points = rng.integers(0, 0x110000, size=5_000, dtype=np.uint32)
    starts = np.array([0, 10, 100, 4_000], dtype=np.int64)
    ends = np.array([0, 90, 4_000, 5_000], dtype=np.int64)
    assert_twins(hashing.word_hashes, points, starts, ends)
    # Bytes, and spans read from a view that is not contiguous.
    data = rng.integers(0, 0x80, size=10_000, dtype=np.uint8)[::2]
    assert_twins(hashing.word_hashes, data, starts, ends)


def test_char_shingles_of_sliced_and_unusual_arrays():
    points, offsets = encode(["hello world", "", "ab", "abcdef"])
    wide = np.zeros(points.size * 2, dtype=np.uint32)
    wide[::2] = points
    assert_twins(hashing.char_shingles, wide[::2], offsets, 3, np.uint64(9))
    # Code units of a width the extension does not take go to numpy.
    assert_twins(hashing.char_shingles, points.astype(np.uint16), offsets, 2, 1)
    # Records that start past the first unit (a slice of offsets).
    assert_twins(hashing.char_shingles, points, offsets[1:], 2, np.uint64(3))
    # No records, and one.
    assert_twins(hashing.char_shingles, points[:0], np.zeros(1, np.int64), 3, 1)
    assert_twins(hashing.char_shingles, points[:11], offsets[:2], 3, 1)


@given(records)
def test_utf8_to_codepoints(strings):
    array = pa.array([*strings, "é"], pa.large_string())  # never all ASCII
    _, offsets, data = array.buffers()
    offsets = np.frombuffer(offsets, dtype=np.int64)[: len(array) + 1]
    data = np.frombuffer(data, dtype=np.uint8)
    points, point_offsets = assert_twins(text.utf8_to_codepoints, data, offsets)
    assert points.dtype == np.uint32
    decoded = [
        "".join(map(chr, points[start:end]))
        for start, end in itertools.pairwise(point_offsets)
    ]
    assert decoded == [*strings, "é"]
    # A slice of the records, starting and ending inside the bytes.
    assert_twins(text.utf8_to_codepoints, data, offsets[1:])
    assert_twins(text.utf8_to_codepoints, data, offsets[:-1])


@given(st.binary(min_size=1, max_size=64), st.data())
def test_utf8_to_codepoints_of_any_bytes(raw, draw):
    """Bytes that are not UTF-8 decode alike too (the masks, bytes past the end)."""
    data = np.frombuffer(raw + b"\xe2", dtype=np.uint8)
    cuts = sorted(draw.draw(st.lists(st.integers(0, data.size), max_size=5)))
    offsets = np.array([0, *cuts, data.size], dtype=np.int64)
    assert_twins(text.utf8_to_codepoints, data, offsets)


def test_collapse_whitespace_of_a_slice_of_records():
    points, offsets = encode(["  a  b ", "\t", " c "])
    assert_twins(text.collapse_whitespace, points, offsets[1:])
    assert_twins(text.collapse_whitespace, points[:0], np.zeros(1, np.int64))


# ---------------------------------------------------------------------------
# MinHash and the sketch


token_sets = st.lists(
    st.lists(
        st.one_of(
            st.integers(0, 2**64 - 1),
            st.sampled_from([0, 1, 2**32 - 1, 2**61 - 2, 2**61 - 1, 2**64 - 1]),
        ),
        max_size=40,
    ),
    max_size=20,
)


def csr(sets):
    offsets = np.zeros(len(sets) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in sets], out=offsets[1:])
    values = [value for one in sets for value in one]
    return np.array(values, dtype=np.uint64), offsets


SCHEMES = ["affine32", "mersenne61", "fss32"]


def sign(scheme, hashes, offsets, num_perm, seed, out=None):
    from lsh_frame.sketch.minhash import _signer

    dtype = np.uint64 if scheme == "mersenne61" else np.uint32
    if out is None:
        out = np.full((offsets.size - 1, num_perm), 7, dtype=dtype)
    _signer(scheme, seed, num_perm)(hashes, offsets, out)
    return out


@pytest.mark.parametrize("scheme", SCHEMES)
@given(
    sets=token_sets,
    num_perm=st.sampled_from([1, 2, 3, 31, 32, 33, 64, 100, 128]),
    seed=st.integers(0, 2**32),
)
def test_signatures(scheme, sets, num_perm, seed):
    hashes, offsets = csr(sets)
    assert_twins(sign, scheme, hashes, offsets, num_perm, seed)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_signatures_of_long_records_and_many_records(scheme):
    rng = np.random.default_rng(11)
    lengths = np.concatenate([rng.integers(0, 60, 3_000), [0, 1, 600, 40_000]])
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    hashes = rng.integers(0, 2**64 - 1, offsets[-1], dtype=np.uint64, endpoint=True)
    assert_twins(sign, scheme, hashes, offsets, 128, 1)
    # A slice of rows of a signature matrix (what each thread writes), and
    # token hashes read through a view that is not contiguous.
    dtype = np.uint64 if scheme == "mersenne61" else np.uint32
    matrix = np.zeros((lengths.size + 5, 64), dtype=dtype)
    stride = np.repeat(hashes, 2)[::2]
    expected, got = twins(
        lambda: sign(scheme, stride, offsets, 64, 3, out=matrix.copy()[5:])
    )
    assert_identical(expected, got)


def test_an_out_matrix_that_is_not_contiguous_is_signed_by_numpy():
    hashes, offsets = csr([[1, 2, 3], [], [2**64 - 1]])
    out = np.asfortranarray(np.zeros((3, 16), dtype=np.uint32))
    assert_twins(lambda: sign("affine32", hashes, offsets, 16, 1, out=out.copy("F")))


def test_signatures_equal_the_numpy_kernels_called_directly():
    # The dispatch signs exactly what the kernels below it sign.
    rng = np.random.default_rng(2)
    hashes = rng.integers(0, 2**63, 500, dtype=np.uint64)
    offsets = np.array([0, 100, 100, 350, 500], dtype=np.int64)
    a, b = minhash.affine32_parameters(1, 64)
    direct = np.zeros((4, 64), np.uint32)
    minhash.minhash(
        minhash.fold32(hashes), offsets, minhash.affine32_permute(a, b), direct
    )
    with native.forced("compiled"):
        got = sign("affine32", hashes, offsets, 64, 1, out=np.zeros((4, 64), np.uint32))
    np.testing.assert_array_equal(got, direct)
    a, b = sketch.parameters(1, 64)
    direct = np.zeros((4, 64), np.uint32)
    sketch.sketch(minhash.fold32(hashes), offsets, a, b, direct)
    with native.forced("compiled"):
        got = sign("fss32", hashes, offsets, 64, 1, out=np.zeros((4, 64), np.uint32))
    np.testing.assert_array_equal(got, direct)


# ---------------------------------------------------------------------------
# Choosing the kernels


def run_python(code, **environment):
    env = {key: value for key, value in os.environ.items() if key != native.ENVIRONMENT}
    env.update(environment)
    return subprocess.run(
        [sys.executable, "-W", "always", "-c", code],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


HIDE_EXTENSION = "import sys; sys.modules['lsh_frame._kernels._native'] = None\n"
SIGN_TWICE = """
import warnings
import pandas as pd
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import lsh_frame as lf
    first = lf.minhash(pd.Series(["john smith", "jon smith"]))
    second = lf.minhash(pd.Series(["anna lee"]))
print(sum("numpy kernels" in str(w.message) for w in caught))
print(lf._kernels.native.kernels_in_use()["kernels"])
print(first.iloc[0][:4].tolist())
"""


def test_without_the_extension_the_library_warns_once_and_signs_alike():
    hidden = run_python(HIDE_EXTENSION + SIGN_TWICE)
    assert hidden.returncode == 0, hidden.stderr
    warned, kernels, signature = hidden.stdout.splitlines()
    assert (warned, kernels) == ("1", "numpy")
    built = run_python(SIGN_TWICE)
    assert built.returncode == 0, built.stderr
    assert built.stdout.splitlines() == ["0", "compiled", signature]


def test_numpy_chosen_by_the_environment_is_silent():
    chosen = run_python(SIGN_TWICE, LSH_FRAME_KERNELS="numpy")
    assert chosen.returncode == 0, chosen.stderr
    assert chosen.stdout.splitlines()[:2] == ["0", "numpy"]


def test_compiled_chosen_without_the_extension_fails_to_import():
    failed = run_python(
        HIDE_EXTENSION + "import lsh_frame", LSH_FRAME_KERNELS="compiled"
    )
    assert failed.returncode != 0
    assert "LSH_FRAME_KERNELS=compiled, but the compiled kernels are not built" in (
        failed.stderr
    )


def test_an_unknown_choice_names_the_allowed_ones():
    failed = run_python("import lsh_frame", LSH_FRAME_KERNELS="fortran")
    assert failed.returncode != 0
    assert "must be one of auto, compiled, numpy. Got 'fortran'" in failed.stderr


def test_show_versions_says_which_kernels_run(capsys):
    import lsh_frame as lf

    lf.show_versions()
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["lsh_frame", lf.__version__]
    kernels = native.kernels_in_use()["kernels"]
    assert any(line.split()[:2] == ["kernels", kernels] for line in out.splitlines())
    assert "pyarrow" in out


# ---------------------------------------------------------------------------
# The neighbours key


def postings_of(pairs, vocabulary_size):
    """Postings (records grouped by token) of (record, token) pairs."""
    from lsh_frame._kernels import neighbours

    pairs = sorted(set(pairs), key=lambda pair: (pair[1], pair[0]))
    records = np.array([record for record, _ in pairs], dtype=np.int64)
    tokens = np.array([token for _, token in pairs], dtype=np.int64)
    return neighbours.Postings.build(records, tokens, vocabulary_size)


@given(
    index_pairs=st.lists(
        st.tuples(st.integers(0, 29), st.integers(0, 14)), max_size=150
    ),
    query_pairs=st.lists(
        st.tuples(st.integers(0, 24), st.integers(0, 14)), max_size=80
    ),
    weights=st.lists(st.integers(0, 2**22 - 1), min_size=15, max_size=15),
    same_table=st.booleans(),
    budget=st.sampled_from(
        [(0.5, 0.2, 2, 2, 100), (0.7, 0.0, 1, 0, 100), (0.0, 0.0, 1, 1, 3)]
    ),
    chunk=st.sampled_from([(0, 25), (3, 9), (24, 25)]),
)
def test_top_neighbours(index_pairs, query_pairs, weights, same_table, budget, chunk):
    from lsh_frame._kernels import neighbours

    postings = postings_of(index_pairs, 15)
    query = sorted(set(query_pairs))
    query_records = np.array([record for record, _ in query], dtype=np.int64)
    query_tokens = np.array([token for _, token in query], dtype=np.int64)
    weights = np.array(weights, dtype=np.uint64)
    rng = np.random.default_rng(len(index_pairs))
    first, stop = chunk
    assert_twins(
        neighbours.top_neighbours,
        query_records,
        query_tokens,
        postings,
        weights,
        rng.uniform(0.5, 3e3, 25),
        rng.uniform(0.5, 3e3, 30),
        first=first,
        stop=stop,
        n_index=30,
        same_table=same_table,
        budget=budget,
    )


def test_top_neighbours_of_many_records_with_long_postings():
    # Queries that meet thousands of records (the quickselect and its sort),
    # ties of equal cosines broken by the neighbour's number.
    from lsh_frame._kernels import neighbours

    rng = np.random.default_rng(4)
    records = rng.integers(0, 5_000, 60_000)
    tokens = rng.integers(0, 300, 60_000)
    pairs = sorted(set(zip(records.tolist(), tokens.tolist(), strict=True)))
    postings = postings_of(pairs, 300)
    query_records, query_tokens = neighbours.by_record(
        np.array([record for record, _ in pairs]),
        np.array([token for _, token in pairs]),
    )
    weights = rng.integers(1, 4, 300).astype(np.uint64)
    norms = np.ones(5_000)
    for budget in [(0.5, 0.2, 2, 2, 100), (0.9, 0.0, 50, 10, 1_000)]:
        assert_twins(
            neighbours.top_neighbours,
            query_records,
            query_tokens,
            postings,
            weights,
            norms,
            norms,
            first=100,
            stop=1_600,
            n_index=5_000,
            same_table=True,
            budget=budget,
        )


def test_bad_look_ups_are_refused_before_anything_is_read():
    from lsh_frame._kernels import neighbours

    postings = postings_of([(0, 0), (1, 0)], 1)
    with native.forced("compiled"), pytest.raises(ValueError, match="out of range"):
        neighbours.top_neighbours(
            np.array([0]),
            np.array([5]),  # no such token
            postings,
            np.ones(1, np.uint64),
            np.ones(2),
            np.ones(2),
            first=0,
            stop=2,
            n_index=2,
            same_table=True,
            budget=(0.5, 0.2, 2, 2, 100),
        )


@pytest.mark.parametrize("ascii_bytes", [True, False])
@given(
    strings=st.lists(st.one_of(ascii_text, unicode_text), max_size=12),
    columns=st.integers(1, 3),
    record_bits=st.integers(1, 40),
    first_record=st.integers(0, 1_000),
    long_words=st.sampled_from([None, 1, 3, 30]),
)
def test_value_tokens(
    ascii_bytes, strings, columns, record_bits, first_record, long_words
):
    from lsh_frame._kernels import neighbours

    if ascii_bytes:
        strings = [value.encode("ascii", "ignore").decode() for value in strings]
    points, offsets = encode(strings, ascii_bytes=ascii_bytes)
    values = offsets.size - 1
    salts = np.arange(values, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    rows = max(1, -(-values // columns))
    assert_twins(
        neighbours.value_tokens,
        points,
        offsets,
        salts,
        rows,
        record_bits=record_bits,
        first_record=first_record,
        long_words=long_words,
        word_tag=hashing.token_tag("word", 1, 5),
        char_tag=hashing.token_tag("char", 3, 5),
    )


def test_neighbour_pairs_of_a_table_are_the_same_on_both():
    import lsh_frame as lf
    from lsh_frame.block.neighbours import neighbour_pairs

    people = lf.datasets.make_customers(3_000, seed=2)
    columns = ["given_name", "surname", "street_address", "date_of_birth", "email"]
    for frames in ([people], [people.iloc[:1_000], people.iloc[1_000:]]):
        expected, got = twins(neighbour_pairs, frames, columns, owner="test")
        for name in ["left", "right", "cosine", "kept_per_record"]:
            assert_identical(getattr(expected, name), getattr(got, name))
        assert got.left.size > 1_000


# ---------------------------------------------------------------------------
# Sets, pairs from buckets, components


@given(
    sets=token_sets,
    pairs=st.lists(st.tuples(st.integers(0, 19), st.integers(0, 19)), max_size=60),
)
def test_intersection_sizes_and_set_sizes(sets, pairs):
    from lsh_frame._kernels.sets import SetTable

    hashes, offsets = csr(sets)
    pairs = [(a, b) for a, b in pairs if a < len(sets) and b < len(sets)]
    first = np.array([a for a, _ in pairs], dtype=np.int64)
    second = np.array([b for _, b in pairs], dtype=np.int64)

    def intersect():
        table = SetTable.build(hashes, offsets)
        return table.intersection_sizes(first, second), table.sizes

    got = assert_twins(intersect)
    # The sizes count distinct tokens, and an intersection is never larger.
    assert got[1].tolist() == [len(set(one)) for one in sets]
    assert all(got[0] <= np.minimum(got[1][first], got[1][second]))


def test_intersections_of_long_sets_and_padding_values():
    from lsh_frame._kernels.sets import SetTable

    rng = np.random.default_rng(9)
    long = rng.integers(0, 300, 500).astype(np.uint64)
    pads = np.array([2**64 - 1, 2**64 - 2, 5, 5], dtype=np.uint64)
    hashes = np.concatenate([long, long[::-1][:200], pads, pads[:2]])
    offsets = np.array([0, 500, 700, 704, 706], dtype=np.int64)
    first = np.array([0, 0, 1, 2, 3, 2], dtype=np.int64)
    second = np.array([1, 0, 1, 3, 2, 2], dtype=np.int64)
    got = assert_twins(
        lambda: SetTable.build(hashes, offsets).intersection_sizes(first, second)
    )
    assert got[4] == 2


@given(
    keys=st.lists(st.integers(0, 6), max_size=60),
    sides=st.lists(st.booleans(), min_size=60, max_size=60),
    link=st.booleans(),
)
def test_pairs_from_buckets(keys, sides, link):
    from lsh_frame._kernels import pairs

    keys = np.array(keys, dtype=np.uint64) << np.uint64(1)
    positions = np.arange(keys.size, dtype=np.int64)[::-1].copy()
    side = np.array(sides[: keys.size], dtype=bool) if link else None
    buckets = pairs.group(keys, positions, side)
    assert_twins(pairs.emit_pairs, buckets)
    for chunk in buckets.chunks(7):  # slices of buckets, as the callers emit
        assert_twins(pairs.emit_pairs, chunk)


@given(
    nodes=st.integers(1, 40),
    edges=st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39)), max_size=80),
)
def test_components(nodes, edges):
    from lsh_frame._kernels.components import components

    edges = [(a, b) for a, b in edges if a < nodes and b < nodes]
    first = np.array([a for a, _ in edges], dtype=np.int64)
    second = np.array([b for _, b in edges], dtype=np.int64)
    roots = assert_twins(components, nodes, first, second)
    assert all(roots <= np.arange(nodes))


def test_components_of_a_long_chain_and_edges_naming_no_node():
    from lsh_frame._kernels.components import components

    order = np.random.default_rng(1).permutation(100_000)
    roots = assert_twins(components, 100_000, order[:-1], order[1:])
    assert set(roots.tolist()) == {0}
    with native.forced("compiled"), pytest.raises(IndexError, match="names no node"):
        components(3, np.array([0]), np.array([3]))


punctuated_text = st.text(
    alphabet=st.sampled_from(list("ab1 .-/:@[`{~\t")), max_size=30
)


@given(st.lists(punctuated_text, max_size=12))
def test_punctuation_as_whitespace_is_the_regular_expression(strings):
    import pyarrow.compute as pc

    from lsh_frame.text.shingle import ASCII_PUNCTUATION_CHARACTER

    points, offsets = encode(strings, ascii_bytes=True)
    got = assert_twins(text.collapse_whitespace, points, offsets, punctuation=True)
    replaced = pc.replace_substring_regex(
        pa.array(strings, pa.large_string()), ASCII_PUNCTUATION_CHARACTER + "+", " "
    ).to_pylist()
    expected = encode(replaced, ascii_bytes=True)
    with native.forced("numpy"):
        expected = text.collapse_whitespace(*expected)
    assert_identical(expected, got)


def test_punctuation_as_whitespace_needs_bytes():
    points, offsets = encode(["a.b"])
    with pytest.raises(ValueError, match="bytes only"):
        text.collapse_whitespace(points, offsets, punctuation=True)


def test_the_vocabulary_of_one_table():
    from lsh_frame._kernels import neighbours

    rng = np.random.default_rng(6)
    packed = rng.integers(0, 2**20, 50_000, dtype=np.uint64) << np.uint64(12)
    packed |= rng.integers(0, 4_000, 50_000, dtype=np.uint64)
    packed = np.concatenate([packed, packed[:5_000]])  # repeats
    expected, got = twins(lambda: neighbours.vocabulary([packed.copy()], 12))
    for name in ["records", "tokens", "side_frequency"]:
        assert_identical(tuple(getattr(expected, name)), tuple(getattr(got, name)))


@given(st.lists(st.one_of(unicode_text, st.none()), max_size=20))
def test_hashes_of_values_and_labels_are_pandas(strings):
    import pandas as pd

    from lsh_frame.text.labels import hash_labels, hash_values

    frame = pd.DataFrame(
        {"text": strings, "number": range(len(strings))},
        index=[f"{value}!" for value in range(len(strings))],
    )
    frame = frame.iloc[1:]  # Arrow arrays that start past their buffers' first value
    assert_twins(hash_values, frame, ["text", "number"])
    assert_twins(hash_labels, frame.index)
    assert_twins(hash_labels, pd.Index(range(len(frame))))


@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, 40), st.integers(1, 5)), max_size=25),
        min_size=1,
        max_size=12,
    ),
    st.data(),
)
def test_tfidf_cosines(values, draw):
    """The compiled dot products add up in numpy's order: equal bits."""
    from lsh_frame._kernels import tfidf

    hashes = np.array([token for value in values for token, _ in value], np.uint64)
    records = np.repeat(np.arange(len(values)), [len(value) for value in values])
    shares = np.array([share / 2 for value in values for _, share in value])
    terms = tfidf.term_counts(hashes, records, shares, len(values))
    tokens, frequency, documents = tfidf.document_frequencies(
        terms, np.ones(len(values), np.int64)
    )
    vectors = tfidf.TermVectors.build(
        terms, tokens[::2], tfidf.idf(frequency[::2], documents), 0.7
    )
    pair = st.integers(0, len(values) - 1)
    first = np.array(draw.draw(st.lists(pair, max_size=30)), np.int64)
    second = np.array(draw.draw(st.lists(pair, min_size=first.size,
                                         max_size=first.size)), np.int64)  # fmt: skip
    got = assert_twins(tfidf.cosines, vectors, first, second)
    assert got.dtype == np.float64
    # Non-contiguous pairs, and none.
    assert_twins(tfidf.cosines, vectors, np.repeat(first, 2)[::2], second)
    assert_twins(tfidf.cosines, vectors, first[:0], second[:0])


@given(records)
def test_word_spans(strings):
    points, offsets = encode(strings)
    got = assert_twins(hashing.word_spans, points, offsets)
    assert all(part.dtype == np.int64 for part in got)
    if offsets.size > 1:  # a slice of the records
        assert_twins(hashing.word_spans, points, offsets[1:])
        assert_twins(hashing.word_spans, points, offsets[:-1])


@given(ascii_records)
def test_word_spans_of_ascii_bytes(strings):
    points, offsets = encode(strings, ascii_bytes=True)
    assert_twins(hashing.word_spans, points, offsets)
