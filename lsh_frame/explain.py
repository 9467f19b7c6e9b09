"""Why two records were paired and how they scored, for one pair at a time."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from lsh_frame.block.fields import Field, _as_fields, _stored_config, other_table
from lsh_frame.block.identical import IDENTICAL
from lsh_frame.block.keys import _field_text
from lsh_frame.compare.auto import TYPED_COMPARISONS
from lsh_frame.compare.codes import code_texts
from lsh_frame.compare.levels import level_names
from lsh_frame.compare.typed_values import (
    DateValues,
    TypedColumn,
    describe,
    typed_values,
)
from lsh_frame.config import ShingleConfig
from lsh_frame.decide.closing import THROUGH_MATCHES
from lsh_frame.decide.model import MatchModel
from lsh_frame.decide.score import _score
from lsh_frame.decide.weak_keys import found_alone
from lsh_frame.errors import ConfigTypeError
from lsh_frame.sketch.vectors import VECTOR_KINDS
from lsh_frame.text.shingle import normalize

__all__ = ["Explanation", "FieldExplanation", "explain", "shingle_texts"]


def shingle_texts(text: str | None, config: ShingleConfig) -> list[str]:
    """Return the shingles of one value as text, in order of first appearance.

    The same shingles the hashed kernels use, spelled out for display; one
    value at a time (not for bulk work).

    Examples
    --------
    >>> shingle_texts("Anna  Lee", ShingleConfig(k=3))
    ['ann', 'nna', 'na ', 'a l', ' le', 'lee']
    >>> shingle_texts("the cat sat on the mat", ShingleConfig(kind="stopword"))
    ['the cat sat', 'on the mat']
    """
    if text is None:
        return []
    normalized = normalize(pa.array([text], pa.large_string()), config)[0].as_py()
    assert config.k is not None
    if config.kind == "char":
        windows = [
            normalized[start : start + config.k]
            for start in range(len(normalized) - config.k + 1)
        ]
    else:
        words = normalized.split()
        starts = list(range(len(words) - config.k + 1))
        if config.kind == "stopword":
            stopwords = set(
                normalize(
                    pa.array(list(config.resolved_stopwords), pa.large_string()), config
                ).to_pylist()
            )
            starts = [start for start in starts if words[start] in stopwords]
        windows = [" ".join(words[start : start + config.k]) for start in starts]
    return list(dict.fromkeys(windows))


@dataclass(frozen=True)
class FieldExplanation:
    """One field of an explained pair."""

    field: str
    left: Any
    right: Any
    shared: tuple[str, ...]
    only_left: tuple[str, ...]
    only_right: tuple[str, ...]
    jaccard: float
    comparison: str
    score: float
    weight: float
    #: How each value was read by ``compare="number"`` or ``"date"``.
    read_as: tuple[str, str] | None = None
    #: The field scored against this one's values, crossed, when the two
    #: fields' values trade places in the tables and match better so.
    crossed: str | None = None
    #: ``(field, into)`` when one record lacks ``into`` and its ``field`` value
    #: was read as its ``into`` (``field`` shifts into ``into`` in the tables):
    #: set on both fields.
    shifted: tuple[str, str] | None = None
    #: Whether the two values are familiar forms of one given name (``ned``,
    #: ``edward``), which the decision reads as nearly agreeing.
    nickname: bool = False
    #: Whether one value is an initial the other begins (``r``, ``richard``),
    #: which the decision reads as agreeing at the lowest level that agrees.
    initial: bool = False
    #: With a learned model: the pair's level on this field (``"missing"``
    #: when either value is), ...
    level: str | None = None
    #: ... its weight in bits, log2(m / u) of that level (0 when missing), ...
    model_weight: float | None = None
    #: ... and the match probability once this field and those before it count.
    running_probability: float | None = None
    #: How far a person's answers moved that level's weight (bits; None: the
    #: model was not taught, see :mod:`lsh_frame.decide.taught`).
    taught_shift: float | None = None


@dataclass(frozen=True)
class Explanation:
    """Why a pair is a candidate and how each field scored (``print`` it)."""

    left: Hashable
    right: Hashable
    found_by: str | None
    fields: tuple[FieldExplanation, ...]
    score: float
    match: bool | None
    probability: float | None = None
    #: The learned model's prior for this pair (None: no model decided it): its
    #: ``alone_prior`` when only a weak key found the pair (``alone``: the
    #: neighbours key, or one most of whose pairs no other key found).
    prior: float | None = None
    alone: bool = False
    #: Identical in every compared column: a match with probability 1.
    identical: bool = False
    #: Why the learned model that decided the pair is not shown, if it is not.
    note: str | None = None
    #: Fields the model read as one fact for this pair (``MatchModel.together``):
    #: ``(fields, "differ" or "agree", weight in bits)``.
    joint: tuple[tuple[tuple[str, ...], str, float], ...] = ()
    #: The probability from which the learned model calls a pair a match
    #: (``MatchModel.match_cut``; None: no model decided it).
    match_cut: float | None = None
    #: A match the rule of shared matches made (:mod:`lsh_frame.decide.closing`):
    #: below the match cut, or found through the matches.
    closed: bool = False
    #: For a pair ``pairs`` found through the matches (``found_by``
    #: ``"through_matches"``): how it was decided.
    found_through: str | None = None
    #: What a person's answers taught the model: answers, of them matches, the
    #: day, and the shift of the prior in bits (None: not taught).
    taught: tuple[int, int, str, float] | None = None

    def to_frame(self) -> pd.DataFrame:
        """One row per field: values, Jaccard, comparison, score, shingles.

        With a learned model also each field's ``level``, ``model_weight``
        (bits) and ``running_probability``.
        """
        model = self.prior is not None
        return pd.DataFrame(
            [
                {
                    "field": item.field,
                    "left": item.left,
                    "right": item.right,
                    "jaccard": item.jaccard,
                    "comparison": item.comparison,
                    "score": item.score,
                    "weight": item.weight,
                    **(
                        {
                            "level": item.level,
                            "model_weight": item.model_weight,
                            "running_probability": item.running_probability,
                            **(
                                {"taught_shift": item.taught_shift}
                                if self.taught is not None
                                else {}
                            ),
                        }
                        if model
                        else {}
                    ),
                    "shared": len(item.shared),
                    "only_left": len(item.only_left),
                    "only_right": len(item.only_right),
                }
                for item in self.fields
            ]
        )

    def __str__(self) -> str:
        decision = (
            ""
            if self.match is None
            else (" -> match" if self.match else " -> no match")
        )
        probability = (
            ""
            if self.probability is None or self.probability != self.probability
            else f", match probability {self.probability:.3f}"
            + (
                ""
                if self.match_cut is None
                else f" (a match from {self.match_cut:.3f})"
            )
        )
        lines = [
            f"pair {self.left!r} ~ {self.right!r}: score {self.score:.3f}"
            f"{probability}{decision}",
            f"found by: {self.found_by or '(not given)'}",
        ]
        if self.found_through is not None:
            lines.append(
                "(found through the matches: its records match one same record; "
                f"{self.found_through}, see lsh_frame.decide.closing)"
            )
        elif self.closed:
            lines.append(
                "(a match below the cut: its records share most of their matches, "
                "see lsh_frame.decide.closing)"
            )
        if self.note is not None:
            lines.append(f"({self.note})")
        if self.prior is not None:
            among = " of the pairs only a weak key found" if self.alone else ""
            lines.append(
                f"model: prior {_probability(self.prior)}{among} "
                f"({np.log2(self.prior / (1 - self.prior)):+.2f} bits); each field "
                "adds log2(m/u) of its level"
            )
        if self.taught is not None:
            answers, matches, day, prior_bits = self.taught
            lines.append(
                f"taught by {answers} answer{'s' if answers != 1 else ''} "
                f"({matches} match{'es' if matches != 1 else ''}) on {day}: the "
                f"prior moved {prior_bits:+.2f} bits, each weight as shown"
            )
        for fields, kind, bits in self.joint:
            lines.append(
                f"  {', '.join(fields)} all {kind}: one fact, {bits:+.2f} bits, "
                "shared equally among them"
            )
        running = self.prior
        for item in self.fields:
            lines.append(
                f"  {item.field}: {item.left!r} vs {item.right!r}\n"
                f"      {item.comparison} {item.score:.3f}, Jaccard {item.jaccard:.3f}"
                + ("" if self.prior is not None else f", weight {item.weight:g}")
            )
            if item.read_as is not None:
                lines.append(f"      read as: {item.read_as[0]} vs {item.read_as[1]}")
            if item.nickname:
                lines.append(
                    "      familiar forms of one given name: read as nearly agreeing "
                    f"({item.comparison} {item.score:.3f})"
                )
            if item.initial:
                lines.append(
                    "      an initial of the other name: read as agreeing at the "
                    f"lowest level ({item.comparison} {item.score:.3f})"
                )
            if item.crossed is not None:
                lines.append(
                    f"      scored crossed: the left {item.field} against the right "
                    f"{item.crossed} (the two fields trade places in these tables)"
                )
            if item.shifted is not None:
                lines.append(
                    "      read shifted: one record has no {1} and its {0} is read "
                    "as its {1} (its {0} counts as missing; {0} holds {1}'s values "
                    "where {1} is missing in these tables)".format(*item.shifted)
                )
            if self.prior is not None:
                lines.append(f"      {_model_line(item, running)}")
                if item.running_probability is not None:
                    running = item.running_probability
            if item.shared or item.only_left or item.only_right:
                lines.append(f"      shared: {_shown(item.shared)}")
                lines.append(f"      only left: {_shown(item.only_left)}")
                lines.append(f"      only right: {_shown(item.only_right)}")
        if self.identical:
            lines.append(
                "identical in every compared column: a match, with probability 1"
            )
        return "\n".join(lines)


def _probability(value: float) -> str:
    """Show a probability so that values near 0 or 1 still differ."""
    if value < 0.001:
        return f"{value:.1e}"
    if value > 0.999:
        return f"1 - {1 - value:.1e}"
    return f"{value:.3f}"


def _model_line(item: FieldExplanation, before: float | None) -> str:
    """Describe the learned model's reading of one field of a pair."""
    if item.running_probability is None or before is None:
        reason = "weight 0" if item.weight == 0 else "no pair had a value in it"
        return f"not in the model ({reason})"
    if item.level == "missing":
        return f"level missing: 0 bits, probability stays {_probability(before)}"
    moved = (
        f" (answers moved it {item.taught_shift:+.3f})"
        if item.taught_shift is not None and abs(item.taught_shift) >= 5e-4
        else ""
    )
    return (
        f"level {item.level}: {item.model_weight:+.3f} bits{moved}, probability "
        f"{_probability(before)} -> {_probability(item.running_probability)}"
    )


def _taught_shift(
    model: MatchModel | None, label: str, scored: pd.DataFrame
) -> float | None:
    """How far the answers moved the weight of the pair's level (bits)."""
    if model is None or model.taught is None or label not in model.taught.shifts:
        return None
    level = int(
        model.levels(scored[f"{label}_score"].to_numpy(), model.cuts_of(label))[0]
    )
    shifts = model.taught.shifts[label]
    return float(shifts[level] / np.log(2)) if level < shifts.size else 0.0


def _shown(shingles: tuple[str, ...], limit: int = 12) -> str:
    text = ", ".join(repr(item) for item in shingles[:limit])
    if len(shingles) > limit:
        text += f", … ({len(shingles)} in all)"
    return text or "-"


def _found_through(found_by: str | None, match: Any, from_row: bool) -> str | None:
    """How a pair found through the matches was decided (None: another pair)."""
    if found_by != THROUGH_MATCHES:
        return None
    if not from_row:
        return (
            "pairs() decides it by shared matches alone; the decision shown is its "
            "own reading with the given min_score"
        )
    if match:
        return "a match because they share most of their matches"
    return "only shared matches could make it a match"


def _pair_of(
    pair: Any,
) -> tuple[Hashable, Hashable, str | None, bool | None, float | None]:
    if isinstance(pair, pd.Series):
        found_by = pair.get("found_by")
        if found_by is not None and pd.isna(found_by):
            found_by = None
        match = pair.get("match")
        probability = pair.get("match_probability")
        left, right = (
            label.item() if isinstance(label, np.generic) else label
            for label in (pair["left"], pair["right"])
        )
        return (
            left,
            right,
            None if found_by is None else str(found_by),
            None if match is None else bool(match),
            None if probability is None else float(probability),
        )
    if isinstance(pair, tuple) and len(pair) == 2:
        left, right = (
            label.item() if isinstance(label, np.generic) else label for label in pair
        )
        return left, right, None, None, None
    raise ConfigTypeError(
        "The 'pair' argument of explain must be a row of a pair frame (for example "
        "scored.iloc[0]) or a (left label, right label) tuple. Got "
        f"{type(pair).__name__} instead."
    )


def _read_as(
    comparison: str,
    spec: Any,
    row: pd.DataFrame,
    text: str | None,
    placeholders: tuple[str, ...] = (),
) -> str:
    """How ``"number"`` or ``"date"`` read one record's value.

    ``placeholders``: the field's placeholder days (``"mm-dd"``).
    """
    if text is None or not text.strip():
        return "missing"
    columns = (
        [TypedColumn(row[spec.columns[0]], np.zeros(1, dtype=np.int64))]
        if len(spec.columns) == 1
        else None
    )
    read = typed_values(comparison, pa.array([text], pa.large_string()), columns)
    shown = describe(read)[0]
    if isinstance(read, DateValues) and read.full[0] and shown[5:] in placeholders:
        shown += f" (a placeholder day: year {shown[:4]} alone)"
    return shown


def _model_of(
    pair: Any, min_score: Any, specs: list[Field]
) -> tuple[MatchModel | None, str | None]:
    """Return the learned model that reads the pair (given, or the pairs' own).

    The pairs' own model reads the pair only when it is explained on the
    fields the model was learned on (a subset of them is a fair question, but
    the model's reading of it would not end at the pair's probability); the
    second value then says why it is not shown.
    """
    if isinstance(min_score, (MatchModel, dict)):
        return MatchModel.from_dict(min_score, "explain"), None
    if min_score is not None or not isinstance(pair, pd.Series):
        return None, None
    recorded = pair.attrs.get("lsh_frame", {})
    learned = recorded.get("model") if isinstance(recorded, dict) else None
    if learned is None:
        return None, None
    model = MatchModel.from_dict(learned, "explain", "the pair's attrs")
    counted = {spec.label for spec in specs if spec.weight > 0}
    # The identifier codes are a field of the model that no field names.
    learned_on = (set(model.m) | set(model.no_values)) - {model.codes}
    if counted != learned_on:
        return None, (
            "the model that decided the pair was learned on the fields "
            f"{', '.join(sorted(learned_on))}; explain the pair on them to see "
            "its reading"
        )
    return model, None


def _codes_explanation(
    label: str,
    specs: list[Field],
    frame: pd.DataFrame,
    right_frame: pd.DataFrame,
    left: Hashable,
    right: Hashable,
    scored: pd.DataFrame,
    reading: dict[str, tuple[str | None, float | None, float | None]],
) -> FieldExplanation:
    """Return the identifier codes of the two records, as the model read them."""
    found = [
        code_texts(
            [
                _field_text(table.loc[[name]], spec, owner="explain")[0].as_py() or ""
                for spec in specs
            ]
        )
        for table, name in ((frame, left), (right_frame, right))
    ]
    shared = set(found[0]) & set(found[1])
    level, weight, running = reading[label]
    return FieldExplanation(
        field=label,
        left=" ".join(found[0]),
        right=" ".join(found[1]),
        shared=tuple(code for code in found[0] if code in shared),
        only_left=tuple(code for code in found[0] if code not in shared),
        only_right=tuple(code for code in found[1] if code not in shared),
        jaccard=float("nan"),
        comparison="codes",
        score=float(scored[f"{label}_score"].iloc[0]),
        weight=0.0,
        read_as=None,
        crossed=None,
        shifted=None,
        nickname=False,
        initial=False,
        level=level,
        model_weight=weight,
        running_probability=running,
    )


def _model_reading(
    model: MatchModel,
    specs: list[Field],
    scored: pd.DataFrame,
    alone: bool,
) -> tuple[
    float,
    dict[str, tuple[str | None, float | None, float | None]],
    tuple[tuple[tuple[str, ...], str, float], ...],
]:
    """Return the pair's prior, each model field's reading, and its joint facts.

    A field's reading (in ``specs`` order) is its level, its weight in bits
    and the running probability once it counts; the joint facts are the
    fields read as one (see :attr:`Explanation.joint`).
    """
    evidence = model.evidence(
        {label: scored[f"{label}_score"].to_numpy() for label in model.m},
        np.array([alone]),
    )
    log_odds = float(evidence.start[0])
    prior = (
        model.alone_prior if alone and model.alone_prior is not None else model.prior
    )
    if model.taught is not None:
        # The prior as it decides: shifted by the answers.
        prior = float(1 / (1 + np.exp2(-log_odds)))
    reading: dict[str, tuple[str | None, float | None, float | None]] = {}
    labels = [spec.label for spec in specs]
    if model.codes is not None:
        labels.append(model.codes)
    for label in labels:
        if label not in model.m:
            continue
        level = int(evidence.levels[label][0])
        names = level_names(model.cuts_of(label))
        weight = float(evidence.weights[label][0])
        log_odds += weight
        reading[label] = (
            names[level] if level < len(names) else "missing",
            weight,
            float(1 / (1 + np.exp2(-log_odds))),
        )
    joint = tuple(
        (fields, kind, weight / np.log(2))
        for fields, kind, chosen, weight in model.joint_readings(evidence.levels)
        if chosen[0]
    )
    return prior, reading, joint


def explain(
    frame: pd.DataFrame,
    pair: Any,
    fields: Any,
    /,
    *,
    other: pd.DataFrame | None = None,
    right_on: Any = None,
    min_score: Any = None,
) -> Explanation:
    """Explain one pair: the keys that found it, its shingles and field scores.

    When a learned model decides the pair (the model in the scored pairs'
    ``attrs``, which a row of them carries, or one given as ``min_score``),
    each field also shows its level for the pair, its weight in bits from the
    model (log2(m / u) of that level) and the match probability once it
    counts, starting from the model's prior (``alone_prior`` for a pair only
    a weak key found, as :func:`lsh_frame.score` reads it).

    Parameters
    ----------
    frame : DataFrame
        The records (the left table when linking).
    pair : row of a pair frame, or (left label, right label)
        A row of :func:`lsh_frame.candidates` or :func:`lsh_frame.score` output
        (its ``found_by`` and ``match`` are shown), or two index labels.
    fields : column label, Field, or a list of them
        The fields the pair was scored on.
    other : DataFrame, optional
        The right table when linking.
    right_on : list of column labels, or dict, optional
        ``other``'s names of the fields' columns when they differ (see
        :func:`lsh_frame.candidates`).
    min_score : float or learned model, optional
        Decide the match with this ``min_score`` instead of the row's ``match``:
        a number (``score >= min_score``; no model shown) or a learned model
        (``attrs["lsh_frame"]["model"]`` of scored pairs, or a ``MatchModel``).

    Returns
    -------
    Explanation
        ``print()`` it, or call ``to_frame()``.

    Examples
    --------
    >>> df = pd.DataFrame({"name": ["jon smith", "john smith"]})
    >>> print(explain(df, (0, 1), "name", min_score=0.8))
    pair 0 ~ 1: score 0.947 -> match
    found by: (not given)
      name: 'jon smith' vs 'john smith'
          token_sort_ratio 0.947, Jaccard 0.500, weight 1
          shared: 'n s', ' sm', 'smi', 'mit', 'ith'
          only left: 'jon', 'on '
          only right: 'joh', 'ohn', 'hn '
    """
    left, right, found_by, match, probability = _pair_of(pair)
    specs, _ = _as_fields(fields, "explain")
    other = other_table(frame, fields, other, right_on, "explain")
    right_frame = frame if other is None else other
    model, note = _model_of(pair, min_score, specs)
    one = pd.DataFrame({"left": [left], "right": [right]})
    if model is not None and found_by is not None:
        # The keys that found the pair choose its prior (and identical ones match).
        one["found_by"] = [found_by]
    scored = _score(
        frame,
        one,
        specs,
        other=other,
        min_score=model if model is not None else (min_score or 0.0),
        values=False,
        estimate=False,
        num_perm=128,
        seed=1,
        owner="explain",
    )
    if min_score is not None:
        match = bool(scored["match"].iloc[0])
        probability = (
            float(scored["match_probability"].iloc[0]) if model is not None else None
        )
    alone = (
        model is not None
        and found_by is not None
        and found_alone(found_by, model.alone_keys)
    )
    prior, reading, joint = (
        _model_reading(model, specs, scored, alone)
        if model is not None
        else (None, {}, ())
    )
    comparisons = scored.attrs["lsh_frame"]["compare"]
    crossed = {}
    for check in scored.attrs["lsh_frame"]["swaps"]:
        first, second = check["fields"]
        column = f"{first}_{second}_swapped"
        if column in scored and bool(scored[column].iloc[0]):
            crossed[first], crossed[second] = second, first
    placeholders = {
        check["field"]: tuple(check["placeholder_days"])
        for check in scored.attrs["lsh_frame"]["dates"]
    }
    shifted = {}
    for check in scored.attrs["lsh_frame"]["shifts"]:
        column = f"{check['field']}_as_{check['into']}"
        if column in scored and bool(scored[column].iloc[0]):
            shifted[check["field"]] = shifted[check["into"]] = (
                check["field"],
                check["into"],
            )
    explained = []
    for spec in specs:
        values = []
        shingles: list[list[str]] = []
        read_as: list[str] = []
        for table, label in ((frame, left), (right_frame, right)):
            row = table.loc[[label]]
            if _stored_config(table, spec) is not None:
                values.append("(signature)")
                shingles.append([])
                continue
            if comparisons[spec.label] in VECTOR_KINDS:
                values.append("(vector)")
                shingles.append([])
                continue
            text = _field_text(row, spec, owner="explain")[0].as_py()
            if comparisons[spec.label] in TYPED_COMPARISONS:
                read_as.append(
                    _read_as(
                        comparisons[spec.label],
                        spec,
                        row,
                        text,
                        placeholders.get(spec.label, ()),
                    )
                )
            values.append(text)
            shingles.append(shingle_texts(text, spec.shingle_config))
        level, model_weight, running = reading.get(spec.label, (None, None, None))
        right_set = set(shingles[1])
        left_set = set(shingles[0])
        explained.append(
            FieldExplanation(
                field=spec.label,
                left=values[0],
                right=values[1],
                shared=tuple(item for item in shingles[0] if item in right_set),
                only_left=tuple(item for item in shingles[0] if item not in right_set),
                only_right=tuple(item for item in shingles[1] if item not in left_set),
                jaccard=float(
                    scored.get(f"{spec.label}_jaccard", pd.Series([float("nan")])).iloc[
                        0
                    ]
                ),
                comparison=comparisons[spec.label],
                score=float(scored[f"{spec.label}_score"].iloc[0]),
                weight=float(spec.weight),
                read_as=(read_as[0], read_as[1]) if read_as else None,
                crossed=crossed.get(spec.label),
                shifted=shifted.get(spec.label),
                nickname=bool(
                    scored.get(f"{spec.label}_nickname", pd.Series([False])).iloc[0]
                ),
                initial=bool(
                    scored.get(f"{spec.label}_initial", pd.Series([False])).iloc[0]
                ),
                level=level,
                model_weight=model_weight,
                running_probability=running,
                taught_shift=_taught_shift(model, spec.label, scored),
            )
        )
    if model is not None and model.codes is not None and model.codes in reading:
        explained.append(
            _codes_explanation(
                model.codes, specs, frame, right_frame, left, right, scored, reading
            )
        )
    if model is not None and model.matching is not None and note is None:
        note = (
            "the link was read as a matching: the pair's probability is its share "
            "of the matchings of its records' candidates, not its fields' weights "
            "alone"
        )
    return Explanation(
        left=left,
        right=right,
        found_by=found_by,
        fields=tuple(explained),
        score=float(scored["score"].iloc[0]),
        match=match,
        probability=probability,
        prior=prior,
        alone=model is not None and model.alone_prior is not None and alone,
        identical=model is not None and other is None and found_by == IDENTICAL,
        note=note,
        joint=joint,
        match_cut=None if model is None else model.match_cut,
        taught=None
        if model is None or model.taught is None
        else (
            model.taught.answers,
            model.taught.matches,
            model.taught.date,
            model.taught.prior_shift / float(np.log(2)),
        ),
        closed=bool(
            match
            and other is None
            and found_by != IDENTICAL
            and (
                # Only the rule decides such a pair: its row's match says so.
                (found_by == THROUGH_MATCHES and min_score is None)
                or (
                    found_by != THROUGH_MATCHES
                    and model is not None
                    and probability is not None
                    and probability < model.match_cut
                )
            )
        ),
        found_through=_found_through(found_by, match, min_score is None),
    )
