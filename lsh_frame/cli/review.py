"""``lsh-frame review``: a review page of scored pairs saved by dedupe or link.

The pairs file is what ``lsh-frame dedupe --pairs-output`` or ``lsh-frame
link --pairs`` wrote; the records are the input(s) those read, with the same
``--index-col``. A saved file has lost the learned model, so ``--model``
(the JSON of ``--save-model``) brings back each pair's waterfall.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
import pandas as pd

from lsh_frame.cli.io import OK, InputError, _check_writable, read_table
from lsh_frame.cli.options import _columns, _csv_options, _indexed, _load_model
from lsh_frame.review.page import review

__all__ = ["run_review"]

_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no", ""}


def _numbers(pairs: pd.DataFrame) -> pd.DataFrame:
    """Scores as numbers and ``match`` as booleans (a CSV reads them as text)."""
    pairs = pairs.copy()
    for column in pairs.columns:
        name = str(column)
        if name in ("score", "match_probability") or name.endswith(
            ("_score", "_jaccard")
        ):
            converted = pd.to_numeric(pairs[column], errors="coerce")
            if (converted.isna() & pairs[column].notna()).any():
                raise InputError(
                    f"the pairs' column {name!r} holds values that are not numbers"
                )
            pairs[column] = converted.astype(np.float64)
    if "match" in pairs and not pd.api.types.is_bool_dtype(pairs["match"].dtype):
        words = pairs["match"].astype(str).str.strip().str.lower()
        unknown = ~words.isin(_TRUE | _FALSE | {"nan", "<na>", "none"})
        if unknown.any():
            raise InputError(
                f"the pairs' column 'match' holds {pairs['match'][unknown].iloc[0]!r}, "
                "which is neither True nor False"
            )
        pairs["match"] = words.isin(_TRUE)
    return pairs


def _same_labels(pairs: pd.DataFrame, column: str, index: pd.Index) -> pd.DataFrame:
    """Read the pairs' record ids as the records' labels are (numbers or text)."""
    values = pairs[column]
    if pd.api.types.is_integer_dtype(index.dtype) and not pd.api.types.is_integer_dtype(
        values.dtype
    ):
        converted = pd.to_numeric(values, errors="coerce")
        if converted.isna().any():
            raise InputError(
                f"the pairs' column {column!r} holds ids that are not the records' "
                "row numbers; give the --index-col the pairs were written with"
            )
        pairs[column] = converted.astype(np.int64)
    elif pd.api.types.is_string_dtype(index.dtype) and not (
        pd.api.types.is_string_dtype(values.dtype)
    ):
        pairs[column] = values.astype(str)
    return pairs


def run_review(arguments: argparse.Namespace, say: Callable[[str], None]) -> int:
    """``lsh-frame review``: write the HTML review page of saved scored pairs."""
    if not str(arguments.output).lower().endswith((".html", ".htm")):
        raise InputError(
            f"the review page is HTML: give -o a .html file, not {arguments.output!r}"
        )
    _check_writable(arguments.output, "page")
    options = _csv_options(arguments)
    pairs = _numbers(read_table(arguments.pairs, **options))
    frame = _indexed(
        read_table(arguments.input, **options), arguments.index_col, "input"
    )
    other = None
    if arguments.right is not None:
        other = _indexed(
            read_table(arguments.right, **options),
            arguments.right_index_col or arguments.index_col,
            "right table",
        )
    pairs = _same_labels(pairs, "left", frame.index)
    pairs = _same_labels(pairs, "right", (frame if other is None else other).index)
    model = None if arguments.model is None else _load_model(arguments.model)
    labels = None
    if arguments.labels is not None:
        labels = read_table(arguments.labels, **options)
        for column in ("left", "right"):
            if column in labels:
                table = frame if column == "left" or other is None else other
                labels = _same_labels(labels, column, table.index)
    if arguments.on:
        # The fields the page shows: the pairs' <column>_score of these only.
        keep = {f"{name}_score" for name in _columns(arguments.on)}
        pairs = pairs.drop(
            columns=[
                column
                for column in pairs.columns
                if str(column).endswith("_score") and column not in keep
            ]
        )
    right_on = _columns(arguments.right_on) if arguments.right_on else None
    page = review(
        pairs,
        frame,
        other,
        path=arguments.output,
        right_on=right_on,
        model=model,
        title=arguments.title,
        labels=labels,
    )
    size = page.stat().st_size
    say(
        f"lsh-frame review: {len(pairs):,} pairs → {page} ({size / 1_000_000:.1f} MB); "
        "open it in a browser"
    )
    return OK
