"""The data of a review page: scored pairs, their records and entities, columnar.

Everything the page shows is computed here, vectorised over all pairs, and
handed to the page as one compact JSON object of parallel arrays (one array
per column, not one object per pair), so that 100,000 pairs stay a few
megabytes and parse in milliseconds:

- ``tables``: the records the pairs name (only those), each table's index
  labels and its compared columns' values as text (``null`` when missing);
- ``pairs``: per pair its records (positions in ``tables``; the left ones as
  steps from the pair before), score and match probability (integers in
  thousandths and ten-thousandths), decision, the keys that found it, and
  per field its score;
- ``model``: per pair its prior and, per field, its level and weight in bits
  (a code into the field's table of readings), so the page draws each pair's
  waterfall exactly as :func:`lsh_frame.explain` reads it;
- ``readings``: the pairs read specially (crossed fields, nicknames ...);
- ``answers``: answers given before (``labels=``), which the page starts with;
- ``entities``: the entity of every record (connected components of the
  matches, as :func:`lsh_frame.cluster` forms them).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame._kernels.components import components, first_appearance_ids
from lsh_frame._validation import check_frame, check_pairs
from lsh_frame.block.fields import mapped_columns
from lsh_frame.compare.levels import level_names
from lsh_frame.decide.labels import check_labels, pair_codes, place_answers
from lsh_frame.decide.model import MatchModel
from lsh_frame.decide.weak_keys import found_only_by
from lsh_frame.errors import ColumnError, ConfigError

__all__ = ["build_payload"]

#: Missing values in the integer-coded arrays.
MISSING = -1


def _milli(values: Any, scale: int) -> list[int]:
    """Round ``values`` in [0, 1] to integers of ``1 / scale``; NaN is -1."""
    array = np.asarray(values, dtype=np.float64)
    coded = np.where(np.isnan(array), MISSING, np.rint(array * scale))
    return coded.astype(np.int64).tolist()


def _texts(values: pd.Series) -> list[str | None]:
    """Return the values as display text; missing values are None."""
    missing = values.isna().to_numpy()
    text = values.astype(str).to_numpy(dtype=object)
    text[missing] = None
    return list(text.tolist())


def _labels(index: pd.Index) -> list[Any]:
    """Index labels that JSON keeps as they are (numbers, text); others as text."""
    if pd.api.types.is_integer_dtype(index.dtype) or pd.api.types.is_string_dtype(
        index.dtype
    ):
        return list(index.tolist())
    return [str(label) for label in index.tolist()]


def _positions(index: pd.Index, labels: pd.Series, role: str, owner: str) -> Any:
    positions = index.get_indexer_for(pd.Index(labels.to_numpy()))
    if (positions < 0).any():
        unknown = labels.to_numpy()[positions < 0][:3].tolist()
        table = "the other table" if role == "right (other)" else "the frame"
        raise ColumnError(
            f"The pairs passed to {owner} name records in their "
            f"{role.split()[0]!r} column that are not in {table} (for example "
            f"{unknown}). Pass the frame(s) the pairs were scored on."
        )
    return positions


def _compared_columns(
    scored: pd.DataFrame, frame: pd.DataFrame, attrs: dict[str, Any]
) -> tuple[list[str], list[Any]]:
    """Return the fields (``<field>_score``) and the columns they compare."""
    recorded = attrs.get("columns")
    if isinstance(recorded, dict) and recorded:
        fields = [str(label) for label in recorded]
        columns = list(dict.fromkeys(c for given in recorded.values() for c in given))
        return fields, columns
    fields = [
        str(name)[: -len("_score")]
        for name in scored.columns
        if str(name).endswith("_score") and str(name)[: -len("_score")] in frame
    ]
    return fields, fields or list(frame.columns)


def _model(scored: pd.DataFrame, model: Any, owner: str) -> MatchModel | None:
    if model is None:
        recorded = scored.attrs.get("lsh_frame", {})
        model = recorded.get("model") if isinstance(recorded, dict) else None
    if model is None:
        return None
    return MatchModel.from_dict(model, owner, "model")


def _waterfall(
    scored: pd.DataFrame, model: MatchModel, fields: list[str], owner: str
) -> dict[str, Any]:
    """Each pair's prior and per-field levels and weights, as explain reads them."""
    missing = [label for label in model.m if f"{label}_score" not in scored]
    if missing:
        raise ColumnError(
            f"The model passed to {owner} reads the field {missing[0]!r}, and the "
            f"pairs have no {missing[0] + '_score'!r} column. Pass the pairs scored "
            "with that model."
        )
    # The pairs only a weak key found start from alone_prior, as score reads them.
    alone = found_only_by(scored, model.alone_keys)
    evidence = model.evidence(
        {
            label: scored[f"{label}_score"].to_numpy(dtype=np.float64)
            for label in model.m
        },
        alone,
    )
    # explain's order: the fields as given, then the identifier codes.
    order = [label for label in fields if label in model.m]
    order += [label for label in model.m if label not in order]
    starts, start_codes = np.unique(np.round(evidence.start, 6), return_inverse=True)
    result: dict[str, Any] = {
        "starts": starts.tolist(),
        "start": start_codes.astype(np.int64).tolist(),
        "fields": [],
    }
    for label in order:
        # One code per pair into the field's distinct (level, weight) readings:
        # a level's weight is one number unless fields are read together.
        weights, weight_codes = np.unique(
            np.round(evidence.weights[label], 4), return_inverse=True
        )
        levels = evidence.levels[label].astype(np.int64)
        count = weights.size
        readings, codes = np.unique(
            levels * count + weight_codes.reshape(-1), return_inverse=True
        )
        result["fields"].append(
            {
                "field": label,
                "levels": [*level_names(model.cuts_of(label)), "missing"],
                "readings": [
                    [int(reading // count), float(weights[reading % count])]
                    for reading in readings
                ],
                "code": codes.reshape(-1).astype(np.int64).tolist(),
            }
        )
    return result


def _deltas(values: npt.NDArray[np.int64]) -> list[int]:
    """Each value less the one before (the page adds them up): shorter text."""
    return np.diff(values, prepend=0).astype(np.int64).tolist()


def _readings(scored: pd.DataFrame, attrs: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the special readings of pairs, as explain names them, and their pairs.

    Fields scored crossed (their values trade places), a value read shifted
    into another field, familiar forms of one given name, an initial. Each
    lists the positions of its pairs (few, so sparse).
    """
    found: list[tuple[str, str]] = []
    for check in attrs.get("swaps", []):
        first, second = check["fields"]
        found.append(
            (
                f"{first}_{second}_swapped",
                f"{first} and {second} scored crossed: each against the other "
                "record's other field (the two trade places in these tables)",
            )
        )
    for check in attrs.get("shifts", []):
        field, into = check["field"], check["into"]
        found.append(
            (
                f"{field}_as_{into}",
                f"read shifted: one record has no {into} and its {field} is read as "
                f"its {into}",
            )
        )
    for label in attrs.get("columns", {}):
        found.append(
            (
                f"{label}_nickname",
                f"{label}: familiar forms of one given name, read as nearly agreeing",
            )
        )
        found.append(
            (
                f"{label}_initial",
                f"{label}: an initial of the other name, read as agreeing at the "
                "lowest level",
            )
        )
    readings = []
    for column, text in found:
        if column in scored and pd.api.types.is_bool_dtype(scored[column].dtype):
            rows = np.flatnonzero(scored[column].to_numpy(dtype=bool))
            if rows.size:
                readings.append({"text": text, "pairs": rows.tolist()})
    return readings


def _given_answers(
    labels: Any,
    frame: pd.DataFrame,
    other: pd.DataFrame | None,
    left_at: npt.NDArray[np.int64],
    right_at: npt.NDArray[np.int64],
    owner: str,
) -> dict[str, Any] | None:
    """Answers given before, placed on the page's pairs; the others kept aside.

    An answered pair among the pairs starts the page marked (``pairs``, their
    rows, and ``match``: 1, 0 or None for unsure); an answered pair the page
    does not show travels as it is (``others``) so that the export keeps it.
    """
    answers = check_labels(labels, owner)
    if answers is None:
        return None
    placed = place_answers(answers, frame, other, owner)
    right_size = len(frame if other is None else other)
    shown = pair_codes(left_at, right_at, right_size, placed.link)
    known, first = np.unique(shown, return_index=True)
    wanted = placed.codes(right_size)
    at = np.minimum(np.searchsorted(known, wanted), max(known.size - 1, 0))
    found = known[at] == wanted if known.size else np.zeros(wanted.size, dtype=bool)
    right_frame = frame if other is None else other

    def coded(values: npt.NDArray[np.float64]) -> list[int | None]:
        return [None if value != value else int(value) for value in values.tolist()]

    return {
        "pairs": first[at[found]].astype(np.int64).tolist(),
        "match": coded(placed.match[found]),
        "others": {
            "left": _labels(frame.index[placed.left[~found]]),
            "right": _labels(right_frame.index[placed.right[~found]]),
            "match": coded(placed.match[~found]),
        },
    }


def _entities(
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
    match: npt.NDArray[np.bool_],
    sizes: tuple[int, int],
) -> list[int]:
    """Entity of every record shown (left table's, then the right one's).

    ``sizes``: the records of each table; a dedupe's second size is 0 (its
    pairs' right records are in the first table).
    """
    nodes = sizes[0] + sizes[1]
    shift = sizes[0] if sizes[1] else 0
    roots = components(nodes, left[match], right[match] + shift)
    return first_appearance_ids(roots).astype(np.int64).tolist()


def _decision(
    scored: pd.DataFrame, attrs: dict[str, Any], model: MatchModel | None, owner: str
) -> tuple[npt.NDArray[np.bool_], str, float | None]:
    """Return each pair's match, the column the cut applies to, and the cut."""
    cut: float | None
    if model is not None and "match_probability" in scored:
        column, cut = "match_probability", float(model.match_cut)
    else:
        column = "score"
        chosen = attrs.get("min_score")
        cut = float(chosen) if isinstance(chosen, (int, float)) else None
    if "match" in scored:
        return scored["match"].fillna(False).to_numpy(dtype=bool), column, cut
    if cut is None:
        raise ConfigError(
            f"The pairs passed to {owner} have no 'match' column and no recorded "
            "min_score. Pass pairs from score() or pairs(), which decide matches."
        )
    return scored[column].to_numpy(dtype=np.float64) >= cut, column, cut


def build_payload(
    scored: pd.DataFrame,
    frame: pd.DataFrame,
    other: pd.DataFrame | None = None,
    *,
    right_on: Any = None,
    model: Any = None,
    title: str | None = None,
    labels: Any = None,
    owner: str = "review",
) -> dict[str, Any]:
    """Return the page's data for scored pairs of ``frame`` (and ``other``).

    Examples
    --------
    >>> frame = pd.DataFrame({"name": ["ann lee", "anne lee", "bob"]})
    >>> scored = pd.DataFrame({"left": [0, 0], "right": [1, 2],
    ...                        "name_score": [0.93, 0.2], "score": [0.93, 0.2],
    ...                        "match": [True, False]})
    >>> data = build_payload(scored, frame)
    >>> data["tables"][0]["columns"]["name"], data["pairs"]["score"]
    (['ann lee', 'anne lee', 'bob'], [930, 200])
    >>> data["entities"]
    [0, 0, 1]
    """
    scored = check_pairs(scored, owner)
    frame = check_frame(frame, "frame", owner)
    if "score" not in scored:
        raise ColumnError(
            f"The pairs passed to {owner} have no 'score' column. Pass scored pairs "
            "(from score() or pairs())."
        )
    attrs = scored.attrs.get("lsh_frame", {})
    attrs = attrs if isinstance(attrs, dict) else {}
    link = other is not None
    fields, columns = _compared_columns(scored, frame, attrs)
    right_frame = frame if other is None else check_frame(other, "other", owner)
    right_names = {column: column for column in columns}
    if other is not None:
        mapped = mapped_columns(frame, columns, right_frame, right_on, owner)
        if mapped is not None:
            right_names = dict(mapped)
    absent = [column for column in columns if column not in frame]
    if absent:
        raise ColumnError(
            f"The frame passed to {owner} has no column {absent[0]!r}, which the "
            "pairs compared. Pass the frame the pairs were scored on."
        )
    left_at = _positions(frame.index, scored["left"], "left", owner)
    right_at = _positions(
        right_frame.index, scored["right"], "right (other)" if link else "right", owner
    )
    # Only the records the pairs name travel to the page, renumbered.
    if link:
        left_used, left_codes = np.unique(left_at, return_inverse=True)
        right_used, right_codes = np.unique(right_at, return_inverse=True)
        tables = [
            (frame, left_used, {c: c for c in columns}),
            (right_frame, right_used, right_names),
        ]
    else:
        left_used, codes = np.unique(
            np.concatenate([left_at, right_at]), return_inverse=True
        )
        left_codes, right_codes = codes[: left_at.size], codes[left_at.size :]
        right_used = left_used
        tables = [(frame, left_used, {c: c for c in columns})]
    learned = _model(scored, model, owner)
    match, cut_column, cut = _decision(scored, attrs, learned, owner)
    found_by = (
        scored["found_by"].astype("category")
        if "found_by" in scored
        else pd.Series(pd.Categorical([""] * len(scored)))
    )
    pairs: dict[str, Any] = {
        # Pairs come sorted by their left record: small steps.
        "left": _deltas(left_codes.astype(np.int64)),
        "right": right_codes.astype(np.int64).tolist(),
        "score": _milli(scored["score"], 1000),
        "probability": (
            _milli(scored["match_probability"], 10_000)
            if "match_probability" in scored
            else None
        ),
        "match": match.astype(np.int64).tolist(),
        "found_by": found_by.cat.codes.astype(np.int64).tolist(),
        "keys": [str(key) for key in found_by.cat.categories],
        "fields": {
            label: _milli(scored[f"{label}_score"], 1000)
            for label in fields
            if f"{label}_score" in scored
        },
    }
    payload: dict[str, Any] = {
        "title": title or "lsh_frame review",
        "link": link,
        "fields": fields,
        "columns": [str(column) for column in columns],
        "tables": [
            {
                "labels": _labels(table.index[used]),
                "columns": {
                    str(column): _texts(table[names[column]].iloc[used])
                    for column in columns
                },
            }
            for table, used, names in tables
        ],
        "pairs": pairs,
        "cut": {"column": cut_column, "at": cut},
        "readings": _readings(scored, attrs),
        "model": (
            None if learned is None else _waterfall(scored, learned, fields, owner)
        ),
        "entities": _entities(
            left_codes.astype(np.int64),
            right_codes.astype(np.int64),
            match,
            (left_used.size, right_used.size if link else 0),
        ),
    }
    payload["answers"] = _given_answers(
        labels, frame, other, left_at.astype(np.int64), right_at.astype(np.int64), owner
    )
    if learned is not None:
        payload["model"]["match_cut"] = float(learned.match_cut)
        payload["model"]["matching"] = learned.matching is not None
    return payload


def page_key(data: str) -> str:
    """Return a short fingerprint of the data (the page keeps answers under it)."""
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:16]
