"""What a person's answers teach the match model.

The model learned without labels (:mod:`lsh_frame.decide.em`,
:mod:`lsh_frame.decide.matching`) gives every field and level a weight. The
answers are evidence about those weights: :func:`teach` fits a Bayesian
logistic regression whose prior is the unlabelled model itself. Each field's
level gets a shift of its weight and the prior a shift of its log odds, each
with a normal prior centred on 0 (:data:`SHIFT_SPREAD`, 0.5). Where no pair was
answered, a level keeps its learned weight; where many were, the answers
decide it; a handful of answers moves the weights a little, never far. The
shifted weights still read as evidence does: within a field the answers never
make a closer level weigh less than a looser one the learned model weighed
less, and exact agreement never counts against a match
(:func:`_kept_in_order`).

For a link read as a matching, a pair's probability also depends on its
records' other candidates. The fit then holds each answered pair's
competition at its value under the current shifts and refits until the
shifts settle (:data:`MATCHING_ROUNDS` rounds at most).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["MATCHING_ROUNDS", "SHIFT_SPREAD", "Taught", "teach"]

#: The prior's standard deviation of every shift (natural log of the odds): a
#: shift of 0.5 (x1.6 the odds) is ordinary, of 1.5 needs many answers that
#: agree. Narrow on purpose: a shift moves every pair at that level, and a
#: level's pairs often sit at the cut by the thousand, so ten answers must not
#: move them far (benchmarks/labels.py compares spreads of 0.5 and 1).
SHIFT_SPREAD = 0.5


#: Rounds of refitting for a matching, whose pairs compete (see the module).
MATCHING_ROUNDS = 4

#: Newton steps of one fit, and when they have converged.
_STEPS = 100
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Taught:
    """The shifts a person's answers gave the model's weights."""

    #: Per field: each present level's shift of its weight (natural log).
    shifts: dict[str, npt.NDArray[np.float64]]
    #: Shift of the prior's log odds (natural log).
    prior_shift: float
    #: Pairs answered yes or no that the model learned from ...
    answers: int
    #: ... and of those, the matches.
    matches: int
    #: The day (UTC, ISO 8601) the model was taught.
    date: str

    def to_dict(self) -> dict[str, Any]:
        """Return the shifts as JSON-ready data."""
        return {
            "shifts": {label: values.tolist() for label, values in self.shifts.items()},
            "prior_shift": self.prior_shift,
            "answers": self.answers,
            "matches": self.matches,
            "date": self.date,
        }

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> Taught:
        """Read :meth:`to_dict`'s data back."""
        return cls(
            shifts={
                str(label): np.asarray(values, dtype=np.float64)
                for label, values in spec["shifts"].items()
            },
            prior_shift=float(spec["prior_shift"]),
            answers=int(spec["answers"]),
            matches=int(spec["matches"]),
            date=str(spec["date"]),
        )


def _design(
    levels: dict[str, npt.NDArray[np.intp]], sizes: dict[str, int]
) -> tuple[npt.NDArray[np.float64], list[tuple[str, int]]]:
    """One column per field and present level (1 where a pair is at it), then 1."""
    columns = []
    names = []
    for label, size in sizes.items():
        for level in range(size):
            columns.append(levels[label] == level)
            names.append((label, level))
    count = next(iter(levels.values())).size if levels else 0
    columns.append(np.ones(count, dtype=bool))
    return np.column_stack(columns).astype(np.float64), names


def _fit(
    design: npt.NDArray[np.float64],
    base: npt.NDArray[np.float64],
    answers: npt.NDArray[np.float64],
    start: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    """Return the likeliest shifts under the prior of spread :data:`SHIFT_SPREAD`."""
    return _fit_at(design, base, answers, start, SHIFT_SPREAD)[0]


def _fit_at(
    design: npt.NDArray[np.float64],
    base: npt.NDArray[np.float64],
    answers: npt.NDArray[np.float64],
    start: npt.NDArray[np.float64],
    spread: float,
) -> tuple[npt.NDArray[np.float64], float]:
    """Return the likeliest shifts: logistic regression with a normal prior.

    ``base`` is each answered pair's log odds without shifts; Newton's method
    with step halving, so the penalised likelihood never falls.
    """
    precision = 1.0 / spread**2

    def objective(shift: npt.NDArray[np.float64]) -> float:
        odds = base + design @ shift
        fitted = answers * odds - np.logaddexp(0.0, odds)
        return float(fitted.sum() - 0.5 * precision * (shift @ shift))

    shift = start.copy()
    current = objective(shift)
    hessian = np.eye(shift.size) * precision
    for _ in range(_STEPS):
        odds = base + design @ shift
        probability = 1.0 / (1.0 + np.exp(-odds))
        gradient = design.T @ (answers - probability) - precision * shift
        hessian = (design * (probability * (1 - probability))[:, None]).T @ design
        hessian[np.diag_indices_from(hessian)] += precision
        step = np.linalg.solve(hessian, gradient)
        length = 1.0
        while True:
            candidate = objective(shift + length * step)
            if candidate >= current or length < 1e-6:
                break
            length /= 2
        if candidate < current:
            break
        shift, gain, current = shift + length * step, candidate - current, candidate
        if gain < _TOLERANCE:
            break
    # Laplace's approximation of the answers' likelihood under this spread.
    _, log_det = np.linalg.slogdet(hessian)
    evidence = current - 0.5 * log_det + 0.5 * shift.size * np.log(precision)
    return shift, float(evidence)


def _monotone(
    weights: npt.NDArray[np.float64],
    counts: npt.NDArray[np.float64],
    floor: bool = True,
) -> npt.NDArray[np.float64]:
    """Weights that never rise as the level loosens, the closest one at least 0.

    Pool-adjacent-violators: a rising run of levels shares its mean weight,
    each level counting ``counts`` (its answers, plus one for the prior);
    ``floor=False`` leaves the first weight below 0 when it is.

    Examples
    --------
    >>> _monotone(np.array([2.0, 3.0, -1.0]), np.array([1.0, 1.0, 1.0])).tolist()
    [2.5, 2.5, -1.0]
    """
    blocks: list[list[int]] = [[level] for level in range(weights.size)]
    means = [float(weights[level]) for level in range(weights.size)]
    mass = [float(counts[level]) for level in range(weights.size)]
    at = 0
    while at < len(blocks) - 1:
        if means[at + 1] > means[at]:
            total = mass[at] + mass[at + 1]
            means[at] = (means[at] * mass[at] + means[at + 1] * mass[at + 1]) / total
            mass[at] = total
            blocks[at] += blocks.pop(at + 1)
            means.pop(at + 1)
            mass.pop(at + 1)
            at = max(at - 1, 0)
        else:
            at += 1
    result = np.empty_like(weights)
    for block, mean in zip(blocks, means, strict=True):
        result[block] = mean
    if floor:
        result[0] = max(result[0], 0.0)
    return result


def _kept_in_order(
    learned: npt.NDArray[np.float64],
    moved: npt.NDArray[np.float64],
    counts: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    """Return the shifts, made so no answer reverses what the model had in order.

    Where the learned weights already fall from one level to the next, the
    shifted ones must too (:func:`_monotone` over each such run of levels);
    where the learned model had them out of order (a level almost no pair
    reaches), the answers leave that step as it was, so teaching never
    rewrites weights the answers say nothing about. The closest level stays
    at least 0 when it was learned so.

    Examples
    --------
    >>> learned = np.array([3.0, -4.0, 1.0, -2.0])
    >>> _kept_in_order(learned, np.array([0.0, 2.0, 0.0, 4.0]), np.ones(4)).tolist()
    [0.0, 2.0, 0.5, 3.5]
    """
    shifted = learned + moved
    ordered = np.empty_like(shifted)
    breaks = np.flatnonzero(np.diff(learned) > 0) + 1
    for run in np.split(np.arange(learned.size), breaks):
        # Only the closest level has a floor, and only when it was learned so.
        floor = bool(run[0] == 0 and learned[0] >= 0)
        ordered[run] = _monotone(shifted[run], counts[run], floor)
    return ordered - learned


def teach(
    weights: dict[str, npt.NDArray[np.float64]],
    levels: dict[str, npt.NDArray[np.intp]],
    answers: npt.NDArray[np.float64],
    base: Callable[[Taught | None], npt.NDArray[np.float64]],
    rounds: int = 1,
) -> Taught | None:
    """Fit the shifts the answers call for; None when nothing was answered.

    ``weights`` holds each field's learned weight per present level (natural
    log of m / u); ``levels`` each answered pair's level per field (the
    missing level is ``weights[label].size``); ``answers`` 1.0 or 0.0 per
    pair. ``base(taught)`` returns the answered pairs' log odds under some
    shifts, without their own shifts: for pairs read one by one, their log
    odds before teaching whatever the shifts; for a matching, the odds their
    competition leaves them. ``rounds`` refits with ``base`` of the last fit.

    Examples
    --------
    >>> weights = {"name": np.array([2.0, 0.0, -2.0])}
    >>> levels = {"name": np.array([1, 1, 1, 1, 0])}
    >>> answers = np.array([1.0, 1.0, 1.0, 1.0, 1.0])
    >>> taught = teach(weights, levels, answers, lambda taught: np.zeros(5))
    >>> taught.shifts["name"].round(2).tolist(), round(taught.prior_shift, 2)
    ([0.09, 0.32, 0.0], 0.42)
    """
    if not answers.size:
        return None
    sizes = {label: values.size for label, values in weights.items()}
    design, names = _design(levels, sizes)
    shift = np.zeros(design.shape[1])
    taught = None
    for _ in range(max(rounds, 1)):
        shift = _fit(design, base(taught), answers, shift)
        taught = _taught(weights, design, names, shift, answers)
    return taught


def _taught(
    weights: dict[str, npt.NDArray[np.float64]],
    design: npt.NDArray[np.float64],
    names: list[tuple[str, int]],
    shift: npt.NDArray[np.float64],
    answers: npt.NDArray[np.float64],
) -> Taught:
    """Shifts as per-field arrays, made monotone with their learned weights."""
    counts = design[:, :-1].sum(axis=0)
    shifts = {}
    for label, learned in weights.items():
        columns = [at for at, (name, _) in enumerate(names) if name == label]
        moved = shift[columns]
        shifts[label] = _kept_in_order(learned, moved, counts[columns] + 1.0)
    return Taught(
        shifts=shifts,
        prior_shift=float(shift[-1]),
        answers=int(answers.size),
        matches=int((answers == 1.0).sum()),
        date=datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
    )
