"""The provisional cut: the valley below the highest group of combined scores.

:func:`auto_min_score` (:class:`ScoreSpread`) reads it off the histogram of the
scores; the learned model starts from that split. :func:`expected_f1_cut`
chooses the cut on match probabilities that maximises the expected F1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from lsh_frame.decide.tables import _AUTO_MIN_PAIRS

__all__ = ["AUTO_MIN_SCORE_RANGE", "DEFAULT_MIN_SCORE", "ScoreSpread", "auto_min_score"]


#: ``min_score`` used by ``"auto"`` when there are too few pairs to learn from.
DEFAULT_MIN_SCORE = 0.7

#: ``"auto"`` keeps the learned ``min_score`` within this range.
AUTO_MIN_SCORE_RANGE = (0.5, 0.95)


#: Histogram bins, and the bins of its moving average, behind ``"auto"``.
_AUTO_BINS = 50

_AUTO_SMOOTHING = 5

#: A valley below the highest group of scores is one whose density is at most
#: this share of the peak above it, and below which the density rises again
#: by as much (1 / share).
_AUTO_VALLEY = 0.8

#: A valley at most this share of the peak above it is clear (ScoreSpread.clear).
#: Measured (density at the cut over the peak above, 50 bins smoothed over 5):
#: FEBRL 0.01-0.03, make_customers 0.21-0.25, historical_50k 0.25, fake_1000
#: 0.28, the link sets 0.20-0.24; Cora's dip below its near-copies 0.49.
_CLEAR_VALLEY = 0.4


def auto_min_score(scores: npt.NDArray[np.float64]) -> float:
    """Return the ``min_score`` at the valley below the highest group of scores.

    Candidate pairs mix true matches, which score highest, with the
    non-matches blocking let through; these may form more than one group
    (unrelated records that share a rare value; relatives who share a surname,
    an address and a phone). The matches are the highest group, so the cut is
    the valley just below it: on a 50-bin histogram of the scores, smoothed by
    a 5-bin moving average, walk down from the top; the cut is the bottom of
    the first valley whose density is at most 0.8 of the peak above it and
    below which the density rises again by as much (the middle of a flat
    bottom; a valley that stays low down to the range's floor counts too).
    Small bumps — a plateau, a spike of exact duplicates at 1.0 — are not
    groups. It is kept within ``AUTO_MIN_SCORE_RANGE``; with fewer than 100
    scored pairs, when all scores are equal, or when no valley is deep enough
    (the scores form one group), it is ``DEFAULT_MIN_SCORE``.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> low, high = rng.normal(0.4, 0.05, 900), rng.normal(0.95, 0.02, 100)
    >>> cut = auto_min_score(np.concatenate([low, high]))
    >>> bool(low.max() < cut < high.min())
    True
    """
    return ScoreSpread.of(scores).cut()


@dataclass(frozen=True)
class ScoreSpread:
    """What :func:`auto_min_score` needs of some scores; parts add up.

    A histogram of the finite scores (``_AUTO_BINS`` bins over [0, 1]), their
    number, least and greatest: summaries of parts of the pairs merge into the
    summary of all of them, so partitions decide exactly as one frame does.
    """

    counts: npt.NDArray[np.int64]
    size: int
    low: float
    high: float

    @classmethod
    def of(cls, scores: npt.NDArray[np.float64]) -> ScoreSpread:
        """Summarise some scores."""
        finite = scores[np.isfinite(scores)]
        counts, _ = np.histogram(finite, bins=_AUTO_BINS, range=(0.0, 1.0))
        if not finite.size:
            return cls(counts.astype(np.int64), 0, np.inf, -np.inf)
        return cls(
            counts.astype(np.int64),
            int(finite.size),
            float(finite.min()),
            float(finite.max()),
        )

    @classmethod
    def merge(cls, parts: list[ScoreSpread]) -> ScoreSpread:
        """Summary of the union of parts."""
        return cls(
            np.sum([part.counts for part in parts], axis=0).astype(np.int64),
            sum(part.size for part in parts),
            min(part.low for part in parts),
            max(part.high for part in parts),
        )

    def cut(self) -> float:
        """Return the ``min_score`` of :func:`auto_min_score`."""
        return self.valley()[0]

    @property
    def clear(self) -> bool:
        """Whether the split the cut makes can be trusted to hold most matches.

        Not clear: the cut is at a shallow dip, whose density is more than
        ``_CLEAR_VALLEY`` of the peak above it — below a spike of near-copies
        (citations: the copies of a paper spread over the whole upper half of
        the scale), so the cut keeps only the surest matches and the model
        must find the rest (see :meth:`MatchModel.refine`). A deep valley is
        clear, and so is no valley at all (the scores form one group: the
        default cut, and the model's usual guards, as without this test).
        """
        depth = self.valley()[1]
        return depth is None or depth <= _CLEAR_VALLEY

    def valley(self) -> tuple[float, float | None]:
        """Return the cut and its valley's density over the peak's (None: no valley)."""
        if self.size < _AUTO_MIN_PAIRS or self.low == self.high:
            return DEFAULT_MIN_SCORE, None
        edges = np.linspace(0.0, 1.0, _AUTO_BINS + 1)
        padded = np.pad(
            self.counts.astype(np.float64), _AUTO_SMOOTHING // 2, mode="edge"
        )
        density = np.convolve(
            padded, np.full(_AUTO_SMOOTHING, 1 / _AUTO_SMOOTHING), mode="valid"
        )
        low, high = AUTO_MIN_SCORE_RANGE
        floor = round(low * _AUTO_BINS)
        # Walk down from the top: the peak is the densest point so far, the
        # valley the least dense point below it. A valley counts once it is
        # clearly lower than the peak above it and the density clearly rises
        # again below it (both by _AUTO_VALLEY): a plateau or a spike of exact
        # duplicates at 1.0 is not a group of its own.
        peak = valley = density[-1]
        valley_top = valley_bottom = _AUTO_BINS - 1
        for position in range(_AUTO_BINS - 2, floor - 1, -1):
            value = density[position]
            deep = peak > 0 and valley <= _AUTO_VALLEY * peak
            if deep and value > 0 and value * _AUTO_VALLEY >= valley:
                break  # the density rises again below a deep valley
            if value > peak and not deep:
                peak = valley = value
                valley_top = valley_bottom = position
            elif value < valley:
                valley, valley_top, valley_bottom = value, position, position
            elif value == valley:
                valley_bottom = position  # a flat bottom: its middle is the cut
        if peak == 0:
            return low, None  # no score in the range: every pair is below it
        if valley > _AUTO_VALLEY * peak:
            return DEFAULT_MIN_SCORE, None  # no valley: the scores form one group
        cut = float(edges[(valley_top + valley_bottom + 1) // 2])
        return round(min(max(cut, low), high), 4), float(valley / peak)


def expected_f1_cut(
    probabilities: npt.NDArray[np.float64], counts: npt.NDArray[np.int64]
) -> tuple[float, float]:
    """Return the match cut of some pairs' probabilities and the F1 they expect.

    ``probabilities`` are the distinct match probabilities of the pairs,
    ``counts`` how many pairs have each. Taking pairs from the most probable
    down, the true pairs expected among them are the sum of their
    probabilities, and all true pairs the sum over every pair; the best of the
    F1s so expected is F. For calibrated probabilities the cut that gives the
    best F1 is F / 2 (Lipton, Elkan and Naryanaswamy, "Optimal thresholding of
    classifiers to maximize F1 measure", 2014): a pair of probability p adds
    to the F1 when p > F / 2. So the cut is F / 2, never above 0.5: a pair
    between F / 2 and 0.5 is more likely false than true, yet taking it
    raises the F1 expected. Without any expected true pair the cut stays 0.5.
    """
    order = np.argsort(probabilities, kind="stable")[::-1]
    values = np.asarray(probabilities, dtype=np.float64)[order]
    numbers_ = np.asarray(counts, dtype=np.float64)[order]
    found = np.cumsum(values * numbers_)
    if not found.size or found[-1] <= 0:
        return 0.5, 0.0
    best = float(np.max(2 * found / (np.cumsum(numbers_) + found[-1])))
    return max(best / 2, np.finfo(np.float64).tiny), best


def probability_counts(
    probability: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """Return the distinct probabilities of some pairs and their counts (no NaN)."""
    values, counts = np.unique(probability[~np.isnan(probability)], return_counts=True)
    return values, counts.astype(np.int64)


def merge_probability_counts(
    parts: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """Add up :func:`probability_counts` of parts of the pairs."""
    values = np.concatenate([part[0] for part in parts]) if parts else np.zeros(0)
    counts = (
        np.concatenate([part[1] for part in parts])
        if parts
        else np.zeros(0, dtype=np.int64)
    )
    distinct, inverse = np.unique(values, return_inverse=True)
    return distinct, np.bincount(
        inverse.ravel(), weights=counts, minlength=distinct.size
    ).astype(np.int64)
