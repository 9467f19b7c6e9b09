"""What loading checks of a saved index: the manifest's shape, the arrays' ranges.

A file can be a whole Arrow file and still be wrong for its index: another
index's, cut from a copy, or numbers changed by a bad disk. Before an index
answers anything, :meth:`Index.load` checks that the manifest has the shape a
save writes, and that the arrays agree with it and with each other (lengths,
dtypes, sorted keys, record positions inside their segment), so that damage
raises :class:`~lsh_frame.DamagedIndexError` naming the folder and the file,
never an ``IndexError`` or a crash in a later query. Numbers changed within
their ranges are found by the checksums (:mod:`lsh_frame.index.files`).
Each check is a vectorised pass over an array: loading stays proportional to
the bytes read.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from lsh_frame.errors import ConfigError, DamagedIndexError
from lsh_frame.index.files import CHECKSUM, FORMAT, damaged


def bad_manifest(folder: Path, detail: str) -> DamagedIndexError:
    """Build the error for an ``index.json`` that is not a readable manifest."""
    return DamagedIndexError(
        f"{folder / 'index.json'} is not a readable lsh_frame index ({detail}). "
        "Restore the folder from a backup, or build the index again "
        "(lf.Index.build)."
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _expect(
    manifest: dict[str, Any], key: str, kinds: Any, folder: Path, what: str
) -> Any:
    if key not in manifest:
        raise bad_manifest(folder, f"it has no {key!r}")
    value = manifest[key]
    if not (_is_int(value) if kinds is int else isinstance(value, kinds)):
        raise bad_manifest(
            folder, f"its {key!r} is {json.dumps(value)[:60]}, not {what}"
        )
    return value


def read_manifest(
    folder: Path, current: int, readable: tuple[int, ...]
) -> dict[str, Any]:
    """Return ``index.json`` of ``folder``, checked to have a manifest's shape.

    ``current`` is the version this lsh_frame writes, ``readable`` those it
    reads. A newer version raises :class:`~lsh_frame.ConfigError`; anything
    else amiss :class:`~lsh_frame.DamagedIndexError`.
    """
    path = folder / "index.json"
    try:
        manifest = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        detail = str(error).splitlines()[0] if str(error) else ""
        raise bad_manifest(
            folder, f"not JSON: {type(error).__name__}: {detail}"
        ) from None
    if not isinstance(manifest, dict):
        raise bad_manifest(
            folder, f"it holds a JSON {type(manifest).__name__}, not an object"
        )
    if manifest.get("format") != FORMAT:
        raise bad_manifest(
            folder,
            f"its format is {json.dumps(manifest.get('format'))[:60]}, not {FORMAT!r}",
        )
    version = manifest.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version > current:
        raise ConfigError(
            f"{folder} is an index of format version {version}, written by "
            f"lsh_frame {manifest.get('lsh_frame')}; this lsh_frame reads versions "
            f"{readable[0]} to {current}. Upgrade lsh_frame, or build the index "
            "again."
        )
    if version not in readable or not _is_int(version):
        raise bad_manifest(
            folder, f"its version is {json.dumps(version)[:60]}, not one of {readable}"
        )
    settings = _expect(manifest, "settings", dict, folder, "an object")
    for key in ("fields", "keys", "segments", "merges"):
        _expect(manifest, key, list, folder, "a list")
    for key in ("comparisons", "decision", "tfidf"):
        _expect(manifest, key, dict, folder, "an object")
    _expect(manifest, "next_id", int, folder, "an integer")
    _expect(manifest, "vocabulary", (dict, type(None)), folder, "an object or null")
    columns = _expect(settings, "columns", list, folder, "a list")
    if not columns or not all(isinstance(c, str) or _is_int(c) for c in columns):
        raise bad_manifest(folder, "its settings' 'columns' are not column labels")
    for key in ("num_perm", "seed", "max_bucket"):
        _expect(settings, key, int, folder, f"an integer (settings' {key!r})")
    if settings.get("long_value_words") is not None:
        _expect(settings, "long_value_words", int, folder, "an integer")
    segments = manifest["segments"]
    if (
        not segments
        or not all(_is_int(first) for first in segments)
        or segments[0] != 0
        or any(b <= a for a, b in itertools.pairwise(segments))
    ):
        raise bad_manifest(
            folder,
            f"its 'segments' {json.dumps(segments)[:60]} are not increasing record "
            "positions from 0",
        )
    if manifest["vocabulary"] is not None:
        for key in ("records", "cap"):
            _expect(manifest["vocabulary"], key, int, folder, "an integer")
    if version >= 2:
        _expect(manifest, "save_id", str, folder, "a text")
        files = _expect(manifest, "files", dict, folder, "an object")
        for name, entry in files.items():
            if not (
                isinstance(entry, dict)
                and _is_int(entry.get("bytes"))
                and isinstance(entry.get(CHECKSUM), str)
            ):
                raise bad_manifest(
                    folder, f"its entry of {name!r} has no size and checksum"
                )
    return manifest


def file_entry(
    manifest: dict[str, Any], folder: Path, name: str
) -> dict[str, Any] | None:
    """Return the manifest's size and checksum of a file (None before version 2)."""
    files = manifest.get("files")
    if files is None:
        return None
    if name not in files:
        raise bad_manifest(folder, f"it does not list the file {name!r} it needs")
    entry: dict[str, Any] = files[name]
    return entry


def columns(
    table: pa.Table,
    folder: Path,
    name: str,
    expected: dict[str, str],
    optional: tuple[str, ...] = (),
) -> dict[str, npt.NDArray[Any]]:
    """Return a table's columns as numpy arrays, each of its expected dtype."""
    result = {}
    for column, dtype in expected.items():
        if column not in table.column_names:
            if column in optional:
                continue
            raise damaged(folder, name, f"lacks its column {column!r}")
        chunked = table.column(column)
        array = (
            chunked.chunk(0) if chunked.num_chunks == 1 else chunked.combine_chunks()
        )
        if array.null_count:
            raise damaged(folder, name, f"has missing values in its column {column!r}")
        values = array.to_numpy(zero_copy_only=False)
        if values.dtype != np.dtype(dtype):
            raise damaged(
                folder,
                name,
                f"holds its column {column!r} as {values.dtype}, not {np.dtype(dtype)}",
            )
        result[column] = values
    if len({values.size for values in result.values()}) > 1:
        raise damaged(folder, name, "has columns of different lengths")
    return result


def check_sorted(
    values: npt.NDArray[Any], folder: Path, name: str, what: str, *, strict: bool
) -> None:
    """Raise unless ``values`` increase (strictly: no value twice)."""
    if values.size < 2:
        return
    steps = values[1:] > values[:-1] if strict else values[1:] >= values[:-1]
    if not steps.all():
        raise damaged(folder, name, f"holds {what} out of order")


def check_range(
    values: npt.NDArray[Any],
    low: int,
    high: int,
    folder: Path,
    name: str,
    what: str,
) -> None:
    """Raise unless every value lies in ``[low, high)``."""
    if values.size and (int(values.min()) < low or int(values.max()) >= high):
        raise damaged(
            folder,
            name,
            f"holds {what} outside [{low:,}, {high:,}) (from {int(values.min()):,} "
            f"to {int(values.max()):,})",
        )


def check_length(size: int, expected: int, folder: Path, name: str, what: str) -> None:
    """Raise unless an array holds ``expected`` values."""
    if size != expected:
        raise damaged(
            folder, name, f"holds {size:,} {what} where the index has {expected:,}"
        )
