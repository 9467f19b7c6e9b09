"""The ``lsh-frame`` command line: the jobs on CSV and Parquet files.

Commands::

    lsh-frame demo                               dedupe built-in synthetic customers
    lsh-frame dedupe INPUT --on COLS [-o OUT]    entity id per row (or --drop)
    lsh-frame link LEFT RIGHT --on COLS [-o OUT] fuzzy join of two tables
    lsh-frame label INPUT --on COLS -o ANSWERS   answer "same or not?" about pairs
    lsh-frame plan --threshold T                 bands and rows for a threshold
    lsh-frame review PAIRS INPUT [RIGHT] [-o OUT] HTML page to review saved pairs

Files are read and written as CSV or Parquet by their extension (``-`` is CSV
on standard input or output, read by the same parser as a file). CSV cells are
read as text, exactly as written (only empty cells are missing), so codes such
as ``0800`` keep their zeros. An option the chosen mode would ignore is refused
(see :func:`lsh_frame.cli.options.refuse_ignored`); bad input is one line on
stderr, never a traceback.
Progress goes to stderr when it is a terminal; ``--quiet`` silences it and the
summary. Exit codes: 0 success, 1 the job could not be done (for example, too
many candidate pairs), 2 bad usage or unreadable input, 141 the reader of standard
output went away (``| head``): ended quietly, as a tool that SIGPIPE ends.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from lsh_frame._kernels import native
from lsh_frame._version import __version__
from lsh_frame.cli.dedupe import run_dedupe
from lsh_frame.cli.demo import run_demo, run_plan
from lsh_frame.cli.index import run_index
from lsh_frame.cli.io import BROKEN_PIPE, FAILED, USAGE, InputError
from lsh_frame.cli.label import add_label_parser, run_label
from lsh_frame.cli.link import run_link
from lsh_frame.cli.messages import cli_text, warnings_as_lines
from lsh_frame.cli.options import (
    UNSET,
    _digits,
    _fraction,
    _min_score,
    _positive,
    _separator,
    fill_defaults,
    refuse_ignored,
)
from lsh_frame.cli.review import run_review
from lsh_frame.errors import (
    ColumnError,
    ColumnTypeError,
    ConfigError,
    ConfigTypeError,
    FolderExistsError,
    LshFrameError,
)

#: Bad input: exit 2. (DamagedIndexError is a ConfigError.)
_USAGE_ERRORS = (
    InputError,
    ColumnError,
    ColumnTypeError,
    ConfigError,
    ConfigTypeError,
    FolderExistsError,
)


def _add_job_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--min-score",
        type=_min_score,
        default=None,
        help="score a pair needs to match, or 'auto' to learn it (default)",
    )
    parser.add_argument(
        "--model",
        help="decide with a model saved by --save-model (for small batches)",
    )
    parser.add_argument(
        "--save-model",
        help="save the learned model as JSON, to decide later batches with --model",
    )
    parser.add_argument(
        "--labels",
        help="answers file of 'lsh-frame label' (left,right,match): they teach the "
        "model, and each answered pair is decided by its answer",
    )
    parser.add_argument(
        "--index-col",
        help="column of record ids: used as the index and written with the output",
    )
    parser.add_argument(
        "--recall",
        type=_fraction,
        default=UNSET,
        help="least probability that an LSH key finds a pair at its threshold (0.95)",
    )
    parser.add_argument(
        "--num-perm", type=_positive, default=UNSET, help="signature length (128)"
    )
    parser.add_argument(
        "--max-bucket",
        type=_positive,
        default=UNSET,
        help="drop key buckets with more records than this (1000)",
    )
    parser.add_argument(
        "--threshold",
        type=_fraction,
        default=None,
        help="Jaccard similarity the LSH keys aim at (default: from the data)",
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (1)")
    parser.add_argument(
        "--shingle",
        choices=["char", "word", "stopword"],
        default=None,
        help="tokens of the --on columns: char (3-character shingles, the default: "
        "the data decides the keys), word, or stopword (a stop word and the two "
        "words after it; each column then gets an LSH key of its own); with "
        "--method simhash, the fingerprint's tokens (word by default)",
    )
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
        help="CSV field separator, one character; \\t for a tab (default: a tab "
        "for .tsv files, else a comma)",
    )
    parser.add_argument(
        "--encoding",
        default="utf-8",
        help="text encoding of CSV input files (utf-8); e.g. latin-1, cp1252",
    )
    parser.add_argument(
        "-o", "--output", default="-", help="output file, .csv or .parquet (stdout)"
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no progress and no summary"
    )


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``lsh-frame`` command."""
    parser = argparse.ArgumentParser(
        prog="lsh-frame",
        description="Entity resolution for pandas with MinHash and LSH.",
    )
    kernels = native.kernels_in_use()["kernels"]
    parser.add_argument(
        "--version",
        action="version",
        version=f"lsh_frame {__version__} ({kernels} kernels)",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser(
        "demo", help="dedupe built-in synthetic customers and show the result"
    )
    demo.add_argument("--rows", type=_positive, default=50_000, help="records (50000)")
    demo.add_argument("--seed", type=int, default=1, help="random seed (1)")
    demo.add_argument(
        "-q", "--quiet", action="store_true", help="no progress (the report is shown)"
    )

    dedupe = commands.add_parser(
        "dedupe", help="find the records of one table that are the same entity"
    )
    dedupe.add_argument("input", help="CSV or Parquet file (- for CSV on stdin)")
    dedupe.add_argument(
        "--on",
        action="append",
        required=True,
        help="columns to match on, comma separated (repeatable)",
    )
    dedupe.add_argument(
        "--drop",
        action="store_true",
        help="write one row per entity instead of adding the entity id",
    )
    dedupe.add_argument(
        "--keep",
        choices=["first", "last", "most_complete", "none"],
        default=UNSET,
        help="with --drop, the row kept of each entity (first); none drops every "
        "row that has a duplicate",
    )
    dedupe.add_argument(
        "--id-column", default=UNSET, help="entity id column added (cluster_id)"
    )
    dedupe.add_argument(
        "--size-column",
        default=UNSET,
        help="entity size column added (cluster_size)",
    )
    dedupe.add_argument(
        "--pairs-output",
        help="also write the scored candidate pairs here (.csv or .parquet), with "
        "both records' values side by side, to review the decisions",
    )
    dedupe.add_argument(
        "--digits",
        type=_digits,
        default=UNSET,
        help="round the scores of --pairs-output to this many decimals (4); 'all'",
    )
    dedupe.add_argument(
        "--input-order",
        action="store_true",
        help="write the rows in the input's order (default: the records of each "
        "entity together, entities in order of their first record)",
    )
    dedupe.add_argument(
        "--index", action="store_true", help="also write the row index (Parquet/CSV)"
    )
    dedupe.add_argument(
        "--method",
        choices=["minhash", "simhash"],
        default="minhash",
        help="minhash (default): block, score and decide; simhash: rows whose "
        "64-bit SimHash of the --on text is within --distance bits are one entity "
        "(near-identical long texts; see docs/simhash.md)",
    )
    dedupe.add_argument(
        "--distance",
        type=int,
        default=UNSET,
        help="with --method simhash, the largest Hamming distance (3)",
    )
    _add_job_options(dedupe)

    link_parser = commands.add_parser(
        "link", help="join two tables on similarity (fuzzy merge)"
    )
    link_parser.add_argument("left", help="left CSV or Parquet file")
    link_parser.add_argument("right", help="right CSV or Parquet file")
    link_parser.add_argument(
        "--on",
        action="append",
        required=True,
        help="columns to match on (left names when --right-on is given)",
    )
    link_parser.add_argument(
        "--right-index-col",
        help="the right table's column of record ids (default: --index-col)",
    )
    link_parser.add_argument(
        "--right-on",
        action="append",
        help="the right table's columns, in the order of --on",
    )
    link_parser.add_argument(
        "--how",
        choices=["inner", "left", "right", "outer"],
        default=UNSET,
        help="inner (default), left, right or outer, as in pandas.merge",
    )
    link_parser.add_argument(
        "--one-to-one",
        nargs="?",
        choices=["auto", "yes", "no"],
        const="yes",
        default=None,
        help="each record matches at most one record of the other table: yes "
        "(the bare flag), no, or auto (when the data has no duplicates within a "
        "table); default: auto with --pairs, no for the join",
    )
    link_parser.add_argument(
        "--pairs",
        action="store_true",
        help="write every scored candidate pair instead of the joined rows",
    )
    link_parser.add_argument(
        "--digits",
        type=_digits,
        default=4,
        help="round scores and probabilities to this many decimals (4); 'all' "
        "keeps every digit",
    )
    _add_job_options(link_parser)

    index_parser = commands.add_parser(
        "index",
        help="a saved index of resolved records: build, query, add, resolve",
    )
    actions = index_parser.add_subparsers(dest="index_command", required=True)
    for name, text in (
        ("build", "resolve a table and save it as an index folder"),
        ("query", "each new record's best matches in the index"),
        ("add", "add records to the index (saved in place)"),
        ("resolve", "give new records entity ids and add them (saved in place)"),
    ):
        action = actions.add_parser(name, help=text)
        action.add_argument("folder", help="the index folder")
        action.add_argument("input", help="CSV or Parquet file of records")
        action.add_argument(
            "--index-col", help="column of record ids, used as the labels"
        )
        action.add_argument(
            "--sep", type=_separator, default=None, help="CSV field separator"
        )
        action.add_argument(
            "--encoding", default="utf-8", help="text encoding of CSV input (utf-8)"
        )
        action.add_argument(
            "-q", "--quiet", action="store_true", help="no progress and no summary"
        )
        if name == "build":
            action.add_argument(
                "--on", action="append", required=True, help="columns to match on"
            )
            action.add_argument(
                "--entity-column",
                help="column of integer entity ids when the table is resolved already",
            )
            action.add_argument("--min-score", type=_min_score, default=None)
            action.add_argument("--model", help="decide with a saved model")
            action.add_argument("--seed", type=int, default=1, help="random seed (1)")
            action.add_argument(
                "--overwrite", action="store_true", help="replace an existing folder"
            )
        if name == "add":
            action.add_argument(
                "--entity-column", help="column of the records' integer entity ids"
            )
        if name in ("query", "resolve"):
            action.add_argument(
                "-o", "--output", default="-", help="output file (stdout)"
            )
        if name == "query":
            action.add_argument(
                "-k", type=_positive, default=10, help="matches kept per record (10)"
            )
            action.add_argument(
                "--matches", action="store_true", help="write only the matches"
            )
            action.add_argument(
                "--digits", type=_digits, default=4, help="decimals of scores (4)"
            )
        if name == "resolve":
            action.add_argument(
                "--id-column", default="cluster_id", help="id column added (cluster_id)"
            )
            action.add_argument(
                "--no-relearn",
                action="store_true",
                help="keep the keys and model even when the index has doubled",
            )

    review_parser = commands.add_parser(
        "review",
        help="write an HTML page to review saved scored pairs and export answers",
    )
    review_parser.add_argument(
        "pairs",
        help="scored pairs: a file of dedupe --pairs-output or link --pairs",
    )
    review_parser.add_argument("input", help="the records (the left table)")
    review_parser.add_argument(
        "right", nargs="?", default=None, help="the right table, for a link"
    )
    review_parser.add_argument(
        "--index-col", help="column of record ids, as given to dedupe or link"
    )
    review_parser.add_argument(
        "--right-index-col",
        help="the right table's column of record ids (default: --index-col)",
    )
    review_parser.add_argument(
        "--on",
        action="append",
        help="the compared columns to show (default: every <column>_score)",
    )
    review_parser.add_argument(
        "--right-on",
        action="append",
        help="the right table's columns, in the order of the compared columns",
    )
    review_parser.add_argument(
        "--model",
        help="the learned model saved by --save-model: each pair's waterfall",
    )
    review_parser.add_argument(
        "--labels",
        help="answers exported by an earlier page: the page starts with them",
    )
    review_parser.add_argument("--title", help="the page's title")
    review_parser.add_argument(
        "--sep", type=_separator, default=None, help="CSV field separator"
    )
    review_parser.add_argument(
        "--encoding", default="utf-8", help="text encoding of CSV input (utf-8)"
    )
    review_parser.add_argument(
        "-o", "--output", default="review.html", help="the page (review.html)"
    )
    review_parser.add_argument("-q", "--quiet", action="store_true", help="no summary")
    add_label_parser(commands)

    plan_parser = commands.add_parser(
        "plan", help="bands × rows for a similarity threshold, with its S-curve"
    )
    plan_parser.add_argument("--threshold", type=_fraction, required=True)
    plan_parser.add_argument(
        "--num-perm", type=_positive, default=128, help="signature length (128)"
    )
    plan_parser.add_argument(
        "--recall",
        type=_fraction,
        default=0.95,
        help="least probability of finding a pair at the threshold (0.95)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit code."""
    parser = build_parser()
    arguments = parser.parse_args(argv)
    fill_defaults(arguments)
    quiet = getattr(arguments, "quiet", False)
    arguments.progress = not quiet and sys.stderr.isatty()

    def say(line: str = "") -> None:
        if not quiet:
            print(line, file=sys.stderr)

    def out(line: str = "") -> None:
        print(line)

    commands: dict[str, Callable[[], int]] = {
        "demo": lambda: run_demo(
            arguments.rows, arguments.seed, show_progress=arguments.progress
        ),
        "plan": lambda: run_plan(arguments, out),
        "dedupe": lambda: run_dedupe(arguments, say),
        "link": lambda: run_link(arguments, say),
        "index": lambda: run_index(arguments, say),
        "review": lambda: run_review(arguments, say),
        "label": lambda: run_label(arguments, say),
    }
    try:
        refuse_ignored(arguments)
        with warnings_as_lines(arguments.command):
            code = commands[arguments.command]()
        # Output still buffered meets a closed pipe here, not in Python's exit.
        sys.stdout.flush()
        return code
    except _USAGE_ERRORS as error:
        print(_one_line(arguments.command, error), file=sys.stderr)
        return USAGE
    except LshFrameError as error:
        print(_one_line(arguments.command, error), file=sys.stderr)
        return FAILED
    except KeyboardInterrupt:  # pragma: no cover - interactive
        print("lsh-frame: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return BROKEN_PIPE


def _one_line(command: str, error: BaseException) -> str:
    """Return the error as one line, in the command line's words.

    Line breaks in a value are shown escaped; the library's parameter names
    become options (see :func:`lsh_frame.cli.messages.cli_text`).
    """
    message = str(error) if isinstance(error, InputError) else cli_text(str(error))
    message = message.replace("\r", "\\r").replace("\n", "\\n")
    return f"lsh-frame {command}: error: {message}"


def _silence_stdout() -> None:
    """Point standard output at the null device after its reader went away.

    Python flushes ``sys.stdout`` on exit; into the closed pipe that would print
    "Exception ignored ... BrokenPipeError" (see the ``signal`` module's notes).
    """
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a file, e.g. in tests
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, descriptor)
    finally:
        os.close(devnull)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
