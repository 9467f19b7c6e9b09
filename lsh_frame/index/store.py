"""Writing an index to a folder and reading it back: Arrow files and a manifest."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from lsh_frame.block.fields import Field
from lsh_frame.errors import ConfigTypeError

if TYPE_CHECKING:
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
