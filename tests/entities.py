"""Hand-made entities that more than one test folder reads (tests/ is on the path)."""

from __future__ import annotations

import pandas as pd


def cliques_and_a_chain() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Three groups of four records that agree, joined by two weak links, and
    a chain of six records linked one after the other by strong links."""
    frame = pd.DataFrame({"x": ["r"] * 18}, index=[f"r{i:02d}" for i in range(18)])
    rows = []
    for group in range(3):
        members = range(4 * group, 4 * group + 4)
        rows += [(a, b, 0.999) for a in members for b in members if a < b]
    rows += [(3, 4, 0.7), (7, 8, 0.6)]  # chain the groups
    rows += [(i, i + 1, 0.9999) for i in range(12, 17)]  # a chain of six
    pairs = pd.DataFrame(rows, columns=["left", "right", "match_probability"])
    pairs["left"] = frame.index[pairs["left"]]
    pairs["right"] = frame.index[pairs["right"]]
    pairs["match"] = True
    return frame, pairs
