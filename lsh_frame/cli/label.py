"""``lsh-frame label``: a person answers "same or not?" about the most useful pairs.

The loop of :func:`lsh_frame.label_pairs` (:mod:`lsh_frame.review`) in a
terminal: the candidate pairs are found and scored once; each pair is shown
side by side (the characters that differ marked by a caret line, and in
colour on a terminal), the reply read from standard input (a terminal, or
answers piped in); every answer rewrites the answers file atomically before
the model is refitted, and a new session with the same ``-o`` file continues
where the last one stopped. ``q``, the end of input and Ctrl-C (exit status
130) end the session with its summary.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from lsh_frame.cli.io import OK, InputError, check_outputs, read_table
from lsh_frame.cli.options import (
    _columns,
    _csv_options,
    _fraction,
    _indexed,
    _positive,
    _separator,
)
from lsh_frame.errors import LshFrameError
from lsh_frame.review.answers import write_answers
from lsh_frame.review.label import start_session, summary, use_colour
from lsh_frame.review.session import Question, run_loop
from lsh_frame.review.show import pair_text

OWNER = "lsh-frame label"

#: The exit status after Ctrl-C, as a shell gives a process killed by SIGINT.
INTERRUPTED = 130


def add_label_parser(commands: argparse._SubParsersAction) -> None:
    """Add ``lsh-frame label`` and its options to the subcommands."""
    parser = commands.add_parser(
        "label",
        help="answer 'same or not?' about the most useful pairs; the answers "
        "teach the model (labels=)",
    )
    parser.add_argument("input", help="CSV or Parquet file of records")
    parser.add_argument(
        "--on",
        action="append",
        required=True,
        help="columns to match on, comma separated (repeatable)",
    )
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        help="the answers file (.csv: left,right,match); an existing one is continued",
    )
    parser.add_argument("--other", help="the right table, to label pairs of a link")
    parser.add_argument(
        "--right-on",
        action="append",
        help="the right table's columns, in the order of --on (with --other)",
    )
    parser.add_argument(
        "--index-col", help="column of record ids: the labels the answers name"
    )
    parser.add_argument(
        "--right-index-col",
        help="the right table's column of record ids (default: --index-col)",
    )
    parser.add_argument(
        "--show",
        action="append",
        default=[],
        help="more columns to show (not compared), comma separated",
    )
    parser.add_argument(
        "-n",
        "--questions",
        type=_positive,
        default=None,
        help="stop after this many answers (default: when no pair is left)",
    )
    parser.add_argument(
        "--batch",
        type=_positive,
        default=1,
        help="pairs asked between two refits of the model (1)",
    )
    parser.add_argument(
        "--threshold",
        type=_fraction,
        default=None,
        help="Jaccard similarity the LSH keys aim at (default: from the data)",
    )
    parser.add_argument(
        "--recall",
        type=_fraction,
        default=0.95,
        help="least probability that an LSH key finds a pair at its threshold (0.95)",
    )
    parser.add_argument(
        "--num-perm", type=_positive, default=128, help="signature length (128)"
    )
    parser.add_argument(
        "--max-bucket",
        type=_positive,
        default=1_000,
        help="drop key buckets with more records than this (1000)",
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (1)")
    parser.add_argument(
        "--max-pairs",
        type=_positive,
        default=50_000_000,
        help="refuse to build more candidate pairs than this (50000000)",
    )
    parser.add_argument(
        "--sep",
        type=_separator,
        default=None,
        help="CSV field separator of the input files; \\t for a tab",
    )
    parser.add_argument(
        "--encoding", default="utf-8", help="text encoding of CSV input (utf-8)"
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no progress and no summary"
    )


def _check_paths(arguments: argparse.Namespace) -> None:
    """Refuse, before any work, tables on stdin and an answers file that is none."""
    if arguments.input == "-" or arguments.other == "-":
        raise InputError(
            "the answers are read from standard input, so the tables must be "
            "files: give the path of the input instead of -"
        )
    output = arguments.output
    if output == "-" or not output.lower().endswith(".csv"):
        raise InputError(
            f"the answers file {output!r} must be a .csv file (-o labels.csv): it is "
            "rewritten after every answer"
        )
    check_outputs(output)
    for table in (arguments.input, arguments.other):
        if (
            table is not None
            and Path(output).exists()
            and Path(table).exists()
            and Path(table).resolve() == Path(output).resolve()
        ):
            raise InputError(
                f"the answers file {output!r} is the input {table!r}; give -o "
                "another path"
            )
    if arguments.right_on and arguments.other is None:
        raise InputError("--right-on names the right table's columns: give --other")
    if arguments.right_index_col and arguments.other is None:
        raise InputError("--right-index-col applies with --other only; leave it out")


def run_label(arguments: argparse.Namespace, say: Callable[[str], None]) -> int:
    """``lsh-frame label``: the answer loop in a terminal."""
    _check_paths(arguments)
    csv_options = _csv_options(arguments)
    frame = _indexed(
        read_table(arguments.input, "input", **csv_options),
        arguments.index_col,
        "input",
    )
    other = None
    if arguments.other is not None:
        other = _indexed(
            read_table(arguments.other, "right input", **csv_options),
            arguments.right_index_col or arguments.index_col,
            "right input",
        )
    on = _columns(arguments.on)
    right_on = _columns(arguments.right_on) if arguments.right_on else None
    show = [
        name.strip()
        for value in arguments.show
        for name in value.split(",")
        if name.strip()
    ]
    started = time.perf_counter()
    session = start_session(
        frame,
        on,
        other=other,
        right_on=right_on,
        scored=None,
        labels=None,
        path=arguments.output,
        batch=arguments.batch,
        show=show,
        owner=OWNER,
        threshold=arguments.threshold,
        recall=arguments.recall,
        num_perm=arguments.num_perm,
        seed=arguments.seed,
        max_bucket=arguments.max_bucket,
        max_pairs=arguments.max_pairs,
    )
    records = f"{len(frame):,}" + ("" if other is None else f" × {len(other):,}")
    say(
        f"{OWNER}: {records} records → {len(session.scored):,} candidate pairs in "
        f"{time.perf_counter() - started:.1f} s; {len(session)} answers read from "
        f"{arguments.output}"
    )
    ended: str
    try:
        ended = run_loop(
            session,
            ask=_reader(),
            show=_drawer(),
            say=print,
            save=lambda labels: _save(arguments.output, labels),
            limit=arguments.questions,
        )
    except KeyboardInterrupt:
        # Every answer is on disk already (saved before each refit): say so.
        print()
        ended = "interrupted"
    if ended == "done":
        print("No pair is left that an answer would teach much.")
    say(summary(session, arguments.output))
    return INTERRUPTED if ended == "interrupted" else OK


def _reader() -> Callable[[str], str | None]:
    """Read a reply from standard input; echo it when it was piped in."""
    echo = not sys.stdin.isatty()

    def read(prompt: str) -> str | None:
        try:
            reply = input(prompt)
        except EOFError:
            print()
            return None
        if echo:
            print(reply)
        return reply

    return read


def _drawer() -> Callable[[Question, int], None]:
    colour = use_colour(sys.stdout)

    def draw(question: Question, number: int) -> None:
        width = shutil.get_terminal_size((100, 24)).columns
        print()
        print(pair_text(question, number, width=width, colour=colour))

    return draw


def _save(path: str, labels: pd.DataFrame) -> None:
    try:
        write_answers(path, labels)
    except OSError as error:
        raise LshFrameError(
            f"cannot write the answers file {path!r}: {error.strerror or error}; "
            "it holds the answers given before this one"
        ) from error
