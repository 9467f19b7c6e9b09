"""Options of the command line read into the API's parameters."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from lsh_frame.cli.io import InputError, separator_hint, shown_name


def _columns(values: Sequence[str]) -> list[str]:
    """``--on a,b --on c`` → ``["a", "b", "c"]``."""
    names = [name.strip() for value in values for name in value.split(",")]
    names = [name for name in names if name]
    if not names:
        raise InputError("--on names no column")
    return names


def fields_of(on: list[str], shingle: str | None) -> list[Any]:
    """Return the fields of ``--on``: plain names, or Fields of the ``--shingle``."""
    if shingle is None or shingle == "char":
        return list(on)
    from lsh_frame.block.fields import Field

    return [Field(column, shingle=shingle) for column in on]  # type: ignore[arg-type]


def check_on(frame: pd.DataFrame, names: Sequence[str], role: str) -> None:
    """Refuse columns the table does not have, hinting at --sep when it shows."""
    for name in names:
        if name not in frame.columns:
            shown = ", ".join(shown_name(column)[1:-1] for column in frame.columns[:20])
            more = (
                f" and {len(frame.columns) - 20:,} more" if frame.shape[1] > 20 else ""
            )
            raise InputError(
                f"the {role} has no column {name!r}; its columns: {shown}{more}"
                + separator_hint(frame, name)
            )


def say_separator(say: Callable[[str], None], frame: pd.DataFrame, role: str) -> None:
    """Say which separator was sniffed when it was not a comma."""
    read = frame.attrs.get("lsh_frame_csv") or {}
    if read.get("sniffed") and read.get("sep") != ",":
        shown = "\\t" if read["sep"] == "\t" else read["sep"]
        say(f"  read the {role} with separator '{shown}' (seen in its first lines; "
            "--sep chooses another)")  # fmt: skip


def _min_score(text: str) -> float | str:
    if text == "auto":
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a number in [0, 1] or 'auto', not {text!r}"
        ) from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be in [0, 1], not {text}")
    return value


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, not {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], not {text}")
    return value


def _separator(text: str) -> str:
    """Return the one-character separator (a backslash-t or "tab" is a tab)."""
    separator = "\t" if text in ("\\t", "tab") else text
    if len(separator) != 1:
        raise argparse.ArgumentTypeError(
            f"must be one character (\\t or tab for a tab); got {text!r}"
        )
    return separator


def _digits(text: str) -> int | None:
    if text == "all":
        return None
    try:
        digits = int(text)
    except ValueError:
        digits = -1
    if not 0 <= digits <= 17:
        raise argparse.ArgumentTypeError(
            f"must be a number of decimals from 0 to 17, or 'all'; got {text!r}"
        )
    return digits


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {text}")
    return value


def _load_model(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf8") as file:
            learned = json.load(file)
    except OSError as error:
        raise InputError(
            f"cannot read the model {path!r}: {error.strerror or error}"
        ) from error
    except ValueError as error:
        raise InputError(f"the model {path!r} is not JSON: {error}") from error
    if not isinstance(learned, dict):
        raise InputError(f"the model {path!r} is not a learned model (a JSON object)")
    return learned


def _save_model(result: pd.DataFrame, path: str | None) -> str | None:
    """Write the learned model as JSON; return a note for the summary."""
    if path is None:
        return None
    learned = result.attrs.get("lsh_frame", {}).get("model")
    if learned is None:
        return (
            "  no model was learned (too few candidate pairs, or a numeric --min-score)"
        )
    try:
        with open(path, "w", encoding="utf8") as file:
            json.dump(learned, file, indent=2)
    except OSError as error:
        raise InputError(f"cannot write {path!r}: {error.strerror or error}") from error
    return f"  saved the learned model to {path}"


def _csv_options(arguments: argparse.Namespace) -> dict[str, Any]:
    """``sep`` and ``encoding`` of the CSV files read."""
    return {"sep": arguments.sep, "encoding": arguments.encoding}


def _rounded(frame: pd.DataFrame, digits: int | None) -> pd.DataFrame:
    """Scores and probabilities rounded to ``digits`` for display (None: as is)."""
    if digits is None:
        return frame
    floats = [
        column
        for column in frame.columns
        if pd.api.types.is_float_dtype(frame[column].dtype)
        and (
            str(column) in ("score", "match_probability")
            or str(column).endswith(("_score", "_jaccard"))
        )
    ]
    return frame.round(dict.fromkeys(floats, digits)) if floats else frame


def _job_options(arguments: argparse.Namespace) -> dict[str, Any]:
    min_score: Any = "auto" if arguments.min_score is None else arguments.min_score
    if arguments.model is not None:
        if arguments.min_score is not None:
            raise InputError("give --min-score or --model, not both")
        min_score = _load_model(arguments.model)
    return {
        "threshold": arguments.threshold,
        "min_score": min_score,
        "recall": arguments.recall,
        "num_perm": arguments.num_perm,
        "seed": arguments.seed,
        "max_bucket": arguments.max_bucket,
        "max_pairs": arguments.max_pairs,
    }


def _answers(
    arguments: argparse.Namespace,
    frame: pd.DataFrame,
    other: pd.DataFrame | None = None,
) -> pd.DataFrame | None:
    """Read ``--labels`` (an answers file of ``lsh-frame label``) for the tables."""
    path = getattr(arguments, "labels", None)
    if path is None:
        return None
    from lsh_frame.review.answers import read_answers

    if not Path(path).exists():
        raise InputError(
            f"cannot read the answers file {path!r}: there is no such file "
            "(lsh-frame label -o writes one)"
        )
    return read_answers(path, frame, other)


def _indexed(frame: pd.DataFrame, column: str | None, role: str) -> pd.DataFrame:
    """Use ``column`` as the frame's index (record ids), checked for uniqueness."""
    if column is None:
        return frame
    if column not in frame.columns:
        raise InputError(
            f"the {role} has no column {column!r} to use as the index; "
            f"its columns: {', '.join(map(str, frame.columns))}"
        )
    if frame[column].isna().any() or not frame[column].is_unique:
        raise InputError(
            f"the {role}'s column {column!r} cannot be the index: its values must "
            "be present and unique"
        )
    return frame.set_index(column)


def _say_written(
    say: Callable[[str], None], rows: int, output: str, saved: str | None
) -> None:
    where = "standard output" if output == "-" else output
    say(f"  wrote {rows:,} rows to {where}")
    if saved:
        say(saved)


#: The values of --one-to-one, as the ``one_to_one`` of link and merge.
_ONE_TO_ONE: dict[str, Any] = {"auto": "auto", "yes": True, "no": False}


#: Marks an option's default to be filled in after parsing (see fill_defaults).
UNSET: Any = object()

#: Defaults of the options set to UNSET in the parser: filled in after parsing,
#: so that a command knows which options were given (see refuse_ignored).
DEFAULTS: dict[str, Any] = {
    "recall": 0.95,
    "num_perm": 128,
    "max_bucket": 1_000,
    "keep": "first",
    "id_column": "cluster_id",
    "size_column": "cluster_size",
    "digits": 4,
    "distance": 3,
    "how": "inner",
}

#: Options whose default is None or False: given when they are not.
_UNLESS_NONE = (
    "min_score",
    "model",
    "save_model",
    "threshold",
    "pairs_output",
    "labels",
    "shingle",
)
_UNLESS_FALSE = ("input_order",)


def fill_defaults(arguments: argparse.Namespace) -> None:
    """Fill in the UNSET defaults; record the options given in ``given``."""
    given: set[str] = set()
    for name, default in DEFAULTS.items():
        if getattr(arguments, name, None) is UNSET:
            setattr(arguments, name, default)
        elif hasattr(arguments, name):
            given.add(name)
    given.update(name for name in _UNLESS_NONE if getattr(arguments, name, None))
    given.update(name for name in _UNLESS_FALSE if getattr(arguments, name, False))
    arguments.given = given


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def refuse_ignored(arguments: argparse.Namespace) -> None:
    """Refuse options the chosen mode would ignore: one line, exit 2.

    A silently ignored option is a wrong answer the user does not see (a
    ``--model`` file that does not exist, ``--keep last`` without ``--drop``).
    """
    given: set[str] = getattr(arguments, "given", set())
    reasons: list[tuple[tuple[str, ...], str]] = []
    if arguments.command == "dedupe":
        if arguments.method == "simhash":
            reasons.append((
                ("min_score", "model", "save_model", "threshold", "recall",
                 "num_perm", "max_bucket", "digits", "labels"),
                "does not apply to --method simhash (rows within --distance bits "
                "are one entity: no LSH keys, no scores, no model)",
            ))  # fmt: skip
        else:
            reasons.append((("distance",), "applies to --method simhash only"))
            if arguments.pairs_output is None:
                reasons.append((
                    ("digits",), "applies with --pairs-output only (its scores)",
                ))  # fmt: skip
        if arguments.drop:
            reasons.append((
                ("id_column", "size_column", "input_order"),
                "applies without --drop (with --drop each entity's one row is "
                "written, in the input's order, without ids)",
            ))  # fmt: skip
        else:
            reasons.append((
                ("keep",), "applies with --drop only (the row kept of each entity)",
            ))  # fmt: skip
    elif arguments.command == "link" and arguments.pairs:
        reasons.append((
            ("how",), "applies to the joined rows, not to --pairs (every pair)",
        ))  # fmt: skip
    for names, reason in reasons:
        for name in names:
            if name in given:
                raise InputError(f"{_flag(name)} {reason}; leave it out")
