"""Connected components of a graph given as edge arrays: numpy union-find.

Every node starts as its own root. Each round hooks the larger root of every
edge under the smaller one (``np.minimum.at``, so conflicting hooks resolve to
the smallest), then compresses paths by pointer jumping (``parent =
parent[parent]``) until every node points at its root. Edges whose ends share a
root are dropped. The rounds needed grow with the logarithm of the component
size, not with the number of edges or nodes, and no loop runs per edge.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from lsh_frame._kernels import native


def components(
    nodes: int, first: npt.NDArray[np.int64], second: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """Return each node's root: the smallest node of its component.

    The result depends only on the set of edges, never on their order, so it
    is deterministic.

    Examples
    --------
    >>> components(5, np.array([3, 1]), np.array([4, 3])).tolist()
    [0, 1, 2, 1, 1]
    """
    if native.compiled is not None:
        return native.components(nodes, first, second)
    parent = np.arange(nodes, dtype=np.int64)
    first = np.asarray(first, dtype=np.int64)
    second = np.asarray(second, dtype=np.int64)
    while first.size:
        root_first, root_second = parent[first], parent[second]
        apart = root_first != root_second
        if not apart.any():
            break
        low = np.minimum(root_first[apart], root_second[apart])
        high = np.maximum(root_first[apart], root_second[apart])
        np.minimum.at(parent, high, low)
        while True:
            grand = parent[parent]
            if np.array_equal(grand, parent):
                break
            parent = grand
        first, second = first[apart], second[apart]
    return parent


def first_appearance_ids(roots: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Renumber components 0, 1, 2 ... in the order of their first node.

    Roots are the smallest node of each component, so ranking the distinct
    roots numbers components by where they first appear.

    Examples
    --------
    >>> first_appearance_ids(np.array([0, 1, 0, 3, 1])).tolist()
    [0, 1, 0, 2, 1]
    """
    is_root = np.zeros(roots.size, dtype=bool)
    is_root[roots] = True
    rank = np.cumsum(is_root) - 1
    return rank[roots]
