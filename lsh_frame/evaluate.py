"""Match quality against a ground truth: precision, recall, F1, PC, RR.

Definitions (those of recordlinkage and of Christen's *Data Matching*):

- a *pair* is an unordered pair of records of one table (dedupe) or a
  (left, right) pair across two tables (link);
- ``precision = TP / predicted`` and ``recall = TP / true`` where TP counts the
  predicted pairs that are true pairs; ``f1`` is their harmonic mean;
- ``pairs_completeness = true pairs among the candidates / true pairs``: the
  recall of blocking alone;
- ``reduction_ratio = 1 - candidates / all possible pairs``.

Clusters are evaluated on the pairs they imply: every two rows with the same
entity id are a predicted (or true) pair.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame._kernels.pairs import sorted_unique
from lsh_frame.errors import ColumnError, ConfigError, ConfigTypeError

__all__ = ["Evaluation", "evaluate"]


@dataclass(frozen=True)
class Evaluation:
    """Counts and rates of one evaluation (see :func:`evaluate`)."""

    true_pairs: int
    predicted_pairs: int
    true_positives: int
    candidate_pairs: int
    true_candidates: int
    possible_pairs: int | None

    @property
    def precision(self) -> float:
        """Share of predicted pairs that are true (NaN without predictions)."""
        return _ratio(self.true_positives, self.predicted_pairs)

    @property
    def recall(self) -> float:
        """Share of true pairs that were predicted."""
        return _ratio(self.true_positives, self.true_pairs)

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall."""
        total = self.predicted_pairs + self.true_pairs
        return _ratio(2 * self.true_positives, total)

    @property
    def pairs_completeness(self) -> float:
        """Share of true pairs among the candidates (recall of blocking)."""
        return _ratio(self.true_candidates, self.true_pairs)

    @property
    def reduction_ratio(self) -> float:
        """``1 - candidates / possible pairs``; NaN when the records are unknown."""
        if not self.possible_pairs:
            return float("nan")
        return 1.0 - self.candidate_pairs / self.possible_pairs

    def to_dict(self) -> dict[str, float]:
        """Return the counts and rates as a plain dict."""
        rates = {
            name: getattr(self, name)
            for name in (
                "precision",
                "recall",
                "f1",
                "pairs_completeness",
                "reduction_ratio",
            )
        }
        return {**asdict(self), **rates}

    def __str__(self) -> str:
        text = (
            f"precision {self.precision:.4f}, recall {self.recall:.4f}, "
            f"F1 {self.f1:.4f} ({self.true_positives:,} of {self.predicted_pairs:,} "
            f"predicted pairs are true, {self.true_pairs:,} true pairs)"
        )
        if self.candidate_pairs == self.predicted_pairs:
            # Clusters (or pairs that are all matches): no separate candidate
            # set, so blocking's completeness would only repeat the recall.
            return text
        return (
            f"{text}; pairs completeness {self.pairs_completeness:.4f}, reduction "
            f"ratio {self.reduction_ratio:.6f} ({self.candidate_pairs:,} candidates)"
        )


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else float("nan")


@dataclass(frozen=True)
class _Ids:
    """Entity ids as integer codes per side (right is left for one table)."""

    left: pd.Series
    right: pd.Series

    def pair_count(self, link: bool) -> int:
        if not link:
            sizes = self.left.value_counts().to_numpy()
            return int((sizes * (sizes - 1) // 2).sum())
        joined = pd.concat(
            [self.left.value_counts(), self.right.value_counts()], axis=1, join="inner"
        )
        return int((joined.iloc[:, 0] * joined.iloc[:, 1]).sum())

    def same(self, left: pd.Series, right: pd.Series, role: str) -> npt.NDArray:
        found_left = self.left.reindex(left.to_numpy())
        found_right = self.right.reindex(right.to_numpy())
        if found_left.isna().any() or found_right.isna().any():
            raise ColumnError(
                f"Some pairs name records that the {role} entity ids do not cover. "
                "Give ids for every record of the frame(s)."
            )
        return found_left.to_numpy() == found_right.to_numpy()


def _as_ids(value: Any, role: str) -> tuple[_Ids, bool] | None:
    """Entity ids given as a Series (one table) or a tuple of two (link)."""
    if isinstance(value, pd.Series):
        return _Ids(value, value), False
    if (
        isinstance(value, tuple)
        and len(value) == 2
        and all(isinstance(item, pd.Series) for item in value)
    ):
        return _Ids(value[0], value[1]), True
    if isinstance(value, pd.DataFrame):
        return None
    raise ConfigTypeError(
        f"The '{role}' argument of evaluate must be a DataFrame of pairs ('left' "
        "and 'right' columns), a Series of entity ids, or a tuple of two Series "
        f"(left and right ids when linking). Got {type(value).__name__} instead."
    )


def _check_pair_frame(pairs: pd.DataFrame, role: str) -> pd.DataFrame:
    missing = [column for column in ("left", "right") if column not in pairs.columns]
    if missing:
        raise ColumnError(
            f"The '{role}' pairs passed to evaluate have no {missing[0]!r} column. "
            f"Columns: {', '.join(map(str, pairs.columns))}."
        )
    return pairs


@dataclass(frozen=True)
class _PairCodes:
    """Distinct pairs of several frames as integer codes in one label space.

    A code is ``left * size + right`` over factorised labels. For one table a
    pair and its swap share a code and a record paired with itself is left
    out (it says nothing about matching).
    """

    codes: list[npt.NDArray[np.int64]]
    left_labels: npt.NDArray[Any]
    right_labels: npt.NDArray[Any]
    size: int

    @classmethod
    def of(cls, frames: list[pd.DataFrame], link: bool) -> _PairCodes:
        lefts = [frame["left"].to_numpy() for frame in frames]
        rights = [frame["right"].to_numpy() for frame in frames]
        if link:
            left_codes, left_labels = pd.factorize(np.concatenate(lefts))
            right_codes, right_labels = pd.factorize(np.concatenate(rights))
            keep = np.ones(left_codes.size, dtype=bool)
        else:
            both, left_labels = pd.factorize(np.concatenate(lefts + rights))
            right_labels = left_labels
            half = both.size // 2
            first, second = both[:half], both[half:]
            left_codes = np.minimum(first, second)
            right_codes = np.maximum(first, second)
            keep = first != second
        size = max(len(right_labels), 1)
        coded = left_codes.astype(np.int64) * np.int64(size) + right_codes
        bounds = np.cumsum([0] + [len(frame) for frame in frames])
        codes = [
            sorted_unique(coded[start:stop][keep[start:stop]])
            for start, stop in itertools.pairwise(bounds)
        ]
        return cls(codes, np.asarray(left_labels), np.asarray(right_labels), size)

    def labels(self, codes: npt.NDArray[np.int64]) -> tuple[pd.Series, pd.Series]:
        """Return the (left, right) labels of coded pairs."""
        left, right = np.divmod(codes, np.int64(self.size))
        return pd.Series(self.left_labels[left]), pd.Series(self.right_labels[right])


def _contingency_pairs(predicted: _Ids, truth: _Ids, link: bool) -> int:
    """Pairs in the same predicted entity and the same true entity."""
    sides = [(predicted.left, truth.left)]
    if link:
        sides.append((predicted.right, truth.right))
    aligned = []
    for pred, true in sides:
        true = true.reindex(pred.index)
        if true.isna().any():
            raise ColumnError(
                "The true entity ids do not cover every record of the predicted "
                "ids. Give ids for the same records."
            )
        aligned.append((pred.to_numpy(), true.to_numpy()))
    # One code per (predicted, true) cell, shared by both sides.
    pred_codes, _ = pd.factorize(np.concatenate([pred for pred, _ in aligned]))
    true_codes, true_labels = pd.factorize(
        np.concatenate([true for _, true in aligned])
    )
    cells = pred_codes.astype(np.int64) * np.int64(len(true_labels) + 1) + true_codes
    split = len(aligned[0][0])
    left = pd.Series(cells[:split])
    return _Ids(left, pd.Series(cells[split:]) if link else left).pair_count(link)


def evaluate(
    result: Any,
    truth: Any,
    /,
    *,
    link: bool | None = None,
    records: Any = None,
) -> Evaluation:
    """Measure pairs or clusters against the true pairs or true entity ids.

    Parameters
    ----------
    result : DataFrame, Series, or tuple of two Series
        Scored or candidate pairs (``left`` and ``right`` columns): all rows are
        the candidates, rows whose ``match`` is true the predicted pairs (all
        rows when there is no ``match`` column). Or entity ids from
        :func:`lsh_frame.cluster`: a Series, or a tuple of two when linking.
    truth : DataFrame, Series, or tuple of two Series
        The true pairs (``left``, ``right``), or the true entity id of every
        record (a tuple of two Series when linking).
    link : bool, optional
        Whether pairs join two tables. Inferred: from tuples of ids, or from
        pairs made by :func:`lsh_frame.candidates` / :func:`lsh_frame.score`
        with ``other=`` (they say so in ``attrs``); else False. Pairs of one
        table are unordered and a record paired with itself is ignored; pairs
        of two tables are ordered. Repeated pairs count once.
    records : int, tuple of two ints, DataFrame or tuple of two DataFrames
        The record count(s), for the reduction ratio; known from entity ids.

    Returns
    -------
    Evaluation
        Counts, and ``precision``, ``recall``, ``f1``, ``pairs_completeness``,
        ``reduction_ratio`` (see the module documentation for definitions).

    Examples
    --------
    >>> predicted = pd.DataFrame({"left": [1, 1, 2], "right": [2, 3, 3],
    ...                           "match": [True, True, False]})
    >>> true_ids = pd.Series([7, 7, 9], index=[1, 2, 3])
    >>> result = evaluate(predicted, true_ids)
    >>> result.precision, result.recall, result.pairs_completeness
    (0.5, 1.0, 1.0)
    """
    truth_ids = _as_ids(truth, "truth")
    result_ids = _as_ids(result, "result")
    if link is None:
        link = any(found is not None and found[1] for found in (truth_ids, result_ids))
        if isinstance(result, pd.DataFrame):
            link = link or bool(result.attrs.get("lsh_frame", {}).get("link", False))
    for found, role in ((truth_ids, "truth"), (result_ids, "result")):
        if found is not None and found[1] != link:
            raise ConfigError(
                f"evaluate got link={link} but {role} entity ids "
                f"{'for two tables' if found[1] else 'for one table'}. Give one "
                "Series of ids per table involved."
            )
    if truth_ids is None:
        truth_pairs = _check_pair_frame(truth, "truth")
    if result_ids is None:
        result_pairs = _check_pair_frame(result, "result")
        predicted_mask = (
            result_pairs["match"].fillna(False).astype(bool).to_numpy()
            if "match" in result_pairs.columns
            else np.ones(len(result_pairs), dtype=bool)
        )
        predicted_pairs = result_pairs[predicted_mask]

    if result_ids is None and truth_ids is None:
        candidates, predicted, true = _PairCodes.of(
            [result_pairs, predicted_pairs, truth_pairs], link
        ).codes
        true_candidates = np.intersect1d(candidates, true, assume_unique=True).size
        true_positives = np.intersect1d(predicted, true, assume_unique=True).size
        counts = (true.size, predicted.size, true_positives, candidates.size)
    elif result_ids is None:
        assert truth_ids is not None
        ids = truth_ids[0]
        coded = _PairCodes.of([result_pairs, predicted_pairs], link)
        candidates, predicted = coded.codes
        true_candidates = int(ids.same(*coded.labels(candidates), "true").sum())
        true_positives = int(ids.same(*coded.labels(predicted), "true").sum())
        counts = (ids.pair_count(link), predicted.size, true_positives, candidates.size)
    elif truth_ids is None:
        ids = result_ids[0]
        coded = _PairCodes.of([truth_pairs], link)
        (true,) = coded.codes
        true_positives = int(ids.same(*coded.labels(true), "predicted").sum())
        predicted_count = ids.pair_count(link)
        true_candidates = true_positives
        counts = (true.size, predicted_count, true_positives, predicted_count)
    else:
        predicted_count = result_ids[0].pair_count(link)
        true_positives = _contingency_pairs(result_ids[0], truth_ids[0], link)
        true_candidates = true_positives
        counts = (
            truth_ids[0].pair_count(link),
            predicted_count,
            true_positives,
            predicted_count,
        )
    if records is None:
        source = truth_ids or result_ids
        if source is not None:
            records = (
                (len(source[0].left), len(source[0].right))
                if link
                else len(source[0].left)
            )
    return Evaluation(
        true_pairs=int(counts[0]),
        predicted_pairs=int(counts[1]),
        true_positives=int(counts[2]),
        candidate_pairs=int(counts[3]),
        true_candidates=int(true_candidates),
        possible_pairs=_possible_pairs(records, link),
    )


def _possible_pairs(records: Any, link: bool) -> int | None:
    if records is None:
        return None
    if isinstance(records, tuple):
        sizes = [len(item) if hasattr(item, "__len__") else item for item in records]
        if len(sizes) != 2:
            raise ConfigError(
                "The 'records' parameter of evaluate takes one count (or frame), or "
                f"two when linking. Got {len(sizes)}."
            )
        return int(sizes[0]) * int(sizes[1])
    size = len(records) if hasattr(records, "__len__") else records
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
        raise ConfigError(
            "The 'records' parameter of evaluate must be a count >= 0, a frame, or "
            f"a tuple of two. Got {records!r} instead."
        )
    if link:
        raise ConfigError(
            "evaluate got link=True but one record count. Give records=(left "
            "count, right count)."
        )
    return int(size) * (int(size) - 1) // 2
