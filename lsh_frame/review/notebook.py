"""``lf.LabelSession``: the answer loop one reply at a time, for notebook cells.

:func:`lsh_frame.label_pairs` holds the prompt until the person quits (it
reads ``input()``), which suits a terminal or a notebook that is used for
nothing else meanwhile. A :class:`LabelSession` asks without holding
anything: it shows the current pair as its cell's output (an HTML table in
a notebook, text at a prompt), and each :meth:`~LabelSession.answer` saves,
refits and moves to the next pair, so answering is one short cell run again
and again, and the notebook stays free between answers. The steps are those
of the other two loops (:func:`lsh_frame.review.session.apply_reply`).
"""

from __future__ import annotations

import html
import os
from typing import Any, Literal

import pandas as pd

from lsh_frame.errors import ConfigError
from lsh_frame.review.answers import write_answers
from lsh_frame.review.label import start_session, summary
from lsh_frame.review.session import AnswerSession, Question, apply_reply, read_reply
from lsh_frame.review.show import pair_html, pair_text

__all__ = ["LabelSession"]

#: How to answer, under each pair.
HOW = (
    "Answer with .answer('y') (the same entity), .answer('n') (different), "
    ".answer('u') (unsure) or .back() (take the last answer back)."
)

#: Said when no pair is left.
DONE = "No pair is left that an answer would teach much."


class LabelSession:
    """Ask a person about the most useful pairs, one reply per call.

    The loop of :func:`lsh_frame.label_pairs` without a prompt that waits:
    the session shows the pair it asks about as its output (in a notebook,
    an HTML table with the differing characters marked), and
    :meth:`answer` takes the reply, writes every answer so far to ``path``
    (atomically), scores the candidates again with them and moves to the
    next most useful pair, returning the session so a cell that ends with
    ``session.answer("y")`` shows the next pair. Stop whenever: the answers
    are in :attr:`labels` and in the file, and a new session with the same
    ``path`` continues.

    Parameters
    ----------
    frame, fields, other, right_on, scored, labels, path, batch, show
        As for :func:`lsh_frame.label_pairs`.

    Attributes
    ----------
    question : Question or None
        The pair asked now (``left``, ``right``, ``probability``, ``values``);
        None when no pair is left worth asking.
    said : list of str
        What the last reply did: how the expected precision, recall and F1
        moved, or that an answer was taken back.

    Examples
    --------
    >>> import lsh_frame as lf
    >>> people = lf.datasets.make_customers(300, seed=3)
    >>> columns = ["given_name", "surname", "date_of_birth", "city"]
    >>> session = lf.LabelSession(people, columns)
    >>> session.question.values[0][0]
    'given_name'
    >>> session = session.answer("y").answer("n")
    >>> session.labels["match"].tolist()
    [True, False]
    >>> session.said[0].startswith("2 answers: expected precision")
    True
    >>> matched = lf.pairs(people, columns, labels=session.labels)
    """

    def __init__(
        self,
        frame: pd.DataFrame,
        fields: Any,
        /,
        *,
        other: pd.DataFrame | None = None,
        right_on: Any = None,
        scored: pd.DataFrame | None = None,
        labels: pd.DataFrame | None = None,
        path: str | os.PathLike[str] | None = None,
        batch: int = 1,
        show: Any = (),
    ) -> None:
        self.path = path
        self._session: AnswerSession = start_session(
            frame,
            fields,
            other=other,
            right_on=right_on,
            scored=scored,
            labels=labels,
            path=path,
            batch=batch,
            show=show,
            owner="LabelSession",
        )
        self.said: list[str] = []
        self.question: Question | None = self._session.next_question()

    @property
    def labels(self) -> pd.DataFrame:
        """Every answer so far (``left``, ``right``, ``match``), for ``labels=``."""
        return self._session.labels

    @property
    def scored(self) -> pd.DataFrame:
        """The candidate pairs scored with every answer so far."""
        return self._session.scored

    @property
    def done(self) -> bool:
        """Whether no pair is left worth asking."""
        return self.question is None

    def __len__(self) -> int:
        """Return the number of answers held (those given before included)."""
        return len(self._session)

    def answer(self, reply: str | bool | None) -> LabelSession:
        """Answer the pair shown; save, refit, and ask the next; return the session.

        Parameters
        ----------
        reply : str, bool or None
            ``"y"`` or True (the same entity), ``"n"`` or False (different
            ones), ``"u"`` or None (unsure: kept, learned from by nothing),
            ``"b"`` (take the last answer back: :meth:`back`).

        Raises
        ------
        ConfigError
            For a reply that is none of these, or when no pair is left.
        """
        step: Literal["y", "n", "u", "b"]
        if reply is None or isinstance(reply, bool):
            step = "u" if reply is None else "y" if reply else "n"
        else:
            read = read_reply(reply) if isinstance(reply, str) else None
            if read is None or read == "q":
                raise ConfigError(
                    "The 'reply' parameter of LabelSession.answer must be 'y', 'n', "
                    f"'u', 'b', True, False or None. Got {reply!r} instead. (To "
                    "stop, stop answering: every answer is saved already.)"
                )
            step = read
        if self.question is None:
            if step != "b" or not len(self):
                raise ConfigError(
                    f"{DONE} Pass the answers (.labels) as labels= to the jobs."
                )
            # Taking an answer back asks that pair again, even after the last.
            self.question = Question(None, None, float("nan"), None, ())
        self.said = apply_reply(self._session, self.question, step, self._save)
        self.question = self._session.next_question()
        return self

    def back(self) -> LabelSession:
        """Take the last answer back and ask that pair again; return the session."""
        return self.answer("b")

    def summary(self) -> str:
        """Two lines: the answers held (and where), how the expected figures moved."""
        return summary(self._session, self.path)

    def _save(self, answers: pd.DataFrame) -> None:
        if self.path is not None:
            write_answers(self.path, answers)

    def __repr__(self) -> str:
        """Show the pair asked, what the last reply did, how to answer."""
        lines = list(self.said)
        if self.question is None:
            lines += [DONE, self.summary()]
        else:
            lines += [pair_text(self.question, len(self) + 1), HOW]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """Show the pair as an HTML table, as a notebook cell's output."""
        said = "".join(f"<p>{html.escape(line)}</p>" for line in self.said)
        if self.question is None:
            rest = "".join(
                f"<p>{html.escape(line)}</p>"
                for line in [DONE, *self.summary().splitlines()]
            )
            return said + rest
        return (
            said
            + pair_html(self.question, len(self) + 1)
            + f"<p><small>{html.escape(HOW)}</small></p>"
        )
