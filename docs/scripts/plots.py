"""Draw the pictures of ``lsh_frame.plot`` for the docs into docs/img/.

Run from the repository root (needs the ``plot`` extra for matplotlib):

    pip install -e '.[plot]'
    python docs/scripts/plots.py

Everything comes from ``lf.datasets.make_customers(20_000, seed=1)``, the data of
docs/guide-scores.md, deduplicated with the defaults (``df.lsh.pairs(columns)``):

- plot_s_curve.png: ``lf.plot.s_curve(lf.plan(0.7))``;
- plot_score_histogram.png: ``lf.plot.score_histogram`` of ``score`` and of
  ``match_probability`` (log scale), side by side;
- plot_cluster_sizes.png: ``lf.plot.cluster_sizes(df.lsh.cluster(scored))``;
- plot_match_weights.png: ``lf.plot.match_weights`` of the learned model;
- plot_waterfall.png: ``lf.plot.waterfall`` of the pair closest to the decision
  (the pair ``explain`` shows in the guide).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: write the files, open no window

import matplotlib.pyplot as plt

import lsh_frame as lf

ROWS = 20_000
SEED = 1
DPI = 100
OUTPUT = Path(__file__).resolve().parents[1] / "img"


def save(figure: plt.Figure, name: str) -> None:
    """Write one figure as a PNG and report its size."""
    path = OUTPUT / name
    figure.savefig(path, dpi=DPI)
    plt.close(figure)
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KB)")


def main() -> None:
    """Score the customers once and draw every picture from the result."""
    OUTPUT.mkdir(parents=True, exist_ok=True)
    customers = lf.datasets.make_customers(ROWS, seed=SEED)
    customers.pop("entity_id")
    columns = list(customers.columns)
    scored = customers.lsh.pairs(columns)
    print(f"{len(scored):,} scored pairs, {int(scored['match'].sum()):,} matches")

    save(lf.plot.s_curve(lf.plan(0.7)).figure, "plot_s_curve.png")

    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
    lf.plot.score_histogram(scored, ax=left)
    lf.plot.score_histogram(scored, column="match_probability", log=True, ax=right)
    save(figure, "plot_score_histogram.png")

    ids = customers.lsh.cluster(scored)
    save(lf.plot.cluster_sizes(ids).figure, "plot_cluster_sizes.png")

    model = scored.attrs["lsh_frame"]["model"]
    save(lf.plot.match_weights(model).figure, "plot_match_weights.png")

    near = (scored["match_probability"] - 0.5).abs().idxmin()
    print(
        f"waterfall of the pair {scored.loc[near, 'left']} ~ "
        f"{scored.loc[near, 'right']}"
    )
    save(lf.plot.waterfall(scored.loc[near]).figure, "plot_waterfall.png")


if __name__ == "__main__":
    main()
