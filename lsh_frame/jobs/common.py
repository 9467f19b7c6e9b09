"""What the jobs share: the columns they are given and the pipeline's options."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

import pandas as pd

from lsh_frame.block.fields import _as_fields
from lsh_frame.decide.matches import check_min_score
from lsh_frame.decide.model import MatchModel
from lsh_frame.decide.pairs import pairs as scored_pairs
from lsh_frame.errors import ColumnError, ConfigError, ConfigTypeError

Keep = Literal["first", "last", "most_complete"] | Literal[False] | Callable[..., Any]

_KEEP_CHOICES = ("first", "last", "most_complete")


def _scored(
    frame: pd.DataFrame,
    fields: Any,
    other: pd.DataFrame | None,
    options: dict[str, Any],
) -> pd.DataFrame:
    return scored_pairs(frame, fields, other=other, **options)


#: The blocking and scoring options every job passes on to the stages.
_PIPELINE_OPTIONS = (
    "threshold",
    "min_score",
    "recall",
    "num_perm",
    "seed",
    "max_bucket",
    "max_pairs",
    "labels",
)


def _pipeline_options(arguments: dict[str, Any]) -> dict[str, Any]:
    """Pick the pipeline options out of a job's arguments (its ``locals()``)."""
    return {name: arguments[name] for name in _PIPELINE_OPTIONS}


def _checked_decision(fields: Any, min_score: Any, owner: str) -> Any:
    """Check ``min_score`` (and a model's fields) before any expensive work."""
    decision = check_min_score(min_score, owner)
    if isinstance(decision, MatchModel):
        decision.check_fields(_as_fields(fields, owner)[0], owner)
    return decision


def _check_new_column(
    frame: pd.DataFrame, name: Any, parameter: str, owner: str
) -> None:
    if not isinstance(name, Hashable) or name is None:
        raise ConfigTypeError(
            f"The '{parameter}' parameter of {owner} must be a column label. "
            f"Got {name!r} instead."
        )
    if name in frame.columns:
        raise ColumnError(
            f"{owner} would add a column {name!r}, but the frame already has one. "
            f"Pass {parameter}= to name the new column differently."
        )


def given_columns(
    fields: Any,
    keyword_value: Any,
    keyword: str,
    owner: str,
    every_column: pd.DataFrame | None = None,
) -> Any:
    """Return the columns given positionally or under pandas' keyword.

    ``every_column`` (the frame, for the one-table jobs) stands in when
    neither is given: all its columns, as pandas' ``subset=None``. Both given
    is an error, as in Python for an argument passed twice.
    """
    if fields is not None and keyword_value is not None:
        raise ConfigTypeError(
            f"{owner} got the columns twice: as its first argument ({fields!r}) and "
            f"as {keyword}={keyword_value!r}. Pass them once, either way."
        )
    chosen = fields if fields is not None else keyword_value
    if chosen is not None or every_column is None:
        return chosen
    if every_column.shape[1] == 0:
        raise ConfigError(
            f"{owner} was given no columns and the frame has none. Pass the "
            f"columns to compare ({keyword}=[...])."
        )
    return list(every_column.columns)


#: Where :func:`_entities` also leaves the scored pairs, when someone asks
#: (:func:`keeping_scored_pairs`; the command line writes them for review).
_SCORED_SINK: ContextVar[list[pd.DataFrame] | None] = ContextVar(
    "lsh_frame_scored_pairs", default=None
)


@contextmanager
def keeping_scored_pairs() -> Iterator[list[pd.DataFrame]]:
    """Collect the scored pairs of the dedupe jobs run inside the block."""
    kept: list[pd.DataFrame] = []
    token = _SCORED_SINK.set(kept)
    try:
        yield kept
    finally:
        _SCORED_SINK.reset(token)


_HOWS = ("inner", "left", "right", "outer")
