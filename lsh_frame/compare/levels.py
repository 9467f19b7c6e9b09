"""Comparison levels: a field score in [0, 1] read as a level (exact, close, ...)."""

from __future__ import annotations

import itertools

import numpy as np
import numpy.typing as npt

#: Agreement levels of a field score in the match model: level 0 at or above
#: the first cut (the field agrees), level i between cut i and cut i - 1, the
#: last level below the last cut (it differs); a missing value is one more
#: index, and neutral. The classic agree (0.99) / nearly (0.8) / differs, with
#: "nearly" split at 0.9: a typo in a short value (0.8-0.9) and in a long one
#: (0.9-0.99) say different things. Measured on make_customers(1,000,000),
#: default blocking: pair F1 0.9725 with the classic three levels, 0.9805 with
#: these four, 0.9531 with seven (cuts every 0.1 down to 0.5, where EM settled
#: on a fit that missed 8% of the matches).
LEVEL_CUTS: tuple[float, ...] = (0.99, 0.9, 0.8)

#: Cuts of comparisons whose true pairs spread over the whole scale (a TF-IDF
#: cosine of product titles: Abt-Buy's true pairs score 0.2-0.9), where the
#: four levels would put nearly every pair in the lowest.
FINE_CUTS: tuple[float, ...] = (0.99, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3)

#: The comparisons read at FINE_CUTS.
FINE_COMPARISONS = frozenset({"tfidf"})


def cuts_for(comparison: str) -> tuple[float, ...]:
    """Level cuts of a field compared with ``comparison``."""
    return FINE_CUTS if comparison in FINE_COMPARISONS else LEVEL_CUTS


#: The cuts of models saved before the finer levels (three levels).
_CLASSIC_CUTS: tuple[float, ...] = (0.99, 0.8)


def level_names(cuts: tuple[float, ...]) -> list[str]:
    """Names of the levels a model's ``cuts`` make (missing excluded)."""
    names = [f">= {cuts[0]:g}"]
    names += [f"[{low:g}, {high:g})" for high, low in itertools.pairwise(cuts)]
    return [*names, f"< {cuts[-1]:g}"]


def levels_of(
    values: npt.NDArray[np.float64], cuts: tuple[float, ...]
) -> npt.NDArray[np.intp]:
    """Level of each field score (see :data:`LEVEL_CUTS`); ``len(cuts) + 1`` missing."""
    level = np.full(values.shape, len(cuts), dtype=np.intp)
    for cut in cuts:
        level -= values >= cut
    level[np.isnan(values)] = len(cuts) + 1
    return level
