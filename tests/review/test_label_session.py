"""``lf.LabelSession``: the answer loop one reply per call (notebook cells)."""

from __future__ import annotations

import pandas as pd
import pytest

import lsh_frame as lf

FIELDS = ["given_name", "surname", "date_of_birth", "city"]


def _pair(session: lf.LabelSession) -> tuple[object, object]:
    assert session.question is not None
    return session.question.left, session.question.right


def test_each_answer_is_saved_and_the_next_pair_asked(people, scored, tmp_path):
    path = tmp_path / "labels.csv"
    session = lf.LabelSession(people, FIELDS, scored=scored, path=path)
    asked = []
    for reply in ["y", False, None]:
        asked.append(_pair(session))
        assert session.answer(reply) is session
        on_disk = pd.read_csv(path)
        assert list(zip(on_disk["left"], on_disk["right"], strict=True)) == asked
    assert len(set(asked)) == 3
    assert session.labels["match"].tolist()[:2] == [True, False]
    assert session.labels["match"].isna().tolist() == [False, False, True]
    assert session.said[0].startswith("3 answers: expected precision")
    assert "(1 same, 1 different, 1 unsure; 3 given now)" in session.summary()


def test_back_takes_the_last_answer_back_and_asks_it_again(people, scored, tmp_path):
    path = tmp_path / "labels.csv"
    session = lf.LabelSession(people, FIELDS, scored=scored, path=path)
    first = _pair(session)
    session.answer("n")
    second = _pair(session)
    session.answer("y")
    session.back()
    assert _pair(session) == second
    assert len(session) == 1 and len(pd.read_csv(path)) == 1
    assert session.said[0] == f"Took back the answer about {second[0]} ~ {second[1]}."
    session.answer("n")
    assert session.labels["match"].tolist() == [False, False]
    assert list(zip(session.labels["left"], session.labels["right"], strict=True)) == [
        first,
        second,
    ]


def test_back_with_nothing_answered_keeps_the_pair(people, scored):
    session = lf.LabelSession(people, FIELDS, scored=scored)
    shown = _pair(session)
    session.back()
    assert session.said == ["There is no answer to take back."]
    assert _pair(session) == shown and len(session) == 0


def test_a_new_session_with_the_path_continues(people, scored, tmp_path):
    path = tmp_path / "labels.csv"
    first = lf.LabelSession(people, FIELDS, scored=scored, path=path)
    first.answer("y").answer("n")
    again = lf.LabelSession(people, FIELDS, path=path)
    assert len(again) == 2
    answered = set(zip(first.labels["left"], first.labels["right"], strict=True))
    assert _pair(again) not in answered
    pd.testing.assert_frame_equal(again.labels, first.labels)


def test_the_output_is_the_pair_and_how_to_answer(people, scored):
    session = lf.LabelSession(people, FIELDS, scored=scored)
    page = session._repr_html_()
    assert page.startswith("<table") and "Pair 1:" in page
    assert ".answer(&#x27;y&#x27;)" in page
    text = repr(session)
    assert text.startswith("Pair 1: match probability")
    assert "given_name" in text and ".back()" in text
    session.answer("u")
    assert repr(session).startswith("1 answer: expected precision")
    assert "Pair 2:" in session._repr_html_()


def test_bad_replies_are_named_and_change_nothing(people, scored):
    session = lf.LabelSession(people, FIELDS, scored=scored)
    shown = _pair(session)
    for reply in ["maybe", "q", 1]:
        with pytest.raises(lf.ConfigError, match="'reply' parameter of LabelSession"):
            session.answer(reply)  # type: ignore[arg-type]
    assert _pair(session) == shown and len(session) == 0
    with pytest.raises(lf.ConfigError, match="'batch' parameter of LabelSession"):
        lf.LabelSession(people, FIELDS, scored=scored, batch=0)


def test_when_no_pair_is_left_an_answer_is_refused(people, scored, monkeypatch):
    session = lf.LabelSession(people, FIELDS, scored=scored)
    session.answer("y")
    monkeypatch.setattr(session._session, "next_question", lambda: None)
    session.question = None
    assert session.done
    assert "No pair is left" in repr(session) and "1 answer" in repr(session)
    with pytest.raises(lf.ConfigError, match="No pair is left"):
        session.answer("n")
    monkeypatch.undo()
    session.back()  # the last answer can still be taken back: asked again
    assert not session.done and len(session) == 0
