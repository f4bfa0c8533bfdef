"""NUTS against the closed-form posterior, predictive distributions, InferenceData layout.

Tolerances are Monte Carlo standard errors: a NUTS estimate (mean or quantile) must lie
within 4 MCSE of the exact value (ArviZ's mcse, which accounts for autocorrelation).
With about 110 such comparisons, the family-wise false-alarm rate is below 1%.
"""

import subprocess
import sys

import arviz as az
import numpy as np
import pytest
from scipy import stats

import bayescm as bcm
from bayescm.data.confusion import CELLS
from tests.conftest import MATRICES, fitted

QUANTILES = (0.05, 0.5, 0.95)


def _exact_marginals(family):
    """Closed-form posterior marginals (default priors) per classifier and parameter."""
    out = {}
    for name, c in MATRICES.items():
        if family == "three_beta":
            out[name] = {
                "prevalence": stats.beta(1 + c["tp"] + c["fn"], 1 + c["fp"] + c["tn"]),
                "tpr": stats.beta(1 + c["tp"], 1 + c["fn"]),
                "tnr": stats.beta(1 + c["tn"], 1 + c["fp"]),
            }
        else:
            alpha = np.array([1 + c[k] for k in CELLS], float)
            out[name] = {f"theta[{k}]": stats.beta(alpha[i], alpha.sum() - alpha[i])
                         for i, k in enumerate(CELLS)}
    return out


def _draws(idata, name, param):
    if param.startswith("theta["):
        return idata.posterior["theta"].sel(classifier=name, cell=param[6:-1])
    return idata.posterior[param].sel(classifier=name)


@pytest.mark.parametrize("family", ["three_beta", "dirichlet_multinomial"])
def test_nuts_agrees_with_exact_posterior(family):
    idata = fitted(family, "nuts")
    assert bcm.check_convergence(idata).ok
    for name, params in _exact_marginals(family).items():
        for param, dist in params.items():
            x = _draws(idata, name, param).values
            mcse = az.mcse(x, method="mean")
            assert abs(x.mean() - dist.mean()) < 4 * mcse, (name, param)
            for q in QUANTILES:
                se = az.mcse(x, method="quantile", prob=q)
                assert abs(np.quantile(x, q) - dist.ppf(q)) < 4 * se + 1e-9, (name, param, q)


@pytest.mark.parametrize("family", ["three_beta", "dirichlet_multinomial"])
def test_exact_sampler_draws_the_closed_form(family):
    """Exact draws are i.i.d., so a Kolmogorov-Smirnov test is valid (alpha = 1e-4 each)."""
    idata = fitted(family, "exact")
    for name, params in _exact_marginals(family).items():
        for param, dist in params.items():
            x = _draws(idata, name, param).values.ravel()
            assert stats.kstest(x, dist.cdf).pvalue > 1e-4, (name, param)


def test_nuts_and_exact_agree_on_metrics():
    """Composite metrics (no closed form) by a two-sample comparison of means."""
    nuts, exact = fitted("three_beta", "nuts"), fitted("three_beta", "exact")
    for metric in ("mcc", "f1", "ba", "kappa"):
        for name in MATRICES:
            a = nuts.posterior[metric].sel(classifier=name).values
            b = exact.posterior[metric].sel(classifier=name).values
            se = np.hypot(az.mcse(a), b.std() / np.sqrt(b.size))
            assert abs(a.mean() - b.mean()) < 4 * se, (metric, name)


@pytest.mark.xdist_group("nutpie-three-beta")  # one nutpie compilation for both
@pytest.mark.slow  # the default suite: test_hui_walter's generic-engine test
def test_generic_nutpie_engine_agrees(batch):
    """nutpie compiling the PyMC graph itself (not bayescm's kernel) gives the same posterior."""
    idata = bcm.fit(bcm.models.three_beta(batch), engine="nutpie", random_seed=2)
    assert idata.attrs["engine"] == "nutpie"
    for name, params in _exact_marginals("three_beta").items():
        for param, dist in params.items():
            x = _draws(idata, name, param).values
            assert abs(x.mean() - dist.mean()) < 4 * az.mcse(x), (name, param)


def test_inference_data_layout(batch):
    idata = bcm.fit(bcm.models.three_beta(batch), sampler="exact", random_seed=4,
                    predictive_n=1000, draws=200)
    assert {"posterior", "prior", "prior_predictive", "observed_data", "sample_stats",
            "posterior_predictive", "predictions"} <= set(idata.groups())
    post = idata.posterior
    assert post["theta"].dims == ("chain", "draw", "classifier", "cell")
    assert set(bcm.metrics.names()) <= set(post.data_vars)
    np.testing.assert_allclose(post["theta"].sum("cell"), 1.0)
    np.testing.assert_allclose(post["theta"].sel(cell="tp"), post["tpr"] * post["prevalence"])
    pp = idata.posterior_predictive["counts"]
    np.testing.assert_array_equal(pp.sum("cell").isel(chain=0, draw=0), batch.n)
    assert (idata.predictions["counts"].sum("cell") == 1000).all()
    assert "repetition" in idata.posterior_predictive.attrs["meaning"]
    for key in ("priors", "sampler", "engine", "inference_library_version", "convergence"):
        assert key in idata.attrs
    assert idata.attrs["sampler"] == "exact"
    np.testing.assert_array_equal(idata.observed_data["counts"].values, batch.counts)


def test_fixed_prevalence_predictive_keeps_class_sizes():
    cm = bcm.ConfusionMatrix(tp=20, fn=5, fp=3, tn=22)
    idata = bcm.fit(bcm.models.three_beta(cm, prevalence=0.5), random_seed=1, predictive_n=80)
    assert np.all(idata.posterior["prevalence"] == 0.5)
    pp = idata.predictions["counts"]
    assert (pp.sel(cell="tp") + pp.sel(cell="fn") == 40).all()
    assert float(idata.posterior["tpr"].mean()) == pytest.approx(21 / 27, abs=0.01)


def test_dirichlet_predictive_variance_inflation():
    """Var[V_i / N] = (1 + alpha0 / N) Var[theta_i] (Tötsch & Hoffmann 2021, S4)."""
    cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    idata = bcm.fit(bcm.models.dirichlet_multinomial(cm), sampler="exact", draws=25_000,
                    random_seed=7, metrics=["acc"])
    alpha = cm.counts[0] + 1.0
    a0, n = alpha.sum(), cm.n[0]
    theta = idata.posterior["theta"].values.reshape(-1, 4)
    prop = idata.posterior_predictive["counts"].values.reshape(-1, 4) / n
    for i in range(4):
        var_theta = alpha[i] / a0 * (1 - alpha[i] / a0) / (1 + a0)
        for sample, expected in ((theta[:, i], var_theta),
                                 (prop[:, i], (1 + a0 / n) * var_theta)):
            centred = sample - sample.mean()
            se = np.sqrt((np.mean(centred**4) - np.var(sample) ** 2) / sample.size)
            assert abs(np.var(sample) - expected) < 4 * se, (CELLS[i], expected)
    # the predictive is roughly twice as variable when N is about alpha0
    ratio = prop.var(axis=0) / theta.var(axis=0)
    assert np.allclose(ratio, 1 + a0 / n, rtol=0.05)


def test_strict_and_warning():
    m = bcm.models.three_beta(bcm.ConfusionMatrix(tp=5, fn=2, fp=1, tn=9))
    with pytest.raises(bcm.ConvergenceError, match="ESS"):
        bcm.fit(m, draws=10, tune=10, chains=2, random_seed=1, strict=True)
    with pytest.warns(bcm.ConvergenceWarning, match="NOT converged"):
        bcm.fit(m, draws=10, tune=10, chains=2, random_seed=1)


def test_kernel_refit_compiles_nothing(monkeypatch, cocaine):
    import nutpie

    def no_compile(*a, **k):
        raise AssertionError("recompiled")

    monkeypatch.setattr(nutpie, "compile_pymc_model", no_compile)
    for cm in (cocaine, bcm.ConfusionMatrix(tp=10, fn=5, fp=3, tn=20)):
        idata = bcm.fit(bcm.models.three_beta(cm, priors={"tpr": "beta:20,4"}), random_seed=1)
        assert idata.attrs["engine"] == "bayescm-kernel"


def test_modified_model_falls_back(cocaine):
    m = bcm.models.three_beta(cocaine)
    with m:
        import pymc as pm

        pm.Potential("extra", -((m["tpr"] - 0.5) ** 2).sum())
    with pytest.raises(ValueError, match="no longer conjugate"):
        bcm.fit(m, sampler="exact")


@pytest.mark.parametrize("bad", [dict(draws=0), dict(chains=0), dict(sampler="gibbs"),
                                 dict(engine="stan"), dict(predictive_n=-3)])
def test_bad_fit_arguments(cocaine, bad):
    with pytest.raises(ValueError):
        bcm.fit(bcm.models.three_beta(cocaine), **bad)


def test_no_stray_warnings_in_a_fresh_process():
    code = (
        "import bayescm as bcm\n"
        "cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)\n"
        "idata = bcm.fit(bcm.models.three_beta(cm), random_seed=1)\n"
        "bcm.summary(idata)\n"
        "idata = bcm.fit(bcm.models.dirichlet_multinomial(cm), sampler='exact')\n"
        "bcm.summary(idata, group='posterior_predictive')\n"
    )
    res = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stderr.strip() == "", res.stderr[-3000:]
