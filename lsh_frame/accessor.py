"""The ``df.lsh`` accessor: stateless one-line delegations to the stages."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import pandas as pd

from lsh_frame import explain as _explain
from lsh_frame._validation import check_columns, refuse_set
from lsh_frame.block import candidates as _candidates
from lsh_frame.block import hamming as _hamming
from lsh_frame.block import report as _report
from lsh_frame.decide import pairs as _pairs
from lsh_frame.decide import score as _score
from lsh_frame.jobs import dedupe as _dedupe
from lsh_frame.jobs import link as _link
from lsh_frame.jobs import merge as _merge
from lsh_frame.resolve import cluster as _cluster
from lsh_frame.sketch import minhash as _minhash
from lsh_frame.sketch import simhash as _simhash
from lsh_frame.text import shingle as _shingle


@pd.api.extensions.register_dataframe_accessor("lsh")
class LshAccessor:
    """Entity-resolution methods on a DataFrame, available as ``df.lsh``.

    The accessor holds nothing but the frame; every method returns new objects
    and leaves the frame untouched.
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = frame

    def shingles(self, column: Hashable, /, **options: Any) -> pd.Series:
        """Per-row sets of shingle hashes of one column.

        See :func:`lsh_frame.shingles` for the options.

        Examples
        --------
        >>> import pandas as pd, lsh_frame
        >>> df = pd.DataFrame({"name": ["anna", "ann"]})
        >>> df.lsh.shingles("name").list.len().tolist()
        [2, 1]
        """
        refuse_set(column, "column", "df.lsh.shingles")
        (column,) = check_columns(self._frame, [column], "df.lsh.shingles")
        return _shingle.shingles(self._frame[column], **options)

    def minhash(self, columns: Any, /, **options: Any) -> pd.Series | pd.DataFrame:
        """MinHash signatures of one column (a Series) or several (a DataFrame).

        Each column is signed on its own; see :func:`lsh_frame.minhash` for the
        options. Results are named ``"<column>__minhash"``.

        Examples
        --------
        >>> import pandas as pd, lsh_frame
        >>> df = pd.DataFrame({"name": ["anna", "ann"], "city": ["oslo", "oslo"]})
        >>> df.lsh.minhash("name").name
        'name__minhash'
        >>> list(df.lsh.minhash(["name", "city"]).columns)
        ['name__minhash', 'city__minhash']
        """
        single = isinstance(columns, str) or not isinstance(columns, (list, tuple))
        labels = check_columns(self._frame, columns, "df.lsh.minhash")
        signed = [_minhash.minhash(self._frame[label], **options) for label in labels]
        if single:
            return signed[0]
        return pd.concat(signed, axis=1)

    def simhash(self, column: Hashable, /, **options: Any) -> pd.Series:
        """SimHash fingerprints of one text column.

        See :func:`lsh_frame.simhash` for the options. The result is named
        ``"<column>__simhash"``.

        Examples
        --------
        >>> import pandas as pd, lsh_frame
        >>> df = pd.DataFrame({"text": ["a b c d", "a b c e"]})
        >>> str(df.lsh.simhash("text", bits=32).dtype)
        'simhash<bits=32 seed=1 count word k=1>[pyarrow]'
        """
        (column,) = check_columns(self._frame, [column], "df.lsh.simhash")
        return _simhash.simhash(self._frame[column], **options)

    def simhash_pairs(self, column: Hashable, /, **options: Any) -> pd.DataFrame:
        """Pairs of rows within a Hamming distance of each other's SimHash.

        ``column`` holds text or fingerprints; ``other=`` links a second
        frame. Options: ``distance`` (default 3), ``max_pairs``, ``workers``
        and those of :func:`lsh_frame.simhash`; see
        :func:`lsh_frame.hamming_pairs` for the columns returned.

        Examples
        --------
        >>> import pandas as pd, lsh_frame
        >>> df = pd.DataFrame({"text": ["one two three four five six seven",
        ...                             "one two three four five six seven",
        ...                             "something else entirely"]})
        >>> df.lsh.simhash_pairs("text", distance=3)
           left  right  distance
        0     0      1         0
        """
        return _hamming.frame_pairs(self._frame, column, **options)

    def candidates(self, fields: Any, /, **options: Any) -> pd.DataFrame:
        """Candidate pairs: dedupe this frame, or link it with ``other=``.

        See :func:`lsh_frame.candidates` for the options (``right_on=`` when
        ``other`` names the fields' columns differently).

        Examples
        --------
        >>> import pandas as pd, lsh_frame as lf
        >>> df = pd.DataFrame({"dob": ["1990-01-01", "1990-01-01", "1985-02-03"]})
        >>> df.lsh.candidates([lf.Field("dob", blocking="exact")])[["left", "right"]]
           left  right
        0     0      1
        """
        return _candidates.candidates(self._frame, fields, **options)

    def blocking_report(self, fields: Any, /, **options: Any) -> Any:
        """Report what each blocking key costs and finds, without building pairs.

        See :func:`lsh_frame.blocking_report`; ``print()`` the result.
        """
        return _report.blocking_report(self._frame, fields, **options)

    def score(
        self, pairs: pd.DataFrame, fields: Any, /, **options: Any
    ) -> pd.DataFrame:
        """Score candidate pairs of this frame (or with ``other=``) field by field.

        See :func:`lsh_frame.score` for the options and the columns returned.

        Examples
        --------
        >>> import pandas as pd, lsh_frame
        >>> df = pd.DataFrame({"name": ["anna lee", "ana lee"]})
        >>> pairs = pd.DataFrame({"left": [0], "right": [1]})
        >>> float(df.lsh.score(pairs, "name")["score"].round(3).iloc[0])
        0.933
        """
        return _score.score(self._frame, pairs, fields, **options)

    def pairs(self, fields: Any, /, **options: Any) -> pd.DataFrame:
        """Candidate pairs and their scores in one call.

        See :func:`lsh_frame.pairs`; takes the options of both
        :func:`lsh_frame.candidates` and :func:`lsh_frame.score`.
        """
        return _pairs.pairs(self._frame, fields, **options)

    def cluster(self, scored: pd.DataFrame, /, **options: Any) -> Any:
        """Entity id per row from matched pairs (connected components).

        See :func:`lsh_frame.cluster`.

        Examples
        --------
        >>> import pandas as pd, lsh_frame
        >>> df = pd.DataFrame({"name": ["ann", "anne", "bob"]})
        >>> df.lsh.cluster(pd.DataFrame({"left": [0], "right": [1]})).tolist()
        [0, 0, 1]
        """
        return _cluster.cluster(self._frame, scored, **options)

    def explain(self, pair: Any, fields: Any, /, **options: Any) -> Any:
        """Explain one pair: keys that found it, shingles, field scores.

        See :func:`lsh_frame.explain`; ``print()`` the result.
        """
        return _explain.explain(self._frame, pair, fields, **options)

    def dedupe(self, fields: Any = None, /, **options: Any) -> pd.DataFrame:
        """Add an entity id and the entity's size to every row (a new frame).

        See :func:`lsh_frame.dedupe` for the options; the columns may also be
        given as ``subset=``, and default to every column.

        Examples
        --------
        >>> import pandas as pd, lsh_frame
        >>> df = pd.DataFrame({"name": ["john smith", "jon smith", "mary jones"]})
        >>> df.lsh.dedupe("name", min_score=0.8)["cluster_id"].tolist()
        [0, 0, 1]
        """
        return _dedupe.dedupe(self._frame, fields, **options)

    def index(self, fields: Any = None, /, **options: Any) -> Any:
        """Resolve this frame and hold it for matching new records.

        The same as :meth:`lsh_frame.Index.build` on this frame (see it for
        the options): returns an :class:`lsh_frame.Index`, whose ``query``,
        ``resolve``, ``add``, ``remove`` and ``save`` work on new records.
        """
        from lsh_frame.index.index import Index

        return Index.build(self._frame, fields, **options)

    def drop_duplicates(self, fields: Any = None, /, **options: Any) -> pd.DataFrame:
        """One row per entity, like ``DataFrame.drop_duplicates``.

        See :func:`lsh_frame.drop_duplicates` for ``keep`` and the options; the
        columns may also be given as ``subset=``, and default to every column.

        Examples
        --------
        >>> import pandas as pd, lsh_frame
        >>> df = pd.DataFrame({"name": ["john smith", "jon smith", "mary jones"]})
        >>> df.lsh.drop_duplicates("name", min_score=0.8, keep="last").index.tolist()
        [1, 2]
        >>> df.lsh.drop_duplicates(subset=["name"], min_score=0.8).index.tolist()
        [0, 2]
        """
        return _dedupe.drop_duplicates(self._frame, fields, **options)

    def duplicated(self, fields: Any = None, /, **options: Any) -> pd.Series:
        """Which rows duplicate another, like ``DataFrame.duplicated``.

        A boolean Series on the frame's index; ``df.lsh.drop_duplicates(...)``
        is ``df[~df.lsh.duplicated(...)]``. See :func:`lsh_frame.duplicated`.

        Examples
        --------
        >>> import pandas as pd, lsh_frame
        >>> df = pd.DataFrame({"name": ["john smith", "jon smith", "mary jones"]})
        >>> df.lsh.duplicated(subset="name", min_score=0.8).tolist()
        [False, True, False]
        >>> df.lsh.duplicated("name", keep="last", min_score=0.8).tolist()
        [True, False, False]
        """
        return _dedupe.duplicated(self._frame, fields, **options)

    def link(
        self, right: pd.DataFrame, fields: Any = None, /, **options: Any
    ) -> pd.DataFrame:
        """Scored pairs between this frame (left) and ``right``.

        See :func:`lsh_frame.link`; the fields may be given as ``on=``;
        ``right_on`` (with ``fields`` naming this frame's columns, or with
        ``left_on``) maps column names, and ``one_to_one`` (``"auto"``, True or
        False) lets each record match at most one record of the other table.
        """
        return _link.link(self._frame, right, fields, **options)

    def merge(
        self, right: pd.DataFrame, fields: Any = None, /, **options: Any
    ) -> pd.DataFrame:
        """Join ``right`` to this frame on similarity, like ``pd.merge``.

        See :func:`lsh_frame.merge` for ``on``, ``how`` (``"inner"``,
        ``"left"``, ``"right"``, ``"outer"``), ``indicator``, ``validate``,
        ``one_to_one``, ``suffixes``, ``left_on``/``right_on`` and the options.
        The right row's label is kept in the column ``index_right``.

        Examples
        --------
        >>> import pandas as pd, lsh_frame
        >>> people = pd.DataFrame({"name": ["john smith", "mary jones"]})
        >>> staff = pd.DataFrame({"name": ["jon smith", "peter pan"]})
        >>> people.lsh.merge(staff, on="name", threshold=0.3, min_score=0.8)[
        ...     ["name_x", "index_right", "name_y"]]
               name_x  index_right     name_y
        0  john smith            0  jon smith
        """
        return _merge.merge(self._frame, right, fields, **options)
