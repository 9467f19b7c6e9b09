"""Key decisions: which keys a table gets, decided from the data.

Exact keys on columns that look like identifiers (nearly every value distinct,
small buckets), a record-level key over every given column, the neighbours key
where the budget allows, compound keys where two weak columns together are
selective; never a key on a low-cardinality column alone. Every choice comes
from statistics of the tables (distinct ratios, bucket sizes, a sample of
record similarities), never from column names, and is reported.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
import xxhash

from lsh_frame import _progress
from lsh_frame._kernels import pairs as pair_kernels
from lsh_frame._validation import check_columns, check_fraction, check_int
from lsh_frame.block.compound import compound_keys
from lsh_frame.block.fields import (
    BlockingKey,
    Field,
    SideKeys,
    _as_fields,
    _stored_config,
    automatic_fields,
    own_key_fields,
    spec_columns,
)
from lsh_frame.block.identical import IDENTICAL
from lsh_frame.block.keys import (
    _KEY_BITS,
    COMPOUND_SEPARATOR,
    _exact_keys,
    _vector_key,
    column_key_field,
    combined_keys,
    field_signatures,
    is_compound_field,
    is_compound_label,
    signing_work,
)
from lsh_frame.config import NEIGHBOURS_KEY, RECORD_KEY
from lsh_frame.errors import ConfigError
from lsh_frame.sketch.banding import LshPlan, plan, plan_for_budget
from lsh_frame.sketch.minhash import in_order
from lsh_frame.sketch.minhash_arrow import check_compatible
from lsh_frame.sketch.vectors import VECTOR_KINDS
from lsh_frame.text.labels import hash_labels, hash_values

#: Pairs of random records sampled to see how similar unrelated records are.
_SIMILARITY_SAMPLE = 20_000

#: Records sampled (by a hash of their values) to draw those pairs from.
_SAMPLE_RECORDS = 2 * _SIMILARITY_SAMPLE

#: A column is an identifier when 99% of its values are shared by at most this
#: many records of a table: a value shared by more does not single out an entity.
IDENTIFIER_BUCKET = 10

#: With the neighbours record key, which finds records that share a rare value
#: of a column anyway, an exact key is only for true identifiers: 99% of values
#: shared by at most this many records of a table (a record and its few
#: duplicates, or a household's phone). FEBRL4's addresses (99% within 9) then
#: add no key: 26,182 candidates became 13,537 at the same completeness (1.0).
NEIGHBOURS_IDENTIFIER_BUCKET = 5

#: ... and when an exact key on it yields at most this many pairs per record.
IDENTIFIER_PAIRS_PER_RECORD = 2


def identifier_field(column: Hashable) -> Field:
    """Return the exact key the defaults try on a column.

    Punctuation does not count: "310/246-1501" and "310-246-1501" are one
    phone number, "j.smith@x" and "jsmith@x" one address written two ways.
    """
    return Field(column, blocking="exact", strip_punctuation=True)


#: Linking, an exact key on an identifier is dropped when the two tables'
#: values meet for fewer than this share of the smaller table's records: they
#: are written differently on each side ("(1999)" after a title on one side
#: only), and the key would find (almost) no pair.
LINK_KEY_MIN_MEETING = 0.01

#: How plain column names are blocked besides their exact keys: one record-level
#: key over every column, "lsh" or "neighbours", or "both" (the LSH record key
#: and a neighbours key labelled NEIGHBOURS_KEY; the match model then chooses
#: which of their pairs to learn from, see lsh_frame.compare.training_pairs).
PLAIN_RECORD_KEY: Literal["lsh", "neighbours", "both"] = "both"


@dataclass(frozen=True)
class ExactProfile:
    """What an exact key on one column would do."""

    keyed: int
    distinct: int
    pairs: int
    typical_bucket: float

    def identifies(self, records: int, bucket: float = IDENTIFIER_BUCKET) -> bool:
        """Tell whether the column works as an identifier (see :func:`resolve`)."""
        return (
            self.keyed > 0
            and self.typical_bucket <= bucket
            and self.pairs <= IDENTIFIER_PAIRS_PER_RECORD * records
        )


def exact_counts(
    keys: npt.NDArray[np.uint64], valid: npt.NDArray[np.bool_]
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """Distinct exact keys of some records and how many records hold each."""
    return pair_kernels.sorted_unique(keys[valid, 0], return_counts=True)


def merge_counts(
    parts: list[tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]],
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """Unite :func:`exact_counts` of several parts of one table."""
    if len(parts) == 1:
        return parts[0]
    values = np.concatenate([part[0] for part in parts])
    counts = np.concatenate([part[1] for part in parts])
    order = np.argsort(values, kind="stable")
    values, counts = values[order], counts[order]
    first = np.ones(values.size, dtype=bool)
    first[1:] = values[1:] != values[:-1]
    starts = np.flatnonzero(first)
    summed = np.add.reduceat(counts, starts) if starts.size else counts[:0]
    return values[starts], summed.astype(np.int64)


def exact_profile(
    sides: list[tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]],
) -> ExactProfile:
    """Profile an exact key from each table's :func:`exact_counts`."""
    values = [side[0] for side in sides]
    counts = [side[1] for side in sides]
    if len(sides) == 1:
        pairs = int((counts[0] * (counts[0] - 1) // 2).sum())
    else:
        _, at_left, at_right = np.intersect1d(
            values[0], values[1], assume_unique=True, return_indices=True
        )
        pairs = int((counts[0][at_left] * counts[1][at_right]).sum())
    typical = max(
        (
            float(np.percentile(side, 99, method="higher"))
            for side in counts
            if side.size
        ),
        default=0.0,
    )
    return ExactProfile(
        keyed=int(sum(side.sum() for side in counts)),
        distinct=int(pair_kernels.sorted_unique(np.concatenate(values)).size),
        pairs=pairs,
        typical_bucket=typical,
    )


@dataclass(frozen=True)
class ExactSummary:
    """What :func:`exact_profile` reads, in a form that adds up over value ranges.

    ``sizes[side]`` and ``frequencies[side]``: each bucket size of that table's
    keys (sorted, distinct) and how many keys have it. Summaries of disjoint
    ranges of key values add up (:meth:`plus`) to the whole tables' summary,
    whose :meth:`profile` is :func:`exact_profile` of the whole tables.
    """

    keyed: int
    distinct: int
    pairs: int
    sizes: tuple[npt.NDArray[np.int64], ...]
    frequencies: tuple[npt.NDArray[np.int64], ...]

    @classmethod
    def of(
        cls, sides: list[tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]]
    ) -> ExactSummary:
        """Summarise each table's :func:`exact_counts` (of one range of keys)."""
        whole = exact_profile(sides) if sides else None
        spread = [np.unique(side[1], return_counts=True) for side in sides]
        return cls(
            keyed=0 if whole is None else whole.keyed,
            distinct=0 if whole is None else whole.distinct,
            pairs=0 if whole is None else whole.pairs,
            sizes=tuple(size.astype(np.int64) for size, _ in spread),
            frequencies=tuple(times.astype(np.int64) for _, times in spread),
        )

    def plus(self, other: ExactSummary) -> ExactSummary:
        """Return the summary of both ranges of keys (disjoint)."""
        sizes, frequencies = [], []
        for mine, theirs, my_times, their_times in zip(
            self.sizes, other.sizes, self.frequencies, other.frequencies, strict=True
        ):
            size, at = np.unique(np.concatenate([mine, theirs]), return_inverse=True)
            sizes.append(size)
            frequencies.append(
                np.bincount(
                    at, np.concatenate([my_times, their_times]), minlength=size.size
                ).astype(np.int64)
            )
        return ExactSummary(
            keyed=self.keyed + other.keyed,
            distinct=self.distinct + other.distinct,
            pairs=self.pairs + other.pairs,
            sizes=tuple(sizes),
            frequencies=tuple(frequencies),
        )

    def profile(self) -> ExactProfile:
        """Return :func:`exact_profile` of the tables summarised."""
        typical = 0.0
        for size, times in zip(self.sizes, self.frequencies, strict=True):
            total = int(times.sum())
            if total:
                # np.percentile(counts, 99, method="higher"), off the spread.
                position = int(np.ceil((total - 1) * (99 / 100)))
                at = int(np.searchsorted(np.cumsum(times), position, side="right"))
                typical = max(typical, float(size[at]))
        return ExactProfile(
            keyed=self.keyed,
            distinct=self.distinct,
            pairs=self.pairs,
            typical_bucket=typical,
        )


def _seed_key(seed: int) -> str:
    """Return the 16-character hash key of a seed, for pandas' hashing."""
    return xxhash.xxh64_hexdigest(str(seed).encode("ascii"))


def label_hashes(index: pd.Index, seed: int) -> npt.NDArray[np.uint64]:
    """Return a stable 64-bit hash of each label's text, keyed by the seed.

    An integer label and its decimal text hash alike (see
    :func:`lsh_frame.text.labels.label_text`).
    """
    return hash_labels(index, hash_key=_seed_key(seed))


def sample_hashes(
    frame: pd.DataFrame, columns: Sequence[Hashable], seed: int
) -> tuple[npt.NDArray[np.uint64], bool]:
    """Return each record's place in the similarity sample, and what it hashes.

    The hash (keyed by the seed) of the record's values in ``columns`` (every
    column of the fields being decided), so the sample, and the threshold
    chosen from it, depend on the records only: not on the rows' order, nor on
    their labels (integer ids and the same ids read as text choose alike).
    Records of equal values tie and are interchangeable in the sample. When a
    column holds values pandas cannot hash (stored signatures, vectors), or
    ``columns`` is empty, the hash of the labels' text (the flag is False).
    """
    hashed = hash_values(frame, columns, hash_key=_seed_key(seed))
    if hashed is not None:
        return hashed, True
    return label_hashes(frame.index, seed), False


def sample_rows(
    hashes: npt.NDArray[np.uint64],
    positions: npt.NDArray[np.int64],
    count: int = _SAMPLE_RECORDS,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """Pick the ``count`` records of smallest hash: ``(hashes, positions)``.

    Ordered by hash (then position). Taking the smallest of each part of a
    table and then the smallest of those gives the same sample, so it depends
    neither on the rows' order nor on how the table is partitioned.
    """
    if hashes.size > count:
        keep = np.argpartition(hashes, count - 1)[:count]
        # Ties at the boundary hash must not depend on argpartition's choice.
        boundary = hashes[keep].max()
        keep = np.flatnonzero(hashes <= boundary)
        hashes, positions = hashes[keep], positions[keep]
    order = np.lexsort((positions, hashes))[:count]
    return hashes[order], positions[order]


def sample_similarity(
    left: tuple[npt.NDArray, npt.NDArray[np.bool_]],
    right: tuple[npt.NDArray, npt.NDArray[np.bool_]] | None,
    seed: int,
) -> npt.NDArray[np.float64]:
    """Estimated Jaccard similarity of random pairs of sampled records.

    Each side is ``(signatures, valid)`` of the records :func:`sample_rows`
    picked, in its order; records without a signature are left out. The same
    records make the same pairs, whatever the engine.
    """
    rng = np.random.default_rng(seed)
    left_matrix, left_valid = left
    right_matrix, right_valid = right if right is not None else left
    left_matrix, right_matrix = left_matrix[left_valid], right_matrix[right_valid]
    size = min(_SIMILARITY_SAMPLE, len(left_matrix) * len(right_matrix))
    first = rng.integers(0, len(left_matrix), size)
    second = rng.integers(0, len(right_matrix), size)
    if right is None:
        keep = first != second
        first, second = first[keep], second[keep]
    return (left_matrix[first] == right_matrix[second]).mean(axis=1)


class KeySource:
    """What deciding the keys needs to see of the data (one engine's view).

    :func:`decide_keys` holds the rules; a source computes the numbers they
    look at, on pandas frames here and on partitions in ``lsh_frame.dask``.
    """

    left: pd.DataFrame  # the left table (or an empty frame of its columns)
    right: pd.DataFrame | None

    @property
    def n_left(self) -> int:
        """Rows of the left table."""
        raise NotImplementedError

    @property
    def n_right(self) -> int | None:
        """Rows of the right table (None for one table)."""
        raise NotImplementedError

    def exact_profile(self, spec: Field) -> ExactProfile:
        """Profile an exact key on one field."""
        raise NotImplementedError

    def profile_ahead(self, specs: list[Field]) -> None:
        """Prepare :meth:`exact_profile` of several fields at once (a hint).

        A source that can compute them side by side does so here; the profiles
        are the same either way.
        """

    def sample_similarity(self, spec: Field, num_perm: int, seed: int) -> Any:
        """Similarities of random record pairs in one field."""
        raise NotImplementedError

    def signing_work(self, spec: Field) -> int | None:
        """Rows :meth:`sample_similarity` signs here, for progress (None: unknown)."""
        return None

    def meets(self, profile: ExactProfile) -> bool:
        """Whether a link's two tables' values of an exact key ever agree.

        Always, deduplicating; linking, when the key yields pairs for at least
        ``LINK_KEY_MIN_MEETING`` of the smaller table's records.
        """
        n_right = self.n_right
        return n_right is None or profile.pairs >= LINK_KEY_MIN_MEETING * min(
            self.n_left, n_right
        )


class _FrameSource(KeySource):
    """Pandas frames; keeps the keys and signatures it computes for reuse."""

    def __init__(
        self,
        left: pd.DataFrame,
        right: pd.DataFrame | None,
        owner: str,
        columns: Sequence[Hashable],
    ):
        self.left, self.right, self.owner = left, right, owner
        self.columns = list(columns)  # every column of the fields: the sample's
        self.exact: dict[str, list[SideKeys]] = {}
        self._ahead: dict[Field, list[SideKeys]] = {}
        self.signatures: dict[str, list[tuple[Any, Any]]] = {}
        self._samples: list[npt.NDArray[np.int64]] | None = None

    @property
    def n_left(self) -> int:
        return len(self.left)

    @property
    def n_right(self) -> int | None:
        return len(self.right) if self.right is not None else None

    def tables(self) -> list[pd.DataFrame]:
        return [self.left] if self.right is None else [self.left, self.right]

    def exact_profile(self, spec: Field) -> ExactProfile:
        sides = self._ahead.pop(spec, None) or self._exact_sides(spec)
        self.exact[spec.label] = sides
        return exact_profile([exact_counts(side.keys, side.valid) for side in sides])

    def profile_ahead(self, specs: list[Field]) -> None:
        # Columns' keys are independent and their pyarrow and numpy work
        # releases the GIL: compute them on every core, in order.
        plain = [spec for spec in specs if not is_compound_field(spec)]
        for spec, sides in zip(plain, in_order(self._exact_sides, plain), strict=True):
            self._ahead[spec] = sides
            _progress.advance(1)  # the step shows the count of columns profiled

    def _exact_sides(self, spec: Field) -> list[SideKeys]:
        sides = []
        for number, table in enumerate(self.tables()):
            if is_compound_field(spec):
                # A compound key from its columns' keys, computed once each.
                keys, valid = combined_keys(
                    [
                        self._column_keys(column_key_field(spec, column), number)
                        for column in spec.columns
                    ],
                    spec.label,
                )
            else:
                keys, valid = _exact_keys(table, spec, owner=self.owner)
            sides.append(SideKeys(keys=keys, valid=valid, frame=table, field=spec))
        return sides

    def _column_keys(
        self, spec: Field, number: int
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
        """One table's exact keys of a column (profiled before, or now)."""
        if spec.label not in self.exact:
            self.exact_profile(spec)
        side = self.exact[spec.label][number]
        return side.keys, side.valid

    def signing_work(self, spec: Field) -> int | None:
        return signing_work(self.tables(), spec)

    def sample_similarity(self, spec: Field, num_perm: int, seed: int) -> Any:
        signed = [
            field_signatures(
                table, spec, num_perm=num_perm, seed=seed, owner=self.owner
            )
            for table in self.tables()
        ]
        self.signatures[spec.label] = signed
        if self._samples is None:
            self._samples = [
                sample_rows(
                    sample_hashes(table, self.columns, seed)[0],
                    np.arange(len(table), dtype=np.int64),
                )[1]
                for table in self.tables()
            ]
        sampled = [
            (matrix[rows], valid[rows])
            for (matrix, valid), rows in zip(signed, self._samples, strict=True)
        ]
        return sample_similarity(
            sampled[0], sampled[1] if len(sampled) > 1 else None, seed
        )


def decide_keys(
    source: KeySource,
    fields: Any,
    *,
    threshold: float | None,
    recall: float,
    num_perm: int,
    seed: int,
    owner: str,
) -> tuple[list[BlockingKey], list[str]]:
    """Decide the blocking keys of some fields (the rules of :func:`resolve`)."""
    frame, other = source.left, source.right
    # Checked here, whatever the fields: when every field is exact they are
    # never used, but a bad value is still a mistake the caller should hear of.
    threshold = check_fraction(threshold, "threshold", owner, optional=True)
    recall = check_fraction(recall, "recall", owner)  # type: ignore[assignment]
    specs, _ = _as_fields(fields, owner)
    for spec in specs:
        check_columns(frame, list(spec.columns), owner)
        if other is not None:
            check_columns(other, list(spec.columns), owner)
    automatic = automatic_fields(specs, frame)
    specs = own_key_fields(specs, automatic)
    num_perm = check_int(num_perm, "num_perm", owner, minimum=1, maximum=8192)
    seed = check_int(seed, "seed", owner, minimum=0)
    n_left, n_right = source.n_left, source.n_right
    total_pairs = (
        n_left * n_right if n_right is not None else n_left * (n_left - 1) // 2
    )
    n_records = n_left + (n_right or 0)
    # The record budget: about one unwanted pair per record. When linking, every
    # pair holds a record of each table, so a small table (a batch of new
    # records against a saved one) gets two per record of its own, not one per
    # record of the large table.
    if n_right is not None:
        n_records = min(n_records, 2 * min(n_left, n_right))
    decisions: list[str] = []
    keys: list[BlockingKey] = []

    if automatic:
        columns = spec_columns(automatic)
        bucket = (
            NEIGHBOURS_IDENTIFIER_BUCKET
            if PLAIN_RECORD_KEY == "neighbours"
            else IDENTIFIER_BUCKET
        )
        _progress.step(f"profiling {len(columns)} columns")
        source.profile_ahead([identifier_field(column) for column in columns])
        for column in columns:
            _progress.step(f"profiling {column}")
            profile = source.exact_profile(identifier_field(column))
            facts = (
                f"{profile.distinct:,} distinct values in {profile.keyed:,} records, "
                f"99% of values shared by at most {profile.typical_bucket:g} records "
                f"per table, {profile.pairs:,} pairs"
            )
            meets = source.meets(profile)
            identifies = profile.identifies(n_records, bucket)
            if identifies and not meets:
                decisions.append(
                    f"{column}: no exact key: its values would identify records, "
                    "but the two tables' values almost never agree "
                    f"({profile.pairs:,} pairs between {n_left:,} and {n_right:,} "
                    "records; they are written differently on each side); part of "
                    "the record key"
                )
            elif identifies:
                keys.append(BlockingKey(identifier_field(column), "exact"))
                decisions.append(f"{column}: exact key, identifies records ({facts})")
            else:
                decisions.append(
                    f"{column}: no key of its own ({facts}); part of the record key"
                )
        compound, said = compound_keys(
            source,
            columns,
            {key.field.columns[0] for key in keys if key.kind == "exact"},
            n_records,
            bucket,
        )
        keys += compound
        decisions += said
        record = Field(
            columns,
            tag_columns=True,
            name=RECORD_KEY,
            blocking="neighbours" if PLAIN_RECORD_KEY == "neighbours" else "lsh",
        )
        specs = [*specs, record]
        if PLAIN_RECORD_KEY == "both":
            specs.append(Field(columns, name=NEIGHBOURS_KEY, blocking="neighbours"))
    for spec in specs:
        if spec.blocking is None:
            decisions.append(f"{spec.label}: compared only, no blocking key")
            continue
        if spec.blocking == "exact":
            keys.append(BlockingKey(spec, "exact"))
            continue
        if spec.blocking == "neighbours":
            keys.append(BlockingKey(spec, "neighbours"))
            continue
        if spec.blocking == "cosine" and spec.top is not None:
            keys.append(BlockingKey(spec, "neighbours"))
            continue
        if spec.blocking in VECTOR_KINDS:
            vector_key = _vector_key(spec, threshold, recall, num_perm, owner)
            keys.append(vector_key)
            decisions.append(f"{spec.label}: {vector_key.describe()}")
            continue
        field_threshold = spec.threshold if spec.threshold is not None else threshold
        field_recall = spec.recall if spec.recall is not None else recall
        field_perm = num_perm
        stored = _stored_config(frame, spec)
        if other is not None and (stored is not None) != (
            _stored_config(other, spec) is not None
        ):
            raise ConfigError(
                f"Field {spec.label!r} is a signature column in one table but not in "
                "the other. Use signature columns in both, or text in both."
            )
        if stored is not None:
            if other is not None:
                other_config = _stored_config(other, spec)
                assert other_config is not None
                check_compatible(
                    stored, other_config, left_name=spec.label, right_name=spec.label
                )
            field_perm = stored.num_perm
        if spec.bands is not None and spec.rows is not None:
            if spec.bands * spec.rows > field_perm:
                raise ConfigError(
                    f"Field {spec.label!r} asks for {spec.bands} bands × {spec.rows} "
                    f"rows = {spec.bands * spec.rows} signature values, but signatures "
                    f"have num_perm={field_perm}. Use fewer bands or rows, or a "
                    "larger num_perm."
                )
            chosen = LshPlan(
                threshold=field_threshold
                or round((1 / spec.bands) ** (1 / spec.rows), 4),
                recall=field_recall,
                num_perm=field_perm,
                bands=spec.bands,
                rows=spec.rows,
            )
            decisions.append(f"{spec.label}: lsh key as given, {chosen}")
        elif field_threshold is None:
            _progress.step(f"signing {spec.label}", total=source.signing_work(spec))
            similarity = source.sample_similarity(spec, field_perm, seed)
            chosen = plan_for_budget(
                similarity,
                pairs=total_pairs,
                budget=n_records,
                num_perm=field_perm,
                recall=field_recall,
            )
            expected = chosen.expected_false_positives or 0.0
            missed = (
                f"; the budget of {n_records:,} is not met even at the highest "
                "threshold: records are too alike in this field for it to block "
                "on alone, so expect many candidates (combine it with other columns)"
                if expected > n_records
                else ""
            )
            decisions.append(
                f"{spec.label}: lsh key, threshold {chosen.threshold:g} chosen from "
                f"the data ({chosen.bands} bands × {chosen.rows} rows, "
                f"P({chosen.threshold:g}) = {chosen.recall_at_threshold:.3f}; "
                f"about {expected:,.0f} false positives expected{missed})"
            )
        else:
            chosen = plan(field_threshold, num_perm=field_perm, recall=field_recall)
            decisions.append(f"{spec.label}: lsh key, {chosen}")
        keys.append(BlockingKey(spec, "lsh", chosen))
    named = [
        key.label
        for key in keys
        if is_compound_label(key.label) and not is_compound_field(key.field)
    ]
    if named:
        raise ConfigError(
            f"{owner} got a blocking key named {named[0]!r}, but "
            f"{COMPOUND_SEPARATOR!r} in a name marks the keys on two columns "
            "together in found_by. Rename the column, or give the field a name "
            f"without it (Field(..., name=...))."
        )
    if any(key.label == IDENTICAL for key in keys):
        raise ConfigError(
            f"{owner} got a blocking key named {IDENTICAL!r}, but that name marks "
            "the pairs of identical rows in found_by. Give the field another name, "
            f"for example Field({IDENTICAL!r}, blocking=..., name='{IDENTICAL}_key')."
        )
    if len(keys) > 1 << _KEY_BITS:
        raise ConfigError(
            f"{owner} got {len(keys)} blocking keys; at most {1 << _KEY_BITS} are "
            "supported. Combine columns into fewer fields."
        )
    if not keys:
        raise ConfigError(
            f"None of the fields given to {owner} makes a blocking key (all have "
            "blocking=None). Give at least one field blocking='lsh' or 'exact'."
        )
    return keys, decisions
