"""An index's folder on disk: written aside, swapped in by renames, checked when read.

A saved index holds months of resolved entities, so its folder is handled as
a database file is:

- A save writes the new folder beside the path (``.lsh_frame-NAME.new-...``),
  each file flushed to disk (``fsync``), the manifest last. Then one
  ``rename`` moves the old index aside (``.lsh_frame-NAME.old-...``), another
  moves the new one in, and only then is the old one deleted (renamed to
  ``.lsh_frame-NAME.trash-...`` first, so that a folder named ``old`` is
  always whole). Any failure before the new one is in place, ``KeyboardInterrupt``
  included, puts the old one back.
- A process killed between the two renames leaves no folder at the path but a
  whole old index beside it: the next :meth:`Index.load` or :meth:`Index.save`
  of the path moves it back (:func:`recover`). Temporary folders left by
  killed saves are removed by the next save of the path.
- ``overwrite=True`` replaces only a folder whose ``index.json`` says it is an
  lsh_frame index (or an empty folder); anything else is refused.
- Every Arrow file carries the save's id in its metadata, and the manifest
  lists each file's size and checksum (xxh3-128): reading checks them, then
  validates the Arrow data fully, so that a damaged, cut or foreign file
  raises :class:`~lsh_frame.DamagedIndexError` naming the folder and the
  file instead of crashing the process later.

One writer at a time: two processes saving the same path at once may make
one of the saves fail (never both lose the index).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import xxhash

from lsh_frame.errors import DamagedIndexError, FolderExistsError

#: Name of the saved format (``index.json``'s "format").
FORMAT = "lsh_frame.index"

#: Schema metadata key of every Arrow file: the id of the save that wrote it.
SAVE_KEY = b"lsh_frame.save"

#: The checksum the manifest lists for each file.
CHECKSUM = "xxh3_128"

_ASIDE = re.compile(r"\.(new|old|trash)-(\d+)-[0-9a-f]{8}")

#: Temporary folders of versions before the renames (``tempfile.mkdtemp``).
_OLD_STYLE = re.compile(r"\.lsh_frame-[a-z0-9_]{8}")

#: Names of the files an index folder holds.
_INDEX_FILE = re.compile(
    r"index\.json|(state|vocabulary|records-\d+|keys-\d+-\d+|tokens-\d+|"
    r"postings-\d+|tfidf-\d+)\.arrow"
)


def damaged(folder: Path, name: str, problem: str) -> DamagedIndexError:
    """Build the error for a file of an index folder that cannot be read."""
    return DamagedIndexError(
        f"The index in {folder} cannot be read: its file {name} {problem}. "
        "An index is read only as its save wrote it; restore the folder from a "
        "backup, or build the index again (lf.Index.build)."
    )


# -- writing -------------------------------------------------------------------


def _fsync(path: Path) -> None:
    """Flush a file, or a folder's entries, to disk."""
    flags = os.O_RDONLY
    if path.is_dir():
        flags |= getattr(os, "O_DIRECTORY", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError:  # folders cannot be opened on some systems (Windows)
        return
    try:
        os.fsync(descriptor)
    except OSError:  # nor flushed
        pass
    finally:
        os.close(descriptor)


def checksum(path: Path) -> str:
    """Return the xxh3-128 checksum of a file (hex)."""
    hasher = xxhash.xxh3_128()
    with open(path, "rb") as file:
        while chunk := file.read(1 << 24):
            hasher.update(chunk)
    return hasher.hexdigest()


def write_arrow(path: Path, table: pa.Table, save_id: str) -> dict[str, Any]:
    """Write an Arrow IPC file, flushed to disk; return its manifest entry."""
    metadata = {**(table.schema.metadata or {}), SAVE_KEY: save_id.encode()}
    table = table.replace_schema_metadata(metadata)
    with (
        pa.OSFile(str(path), "wb") as sink,
        pa.ipc.new_file(sink, table.schema) as writer,
    ):
        writer.write_table(table, max_chunksize=max(table.num_rows, 1))
    _fsync(path)
    return {"bytes": path.stat().st_size, CHECKSUM: checksum(path)}


def write_text(path: Path, text: str) -> None:
    """Write a text file, flushed to disk."""
    with open(path, "w", encoding="utf-8") as file:
        file.write(text)
        file.flush()
        os.fsync(file.fileno())


def _aside(target: Path, kind: str) -> Path:
    unique = f"{time.time_ns()}-{secrets.token_hex(4)}"
    return target.parent / f".lsh_frame-{target.name}.{kind}-{unique}"


def _asides(target: Path, kind: str | None = None) -> list[Path]:
    """Folders a save of ``target`` put beside it, oldest first."""
    prefix = f".lsh_frame-{target.name}"
    found = []
    try:
        entries = list(target.parent.iterdir())
    except OSError:
        return []
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        matched = _ASIDE.fullmatch(entry.name[len(prefix) :])
        if matched and (kind is None or matched.group(1) == kind):
            found.append((int(matched.group(2)), entry))
    return [entry for _, entry in sorted(found)]


def is_index_folder(path: Path) -> bool:
    """Whether ``path`` is a folder whose ``index.json`` names the index format."""
    try:
        manifest = json.loads((path / "index.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and manifest.get("format") == FORMAT


def recover(target: Path) -> Path | None:
    """Put back an index a save moved aside and was killed before replacing.

    Returns the folder to read when ``target`` holds no index: ``target``
    itself once the old index is back, the aside folder when it cannot be
    moved (a read-only folder), or None when there is none.
    """
    if target.exists() or target.is_symlink():
        return None
    olds = [folder for folder in _asides(target, "old") if is_index_folder(folder)]
    if not olds:
        return None
    try:
        os.rename(olds[-1], target)
    except OSError:
        return olds[-1]
    _fsync(target.parent)
    return target


def _remove(target: Path, folder: Path) -> None:
    """Delete a folder a save of ``target`` put aside.

    Renamed to trash first: a folder named ``old`` is always a whole index.
    """
    if ".trash-" not in folder.name[len(f".lsh_frame-{target.name}") :]:
        trash = _aside(target, "trash")
        try:
            os.rename(folder, trash)
        except OSError:
            return
        folder = trash
    if folder.is_symlink():
        folder.unlink()
    else:
        shutil.rmtree(folder, ignore_errors=True)


def _remove_stale(target: Path) -> None:
    """Remove what earlier saves of ``target`` left beside it (killed saves)."""
    whole = is_index_folder(target)
    for folder in _asides(target):
        # An old index aside is the only copy while the path holds none.
        if whole or ".old-" not in folder.name:
            _remove(target, folder)
    # Versions before the renames wrote their copy into ``.lsh_frame-XXXXXXXX``;
    # such a folder holding nothing but an index's files is one of them.
    with contextlib.suppress(OSError):
        for folder in target.parent.iterdir():
            if _OLD_STYLE.fullmatch(folder.name) and folder.is_dir():
                names = [entry.name for entry in folder.iterdir()]
                if all(_INDEX_FILE.fullmatch(name) for name in names):
                    shutil.rmtree(folder, ignore_errors=True)


def check_replaceable(
    target: Path, overwrite: bool, owner: str, flag: str = "overwrite=True"
) -> None:
    """Raise unless a save may write ``target`` (``flag`` names the option)."""
    if not (target.exists() or target.is_symlink()):
        return
    if not overwrite:
        raise FolderExistsError(
            f"{owner} would write the index to {target}, which exists. Give "
            f"{flag} to replace an index saved there, or another path."
        )
    replaceable = target.is_dir() and (
        is_index_folder(target) or not any(target.iterdir())
    )
    here = Path.cwd()
    if replaceable and (here == target or target in here.parents):
        raise FolderExistsError(
            f"{owner} would replace {target}, the folder this process works in "
            "(or one holding it): the old index is moved aside and deleted, and "
            "the process would be left in a deleted folder. Save from outside "
            "it, or to another path."
        )
    if replaceable:
        return
    what = "a folder" if target.is_dir() else "a file"
    raise FolderExistsError(
        f"{owner} would replace {target}, but it is {what} that holds no "
        f"lsh_frame index (no index.json of format {FORMAT!r}). {flag} "
        "replaces only an index (or an empty folder); save to another path, or "
        "move that one away yourself."
    )


def save_folder(
    path: str | os.PathLike[str],
    write: Callable[[Path], None],
    *,
    overwrite: bool,
    owner: str,
) -> None:
    """Write a folder with ``write`` and swap it in at ``path`` (module docstring)."""
    target = Path(os.path.abspath(path))
    recover(target)
    check_replaceable(target, overwrite, owner)
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(target)
    new: Path | None = _aside(target, "new")
    old: Path | None = None
    assert new is not None
    new.mkdir()
    try:
        write(new)
        _fsync(new)
        if target.exists() or target.is_symlink():
            old = _aside(target, "old")
            os.rename(target, old)
        os.rename(new, target)
        new = None
    except BaseException:
        if old is not None and not (target.exists() or target.is_symlink()):
            os.rename(old, target)
            old = None
        if new is not None:
            shutil.rmtree(new, ignore_errors=True)
        raise
    _fsync(target.parent)
    if old is not None:
        _remove(target, old)


# -- reading -------------------------------------------------------------------


def read_arrow(
    folder: Path,
    name: str,
    entry: dict[str, Any] | None,
    save_id: str | None,
    *,
    checksums: bool,
) -> pa.Table:
    """Read and validate one Arrow file of an index (mapped, not copied).

    ``entry`` is the file's size and checksum from the manifest (None for
    an index saved before they were kept), ``save_id`` the save that must
    have written it.
    """
    path = folder / name
    if not path.is_file():
        raise damaged(folder, name, "is missing")
    if entry is not None:
        size = path.stat().st_size
        if size != entry["bytes"]:
            raise damaged(
                folder,
                name,
                f"has {size:,} bytes where the save wrote {entry['bytes']:,}",
            )
        if checksums and checksum(path) != entry[CHECKSUM]:
            raise damaged(
                folder,
                name,
                "does not match its checksum (its bytes changed after the save)",
            )
    try:
        with pa.memory_map(str(path), "r") as source:
            table = pa.ipc.open_file(source).read_all()
        table.validate(full=True)
    except (pa.ArrowException, OSError, ValueError) as error:
        detail = str(error).strip().splitlines()[0] if str(error).strip() else ""
        kind = type(error).__name__
        raise damaged(
            folder, name, f"is not a whole Arrow file ({kind}: {detail})"
        ) from None
    written_by = (table.schema.metadata or {}).get(SAVE_KEY)
    if save_id is not None and written_by != save_id.encode():
        raise damaged(
            folder,
            name,
            "was written by another save than its index.json (the folder mixes "
            "the files of two indexes)",
        )
    return table
