"""Sample-size planning: closed-form rule, exact Beta HDIs and Kruschke's simulation."""

import arviz as az
import numpy as np
import pytest
from scipy import optimize, stats

import bayescm as bcm
from bayescm.analysis.sample_size import SampleSizePlan, beta_hdi, sample_size, sample_size_rule
from bayescm.summary import hdi

Z95 = 1.959963984540054


def test_rule_closed_form_and_paper_rounding():
    # exact z: (2 z)^2 p (1 - p) / mu^2 with p = 1/2
    assert sample_size_rule(0.1) == pytest.approx(Z95**2 * 4 * 0.25 / 0.01, rel=1e-12)
    assert sample_size_rule(0.1) == pytest.approx(384.146, abs=1e-3)
    # Tötsch & Hoffmann S5 round z to 2: N = 4 / MU^2 = 400 (z = 2 at hdi_prob 0.9545)
    assert sample_size_rule(0.1, hdi_prob=0.9545) == pytest.approx(400, rel=1e-4)
    mu = np.array([0.2, 0.1, 0.05])
    np.testing.assert_allclose(sample_size_rule(mu, p=0.8), Z95**2 * 4 * 0.16 / mu**2)
    np.testing.assert_allclose(sample_size_rule(mu) * mu**2, Z95**2)
    assert sample_size_rule(mu).shape == (3,)
    with pytest.raises(ValueError, match="mu"):
        sample_size_rule(0.0)
    with pytest.raises(ValueError, match="mu"):
        sample_size_rule([0.1, 1.0])
    with pytest.raises(ValueError, match="p "):
        sample_size_rule(0.1, p=1.0)
    with pytest.raises(ValueError, match="hdi_prob"):
        sample_size_rule(0.1, hdi_prob=1.0)


@pytest.mark.parametrize("a, b", [(7, 3), (31, 10), (2, 40), (600, 150), (1, 12), (9, 1)])
def test_exact_beta_hdi_matches_arviz(a, b):
    n = 200_000
    lo, hi = beta_hdi(a, b, hdi_prob=0.95)
    ref = az.hdi(np.random.default_rng(1).beta(a, b, n), hdi_prob=0.95)
    # Monte Carlo s.d. of the sample width x_(t2) - x_(t1) (asymptotic order statistics);
    # it is 0.0005 (2e-3 / 4) or less except for Beta(7, 3) (0.0009)
    (t1, t2), (f1, f2) = stats.beta.cdf([lo, hi], a, b), stats.beta.pdf([lo, hi], a, b)
    sd = np.sqrt((t1 * (1 - t1) / f1**2 + t2 * (1 - t2) / f2**2 - 2 * t1 * (1 - t2) / (f1 * f2))
                 / n)
    assert hi - lo == pytest.approx(ref[1] - ref[0], abs=4 * sd)
    assert (float(lo), float(hi)) == pytest.approx(tuple(ref), abs=8 * sd)
    # and it is an HDI: mass hdi_prob, equal density at both ends (interior mode)
    assert t2 - t1 == pytest.approx(0.95, abs=1e-10)
    if a > 1 and b > 1:
        assert f1 == pytest.approx(f2, rel=1e-6)


def test_beta_hdi_vectorised_and_narrowest():
    a = np.array([2.0, 5, 50, 5000, 2, 1])
    b = np.array([2.0, 200, 51, 3000, 100_001, 1])
    lo, hi = beta_hdi(a, b, hdi_prob=0.9)
    for i in range(a.size):
        t = np.linspace(0, 0.1, 100_001)
        widths = stats.beta.ppf(t + 0.9, a[i], b[i]) - stats.beta.ppf(t, a[i], b[i])
        assert hi[i] - lo[i] <= widths.min() + 1e-12
        assert hi[i] - lo[i] == pytest.approx(widths.min(), rel=1e-6)
    with pytest.raises(ValueError, match=">= 1"):
        beta_hdi(0.5, 3)


def test_large_n_agrees_with_normal_rule():
    rule = sample_size_rule(0.04)  # 2400.9, the worst case p = 1/2
    # accuracy near 1/2: the simulation is the worst case of the rule (the Beta(1, 1)
    # prior adds 3 to the effective N: var = p (1 - p) / (N + 3))
    half = sample_size(0.04, generating=(0.5, 1000), random_seed=1)
    assert half.n_required == pytest.approx(rule, rel=0.05)
    assert half.n_required == pytest.approx(rule - 3, abs=3)
    # accuracy 0.8: about p (1 - p) / 0.25 = 0.64 of the worst case; a bit more because
    # 95% of studies must be precise, i.e. also those whose observed rate falls toward
    # 1/2: the 5% quantile of p_hat is 0.8 - 1.645 sqrt(0.16 / N)
    fixed = sample_size(0.04, generating=(0.8, np.inf), random_seed=1)
    n = 1600.0
    for _ in range(50):
        p_q = 0.8 - stats.norm.ppf(0.95) * np.sqrt(0.16 / n)
        n = sample_size_rule(0.04, p=p_q) - 3
    assert fixed.n_required == pytest.approx(n, rel=0.02)
    assert 0.62 < fixed.n_required / rule < 0.72
    assert fixed.n_rule == pytest.approx(rule)


def _hdi_width_slow(a: float, b: float, prob: float) -> float:
    if a == 1 or b == 1:  # monotone density: one-sided interval
        return stats.beta.ppf(prob, a, b) if a == 1 else 1 - stats.beta.ppf(1 - prob, a, b)
    res = optimize.minimize_scalar(
        lambda t: stats.beta.ppf(t + prob, a, b) - stats.beta.ppf(t, a, b),
        bounds=(0, 1 - prob), method="bounded", options={"xatol": 1e-10})
    return float(res.fun)


def test_assurance_equals_straightforward_simulation():
    n, target = 50, 0.25
    plan = sample_size(target, n_grid=[n], n_sims=1000, random_seed=4)
    fast = plan.curve.loc[n, "assurance"]
    # Kruschke's protocol one study at a time, with an independent HDI routine
    rng = np.random.default_rng(99)
    s = 400
    theta = rng.beta(0.8 * 8 + 1, 0.2 * 8 + 1, size=s)
    k = rng.binomial(n, theta)
    widths = np.array([_hdi_width_slow(ki + 1, n - ki + 1, 0.95) for ki in k])
    slow = np.mean(widths <= target)
    se = np.sqrt(slow * (1 - slow) * (1 / 1000 + 1 / s))
    assert 0.3 < slow < 0.9  # a target in the body of the width distribution
    assert abs(fast - slow) < 4 * se
    lo, hi = beta_hdi(k + 1, n - k + 1)
    np.testing.assert_allclose(hi - lo, widths, atol=1e-7)


def test_curve_and_bisection():
    plan = sample_size(0.1, random_seed=1)
    curve = plan.curve
    assert isinstance(plan, SampleSizePlan)
    assert list(curve.columns) == ["assurance", "assurance_se", "median_width",
                                   "width_quantile"]
    assert curve.index.name == "n" and curve.index.is_monotonic_increasing
    grid = np.unique(np.round(np.logspace(1, 5, 25))).astype(int)
    assert set(grid) <= set(curve.index)
    # bisection: n_required reaches the assurance and the integer below does not
    assert curve.loc[plan.n_required, "assurance"] >= 0.95
    assert curve.loc[plan.n_required - 1, "assurance"] < 0.95
    assert curve.loc[plan.n_required, "width_quantile"] <= 0.1
    assert curve.loc[plan.n_required - 1, "width_quantile"] > 0.1
    # the widths shrink with N
    assert (np.diff(curve.loc[grid, "median_width"]) < 0).all()
    # the default (mode 0.8, concentration 10) lands near the worst case: ~5% of the
    # studies have accuracies near 1/2
    assert plan.n_required == pytest.approx(sample_size_rule(0.1), rel=0.05)
    text = repr(plan)
    assert "n_required" in text and str(plan.n_required) in text
    assert "Beta(mode 0.8, concentration 10)" in text
    assert "<table" in plan._repr_html_()
    with pytest.raises(AttributeError):
        plan.n_required = 3


def test_not_reached_and_reached_at_once():
    plan = sample_size(0.01, n_grid=[10, 100], random_seed=1)
    assert plan.n_required is None and not plan.reached
    assert "extend n_grid" in repr(plan)
    easy = sample_size(0.9, n_grid=[10, 100], random_seed=1)
    assert easy.n_required == 10 and "smallest N" in easy.note


def test_totsch_figure_7_reading():
    # "If N=100, the likelihood that MU <= 19 percentage points is 95%" (mode 0.8,
    # concentration 10).  With exact HDIs the 95% quantile of MU at N = 100 is 0.192:
    plan = sample_size(0.19, n_grid=[100], n_sims=20_000, random_seed=2)
    row = plan.curve.loc[100]
    assert 0.19 <= row["width_quantile"] < 0.195
    # MU piles up just below its maximum 3.92 / (2 sqrt(103)) = 0.193 (accuracies near
    # 1/2), so the share below exactly 0.19 is sensitive: 0.88 with exact HDIs ...
    assert row["assurance"] == pytest.approx(0.877, abs=4 * row["assurance_se"])
    # ... and above 0.9 with HDIs of 1000 posterior draws, which are ~0.002 too narrow
    rng = np.random.default_rng(3)
    theta = rng.beta(7.4, 2.6, size=4000)
    k = rng.binomial(100, theta)
    draws = rng.beta((k + 1)[:, None], (101 - k)[:, None], size=(k.size, 1000))
    lo, hi = hdi(draws, 0.95)
    assert np.mean(hi - lo <= 0.19) >= 0.9


def test_composite_metric_assurance_grows_with_n():
    grid = [25, 100, 400, 1600]
    plan = sample_size(0.15, metric="f1", n_grid=grid, n_sims=200, draws=500, random_seed=3)
    a = plan.curve.loc[grid, "assurance"].to_numpy()
    se = plan.curve.loc[grid, "assurance_se"].to_numpy()
    assert (np.diff(a) > -2 * np.hypot(se[1:], se[:-1]) - 1e-12).all()
    assert a[0] < 0.05 and a[-1] == 1.0
    w = plan.curve.loc[grid, "median_width"].to_numpy()
    assert (np.diff(w) < 0).all()
    assert plan.method == "posterior draws" and plan.draws == 500 and plan.n_rule is None


def test_informedness_needs_about_four_times_accuracy():
    # BM = TPR + TNR - 1: two rates, each on half the cases -> var ~ 4 p (1 - p) / N
    bm = sample_size(0.1, metric="bm", n_grid=[400, 800, 1600, 3200], n_sims=200, draws=500,
                     random_seed=0)
    acc = sample_size(0.1, metric="acc", n_grid=[100, 200, 400, 800], random_seed=0)
    assert bm.n_required > 2.5 * acc.n_required
    assert bm.n_required / acc.n_required == pytest.approx(4, rel=0.15)
    mcc = sample_size(0.2, metric="mcc", n_grid=[100, 200, 400, 800], n_sims=100, draws=300,
                      random_seed=0)
    assert mcc.reached


def test_pilot_path():
    pilot = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    plan = sample_size(0.15, metric="mcc", pilot=pilot, n_grid=[50, 200, 800, 3200],
                       n_sims=100, draws=300, random_seed=5)
    assert plan.reached and "pilot" in plan.generating
    assert plan.curve["assurance"].between(0, 1).all()
    rate = sample_size(0.1, metric="tpr", pilot=pilot, random_seed=5)
    assert rate.method == "exact Beta HDI" and rate.reached
    # TPR of the pilot is near 1: far fewer cases than the worst case p = 1/2
    assert rate.n_required < 0.7 * rate.n_rule
    fixed = sample_size(0.1, metric="tnr", pilot=pilot, prevalence=0.25, random_seed=5)
    assert "prevalence 0.25" in fixed.generating
    with pytest.raises(ValueError, match="pass one"):
        sample_size(0.1, pilot=bcm.ConfusionMatrix(tp=[1, 2], fn=[1, 1], fp=[1, 1], tn=[1, 1]))
    with pytest.raises(TypeError, match="ConfusionMatrix"):
        sample_size(0.1, pilot={"tp": 1})


def test_tpr_uses_the_positive_cases_only():
    # TPR is a rate of N * prevalence positives: at prevalence 0.25 it needs ~2x the N
    # of prevalence 0.5 (same studies, common random numbers)
    half = sample_size(0.1, metric="tpr", generating=(0.5, np.inf), random_seed=1)
    quarter = sample_size(0.1, metric="tpr", generating=(0.5, np.inf), prevalence=0.25,
                          random_seed=1)
    assert quarter.n_required / half.n_required == pytest.approx(2, rel=0.02)
    assert half.n_required == pytest.approx(2 * sample_size_rule(0.1), rel=0.03)
    assert sample_size(0.1, metric="fnr", generating=(0.5, np.inf),
                       random_seed=1).n_required == half.n_required


def test_errors():
    with pytest.raises(ValueError, match="target_width"):
        sample_size(0.0)
    with pytest.raises(ValueError, match="target_width"):
        sample_size(1.5)
    sample_size(1.5, metric="bm", n_grid=[10], n_sims=10, draws=20)  # bm ranges over 2
    with pytest.raises(ValueError, match="target_width"):
        sample_size(2.5, metric="mcc")
    with pytest.raises(ValueError, match="assurance"):
        sample_size(0.1, assurance=1.0)
    with pytest.raises(ValueError, match="not both"):
        sample_size(0.1, generating=(0.8, 10), pilot=bcm.ConfusionMatrix(1, 1, 1, 1))
    with pytest.raises(KeyError, match="Unknown metric"):
        sample_size(0.1, metric="auc")
    with pytest.raises(ValueError, match="prevalence"):
        sample_size(0.1, metric="tpr", prevalence=1.0)
    with pytest.raises(ValueError, match="prevalence itself"):
        sample_size(0.1, metric="prevalence", prevalence=0.3)
    with pytest.raises(ValueError, match=">= 1"):
        sample_size(0.1, n_grid=[0, 10])
    with pytest.raises(ValueError, match="whole numbers"):
        sample_size(0.1, n_grid=[10.5])
    with pytest.raises(ValueError, match="concentration"):
        sample_size(0.1, generating=(0.8, 1))
    with pytest.raises(ValueError, match="mode"):
        sample_size(0.1, generating=(1.2, 10))
    with pytest.raises(ValueError, match="hdi_prob"):
        sample_size(0.1, hdi_prob=0)
    with pytest.raises(ValueError, match="n_sims"):
        sample_size(0.1, n_sims=1)
