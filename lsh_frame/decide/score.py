"""Scoring and deciding in one call: :func:`score`.

:func:`score` scores candidate pairs field by field (:mod:`lsh_frame.compare`),
then decides matches (:mod:`lsh_frame.decide`): a provisional cut, a learned
model, the readings the data turns on, and ``attrs`` that say what decided.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from lsh_frame import _progress
from lsh_frame._validation import check_frame, check_pairs, pair_positions
from lsh_frame.block.fields import other_table
from lsh_frame.compare.fields import (
    force_identical,
    identical_mask,
    learning_view,
    score_fields,
    without,
    without_straight,
)
from lsh_frame.compare.plan import (
    ScorePlan,
    _rows_in_use,
    comparison_rows,
    count_documents,
    field_scores,
    plan_score,
)
from lsh_frame.compare.table_checks import check_tables
from lsh_frame.compare.tfidf import keeping_terms
from lsh_frame.decide.closing import check_transitive, closable, close
from lsh_frame.decide.cut import ScoreSpread
from lsh_frame.decide.labels import (
    LABELS_KEY,
    check_labels,
    labelled_rows,
    place_answers,
)
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
    fallback_matches,
    model_matches,
    no_entities,
    provisional_matches,
    scored_attrs,
    scored_frame,
    warn_fallback,
    with_match_cut,
    within_table_matches,
)
from lsh_frame.decide.one_to_one import (
    assignment_split,
    check_one_to_one,
    learns_from_assignment,
    link_shape,
    one_to_one_matches,
)
from lsh_frame.decide.tables import LevelTable
from lsh_frame.decide.teaching import (
    answered_choice,
    certain,
    honour,
    labels_attrs,
    taught_model,
)
from lsh_frame.decide.weak_keys import (
    TRAIN_ON_OTHERS_SHARE,
    _learned_from_other_keys,
    added_by_compound,
    alone_keys_of,
    alone_table,
    found_only_by,
    with_alone_prior,
)

if TYPE_CHECKING:
    from lsh_frame.decide.closing import Transitive
    from lsh_frame.decide.matches import MinScore
    from lsh_frame.decide.one_to_one import OneToOne

__all__ = ["score"]

#: The plans of the :func:`score` calls made inside :func:`reusing_plans`, by
#: the tables, fields and options they were made for (the objects themselves
#: are kept beside the plan, so that their ids stay theirs).
_PLANS: ContextVar[dict[tuple[Any, ...], tuple[Any, ...]] | None] = ContextVar(
    "lsh_frame_score_plans", default=None
)


@contextmanager
def reusing_plans() -> Iterator[None]:
    """Let later :func:`score` calls of the same tables reuse the first's plan.

    A plan holds the statistics of the whole tables (comparisons chosen from
    the values, document frequencies, the readings the tables turn on); they
    do not depend on the pairs scored, so the pairs found through the matches
    (:func:`lsh_frame.decide.pairs.pairs`) are scored with the plan the
    candidates were, its decision replaced by the one they learned, instead
    of reading every record of the tables once more.
    """
    token = _PLANS.set({})
    try:
        with keeping_terms():
            yield
    finally:
        _PLANS.reset(token)


def score(
    frame: pd.DataFrame,
    pairs: pd.DataFrame,
    fields: Any,
    /,
    *,
    other: pd.DataFrame | None = None,
    right_on: Any = None,
    min_score: MinScore = "auto",
    values: bool = False,
    estimate: bool = False,
    num_perm: int = 128,
    seed: int = 1,
    one_to_one: OneToOne = "auto",
    transitive: Transitive = "auto",
    labels: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Score candidate pairs field by field and decide which are matches.

    Parameters
    ----------
    frame : DataFrame
        The records the pairs were built from (the left table when linking).
    pairs : DataFrame
        Candidate pairs with ``left`` and ``right`` columns of index labels, as
        returned by :func:`lsh_frame.candidates`. Other columns are kept.
    fields : column label, Field, or a list of them
        What to compare. A plain column name is compared on its own with
        ``compare="auto"``; a :class:`~lsh_frame.Field` says how
        (``compare``, ``weight``, shingles). A field over several columns is
        compared on its columns' text joined by a space. The rapidfuzz
        comparisons see at most the first :data:`FUZZY_MAX_CHARS` (4,000)
        characters of each normalised value, which bounds their cost on very
        long values; Jaccard similarity always uses the whole value. A field naming a
        column of MinHash signatures is compared by the signature estimate.
    other : DataFrame, optional
        The right table when the pairs link two tables.
    right_on : list of column labels, or dict, optional
        The names ``other`` gives the fields' columns when they differ from
        ``frame``'s: one column of ``other`` per column of the fields, in order,
        or a mapping ``{frame column: other column}`` (see
        :func:`lsh_frame.candidates`). Scores and column names are those of
        renaming ``other``'s columns first.
    min_score : float in [0, 1], "auto", or a learned model
        A number: pairs whose ``score`` reaches it are matches. A learned
        model — ``attrs["lsh_frame"]["model"]`` of an earlier ``"auto"`` run
        on the same fields, or a :class:`MatchModel` — decides by its
        ``match_probability`` (for small batches of new records, which are too
        few to learn from). ``"auto"``
        (default) decides without labels: the valley below the highest group
        of scores (see :func:`auto_min_score`) splits the pairs provisionally;
        a :class:`MatchModel` learns from that split how much agreeing, nearly
        agreeing or differing on each field says, and is refined
        (:meth:`MatchModel.refine`) to take back the matches the split left
        out; pairs whose ``match_probability`` reaches 0.5 are matches.
    values : bool
        Also return both records' raw values of every field side by side
        (``<field>_left`` and ``<field>_right``), for review.
    estimate : bool
        Also return the MinHash estimate of each field's Jaccard similarity
        (``<field>_estimate``; signs each distinct value with ``num_perm`` and
        ``seed``).
    num_perm, seed : int
        Signature length and seed for ``estimate``.
    one_to_one : "auto", True or False
        Only with ``other``: whether each record matches at most one record
        of the other table. True keeps, among the matches, the greedy
        one-to-one choice (most likely first: ``match_probability``, then
        ``score``, then row order) and sets ``match`` to False for the other
        matches; the rows and their ``match_probability`` stay. ``"auto"``
        (default) does so when the data says that neither table holds
        duplicates: for each record with several matches, its two best
        matches are scored against each other (same fields, same decision),
        and when fewer than half of those pairs are matches, several matches
        are confusions. False keeps every match. Without ``other``, ``"auto"``
        and False do nothing and True raises :class:`~lsh_frame.ConfigError`.
    transitive : "auto", True or False
        Only without ``other``: whether a pair whose two records share most of
        their matches is a match too (at least two matched records, and half
        the matches of the record with fewer; see :mod:`lsh_frame.decide.closing`).
        Its records are in one entity already, so entities do not change; the
        pairs then say what the entities say. ``"auto"`` (default) does so
        when the library decided the matches (``min_score`` ``"auto"`` or a
        model) and they form clusters: at least half of the two-step paths
        between matches (x matches y, y matches z) are closed by a match.
        True always closes; False never does. With ``other``, ``"auto"`` and
        False do nothing and True raises :class:`~lsh_frame.ConfigError`.
    labels : DataFrame, optional
        A person's answers: columns ``left`` and ``right`` (the two records'
        index labels) and ``match`` (True, False, or missing for unsure), for
        example from :func:`lsh_frame.uncertain_pairs`. The learned model is
        taught by the answered pairs among ``pairs`` (see
        :mod:`lsh_frame.decide.taught`; ``attrs["lsh_frame"]["model"]["taught"]``
        says how its weights moved), and every answered pair's ``match`` is its
        answer (its ``match_probability`` 1 or 0; an unsure one keeps the
        model's). Answers about pairs that are not among ``pairs`` change nothing
        here; :func:`lsh_frame.pairs` adds them to the candidates.

    Returns
    -------
    DataFrame
        The pairs (same index, same columns) followed by, per field,
        ``<field>_jaccard``, ``<field>_estimate`` (when asked), ``<field>_score``,
        then ``score``, ``match_probability`` (with ``"auto"`` or a model; NaN
        when fewer than 100 pairs or a one-sided split leave nothing to learn,
        and ``match`` then falls back to the provisional split) and ``match``
        (bool). All scores are in [0, 1] and NaN where either value is missing
        or blank (and, for Jaccard, where either value is shorter than one
        shingle). ``score`` is the mean of the field scores present in both
        records weighted by ``Field.weight``; NaN when no field is present in
        both. ``attrs["lsh_frame"]`` records the ``min_score`` used, each
        field's comparison and weight, and the learned model (``"model"``:
        prior, and m, u and weight in bits per field and level; ``"fit"``: how
        the refinement went; ``"no_values"``: counted fields left out of the
        model because every pair's score on them is missing, so they change
        no decision); ``"one_to_one"``: the rule, whether the one-to-one
        choice was ``applied`` and why (``reason``), the records with
        ``several_matches`` per table, the pairs of best matches ``"auto"``
        ``checked`` per table and how many were ``duplicates``, and the
        matches ``dropped``; ``"transitive"``: the rule, whether it was
        ``applied`` and why (``reason``), the ``closed_share`` of two-step
        paths it read and the matches it ``added``.

    Examples
    --------
    >>> df = pd.DataFrame({"name": ["john smith", "jon smith", "mary jones"],
    ...                    "city": ["leeds", "leeds", None]})
    >>> candidate_pairs = pd.DataFrame({"left": [0, 0], "right": [1, 2]})
    >>> scored = score(df, candidate_pairs, ["name", "city"], min_score=0.8)
    >>> scored[["name_score", "city_score", "score", "match"]].round(3)
       name_score  city_score  score  match
    0       0.947         1.0  0.974   True
    1       0.500         NaN  0.500  False
    """
    return _score(
        frame,
        pairs,
        fields,
        other=other_table(frame, fields, other, right_on, "score"),
        min_score=min_score,
        values=values,
        estimate=estimate,
        num_perm=num_perm,
        seed=seed,
        owner="score",
        one_to_one=one_to_one,
        transitive=transitive,
        labels=labels,
    )


def _score(
    frame: pd.DataFrame,
    pairs: pd.DataFrame,
    fields: Any,
    /,
    *,
    other: pd.DataFrame | None,
    min_score: MinScore,
    values: bool,
    estimate: bool,
    num_perm: int,
    seed: int,
    owner: str,
    one_to_one: OneToOne = "auto",
    transitive: Transitive = "auto",
    labels: pd.DataFrame | None = None,
) -> pd.DataFrame:
    frame = check_frame(frame, "frame", owner)
    if other is not None:
        other = check_frame(other, "other", owner)
    answers = check_labels(labels, owner)
    placed = None if answers is None else place_answers(answers, frame, other, owner)
    one_to_one = check_one_to_one(one_to_one, owner, link=other is not None)
    transitive = check_transitive(transitive, owner, link=other is not None)
    pairs = check_pairs(pairs, owner)
    tables = [frame] if other is None else [frame, other]
    plans = _PLANS.get()
    key = (id(frame), id(other), id(fields), values, estimate, num_perm, seed)
    reused = None if plans is None else plans.get(key)
    if reused is not None:
        plan: ScorePlan = dataclasses.replace(
            reused[-1], min_score=check_min_score(min_score, owner)
        )
    else:
        plan = plan_score(
            tables,
            [comparison_rows(table) for table in tables],
            fields,
            min_score=check_min_score(min_score, owner),
            values=values,
            estimate=estimate,
            num_perm=num_perm,
            seed=seed,
            owner=owner,
        )
        plan = check_tables(count_documents(plan, tables, owner), tables, owner)
        if plans is not None:
            plans[key] = (frame, other, fields, plan)
    right_frame = frame if other is None else other
    left_positions = pair_positions(pairs["left"], frame.index, "left", owner)
    right_positions = pair_positions(pairs["right"], right_frame.index, "right", owner)
    whole = {"left": frame, "right": right_frame}
    positions = (left_positions, right_positions)
    rows, answered = (
        (np.empty(0, dtype=np.int64), np.empty(0))
        if placed is None
        else labelled_rows(placed, *positions, len(right_frame))
    )
    if other is None:
        frame, (left_positions, right_positions) = _rows_in_use(
            frame, left_positions, right_positions
        )
    else:
        frame, (left_positions,) = _rows_in_use(frame, left_positions)
        other, (right_positions,) = _rows_in_use(other, right_positions)
    columns = score_fields(plan, frame, other, left_positions, right_positions, owner)
    identical = identical_mask(plan, pairs)
    # Answered pairs that blocking did not find are decided by their answers,
    # and neither learned from without labels nor counted as a key.
    for_labels = (
        pairs["found_by"].eq(LABELS_KEY).to_numpy(dtype=bool, na_value=False)
        if "found_by" in pairs
        else np.zeros(len(pairs), dtype=bool)
    )
    alone_keys = alone_keys_of(plan, pairs[~for_labels] if for_labels.any() else pairs)
    alone = found_only_by(pairs, alone_keys)
    # Pairs only compound keys found are decided, never learned from: the
    # other keys' pairs are decided as they would be without them.
    aside = added_by_compound(pairs) & ~for_labels
    held_out = identical | aside | for_labels

    # Three parts of the same size, reported as each ends: learning the model,
    # deciding every pair, and the one-to-one and closing rules.
    _progress.step("deciding matches", total=3 * len(pairs))
    # The model learns from the straight scores; the decision reads swapped
    # fields crossed (see learning_view).
    learn = learning_view(columns)
    columns = without_straight(columns)
    learn_combined = learn["score"]
    shape = link_shape(plan, one_to_one, *positions, learn_combined)
    learn_levels = plan.levels(field_scores(plan, learn))
    chosen: float | None = None
    model, fit = plan.given_model, None

    def within(side: str, first: Any, second: Any) -> Any:
        return within_table_matches(
            plan, model, chosen, whole[side], first, second, owner
        )

    provisional = None
    matching_fit: dict[str, Any] | None = None
    if model is None:
        spread = ScoreSpread.of(learn_combined[~held_out])
        cut = spread.cut() if plan.min_score == "auto" else None
        provisional = provisional_matches(plan, learn_combined, cut)
        chosen = cut if cut is not None else float(plan.min_score)  # type: ignore[arg-type]
        if plan.min_score == "auto" and plan.link and one_to_one is not False:
            model, matching_fit = learned_matching(
                plan,
                learn_levels,
                positions,
                learn_combined,
                held_out,
                one_to_one,
            )
            fit = matching_fit
            if model is not None:
                chosen = None  # the matching decided, not a cut on the scores
        if model is None and plan.min_score == "auto":
            assigned = learns_from_assignment(plan, shape)
            learn_from = (
                assignment_split(*positions, learn_combined)
                if assigned
                else provisional
            )
            learned = LevelTable.of(
                without(learn_levels, held_out), learn_from[~held_out]
            )
            model, fit = learn_model(
                plan.labels, learned, plan.field_cuts, assigned or spread.clear
            )
            if model is not None and alone.any():
                match = decide(plan, model, learn_levels, provisional)[1] & ~held_out
                # No match at all: nothing says the neighbours key found any.
                share = (
                    float((match & ~alone).sum() / match.sum()) if match.any() else 1.0
                )
                fit = {**(fit or {}), "trained_on": "all pairs"}
                if share >= TRAIN_ON_OTHERS_SHARE:
                    retrained = _learned_from_other_keys(
                        plan,
                        learn_levels,
                        learn_combined,
                        held_out | alone,
                        positions,
                        assigned,
                    )
                    if retrained is not None:
                        model, refit, chosen = retrained
                        provisional = provisional_matches(plan, learn_combined, chosen)
                        fit = {**(refit or {}), "trained_on": "other keys' pairs"}
                model = with_alone_prior(
                    model,
                    plan,
                    alone_table(learn_levels, held_out, alone),
                    fit,
                    alone_keys,
                )
                fit["found_by_other_keys"] = round(share, 4)
            if model is not None and model.another_group():
                fit = no_entities(model)
                model, chosen = None, None
                provisional = np.zeros(learn_combined.size, dtype=bool)
    _progress.advance(len(pairs))
    if model is not None and plan.codes is not None and plan.given_model is None:
        model = dataclasses.replace(model, codes=plan.codes.label)
    if model is not None and model.matching is None:
        fit = not_matched(fit, matching_fit)
    combined = columns["score"]
    if model is None and chosen is not None:
        provisional = fallback_matches(plan, columns, chosen)
    levels = plan.levels(field_scores(plan, columns))
    if model is not None and placed is not None:
        model = taught_model(plan, model, levels, alone, positions, rows, answered)
    probability, match = decide(plan, model, levels, provisional, alone, positions)
    if model is not None and plan.given_model is None:
        assert probability is not None
        model, fit = with_match_cut(
            model, fit, [certain_counts(probability[~aside], identical[~aside])]
        )
        match = model_matches(model, levels, probability)
    probability, match = force_identical(probability, match, identical)
    choice, match = answered_choice(probability, match, rows, answered)
    _progress.advance(len(pairs))

    if model is not None and model.matching is not None and choice is not None:
        kept = exclusive_matches(*positions, choice, match, model.matching.exclusive)
        chosen_one_to_one = matching_choice(
            one_to_one, model, shape, int(match.sum() - kept.sum())
        )
        match = kept
    else:
        match, chosen_one_to_one = one_to_one_matches(
            one_to_one, plan, *positions, choice, combined, match, within, shape
        )
    match, closed = close(
        transitive,
        link=plan.link,
        first=positions[0],
        second=positions[1],
        match=match,
        decided_here=model is not None or plan.min_score == "auto",
        identical=identical,
        closable=closable(
            probability, None if model is None else model.match_cut, identical
        ),
    )
    match = honour(match, rows, answered)
    _progress.advance(len(pairs))
    if probability is not None:
        # A pair a person answered is certain: clustering's split of sparse
        # entities (which keeps only strong links) must not cut a "yes".
        columns["match_probability"] = certain(probability, rows, answered)
    columns["match"] = match
    attrs = scored_attrs(plan, chosen, model, fit, shape)
    attrs["one_to_one"] = chosen_one_to_one
    attrs["transitive"] = closed
    if placed is not None:
        attrs["labels"] = labels_attrs(placed, rows, model)
    warn_fallback(attrs)
    return scored_frame(pairs, columns, attrs)
