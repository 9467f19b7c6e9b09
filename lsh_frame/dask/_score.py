"""Scoring on Dask: both records' fields joined to each pair, then pandas' scoring.

Each pair partition asks for the rows it needs: requests (row position,
asking partition, pair number) are routed to the partition holding the row,
answered with the row's columns, and routed back; the answers are checked to
be exactly one per pair. The field scores are then computed per partition by
:func:`lsh_frame.compare.fields.score_fields` (pair by pair, so exactly as pandas),
and the decision is made once from summaries that add up over partitions
(:class:`~lsh_frame.decide.cut.ScoreSpread`,
:class:`~lsh_frame.decide.tables.LevelTable`).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from dask import delayed

from lsh_frame import _progress
from lsh_frame._validation import check_columns, check_pairs, pair_positions
from lsh_frame.block.fields import Field, _as_fields
from lsh_frame.compare import nicknames as _nicknames
from lsh_frame.compare import swaps as _swaps
from lsh_frame.compare.fields import (
    force_identical,
    identical_mask,
    learning_view,
    score_fields,
    without,
    without_straight,
)
from lsh_frame.compare.placeholder_dates import DayCounts, check_days
from lsh_frame.compare.plan import ScorePlan, comparison_step, field_scores, plan_score
from lsh_frame.compare.table_checks import (
    check_dates,
    check_nicknames,
    check_swaps,
    count_days,
    date_fields,
    name_fields,
    with_date_checks,
    with_name_checks,
    with_swap_checks,
)
from lsh_frame.compare.text import SCORERS
from lsh_frame.compare.tfidf import DocumentFrequencies
from lsh_frame.dask._keys import LEFT_POSITION, RIGHT_POSITION
from lsh_frame.dask._one_to_one import no_choice, one_to_one_parts
from lsh_frame.dask._tables import (
    TARGET,
    Table,
    check_moved,
    compute,
    persist,
    route,
    shared,
)
from lsh_frame.dask._transitive import transitive_parts
from lsh_frame.decide.closing import Transitive, check_transitive
from lsh_frame.decide.closing import decide as decide_transitive
from lsh_frame.decide.cut import ScoreSpread
from lsh_frame.decide.learn import learn_model
from lsh_frame.decide.matches import (
    check_min_score,
    decide,
    decision_counts,
    no_entities,
    provisional_matches,
    scored_attrs,
    warn_fallback,
    with_match_cut,
)
from lsh_frame.decide.model import MatchModel
from lsh_frame.decide.one_to_one import (
    OneToOne,
    assignment_split,
    check_one_to_one,
    learns_from_assignment,
    link_shape,
)
from lsh_frame.decide.tables import LevelTable
from lsh_frame.decide.weak_keys import (
    TRAIN_ON_OTHERS_SHARE,
    added_by_compound,
    alone_table,
    found_by_counts,
    found_only_by,
    weak_keys,
    with_alone_prior,
)

_ASKER, _NUMBER, _POSITION = "__lsh_asker", "__lsh_number", "__lsh_position"


# ----------------------------------------------------------------------------
# Rows to pairs


def _requests(
    part: pd.DataFrame, column: str, asker: int, offsets: npt.NDArray[np.int64]
) -> pd.DataFrame:
    positions = part[column].to_numpy(np.int64)
    return pd.DataFrame(
        {
            _POSITION: positions,
            _ASKER: np.full(positions.size, asker, dtype=np.int64),
            _NUMBER: np.arange(positions.size, dtype=np.int64),
            TARGET: np.searchsorted(offsets, positions, side="right") - 1,
        }
    )


def _answer(
    requests: pd.DataFrame, part: pd.DataFrame, offset: int, columns: list[Any]
) -> pd.DataFrame:
    local = requests[_POSITION].to_numpy(np.int64) - offset
    rows = part[columns].iloc[local].reset_index(drop=True)
    rows[_NUMBER] = requests[_NUMBER].to_numpy(np.int64)
    rows[TARGET] = requests[_ASKER].to_numpy(np.int64)
    return rows


def _aligned(answers: pd.DataFrame, expected: int, method: str) -> pd.DataFrame:
    number = answers[_NUMBER].to_numpy(np.int64)
    order = np.argsort(number, kind="stable")
    if number.size != expected or not np.array_equal(
        number[order], np.arange(expected)
    ):
        check_moved(expected, number.size, "rows joined to pairs", method)
        check_moved(expected, -1, "rows joined to pairs (some twice)", method)
    return answers.drop(columns=_NUMBER).iloc[order].reset_index(drop=True)


def _local_rows(
    pairs: pd.DataFrame,
    column: str,
    part: pd.DataFrame,
    offset: int,
    columns: list[Any],
) -> pd.DataFrame:
    local = pairs[column].to_numpy(np.int64) - offset
    return part[columns].iloc[local].reset_index(drop=True)


def fetch(
    pair_parts: list[Any],
    lengths: npt.NDArray[np.int64],
    column: str,
    source: Table,
    columns: list[Any],
    method: str,
    *,
    aligned: bool = False,
) -> list[Any]:
    """For every pair partition, the ``columns`` of the rows its pairs name.

    ``column`` holds the rows' positions in ``source``. With ``aligned``, pair
    partition ``i`` names only rows of ``source`` partition ``i`` (candidates
    are built that way for their left rows) and nothing moves.
    """
    if aligned:
        return [
            delayed(_local_rows)(pairs, column, part, int(offset), columns)
            for pairs, part, offset in zip(
                pair_parts, source.parts, source.offsets, strict=False
            )
        ]
    requests = [
        delayed(_requests)(pairs, column, asker, source.offsets)
        for asker, pairs in enumerate(pair_parts)
    ]
    meta = _requests(
        pd.DataFrame({column: np.empty(0, np.int64)}), column, 0, source.offsets
    )
    routed = route(requests, meta, source.npartitions, method)
    answers = [
        delayed(_answer)(asked, part, int(offset), columns)
        for asked, part, offset in zip(
            routed, source.parts, source.offsets, strict=False
        )
    ]
    answer_meta = _answer(meta, source.meta, 0, columns)
    back = route(answers, answer_meta, len(pair_parts), method)
    return [
        delayed(_aligned)(answers_part, int(expected), method)
        for answers_part, expected in zip(back, lengths, strict=True)
    ]


# ----------------------------------------------------------------------------
# Scoring


def _with_positions(
    part: pd.DataFrame, left_index: pd.Index, right_index: pd.Index, owner: str
) -> pd.DataFrame:
    part = check_pairs(part, owner)
    return part.assign(
        **{
            LEFT_POSITION: pair_positions(part["left"], left_index, "left", owner),
            RIGHT_POSITION: pair_positions(part["right"], right_index, "right", owner),
        }
    )


#: Pairs, their scored columns, which pairs join identical records, and which
#: only compound keys found (decided, never learned from).
_Scored = tuple[
    pd.DataFrame, dict[str, Any], npt.NDArray[np.bool_], npt.NDArray[np.bool_]
]


def _score_part(
    pairs: pd.DataFrame,
    left_rows: pd.DataFrame,
    right_rows: pd.DataFrame,
    plan: ScorePlan,
    owner: str,
) -> _Scored:
    numbers = np.arange(len(pairs), dtype=np.int64)
    columns = score_fields(plan, left_rows, right_rows, numbers, numbers, owner)
    identical = identical_mask(plan, pairs)
    return (
        pairs.drop(columns=[LEFT_POSITION, RIGHT_POSITION]),
        columns,
        identical,
        added_by_compound(pairs),
    )


def _left_out(
    scored: _Scored, alone_keys: tuple[str, ...] | None
) -> npt.NDArray[np.bool_]:
    """Return the pairs the model does not learn from.

    Identical ones, and (given ``alone_keys``) those only a weak key found.
    """
    pairs, _, identical, aside = scored
    held_out = identical | aside
    if alone_keys is None:
        return held_out
    return held_out | found_only_by(pairs, alone_keys)


def _spread(scored: _Scored, alone_keys: tuple[str, ...] | None = None) -> ScoreSpread:
    score = np.asarray(learning_view(scored[1])["score"], dtype=np.float64)
    return ScoreSpread.of(score[~_left_out(scored, alone_keys)])


def _found_by_counts(scored: _Scored) -> dict[str, int]:
    return found_by_counts(scored[0])


def _summed(parts: tuple[dict[str, int], ...]) -> dict[str, int]:
    """Add up the partitions' ``found_by`` counts."""
    total: dict[str, int] = {}
    for part in parts:
        for value, count in part.items():
            total[value] = total.get(value, 0) + count
    return total


def _alone_counts(
    scored: _Scored,
    plan: ScorePlan,
    model: MatchModel,
    cut: float,
    alone_keys: tuple[str, ...],
) -> tuple[int, int, int]:
    """Pairs only a weak key found, matches, and matches others found."""
    pairs, columns, identical, aside = scored
    columns = learning_view(columns)
    levels = plan.levels(field_scores(plan, columns))
    provisional = provisional_matches(plan, columns["score"], cut)
    match = decide(plan, model, levels, provisional)[1] & ~(identical | aside)
    alone = found_only_by(pairs, alone_keys)
    return int(alone.sum()), int(match.sum()), int((match & ~alone).sum())


def _alone_table(
    scored: _Scored, plan: ScorePlan, alone_keys: tuple[str, ...]
) -> LevelTable:
    pairs, columns, identical, aside = scored
    levels = plan.levels(field_scores(plan, learning_view(columns)))
    return alone_table(levels, identical | aside, found_only_by(pairs, alone_keys))


def _level_table(
    scored: _Scored,
    plan: ScorePlan,
    cut: float,
    assigned: npt.NDArray[np.bool_] | None = None,
    alone_keys: tuple[str, ...] | None = None,
) -> LevelTable:
    columns = learning_view(scored[1])
    left_out = _left_out(scored, alone_keys)
    levels = plan.levels(field_scores(plan, columns))
    provisional = (
        provisional_matches(plan, columns["score"], cut)
        if assigned is None
        else assigned
    )
    return LevelTable.of(without(levels, left_out), provisional[~left_out])


def _decision_counts(
    scored: _Scored, plan: ScorePlan, model: MatchModel, alone_keys: tuple[str, ...]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    pairs, columns, identical, aside = scored
    levels = plan.levels(field_scores(plan, without_straight(columns)))
    # The match cut is chosen without the pairs only compound keys found.
    kept = ~aside
    return decision_counts(
        plan,
        model,
        without(levels, ~kept),
        found_only_by(pairs, alone_keys)[kept],
        identical[kept],
    )


def _link_candidates(
    positioned: pd.DataFrame, scored: _Scored, alone_keys: tuple[str, ...]
) -> pd.DataFrame:
    """Both positions, the score, and whether only a weak key found it."""
    return pd.DataFrame(
        {
            "left": positioned[LEFT_POSITION].to_numpy(dtype=np.int64),
            "right": positioned[RIGHT_POSITION].to_numpy(dtype=np.int64),
            "score": np.asarray(learning_view(scored[1])["score"], dtype=np.float64),
            "alone": found_only_by(scored[0], alone_keys),
        }
    )


def _decided(
    scored: _Scored,
    plan: ScorePlan,
    model: MatchModel | None,
    cut: float | None,
    attrs: dict[str, Any],
    alone_keys: tuple[str, ...],
) -> pd.DataFrame:
    pairs, columns, identical, _ = scored
    columns = without_straight(columns)
    levels = plan.levels(field_scores(plan, columns))
    provisional = (
        None
        if model is not None and plan.given_model is not None
        else provisional_matches(plan, columns["score"], cut)
    )
    probability, match = force_identical(
        *decide(plan, model, levels, provisional, found_only_by(pairs, alone_keys)),
        identical,
    )
    if probability is not None:
        columns["match_probability"] = probability
    columns["match"] = match
    added = pd.DataFrame(columns, index=pairs.index)
    kept = pairs.drop(columns=[name for name in added.columns if name in pairs])
    result = pd.concat([kept, added], axis=1)
    result.attrs = {**pairs.attrs, "lsh_frame": attrs}
    return result


def _comparison_sample(
    part: pd.DataFrame, offset: int, step: int, columns: list[Any]
) -> pd.DataFrame:
    first = (-offset) % step
    return part[columns].iloc[first::step]


def _document_counts(
    part: pd.DataFrame, specs: list[Field], owner: str
) -> dict[str, DocumentFrequencies]:
    return {
        spec.label: DocumentFrequencies.of_tables(spec, [part], owner) for spec in specs
    }


def _over_parts(tables: list[Table], function: Any, *arguments: Any) -> tuple[Any, ...]:
    """``function(part, *arguments)`` of every partition of the tables, computed."""
    return compute(
        *[
            delayed(function)(part, *arguments)
            for table in tables
            for part in table.parts
        ]
    )


def _count_documents(plan: ScorePlan, tables: list[Table], owner: str) -> ScorePlan:
    """Return the plan with its ``"tfidf"`` fields' frequencies over all partitions.

    Counts of partitions add up to those of the whole tables, so every pair
    partition scores with the statistics pandas uses on the whole frames.
    """
    specs = plan.tfidf_fields
    if not specs:
        return plan
    counted = _over_parts(tables, _document_counts, specs, owner)
    return replace(
        plan,
        frequencies={
            spec.label: DocumentFrequencies.merge(
                [part[spec.label] for part in counted]
            )
            for spec in specs
        },
    )


def _part_statistics(
    part: pd.DataFrame,
    specs: list[Field],
    pairs: list[tuple[Field, Field]],
    owner: str,
) -> tuple[dict[str, Any], list[_nicknames.Counts]]:
    """One partition's vocabularies of the swap pairs' fields and name counts.

    Each fuzzy field is normalised once for both.
    """
    values = {spec.label: _swaps.field_values(part, spec, owner) for spec in specs}
    vocabularies = _swaps.vocabularies(
        {spec.label: values[spec.label] for pair in pairs for spec in pair}
    )
    names = [
        _nicknames.count_names(values[spec.label], spec.shingle_config)
        for spec in specs
    ]
    return vocabularies, names


def _part_counts(
    part: pd.DataFrame, pairs: list[tuple[Field, Field]], owner: str
) -> _swaps.Counts:
    return _swaps.count_values(_swaps.normalised(part, pairs, owner), pairs)


def _part_days(part: pd.DataFrame, specs: list[Field], owner: str) -> list[DayCounts]:
    return [count_days(spec, part, owner) for spec in specs]


def _check_tables(plan: ScorePlan, tables: list[Table], owner: str) -> ScorePlan:
    """Return the plan with its swapped fields, fields of given names and dates.

    From the counts of all partitions, which add up, so the partitions decide
    as the whole tables do in pandas
    (:func:`lsh_frame.compare.table_checks.check_tables`).
    """
    dated = date_fields(plan)
    if plan.given_model is not None or not dated:
        plan = check_dates(plan, [], owner)
    else:
        counted_days = _over_parts(tables, _part_days, dated, owner)
        plan = with_date_checks(
            plan,
            [
                check_days(
                    spec.label, DayCounts.merge([part[number] for part in counted_days])
                )
                for number, spec in enumerate(dated)
            ],
        )
    specs = name_fields(plan)
    if plan.given_model is not None or not specs:
        return check_nicknames(check_swaps(plan, [], owner), [], owner)
    pairs = _swaps.field_pairs(plan.specs, plan.comparisons, tuple(SCORERS))
    statistics = _over_parts(tables, _part_statistics, specs, pairs, owner)
    plan = with_name_checks(
        plan,
        [
            _nicknames.check(spec.label, [part[1][number] for part in statistics])
            for number, spec in enumerate(specs)
        ],
    )
    if not pairs:
        return plan
    pairs = _swaps.sharing(pairs, [part[0] for part in statistics])
    counted = _over_parts(tables, _part_counts, pairs, owner)
    counts = _swaps.merge_counts(list(counted))
    return with_swap_checks(plan, _swaps.check(counts), _swaps.check_shifts(counts))


def score_parts(
    tables: list[Table],
    pair_parts: list[Any],
    lengths: npt.NDArray[np.int64],
    fields: Any,
    *,
    min_score: Any,
    values: bool,
    estimate: bool,
    num_perm: int,
    seed: int,
    method: str,
    owner: str,
    positions_known: bool = False,
    left_aligned: bool = False,
    one_to_one: OneToOne = "auto",
    transitive: Transitive = "auto",
) -> tuple[list[Any], dict[str, Any]]:
    """Scored pairs (one delayed pandas frame per pair partition) and attrs."""
    one_to_one = check_one_to_one(one_to_one, owner, link=len(tables) > 1)
    transitive = check_transitive(transitive, owner, link=len(tables) > 1)
    metas = [table.meta for table in tables]
    specs, _ = _as_fields(fields, owner)
    needed = list(dict.fromkeys(column for spec in specs for column in spec.columns))
    for table in tables:
        for spec in specs:
            check_columns(table.meta, list(spec.columns), owner)
    samples = []
    for table in tables:
        step = comparison_step(table.rows)
        samples.append(
            pd.concat(
                compute(
                    *[
                        delayed(_comparison_sample)(part, int(offset), step, needed)
                        for part, offset in zip(
                            table.parts, table.offsets, strict=False
                        )
                    ]
                )
            )
        )
    plan = plan_score(
        metas,
        samples,
        fields,
        min_score=check_min_score(min_score, owner),
        values=values,
        estimate=estimate,
        num_perm=num_perm,
        seed=seed,
        owner=owner,
    )
    plan = _check_tables(_count_documents(plan, tables, owner), tables, owner)
    # Document frequencies can be large: send them to each worker once.
    task_plan = shared(plan) if plan.frequencies else plan
    left = tables[0]
    right = tables[-1]
    if not positions_known:
        left_index = shared(left.index)
        right_index = left_index if len(tables) == 1 else shared(right.index)
        pair_parts = persist(
            [
                delayed(_with_positions)(part, left_index, right_index, owner)
                for part in pair_parts
            ]
        )
    _progress.step("joining records to pairs")
    left_rows = fetch(
        pair_parts, lengths, LEFT_POSITION, left, needed, method, aligned=left_aligned
    )
    right_rows = fetch(pair_parts, lengths, RIGHT_POSITION, right, needed, method)
    _progress.step(f"scoring {len(specs)} field{'s' if len(specs) != 1 else ''}")
    scored = persist(
        [
            delayed(_score_part)(pairs, lefts, rights, task_plan, owner)
            for pairs, lefts, rights in zip(
                pair_parts, left_rows, right_rows, strict=True
            )
        ]
    )
    _progress.step("deciding matches")
    model, fit, cut = plan.given_model, None, None
    # Which keys are weak is a statistic of all the pairs (counts add up).
    alone_keys = (
        model.alone_keys
        if model is not None
        else weak_keys(
            _summed(compute(*[delayed(_found_by_counts)(s) for s in scored]))
        )
    )
    chosen: float | None = None
    shape = None
    assigned: list[Any] = [None] * len(scored)
    if plan.link and one_to_one is not False:
        # Whether the link looks one-to-one, and the assignment "auto" learns
        # from, need every candidate's score: three numbers a pair.
        parts = compute(
            *[
                delayed(_link_candidates)(positioned, s, alone_keys)
                for positioned, s in zip(pair_parts, scored, strict=True)
            ]
        )
        every = pd.concat(parts, ignore_index=True)
        left_at = every["left"].to_numpy()
        right_at = every["right"].to_numpy()
        every_score = every["score"].to_numpy(dtype=np.float64)
        shape = link_shape(plan, one_to_one, left_at, right_at, every_score)
        bounds = np.cumsum([0] + [len(part) for part in parts]).tolist()
        every_alone = every["alone"].to_numpy(dtype=bool)
        if model is None and learns_from_assignment(plan, shape):
            chosen_pairs = assignment_split(left_at, right_at, every_score)
            assigned = [
                chosen_pairs[start:stop] for start, stop in itertools.pairwise(bounds)
            ]
    if model is None:
        if plan.min_score == "auto":
            spread = ScoreSpread.merge(
                list(compute(*[delayed(_spread)(s) for s in scored]))
            )
            cut, clear = spread.cut(), spread.clear
        else:
            cut, clear = float(plan.min_score), True  # type: ignore[arg-type]
        chosen = cut
        if plan.min_score == "auto":
            tables_ = compute(
                *[
                    delayed(_level_table)(s, task_plan, cut, chosen_part)
                    for s, chosen_part in zip(scored, assigned, strict=True)
                ]
            )
            model, fit = learn_model(
                plan.labels,
                LevelTable.merge(list(tables_)),
                plan.field_cuts,
                assigned[0] is not None or clear,
            )
            if model is not None:
                counts = compute(
                    *[
                        delayed(_alone_counts)(s, task_plan, model, cut, alone_keys)
                        for s in scored
                    ]
                )
                alone, matches, by_others = np.sum(counts, axis=0).tolist()
                if alone:
                    share = by_others / matches if matches else 1.0
                    fit = {**(fit or {}), "trained_on": "all pairs"}
                    if share >= TRAIN_ON_OTHERS_SHARE:
                        other_spread = ScoreSpread.merge(
                            list(
                                compute(
                                    *[delayed(_spread)(s, alone_keys) for s in scored]
                                )
                            )
                        )
                        other_cut = other_spread.cut()
                        others: list[Any] = [None] * len(scored)
                        if assigned[0] is not None:
                            kept = np.flatnonzero(~every_alone)
                            split = np.zeros(every_alone.size, dtype=bool)
                            split[kept] = assignment_split(
                                left_at[kept], right_at[kept], every_score[kept]
                            )
                            others = [
                                split[start:stop]
                                for start, stop in itertools.pairwise(bounds)
                            ]
                        tables_ = compute(
                            *[
                                delayed(_level_table)(
                                    s, task_plan, other_cut, part, alone_keys
                                )
                                for s, part in zip(scored, others, strict=True)
                            ]
                        )
                        retrained, refit = learn_model(
                            plan.labels,
                            LevelTable.merge(list(tables_)),
                            plan.field_cuts,
                            assigned[0] is not None or other_spread.clear,
                        )
                        if retrained is not None:
                            model, cut, chosen = retrained, other_cut, other_cut
                            fit = {**(refit or {}), "trained_on": "other keys' pairs"}
                    alone_tables = compute(
                        *[
                            delayed(_alone_table)(s, task_plan, alone_keys)
                            for s in scored
                        ]
                    )
                    model = with_alone_prior(
                        model,
                        plan,
                        LevelTable.merge(list(alone_tables)),
                        fit,
                        alone_keys,
                    )
                    fit["found_by_other_keys"] = round(share, 4)
            if model is not None and model.another_group():
                # No pair matches but identical copies (see compare._score).
                fit = no_entities(model)
                model, chosen, cut = None, None, np.inf
            if model is not None:
                model, fit = with_match_cut(
                    model,
                    fit,
                    list(
                        compute(
                            *[
                                delayed(_decision_counts)(
                                    s, task_plan, model, alone_keys
                                )
                                for s in scored
                            ]
                        )
                    ),
                )
    attrs = scored_attrs(plan, chosen, model, fit, shape)
    warn_fallback(attrs)
    if not plan.link:
        attrs["one_to_one"] = no_choice(one_to_one, plan.link)
        decided_here = model is not None or plan.min_score == "auto"
        decided = [
            delayed(_decided)(s, task_plan, model, cut, attrs, alone_keys)
            for s in scored
        ]
        if transitive is True or (transitive == "auto" and decided_here):
            # Which pairs close depends on every match of their records:
            # decide the pairs once, then close over all partitions' matches.
            decided = persist(decided)
        return transitive_parts(
            decided,
            left,
            transitive,
            attrs,
            owner,
            decided_here=decided_here,
            match_cut=None if model is None else model.match_cut,
        )
    attrs["transitive"] = {
        **decide_transitive(transitive, link=True, graph=None),
        "added": 0,
    }
    if one_to_one is False:
        attrs["one_to_one"] = no_choice(one_to_one, plan.link)
        decided = [
            delayed(_decided)(s, task_plan, model, cut, attrs, alone_keys)
            for s in scored
        ]
        return decided, attrs
    # Which matches stay depends on every match of a record: decide the pairs
    # once, then choose over all partitions' matches.
    decided = persist(
        [delayed(_decided)(s, task_plan, model, cut, attrs, alone_keys) for s in scored]
    )
    return one_to_one_parts(
        decided, tables, one_to_one, plan, model, chosen, needed, attrs, owner, shape
    )
