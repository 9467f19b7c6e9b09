"""Dask frames as partitions with global row positions, and routing between them.

Every stage of ``lsh_frame.dask`` works on :class:`Table`: a dask DataFrame's
partitions (as delayed objects), where each row sits in the whole table
(``offsets``), and its index labels, collected once. With global positions the
pandas stage functions run on a partition exactly as on the whole frame, and
small decisions (thresholds, the match model, entity ids) are made once on
the client from summaries that add up over partitions.

Rows move between partitions with Dask's own shuffle (``set_index`` on a target
partition with explicit divisions), so the shuffle method is Dask's choice of
``"tasks"`` (default), ``"p2p"`` or ``"disk"``. Every move is counted: rows
in must equal rows out (see dask/distributed#8426, data loss in p2p shuffles).
"""

from __future__ import annotations

from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import numpy.typing as npt
import pandas as pd
from dask import delayed

from lsh_frame._validation import check_choice
from lsh_frame.errors import ColumnError, ConfigTypeError, LshFrameError

#: Dask's shuffle methods; "tasks" is the default (no known data-loss issue).
SHUFFLE_METHODS = ("tasks", "p2p", "disk")
#: Name of the column that says where a row goes.
TARGET = "__lsh_target"


class Table:
    """A dask DataFrame's partitions, row offsets and index labels.

    The labels are read on first use (one pass over the data), or handed in by
    a pass that reads the partitions anyway (:meth:`receive`).
    """

    def __init__(self, frame: dd.DataFrame, role: str, owner: str) -> None:
        self.frame, self.role, self.owner = frame, role, owner
        # The frame's own partitions (not frame.index's: reading fewer columns
        # may let Dask combine partitions differently).
        self.parts: list[Any] = list(frame.to_delayed())
        self._offsets: npt.NDArray[np.int64] | None = None
        self._index: pd.Index | None = None

    @property
    def loaded(self) -> bool:
        """Whether the labels are known."""
        return self._index is not None

    def receive(self, indexes: list[pd.Index]) -> None:
        """Take every partition's index labels; check they are unique."""
        lengths = np.array([len(part) for part in indexes], dtype=np.int64)
        index = indexes[0].append(list(indexes[1:])) if len(indexes) > 1 else indexes[0]
        if index.has_duplicates:
            duplicated = index[index.duplicated()].unique()[:3].tolist()
            raise ColumnError(
                f"The index of the '{self.role}' frame has duplicate labels (for "
                f"example {duplicated}), but candidate pairs name records by their "
                "index label. Dask numbers each partition from 0 after reset_index() "
                "or a read without an index: read with an id column as the index "
                "(for example dd.read_parquet(path, index='id')) or set_index() on "
                "a unique column."
            )
        self._offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        self._index = index

    def _load(self) -> None:
        if self._index is None:
            self.receive(list(dask.compute(*[delayed(_index)(p) for p in self.parts])))

    @property
    def index(self) -> pd.Index:
        """Every row's label, in partition order."""
        self._load()
        assert self._index is not None
        return self._index

    @property
    def offsets(self) -> npt.NDArray[np.int64]:
        """Position of each partition's first row; the last entry is the row count."""
        self._load()
        assert self._offsets is not None
        return self._offsets

    @property
    def meta(self) -> pd.DataFrame:
        """An empty pandas frame with the columns and dtypes."""
        return self.frame._meta

    @property
    def rows(self) -> int:
        """Number of rows."""
        return int(self.offsets[-1])

    @property
    def npartitions(self) -> int:
        """Number of partitions."""
        return len(self.parts)

    def partition_of(self, positions: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Partition holding each global row position."""
        return np.searchsorted(self.offsets, positions, side="right") - 1

    def slices(self, values: npt.NDArray[Any]) -> list[npt.NDArray[Any]]:
        """Split a per-row array into one piece per partition."""
        return [
            values[self.offsets[part] : self.offsets[part + 1]]
            for part in range(self.npartitions)
        ]


def table(frame: Any, role: str, owner: str) -> Table:
    """Check that ``frame`` is a dask DataFrame; its labels are read when needed."""
    if not isinstance(frame, dd.DataFrame):
        raise ConfigTypeError(
            f"The '{role}' argument of {owner} (lsh_frame.dask) must be a dask "
            f"DataFrame. Got {type(frame).__name__} instead; use df.lsh for pandas."
        )
    return Table(frame, role, owner)


def _index(part: pd.DataFrame) -> pd.Index:
    return part.index


def check_shuffle(method: Any, owner: str) -> str:
    """Check a shuffle method name."""
    return check_choice(method, "shuffle_method", owner, SHUFFLE_METHODS)


def route(parts: list[Any], meta: pd.DataFrame, targets: int, method: str) -> list[Any]:
    """Move every row to output partition ``row[TARGET]`` (0 .. targets - 1).

    Uses Dask's shuffle of ``set_index`` with one division per target. The
    target column is dropped; rows keep no particular order within a partition.
    """
    if targets == 1 and len(parts) == 1:
        return [delayed(_drop_target)(parts[0])]
    frame = dd.from_delayed(parts, meta=meta, verify_meta=False)
    routed = frame.set_index(
        TARGET,
        divisions=[*range(targets), targets - 1],
        shuffle_method=method,
    )
    return [delayed(_reset)(part) for part in routed.to_delayed()]


def _drop_target(part: pd.DataFrame) -> pd.DataFrame:
    return part.drop(columns=TARGET)


def _reset(part: pd.DataFrame) -> pd.DataFrame:
    return part.reset_index(drop=True)


def check_moved(sent: int, received: int, what: str, method: str) -> None:
    """Raise when a shuffle lost or duplicated rows."""
    if sent != received:
        raise LshFrameError(
            f"The Dask shuffle ({method!r}) of the {what} delivered {received:,} "
            f"rows for {sent:,} sent. Results would silently miss rows, so the job "
            "stopped. The p2p shuffle has an open data-loss issue "
            "(dask/distributed#8426): use shuffle_method='tasks'."
        )


def compute(*tasks: Any) -> tuple[Any, ...]:
    """Compute delayed tasks on the active scheduler."""
    return dask.compute(*tasks)


def persist(tasks: list[Any]) -> list[Any]:
    """Persist delayed tasks (in worker memory on a cluster) and wait for them.

    Waiting keeps each stage's time with the stage (progress lines, benchmarks);
    the next step needs the results anyway.
    """
    if not tasks:
        return []
    persisted = list(dask.persist(*tasks))
    client = _client()
    if client is not None:
        from distributed import wait

        wait(persisted)
    return persisted


def shared(value: Any) -> Any:
    """Make a large object available to many tasks, sent once to each worker.

    On a distributed cluster it is scattered (broadcast) instead of being
    embedded in every graph; otherwise a delayed object.
    """
    client = _client()
    if client is None:
        return delayed(value)
    return client.scatter(value, broadcast=True, hash=False)


def shared_pieces(values: list[Any]) -> list[Any]:
    """Send one piece to each task: scattered on a cluster, as they are otherwise."""
    client = _client()
    if client is None or not values:
        return values
    return list(client.scatter(values, hash=False))


def _client() -> Any:
    """Return the distributed client in use, or None (another scheduler)."""
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        client = default_client()
    except ValueError:
        return None
    scheduler = dask.config.get("scheduler", None)
    if scheduler is not None and scheduler not in ("dask.distributed", "distributed"):
        return None  # e.g. dask.config.set(scheduler="synchronous") over a client
    return client
