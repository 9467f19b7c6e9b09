"""Writing an index to a folder and reading it back: Arrow files and a manifest."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
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
from lsh_frame.errors import ConfigError, ConfigTypeError
from lsh_frame.index.tables import _KeyTable, _Segment, _Tokens, _Vocabulary
from lsh_frame.sketch.banding import LshPlan

if TYPE_CHECKING:
    from lsh_frame.index.index import Index
    from lsh_frame.sketch.banding import LshPlan


def _write(path: Path, arrays: dict[str, npt.NDArray[Any]]) -> None:
    _write_table(
        path, pa.table({name: pa.array(values) for name, values in arrays.items()})
    )


def _write_table(path: Path, table: pa.Table) -> None:
    with (
        pa.OSFile(str(path), "wb") as sink,
        pa.ipc.new_file(sink, table.schema) as writer,
    ):
        writer.write_table(table, max_chunksize=max(table.num_rows, 1))


def _read_table(path: Path) -> pa.Table:
    with pa.memory_map(str(path), "r") as source:
        return pa.ipc.open_file(source).read_all()


def _read(path: Path) -> dict[str, npt.NDArray[Any]]:
    table = _read_table(path)
    result = {}
    for name in table.column_names:
        column = table.column(name)
        array = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
        result[name] = array.to_numpy(zero_copy_only=False)
    return result


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


#: Name and version of the saved format (``index.json``).
FORMAT = "lsh_frame.index"


FORMAT_VERSION = 1


def save(self: Index, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
    """Write the index to a folder: Arrow IPC files and ``index.json``.

    Nothing is pickled: the manifest holds the format version, every
    setting, the fields, keys, comparisons and the model as JSON; the
    arrays are uncompressed Arrow files that :meth:`load` maps into memory.
    An existing folder raises ``FileExistsError`` unless ``overwrite``.
    The folder is written beside its final place and moved there at the
    end, so a failed save leaves any earlier one intact.
    """
    owner = "Index.save"
    overwrite = check_bool(overwrite, "overwrite", owner)
    target = Path(path)
    if target.exists() and not overwrite:
        raise FileExistsError(f"{target} exists. Give overwrite=True to replace it.")
    manifest = self._manifest(owner)
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".lsh_frame-", dir=target.parent))
    try:
        self._write_arrays(work)
        (work / "index.json").write_text(json.dumps(manifest, indent=1))
        if target.exists():
            shutil.rmtree(target)
        work.rename(target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


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


def _write_arrays(self: Index, folder: Path) -> None:
    state: dict[str, npt.NDArray[Any]] = {
        "alive": self._alive,
        "entities": self._entities,
    }
    if self._norms is not None:
        state["norms"] = self._norms
    _write(folder / "state.arrow", state)
    if self._vocabulary is not None:
        vocabulary = self._vocabulary
        _write(
            folder / "vocabulary.arrow",
            {
                "hashes": vocabulary.hashes,
                "weights": vocabulary.weights,
                "frequency": vocabulary.frequency,
            },
        )
    for number, frequencies in enumerate(self._plan.frequencies.values()):
        _write(
            folder / f"tfidf-{number}.arrow",
            {"tokens": frequencies.tokens, "counts": frequencies.counts},
        )
    for number, segment in enumerate(self._segments):
        _write_table(folder / f"records-{number}.arrow", segment.records)
        for key_number, table in enumerate(segment.keys):
            if table is not None:
                _write(
                    folder / f"keys-{number}-{key_number}.arrow",
                    {"keys": table.keys, "positions": table.positions},
                )
        if segment.tokens is not None:
            tokens = segment.tokens
            _write(
                folder / f"tokens-{number}.arrow",
                {
                    "hashes": tokens.hashes,
                    "weights": tokens.weights,
                    "starts": tokens.postings.starts,
                    "counts": tokens.postings.counts,
                },
            )
            _write(
                folder / f"postings-{number}.arrow",
                {"records": tokens.postings.records},
            )


def load(cls: type[Index], path: str | os.PathLike[str]) -> Index:
    """Read an index :meth:`save` wrote (its arrays mapped, not copied).

    Raises ``FileNotFoundError`` when the folder holds no index and
    :class:`~lsh_frame.ConfigError` for another format or a newer version.
    """
    folder = Path(path)
    manifest_path = folder / "index.json"
    if not manifest_path.is_file():
        raise FileNotFoundError(f"{folder} holds no lsh_frame index (no index.json).")
    manifest = json.loads(manifest_path.read_text())
    if manifest.get("format") != FORMAT:
        raise ConfigError(f"{manifest_path} is not an lsh_frame index.")
    if manifest.get("version") != FORMAT_VERSION:
        raise ConfigError(
            f"{folder} is an index of format version {manifest.get('version')!r}, "
            f"written by lsh_frame {manifest.get('lsh_frame')}; this lsh_frame "
            f"reads version {FORMAT_VERSION}. Build the index again."
        )
    settings = manifest["settings"]
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
    decision = manifest["decision"]
    min_score: Any = (
        MatchModel.from_dict(decision["model"])
        if "model" in decision
        else float(decision["min_score"])
    )
    frequencies = {}
    for number, (label, documents) in enumerate(manifest["tfidf"].items()):
        arrays = _read(folder / f"tfidf-{number}.arrow")
        frequencies[label] = DocumentFrequencies(
            arrays["tokens"], arrays["counts"], int(documents)
        )
    plan = ScorePlan(
        specs=fields,
        min_score=min_score,
        comparisons=dict(manifest["comparisons"]),
        values=False,
        estimate=None,
        link=True,
        frequencies=frequencies,
        swaps=tuple((first, second) for first, second in manifest.get("swaps", [])),
        shifts=tuple((first, second) for first, second in manifest.get("shifts", [])),
        nicknames=tuple(manifest.get("nicknames", [])),
        placeholders=read_placeholders(
            manifest.get("placeholders", {}), manifest["comparisons"], "Index.load"
        ),
        year_fields=tuple(manifest.get("year_fields", [])),
    )
    state = _read(folder / "state.arrow")
    vocabulary = None
    if manifest["vocabulary"] is not None:
        arrays = _read(folder / "vocabulary.arrow")
        vocabulary = _Vocabulary(
            hashes=arrays["hashes"],
            weights=arrays["weights"],
            frequency=arrays["frequency"],
            **manifest["vocabulary"],
        )
    segments = []
    for number, first in enumerate(manifest["segments"]):
        records = _read_table(folder / f"records-{number}.arrow")
        tables: list[_KeyTable | None] = []
        for key_number, key in enumerate(keys):
            if key.kind == "neighbours":
                tables.append(None)
                continue
            arrays = _read(folder / f"keys-{number}-{key_number}.arrow")
            tables.append(_KeyTable(arrays["keys"], arrays["positions"]))
        tokens = None
        if vocabulary is not None:
            arrays = _read(folder / f"tokens-{number}.arrow")
            postings = _read(folder / f"postings-{number}.arrow")
            tokens = _Tokens(
                arrays["hashes"],
                arrays["weights"],
                kernel.Postings(
                    postings["records"], arrays["starts"], arrays["counts"]
                ),
            )
        segments.append(_Segment(int(first), records, tables, tokens))
    index = cls(
        fields=fields,
        keys=keys,
        plan=plan,
        vocabulary=vocabulary,
        segments=segments,
        alive=np.array(state["alive"], dtype=bool),
        entities=np.array(state["entities"], dtype=np.int64),
        norms=state.get("norms"),
        next_id=int(manifest["next_id"]),
        settings=settings,
    )
    index._merges = list(manifest["merges"])
    return index
