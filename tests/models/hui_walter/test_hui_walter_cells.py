"""Hui–Walter on incomplete tables: missing results, verified cases, one classifier.

Independent references: scipy's multinomial log pmf on the complete patterns' probabilities
(today's likelihood), the conjugate Beta posteriors of fully labelled data, numerical
integration of the one-classifier posterior on a grid, and the JAGS twin.

Monte Carlo tolerances: a NUTS (or JAGS) posterior mean differs from the exact one by
about its ArviZ mcse; we allow 4 mcse (4 combined mcse, i.e. the root sum of squares,
between two engines), a two-sided false-alarm rate of 6e-5 per comparison.  Posterior
sds are compared the same way with ArviZ's mcse of the sd.
"""

import functools
import pathlib
import re
import warnings

import arviz as az
import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from scipy import integrate, stats

import bayescm as bcm
from bayescm.inference import jags
from bayescm.models import IdentifiabilityWarning, family_of, spec_of
from bayescm.models.hui_walter.model import _block_logp, _scaled, pattern_probabilities
from bayescm.priors import Beta

CARD = pathlib.Path(__file__).resolve().parents[3] / "models" / "hui_walter" / "README.md"
PARAMS = ("sensitivity", "specificity", "prevalence")


def quiet_model(tab, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdentifiabilityWarning)
        return bcm.models.hui_walter(tab, **kwargs)


def simulate_cases(se, sp, prev, n, seed, missing=0.0, verified=0.0):
    """Predictions of T classifiers on n cases per population (conditional independence),
    each result missing with probability ``missing`` and each case verified with
    probability ``verified``, all completely at random.  Returns (complete, incomplete)."""
    rng = np.random.default_rng(seed)
    preds, truth, pops = [], [], []
    for p, pi in enumerate(prev):
        d = rng.random(n) < pi
        rate = np.where(d[:, None], se, 1 - np.asarray(sp))
        preds.append((rng.random((n, len(se))) < rate).astype(float))
        truth.append(d.astype(float))
        pops += [f"p{p}"] * n
    preds, truth = np.concatenate(preds), np.concatenate(truth)
    full = bcm.AgreementTable.from_predictions(*preds.T, population=pops, positive=1)
    cut = np.where(rng.random(preds.shape) < missing, np.nan, preds)
    known = np.where(rng.random(truth.size) < verified, truth, np.nan)
    part = bcm.AgreementTable.from_predictions(*cut.T, population=pops, positive=1,
                                               y_true=known if verified else None)
    return full, part


def random_points(model, n, seed):
    rng = np.random.default_rng(seed)
    start = model.initial_point()  # once: each call compiles a function
    return [{v.name: rng.normal(0, 1.2, size=start[v.name].shape) for v in model.value_vars}
            for _ in range(n)]


def mcse_sd(x):
    """MC standard error of a sample sd (delta method: sd = sqrt(mean of (x - m)^2))."""
    return az.mcse((x - x.mean()) ** 2) / (2 * x.std())


def mcse_close(x, exact, what):
    """|mean(x) - exact| within 4 mcse (module docstring)."""
    assert abs(x.mean() - exact) < 4 * az.mcse(x), (what, float(x.mean()), exact)


# -- a. no missing results, no verified cases: today's likelihood -----------------------
def test_complete_table_keeps_todays_likelihood():
    """A complete table keeps pm.Multinomial; the block likelihood written for incomplete
    tables (the CustomDist's logp), on a complete design, equals scipy's multinomial log
    pmf of today's pattern probabilities and pm.Multinomial's value and gradient."""
    import pymc as pm

    counts = np.array([[89, 43, 55, 413], [260, 76, 52, 212]])
    tab = bcm.AgreementTable(counts, populations=["s1", "s2"])
    m = quiet_model(tab, conditional_dependence=True)
    assert isinstance(m["counts"].owner.op, type(pm.Multinomial.dist(n=3, p=[0.5, 0.5]).owner.op))
    p = pt.matrix("p")
    y = counts.astype(float)
    block = _block_logp(tab.design())(pt.as_tensor(y), p)
    multi = pm.logp(pm.Multinomial.dist(n=y.sum(1), p=p), y).sum()
    # one function, compiled fast (the values, not the speed, are under test)
    f = pytensor.function([p], [block, multi, pt.grad(block, p), pt.grad(multi, p)],
                          mode="FAST_COMPILE")
    rng = np.random.default_rng(1)
    for _ in range(10):
        se, sp = rng.uniform(0.5, 1, 2), rng.uniform(0.5, 1, 2)
        prev, u = rng.uniform(0, 1, 2), rng.uniform(0, 1, 1)
        prob, _, _ = pattern_probabilities(se, sp, prev, u, u, 2, [(0, 1)])
        b, mu, gb, gm = f(prob)
        old = sum(stats.multinomial.logpmf(c, c.sum(), q)
                  for c, q in zip(counts, prob, strict=True))
        np.testing.assert_allclose(b, old, rtol=1e-10)
        np.testing.assert_allclose(b, mu, rtol=1e-12)
        np.testing.assert_allclose(gb, gm, rtol=1e-12)


def test_zero_missing_cells_change_nothing():
    """Blocks with no cases contribute 0: logp (PyMC and kernel) and the posterior of a
    fit (same seed) are those of the complete table."""
    counts = {"++": 89, "+-": 43, "-+": 55, "--": 413}
    full = bcm.AgreementTable.from_counts(counts)
    padded = bcm.AgreementTable.from_counts({**counts, "+?": 0, "--|D+": 0})
    assert not padded.complete and len(padded.patterns) == 4 + 2 + 8
    priors = {"sensitivity": Beta(20, 4), "specificity": Beta(20, 4)}
    a, b = quiet_model(full, priors=priors), quiet_model(padded, priors=priors)
    la, lb = (m.compile_logp(mode="FAST_COMPILE") for m in (a, b))
    ka, kb = (family_of(m).kernel(m, spec_of(m)) for m in (a, b))
    for point in random_points(a, 10, 2):
        np.testing.assert_allclose(la(point), lb(point), rtol=1e-12)
        x = np.concatenate([point[v.name].ravel() for v in a.value_vars])
        ga, gb = np.zeros_like(x), np.zeros_like(x)
        assert ka.module.log_density(x, ka.user_data, ga) == kb.module.log_density(
            x, kb.user_data, gb)
        np.testing.assert_array_equal(ga, gb)
    # bit-identical density and gradient -> bit-identical NUTS trajectories
    fa = bcm.fit(a, draws=300, tune=300, chains=2, random_seed=4, prior=False)
    fb = bcm.fit(b, draws=300, tune=300, chains=2, random_seed=4, prior=False)
    for v in PARAMS:
        np.testing.assert_array_equal(fa.posterior[v].values, fb.posterior[v].values)


# -- b/f. the compiled kernel is the PyMC density on incomplete tables -------------------
INCOMPLETE = {
    "missing_verified": ({"p1": {"++": 40, "+-": 3, "-+": 7, "--": 100, "+?": 5, "?-": 8,
                                 "++|D+": 3, "-+|D+": 1, "--|D-": 4, "+?|D-": 2},
                          "p2": {"++": 60, "+-": 5, "-+": 9, "--": 50, "+?": 2, "?+": 4}},
                         {}),
    "missing_verified_dependent": ({"p1": {"++": 40, "+-": 3, "-+": 7, "--": 100, "?-": 8,
                                           "+-|D+": 2, "--|D-": 4, "?+|D+": 3},
                                    "p2": {"++": 60, "+-": 5, "-+": 9, "--": 50, "+?": 2}},
                                   dict(conditional_dependence=True)),
    "missing_dependent": ({"p1": {"+++": 30, "++-": 4, "+-+": 6, "+--": 3, "-++": 2, "-+-": 9,
                                  "--+": 11, "---": 80, "+?-": 6, "??+": 3, "-?+": 2},
                           "p2": {"+++": 70, "++-": 9, "+-+": 4, "+--": 2, "-++": 6,
                                  "-+-": 3, "--+": 8, "---": 40, "++?": 5, "+-+|D+": 2}},
                          dict(conditional_dependence=True,
                               priors={"specificity": Beta(5, 2)})),
    "one_classifier": ({"+": 90, "-": 10},
                       dict(priors={"sensitivity": Beta(20, 4), "specificity": Beta(20, 4)})),
    "one_classifier_verified": ({"a": {"+": 50, "-": 40, "?": 3, "+|D+": 9, "-|D+": 2,
                                       "-|D-": 7, "+|D-": 1},
                                 "b": {"+": 20, "-": 70}}, dict(priors={"prevalence": Beta(2, 2)})),
}


@pytest.mark.parametrize("name", [
    "missing_verified_dependent", "one_classifier_verified", "missing_dependent",
    pytest.param("missing_verified", marks=pytest.mark.slow),
    pytest.param("one_classifier", marks=pytest.mark.slow),
])
def test_kernel_is_the_pymc_density_on_cells(name):
    """Compiled density == PyMC logp up to a constant, same gradient, at random points
    (missing results, verified cases, T = 1, with and without dependence)."""
    counts, kwargs = INCOMPLETE[name]
    m = quiet_model(bcm.AgreementTable.from_counts(counts), **kwargs)
    k = family_of(m).kernel(m, spec_of(m))
    both = m.compile_fn([m.logp(), m.dlogp()], inputs=m.value_vars, mode="FAST_COMPILE")
    diffs = []
    for point in random_points(m, 15, 1):
        x = np.concatenate([point[v.name].ravel() for v in m.value_vars])
        assert x.size == k.n_dim
        grad = np.zeros_like(x)
        logp, dlogp = both(point)
        diffs.append(logp - k.module.log_density(x, k.user_data, grad))
        np.testing.assert_allclose(grad, dlogp, rtol=1e-9, atol=1e-9)
    assert np.ptp(diffs) < 1e-8


# -- c. every case verified: the labelled Beta posteriors --------------------------------
def test_all_verified_is_the_labelled_posterior():
    """T = 2, P = 1, every case verified: Se_t ~ Beta(a + TP_t, b + FN_t), Sp_t ~
    Beta(c + TN_t, d + FP_t), prevalence ~ Beta(e + n_pos, f + n_neg) (conditional
    independence makes the likelihood factor), as three_beta's exact posterior."""
    _, tab = simulate_cases([0.85, 0.75], [0.9, 0.8], [0.3], 400, seed=5, verified=1.0)
    assert tab.counts[0, :4].sum() == 0  # nothing unverified
    priors = {"sensitivity": Beta(2, 1), "specificity": Beta(3, 2), "prevalence": Beta(1, 1)}
    m = bcm.models.hui_walter(tab, priors=priors)  # identified by the data: no warning
    idata = bcm.fit(m, random_seed=6, prior=False)
    cells = dict(zip(tab.patterns, tab.counts[0].tolist(), strict=True))
    n_pos = sum(v for c, v in cells.items() if c.endswith("|D+"))
    n_neg = sum(v for c, v in cells.items() if c.endswith("|D-"))
    post = idata.posterior
    mcse_close(post["prevalence"].values[..., 0], stats.beta(1 + n_pos, 1 + n_neg).mean(),
               "prevalence")
    for t, name in enumerate(tab.classifiers):
        tp = sum(v for c, v in cells.items() if c.endswith("|D+") and c[t] == "+")
        tn = sum(v for c, v in cells.items() if c.endswith("|D-") and c[t] == "-")
        fn, fp = n_pos - tp, n_neg - tn
        se_post, sp_post = stats.beta(2 + tp, 1 + fn), stats.beta(3 + tn, 2 + fp)
        # the Se + Sp > 1 truncation removes P(Se + Sp < 1) of these posteriors' mass:
        # integrate f_Se(s) F_Sp(1 - s); far below the MC error, so it is ignored
        cut = integrate.quad(lambda s, a=se_post, b=sp_post: a.pdf(s) * b.cdf(1 - s), 0, 1)[0]
        assert cut < 1e-12
        for var, exact in (("sensitivity", se_post), ("specificity", sp_post)):
            x = post[var].sel(classifier=name).values
            mcse_close(x, exact.mean(), (var, name))
            assert abs(x.std() - exact.std()) < 4 * mcse_sd(x), (var, name)
        # three_beta on this classifier's confusion matrix, with the same priors
        cm = bcm.ConfusionMatrix(tp=tp, fn=fn, fp=fp, tn=tn)
        tb = bcm.fit(bcm.models.three_beta(cm, priors={"tpr": Beta(2, 1), "tnr": Beta(3, 2)}),
                     sampler="exact", random_seed=1, draws=20_000)
        # exact draws: their mcse is sd / sqrt(draws), negligible next to NUTS's
        for var, other in (("sensitivity", "tpr"), ("specificity", "tnr")):
            x = post[var].sel(classifier=name).values
            ref = float(tb.posterior[other].mean())
            assert abs(x.mean() - ref) < 4 * np.hypot(az.mcse(x), float(
                tb.posterior[other].std()) / np.sqrt(tb.posterior[other].size)), (var, name)


# -- d. one classifier (Evans's example) -----------------------------------------------
def evans_model():
    tab = bcm.AgreementTable.from_counts({"+": 90, "-": 10})
    return bcm.models.hui_walter(tab, priors={"sensitivity": Beta(20, 4),
                                              "specificity": Beta(20, 4)})


@functools.cache
def evans_exact():
    """Posterior means and sds of (Se, Sp, prev) by the midpoint rule on a 300^3 grid:
    Beta(20, 4) Beta(20, 4) 1{Se + Sp > 1} Beta(1, 1) x q^90 (1 - q)^10 with
    q = prev Se + (1 - prev)(1 - Sp).  Grid error is far below the MC error."""
    g = (np.arange(300) + 0.5) / 300
    log_prior = stats.beta(20, 4).logpdf(g)
    moments = np.zeros((3, 3))  # [Se, Sp, prev] x [mass, first, second]
    se, prev = np.meshgrid(g, g, indexing="ij")
    for j, sp in enumerate(g):
        q = prev * se + (1 - prev) * (1 - sp)
        logw = log_prior[:, None] + log_prior[j] + 90 * np.log(q) + 10 * np.log1p(-q)
        w = np.where(se + sp > 1, np.exp(logw + 30), 0.0)
        for i, x in enumerate((se, np.full_like(se, sp), prev)):
            moments[i] += (w.sum(), (w * x).sum(), (w * x * x).sum())
    mean = moments[:, 1] / moments[:, 0]
    return mean, np.sqrt(moments[:, 2] / moments[:, 0] - mean**2)


def test_one_classifier_evans_against_integration():
    with pytest.warns(IdentifiabilityWarning, match="prior updated by that one margin"):
        m = evans_model()
    idata = bcm.fit(m, random_seed=7, prior=False)
    mean, sd = evans_exact()
    for i, var in enumerate(PARAMS):
        x = idata.posterior[var].values[..., 0]
        mcse_close(x, mean[i], var)
        assert abs(x.std() - sd[i]) < 4 * mcse_sd(x), var
    with pytest.raises(ValueError, match="one"):
        bcm.models.hui_walter(bcm.AgreementTable.from_counts({"+": 9, "-": 1}),
                              conditional_dependence=True, identifiability="ignore")
    with pytest.warns(IdentifiabilityWarning, match="not identified|ridge"):
        bcm.models.hui_walter(bcm.AgreementTable.from_counts({"+": 9, "-": 1}))


@pytest.mark.engine("jags")
def test_one_classifier_jags_twin_agrees():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdentifiabilityWarning)
        m = evans_model()
    twin = jags.fit_twin(m, seed=3, log_likelihood=False)
    mean, _ = evans_exact()
    for i, var in enumerate(PARAMS):
        mcse_close(twin.posterior[var].values[..., 0], mean[i], ("jags", var))


# -- e. missing results at random ------------------------------------------------------
@functools.cache
def missing_fits():
    full, part = simulate_cases([0.9, 0.8, 0.85], [0.95, 0.9, 0.8], [0.25, 0.6], 400,
                                seed=8, missing=0.3)
    return (bcm.fit(bcm.models.hui_walter(full), random_seed=9, prior=False),
            bcm.fit(bcm.models.hui_walter(part), random_seed=9),
            bcm.models.hui_walter(part))


def test_missing_results_widen_the_posterior():
    """30 % of results removed completely at random: every Se and Sp has a larger
    posterior sd than with the complete data (the information lost is about 30 %, so sds
    grow by roughly 1/sqrt(0.7) ~ 1.2, far beyond the ~2 % MC error of an sd)."""
    complete, missing, _ = missing_fits()
    assert bcm.check_convergence(missing).ok
    for var in ("sensitivity", "specificity"):
        a = complete.posterior[var].std(("chain", "draw"))
        b = missing.posterior[var].std(("chain", "draw"))
        assert (b > 1.05 * a).all(), (var, a.values, b.values)


def test_missing_results_outputs():
    """Predictive tables keep each block's observed total; the pointwise log-likelihood
    sums to the cells' multinomial log-likelihood without coefficients."""
    _, idata, m = missing_fits()
    tab = spec_of(m).data
    design = tab.design()
    onehot = np.eye(len(design.blocks), dtype=int)[design.block]
    observed = tab.counts @ onehot
    for group in ("posterior_predictive", "prior_predictive"):
        rep = idata[group]["counts"].transpose("chain", "draw", "population", "pattern").values
        np.testing.assert_array_equal(rep @ onehot, np.broadcast_to(observed, rep.shape[:2]
                                                                    + observed.shape))
    ll = idata.log_likelihood["counts"]
    assert ll.sizes["case"] == tab.counts.sum()
    prob = idata.posterior["pattern_prob"].transpose("chain", "draw", "population",
                                                     "pattern").values
    np.testing.assert_allclose(ll.sum("case").values,
                               (tab.counts * np.log(prob)).sum((-1, -2)), rtol=1e-9)
    # the predictive check expects n_block * Pr(c) in each cell (rows of a block sum to
    # its cases), the chi-square discrepancy written out here
    expected = prob * (tab.counts @ onehot @ onehot.T)
    np.testing.assert_allclose(expected @ onehot, np.broadcast_to(observed, expected.shape[:2]
                                                                  + observed.shape))
    with np.errstate(divide="ignore", invalid="ignore"):
        chi2 = np.where(expected > 0, (tab.counts - expected) ** 2 / expected, 0).sum((-1, -2))
    check = bcm.posterior_predictive_check(idata)
    np.testing.assert_allclose(check.loc["all", "observed"], chi2.mean(), rtol=1e-9)
    # what a report says of the model names the cells' assumption
    assert "missing at random" in family_of(m).describe(spec_of(m))


def test_other_predictive_sizes_keep_block_shares():
    """fit(predictive_n=n): blocks keep the observed shares of each population's cases,
    rounded by largest remainders so that they add up to n."""
    totals = np.array([[70, 20, 10], [5, 0, 1]])
    np.testing.assert_array_equal(_scaled(totals, np.array([100, 6])), totals)
    scaled = _scaled(totals, np.array([33, 1000]))
    np.testing.assert_array_equal(scaled.sum(1), [33, 1000])
    exact = totals * (np.array([33, 1000]) / totals.sum(1))[:, None]
    assert (np.abs(scaled - exact) < 1).all()
    np.testing.assert_array_equal(scaled[1, 1], 0)


@pytest.mark.slow
def test_custom_dist_draws_keep_block_totals():
    """pm.sample_posterior_predictive on the model (the CustomDist's random) keeps the
    observed (population, block) totals too."""
    import pymc as pm

    _, idata, m = missing_fits()
    design = spec_of(m).data.design()
    onehot = np.eye(len(design.blocks), dtype=int)[design.block]
    observed = spec_of(m).data.counts @ onehot
    # PyMC notes that the Se + Sp > 1 potential is not re-applied: the draws here are the
    # posterior's own, so it is
    with m, warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The effect of Potentials")
        pp = pm.sample_posterior_predictive(idata.posterior.isel(draw=slice(0, 20)),
                                            progressbar=False, random_seed=1)
    rep = pp.posterior_predictive["counts"].values
    np.testing.assert_array_equal(rep @ onehot, np.broadcast_to(observed, rep.shape[:2]
                                                                + observed.shape))


@pytest.mark.engine("jags")
def test_missing_results_jags_twin_agrees():
    _, idata, m = missing_fits()
    twin = jags.fit_twin(m, seed=4, log_likelihood=False)
    for var in PARAMS:
        a = idata.posterior[var].values.reshape(*idata.posterior[var].shape[:2], -1)
        b = twin.posterior[var].values.reshape(*twin.posterior[var].shape[:2], -1)
        for j in range(a.shape[-1]):
            se = np.hypot(az.mcse(a[..., j]), az.mcse(b[..., j]))
            assert abs(a[..., j].mean() - b[..., j].mean()) < 4 * se, (var, j)


def test_identifiability_of_cells():
    """Jacobian rank replaces the count: T = 2, P = 1 with missing results only is still
    short of parameters; verified cases of both classes identify it."""
    counts = {"++": 40, "+-": 3, "-+": 7, "--": 100, "+?": 5, "?-": 8}
    with pytest.warns(IdentifiabilityWarning, match="rank") as record:
        bcm.models.hui_walter(bcm.AgreementTable.from_counts(counts))
    assert "3 locally identified directions" in str(record[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IdentifiabilityWarning)
        m = bcm.models.hui_walter(bcm.AgreementTable.from_counts(
            {**counts, "++|D+": 4, "-+|D+": 2, "--|D-": 9, "+-|D-": 1}))
    ident = spec_of(m).extra["identifiability"]
    assert (ident.status, ident.degrees_of_freedom, ident.parameters) == ("data", 5, 5)
    assert "verified cases" in ident.message


def test_save_load_rebuild_keeps_the_cells(tmp_path):
    _, idata, m = missing_fits()
    path = bcm.save(idata, tmp_path / "fit.nc")
    back = bcm.load(path)
    again = bcm.rebuild(back)
    assert spec_of(again).data == spec_of(m).data
    assert list(again.coords["pattern"]) == list(spec_of(m).data.patterns)
    assert back.observed_data["counts"].pattern.values.tolist() == list(again.coords["pattern"])
    # the same density: the rebuilt model's compiled kernel reads the same user data
    np.testing.assert_array_equal(family_of(again).kernel(again, spec_of(again)).user_data,
                                  family_of(m).kernel(m, spec_of(m)).user_data)


@pytest.mark.parametrize("title", ["Missing results and verified cases", "One classifier"])
def test_card_blocks_run(title):
    """The card's sections on incomplete tables: their python blocks run as written."""
    section = CARD.read_text().split(f"## {title}\n")[1].split("\n## ")[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, f"hui_walter README block ({title})", "exec"), {})
