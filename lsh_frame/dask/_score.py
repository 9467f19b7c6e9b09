"""Scoring on Dask: both records' fields joined to each pair, then pandas' scoring.

Each pair partition fetches the rows it needs (:mod:`lsh_frame.dask._fetch`).
The field scores are then computed per partition by
:func:`lsh_frame.compare.fields.score_fields` (pair by pair, so exactly as pandas),
and the decision is made once from summaries that add up over partitions
(:class:`~lsh_frame.decide.cut.ScoreSpread`,
:class:`~lsh_frame.decide.tables.LevelTable`). A link read as a matching
(:mod:`lsh_frame.decide.matching`) is decided on the client, over every pair's
levels and records: the matching ties each pair to all its records' others.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from dask import delayed

from lsh_frame import _progress
from lsh_frame._validation import check_columns
from lsh_frame.block.fields import _as_fields
from lsh_frame.compare import nicknames as _nicknames
from lsh_frame.compare import swaps as _swaps
from lsh_frame.compare.codes import CodeFrequencies, RecordCodes
from lsh_frame.compare.fields import (
    force_identical,
    identical_mask,
    learning_view,
    score_fields,
    without,
    without_straight,
)
from lsh_frame.compare.placeholder_dates import DayCounts, check_days
from lsh_frame.compare.plan import (
    comparison_step,
    field_scores,
    plan_score,
    with_code_frequencies,
)
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
from lsh_frame.dask._fetch import _with_positions, fetch
from lsh_frame.dask._keys import LEFT_POSITION, RIGHT_POSITION
from lsh_frame.dask._one_to_one import no_choice, one_to_one_parts
from lsh_frame.dask._tables import compute, persist, shared
from lsh_frame.dask._transitive import transitive_parts
from lsh_frame.decide.closing import check_transitive
from lsh_frame.decide.closing import decide as decide_transitive
from lsh_frame.decide.cut import ScoreSpread
from lsh_frame.decide.learn import learn_model
from lsh_frame.decide.links import (
    exclusive_matches,
    learned_matching,
    matching_choice,
    not_matched,
)
from lsh_frame.decide.matches import (
    certain_counts,
    check_min_score,
    decide,
    decision_counts,
    fallback_matches,
    model_matches,
    no_entities,
    provisional_matches,
    scored_attrs,
    warn_fallback,
    with_match_cut,
)
from lsh_frame.decide.one_to_one import (
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

if TYPE_CHECKING:
    from lsh_frame.block.fields import Field
    from lsh_frame.compare.plan import ScorePlan
    from lsh_frame.dask._tables import Table
    from lsh_frame.decide.closing import Transitive
    from lsh_frame.decide.model import MatchModel
    from lsh_frame.decide.one_to_one import OneToOne


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
    positioned: pd.DataFrame,
    scored: _Scored,
    alone_keys: tuple[str, ...],
    plan: ScorePlan,
) -> pd.DataFrame:
    """Both positions, the score, whether only a weak key found it, and levels.

    The levels (as learned from, ``learn:<field>``, and as decided,
    ``level:<field>``) and whether a pair is held out of learning let the
    client read the link as a matching (see ``lsh_frame.decide.links``).
    """
    pairs, columns, identical, _ = scored
    learn = learning_view(columns)
    decided = without_straight(columns)
    frame = {
        "left": positioned[LEFT_POSITION].to_numpy(dtype=np.int64),
        "right": positioned[RIGHT_POSITION].to_numpy(dtype=np.int64),
        "score": np.asarray(learn["score"], dtype=np.float64),
        "alone": found_only_by(pairs, alone_keys),
        "held_out": identical | added_by_compound(pairs),
    }
    for name, view in (("learn", learn), ("level", decided)):
        for label, level in plan.levels(field_scores(plan, view)).items():
            frame[f"{name}:{label}"] = level.astype(np.uint8)
    return pd.DataFrame(frame)


def _identical(scored: _Scored) -> npt.NDArray[np.bool_]:
    return np.asarray(scored[2], dtype=bool)


def _decided(
    scored: _Scored,
    plan: ScorePlan,
    model: MatchModel | None,
    cut: float | None,
    attrs: dict[str, Any],
    alone_keys: tuple[str, ...],
    matched: tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]] | None = None,
) -> pd.DataFrame:
    pairs, columns, identical, _ = scored
    columns = without_straight(columns)
    probability: npt.NDArray[np.float64] | None
    if matched is not None:
        # Decided on the client over every pair (a link read as a matching).
        probability, match = matched
    else:
        levels = plan.levels(field_scores(plan, columns))
        provisional = (
            None
            if model is not None and plan.given_model is not None
            else fallback_matches(plan, columns, cut)
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


def _code_frequencies(
    part: pd.DataFrame, specs: list[Field], owner: str
) -> CodeFrequencies:
    return CodeFrequencies.of([RecordCodes.of_table(part, specs, owner)])


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
    """Return the plan with its tables' statistics, counted over all partitions.

    The ``"tfidf"`` fields' document frequencies, and the identifier codes'
    frequencies (see :func:`lsh_frame.compare.plan.count_documents`).

    Counts of partitions add up to those of the whole tables, so every pair
    partition scores with the statistics pandas uses on the whole frames.
    """
    specs = plan.tfidf_fields
    if specs:
        counted = _over_parts(tables, _document_counts, specs, owner)
        plan = replace(
            plan,
            frequencies={
                spec.label: DocumentFrequencies.merge(
                    [part[spec.label] for part in counted]
                )
                for spec in specs
            },
        )
    if plan.codes is None:
        return plan
    specs = plan.codes.specs(plan)
    counted_codes = _over_parts(tables, _code_frequencies, specs, owner)
    return with_code_frequencies(plan, list(counted_codes))


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
    matching_fit: dict[str, Any] | None = None
    shape = None
    assigned: list[Any] = [None] * len(scored)
    if plan.link and one_to_one is not False:
        # Whether the link looks one-to-one, and the assignment "auto" learns
        # from, need every candidate's score: three numbers a pair.
        parts = compute(
            *[
                delayed(_link_candidates)(positioned, s, alone_keys, task_plan)
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
        every_levels = {
            label: every[f"level:{label}"].to_numpy(dtype=np.intp)
            for label in plan.labels
        }
        if model is None and plan.min_score == "auto":
            # As pandas reads a link: a matching, when it applies.
            model, matching_fit = learned_matching(
                plan,
                {
                    label: every[f"learn:{label}"].to_numpy(dtype=np.intp)
                    for label in plan.labels
                },
                (left_at, right_at),
                every_score,
                every["held_out"].to_numpy(dtype=bool),
                one_to_one,
            )
            if model is not None:
                fit, chosen = matching_fit, None
                if plan.codes is not None:
                    model = replace(model, codes=plan.codes.label)
        if model is None and learns_from_assignment(plan, shape):
            chosen_pairs = assignment_split(left_at, right_at, every_score)
            assigned = [
                chosen_pairs[start:stop] for start, stop in itertools.pairwise(bounds)
            ]
    matched_parts: list[Any] = [None] * len(scored)
    if model is not None and model.matching is not None:
        # The matching's probabilities and its matches are read on the client,
        # over every pair; each partition takes its own.
        held_out = every["held_out"].to_numpy(dtype=bool)
        decided_every = decide(
            plan, model, every_levels, None, None, (left_at, right_at)
        )
        assert decided_every[0] is not None
        every_probability, every_match = decided_every[0], decided_every[1]
        identical_every = np.concatenate(
            compute(*[delayed(_identical)(s) for s in scored])
        )
        aside = held_out & ~identical_every
        if plan.given_model is None:
            model, fit = with_match_cut(
                model,
                fit,
                [certain_counts(every_probability[~aside], identical_every[~aside])],
            )
            every_match = model_matches(model, every_levels, every_probability)
        forced = force_identical(every_probability, every_match, identical_every)
        assert forced[0] is not None
        every_probability, every_match = forced[0], forced[1]
        exclusive = model.matching.exclusive if model.matching is not None else ()
        every_match_before = every_match
        every_match = exclusive_matches(
            left_at, right_at, every_probability, every_match, exclusive
        )
        matched_parts = [
            (every_probability[start:stop], every_match[start:stop])
            for start, stop in itertools.pairwise(bounds)
        ]
    elif model is None:
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
            if model is not None and plan.codes is not None:
                model = replace(model, codes=plan.codes.label)
            if model is not None:
                fit = not_matched(fit, matching_fit)
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
    if matched_parts[0] is not None:
        assert model is not None and model.matching is not None
        attrs["transitive"] = {
            **decide_transitive(transitive, link=True, graph=None),
            "added": 0,
        }
        attrs["one_to_one"] = matching_choice(
            one_to_one, model, shape, int(every_match_before.sum() - every_match.sum())
        )
        return [
            delayed(_decided)(s, task_plan, model, cut, attrs, alone_keys, part)
            for s, part in zip(scored, matched_parts, strict=True)
        ], attrs
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
            method=method,
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
