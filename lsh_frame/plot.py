"""Pictures of a plan, the scores, the entities and the match model.

Each function draws on a matplotlib ``Axes`` (a new figure's, or the one passed
as ``ax=``) and returns it, as pandas' and seaborn's plots do:

- :func:`s_curve`: the S-curve of a banding plan, its threshold and the recall
  it reaches there;
- :func:`score_histogram`: scores or match probabilities of scored pairs,
  matches and non-matches stacked, with the decision's cut;
- :func:`cluster_sizes`: how many entities have 1, 2, 3 ... rows;
- :func:`match_weights`: the learned model's weight of every field and level;
- :func:`waterfall`: how each field moved one pair from the prior to its
  match probability.

matplotlib (the ``plot`` extra: ``pip install 'lsh-frame[plot]'``) is imported
only when a function draws, so ``import lsh_frame`` never imports it.
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from lsh_frame.block.identical import IDENTICAL
from lsh_frame.compare.levels import level_names
from lsh_frame.decide.model import MatchModel
from lsh_frame.decide.weak_keys import found_alone
from lsh_frame.errors import ColumnError, ConfigError, ConfigTypeError
from lsh_frame.sketch.banding import LshPlan
from lsh_frame.sketch.banding import plan as make_plan

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["cluster_sizes", "match_weights", "s_curve", "score_histogram", "waterfall"]

_FOR = "tab:green"
_AGAINST = "tab:red"
_PRIOR = "tab:gray"


def _pyplot() -> Any:
    """Import matplotlib's pyplot, or say how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError(
            "lsh_frame.plot needs matplotlib, which is not installed. Install it "
            "with: pip install 'lsh-frame[plot]'"
        ) from error
    return plt


def _axes(ax: Any, owner: str, size: tuple[float, float]) -> Axes:
    """Return ``ax``, or the axes of a new figure of ``size`` inches."""
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=size, layout="constrained")
        return ax
    from matplotlib.axes import Axes

    if not isinstance(ax, Axes):
        raise ConfigTypeError(
            f"The 'ax' parameter of {owner} must be a matplotlib Axes or None. Got "
            f"{type(ax).__name__} instead."
        )
    return ax


def _log2_odds(probability: Any) -> Any:
    with np.errstate(divide="ignore"):
        return np.log2(probability) - np.log2(1 - probability)


def _probability_of(log2_odds: Any) -> Any:
    return 1 / (1 + np.exp2(-np.asarray(log2_odds, dtype=np.float64)))


# --- the S-curve of a plan -----------------------------------------------------------


_SIMILARITY = {
    "jaccard": "Jaccard similarity s of a pair",
    "hamming": "share of equal bits s of a pair (1 − d/D)",
    "cosine": "cosine similarity s of a pair",
}


def s_curve(
    plan: LshPlan | float,
    /,
    *,
    num_perm: int = 128,
    recall: float = 0.95,
    metric: str = "jaccard",
    ax: Axes | None = None,
) -> Axes:
    """Draw the S-curve of a banding plan with its threshold and recall marked.

    The curve is P(candidate | s) = 1 − (1 − s^rows)^bands; a dotted line marks
    the plan's threshold, a thin line the recall it was asked for, and a dot
    the share of pairs at the threshold it finds (``recall_at_threshold``).
    Call it again with the same ``ax`` to compare plans.

    Parameters
    ----------
    plan : LshPlan or float
        A plan from :func:`lsh_frame.plan`, or a threshold to plan for with
        ``num_perm``, ``recall`` and ``metric`` (as :func:`lsh_frame.plan`).
    num_perm, recall, metric
        Used only when ``plan`` is a threshold.
    ax : matplotlib Axes, optional
        Where to draw; a new figure by default.

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> ax = s_curve(0.5)
    >>> ax.get_title()
    'LSH S-curve: 23 bands × 3 rows of 128 values'
    """
    owner = "s_curve"
    if isinstance(plan, LshPlan):
        chosen = plan
    elif isinstance(plan, numbers.Real) and not isinstance(plan, bool):
        chosen = make_plan(float(plan), num_perm=num_perm, recall=recall, metric=metric)
    else:
        raise ConfigTypeError(
            f"The 'plan' argument of {owner} must be an LshPlan (from lf.plan) or a "
            f"threshold in (0, 1]. Got {type(plan).__name__} instead."
        )
    axes = _axes(ax, owner, (6.4, 4.4))
    low = -1.0 if chosen.metric == "cosine" else 0.0
    similarity = np.linspace(low, 1.0, 501)
    (curve,) = axes.plot(
        similarity,
        chosen(similarity),
        gid="curve",
        label=f"{chosen.bands} bands × {chosen.rows} rows",
    )
    color = curve.get_color()
    found = chosen.recall_at_threshold
    axes.axvline(
        chosen.threshold,
        color=color,
        linestyle=":",
        linewidth=1,
        gid="threshold",
        label=f"threshold {chosen.threshold:g}",
    )
    axes.axhline(
        chosen.recall,
        color="black",
        linewidth=0.6,
        alpha=0.4,
        gid="recall",
        label=f"recall asked: {chosen.recall:g}",
    )
    axes.plot(
        [chosen.threshold],
        [found],
        "o",
        color=color,
        gid="recall_at_threshold",
        label=f"P({chosen.threshold:g}) = {found:.3f}",
    )
    axes.set_xlim(low, 1)
    axes.set_ylim(0, 1.02)
    axes.set_xlabel(_SIMILARITY.get(chosen.metric, "similarity s of a pair"))
    axes.set_ylabel(r"P(candidate | s) = $1 - (1 - s^{rows})^{bands}$")
    axes.set_title(
        f"LSH S-curve: {chosen.bands} bands × {chosen.rows} rows of "
        f"{chosen.num_perm} values"
    )
    axes.grid(alpha=0.3)
    axes.legend(loc="lower right", fontsize=8)
    return axes


# --- scores of pairs -----------------------------------------------------------------


def _scored_attrs(scored: pd.DataFrame) -> dict[str, Any] | None:
    recorded = scored.attrs.get("lsh_frame")
    return recorded if isinstance(recorded, dict) and "min_score" in recorded else None


def _histogram_cut(
    scored: pd.DataFrame, column: str, cut: float | None, owner: str
) -> tuple[float | None, str]:
    """Return the cut to mark on the histogram of ``column``, and its label."""
    if cut is not None:
        if (
            isinstance(cut, bool)
            or not isinstance(cut, numbers.Real)
            or not 0 <= float(cut) <= 1
        ):
            raise ConfigError(
                f"The 'cut' parameter of {owner} must be a number in [0, 1] or None. "
                f"Got {cut!r} instead."
            )
        return float(cut), f"cut {float(cut):g}"
    recorded = _scored_attrs(scored)
    if column == "match_probability" and recorded is not None:
        model = recorded.get("model") or {}
        # Models saved before the learned match cut decide at 0.5.
        at = float(model.get("match_cut", 0.5))
        return at, f"match cut {at:.3g}"
    if recorded is None:
        raise ConfigError(
            f"{owner} marks the decision's cut recorded by score() in "
            "scored.attrs['lsh_frame'], and these pairs have none (some pandas "
            "operations, such as concat or merge, drop attrs). Pass cut=<number> "
            "to mark a cut of your own."
        )
    chosen = recorded.get("min_score")
    rule = recorded.get("min_score_rule")
    if chosen is None:
        return None, ""  # a given model decided: no cut on score
    if rule == "auto" and recorded.get("model") is not None:
        return float(chosen), f"provisional cut {float(chosen):g} (the model decides)"
    return float(chosen), f"min_score {float(chosen):g}"


def score_histogram(
    scored: pd.DataFrame,
    /,
    *,
    column: Literal["score", "match_probability"] = "score",
    bins: int = 50,
    cut: float | None = None,
    log: bool = False,
    ax: Axes | None = None,
) -> Axes:
    """Draw the histogram of the pairs' scores with the decision's cut.

    Matches and non-matches (the ``match`` column) are stacked in two
    colours, so the cut can be read against what it decided. The cut is read
    from ``scored.attrs["lsh_frame"]``: ``min_score`` on ``score`` (the
    provisional cut when a learned model decides, none when a given model
    did), the model's ``match_cut`` on ``match_probability`` (0.5 for a model
    saved before it).

    Parameters
    ----------
    scored : DataFrame
        Scored pairs from :func:`lsh_frame.score` or :func:`lsh_frame.pairs`.
    column : {"score", "match_probability"}
        What to count.
    bins : int
        Bins over [0, 1].
    cut : float, optional
        Mark this cut instead of the recorded one.
    log : bool
        Count on a log scale (the probabilities pile up near 0 and 1).
    ax : matplotlib Axes, optional
        Where to draw; a new figure by default.

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import lsh_frame as lf
    >>> df = pd.DataFrame({"name": ["john smith", "jon smith", "mary jones"]})
    >>> scored = lf.pairs(df, "name", min_score=0.8)
    >>> ax = score_histogram(scored, bins=10)
    >>> [line.get_xdata()[0] for line in ax.lines if line.get_gid() == "cut"]
    [0.8]
    """
    owner = "score_histogram"
    if not isinstance(scored, pd.DataFrame):
        raise ConfigTypeError(
            f"The 'scored' argument of {owner} must be a DataFrame of scored pairs. "
            f"Got {type(scored).__name__} instead."
        )
    if column not in ("score", "match_probability"):
        raise ConfigError(
            f"The 'column' parameter of {owner} must be 'score' or "
            f"'match_probability'. Got {column!r} instead."
        )
    if isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or bins < 1:
        raise ConfigError(
            f"The 'bins' parameter of {owner} must be a whole number >= 1. Got "
            f"{bins!r} instead."
        )
    if column not in scored.columns:
        hint = (
            " Pairs get it when a learned model decides (min_score='auto' or a model)."
            if column == "match_probability"
            else " Score the pairs first with lf.score or lf.pairs."
        )
        raise ColumnError(
            f"{owner} counts the '{column}' column, which the pairs do not have."
            f"{hint} Columns: {', '.join(map(str, scored.columns))}."
        )
    values = scored[column].to_numpy(dtype=np.float64, na_value=np.nan)
    present = np.isfinite(values)
    if not present.any():
        raise ConfigError(
            f"{owner} found no '{column}' value to count: every one is missing"
            + (
                " (no model was learned: too few pairs, or one-sided scores)."
                if column == "match_probability"
                else "."
            )
        )
    at, label = _histogram_cut(scored, column, cut, owner)
    axes = _axes(ax, owner, (6.4, 4.0))
    edges = np.linspace(0.0, 1.0, int(bins) + 1)
    if "match" in scored.columns:
        match = scored["match"].to_numpy(dtype=bool, na_value=False)
        axes.hist(
            [values[present & ~match], values[present & match]],
            bins=edges,
            stacked=True,
            color=[_PRIOR, _FOR],
            label=["no match", "match"],
            log=log,
        )
    else:
        axes.hist(values[present], bins=edges, color=_PRIOR, label="pairs", log=log)
    if at is not None:
        axes.axvline(at, color="black", linestyle="--", gid="cut", label=label)
    axes.set_xlim(0, 1)
    axes.set_xlabel(column)
    axes.set_ylabel("pairs")
    axes.set_title(f"{int(present.sum()):,} scored pairs")
    axes.legend(fontsize=8)
    return axes


# --- entities ------------------------------------------------------------------------


def cluster_sizes(
    ids: Any,
    /,
    *,
    log: bool = True,
    ax: Axes | None = None,
) -> Axes:
    """Draw how many entities have each number of rows.

    Parameters
    ----------
    ids : Series, or a tuple of two Series
        Entity ids from :func:`lsh_frame.cluster` (two Series when linking:
        an entity's rows of both tables count together), or the
        ``cluster_id`` column of :func:`lsh_frame.dedupe`.
    log : bool
        Count entities on a log scale (most entities have one row).
    ax : matplotlib Axes, optional
        Where to draw; a new figure by default.

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> ax = cluster_sizes(pd.Series([0, 0, 1, 2, 2, 2, 3]))
    >>> [(int(bar.get_x() + bar.get_width() / 2), int(bar.get_height()))
    ...  for bar in ax.patches]
    [(1, 2), (2, 1), (3, 1)]
    """
    owner = "cluster_sizes"
    parts = list(ids) if isinstance(ids, tuple) else [ids]
    for part in parts:
        if not isinstance(part, (pd.Series, pd.Index, np.ndarray)) or (
            np.ndim(part) != 1
        ):
            raise ConfigTypeError(
                f"The 'ids' argument of {owner} must be a Series of entity ids (from "
                "lf.cluster), or a tuple of two when linking. Got "
                f"{type(part).__name__} instead."
            )
        if pd.isna(part).any():
            raise ConfigError(
                f"The entity ids passed to {owner} have missing values; every row "
                "belongs to an entity (lf.cluster gives each row an id)."
            )
    values = np.concatenate([np.asarray(part) for part in parts])
    if values.size == 0:
        raise ConfigError(f"{owner} got no entity ids: there are no rows to count.")
    _, rows = np.unique(values, return_counts=True)
    sizes, entities = np.unique(rows, return_counts=True)
    axes = _axes(ax, owner, (6.4, 4.0))
    axes.bar(sizes, entities, width=0.8, color=_FOR, log=log, gid="entities")
    axes.set_xlabel("rows in the entity")
    axes.set_ylabel("entities")
    axes.set_title(
        f"{rows.size:,} entities from {values.size:,} rows; largest {rows.max():,}"
    )
    from matplotlib.ticker import MaxNLocator

    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    return axes


# --- the learned model ---------------------------------------------------------------


def _model_from(model: Any, owner: str) -> MatchModel:
    """Return the MatchModel of a model, its dict, or scored pairs carrying one."""
    if isinstance(model, pd.DataFrame):
        recorded = model.attrs.get("lsh_frame")
        learned = recorded.get("model") if isinstance(recorded, dict) else None
        if learned is None:
            raise ConfigError(
                f"{owner} got scored pairs without a learned model in "
                "attrs['lsh_frame']['model']: they were decided by a numeric "
                "min_score, or too few pairs to learn from. Score with "
                "min_score='auto' (the default), or pass a saved model."
            )
        model = learned
    if model is None:
        raise ConfigError(
            f"{owner} got no model (None): the pairs were decided by a numeric "
            "min_score, or too few pairs to learn from. Score with min_score='auto' "
            "(the default), or pass a saved model."
        )
    return MatchModel.from_dict(model, owner, "model")


def match_weights(model: Any, /, *, ax: Axes | None = None) -> Axes:
    """Draw the learned model's weight of every field and level, and its prior.

    A level's weight is log2(m / u) in bits: how much more often matches than
    non-matches reach it. Bars to the right count for a match, to the left
    against; a pair's log2 odds are the prior's plus one weight per field (a
    missing value weighs 0). The prior's bar is log2(prior / (1 − prior)); a
    second one shows ``alone_prior``, the prior of the pairs only the
    neighbours key (or a weak key, see ``alone_keys``) found, when the model has one.

    Parameters
    ----------
    model : dict, MatchModel or DataFrame
        ``scored.attrs["lsh_frame"]["model"]`` (or the JSON of it), a
        ``MatchModel``, or scored pairs that carry a model.
    ax : matplotlib Axes, optional
        Where to draw; a new figure by default.

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> learned = {"prior": 0.1, "cuts": [0.99, 0.9, 0.8], "fields": {
    ...     "name": {"m": [0.8, 0.1, 0.05, 0.05], "u": [0.1, 0.1, 0.1, 0.7]}}}
    >>> ax = match_weights(learned)
    >>> [round(float(bar.get_width()), 3)
    ...  for bar in ax.patches if bar.get_gid() == "weights"]
    [3.0, 0.0, -1.0, -3.807]
    """
    owner = "match_weights"
    learned = _model_from(model, owner)
    names: list[str] = []
    widths: list[float] = []
    priors = [("prior", learned.prior)]
    if learned.alone_prior is not None:
        priors.append(("prior, weak keys only", learned.alone_prior))
    for label in learned.m:
        weights = np.log2(learned.m[label] / learned.u[label])
        names += [f"{label}  {level}" for level in level_names(learned.cuts_of(label))]
        widths += weights.tolist()
    rows = len(priors) + len(names) + len(learned.m)
    axes = _axes(ax, owner, (6.4, 1.0 + 0.22 * rows))
    # Top to bottom: the priors, then each field's levels, a gap between fields.
    prior_positions = [float(index) for index in range(len(priors))]
    positions: list[float] = []
    position = len(priors) + 1.0
    for label in learned.m:
        size = learned.size_of(label)
        positions += [position + level for level in range(size)]
        position += size + 1
    prior_widths = [
        float(_log2_odds(np.float64(probability))) for _, probability in priors
    ]
    axes.barh(
        prior_positions,
        prior_widths,
        color=_PRIOR,
        gid="prior",
    )
    axes.barh(
        positions,
        widths,
        color=[_FOR if width >= 0 else _AGAINST for width in widths],
        gid="weights",
    )
    for at, width in zip(
        [*prior_positions, *positions], [*prior_widths, *widths], strict=True
    ):
        axes.annotate(
            f"{width:+.2f}",
            (width, at),
            xytext=(3 if width >= 0 else -3, 0),
            textcoords="offset points",
            ha="left" if width >= 0 else "right",
            va="center",
            fontsize=7,
        )
    axes.set_yticks(
        [*prior_positions, *positions],
        [name for name, _ in priors] + names,
        fontsize=8,
    )
    axes.axvline(0, color="black", linewidth=0.8)
    axes.set_ylim(max([*prior_positions, *positions]) + 0.7, -0.7)
    axes.margins(x=0.12)
    axes.set_xlabel("weight in bits: log2(m / u); the prior's: log2 of its odds")
    axes.set_title("Match weights of the learned model")
    axes.grid(axis="x", alpha=0.3)
    return axes


def _pair_row(pair: Any, owner: str) -> pd.Series:
    if isinstance(pair, pd.DataFrame) and len(pair) == 1:
        row = pair.iloc[0]
        row.attrs = pair.attrs
        return row
    if not isinstance(pair, pd.Series):
        raise ConfigTypeError(
            f"The 'pair' argument of {owner} must be one row of scored pairs (for "
            f"example scored.iloc[0] or scored.loc[label]). Got "
            f"{type(pair).__name__}"
            + (f" of {len(pair)} rows" if isinstance(pair, pd.DataFrame) else "")
            + " instead."
        )
    return pair


def _label(value: Any) -> Hashable:
    return value.item() if isinstance(value, np.generic) else value


def waterfall(pair: Any, /, *, model: Any = None, ax: Axes | None = None) -> Axes:
    """Draw how each field moved one pair from the prior to its match probability.

    The first bar is the prior's log2 odds (``alone_prior``'s for a pair only
    the neighbours key found, as :func:`lsh_frame.score` reads it); each field
    then adds its weight, log2(m / u) of the pair's level on it (0 when a
    value is missing); the last bar is the sum, whose probability is the
    pair's ``match_probability``. The right axis reads log2 odds as
    probabilities. A pair found only by ``"identical"`` matches with
    probability 1 whatever the sum; the title says so.

    Parameters
    ----------
    pair : Series
        One row of scored pairs (``scored.iloc[i]``, ``scored.loc[label]``) with
        the model's fields' ``<field>_score`` columns.
    model : dict, MatchModel or DataFrame, optional
        The model to read the pair with; by default the one the row carries
        (``attrs["lsh_frame"]["model"]`` of the scored pairs).
    ax : matplotlib Axes, optional
        Where to draw; a new figure by default.

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> learned = {"prior": 0.2, "cuts": [0.99, 0.9, 0.8], "fields": {
    ...     "name": {"m": [0.8, 0.1, 0.05, 0.05], "u": [0.1, 0.1, 0.1, 0.7]},
    ...     "city": {"m": [0.9, 0.05, 0.03, 0.02], "u": [0.3, 0.1, 0.1, 0.5]}}}
    >>> row = pd.Series({"left": 0, "right": 1, "name_score": 1.0, "city_score": 0.5})
    >>> ax = waterfall(row, model=learned)
    >>> [round(float(bar.get_height()), 3) for bar in ax.patches]
    [-2.0, 3.0, -4.644, -3.644]
    """
    owner = "waterfall"
    row = _pair_row(pair, owner)
    if model is None:
        recorded = row.attrs.get("lsh_frame")
        model = recorded.get("model") if isinstance(recorded, dict) else None
    learned = _model_from(model, owner)
    missing = [
        f"{label}_score" for label in learned.m if f"{label}_score" not in row.index
    ]
    if missing:
        raise ColumnError(
            f"{owner} reads the pair's scores of the model's fields, and the row has "
            f"no {', '.join(repr(name) for name in missing)}. Pass a row of the "
            "pairs scored with that model (lf.score or lf.pairs on the same fields)."
        )
    found_by = row.get("found_by")
    found_by = None if found_by is None or pd.isna(found_by) else str(found_by)
    evidence = learned.evidence(
        {
            label: np.array([row[f"{label}_score"]], dtype=np.float64)
            for label in learned.m
        },
        # As the decision reads it: only weak keys (compound ones aside).
        np.array([found_by is not None and found_alone(found_by, learned.alone_keys)]),
    )
    start = float(evidence.start[0])
    steps = [float(evidence.weights[label][0]) for label in learned.m]
    total = start + sum(steps)
    names = ["prior"]
    for label in learned.m:
        level = int(evidence.levels[label][0])
        levels = level_names(learned.cuts_of(label))
        names.append(f"{label}\n{levels[level] if level < len(levels) else 'missing'}")
    names.append("total")
    axes = _axes(ax, owner, (max(6.4, 0.8 * len(names) + 1.5), 4.4))
    bottoms = np.concatenate([[0.0], start + np.cumsum([0.0, *steps[:-1]])])
    heights = np.array([start, *steps])
    colors = [_PRIOR] + [_FOR if step >= 0 else _AGAINST for step in steps]
    places = np.arange(len(names))
    axes.bar(places[:-1], heights, bottom=bottoms, color=colors, gid="contributions")
    axes.bar(
        places[-1:],
        [total],
        color=_FOR if total >= 0 else _AGAINST,
        edgecolor="black",
        gid="total",
    )
    # The sum may be near 0 bits (probability near 0.5): a line keeps it visible.
    axes.plot(
        [places[-1] - 0.4, places[-1] + 0.4], [total, total], color="black", linewidth=2
    )
    probability = float(_probability_of(total))
    ends = [*(bottoms + heights).tolist(), total]
    texts = [f"{height:+.2f}" for height in heights]
    texts.append(f"{total:+.2f} bits\np = {probability:.3g}")
    for place, end, height, text in zip(
        places, ends, [*heights, total], texts, strict=True
    ):
        axes.annotate(
            text,
            (place, end),
            xytext=(0, 3 if height >= 0 else -3),
            textcoords="offset points",
            ha="center",
            va="bottom" if height >= 0 else "top",
            fontsize=7,
        )
    # Connect each bar's end to the next bar's start.
    for place, end in zip(places[:-1], ends[:-1], strict=True):
        axes.plot([place + 0.4, place + 0.6], [end, end], color="black", linewidth=0.6)
    axes.axhline(0, color="black", linewidth=0.8)
    axes.set_xticks(places, names, fontsize=7)
    axes.set_ylabel("log2 odds of a match (bits)")
    low, high = axes.get_ylim()
    span = max(abs(low), abs(high), 1.0)
    axes.set_ylim(min(low, -1.0) - 0.08 * span, max(high, 1.0) + 0.08 * span)
    right = axes.secondary_yaxis("right", functions=(_probability_of, _log2_odds))
    ticks = np.array([1e-9, 1e-6, 1e-3, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 1 - 1e-6])
    lower, upper = _probability_of(np.array(axes.get_ylim()))
    right.set_yticks(
        [tick for tick in ticks if lower <= tick <= upper],
        [f"{tick:g}" for tick in ticks if lower <= tick <= upper],
    )
    right.set_ylabel("match probability")
    identical = found_by == IDENTICAL
    title = (
        f"pair {_label(row.get('left'))!r} ~ {_label(row.get('right'))!r}: "
        f"match probability {probability:.3g}"
    )
    if identical:
        title += " (identical rows: 1 by definition)"
    axes.set_title(title, fontsize=10)
    return axes
