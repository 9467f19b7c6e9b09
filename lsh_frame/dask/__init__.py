"""lsh_frame on Dask: ``import lsh_frame.dask`` registers ``ddf.lsh``.

The accessor has the methods and parameters of ``df.lsh`` (see
:mod:`lsh_frame.accessor`), computed partition by partition with the same
stage functions, so results equal the pandas path's: the same pairs in the
same order, the same scores, the same entity ids. Methods that shuffle also
take ``shuffle_method`` (``"tasks"``, the default, ``"p2p"`` or ``"disk"``)
and, for blocking, ``npartitions`` (partitions of the key shuffle).

Index labels must be unique across partitions (read Parquet with
``index="id"``). The index labels are collected on the client once per call,
and so are the matched pairs' positions up to 20 million matches (to number
the entities as pandas does; above that, large-star/small-star runs on the
cluster). See ``docs/scaling.md``.

Examples
--------
>>> import dask.dataframe as dd, pandas as pd
>>> import lsh_frame.dask
>>> df = pd.DataFrame({"name": ["john smith", "jon smith", "mary jones"]})
>>> ddf = dd.from_pandas(df, npartitions=2)
>>> ddf.lsh.dedupe("name", min_score=0.8).compute()["cluster_id"].tolist()
[0, 0, 1]
"""

from __future__ import annotations

try:
    import dask.dataframe as _dd
except ImportError as error:  # pragma: no cover - exercised without Dask
    raise ImportError(
        "lsh_frame.dask needs Dask's DataFrame, which is not installed. Install it "
        "with: pip install 'lsh-frame[dask]'"
    ) from error

from lsh_frame.dask._accessor import DaskLshAccessor
from lsh_frame.dask._cluster import cluster
from lsh_frame.dask._jobs import dedupe, drop_duplicates, duplicated, link
from lsh_frame.dask._merge import merge
from lsh_frame.dask._pairs import blocking_report, candidates, minhash, pairs, score

__all__ = [
    "DaskLshAccessor",
    "blocking_report",
    "candidates",
    "cluster",
    "dedupe",
    "drop_duplicates",
    "duplicated",
    "link",
    "merge",
    "minhash",
    "pairs",
    "score",
]

del _dd
