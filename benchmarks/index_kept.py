"""The index on the table a user keeps (issue 44): which build joins sign-ups right.

    python benchmarks/index_kept.py            # ~1 minute on 2 shared cores

``make_customers(12_000, seed=3)``: the first 10,000 rows are last week's, the
last 2,000 next week's sign-ups. The index is built four ways (on the
``drop_duplicates`` table, ``Index.from_dedupe`` of ``dedupe`` and of
``drop_duplicates``, and on the raw rows), then ``index.resolve`` of the
sign-ups. Of the sign-ups whose person is among last week's, the share given
that person's entity ("recall"); of the sign-ups joined to an existing entity,
the share joined right ("precision"). Bars: both >= 0.98.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import pandas as pd

import lsh_frame as lf


def joined(index: lf.Index, new: pd.DataFrame, truth: pd.Series) -> tuple[Any, ...]:
    before = index.entity_ids
    owners = (
        pd.DataFrame({"id": before.to_numpy(), "t": truth.loc[before.index].to_numpy()})
        .value_counts()
        .reset_index()
        .drop_duplicates("id")
        .set_index("id")["t"]
    )
    first_new = int(before.max()) + 1
    resolved = index.resolve(new)["cluster_id"]
    new_truth = truth.loc[new.index]
    known = new_truth.isin(owners.to_numpy())
    existing = resolved < first_new
    held = pd.Series(owners.reindex(resolved.to_numpy()).to_numpy(), resolved.index)
    right = existing & (held == new_truth)
    return (
        int(known.sum()),
        float((right & known).sum() / known.sum()),
        float(right.sum() / max(int(existing.sum()), 1)),
    )


def main() -> None:
    people = lf.datasets.make_customers(12_000, seed=3)
    truth = people.pop("entity_id")
    last, new = people.iloc[:10_000], people.iloc[10_000:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        deduped = last.lsh.dedupe()
        kept = last.lsh.drop_duplicates()
    builds = {
        "last.lsh.drop_duplicates().lsh.index()": lambda: kept.lsh.index(),
        "lf.Index.from_dedupe(last.lsh.dedupe())": lambda: lf.Index.from_dedupe(
            deduped
        ),
        "lf.Index.from_dedupe(last.lsh.drop_duplicates())": lambda: (
            lf.Index.from_dedupe(kept)
        ),
        "last.lsh.index() (the rows)": lambda: last.lsh.index(),
    }
    print("| index built by | records | s | known | recall | precision | warns |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name, build in builds.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            started = time.perf_counter()
            index = build()
            seconds = time.perf_counter() - started
            held = len(index)
            known, recall, precision = joined(index, new, truth)
        said = "; ".join(str(w.message)[:60] for w in caught)
        print(
            f"| `{name}` | {held:,} | {seconds:.1f} | {known} | {recall:.4f} "
            f"| {precision:.4f} | {said} |"
        )


if __name__ == "__main__":
    main()
