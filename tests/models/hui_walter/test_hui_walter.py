"""Hui-Walter latent-class model: structure, identifiability, JAGS twin, fit checks.

PyMC (nutpie) and JAGS posteriors are compared per scalar parameter: means and 5%/95%
quantiles must agree within 4 combined Monte Carlo standard errors (ArviZ mcse of each
engine).  With about 90 comparisons the family-wise false-alarm rate is below 1%.
"""

import functools
import warnings

import arviz as az
import numpy as np
import pytensor.tensor as pt
import pytest

import bayescm as bcm
from bayescm.data import agreement
from bayescm.inference import jags
from bayescm.models import IdentifiabilityError, IdentifiabilityWarning
from bayescm.models.hui_walter.model import pattern_probabilities
from bayescm.priors import Beta


def simulate(se, sp, prev, n, seed, cov_se=(), cov_sp=(), pairs=()):
    """Agreement tables drawn from the model itself (NumPy version of the formula).

    Covariances are given as values; their positions within the bounds are found by
    evaluating the bounds at positions 0 and 1.
    """
    rng = np.random.default_rng(seed)
    se, sp, prev = map(np.asarray, (se, sp, prev))
    t, k = len(se), len(pairs)
    zeros, ones = np.zeros(k), np.ones(k)
    u_se = u_sp = zeros
    if pairs:
        _, lo_se, lo_sp = pattern_probabilities(se, sp, prev, zeros, zeros, t, pairs)
        _, hi_se, hi_sp = pattern_probabilities(se, sp, prev, ones, ones, t, pairs)
        u_se = (np.asarray(cov_se) - lo_se) / (hi_se - lo_se)
        u_sp = (np.asarray(cov_sp) - lo_sp) / (hi_sp - lo_sp)
        assert ((0 < u_se) & (u_se < 1) & (0 < u_sp) & (u_sp < 1)).all()
    prob, _, _ = pattern_probabilities(se, sp, prev, u_se, u_sp, t, list(pairs))
    return np.array([rng.multinomial(n, p) for p in prob])


DATASETS = {
    # Evans (2022): two classifiers, one population, informative priors
    "evans": dict(counts=[[40, 3, 7, 100]], priors={"sensitivity": Beta(20, 4),
                                                    "specificity": Beta(20, 4)}),
    # two classifiers, two populations, flat priors (Hui & Walter's design)
    "two_pop": dict(counts=simulate([0.9, 0.8], [0.95, 0.9], [0.2, 0.6], 600, seed=1)),
    # three classifiers, one population, flat priors
    "three": dict(counts=simulate([0.9, 0.8, 0.85], [0.95, 0.9, 0.8], [0.35], 1500, seed=2)),
    # three classifiers, two populations, A and B dependent
    "dependent": dict(counts=simulate([0.9, 0.8, 0.85], [0.95, 0.9, 0.8], [0.25, 0.6], 1500,
                                      seed=3, cov_se=[0.04], cov_sp=[0.03], pairs=[(0, 1)]),
                      dependence=[("A", "B")]),
}


def build(name, **overrides):
    d = {**DATASETS[name], **overrides}
    counts = np.asarray(d["counts"])
    tab = bcm.AgreementTable(counts, populations=[f"p{i}" for i in range(len(counts))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdentifiabilityWarning)
        return bcm.models.hui_walter(tab, priors=d.get("priors"),
                                     conditional_dependence=d.get("dependence", False))


@functools.cache
def pymc_fit(name):
    return bcm.fit(build(name), random_seed=11)


@functools.cache
def jags_fit(name):
    # JAGS's Gibbs steps mix slowly on the covariance terms: a longer, thinned run
    long = dict(draws=40_000, thin=8) if "dependence" in DATASETS[name] else {}
    return jags.fit_hui_walter(build(name), seed=3, log_likelihood=False, **long)


def fits(name):
    return pymc_fit(name), jags_fit(name)


def test_pattern_probabilities_are_valid_and_shared():
    """Both implementations agree, and cells are valid probabilities with several pairs."""
    rng = np.random.default_rng(0)
    t, pairs = 4, [(0, 1), (0, 2), (1, 3), (2, 3), (0, 3), (1, 2)]
    se, sp = rng.uniform(0.5, 1, (200, t)), rng.uniform(0.5, 1, (200, t))
    prev = rng.uniform(0, 1, (200, 3))
    u_se, u_sp = rng.uniform(size=(200, 6)), rng.uniform(size=(200, 6))
    prob, cov_se, _ = pattern_probabilities(se, sp, prev, u_se, u_sp, t, pairs)
    assert prob.shape == (200, 3, 16)
    assert (prob >= -1e-12).all()
    np.testing.assert_allclose(prob.sum(-1), 1.0)
    # each pair's 2x2 marginal among positives has covariance cov_se (Dendukuri & Joseph)
    unit = np.zeros((200, 1))
    pos, _, _ = pattern_probabilities(se, sp, unit + 1, u_se, u_sp, t, pairs)
    r = agreement.pattern_matrix(t)
    for k, (i, j) in enumerate(pairs):
        both = (pos[:, 0, :] * (r[:, i] * r[:, j])).sum(-1)
        np.testing.assert_allclose(both - se[:, i] * se[:, j], cov_se[:, k], atol=1e-12)
    sym = [pt.as_tensor(x[0]) for x in (se, sp, prev, u_se, u_sp)]
    tensor = pattern_probabilities(*sym, t, pairs, xp=pt)[0].eval()
    np.testing.assert_allclose(tensor, prob[0], rtol=1e-12)


def test_identifiability_statuses_and_warning():
    flat = bcm.AgreementTable([40, 3, 7, 100])
    with pytest.warns(IdentifiabilityWarning, match="not identified"):
        bcm.models.hui_walter(flat)
    with pytest.raises(IdentifiabilityError, match="add a population"):
        bcm.models.hui_walter(flat, identifiability="raise")
    with pytest.warns(IdentifiabilityWarning, match="only through"):
        build("evans")
        bcm.models.hui_walter(flat, priors={"sensitivity": Beta(20, 4),
                                            "specificity": Beta(20, 4)})
    with warnings.catch_warnings():
        warnings.simplefilter("error", IdentifiabilityWarning)
        bcm.models.hui_walter(bcm.AgreementTable(DATASETS["two_pop"]["counts"]))
        bcm.models.hui_walter(bcm.AgreementTable(DATASETS["three"]["counts"]))


def test_bad_model_input():
    tab = bcm.AgreementTable([40, 3, 7, 100])
    with pytest.raises(TypeError, match="AgreementTable"):
        bcm.models.hui_walter([40, 3, 7, 100])
    with pytest.raises(ValueError, match="not in"):
        bcm.models.hui_walter(tab, conditional_dependence=[("A", "Z")], identifiability="ignore")
    with pytest.raises(bcm.PriorError, match="Improper"):
        bcm.models.hui_walter(tab, priors={"prevalence": Beta(0, 0)}, identifiability="ignore")
    with pytest.raises(bcm.PriorError, match="not in the data"):
        bcm.models.hui_walter(tab, priors={"prevalence": {"site9": Beta(2, 2)}},
                              identifiability="ignore")


@pytest.mark.engine("jags")
@pytest.mark.parametrize("name", [
    # the dependent design: JAGS needs 40,000 thinned draws (15 s) to pin the covariances
    pytest.param(n, marks=pytest.mark.slow) if "dependence" in d else n
    for n, d in DATASETS.items()])
def test_pymc_agrees_with_jags(name):
    idata, twin = fits(name)
    report = bcm.check_convergence(idata)
    assert report.ok and report.divergences == 0, report.message()
    assert bcm.check_convergence(twin).ok
    for var in twin.posterior.data_vars:
        a = idata.posterior[var].values.reshape(*idata.posterior[var].shape[:2], -1)
        b = twin.posterior[var].values.reshape(*twin.posterior[var].shape[:2], -1)
        for j in range(a.shape[-1]):
            x, y = a[..., j], b[..., j]
            se = np.hypot(az.mcse(x), az.mcse(y))
            assert abs(x.mean() - y.mean()) < 4 * se, (name, var, j)
            for q in (0.05, 0.95):
                se_q = np.hypot(az.mcse(x, method="quantile", prob=q),
                                az.mcse(y, method="quantile", prob=q))
                assert abs(np.quantile(x, q) - np.quantile(y, q)) < 4 * se_q, (name, var, j, q)


def test_outputs_of_a_latent_class_fit():
    idata = pymc_fit("two_pop")
    post = idata.posterior
    assert (post["sensitivity"] + post["specificity"] > 1).all()  # no label switching
    assert post["theta"].dims == ("chain", "draw", "population", "classifier", "cell")
    # metrics are computed per draw from Se, Sp and prevalence, never from plug-ins
    se, sp, pi = post["sensitivity"], post["specificity"], post["prevalence"]
    ppv = se * pi / (se * pi + (1 - sp) * (1 - pi))
    np.testing.assert_allclose(post["ppv"], ppv.transpose(*post["ppv"].dims), rtol=1e-6)
    table = bcm.summary(idata, metrics=["tpr", "ppv", "f1", "mcc"])
    assert table.index.names == ["population", "classifier", "metric"]
    assert table["plug_in"].isna().all()
    pp = idata.posterior_predictive["counts"]
    assert pp.dims == ("chain", "draw", "population", "pattern")
    np.testing.assert_array_equal(pp.sum("pattern").isel(chain=0, draw=0),
                                  np.asarray(DATASETS["two_pop"]["counts"]).sum(1))
    assert "prior" in idata.groups() and (idata.prior["sensitivity"]
                                          + idata.prior["specificity"] > 1).all()


def test_posterior_predictive_check_detects_ignored_dependence():
    """Strong dependence (near its bound) that an independence model cannot absorb."""
    counts = simulate([0.9, 0.8, 0.85], [0.95, 0.9, 0.8], [0.25, 0.6], 5000, seed=4,
                      cov_se=[0.07], cov_sp=[0.04], pairs=[(0, 1)])
    fitted = bcm.fit(build("dependent", counts=counts), random_seed=5)
    good = bcm.posterior_predictive_check(fitted)
    assert good.loc["all", "p_value"] > 0.01, good
    naive = bcm.fit(build("dependent", counts=counts, dependence=False), random_seed=5)
    bad = bcm.posterior_predictive_check(naive, statistic="g2")
    assert bad.loc["all", "p_value"] < 0.01, bad


@pytest.mark.slow
def test_generic_engine_agrees_and_refits_without_recompiling(monkeypatch):
    """nutpie compiling the PyMC graph agrees with the kernel; new counts reuse it.

    Slow: nutpie's numba compilation of this graph takes about a minute on an empty
    cache.  The default suite compiles one PyMC graph with nutpie and refits it on other
    counts (``tests/models/test_family.py``, the fallback when nutpie is unknown)."""
    import nutpie

    kernel_fit = pymc_fit("two_pop")
    generic = bcm.fit(build("two_pop"), engine="nutpie", random_seed=3)
    assert generic.attrs["engine"] == "nutpie" and bcm.check_convergence(generic).ok
    for var in ("sensitivity", "specificity", "prevalence"):
        a = kernel_fit.posterior[var].values.reshape(*kernel_fit.posterior[var].shape[:2], -1)
        b = generic.posterior[var].values.reshape(*generic.posterior[var].shape[:2], -1)
        for j in range(a.shape[-1]):
            se = np.hypot(az.mcse(a[..., j]), az.mcse(b[..., j]))
            assert abs(a[..., j].mean() - b[..., j].mean()) < 4 * se, (var, j)
    monkeypatch.setattr(nutpie, "compile_pymc_model",
                        lambda *a, **k: (_ for _ in ()).throw(AssertionError("recompiled")))
    new = simulate([0.7, 0.9], [0.9, 0.8], [0.3, 0.5], 600, seed=9)
    tab = bcm.AgreementTable(new, populations=["p0", "p1"])
    for engine in ("nutpie", "auto"):
        idata = bcm.fit(bcm.models.hui_walter(tab), random_seed=2, engine=engine)
        assert bcm.check_convergence(idata).ok


@pytest.mark.parametrize(("counts", "kwargs"), [
    ([[40, 3, 7, 100]], dict(priors={"sensitivity": Beta(20, 4), "specificity": Beta(3, 2),
                                     "prevalence": Beta(2, 5)})),
    ([[89, 43, 55, 413], [260, 76, 52, 212]], {}),
    ([[5, 0, 9, 30, 2, 11, 40, 51], [30, 12, 0, 7, 19, 3, 8, 60]],
     dict(conditional_dependence=True, priors={"specificity": Beta(5, 2)})),
    ([[12, 4, 9, 30, 2, 11, 40, 51]], dict(conditional_dependence=[("A", "C")])),
])
def test_kernel_is_the_pymc_posterior(counts, kwargs):
    """bayescm's compiled density equals the PyMC model's logp up to a constant, with the
    same gradient, in PyMC's unconstrained coordinates (incl. three dependent pairs)."""
    from bayescm.models.hui_walter import kernel as _kernel_hui_walter

    counts = np.asarray(counts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdentifiabilityWarning)
        m = bcm.models.hui_walter(
            bcm.AgreementTable(counts, populations=[f"p{i}" for i in range(len(counts))]),
            **kwargs)
    compiled = bcm.models.family_of(m).kernel(m, bcm.models.spec_of(m))
    kernel, user_data, n_dim = compiled.module, compiled.user_data, compiled.n_dim
    assert kernel is _kernel_hui_walter
    logp, dlogp = m.compile_logp(), m.compile_dlogp()
    rng = np.random.default_rng(1)
    diffs = []
    start = m.initial_point()  # once: each call compiles a function
    for _ in range(25):
        point = {v.name: rng.normal(0, 1.2, size=start[v.name].shape) for v in m.value_vars}
        x = np.concatenate([point[v.name].ravel() for v in m.value_vars])
        assert x.size == n_dim
        grad = np.zeros_like(x)
        diffs.append(logp(point) - kernel.log_density(x, user_data.astype(float), grad))
        np.testing.assert_allclose(grad, dlogp(point), rtol=1e-9, atol=1e-9)
    assert np.ptp(diffs) < 1e-8
