"""The library's warnings and errors, said the command line's way: one line each.

The library speaks Python: ``Pass min_score= a number``, ``The 'threshold'
parameter of dedupe``, ``ids.attrs['lsh_frame']['review']``. On the command
line those become the options a user types (``--min-score``) and lose what only
a Python user can look at; a warning is printed as ``lsh-frame dedupe: warning:
...`` on one line, without Python's file name and source line.
"""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

#: The library's parameters that are options of the command line.
OPTIONS = {
    "min_score": "--min-score",
    "max_bucket": "--max-bucket",
    "max_pairs": "--max-pairs",
    "num_perm": "--num-perm",
    "threshold": "--threshold",
    "recall": "--recall",
    "seed": "--seed",
    "index_col": "--index-col",
    "id_column": "--id-column",
    "size_column": "--size-column",
    "distance": "--distance",
    "model": "--model",
    "keep": "--keep",
    "shingle": "--shingle",
    "how": "--how",
    "one_to_one": "--one-to-one",
    "right_on": "--right-on",
    "on": "--on",
    "subset": "--on",
    "fields": "--on",
}

_NAMES = "|".join(sorted(OPTIONS, key=len, reverse=True))
#: ``The 'min_score' parameter of dedupe`` → ``--min-score``.
_PARAMETER = re.compile(
    rf"[Tt]he '({_NAMES})' parameter of [\w. ]+?"
    r"(?= must| is | takes| needs| can| cannot| should| has| got|[.,;:]|$)"
)
#: ``min_score=`` (a keyword argument, often ``Pass min_score= ...``).
_KEYWORD = re.compile(rf"(?<![\w'-])({_NAMES})=")
#: A bare parameter name that cannot be an English word (it has an underscore).
_IDENTIFIER = re.compile(
    rf"(?<![\w'-])({'|'.join(name for name in OPTIONS if '_' in name)})(?![\w'])"
)
#: A clause that points at Python objects (``ids.attrs[...]``).
_PYTHON_CLAUSE = re.compile(r"[;,][^;,]*?\w+\.attrs(\[[^\]]*\])+")


def cli_text(message: str) -> str:
    """Return ``message`` with Python parameter names as command-line options.

    Examples
    --------
    >>> cli_text("Pass min_score= a number, or raise max_bucket.")
    'Pass --min-score a number, or raise --max-bucket.'
    >>> cli_text("The 'threshold' parameter of plan must be in (0, 1].")
    '--threshold must be in (0, 1].'
    """
    text = _PARAMETER.sub(lambda found: OPTIONS[found.group(1)], message)
    text = _KEYWORD.sub(lambda found: OPTIONS[found.group(1)] + " ", text)
    text = _IDENTIFIER.sub(lambda found: OPTIONS[found.group(1)], text)
    text = _PYTHON_CLAUSE.sub("", text)
    text = text.replace("  ", " ").strip()
    return text.replace("\r", "\\r").replace("\n", "\\n")


@contextmanager
def warnings_as_lines(command: str, stream: TextIO | None = None) -> Iterator[None]:
    """Print every warning raised in the block as one line, once.

    ``lsh-frame dedupe: warning: ...``: the message in the command line's
    words (:func:`cli_text`), without the Python source line.
    """
    seen: set[str] = set()

    def show(message: Any, category: Any, *_: Any, **__: Any) -> None:
        line = f"lsh-frame {command}: warning: {cli_text(str(message))}"
        if line not in seen:
            seen.add(line)
            print(line, file=stream if stream is not None else sys.stderr)

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        yield
