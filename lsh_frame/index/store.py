"""Writing an index to a folder and reading it back: Arrow files and a manifest.

The manifest (``index.json``) holds the format version, every setting, the
fields, keys, comparisons and model as JSON, and (from format version 2) the
size and checksum of each Arrow file and the id of the save that wrote them.
How the folder is written and swapped in, and each file checked when read, is
in :mod:`lsh_frame.index.files`; what is checked of the manifest and of the
arrays, in :mod:`lsh_frame.index.checks`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from lsh_frame._kernels import neighbours as kernel
from lsh_frame._validation import check_bool
from lsh_frame.block.fields import BlockingKey, Field
from lsh_frame.compare.plan import ScorePlan
from lsh_frame.compare.tfidf import DocumentFrequencies
from lsh_frame.decide.model import MatchModel
from lsh_frame.decide.model_dict import placeholders_dict, read_placeholders
from lsh_frame.errors import ConfigTypeError, DamagedIndexError, LshFrameError
from lsh_frame.index.checks import (
    bad_manifest,
    check_length,
    check_range,
    check_sorted,
    columns,
    file_entry,
    read_manifest,
)
from lsh_frame.index.files import (
    FORMAT,
    damaged,
    read_arrow,
    recover,
    save_folder,
    write_arrow,
    write_text,
)
from lsh_frame.index.tables import _LABEL, _KeyTable, _Segment, _Tokens, _Vocabulary
from lsh_frame.sketch.banding import LshPlan

if TYPE_CHECKING:
    from collections.abc import Callable

    from lsh_frame.index.index import Index


_FIELD_NAMES = [item.name for item in dataclasses.fields(Field)]


def _field_dict(spec: Field) -> dict[str, Any]:
    values = {name: getattr(spec, name) for name in _FIELD_NAMES}
    values["columns"] = list(spec.columns)
    return values


def _field_arguments(values: dict[str, Any]) -> dict[str, Any]:
    arguments = {name: values[name] for name in _FIELD_NAMES if name in values}
    arguments["columns"] = tuple(arguments["columns"])
    return arguments


def _plan_dict(plan: LshPlan) -> dict[str, Any]:
    return {
        "threshold": plan.threshold,
        "recall": plan.recall,
        "num_perm": plan.num_perm,
        "bands": plan.bands,
        "rows": plan.rows,
        "expected_false_positives": plan.expected_false_positives,
        "metric": plan.metric,
    }


def _json_value(value: Any) -> Any:
    """Return a label as JSON holds it: text and numbers as they are, else text."""
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        value = value.item()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _check_json_label(column: Any, owner: str) -> None:
    if isinstance(column, bool) or not isinstance(column, (str, int)):
        raise ConfigTypeError(
            f"{owner} writes the column labels to JSON; {column!r} "
            f"({type(column).__name__}) is neither text nor an integer. Rename the "
            "column first."
        )


#: Token weights lie in [1, WEIGHT_LIMIT): they are packed into the neighbours'
#: sort codes beside a query's number.
WEIGHT_LIMIT = 1 << kernel.WEIGHT_BITS


#: Version of the saved format (``index.json``): 2 added each file's size
#: and checksum and the id of the save that wrote the files.
FORMAT_VERSION = 2

#: Versions :func:`load` reads. An index of version 1 has no checksums: it is
#: read with every other check, and saving it again writes version 2.
READABLE_VERSIONS = (1, 2)


def save(self: Index, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
    """Write the index to a folder: Arrow IPC files and ``index.json``.

    Nothing is pickled: the manifest holds the format version, every
    setting, the fields, keys, comparisons and the model as JSON, and each
    file's size and checksum; the arrays are uncompressed Arrow files that
    :meth:`load` maps into memory.

    The save is atomic: the new folder is written beside ``path`` (each
    file flushed to disk), the old index moved aside by one rename, the new
    one moved in by another, and the old one deleted last; any failure
    (``KeyboardInterrupt`` included) puts the old one back, and a process
    killed between the renames leaves the old one aside, put back by the
    next :meth:`load` or save. At every moment a whole index can be loaded
    from ``path``. Folders left beside it by killed saves are removed by the
    next save.

    Raises :class:`~lsh_frame.FolderExistsError` (a ``FileExistsError``)
    when ``path`` exists and ``overwrite`` is False, and when ``overwrite``
    would replace anything but an lsh_frame index (a folder whose
    ``index.json`` says so) or an empty folder.
    """
    owner = "Index.save"
    overwrite = check_bool(overwrite, "overwrite", owner)
    manifest = self._manifest(owner)
    save_id = uuid.uuid4().hex

    def write(folder: Path) -> None:
        files = self._write_arrays(folder, save_id)
        text = json.dumps({**manifest, "save_id": save_id, "files": files}, indent=1)
        write_text(folder / "index.json", text)

    save_folder(path, write, overwrite=overwrite, owner=owner)


def _manifest(self: Index, owner: str) -> dict[str, Any]:
    from lsh_frame._version import __version__

    settings = self._settings
    for column in settings["columns"]:
        _check_json_label(column, owner)
    model = self._plan.given_model
    vocabulary = self._vocabulary
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "lsh_frame": __version__,
        "settings": {
            **settings,
            "index_name": (
                [_json_value(part) for part in settings["index_name"]]
                if isinstance(settings["index_name"], tuple)
                else _json_value(settings["index_name"])
            ),
        },
        "fields": [_field_dict(spec) for spec in self._fields],
        "keys": [
            {
                "field": _field_dict(key.field),
                "kind": key.kind,
                "plan": None if key.plan is None else _plan_dict(key.plan),
            }
            for key in self._keys
        ],
        "comparisons": self._plan.comparisons,
        # Fields scored crossed when they match better so (older
        # indexes have none).
        "swaps": [list(pair) for pair in self._plan.swaps],
        "shifts": [list(pair) for pair in self._plan.shifts],
        "nicknames": list(self._plan.nicknames),
        # Placeholder days of date fields (older indexes have none).
        "placeholders": placeholders_dict(self._plan.placeholders),
        "year_fields": list(self._plan.year_fields),
        "decision": (
            {"model": model.to_dict()}
            if model is not None
            else {"min_score": float(self._plan.min_score)}  # type: ignore[arg-type]
        ),
        "tfidf": {
            label: frequencies.documents
            for label, frequencies in self._plan.frequencies.items()
        },
        "vocabulary": (
            None
            if vocabulary is None
            else {"records": vocabulary.records, "cap": vocabulary.cap}
        ),
        "segments": [segment.first for segment in self._segments],
        "next_id": self._next_id,
        # Labels other than text and numbers (dates) are written as text.
        "merges": [
            {**merge, "records": [_json_value(label) for label in merge["records"]]}
            for merge in self._merges
        ],
    }


def _write(
    folder: Path, name: str, arrays: dict[str, npt.NDArray[Any]], save_id: str
) -> dict[str, Any]:
    table = pa.table({column: pa.array(values) for column, values in arrays.items()})
    return write_arrow(folder / name, table, save_id)


def _write_arrays(self: Index, folder: Path, save_id: str) -> dict[str, Any]:
    """Write the index's Arrow files; return each file's size and checksum."""
    files: dict[str, Any] = {}

    def write(name: str, arrays: dict[str, npt.NDArray[Any]]) -> None:
        files[name] = _write(folder, name, arrays, save_id)

    state: dict[str, npt.NDArray[Any]] = {
        "alive": self._alive,
        "entities": self._entities,
    }
    if self._norms is not None:
        state["norms"] = self._norms
    write("state.arrow", state)
    if self._vocabulary is not None:
        vocabulary = self._vocabulary
        write(
            "vocabulary.arrow",
            {
                "hashes": vocabulary.hashes,
                "weights": vocabulary.weights,
                "frequency": vocabulary.frequency,
            },
        )
    for number, frequencies in enumerate(self._plan.frequencies.values()):
        write(
            f"tfidf-{number}.arrow",
            {"tokens": frequencies.tokens, "counts": frequencies.counts},
        )
    for number, segment in enumerate(self._segments):
        name = f"records-{number}.arrow"
        files[name] = write_arrow(folder / name, segment.records, save_id)
        for key_number, table in enumerate(segment.keys):
            if table is not None:
                write(
                    f"keys-{number}-{key_number}.arrow",
                    {"keys": table.keys, "positions": table.positions},
                )
        if segment.tokens is not None:
            tokens = segment.tokens
            write(
                f"tokens-{number}.arrow",
                {
                    "hashes": tokens.hashes,
                    "weights": tokens.weights,
                    "starts": tokens.postings.starts,
                    "counts": tokens.postings.counts,
                },
            )
            write(f"postings-{number}.arrow", {"records": tokens.postings.records})
    return files


def load(
    cls: type[Index], path: str | os.PathLike[str], *, checksums: bool = True
) -> Index:
    """Read an index :meth:`save` wrote (its arrays mapped, not copied).

    Everything is checked before the index answers: the manifest's shape
    and version, each Arrow file in full (``validate(full=True)``), that
    every file was written by the same save, the arrays' lengths and
    ranges against each other and the manifest, and each file's checksum.
    Checksums read every byte (about a second per GB); ``checksums=False``
    skips them for huge indexes, keeping every other check: damage is still
    refused, but numbers changed within their ranges may go unnoticed. An
    index saved before checksums were kept (format version 1) is read with
    the other checks.

    Raises ``FileNotFoundError`` when the folder holds no index,
    :class:`~lsh_frame.DamagedIndexError` (a
    :class:`~lsh_frame.ConfigError`) naming the folder and the file when
    the index is damaged, foreign or mixes files of two indexes, and
    :class:`~lsh_frame.ConfigError` for a newer format version. When a
    save was killed between its two renames, the old index it had moved
    aside is put back first.
    """
    owner = "Index.load"
    checksums = check_bool(checksums, "checksums", owner)
    folder = Path(path)
    found = recover(Path(os.path.abspath(folder)))
    if found is not None:
        folder = found
    if not (folder / "index.json").is_file():
        raise FileNotFoundError(f"{folder} holds no lsh_frame index (no index.json).")
    manifest = read_manifest(folder, FORMAT_VERSION, READABLE_VERSIONS)
    try:
        settings, fields, keys, plan, documents = _interpreted(manifest)
    except DamagedIndexError:
        raise
    except (LshFrameError, KeyError, TypeError, ValueError, AttributeError) as error:
        detail = str(error).splitlines()[0] if str(error) else ""
        raise bad_manifest(folder, f"{type(error).__name__}: {detail}") from None
    save_id = manifest.get("save_id")

    def read(name: str) -> pa.Table:
        entry = file_entry(manifest, folder, name)
        return read_arrow(folder, name, entry, save_id, checksums=checksums)

    frequencies = {}
    for number, (label, count) in enumerate(documents.items()):
        name = f"tfidf-{number}.arrow"
        arrays = columns(read(name), folder, name, {"tokens": "u8", "counts": "i8"})
        check_sorted(arrays["tokens"], folder, name, "tokens", strict=True)
        frequencies[label] = DocumentFrequencies(
            arrays["tokens"], arrays["counts"], count
        )
    plan = dataclasses.replace(plan, frequencies=frequencies)
    vocabulary = None
    if manifest["vocabulary"] is not None:
        name = "vocabulary.arrow"
        arrays = columns(
            read(name),
            folder,
            name,
            {"hashes": "u8", "weights": "u8", "frequency": "i8"},
        )
        check_sorted(arrays["hashes"], folder, name, "token hashes", strict=True)
        check_range(arrays["weights"], 1, WEIGHT_LIMIT, folder, name, "weights")
        check_range(arrays["frequency"], 1, 1 << 62, folder, name, "frequencies")
        vocabulary = _Vocabulary(
            hashes=arrays["hashes"],
            weights=arrays["weights"],
            frequency=arrays["frequency"],
            records=manifest["vocabulary"]["records"],
            cap=manifest["vocabulary"]["cap"],
        )
    firsts = manifest["segments"]
    segments = [
        _read_segment(read, folder, number, firsts, settings, keys, vocabulary)
        for number in range(len(firsts))
    ]
    total = firsts[-1] + segments[-1].size
    name = "state.arrow"
    state = columns(
        read(name),
        folder,
        name,
        {"alive": "?", "entities": "i8", "norms": "f8"},
        optional=("norms",),
    )
    check_length(state["alive"].size, total, folder, name, "records")
    next_id = manifest["next_id"]
    check_range(state["entities"], -1, next_id, folder, name, "entity ids")
    norms = state.get("norms")
    if (norms is None) != (vocabulary is None):
        raise damaged(folder, name, "does not hold the records' norms as its keys need")
    if norms is not None and not (np.isfinite(norms).all() and (norms >= 0).all()):
        raise damaged(folder, name, "holds norms that are not finite numbers >= 0")
    index = cls(
        fields=fields,
        keys=keys,
        plan=plan,
        vocabulary=vocabulary,
        segments=segments,
        alive=np.array(state["alive"], dtype=bool),
        entities=np.array(state["entities"], dtype=np.int64),
        norms=norms,
        next_id=next_id,
        settings=settings,
    )
    index._merges = list(manifest["merges"])
    return index


def _interpreted(
    manifest: dict[str, Any],
) -> tuple[dict[str, Any], list[Field], list[BlockingKey], ScorePlan, dict[str, int]]:
    """Return the settings, fields, keys, plan and TF-IDF documents of a manifest.

    The plan's frequencies are read from their files afterwards.
    """
    settings = dict(manifest["settings"])
    if isinstance(settings.get("index_name"), list):  # JSON has no tuples
        settings["index_name"] = tuple(settings["index_name"])
    fields = [Field(**_field_arguments(spec)) for spec in manifest["fields"]]
    keys = [
        BlockingKey(
            Field(**_field_arguments(key["field"])),
            key["kind"],
            None if key["plan"] is None else LshPlan(**key["plan"]),
        )
        for key in manifest["keys"]
    ]
    if not keys:
        raise ValueError("the index has no blocking key")
    neighbours = sum(key.kind == "neighbours" for key in keys)
    if neighbours > 1 or bool(neighbours) != (manifest["vocabulary"] is not None):
        raise ValueError("its keys and its vocabulary disagree")
    decision = manifest["decision"]
    min_score: Any = (
        MatchModel.from_dict(decision["model"])
        if "model" in decision
        else float(decision["min_score"])
    )
    documents = {}
    for label, count in manifest["tfidf"].items():
        if isinstance(count, bool) or not isinstance(count, int):
            raise TypeError(f"the documents of {label!r} are not a count")
        documents[label] = count
    plan = ScorePlan(
        specs=fields,
        min_score=min_score,
        comparisons=dict(manifest["comparisons"]),
        values=False,
        estimate=None,
        link=True,
        frequencies={},
        swaps=tuple((first, second) for first, second in manifest.get("swaps", [])),
        shifts=tuple((first, second) for first, second in manifest.get("shifts", [])),
        nicknames=tuple(manifest.get("nicknames", [])),
        placeholders=read_placeholders(
            manifest.get("placeholders", {}), manifest["comparisons"], "Index.load"
        ),
        year_fields=tuple(manifest.get("year_fields", [])),
    )
    return settings, fields, keys, plan, documents


def _read_segment(
    read: Callable[[str], pa.Table],
    folder: Path,
    number: int,
    firsts: list[int],
    settings: dict[str, Any],
    keys: list[BlockingKey],
    vocabulary: _Vocabulary | None,
) -> _Segment:
    """Read and check one segment's records, key tables and tokens."""
    first = firsts[number]
    name = f"records-{number}.arrow"
    records = read(name)
    expected = [f"c{column}" for column in range(len(settings["columns"]))]
    if records.column_names != [*expected, _LABEL]:
        raise damaged(
            folder,
            name,
            f"holds the columns {records.column_names[:8]}, not {[*expected, _LABEL]}",
        )
    size = records.num_rows
    if number + 1 < len(firsts):
        check_length(size, firsts[number + 1] - first, folder, name, "records")
    elif size == 0 and number > 0:
        raise damaged(folder, name, "holds no records")
    stop = first + size
    tables: list[_KeyTable | None] = []
    for key_number, key in enumerate(keys):
        if key.kind == "neighbours":
            tables.append(None)
            continue
        name = f"keys-{number}-{key_number}.arrow"
        arrays = columns(read(name), folder, name, {"keys": "u8", "positions": "i8"})
        check_sorted(arrays["keys"], folder, name, "keys", strict=False)
        check_range(arrays["positions"], first, stop, folder, name, "record positions")
        tables.append(_KeyTable(arrays["keys"], arrays["positions"]))
    tokens = None
    if vocabulary is not None:
        name = f"tokens-{number}.arrow"
        arrays = columns(
            read(name),
            folder,
            name,
            {"hashes": "u8", "weights": "u8", "starts": "i8", "counts": "i8"},
        )
        check_sorted(arrays["hashes"], folder, name, "token hashes", strict=True)
        check_range(arrays["weights"], 1, WEIGHT_LIMIT, folder, name, "weights")
        postings_name = f"postings-{number}.arrow"
        held = columns(read(postings_name), folder, postings_name, {"records": "i8"})[
            "records"
        ]
        check_range(held, first, stop, folder, postings_name, "record positions")
        starts, counts = arrays["starts"], arrays["counts"]
        check_range(starts, 0, held.size + 1, folder, name, "posting starts")
        check_range(counts, 0, held.size + 1, folder, name, "posting counts")
        check_range(starts + counts, 0, held.size + 1, folder, name, "posting ends")
        tokens = _Tokens(
            arrays["hashes"],
            arrays["weights"],
            kernel.Postings(held, starts, counts),
        )
    return _Segment(first, records, tables, tokens)
