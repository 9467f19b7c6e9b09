"""Block two product catalogues whose titles are written differently.

Run from the repository root:

    python examples/block_products.py

It links the Abt and Buy catalogues (about 1,100 products each; 1,097 true pairs) when
the project's shared data folder sits beside the checkout (``../shared/data/abt_buy``;
the files come from the Leipzig entity-resolution benchmarks page, "Abt-Buy"); point
``LSH_FRAME_DATA`` at a folder holding ``abt_buy/abt.csv``, ``buy.csv`` and
``abt_buy_perfect_mapping.csv`` to use your copy. Without them, it links two small
catalogues built in this file.

Product titles share few character shingles across shops ("Sony Bravia KDL-40" against
"KDL40 40in LCD TV by Sony"), so the LSH record key finds few pairs; a neighbours field
gives each product its most similar products by weighted tokens. The plain-column
defaults hold both (the neighbours key as ``record_neighbours``); this example shows the
neighbours field alone, then the defaults key by key. The price column can be passed as
it is read (text like "$399.00" or numbers).
"""

from __future__ import annotations

import pandas as pd
from _data import locate

import lsh_frame as lf


def load() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    found = locate("abt_buy/abt.csv", "Abt-Buy", "four hand-made product pairs")
    if found is not None:
        folder = found.parent
        read = {"encoding": "latin-1", "index_col": "id"}
        abt = pd.read_csv(folder / "abt.csv", **read)
        buy = pd.read_csv(folder / "buy.csv", **read)
        truth = pd.read_csv(folder / "abt_buy_perfect_mapping.csv")
        truth.columns = ["left", "right"]
        return abt, buy, truth
    abt = pd.DataFrame(
        {
            "name": [
                "Sony Bravia KDL-40 LCD TV",
                "Canon EOS 450D camera body",
                "Apple iPod nano 8GB blue",
                "Bose QuietComfort 3 headphones",
            ],
            "price": [999.0, 549.0, 149.0, None],
        },
        index=[10, 11, 12, 13],
    )
    buy = pd.DataFrame(
        {
            "name": [
                "KDL40 Bravia 40in LCD television by Sony",
                "EOS-450D Canon SLR",
                "iPod Nano (8 GB) - Blue",
                "QC3 QuietComfort Bose",
            ],
            "price": [979.99, 529.0, 139.0, 299.0],
        },
        index=[20, 21, 22, 23],
    )
    truth = pd.DataFrame({"left": [10, 11, 12, 13], "right": [20, 21, 22, 23]})
    return abt, buy, truth


def main() -> None:
    abt, buy, truth = load()
    columns = [column for column in ("name", "description", "price") if column in abt]
    field = lf.Field(columns, blocking="neighbours", name="neighbours")
    report = abt.lsh.blocking_report([field], other=buy, true_pairs=truth)
    print(report.decisions[-1])
    print(report.table[["key", "pairs", "pairs_completeness"]].to_string(index=False))

    defaults = abt.lsh.blocking_report(columns, other=buy, true_pairs=truth)
    print("\nThe plain-column defaults, key by key (their neighbours key is the same):")
    print(
        defaults.table[["key", "pairs", "cumulative_completeness"]].to_string(
            index=False
        )
    )

    pairs = abt.lsh.candidates([field], other=buy)
    print(f"\n{len(pairs):,} candidate pairs for {len(abt):,} × {len(buy):,} products")


if __name__ == "__main__":
    main()
