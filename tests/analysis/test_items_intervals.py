"""benchmark_intervals (bayescm vs CLT vs clustered SE), paired comparisons from an items
fit, and the calibration of the accuracy interval."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats

import bayescm as bcm
from bayescm.analysis.items_intervals import icc_anova
from bayescm.analysis.items_simulate import simulate_items
from bayescm.models.items.model import _specify


def _fake_fit(res: bcm.ItemResults, rng: np.random.Generator):
    """An InferenceData whose accuracy draws are known (the classical columns do not
    depend on them)."""
    import arviz as az

    acc = rng.beta(30, 10, size=(2, 500, res.n_models))
    post = xr.Dataset({"accuracy": (("chain", "draw", "model"), acc)},
                      coords={"model": list(res.models)})
    return az.InferenceData(posterior=post), acc


def test_classical_columns_by_hand():
    df = simulate_items(60, [0.6, 0.75], icc=0.3, cluster_size=6, runs=2, rng=2)
    res = bcm.ItemResults.from_frame(df, run="run", cluster="cluster")
    idata, acc = _fake_fit(res, np.random.default_rng(0))
    table = bcm.analysis.benchmark_intervals(res, idata)
    hdi_table = bcm.analysis.benchmark_intervals(res, idata, kind="hdi")
    scores = df.groupby(["model", "item"])["correct"].mean().unstack()
    cluster = df.groupby("item")["cluster"].first().to_numpy()
    for m, name in enumerate(res.models):
        s = scores.loc[name].to_numpy()
        row = table.loc[name]
        assert row["mean"] == pytest.approx(s.mean())
        assert row["se_clt"] == pytest.approx(s.std(ddof=1) / np.sqrt(60))
        # clustered SE by its double sum over pairs of items in one cluster
        r = s - s.mean()
        pairs = sum(r[i] * r[j] for i in range(60) for j in range(60)
                    if cluster[i] == cluster[j])
        assert row["se_clustered"] == pytest.approx(np.sqrt(pairs) / 60)
        assert row["clt_upper"] - row["clt_lower"] == pytest.approx(2 * 1.959964 * row["se_clt"],
                                                                    rel=1e-5)
        assert row["design_effect"] == pytest.approx(1 + 5 * row["icc"])
        draws = acc[..., m].ravel()
        assert (row["bayes_lower"], row["bayes_upper"]) == pytest.approx(
            tuple(np.quantile(draws, [0.025, 0.975])))
        lo, hi = bcm.stats.hdi(draws, 0.95)
        assert tuple(hdi_table.loc[name, ["bayes_lower", "bayes_upper"]]) == pytest.approx(
            (float(lo), float(hi)))
    assert (table.attrs["kind"], hdi_table.attrs["kind"]) == ("equal_tailed", "hdi")
    with pytest.raises(ValueError, match="kind must be"):
        bcm.analysis.benchmark_intervals(res, idata, kind="hpd")


def test_a_fit_of_other_models_or_items_is_refused():
    """benchmark_intervals(results, idata) of another benchmark's fit: it mixed the
    tables (other items) or raised xarray's KeyError (other models)."""
    import arviz as az

    df = simulate_items(12, [0.6, 0.75], rng=3)
    res = bcm.ItemResults.from_frame(df)
    idata, _ = _fake_fit(res, np.random.default_rng(0))
    renamed = bcm.ItemResults.from_frame(df.assign(model=df["model"].str.upper()))
    with pytest.raises(ValueError, match="fit of the models"):
        bcm.analysis.benchmark_intervals(renamed, idata)
    counts = xr.Dataset({"counts": (("model", "item"), np.zeros((2, 12)))},
                        coords={"model": list(res.models), "item": list(res.items)})
    recorded = az.InferenceData(posterior=idata.posterior, observed_data=counts)
    fewer = bcm.ItemResults.from_frame(df[df["item"].isin(list(res.items)[:8])])
    with pytest.raises(ValueError, match="fit of 12 items, results has 8"):
        bcm.analysis.benchmark_intervals(fewer, recorded)
    assert len(bcm.analysis.benchmark_intervals(res, recorded)) == 2
    with pytest.raises(TypeError, match=r"idata must be an arviz\.InferenceData"):
        bcm.analysis.benchmark_intervals(res, "fit")


def test_icc_anova_against_statsmodels_free_formula():
    rng = np.random.default_rng(3)
    cluster = np.repeat(np.arange(200), 5)
    x = rng.normal(size=200)[cluster] * np.sqrt(0.3) + rng.normal(size=1000) * np.sqrt(0.7)
    # ANOVA estimator of an ICC of 0.3 from 200 clusters of 5: sd about 0.04
    assert abs(icc_anova(x, cluster) - 0.3) < 0.12
    assert icc_anova(np.ones(4), np.array([0, 0, 1, 1])) == 0.0


def test_default_fit_is_exact_for_one_model():
    """One model on independent items answered once: the interval and mean are the exact
    Beta's (no Monte Carlo error), equal-tailed or highest-density."""
    df = pd.DataFrame({"item": range(50), "model": "m", "correct": [1] * 35 + [0] * 15})
    res = bcm.ItemResults.from_frame(df)
    post = stats.beta(36, 16)
    table = bcm.analysis.benchmark_intervals(res, random_seed=1)
    row = table.loc["m"]
    np.testing.assert_allclose([row["bayes_lower"], row["bayes_upper"], row["bayes_mean"]],
                               [*post.ppf([0.025, 0.975]), post.mean()], rtol=1e-12)
    table = bcm.analysis.benchmark_intervals(res, random_seed=1, kind="hdi", hdi_prob=0.9)
    lo, hi = table.loc["m", ["bayes_lower", "bayes_upper"]]
    # the HDI's two conditions, solved independently of bayescm.stats.beta_hdi
    assert post.cdf(hi) - post.cdf(lo) == pytest.approx(0.9, abs=1e-9)
    assert post.pdf(hi) == pytest.approx(post.pdf(lo), rel=1e-6)
    # a NUTS fit of the same model has the same posterior: the closed form answers it too
    nuts = bcm.fit(bcm.models.items(res), draws=500, chains=2, random_seed=2, prior=False)
    row = bcm.analysis.benchmark_intervals(res, nuts).loc["m"]
    np.testing.assert_allclose([row["bayes_lower"], row["bayes_upper"], row["bayes_mean"]],
                               [*post.ppf([0.025, 0.975]), post.mean()], rtol=1e-12)
    # ... unless its draws were changed after the fit (a variable the builder did not make)
    nuts.posterior["extra"] = nuts.posterior["accuracy"] * 0
    lo = bcm.analysis.benchmark_intervals(res, nuts).loc["m", "bayes_lower"]
    # the CDF at a sampled 2.5% quantile has sd sqrt(0.025 * 0.975 / ESS) <= 0.007 at
    # ESS >= 500 (1,000 draws): 0.025 is more than 3.5 sd
    assert lo != post.ppf(0.025) and abs(post.cdf(lo) - 0.025) < 0.025


def test_compare_paired_errors_on_a_fit():
    df = pd.DataFrame({"item": list(range(20)) * 1, "model": "m",
                       "correct": [1, 0] * 10})
    idata = bcm.fit(bcm.models.items(bcm.ItemResults.from_frame(df)), sampler="exact",
                    draws=100, random_seed=1)
    with pytest.raises(ValueError, match="two different"):
        bcm.analysis.compare_paired(idata, "m", "m", "acc")
    with pytest.raises(KeyError, match="not in the data"):
        bcm.analysis.compare_paired(idata, "m", "other", "acc")
    # another metric: an items fit has the accuracy alone (no refit adds one)
    with pytest.raises(KeyError, match=r"has \['acc'\] alone"):
        bcm.analysis.leaderboard(idata, "err")
    with pytest.raises(KeyError, match=r"has \['acc'\] alone"):
        bcm.analysis.compare(idata, idata, "err")


@pytest.mark.parametrize("n", [30, 300])
def test_exact_interval_coverage_default_subset(n):
    """Independent items, one run, one model: the exact Beta interval covers the true
    accuracy (a new item's expected score) 95% of the time."""
    family = bcm.models.get_family("items")
    rng = np.random.default_rng(n)
    reps, hits = 400, 0
    for _ in range(reps):
        df = simulate_items(n, 0.7, runs=1, rng=rng)
        res = bcm.ItemResults.from_frame(df, run="run")
        # the family's conjugate posterior reads only the builder's record (no PyMC model)
        a, b = family.conjugate(None, _specify(res, None, "auto")).betas["accuracy"]
        lo, hi = stats.beta.ppf([0.025, 0.975], a[0], b[0])
        hits += lo <= 0.7 <= hi
    # binomial MC sd at 400 replications: 0.011; 3 sd plus 0.015 for the discreteness of
    # the coverage of a binomial proportion at n = 30
    assert abs(hits / reps - 0.95) < 3 * 0.011 + 0.015, hits / reps


@pytest.mark.parametrize(("n", "at_07", "averaged"), [(10, 0.924, 0.959), (30, 0.930, 0.952)])
def test_exact_interval_coverage_summed_over_every_outcome(n, at_07, averaged):
    """The model card's discreteness cells, without Monte Carlo: with n independent
    items the score k takes n + 1 values, so the coverage of the exact Beta's 95%
    equal-tailed interval at a fixed accuracy p is the binomial sum
    sum_k P(k | n, p) [p in interval(k)], and it jumps with p.  At p = 0.7 it is 0.924
    (n = 10) and 0.930 (n = 30), below 0.94; averaged over p uniform on [0.5, 0.9] it
    is 0.959 and 0.952, inside 0.94-0.96: the miss belongs to the point, not to the
    interval.  Each interval is the family's own conjugate posterior for that k."""
    family = bcm.models.get_family("items")
    bounds = []
    for k in range(n + 1):
        df = pd.DataFrame({"item": range(n), "model": "m", "correct": [1] * k + [0] * (n - k)})
        a, b = family.conjugate(None, _specify(bcm.ItemResults.from_frame(df), None, "auto")
                                ).betas["accuracy"]
        assert (float(a[0]), float(b[0])) == (1 + k, 1 + n - k)  # flat prior: Beta(1+k, 1+n-k)
        bounds.append(stats.beta.ppf([0.025, 0.975], a[0], b[0]))
    lo, hi = np.array(bounds).T

    def coverage(p: float) -> float:
        return float(np.sum(stats.binom.pmf(np.arange(n + 1), n, p) * ((lo <= p) & (p <= hi))))

    # exact sums: the only error is the rounding of the stated figures (and the grid's
    # 81 points for the average, which moves it by < 0.001)
    assert coverage(0.7) == pytest.approx(at_07, abs=6e-4)
    mean = np.mean([coverage(p) for p in np.linspace(0.5, 0.9, 81)])
    assert mean == pytest.approx(averaged, abs=1e-3)
    assert 0.94 <= mean <= 0.96


@pytest.mark.slow
@pytest.mark.parametrize("n", [30, 300])
def test_clustered_coverage_subset(n):
    """ICC 0.1, clusters of 5, one run, NUTS: 50 replications."""
    rng = np.random.default_rng(100 + n)
    hits = 0
    for _ in range(50):
        df = simulate_items(n, 0.7, icc=0.1, rng=rng)
        res = bcm.ItemResults.from_frame(df, run="run", cluster="cluster")
        idata = bcm.fit(bcm.models.items(res), draws=500, chains=2, prior=False,
                        random_seed=int(rng.integers(1 << 30)))
        lo, hi = np.quantile(idata.posterior["accuracy"].values.ravel(), [0.025, 0.975])
        hits += lo <= 0.7 <= hi
    # binomial MC sd at 50 replications: 0.031; allow 3 sd below and above
    assert abs(hits / 50 - 0.95) < 0.093, hits / 50


@pytest.mark.slow
def test_interval_covers_with_few_strongly_different_clusters():
    """ICC 0.3 between single scores (cluster scale 2.24 on the log-odds), 6 clusters of 5:
    the hardest clustered cell of the grid beyond 2 clusters.  benchmark_intervals' default
    (equal-tailed) interval covers 0.95 within 3 MC sd on 200 replications.  Measured by
    benchmarks/bench_items_calibration.py (2 x 500 draws): under the cluster scale's
    default HalfNormal(2.5), equal-tailed 0.948 (150 benchmarks; 0.950 on 150 more by
    reweighting), HDI of the same draws 0.898; under HalfNormal(2), the default before,
    0.922 (600), like the t interval on the 6 cluster means (0.926 in this design)."""
    rng = np.random.default_rng(30)
    reps, hits = 200, 0
    for _ in range(reps):
        df = simulate_items(30, 0.7, icc=0.3, rng=rng)
        res = bcm.ItemResults.from_frame(df, run="run", cluster="cluster")
        idata = bcm.fit(bcm.models.items(res), draws=500, chains=2, prior=False,
                        predictive=False, random_seed=int(rng.integers(1 << 30)))
        row = bcm.analysis.benchmark_intervals(res, idata).iloc[0]
        hits += row["bayes_lower"] <= 0.7 <= row["bayes_upper"]
    # binomial MC sd at 200 replications: 0.0154
    assert abs(hits / reps - 0.95) < 3 * 0.0154, hits / reps


@pytest.mark.slow
def test_null_of_equal_accuracy_rarely_declares_a_winner():
    """Two models of equal accuracy on the same correlated, clustered items: P(A better)
    > 0.95 in at most 6% of replications (bayes_evals' paired probit: 39% at 3,000)."""
    rng = np.random.default_rng(7)
    reps, wins = 100, 0
    for _ in range(reps):
        df = simulate_items(300, [0.7, 0.7], icc=0.1, rng=rng)
        res = bcm.ItemResults.from_frame(df, run="run", cluster="cluster")
        idata = bcm.fit(bcm.models.items(res), draws=500, chains=2, prior=False,
                        predictive=False, random_seed=int(rng.integers(1 << 30)))
        wins += bcm.analysis.compare_paired(idata, "model_0", "model_1", "acc").probability > 0.95
    # calibrated: 5%; binomial MC sd at 100 replications 0.022: allow 6% + 2 sd
    assert wins / reps < 0.06 + 0.044, wins / reps


@pytest.mark.slow
def test_p_a_better_is_uniform_under_the_null_at_50_items():
    """At 50 items (10 clusters) the share above 0.95 is where a mis-scaled posterior shows
    first (one run of 200 replications measured 0.10 there); calibrated, P(A better) is
    uniform under the null.  Chi-square over 10 bins of 300 replications at the 1% level
    (measured: 400 replications, 0.0575 above 0.95 and 0.055 below 0.05)."""
    from scipy import stats

    rng = np.random.default_rng(11)
    ps = []
    for _ in range(300):
        df = simulate_items(50, [0.7, 0.7], icc=0.1, rng=rng)
        res = bcm.ItemResults.from_frame(df, run="run", cluster="cluster")
        idata = bcm.fit(bcm.models.items(res), draws=500, chains=2, prior=False,
                        predictive=False, random_seed=int(rng.integers(1 << 30)))
        ps.append(bcm.analysis.compare_paired(idata, "model_0", "model_1", "acc").probability)
    counts = np.histogram(ps, bins=10, range=(0, 1))[0]
    assert stats.chisquare(counts).pvalue > 0.01, counts
    assert np.mean(np.array(ps) > 0.95) < 0.06 + 2 * np.sqrt(0.06 * 0.94 / 300)


def test_tied_sets_tiers():
    import arviz as az

    rng = np.random.default_rng(1)
    # a and b overlap (P(a > b) about 0.76); c is 20 sd below: its own tier
    draws = rng.normal([0.80, 0.79, 0.60, 0.595], 0.01, (2, 2000, 4))
    fit = az.InferenceData(posterior=xr.Dataset(
        {"acc": (("chain", "draw", "model"), draws)}, coords={"model": list("abcd")}))
    ties = bcm.analysis.tied_sets(fit, level=0.95)
    assert ties.index.tolist() == ["a", "b", "c", "d"]
    assert ties["tier"].tolist() == [1, 1, 2, 2]
    assert 0.6 < ties.loc["b", "p_leader_better"] < 0.9
    with pytest.raises(ValueError, match="level"):
        bcm.analysis.tied_sets(fit, level=1.5)
