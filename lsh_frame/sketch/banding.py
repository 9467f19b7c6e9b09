"""Banding maths: the S-curve of LSH and plans that keep the recall they promise.

Split a signature of ``bands × rows`` values into ``bands`` bands of ``rows``
values; two records become candidates when all values of at least one band agree.
For Jaccard similarity ``s`` that happens with probability

    P(s) = 1 − (1 − s**rows)**bands,

an S-shaped curve. :func:`plan` picks ``bands`` and ``rows`` so that
``P(threshold) >= recall`` (a stated threshold then really finds that share of the
pairs at it) while the area under the curve below the threshold, the expected
false-positive mass, is as small as possible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame._validation import check_int
from lsh_frame.errors import ConfigError, ConfigTypeError

__all__ = [
    "LshPlan",
    "candidate_probability",
    "collision_probability",
    "plan",
    "plan_for_budget",
]

#: What a threshold measures: Jaccard similarity of shingle sets (MinHash),
#: the share of equal bits of bit vectors (bit sampling), or the cosine of
#: float vectors (random hyperplanes); see :func:`collision_probability`.
METRICS = ("jaccard", "hamming", "cosine")

_GRID = np.linspace(0.0, 1.0, 2001)


def candidate_probability(
    similarity: npt.ArrayLike, bands: int, rows: int
) -> npt.NDArray[np.float64]:
    """Return ``1 − (1 − s**rows)**bands`` element-wise.

    Examples
    --------
    >>> float(candidate_probability(0.5, bands=20, rows=5))
    0.47...
    """
    s = np.clip(np.asarray(similarity, dtype=np.float64), 0.0, 1.0)
    # log1p/expm1 keep precision when s**rows is tiny and bands is large.
    with np.errstate(divide="ignore"):
        return -np.expm1(bands * np.log1p(-(s**rows)))


def collision_probability(
    similarity: npt.ArrayLike, metric: str = "jaccard"
) -> npt.NDArray[np.float64]:
    """Probability that one hash of the metric's LSH family agrees on a pair.

    ``"jaccard"`` (MinHash): the Jaccard similarity itself. ``"hamming"`` (bit
    sampling): the share of equal bits, ``1 − d / D``, itself. ``"cosine"``
    (random hyperplanes): ``1 − θ / π`` with ``θ = arccos(cosine)``.

    Examples
    --------
    >>> float(collision_probability(0.0, "cosine"))
    0.5
    """
    value = np.asarray(similarity, dtype=np.float64)
    if metric == "cosine":
        return 1.0 - np.arccos(np.clip(value, -1.0, 1.0)) / np.pi
    return value


def _similarity_of(probability: float, metric: str) -> float:
    """Inverse of :func:`collision_probability`."""
    if metric == "cosine":
        return float(np.cos(np.pi * (1.0 - probability)))
    return probability


def _masses(threshold: float, bands: int, rows: int) -> tuple[float, float]:
    """(false-positive mass below the threshold, false-negative mass above it)."""
    below = _GRID[threshold >= _GRID]
    above = _GRID[threshold <= _GRID]
    fp = float(np.trapezoid(candidate_probability(below, bands, rows), below))
    fn = float(np.trapezoid(1 - candidate_probability(above, bands, rows), above))
    return fp, fn


def _check_fraction(value: object, name: str, *, closed_low: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigTypeError(
            f"The '{name}' parameter of plan must be a number. Got {value!r} instead."
        )
    value = float(value)
    low_ok = value >= 0 if closed_low else value > 0
    if not (low_ok and value <= 1) or math.isnan(value):
        interval = "[0, 1]" if closed_low else "(0, 1]"
        raise ConfigError(
            f"The '{name}' parameter of plan must be in {interval}. "
            f"Got {value} instead."
        )
    return value


@dataclass(frozen=True, kw_only=True)
class LshPlan:
    """A banding of MinHash signatures and what it promises.

    Attributes
    ----------
    threshold : float
        The Jaccard similarity the plan was made for.
    recall : float
        The target: the least probability that a pair at ``threshold`` becomes
        a candidate.
    num_perm : int
        Signature length available; the plan uses ``bands * rows`` of it.
    bands, rows : int
        The banding.
    expected_false_positives : float, optional
        Set by :func:`plan_for_budget`: candidate pairs less similar than the
        threshold expected among all pairs.
    """

    threshold: float
    recall: float
    num_perm: int
    bands: int
    rows: int
    expected_false_positives: float | None = None
    metric: str = "jaccard"
    false_positive_mass: float = field(init=False)
    false_negative_mass: float = field(init=False)

    def __post_init__(self) -> None:
        # Masses are areas on the per-hash probability scale (for Jaccard and
        # Hamming the similarity itself).
        collision = float(collision_probability(self.threshold, self.metric))
        fp, fn = _masses(collision, self.bands, self.rows)
        object.__setattr__(self, "false_positive_mass", fp)
        object.__setattr__(self, "false_negative_mass", fn)

    def probability(self, similarity: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """Probability that a pair with this similarity is a candidate."""
        return candidate_probability(
            collision_probability(similarity, self.metric), self.bands, self.rows
        )

    def __call__(self, similarity: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """Return :meth:`probability` (a plan is callable like its curve)."""
        return self.probability(similarity)

    @property
    def used_perm(self) -> int:
        """Signature values the bands use (``bands * rows``)."""
        return self.bands * self.rows

    @property
    def recall_at_threshold(self) -> float:
        """``P(threshold)``: the share of pairs at the threshold that are found."""
        return float(self.probability(self.threshold))

    @property
    def effective_threshold(self) -> float:
        """``(1 / bands) ** (1 / rows)``: where the S-curve is steepest."""
        return _similarity_of((1.0 / self.bands) ** (1.0 / self.rows), self.metric)

    def curve(self, step: float = 0.05) -> pd.DataFrame:
        """Tabulate ``P(s)`` from 0 to 1 in steps of ``step``."""
        similarity = np.round(np.arange(0.0, 1.0 + step / 2, step), 10)
        return pd.DataFrame(
            {"similarity": similarity, "probability": self.probability(similarity)}
        )

    def __str__(self) -> str:
        metric = "" if self.metric == "jaccard" else f" ({self.metric})"
        return (
            f"LshPlan{metric}: {self.bands} bands × {self.rows} rows "
            f"(uses {self.used_perm} of {self.num_perm} values); "
            f"P({self.threshold:g}) = {self.recall_at_threshold:.3f} "
            f"(target {self.recall:g}); effective threshold "
            f"{self.effective_threshold:.3f}; false-positive mass "
            f"{self.false_positive_mass:.4f}, false-negative mass "
            f"{self.false_negative_mass:.4f}"
        )


def plan(
    threshold: float,
    /,
    *,
    num_perm: int = 128,
    recall: float = 0.95,
    metric: str = "jaccard",
) -> LshPlan:
    """Choose bands and rows that find ``recall`` of the pairs at ``threshold``.

    Among all bandings with ``bands * rows <= num_perm`` and
    ``P(threshold) >= recall``, the one with the least false-positive mass (the
    area under the S-curve below the threshold) is chosen; ties go to fewer
    bands. Every pair more similar than the threshold is found with at least
    the same probability, since the curve rises with similarity.

    Parameters
    ----------
    threshold : float
        Jaccard similarity in (0, 1] that pairs should reach.
    num_perm : int
        Signature length available.
    recall : float
        Least candidate probability at the threshold, in (0, 1].
    metric : {"jaccard", "hamming", "cosine"}
        What the threshold measures: Jaccard similarity (MinHash signatures of
        ``num_perm`` values), the share of equal bits ``1 − d / D`` (bit
        sampling, ``num_perm`` sampled bits), or cosine similarity (random
        hyperplanes, ``num_perm`` of them). The S-curve is the same in the
        per-hash agreement probability (:func:`collision_probability`).

    Returns
    -------
    LshPlan

    Raises
    ------
    ConfigError
        If no banding within ``num_perm`` reaches the recall (raise ``num_perm``
        or lower ``recall``), or a parameter is out of range.

    Examples
    --------
    >>> p = plan(0.5, num_perm=128, recall=0.95)
    >>> p.bands, p.rows, round(p.recall_at_threshold, 3)
    (23, 3, 0.954)
    >>> float(p(0.3)) < 0.7
    True

    Random hyperplanes for cosine similarity 0.9 (one hash agrees with
    probability 1 − arccos(0.9) / π ≈ 0.856):

    >>> cosine = plan(0.9, num_perm=128, metric="cosine")
    >>> cosine.bands, cosine.rows, round(cosine.recall_at_threshold, 3)
    (11, 9, 0.956)
    """
    threshold = _check_fraction(threshold, "threshold", closed_low=False)
    if metric not in METRICS:
        raise ConfigError(
            "The 'metric' parameter of plan must be one of 'jaccard', 'hamming', "
            f"'cosine'. Got {metric!r} instead."
        )
    target = threshold
    threshold = float(collision_probability(threshold, metric))
    recall = _check_fraction(recall, "recall", closed_low=False)
    num_perm = check_int(num_perm, "num_perm", "plan", minimum=1, maximum=8192)
    best: tuple[float, int, int] | None = None
    for rows in range(1, num_perm + 1):
        hit = threshold**rows
        if hit >= 1.0:
            bands = 1
        elif hit <= 0.0 or recall >= 1.0:
            continue
        else:
            bands = math.ceil(math.log1p(-recall) / math.log1p(-hit))
        bands = max(bands, 1)
        if bands * rows > num_perm:
            continue
        fp, _ = _masses(threshold, bands, rows)
        if best is None or fp < best[0] - 1e-12:
            best = (fp, bands, rows)
    if best is None:
        raise ConfigError(
            f"No banding of {num_perm} signature values reaches recall {recall:g} at "
            f"threshold {target:g}. Use a larger num_perm, a lower recall or a "
            "higher threshold."
        )
    _, bands, rows = best
    return LshPlan(
        threshold=target,
        recall=recall,
        num_perm=num_perm,
        bands=bands,
        rows=rows,
        metric=metric,
    )


#: Thresholds :func:`plan_for_budget` tries, lowest first.
BUDGET_THRESHOLDS = tuple(round(0.30 + 0.05 * step, 2) for step in range(14))


def plan_for_budget(
    similarities: npt.ArrayLike,
    /,
    *,
    pairs: int,
    budget: float,
    num_perm: int = 128,
    recall: float = 0.95,
) -> LshPlan:
    """Plan for the lowest threshold whose false positives fit a candidate budget.

    Instead of a threshold, say how many unwanted candidates you accept. A false
    positive is a candidate pair less similar than the plan's threshold; their
    expected number is ``pairs`` times the mean of ``P(s) · [s < threshold]``
    over a sample of pair similarities. Sampled pairs above the threshold are
    not counted: with many duplicates a random sample holds true matches, and
    those are the pairs blocking should find. Thresholds from 0.30 to 0.95 in
    steps of 0.05 are tried, lowest first; each is planned with
    :func:`plan` for ``recall``. When none fits, the plan for 0.95 is returned
    and its ``expected_false_positives`` shows by how much it misses.

    Parameters
    ----------
    similarities : array of float
        Jaccard similarities of randomly sampled pairs (for example estimated
        from signatures of random record pairs).
    pairs : int
        Number of pairs the candidates are drawn from (``n (n - 1) / 2`` to
        deduplicate, ``n_left * n_right`` to link).
    budget : float
        Expected false positives allowed.
    num_perm, recall
        As for :func:`plan`.

    Examples
    --------
    >>> import numpy as np
    >>> sample = np.random.default_rng(1).beta(1, 30, 10_000)  # mostly dissimilar
    >>> chosen = plan_for_budget(sample, pairs=10**8, budget=10_000)
    >>> chosen.threshold, chosen.expected_false_positives <= 10_000
    (0.65, True)
    """
    similarity = np.asarray(similarities, dtype=np.float64).ravel()
    pairs = check_int(pairs, "pairs", "plan_for_budget", minimum=0)
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget < 0:
        raise ConfigError(
            "The 'budget' parameter of plan_for_budget must be a number >= 0. "
            f"Got {budget!r} instead."
        )
    chosen: LshPlan | None = None
    for threshold in BUDGET_THRESHOLDS:
        candidate = plan(threshold, num_perm=num_perm, recall=recall)
        below = similarity < threshold
        share = (
            float((candidate(similarity) * below).mean()) if similarity.size else 0.0
        )
        chosen = LshPlan(
            threshold=candidate.threshold,
            recall=recall,
            num_perm=candidate.num_perm,
            bands=candidate.bands,
            rows=candidate.rows,
            expected_false_positives=pairs * share,
        )
        if pairs * share <= budget:
            break
    assert chosen is not None
    return chosen
