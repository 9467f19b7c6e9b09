"""Learning the match model from the candidates themselves, without labels."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import numpy.typing as npt

from lsh_frame.compare.levels import LEVEL_CUTS
from lsh_frame.decide.em import _START_AGREEING
from lsh_frame.decide.model import MatchModel
from lsh_frame.decide.tables import _AUTO_MIN_PAIRS, LevelTable, _summed_rows

__all__ = ["learn_model"]


def _not_learned(labels: list[str], table: LevelTable) -> str | None:
    """Why no model could be learned from a level table (see ``learn_table``).

    None when there was nothing to decide (no pairs, or only identical copies).
    """
    total = table.pairs
    if total == 0:
        return None
    if not labels:
        return "no compared field has a value in any pair"
    if total < _AUTO_MIN_PAIRS:
        return (
            f"only {total:,} pair{'' if total == 1 else 's'} to learn from, "
            f"where a model needs {_AUTO_MIN_PAIRS}"
        )
    return f"the provisional split put all {total:,} pairs on one side"


def learn_model(
    labels: list[str],
    table: LevelTable,
    field_cuts: dict[str, tuple[float, ...]] | None = None,
    clear: bool = True,
) -> tuple[MatchModel | None, dict[str, Any] | None]:
    """Learn the model of ``"auto"`` from the level table of all pairs; and its fit.

    ``labels`` name the table's field columns (the counted fields, in order);
    ``clear`` says whether the table's split can be trusted (see
    :meth:`MatchModel.refine`). Without a model, the fit says why
    (``{"fallback": ...}``). When the split's own model is not sound
    (:attr:`MatchModel.sound`), it starts instead from the pairs that agree on
    every field both records fill, as after an unclear split, and the fit says
    so (``fit["start"]``).
    """
    # A field missing in every pair has m = u: it cannot move a decision, but
    # it would count towards the fields needed to refine, and the soundness
    # check (agreeing must weigh more than differing) takes it for a flipped
    # fit. Leave it out, so the model is the one learned without it.
    field_cuts = field_cuts or {}
    missing = np.array(
        [len(field_cuts.get(label, LEVEL_CUTS)) + 1 for label in labels], dtype=np.intp
    )
    empty = np.all(table.rows[:, :-1] == missing, axis=0)
    no_values = tuple(label for label, none in zip(labels, empty, strict=True) if none)
    if no_values:
        keep = [column for column, none in enumerate(empty) if not none]
        labels = [labels[column] for column in keep]
        table = LevelTable(*_summed_rows(table.rows[:, [*keep, -1]], table.counts))
        missing = missing[keep]
    model = MatchModel.learn_table(labels, table, field_cuts) if labels else None
    if model is None:
        why = _not_learned(labels, table)
        return None, None if why is None else {"fallback": why}
    start = None
    if not model.sound:
        # The split took another group than the matches: agreeing on some
        # field counts against its "matches". Start instead from the surest
        # matches, the pairs that agree on every field they both fill, and let
        # EM find the rest (as after an unclear split).
        surest = MatchModel.learn_table(
            labels, _agreeing_split(table, missing), field_cuts
        )
        if surest is not None:
            model, clear, start = surest, False, _START_AGREEING
    patterns, counts = table.fields()
    model, fit = MatchModel.refine_patterns(labels, patterns, counts, model, clear)
    if start is not None:
        fit = {**fit, "start": start}
    return dataclasses.replace(model, no_values=no_values), fit


def _agreeing_split(table: LevelTable, missing: npt.NDArray[np.intp]) -> LevelTable:
    """Split the table anew: matches agree (top level) on every field both fill.

    At least two fields must be filled in both records; ``missing`` is each
    field's level for a missing value.
    """
    fields = table.rows[:, :-1]
    filled = fields != missing
    agree = np.all((fields == 0) | ~filled, axis=1) & (filled.sum(axis=1) >= 2)
    rows = np.column_stack([fields, agree.astype(np.uint8)])
    return LevelTable(*_summed_rows(rows, table.counts))
