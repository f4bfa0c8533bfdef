"""compare_datasets (issue 28): the hierarchical model across data sets -- its marginal
likelihood against numerical integration, a NUTS fit against baycomp's signed-rank test
in direction, shrinkage, plots, errors, and (slow) the calibration of the overall
posterior."""

import functools
import sys

import baycomp
import numpy as np
import pytest
from scipy import integrate, special, stats

import bayescm as bcm
from bayescm.analysis import compare_datasets


def datasets(seed, effects, *, k=10, n=100, fold_sd=0.02):
    """Per data set: k folds of A and B whose accuracies differ by effects[i]."""
    rng = np.random.default_rng(seed)
    a, b = {}, {}
    for i, eff in enumerate(effects):
        base = rng.uniform(0.7, 0.85)
        shift = rng.normal(0, fold_sd, k)
        for out, p in ((a, base + eff + shift), (b, base + shift)):
            pos = rng.binomial(n, 0.5, k)
            tp, tn = rng.binomial(pos, np.clip(p, 0, 1)), rng.binomial(n - pos, np.clip(p, 0, 1))
            out[f"d{i}"] = bcm.ConfusionMatrix(tp=tp, fn=pos - tp, fp=n - pos - tn, tn=tn)
    return a, b


def mean_acc(cms):
    return float(np.mean((cms.cell("tp") + cms.cell("tn")) / cms.n))


def test_sigma_is_integrated_out_exactly():
    """The model's potential is log of the integral over sigma (uniform prior) of the
    correlated normal likelihood of the fold differences: compare differences in delta
    with scipy quad over the full multivariate normal density."""
    import sys

    module = sys.modules["bayescm.analysis.compare_datasets"]
    rng = np.random.default_rng(0)
    x = rng.normal(0.3, 1.0, 6)
    n, rho = len(x), 1 / 3
    corr = (1 - rho) * np.eye(n) + rho
    model = module._model(np.array([x.mean(), 0.0]), np.array([((x - x.mean()) ** 2).sum(), 1.0]),
                          np.array([n, n]), np.array([rho, rho]),
                          {**module.DEFAULT_PRIORS, "delta0": 5.0, "std0": 4.0})
    logp = model.compile_logp()
    point = model.initial_point()

    def model_logp(delta):
        p = dict(point)
        std0 = 4.0 * special.expit(point["std0_interval__"])
        delta0 = -5.0 + 10.0 * special.expit(point["delta0_interval__"])
        z = np.array(point["z"], dtype=float)
        z[0] = (delta - delta0) / std0
        p["z"] = z
        nu = 1 + np.exp(point["nu_minus_one_log__"])
        return logp(p) - stats.t.logpdf(z[0], nu)

    def integrated(delta):
        f = lambda s: stats.multivariate_normal.pdf(x, np.full(n, delta), s**2 * corr)  # noqa: E731
        return np.log(integrate.quad(f, 1e-6, 200, limit=400, points=[0.5, 1, 2])[0])

    for d1, d2 in ((0.0, 0.5), (0.3, -1.0)):
        assert model_logp(d1) - model_logp(d2) == pytest.approx(integrated(d1) - integrated(d2),
                                                                abs=1e-6)


@functools.cache
def clear_effect():
    effects = np.random.default_rng(9).normal(0.03, 0.015, 12)
    a, b = datasets(1, effects)
    res = compare_datasets(a, b, "acc", rope=0.01, draws=500, tune=500, chains=4,
                           random_seed=2, names=("rf", "lr"))
    return a, b, effects, res


def test_direction_agrees_with_baycomp_signed_rank():
    a, b, _effects, res = clear_effect()
    assert res.r_hat < 1.01 and res.divergences == 0
    xa = np.array([mean_acc(a[k]) for k in a])
    xb = np.array([mean_acc(b[k]) for k in b])
    left, _rope, _right = baycomp.two_on_multiple(xa, xb, rope=0.01)
    # baycomp's left is its first argument (A) better; both see A better: the stated
    # tolerance for two different models on 12 data sets is 0.1 on P(A better)
    assert left > 0.9 and res.p_a_better > 0.9
    assert res.p_a_better == pytest.approx(left, abs=0.1)
    assert res.p_a_better + res.p_rope + res.p_b_better == pytest.approx(1)
    # the predictive of a new data set: most of its mass on A's side
    pa, pr, pb = res.predictive_probs
    assert pa > pb and pa + pr + pb == pytest.approx(1)


def test_shrinkage_and_tables():
    a, b, effects, res = clear_effect()
    table = res.to_frame()
    assert list(table.index) == list(a)
    observed = np.array([mean_acc(a[k]) - mean_acc(b[k]) for k in a])
    np.testing.assert_allclose(table["observed_mean"], observed)
    # partial pooling: the posterior means spread less than the observed means and are
    # closer to the overall mean delta0
    assert table["posterior_mean"].std() < table["observed_mean"].std()
    centre = res.delta0.mean()
    assert np.mean(np.abs(table["posterior_mean"] - centre)) < \
        np.mean(np.abs(table["observed_mean"] - centre))
    sides = table[["p_rf_better", "p_rope", "p_lr_better"]].sum(axis=1)
    np.testing.assert_allclose(sides, 1)
    summary = res.summary()
    assert list(summary.index) == ["delta0", "new data set"]
    # a new data set is wider than the mean (between-set spread on top)
    width = summary["hdi_upper"] - summary["hdi_lower"]
    assert width["new data set"] > width["delta0"]
    # the true mean effect (0.03 by construction; its sample mean here) is in delta0's HDI
    assert summary.loc["delta0", "hdi_lower"] < effects.mean() < summary.loc["delta0", "hdi_upper"]


def test_plots():
    import matplotlib.pyplot as plt

    a, _b, _effects, res = clear_effect()
    ax = res.plot()
    texts = [t.get_text() for t in ax.texts]
    assert any(t.startswith("P(rf better)") for t in texts)
    ax = res.plot_forest()
    assert [t.get_text() for t in ax.get_yticklabels()] == [*a, "new data set"]  # top first
    plt.close("all")
    with pytest.raises(TypeError, match="compare_datasets"):
        bcm.plots.datasets_simplex(object())


def test_errors_before_sampling():
    a, b = datasets(0, [0.02, 0.01])
    with pytest.raises(ValueError, match="at least two data sets"):
        compare_datasets({"d0": a["d0"]}, {"d0": b["d0"]})
    with pytest.raises(ValueError, match="same data sets"):
        compare_datasets(a, {"x": b["d0"], "d1": b["d1"]})
    with pytest.raises(ValueError, match="Unknown prior setting"):
        compare_datasets(a, b, priors={"sigma": 1.0})
    with pytest.raises(ValueError, match="All fold differences are equal"):
        compare_datasets(a, {"d0": a["d0"], "d1": b["d1"]})
    # NUTS settings and priors checked as bcm.fit checks them (a target_accept of 0 or 2
    # gave a confident answer from chains that never converged; tune=0 a Rust panic)
    for bad, match in (({"target_accept": 2.0}, "strictly between 0 and 1"),
                       ({"target_accept": 0.0}, "strictly between 0 and 1"),
                       ({"tune": 0}, "tune >= 1"), ({"chains": 0}, "chains must be"),
                       ({"draws": 1}, "draws must be"), ({"random_seed": -1}, "random_seed"),
                       ({"priors": {"std0_upper": np.inf}}, "finite number > 0"),
                       ({"priors": {"sigma_upper": -1}}, "finite number > 0"),
                       ({"priors": {"alpha_lower": 5, "alpha_upper": 1}}, "must be below"),
                       ({"rope": -0.1}, "rope must be")):
        with pytest.raises(ValueError, match=match):
            compare_datasets(a, b, **bad)
    with pytest.raises(TypeError, match="rope must be a number"):
        compare_datasets(a, b, rope=None)
    perfect = bcm.ConfusionMatrix(tp=[50] * 10, fn=[0] * 10, fp=[0] * 10, tn=[50] * 10)
    with pytest.raises(ValueError, match=r"undefined on fold.*a metric defined on every fold"):
        compare_datasets({"d0": perfect, "d1": perfect}, b, "lr_pos")
    with pytest.raises(TypeError, match="must be a number"):
        compare_datasets(a, b, priors={"alpha_lower": "one"})


def test_chains_that_did_not_converge_are_said_so():
    """Two data sets with the defaults leave R-hat above 1.01 on this seed: the result
    warns as bcm.fit does and shows R-hat and divergences; one chain warns too."""
    rng = np.random.default_rng(5)

    def folds(acc):
        tp, tn = rng.binomial(50, acc, 10), rng.binomial(50, acc, 10)
        return bcm.ConfusionMatrix(tp=tp, fn=50 - tp, fp=50 - tn, tn=tn)

    a = {"d0": folds(0.80), "d1": folds(0.85)}
    b = {"d0": folds(0.82), "d1": folds(0.83)}
    with pytest.warns(bcm.ConvergenceWarning, match="R-hat") as record:
        res = compare_datasets(a, b, random_seed=1, draws=300, tune=100)
    assert res.r_hat >= 1.01 or res.divergences > 0
    assert f"max R-hat {res.r_hat:.3f}" in repr(res)
    assert res.summary().attrs["divergences"] == res.divergences
    assert len(record) == 1
    with pytest.warns(bcm.ConvergenceWarning, match="one chain"):
        compare_datasets(a, b, random_seed=1, chains=1, draws=200, tune=200)


@pytest.mark.slow
def test_overall_posterior_is_calibrated():
    """60 simulated problems of 10 data sets whose true differences are drawn around a
    known mean: the 90% HDI of delta0 covers it in 0.80-0.98 of them (binomial sd at 0.9
    over 60: 0.039; the band is about 2.5 sd, and the hierarchy is not exactly the
    simulation's (binomial folds, not normal))."""
    covered = 0
    reps = 60
    for seed in range(reps):
        rng = np.random.default_rng(500 + seed)
        truth = rng.uniform(-0.03, 0.03)
        effects = rng.normal(truth, 0.01, 10)
        a, b = datasets(700 + seed, effects)
        res = compare_datasets(a, b, "acc", draws=500, tune=500, chains=2, random_seed=seed)
        # the truth of delta0 in metric units is the mean effect of the data sets' means
        from bayescm.stats import hdi

        low, high = hdi(res.delta0, 0.9)
        covered += low < truth < high
    assert 0.80 <= covered / reps <= 0.98


def test_compiled_density_is_the_pymc_model():
    """The compiled kernel nutpie samples equals the PyMC model's log density (up to a
    constant) and gradient at random points, digamma terms included (nu from 1.1 to
    ~50 across the points)."""
    from bayescm.analysis import compare_datasets_kernel as ker
    from bayescm.family import Kernel
    module = sys.modules["bayescm.analysis.compare_datasets"]
    rng = np.random.default_rng(1)
    q = 7
    xbar, ssw = rng.normal(0.2, 0.5, q), rng.gamma(3.0, 1.0, q)
    n = rng.integers(5, 21, q)
    rho = 1.0 / rng.integers(2, 11, q)
    bounds = {**module.DEFAULT_PRIORS, "delta0": 3.0, "std0": 40.0}
    model = module._model(xbar, ssw, n, rho, bounds)
    kernel = Kernel(ker, ker.user_data(xbar, ssw, n, rho, bounds), q + 5, list(ker.NAMES),
                    [()] * 5 + [(q,)])
    from tests.models.test_models import assert_kernel_is_model

    # PyTensor's digamma is good to ~1.5e-10 (scipy's and the kernel's to ~1e-14),
    # and the gradient in nu sums q + 2 of them, each times up to ~q
    assert_kernel_is_model(model, kernel, points=20, scale=2.0, rng=rng, rtol=1e-7, atol=1e-7)


def test_digamma_against_scipy():
    from bayescm.analysis.compare_datasets_kernel import digamma

    for x in (1e-3, 0.3, 1.0, 2.5, 9.999, 10.0, 17.0, 1e4):
        assert digamma(x) == pytest.approx(special.digamma(x), rel=1e-13, abs=1e-13)
