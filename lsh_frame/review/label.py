"""``lf.label_pairs``: a person answers "same or not?" in a notebook or at a prompt."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Callable
from typing import Any, Literal

import pandas as pd

from lsh_frame._validation import check_frame, check_int, check_labels
from lsh_frame.decide.closing import THROUGH_MATCHES
from lsh_frame.decide.pairs import pairs
from lsh_frame.errors import ConfigError
from lsh_frame.review.answers import (
    answer_column,
    read_answers,
    remove_stale_copies,
    write_answers,
)
from lsh_frame.review.session import AnswerSession, Moved, Question, run_loop
from lsh_frame.review.show import pair_html, pair_text

__all__ = ["label_pairs", "start_session", "summary", "use_colour"]

Display = Literal["auto", "html", "text"]


def label_pairs(
    frame: pd.DataFrame,
    fields: Any,
    /,
    *,
    other: pd.DataFrame | None = None,
    right_on: Any = None,
    scored: pd.DataFrame | None = None,
    labels: pd.DataFrame | None = None,
    path: str | os.PathLike[str] | None = None,
    n: int | None = None,
    batch: int = 1,
    show: Any = (),
    display: Display = "auto",
    ask: Callable[[str], str] | None = None,
) -> pd.DataFrame:
    """Ask a person about the most useful pairs, one at a time; return the answers.

    Named for what a person does here and what it returns: they label pairs,
    and the result is the ``labels=`` frame every job takes (``label`` alone
    would read as a record's label, which is an index value here). It is the
    loop of ``lsh-frame label`` for a notebook or a Python prompt.

    Each pair is shown side by side, the compared columns in rows with the
    characters that differ marked (an HTML table in a notebook, text with a
    caret line elsewhere), with its match probability; the reply is read with
    ``input()``: ``y`` (the same entity), ``n`` (different), ``u`` (unsure:
    kept, learned from by nothing), ``b`` (take the last answer back and ask
    that pair again) or ``q`` (quit; so do the end of input and an
    interrupt). After each answer the answers are written to ``path`` (the
    whole file, atomically: a killed kernel loses no answer given), the
    candidate pairs are scored again with every answer so far
    (:func:`lsh_frame.score` with ``labels=``, without blocking again), and the
    next question is the pair :func:`lsh_frame.uncertain_pairs` finds most
    useful; a line says how the expected precision, recall and F1 of the
    matches moved.

    Parameters
    ----------
    frame, fields : DataFrame, and columns or Fields
        The records and what to compare, as given to :func:`lsh_frame.pairs`
        (the refits score with them).
    other, right_on : optional
        The right table of a link, and its names of the compared columns.
    scored : DataFrame, optional
        Pairs scored already by :func:`lsh_frame.pairs` of the same tables
        and fields; its candidates are used instead of blocking again.
    labels : DataFrame, optional
        Answers given before (``left``, ``right``, ``match``): not asked again.
    path : str or path, optional
        The answers file (``left,right,match``; ``match`` true, false or empty
        for unsure). Its answers, when it exists, are read first (after
        ``labels``) and not asked again: a session continues where the last
        one stopped. Rewritten after every answer.
    n : int, optional
        Stop after this many answers (default: when no pair is worth asking).
    batch : int
        Pairs asked between two refits; 1 (default) refits after every answer.
    show : column label or list of them
        Columns shown besides the compared ones, to help a person answer.
    display : {"auto", "html", "text"}
        How a pair is shown: ``"auto"`` draws HTML in a Jupyter kernel, text
        elsewhere.
    ask : callable, optional
        Reads a reply, given the prompt; ``input`` by default (another
        front end, or a test, gives its own).

    Returns
    -------
    DataFrame
        Every answer (those of ``labels`` and of ``path`` first): ``left``,
        ``right`` and ``match`` (pandas' nullable boolean; missing is unsure),
        to pass as ``labels=``.

    Examples
    --------
    >>> import lsh_frame as lf
    >>> people = lf.datasets.make_customers(300, seed=3)
    >>> columns = ["given_name", "surname", "date_of_birth", "city"]
    >>> replies = iter(["y", "n", "q"])
    >>> answers = lf.label_pairs(people, columns, display="text",
    ...                          ask=lambda prompt: next(replies))  # doctest: +ELLIPSIS
    Pair 1: match probability ...
    >>> answers["match"].tolist()
    [True, False]
    >>> matched = lf.pairs(people, columns, labels=answers)
    """
    owner = "label_pairs"
    if display not in ("auto", "html", "text"):
        raise ConfigError(
            f"The 'display' parameter of {owner} must be 'auto', 'html' or 'text'. "
            f"Got {display!r} instead."
        )
    if n is not None:
        n = check_int(n, "n", owner, minimum=1)
    session = start_session(
        frame,
        fields,
        other=other,
        right_on=right_on,
        scored=scored,
        labels=labels,
        path=path,
        batch=batch,
        show=show,
        owner=owner,
    )
    html = display == "html" or (display == "auto" and _in_notebook())
    reader: Callable[[str], str] = input if ask is None else ask
    width = shutil.get_terminal_size((100, 24)).columns
    colour = not html and use_colour(sys.stdout)

    def read(prompt: str) -> str | None:
        try:
            return reader(prompt)
        except (EOFError, StopIteration):
            return None

    def draw(question: Question, number: int) -> None:
        if html:
            from IPython.display import HTML, display

            display(HTML(pair_html(question, number)))
        else:
            # This function's output is the conversation with the person.
            print(pair_text(question, number, width=width, colour=colour))

    def save(answers: pd.DataFrame) -> None:
        if path is not None:
            write_answers(path, answers)

    # An interrupt quits: every answer is kept (and saved).
    with contextlib.suppress(KeyboardInterrupt):
        run_loop(session, ask=read, show=draw, say=print, save=save, limit=n)
    print(summary(session, path))
    return session.labels


def start_session(
    frame: pd.DataFrame,
    fields: Any,
    *,
    other: pd.DataFrame | None,
    right_on: Any,
    scored: pd.DataFrame | None,
    labels: pd.DataFrame | None,
    path: str | os.PathLike[str] | None,
    batch: int,
    show: Any,
    owner: str,
    **pairs_options: Any,
) -> AnswerSession:
    """Read the answers given before, score the pairs once, start a session.

    ``pairs_options`` go to :func:`lsh_frame.pairs` when ``scored`` is None.
    """
    frame = check_frame(frame, "frame", owner)
    if other is not None:
        other = check_frame(other, "other", owner)
    given = _answers_frame(labels, owner)
    if path is not None:
        remove_stale_copies(path)
        from_file = read_answers(path, frame, other)
        if from_file is not None and len(from_file):
            given = (
                from_file
                if given is None
                else pd.concat([given, from_file], ignore_index=True)
                .drop_duplicates(keep="last")
                .reset_index(drop=True)
            )
    fitted = False
    if scored is None:
        scored = pairs(
            frame,
            fields,
            other=other,
            right_on=right_on,
            labels=given,
            **pairs_options,
        )
        fitted = "found_by" not in scored or not (
            scored["found_by"].astype(object).eq(THROUGH_MATCHES).any()
        )
    return AnswerSession(
        frame,
        fields,
        scored=scored,
        other=other,
        right_on=right_on,
        labels=given,
        batch=batch,
        show=show,
        fitted=fitted,
        owner=owner,
    )


def _answers_frame(labels: Any, owner: str) -> pd.DataFrame | None:
    """``labels=`` as a frame of ``left``, ``right`` and a nullable ``match``."""
    answers = check_labels(labels, owner)
    if answers is None:
        return None
    return pd.DataFrame(
        {
            "left": answers.left,
            "right": answers.right,
            "match": answer_column(answers.match),
        }
    )


def summary(session: AnswerSession, path: str | os.PathLike[str] | None) -> str:
    """Two lines: the answers held (and where), how the expected figures moved."""
    counts = session.counts()
    where = "" if path is None else f" in {os.fspath(path)}"
    first, now = session.first_expected, session.expected
    return (
        f"{len(session)} answer{'' if len(session) == 1 else 's'}{where} "
        f"({counts['same']} same, "
        f"{counts['different']} different, {counts['unsure']} unsure; "
        f"{session.given_here} given now).\n"
        + Moved(first, now, len(session)).figures()
        + f" (matches {first.matches:,} → {now.matches:,})"
    )


def use_colour(stream: Any) -> bool:
    """Whether to mark differing characters in colour on ``stream``.

    Only on a terminal, and never when ``NO_COLOR`` is set or ``TERM`` is
    ``dumb`` (https://no-color.org).
    """
    isatty = getattr(stream, "isatty", None)
    return bool(
        isatty is not None
        and isatty()
        and not os.environ.get("NO_COLOR")
        and os.environ.get("TERM") != "dumb"
    )


def _in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (IPython imported, with a kernel)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})
