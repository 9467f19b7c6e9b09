"""The answer loop's state and steps, without any input or output of its own.

An :class:`AnswerSession` holds the candidate pairs (found once), the answers
in the order given, and the current fit: the candidates scored with every
answer so far (:func:`lsh_frame.score` with ``labels=``). Its steps are pure
of I/O: :meth:`~AnswerSession.next_question` (the next most useful pair, from
:func:`lsh_frame.uncertain_pairs`), :meth:`~AnswerSession.answer`,
:meth:`~AnswerSession.back` (take the last answer back and ask that pair
again), :meth:`~AnswerSession.refit`. :func:`run_loop` drives them with the
functions it is given to ask, show and save, so the terminal
(:mod:`lsh_frame.cli.label`) and the notebook (:func:`lsh_frame.label_pairs`)
run the same loop. Every answer and every taking back is saved before the
refit that follows it, so a process killed while it refits has lost nothing.

The refit reuses the candidates: blocking runs once. The pairs
:func:`lsh_frame.pairs` found through the matches are left out of them (only
the closing rule decides those, not the model the answers teach); answered
pairs that blocking missed are added (``found_by`` ``"labels"``), as
:func:`lsh_frame.pairs` adds them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame._validation import check_columns, check_frame, check_int, check_pairs
from lsh_frame.block.fields import field_columns, mapped_columns
from lsh_frame.decide.closing import THROUGH_MATCHES
from lsh_frame.decide.labels import (
    LABELS_KEY,
    check_labels,
    labelled_rows,
    pair_codes,
    place_answers,
    unfound_pairs,
)
from lsh_frame.decide.score import score
from lsh_frame.decide.uncertain import uncertain_pairs
from lsh_frame.errors import ConfigError
from lsh_frame.review.answers import answer_column
from lsh_frame.review.show import Question

__all__ = [
    "PROMPT",
    "AnswerSession",
    "Expected",
    "Moved",
    "Question",
    "Reply",
    "apply_reply",
    "read_reply",
    "run_loop",
]

#: A person's reply: yes, no, unsure, back, quit.
Reply = Literal["y", "n", "u", "b", "q"]

#: What a reply asks (the first letter of each word is enough).
_REPLIES: dict[str, Reply] = {
    "y": "y",
    "yes": "y",
    "n": "n",
    "no": "n",
    "u": "u",
    "unsure": "u",
    "?": "u",
    "b": "b",
    "back": "b",
    "q": "q",
    "quit": "q",
}

#: The question under each pair.
PROMPT = "Same entity? [y]es [n]o [u]nsure [b]ack [q]uit: "

#: Said after a reply that is none of them.
HELP = (
    "Answer y (the same entity), n (different ones), u (unsure), b (take the last "
    "answer back) or q (quit)."
)


def read_reply(text: str | None) -> Reply | None:
    r"""Read a typed reply: ``q`` at the end of the input, None when not understood.

    Examples
    --------
    >>> read_reply(" Y\n"), read_reply("unsure"), read_reply(None), read_reply("")
    ('y', 'u', 'q', None)
    """
    if text is None:
        return "q"
    return _REPLIES.get(text.strip().lower())


@dataclass(frozen=True)
class Expected:
    """What the fit expects of its matches, reading its probabilities as true.

    ``precision``: the share of the matches expected to be right (their mean
    match probability); ``recall``: the share of the true pairs among the
    candidates expected to be matches (the probabilities of the matches over
    those of all candidates); ``f1`` of the two. Answered pairs count as their
    answers (1 or 0). NaN when there is nothing to expect from.
    """

    precision: float
    recall: float
    f1: float
    matches: int

    @classmethod
    def of(
        cls, probability: npt.NDArray[np.float64], match: npt.NDArray[np.bool_]
    ) -> Expected:
        """Expect from each pair's match probability and decision.

        Examples
        --------
        >>> Expected.of(np.array([0.9, 0.7, 0.2]), np.array([True, True, False]))
        Expected(precision=0.8, recall=0.888..., f1=0.842..., matches=2)
        """
        # A pair without a probability (no model read it) counts as decided.
        probability = np.where(np.isnan(probability), match, probability)
        found = float(probability[match].sum())
        everything = float(probability.sum())
        matches = int(match.sum())
        precision = found / matches if matches else math.nan
        recall = found / everything if everything > 0 else math.nan
        f1 = (
            2 * precision * recall / (precision + recall)
            if precision + recall > 0
            else math.nan
        )
        return cls(precision, recall, f1, matches)


def _figure(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.3f}"


@dataclass(frozen=True)
class Moved:
    """How a refit moved what the fit expects."""

    before: Expected
    after: Expected
    answers: int

    def line(self) -> str:
        """One line: the answers held, each figure before and after.

        Examples
        --------
        >>> before, after = Expected(0.9, 0.8, 0.85, 10), Expected(0.95, 0.8, 0.87, 9)
        >>> print(Moved(before, after, 2).line())
        2 answers: expected precision 0.900 → 0.950, recall 0.800 → 0.800,
        F1 0.850 → 0.870
        """
        plural = "s" if self.answers != 1 else ""
        return f"{self.answers} answer{plural}: {self.figures()}"

    def figures(self) -> str:
        """Each figure before and after."""
        return ", ".join(
            f"{name} {_figure(getattr(self.before, key))} → "
            f"{_figure(getattr(self.after, key))}"
            for name, key in (
                ("expected precision", "precision"),
                ("recall", "recall"),
                ("F1", "f1"),
            )
        )


class AnswerSession:
    """The answer loop's state: candidates, answers, the current fit.

    Parameters
    ----------
    frame, fields, other, right_on
        As given to :func:`lsh_frame.pairs`.
    scored : DataFrame
        The candidate pairs scored once (:func:`lsh_frame.pairs` of the same
        tables and fields): their ``left``, ``right`` and ``found_by`` are the
        candidates every refit scores again.
    labels : DataFrame, optional
        The answers given before (``left``, ``right``, ``match``): not asked
        again, and taken back first by :meth:`back`.
    batch : int
        Pairs asked between two refits (1: refit after every answer).
    show : list of column labels
        Columns shown besides the compared ones, to help answer.
    fitted : bool
        Whether ``scored`` is the fit of ``labels`` already (it came from
        :func:`lsh_frame.pairs` with them and found no pair through the
        matches); otherwise the session refits once when it starts.
    """

    def __init__(
        self,
        frame: pd.DataFrame,
        fields: Any,
        *,
        scored: pd.DataFrame,
        other: pd.DataFrame | None = None,
        right_on: Any = None,
        labels: pd.DataFrame | None = None,
        batch: int = 1,
        show: Any = (),
        fitted: bool = False,
        owner: str = "label_pairs",
    ) -> None:
        self.owner = owner
        self.frame = check_frame(frame, "frame", owner)
        self.other = None if other is None else check_frame(other, "other", owner)
        self.fields = fields
        self.right_on = right_on
        self.batch = check_int(batch, "batch", owner, minimum=1)
        self._right_frame = self.frame if self.other is None else self.other
        self._columns = self._shown_columns(show)
        scored = check_pairs(scored, owner)
        found_by = (
            scored["found_by"].astype(object)
            if "found_by" in scored
            else pd.Series("", index=scored.index, dtype=object)
        )
        blocked = ~found_by.isin([THROUGH_MATCHES, LABELS_KEY]).to_numpy(dtype=bool)
        self._candidates = pd.DataFrame(
            {
                "left": scored["left"].to_numpy()[blocked],
                "right": scored["right"].to_numpy()[blocked],
                "found_by": found_by.to_numpy()[blocked],
            }
        )
        self._candidate_left, self._candidate_right = self._positions(self._candidates)
        answers = check_labels(labels, owner)
        placed = (
            None
            if answers is None
            else place_answers(answers, self.frame, self.other, owner)
        )
        # The answers in the order given, as record positions; each answer's
        # question when this session asked it.
        self._left: list[int] = []
        self._right: list[int] = []
        self._match: list[float] = []
        if answers is not None and placed is not None:
            self._left = np.asarray(
                self.frame.index.get_indexer_for(answers.left), np.int64
            ).tolist()
            self._right = np.asarray(
                self._right_frame.index.get_indexer_for(answers.right), np.int64
            ).tolist()
            self._match = answers.match.tolist()
        self.given_before = len(self._match)
        self._queue: list[Question] = []
        self._back: tuple[int, int] | None = None
        self.scored = scored
        self._due = not fitted or "match_probability" not in scored
        if self._due:
            self.refit()
        self._check_probabilities()
        self.expected = self._expected()
        self.first_expected = self.expected

    # -- what the session holds ------------------------------------------------

    @property
    def link(self) -> bool:
        """Whether the pairs link two tables."""
        return self.other is not None

    @property
    def labels(self) -> pd.DataFrame:
        """The answers so far, as ``labels=`` takes them (a nullable ``match``)."""
        return pd.DataFrame(
            {
                "left": self.frame.index.take(np.asarray(self._left, dtype=np.int64)),
                "right": self._right_frame.index.take(
                    np.asarray(self._right, dtype=np.int64)
                ),
                "match": answer_column(np.asarray(self._match, dtype=np.float64)),
            }
        )

    def __len__(self) -> int:
        """Return the number of answers (those given before included)."""
        return len(self._match)

    @property
    def given_here(self) -> int:
        """Answers added by this session (taken back ones not counted)."""
        return len(self._match) - self.given_before

    def counts(self) -> dict[str, int]:
        """How many answers are yes, no and unsure.

        Examples
        --------
        >>> import lsh_frame as lf
        >>> people = lf.datasets.make_customers(300, seed=3)
        >>> columns = ["given_name", "surname", "date_of_birth", "city"]
        >>> session = AnswerSession(people, columns, scored=lf.pairs(people, columns))
        >>> session.counts()
        {'same': 0, 'different': 0, 'unsure': 0}
        """
        match = np.asarray(self._match, dtype=np.float64)
        return {
            "same": int((match == 1.0).sum()),
            "different": int((match == 0.0).sum()),
            "unsure": int(np.isnan(match).sum()),
        }

    # -- the steps -------------------------------------------------------------

    def next_question(self) -> Question | None:
        """Return the next pair to ask about; None when none is worth asking."""
        if self._due:
            self.refit()
        if not self._queue:
            asked = uncertain_pairs(self.scored, n=self.batch, labels=self.labels)
            left, right = self._positions(asked)
            self._queue = [
                self._question(int(a), int(b))
                for a, b in zip(left.tolist(), right.tolist(), strict=True)
            ]
        return self._queue.pop(0) if self._queue else None

    def answer(self, question: Question, match: bool | None) -> None:
        """Add an answer (None: unsure); the refit waits for :meth:`refit_due`."""
        left, right = self._positions(
            pd.DataFrame({"left": [question.left], "right": [question.right]})
        )
        self._left.append(int(left[0]))
        self._right.append(int(right[0]))
        self._match.append(math.nan if match is None else float(match))
        if not self._queue:
            self._due = True

    def ask_again(self, question: Question) -> None:
        """Ask ``question`` next (it was shown but not answered)."""
        self._queue.insert(0, question)

    def refit_due(self) -> bool:
        """Whether the answers since the last fit call for a refit (a batch is done)."""
        return self._due

    def back(self) -> Question | None:
        """Take the last answer back; return its pair, asked next (None: no answer).

        The answers change: save them, then :meth:`refit` (due now), after
        which the pair taken back is the next question.
        """
        if not self._match:
            return None
        left, right = self._left.pop(), self._right.pop()
        self._match.pop()
        self._queue = []
        self._due = True
        self._back = (left, right)
        return self._question(left, right)

    def refit(self) -> Moved:
        """Score the candidates again with every answer; return how it moved."""
        before = getattr(self, "expected", None)
        labels = self.labels
        self.scored = score(
            self.frame,
            self._with_answered(labels),
            self.fields,
            other=self.other,
            right_on=self.right_on,
            labels=labels if len(labels) else None,
        )
        self._due = False
        self._queue = []
        if self._back is not None:
            self._queue = [self._question(*self._back)]
            self._back = None
        self._check_probabilities()
        self.expected = self._expected()
        return Moved(before or self.expected, self.expected, len(self))

    # -- helpers ---------------------------------------------------------------

    def _shown_columns(self, show: Any) -> list[tuple[Hashable, Hashable]]:
        """Return the columns shown: (left name, right name), compared first."""
        compared = field_columns(self.fields, self.owner)
        mapped = mapped_columns(
            self.frame, self.fields, self.other, self.right_on, self.owner
        )
        pairs = (
            dict(mapped) if mapped is not None else {name: name for name in compared}
        )
        extra = (
            check_columns(self.frame, show, self.owner)
            if isinstance(show, (str, bytes)) or len(show)
            else []
        )
        if self.other is not None and extra:
            check_columns(self.other, extra, self.owner, table="right table ('other')")
        for name in extra:
            pairs.setdefault(name, name)
        return list(pairs.items())

    def _positions(
        self, pairs: pd.DataFrame
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        left = self.frame.index.get_indexer_for(pd.Index(pairs["left"]))
        right = self._right_frame.index.get_indexer_for(pd.Index(pairs["right"]))
        return np.asarray(left, np.int64), np.asarray(right, np.int64)

    def _question(self, left: int, right: int) -> Question:
        """Return the pair at these positions as asked: probability, keys, values."""
        probability, found_by = math.nan, None
        size = len(self._right_frame)
        codes = pair_codes(*self._positions(self.scored), size, self.link)
        wanted = pair_codes(np.array([left]), np.array([right]), size, self.link)
        rows = np.flatnonzero(codes == wanted[0])
        if rows.size:
            row = self.scored.iloc[int(rows[0])]
            if "match_probability" in self.scored:
                probability = float(row["match_probability"])
            if "found_by" in self.scored and not pd.isna(row["found_by"]):
                found_by = str(row["found_by"])
        values = tuple(
            (
                str(name),
                self.frame[name].iloc[left],
                self._right_frame[right_name].iloc[right],
            )
            for name, right_name in self._columns
        )
        return Question(
            self.frame.index[left],
            self._right_frame.index[right],
            probability,
            found_by,
            values,
        )

    def _with_answered(self, labels: pd.DataFrame) -> pd.DataFrame:
        """Return the candidates and, after them, answered pairs blocking missed."""
        answers = check_labels(labels, self.owner)
        if answers is None or not len(answers):
            return self._candidates
        placed = place_answers(answers, self.frame, self.other, self.owner)
        added = unfound_pairs(
            placed, self._candidate_left, self._candidate_right, self.frame, self.other
        )
        if added.empty:
            return self._candidates
        return pd.concat([self._candidates, added], ignore_index=True)

    def _check_probabilities(self) -> None:
        if (
            "match_probability" not in self.scored
            or self.scored["match_probability"].isna().all()
        ):
            raise ConfigError(
                f"No match model was learned from the {len(self.scored):,} candidate "
                "pairs of these records (a model needs at least 100 pairs, and "
                "scores that split into likely matches and the rest), so no question "
                "can be chosen. Label pairs of a larger table, or give more columns."
            )

    def _expected(self) -> Expected:
        """:class:`Expected` of the current fit, answered pairs as answered."""
        probability = self.scored["match_probability"].to_numpy(
            dtype=np.float64, na_value=np.nan
        )
        match = self.scored["match"].to_numpy(dtype=bool)
        if self._match:
            placed = place_answers(
                check_labels(self.labels, self.owner),  # type: ignore[arg-type]
                self.frame,
                self.other,
                self.owner,
            )
            rows, answered = labelled_rows(
                placed, *self._positions(self.scored), len(self._right_frame)
            )
            probability = probability.copy()
            probability[rows] = answered
        return Expected.of(probability, match)


def apply_reply(
    session: AnswerSession,
    question: Question,
    reply: Literal["y", "n", "u", "b"],
    save: Callable[[pd.DataFrame], None],
) -> list[str]:
    """Apply one reply about the pair shown; return the lines to say.

    ``y``, ``n``, ``u``: the answer is added and saved, then the model
    refitted when a batch is done. ``b``: the last answer is taken back and
    the answers saved, the model refitted, and that pair is asked next (with
    no answer to take back, ``question`` is asked again). The answers are
    saved before the refit, so a process killed while it refits loses
    nothing. The terminal, :func:`lsh_frame.label_pairs` and
    :class:`lsh_frame.LabelSession` all take their steps here.
    """
    if reply == "b":
        taken = session.back()
        if taken is None:
            session.ask_again(question)
            return ["There is no answer to take back."]
        save(session.labels)
        return [
            f"Took back the answer about {taken.left} ~ {taken.right}.",
            session.refit().line(),
        ]
    session.answer(question, {"y": True, "n": False, "u": None}[reply])
    save(session.labels)
    return [session.refit().line()] if session.refit_due() else []


def run_loop(
    session: AnswerSession,
    *,
    ask: Callable[[str], str | None],
    show: Callable[[Question, int], None],
    say: Callable[[str], None],
    save: Callable[[pd.DataFrame], None],
    limit: int | None = None,
) -> Literal["done", "quit", "limit"]:
    """Ask pairs until none is left, ``q`` (or the end of input), or ``limit`` answers.

    ``ask(prompt)`` returns the typed reply (None at the end of the input);
    ``show(question, number)`` draws a pair; ``say`` writes a line; ``save``
    writes the answers (called after every answer and every ``b``, before
    the refit). Returns why it ended.
    """
    while True:
        if limit is not None and session.given_here >= limit:
            return "limit"
        question = session.next_question()
        if question is None:
            return "done"
        show(question, len(session) + 1)
        reply = read_reply(ask(PROMPT))
        while reply is None:
            say(HELP)
            reply = read_reply(ask(PROMPT))
        if reply == "q":
            return "quit"
        for line in apply_reply(session, question, reply, save):
            say(line)
