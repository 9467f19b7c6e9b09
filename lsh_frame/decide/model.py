"""The match decision without labels: a provisional cut, then a learned model.

:func:`auto_min_score` (:class:`ScoreSpread`) finds the valley below the highest
group of combined scores; :class:`MatchModel` learns from that provisional split
how much agreeing, nearly agreeing or differing on each field says (Fellegi and
Sunter's m and u) and refines it without labels (:meth:`MatchModel.refine`).
Everything is learned from summaries that add up over parts of the pairs
(histograms, :class:`LevelTable`), so partitions decide exactly as one frame.
"""

from __future__ import annotations

import dataclasses
import datetime
import numbers
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, get_args

import numpy as np
import numpy.typing as npt

from lsh_frame.compare.levels import _CLASSIC_CUTS, LEVEL_CUTS, level_names, levels_of
from lsh_frame.config import NEIGHBOURS_KEY, Comparison
from lsh_frame.errors import ConfigError

if TYPE_CHECKING:
    from lsh_frame.block.fields import Field

__all__ = ["Evidence", "LevelTable", "MatchModel", "Together"]


#: ``"auto"`` learns ``min_score`` only from at least this many scored pairs.
_AUTO_MIN_PAIRS = 100


#: Pseudo-count added to every level, so a level never seen has no infinite weight.
_SMOOTHING = 0.5

#: Expectation maximisation: at most this many steps, until no probability
#: moves by more than the tolerance.
_EM_ITERATIONS = 100

#: EM on a prior alone (:meth:`MatchModel.prior_among`): at most this many
#: steps, stopping when a step moves it less than the tolerance; kept off 0 and 1.
_PRIOR_ITERATIONS = 500

_PRIOR_TOLERANCE = 1e-7

_PRIOR_FLOOR = 1e-9

_EM_TOLERANCE = 1e-3

#: The EM model is kept only if it finds at most this many times the matches of
#: the leave-one-out model (see MatchModel.refine). On synthetic customers of
#: 2k-1M records with 4 or 8 fields, sound fits grew the matches by 1.01-1.15
#: and fits that took households for people by 1.5-4.4.
_EM_MAX_GROWTH = 1.3

#: When the provisional split is not clear (ScoreSpread.clear) it holds only
#: the surest matches, and EM must move far from it: up to this many steps, with
#: no limit on the growth (Cora: 241 steps, the matches grown 10 times, pair
#: F1 0.17 -> 0.82). What stops a fit that took another group is then that its
#: matches differ on some field more than twice as often as they agree
#: (_MOST_DIFFER_UNCLEAR): such fits had 0.86 (make_customers, given names of
#: relatives) and 0.92 (IMDb-TMDb, names); the sound fit on Cora 0.55 (its
#: citations write venues and addresses many ways).
_EM_ITERATIONS_UNCLEAR = 1000

_MOST_DIFFER_UNCLEAR = 2 / 3

#: EM also starts from a vaguer model (each field's m halfway to its u, prior
#: 0.5), and its fit replaces the first start's when the guards keep it and its
#: log-likelihood is higher by more than this share: a fit found from the split
#: can stop at a poorer fixed point (Cora with 22 more candidates: prior 0.24,
#: pair F1 0.70, against prior 0.43, F1 0.83 and 389 more nats from the vaguer
#: start). Two starts reaching the same fixed point differ by about 1e-6.
_START_MARGIN = 1e-4

#: ... if it converges, and if, for every field, matches
#: differ on it (score below the last cut) at most this share of the time: a
#: fit where most "matches" differ on a field (given names of relatives, titles
#: of different films) has taken another group for the same entities. Measured
#: with the neighbours key and seven levels (the lowest below 0.5): such fits
#: had 0.8 (make_customers 20,000, given name) and 0.86 (IMDb-TMDb, title);
#: sound fits at most 0.49 (Cora, venue).
_MOST_DIFFER = 0.5

#: ``fit["start"]`` when the provisional split's model was not sound (see
#: learn_model): it started from the pairs that agree on every field.
_START_AGREEING = "pairs agreeing on every field (the split's model was not sound)"

#: Leave-one-field-out steps, and the log-odds from the other fields that make
#: a pair a sure match for estimating a field's m (probability 0.99). The step
#: is to find matches the split left out, so a result that loses more than 5%
#: of the one-step matches is not kept (seen with few fields and relatives
#: outnumbering duplicates; sound results grew the matches by 1.0-1.21).
_LEAVE_ONE_OUT_STEPS = 5

_LEAVE_ONE_OUT_MIN_GROWTH = 0.95

#: With fewer fields the two-class model is not identifiable (it can swap what
#: "match" means): the one-step model is kept as it is.
_REFINE_MIN_FIELDS = 4

_SURE_LOG_ODDS = float(np.log(0.99 / 0.01))

#: A field's m is re-estimated only from at least this share of the expected
#: matches (prior × pairs) made sure by the other fields.
_SURE_MIN_SHARE = 0.25

#: Fields whose "differs" correlate at least this much over the candidates are
#: left out together when one of them is estimated (see _differ_together).
_TOGETHER = 0.5

#: Fields that differ together are read as one (:class:`Together`) only when,
#: so read, at least this many fields remain (MatchModel.groups_differing).
#: Measured on make_customers: with four left (five fields, postcode and phone
#: one group) pair F1 moved by -0.003 to +0.006 and queries of a saved index
#: found 74 instead of 78 of 83 duplicates; with five left (seven or eight
#: fields) it gained 0.001-0.055; with two left (four fields, three one
#: group) EM took 62 of 300 duplicates for the matches.
_TOGETHER_MIN_FIELDS = 5

#: A :class:`Together` cell kind: two or more of a group's fields differ while
#: another present one does not (a move that kept the phone number).
_PART_DIFFERS = "differ among more"

#: The joint observations of a :class:`Together` group: all its fields present
#: differ (a move), all agree (a household sharing an address and phone), or
#: some differ (above).
_TOGETHER_KINDS = ("differ", "agree", _PART_DIFFERS)


def _level_frequencies(
    level: npt.NDArray[np.intp], mass: npt.NDArray[np.float64], size: int
) -> npt.NDArray[np.float64]:
    """Smoothed share of each of ``size`` levels (missing excluded) under ``mass``."""
    part = np.bincount(level, weights=mass, minlength=size + 1)[:size]
    return (part + _SMOOTHING) / (part.sum() + size * _SMOOTHING)


def _differ_together(
    patterns: npt.NDArray[np.intp],
    weights: npt.NDArray[np.float64],
    size: int | npt.NDArray[np.intp],
) -> npt.NDArray[np.bool_]:
    """Which fields differ together with each field (rows; a field with itself).

    Fields that describe one thing (street, city and postcode of an address)
    differ together: when a person moves, all of them change. Two fields
    differ together when the correlation of "this field differs" (its lowest
    level) between them, over the pairs where both are present, is at least
    ``_TOGETHER``.
    """
    fields = patterns.shape[1]
    size = np.broadcast_to(np.asarray(size, dtype=np.intp), (fields,))
    present = patterns < size
    differs = patterns == size - 1
    together = np.eye(fields, dtype=bool)
    for one in range(fields):
        for two in range(one + 1, fields):
            both = present[:, one] & present[:, two]
            mass = weights * both
            total = mass.sum()
            if total <= 0:
                continue
            a = differs[:, one].astype(np.float64)
            b = differs[:, two].astype(np.float64)
            mean_a, mean_b = (mass @ a) / total, (mass @ b) / total
            cov = (mass @ (a * b)) / total - mean_a * mean_b
            spread = np.sqrt(mean_a * (1 - mean_a) * mean_b * (1 - mean_b))
            if spread > 0 and cov / spread >= _TOGETHER:
                together[one, two] = together[two, one] = True
    return together


def _groups(together: npt.NDArray[np.bool_], labels: list[str]) -> list[list[str]]:
    """Fields that differ together, as groups of at least two (linked by pairs)."""
    group = list(range(len(labels)))
    for one, two in zip(*np.nonzero(np.triu(together, 1)), strict=True):
        old, new = group[int(two)], group[int(one)]
        group = [new if value == old else value for value in group]
    found: dict[int, list[str]] = {}
    for column, value in enumerate(group):
        found.setdefault(value, []).append(labels[column])
    return [fields for fields in found.values() if len(fields) >= 2]


def _level_patterns(
    columns: list[npt.NDArray[np.intp]],
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.int64]]:
    """Distinct rows of the (pairs × fields) level matrix, and their counts."""
    base = max((int(level.max()) + 1 for level in columns if level.size), default=1)
    base = max(base, 2)
    if base ** len(columns) > np.iinfo(np.int64).max:  # many fields: rows as keys
        matrix = np.stack(columns, axis=1).astype(np.uint8)
        rows, row_counts = np.unique(matrix, axis=0, return_counts=True)
        return rows.astype(np.intp), row_counts.astype(np.int64)
    # One integer per pair (its levels as digits): a flat unique is fast.
    code = np.zeros(columns[0].size if columns else 0, dtype=np.int64)
    for level in columns:
        code = code * base + level
    distinct, counts = np.unique(code, return_counts=True)
    patterns = np.empty((distinct.size, len(columns)), dtype=np.intp)
    for column in range(len(columns) - 1, -1, -1):
        distinct, patterns[:, column] = np.divmod(distinct, base)
    return patterns, counts.astype(np.int64)


@dataclass(frozen=True)
class LevelTable:
    """Distinct (level of each counted field, provisional match) rows and counts.

    All the match model learns from; tables of parts of the pairs merge into
    the table of all of them (rows in ascending order, counts summed).
    """

    rows: npt.NDArray[np.uint8]
    counts: npt.NDArray[np.int64]

    @classmethod
    def of(
        cls, levels: dict[str, npt.NDArray[np.intp]], match: npt.NDArray[np.bool_]
    ) -> LevelTable:
        """Table of some pairs' levels and provisional split."""
        patterns, counts = _level_patterns([*levels.values(), match.astype(np.intp)])
        return cls(patterns.astype(np.uint8), counts)

    @classmethod
    def merge(cls, parts: list[LevelTable]) -> LevelTable:
        """Table of the union of parts."""
        rows = np.concatenate([part.rows for part in parts])
        counts = np.concatenate([part.counts for part in parts])
        return cls(*_summed_rows(rows, counts))

    @property
    def pairs(self) -> int:
        """Number of pairs counted."""
        return int(self.counts.sum())

    def fields(self) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.int64]]:
        """Distinct field patterns (the split left out) and their counts."""
        rows, counts = _summed_rows(self.rows[:, :-1], self.counts)
        return rows.astype(np.intp), counts


def _summed_rows(
    rows: npt.NDArray[np.uint8], counts: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """Distinct rows in ascending order, with the counts of equal rows summed."""
    if rows.shape[0] == 0:
        return rows, counts.astype(np.int64)
    distinct, inverse = np.unique(rows, axis=0, return_inverse=True)
    summed = np.zeros(distinct.shape[0], dtype=np.int64)
    np.add.at(summed, inverse.reshape(-1), counts)
    return distinct, summed


@dataclass(frozen=True)
class Evidence:
    """How a model reaches each pair's match probability, in bits.

    A pair's log2 odds of being a match start at its prior's, ``start``, and
    each field adds its ``weights``: log2(m / u) of the pair's level on it
    (``levels``; a missing value is the last index and weighs 0). The sum is
    ``log_odds``, and ``probability`` the pair's ``match_probability`` (pairs
    forced to 1, the identical ones, aside). Built by :meth:`MatchModel.evidence`.
    """

    start: npt.NDArray[np.float64]
    levels: dict[str, npt.NDArray[np.intp]]
    weights: dict[str, npt.NDArray[np.float64]]

    @property
    def log_odds(self) -> npt.NDArray[np.float64]:
        """Log2 odds of a match of each pair: ``start`` plus every field's weight."""
        total = self.start.copy()
        for weights in self.weights.values():
            total += weights
        return total

    @property
    def probability(self) -> npt.NDArray[np.float64]:
        """Match probability of each pair."""
        return np.asarray(1 / (1 + np.exp2(-self.log_odds)), dtype=np.float64)


@dataclass(frozen=True)
class _GroupCells:
    """Each pair's fields of a group: present, differing (bit masks), cell kinds."""

    present: npt.NDArray[np.int64]
    differing: npt.NDArray[np.int64]
    #: Whether each pair falls in a cell of each kind.
    alike: dict[str, npt.NDArray[np.bool_]]


class _EmFit(NamedTuple):
    """One EM run of :meth:`MatchModel.refine_patterns` and its guards' verdict."""

    model: MatchModel
    steps: int
    converged: bool
    growth: float
    kept: bool


@dataclass(frozen=True)
class Together:
    """Fields that differ together, and how often all of them differ or agree.

    Naive Bayes adds each field's weight as if the fields were independent,
    but a person who moved differs on street, city and postcode at once: three
    strong "differs" for one fact, which out-vote a name, date of birth, phone
    and e-mail that agree. Likewise a household shares all of its address at
    once: three "agrees" for one fact. For fields that differ together
    (:func:`_differ_together`), a pair whose fields present in both records
    (at least two of the group) *all* differ, or all agree (top level), takes
    the weight of that one observation instead: log(m / u) of "all of these
    differ" (or agree) among matches and among non-matches with the same
    fields present. ``cells`` maps ``(kind, present-field bit mask over
    fields)`` to ``(m, u)``, kind ``"differ"`` or ``"agree"``. When the fields
    are in fact independent this equals the sum it replaces (up to noise).

    A pair where two or more of the group's fields differ and another present
    one does not (a person who moved and kept the phone number) reads the
    differing fields as one fact too: cells of kind ``"differ among more"``,
    keyed by the differing fields ``D``, whose m and u are the shares of pairs
    with all of ``D`` present in which all of ``D`` differ; the other fields
    keep their own weights. (make_customers 1M, seed 7: of 3,185 true pairs
    undecided, 452 agreed on name, phone, date of birth and e-mail but for a
    move, which cost -7.9 bits as three facts.) Other pairs keep the per-field
    weights.

    On make_customers (eight columns) the groups found are street, city,
    postcode and phone (1M rows) or surname, street, city and postcode
    (5,000-20,000 rows); pair F1 of a dedupe: 1M records 0.9733 -> 0.9862
    (seed 7) and 0.9869 -> 0.9900 (seed 1); 20,000 records 0.9937 -> 0.9948;
    the first 20,000 rows of make_customers(100,000) without the e-mail
    column 0.9202 -> 0.9750.
    """

    fields: tuple[str, ...]
    cells: dict[tuple[str, int], tuple[float, float]]

    def to_dict(self) -> dict[str, Any]:
        """Return the group as JSON-ready data (``MatchModel.from_dict`` reads it)."""
        return {
            "fields": list(self.fields),
            "cells": [
                {
                    "all": kind,
                    "present": [
                        label
                        for bit, label in enumerate(self.fields)
                        if mask >> bit & 1
                    ],
                    "m": m,
                    "u": u,
                }
                for (kind, mask), (m, u) in sorted(self.cells.items())
            ],
        }


@dataclass(frozen=True)
class MatchModel:
    """Field weights learned from the candidates themselves, without labels.

    The provisional split (``score >= min_score``) is taken as matches and
    non-matches; for every field, how often it agrees, nearly agrees or differs
    among each gives Fellegi and Sunter's m and u probabilities, and a pair's
    match probability is the naive-Bayes posterior over the fields present in
    both records. Because u comes from candidate non-matches (not random
    pairs), fields that non-matching candidates share anyway (the address and
    phone of a household) weigh little, and fields that tell people apart
    (given name, date of birth) weigh a lot.
    """

    prior: float
    m: dict[str, npt.NDArray[np.float64]]
    u: dict[str, npt.NDArray[np.float64]]
    compare: dict[str, str] = dataclasses.field(default_factory=dict)
    #: Counted fields left out because no candidate pair had a value in them
    #: (every score missing): they neither help nor hurt a decision.
    no_values: tuple[str, ...] = ()
    #: The level cuts of the field scores (see :data:`LEVEL_CUTS`) ...
    cuts: tuple[float, ...] = LEVEL_CUTS
    #: ... and of the fields read at other cuts (:func:`cuts_for`).
    field_cuts: dict[str, tuple[float, ...]] = dataclasses.field(default_factory=dict)
    #: The prior of pairs that only a weak key found (see ``alone_keys``),
    #: when the model learned from the other keys' pairs (None: ``prior``).
    alone_prior: float | None = None
    #: The keys whose pairs, when no other key found them, take
    #: ``alone_prior``: the neighbours key of plain columns, and keys most of
    #: whose pairs no other key found (see ``lsh_frame.decide.weak_keys.weak_keys``).
    alone_keys: tuple[str, ...] = (NEIGHBOURS_KEY,)
    #: Fields that differ together (street, city and postcode of an address),
    #: whose joint "all differ" and "all agree" are read as one observation
    #: each (see :class:`Together`), not as independent ones.
    together: tuple[Together, ...] = ()
    #: Pairs of fields whose values trade places (see :mod:`lsh_frame.compare.swaps`):
    #: the decision reads a pair that matches better crossed at its crossed
    #: scores' levels; the model learned from the straight scores.
    swaps: tuple[tuple[str, str], ...] = ()
    #: Fields that hold another's value where that one is missing, as
    #: ``(field, into)`` (see :mod:`lsh_frame.compare.swaps`): the decision reads a
    #: pair that matches better so with ``field``'s value as ``into``'s.
    shifts: tuple[tuple[str, str], ...] = ()
    #: Fields of given names (see :mod:`lsh_frame.compare.nicknames`): the decision
    #: reads two familiar forms of one name as nearly agreeing.
    nicknames: tuple[str, ...] = ()
    #: Placeholder days of date fields (``month * 100 + day``; see
    #: :mod:`lsh_frame.compare`): a date on one is known only to its year.
    placeholders: dict[str, tuple[int, ...]] = dataclasses.field(default_factory=dict)
    #: A pair is a match when its probability reaches this: half the best F1
    #: that the probabilities of the pairs it learned from expect (see
    #: :func:`expected_f1_cut`); 0.5 for models saved before it.
    match_cut: float = 0.5

    def cuts_of(self, label: str) -> tuple[float, ...]:
        """Level cuts of one field."""
        return self.field_cuts.get(label, self.cuts)

    def size_of(self, label: str) -> int:
        """Return the number of levels of a present score of one field."""
        return len(self.cuts_of(label)) + 1

    @property
    def size(self) -> int:
        """Number of levels of a present score (the missing one excluded)."""
        return len(self.cuts) + 1

    @classmethod
    def from_dict(
        cls, learned: Any, owner: str = "MatchModel", argument: str = "min_score"
    ) -> MatchModel:
        """Rebuild a model from ``attrs["lsh_frame"]["model"]`` (or pass one through).

        So a model learned on a full run (a table, or two linked tables) can
        decide later batches — new records against a saved table — where too
        few candidates would make a poor model of their own. ``owner`` and
        ``argument`` name the function and parameter in error messages.
        """
        if isinstance(learned, MatchModel):
            return learned
        try:
            prior = float(learned["prior"])
            fields = learned["fields"]
            m = {
                label: np.asarray(f["m"], dtype=np.float64)
                for label, f in fields.items()
            }
            u = {
                label: np.asarray(f["u"], dtype=np.float64)
                for label, f in fields.items()
            }
        except (KeyError, TypeError, ValueError) as error:
            raise ConfigError(
                f"{owner} got a dict for {argument} that is not a learned model: "
                "pass scored.attrs['lsh_frame']['model'] from an earlier score() "
                f"with min_score='auto' ({type(error).__name__}: {error})."
            ) from None
        cuts = learned.get("cuts", list(_CLASSIC_CUTS))
        field_cuts = learned.get("field_cuts", {})
        if not isinstance(field_cuts, dict) or not all(
            label in m for label in field_cuts
        ):
            raise ConfigError(
                f"{owner} got a learned model whose 'field_cuts' is not a mapping of "
                f"its fields to cuts. Got {field_cuts!r}."
            )
        for given in [cuts, *field_cuts.values()]:
            if (
                not isinstance(given, (list, tuple))
                or not given
                or not all(
                    isinstance(cut, numbers.Real) and not isinstance(cut, bool)
                    for cut in given
                )
                or list(given) != sorted(given, reverse=True)
                or len(set(given)) != len(given)
            ):
                raise ConfigError(
                    f"{owner} got a learned model whose 'cuts' are not a falling list "
                    f"of score cuts. Got {given!r}."
                )
        size = len(cuts) + 1
        valid = 0 < prior < 1 and all(
            table[label].shape == (len(field_cuts.get(label, cuts)) + 1,)
            and np.all(table[label] > 0)
            and abs(table[label].sum() - 1) < 1e-3
            for table in (m, u)
            for label in table
        )
        if not valid or not m:
            raise ConfigError(
                f"{owner} got a learned model with invalid numbers: the prior must be "
                f"in (0, 1) and each field's m and u {size} positive shares summing "
                "to 1."
            )
        compare = learned.get("compare", {})
        allowed = set(get_args(Comparison)) - {"auto"}
        if not isinstance(compare, dict) or not all(
            label in m and value in allowed for label, value in compare.items()
        ):
            raise ConfigError(
                f"{owner} got a learned model whose 'compare' is not a mapping of its "
                f"fields to comparisons ({', '.join(sorted(allowed))}). Got "
                f"{compare!r}."
            )
        no_values = learned.get("no_values", [])
        if not isinstance(no_values, (list, tuple)) or not all(
            isinstance(label, str) and label not in m for label in no_values
        ):
            raise ConfigError(
                f"{owner} got a learned model whose 'no_values' is not a list of "
                f"field names other than its fields ({', '.join(sorted(m))}). Got "
                f"{no_values!r}."
            )
        alone_prior = learned.get("alone_prior")
        if alone_prior is not None and not (
            isinstance(alone_prior, numbers.Real)
            and not isinstance(alone_prior, bool)
            and 0 < float(alone_prior) < 1
        ):
            raise ConfigError(
                f"{owner} got a learned model whose 'alone_prior' is not a share in "
                f"(0, 1). Got {alone_prior!r}."
            )
        match_cut = learned.get("match_cut", 0.5)
        if not (
            isinstance(match_cut, numbers.Real)
            and not isinstance(match_cut, bool)
            and 0 < float(match_cut) <= 0.5
        ):
            raise ConfigError(
                f"{owner} got a learned model whose 'match_cut' is not a probability "
                f"in (0, 0.5]. Got {match_cut!r}."
            )
        alone_keys = learned.get("alone_keys", [NEIGHBOURS_KEY])
        if not isinstance(alone_keys, (list, tuple)) or not all(
            isinstance(label, str) for label in alone_keys
        ):
            raise ConfigError(
                f"{owner} got a learned model whose 'alone_keys' is not a list of "
                f"key names. Got {alone_keys!r}."
            )
        together = _together_from(learned.get("together", []), m, owner)
        swaps, shifts = (
            _field_pairs_from(learned, name, m, owner) for name in ("swaps", "shifts")
        )
        nicknames = learned.get("nicknames", [])
        if not isinstance(nicknames, (list, tuple)) or not all(
            isinstance(label, str) and label in m for label in nicknames
        ):
            raise ConfigError(
                f"{owner} got a learned model whose 'nicknames' is not a list of its "
                f"fields ({', '.join(sorted(m))}). Got {nicknames!r}."
            )
        placeholders = read_placeholders(learned.get("placeholders", {}), m, owner)
        return cls(
            prior=prior,
            m=m,
            u=u,
            together=together,
            compare=dict(compare),
            no_values=tuple(no_values),
            alone_prior=None if alone_prior is None else float(alone_prior),
            alone_keys=tuple(alone_keys),
            swaps=swaps,
            shifts=shifts,
            nicknames=tuple(nicknames),
            placeholders=placeholders,
            match_cut=float(match_cut),
            cuts=tuple(float(cut) for cut in cuts),
            field_cuts={
                label: tuple(float(cut) for cut in given)
                for label, given in field_cuts.items()
            },
        )

    @staticmethod
    def levels(
        values: npt.NDArray[np.float64], cuts: tuple[float, ...] = LEVEL_CUTS
    ) -> npt.NDArray[np.intp]:
        """Level of each field score (:func:`levels_of`); the last index is missing."""
        return levels_of(values, cuts)

    @classmethod
    def learn(
        cls,
        field_scores: dict[str, npt.NDArray[np.float64]],
        match: npt.NDArray[np.bool_],
    ) -> MatchModel | None:
        """Fit on a provisional split; None when it has too few pairs or one side."""
        levels = {label: cls.levels(values) for label, values in field_scores.items()}
        return cls.learn_levels(levels, match)

    @classmethod
    def learn_levels(
        cls, levels: dict[str, npt.NDArray[np.intp]], match: npt.NDArray[np.bool_]
    ) -> MatchModel | None:
        """:meth:`learn` from levels already computed with :meth:`levels`."""
        return cls.learn_table(list(levels), LevelTable.of(levels, match))

    @classmethod
    def learn_table(
        cls,
        labels: list[str],
        table: LevelTable,
        field_cuts: dict[str, tuple[float, ...]] | None = None,
    ) -> MatchModel | None:
        """:meth:`learn` from a :class:`LevelTable` of the pairs (fields ``labels``).

        ``field_cuts`` gives the cuts of fields not read at :data:`LEVEL_CUTS`.
        """
        field_cuts = {
            label: cuts
            for label, cuts in (field_cuts or {}).items()
            if label in labels and cuts != LEVEL_CUTS
        }
        match = table.rows[:, -1].astype(bool)
        total = table.pairs
        matches = int(table.counts[match].sum())
        if total < _AUTO_MIN_PAIRS or matches == 0 or matches == total:
            return None
        m: dict[str, npt.NDArray[np.float64]] = {}
        u: dict[str, npt.NDArray[np.float64]] = {}
        for column, label in enumerate(labels):
            size = len(field_cuts.get(label, LEVEL_CUTS)) + 1
            side = match.astype(np.intp) * (size + 1)
            # One count of (side, level): non-matches first, then matches.
            counts = np.zeros(2 * (size + 1), dtype=np.int64)
            at = table.rows[:, column].astype(np.intp) + side
            np.add.at(counts, at, table.counts)
            for target, part in ((u, counts[:size]), (m, counts[size + 1 : -1])):
                target[label] = (part + _SMOOTHING) / (part.sum() + size * _SMOOTHING)
        return cls(prior=matches / total, m=m, u=u, field_cuts=field_cuts)

    @classmethod
    def refine(
        cls,
        levels: dict[str, npt.NDArray[np.intp]],
        start: MatchModel,
        clear: bool = True,
    ) -> tuple[MatchModel, dict[str, Any]]:
        """Improve a one-step model without labels; return it and how it was fit.

        The provisional split leaves out matches that differ on a field (people
        who moved differ on street, city and postcode), so among its matches
        differing on that field looks almost impossible and such pairs are
        rejected. Two steps correct that:

        1. *Leave one field out* (:meth:`leave_one_out`, conservative): each
           field's m is re-estimated from the pairs that the other fields alone
           (without the fields that differ together with it) make near
           certain matches (probability >= 0.99); u and the prior
           stay. Repeated five times; not kept if it loses more than 5% of the
           one-step matches (its task is to add the ones left out).
        2. *Expectation maximisation* (:meth:`expectation_maximisation`) from
           there, and from a vaguer start (:meth:`vaguer`; the likelier of the
           two fits kept, see :data:`_START_MARGIN`): prior, m and u from every
           candidate weighted by its match
           probability, until no probability moves by more than 0.001. Kept
           only if it converges within 100 steps, finds at most 1.3 times the
           matches of step 1, and its matches mostly agree on every field
           (:meth:`mostly_agrees`): a model still moving after 100 steps, or
           finding far more, or whose matches mostly differ on a field, is taking
           another group (relatives sharing surname, address and phone, but
           not given names) for the same people. (Measured with the
           neighbours key: on make_customers(5,000) an EM still moving after
           100 steps had grown the matches 1.08 times, 94% of them relatives;
           sound fits converged in 3-64 steps.)

        Fields that differ together are read as one group (:meth:`with_together`)
        first; when neither start's fit with the groups is kept, EM runs again
        from both starts with each field read alone, and a kept fit there is
        used (``fit["together_dropped"]`` names the groups): fields that differ
        together among look-alikes (two versions of one paper) can lead EM
        with them read as one to another group.

        When the provisional split was not ``clear`` (its cut is no clear valley:
        :attr:`ScoreSpread.clear`), it holds only the surest matches and EM is
        there to find the rest: it may take up to 1,000 steps and grow the
        matches without limit, and is kept unless its matches differ on some
        field more than twice as often as they agree.

        A step is also not kept when its fit is not :attr:`sound` (differing on
        a field would count for a match), and nothing is refined with fewer than
        four fields, where the model is not identifiable. What happened is
        returned as a dict (steps, growth of the matches, and whether each step
        was kept) and recorded in ``attrs`` by :func:`score`.

        Pairs with the same levels on every field have the same probability, so
        both steps run on the distinct level patterns (a few thousand at most).
        """
        labels = list(levels)
        patterns, counts = _level_patterns([levels[label] for label in labels])
        return cls.refine_patterns(labels, patterns, counts, start, clear)

    @classmethod
    def refine_patterns(
        cls,
        labels: list[str],
        patterns: npt.NDArray[np.intp],
        counts: npt.NDArray[np.int64],
        start: MatchModel,
        clear: bool = True,
    ) -> tuple[MatchModel, dict[str, Any]]:
        """:meth:`refine` from the distinct level patterns and their counts."""
        if len(labels) < _REFINE_MIN_FIELDS:
            return start, {"skipped": f"fewer than {_REFINE_MIN_FIELDS} fields"}
        weights = counts.astype(np.float64)

        def matches(model: MatchModel) -> float:
            found = model._pattern_probability(labels, patterns) >= 0.5
            return float(weights[found].sum())

        careful = start
        for _ in range(_LEAVE_ONE_OUT_STEPS):
            careful = careful.leave_one_out(labels, patterns, weights)
        first = max(matches(start), 1.0)
        loo_growth = matches(careful) / first
        loo_kept = loo_growth >= _LEAVE_ONE_OUT_MIN_GROWTH and careful.sound
        if not loo_kept:
            careful = start
        matched, unmatched = careful._soft_counts(labels, patterns, weights)
        groups = careful.groups_differing(labels, patterns, unmatched)
        apart = careful
        if groups:
            careful = careful.with_together(
                labels, patterns, matched, unmatched, groups
            )

        def fitted(first: MatchModel, base: MatchModel) -> _EmFit:
            refined, steps, converged = first.expectation_maximisation(
                labels,
                patterns,
                weights,
                _EM_ITERATIONS if clear else _EM_ITERATIONS_UNCLEAR,
            )
            growth = matches(refined) / max(matches(base), 1.0)
            kept = (
                converged
                and (growth <= _EM_MAX_GROWTH or not clear)
                and refined.sound
                and refined.mostly_agrees(
                    _MOST_DIFFER if clear else _MOST_DIFFER_UNCLEAR, base
                )
            )
            return _EmFit(refined, steps, converged, growth, kept)

        def likelier(start: MatchModel) -> tuple[_EmFit, str]:
            # Of the fits from both starts that the guards keep, the likelier
            # one (the first, unless the other is likelier by the margin).
            chosen = fitted(start, start)
            other = fitted(start.vaguer(), start)
            if other.kept:
                better = True
                if chosen.kept:
                    split = chosen.model.log_likelihood(labels, patterns, weights)
                    vague = other.model.log_likelihood(labels, patterns, weights)
                    better = vague - split > _START_MARGIN * abs(split)
                if better:
                    return other, "vague"
            return chosen, "split"

        chosen, em_start = likelier(careful)
        read_apart = False
        if groups and not chosen.kept:
            # The groups read as one can lead EM astray (fields that differ
            # together among look-alikes, not among matches): a kept fit with
            # each field read alone beats no refinement at all.
            alone, alone_start = likelier(apart)
            if alone.kept:
                chosen, em_start, read_apart = alone, alone_start, True
        refined, steps, converged, growth, kept = chosen
        fit = {
            "split": "clear" if clear else "unclear",
            "leave_one_out_steps": _LEAVE_ONE_OUT_STEPS,
            "leave_one_out_growth": round(loo_growth, 4),
            "leave_one_out_kept": loo_kept,
            "em_steps": steps,
            "em_converged": converged,
            "em_growth": round(growth, 4),
            "em_kept": kept,
            "em_start": em_start,
            "together": [] if read_apart else [list(fields) for fields in groups],
        }
        if read_apart:
            fit["together_dropped"] = [list(fields) for fields in groups]
        return (refined if kept else careful), fit

    def _soft_counts(
        self,
        labels: list[str],
        patterns: npt.NDArray[np.intp],
        weights: npt.NDArray[np.float64],
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Each pattern's count as a match and as a non-match (the E-step)."""
        matched = weights * self._pattern_probability(labels, patterns)
        return matched, weights - matched

    def groups_differing(
        self,
        labels: list[str],
        patterns: npt.NDArray[np.intp],
        unmatched: npt.NDArray[np.float64],
    ) -> tuple[tuple[str, ...], ...]:
        """Fields that differ together among the non-matches (groups).

        ``unmatched`` weighs each distinct level pattern as a non-match (the
        E-step's soft count, :meth:`_soft_counts`).

        None when, each group read as one field, fewer than
        :data:`_TOGETHER_MIN_FIELDS` fields remain: the groups' joint shares
        are learned from the classes the other fields tell apart, and need
        more of them than refining does (:data:`_REFINE_MIN_FIELDS`).
        """
        sizes = np.array([self.size_of(label) for label in labels], dtype=np.intp)
        together = _differ_together(patterns, unmatched, sizes)
        groups = tuple(tuple(fields) for fields in _groups(together, labels))
        independent = len(labels) - sum(len(fields) - 1 for fields in groups)
        return groups if independent >= _TOGETHER_MIN_FIELDS else ()

    def check_fields(self, specs: list[Field], owner: str) -> None:
        """Raise unless the fields counted (weight > 0) are the model's."""
        counted = {spec.label for spec in specs if spec.weight > 0}
        learned_on = set(self.m) | set(self.no_values)
        if counted != learned_on:
            raise ConfigError(
                f"The model given to {owner} as min_score was learned on the fields "
                f"{sorted(learned_on)}, but the fields here (weight > 0) are "
                f"{sorted(counted)}. Match on the same fields."
            )

    @property
    def sound(self) -> bool:
        """Whether agreeing (or nearly) on every field weighs more than differing.

        A fit where differing on a field counts more for a match than agreeing
        on it has swapped the meaning of the classes (possible with few fields,
        where the model is not identifiable): such a refinement is not kept.
        Either may weigh little or even point the other way on its own — among
        candidates, relatives share an address while people who moved do not —
        so only their order is checked.
        """
        for label in self.m:
            weights = np.log(self.m[label] / self.u[label])
            if weights[-1] >= weights[:-1].max():
                return False
        return True

    def another_group(self) -> list[str]:
        """Return the fields showing that the model's matches are another group.

        When the matches differ (lowest level) on a field more than twice as
        often as they agree, on at least half of the model's fields, the
        group the provisional split took is not the same entities written
        twice but another one: on a table without duplicates, the candidates'
        top group is relatives sharing a surname and an address, who differ on
        given name, phone, date of birth and e-mail (make_customers without
        duplicates: 4 of 8 fields at 0.89-0.99). Returns those fields when
        they are at least half of them, else an empty list. No benchmark model
        came near: at most one field of three over 2/3 (Abt-Buy's
        descriptions, 0.67).
        """
        differ = [
            label for label, m in self.m.items() if float(m[-1]) > _MOST_DIFFER_UNCLEAR
        ]
        return differ if differ and 2 * len(differ) >= len(self.m) else []

    def mostly_agrees(
        self, most: float = _MOST_DIFFER, before: MatchModel | None = None
    ) -> bool:
        """Whether on every field at most ``most`` of the matches differ.

        With ``before`` (the model this one was refined from), only a field
        whose matches mostly agreed there counts: a fit that took another
        group turned a field its surest matches agree on into one they differ
        on (given names of relatives). A field whose matches differed more
        than ``most`` already there is written differently in the two tables
        (the cuisines of two restaurant guides) and says nothing of the fit.
        """
        for label, m in self.m.items():
            if float(m[-1]) <= most:
                continue
            if before is None or label not in before.m:
                return False
            if float(before.m[label][-1]) <= most:
                return False
        return True

    def leave_one_out(
        self,
        labels: list[str],
        patterns: npt.NDArray[np.intp],
        weights: npt.NDArray[np.float64],
    ) -> MatchModel:
        """Re-estimate each field's m from pairs the other fields make sure.

        "The other fields" leaves out, besides the field itself, the fields
        that differ together with it (:func:`_differ_together`): a person who
        moved differs on street, city and postcode at once, and the city and
        postcode would otherwise keep every mover from looking sure while the
        street's m is estimated. On make_customers(100,000) this raised the
        pair F1 of the decision from 0.956 to 0.976.
        """
        contributions = self._contributions(labels, patterns)
        total = np.log(self.prior / (1 - self.prior)) + contributions.sum(axis=1)
        unmatched = weights * (1 - self._pattern_probability(labels, patterns))
        sizes = np.array([self.size_of(label) for label in labels], dtype=np.intp)
        together = _differ_together(patterns, unmatched, sizes)
        expected = self.prior * weights.sum()
        m: dict[str, npt.NDArray[np.float64]] = {}
        for column, label in enumerate(labels):
            others = total - contributions[:, together[column]].sum(axis=1)
            sure = weights * (others >= _SURE_LOG_ODDS)
            seen = sure[patterns[:, column] < sizes[column]].sum()
            if seen < _SURE_MIN_SHARE * expected:
                # Too few pairs are sure without this field (and the fields
                # that differ with it) to estimate its m: keep the one it has.
                m[label] = self.m[label]
                continue
            m[label] = _level_frequencies(
                patterns[:, column], sure, self.size_of(label)
            )
        return dataclasses.replace(self, m=m)

    def expectation_maximisation(
        self,
        labels: list[str],
        patterns: npt.NDArray[np.intp],
        weights: npt.NDArray[np.float64],
        iterations: int = _EM_ITERATIONS,
    ) -> tuple[MatchModel, int, bool]:
        """Soft-count EM of prior, m and u from this model.

        Returns the model, the steps taken, and whether it converged (no
        probability moved by more than the tolerance) within ``iterations``.
        """
        model = self
        probability = model._pattern_probability(labels, patterns)
        steps = 0
        converged = False
        for steps in range(1, iterations + 1):  # noqa: B007 - steps is returned
            matched = weights * probability
            unmatched = weights - matched
            m = {
                label: _level_frequencies(
                    patterns[:, column], matched, self.size_of(label)
                )
                for column, label in enumerate(labels)
            }
            u = {
                label: _level_frequencies(
                    patterns[:, column], unmatched, self.size_of(label)
                )
                for column, label in enumerate(labels)
            }
            prior = float(matched.sum() / weights.sum())
            model = dataclasses.replace(
                self, prior=min(max(prior, 1e-9), 1 - 1e-9), m=m, u=u
            )
            if self.together:
                model = model.with_together(
                    labels,
                    patterns,
                    matched,
                    unmatched,
                    tuple(group.fields for group in self.together),
                )
            updated = model._pattern_probability(labels, patterns)
            moved = float(np.abs(updated - probability).max())
            probability = updated
            if moved <= _EM_TOLERANCE:
                converged = True
                break
        return model, steps, converged

    def vaguer(self) -> MatchModel:
        """Return this model with each m halfway to its u and prior 0.5.

        A second start for EM: it has not yet decided which group the matches
        are, so EM can reach a fixed point the first start cannot.
        """
        return dataclasses.replace(
            self,
            prior=0.5,
            m={label: (self.m[label] + self.u[label]) / 2 for label in self.m},
        )

    def log_likelihood(
        self,
        labels: list[str],
        patterns: npt.NDArray[np.intp],
        weights: npt.NDArray[np.float64],
    ) -> float:
        """Log-likelihood of weighted level patterns under the two-class model.

        ``sum(weights * log(prior * P(levels | match) + (1 - prior) *
        P(levels | non-match)))``, each P a product over the fields (a missing
        value counts 1), the match side as the model weighs it: with the cells
        of its :class:`Together` groups in place of their fields' m / u.
        """
        non_match = np.full(len(weights), np.log(1 - self.prior))
        for column, label in enumerate(labels):
            if label in self.m:
                log_u = np.log(np.append(self.u[label], 1.0))
                non_match += log_u[patterns[:, column]]
        log_odds = np.log(self.prior / (1 - self.prior)) + self._contributions(
            labels, patterns
        ).sum(axis=1)
        return float((weights * (non_match + np.logaddexp(0.0, log_odds))).sum())

    def _contributions(
        self, labels: list[str], patterns: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.float64]:
        """Log-likelihood ratio of each pattern's level, per field (columns)."""
        weights = self.level_weights(
            {label: patterns[:, column] for column, label in enumerate(labels)}
        )
        return np.stack([weights[label] for label in labels], axis=1)

    def _pattern_probability(
        self, labels: list[str], patterns: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.float64]:
        return self.probability_of_levels(
            {label: patterns[:, column] for column, label in enumerate(labels)}
        )

    def probability(
        self, field_scores: dict[str, npt.NDArray[np.float64]]
    ) -> npt.NDArray[np.float64]:
        """Posterior probability that each pair is a match."""
        return self.probability_of_levels(
            {
                label: self.levels(values, self.cuts_of(label))
                for label, values in field_scores.items()
            }
        )

    def probability_of_levels(
        self, levels: dict[str, npt.NDArray[np.intp]]
    ) -> npt.NDArray[np.float64]:
        """:meth:`probability` from levels already computed with :meth:`levels`."""
        size = next(iter(levels.values())).size
        log_odds = np.full(size, np.log(self.prior / (1 - self.prior)))
        for weights in self.level_weights(levels).values():
            log_odds += weights
        return 1 / (1 + np.exp(-log_odds))

    def level_weights(
        self, levels: dict[str, npt.NDArray[np.intp]]
    ) -> dict[str, npt.NDArray[np.float64]]:
        """Each field's weight (natural log of m / u) of each pair's level.

        A missing value weighs 0. Where the fields of a :class:`Together`
        group present in a pair all differ (or all agree), their weights are
        that group's one weight, shared equally among them (so they still add
        up to it); likewise the fields of a group that differ while another
        present one does not (``"differ among more"``).
        """
        weights = {
            # A missing value is neutral: weight 0 in the last slot.
            label: np.append(np.log(self.m[label] / self.u[label]), 0.0)[level]
            for label, level in levels.items()
            if label in self.m
        }
        for members, _, chosen, weight in self.joint_readings(levels):
            for label in members:
                weights[label][chosen] = weight / len(members)
        return weights

    def joint_readings(
        self, levels: dict[str, npt.NDArray[np.intp]]
    ) -> list[tuple[tuple[str, ...], str, npt.NDArray[np.bool_], float]]:
        """Return the :class:`Together` observations the pairs make.

        One ``(fields present, "differ" or "agree", pairs, weight)`` per group
        cell some pair falls in: the pairs (a mask) whose fields of the group
        present in both records all differ (or agree), and the cell's one
        weight (natural log of m / u) that replaces their fields' weights.
        """
        readings = []
        for group in self.together:
            if not all(label in levels for label in group.fields):
                continue
            cells = self._group_cells(
                group.fields, [levels[label] for label in group.fields]
            )
            for kind in _TOGETHER_KINDS:
                found = cells.alike[kind]
                keys = cells.differing if kind == _PART_DIFFERS else cells.present
                # Only the cells some pair falls in (a few, for a few pairs).
                for mask in np.unique(keys[found]).tolist():
                    if (kind, mask) not in group.cells:
                        continue
                    m, u = group.cells[kind, mask]
                    members = tuple(
                        label
                        for bit, label in enumerate(group.fields)
                        if mask >> bit & 1
                    )
                    chosen = found & (keys == mask)
                    shown = "differ" if kind == _PART_DIFFERS else kind
                    readings.append((members, shown, chosen, float(np.log(m / u))))
        return readings

    def _group_cells(
        self, fields: tuple[str, ...], levels: list[npt.NDArray[np.intp]]
    ) -> _GroupCells:
        """Return each pair's present and differing fields, and its cell kinds."""
        present = np.zeros(levels[0].shape, dtype=np.int64)
        differing = np.zeros(levels[0].shape, dtype=np.int64)
        counted = np.zeros(levels[0].shape, dtype=np.int64)
        differ_count = np.zeros(levels[0].shape, dtype=np.int64)
        agreeing = np.zeros(levels[0].shape, dtype=np.int64)
        for bit, (label, level) in enumerate(zip(fields, levels, strict=True)):
            size = self.size_of(label)
            there = level < size
            differs = level == size - 1
            present |= there.astype(np.int64) << bit
            differing |= differs.astype(np.int64) << bit
            counted += there
            differ_count += differs
            agreeing += level == 0
        several = counted >= 2
        return _GroupCells(
            present,
            differing,
            {
                "differ": several & (differ_count == counted),
                "agree": several & (agreeing == counted),
                _PART_DIFFERS: (differ_count >= 2) & (differ_count < counted),
            },
        )

    def with_together(
        self,
        labels: list[str],
        patterns: npt.NDArray[np.intp],
        matched: npt.NDArray[np.float64],
        unmatched: npt.NDArray[np.float64],
        groups: tuple[tuple[str, ...], ...],
    ) -> MatchModel:
        """Return the model with its groups' shares of each kind of cell.

        ``matched`` and ``unmatched`` weigh each distinct level pattern as a
        match and as a non-match (the E-step's soft counts).
        """
        together = []
        for fields in groups:
            columns = [labels.index(label) for label in fields]
            group = self._group_cells(
                fields, [patterns[:, column] for column in columns]
            )
            cells = {}
            for kind in _TOGETHER_KINDS:
                for mask in range(1 << len(fields)):
                    if bin(mask).count("1") < 2:
                        continue
                    if kind == _PART_DIFFERS:
                        if mask == (1 << len(fields)) - 1:
                            continue  # a part leaves another field present
                        # Of the pairs with all of these present (and maybe
                        # more), those where all of these differ.
                        same = (group.present & mask) == mask
                        hits = same & ((group.differing & mask) == mask)
                    else:
                        same = group.present == mask
                        hits = same & group.alike[kind]
                    shares = []
                    for mass in (matched, unmatched):
                        seen = float(mass[same].sum())
                        hit = float(mass[hits].sum())
                        shares.append((hit + _SMOOTHING) / (seen + 2 * _SMOOTHING))
                    cells[kind, mask] = (shares[0], shares[1])
            together.append(Together(fields, cells))
        return dataclasses.replace(self, together=tuple(together))

    def speaks_for(
        self, levels: dict[str, npt.NDArray[np.intp]]
    ) -> npt.NDArray[np.bool_]:
        """Whether some field of each pair counts for a match (a positive weight).

        A pair whose only shared evidence disagrees (every field present in
        both records at a level that counts against a match) is no match,
        whatever the prior: a record holding only a date of birth and a city
        abbreviation once matched three people at probability 0.51 because
        the prior was 0.72 and the one field they shared differed.
        """
        size = next(iter(levels.values())).size
        found = np.zeros(size, dtype=bool)
        for label, level in levels.items():
            positive = np.append(self.m[label] > self.u[label], False)
            found |= positive[level]
        return found

    def evidence(
        self,
        field_scores: dict[str, npt.NDArray[np.float64]],
        alone: npt.NDArray[np.bool_] | None = None,
    ) -> Evidence:
        """Each field's weight in bits for each pair, from its score on the field.

        ``field_scores`` holds the ``<field>_score`` values of (at least) the
        model's fields; ``alone`` marks the pairs only a weak key (``alone_keys``)
        found, which start from ``alone_prior`` as :func:`score` decides them.
        The parts add up to :meth:`probability` (see :class:`Evidence`).

        Examples
        --------
        >>> model = MatchModel(prior=0.5, m={"name": np.array([0.9, 0.05, 0.03, 0.02])},
        ...                    u={"name": np.array([0.1, 0.1, 0.2, 0.6])})
        >>> evidence = model.evidence({"name": np.array([1.0, 0.5, np.nan])})
        >>> evidence.levels["name"].tolist(), evidence.weights["name"].round(3).tolist()
        ([0, 3, 4], [3.17, -4.907, 0.0])
        >>> evidence.probability.round(3).tolist()
        [0.9, 0.032, 0.5]
        """
        size = next(iter(field_scores.values())).size
        start = np.full(size, np.log2(self.prior / (1 - self.prior)))
        if self.alone_prior is not None and alone is not None:
            alone_log_odds = np.log2(self.alone_prior / (1 - self.alone_prior))
            start[np.asarray(alone, dtype=bool)] = alone_log_odds
        levels = {
            label: self.levels(
                np.asarray(field_scores[label], dtype=np.float64), self.cuts_of(label)
            )
            for label in self.m
        }
        weights = {
            label: values / np.log(2)
            for label, values in self.level_weights(levels).items()
        }
        return Evidence(start=start, levels=levels, weights=weights)

    def prior_among(self, labels: list[str], table: LevelTable) -> float:
        """Return the share of matches among some pairs, m and u held fixed.

        EM on the prior alone: a pair's posterior under the current share,
        averaged over the pairs, is the next share. ``table`` holds the pairs'
        levels of ``labels`` (its split column is not read).
        """
        patterns, counts = table.fields()
        if counts.sum() == 0:
            return self.prior
        log_ratio = np.zeros(counts.size)
        for weights in self.level_weights(
            {label: patterns[:, column] for column, label in enumerate(labels)}
        ).values():
            log_ratio += weights
        ratio = np.exp(np.clip(log_ratio, -60.0, 60.0))
        share = counts / counts.sum()
        prior = self.prior
        for _ in range(_PRIOR_ITERATIONS):
            posterior = prior * ratio / (prior * ratio + 1 - prior)
            new = float(share @ posterior)
            converged = abs(new - prior) < _PRIOR_TOLERANCE
            prior = new
            if converged:
                break
        return min(max(prior, _PRIOR_FLOOR), 1 - _PRIOR_FLOOR)

    def to_dict(self) -> dict[str, Any]:
        """Return the learned numbers: prior, and m, u and weight (bits) per level."""
        return {
            "prior": self.prior,
            "levels": level_names(self.cuts),
            "cuts": list(self.cuts),
            "field_cuts": {
                label: list(cuts) for label, cuts in self.field_cuts.items()
            },
            "fields": {
                label: {
                    "m": self.m[label].tolist(),
                    "u": self.u[label].tolist(),
                    "weight": np.log2(self.m[label] / self.u[label]).round(3).tolist(),
                }
                for label in self.m
            },
            "no_values": list(self.no_values),
            **({} if self.alone_prior is None else {"alone_prior": self.alone_prior}),
            "alone_keys": list(self.alone_keys),
            **(
                {"together": [group.to_dict() for group in self.together]}
                if self.together
                else {}
            ),
            **({"swaps": [list(pair) for pair in self.swaps]} if self.swaps else {}),
            **({"shifts": [list(pair) for pair in self.shifts]} if self.shifts else {}),
            **({"nicknames": list(self.nicknames)} if self.nicknames else {}),
            **(
                {"placeholders": placeholders_dict(self.placeholders)}
                if self.placeholders
                else {}
            ),
            "match_cut": self.match_cut,
        }


def placeholders_dict(placeholders: dict[str, tuple[int, ...]]) -> dict[str, list[str]]:
    """Return placeholder days as saved: ``{"dob": ["01-01"]}``."""
    return {
        label: [f"{day // 100:02d}-{day % 100:02d}" for day in days]
        for label, days in placeholders.items()
    }


def read_placeholders(
    given: Any, fields: Any, owner: str
) -> dict[str, tuple[int, ...]]:
    """Read saved placeholder days (see :func:`placeholders_dict`) of ``fields``."""
    problem = (
        f"{owner} got a learned model whose 'placeholders' is not a mapping of "
        "its fields to lists of days written 'mm-dd'"
    )
    if not isinstance(given, dict) or not all(label in fields for label in given):
        raise ConfigError(f"{problem} ({', '.join(sorted(fields))}). Got {given!r}.")
    result = {}
    for label, days in given.items():
        if not isinstance(days, (list, tuple)):
            raise ConfigError(f"{problem}. Got {days!r} for {label!r}.")
        read = []
        for day in days:
            written = re.fullmatch(r"([0-9]{2})-([0-9]{2})", str(day))
            month, of_month = (0, 0) if written is None else map(int, written.groups())
            try:
                datetime.date(2000, month, of_month)  # a leap year: 02-29 is a day
            except ValueError:
                raise ConfigError(f"{problem}. Got {day!r} for {label!r}.") from None
            read.append(month * 100 + of_month)
        result[label] = tuple(sorted(set(read)))
    return result


def _field_pairs_from(
    learned: dict[str, Any], name: str, m: dict[str, Any], owner: str
) -> tuple[tuple[str, str], ...]:
    """Read a saved model's list of pairs of two of its fields (``swaps``, ...)."""
    pairs = learned.get(name, [])
    if not isinstance(pairs, (list, tuple)) or not all(
        isinstance(pair, (list, tuple))
        and len(pair) == 2
        and all(isinstance(label, str) and label in m for label in pair)
        and pair[0] != pair[1]
        for pair in pairs
    ):
        raise ConfigError(
            f"{owner} got a learned model whose {name!r} is not a list of pairs "
            f"of two of its fields ({', '.join(sorted(m))}). Got {pairs!r}."
        )
    return tuple((first, second) for first, second in pairs)


def _together_from(
    given: Any, m: dict[str, npt.NDArray[np.float64]], owner: str
) -> tuple[Together, ...]:
    """Read the :class:`Together` groups of a saved model (its "together")."""
    problem = (
        f"{owner} got a learned model whose 'together' is not a list of groups "
        "({'fields': [two or more of its fields], 'cells': [{'all': 'differ', "
        "'agree' or 'differ among more', 'present': [two or more of the fields], "
        f"'m': share, 'u': share}}, ...]}}, ...). Got {given!r}."
    )
    if not isinstance(given, (list, tuple)):
        raise ConfigError(problem)
    groups = []
    for group in given:
        try:
            fields = tuple(group["fields"])
            cells = {}
            for cell in group["cells"]:
                present = set(cell["present"])
                mask = sum(
                    1 << bit for bit, label in enumerate(fields) if label in present
                )
                shares = (float(cell["m"]), float(cell["u"]))
                if not present <= set(fields) or len(present) < 2:
                    raise ConfigError(problem)
                kind = cell.get("all", "differ")
                if kind not in _TOGETHER_KINDS:
                    raise ConfigError(problem)
                if not all(0 < share < 1 for share in shares):
                    raise ConfigError(problem)
                cells[kind, mask] = shares
        except (KeyError, TypeError, ValueError):
            raise ConfigError(problem) from None
        if (
            len(fields) < 2
            or len(set(fields)) != len(fields)
            or not set(fields) <= set(m)
        ):
            raise ConfigError(problem)
        groups.append(Together(fields, cells))
    return tuple(groups)
