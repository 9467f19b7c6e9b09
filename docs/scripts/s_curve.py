"""Draw the LSH S-curve of a few plans from ``lsh_frame.plan`` to docs/img/s_curve.png.

Run from the repository root (needs the ``plot`` extra for matplotlib):

    pip install -e '.[plot]'
    python docs/scripts/s_curve.py

Solid lines are the plans ``lf.plan(threshold, num_perm=128, recall=0.95)`` for the
thresholds 0.5, 0.7 and 0.9; a dotted vertical line marks each threshold and a dot the
recall the plan reaches there. For contrast, the dashed line is the banding that
minimises the sum of the false-positive and false-negative areas for threshold 0.7
(the criterion of datasketch's default optimiser): its steep part sits at the
threshold, so it finds fewer than half of the pairs at 0.7.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: write the file, open no window

import matplotlib.pyplot as plt
import numpy as np

import lsh_frame as lf

NUM_PERM = 128
RECALL = 0.95
THRESHOLDS = (0.5, 0.7, 0.9)
CONTRAST_THRESHOLD = 0.7
OUTPUT = Path(__file__).resolve().parents[1] / "img" / "s_curve.png"


def balanced_plan(threshold: float, num_perm: int) -> lf.LshPlan:
    """Return the banding with the least false-positive plus false-negative area.

    This ignores how many pairs at the threshold are found, which is the point of
    the contrast.
    """
    plans = (
        lf.LshPlan(
            threshold=threshold,
            recall=RECALL,
            num_perm=num_perm,
            bands=bands,
            rows=rows,
        )
        for rows in range(1, num_perm + 1)
        for bands in range(1, num_perm // rows + 1)
    )
    return min(plans, key=lambda p: p.false_positive_mass + p.false_negative_mass)


def main() -> None:
    """Draw the curves, save the figure and print what each plan promises."""
    similarity = np.linspace(0.0, 1.0, 501)
    figure, axes = plt.subplots(figsize=(7.5, 5.6), dpi=120)
    colors = ("tab:blue", "tab:orange", "tab:green")
    for threshold, color in zip(THRESHOLDS, colors, strict=True):
        chosen = lf.plan(threshold, num_perm=NUM_PERM, recall=RECALL)
        found = chosen.recall_at_threshold
        axes.plot(
            similarity,
            chosen(similarity),
            color=color,
            label=f"threshold {threshold:g}: {chosen.bands} bands × {chosen.rows} "
            f"rows, P({threshold:g}) = {found:.3f}",
        )
        axes.axvline(threshold, color=color, linestyle=":", linewidth=1)
        axes.plot([threshold], [found], "o", color=color)
        print(chosen)

    contrast = balanced_plan(CONTRAST_THRESHOLD, NUM_PERM)
    found = contrast.recall_at_threshold
    axes.plot(
        similarity,
        contrast(similarity),
        color="grey",
        linestyle="--",
        label=f"for contrast, threshold {CONTRAST_THRESHOLD:g} by least FP + FN "
        f"area: {contrast.bands} × {contrast.rows}, P({CONTRAST_THRESHOLD:g}) = "
        f"{found:.3f}",
    )
    axes.plot([CONTRAST_THRESHOLD], [found], "o", color="grey")
    print(
        f"contrast: {contrast.bands} bands × {contrast.rows} rows; "
        f"P({CONTRAST_THRESHOLD:g}) = {found:.3f}"
    )

    axes.axhline(RECALL, color="black", linewidth=0.6, alpha=0.4)
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1.02)
    axes.set_xlabel("Jaccard similarity s of a pair")
    axes.set_ylabel(r"P(candidate | s) = $1 - (1 - s^{rows})^{bands}$")
    axes.set_title(
        f"LSH S-curves of lf.plan(threshold, num_perm={NUM_PERM}, recall={RECALL:g})"
    )
    axes.legend(
        loc="upper center", bbox_to_anchor=(0.5, -0.13), fontsize=8, frameon=False
    )
    axes.grid(alpha=0.3)
    figure.tight_layout()
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(OUTPUT)
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
