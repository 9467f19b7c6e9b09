"""Key values: LSH band keys from signatures, exact keys from text.

Each key of a call becomes one uint64 per record (or several, for LSH
bands); records with equal key values share a bucket. Missing, blank and
too-short values get no key.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

from lsh_frame import _progress
from lsh_frame._kernels import hashing
from lsh_frame._kernels import keys as key_kernels
from lsh_frame._kernels import pairs as pair_kernels
from lsh_frame.block.fields import BlockingKey, Field, SideKeys, _stored_config
from lsh_frame.config import MinHashConfig
from lsh_frame.errors import ConfigError
from lsh_frame.sketch.banding import LshPlan, plan
from lsh_frame.sketch.minhash import sign_array, signer
from lsh_frame.sketch.minhash_arrow import signature_matrix, value_type
from lsh_frame.sketch.vectors import VECTOR_KINDS, band_keys_from_bits, side_hashes
from lsh_frame.text.shingle import (
    SMALL_BATCH_VALUES,
    column_text,
    normalize,
    normalized_codepoints,
)

if TYPE_CHECKING:
    from lsh_frame.block.fields import BlockingContext
    from lsh_frame.config import ShingleConfig
    from lsh_frame.text.shingle import ColumnTexts


#: Bits of a coded pair that hold the index of the key that found it.
_KEY_BITS = 6


#: Joins the columns in a compound key's label and marks it in ``found_by``
#: (``"surname&&date_of_birth"``); no other key's label may hold it.
COMPOUND_SEPARATOR = "&&"


def _salt(column: Hashable) -> int:
    """Stable 64-bit salt of a column label (separates columns' tokens)."""
    return xxhash.xxh64_intdigest(repr(column).encode("utf-8"))


def signing_work(frames: list[pd.DataFrame], spec: Field) -> int | None:
    """Rows :func:`field_signatures` signs for these frames (None: stored ones)."""
    if any(_stored_config(frame, spec) is not None for frame in frames):
        return None
    return sum(len(frame) for frame in frames) * len(spec.columns)


def field_signatures(
    frame: pd.DataFrame,
    spec: Field,
    *,
    num_perm: int,
    seed: int,
    owner: str,
    texts: ColumnTexts | None = None,
) -> tuple[npt.NDArray, npt.NDArray[np.bool_]]:
    """MinHash signatures of a field: stored ones, or computed from its text.

    The signature of a field over several columns is the element-wise minimum
    of the columns' signatures, which is exactly the MinHash of the pooled
    token set; each column is signed in chunks on all cores. ``texts`` holds
    the frame's columns' text when already converted.
    """
    if _stored_config(frame, spec) is not None:
        return signature_matrix(frame[spec.columns[0]])
    # Classic MinHash (the default scheme): the element-wise minimum of the
    # columns' signatures is the signature of their pooled tokens. It is not
    # for the "fss32" sketch, whose slots a fallback value can fill.
    config = MinHashConfig(num_perm=num_perm, seed=seed, shingle=spec.shingle_config)
    assert config.scheme != "fss32"
    if (
        config.shingle.kind == "char"
        and len(spec.columns) > 1
        and len(frame) * len(spec.columns) <= SMALL_BATCH_VALUES
    ):
        return _pooled_signatures(frame, spec, config, owner, texts)
    if len(spec.columns) == 1:
        return sign_array(
            column_text(frame, spec.columns[0], owner=owner, texts=texts),
            config,
            salt=_salt(spec.columns[0]) if spec.tag_columns else 0,
        )
    # Each column lowers one matrix a chunk at a time (rows without tokens
    # leave it alone): no matrix per column.
    dtype = value_type(config.scheme).to_pandas_dtype()
    combined = np.full((len(frame), num_perm), np.iinfo(dtype).max, dtype=dtype)
    any_valid = np.zeros(len(frame), dtype=bool)
    for column in spec.columns:
        _, valid = sign_array(
            column_text(frame, column, owner=owner, texts=texts),
            config,
            salt=_salt(column) if spec.tag_columns else 0,
            minimum_into=combined,
        )
        any_valid |= valid
    combined[~any_valid] = 0
    return combined, any_valid


def _pooled_signatures(
    frame: pd.DataFrame,
    spec: Field,
    config: MinHashConfig,
    owner: str,
    texts: ColumnTexts | None = None,
) -> tuple[npt.NDArray, npt.NDArray[np.bool_]]:
    """Sign a few records' columns as one pooled token set each.

    The same signatures as signing column by column and taking the minimum
    (MinHash of a union is the minimum of the MinHashes), in one pass over
    all the columns: for a batch of new records the passes, not the values,
    are the cost.
    """
    n, columns = len(frame), spec.columns
    arrays = [
        column_text(frame, column, owner=owner, texts=texts) for column in columns
    ]
    k = config.shingle.k
    assert k is not None
    tags = np.repeat(
        np.array(
            [
                hashing.token_tag("char", k, _salt(column) if spec.tag_columns else 0)
                for column in columns
            ],
            dtype=np.uint64,
        ),
        n,
    )
    points, offsets = normalized_codepoints(pa.concat_arrays(arrays), config.shingle)
    hashes, token_offsets = hashing.char_shingles(points, offsets, k, tags)
    # Value v belongs to record v % n: regroup the tokens by record.
    owners = np.repeat(
        np.arange(len(columns) * n, dtype=np.int64) % max(n, 1), np.diff(token_offsets)
    )
    order = np.argsort(owners, kind="stable")
    counts = np.bincount(owners, minlength=n)
    record_offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    dtype = value_type(config.scheme).to_pandas_dtype()
    matrix = np.zeros((n, config.num_perm), dtype=dtype)
    valid = counts > 0
    if n:
        signer(config)(hashes[order], record_offsets, matrix)
    matrix[~valid] = 0
    _progress.advance(n * len(columns))  # the values signing_work counts
    return matrix, valid


def _field_text(
    frame: pd.DataFrame,
    spec: Field,
    *,
    owner: str,
    texts: ColumnTexts | None = None,
) -> pa.Array:
    """Return a field's raw text, its columns joined by a space, nulls kept.

    ``texts`` holds the frame's columns' text when already converted.
    """
    arrays = [
        column_text(frame, column, owner=owner, texts=texts) for column in spec.columns
    ]
    if len(arrays) == 1:
        return arrays[0]
    # Join pairwise and fall back to whichever side is present: the same as
    # null_handling="skip", which (pyarrow 26) drops rows whose every input is
    # null instead of returning null for them.
    separator = pa.scalar(" ", pa.large_string())
    joined = arrays[0]
    for array in arrays[1:]:
        both = pc.binary_join_element_wise(joined, array, separator)
        joined = pc.coalesce(both, joined, array)
    return joined


def _exact_keys(
    frame: pd.DataFrame,
    spec: Field,
    *,
    owner: str,
    texts: ColumnTexts | None = None,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
    """One 64-bit key per normalised value; missing or blank values get none.

    Values that repeat (dates, cities, postcodes) are normalised and hashed once
    per distinct raw value.
    """
    if is_compound_field(spec):
        return _compound_keys(frame, spec, owner=owner, texts=texts)
    text = _field_text(frame, spec, owner=owner, texts=texts)
    encoded = pc.dictionary_encode(text)
    distinct = encoded.dictionary
    repeats = 0 < len(distinct) <= len(text) // 2
    keys, valid = _value_hashes(distinct if repeats else text, spec.shingle_config)
    keys ^= np.uint64(_salt(spec.label))
    if repeats:
        present = encoded.indices.is_valid().to_numpy(zero_copy_only=False)
        codes = pc.fill_null(encoded.indices, 0).to_numpy(zero_copy_only=False)
        keys, valid = keys[codes], valid[codes] & present
    return keys[:, None], valid


def _compound_keys(
    frame: pd.DataFrame,
    spec: Field,
    *,
    owner: str,
    texts: ColumnTexts | None = None,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
    """Return a compound field's keys: its columns' exact keys together.

    A record has one only when every column holds a value: a missing date of
    birth beside a surname is not a value the key could agree on.
    """
    parts = [
        _exact_keys(frame, column_key_field(spec, column), owner=owner, texts=texts)
        for column in spec.columns
    ]
    return combined_keys(parts, spec.label)


def column_key_field(spec: Field, column: Hashable) -> Field:
    """Return the exact key of one column of a compound field."""
    return Field(
        column,
        blocking="exact",
        strip_punctuation=spec.strip_punctuation,
        strip_accents=spec.strip_accents,
    )


def combined_keys(
    parts: list[tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]], label: str
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
    """One key per record from several columns' keys; all of them present."""
    keys = np.full(parts[0][1].size, np.uint64(_salt(label)))
    valid = np.ones(parts[0][1].size, dtype=bool)
    for column_keys, column_valid in parts:
        keys = hashing.splitmix64(keys ^ column_keys[:, 0])
        valid &= column_valid
    return keys[:, None], valid


def _exact_keys_together(
    frame: pd.DataFrame,
    specs: list[Field],
    *,
    owner: str,
    texts: ColumnTexts | None = None,
) -> dict[str, SideKeys]:
    """Compute the exact keys of several fields of one configuration at once.

    The keys of :func:`_exact_keys`, for a few records (a batch of new ones),
    where one pass over all the fields costs far less than one per field.
    """
    n = len(frame)
    arrays = [_field_text(frame, spec, owner=owner, texts=texts) for spec in specs]
    hashes, present = _value_hashes(pa.concat_arrays(arrays), specs[0].shingle_config)
    result = {}
    for number, spec in enumerate(specs):
        part = slice(number * n, (number + 1) * n)
        result[spec.label] = SideKeys(
            keys=(hashes[part] ^ np.uint64(_salt(spec.label)))[:, None],
            valid=present[part],
            frame=frame,
            field=spec,
        )
    return result


def _value_hashes(
    text: pa.Array, config: ShingleConfig
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
    """Hash each normalised value whole; blank or missing ones are not valid."""
    points, offsets = normalized_codepoints(text, config)
    starts, ends = offsets[:-1], offsets[1:]
    return hashing.word_hashes(points, starts, ends), ends > starts


def _sample_text(side: SideKeys, position: int) -> str:
    """Return the normalised text of one record of a field, to show buckets."""
    if _stored_config(side.frame, side.field) is not None:
        return "(signatures only)"
    if side.field.blocking in VECTOR_KINDS:
        return "(vectors)"
    row = side.frame.iloc[[position]]
    text = normalize(
        _field_text(row, side.field, owner="report"), side.field.shingle_config
    )
    value = text[0].as_py()
    return "" if value is None else value


def _side_keys(
    frame: pd.DataFrame,
    key: BlockingKey,
    *,
    num_perm: int,
    seed: int,
    owner: str,
    signatures: tuple[npt.NDArray, npt.NDArray[np.bool_]] | None = None,
    texts: ColumnTexts | None = None,
) -> SideKeys:
    if key.kind == "exact":
        keys, valid = _exact_keys(frame, key.field, owner=owner, texts=texts)
        return SideKeys(keys=keys, valid=valid, frame=frame, field=key.field)
    assert key.plan is not None
    if key.kind in VECTOR_KINDS:
        (column,) = key.field.columns
        hashes, valid, width = side_hashes(
            frame[column], key.kind, key.plan.used_perm, seed,
            column=column, owner=owner,
        )  # fmt: skip
        keys = band_keys_from_bits(
            hashes, key.plan.bands, key.plan.rows, salt=_salt(key.label)
        )
        return SideKeys(
            keys=keys, valid=valid, frame=frame, field=key.field, width=width
        )
    if signatures is None:
        _progress.step(f"signing {key.label}", total=signing_work([frame], key.field))
        signatures = field_signatures(
            frame, key.field, num_perm=num_perm, seed=seed, owner=owner, texts=texts
        )
    matrix, valid = signatures
    keys = key_kernels.band_keys(
        matrix, key.plan.bands, key.plan.rows, salt=_salt(key.label)
    )
    return SideKeys(keys=keys, valid=valid, frame=frame, field=key.field)


def compound_field(columns: tuple[Hashable, ...]) -> Field:
    """Return the exact key the defaults try on several columns together."""
    return Field(
        list(columns),
        blocking="exact",
        strip_punctuation=True,
        tag_columns=True,
        name=COMPOUND_SEPARATOR.join(str(column) for column in columns),
    )


def is_compound_field(spec: Field) -> bool:
    """Tell whether a field is an exact key on several columns kept apart."""
    return spec.blocking == "exact" and spec.tag_columns and len(spec.columns) > 1


def is_compound_label(label: str) -> bool:
    """Tell whether a ``found_by`` label names a compound key."""
    return COMPOUND_SEPARATOR in label


def _vector_key(
    spec: Field, threshold: float | None, recall: float, num_perm: int, owner: str
) -> BlockingKey:
    """Plan a bit-sampling or random-hyperplane key (see lsh_frame.sketch)."""
    assert spec.blocking == "hamming" or spec.blocking == "cosine"
    field_threshold = spec.threshold if spec.threshold is not None else threshold
    field_recall = spec.recall if spec.recall is not None else recall
    if spec.bands is not None and spec.rows is not None:
        chosen = LshPlan(
            threshold=field_threshold or 0.5,
            recall=field_recall,
            num_perm=max(num_perm, spec.bands * spec.rows),
            bands=spec.bands,
            rows=spec.rows,
            metric=spec.blocking,
        )
    elif field_threshold is None:
        measure = "share of equal bits" if spec.blocking == "hamming" else "cosine"
        raise ConfigError(
            f"Field {spec.label!r} (blocking={spec.blocking!r}) needs a threshold: "
            f"the {measure} its pairs should reach, in (0, 1]. Got none. Give "
            f"Field({spec.columns[0]!r}, blocking={spec.blocking!r}, threshold=0.9) "
            "or the call's threshold=."
        )
    else:
        chosen = plan(
            field_threshold, num_perm=num_perm, recall=field_recall,
            metric=spec.blocking,
        )  # fmt: skip
    return BlockingKey(spec, spec.blocking, chosen)


def table_keys(
    table: pd.DataFrame,
    keys: list[BlockingKey],
    *,
    num_perm: int,
    seed: int,
    owner: str,
    exact: dict[str, SideKeys] | None = None,
    signatures: dict[str, tuple[Any, Any]] | None = None,
    keyed: dict[int, npt.NDArray[np.bool_]] | None = None,
    texts: ColumnTexts | None = None,
) -> list[SideKeys]:
    """One table's keys for each blocking key.

    ``exact`` and ``signatures`` hold keys and signatures already computed
    (by label); ``keyed`` which records a neighbours key could look up (by the
    key's position), which has no keys of its own: its side keeps none.
    ``texts`` holds the table's columns' text when already converted.
    """
    exact, signatures, keyed = dict(exact or {}), signatures or {}, keyed or {}
    pending = [key.field for key in keys if key.kind == "exact"]
    # A compound key combines its columns' keys (see _compound_keys).
    pending = [
        spec
        for spec in pending
        if spec.label not in exact and not is_compound_field(spec)
    ]
    if len(pending) > 1 and len(table) * len(pending) <= SMALL_BATCH_VALUES:
        for config in {spec.shingle_config for spec in pending}:
            alike = [spec for spec in pending if spec.shingle_config == config]
            exact.update(_exact_keys_together(table, alike, owner=owner, texts=texts))
    result = []
    for index, key in enumerate(keys):
        if key.kind == "neighbours":
            result.append(
                SideKeys(
                    keys=np.empty((len(table), 0), dtype=np.uint64),
                    valid=keyed.get(index, np.zeros(len(table), dtype=bool)),
                    frame=table,
                    field=key.field,
                )
            )
        elif key.kind == "exact" and key.label in exact:
            result.append(exact[key.label])
        else:
            result.append(
                _side_keys(
                    table,
                    key,
                    num_perm=key.plan.num_perm if key.plan is not None else num_perm,
                    seed=seed,
                    owner=owner,
                    signatures=signatures.get(key.label),
                    texts=texts,
                )
            )
    return result


def key_buckets(context: BlockingContext, index: int) -> pair_kernels.Buckets:
    """All buckets of one key (before the size cap).

    Each band is grouped on its own: the band index is part of every band key,
    so no bucket spans two bands, and sorting one band at a time stays in cache.
    """
    left = context.left[index]
    right = context.right[index] if context.right is not None else None
    left_rows = np.flatnonzero(left.valid).astype(np.int64)
    right_rows = (
        np.flatnonzero(right.valid).astype(np.int64) if right is not None else None
    )
    sides = (
        np.concatenate([np.zeros(left_rows.size, bool), np.ones(right_rows.size, bool)])
        if right_rows is not None
        else None
    )
    positions = (
        np.concatenate([left_rows, right_rows]) if right_rows is not None else left_rows
    )
    parts = []
    for band in range(left.keys.shape[1]):
        keys = left.keys[left_rows, band]
        if right is not None:
            keys = np.concatenate([keys, right.keys[right_rows, band]])
        parts.append(pair_kernels.group(keys, positions, sides))
    return pair_kernels.concatenate(parts)
