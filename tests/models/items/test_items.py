"""The items family: structure, compiled density, exact Beta case, NUTS, pairing, clusters."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, optimize, special, stats

import bayescm as bcm
from bayescm.analysis.items_simulate import simulate_items
from bayescm.inference import fit_closed_form
from bayescm.models.items.newset import new_set_accuracy
from bayescm.models.items.quadrature import accuracy_of, alpha_of
from tests.models.test_models import _kernel_logp, assert_kernel_is_model


def _results(n=30, acc=(0.6, 0.8), icc=0.0, runs=1, seed=1):
    df = simulate_items(n, list(acc), icc=icc, runs=runs, rng=seed)
    return bcm.ItemResults.from_frame(df, run="run", cluster="cluster" if icc else None)


def _one_model(k: int, n: int) -> bcm.ItemResults:
    return bcm.ItemResults.from_frame(pd.DataFrame(
        {"item": range(n), "model": "m", "correct": [1] * k + [0] * (n - k)}))


def test_builder_structure_and_finite_density():
    m = bcm.models.items(_results(icc=0.2, runs=2))
    assert [v.name for v in m.free_RVs] == ["location", "sigma_item", "sigma_cluster",
                                           "z_offset", "z_item", "z_cluster"]
    dims = m.named_vars_to_dims
    assert dims["accuracy"] == ("model",) and dims["alpha"] == ("model",)
    assert dims["z_item"] == ("item",) and dims["z_cluster"] == ("cluster",)
    point = m.initial_point()
    assert np.isfinite(m.compile_logp()(point))
    assert np.all(np.isfinite(m.compile_dlogp()(point)))
    many = bcm.models.items(_results(acc=[0.7] * 10, runs=3))
    assert "effect_item" in many.named_vars  # 30 scores per item: centred by default


@pytest.mark.parametrize("icc, runs, centered, names", [
    (0.0, 1, False, ["z_item"]),
    (0.2, 1, False, ["z_item", "z_cluster"]),
    (0.2, 3, True, ["effect_item", "effect_cluster"]),
    (0.2, 3, "auto", ["z_item", "effect_cluster"]),  # 6 scores an item, 30 a cluster
])
def test_kernel_equals_pymc_model(icc, runs, centered, names):
    m = bcm.models.items(_results(icc=icc, runs=runs), centered=centered,
                         priors={"accuracy": bcm.priors.Beta(2, 3)})
    assert [v.name for v in m.free_RVs][-len(names):] == names
    kernel = bcm.models.family_of(m).kernel(m, bcm.models.spec_of(m))
    assert_kernel_is_model(m, kernel, points=5, scale=1.0)


def _clustered(n_items, accs, size, icc, seed):
    df = simulate_items(n_items, accs, icc=icc, cluster_size=size, rng=seed)
    return bcm.ItemResults.from_frame(df, cluster="cluster")


FIVE = [0.7, 0.8, 0.85, 0.9, 0.95]  # five models, as many benchmarks compare


@pytest.mark.parametrize("design, ratio, centred", [
    ((450, FIVE, 22, 0.2, 101), 5.40, True),  # 107 scores a cluster
    ((450, FIVE, 22, 0.05, 101), 2.49, True),
    ((200, [0.65, 0.75, 0.8], 10, 0.05, 102), 1.20, False),  # 30 scores a cluster
    ((300, [0.6, 0.7], 5, 0.3, 102), 2.24, False),  # 10 scores a cluster: too few
])
def test_auto_centres_cluster_effects_only_where_the_data_pin_them(design, ratio, centred):
    """``centered="auto"``: cluster effects centred with at least 20 scores per cluster
    and a spread of at least twice the clusters' noise.  These are rows of the model
    card's experiment (``benchmarks/bench_items_cluster_centring.py``, whose statistic
    is printed to two decimals): centred cluster effects mixed better in the first two;
    the third left 1,000 divergences with them (a funnel); in the fourth the
    non-centred ones mixed better despite a spread of 2.2 x the noise."""
    from bayescm.models.items.centring import cluster_spread_over_noise

    res = _clustered(*design)
    assert cluster_spread_over_noise(res) == pytest.approx(ratio, abs=0.005)
    names = [v.name for v in bcm.models.items(res, marginal=False).free_RVs]
    assert names[-1] == ("effect_cluster" if centred else "z_cluster")
    assert names[-2] == "z_item"  # 5 or fewer scores an item: the items' own rule


@pytest.mark.slow
def test_centred_cluster_effects_converge_where_non_centred_ones_mix_slowly(monkeypatch):
    """Five models, 20 clusters of 22 items at ICC 0.3: at the default 4 x 1,000 draws
    the centred cluster effects (what ``auto`` picks) pass the convergence check, the
    non-centred ones mix more slowly (R-hat 1.039, bulk ESS 183 in the model card's
    run).  Seeded fits: the same numbers on every run of one machine."""
    import importlib

    res = _clustered(450, FIVE, 22, 0.3, 101)
    model = bcm.models.items(res)
    assert "effect_cluster" in [v.name for v in model.free_RVs]
    auto = bcm.fit(model, random_seed=1, predictive=False)
    check = bcm.check_convergence(auto)
    assert check.ok, check.message()
    centring = importlib.import_module("bayescm.models.items.centring")
    monkeypatch.setattr(centring, "CLUSTER_SPREAD", np.inf)  # forces the non-centred form
    with pytest.warns(bcm.ConvergenceWarning):
        slow = bcm.fit(bcm.models.items(res), random_seed=1, predictive=False)
    ess = [bcm.check_convergence(f).table["ess_bulk"].min() for f in (auto, slow)]
    assert ess[0] > 1.5 * ess[1], ess


@pytest.mark.parametrize("shift", [0.0, 20.0])
@pytest.mark.parametrize("equal", [True, False])
def test_kernel_tails_and_many_runs(shift, equal):
    """Five runs per item (equal: one product per block) or 1-6 trials varying by
    item and model (the general power in the block products); item effects pushed
    to +-20 leave blocks of a few cells: all equal PyMC's density and gradient, up to
    the constant."""
    res = _results(n=12, acc=(0.6, 0.8, 0.7), runs=5)
    if not equal:
        rng = np.random.default_rng(7)
        n = rng.integers(1, 7, (3, 12))
        df = pd.DataFrame({"item": np.tile(np.arange(12), 3),
                           "model": np.repeat(["a", "b", "c"], 12),
                           "correct": rng.binomial(n, 0.7).ravel(), "n": n.ravel()})
        res = bcm.ItemResults.from_frame(df, trials="n")
        assert np.all(np.ptp(res.trials_array, axis=1) > 0)
    m = bcm.models.items(res, centered=True)
    kernel = bcm.models.family_of(m).kernel(m, bcm.models.spec_of(m))
    logp, dlogp = m.compile_logp(), m.compile_dlogp()
    start = m.initial_point()  # compiles a function: once
    rng = np.random.default_rng(3)
    diffs = []
    for _ in range(3):
        point = {v.name: rng.normal(0, 1, size=start[v.name].shape)
                 for v in m.value_vars}
        item = point["effect_item_zerosum__"]
        point["effect_item_zerosum__"] = item + shift * (-1.0) ** np.arange(item.size)
        x = np.concatenate([point[v.name].ravel() for v in m.value_vars])
        lk, gk = _kernel_logp(kernel, x)
        assert np.isfinite(lk)
        diffs.append(logp(point) - lk)
        np.testing.assert_allclose(gk, dlogp(point), rtol=1e-9, atol=1e-9)
    # values reach ~1e4 at shift 300: 1e-8 relative to that is float rounding
    assert np.ptp(diffs) < 1e-8 * max(1.0, abs(lk))


def test_softplus_sums_blocked_and_stable_agree_with_numpy():
    """The likelihood's two paths -- block products of 1 + e^eta and one stable
    softplus per cell (far in the tails, where PyMC's own gradient saturates) --
    equal numpy's logaddexp and expit sums for every block size."""
    from bayescm.models.items.kernel import _softplus_rows_blocked, _softplus_rows_stable

    rng = np.random.default_rng(0)
    w = rng.normal(0, 8, 203)
    ns = rng.integers(0, 7, 2 * w.size).astype(float)
    for beta, row in ((1.3, 0), (-9.0, w.size)):
        n = ns[row:row + w.size]
        want_tm = float(np.sum(n * np.logaddexp(0.0, beta + w)))
        want_q = n * special.expit(beta + w)
        gi = np.zeros(w.size)
        ga, tm = _softplus_rows_stable(beta, w, ns, row, w.size, gi)
        np.testing.assert_allclose([ga, tm], [want_q.sum(), want_tm], rtol=1e-12)
        np.testing.assert_allclose(-gi, want_q, rtol=1e-12, atol=1e-300)
        # the kernel's rule: a block's product stays below e^700
        largest = int(700.0 / (ns.max() * (abs(beta) + np.abs(w).max() + 1.0)))
        for block in sorted({1, 2, largest}):
            gi = np.zeros(w.size)
            ga, tm = _softplus_rows_blocked(beta, np.exp(w), ns, row, w.size, gi, block)
            np.testing.assert_allclose([ga, tm], [want_q.sum(), want_tm], rtol=1e-12)
            np.testing.assert_allclose(-gi, want_q, rtol=1e-12, atol=1e-300)


def test_accuracy_prior_moments_fast_and_stable_agree():
    """The accuracy prior's quadrature moments from e^alpha e^(s z) (the usual path)
    equal the per-node stable logistic (far in the tails) and scipy's expit."""
    from bayescm.models.items.kernel import _logistic_moments, _logistic_moments_fast
    from bayescm.models.items.quadrature import NODES, WEIGHTS

    for am, s in ((-4.0, 0.5), (0.3, 2.0), (6.0, 9.0), (-25.0, 30.0)):
        p = special.expit(am + s * NODES)
        pq = WEIGHTS * p * (1 - p)
        want = [WEIGHTS @ p, WEIGHTS @ (1 - p), pq.sum(), pq @ (1 - 2 * p), pq @ NODES,
                (pq * (1 - 2 * p)) @ NODES]
        fast = _logistic_moments_fast(np.exp(am), np.exp(s * NODES), NODES, WEIGHTS,
                                      NODES.size)
        stable = _logistic_moments(am, s, NODES, WEIGHTS, NODES.size)
        # relative 1e-9 of each moment's scale (the sums of |terms|)
        scale = [WEIGHTS.sum(), WEIGHTS.sum(), pq.sum(), pq.sum(), pq @ np.abs(NODES),
                 pq @ np.abs(NODES)]
        np.testing.assert_allclose(fast, want, rtol=0, atol=1e-9 * max(scale))
        np.testing.assert_allclose(stable, want, rtol=0, atol=1e-9 * max(scale))
        np.testing.assert_allclose(fast[1], want[1], rtol=1e-9)  # E q stays relative


def test_quadrature_and_its_inverse():
    for a, s in [(-6.0, 0.3), (0.0, 2.0), (1.5, 6.0), (3.0, 15.0)]:
        quad = integrate.quad(lambda z, a=a, s=s: special.expit(a + s * z) * stats.norm.pdf(z),
                              -12, 12, points=[-a / s], limit=500, epsabs=1e-13)[0]
        got = float(accuracy_of(np.array(a), np.array(s)))
        assert abs(got - quad) < 1e-9 * min(quad, 1 - quad) + 1e-13
    acc = np.array([0.01, 0.3, 0.97])
    np.testing.assert_allclose(accuracy_of(alpha_of(acc, 2.5), 2.5), acc, atol=1e-9)


def test_priors_are_visible_and_validated():
    assert bcm.priors.defaults("items") == {
        "accuracy": bcm.priors.Beta(1, 1), "sigma_item": bcm.priors.HalfNormal(2),
        "sigma_cluster": bcm.priors.HalfNormal(2.5)}
    with pytest.raises(bcm.PriorError, match="no parameter"):
        bcm.models.items(_results(), priors={"acc": bcm.priors.Beta(1, 1)})
    with pytest.raises(ValueError, match="needs clusters"):
        bcm.models.items(_results(), priors={"sigma_cluster": bcm.priors.HalfNormal(1)})
    with pytest.raises(TypeError, match="ItemResults"):
        bcm.models.items(bcm.ConfusionMatrix(tp=1, fn=1, fp=1, tn=1))
    # a parameter of 0 makes the accuracy's density over (location, scales) infinite:
    # refused before anything is compiled, for one model (exact case too) and several
    for res in (_one_model(3, 5), _results()):
        for prior in (bcm.priors.Beta(0, 1), bcm.priors.Beta(0, 0)):
            with pytest.raises(bcm.PriorError, match=r"accuracy prior is improper .* Beta\(0"):
                bcm.models.items(res, priors={"accuracy": prior})


def test_exact_beta_for_one_model_on_independent_items():
    res = _one_model(28, 40)
    m = bcm.models.items(res, priors={"accuracy": "beta:2,1"})
    conj = bcm.models.family_of(m).conjugate(m, bcm.models.spec_of(m))
    a, b = conj.betas["accuracy"]
    assert (float(a[0]), float(b[0])) == (30.0, 13.0)
    idata = bcm.fit(m, sampler="exact", draws=20_000, chains=2, random_seed=1)
    acc = idata.posterior["accuracy"].values.ravel()
    # i.i.d. draws: the KS statistic of 40,000 draws exceeds 0.01 with prob < 1e-3
    assert stats.kstest(acc, stats.beta(30, 13).cdf).statistic < 0.01
    np.testing.assert_array_equal(idata.posterior["acc"].values, idata.posterior["accuracy"])
    new = idata.posterior["accuracy_new_set"].values.ravel()
    # Var of a new set's score: Var(acc) + E[acc (1 - acc)] / N (beta-binomial)
    want = stats.beta(30, 13).var() + np.mean(acc * (1 - acc)) / 40
    assert abs(new.var() / want - 1) < 0.05  # sd of a variance ratio at 40,000 draws: 0.01
    with pytest.raises(ValueError, match="closed form"):
        bcm.fit(bcm.models.items(_results()), sampler="exact", draws=10)


def test_summary_of_the_exact_case_is_the_beta_itself():
    """One model on independent items answered once: ``summary`` reads the closed form
    (as for a three-Beta fit), not the draws: no Monte Carlo error in any column, for
    the exact sampler's draws and for NUTS on the builder's model alike."""
    res = _one_model(28, 40)
    idata = bcm.fit(bcm.models.items(res, priors={"accuracy": "beta:2,1"}), sampler="exact",
                    draws=300, chains=2, random_seed=1)
    row = bcm.summary(idata, metrics=["accuracy"]).loc[("m", "acc")]
    post = stats.beta(30, 13)
    # the 95% HDI found independently: the shortest interval holding 95%
    best = optimize.minimize_scalar(lambda lo: post.ppf(post.cdf(lo) + 0.95) - lo,
                                    bounds=(0.0, post.ppf(0.05)), method="bounded",
                                    options={"xatol": 1e-12})
    lower, upper = best.x, post.ppf(post.cdf(best.x) + 0.95)
    assert bool(row["exact"]) and row["note"] == "exact: Beta(30, 13)"
    np.testing.assert_allclose([row["mean"], row["sd"], row["median"]],
                               [post.mean(), post.std(), post.median()], rtol=1e-12)
    np.testing.assert_allclose([row["hdi_lower"], row["hdi_upper"]], [lower, upper], atol=1e-7)
    assert row["mcse_mean"] == row["mcse_hdi_lower"] == row["mcse_hdi_upper"] == 0.0
    assert row["plug_in"] == 28 / 40  # the share correct
    family = bcm.models.get_family("items")
    closed = family.closed_form(res, {"accuracy": "beta:2,1"})
    np.testing.assert_array_equal(closed.observed, idata.observed_data["counts"])
    with pytest.raises(TypeError, match="unexpected keyword"):
        family.closed_form(res, None, {"centred": True})
    # the same draws from the closed form alone (no model built), with fit's default size
    alone = fit_closed_form(family, res, priors={"accuracy": "beta:2,1"},
                            random_seed=1)
    built = bcm.fit(bcm.models.items(res, priors={"accuracy": "beta:2,1"}), sampler="exact",
                    random_seed=1)
    np.testing.assert_array_equal(alone.posterior["accuracy"], built.posterior["accuracy"])
    with pytest.raises(ValueError, match="summary_exact summarises the metrics of confusion"):
        bcm.summary_exact(bcm.models.items(res))
    # NUTS on the builder's model (either route) samples the same posterior: the same rows
    for marginal in (False, True):
        nuts = bcm.fit(bcm.models.items(res, priors={"accuracy": "beta:2,1"},
                                        marginal=marginal), draws=500, chains=2,
                       random_seed=3, prior=False)
        again = bcm.summary(nuts, metrics=["accuracy"]).loc[("m", "acc")]
        assert again["exact"] and again["hdi_lower"] == row["hdi_lower"]
    # several models, clusters or runs: no closed form (summary reads the draws)
    assert family.closed_form(_results()) is None
    assert family.closed_form(_results(icc=0.2)) is None
    assert family.closed_form(_results(acc=(0.7,), runs=3)) is None


def test_nuts_matches_the_exact_beta():
    res = _one_model(28, 40)
    idata = bcm.fit(bcm.models.items(res), draws=1000, chains=2, random_seed=3,
                    prior=False)
    acc = idata.posterior["accuracy"]
    exact = stats.beta(29, 13)
    import arviz as az

    ess = float(az.ess(idata, var_names=["accuracy"])["accuracy"].min())
    # the posterior mean's MC error is sd / sqrt(ESS): allow 4 of them
    assert abs(float(acc.mean()) - exact.mean()) < 4 * exact.std() / np.sqrt(ess)
    assert abs(float(acc.std()) / exact.std() - 1) < 4 / np.sqrt(2 * ess)
    assert idata.attrs["engine"] == "bayescm-kernel"


def test_paired_by_construction():
    df = simulate_items(150, [0.7, 0.72], item_spread=3.0, interaction=0.3, rng=4)
    res = bcm.ItemResults.from_frame(df, run="run")
    joint = bcm.fit(bcm.models.items(res), draws=1000, chains=2, random_seed=1, prior=False)
    diff = bcm.analysis.compare_paired(joint, "model_0", "model_1", "acc")
    assert diff.design == "paired" and (diff.a, diff.b) == ("model_0", "model_1")
    # compare on two models of the one fit: the same joint draws, so the same answer
    same = bcm.analysis.compare((joint, "model_0"), (joint, "model_1"), "acc")
    assert same.design == "paired" and same.probability == diff.probability
    np.testing.assert_array_equal(same.difference.values.ravel(),
                                  diff.difference.values.ravel())
    # independent fits of each model: the exact Beta of each one's own scores
    k = res.successes_array.sum(axis=1)
    sd_independent = np.sqrt(sum(stats.beta(1 + kk, 1 + 150 - kk).var() for kk in k))
    # shared item difficulty: the two models' scores correlate 0.46 here, so the paired
    # sd is about sqrt(1 - 0.46) = 0.73 of the independent one (MC error of an sd at
    # ESS >= 400: 4%)
    ratio = float(diff.difference.std()) / sd_independent
    assert 0.6 < ratio < 0.85, ratio
    board = bcm.analysis.leaderboard(joint, "acc")
    assert set(board.summary.index) == {"model_0", "model_1"}
    table = bcm.summary(joint, metrics=["acc"])
    assert len(table) == 2


@pytest.mark.filterwarnings("ignore::bayescm.ConvergenceWarning")  # 200 draws suffice here
def test_summary_plug_in_is_the_mean_item_score():
    """``plug_in`` of an items fit: each model's mean item score, every item weighing the
    same whatever its runs (not the pooled share of all runs)."""
    runs = [1, 3] * 6
    # one-run items right (but b's first), three-run items right once in three
    rows = [{"item": i, "model": m, "run": r,
             "correct": int(r == 0 and not (m == "b" and i == 0))}
            for m in ("a", "b") for i, n in enumerate(runs) for r in range(n)]
    res = bcm.ItemResults.from_frame(pd.DataFrame(rows), run="run")
    fit = bcm.fit(bcm.models.items(res), draws=200, chains=2, random_seed=1, prior=False)
    table = bcm.summary(fit)
    for m in ("a", "b"):
        scores = pd.DataFrame([r for r in rows if r["model"] == m]).groupby("item")["correct"]
        assert table.loc[(m, "acc"), "plug_in"] == pytest.approx(scores.mean().mean(),
                                                                  rel=1e-12)
        assert scores.mean().mean() != pytest.approx(scores.sum().sum() / sum(runs))


def test_prior_draws_give_the_beta_prior_of_accuracy():
    m = bcm.models.items(_results(icc=0.2), priors={"accuracy": "beta:2,3"})
    fam, spec = bcm.models.family_of(m), bcm.models.spec_of(m)
    draws = fam.prior_draws(m, spec, (1, 4000), np.random.default_rng(0))
    import xarray as xr

    ds = xr.Dataset({k: (("chain", "draw", *(("model",) if v.ndim == 3 else ())), v)
                     for k, v in draws.items()})
    acc = fam.complete(ds, spec)["accuracy"].values.reshape(-1)
    assert stats.kstest(acc, stats.beta(2, 3).cdf).pvalue > 1e-3


def test_new_set_binned_path_agrees_with_exact():
    rng = np.random.default_rng(0)
    s_ = 300
    alpha = np.tile([0.5, 1.5], (s_, 1))
    sig = np.full(s_, 1.2)
    cluster = np.arange(2000) // 5
    runs = np.full(2000, 2)
    exact = new_set_accuracy(alpha, sig, sig * 0.5, cluster, runs, rng)
    from bayescm.models.items import newset

    binned = newset._binned(alpha, sig, sig * 0.5, cluster, runs, rng)
    # 300 draws each: means agree within 4 standard errors, sds within 25%
    se = np.sqrt(exact.var(0) / s_ + binned.var(0) / s_)
    assert np.all(np.abs(exact.mean(0) - binned.mean(0)) < 4 * se)
    np.testing.assert_allclose(binned.std(0) / exact.std(0), 1, atol=0.25)


def test_save_load_rebuild(tmp_path):
    res = _one_model(7, 10)
    idata = bcm.fit(bcm.models.items(res), sampler="exact", draws=200, random_seed=1)
    path = tmp_path / "items.nc"
    bcm.save(idata, path)
    back = bcm.load(path)
    m = bcm.rebuild(back)
    assert bcm.models.spec_of(m).data == res
    np.testing.assert_array_equal(back.posterior["accuracy"], idata.posterior["accuracy"])


@pytest.mark.slow
def test_clustered_interval_widens_by_the_design_effect():
    df = simulate_items(600, [0.7], icc=0.2, cluster_size=10, rng=11)
    clustered = bcm.ItemResults.from_frame(df, cluster="cluster")
    flat = bcm.ItemResults.from_frame(df.drop(columns="cluster"))
    fit_c = bcm.fit(bcm.models.items(clustered), draws=1000, chains=4, random_seed=1,
                    prior=False)
    table = bcm.analysis.benchmark_intervals(clustered, fit_c)
    k = int(flat.successes_array.sum())
    var_iid = stats.beta(1 + k, 1 + 600 - k).var()
    ratio = float(fit_c.posterior["accuracy"].var()) / var_iid
    deff = float(table["design_effect"].iloc[0])
    # MC error of a variance at ESS >= 1000: sqrt(2/1000) = 4.5%; the Kish deff rests on an
    # ANOVA estimate of the ICC from 60 clusters (sd about 0.05 at ICC 0.2: 0.45 in deff)
    assert abs(ratio / deff - 1) < 0.25, (ratio, deff)


def test_memory_bound_counts_no_predictive_group():
    """items keeps no replicated item-level scores, so fit's memory bound is the same
    with and without predictive=True (it used to count draws x models x items)."""
    from bayescm.inference import budget
    from bayescm.inference.draws import observed

    m = bcm.models.items(_results(n=400, acc=(0.6, 0.7, 0.8), runs=3))
    fam, spec = bcm.models.family_of(m), bcm.models.spec_of(m)
    sizes = [budget.check_fit(m, fam, spec, None, ["acc"], observed(m), draws=1000, tune=1000,
                              chains=4, sampler="nuts", predictive=flag, prior=False)
             for flag in (True, False)]
    assert sizes[0] == sizes[1]
