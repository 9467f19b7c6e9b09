"""The ``ddf.lsh`` accessor: one-line delegations to :mod:`lsh_frame.dask`."""

from __future__ import annotations

from typing import Any

import dask.dataframe as dd
from dask.dataframe.extensions import register_dataframe_accessor

from lsh_frame.dask import _cluster, _jobs, _merge, _pairs


@register_dataframe_accessor("lsh")
class DaskLshAccessor:
    """Entity-resolution methods on a dask DataFrame, available as ``ddf.lsh``.

    The same methods and parameters as ``df.lsh``; see :mod:`lsh_frame.dask`.
    """

    def __init__(self, frame: dd.DataFrame) -> None:
        self._frame = frame

    def minhash(self, columns: Any, /, **options: Any) -> Any:
        """MinHash signatures per partition (see ``df.lsh.minhash``)."""
        return _pairs.minhash(self._frame, columns, **options)

    def candidates(self, fields: Any, /, **options: Any) -> dd.DataFrame:
        """Candidate pairs (see :func:`lsh_frame.candidates`)."""
        return _pairs.candidates(self._frame, fields, **options)

    def blocking_report(self, fields: Any, /, **options: Any) -> Any:
        """Report what each blocking key costs and finds (see ``df.lsh``)."""
        return _pairs.blocking_report(self._frame, fields, **options)

    def score(self, pairs: Any, fields: Any, /, **options: Any) -> dd.DataFrame:
        """Score candidate pairs field by field (see :func:`lsh_frame.score`)."""
        return _pairs.score(self._frame, pairs, fields, **options)

    def pairs(self, fields: Any, /, **options: Any) -> dd.DataFrame:
        """Candidate pairs and their scores (see :func:`lsh_frame.pairs`)."""
        return _pairs.pairs(self._frame, fields, **options)

    def cluster(self, scored: Any, /, **options: Any) -> Any:
        """Entity id per row (see :func:`lsh_frame.cluster`)."""
        return _cluster.cluster(self._frame, scored, **options)

    def dedupe(self, fields: Any = None, /, **options: Any) -> dd.DataFrame:
        """Every row with its entity id and size (see :func:`lsh_frame.dedupe`)."""
        return _jobs.dedupe(self._frame, fields, **options)

    def drop_duplicates(self, fields: Any = None, /, **options: Any) -> dd.DataFrame:
        """One row per entity (see :func:`lsh_frame.drop_duplicates`)."""
        return _jobs.drop_duplicates(self._frame, fields, **options)

    def duplicated(self, fields: Any = None, /, **options: Any) -> dd.Series:
        """Which rows duplicate another (see :func:`lsh_frame.duplicated`)."""
        return _jobs.duplicated(self._frame, fields, **options)

    def link(self, right: Any, fields: Any = None, /, **options: Any) -> dd.DataFrame:
        """Scored pairs between this frame and ``right`` (see ``lsh_frame.link``)."""
        return _jobs.link(self._frame, right, fields, **options)

    def merge(self, right: Any, fields: Any = None, /, **options: Any) -> dd.DataFrame:
        """Join ``right`` on similarity (see :func:`lsh_frame.merge`)."""
        return _merge.merge(self._frame, right, fields, **options)
