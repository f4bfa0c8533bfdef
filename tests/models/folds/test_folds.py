"""Cross-validation folds: pooling and the hierarchical model."""

import functools

import numpy as np
import pytest

import bayescm as bcm


def simulate_folds(seed, concentration, k=6, n=100, tpr=0.85, tnr=0.8):
    rng = np.random.default_rng(seed)
    if np.isinf(concentration):
        tpr_k, tnr_k = np.full(k, tpr), np.full(k, tnr)
    else:
        tpr_k = rng.beta(tpr * concentration, (1 - tpr) * concentration, k)
        tnr_k = rng.beta(tnr * concentration, (1 - tnr) * concentration, k)
    pos = rng.binomial(n, 0.4, k)
    tp, tn = rng.binomial(pos, tpr_k), rng.binomial(n - pos, tnr_k)
    return bcm.ConfusionMatrix(tp=tp, fn=pos - tp, fp=n - pos - tn, tn=tn,
                               classifier=[f"fold{i}" for i in range(k)])


@functools.cache
def fits(concentration):
    cms = simulate_folds(3, concentration, n=300)
    hier = bcm.fit(bcm.models.folds(cms), random_seed=1)
    pooled = bcm.fit(bcm.models.three_beta(cms.pooled()), sampler="exact", random_seed=1)
    return cms, hier, pooled


def sd(idata, unit, metric="tpr"):
    return float(idata.posterior[metric].sel(classifier=unit).std())


def test_pooled_sums_the_folds():
    cms = simulate_folds(0, np.inf)
    assert cms.pooled().to_dict() == {c: int(cms.cell(c).sum()) for c in bcm.CELLS}


def test_without_variation_the_mean_matches_the_pooled_posterior():
    _, hier, pooled = fits(np.inf)
    assert bcm.check_convergence(hier).ok
    for metric in ("tpr", "tnr"):
        m_h = float(hier.posterior[metric].sel(classifier="mean").mean())
        m_p = float(pooled.posterior[metric].mean())
        assert abs(m_h - m_p) < 2 * sd(pooled, "pooled", metric)
        # shrinkage toward a common rate: not much wider than pooling
        assert sd(hier, "mean", metric) < 2.0 * sd(pooled, "pooled", metric)


def test_with_variation_pooling_is_overconfident():
    cms, hier, pooled = fits(6.0)
    report = bcm.check_convergence(hier)
    assert report.ok and report.divergences == 0, report.message()
    # between-fold variation widens the mean, and a new fold is wider still
    assert sd(hier, "mean") > 1.3 * sd(pooled, "pooled")
    assert sd(hier, "new fold") > 1.3 * sd(hier, "mean")
    table = bcm.summary(hier, metrics=["tpr", "acc", "mcc"])
    assert set(table.index.get_level_values("classifier")) == {"mean", "new fold"}
    pp = hier.posterior_predictive["counts"]
    assert pp.dims == ("chain", "draw", "fold", "cell")
    np.testing.assert_array_equal(pp.sum("cell").isel(chain=0, draw=0), cms.n)


def test_folds_needs_two_folds():
    with pytest.raises(ValueError, match="two folds"):
        bcm.models.folds(bcm.ConfusionMatrix(tp=1, fn=1, fp=1, tn=1))
    with pytest.raises(ValueError, match="kappa_prior"), \
            pytest.warns(DeprecationWarning, match="kappa_prior"):
        bcm.models.folds(simulate_folds(0, np.inf), kappa_prior=(0, 1))


def test_folds_priors_are_passed_one_way():
    """priors={name: prior} like every builder; kappa_prior= is a deprecated alias with the
    same model; every accepted prior form gives the same prior data."""
    from scipy import stats

    cms = simulate_folds(0, np.inf)
    with pytest.warns(DeprecationWarning, match="kappa_prior"):
        old = bcm.models.folds(cms, kappa_prior=(3, 0.05))
    gamma = bcm.priors.Gamma(3, 0.05)
    for form in (gamma, (3, 0.05), stats.gamma(3, scale=1 / 0.05)):
        new = bcm.models.folds(cms, priors={"tpr_kappa": form, "tnr_kappa": gamma})
        for name in ("tpr_kappa_alpha", "tpr_kappa_beta", "tnr_kappa_alpha", "tnr_kappa_beta"):
            assert float(new[name].get_value()) == pytest.approx(float(old[name].get_value()))
    # the default is a uniform spread tau = (kappa + 1)^(-1/2); a Gamma on kappa replaces it
    assert bcm.priors.defaults("folds")["tpr_spread"] == bcm.priors.Beta(1, 1)
    assert "tpr_kappa" not in bcm.priors.defaults("folds")
    assert {v.name for v in new.free_RVs} >= {"tpr_kappa", "tnr_kappa"}
    default = bcm.models.folds(cms)
    assert {v.name for v in default.free_RVs} >= {"tpr_spread", "tnr_spread"}
    assert "tpr_kappa" in default.named_vars  # deterministic (1 - tau^2) / tau^2
    with pytest.raises(bcm.PriorError, match="not both"):
        bcm.models.folds(cms, priors={"tpr_kappa": gamma, "tpr_spread": (1, 1)})
    with pytest.raises(bcm.PriorError, match="improper"):
        bcm.models.folds(cms, priors={"tnr_kappa": bcm.priors.Gamma(0, 1)})
    with pytest.raises(bcm.PriorError, match="no parameter"):
        bcm.models.folds(cms, priors={"kappa": gamma})


def near_perfect(seed, k=10, n=60):
    """Simulated folds with accuracy 0.97-1.0 (several folds without a single error)."""
    rng = np.random.default_rng(seed)
    acc = rng.uniform(0.97, 1.0, k)
    pos = rng.binomial(n, 0.4, k)
    tp, tn = rng.binomial(pos, acc), rng.binomial(n - pos, acc)
    return bcm.ConfusionMatrix(tp=tp, fn=pos - tp, fp=n - pos - tn, tn=tn,
                               classifier=[f"fold{i}" for i in range(k)])


@pytest.mark.parametrize("seed", [5, 6])
def test_near_perfect_folds_converge_without_divergences(seed):
    """The centred Beta hierarchy diverged here (even at target_accept=0.99); the fold
    rates integrated out (Beta-binomial), it must not."""
    cms = near_perfect(seed)
    idata = bcm.fit(bcm.models.folds(cms), draws=500, chains=4, random_seed=seed)
    report = bcm.check_convergence(idata)
    assert report.divergences == 0, report.message()
    assert report.ok, report.message()
    post = idata.posterior
    # in a draw of identical folds a new fold's rate is the mean and the spread 0
    same = post["tpr_identical"].values == 1
    assert 0 < same.mean() < 1
    np.testing.assert_array_equal(post["tpr_new"].values[same], post["tpr_mean"].values[same])
    assert (post["tpr_sd"].values[same] == 0).all() and (post["tpr_sd"].values[~same] > 0).all()
    # the spread model alone: a new fold's spread is the between-fold sd
    # sqrt(mu(1 - mu)/(kappa + 1)) reported as tpr_sd plus the mean's own uncertainty (law
    # of total variance: Var new = E[tpr_sd^2] + Var(mu)) (MC: 2000 draws, relative sd of
    # an sd estimate ~ 1/sqrt(2 * ESS) < 0.05; allow 0.15).  (The average has the same
    # law, but its few spread draws make both sides heavy-tailed: 5,000 draws per chain
    # to see it within 0.15.)
    spread = bcm.fit(bcm.models.folds(cms, identical=0), draws=500, chains=4,
                     random_seed=seed, prior=False, predictive=False).posterior
    assert post["tpr_fold"].dims == ("chain", "draw", "fold") and "tpr_identical" not in spread
    new_sd = float(spread["tpr_new"].std())
    implied = float(np.sqrt((spread["tpr_sd"] ** 2).mean() + spread["tpr_mean"].var()))
    assert new_sd == pytest.approx(implied, rel=0.15)
    assert set(bcm.summary(idata, metrics=["acc"]).index.get_level_values("classifier")) == \
        {"mean", "new fold"}


@pytest.mark.parametrize("seed", [2, 4])
def test_identical_folds_do_not_stick_where_the_likelihood_cancels(seed):
    """5 folds of 200 with the same rates: the spread's posterior piles up near 0, where
    the Beta-binomial's log-Gamma differences cancel.  Unbounded, the concentration
    reached 6e26 on seed 2's data, a chain stuck there, 187 divergences (seed 4's ran
    clean); bounded at KAPPA_MAX, no divergence, and the spread below the bound's is a
    tail of the prior, not a place to stay."""
    from bayescm.models.folds.spread import KAPPA_MAX, spread_of

    rng = np.random.default_rng(seed)
    pos = rng.binomial(200, 0.4, 5)
    tp, tn = rng.binomial(pos, 0.85), rng.binomial(200 - pos, 0.80)
    cms = bcm.ConfusionMatrix(tp=tp, fn=pos - tp, fp=200 - pos - tn, tn=tn,
                              classifier=[f"f{i}" for i in range(5)])
    idata = bcm.fit(bcm.models.folds(cms), draws=1000, chains=4, random_seed=seed,
                    prior=False, predictive=False, metrics=["acc"])
    report = bcm.check_convergence(idata)
    assert report.divergences == 0 and report.ok, report.message()
    kappa = idata.posterior[["tpr_kappa", "tnr_kappa"]].to_array().values
    assert kappa.max() <= KAPPA_MAX and np.isfinite(kappa).all()
    # below the bound the spread follows its prior: a tail, not a place to stay
    tau = idata.posterior[["tpr_spread", "tnr_spread"]].to_array().values
    assert np.mean(tau < spread_of(KAPPA_MAX)) < 0.01


def test_fold_rates_are_the_exact_conditionals():
    """Given (mu, kappa) a fold's TPR is Beta(mu kappa + tp, (1 - mu) kappa + fn): with the
    posterior of (mu, kappa) pinned to one point, the drawn fold rates have that Beta's
    mean and sd (20,000 draws: MC sd of the mean ~ sd/141)."""
    import xarray as xr

    from bayescm.models.folds.model import _fold_rates

    cms = near_perfect(1, k=3)
    shape = (4, 5000)
    ds = xr.Dataset({name: (("chain", "draw"), np.full(shape, value)) for name, value in
                     (("tpr_mean", 0.95), ("tnr_mean", 0.9), ("tpr_kappa", 40.0),
                      ("tnr_kappa", 10.0))})
    out = _fold_rates(ds, cms)
    a, b = 0.95 * 40 + cms.cell("tp"), 0.05 * 40 + cms.cell("fn")
    mean, sd = a / (a + b), np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    got = out["tpr_fold"].mean(("chain", "draw")).values
    np.testing.assert_allclose(got, mean, atol=5 * float(sd.max()) / np.sqrt(20000))
    assert float(out["tnr_sd"][0, 0]) == pytest.approx(np.sqrt(0.9 * 0.1 / 11))
    # reproducible: the same draws give the same fold rates
    again = _fold_rates(ds.drop_vars(list(out.data_vars.keys() - ds.data_vars.keys())), cms)
    np.testing.assert_array_equal(again["tpr_fold"], out["tpr_fold"])


COVERAGE_REPS = 300


@pytest.mark.slow
@pytest.mark.parametrize("k", [5, 10])
@pytest.mark.parametrize("sd", [0.0, 0.03, 0.06])
def test_mean_accuracy_interval_is_calibrated_across_fold_spreads(k, sd):
    """k folds of 200 whose TPR/TNR differ by `sd` (Beta around 0.85/0.80, prevalence 0.4):
    the 95% HDI of the mean accuracy 0.82 covers it in 0.93-0.97 of the replicates, the
    band widened by 2 MC standard errors sqrt(0.95 * 0.05 / R) (0.0126 at R = 300, so
    [0.905, 0.995]: the spread model alone, which covered 1.00 at sd 0 with 5 folds, fails
    it; the benchmark bench_compare_folds_calibration.py prints the coverage with its MC
    error beside prob-conf-mat's aggregators)."""
    import warnings

    rng = np.random.default_rng(1000 * k + int(sd * 100))
    truth, hits, reps = 0.4 * 0.85 + 0.6 * 0.80, 0, COVERAGE_REPS
    for rep in range(reps):
        def rates(mean):
            if sd == 0:
                return np.full(k, mean)
            kappa = mean * (1 - mean) / sd**2 - 1
            return rng.beta(mean * kappa, (1 - mean) * kappa, k)
        pos = rng.binomial(200, 0.4, k)
        tp, tn = rng.binomial(pos, rates(0.85)), rng.binomial(200 - pos, rates(0.80))
        cms = bcm.ConfusionMatrix(tp=tp, fn=pos - tp, fp=200 - pos - tn, tn=tn,
                                  classifier=[f"f{i}" for i in range(k)])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bcm.ConvergenceWarning)
            idata = bcm.fit(bcm.models.folds(cms), draws=1000, chains=4, random_seed=rep,
                            prior=False, predictive=False, metrics=["acc"])
        low, high = bcm.stats.hdi(idata.posterior["acc"].sel(classifier="mean").values.ravel())
        hits += low <= truth <= high
    se = np.sqrt(0.95 * 0.05 / reps)
    assert 0.93 - 2 * se <= hits / reps <= 0.97 + 2 * se
