"""One statistics core and one public API (issue 10, items 2 and 3).

* every HDI of draws is :func:`bayescm.stats.hdi`, every exact Beta HDI
  :func:`bayescm.stats.beta_hdi` (or ``beta_hdi_any``), and closed-form posterior
  draws come from :func:`bayescm.stats.draw_conjugate` in the old order;
* ``hdi_prob`` and ``priors={name: prior}`` everywhere, with ``level=`` and
  ``prior=`` as deprecated aliases giving identical results;
* every accepted form of a prior gives the identical model, posterior or interval;
* ``compare`` honours lower-is-better metrics;
* result objects have ``to_frame``, a readable repr and an HTML repr;
* public modules declare ``__all__``.
"""

from __future__ import annotations

import importlib
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

import bayescm as bcm
from bayescm import analysis, cli, curves, exact, intervals, priors
from bayescm import stats as core
from bayescm.cli import commands as cli_main
from bayescm.inference import posterior
from bayescm.priors import Beta, Dirichlet, Gamma, PriorError

A = bcm.ConfusionMatrix(tp=40, fn=7, fp=8, tn=15)
B = bcm.ConfusionMatrix(tp=31, fn=9, fp=13, tn=20)


class DuckPrior:
    """The shape of ``pymc_extras.prior.Prior``: a distribution name and parameters."""

    def __init__(self, distribution, **parameters):
        self.distribution = distribution
        self.parameters = parameters


def scores(seed=0, n=60):
    rng = np.random.default_rng(seed)
    y = np.repeat([1, 0], n)
    return rng.normal(y * 1.2, 1.0), y


# -- one statistics core ----------------------------------------------------------------


def test_the_public_hdi_names_are_the_core():
    sample_size = importlib.import_module("bayescm.analysis.sample_size")
    summary = importlib.import_module("bayescm.summary")
    assert summary.hdi is core.hdi
    assert analysis.beta_hdi is core.beta_hdi and sample_size.beta_hdi is core.beta_hdi


def test_every_hdi_of_draws_is_the_core_hdi():
    cms = bcm.ConfusionMatrix(tp=[40, 31, 12], fn=[7, 9, 3], fp=[8, 13, 2], tn=[15, 20, 30],
                              classifier=["a", "b", "c"])
    idata = bcm.fit(bcm.models.three_beta(cms), sampler="exact", random_seed=1, draws=500)
    draws = idata.posterior["f1"].transpose("classifier", "chain", "draw").values
    lo, hi = core.hdi(draws.reshape(3, -1), 0.9)
    table = bcm.summary(idata, metrics=["f1"], hdi_prob=0.9).xs("f1", level="metric")
    np.testing.assert_array_equal(table["hdi_lower"], lo)
    np.testing.assert_array_equal(table["hdi_upper"], hi)
    interval = intervals.metric_interval(idata, "f1", hdi_prob=0.9)
    np.testing.assert_array_equal(interval["lower"], lo)
    np.testing.assert_array_equal(interval["upper"], hi)
    mu = analysis.metric_uncertainty(idata, "f1", hdi_prob=0.9)
    np.testing.assert_array_equal(mu["mu"], hi - lo)
    board = analysis.leaderboard(idata, "f1", hdi_prob=0.9)
    np.testing.assert_array_equal(board.summary.loc[["a", "b", "c"], "hdi_lower"], lo)
    curve = curves.roc(*scores(), draws=400, random_seed=1)
    assert curve.auc_hdi == tuple(float(v) for v in core.hdi(curve.auc.values.ravel()))
    result = analysis.compare(A, B, "tpr", random_seed=1, draws=1000)
    assert result.hdi == tuple(float(v) for v in core.hdi(result.difference.values.ravel()))


def test_exact_beta_hdis_are_the_core_ones():
    # intervals' HDI (a J-shaped posterior included) and the curves' bands
    k, n = np.array([0, 3, 10]), 10
    lo, hi = intervals.binomial(k, n, method="bayes_hdi", priors={"rate": (0.5, 0.5)},
                                hdi_prob=0.8)
    ref = core.beta_hdi_any(k + 0.5, n - k + 0.5, hdi_prob=0.8)
    np.testing.assert_array_equal(lo, ref[0])
    np.testing.assert_array_equal(hi, ref[1])
    assert lo[0] == 0.0 and hi[0] == pytest.approx(stats.beta(0.5, 10.5).ppf(0.8), rel=1e-12)
    curve = curves.roc(*scores(), draws=200, random_seed=1)
    band = curve.band("tpr")
    ref = core.beta_hdi_any(1 + curve.tp, 1 + curve.fn, hdi_prob=0.95)
    np.testing.assert_array_equal(band[0], ref[0])
    np.testing.assert_array_equal(band[1], ref[1])
    # the old bisection's accuracy: equal densities at both ends, mass 0.95
    i = 30
    d = stats.beta(1 + curve.tp[i], 1 + curve.fn[i])
    assert d.cdf(band[1][i]) - d.cdf(band[0][i]) == pytest.approx(0.95, abs=1e-9)
    assert d.logpdf(band[0][i]) == pytest.approx(d.logpdf(band[1][i]), abs=1e-6)


def test_beta_hdi_any_shapes():
    lo, hi = core.beta_hdi_any([0.5, 3.0, 1.0, 0.5, 5.0], [10.5, 0.5, 1.0, 0.5, 7.0],
                               hdi_prob=0.9)
    assert (lo[0], lo[1], hi[1]) == (0.0, pytest.approx(stats.beta(3, 0.5).ppf(0.1)), 1.0)
    assert (lo[2], hi[2]) == (pytest.approx(0.05), pytest.approx(0.95))  # uniform: central
    u = stats.beta(0.5, 0.5)  # U-shaped: equal-tailed
    assert (lo[3], hi[3]) == (pytest.approx(u.ppf(0.05)), pytest.approx(u.ppf(0.95)))
    ref = core.beta_hdi(5.0, 7.0, hdi_prob=0.9)
    assert (lo[4], hi[4]) == (ref[0], ref[1])
    with pytest.raises(ValueError, match="a, b > 0"):
        core.beta_hdi_any(0, 1)


def test_closed_form_draws_keep_their_order():
    """theta_draws is draw_conjugate, and draw_conjugate is the old rng.beta sequence."""
    cm = bcm.ConfusionMatrix(tp=[26, 5], fn=[0, 3], fp=[2, 4], tn=[6, 9],
                             classifier=["x", "y"])
    theta = posterior.theta_draws(cm, 300, np.random.default_rng(7))
    rng = np.random.default_rng(7)
    tp, fn, fp, tn = (cm.cell(c).astype(float) for c in bcm.CELLS)
    phi = rng.beta(1 + tp + fn, 1 + fp + tn, size=(300, 2))  # the hand-written version
    tpr = rng.beta(1 + tp, 1 + fn, size=(300, 2))
    tnr = rng.beta(1 + tn, 1 + fp, size=(300, 2))
    old = np.stack(bcm.metrics.cells_from_rates(phi, tpr, tnr), -1)
    np.testing.assert_array_equal(theta.values[0], old)
    assert theta.dims == (*core.SAMPLE_DIMS, "classifier", "cell")
    # the paired comparison's Dirichlet draws: normalised Gammas, as rng.dirichlet
    rng1, rng2 = np.random.default_rng(3), np.random.default_rng(3)
    alpha = np.array([30.0, 5.0, 3.0, 12.0])
    got = core.draw_conjugate(rng1, (1000,), dirichlets={"psi": alpha})["psi"]
    np.testing.assert_allclose(got, rng2.dirichlet(alpha, size=1000), rtol=1e-13)


# -- hdi_prob and priors: the deprecated aliases -----------------------------------------


def _same_with_warning(old_call, new_call):
    with pytest.warns(DeprecationWarning, match="deprecated"):
        old = old_call()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        new = new_call()
    return old, new


def test_level_and_prior_aliases_warn_and_give_identical_results():
    old, new = _same_with_warning(
        lambda: intervals.binomial(7, 20, method="bayes_hdi", level=0.8, prior=(2, 3)),
        lambda: intervals.binomial(7, 20, method="bayes_hdi", hdi_prob=0.8,
                                   priors={"rate": Beta(2, 3)}))
    np.testing.assert_array_equal(old, new)
    old, new = _same_with_warning(
        lambda: intervals.coverage("bayes_hdi", 30, [0.2, 0.5], level=0.9, prior=(0.5, 0.5)),
        lambda: intervals.coverage("bayes_hdi", 30, [0.2, 0.5], hdi_prob=0.9,
                                   priors={"rate": (0.5, 0.5)}))
    pd.testing.assert_frame_equal(old, new)
    assert new.attrs["prior"] == (0.5, 0.5) and new.attrs["hdi_prob"] == 0.9
    old, new = _same_with_warning(
        lambda: intervals.coverage_composite("f1", n_pos=20, n_neg=20, tpr_grid=[0.8],
                                             n_sims=20, draws=50, level=0.9, random_seed=1),
        lambda: intervals.coverage_composite("f1", n_pos=20, n_neg=20, tpr_grid=[0.8],
                                             n_sims=20, draws=50, hdi_prob=0.9,
                                             random_seed=1))
    pd.testing.assert_frame_equal(old, new)
    idata = bcm.fit(bcm.models.three_beta(A), sampler="exact", random_seed=1, draws=300)
    old, new = _same_with_warning(lambda: intervals.metric_interval(idata, "tpr", level=0.8),
                                  lambda: intervals.metric_interval(idata, "tpr", hdi_prob=0.8))
    pd.testing.assert_frame_equal(old, new)
    s, y = scores()
    old, new = _same_with_warning(
        lambda: curves.roc(s, y, level=0.9, prior=(0.5, 0.5), draws=200, random_seed=1),
        lambda: curves.roc(s, y, hdi_prob=0.9, draws=200, random_seed=1,
                           priors={"tpr": (0.5, 0.5), "fpr": (0.5, 0.5)}))
    pd.testing.assert_frame_equal(old.to_frame(), new.to_frame())
    np.testing.assert_array_equal(old.auc.values, new.auc.values)
    with pytest.warns(DeprecationWarning):
        assert new.level == 0.9 and new.prior == (0.5, 0.5)
    old, new = _same_with_warning(
        lambda: curves.precision_recall(s, y, prior=(2, 2), draws=200, random_seed=1),
        lambda: curves.precision_recall(s, y, draws=200, random_seed=1,
                                        priors={"tpr": (2, 2), "ppv": (2, 2)}))
    pd.testing.assert_frame_equal(old.to_frame(), new.to_frame())
    old, new = _same_with_warning(
        lambda: exact.predictive_pmf(A, 10, 12, prior={"tpr": Beta(20, 4)}),
        lambda: exact.predictive_pmf(A, 10, 12, priors={"tpr": Beta(20, 4)}))
    np.testing.assert_array_equal(old.values, new.values)
    old, new = _same_with_warning(
        lambda: exact.metric_pmf(A, "mcc", 10, 12, prior={"tnr": (2, 2)}),
        lambda: exact.metric_pmf(A, "mcc", 10, 12, priors={"tnr": (2, 2)}))
    pd.testing.assert_frame_equal(old, new)
    with pytest.raises(TypeError, match="both hdi_prob= and its deprecated alias level="):
        intervals.binomial(1, 2, level=0.9, hdi_prob=0.9)


def test_per_rate_curve_priors():
    s, y = scores()
    curve = curves.roc(s, y, draws=200, random_seed=1, priors={"fpr": Beta(1, 9)})
    assert dict(curve.priors) == {"fpr": Beta(1, 9), "tpr": Beta(1, 1)}
    band = curve.band("fpr")
    ref = core.beta_hdi_any(1 + curve.fp, 9 + curve.tn)
    np.testing.assert_array_equal(band, ref)
    assert "Beta(1 + fp, 9 + tn)" in repr(curve)
    with pytest.raises(ValueError, match="different priors"), pytest.warns(DeprecationWarning):
        _ = curve.prior
    with pytest.raises(PriorError, match=r"unknown key\(s\) \['ppv'\]"):
        curves.roc(s, y, priors={"ppv": Beta(1, 1)})


# -- every form of a prior gives the same thing -----------------------------------------


def prior_forms(a=2.0, b=3.0):
    forms = {"spec": Beta(a, b), "string": f"beta:{a:g},{b:g}", "tuple": (a, b),
             "scipy": stats.beta(a, b), "scipy_loc0": stats.beta(a, b, loc=0, scale=1),
             "duck": DuckPrior("Beta", alpha=a, beta=b)}
    try:
        from pymc_extras.prior import Prior
    except ImportError:  # not a dependency: objects of its shape are read duck-typed
        pass
    else:
        forms["pymc_extras"] = Prior("Beta", alpha=a, beta=b)
    return forms


@pytest.mark.parametrize("form", list(prior_forms()))
def test_every_prior_form_gives_the_identical_posterior(form):
    value = prior_forms()[form]
    assert priors.coerce(value, kind="beta", name="tpr") == Beta(2, 3)
    ref = bcm.fit(bcm.models.three_beta(A, priors={"tpr": Beta(2, 3)}), sampler="exact",
                  random_seed=4, draws=200)
    got = bcm.fit(bcm.models.three_beta(A, priors={"tpr": value}), sampler="exact",
                  random_seed=4, draws=200)
    np.testing.assert_array_equal(got.posterior["tpr"].values, ref.posterior["tpr"].values)
    assert json.loads(got.attrs["priors"])["tpr"] == {"cm": "Beta(2, 3)"}
    # posterior mean of tpr: Beta(2 + 40, 3 + 7); 1,000 i.i.d. draws
    mean, sd = 42 / 52, stats.beta(42, 10).std()
    assert abs(float(got.posterior["tpr"].mean()) - mean) < 4 * sd / np.sqrt(got.posterior[
        "tpr"].size)
    np.testing.assert_array_equal(exact.predictive_pmf(A, 8, 9, priors={"tpr": value}).values,
                                  exact.predictive_pmf(A, 8, 9, priors={"tpr": Beta(2, 3)}))
    np.testing.assert_array_equal(
        intervals.binomial(4, 9, method="bayes_hdi", priors={"rate": value}),
        intervals.binomial(4, 9, method="bayes_hdi", priors={"rate": Beta(2, 3)}))
    s, y = scores()
    one = curves.roc(s, y, draws=100, random_seed=1, priors={"tpr": value})
    two = curves.roc(s, y, draws=100, random_seed=1, priors={"tpr": Beta(2, 3)})
    pd.testing.assert_frame_equal(one.to_frame(), two.to_frame())


def test_dirichlet_and_gamma_forms():
    forms = [Dirichlet((2, 1, 1, 3)), "dirichlet:2,1,1,3", (2, 1, 1, 3),
             DuckPrior("Dirichlet", a=[2, 1, 1, 3])]
    for value in forms:
        assert priors.coerce(value, kind="dirichlet", name="theta") == Dirichlet((2, 1, 1, 3))
    ref = bcm.fit(bcm.models.dirichlet_multinomial(A, priors={"theta": forms[0]}),
                  sampler="exact", random_seed=2, draws=500)
    got = bcm.fit(bcm.models.dirichlet_multinomial(A, priors={"theta": forms[3]}),
                  sampler="exact", random_seed=2, draws=500)
    np.testing.assert_array_equal(got.posterior["theta"].values, ref.posterior["theta"].values)
    g = Gamma(2, 0.5)
    assert (g.params, g.proper, repr(g)) == ((2.0, 0.5), True, "Gamma(2, 0.5)")
    assert not Gamma(0, 0).proper and g != Beta(2, 0.5) and hash(g) == hash(Gamma(2.0, 0.5))
    for value in (g, (2, 0.5), stats.gamma(2, scale=2.0), DuckPrior("Gamma", alpha=2, beta=0.5),
                  DuckPrior("Gamma", mu=4.0, sigma=np.sqrt(8.0))):
        got = priors.coerce(value, kind="gamma", name="kappa")
        assert type(got) is Gamma and got.params == pytest.approx(g.params, rel=1e-12)
    assert json.loads(priors.to_attrs({"kappa": [g]}, ["cm"])) == {"kappa": {"cm": "Gamma(2, 0.5)"}}
    with pytest.raises(PriorError, match=">= 0"):
        Gamma(-1, 1)


def test_pymc_style_mu_sigma_beta():
    b = priors.coerce(DuckPrior("Beta", mu=0.8, sigma=0.1), kind="beta", name="tpr")
    d = stats.beta(*b.params)
    assert (d.mean(), d.std()) == (pytest.approx(0.8), pytest.approx(0.1))


@pytest.mark.parametrize(("value", "kind", "match"), [
    (stats.beta(2, 3, loc=0.1), "beta", "loc=0.1"),
    (stats.beta(2, 3, scale=2), "beta", "scale=2"),
    (stats.norm(0, 1), "beta", "scipy's norm"),
    (DuckPrior("Normal", mu=0, sigma=1), "beta", r"Normal.*pass bayescm\.priors\.Beta"),
    (DuckPrior("Beta", alpha=DuckPrior("Gamma", alpha=1, beta=1), beta=2), "beta", "nested"),
    (Gamma(2, 1), "beta", "must be a Beta"),
    (Beta(2, 1), "gamma", "must be a Gamma"),
    ("dirichlet:1,1,1,1", "beta", "must be a Beta"),
    (object(), "beta", "pair \\(a, b\\)"),
    (stats.gamma(2, loc=1), "gamma", "loc=1"),
])
def test_invalid_priors_say_what_to_pass(value, kind, match):
    with pytest.raises(PriorError, match=match):
        priors.coerce(value, kind=kind, name="tpr")


def test_builders_reject_bad_priors_with_prior_error():
    with pytest.raises(PriorError, match=r"scipy\.stats\.beta"):
        bcm.models.three_beta(A, priors={"tpr": stats.beta(2, 3, loc=1)})
    with pytest.raises(PriorError, match="must be a Dirichlet"):
        bcm.models.dirichlet_multinomial(A, priors={"theta": Beta(1, 1)})
    with pytest.raises(PriorError, match="must be a dict"):
        exact.predictive_pmf(A, 3, 3, priors=Beta(1, 1))
    with pytest.raises(PriorError, match="must be proper"):
        intervals.binomial(1, 3, method="bayes_hdi", priors={"rate": Beta(0, 1)})


# -- lower-is-better metrics -------------------------------------------------------------


def test_compare_reports_better_in_the_metrics_direction():
    # err = 1 - acc draw by draw, so "A has the lower error" is "A has the higher accuracy"
    for margin in (0.0, 0.03):
        acc = analysis.compare(A, B, "acc", margin, draws=20_000, random_seed=5)
        err = analysis.compare(A, B, "err", margin, draws=20_000, random_seed=5)
        np.testing.assert_allclose(err.difference.values, -acc.difference.values, atol=1e-12)
        assert err.probability == pytest.approx(acc.probability, abs=1 / 20_000)
        assert not err.higher_is_better and acc.higher_is_better
        assert f"P(A - B < {-margin:g})" in repr(err) and "lower is better" in repr(err)
    # fpr against quadrature: P(fpr_A < fpr_B) = P(tnr_A > tnr_B), tnr ~ Beta(1 + tn, 1 + fp)
    ta, tb = stats.beta(16, 9), stats.beta(21, 14)
    exact_p = integrate.quad(lambda x: ta.pdf(x) * tb.cdf(x), 0, 1)[0]
    res = analysis.compare(A, B, "fpr", draws=40_000, random_seed=1)
    assert abs(res.probability - exact_p) < 4 * np.sqrt(exact_p * (1 - exact_p) / 40_000)
    assert res.to_frame().loc[0, "p_better"] == res.probability
    # lr_neg (lower is better) in the paired design: the same events as for ... itself
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    a = np.where(rng.random(300) < 0.1, 1 - y, y)
    b = np.where(rng.random(300) < 0.2, 1 - y, y)
    paired_acc = analysis.compare_paired(y, a, b, "acc", random_seed=1, draws=5000)
    paired_err = analysis.compare_paired(y, a, b, "err", random_seed=1, draws=5000)
    assert paired_err.probability == pytest.approx(paired_acc.probability, abs=1 / 5000)
    assert paired_err.probability > 0.99  # A makes half of B's errors
    lr = analysis.compare_paired(y, a, b, "lr_neg", random_seed=1, draws=5000)
    assert lr.probability == float(np.mean(lr.difference.values < 0))
    board = importlib.import_module("bayescm.analysis.leaderboard")
    assert board.LOWER_IS_BETTER is bcm.metrics.LOWER_IS_BETTER


# -- result objects ----------------------------------------------------------------------


def result_objects():
    cms = bcm.ConfusionMatrix(tp=[45, 40, 30], fn=[5, 10, 20], fp=[3, 4, 9], tn=[47, 46, 41],
                              classifier=["a", "b", "c"])
    tab = bcm.AgreementTable.from_counts({"p1": {"++": 40, "+-": 3, "-+": 7, "--": 100},
                                          "p2": {"++": 90, "+-": 8, "-+": 5, "--": 40}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hw = bcm.fit(bcm.models.hui_walter(tab), random_seed=1, draws=300)
    s, y = scores()
    return {
        "Comparison": analysis.compare(A, B, "mcc", random_seed=1, draws=2000),
        "Leaderboard": analysis.leaderboard(cms, "ba", prizes=[10, 5], draws=500,
                                            random_seed=1),
        "Curve": curves.roc(s, y, draws=200, random_seed=1),
        "SampleSizePlan": analysis.sample_size(0.2, n_grid=[20, 50, 100], random_seed=1),
        "PredictiveCheck": bcm.posterior_predictive_check(hw),
        "PriorSensitivity": analysis.prior_sensitivity(
            bcm.models.three_beta(A, priors={"tpr": (20, 4)}), sampler="exact", draws=200,
            random_seed=1),
    }


def test_every_result_object_has_to_frame_repr_and_html():
    for name, obj in result_objects().items():
        frame = obj.to_frame()
        assert type(frame) is pd.DataFrame and len(frame) > 0, name
        text = repr(obj)
        assert "object at 0x" not in text and len(text.splitlines()[0]) > 20, name
        assert "<table" in obj._repr_html_(), name
    objs = result_objects()
    board = objs["Leaderboard"].to_frame()
    assert list(board.columns[:5]) == ["mean", "hdi_lower", "hdi_upper", "p_best",
                                       "expected_rank"]
    np.testing.assert_allclose(board[["p_rank_1", "p_rank_2", "p_rank_3"]].sum(axis=1), 1.0)
    assert board.attrs["n_draws"] == 500 and board.attrs["higher_is_better"]
    plan = objs["SampleSizePlan"].to_frame()
    assert plan["reached"].tolist() == (plan["assurance"] >= 0.95).tolist()
    check = objs["PredictiveCheck"]
    assert isinstance(check, pd.DataFrame) and list(check.columns) == ["observed", "replicated",
                                                                       "p_value"]
    assert check.to_frame().attrs["statistic"] == "chi2" and "chi-square" in repr(check)


# -- modules, CLI ------------------------------------------------------------------------

PUBLIC = ["bayescm.summary", "bayescm.intervals", "bayescm.curves", "bayescm.exact",
          "bayescm.priors", "bayescm.inference.ppc", "bayescm.cli", "bayescm.metrics",
          "bayescm.stats",
          "bayescm.deprecation", "bayescm.analysis", "bayescm.analysis.compare",
          "bayescm.analysis.leaderboard", "bayescm.analysis.sample_size",
          "bayescm.analysis.uncertainty", "bayescm.analysis.prevalence",
          "bayescm.inference.posterior", "bayescm.analysis.prevalence_multiclass",
          "bayescm.analysis.sample_size.binary", "bayescm.analysis.sample_size.multiclass",
          "bayescm.priors.elicitation",
          "bayescm.analysis.sample_size.result", "bayescm.analysis.sensitivity",
          "bayescm.analysis.sensitivity_table"]


@pytest.mark.parametrize("name", PUBLIC)
def test_public_modules_declare_all(name):
    module = importlib.import_module(name)
    assert module.__all__ and all(hasattr(module, n) for n in module.__all__)


def test_cli_draws_are_per_chain(capsys):
    argv = ["summarize", "--tp", "26", "--fn", "0", "--fp", "2", "--tn", "6", "--json",
            "--metrics", "tpr", "--draws", "300", "--chains", "2", "--seed", "1"]
    assert cli.main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["draws"], out["chains"]) == (300, 2)
    helptext = cli_main._build_parser()._subparsers._group_actions[0].choices["summarize"]
    assert "per chain" in helptext.format_help()
