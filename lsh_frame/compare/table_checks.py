"""The special readings a call's tables turn on: dates, swaps, familiar names.

Each check reads statistics of the tables (never of the candidate pairs) and
adds its reading to the score plan: placeholder dates
(:mod:`lsh_frame.compare.placeholder_dates`), fields that trade places
(:mod:`lsh_frame.compare.swaps`), familiar given names
(:mod:`lsh_frame.compare.nicknames`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lsh_frame.block.keys import _field_text
from lsh_frame.compare import nicknames as _nicknames
from lsh_frame.compare import swaps as _swaps
from lsh_frame.compare.numbers_dates import YEAR_CUTS
from lsh_frame.compare.placeholder_dates import DayCounts, check_days
from lsh_frame.compare.text import SCORERS
from lsh_frame.compare.typed_values import DateValues, TypedColumn, typed_values
from lsh_frame.errors import ConfigError

if TYPE_CHECKING:
    from lsh_frame.block.fields import Field
    from lsh_frame.compare.placeholder_dates import DayCheck
    from lsh_frame.compare.plan import ScorePlan


def check_tables(plan: ScorePlan, tables: list[pd.DataFrame], owner: str) -> ScorePlan:
    """Return the plan with its swapped fields and its fields of given names.

    Both are statistics of every record of the tables (or a given model's);
    each fuzzy field's values are normalised once for both.
    """
    values = (
        None
        if plan.given_model is not None
        else [
            {
                spec.label: _swaps.field_values(table, spec, owner)
                for spec in name_fields(plan)
            }
            for table in tables
        ]
    )
    plan = check_swaps(plan, tables, owner, values=values)
    plan = check_nicknames(plan, tables, owner, values=values)
    return check_dates(plan, tables, owner)


def date_fields(plan: ScorePlan) -> list[Field]:
    """Return the fields compared by ``"date"``."""
    return [spec for spec in plan.specs if plan.comparisons[spec.label] == "date"]


def count_days(spec: Field, table: pd.DataFrame, owner: str) -> DayCounts:
    """Count a ``"date"`` field's values of one table by day of the year."""
    encoded = _field_text(table, spec, owner=owner).dictionary_encode()
    codes = pc.fill_null(encoded.indices, -1).to_numpy()
    dates = typed_values(
        "date",
        encoded.dictionary,
        [TypedColumn(table[spec.columns[0]], codes)]
        if len(spec.columns) == 1
        else None,
    )
    assert isinstance(dates, DateValues)
    counts = np.bincount(codes[codes >= 0], minlength=len(encoded.dictionary))
    return DayCounts.of(dates, counts.astype(np.int64))


def check_dates(plan: ScorePlan, tables: list[pd.DataFrame], owner: str) -> ScorePlan:
    """Return the plan with its date fields' placeholder days.

    A given model brings its own (and its level cuts); otherwise every record
    of every table counts (see :func:`lsh_frame.compare.placeholder_dates.check_days`),
    whichever pairs are scored.
    """
    given = plan.given_model
    specs = date_fields(plan)
    if given is not None:
        _check_model_fields(
            given.placeholders, specs, "reads placeholder days in", "'date'", owner
        )
        # Its date fields read at YEAR_CUTS read years alone and placeholders
        # so; those of models saved before them read as those models did.
        return replace(
            plan,
            placeholders=dict(given.placeholders),
            year_fields=tuple(
                spec.label
                for spec in specs
                if spec.label in given.m and YEAR_CUTS[1] in given.cuts_of(spec.label)
            ),
        )
    return with_date_checks(
        plan,
        [
            check_days(
                spec.label,
                DayCounts.merge([count_days(spec, table, owner) for table in tables]),
            )
            for spec in specs
        ],
    )


def with_date_checks(plan: ScorePlan, checks: list[DayCheck]) -> ScorePlan:
    """Return the plan with these statistics and what they decide."""
    return replace(
        plan,
        placeholders={
            check.label: check.placeholders for check in checks if check.placeholders
        },
        year_fields=tuple(check.label for check in checks if check.year_level),
        date_checks=tuple(checks),
    )


def check_swaps(
    plan: ScorePlan,
    tables: list[pd.DataFrame],
    owner: str,
    *,
    values: list[dict[str, pa.Array]] | None = None,
) -> ScorePlan:
    """Return the plan with the fields whose values trade places or shift.

    A given model brings its own (the decision of its pairs read them);
    otherwise every record of every table counts (see :mod:`lsh_frame.compare.swaps`),
    whichever pairs are scored. ``values``: each table's normalised values of
    the fuzzy fields, when already read.
    """
    given = plan.given_model
    pairs = _swaps.field_pairs(plan.specs, plan.comparisons, tuple(SCORERS))
    if given is not None:
        possible = {(first.label, second.label) for first, second in pairs}
        wrong = [pair for pair in given.swaps if pair not in possible] + [
            pair
            for pair in given.shifts
            if pair not in possible and pair[::-1] not in possible
        ]
        if wrong:
            raise ConfigError(
                f"{owner} got a learned model that scores the fields {wrong!r} "
                "crossed, but these fields are not compared by one fuzzy scorer "
                "with the same normalisation here. Score with the fields and "
                "comparisons the model was learned with."
            )
        return replace(plan, swaps=given.swaps, shifts=given.shifts)
    if not pairs:
        return plan
    if values is None:
        values = [_swaps.normalised(table, pairs, owner) for table in tables]
    pairs = _swaps.sharing(
        pairs,
        [
            _swaps.vocabularies(
                {spec.label: part[spec.label] for pair in pairs for spec in pair}
            )
            for part in values
        ],
    )
    counts = _swaps.merge_counts([_swaps.count_values(part, pairs) for part in values])
    return with_swap_checks(plan, _swaps.check(counts), _swaps.check_shifts(counts))


def with_swap_checks(
    plan: ScorePlan,
    checks: list[_swaps.SwapCheck],
    shift_checks: list[_swaps.ShiftCheck] | None = None,
) -> ScorePlan:
    """Return the plan with these statistics and the swaps and shifts they decide.

    A field is swapped with one other field at most: the one it trades places
    with most often (ties by the fields' order); likewise a field shifts into
    one other at most (the one with the largest excess), and one field at most
    shifts into each.
    """
    shift_checks = shift_checks or []
    shifts: list[tuple[str, str]] = []
    holders: set[str] = set()
    intos: set[str] = set()
    for shift in sorted(
        (check for check in shift_checks if check.shifts), key=lambda c: -c.excess
    ):
        if shift.field not in holders and shift.into not in intos:
            shifts.append((shift.field, shift.into))
            holders.add(shift.field)
            intos.add(shift.into)
    shift_order = {
        (check.field, check.into): number for number, check in enumerate(shift_checks)
    }
    swaps: list[tuple[str, str]] = []
    taken: set[str] = set()
    ranked = sorted(
        (check for check in checks if check.swapped),
        key=lambda check: -check.crossed / max(check.repeated, 1),
    )
    for check in ranked:
        if check.first not in taken and check.second not in taken:
            swaps.append((check.first, check.second))
            taken.update((check.first, check.second))
    order = {(check.first, check.second): number for number, check in enumerate(checks)}
    return replace(
        plan,
        swaps=tuple(sorted(swaps, key=order.__getitem__)),
        swap_checks=tuple(checks),
        shifts=tuple(sorted(shifts, key=shift_order.__getitem__)),
        shift_checks=tuple(shift_checks),
    )


def name_fields(plan: ScorePlan) -> list[Field]:
    """Return the counted fields compared by a fuzzy scorer (given names, maybe)."""
    return [
        spec
        for spec in plan.specs
        if spec.weight > 0 and plan.comparisons[spec.label] in SCORERS
    ]


def check_nicknames(
    plan: ScorePlan,
    tables: list[pd.DataFrame],
    owner: str,
    *,
    values: list[dict[str, pa.Array]] | None = None,
) -> ScorePlan:
    """Return the plan with the fields that hold given names.

    A given model brings its own; otherwise every record of every table counts
    (see :mod:`lsh_frame.compare.nicknames`), whichever pairs are scored. ``values``:
    each table's normalised values of the fuzzy fields, when already read.
    """
    given = plan.given_model
    specs = name_fields(plan)
    if given is not None:
        _check_model_fields(
            given.nicknames,
            specs,
            "reads familiar forms of given names in",
            "a fuzzy scorer",
            owner,
        )
        return replace(plan, nicknames=given.nicknames)
    checks = [
        _nicknames.check(
            spec.label,
            [
                _nicknames.count_names(
                    _swaps.field_values(table, spec, owner)
                    if values is None
                    else values[number][spec.label],
                    spec.shingle_config,
                )
                for number, table in enumerate(tables)
            ],
        )
        for spec in specs
    ]
    return with_name_checks(plan, checks)


def _check_model_fields(
    labels: Any, specs: list[Field], reads: str, compared: str, owner: str
) -> None:
    """Refuse a given model whose reading of ``labels`` these fields cannot do."""
    here = {spec.label for spec in specs}
    wrong = [label for label in labels if label not in here]
    if wrong:
        raise ConfigError(
            f"{owner} got a learned model that {reads} {wrong!r}, but these "
            f"fields are not compared by {compared} here. Score with the fields "
            "and comparisons the model was learned with."
        )


def with_name_checks(plan: ScorePlan, checks: list[_nicknames.NameCheck]) -> ScorePlan:
    """Return the plan with these statistics and the fields they decide."""
    return replace(
        plan,
        nicknames=tuple(check.label for check in checks if check.given_names),
        name_checks=tuple(checks),
    )
