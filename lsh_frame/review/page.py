"""Write the review page: one HTML file with its data, script and style inline."""

from __future__ import annotations

import json
import os
import re
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from lsh_frame._version import __version__
from lsh_frame.errors import ConfigTypeError
from lsh_frame.review.payload import build_payload, page_key

__all__ = ["render", "review", "write_atomically"]

_PLACEHOLDER = re.compile(r"__(VERSION|TITLE|STYLE|KEY|SCRIPT|DATA)__")


def _asset(name: str) -> str:
    folder = resources.files("lsh_frame.review") / "assets"
    return (folder / name).read_text(encoding="utf-8")


def _html_text(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
    )


def render(payload: dict[str, Any]) -> str:
    r"""Return the page's HTML for a payload of :func:`build_payload`.

    The data is JSON inside a ``<script type="application/json">`` block;
    every ``<`` in it is written ``\u003c`` so that no value can close the
    block (JSON reads it back as ``<``).
    """
    data = json.dumps(
        payload,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=str,  # labels of other kinds (dates, ...) travel as text
    ).replace("<", "\\u003c")
    values = {
        "VERSION": __version__,
        "TITLE": _html_text(payload["title"]),
        "STYLE": _asset("review.css"),
        "KEY": page_key(data),
        "SCRIPT": _asset("review.js"),
        "DATA": data,
    }
    # One pass over the template: text put in is never read for placeholders.
    return _PLACEHOLDER.sub(lambda found: values[found.group(1)], _asset("review.html"))


def write_atomically(text: str, path: str | os.PathLike[str]) -> Path:
    """Write ``text`` to ``path`` through a temporary file beside it, then rename.

    A reader never sees a half-written page, and a failed write leaves any
    earlier page in place.
    """
    target = Path(path)
    handle, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def review(
    scored: pd.DataFrame,
    frame: pd.DataFrame,
    other: pd.DataFrame | None = None,
    /,
    *,
    path: str | os.PathLike[str] = "review.html",
    right_on: Any = None,
    model: Any = None,
    title: str | None = None,
    labels: pd.DataFrame | None = None,
) -> Path:
    """Write a review page of scored pairs: one self-contained HTML file.

    The page lists the entities (the matches' connected components; largest,
    most doubtful or searched first) and the pairs, paged and filtered
    (doubtful only, entity size, the key that found a pair, decision, a
    search of the records' values). An entity shows its records side by side
    with the characters that differ from its first record marked; a pair
    shows both records, each field's score, level and weight in bits, and
    the waterfall from the prior to its match probability, as
    :func:`lsh_frame.explain` reads it. The distribution of match
    probabilities is drawn with the cut.

    A person marks pairs (same entity, different, unsure) or a whole entity
    (all its pairs inside it right or wrong); the answers are kept in the
    browser's storage (they survive a reload) and download as a CSV with
    columns ``left``, ``right``, ``match``: the ``labels=`` frame of
    :func:`lsh_frame.pairs` and :func:`lsh_frame.score`. Read it with
    ``pd.read_csv("answers.csv")`` (add ``dtype={"left": str, "right": str}``
    when the records' labels are text that looks like numbers).

    Nothing is fetched from the internet: the script, style and data are
    inside the file, which opens from disk or in Jupyter
    (``IPython.display.IFrame(path, "100%", 700)``).

    Parameters
    ----------
    scored : DataFrame
        Scored pairs (from :func:`lsh_frame.pairs` or :func:`lsh_frame.score`);
        their ``attrs`` carry the model and the compared columns.
    frame : DataFrame
        The records (the left table when linking).
    other : DataFrame, optional
        The right table when linking.
    path : str or path-like
        Where to write the page (written aside, then renamed into place).
    right_on : list or dict, optional
        ``other``'s names of the compared columns, as given to ``pairs``.
    model : dict or MatchModel, optional
        The learned model that reads the pairs, when their ``attrs`` lost it
        (pairs read back from CSV); saved by ``--save-model`` or taken from
        ``attrs["lsh_frame"]["model"]``.
    title : str, optional
        The page's title.
    labels : DataFrame, optional
        Answers given before (columns ``left``, ``right``, ``match``: an
        export of an earlier page): the page starts with them marked, and
        its export keeps them, those of pairs it does not show included.
        Answers made in the browser since win over them.

    Returns
    -------
    Path
        The page's path.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import lsh_frame as lf
    >>> people = lf.datasets.make_customers(300, seed=3)
    >>> scored = lf.pairs(people, ["given_name", "surname", "date_of_birth"])
    >>> folder = tempfile.mkdtemp()
    >>> page = lf.review(scored, people, path=pathlib.Path(folder, "review.html"))
    >>> page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    True
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ConfigTypeError(
            "The 'path' parameter of review must be a file path (str or Path). "
            f"Got {type(path).__name__} instead."
        )
    payload = build_payload(
        scored,
        frame,
        other,
        right_on=right_on,
        model=model,
        title=title,
        labels=labels,
    )
    return write_atomically(render(payload), path)
