"""Analysis functions against exact references (quadrature, closed-form HDIs)."""

import warnings

import numpy as np
import pytest
from scipy import integrate, optimize, stats

import bayescm as bcm
from bayescm.analysis import (
    at_prevalence,
    compare,
    compare_paired,
    deception,
    metric_uncertainty,
    paired_counts,
)
from tests.conftest import fitted


def beta_hdi_width(a, b, prob=0.95):
    d = stats.beta(a, b)
    res = optimize.minimize_scalar(lambda lo: d.ppf(d.cdf(lo) + prob) - lo,
                                   bounds=(0, d.ppf(1 - prob) - 1e-12), method="bounded",
                                   options={"xatol": 1e-10})
    return res.fun


def p_greater(a, b, margin=0.0):
    """P(A - B > margin) for independent Betas, by quadrature."""
    return integrate.quad(lambda x: a.pdf(x) * b.cdf(x - margin), 0, 1, limit=200)[0]


def test_metric_uncertainty_matches_the_exact_beta_hdi():
    cm = bcm.ConfusionMatrix(tp=[26, 40], fn=[0, 7], fp=[2, 8], tn=[6, 15], classifier=["a", "b"])
    mu = metric_uncertainty(cm, "tnr", draws=100_000, random_seed=3)
    for name, (tn, fp) in zip(["a", "b"], [(6, 2), (15, 8)], strict=True):
        # the HDI of 1e5 draws estimates the exact width to about 2e-3
        assert mu.loc[name, "mu"] == pytest.approx(beta_hdi_width(1 + tn, 1 + fp), abs=6e-3)
    idata = fitted("three_beta", "exact")
    from_idata = metric_uncertainty(idata, "f1", hdi_prob=0.9)
    table = bcm.summary(idata, metrics=["f1"], hdi_prob=0.9)
    np.testing.assert_allclose(from_idata["mu"].values, table["hdi_width"].values, rtol=1e-6)


def test_deception_exact_and_sampled():
    # Tötsch & Hoffmann's classifier 8 (tp=28, fn=9, tn=3, fp=4): "approximately 15%"
    cm = bcm.ConfusionMatrix(tp=28, fn=9, fp=4, tn=3, classifier="8")
    exact = deception(cm)
    ref = integrate.quad(lambda x: stats.beta(29, 10).pdf(x) * stats.beta(4, 5).cdf(1 - x),
                         0, 1)[0]
    assert exact.loc["8", "r_deceptive"] == pytest.approx(ref, abs=1e-8)
    assert exact.loc["8", "r_deceptive"] == pytest.approx(0.1427, abs=5e-4)
    assert exact.loc["8"].sum() == pytest.approx(1.0)
    with_rope = deception(cm, rope=0.05).loc["8"]
    assert with_rope["p_uninformative"] > 0 and with_rope.sum() == pytest.approx(1.0)
    assert with_rope["r_deceptive"] < exact.loc["8", "r_deceptive"]
    idata = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=10_000, random_seed=2,
                    prior=False, predictive=False, metrics=["bm"])
    sampled = deception(idata).loc["8", "r_deceptive"]
    se = np.sqrt(ref * (1 - ref) / 40_000)
    assert abs(sampled - ref) < 4 * se
    with pytest.raises(ValueError, match="rope"):
        deception(cm, rope=-1)


def test_compare_against_quadrature():
    a = bcm.ConfusionMatrix(tp=40, fn=7, fp=8, tn=15)
    b = bcm.ConfusionMatrix(tp=31, fn=9, fp=13, tn=20)
    ta, tb = stats.beta(41, 8), stats.beta(32, 10)
    for margin in (0.0, 0.05):
        res = compare(a, b, "tpr", margin, draws=40_000, random_seed=1)
        ref = p_greater(ta, tb, margin)
        assert abs(res.probability - ref) < 4 * np.sqrt(ref * (1 - ref) / 40_000)
    res = compare(a, b, "tpr", random_seed=1)
    assert res.to_frame().loc[0, "mean"] == pytest.approx(ta.mean() - tb.mean(), abs=0.003)
    lo, hi = res.hdi
    assert lo < ta.mean() - tb.mean() < hi and "P(A - B > 0)" in repr(res)


def test_compare_picks_classifiers_and_says_what_is_wrong():
    idata = fitted("three_beta", "exact")
    res = compare((idata, "mid"), (idata, "rare"), "acc", random_seed=1)
    assert res.design == "independent"
    # it names the way to say which (compare has no classifier= keyword)
    with pytest.raises(ValueError, match=r"with a tuple \(data, '\w+'\)"):
        compare(idata, (idata, "mid"), "acc")
    with pytest.raises(KeyError, match="not in the data"):
        compare((idata, "nope"), (idata, "mid"), "acc")
    with pytest.raises(KeyError, match="Unknown metric"):
        compare((idata, "mid"), (idata, "rare"), "auc")
    lean = bcm.fit(bcm.models.three_beta(bcm.ConfusionMatrix(tp=3, fn=1, fp=1, tn=3)),
                   sampler="exact", metrics=["acc"], random_seed=1)
    with pytest.raises(KeyError, match="metrics=None"):
        compare(lean, lean, "mcc")


def simulate_paired(rng, n, hard=0.2, noise_a=0.05, noise_b=0.10):
    """Both classifiers fail on shared 'hard' cases: strongly correlated errors.
    True accuracies: (1 - hard)(1 - noise); the true difference is 0.04 by default."""
    y = rng.integers(0, 2, n)
    h = rng.random(n) < hard
    a = np.where(h | (rng.random(n) < noise_a), 1 - y, y)
    b = np.where(h | (rng.random(n) < noise_b), 1 - y, y)
    return y, a, b


def test_paired_design_is_narrower_and_right():
    y, a, b = simulate_paired(np.random.default_rng(5), 400)
    counts = paired_counts(y, a, b)
    assert counts.to_numpy().sum() == 400
    paired = compare_paired(y, a, b, "acc", draws=40_000, random_seed=1)
    independent = compare(bcm.ConfusionMatrix.from_predictions(y, a),
                          bcm.ConfusionMatrix.from_predictions(y, b), "acc", draws=40_000,
                          random_seed=1)
    sd_p = float(paired.difference.std())
    sd_i = float(independent.difference.std())
    # McNemar: sd of the paired difference is about sqrt((p10 + p01 - (p10 - p01)^2) / n)
    p10 = (counts["10"].sum()) / 400
    p01 = (counts["01"].sum()) / 400
    assert sd_p == pytest.approx(np.sqrt((p10 + p01 - (p10 - p01) ** 2) / 400), rel=0.1)
    assert sd_p < 0.6 * sd_i  # ignoring the pairing inflates the uncertainty
    # identical predictions: no discordant case was seen, but the posterior still allows
    # some disagreement in the population, symmetric around zero
    same = compare_paired(y, a, a, "acc", draws=40_000, random_seed=1)
    assert abs(float(same.difference.mean())) < 4 * float(same.difference.std()) / 200
    assert same.probability == pytest.approx(0.5, abs=0.02)
    assert float(same.difference.std()) < 0.5 * sd_p
    with pytest.raises(bcm.CountsError, match="equal length"):
        compare_paired(y, a, b[:-1], "acc")


def test_at_prevalence():
    idata = fitted("three_beta", "exact")
    rare = at_prevalence(idata, 0.01, metrics=["ppv", "npv", "acc"])
    post = rare.posterior
    tpr, tnr = idata.posterior["tpr"], idata.posterior["tnr"]
    expected = tpr * 0.01 / (tpr * 0.01 + (1 - tnr) * 0.99)
    np.testing.assert_allclose(post["ppv"], expected.transpose(*post["ppv"].dims), rtol=1e-6)
    np.testing.assert_allclose(post["tpr"], tpr)
    table = bcm.summary(rare, metrics=["ppv"])
    assert (table["mean"] < bcm.summary(idata, metrics=["ppv"])["mean"]).all()
    uncertain = at_prevalence(idata, bcm.priors.Beta(2, 98), metrics=["ppv"], random_seed=1)
    phi = uncertain.posterior["prevalence"].isel(classifier=0)
    assert float(phi.mean()) == pytest.approx(0.02, abs=0.002)
    assert float(phi.std()) == pytest.approx(stats.beta(2, 98).std(), rel=0.1)
    cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    assert float(at_prevalence(cm, 0.5, random_seed=1).posterior["ba"].mean()) == \
        pytest.approx((27 / 28 + 0.7) / 2, abs=0.01)
    for bad in (0.0, 1.5, np.ones((2, 3)) * 0.3):
        with pytest.raises(ValueError, match=r"prevalence|draws"):
            at_prevalence(idata, bad)


def test_latent_class_models_are_never_deceptive():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = bcm.models.hui_walter(bcm.AgreementTable([40, 3, 7, 100]),
                                  priors={"sensitivity": bcm.priors.Beta(20, 4),
                                          "specificity": bcm.priors.Beta(20, 4)})
        idata = bcm.fit(m, random_seed=1)
    d = deception(idata)
    assert (d["r_deceptive"] == 0).all()  # Se + Sp > 1 by construction
    assert list(d.index.names) == ["population", "classifier"]
    mu = metric_uncertainty(idata, "ppv")
    assert list(mu.index.names) == ["population", "classifier"] and (mu["mu"] > 0).all()
    deployed = at_prevalence(idata, 0.05, metrics=["ppv"]).posterior["ppv"]
    se, sp = idata.posterior["sensitivity"], idata.posterior["specificity"]
    np.testing.assert_allclose(
        deployed.sel(population="all"),
        (se * 0.05 / (se * 0.05 + (1 - sp) * 0.95)).transpose(*deployed.sel(
            population="all").dims), rtol=1e-6)
