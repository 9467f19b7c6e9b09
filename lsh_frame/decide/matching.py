"""Links of clean sources: the decision reads the candidates as a matching.

When each record of a table has at most one match in the other table (two
catalogues, two film databases, a master list against a clean extract), a
pair is not decided on its own evidence alone: a record whose best candidate
is nearly certain has no room for a second match, and a record among several
look-alikes (the same lamp for six projectors) can match at most one of them.
The link is then a *partial one-to-one matching* of the two tables, and each
pair's ``match_probability`` is the probability that the pair belongs to it:

- every pair's Bayes factor ``BF`` is the match model's (Fellegi-Sunter m / u
  over its fields' levels, without a prior);
- a record of an *exclusive* table matches with probability ``rho`` (the share
  of its records that have a match), uniformly among its ``n`` candidates if
  it does: a pair weighs ``x = BF * rho / ((1 - rho) * n)`` against "no match";
- :func:`matching_marginals` gives each pair's marginal probability over all
  partial matchings of the candidate graph, weighted by the product of their
  pairs' ``x``, by belief propagation (Huang and Jebara, AISTATS 2007; Bayati,
  Shah and Sharma, 2008): on the tree-like graphs of blocked candidates it is
  close to exact, and every record's probabilities add up to at most one.

:func:`learn_matching` learns the model by expectation maximisation whose
expectation step is those marginals, so the model learns what matches look
like from pairs that compete for their records, not from a cut on the
scores: the m and u of every field, and ``rho``. It needs no valley in the
scores and works from one field up.

Evidence that turns it on (no labels, no column names): linking two tables
with ``one_to_one`` ``"auto"`` or True. A table is *exclusive* unless the
data shows it holds duplicates: ``"auto"`` scores, with the fitted model,
each record's two best candidates against each other (see
:func:`lsh_frame.decide.one_to_one.choose`); when half or more of them are
duplicates, the other table's records may match several of them, and only the
other table stays exclusive (both duplicated: the matching reading is off and
pairs are decided one by one). Measured on the development and held-out
links, against deciding pairs one by one (pair F1): Walmart-Amazon, IMDb-DBpedia,
Abt-Buy, DBLP-ACM and Fodors-Zagats gain, FEBRL4 stays at 1.0 (see
benchmarks/HISTORY.md, "links as a matching").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

Side = Literal["left", "right"]

#: Belief propagation stops when no message moves by more than this, or after
#: ``_ROUNDS`` rounds (the messages are damped by half each round).
_TOLERANCE = 1e-7
_ROUNDS = 200

#: A pair's weight is capped: beyond it the pair is certain either way, and
#: the cap keeps the leave-one-out sums of the messages exact in float64.
_MAX_WEIGHT = 1e8

#: Expectation maximisation of :func:`learn_matching`: at most this many
#: steps, until no pair's probability moves by more than the tolerance.
_EM_STEPS = 100
_EM_TOLERANCE = 1e-4

#: ``rho`` is kept inside (0, 1).
_RHO_FLOOR = 1e-4


@dataclass(frozen=True)
class Matching:
    """Which tables are exclusive, and the share of their records that match."""

    #: The tables whose records match at most one record of the other.
    exclusive: tuple[Side, ...]
    #: Per exclusive table, the share of its records (among those with a
    #: candidate) that have a match.
    rho: dict[str, float]

    def to_dict(self) -> dict[str, object]:
        """Return the reading as JSON-ready data."""
        return {"exclusive": list(self.exclusive), "rho": dict(self.rho)}

    @classmethod
    def from_dict(cls, spec: dict[str, object]) -> Matching:
        """Read :meth:`to_dict`'s data back."""
        exclusive = tuple(str(side) for side in spec["exclusive"])  # type: ignore[attr-defined]
        rho = {str(side): float(value) for side, value in spec["rho"].items()}  # type: ignore[attr-defined]
        return cls(exclusive=exclusive, rho=rho)  # type: ignore[arg-type]


def pair_weights(
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
    log_bayes: npt.NDArray[np.float64],
    matching: Matching,
) -> npt.NDArray[np.float64]:
    """Each pair's weight against "no match": ``BF * rho / ((1 - rho) * n)``.

    ``n`` is the number of candidates of the pair's record in the exclusive
    table (of the left record when both are).
    """
    side: Side = "left" if "left" in matching.exclusive else "right"
    records = left if side == "left" else right
    candidates = np.bincount(records)[records].astype(np.float64)
    rho = matching.rho[side]
    bayes = np.exp(np.clip(log_bayes, -60.0, 60.0))
    return np.minimum(bayes * rho / ((1 - rho) * candidates), _MAX_WEIGHT)


def matching_marginals(
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
    weight: npt.NDArray[np.float64],
    exclusive: tuple[Side, ...] = ("left", "right"),
) -> npt.NDArray[np.float64]:
    """Each pair's probability of being in the matching, ``weight`` per pair.

    The matchings are the sets of candidate pairs in which every record of an
    ``exclusive`` table appears at most once, each weighted by the product of
    its pairs' ``weight`` (a record's "no match" weighs 1). With one exclusive
    table the marginals are exact (each record's pairs are a softmax with a
    "no match" option); with both, belief propagation gives them.

    Examples
    --------
    >>> left, right = np.array([0, 0, 1]), np.array([0, 1, 1])
    >>> matching_marginals(left, right, np.array([9.0, 1.0, 9.0])).round(3).tolist()
    [0.891, 0.01, 0.891]
    >>> weight = np.array([9.0, 1.0, 9.0])
    >>> matching_marginals(left, right, weight, ("left",)).round(3).tolist()
    [0.818, 0.091, 0.9]
    """
    return _marginals(left, right, weight, exclusive, None)[0]


def _marginals(
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
    weight: npt.NDArray[np.float64],
    exclusive: tuple[Side, ...],
    messages: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None,
) -> tuple[
    npt.NDArray[np.float64],
    tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None,
]:
    """:func:`matching_marginals`, starting from (and returning) the messages."""
    weight = np.minimum(np.asarray(weight, dtype=np.float64), _MAX_WEIGHT)
    if weight.size == 0:
        return weight.copy(), None
    if len(exclusive) == 1:
        records = left if exclusive[0] == "left" else right
        total = np.bincount(records, weights=weight)
        return np.asarray(weight / (1.0 + total[records]), dtype=np.float64), None
    # Messages along each pair: from its left record and from its right one.
    # A record's message to one of its pairs is 1 / (1 + the weight of its
    # other pairs, each times the message from that pair's other end).
    if messages is None:
        from_left, from_right = np.ones_like(weight), np.ones_like(weight)
    else:
        from_left, from_right = messages
    for _ in range(_ROUNDS):
        at_left = np.bincount(left, weights=weight * from_right)
        new_left = 1.0 / (1.0 + np.maximum(at_left[left] - weight * from_right, 0.0))
        at_right = np.bincount(right, weights=weight * new_left)
        new_right = 1.0 / (1.0 + np.maximum(at_right[right] - weight * new_left, 0.0))
        moved = max(
            float(np.abs(new_left - from_left).max()),
            float(np.abs(new_right - from_right).max()),
        )
        from_left = 0.5 * (from_left + new_left)
        from_right = 0.5 * (from_right + new_right)
        if moved < _TOLERANCE:
            break
    belief = weight * from_left * from_right
    return (
        np.asarray(belief / (1.0 + belief), dtype=np.float64),
        (from_left, from_right),
    )


def matched_share(
    records: npt.NDArray[np.int64], probability: npt.NDArray[np.float64]
) -> float:
    """Return ``rho``: the expected share of records (with a candidate) matched."""
    present = np.unique(records).size
    if present == 0:
        return _RHO_FLOOR
    share = float(probability.sum()) / present
    return min(max(share, _RHO_FLOOR), 1 - _RHO_FLOOR)


def fitted_matching(
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
    probability: npt.NDArray[np.float64],
    exclusive: tuple[Side, ...],
) -> Matching:
    """Return the matching reading whose ``rho`` the probabilities expect."""
    rho: dict[str, float] = {
        side: matched_share(left if side == "left" else right, probability)
        for side in exclusive
    }
    return Matching(exclusive=exclusive, rho=rho)


def monotone(
    m: npt.NDArray[np.float64], u: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Return m and u whose weights never rise as the level loosens.

    Adjacent levels whose weights ``log(m / u)`` rise are pooled until none
    does (pool-adjacent-violators on the odds): the pooled levels keep their m
    and share one ratio. And the closest level never weighs below 0: exact
    agreement never counts against a match.

    Examples
    --------
    >>> m, u = monotone(np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.1, 0.7]))
    >>> np.log(m / u).round(3).tolist()
    [0.981, 0.981, -1.253]
    """
    blocks = [[level] for level in range(m.size)]
    merged = True
    while merged:
        merged = False
        for at in range(len(blocks) - 1):
            first, second = blocks[at], blocks[at + 1]
            if m[second].sum() * u[first].sum() > m[first].sum() * u[second].sum():
                blocks[at : at + 2] = [first + second]
                merged = True
                break
    fitted_u = u.copy()
    for block in blocks:
        ratio = m[block].sum() / u[block].sum()
        fitted_u[block] = m[block] / ratio
    if m[0] < fitted_u[0]:
        fitted_u[0] = m[0]
    return m, fitted_u / fitted_u.sum()


def learn_matching(
    labels: list[str],
    levels: dict[str, npt.NDArray[np.intp]],
    sizes: dict[str, int],
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
    start: npt.NDArray[np.bool_],
    exclusive: tuple[Side, ...],
    learned: npt.NDArray[np.bool_],
    smoothing: float = 0.5,
) -> tuple[
    dict[str, npt.NDArray[np.float64]],
    dict[str, npt.NDArray[np.float64]],
    Matching,
    npt.NDArray[np.float64],
    dict[str, object],
]:
    """Learn m, u and ``rho`` by EM whose expectation step is the matching.

    ``levels`` holds each field's level per pair (``sizes[label]`` present
    levels, then the missing one); ``start`` is the first guess of the
    matches; only the ``learned`` pairs count in the maximisation step (the
    others, identical copies and pairs of compound keys, are decided, not
    learned from). Returns m, u, the reading, every pair's probability and the
    fit's record.
    """
    probability = start.astype(np.float64)
    fit: dict[str, object] = {"reading": "matching", "exclusive": list(exclusive)}
    m: dict[str, npt.NDArray[np.float64]] = {}
    u: dict[str, npt.NDArray[np.float64]] = {}
    matching = fitted_matching(left, right, probability, exclusive)
    messages: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None = None
    steps = 0
    converged = False
    while steps < _EM_STEPS:
        steps += 1
        weight = np.where(learned, probability, 0.0)
        other = np.where(learned, 1.0 - probability, 0.0)
        log_bayes = np.zeros(probability.size)
        for label in labels:
            size = sizes[label]
            level = levels[label]
            present = level < size
            at = level[present]
            matched = np.bincount(at, weights=weight[present], minlength=size)[:size]
            unmatched = np.bincount(at, weights=other[present], minlength=size)[:size]
            m_label = (matched + smoothing) / (matched.sum() + size * smoothing)
            u_label = (unmatched + smoothing) / (unmatched.sum() + size * smoothing)
            m[label], u[label] = monotone(m_label, u_label)
            log_bayes[present] += np.log(m[label] / u[label])[at]
        matching = fitted_matching(left, right, probability, exclusive)
        # The messages of the last step are close to this step's fixed point.
        new, messages = _marginals(
            left,
            right,
            pair_weights(left, right, log_bayes, matching),
            exclusive,
            messages,
        )
        moved = float(np.abs(new - probability).max()) if new.size else 0.0
        probability = new
        if moved < _EM_TOLERANCE:
            converged = True
            break
    matching = fitted_matching(left, right, probability, exclusive)
    fit.update(
        {
            "em_steps": steps,
            "em_converged": converged,
            "rho": {side: round(value, 4) for side, value in matching.rho.items()},
            "expected_matches": round(float(probability.sum()), 1),
        }
    )
    return m, u, matching, probability, fit
