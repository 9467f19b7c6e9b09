"""The numpy kernels against plain-Python references, without pandas."""

import numpy as np
import pyarrow as pa
import pytest
import reference
from hypothesis import given
from hypothesis import strategies as st

from lsh_frame._kernels import hashing, minhash, sketch, text

# Text that exercises the decoder and the boundaries: ASCII, Latin accents,
# combining marks, CJK, emoji (4-byte UTF-8), and many kinds of whitespace.
unicode_text = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(list("ab \t\n\u00a0\u3000\u2028é\u0301東京😀👍🏽")),
    ),
    max_size=40,
)
records = st.lists(st.one_of(unicode_text, st.just("")), min_size=0, max_size=12)


def encode(strings):
    array = pa.array(strings, pa.large_string())
    _, offsets, data = array.buffers()
    offsets = np.frombuffer(offsets, dtype=np.int64)[: len(strings) + 1]
    data = (
        np.frombuffer(data, dtype=np.uint8)
        if data is not None
        else np.empty(0, np.uint8)
    )
    return text.utf8_to_codepoints(data, offsets)


def split_csr(values, offsets):
    return [
        values[offsets[i] : offsets[i + 1]].tolist() for i in range(offsets.size - 1)
    ]


@given(records)
def test_utf8_decoding_matches_python(strings):
    codepoints, offsets = encode(strings)
    decoded = ["".join(map(chr, row)) for row in split_csr(codepoints, offsets)]
    assert decoded == strings


def test_whitespace_table_is_python_isspace():
    everything = np.arange(0x110000, dtype=np.uint32)
    expected = np.array([chr(c).isspace() for c in range(0x110000)])
    np.testing.assert_array_equal(text.is_whitespace(everything), expected)


@given(records)
def test_collapse_whitespace_matches_split_join(strings):
    codepoints, offsets = encode(strings)
    collapsed, new_offsets = text.collapse_whitespace(codepoints, offsets)
    got = ["".join(map(chr, row)) for row in split_csr(collapsed, new_offsets)]
    assert got == [" ".join(s.split()) for s in strings]


@pytest.mark.parametrize("k", [1, 2, 3, 5])
@given(strings=records)
def test_char_shingles_match_reference(strings, k):
    codepoints, offsets = encode(strings)
    hashes, token_offsets = hashing.char_shingles(
        codepoints, offsets, k, hashing.token_tag("char", k)
    )
    assert split_csr(hashes, token_offsets) == [
        reference.char_shingles(s, k) for s in strings
    ]


@pytest.mark.parametrize("k", [1, 2, 3])
@given(strings=records)
def test_word_shingles_match_reference(strings, k):
    codepoints, offsets = encode(strings)
    hashes, token_offsets = hashing.word_shingles(
        codepoints, offsets, k, hashing.token_tag("word", k)
    )
    assert split_csr(hashes, token_offsets) == [
        reference.word_shingles(s, k) for s in strings
    ]


@given(strings=st.lists(st.text(alphabet="ab the of", max_size=30), max_size=8))
def test_stopword_shingles_match_reference(strings):
    stopwords = {"the", "of", "a"}
    stop_hashes = np.array(
        sorted(reference.word_hash(w) for w in stopwords), dtype=np.uint64
    )
    codepoints, offsets = encode(strings)
    hashes, token_offsets = hashing.word_shingles(
        codepoints, offsets, 2, hashing.token_tag("stopword", 2), stop_hashes
    )
    assert split_csr(hashes, token_offsets) == [
        reference.word_shingles(s, 2, stopwords) for s in strings
    ]


# ASCII text with every ASCII whitespace, runs of it, and words longer than the
# eight bytes read at a time (and than the 64 of the fast path).
ascii_text = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("ab \t\n\x0b\x0c\r\x1c\x1f")),
        st.characters(min_codepoint=0, max_codepoint=0x7F),
    ),
    max_size=60,
) | st.builds(
    lambda word, n: " ".join([word * n] * 2),
    st.sampled_from(["x", "ab"]),
    st.integers(1, 90),
)


@given(st.lists(ascii_text, max_size=10))
def test_ascii_bytes_give_the_words_and_hashes_of_code_points(strings):
    codepoints, offsets = encode(strings)
    as_bytes = codepoints.astype(np.uint8)
    for units in (codepoints, as_bytes):
        starts, ends, records = hashing.word_spans(units, offsets)
        words = [
            "".join(map(chr, codepoints[a:b]))
            for a, b in zip(starts, ends, strict=True)
        ]
        assert words == [w for s in strings for w in s.split()]
        assert records.tolist() == [i for i, s in enumerate(strings) for _ in s.split()]
        hashes = hashing.word_hashes(units, starts, ends)
        assert hashes.tolist() == [reference.word_hash(w) for w in words]


@pytest.mark.parametrize("k", [1, 2])
@given(strings=st.lists(st.one_of(ascii_text, unicode_text), max_size=8))
def test_word_shingles_of_separated_records_are_the_same(strings, k):
    tag = hashing.token_tag("word", k)
    expected = hashing.word_shingles(*encode(strings), k, tag)
    separated = hashing.word_shingles(
        *encode([s + " " for s in strings]), k, tag, separated=True
    )
    for got, want in zip(separated, expected, strict=True):
        np.testing.assert_array_equal(got, want)


def test_salt_separates_token_spaces():
    codepoints, offsets = encode(["smith"])
    plain, _ = hashing.char_shingles(
        codepoints, offsets, 3, hashing.token_tag("char", 3)
    )
    salted, _ = hashing.char_shingles(
        codepoints, offsets, 3, hashing.token_tag("char", 3, salt=7)
    )
    assert set(plain.tolist()).isdisjoint(salted.tolist())
    assert salted.tolist() == reference.char_shingles("smith", 3, salt=7)


token_sets = st.lists(
    st.lists(st.integers(0, (1 << 64) - 1), min_size=0, max_size=30),
    min_size=1,
    max_size=20,
)


def to_csr(sets):
    values = np.array([v for s in sets for v in s], dtype=np.uint64)
    offsets = np.concatenate([[0], np.cumsum([len(s) for s in sets])]).astype(np.int64)
    return values, offsets


@given(sets=token_sets, seed=st.integers(0, 2**32), num_perm=st.integers(1, 40))
def test_affine32_minhash_matches_reference(sets, seed, num_perm):
    values, offsets = to_csr(sets)
    a, b = minhash.affine32_parameters(seed, num_perm)
    out = np.zeros((len(sets), num_perm), dtype=np.uint32)
    minhash.minhash(
        minhash.fold32(values), offsets, minhash.affine32_permute(a, b), out
    )
    for row, tokens in zip(out, sets, strict=True):
        if tokens:
            assert row.tolist() == reference.minhash_affine32(
                tokens, a.tolist(), b.tolist()
            )
        else:
            assert not row.any()


@given(sets=token_sets, seed=st.integers(0, 2**32), num_perm=st.integers(1, 20))
def test_mersenne61_minhash_matches_reference(sets, seed, num_perm):
    values, offsets = to_csr(sets)
    a, b = minhash.mersenne61_parameters(seed, num_perm)
    out = np.zeros((len(sets), num_perm), dtype=np.uint64)
    permute = minhash.mersenne61_permute(a, b)
    minhash.minhash(minhash.reduce_mersenne61(values), offsets, permute, out)
    for row, tokens in zip(out, sets, strict=True):
        if tokens:
            assert row.tolist() == reference.minhash_mersenne61(
                tokens, a.tolist(), b.tolist()
            )


@given(sets=token_sets, seed=st.integers(0, 2**32), num_perm=st.integers(1, 40))
def test_fss32_sketch_matches_reference(sets, seed, num_perm):
    values, offsets = to_csr(sets)
    a, b = sketch.parameters(seed, num_perm)
    out = np.zeros((len(sets), num_perm), dtype=np.uint32)
    sketch.sketch(minhash.fold32(values), offsets, a, b, out)
    for row, tokens in zip(out, sets, strict=True):
        if tokens:
            assert row.tolist() == reference.fss32(tokens, a.tolist(), b.tolist())
        else:
            assert not row.any()


@pytest.mark.parametrize("num_perm", [1, 3, 64, 100, 128, 257])
def test_fss32_groups_of_every_length_match_reference(num_perm, monkeypatch):
    # Small groups, so records of many lengths (1 token: the classic slots;
    # 3,000: full in a round or two) fill at different rounds in one call.
    monkeypatch.setattr(sketch, "GROUP_RECORDS", 16)
    rng = np.random.default_rng(num_perm)
    lengths = [*rng.integers(0, 60, 60).tolist(), 1, 2, 3_000, 400, 0]
    sets = [rng.integers(0, 2**63, n, dtype=np.uint64).tolist() for n in lengths]
    values, offsets = to_csr(sets)
    a, b = sketch.parameters(7, num_perm)
    out = np.zeros((len(sets), num_perm), dtype=np.uint32)
    sketch.sketch(minhash.fold32(values), offsets, a, b, out)
    expected = [
        reference.fss32(s, a.tolist(), b.tolist()) if s else [0] * num_perm
        for s in sets
    ]
    assert out.tolist() == expected


@pytest.mark.parametrize("scheme", ["affine32", "mersenne61"])
def test_long_records_and_mixed_lengths_match_reference(scheme):
    rng = np.random.default_rng(5)
    lengths = [1, 3, 70, 600, 5000, 2, 2100]  # crosses every tile path
    sets = [rng.integers(0, 2**63, n, dtype=np.uint64).tolist() for n in lengths]
    values, offsets = to_csr(sets)
    if scheme == "affine32":
        a, b = minhash.affine32_parameters(3, 16)
        tokens, permute, dtype = (
            minhash.fold32(values),
            minhash.affine32_permute(a, b),
            np.uint32,
        )
        expected = [reference.minhash_affine32(s, a.tolist(), b.tolist()) for s in sets]
    else:
        a, b = minhash.mersenne61_parameters(3, 16)
        tokens = minhash.reduce_mersenne61(values)
        permute, dtype = minhash.mersenne61_permute(a, b), np.uint64
        expected = [
            reference.minhash_mersenne61(s, a.tolist(), b.tolist()) for s in sets
        ]
    out = np.zeros((len(sets), 16), dtype=dtype)
    minhash.minhash(tokens, offsets, permute, out)
    assert out.tolist() == expected


def _signing_inputs(scheme, sets, num_perm=16, seed=3):
    """Kernel inputs for ``sets`` and the plain-Python signature of each set."""
    values, offsets = to_csr(sets)
    if scheme == "affine32":
        a, b = minhash.affine32_parameters(seed, num_perm)
        tokens, permute = minhash.fold32(values), minhash.affine32_permute(a, b)
        sign, dtype = reference.minhash_affine32, np.uint32
    else:
        a, b = minhash.mersenne61_parameters(seed, num_perm)
        tokens = minhash.reduce_mersenne61(values)
        permute = minhash.mersenne61_permute(a, b)
        sign, dtype = reference.minhash_mersenne61, np.uint64
    expected = [sign(s, a.tolist(), b.tolist()) if s else [0] * num_perm for s in sets]
    return tokens, offsets, permute, np.zeros((len(sets), num_perm), dtype), expected


@pytest.mark.parametrize("scheme", ["affine32", "mersenne61"])
@pytest.mark.parametrize(
    "lengths",
    [[1], [600], [5_000], [70_000], [600, 1, 5_000, 128, 70_000, 129, 0, 512, 2]],
)
def test_long_record_signatures_match_a_plain_reference(scheme, lengths):
    rng = np.random.default_rng(sum(lengths))
    sets = [rng.integers(0, 2**63, n, dtype=np.uint64).tolist() for n in lengths]
    tokens, offsets, permute, out, expected = _signing_inputs(scheme, sets)
    minhash.minhash(tokens, offsets, permute, out)
    assert out.tolist() == expected


@pytest.mark.parametrize("scheme", ["affine32", "mersenne61"])
def test_blocks_holding_many_records_match_the_reference(scheme, monkeypatch):
    # With a low cut every record takes the block path, so one block holds
    # the ends and starts of many records of all lengths (and, with narrow
    # blocks, records run on over many blocks).
    rng = np.random.default_rng(11)
    lengths = [*rng.integers(0, 40, 300).tolist(), 1_300, 3, 700]
    sets = [rng.integers(0, 2**63, n, dtype=np.uint64).tolist() for n in lengths]
    tokens, offsets, permute, out, expected = _signing_inputs(scheme, sets)
    permute.long_record = 0
    minhash.minhash(tokens, offsets, permute, out)
    assert out.tolist() == expected
    permute.block_width = 37
    out[:] = 0
    minhash.minhash(tokens, offsets, permute, out)
    assert out.tolist() == expected


@pytest.mark.parametrize("scheme", ["affine32", "mersenne61"])
@pytest.mark.parametrize("one_block", [True, False])
def test_a_few_records_sign_alike_in_one_block_and_in_tiles(
    scheme, one_block, monkeypatch
):
    # A few records (a batch of new ones) are signed in one block of all
    # their tokens; the tiles must give exactly the same signatures.
    rng = np.random.default_rng(13)
    lengths = [0, 64, 1, 0, 30, 200, 2, 0]  # one long record (for mersenne61)
    sets = [rng.integers(0, 2**63, n, dtype=np.uint64).tolist() for n in lengths]
    tokens, offsets, permute, out, expected = _signing_inputs(scheme, sets)
    assert offsets[-1] <= minhash.ONE_BLOCK_TOKENS
    if not one_block:
        monkeypatch.setattr(minhash, "ONE_BLOCK_TOKENS", -1)
    minhash.minhash(tokens, offsets, permute, out)
    assert out.tolist() == expected
    # A slice of a larger CSR (offsets not starting at 0) too.
    out = np.zeros_like(out[2:6])
    minhash.minhash(tokens, offsets[2:7], permute, out)
    assert out.tolist() == expected[2:6]


@pytest.mark.parametrize("scheme", ["affine32", "mersenne61"])
@pytest.mark.parametrize("tile_records, tile_cells", [(1, 1), (3, 7), (5, 400)])
def test_tiles_of_any_shape_fold_to_the_reference(scheme, tile_records, tile_cells):
    # Tiles cut by records and by cells (one record of many tokens alone in a
    # tile, records of one token many to a tile): every record's minimum
    # over its own tokens, whatever tile it falls in.
    rng = np.random.default_rng(tile_records + tile_cells)
    lengths = [*rng.integers(0, 90, 40).tolist(), 1, 128, 0, 2]
    sets = [rng.integers(0, 2**63, n, dtype=np.uint64).tolist() for n in lengths]
    tokens, offsets, permute, out, expected = _signing_inputs(scheme, sets, 33)
    permute.tile_records, permute.tile_cells = tile_records, tile_cells
    minhash.minhash(tokens, offsets, permute, out)
    assert out.tolist() == expected


@pytest.mark.parametrize("scheme", ["affine32", "mersenne61"])
def test_tiles_padded_well_past_their_tokens_fold_to_the_reference(scheme):
    # Few permutations and many records of uneven length: a tile's padded
    # cells, times the permutations folded at once, outgrow both the tokens
    # and a permutation block, and the scratch must still hold them.
    rng = np.random.default_rng(17)
    lengths = rng.integers(1, 21, 600).tolist()
    sets = [rng.integers(0, 2**63, n, dtype=np.uint64).tolist() for n in lengths]
    tokens, offsets, permute, out, expected = _signing_inputs(scheme, sets, 4)
    minhash.minhash(tokens, offsets, permute, out)
    assert out.tolist() == expected


@pytest.mark.parametrize("scheme", ["affine32", "mersenne61"])
def test_long_records_are_permuted_in_full_width_blocks(scheme):
    # The cost per token must not grow with the record length: 220 records of
    # 10,000 tokens are reduced in blocks at least half full (no padding, at
    # most twice as many as full blocks), not one narrow call per position.
    lengths = [10_000] * 220
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    values = np.random.default_rng(2).integers(0, 2**63, offsets[-1], dtype=np.uint64)
    widths = []
    if scheme == "affine32":
        family, tokens = minhash.Affine32, minhash.fold32(values)
        parameters, dtype = minhash.affine32_parameters(1, 128), np.uint32
    else:
        family, tokens = minhash.Mersenne61, minhash.reduce_mersenne61(values)
        parameters, dtype = minhash.mersenne61_parameters(1, 128), np.uint64

    class Counted(family):
        def reduce(self, rows, dtype):
            widths.append(rows.size)
            return super().reduce(rows, dtype)

    counted = Counted(*parameters)
    minhash.minhash(tokens, offsets, counted, np.zeros((220, 128), dtype))
    assert sum(widths) == offsets[-1]
    assert len(widths) <= 2 * -(-int(offsets[-1]) // counted.block_width)
    assert min(widths[:-1]) >= counted.block_width // 2


def _count_reductions(permute):
    """Record the shape of every padded matrix ``permute`` reduces."""
    shapes = []
    reduce = permute.reduce

    def counted(rows, dtype):
        shapes.append(rows.shape)
        return reduce(rows, dtype)

    permute.reduce = counted
    return shapes


@pytest.mark.parametrize("scheme", ["affine32", "mersenne61"])
def test_short_pieces_share_a_block_behind_long_ones(scheme):
    # Records one token longer than a block leave 1-token tails; sorted first,
    # they fill one block together even though full pieces follow them.
    rng = np.random.default_rng(19)
    lengths = [17] * 10 + [16] * 40
    sets = [rng.integers(0, 2**63, n, dtype=np.uint64).tolist() for n in lengths]
    tokens, offsets, permute, out, expected = _signing_inputs(scheme, sets, 8)
    widths = _count_reductions(permute)
    permute.long_record, permute.block_width = 0, 16
    minhash.minhash(tokens, offsets, permute, out)
    assert out.tolist() == expected
    assert widths == [(10, 1)] + [(1, 16)] * 50


@pytest.mark.parametrize("scheme", ["affine32", "mersenne61"])
def test_a_batch_padded_far_past_its_tokens_is_signed_in_tiles(scheme):
    # Few tokens in all, but one long record among many of one token: one
    # block padded to the longest would hold 257 x 256 cells.
    rng = np.random.default_rng(23)
    lengths = [1] * 256 + [100]
    sets = [rng.integers(0, 2**63, n, dtype=np.uint64).tolist() for n in lengths]
    tokens, offsets, permute, out, expected = _signing_inputs(scheme, sets)
    assert offsets[-1] <= minhash.ONE_BLOCK_TOKENS
    shapes = _count_reductions(permute)
    minhash.minhash(tokens, offsets, permute, out)
    assert out.tolist() == expected
    assert (len(lengths), max(lengths)) not in shapes  # not one padded block


def test_more_permutations_than_a_tile_holds():
    values, offsets = to_csr([[1, 2, 3], [4]])
    a, b = minhash.affine32_parameters(1, 300)
    out = np.zeros((2, 300), dtype=np.uint32)
    minhash.minhash(
        minhash.fold32(values), offsets, minhash.affine32_permute(a, b), out
    )
    assert out[1].tolist() == reference.minhash_affine32([4], a.tolist(), b.tolist())


bucket_keys = st.lists(st.integers(0, 5), max_size=40)


@given(keys=bucket_keys)
def test_dedupe_pairs_from_buckets_match_brute_force(keys):
    from lsh_frame._kernels import pairs

    values = np.array(keys, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    buckets = pairs.group(values, np.arange(len(keys), dtype=np.int64))
    left, right = pairs.emit_pairs(buckets)
    expected = sorted(
        (i, j)
        for i in range(len(keys))
        for j in range(i + 1, len(keys))
        if keys[i] == keys[j]
    )
    assert sorted(zip(left.tolist(), right.tolist(), strict=True)) == expected
    assert int(buckets.pair_counts().sum()) == len(expected)  # counted before built


@given(left_keys=bucket_keys, right_keys=bucket_keys)
def test_link_pairs_from_buckets_match_brute_force(left_keys, right_keys):
    from lsh_frame._kernels import pairs

    hashed = lambda ks: np.array(ks, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)  # noqa: E731
    values = np.concatenate([hashed(left_keys), hashed(right_keys)])
    positions = np.concatenate([np.arange(len(left_keys)), np.arange(len(right_keys))])
    sides = np.concatenate(
        [np.zeros(len(left_keys), bool), np.ones(len(right_keys), bool)]
    )
    buckets = pairs.group(values, positions.astype(np.int64), sides)
    left, right = pairs.emit_pairs(buckets)
    expected = sorted(
        (i, j)
        for i in range(len(left_keys))
        for j in range(len(right_keys))
        if left_keys[i] == right_keys[j]
    )
    assert sorted(zip(left.tolist(), right.tolist(), strict=True)) == expected
    assert int(buckets.pair_counts().sum()) == len(expected)


@given(st.lists(st.integers(0, 50), max_size=200))
def test_sorted_unique_matches_numpy(values):
    from lsh_frame._kernels import pairs

    array = np.array(values, dtype=np.int64)
    distinct, counts = pairs.sorted_unique(array, return_counts=True)
    expected, expected_counts = np.unique(array, return_counts=True)
    np.testing.assert_array_equal(distinct, expected)
    np.testing.assert_array_equal(counts, expected_counts)


@given(keys=st.lists(st.integers(0, 8), max_size=120), limit=st.integers(1, 50))
def test_chunked_emission_gives_the_same_pairs(keys, limit):
    from lsh_frame._kernels import pairs

    values = np.array(keys, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    buckets = pairs.group(values, np.arange(len(keys), dtype=np.int64))
    whole = sorted(
        zip(*[side.tolist() for side in pairs.emit_pairs(buckets)], strict=True)
    )
    parts = buckets.chunks(limit)
    chunked = sorted(
        pair
        for part in parts
        for pair in zip(
            *[side.tolist() for side in pairs.emit_pairs(part)], strict=True
        )
    )
    assert chunked == whole
    largest = int(buckets.pair_counts().max()) if buckets.sizes.size else 0
    assert all(int(part.pair_counts().sum()) <= max(limit, largest) for part in parts)


def test_word_spans_are_positions_in_the_array_whatever_the_first_offset():
    text = "zzab cd  e"
    units = np.array([ord(c) for c in text], dtype=np.uint32)
    for array in (units, units.astype(np.uint8)):
        starts, ends, records = hashing.word_spans(array, np.array([2, 7, 10]))
        words = [text[a:b] for a, b in zip(starts, ends, strict=True)]
        assert words == ["ab", "cd", "e"]
        assert records.tolist() == [0, 0, 1]


def test_word_hashes_of_text_longer_than_the_kept_power_tables():
    # Past hashing._POWERS_KEPT code points the power tables are made for the
    # call: the hashes stay those of the reference.
    words = ["é" + "x" * (i % 50) for i in range(90_000)]
    text = " ".join(words)
    assert len(text) > hashing._POWERS_KEPT
    units = np.array([ord(c) for c in text], dtype=np.uint32)
    starts, ends, _ = hashing.word_spans(units, np.array([0, units.size]))
    hashes = hashing.word_hashes(units, starts, ends)
    for position in (0, 1, 31_337, 89_999):
        assert int(hashes[position]) == reference.word_hash(words[position])
