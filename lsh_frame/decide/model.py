"""The match model: Fellegi-Sunter weights per field, learned without labels.

:class:`MatchModel` holds, for every compared field, how often each comparison
level occurs among matches (m) and non-matches (u), and the prior of a match;
a pair's match probability is the naive-Bayes posterior over the fields
present in both records (fields that differ together read as one fact, see
:class:`~lsh_frame.decide.tables.Together`). It learns from a provisional
split of the combined scores (:mod:`lsh_frame.decide.cut`) and refines itself
without labels (:mod:`lsh_frame.decide.em`); it saves and loads as plain JSON
(:mod:`lsh_frame.decide.model_dict`). Everything it learns from are summaries
that add up over parts of the pairs (:class:`~lsh_frame.decide.tables.LevelTable`),
so Dask partitions decide exactly as one frame.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from lsh_frame.compare.levels import LEVEL_CUTS, levels_of
from lsh_frame.config import NEIGHBOURS_KEY
from lsh_frame.decide import em as _em
from lsh_frame.decide import model_dict as _model_dict
from lsh_frame.decide.em import (
    _PRIOR_FLOOR,
    _PRIOR_ITERATIONS,
    _PRIOR_TOLERANCE,
    _SMOOTHING,
)
from lsh_frame.decide.tables import (
    _PART_DIFFERS,
    _TOGETHER_KINDS,
    Evidence,
    Together,
    _GroupCells,
)
from lsh_frame.errors import ConfigError

if TYPE_CHECKING:
    from lsh_frame.block.fields import Field
    from lsh_frame.decide.matching import Matching
    from lsh_frame.decide.tables import LevelTable
    from lsh_frame.decide.taught import Taught

__all__ = ["MatchModel"]


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
    #: Links read as a matching (see :mod:`lsh_frame.decide.matching`): the
    #: exclusive tables and the share of their records that match; a pair's
    #: probability is then its marginal in the matching of its candidates.
    matching: Matching | None = None
    #: The label of the identifier-codes comparison among the model's fields
    #: (see :mod:`lsh_frame.compare.codes`), when it read them.
    codes: str | None = None
    #: What a person's answers taught it (see :mod:`lsh_frame.decide.taught`):
    #: shifts of the fields' weights and of the prior's log odds.
    taught: Taught | None = None

    @property
    def log_prior_odds(self) -> float:
        """The prior's log odds (natural log), shifted by the answers."""
        shift = 0.0 if self.taught is None else self.taught.prior_shift
        return float(np.log(self.prior / (1 - self.prior))) + shift

    def weights_of(self, label: str) -> npt.NDArray[np.float64]:
        """One field's weight (natural log) per present level, as it decides."""
        weights = np.log(self.m[label] / self.u[label])
        if self.taught is not None and label in self.taught.shifts:
            weights = weights + self.taught.shifts[label]
        return weights

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

    # Defined in lsh_frame.decide.model_dict.
    from_dict = classmethod(_model_dict.from_dict)

    @staticmethod
    def levels(
        values: npt.NDArray[np.float64], cuts: tuple[float, ...] = LEVEL_CUTS
    ) -> npt.NDArray[np.intp]:
        """Level of each field score (:func:`levels_of`); the last index is missing."""
        return levels_of(values, cuts)

    # Defined in lsh_frame.decide.em.
    learn = classmethod(_em.learn)
    learn_levels = classmethod(_em.learn_levels)
    learn_table = classmethod(_em.learn_table)
    refine = classmethod(_em.refine)
    refine_patterns = classmethod(_em.refine_patterns)
    _soft_counts = _em._soft_counts
    groups_differing = _em.groups_differing

    def check_fields(self, specs: list[Field], owner: str) -> None:
        """Raise unless the fields counted (weight > 0) are the model's."""
        counted = {spec.label for spec in specs if spec.weight > 0}
        # The identifier codes are a field of the model no field of a call names.
        learned_on = (set(self.m) | set(self.no_values)) - {self.codes}
        if counted != learned_on:
            raise ConfigError(
                f"The model given to {owner} as min_score was learned on the fields "
                f"{sorted(learned_on)}, but the fields here (weight > 0) are "
                f"{sorted(counted)}. Match on the same fields."
            )

    # Defined in lsh_frame.decide.em.
    sound = property(_em.sound)
    another_group = _em.another_group
    mostly_agrees = _em.mostly_agrees
    leave_one_out = _em.leave_one_out
    expectation_maximisation = _em.expectation_maximisation
    vaguer = _em.vaguer
    log_likelihood = _em.log_likelihood

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
        log_odds = np.full(size, self.log_prior_odds)
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
        if self.taught is not None:
            for label, level in levels.items():
                if label in self.taught.shifts:
                    weights[label] += np.append(self.taught.shifts[label], 0.0)[level]
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
            positive = np.append(self.weights_of(label) > 0, False)
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
        shift = 0.0 if self.taught is None else self.taught.prior_shift / np.log(2)
        start = np.full(size, np.log2(self.prior / (1 - self.prior)) + shift)
        if self.alone_prior is not None and alone is not None:
            alone_log_odds = np.log2(self.alone_prior / (1 - self.alone_prior))
            start[np.asarray(alone, dtype=bool)] = alone_log_odds + shift
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

    # Defined in lsh_frame.decide.model_dict.
    to_dict = _model_dict.to_dict
