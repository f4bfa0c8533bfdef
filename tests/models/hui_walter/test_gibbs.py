"""Gibbs sampling of the conjugate Hui–Walter model (``bayescm.models.hui_walter.gibbs``).

Its draws are other draws of the posterior NUTS samples: the comparisons are within the
Monte Carlo error of both samples (ArviZ's MCSE), not exact.  The truncated Beta draw
is checked against scipy's distribution function, also far out in the tail.
"""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pytest
from scipy import stats

import bayescm as bcm
from bayescm.inference import fit_kernel
from bayescm.models.hui_walter.gibbs import THIN, _above, _keep_above, applies, gibbs_draws
from bayescm.models.hui_walter.inputs import prepare
from tests.fresh import run_fresh

TWO_SITES = {"s1": {"++": 89, "+-": 43, "-+": 55, "--": 413},
             "s2": {"++": 260, "+-": 76, "-+": 52, "--": 212}}
# three classifiers on one population, one with an informative prior (Se + Sp > 1 cuts
# part of it): identified by the data (7 degrees of freedom, 7 parameters)
THREE = {"+++": 61, "++-": 9, "+-+": 12, "+--": 10, "-++": 7, "-+-": 14, "--+": 19,
         "---": 268}


@pytest.mark.parametrize("alpha,beta,low", [(3.0, 2.0, 0.4), (2.0, 30.0, 0.3),
                                            (50.0, 5.0, 0.2), (1.0, 1.0, 0.999)])
def test_truncated_beta_draws_follow_the_truncated_distribution(alpha, beta, low):
    """KS test of 20,000 draws of Beta(a, b) given X > low against scipy's CDF of that
    truncated distribution; (2, 30) above 0.3 leaves 1e-4 of the mass."""
    rng = np.random.default_rng(3)
    n = 20_000
    x = _above(np.full(n, alpha), np.full(n, beta), np.full(n, low), rng)
    assert np.all(x > low) and np.all(x <= 1)
    dist = stats.beta(alpha, beta)
    tail = dist.sf(low)

    def cdf(v):
        return (dist.cdf(v) - dist.cdf(low)) / tail

    assert stats.kstest(x, cdf).pvalue > 1e-3



@pytest.mark.parametrize("alpha,beta,low", [(3.0, 2.0, 0.4), (2.0, 5.0, 0.5)])
def test_a_beta_draw_kept_above_its_bound_else_redrawn_is_the_truncated_law(alpha, beta, low):
    """What a sweep does: Beta(a, b) draws (here by NumPy), each below ``low`` replaced by
    a draw given X > low.  Half or more of the draws fall below here, so the KS test
    checks the mixture itself against the truncated CDF; also a 0/0 (NaN) is redrawn."""
    rng = np.random.default_rng(11)
    n = 20_000
    a, b, lo = np.full(n, alpha), np.full(n, beta), np.full(n, low)
    first = rng.beta(a, b)
    first[:5] = np.nan
    x = _keep_above(first, a, b, lo, rng)
    assert np.all(x > low) and np.all(x <= 1)
    kept = first > low
    np.testing.assert_array_equal(x[kept], first[kept])
    dist = stats.beta(alpha, beta)

    def cdf(v):
        return (dist.cdf(v) - dist.cdf(low)) / dist.sf(low)

    assert stats.kstest(x, cdf).pvalue > 1e-3


def _posterior_agrees(gibbs, nuts, names):
    """Means within 4 combined MCSEs; sds within 10% (sd's sampling error is ~2-4% at
    these ESS) for every scalar of ``names``."""
    for name in names:
        g, n = gibbs[name], nuts[name]
        se = np.hypot(az.mcse(g.to_dataset(name="x"))["x"].values,
                      az.mcse(n.to_dataset(name="x"))["x"].values)
        diff = np.abs(g.mean(("chain", "draw")).values - n.mean(("chain", "draw")).values)
        np.testing.assert_array_less(diff, 4 * se)
        ratio = g.std(("chain", "draw")).values / n.std(("chain", "draw")).values
        np.testing.assert_array_less(np.abs(ratio - 1), 0.1)


@pytest.mark.parametrize("case", ["two sites", "three classifiers"])
def test_gibbs_posterior_equals_the_nuts_posterior(case):
    cells = TWO_SITES if case == "two sites" else THREE
    priors = ({"specificity": "beta:20,4"} if case == "two sites"
              else {"sensitivity": {"A": bcm.priors.Beta(12, 4)}})
    tab = bcm.AgreementTable.from_counts(cells)
    kw = {"priors": priors, "draws": 2000, "random_seed": 5, "predictive": False}
    gibbs = fit_kernel("hui_walter", tab, sampler="gibbs", **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bcm.models.IdentifiabilityWarning)
        nuts = fit_kernel("hui_walter", tab, sampler="nuts", **kw)
    assert gibbs.attrs["sampler"] == "gibbs" and gibbs.attrs["engine"] == "bayescm-gibbs"
    assert gibbs.attrs["converged"] == 1, gibbs.attrs["convergence"]
    assert "Gibbs sampling" in gibbs.attrs["convergence"]
    _posterior_agrees(gibbs["posterior"], nuts["posterior"],
                      ["sensitivity", "specificity", "prevalence"])
    # the derived quantities come from the same completion as NUTS's
    np.testing.assert_allclose(gibbs["posterior"]["pattern_prob"].sum("pattern"), 1.0)
    assert set(gibbs["posterior"].data_vars) == set(nuts["posterior"].data_vars)


@pytest.mark.engine("jags")
def test_gibbs_agrees_with_jags_on_the_two_sites():
    """JAGS samples the same conjugate model with its own Gibbs sampler
    (``hui_walter.jags``): the same posterior within both samples' MC error."""
    from bayescm.inference import jags

    tab = bcm.AgreementTable.from_counts(TWO_SITES)
    gibbs = fit_kernel("hui_walter", tab, sampler="gibbs", draws=2000, random_seed=2,
                       predictive=False)
    ref = jags.fit_twin(bcm.models.hui_walter(tab), draws=5000, thin=2, chains=4, seed=2,
                        log_likelihood=False)
    _posterior_agrees(gibbs["posterior"], ref.posterior,
                      ["sensitivity", "specificity", "prevalence"])


def test_thinning_and_reproducibility():
    spec = prepare(bcm.AgreementTable.from_counts(TWO_SITES), None, False, "warn")
    one = gibbs_draws(spec, draws=50, tune=10, chains=3, seed=4)
    two = gibbs_draws(spec, draws=50, tune=10, chains=3, seed=4)
    every = gibbs_draws(spec, draws=50 * THIN, tune=10, chains=3, seed=4, thin=1)
    for name in one:
        np.testing.assert_array_equal(one[name], two[name])
    # the kept draws are every THIN-th sweep of the same stream
    np.testing.assert_array_equal(one["sensitivity"],
                                  every["sensitivity"][:, THIN - 1::THIN])
    assert one["pattern_prob"].shape == (3, 50, 2, 4)


def test_models_gibbs_does_not_cover_are_refused_or_sampled_with_nuts():
    dependent = prepare(bcm.AgreementTable.from_counts(TWO_SITES), None, True, "ignore")
    missing = prepare(bcm.AgreementTable.from_counts({"++": 40, "+-": 3, "-+": 7, "--": 100,
                                                      "+?": 6}), None, False, "ignore")
    assert not applies(dependent) and not applies(missing)
    with pytest.raises(ValueError, match="use NUTS"):
        gibbs_draws(dependent, draws=10, tune=10, chains=2, seed=1)
    tab = bcm.AgreementTable.from_counts(TWO_SITES)
    with pytest.raises(ValueError, match="no Gibbs sampler"):
        fit_kernel("hui_walter", tab, options={"conditional_dependence": True,
                                               "identifiability": "ignore"},
                   sampler="gibbs", draws=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto = fit_kernel("hui_walter", tab, options={"conditional_dependence": True,
                                                      "identifiability": "ignore"},
                          sampler="auto", draws=100, tune=100, chains=2, random_seed=1)
    assert auto.attrs["sampler"] == "nuts"
    with pytest.raises(ValueError, match="'nuts', 'gibbs' or 'auto'"):
        fit_kernel("hui_walter", tab, sampler="metropolis")


def _loaded_after(argv: list[str]) -> list[str]:
    script = (
        "import sys, contextlib, io\n"
        "from bayescm import cli\n"
        f"sys.argv = ['bayescm', *{argv!r}]  # as the console script runs it\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert cli.main() == 0\n"
        "print('LOADED:' + ','.join(m for m in ('pymc', 'pytensor', 'nutpie', 'arviz', "
        "'numba') if m in sys.modules))\n")
    out = run_fresh(script)
    return out.stdout.strip().splitlines()[-1].removeprefix("LOADED:").split(",")


def test_unlabeled_from_the_shell_samples_in_numpy_alone():
    counts = "s1:++=89,+-=43,-+=55,--=413;s2:++=260,+-=76,-+=52,--=212"
    assert _loaded_after(["unlabeled", "--counts", counts, "--seed", "1"]) == [""]
    # NUTS on request (and for dependent pairs): nutpie on the compiled density, no PyMC
    assert _loaded_after(["unlabeled", "--counts", counts, "--seed", "1", "--draws", "100",
                          "--sampler", "nuts"]) == ["nutpie", "arviz", "numba"]
