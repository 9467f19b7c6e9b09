"""The answer loop's logic: answer, unsure, back, quit, resume, refit, expect."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable

import numpy as np
import pandas as pd
import pytest

import lsh_frame as lf
from lsh_frame.review import session as session_module
from lsh_frame.review.session import (
    HELP,
    AnswerSession,
    Expected,
    Moved,
    Question,
    run_loop,
)

FIELDS = ["given_name", "surname", "date_of_birth", "city"]


def _session(people, scored, **options) -> AnswerSession:
    fitted = "labels" not in options
    return AnswerSession(people, FIELDS, scored=scored, fitted=fitted, **options)


class Script:
    """Replies typed in turn; what was shown, said and saved, in order."""

    def __init__(self, replies: Iterable[str | None]) -> None:
        self.replies = iter(replies)
        self.shown: list[tuple[Question, int]] = []
        self.said: list[str] = []
        self.saved: list[pd.DataFrame] = []

    def ask(self, prompt: str) -> str | None:
        return next(self.replies)

    def run(self, session: AnswerSession, **options) -> str:
        return run_loop(
            session,
            ask=self.ask,
            show=lambda question, number: self.shown.append((question, number)),
            say=self.said.append,
            save=lambda labels: self.saved.append(labels.copy()),
            **options,
        )

    @property
    def pairs(self) -> list[tuple[object, object]]:
        return [(question.left, question.right) for question, _ in self.shown]


def _matches(labels: pd.DataFrame) -> list[object]:
    return [None if value is pd.NA else bool(value) for value in labels["match"]]


def test_each_answer_is_saved_in_order_before_the_next_pair(people, scored):
    script = Script(["y", "n", "u", "q"])
    assert script.run(_session(people, scored)) == "quit"
    assert [len(saved) for saved in script.saved] == [1, 2, 3]
    final = script.saved[-1]
    assert _matches(final) == [True, False, None]
    assert list(zip(final["left"], final["right"], strict=True)) == script.pairs[:3]
    assert len(set(script.pairs)) == 4
    assert [number for _, number in script.shown] == [1, 2, 3, 4]
    # every saved frame is the one before with one answer added
    for before, after in zip(script.saved, script.saved[1:], strict=False):
        pd.testing.assert_frame_equal(after.iloc[: len(before)], before)


def test_a_question_shows_the_pair_its_probability_and_values(people, scored):
    script = Script(["q"])
    script.run(_session(people, scored, show=["email"]))
    question = script.shown[0][0]
    row = scored[
        (scored["left"] == question.left) & (scored["right"] == question.right)
    ]
    assert question.probability == pytest.approx(row["match_probability"].iloc[0])
    assert question.found_by == str(row["found_by"].iloc[0])
    assert [name for name, _, _ in question.values] == [*FIELDS, "email"]
    for name, left, right in question.values:
        assert left == people.at[question.left, name] or pd.isna(left)
        assert right == people.at[question.right, name] or pd.isna(right)


def test_back_takes_the_last_answer_back_and_asks_that_pair_again(people, scored):
    script = Script(["y", "n", "b", "y", "q"])
    script.run(_session(people, scored))
    first, second, third, again, fourth = script.pairs
    assert again == second
    assert len({first, second, third}) == 3
    assert fourth not in (first, second)
    assert [len(saved) for saved in script.saved] == [1, 2, 1, 2]
    assert _matches(script.saved[-1]) == [True, True]
    assert [number for _, number in script.shown] == [1, 2, 3, 2, 3]
    assert any(line.startswith("Took back the answer about") for line in script.said)


def test_back_before_any_answer_asks_the_same_pair_again(people, scored):
    script = Script(["b", "q"])
    script.run(_session(people, scored))
    assert script.pairs[0] == script.pairs[1]
    assert script.saved == []
    assert "There is no answer to take back." in script.said


def test_back_reaches_answers_given_before_the_session(people, scored):
    earlier = _earlier_answers(people, scored, ["y", "n"])
    script = Script(["b", "q"])
    session = _session(people, scored, labels=earlier)
    script.run(session)
    assert _matches(script.saved[-1]) == [True]
    last = (earlier["left"].iloc[1], earlier["right"].iloc[1])
    assert script.pairs[1] == last


def test_replies_that_are_no_answer_are_asked_again(people, scored):
    script = Script(["maybe", "", " YES ", "q"])
    script.run(_session(people, scored))
    assert script.said.count(HELP) == 2
    assert _matches(script.saved[-1]) == [True]
    assert len(script.shown) == 2


def test_the_end_of_the_input_quits(people, scored):
    script = Script(["n", None])
    assert script.run(_session(people, scored)) == "quit"
    assert _matches(script.saved[-1]) == [False]


def test_a_limit_stops_after_that_many_answers(people, scored):
    script = Script(["n"] * 10)
    assert script.run(_session(people, scored), limit=3) == "limit"
    assert len(script.saved[-1]) == 3
    assert len(script.shown) == 3


def _earlier_answers(people, scored, replies) -> pd.DataFrame:
    script = Script([*replies, "q"])
    script.run(_session(people, scored))
    return script.saved[-1]


def test_answers_given_before_are_not_asked_again(people, scored):
    earlier = _earlier_answers(people, scored, ["y", "n", "u"])
    session = _session(people, scored, labels=earlier)
    assert len(session) == 3 and session.given_here == 0
    script = Script(["y", "y", "q"])
    script.run(session)
    asked_before = set(zip(earlier["left"], earlier["right"], strict=True))
    assert not asked_before & set(script.pairs)
    assert [number for _, number in script.shown] == [4, 5, 6]
    final = script.saved[-1]
    pd.testing.assert_frame_equal(final.iloc[:3], earlier)
    assert session.given_here == 2
    assert session.counts() == {"same": 3, "different": 1, "unsure": 1}


def test_refits_score_the_same_candidates_and_never_block_again(
    people, scored, monkeypatch
):
    session = _session(people, scored)
    calls: list[pd.DataFrame] = []
    real_score = session_module.score

    def counting(frame, pairs, fields, **options):
        calls.append(pairs)
        return real_score(frame, pairs, fields, **options)

    def no_blocking(*args, **kwargs):
        raise AssertionError("the loop blocked again")

    monkeypatch.setattr(session_module, "score", counting)
    monkeypatch.setattr("lsh_frame.decide.pairs.candidates", no_blocking)
    monkeypatch.setattr("lsh_frame.block.candidates.candidates", no_blocking)
    Script(["y", "n", "u", "q"]).run(session)
    assert len(calls) == 3
    for pairs in calls:
        assert pairs[["left", "right"]].to_numpy().tolist() == (
            scored[["left", "right"]].to_numpy().tolist()
        )
        assert pairs["found_by"].astype(str).tolist() == (
            scored["found_by"].astype(str).tolist()
        )


def test_a_batch_is_asked_before_each_refit(people, scored, monkeypatch):
    session = _session(people, scored, batch=3)
    calls = []
    real_refit = session.refit
    monkeypatch.setattr(session, "refit", lambda: calls.append(1) or real_refit())
    script = Script(["y", "n", "n", "y", "n", "q"])
    script.run(session)
    assert len(calls) == 1  # after the first three; the next three wait
    assert len(set(script.pairs)) == 6


def test_the_refit_learns_from_the_answers_and_honours_them(people, scored):
    session = _session(people, scored)
    script = Script(["n", "y", "q"])
    script.run(session)
    taught = session.scored
    info = taught.attrs["lsh_frame"]["labels"]
    assert (info["given"], info["matches"], info["non_matches"]) == (2, 1, 1)
    assert "taught" in taught.attrs["lsh_frame"]["model"]
    for (left, right), answer in zip(script.pairs[:2], [False, True], strict=True):
        row = taught[(taught["left"] == left) & (taught["right"] == right)]
        assert bool(row["match"].iloc[0]) is answer


def test_refitting_without_answers_gives_the_first_fit_again(people, scored):
    session = _session(people, scored)
    first = session.expected
    session.refit()
    assert session.expected == first
    np.testing.assert_array_equal(
        session.scored["match_probability"].to_numpy(),
        scored["match_probability"].to_numpy(),
    )


def test_expected_reads_probabilities_as_the_truth():
    expected = Expected.of(np.array([0.9, 0.7, 0.2, 0.2]), np.array([1, 1, 0, 0], bool))
    assert expected.precision == pytest.approx(0.8)
    assert expected.recall == pytest.approx(1.6 / 2.0)
    assert expected.f1 == pytest.approx(0.8)
    assert expected.matches == 2
    nothing = Expected.of(np.array([0.1]), np.array([False]))
    assert math.isnan(nothing.precision) and nothing.recall == 0.0


def test_an_answer_counts_as_certain_in_what_is_expected(people, scored):
    session = _session(people, scored)
    question = session.next_question()
    assert question is not None
    before = session.expected
    session.answer(question, True)
    moved = session.refit()
    assert moved.before == before and moved.after == session.expected
    assert moved.answers == 1
    matched = session.scored["match"].to_numpy(bool)
    assert session.expected.matches == matched.sum()
    # the answered pair is a match counted at probability 1
    row = (session.scored["left"] == question.left) & (
        session.scored["right"] == question.right
    )
    probability = session.scored["match_probability"].to_numpy().copy()
    probability[row.to_numpy()] = 1.0
    assert session.expected == Expected.of(probability, matched)


def test_moved_says_how_each_figure_moved():
    line = Moved(Expected(0.9, 0.8, 0.85, 3), Expected(math.nan, 0.8, 0.8, 0), 1).line()
    assert line == (
        "1 answer: expected precision 0.900 → -, recall 0.800 → 0.800, F1 0.850 → 0.800"
    )


def test_an_answered_pair_blocking_missed_joins_the_candidates(people, scored):
    found = set(zip(scored["left"], scored["right"], strict=True))
    missed = next(
        (left, right)
        for left in people.index[:50]
        for right in people.index[250:]
        if (left, right) not in found
    )
    labels = pd.DataFrame({"left": [missed[0]], "right": [missed[1]], "match": [True]})
    session = _session(people, scored, labels=labels)
    row = session.scored[
        (session.scored["left"] == missed[0]) & (session.scored["right"] == missed[1])
    ]
    assert row["found_by"].tolist() == ["labels"]
    assert row["match"].tolist() == [True]
    Script(["b", "q"]).run(session)  # taken back: out of the candidates again
    assert not (
        (session.scored["left"] == missed[0]) & (session.scored["right"] == missed[1])
    ).any()


def test_pairs_found_through_the_matches_are_not_scored_again(people, scored):
    through = pd.DataFrame(
        {"left": [people.index[0]], "right": [people.index[-1]]},
    ).assign(found_by="through_matches")
    with_through = pd.concat(
        [scored.assign(found_by=scored["found_by"].astype(str)), through],
        ignore_index=True,
    )
    session = AnswerSession(people, FIELDS, scored=with_through)
    assert len(session.scored) == len(scored)


def test_a_link_asks_about_records_of_both_tables(people):
    left = people.iloc[::2]
    right = people.iloc[1::2].rename(columns={"surname": "family_name"})
    right_on = {"surname": "family_name"}
    linked = lf.pairs(left, FIELDS, other=right, right_on=right_on)
    session = AnswerSession(
        left, FIELDS, scored=linked, other=right, right_on=right_on, fitted=True
    )
    script = Script(["y", "n", "q"])
    script.run(session)
    labels = script.saved[-1]
    assert labels["left"].isin(left.index).all()
    assert labels["right"].isin(right.index).all()
    question = script.shown[0][0]
    values = {name: (a, b) for name, a, b in question.values}
    assert values["surname"][1] == right.at[question.right, "family_name"]
    assert session.scored.attrs["lsh_frame"]["labels"]["given"] == 2


def test_the_records_are_never_modified(people, scored):
    frame, pairs = people.copy(), scored.copy()
    Script(["y", "n", "b", "u", "q"]).run(_session(people, scored, show="email"))
    pd.testing.assert_frame_equal(people, frame)
    pd.testing.assert_frame_equal(scored, pairs)


def test_the_same_replies_ask_the_same_pairs(people, scored):
    first, second = Script(["y", "n", "y", "q"]), Script(["y", "n", "y", "q"])
    first.run(_session(people, scored))
    second.run(_session(people, scored))
    assert first.pairs == second.pairs


def test_a_column_to_show_must_be_in_the_tables(people, scored):
    with pytest.raises(lf.ColumnError, match="emial"):
        _session(people, scored, show=["emial"])


def test_too_few_pairs_to_learn_from_is_said_plainly():
    few = lf.datasets.make_customers(300, seed=3).iloc[:40]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small = lf.pairs(few, FIELDS)
    with pytest.raises(lf.ConfigError, match="No match model was learned"):
        AnswerSession(few, FIELDS, scored=small, fitted=True)
