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
    assert bcm.priors.defaults("folds")["tpr_kappa"] == bcm.priors.Gamma(2, 0.02)
    with pytest.raises(bcm.PriorError, match="improper"):
        bcm.models.folds(cms, priors={"tnr_kappa": bcm.priors.Gamma(0, 1)})
    with pytest.raises(bcm.PriorError, match="no parameter"):
        bcm.models.folds(cms, priors={"kappa": gamma})
