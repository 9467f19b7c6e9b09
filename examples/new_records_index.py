"""Match new records against a table resolved once: a saved lf.Index.

Builds an index of 19,000 synthetic customers (resolving them once: keys,
model, entity ids), saves it to a folder, loads it back, finds the best
matches of a few new records, then resolves a batch of 1,000 new records to
entity ids (existing ones where they match), and removes records.

Run: python examples/new_records_index.py  (built-in data, nothing to download)
"""

from __future__ import annotations

import tempfile
import time
import warnings
from pathlib import Path

import lsh_frame as lf

warnings.simplefilter("ignore")  # the index's own notes on the data

people = lf.datasets.make_customers(20_000, seed=5)
truth = people.pop("entity_id")
saved, new = people.iloc[:19_000], people.iloc[19_000:]

started = time.perf_counter()
index = saved.lsh.index()  # every column; the same as lf.Index.build(saved)
print(f"built in {time.perf_counter() - started:.1f} s: {index}")
for key in index.keys:
    print("  key", key)

with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "customers.index"
    index.save(path)
    size = sum(file.stat().st_size for file in path.iterdir())
    started = time.perf_counter()
    index = lf.Index.load(path)
    print(
        f"saved {size / 1e6:.1f} MB in {len(list(path.iterdir()))} files; "
        f"loaded in {(time.perf_counter() - started) * 1e3:.0f} ms"
    )

    # Each new record's best matches, scored and decided by the index's model.
    found = index.query(new.iloc[:3], k=2)
    print("\nbest two matches of three new records:")
    print(
        found[
            [
                "left",
                "right",
                "rank",
                "score",
                "match_probability",
                "match",
                "entity_id",
            ]
        ]
        .round(3)
        .to_string(index=False)
    )

    # New records get an existing entity's id when they match one.
    before = index.entity_ids.copy()
    started = time.perf_counter()
    resolved = index.resolve(new)
    info = resolved.attrs["lsh_frame"]
    print(
        f"\nresolved {len(new):,} new records "
        f"in {time.perf_counter() - started:.2f} s: "
        f"{info['matched']} joined existing entities, {info['new_entities']} new "
        f"entities, {len(info['merges'])} merges reported (not applied)"
    )
    same = index.entity_ids.loc[before.index].equals(before)
    print(f"existing ids unchanged: {same}")
    joined = resolved[resolved["cluster_id"].isin(before.to_numpy())]
    members = before.index.groupby(before.to_numpy())
    right = sum(
        truth.loc[label] in set(truth.loc[members[entity]])
        for label, entity in joined["cluster_id"].items()
    )
    print(f"of the {len(joined)} that joined an entity, {right} joined their own")

    index.remove(saved.index[:100])
    print(f"after removing 100 records: {len(index):,} held")
    index.save(path, overwrite=True)
