"""The groups family: hierarchical logit-normal rates over slices (bcm.models.groups)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, special, stats

import bayescm as bcm
from bayescm.data.slices import slice_label
from bayescm.models.groups.design import RATES, spec_design


def sliced(counts, **levels):
    """A sliced matrix from counts (S, 4) and level columns."""
    frame = pd.DataFrame(levels)
    frame.index = pd.Index([slice_label(r) for r in frame.to_dict("records")],
                           name="slice")
    return bcm.ConfusionMatrix.from_slices(np.asarray(counts), frame)


def two_factor(rng, *, window=False):
    sex = np.repeat(["F", "M"], 3)
    site = np.tile(["a", "b", "c"], 2)
    counts = rng.integers(0, 30, size=(6, 4))
    counts[4] = 0  # an empty slice: kept, contributes nothing
    levels = {"sex": sex, "site": site}
    if window:
        counts = np.concatenate([counts, counts[::-1]])
        levels = {"sex": np.tile(sex, 2), "site": np.tile(site, 2),
                  "window": np.repeat(pd.to_datetime(["2024-01-01", "2024-01-08"]), 6)}
    return sliced(counts, **levels)


def test_structure_names_dims_coords_and_a_finite_density():
    cm = two_factor(np.random.default_rng(1), window=True)
    model = bcm.models.groups(cm, interactions=True)
    assert [v.name for v in model.free_RVs] == [
        "mu", "sigma_sex", "z_sex", "sigma_site", "z_site", "sigma_interaction",
        "z_interaction", "tau", "z_window"]
    dims = model.named_vars_to_dims
    assert dims["mu"] == ("rate",) and dims["z_site"] == ("rate", "site_level")
    assert dims["z_interaction"] == ("rate", "combination")
    assert dims["z_window"] == ("rate", "window_step") and dims["tpr"] == ("slice",)
    assert dims["theta"] == ("slice", "cell")
    assert list(model.coords["rate"]) == list(RATES)
    assert list(model.coords["site_level"]) == ["a", "b", "c"]
    assert list(model.coords["combination"])[:2] == ["sex=F|site=a", "sex=F|site=b"]
    assert len(model.coords["window_step"]) == 1
    assert set(bcm.priors.defaults("groups")) == {"mu", "sigma", "tau"}
    assert bcm.priors.defaults("groups")["mu"] == bcm.priors.Normal(0, 1.5)
    # no windows: no walk; factors chosen by name; errors say what to do
    plain = bcm.models.groups(two_factor(np.random.default_rng(2)), factors=["site"])
    assert [v.name for v in plain.free_RVs] == ["mu", "sigma_site", "z_site"]
    with pytest.raises(ValueError, match="not levels of the slices"):
        bcm.models.groups(cm, factors=["age"])
    with pytest.raises(ValueError, match="two or more factors"):
        bcm.models.groups(cm, factors=["sex"], interactions=True)
    with pytest.raises(bcm.priors.PriorError):
        bcm.models.groups(cm, priors={"sigma": bcm.priors.Beta(1, 1)})
    narrow = bcm.models.groups(cm, priors={"sigma": {"tpr": "halfnormal:0.5"}})
    assert bcm.models.spec_of(narrow).priors["sigma"][1] == bcm.priors.HalfNormal(0.5)


def _centred_blocks(cm, **options):
    spec = bcm.models.spec_of(bcm.models.groups(cm, **options))
    return {b.name: b.centred for b in spec_design(spec).blocks}


def test_auto_centres_a_factor_only_when_its_levels_are_pinned_and_differ():
    from bayescm.models.groups.design import PINNED, SPREAD

    rng = np.random.default_rng(4)
    site = np.repeat(["a", "b", "c", "d"], 2)
    sex = np.tile(["F", "M"], 4)

    def counts(n, logit_spread):
        eta = {r: m + logit_spread * rng.standard_normal(4)[np.repeat(np.arange(4), 2)]
               for r, m in (("phi", -0.5), ("tpr", 1.4), ("tnr", 2.0))}
        p = {r: 1 / (1 + np.exp(-e)) for r, e in eta.items()}
        pos = rng.binomial(n, p["phi"])
        tp, tn = rng.binomial(pos, p["tpr"]), rng.binomial(n - pos, p["tnr"])
        return np.stack([tp, pos - tp, n - pos - tn, tn], -1)

    # 20,000 cases per slice: standard errors of a level's log-odds ~0.02 << PINNED;
    # a spread of 0.8 on the logit is > SPREAD x 0.02 for site; sex has no effect
    # (rates equal across sex), so its moment spread is ~0 < SPREAD x error
    rich = sliced(counts(20_000, 0.8), site=site, sex=sex)
    assert _centred_blocks(rich) == {"site": True, "sex": False}
    assert _centred_blocks(rich, centered=False) == {"site": False, "sex": False}
    assert _centred_blocks(rich, centered=True) == {"site": True, "sex": True}
    # 30 cases per slice: ~10 positives per level, a log-odds error near 0.7 > PINNED
    assert _centred_blocks(sliced(counts(30, 0.8), site=site, sex=sex)) == {
        "site": False, "sex": False}
    assert PINNED < 0.7 and SPREAD * 0.02 < 0.8
    with pytest.raises(ValueError, match="centered must be"):
        bcm.models.groups(rich, centered="yes")


def test_large_slices_agree_with_independent_beta_posteriors():
    """With ~10^5 cases per slice the likelihood swamps the pooling: each slice's TPR
    posterior is its own Beta(1 + tp, 1 + fn) posterior up to O(1/n) prior effects."""
    rng = np.random.default_rng(3)
    n = 100_000
    tpr, tnr, phi = np.array([0.7, 0.8, 0.9]), np.array([0.95, 0.9, 0.85]), 0.3
    pos = rng.binomial(n, phi, 3)
    tp, tn = rng.binomial(pos, tpr), rng.binomial(n - pos, tnr)
    counts = np.stack([tp, pos - tp, n - pos - tn, tn], -1)
    cm = sliced(counts, site=["a", "b", "c"])
    import arviz as az

    from bayescm.inference.convergence import ConvergenceWarning

    with warnings.catch_warnings():
        # equal prevalences against 10^5 cases: that rate's scale has a funnel-shaped
        # posterior near 0, and NUTS leaves a few divergences in either parametrisation
        # (seeds 5-8: 9, 5, 2, 1 divergences of 4,000; iid effects 0, 8, 3, 2)
        warnings.simplefilter("ignore", ConvergenceWarning)
        idata = bcm.fit(bcm.models.groups(cm), draws=1000, random_seed=5, progressbar=False)
    assert idata.attrs["engine"] == "bayescm-kernel"
    assert int(idata.sample_stats["diverging"].sum()) <= 20  # at most 0.5 % of the draws
    assert float(az.rhat(idata, var_names=["tpr"])["tpr"].max()) < 1.01
    post = idata.posterior["tpr"].values.reshape(-1, 3)
    beta = stats.beta(1 + tp, 1 + pos - tp)
    # within one posterior sd: the Monte Carlo error of the mean (sd / sqrt(ESS) with
    # ESS >= 100) and the prior's pull (O(1/n) on the mean) are far below it
    assert np.all(np.abs(post.mean(0) - beta.mean()) < beta.std())
    assert np.allclose(post.std(0), beta.std(), rtol=0.25)


def test_one_slice_without_factors_is_one_logit_normal_evaluation():
    """One slice, no factors: logit TPR = mu_tpr ~ Normal(0, 1.5) and tp ~ Binomial(tp + fn,
    TPR).  The posterior mean and sd of TPR by quadrature over mu must match the draws."""
    cm = sliced([[9, 3, 2, 14]], site=["a"])
    idata = bcm.fit(bcm.models.groups(cm, factors=[]), draws=1000, random_seed=5,
                    progressbar=False)
    draws = idata.posterior["tpr"].values.ravel()

    def density(mu, power):
        p = special.expit(mu)
        return p**power * stats.norm(0, 1.5).pdf(mu) * stats.binom(12, p).pmf(9)

    z = integrate.quad(density, -12, 12, args=(0,))[0]
    mean = integrate.quad(density, -12, 12, args=(1,))[0] / z
    sd = np.sqrt(integrate.quad(density, -12, 12, args=(2,))[0] / z - mean**2)
    import arviz as az

    ess = float(az.ess(idata, var_names=["tpr"])["tpr"].min())
    # 4.5 Monte Carlo standard errors (sd / sqrt(ESS)) for the mean; the sd's MC
    # error is about sd / sqrt(2 ESS)
    assert abs(draws.mean() - mean) < 4.5 * sd / np.sqrt(ess)
    assert abs(draws.std() - sd) < 4.5 * sd / np.sqrt(2 * ess)


@pytest.mark.parametrize("centered", [False, True])
def test_kernel_is_the_pymc_model(centered):
    """The compiled density equals the PyMC model's log density and gradient at random
    points of PyMC's unconstrained coordinates (empty slice, interactions, walk, the
    sum-to-zero transform of either parametrisation), and both are finite at the
    initial point."""
    from tests.models.test_models import _kernel_logp, assert_kernel_is_model

    # the centred case differs only in the blocks: no walk, a smaller graph to compile
    cm = two_factor(np.random.default_rng(6), window=not centered)
    priors = {"mu": {"tnr": bcm.priors.Normal(1, 0.7)}, "sigma": "halfnormal:0.8"}
    m = bcm.models.groups(cm, interactions=True, priors=priors, centered=centered)
    kernel = bcm.models.family_of(m).kernel(m, bcm.models.spec_of(m))
    assert list(kernel.var_names) == [v.name for v in m.free_RVs]
    # sd 0.7: log-odds within about +-20, where PyMC's own float64 rates do not yet
    # round to 0 or 1 (beyond that its gradient, not the kernel's, degrades)
    assert_kernel_is_model(m, kernel, points=8, scale=0.7)
    point = m.initial_point()
    value, grad = _kernel_logp(kernel, np.concatenate([point[v.name].ravel()
                                                       for v in m.value_vars]))
    assert np.isfinite(value) and np.all(np.isfinite(grad))


@pytest.mark.slow  # 16 s; the default suite checks the kernel against the PyMC density
@pytest.mark.engine("jags")
def test_kernel_fit_agrees_with_jags():
    """The JAGS twin (the model written again in BUGS, Gibbs/slice sampling) and NUTS on
    the compiled density give the same posterior of the hyperparameters and rates:
    means and 5%/95% quantiles within 4.5 combined Monte Carlo standard errors."""
    import arviz as az

    cm = two_factor(np.random.default_rng(7), window=True)
    model = bcm.models.groups(cm)
    nuts = bcm.fit(model, draws=2000, random_seed=8, progressbar=False, strict=True)
    from bayescm.inference import jags

    twin = jags.fit_twin(model, draws=5000, burn=1000, seed=9)
    for var in ("mu", "sigma_sex", "sigma_site", "tau", "tpr", "prevalence"):
        a = nuts.posterior[var].values.reshape(*nuts.posterior[var].shape[:2], -1)
        b = twin.posterior[var].values.reshape(*twin.posterior[var].shape[:2], -1)
        for j in range(a.shape[-1]):
            x, y = a[..., j], b[..., j]
            se = np.hypot(az.mcse(x), az.mcse(y))
            assert abs(x.mean() - y.mean()) < 4.5 * se, (var, j)
            for q in (0.05, 0.95):
                se_q = np.hypot(az.mcse(x, method="quantile", prob=q),
                                az.mcse(y, method="quantile", prob=q))
                assert abs(np.quantile(x, q) - np.quantile(y, q)) < 4.5 * se_q, (var, j, q)


@pytest.mark.parametrize("centered", [False, True])
def test_prior_draws_are_zero_sum_normal(centered):
    """Prior draws of the level effects sum to zero per draw and level block, and an
    effect's marginal variance is E[sigma^2] (1 - 1/L) = s^2 (1 - 1/L) (ZeroSumNormal:
    the projection of iid N(0, sigma^2) onto the sum-zero plane), for both
    parametrisations; a level with one value has effect 0."""
    cm = two_factor(np.random.default_rng(4))
    priors = {"sigma": {"tpr": "halfnormal:0.5"}}
    m = bcm.models.groups(cm, interactions=True, priors=priors, centered=centered)
    family, spec = bcm.models.family_of(m), bcm.models.spec_of(m)
    n = 40_000
    draws = family.prior_draws(m, spec, (n,), np.random.default_rng(5))
    d = spec.extra["design"]
    for b in d.blocks:
        effect = d.effect(draws, b)  # (n, 3, L)
        assert np.abs(effect.sum(-1)).max() < 1e-12
        big_l = effect.shape[-1]
        for r, s in enumerate([1.0, 0.5, 1.0]):
            v = s**2 * (1 - 1 / big_l)
            # mean of n iid squares of sigma z, E = v; Var((sigma z)^2) = E sigma^4 E z^4 - v^2
            # = (3 s^4)(3 (1 - 1/L)^2) - v^2 = 8 v^2, so the MC sd is v sqrt(8 / n)
            mean_sq = (effect[:, r, :] ** 2).mean(0)
            assert np.all(np.abs(mean_sq - v) < 4.5 * v * np.sqrt(8 / n)), (b.name, r)
    one = bcm.models.groups(sliced([[5, 1, 2, 9], [4, 4, 1, 8]], site=["a", "a"],
                                   sex=["F", "M"]), factors=["site"], centered=centered)
    d1 = bcm.models.spec_of(one).extra["design"]
    e = d1.effect(bcm.models.family_of(one).prior_draws(
        one, bcm.models.spec_of(one), (10,), np.random.default_rng(0)), d1.blocks[0])
    assert e.shape == (10, 3, 1) and np.all(e == 0)


def test_centred_fit_sums_to_zero_and_agrees_with_the_non_centred():
    """Both parametrisations sample one posterior: the kernel's draws of every level
    effect sum to zero per draw (``effect_*`` and ``z_*`` completed from each other),
    and the slices' TPR means agree within 4.5 combined Monte Carlo errors."""
    import arviz as az

    # a few hundred cases per slice: neither form diverges (with a handful the centred
    # one has a funnel, see the model card)
    # and effects clearly away from 0 in every rate (a spread near 0 is a funnel too)
    rng = np.random.default_rng(11)
    sex, site = np.repeat([-0.5, 0.5], 3), np.tile([-0.8, 0.0, 0.8], 2)
    phi, tpr, tnr = special.expit([-0.5 + sex + site, 1.4 - sex + site, 2.0 + sex - site])
    n = rng.integers(300, 600, 6)
    pos = rng.binomial(n, phi)
    tp, tn = rng.binomial(pos, tpr), rng.binomial(n - pos, tnr)
    cm = sliced(np.stack([tp, pos - tp, n - pos - tn, tn], -1), sex=np.repeat(["F", "M"], 3),
                site=np.tile(["a", "b", "c"], 2))
    fits = [bcm.fit(bcm.models.groups(cm, centered=c), draws=1000, random_seed=3,
                    progressbar=False, predictive=False, prior=False) for c in (False, True)]
    for idata in fits:
        post = idata.posterior
        for name in ("effect_sex", "effect_site", "z_sex", "z_site"):
            assert float(np.abs(post[name].sum(post[name].dims[-1])).max()) < 1e-10
        effect = post["sigma_site"] * post["z_site"]
        np.testing.assert_allclose(effect, post["effect_site"], rtol=1e-9, atol=1e-12)
    a, b = (f.posterior["tpr"] for f in fits)
    se = np.hypot(az.mcse(a)["tpr"].values, az.mcse(b)["tpr"].values)
    assert np.all(np.abs(a.mean(("chain", "draw")).values - b.mean(("chain", "draw")).values)
                  < 4.5 * se)


def test_model_card_code_blocks_run():
    """Every python block of models/groups/README.md runs (its asserts check the stated
    shrinkage of a small slice), and the printed defaults are the registered ones."""
    import pathlib
    import re

    card = pathlib.Path(__file__).resolve().parents[3] / "models" / "groups" / "README.md"
    blocks = re.findall(r"```python\n(.*?)```", card.read_text(), flags=re.S)
    assert len(blocks) == 2
    assert repr(bcm.priors.defaults("groups")) in blocks[0]
    namespace: dict = {}
    for i, body in enumerate(blocks):
        exec(compile(body, f"groups card block {i + 1}", "exec"), namespace)


def test_save_load_rebuild_and_report_of_a_windowed_fit(tmp_path):
    """A fit with windows and per-rate priors saves with its content hash intact, loads,
    rebuilds the same model (options, priors) and reports its Normal/HalfNormal priors."""
    cm = two_factor(np.random.default_rng(9), window=True)
    priors = {"sigma": {"tpr": bcm.priors.HalfNormal(0.5)}}
    idata = bcm.fit(bcm.models.groups(cm, interactions=True, priors=priors), draws=1000,
                    random_seed=2, progressbar=False)
    assert idata.posterior["effect_window"].dims[-2:] == ("rate", "window_level")
    path = tmp_path / "groups.nc"
    bcm.save(idata, path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a changed content hash would warn
        back = bcm.load(path)
    model = bcm.rebuild(back)
    spec = bcm.models.spec_of(model)
    assert spec.options == {"factors": ["sex", "site"], "interactions": True,
                            "centered": "auto"}  # the user's choice, resolved again from the data
    assert _centred_blocks(cm, interactions=True) == {
        b.name: b.centred for b in spec_design(spec).blocks}
    assert spec.priors["sigma"] == [bcm.priors.HalfNormal(1), bcm.priors.HalfNormal(0.5),
                                    bcm.priors.HalfNormal(1)]
    assert "HalfNormal(0.5)" in bcm.report(idata).markdown()


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["pymc", "nutpie"])
def test_generic_engines_agree_with_the_kernel(engine):
    """The PyMC model sampled by pm.sample or by nutpie's own compilation gives the
    posterior of the compiled density: means within 4.5 combined Monte Carlo s.e."""
    import arviz as az

    cm = two_factor(np.random.default_rng(10))
    kernel = bcm.fit(bcm.models.groups(cm), draws=2000, random_seed=11, progressbar=False,
                     strict=True)
    other = bcm.fit(bcm.models.groups(cm), draws=2000, random_seed=12, progressbar=False,
                    engine=engine, strict=True)
    assert kernel.attrs["engine"] == "bayescm-kernel" and other.attrs["engine"] == engine
    for var in ("mu", "sigma_site", "tpr", "tnr"):
        a = kernel.posterior[var].values.reshape(*kernel.posterior[var].shape[:2], -1)
        b = other.posterior[var].values.reshape(*other.posterior[var].shape[:2], -1)
        for j in range(a.shape[-1]):
            se = np.hypot(az.mcse(a[..., j]), az.mcse(b[..., j]))
            assert abs(a[..., j].mean() - b[..., j].mean()) < 4.5 * se, (var, j)
