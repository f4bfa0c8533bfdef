"""Intervals for rates against published values, closed forms and libraries; coverage.

The coverage checks reproduce Morais (2023, Fig. 5) at coarse resolution with the
exact binomial sums, so they have no Monte Carlo error: what they assert is a
property of the methods at n = 50, and each assertion says why it holds.
"""

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

import bayescm as bcm
from bayescm import intervals
from bayescm.analysis.sample_size import beta_hdi
from bayescm.intervals import METHODS, binomial, coverage, coverage_composite, metric_interval
from bayescm.summary import hdi
from tests.conftest import MATRICES, fitted

Z95 = stats.norm.ppf(0.975)
GRID = np.round(np.linspace(0.05, 0.95, 19), 10)  # 19 values in (0.025, 0.975)
MIDDLE = (GRID >= 0.35 - 1e-9) & (GRID <= 0.65 + 1e-9)


# -- binomial(): published values, closed forms, libraries -------------------------------------


def test_clopper_pearson_published_values_and_scipy():
    lo, hi = binomial(1, 2, method="clopper_pearson")
    assert float(lo) == pytest.approx(0.01257912, abs=1e-8)
    assert float(hi) == pytest.approx(0.98742088, abs=1e-8)
    assert float(lo) == pytest.approx(stats.beta.ppf(0.025, 1, 2), rel=1e-12)
    assert float(hi) == pytest.approx(stats.beta.ppf(0.975, 2, 1), rel=1e-12)
    # scipy's binomtest computes the same exact and Wilson intervals one at a time
    ks = np.arange(11)
    for method, scipy_name in (("clopper_pearson", "exact"), ("wilson", "wilson")):
        lo, hi = binomial(ks, 10, method=method)
        for k in ks:
            ci = stats.binomtest(int(k), 10).proportion_ci(0.95, method=scipy_name)
            assert (lo[k], hi[k]) == pytest.approx((ci.low, ci.high), abs=1e-10)


@pytest.mark.parametrize("k", [0, 5])
def test_wilson_closed_form(k):
    n = 10
    centre = (k + Z95**2 / 2) / (n + Z95**2)
    half = Z95 / (n + Z95**2) * np.sqrt(k * (n - k) / n + Z95**2 / 4)
    lo, hi = binomial(k, n, method="wilson")
    assert (float(lo), float(hi)) == pytest.approx((centre - half, centre + half), abs=1e-12)
    if k == 0:
        assert float(lo) == 0.0  # exactly, not rounding residue


def test_agresti_coull_is_wald_on_shifted_counts():
    k, n = np.arange(21), 20
    n_t = n + Z95**2
    p_t = (k + Z95**2 / 2) / n_t
    half = Z95 * np.sqrt(p_t * (1 - p_t) / n_t)
    lo, hi = binomial(k, n, method="agresti_coull")
    np.testing.assert_allclose(lo, np.clip(p_t - half, 0, 1), atol=1e-12)
    np.testing.assert_allclose(hi, np.clip(p_t + half, 0, 1), atol=1e-12)
    # z = 2 exactly: "add 2 successes and 4 trials" (Morais 2023) is this special case
    level_z2 = 2 * stats.norm.cdf(2.0) - 1
    lo, hi = binomial(k, n, method="agresti_coull", hdi_prob=level_z2)
    p4 = (k + 2) / (n + 4)
    np.testing.assert_allclose(hi, np.clip(p4 + 2 * np.sqrt(p4 * (1 - p4) / (n + 4)), 0, 1),
                               atol=1e-12)


def test_wald_is_the_clipped_normal_approximation():
    k, n = np.array([0, 1, 25, 50]), 50
    p = k / n
    half = Z95 * np.sqrt(p * (1 - p) / n)
    lo, hi = binomial(k, n, method="wald")
    np.testing.assert_allclose(lo, np.clip(p - half, 0, 1), atol=1e-12)
    np.testing.assert_allclose(hi, np.clip(p + half, 0, 1), atol=1e-12)
    assert lo[0] == hi[0] == 0.0 and lo[1] == 0.0  # degenerate at k = 0, clipped at k = 1


def test_jeffreys_is_statsmodels_and_equals_bayes_equal_tailed_everywhere():
    k, n = np.arange(31), 30
    jl, jh = binomial(k, n, method="jeffreys")
    sl, sh = proportion_confint(k, n, alpha=0.05, method="jeffreys")
    np.testing.assert_allclose(jl, sl, rtol=1e-12)
    np.testing.assert_allclose(jh, sh, rtol=1e-12)
    el, eh = binomial(k, n, method="bayes_equal_tailed", priors={"rate": (0.5, 0.5)})
    # statsmodels does not apply Brown, Cai & DasGupta's convention (lower = 0 at
    # k = 0, upper = 1 at k = n): its Jeffreys interval is the plain equal-tailed
    # interval of Beta(k + 1/2, n - k + 1/2), so the two agree for *every* k
    np.testing.assert_allclose(el, jl, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(eh, jh, rtol=1e-10, atol=1e-15)
    assert 0 < jl[0] < 1e-4 and 1 - 1e-4 < jh[-1] < 1
    # the modified ("conventional") Jeffreys interval differs from it only there
    ml, mh = jl.copy(), jh.copy()
    ml[0], mh[-1] = 0.0, 1.0
    assert np.flatnonzero(ml != el).tolist() == [0]
    assert np.flatnonzero(mh != eh).tolist() == [n]


def test_bayes_hdi_is_exact_and_touches_the_boundary():
    n = 20
    k = np.arange(n + 1)
    lo, hi = binomial(k, n, method="bayes_hdi")
    assert lo[0] == 0.0 and hi[-1] == 1.0
    assert float(hi[0]) == pytest.approx(stats.beta.ppf(0.95, 1, n + 1), rel=1e-12)
    inner = slice(1, n)
    a, b = k[inner] + 1, n - k[inner] + 1
    mass = stats.beta.cdf(hi[inner], a, b) - stats.beta.cdf(lo[inner], a, b)
    np.testing.assert_allclose(mass, 0.95, atol=1e-9)
    np.testing.assert_allclose(stats.beta.pdf(lo[inner], a, b), stats.beta.pdf(hi[inner], a, b),
                               rtol=1e-6)
    el, eh = binomial(k, n, method="bayes_equal_tailed")
    assert np.all(hi - lo <= eh - el + 1e-12)  # the HDI is the shortest interval
    # Jeffreys prior: Beta(1/2, n + 1/2) at k = 0 is J-shaped, unbounded at 0
    lo, hi = binomial([0, n], n, method="bayes_hdi", priors={"rate": (0.5, 0.5)})
    assert lo[0] == 0.0 and hi[0] == pytest.approx(stats.beta.ppf(0.95, 0.5, n + 0.5))
    assert hi[1] == 1.0 and lo[1] == pytest.approx(stats.beta.ppf(0.05, n + 0.5, 0.5))
    lo, hi = binomial(7, 20, method="bayes_hdi", priors={"rate": (2, 3)}, hdi_prob=0.8)
    ref = beta_hdi(9, 16, hdi_prob=0.8)
    assert (float(lo), float(hi)) == pytest.approx((float(ref[0]), float(ref[1])), abs=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_binomial_broadcasts(method):
    k = np.array([[0], [1], [2]])
    n = np.array([2, 5, 10, 20])
    lo, hi = binomial(k, n, method=method, hdi_prob=0.9, priors={"rate": (0.5, 0.5)})
    assert lo.shape == hi.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            l1, h1 = binomial(int(k[i, 0]), int(n[j]), method=method, hdi_prob=0.9,
                              priors={"rate": (0.5, 0.5)})
            assert (lo[i, j], hi[i, j]) == pytest.approx((float(l1), float(h1)), abs=1e-12)
    assert np.all((0 <= lo) & (lo <= hi) & (hi <= 1))
    lo, hi = binomial(3, 10, method=method)
    assert lo.shape == () and hi.shape == ()


def test_binomial_says_what_is_wrong():
    with pytest.raises(ValueError, match="k > n"):
        binomial(5, 4)
    with pytest.raises(ValueError, match="negative"):
        binomial(-1, 4)
    with pytest.raises(ValueError, match="whole numbers"):
        binomial(1.5, 4)
    with pytest.raises(ValueError, match="n = 0"):
        binomial([0, 1], [0, 3])
    with pytest.raises(ValueError, match="NaN or infinite"):
        binomial(np.nan, 4)
    with pytest.raises(ValueError, match="do not broadcast"):
        binomial([1, 2], [3, 4, 5])
    for level in (0, 1, -0.5):
        with pytest.raises(ValueError, match=r"hdi_prob must lie in \(0, 1\)"):
            binomial(1, 4, hdi_prob=level)
    with pytest.raises(ValueError, match="percentage"):
        binomial(1, 4, hdi_prob=95)
    with pytest.raises(ValueError, match="Known methods: wald, wilson, agresti_coull"):
        binomial(1, 4, method="exact")
    with pytest.raises(ValueError, match="positive"):
        binomial(1, 4, method="bayes_hdi", priors={"rate": (0, 1)})
    with pytest.raises(ValueError, match="prior for 'rate'"):
        binomial(1, 4, method="bayes_hdi", priors={"rate": 1})
    assert intervals.binomial(np.array([], dtype=int), 5)[0].shape == (0,)


# -- coverage(): Morais (2023) Fig. 5 at coarse resolution, exact -----------------------------


def test_coverage_table_layout():
    table = coverage("wilson", 50, GRID)
    assert list(table.columns) == ["coverage", "coverage_se", "mean_width", "n"]
    assert table.index.name == "p" and len(table) == 19 and (table["n"] == 50).all()
    assert (table["coverage_se"] == 0).all()
    assert table.attrs["method"] == "wilson" and table.attrs["prior"] is None
    assert coverage("bayes_hdi", 50, [0.5]).attrs["prior"] == (1.0, 1.0)
    with pytest.raises(ValueError, match="p_grid"):
        coverage("wilson", 50, [0.5, 1.2])
    with pytest.raises(ValueError, match="n must be a whole number"):
        coverage("wilson", 0, GRID)
    with pytest.raises(ValueError, match="n_sims"):
        coverage("wilson", 50, GRID, n_sims=0)


def test_exact_coverage_is_the_binomial_sum():
    n, p = 30, 0.37
    lo, hi = binomial(np.arange(n + 1), n, method="jeffreys")
    pmf = stats.binom.pmf(np.arange(n + 1), n, p)
    row = coverage("jeffreys", n, [p]).iloc[0]
    assert row["coverage"] == pytest.approx(pmf[(lo <= p) & (p <= hi)].sum(), abs=1e-14)
    assert row["mean_width"] == pytest.approx(np.dot(pmf, hi - lo), abs=1e-14)


@pytest.mark.parametrize("method", ["wilson", "bayes_hdi", "bayes_equal_tailed"])
def test_coverage_is_nominal_in_the_middle(method):
    # Morais: "when the true value lies between 0.35 and 0.65, the coverage is around
    # 95%".  Per point the saw-tooth reaches 0.935-0.964 at n = 50; its average over
    # the 7 grid points in [0.35, 0.65] is 0.9503 (Wilson, equal-tailed) and 0.9451 (HDI).
    cov = coverage(method, 50, GRID)["coverage"].to_numpy()
    assert abs(cov[MIDDLE].mean() - 0.95) < 0.02
    assert MIDDLE.sum() == 7


def test_clopper_pearson_never_undercovers():
    # guaranteed by construction: each tail of the exact interval holds at most 2.5%
    for grid in (GRID, np.linspace(0.001, 0.999, 999)):
        assert coverage("clopper_pearson", 50, grid)["coverage"].min() >= 0.95
    # and it is conservative: 0.9545-0.9919 on the coarse grid, mean about 0.97
    assert coverage("clopper_pearson", 50, GRID)["coverage"].mean() > 0.96


def test_wald_fails_near_the_boundary():
    table = coverage("wald", 50, np.r_[0.01, 0.025, GRID, 0.975, 0.99])["coverage"]
    # k = 0 gives the degenerate interval [0, 0], which misses every p > 0: at n = 50
    # that alone costs (1 - p)^50, i.e. 7.7% at p = 0.05 and 28% at p = 0.025.  Exact
    # coverage: 0.395 at p = 0.01, 0.717 at 0.025, 0.920 at 0.05, 0.879 at 0.10.
    for lo_p, hi_p in ((0.01, 0.99), (0.025, 0.975), (0.05, 0.95), (0.1, 0.9)):
        assert table.loc[lo_p] == pytest.approx(table.loc[hi_p], abs=1e-12)  # symmetric
    assert table.loc[0.01] < 0.40 and table.loc[0.025] < 0.75
    assert table.loc[0.05] < 0.93 and table.loc[0.1] < 0.90
    # around p = 0.05 the saw-tooth dips to 0.78 (at p = 0.03) and is below 0.90 for
    # two thirds of [0.03, 0.07]
    near = coverage("wald", 50, np.linspace(0.03, 0.07, 401))["coverage"]
    assert near.min() < 0.80 and (near < 0.90).mean() > 0.6
    mid = table.loc[0.35:0.65]  # 0.934-0.945: slightly low even in the middle
    assert abs(mid.mean() - 0.95) < 0.02 and mid.min() > 0.93 and mid.max() < 0.95


@pytest.mark.parametrize("method", ["bayes_hdi", "bayes_equal_tailed"])
def test_flat_bayes_coverage_is_erratic_at_the_extremes(method):
    # At p = 0.01 and n = 50, k in {0, 1, 2} holds 98.6% of the probability (0.605,
    # 0.306, 0.076), so the coverage is a sum of a few large binomial terms and jumps
    # by about 0.08 whenever an interval endpoint crosses p: it cannot sit near 0.95
    # except by luck.  The HDI covers k = 0, 1, 2 (coverage 0.986); the equal-tailed
    # interval's lower bound at k = 2 is 0.0125 > 0.01, so it covers k = 0, 1 only
    # (0.911).  In the middle ~7 values of k carry the mass and each jump is small.
    cov = coverage(method, 50, np.r_[0.01, GRID, 0.99])["coverage"].to_numpy()
    extremes = np.abs(cov[[0, -1]] - 0.95)
    middle = np.abs(cov[1:-1][MIDDLE] - 0.95)
    assert extremes.min() > middle.max()
    assert extremes.min() > 0.03 and middle.max() < 0.016


@pytest.mark.parametrize(("method", "p"), [("wilson", 0.3), ("clopper_pearson", 0.05),
                                           ("bayes_hdi", 0.9), ("wald", 0.05),
                                           ("agresti_coull", 0.62)])
def test_simulated_coverage_agrees_with_exact(method, p):
    n, n_sims = 50, 20_000
    exact = coverage(method, n, [p]).iloc[0]
    sim = coverage(method, n, [p], n_sims=n_sims, random_seed=4).iloc[0]
    se = np.sqrt(exact["coverage"] * (1 - exact["coverage"]) / n_sims)
    assert abs(sim["coverage"] - exact["coverage"]) < 4 * se
    assert sim["coverage_se"] == pytest.approx(se, rel=0.1)
    # the width's standard error from its exact variance over k
    lo, hi = binomial(np.arange(n + 1), n, method=method)
    pmf = stats.binom.pmf(np.arange(n + 1), n, p)
    sd_w = np.sqrt(np.dot(pmf, (hi - lo) ** 2) - exact["mean_width"] ** 2)
    assert abs(sim["mean_width"] - exact["mean_width"]) < 4 * sd_w / np.sqrt(n_sims)


def test_simulated_coverage_is_reproducible():
    a = coverage("wilson", 40, GRID, n_sims=500, random_seed=9)
    b = coverage("wilson", 40, GRID, n_sims=500, random_seed=np.random.default_rng(9))
    assert a.equals(b)


# -- coverage_composite(): Morais (2023) Fig. 6 analogue --------------------------------------


def test_f1_coverage_is_nominal_within_monte_carlo_error():
    # What it is: at these two points, pooled over 20 seeds (80,000 studies), the
    # coverage is 0.9446 +- 0.0008 with 1,000 draws -- close to 0.95 but 0.005 short,
    # because the HDI of a finite sample of draws is slightly too narrow (see the
    # docstring; with 5,000 draws and 50 + 50 cases it was 0.947-0.949).  2,000
    # studies give a standard error of ~0.005, so 4 s.e. (~0.02) cannot detect that
    # shortfall: the assertion is "nominal within Monte Carlo error", which held for
    # all 20 seeds.
    table = coverage_composite("f1", n_pos=100, n_neg=100, tpr_grid=[0.7, 0.8],
                               tnr_grid=[0.8], n_sims=2000, draws=1000, random_seed=5)
    assert table.index.names == ["tpr", "tnr"] and len(table) == 2
    se_nominal = np.sqrt(0.95 * 0.05 / 2000)
    assert np.all(np.abs(table["coverage"] - 0.95) < 4 * se_nominal)
    f1_true = [2 * t / (2 * t + (1 - t) + 0.2) for t in (0.7, 0.8)]  # phi = 1/2
    np.testing.assert_allclose(table["value"], f1_true, rtol=1e-12)
    assert table.attrs["prevalence"] == 0.5


def test_composite_coverage_is_that_of_the_interval_from_the_draws():
    # With 20 draws, floor(0.95 * 20) = 19 gaps: the "HDI" is the range of the draws,
    # which holds on average 19/21 = 0.905 of the posterior mass, and covers the truth
    # about that often -- far below 0.95.
    table = coverage_composite("f1", n_pos=100, n_neg=100, tpr_grid=[0.7, 0.8],
                               tnr_grid=[0.8], n_sims=2000, draws=20, random_seed=5)
    se = np.sqrt(0.905 * 0.095 / 2000)
    assert np.all(np.abs(table["coverage"] - 19 / 21) < 4 * se)
    assert np.all(table["coverage"] < 0.95 - 4 * np.sqrt(0.95 * 0.05 / 2000))


def test_composite_prevalence_and_validation():
    grid = [0.6, 0.9]
    table = coverage_composite("bm", n_pos=30, n_neg=70, tpr_grid=grid, n_sims=50, draws=50,
                               random_seed=1)
    assert len(table) == 4
    np.testing.assert_allclose(table["value"],
                               [t + s - 1 for t in grid for s in grid], rtol=1e-12)
    ppv = coverage_composite("precision", n_pos=30, n_neg=70, tpr_grid=[0.8], tnr_grid=[0.9],
                             prevalence=0.1, n_sims=50, draws=50, random_seed=1)
    assert ppv["value"].iloc[0] == pytest.approx(0.08 / (0.08 + 0.09))
    assert ppv.attrs["metric"] == "ppv" and ppv.attrs["prevalence"] == 0.1
    with pytest.raises(KeyError, match="Unknown metric"):
        coverage_composite("auc", n_pos=10, n_neg=10, tpr_grid=grid)
    with pytest.raises(ValueError, match="n_pos"):
        coverage_composite("f1", n_pos=0, n_neg=10, tpr_grid=grid)
    with pytest.raises(ValueError, match="prevalence"):
        coverage_composite("f1", n_pos=10, n_neg=10, tpr_grid=grid, prevalence=1.0)
    with pytest.raises(ValueError, match="tnr_grid"):
        coverage_composite("f1", n_pos=10, n_neg=10, tpr_grid=grid, tnr_grid=[-0.1])
    with pytest.raises(ValueError, match="draws"):
        coverage_composite("f1", n_pos=10, n_neg=10, tpr_grid=grid, draws=5)


# -- metric_interval(): a fitted model against the exact Beta intervals ------------------------


def _replicates(a, b, n_draws, kind, rng, reps=400):
    """Intervals from `reps` independent samples of Beta(a, b): their Monte Carlo spread."""
    x = rng.beta(a, b, size=(reps, n_draws))
    if kind == "hdi":
        return hdi(x, 0.95)
    return np.quantile(x, [0.025, 0.975], axis=-1)


@pytest.mark.parametrize("kind", ["hdi", "equal_tailed"])
def test_metric_interval_tpr_matches_the_exact_beta_interval(kind):
    idata = fitted("three_beta", "exact")  # i.i.d. draws from Beta(1 + tp, 1 + fn)
    table = metric_interval(idata, "tpr", kind=kind)
    assert list(table.index) == list(MATRICES) and table.index.name == "classifier"
    assert table.attrs == {"metric": "tpr", "hdi_prob": 0.95, "kind": kind}
    n_draws = idata.posterior.sizes["chain"] * idata.posterior.sizes["draw"]
    method = "bayes_hdi" if kind == "hdi" else "bayes_equal_tailed"
    rng = np.random.default_rng(0)
    for name, cells in MATRICES.items():
        tp, fn = cells["tp"], cells["fn"]
        exact = binomial(tp, tp + fn, method=method, priors={"rate": (1, 1)})
        reps = _replicates(1 + tp, 1 + fn, n_draws, kind, rng)
        for got, ref, rep in zip(table.loc[name, ["lower", "upper"]], exact, reps, strict=True):
            # tolerance from the Monte Carlo error of an interval from n_draws draws:
            # its bias (the sample HDI is a little narrow) plus 4 standard deviations
            tol = abs(rep.mean() - float(ref)) + 4 * rep.std() + 1e-12
            assert abs(got - float(ref)) <= tol


def test_metric_interval_uses_the_summary_hdi():
    idata = fitted("three_beta", "exact")
    table = metric_interval(idata, "f1", hdi_prob=0.9)
    ref = bcm.summary(idata, metrics=["f1"], hdi_prob=0.9).xs("f1", level="metric")
    np.testing.assert_array_equal(table["lower"], ref["hdi_lower"])
    np.testing.assert_array_equal(table["upper"], ref["hdi_upper"])
    np.testing.assert_allclose(table["width"], table["upper"] - table["lower"])


def test_metric_interval_says_what_is_wrong():
    idata = fitted("three_beta", "exact")
    with pytest.raises(TypeError, match=r"intervals\.binomial"):
        metric_interval(bcm.ConfusionMatrix(tp=3, fn=1, fp=1, tn=3), "tpr")
    with pytest.raises(ValueError, match="kind"):
        metric_interval(idata, "tpr", kind="central")
    with pytest.raises(KeyError, match="Unknown metric"):
        metric_interval(idata, "auc")
    with pytest.raises(ValueError, match="hdi_prob"):
        metric_interval(idata, "tpr", hdi_prob=1.5)
