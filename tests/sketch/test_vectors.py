"""Bit-sampling and random-hyperplane keys, their S-curves and comparisons."""

import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import lsh_frame as lf
from lsh_frame.sketch.banding import candidate_probability, collision_probability
from lsh_frame.sketch.vectors import band_keys_from_bits, hyperplane_bits, sampled_bits


def arrow_vectors(matrix):
    flat = pa.array(np.ascontiguousarray(matrix).reshape(-1))
    array = pa.FixedSizeListArray.from_arrays(flat, matrix.shape[1])
    return pd.Series(pd.arrays.ArrowExtensionArray(array))


def object_vectors(matrix):
    return pd.Series(list(matrix), dtype=object)


# ----------------------------------------------------------------------------
# Plans


@pytest.mark.parametrize("metric", ["jaccard", "hamming", "cosine"])
@pytest.mark.parametrize("threshold", [0.5, 0.8, 0.95])
def test_plan_keeps_its_recall_promise(metric, threshold):
    chosen = lf.plan(threshold, num_perm=256, recall=0.9, metric=metric)
    assert chosen.metric == metric
    assert chosen.recall_at_threshold >= 0.9
    assert chosen.used_perm <= 256
    above = min(1.0, threshold + 0.04)
    assert float(chosen(above)) >= chosen.recall_at_threshold
    expected = candidate_probability(
        collision_probability(threshold, metric), chosen.bands, chosen.rows
    )
    assert chosen.recall_at_threshold == pytest.approx(float(expected))


def test_cosine_plan_maps_the_angle():
    # cos 0 = 90°: a hyperplane separates the pair half the time.
    assert float(collision_probability(0.0, "cosine")) == 0.5
    assert float(collision_probability(1.0, "cosine")) == 1.0
    jaccard_plan = lf.plan(float(collision_probability(0.9, "cosine")))
    cosine_plan = lf.plan(0.9, metric="cosine")
    # Cosine 0.9 is a per-hash agreement of 1 - arccos(0.9) / pi = 0.856: the
    # same banding as Jaccard 0.856.
    assert (cosine_plan.bands, cosine_plan.rows) == (
        jaccard_plan.bands,
        jaccard_plan.rows,
    )
    steepest = (1 / cosine_plan.bands) ** (1 / cosine_plan.rows)
    assert float(
        collision_probability(cosine_plan.effective_threshold, "cosine")
    ) == pytest.approx(steepest)
    assert "cosine" in str(cosine_plan)


def test_plan_rejects_unknown_metric():
    with pytest.raises(lf.ConfigError, match=r"'metric'.*'euclid'"):
        lf.plan(0.5, metric="euclid")


# ----------------------------------------------------------------------------
# S-curves: the share of pairs at a known distance or angle that share a band
# key, over independently seeded hash families, is within binomial bounds.

BANDS, ROWS, TRIALS = 4, 6, 1500


def band_hit(hashes):
    keys = band_keys_from_bits(hashes, BANDS, ROWS, salt=7)
    return bool((keys[0] == keys[1]).any())


def within_binomial(hits, probability):
    bound = 4 * np.sqrt(probability * (1 - probability) / TRIALS) + 1e-9
    return abs(hits / TRIALS - probability) <= bound


@pytest.mark.parametrize("distance", [4, 12, 24])
def test_bit_sampling_s_curve(distance):
    rng = np.random.default_rng(distance)
    hits = 0
    for trial in range(TRIALS):
        first = rng.integers(0, 2**64, dtype=np.uint64)
        flipped = rng.choice(64, size=distance, replace=False)
        second = first ^ np.bitwise_or.reduce(np.uint64(1) << flipped.astype(np.uint64))
        words = np.array([[first], [second]], dtype=np.uint64)
        hits += band_hit(sampled_bits(words, 64, BANDS * ROWS, seed=trial))
    expected = float(candidate_probability(1 - distance / 64, BANDS, ROWS))
    assert within_binomial(hits, expected), (hits / TRIALS, expected)


@pytest.mark.parametrize("cosine", [0.95, 0.8, 0.5])
def test_hyperplane_s_curve(cosine):
    rng = np.random.default_rng(int(cosine * 100))
    angle = np.arccos(cosine)
    hits = 0
    for trial in range(TRIALS):
        basis, _ = np.linalg.qr(rng.standard_normal((16, 2)))
        first = basis[:, 0]
        second = np.cos(angle) * basis[:, 0] + np.sin(angle) * basis[:, 1]
        vectors = np.stack([first, second]).astype(np.float32)
        hits += band_hit(hyperplane_bits(vectors, BANDS * ROWS, seed=trial))
    expected = float(
        candidate_probability(collision_probability(cosine, "cosine"), BANDS, ROWS)
    )
    assert within_binomial(hits, expected), (hits / TRIALS, expected)


def test_keys_are_deterministic_across_processes():
    script = textwrap.dedent(
        """
        import hashlib, numpy as np
        from lsh_frame.sketch.vectors import (
            band_keys_from_bits, hyperplane_bits, sampled_bits
        )
        rng = np.random.default_rng(5)
        words = rng.integers(0, 2**64, size=(50, 2), dtype=np.uint64)
        vectors = rng.standard_normal((50, 24)).astype(np.float32)
        sampled = sampled_bits(words, 128, 40, 1)
        planes = hyperplane_bits(vectors, 40, 1)
        for hashes in (sampled, planes):
            keys = band_keys_from_bits(hashes, 8, 5, salt=3)
            print(hashlib.sha256(keys.tobytes()).hexdigest())
        """
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        ).stdout
        for _ in range(2)
    }
    assert len(outputs) == 1
    assert len(next(iter(outputs)).split()) == 2


# ----------------------------------------------------------------------------
# Blocking on vector columns


@pytest.fixture
def embeddings():
    rng = np.random.default_rng(0)
    base = rng.standard_normal((300, 24)).astype(np.float32)
    noisy = base + 0.15 * rng.standard_normal(base.shape).astype(np.float32)
    return np.concatenate([base, noisy])


def test_cosine_key_finds_close_vectors(embeddings):
    frame = pd.DataFrame({"emb": object_vectors(embeddings)})
    pairs = frame.lsh.candidates([lf.Field("emb", blocking="cosine", threshold=0.9)])
    found = set(zip(pairs["left"], pairs["right"], strict=True))
    recall = np.mean([(i, i + 300) in found for i in range(300)])
    assert recall >= 0.95
    assert (pairs["found_by"] == "emb").all()
    # The same pairs from an Arrow column, and on a second call.
    arrow = pd.DataFrame({"emb": arrow_vectors(embeddings)})
    again = arrow.lsh.candidates([lf.Field("emb", blocking="cosine", threshold=0.9)])
    pd.testing.assert_frame_equal(pairs, again)


def test_cosine_link_and_scores(embeddings):
    left = pd.DataFrame({"emb": object_vectors(embeddings[:300])})
    right = pd.DataFrame(
        {"emb": object_vectors(embeddings[300:]).set_axis(np.arange(300) + 1000)}
    )
    field = lf.Field("emb", blocking="cosine", threshold=0.9)
    scored = left.lsh.pairs([field], other=right, min_score=0.9)
    true = scored[scored["right"] == scored["left"] + 1000]
    assert len(true) >= 0.95 * 300
    first = embeddings[scored["left"].to_numpy()]
    second = embeddings[scored["right"].to_numpy() - 1000 + 300]
    cosine = (first * second).sum(1) / (
        np.linalg.norm(first, axis=1) * np.linalg.norm(second, axis=1)
    )
    np.testing.assert_allclose(
        scored["emb_score"], np.clip(cosine, 0, 1), rtol=1e-4, atol=1e-5
    )


def test_hamming_key_on_fingerprints_bits_and_integers():
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 2**64, size=200, dtype=np.uint64)
    near = codes ^ (np.uint64(1) << rng.integers(0, 64, 200).astype(np.uint64))
    both = np.concatenate([codes, near])
    bits = np.unpackbits(both.astype("<u8").view(np.uint8).reshape(-1, 8), axis=1,
                         bitorder="little").astype(bool)  # fmt: skip
    field = lf.Field("v", blocking="hamming", threshold=0.9)
    results = [
        pd.DataFrame({"v": pd.Series(both)}).lsh.candidates([field]),
        pd.DataFrame({"v": object_vectors(bits)}).lsh.candidates([field]),
        pd.DataFrame({"v": arrow_vectors(bits)}).lsh.candidates([field]),
    ]
    for other in results[1:]:
        pd.testing.assert_frame_equal(results[0], other)
    found = set(zip(results[0]["left"], results[0]["right"], strict=True))
    assert np.mean([(i, i + 200) in found for i in range(200)]) >= 0.95
    scored = pd.DataFrame({"v": pd.Series(both)}).lsh.score(
        pd.DataFrame({"left": [0, 0], "right": [200, 1]}), [field], min_score=0.5
    )
    distance = bin(int(codes[0]) ^ int(codes[1])).count("1")
    assert scored["v_score"].tolist() == [1 - 1 / 64, 1 - distance / 64]


def test_missing_and_zero_vectors_get_no_key_and_no_score():
    vectors = [np.ones(4), None, np.zeros(4), np.ones(4)]
    frame = pd.DataFrame({"emb": pd.Series(vectors, dtype=object)})
    field = lf.Field("emb", blocking="cosine", threshold=0.9)
    report = frame.lsh.blocking_report([field])
    assert report.table["records_keyed"].iloc[0] == 2
    pairs = pd.DataFrame({"left": [0, 0, 0], "right": [1, 2, 3]})
    scores = frame.lsh.score(pairs, [field], min_score=0.5)["emb_score"]
    assert scores.isna().tolist() == [True, True, False]
    assert scores.iloc[2] == pytest.approx(1.0)


def test_the_frame_is_not_modified(embeddings):
    frame = pd.DataFrame({"emb": object_vectors(embeddings[:50]), "x": range(50)})
    before = frame.copy()
    frame.lsh.pairs([lf.Field("emb", blocking="cosine", threshold=0.8)])
    pd.testing.assert_frame_equal(frame, before)


# ----------------------------------------------------------------------------
# Bad input


def test_bad_vector_fields():
    with pytest.raises(lf.ConfigError, match="one column of vectors"):
        lf.Field(["a", "b"], blocking="cosine")
    frame = pd.DataFrame({"emb": object_vectors(np.ones((3, 4))), "text": list("abc")})
    with pytest.raises(lf.ConfigError, match="needs a threshold"):
        frame.lsh.candidates([lf.Field("emb", blocking="cosine")])
    with pytest.raises(lf.ColumnTypeError, match=r"'text'.*needs vectors of floats"):
        frame.lsh.candidates([lf.Field("text", blocking="cosine", threshold=0.9)])
    with pytest.raises(lf.ColumnTypeError, match=r"'text'.*needs fingerprints"):
        frame.lsh.candidates([lf.Field("text", blocking="hamming", threshold=0.9)])
    ragged = pd.DataFrame({"emb": pd.Series([np.ones(3), np.ones(4)], dtype=object)})
    with pytest.raises(lf.ConfigError, match=r"different lengths \(3, 4\)"):
        ragged.lsh.candidates([lf.Field("emb", blocking="cosine", threshold=0.9)])
    counts = pd.DataFrame({"v": object_vectors(np.array([[0, 2], [1, 1]]))})
    with pytest.raises(lf.ColumnTypeError, match="other than 0 and 1"):
        counts.lsh.candidates([lf.Field("v", blocking="hamming", threshold=0.9)])


def test_link_with_different_vector_lengths_raises_when_scored():
    left = pd.DataFrame({"emb": object_vectors(np.ones((2, 4)))})
    right = pd.DataFrame({"emb": object_vectors(np.ones((2, 5)))})
    field = lf.Field("emb", blocking="cosine", threshold=0.9)
    with pytest.raises(lf.SignatureMismatchError, match=r"4 values.*but 5"):
        left.lsh.score(
            pd.DataFrame({"left": [0], "right": [0]}), [field], other=right,
            min_score=0.5,
        )  # fmt: skip


# ----------------------------------------------------------------------------
# Top-k neighbours


def clustered(rng, n, dim, centres, noise):
    points = rng.standard_normal((centres, dim)).astype(np.float32)
    data = points[rng.integers(0, centres, n)]
    return data + noise * rng.standard_normal((n, dim)).astype(np.float32)


def exact_top(queries, index, top, self_search):
    unit_q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    unit_i = index / np.linalg.norm(index, axis=1, keepdims=True)
    scores = unit_q @ unit_i.T
    if self_search:
        np.fill_diagonal(scores, -np.inf)
    return np.argsort(-scores, axis=1, kind="stable")[:, :top], scores


@pytest.mark.parametrize("self_search", [True, False])
def test_cosine_nearest_with_every_probe_is_exact(self_search):
    rng = np.random.default_rng(4)
    queries = clustered(rng, 300, 16, 20, 0.5)
    index = queries if self_search else clustered(rng, 400, 16, 20, 0.5)
    result = lf.cosine_nearest(
        object_vectors(queries), None if self_search else arrow_vectors(index),
        top=5, probes=10_000, clusters=12,
    )  # fmt: skip
    expected, scores = exact_top(queries, index, 5, self_search)
    assert len(result) == 300 * 5
    got = result["right"].to_numpy().reshape(300, 5)
    # Same neighbours (ties aside, which random floats do not have), best first.
    np.testing.assert_array_equal(np.sort(got, axis=1), np.sort(expected, axis=1))
    np.testing.assert_allclose(
        result["cosine"], scores[result["left"], result["right"]], rtol=1e-5
    )
    assert (result.groupby("left")["cosine"].diff().dropna() <= 0).all()
    assert result["rank"].tolist() == list(range(1, 6)) * 300
    if self_search:
        assert (result["left"] != result["right"]).all()


def test_cosine_nearest_recall_on_clustered_vectors():
    rng = np.random.default_rng(5)
    vectors = clustered(rng, 4000, 32, 100, 0.6)
    result = lf.cosine_nearest(object_vectors(vectors), top=10)
    expected, _ = exact_top(vectors, vectors, 10, True)
    got = result["right"].to_numpy().reshape(4000, 10)
    recall = np.mean(
        [len(set(a) & set(b)) / 10 for a, b in zip(got, expected, strict=True)]
    )
    assert recall >= 0.95


def test_cosine_nearest_skips_missing_and_keeps_labels():
    vectors = pd.Series(
        [np.array([1.0, 0.0]), None, np.array([0.8, 0.2]), np.zeros(2)],
        index=list("abcd"),
        dtype=object,
    )
    result = lf.cosine_nearest(vectors, top=3)
    assert set(result["left"]) == {"a", "c"}
    assert set(result["right"]) == {"a", "c"}
    with pytest.raises(lf.ConfigError, match="'top'"):
        lf.cosine_nearest(vectors, top=0)
    with pytest.raises(lf.ConfigError, match="must be a pandas Series"):
        lf.cosine_nearest(np.ones((3, 2)))


def test_top_k_cosine_field_in_the_pipeline(embeddings):
    frame = pd.DataFrame({"emb": object_vectors(embeddings)})
    field = lf.Field("emb", blocking="cosine", top=3)
    pairs = frame.lsh.candidates([field])
    nearest = lf.cosine_nearest(frame["emb"], top=3)
    expected = {
        (min(a, b), max(a, b))
        for a, b in zip(nearest["left"], nearest["right"], strict=True)
    }
    assert set(zip(pairs["left"], pairs["right"], strict=True)) == expected
    found = set(expected)
    assert np.mean([(i, i + 300) in found for i in range(300)]) >= 0.95
    report = frame.lsh.blocking_report([field])
    assert "top-3 cosine key" in " ".join(report.decisions)
    scored = frame.lsh.pairs([field], min_score=0.9)
    assert scored["emb_score"].between(0, 1).all()


def test_top_k_cosine_field_links_both_ways(embeddings):
    left = pd.DataFrame({"emb": object_vectors(embeddings[:300])})
    right = pd.DataFrame(
        {"emb": object_vectors(embeddings[300:]).set_axis(np.arange(300) + 1000)}
    )
    pairs = left.lsh.candidates(
        [lf.Field("emb", blocking="cosine", top=1)], other=right
    )
    found = set(zip(pairs["left"], pairs["right"], strict=True))
    assert np.mean([(i, i + 1000) in found for i in range(300)]) >= 0.95
    assert not pairs.duplicated(["left", "right"]).any()


def test_top_needs_cosine():
    with pytest.raises(lf.ConfigError, match=r"'top'.*needs blocking='cosine'"):
        lf.Field("emb", blocking="hamming", top=3)
    with pytest.raises(lf.ConfigError, match="'top'"):
        lf.Field("emb", blocking="cosine", top=0)


def test_explain_shows_the_vector_score(embeddings):
    frame = pd.DataFrame({"emb": object_vectors(embeddings[:10])})
    explained = frame.lsh.explain(
        (0, 1), [lf.Field("emb", blocking="cosine", threshold=0.9)]
    )
    (field,) = explained.fields
    assert (field.left, field.comparison) == ("(vector)", "cosine")
    first, second = embeddings[0], embeddings[1]
    cosine = first @ second / (np.linalg.norm(first) * np.linalg.norm(second))
    assert field.score == pytest.approx(max(cosine, 0.0), abs=1e-5)


@pytest.mark.parametrize(
    ("blocking", "make"),
    [
        ("cosine", lambda n, width: np.ones((n, width), dtype=np.float32)),
        ("hamming", lambda n, width: np.ones((n, width), dtype=bool)),
    ],
)
def test_linking_vectors_of_different_lengths_is_refused(blocking, make):
    # Keys from vectors of different lengths would never meet: refuse, not
    # return no pairs.
    left = pd.DataFrame({"v": arrow_vectors(make(6, 8))})
    right = pd.DataFrame({"v": arrow_vectors(make(6, 16))})
    field = lf.Field("v", blocking=blocking, threshold=0.9)
    with pytest.raises(lf.SignatureMismatchError, match="vectors of 8 values"):
        lf.candidates(left, [field], other=right)


@pytest.mark.parametrize(
    ("stray", "shown"),
    [(5.0, "5.0 (float)"), ("abcd", "'abcd' (str)"), (np.ones((2, 2)), "(ndarray)")],
)
def test_a_stray_value_among_vectors_is_named_by_its_row(stray, shown):
    """Issue 38, defect 15: a number gave "float has no len()", a string "vectors
    of different lengths (4)"."""
    vectors = pd.Series([np.ones(4), stray, np.ones(4)], dtype=object, index=[7, 8, 9])
    frame = pd.DataFrame({"vec": vectors})
    with pytest.raises(lf.ColumnTypeError) as raised:
        frame.lsh.candidates([lf.Field("vec", blocking="cosine", threshold=0.9)])
    message = str(raised.value)
    assert "Column 'vec'" in message and "row 8" in message and shown in message
    assert "\n" not in message
    with pytest.raises(lf.ColumnTypeError, match="row 8"):
        lf.cosine_nearest(vectors, top=2)
    # Vectors of two lengths are still told as such.
    ragged = pd.DataFrame({"vec": pd.Series([np.ones(4), np.ones(3)], dtype=object)})
    with pytest.raises(lf.ConfigError, match=r"different lengths \(3, 4\)"):
        ragged.lsh.candidates([lf.Field("vec", blocking="cosine", threshold=0.9)])


def test_top_beyond_the_vectors_is_capped():
    """Issue 38, defect 17: arrays of queries × top were merged per probed
    cluster, so top=20,000 on 200 vectors cost 30-60 times top=200."""
    from lsh_frame.block import vectors as block_vectors

    matrix = np.random.default_rng(3).normal(size=(200, 16)).astype(np.float32)
    vectors = pd.Series(list(matrix))
    pd.testing.assert_frame_equal(
        lf.cosine_nearest(vectors, top=20_000), lf.cosine_nearest(vectors, top=200)
    )
    found, scores = block_vectors.top_k_neighbours(
        matrix, None, top=20_000, probes=24, clusters=None, seed=1
    )
    assert found.shape == scores.shape == (200, 199)  # the others, not 20,000
    found, _ = block_vectors.top_k_neighbours(
        matrix[:5], matrix, top=20_000, probes=24, clusters=None, seed=1
    )
    assert found.shape == (5, 200)
    # The same through a top-k cosine field.
    frame = pd.DataFrame({"emb": vectors.iloc[:60]})
    pairs = [
        frame.lsh.candidates([lf.Field("emb", blocking="cosine", top=top)])
        for top in (59, 5_000)
    ]
    pd.testing.assert_frame_equal(pairs[0], pairs[1])
