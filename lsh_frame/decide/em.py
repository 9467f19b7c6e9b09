"""Learning a match model without labels: from a provisional split, then EM.

:meth:`MatchModel.learn` estimates each field's m and u from the provisional
split (``score >= min_score``); :meth:`MatchModel.refine` re-estimates them by
leaving one field out at a time and by expectation maximisation, keeping a fit
only when its guards hold (it converged, grew the matches by at most
``_EM_MAX_GROWTH``, and its matches do not mostly differ on any field). The
functions here are the methods of :class:`~lsh_frame.decide.model.MatchModel`
that learn; the class binds them.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

from lsh_frame.compare.levels import LEVEL_CUTS
from lsh_frame.decide.tables import (
    _AUTO_MIN_PAIRS,
    _TOGETHER_KINDS,
    LevelTable,
    Together,
    _level_patterns,
)
from lsh_frame.errors import ConfigError

if TYPE_CHECKING:
    from lsh_frame.decide.model import MatchModel


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
            # A mean can exceed 1 by rounding (a dot product and a sum add
            # in different orders): clipped, the spread is 0, not NaN.
            spread = np.sqrt(max(mean_a * (1 - mean_a) * mean_b * (1 - mean_b), 0.0))
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


class _EmFit(NamedTuple):
    """One EM run of :meth:`MatchModel.refine_patterns` and its guards' verdict."""

    model: MatchModel
    steps: int
    converged: bool
    growth: float
    kept: bool


def learn(
    cls: type[MatchModel],
    field_scores: dict[str, npt.NDArray[np.float64]],
    match: npt.NDArray[np.bool_],
) -> MatchModel | None:
    """Fit on a provisional split; None when it has too few pairs or one side."""
    levels = {label: cls.levels(values) for label, values in field_scores.items()}
    return cls.learn_levels(levels, match)


def learn_levels(
    cls: type[MatchModel],
    levels: dict[str, npt.NDArray[np.intp]],
    match: npt.NDArray[np.bool_],
) -> MatchModel | None:
    """:meth:`learn` from levels already computed with :meth:`levels`."""
    return cls.learn_table(list(levels), LevelTable.of(levels, match))


def learn_table(
    cls: type[MatchModel],
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


def refine(
    cls: type[MatchModel],
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


def refine_patterns(
    cls: type[MatchModel],
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
        careful = careful.with_together(labels, patterns, matched, unmatched, groups)

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
    self: MatchModel,
    labels: list[str],
    patterns: npt.NDArray[np.intp],
    weights: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Each pattern's count as a match and as a non-match (the E-step)."""
    matched = weights * self._pattern_probability(labels, patterns)
    return matched, weights - matched


def groups_differing(
    self: MatchModel,
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


def sound(self: MatchModel) -> bool:
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


def another_group(self: MatchModel) -> list[str]:
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
    self: MatchModel, most: float = _MOST_DIFFER, before: MatchModel | None = None
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
    self: MatchModel,
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
        m[label] = _level_frequencies(patterns[:, column], sure, self.size_of(label))
    return dataclasses.replace(self, m=m)


def expectation_maximisation(
    self: MatchModel,
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
            label: _level_frequencies(patterns[:, column], matched, self.size_of(label))
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


def vaguer(self: MatchModel) -> MatchModel:
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
    self: MatchModel,
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
