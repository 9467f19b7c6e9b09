"""The score plan: the comparison of every field, decided once for a call.

:func:`plan_score` resolves each field's comparison (from its values when not
given) and everything the tables say about it (document frequencies for
``"tfidf"``, the special readings of :mod:`lsh_frame.compare.table_checks`),
so that any part of the pairs scores exactly as all of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lsh_frame._kernels.pairs import sorted_unique
from lsh_frame._validation import check_bool, check_columns, check_int
from lsh_frame.block.fields import _as_fields, _stored_config
from lsh_frame.block.keys import _field_text
from lsh_frame.compare import tfidf as _tfidf
from lsh_frame.compare.auto import auto_typed_comparison
from lsh_frame.compare.codes import (
    CodeEvidence,
    CodeFrequencies,
    RecordCodes,
    reads_codes,
)
from lsh_frame.compare.information import FieldInformation, field_information
from lsh_frame.compare.levels import cuts_for, levels_of
from lsh_frame.compare.numbers_dates import YEAR_CUTS
from lsh_frame.compare.text import SCORERS
from lsh_frame.errors import ConfigError
from lsh_frame.sketch.vectors import VECTOR_KINDS

if TYPE_CHECKING:
    from lsh_frame.block.fields import Field
    from lsh_frame.compare import nicknames as _nicknames
    from lsh_frame.compare import swaps as _swaps
    from lsh_frame.compare.placeholder_dates import DayCheck
    from lsh_frame.decide.model import MatchModel


#: Rows of a table that ``compare="auto"`` looks at (evenly spaced).
_AUTO_COMPARE_ROWS = 20_000

#: ``compare="auto"`` picks ``"digits"`` when at least this share of the
#: non-blank values are digits written with spaces, dashes, brackets or a plus
#: sign only ...
DIGITS_SHARE = 0.9

#: ... and the median value holds at least this many digits: phone numbers,
#: account and card numbers, national ids. Shorter codes (postcodes, street
#: numbers) are bare digits, which every comparison reads alike.
DIGITS_MIN = 7

#: A value of digits, spaces, dashes, brackets and a plus sign only.
_DIGIT_CODE = r"^[0-9 ()+\-]*[0-9][0-9 ()+\-]*$"

#: ``compare="auto"`` picks ``"tfidf"`` when the median non-blank value holds
#: at least this many words: product names (8 on Abt-Buy) and descriptions,
#: citation titles, author lists and venues (7 to 8 on Cora) do; names,
#: street addresses (2 to 3), places, dates and codes do not.
TFIDF_MIN_WORDS = 5


def comparison_rows(table: pd.DataFrame) -> pd.DataFrame:
    """Return the evenly spaced rows ``compare="auto"`` looks at."""
    return table.iloc[:: comparison_step(len(table))]


def comparison_step(rows: int) -> int:
    """Return the spacing of the rows ``compare="auto"`` looks at."""
    return max(1, rows // _AUTO_COMPARE_ROWS)


def _resolve_comparison(spec: Field, samples: list[pd.DataFrame], owner: str) -> str:
    """Return the field's comparison.

    ``"auto"`` looks at up to ``_AUTO_COMPARE_ROWS`` evenly spaced rows of each
    table (``samples``, from :func:`comparison_rows`: a share or a median needs
    no more), never at which pairs are scored. Date columns, float columns and
    text that is mostly dates or marked numbers get ``"date"`` or ``"number"``
    (see :func:`lsh_frame.compare.auto.auto_typed_comparison`); codes of
    digits, most of at least :data:`DIGITS_MIN` digits, ``"digits"``
    (:func:`_digit_codes`); otherwise it counts the words of the non-blank
    values: a median of at least ``TFIDF_MIN_WORDS`` → ``"tfidf"`` (long
    text, where rare words decide); else more than half of them with several
    words → ``"token_sort_ratio"``; else ``"ratio"``.
    """
    if spec.compare != "auto":
        return spec.compare
    texts = [_field_text(sample, spec, owner=owner) for sample in samples]
    text = pc.utf8_trim_whitespace(
        pa.concat_arrays(texts) if len(texts) > 1 else texts[0]
    )
    typed = auto_typed_comparison(
        [sample[spec.columns[0]] for sample in samples]
        if len(spec.columns) == 1
        else None,
        text,
    )
    if typed is not None:
        return typed
    if _digit_codes(text):
        return "digits"
    filled = pc.fill_null(pc.not_equal(text, ""), False).to_numpy(zero_copy_only=False)
    words = pc.list_value_length(pc.utf8_split_whitespace(text))
    words = pc.fill_null(words, 0).to_numpy(zero_copy_only=False)[filled]
    if not words.size:
        return "ratio"
    if np.median(words) >= TFIDF_MIN_WORDS:
        return "tfidf"
    return "token_sort_ratio" if np.mean(words > 1) > 0.5 else "ratio"


def _digit_codes(text: pa.Array) -> bool:
    """Whether sampled text reads as codes of digits (see :data:`DIGITS_SHARE`).

    From the values only: a phone column read by ``pd.read_csv`` as floats
    (``774674346``) and as text (``0774674346``, ``(07) 7467 4346``) decides
    alike.

    Examples
    --------
    >>> _digit_codes(pa.array(["(07) 7467 4346", "0774674346", "+61 7 7467 4346"]))
    True
    >>> _digit_codes(pa.array(["4870", "0800", "2606"]))  # bare short codes
    False
    """
    present = pc.filter(text, pc.fill_null(pc.not_equal(text, ""), False))
    if not len(present):
        return False
    codes = pc.filter(present, pc.match_substring_regex(present, _DIGIT_CODE))
    if len(codes) < DIGITS_SHARE * len(present):
        return False
    digits = pc.utf8_length(pc.replace_substring_regex(codes, r"[^0-9]+", ""))
    return bool(np.median(digits.to_numpy(zero_copy_only=False)) >= DIGITS_MIN)


def _rows_in_use(
    table: pd.DataFrame, *positions: npt.NDArray[np.int64]
) -> tuple[pd.DataFrame, list[npt.NDArray[np.int64]]]:
    """Return the rows the pairs name, when they are few, and positions into them.

    Scoring a handful of pairs (new records against a saved table, or one pair
    to explain) then costs the rows it needs, not the whole table.
    """
    if sum(part.size for part in positions) * 2 > len(table):
        return table, list(positions)  # they may name most rows: skip the sort
    rows = sorted_unique(np.concatenate(positions))
    if rows.size * 2 > len(table):
        return table, list(positions)
    return table.iloc[rows], [np.searchsorted(rows, part) for part in positions]


@dataclass(frozen=True)
class ScorePlan:
    """What scoring decided before looking at any pair (checked options)."""

    specs: list[Field]
    min_score: float | Literal["auto"] | MatchModel
    comparisons: dict[str, str]
    values: bool
    estimate: tuple[int, int] | None  # (num_perm, seed) when asked
    link: bool
    #: Document frequencies of the ``"tfidf"`` fields over every record of
    #: the tables (see :func:`count_documents`), by field label.
    frequencies: dict[str, _tfidf.DocumentFrequencies] = field(default_factory=dict)
    #: Pairs of fields whose values trade places in the tables (see
    #: :func:`check_swaps`): a pair matching better crossed scores crossed.
    swaps: tuple[tuple[str, str], ...] = ()
    #: The statistics that decided ``swaps`` (none when a model gave them).
    swap_checks: tuple[_swaps.SwapCheck, ...] = ()
    #: Fields that hold another's value where that one is missing, as
    #: ``(field, into)`` (see :func:`check_swaps`): a pair matching better so
    #: is read with ``field``'s value as ``into``'s.
    shifts: tuple[tuple[str, str], ...] = ()
    #: The statistics that decided ``shifts`` (none when a model gave them).
    shift_checks: tuple[_swaps.ShiftCheck, ...] = ()
    #: Fields of given names (see :func:`check_nicknames`): the decision reads
    #: two familiar forms of one name as nearly agreeing.
    nicknames: tuple[str, ...] = ()
    #: The statistics that decided ``nicknames`` (none when a model gave them).
    name_checks: tuple[_nicknames.NameCheck, ...] = ()
    #: Placeholder days of the ``"date"`` fields (``month * 100 + day``; see
    #: :func:`check_dates`): a date on one is known only to its year.
    placeholders: dict[str, tuple[int, ...]] = field(default_factory=dict)
    #: ``"date"`` fields holding values known only to their year: read at
    #: YEAR_CUTS, where "the years agree" is a level of its own.
    year_fields: tuple[str, ...] = ()
    #: The statistics that decided both (none when a model gave them).
    date_checks: tuple[DayCheck, ...] = ()
    #: The identifier codes read from the text fields (see
    #: :mod:`lsh_frame.compare.codes`), or None when the tables hold no long text.
    codes: CodeReading | None = None
    #: Whether each counted field identifies on its own (see
    #: :mod:`lsh_frame.compare.information`), read when ``min_score`` is
    #: ``"auto"``: the fallback cut without a model counts only those.
    information: tuple[FieldInformation, ...] = ()

    @property
    def identifying(self) -> list[str]:
        """Labels of the counted fields that can join two records on their own."""
        return [reading.label for reading in self.information if reading.identifying]

    @property
    def tfidf_fields(self) -> list[Field]:
        """The fields compared by ``"tfidf"`` (they need document frequencies)."""
        return [spec for spec in self.specs if self.comparisons[spec.label] == "tfidf"]

    @property
    def given_model(self) -> MatchModel | None:
        """The learned model given as ``min_score``, if any."""
        return given_model(self.min_score)

    @property
    def counted(self) -> list[Field]:
        """The fields that count towards ``score`` and the match model."""
        return [spec for spec in self.specs if spec.weight > 0]

    @property
    def field_cuts(self) -> dict[str, tuple[float, ...]]:
        """Level cuts of each counted field: the given model's, or by comparison."""
        given = self.given_model
        if given is not None:
            return {label: given.cuts_of(label) for label in self.labels}
        return {
            label: YEAR_CUTS
            if label in self.year_fields
            else cuts_for(self.comparisons.get(label, "codes"))
            for label in self.labels
        }

    @property
    def labels(self) -> list[str]:
        """Labels of the counted fields, in order (the model's field columns).

        The identifier codes, when read, come last.
        """
        labels = [spec.label for spec in self.counted]
        return labels if self.codes is None else [*labels, self.codes.label]

    def placeholders_of(self, label: str) -> tuple[int, ...] | None:
        """Return a date field's placeholder days; None unless read at YEAR_CUTS."""
        if label not in self.year_fields:
            return None
        return self.placeholders.get(label, ())

    def levels(
        self, field_scores: dict[str, npt.NDArray[np.float64]]
    ) -> dict[str, npt.NDArray[np.intp]]:
        """Match-model levels of the counted fields."""
        cuts = self.field_cuts  # every field's, built at each reading
        return {
            label: levels_of(field_scores[label], cuts[label]) for label in self.labels
        }


def given_model(min_score: float | Literal["auto"] | MatchModel) -> MatchModel | None:
    """Return the learned model a checked ``min_score`` holds, if it holds one."""
    return None if isinstance(min_score, (str, float)) else min_score


def plan_score(
    tables: list[pd.DataFrame],
    samples: list[pd.DataFrame],
    fields: Any,
    *,
    min_score: Any,
    values: Any,
    estimate: Any,
    num_perm: Any,
    seed: Any,
    owner: str,
) -> ScorePlan:
    """Check the options of :func:`score` and resolve each field's comparison.

    ``min_score`` comes checked (:func:`lsh_frame.decide.matches.check_min_score`):
    a cut, ``"auto"`` or a learned model.

    ``tables`` are the frames (or empty frames of their columns), ``samples``
    their :func:`comparison_rows`.
    """
    specs, _ = _as_fields(fields, owner)
    checked = min_score
    given = given_model(checked)
    values = check_bool(values, "values", owner)
    estimate = check_bool(estimate, "estimate", owner)
    if estimate:
        num_perm = check_int(num_perm, "num_perm", owner, minimum=1, maximum=8192)
        seed = check_int(seed, "seed", owner, minimum=0)
    for spec in specs:
        for table in tables:
            check_columns(table, list(spec.columns), owner)
    if not any(spec.weight > 0 for spec in specs):
        raise ConfigError(
            f"Every field passed to {owner} has weight 0, so no pair can get a "
            "combined score. Give at least one field a weight above 0."
        )
    if given is not None:
        given.check_fields(specs, owner)
    comparisons = {}
    for spec in specs:
        if _stored_config(tables[0], spec) is not None:
            comparisons[spec.label] = "estimate"
            continue
        if spec.compare in VECTOR_KINDS or (
            spec.compare == "auto" and spec.blocking in VECTOR_KINDS
        ):
            comparisons[spec.label] = (
                spec.compare if spec.compare != "auto" else str(spec.blocking)
            )
            continue
        comparison = _resolve_comparison(spec, samples, owner)
        if given is not None and spec.compare == "auto":
            # Score as the model was learned, whatever this batch looks like.
            comparison = given.compare.get(spec.label, comparison)
        comparisons[spec.label] = comparison
    plan = ScorePlan(
        specs=specs,
        min_score=checked,
        comparisons=comparisons,
        values=values,
        estimate=(num_perm, seed) if estimate else None,
        link=len(tables) > 1,
        information=_information(specs, comparisons, samples, checked, owner),
    )
    text = code_fields(plan)
    if not text and (given is None or given.codes is None):
        return plan
    reading = code_reading(
        plan, [CodeEvidence.of_table(sample, text, owner) for sample in samples]
    )
    return plan if reading is None else replace(plan, codes=reading)


def _information(
    specs: list[Field],
    comparisons: dict[str, str],
    samples: list[pd.DataFrame],
    min_score: Any,
    owner: str,
) -> tuple[FieldInformation, ...]:
    """Whether each counted field identifies; none read unless ``"auto"``."""
    if not isinstance(min_score, str):
        return ()
    counted = [spec for spec in specs if spec.weight > 0]
    # Signatures and vectors hold long text or embeddings: they identify.
    opaque = {"estimate", *VECTOR_KINDS}
    read = {
        reading.label: reading
        for reading in field_information(
            [spec for spec in counted if comparisons[spec.label] not in opaque],
            comparisons,
            samples,
            owner,
        )
    }
    return tuple(
        read.get(spec.label, FieldInformation(spec.label, True, float("nan"), ""))
        for spec in counted
    )


def count_documents(
    plan: ScorePlan, tables: list[pd.DataFrame], owner: str
) -> ScorePlan:
    """Return the plan with its ``"tfidf"`` fields' frequencies over the tables.

    Every record of every table counts, whichever pairs are scored, so that
    parts of the pairs (Dask partitions) score exactly as all of them.
    """
    if plan.tfidf_fields:
        plan = replace(
            plan,
            frequencies={
                spec.label: _tfidf.DocumentFrequencies.of_tables(spec, tables, owner)
                for spec in plan.tfidf_fields
            },
        )
    if plan.codes is None:
        return plan
    return with_code_frequencies(
        plan,
        [
            CodeFrequencies.of(
                [RecordCodes.of_table(table, plan.codes.specs(plan), owner)]
            )
            for table in tables
        ],
    )


#: Comparisons of text, the fields identifier codes are read from.
_TEXT_COMPARISONS = frozenset({*SCORERS, "jaccard", "tfidf", "exact"})


@dataclass(frozen=True)
class CodeReading:
    """The identifier codes of a call: their label, fields and frequencies."""

    #: The model's field label of the codes comparison (``"codes"``, unless a
    #: field is named so).
    label: str
    #: The fields the codes are read from.
    fields: tuple[str, ...]
    #: How many records of the tables hold each code.
    frequencies: CodeFrequencies | None = None

    def specs(self, plan: ScorePlan) -> list[Field]:
        """Return the fields the codes are read from."""
        return [spec for spec in plan.specs if spec.label in self.fields]


def code_fields(plan: ScorePlan) -> list[Field]:
    """Return the counted text fields, which codes would be read from."""
    return [
        spec
        for spec in plan.counted
        if plan.comparisons[spec.label] in _TEXT_COMPARISONS
    ]


def code_reading(plan: ScorePlan, evidence: list[CodeEvidence]) -> CodeReading | None:
    """Whether the tables' rows call for identifier codes, and their label.

    ``evidence`` holds one :class:`CodeEvidence` per table, read from the rows
    ``"auto"`` reads (parts added up). A given model reads codes when it
    learned them.
    """
    taken = {spec.label for spec in plan.specs}
    label = next(
        name
        for name in ("codes", *(f"codes_{n}" for n in range(2, 100)))
        if name not in taken
    )
    given = plan.given_model
    if given is not None:
        if given.codes is None:
            return None
        label = given.codes
    elif not reads_codes(evidence):
        return None
    return CodeReading(
        label=label, fields=tuple(spec.label for spec in code_fields(plan))
    )


def with_code_frequencies(plan: ScorePlan, parts: list[CodeFrequencies]) -> ScorePlan:
    """Return the plan with its codes' frequencies over every record (all parts)."""
    assert plan.codes is not None
    return replace(
        plan, codes=replace(plan.codes, frequencies=CodeFrequencies.merge(parts))
    )


def field_scores(plan: ScorePlan, columns: Any) -> dict[str, npt.NDArray[np.float64]]:
    """Return the ``<field>_score`` arrays of the model's fields, by field.

    The counted fields, then the identifier codes when they are read.
    """
    return {
        label: np.asarray(columns[f"{label}_score"], dtype=np.float64)
        for label in plan.labels
    }
