"""Plots draw without error and hold the elements they promise.

Each main figure is also written as a PNG to ``$BAYESCM_FIGURE_DIR`` when it is set
(for a human to look at), else to pytest's ``tmp_path``.
"""

import functools
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.collections import PathCollection
from matplotlib.container import StemContainer

import bayescm as bcm
from bayescm import analysis, curves, intervals, plots

COUNTS = dict(tp=[26, 31, 3], fn=[0, 9, 12], fp=[2, 13, 0], tn=[6, 20, 150])
NAMES = ["cocaine", "mid", "rare"]


@functools.cache
def three() -> tuple[bcm.ConfusionMatrix, object]:
    cms = bcm.ConfusionMatrix(**COUNTS, classifier=NAMES)
    return cms, bcm.fit(bcm.models.three_beta(cms), sampler="exact", random_seed=1)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.fixture
def save(tmp_path):
    """save(ax, name): write the Axes' figure as a PNG and return its path."""
    folder = Path(os.environ.get("BAYESCM_FIGURE_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)

    def write(ax, name: str) -> Path:
        path = folder / f"{name}.png"
        ax.figure.savefig(path, dpi=110)
        assert path.stat().st_size > 1000
        return path

    return write


def labels_of(ax) -> list[str]:
    """y tick labels from top to bottom."""
    ticks = sorted(zip(ax.get_yticks(), (t.get_text() for t in ax.get_yticklabels()),
                       strict=True), reverse=True)
    return [text for _, text in ticks]


def line(ax, label: str):
    found = [ln for ln in ax.get_lines() if ln.get_label().startswith(label)]
    assert len(found) == 1, [ln.get_label() for ln in ax.get_lines()]
    return found[0]


def test_metric_posterior_forest(save):
    _, idata = three()
    ax = plots.metric_posterior(idata, "mcc")
    assert labels_of(ax) == NAMES  # first classifier on top
    plug = line(ax, "plug-in")
    expected = bcm.metrics.compute(idata.observed_data["counts"], ["mcc"])["mcc"].values
    np.testing.assert_allclose(plug.get_xdata(), expected, rtol=1e-6)
    np.testing.assert_array_equal(plug.get_ydata(), [2, 1, 0])
    assert plug.get_marker() == "x"
    assert line(ax, "no skill").get_xdata()[0] == 0  # mcc: reference at 0
    # the 95% HDI segments match bcm.summary
    table = bcm.summary(idata, metrics=["mcc"])
    assert len(ax.collections) == 6  # a 95% and a 50% segment per classifier, top down
    outer = [c.get_segments()[0][:, 0] for c in ax.collections[0::2]]
    ref = table[["hdi_lower", "hdi_upper"]].to_numpy()
    np.testing.assert_allclose(outer, ref, rtol=1e-5)
    save(ax, "metric_posterior_forest")


def test_metric_posterior_ridge_and_options(save):
    _, idata = three()
    ax = plots.metric_posterior(idata, "tnr", kind="ridge", classifiers=["rare", "mid"],
                                hdi_prob=0.9)
    assert labels_of(ax) == ["rare", "mid"]
    assert len(line(ax, "plug-in").get_xdata()) == 2
    assert not [ln for ln in ax.get_lines() if ln.get_label().startswith("no skill")]
    assert len(ax.collections) >= 4  # density and HDI shading per classifier
    save(ax, "metric_posterior_ridge")
    _, given = plt.subplots()
    assert plots.metric_posterior(idata, "bm", plug_in=False, ax=given) is given
    assert not [ln for ln in given.get_lines() if ln.get_label() == "plug-in"]
    with pytest.raises(ValueError, match="kind"):
        plots.metric_posterior(idata, "mcc", kind="violin")
    with pytest.raises(KeyError, match="nobody"):
        plots.metric_posterior(idata, "mcc", classifiers=["nobody"])
    with pytest.raises(KeyError, match="Unknown metric"):
        plots.metric_posterior(idata, "nonsense")
    with pytest.raises(TypeError, match="sampler='exact'"):
        plots.metric_posterior(three()[0], "mcc")


def test_metric_posterior_latent_class(save):
    rng = np.random.default_rng(0)
    n = 600
    site = np.where(rng.integers(0, 2, n) == 0, "north", "south")
    y = rng.random(n) < np.where(site == "north", 0.3, 0.6)
    a = np.where(y, rng.random(n) < 0.9, rng.random(n) < 0.1).astype(int)
    b = np.where(y, rng.random(n) < 0.85, rng.random(n) < 0.05).astype(int)
    tab = bcm.AgreementTable.from_predictions(a, b, population=site)
    with pytest.warns(Warning):  # short chains: the convergence report complains
        idata = bcm.fit(bcm.models.hui_walter(tab), draws=300, tune=300, chains=2,
                        random_seed=1)
    ax = plots.metric_posterior(idata, "ppv")  # depends on each population's prevalence
    labels = labels_of(ax)
    assert len(labels) == 4 and all("/" in t for t in labels)
    assert {t.split("/")[1] for t in labels} == {"A", "B"}
    assert not [ln for ln in ax.get_lines() if ln.get_label() == "plug-in"]  # no labels
    save(ax, "metric_posterior_latent_class")


def test_roc_space_pmf(save):
    cm = bcm.ConfusionMatrix(tp=31, fn=9, fp=13, tn=20, classifier="mid")
    n_pos, n_neg = 30, 20
    ax = plots.roc_space_pmf(cm, n_pos, n_neg)
    points = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len(points) == 1
    xy = points[0].get_offsets()
    assert len(xy) == (n_pos + 1) * (n_neg + 1)
    assert xy[:, 0].min() == 0 and xy[:, 0].max() == 1 and xy[:, 1].max() == 1
    assert points[0].get_array().sum() == pytest.approx(1.0)
    star = line(ax, "observed")
    assert star.get_xdata()[0] == pytest.approx(13 / 33)
    assert star.get_ydata()[0] == pytest.approx(31 / 40)
    save(ax, "roc_space_pmf")
    # the plug-in binomial at a zero cell puts no mass off TP' = n_pos: those points go
    cocaine = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    ax = plots.roc_space_pmf(cocaine, 10, 8, model="binomial")
    offsets = ax.collections[0].get_offsets()
    assert len(offsets) == 9 and np.all(offsets[:, 1] == 1)
    with pytest.raises(ValueError, match="cm holds 3"):
        plots.roc_space_pmf(three()[0], 10, 10)
    with pytest.raises(ValueError, match="n_neg must be at least 1"):
        plots.roc_space_pmf(cm, 10, 0)


def test_metric_pmf(save):
    cm = bcm.ConfusionMatrix(tp=31, fn=9, fp=13, tn=20, classifier="mid")
    ax = plots.metric_pmf(cm, "mcc", 40, 33)
    stems = [c for c in ax.containers if isinstance(c, StemContainer)]
    assert len(stems) == 1
    heights = stems[0].markerline.get_ydata()
    frame = bcm.exact.metric_pmf(cm, "mcc", 40, 33)
    defined = frame["probability"][np.isfinite(frame["value"])].sum()
    assert np.sum(heights) == pytest.approx(defined)
    binomial = line(ax, "plug-in binomial")
    assert np.sum(binomial.get_ydata()) <= 1 + 1e-9
    # the plug-in is narrower: its largest mass is higher
    assert np.max(binomial.get_ydata()) > np.max(heights)
    assert line(ax, "observed mcc").get_xdata()[0] == pytest.approx(
        float(bcm.metrics.evaluate("mcc", 31, 9, 13, 20)))
    save(ax, "metric_pmf")
    rare = bcm.ConfusionMatrix(tp=3, fn=12, fp=0, tn=150)
    ax = plots.metric_pmf(rare, "ppv", 5, 20, compare_binomial=False)
    assert not [ln for ln in ax.get_lines() if ln.get_label().startswith("plug-in")]
    assert "P(undefined)" in ax.containers[0].get_label()  # TP' = FP' = 0 is likely
    save(ax, "metric_pmf_undefined")


def test_leaderboard(save):
    rng = np.random.default_rng(3)
    k = 14
    tp = rng.integers(60, 95, k)
    tn = rng.integers(60, 95, k)
    cms = bcm.ConfusionMatrix(tp=tp, fn=100 - tp, fp=100 - tn, tn=tn,
                              classifier=[f"team {i:02d}" for i in range(k)])
    board = analysis.leaderboard(cms, "acc", prizes=[10_000, 2_000, 1_000], draws=2000,
                                 random_seed=1)
    ax = plots.leaderboard(board, top=10)
    assert len(ax.images) == 1
    assert ax.images[0].get_array().shape == (10, 10)
    rows = [t.get_text() for t in ax.get_yticklabels()]  # image rows: best on top
    assert rows == list(board.rank_probabilities.index[:10]) and ax.yaxis_inverted()
    shown = board.rank_probabilities.iloc[:10, :10].to_numpy()
    assert len(ax.texts) == int((shown >= 0.01).sum())
    prize_axis = ax.child_axes[0]
    assert prize_axis.get_ylabel() == "expected prize"
    save(ax, "leaderboard")
    plain = analysis.leaderboard(cms, "ba", draws=500, random_seed=1)
    ax = plots.leaderboard(plain, top=5)
    assert ax.images[0].get_array().shape == (5, 5) and not ax.child_axes
    with pytest.raises(TypeError, match="Leaderboard"):
        plots.leaderboard(cms)


def test_sample_size_curve(save):
    plan = analysis.sample_size(0.1, random_seed=1)
    ax = plots.sample_size_curve(plan)
    target = line(ax, "target")
    assert set(target.get_ydata()) == {0.1}
    chosen = line(ax, f"N = {plan.n_required}")
    assert chosen.get_xdata()[0] == plan.n_required
    rule = line(ax, "normal rule")
    # the rule line crosses the target at plan.n_rule
    assert np.interp(0.1, rule.get_ydata(), rule.get_xdata()) == pytest.approx(
        plan.n_rule, rel=1e-2)
    assert ax.get_xscale() == "log"
    save(ax, "sample_size_curve")
    composite = analysis.sample_size(0.3, metric="bm", n_grid=[25, 50, 100, 200, 400],
                                     n_sims=100, draws=200, random_seed=1)
    ax = plots.sample_size_curve(composite)
    assert not [ln for ln in ax.get_lines() if ln.get_label().startswith("normal rule")]


def test_coverage(save):
    grid = np.linspace(0.01, 0.99, 99)
    methods = ("wald", "wilson", "clopper_pearson", "bayes_hdi")
    frames = {m: intervals.coverage(m, 50, grid) for m in methods}
    frames["wilson (simulated)"] = intervals.coverage("wilson", 50, grid, n_sims=500,
                                                      random_seed=1)
    ax = plots.coverage(frames)
    assert [ln.get_label() for ln in ax.get_lines()] == [*frames, "nominal 95%"]
    assert set(line(ax, "nominal").get_ydata()) == {0.95}
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), frames["wald"]["coverage"])
    assert len(ax.collections) == 1  # Monte Carlo band of the simulated frame only
    save(ax, "coverage")
    ax = plots.coverage([frames["wald"], frames["wilson"]], hdi_prob=0.9)
    assert [ln.get_label() for ln in ax.get_lines()] == ["wald", "wilson", "nominal 90%"]
    with pytest.warns(DeprecationWarning, match="hdi_prob"):
        old = plots.coverage([frames["wald"]], level=0.9)
    assert old.get_lines()[-1].get_label() == "nominal 90%"
    with pytest.raises(ValueError, match=r"intervals\.coverage"):
        plots.coverage({"bad": frames["wald"].reset_index()})


def test_curve_bands(save):
    rng = np.random.default_rng(0)
    y = np.repeat([1, 0], 150)
    found = {"strong": curves.roc(rng.normal(1.5 * y, 1.0), y, draws=300, random_seed=1),
             "weak": curves.roc(rng.normal(0.5 * y, 1.0), y, draws=300, random_seed=1)}
    ax = plots.curve_bands(found)
    labels = [ln.get_label() for ln in ax.get_lines()]
    assert len(labels) == 3 and labels[1] == "chance"
    assert labels[0].startswith("strong: AUC") and labels[2].startswith("weak: AUC")
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert len(legend) == 4 and legend[-1] == "95% pointwise bands"
    save(ax, "curve_bands_roc")
    pr = [curves.precision_recall(rng.normal(y, 1.0), y, draws=200, random_seed=2)]
    ax = plots.curve_bands(pr)
    assert ax.get_lines()[0].get_label().startswith("AP")
    save(ax, "curve_bands_pr")
    with pytest.raises(ValueError, match="share no axes"):
        plots.curve_bands([found["strong"], pr[0]])
    with pytest.raises(TypeError, match="Curve"):
        plots.curve_bands([found["strong"], "roc"])
