"""Pointwise log-likelihood (group ``log_likelihood``) and model comparison with LOO.

The pointwise values are checked against an independent computation: summed over the
cases they must equal scipy's multinomial log pmf of the observed table minus the log
multinomial coefficient (a floating-point identity, so rtol 1e-9), with the pattern
probabilities recomputed from the posterior's Se, Sp and prevalence by brute force.
The comparison tests fit data simulated with and without conditional dependence
between two of three classifiers and read ``az.compare``'s elpd difference and its
standard error; how often the comparison chooses right over repeated studies is in
``tests/inference/test_loo_rates.py`` (``-m slow``).
"""

import contextlib
import functools
import itertools
import pathlib
import re
import warnings

import arviz as az
import numpy as np
import pandas as pd
import pymc as pm
import pytest
from scipy import stats
from scipy.special import gammaln

import bayescm as bcm
from bayescm.inference import draws as draws_mod
from bayescm.inference import jags
from bayescm.models.hui_walter.model import pattern_probabilities

CARD = pathlib.Path(__file__).resolve().parents[2] / "models" / "hui_walter" / "README.md"
PATTERNS = ["".join(p) for p in itertools.product("+-", repeat=3)]


@contextlib.contextmanager
def no_warnings():
    """User and runtime warnings become errors (ArviZ's Pareto-k and numerical ones).

    Library deprecation notices are not: pandas 3.1 deprecates an argument that
    ArviZ 0.23's ``compare`` passes (hidden from users by Python's default filters).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.simplefilter("error", RuntimeWarning)
        warnings.filterwarnings("ignore", message="The inplace keyword",
                                category=DeprecationWarning)
        yield


def simulate(seed: int, dependent: bool, n: int = 1000) -> bcm.AgreementTable:
    """Three classifiers, two sites; with ``dependent`` A and B err together strongly
    (both covariances at 95 % of their upper bound)."""
    se, sp, prev = np.array([0.85, 0.8, 0.9]), np.array([0.9, 0.85, 0.95]), np.array([0.3, 0.6])
    pairs = [(0, 1)] if dependent else []
    u = np.array([0.95]) if dependent else None
    prob, _, _ = pattern_probabilities(se, sp, prev, u, u, 3, pairs)
    rng = np.random.default_rng(seed)
    return bcm.AgreementTable.from_counts(
        {f"site{i + 1}": dict(zip(PATTERNS, map(int, rng.multinomial(n, p / p.sum())),
                                  strict=True))
         for i, p in enumerate(prob)}, classifiers=["A", "B", "C"])


@functools.cache
def compared(seed: int, dependent: bool, draws: int = 1000):
    """az.compare of the independent and the A~B dependent model on one simulated table."""
    tab = simulate(seed, dependent)
    fits = {name: bcm.fit(bcm.models.hui_walter(tab, conditional_dependence=dep),
                          draws=draws, random_seed=seed)
            for name, dep in (("independent", False), ("dependent", [("A", "B")]))}
    with no_warnings():  # from ArviZ: Pareto k included
        comparison = az.compare(fits)
    return fits, comparison


@functools.cache
def small_fit(log_likelihood):
    """A short fit of a small table (200 cases): for the group's plumbing, not its values."""
    model = bcm.models.hui_walter(simulate(1, False, n=100))
    return bcm.fit(model, draws=100, tune=300, random_seed=1, log_likelihood=log_likelihood)


@functools.cache
def card_example():
    """The card's "Choosing the dependence structure" block, run as written: its
    table is ``simulate(0, dependent=True)``; returns the block's namespace."""
    section = CARD.read_text().split("## Choosing the dependence structure")[1].split("\n## ")[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, re.S)
    namespace: dict = {}
    with no_warnings():  # nor a convergence warning (a UserWarning) from the card's fits
        exec(compile(block, "hui_walter README comparison block", "exec"), namespace)
    return namespace


def brute_force_prob(se, sp, prev):
    """Pr_p(r) of the independence model, pattern by pattern (no bayescm code)."""
    out = np.empty((len(prev), len(PATTERNS)))
    for p, pi in enumerate(prev):
        for j, pattern in enumerate(PATTERNS):
            pos = np.prod([s if c == "+" else 1 - s for s, c in zip(se, pattern, strict=True)])
            neg = np.prod([1 - s if c == "+" else s for s, c in zip(sp, pattern, strict=True)])
            out[p, j] = pi * pos + (1 - pi) * neg
    return out


def log_multinomial_coefficient(counts):
    counts = np.asarray(counts)
    return gammaln(counts.sum() + 1) - gammaln(counts + 1).sum()


def test_card_table_is_the_simulated_dependent_table():
    tab = card_example()["tab"]
    np.testing.assert_array_equal(tab.counts, simulate(0, True).counts)


def test_hui_walter_pointwise_sums_to_multinomial_loglik():
    idata = card_example()["fits"]["independent"]
    ll = idata.log_likelihood["counts"]
    counts = idata.observed_data["counts"].transpose("population", "pattern").values
    assert ll.dims == ("chain", "draw", "case") and ll.sizes["case"] == counts.sum()
    # the coords name each case: the number of cases per (population, pattern) is the table
    for (p, pop), (j, pat) in itertools.product(enumerate(idata.posterior.population.values),
                                                enumerate(PATTERNS)):
        assert int(((ll.population == pop) & (ll.pattern == pat)).sum()) == counts[p, j]
    post = idata.posterior
    for chain, draw in [(0, 0), (1, 17), (3, 999)]:
        at = post.isel(chain=chain, draw=draw)
        prob = brute_force_prob(at["sensitivity"].values, at["specificity"].values,
                                at["prevalence"].values)
        expected = sum(stats.multinomial.logpmf(c, c.sum(), pr) - log_multinomial_coefficient(c)
                       for c, pr in zip(counts, prob, strict=True))
        got = float(ll.isel(chain=chain, draw=draw).sum())
        np.testing.assert_allclose(got, expected, rtol=1e-9)


def test_pattern_probabilities_recovered_from_covariances():
    """Draws without ``pattern_prob`` (JAGS's) give the same pointwise values: the
    covariances' positions within their bounds are recovered exactly."""
    idata = card_example()["fits"]["A~B dependent"]
    family = bcm.models.get_family("hui_walter")
    spec = bcm.models.spec_of(bcm.rebuild(idata))
    post = idata.posterior.drop_vars("pattern_prob").isel(draw=slice(0, 50))
    got = family.log_likelihood(post, idata.observed_data["counts"], spec)
    want = idata.log_likelihood["counts"].isel(draw=slice(0, 50))
    np.testing.assert_allclose(got.values, want.values, rtol=1e-10)


@pytest.mark.engine("jags")
def test_jags_twin_has_the_group():
    tab = card_example()["tab"]
    idata = jags.fit_twin(bcm.models.hui_walter(tab), chains=2, draws=1000, burn=500)
    ll = idata.log_likelihood["counts"]
    counts = idata.observed_data["counts"].transpose("population", "pattern").values
    assert ll.sizes["case"] == counts.sum()
    at = idata.posterior.isel(chain=1, draw=123)
    prob = brute_force_prob(at["sensitivity"].values, at["specificity"].values,
                            at["prevalence"].values)
    expected = sum(stats.multinomial.logpmf(c, c.sum(), pr) - log_multinomial_coefficient(c)
                   for c, pr in zip(counts, prob, strict=True))
    np.testing.assert_allclose(float(ll.isel(chain=1, draw=123).sum()), expected, rtol=1e-9)
    with no_warnings():
        assert az.loo(idata).n_data_points == counts.sum()


def test_loo_runs_without_warnings_and_sees_every_case():
    idata = card_example()["fits"]["A~B dependent"]
    with no_warnings():
        loo = az.loo(idata, pointwise=True)
    assert loo.n_data_points == int(idata.observed_data["counts"].sum())
    # 8 distinct values per site over 2,000 cases: every Pareto k is good
    assert float(loo.pareto_k.max()) < 0.7


def test_compare_prefers_dependence_when_the_data_have_it():
    comparison = card_example()["comparison"]
    assert comparison.index[0] == "A~B dependent"
    diff, dse = comparison.loc["independent", ["elpd_diff", "dse"]]
    # the criterion is "more than two SE"; the card says "about 20, dse about 6"
    assert diff > 2 * dse and 12 < diff < 30 and 3 < dse < 10


def test_compare_does_not_prefer_dependence_on_independent_data():
    _, comparison = compared(0, False, draws=500)
    # the simpler model ranks first, or the dependent model's edge is within 2 SE
    if comparison.index[0] == "dependent":
        diff, dse = comparison.loc["independent", ["elpd_diff", "dse"]]
        assert diff < 2 * dse
    else:
        assert comparison.index[0] == "independent"


@pytest.mark.parametrize("builder", ["three_beta", "dirichlet_multinomial"])
def test_labelled_pointwise_on_request(builder):
    cms = bcm.ConfusionMatrix.from_frame(
        pd.DataFrame({"tp": [26, 40], "fn": [3, 5], "fp": [2, 9],
                                        "tn": [16, 30]}, index=["a", "b"]))
    model = getattr(bcm.models, builder)(cms)
    plain = bcm.fit(model, sampler="exact", draws=1000, random_seed=1)
    assert "log_likelihood" not in plain.groups()
    idata = bcm.fit(model, sampler="exact", draws=1000, random_seed=1,
                  log_likelihood=True)
    ll = idata.log_likelihood["counts"]
    theta = idata.posterior["theta"].transpose("chain", "draw", "classifier", "cell")
    counts = idata.observed_data["counts"].transpose("classifier", "cell").values
    for chain, draw in [(0, 0), (2, 500)]:
        expected = sum(stats.multinomial.logpmf(c, c.sum(), th) - log_multinomial_coefficient(c)
                       for c, th in zip(counts, theta.values[chain, draw], strict=True))
        np.testing.assert_allclose(float(ll.isel(chain=chain, draw=draw).sum()), expected,
                                   rtol=1e-9)
    with no_warnings():
        assert az.loo(idata).n_data_points == counts.sum()


def test_multiclass_pointwise_on_request():
    mc = bcm.MulticlassConfusionMatrix([[20, 3, 1], [2, 15, 4], [0, 5, 30]])
    idata = bcm.fit(bcm.models.multiclass_cells(mc), sampler="exact", random_seed=1,
                    log_likelihood=True)
    ll = idata.log_likelihood["counts"]
    theta = idata.posterior["theta"].isel(chain=1, draw=3)
    counts = idata.observed_data["counts"]
    flat_theta = theta.transpose(*counts.dims).values.ravel()
    flat_counts = counts.values.ravel()
    expected = (stats.multinomial.logpmf(flat_counts, flat_counts.sum(), flat_theta)
                - log_multinomial_coefficient(flat_counts))
    np.testing.assert_allclose(float(ll.isel(chain=1, draw=3).sum()), expected, rtol=1e-9)


@pytest.mark.filterwarnings("ignore::bayescm.inference.convergence.ConvergenceWarning")
def test_large_group_is_left_out_with_a_notice(monkeypatch):
    monkeypatch.setattr(draws_mod, "LOG_LIKELIHOOD_MAX_VALUES", 1000)
    with pytest.warns(draws_mod.LogLikelihoodNotice, match="log_likelihood=True"):
        idata = small_fit(None)
    assert "log_likelihood" not in idata.groups()
    assert small_fit(True).log_likelihood["counts"].sizes["case"] == 200
    assert "log_likelihood" not in small_fit(False).groups()


def test_log_likelihood_argument_is_checked():
    cm = bcm.ConfusionMatrix(tp=5, fn=1, fp=2, tn=9)
    with pytest.raises(ValueError, match="None, True or False"):
        bcm.fit(bcm.models.three_beta(cm), sampler="exact", log_likelihood="yes")
    model = bcm.models.three_beta(cm)
    with model:
        pm.Normal("extra")
    with pytest.raises(ValueError, match=r"pm\.compute_log_likelihood"):
        bcm.fit(model, log_likelihood=True)


@pytest.mark.filterwarnings("ignore::bayescm.inference.convergence.ConvergenceWarning")
def test_saved_fit_keeps_the_group(tmp_path):
    idata = small_fit(True)
    back = bcm.load(bcm.save(idata, tmp_path / "fit.nc"))
    assert back.log_likelihood["counts"].pattern.values.tolist() == \
        idata.log_likelihood["counts"].pattern.values.tolist()
    np.testing.assert_array_equal(back.log_likelihood["counts"].values,
                                  idata.log_likelihood["counts"].values)
