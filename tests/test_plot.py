"""Pictures (lsh_frame.plot): each draws what it claims, headless (Agg)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

import lsh_frame as lf  # noqa: E402
from lsh_frame.decide.model import MatchModel  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def customers_scored():
    customers = lf.datasets.make_customers(1_500, seed=2)
    truth = customers.pop("entity_id")
    columns = list(customers.columns)
    return customers, columns, lf.pairs(customers, columns), truth


def with_gid(artists, gid):
    return [artist for artist in artists if artist.get_gid() == gid]


def log2_odds(probability):
    return np.log2(probability) - np.log2(1 - probability)


# --- matplotlib is optional ----------------------------------------------------------


def test_importing_lsh_frame_does_not_import_matplotlib():
    code = "import sys, lsh_frame; print('matplotlib' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_without_matplotlib_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pip install 'lsh-frame\[plot\]'"):
        lf.plot.s_curve(0.5)


def test_ax_must_be_an_axes():
    with pytest.raises(lf.ConfigTypeError, match="'ax' parameter of s_curve"):
        lf.plot.s_curve(0.5, ax=plt.figure())


# --- S-curve -------------------------------------------------------------------------


def test_s_curve_marks_the_plans_threshold_and_recall():
    plan = lf.plan(0.7, num_perm=64, recall=0.9)
    ax = lf.plot.s_curve(plan)
    (threshold,) = with_gid(ax.lines, "threshold")
    assert list(threshold.get_xdata()) == [0.7, 0.7]
    (recall,) = with_gid(ax.lines, "recall")
    assert list(recall.get_ydata()) == [0.9, 0.9]
    (point,) = with_gid(ax.lines, "recall_at_threshold")
    assert point.get_ydata()[0] == pytest.approx(plan.recall_at_threshold)
    (curve,) = with_gid(ax.lines, "curve")
    np.testing.assert_allclose(curve.get_ydata(), plan(curve.get_xdata()))
    assert f"{plan.bands} bands × {plan.rows} rows" in ax.get_title()


def test_s_curve_plans_a_threshold_and_draws_on_a_given_axes():
    _, ax = plt.subplots()
    assert lf.plot.s_curve(0.5, num_perm=64, ax=ax) is ax
    lf.plot.s_curve(0.8, ax=ax)
    curves = with_gid(ax.lines, "curve")
    assert len(curves) == 2
    expected = lf.plan(0.5, num_perm=64)
    np.testing.assert_allclose(curves[0].get_ydata(), expected(curves[0].get_xdata()))
    cosine = lf.plot.s_curve(lf.plan(0.9, metric="cosine"))
    assert cosine.get_xlim() == (-1.0, 1.0)
    with pytest.raises(lf.ConfigTypeError, match="LshPlan"):
        lf.plot.s_curve("0.5")
    with pytest.raises(lf.ConfigError, match="threshold"):
        lf.plot.s_curve(1.5)


# --- score histogram -----------------------------------------------------------------


def test_score_histogram_stacks_the_decision_and_marks_its_cut(customers_scored):
    _, _, scored, _ = customers_scored
    ax = lf.plot.score_histogram(scored, bins=20)
    (cut,) = with_gid(ax.lines, "cut")
    assert cut.get_xdata()[0] == scored.attrs["lsh_frame"]["min_score"]
    assert "provisional" in cut.get_label()
    assert len(ax.patches) == 2 * 20  # non-matches and matches, stacked
    _, match = ax.containers
    # Stacked: the top layer's heights are the totals of both.
    tops = np.array([bar.get_y() + bar.get_height() for bar in match])
    counts, _ = np.histogram(scored["score"].dropna(), bins=np.linspace(0, 1, 21))
    np.testing.assert_array_equal(tops, counts)
    matched = np.array([bar.get_height() for bar in match])
    assert matched.sum() == scored.loc[scored["score"].notna(), "match"].sum()


def test_score_histogram_of_probabilities_marks_the_match_cut(customers_scored):
    _, _, scored, _ = customers_scored
    ax = lf.plot.score_histogram(scored, column="match_probability", log=True)
    (cut,) = with_gid(ax.lines, "cut")
    assert cut.get_xdata()[0] == scored.attrs["lsh_frame"]["model"]["match_cut"]
    assert cut.get_label().startswith("match cut")
    assert ax.get_yscale() == "log"
    # A model saved before the learned cut decides at 0.5.
    old = scored.copy()
    old.attrs = {"lsh_frame": {**scored.attrs["lsh_frame"]}}
    old.attrs["lsh_frame"]["model"] = {
        name: value
        for name, value in scored.attrs["lsh_frame"]["model"].items()
        if name != "match_cut"
    }
    ax = lf.plot.score_histogram(old, column="match_probability")
    assert with_gid(ax.lines, "cut")[0].get_xdata()[0] == 0.5


def test_score_histogram_marks_a_numeric_min_score_or_a_given_cut(customers_scored):
    customers, columns, scored, _ = customers_scored
    numeric = lf.score(customers, scored[["left", "right"]], columns, min_score=0.8)
    (cut,) = with_gid(lf.plot.score_histogram(numeric).lines, "cut")
    assert cut.get_xdata()[0] == 0.8 and cut.get_label() == "min_score 0.8"
    # A given model decides with no cut on score.
    decided = lf.score(
        customers,
        scored[["left", "right", "found_by"]],
        columns,
        min_score=scored.attrs["lsh_frame"]["model"],
    )
    assert with_gid(lf.plot.score_histogram(decided).lines, "cut") == []
    # Pairs that lost their attrs need a cut of the user's.
    bare = scored.copy()
    bare.attrs = {}
    with pytest.raises(lf.ConfigError, match="cut=<number>"):
        lf.plot.score_histogram(bare)
    (cut,) = with_gid(lf.plot.score_histogram(bare, cut=0.75).lines, "cut")
    assert cut.get_xdata()[0] == 0.75
    # The match cut is the model's, recorded in the attrs too.
    with pytest.raises(lf.ConfigError, match="cut=<number>"):
        lf.plot.score_histogram(bare, column="match_probability")
    with pytest.raises(lf.ConfigError, match="'cut' parameter"):
        lf.plot.score_histogram(scored, cut=1.5)


def test_score_histogram_refuses_what_it_cannot_count(customers_scored):
    _, _, scored, _ = customers_scored
    with pytest.raises(lf.ColumnError, match="match_probability"):
        lf.plot.score_histogram(
            scored.drop(columns="match_probability"), column="match_probability"
        )
    with pytest.raises(lf.ColumnError, match="'score' column"):
        lf.plot.score_histogram(scored[["left", "right"]])
    with pytest.raises(lf.ConfigError, match="'column' parameter"):
        lf.plot.score_histogram(scored, column="given_name_score")
    with pytest.raises(lf.ConfigTypeError, match="DataFrame of scored pairs"):
        lf.plot.score_histogram(scored["score"])
    with pytest.raises(lf.ConfigError, match="no 'score' value"):
        lf.plot.score_histogram(scored.assign(score=np.nan))


# --- cluster sizes -------------------------------------------------------------------


def test_cluster_sizes_counts_entities_of_each_size(customers_scored):
    customers, _, scored, _ = customers_scored
    ids = customers.lsh.cluster(scored)
    ax = lf.plot.cluster_sizes(ids)
    expected = ids.value_counts().value_counts().sort_index()
    bars = with_gid(ax.patches, "entities")
    assert [round(bar.get_x() + bar.get_width() / 2) for bar in bars] == list(
        expected.index
    )
    assert [bar.get_height() for bar in bars] == list(expected)
    assert f"{ids.nunique():,} entities from {len(ids):,} rows" in ax.get_title()


def test_cluster_sizes_counts_both_tables_of_a_link():
    left = pd.Series([0, 1, 2], index=["a", "b", "c"])
    right = pd.Series([0, 0, 3], index=["x", "y", "z"])
    ax = lf.plot.cluster_sizes((left, right), log=False)
    assert [(round(bar.get_x() + 0.4), bar.get_height()) for bar in ax.patches] == [
        (1, 3),
        (3, 1),
    ]
    with pytest.raises(lf.ConfigTypeError, match="Series of entity ids"):
        lf.plot.cluster_sizes([0, 0, 1])
    with pytest.raises(lf.ConfigError, match="missing values"):
        lf.plot.cluster_sizes(pd.Series([0, None, 1]))


# --- match weights -------------------------------------------------------------------


def test_match_weights_draws_every_field_and_level(customers_scored):
    _, _, scored, _ = customers_scored
    learned = scored.attrs["lsh_frame"]["model"]
    ax = lf.plot.match_weights(learned)
    bars = with_gid(ax.patches, "weights")
    assert len(bars) == len(learned["fields"]) * len(learned["levels"])
    expected = [w for field in learned["fields"].values() for w in field["weight"]]
    np.testing.assert_allclose([bar.get_width() for bar in bars], expected, atol=1e-3)
    priors = with_gid(ax.patches, "prior")
    np.testing.assert_allclose(
        [bar.get_width() for bar in priors],
        [log2_odds(learned["prior"]), log2_odds(learned["alone_prior"])],
    )
    labels = [label.get_text() for label in ax.get_yticklabels()]
    assert labels[0] == "prior" and "given_name  >= 0.99" in labels
    # The scored pairs and the model object draw the same.
    for given in (scored, MatchModel.from_dict(learned)):
        again = with_gid(lf.plot.match_weights(given).patches, "weights")
        assert [bar.get_width() for bar in again] == [bar.get_width() for bar in bars]


def test_match_weights_reads_fields_at_their_own_levels():
    model = MatchModel(
        prior=0.1,
        m={"name": np.full(4, 0.25), "title": np.full(9, 1 / 9)},
        u={"name": np.array([0.1, 0.2, 0.3, 0.4]), "title": np.full(9, 1 / 9)},
        field_cuts={"title": (0.99, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3)},
    )
    ax = lf.plot.match_weights(model)
    assert len(with_gid(ax.patches, "weights")) == 4 + 9
    assert len(with_gid(ax.patches, "prior")) == 1  # no alone_prior


@pytest.mark.parametrize(
    "model, message",
    [
        ({"prior": 0.1}, "dict for model that is not a learned model"),
        (
            {"prior": 0.1, "fields": {"name": {"m": [0.5, 0.5], "u": [0.5, 0.5]}}},
            "invalid numbers",
        ),
        (None, "got no model"),
        ("model.json", "not a learned model"),
    ],
)
def test_match_weights_refuses_what_is_not_a_learned_model(model, message):
    with pytest.raises(lf.ConfigError, match=message):
        lf.plot.match_weights(model)


def test_match_weights_of_pairs_decided_by_a_cut_says_there_is_no_model():
    df = pd.DataFrame({"name": ["john smith", "jon smith", "mary jones"]})
    scored = lf.pairs(df, "name", min_score=0.8)
    with pytest.raises(lf.ConfigError, match="without a learned model"):
        lf.plot.match_weights(scored)


# --- waterfall -----------------------------------------------------------------------


def waterfall_heights(ax):
    steps = [bar.get_height() for bar in with_gid(ax.patches, "contributions")]
    (total,) = with_gid(ax.patches, "total")
    return steps, total.get_height()


def test_waterfall_ends_at_the_pairs_match_probability(customers_scored):
    _, columns, scored, _ = customers_scored
    learned = scored.attrs["lsh_frame"]["model"]
    near = (scored["match_probability"] - 0.5).abs().idxmin()
    row = scored.loc[near]
    ax = lf.plot.waterfall(row)
    steps, total = waterfall_heights(ax)
    assert len(steps) == 1 + len(columns)
    assert steps[0] == pytest.approx(log2_odds(learned["prior"]))
    assert abs(total - log2_odds(row["match_probability"])) < 1e-9
    assert sum(steps) == pytest.approx(total)
    # Each field adds the model's weight of the pair's level (0 when missing).
    for name, step in zip(columns, steps[1:], strict=True):
        value = row[f"{name}_score"]
        weights = learned["fields"][name]["weight"]
        level = int(MatchModel.levels(np.array([value]))[0])
        assert step == pytest.approx(
            0.0 if np.isnan(value) else weights[level], abs=1e-3
        )
    assert f"match probability {row['match_probability']:.3g}" in ax.get_title()


def test_waterfall_starts_pairs_only_the_neighbours_key_found_at_their_prior(
    customers_scored,
):
    _, _, scored, _ = customers_scored
    learned = scored.attrs["lsh_frame"]["model"]
    alone = scored[scored["found_by"] == "record_neighbours"]
    row = alone.loc[alone["match_probability"].idxmax()]
    steps, total = waterfall_heights(lf.plot.waterfall(row))
    assert steps[0] == pytest.approx(log2_odds(learned["alone_prior"]))
    assert abs(total - log2_odds(row["match_probability"])) < 1e-9


def test_waterfall_starts_every_kind_of_pair_where_its_decision_did():
    people = lf.datasets.make_customers(1_500, seed=7)
    fields = ["given_name", "surname", "date_of_birth", "city", "postcode"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scored = lf.pairs(people, fields)
    # Pairs only weak keys found, compound ones among them, start at alone_prior.
    assert scored["found_by"].astype(str).str.contains("&&.*record_neighbours$").any()
    decided = scored[scored["match_probability"].between(1e-6, 1 - 1e-6)]
    kinds = decided.groupby(decided["found_by"].astype(str), observed=True).head(1)
    assert len(kinds) > 2
    for _, row in kinds.iterrows():
        _, total = waterfall_heights(lf.plot.waterfall(row))
        assert total == pytest.approx(log2_odds(row["match_probability"]), abs=1e-6)


def test_waterfall_takes_a_model_and_notes_identical_pairs():
    learned = {
        "prior": 0.2,
        "cuts": [0.99, 0.9, 0.8],
        "fields": {
            "name": {"m": [0.8, 0.1, 0.05, 0.05], "u": [0.1, 0.1, 0.1, 0.7]},
            "city": {"m": [0.9, 0.05, 0.03, 0.02], "u": [0.3, 0.1, 0.1, 0.5]},
        },
    }
    row = pd.Series(
        {
            "left": 3,
            "right": 9,
            "found_by": "identical",
            "name_score": 1.0,
            "city_score": np.nan,
        }
    )
    ax = lf.plot.waterfall(row, model=learned)
    steps, total = waterfall_heights(ax)
    assert steps == pytest.approx([-2.0, 3.0, 0.0])
    assert total == pytest.approx(1.0)
    assert "identical" in ax.get_title() and "pair 3 ~ 9" in ax.get_title()
    assert [label.get_text() for label in ax.get_xticklabels()][-2] == "city\nmissing"
    # One row as a frame is read as that row.
    frame = row.to_frame().T
    assert waterfall_heights(lf.plot.waterfall(frame, model=learned))[1] == total


def test_waterfall_refuses_rows_it_cannot_read(customers_scored):
    _, _, scored, _ = customers_scored
    row = scored.iloc[0]
    with pytest.raises(lf.ColumnError, match="'email_score'"):
        lf.plot.waterfall(row.drop("email_score"))
    with pytest.raises(lf.ConfigTypeError, match="one row of scored pairs"):
        lf.plot.waterfall(scored)
    other_fields = {
        "prior": 0.1,
        "cuts": [0.99, 0.9, 0.8],
        "fields": {"title": {"m": [0.7, 0.1, 0.1, 0.1], "u": [0.1, 0.1, 0.1, 0.7]}},
    }
    with pytest.raises(lf.ColumnError, match="'title_score'"):
        lf.plot.waterfall(row, model=other_fields)
    bare = row.copy()
    bare.attrs = {}
    with pytest.raises(lf.ConfigError, match="got no model"):
        lf.plot.waterfall(bare)
