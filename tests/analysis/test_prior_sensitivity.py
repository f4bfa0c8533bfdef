"""``bcm.analysis.prior_sensitivity`` (issue 13 item 5): refits under alternative priors.

Checked against independent computations:

* conjugate families with exact draws: every alternative's posterior mean and sd equal
  the closed-form Beta (or Dirichlet margin) posterior of its priors, the priors
  themselves computed here by hand (a' = 1 + s (a - 1));
* Hui–Walter: the baseline's draws are a plain ``bcm.fit`` of the model with the same
  seed, the ``"flat"`` alternative's a plain fit of a model built with flat priors,
  both bit for bit; the shift of the informative classifier's sensitivity is
  recomputed from those plain fits and exceeds its Monte Carlo error many times;
* no refit compiles anything: the compiled kernel runs, and neither PyTensor (its
  ``FunctionMaker``, which every compiled function goes through), nutpie (its cache of
  compiled PyMC models) nor numba (``compile_extra``) is asked to compile during the
  analysis.

Monte Carlo tolerances: i.i.d. draws (exact sampler, N = chains x draws) give the mean
a standard error sd / sqrt(N) and the sd a standard error
sqrt((m4 - m2^2) / (4 N m2)) (delta method, central moments m2, m4 of the posterior,
from scipy); bounds are 5 standard errors (a false alarm has probability below 1e-6
per comparison).  MCMC shifts use each fit's bulk ESS instead of N.
"""

from __future__ import annotations

import functools
import math
import pathlib
import re
import warnings
from unittest import mock

import arviz as az
import matplotlib
import numba.core.compiler as numba_compiler
import numpy as np
import pandas as pd
import pytest
from hypothesis import strategies as st
from pytensor.compile.function.types import FunctionMaker
from scipy import stats

import bayescm as bcm
from bayescm import inference
from bayescm.inference import engines
from bayescm.inference.convergence import ConvergenceWarning
from bayescm.models.hui_walter.model import IdentifiabilityWarning
from bayescm.priors import Beta, Dirichlet, PriorError
from tests.test_properties import bad_prob, beta_param, bounded, cells, cm_of, prob, prop, rejects

matplotlib.use("Agg")

CARD = pathlib.Path(__file__).resolve().parents[2] / "models" / "hui_walter" / "README.md"
TAB = bcm.AgreementTable.from_counts({"site1": {"++": 89, "+-": 43, "-+": 55, "--": 413},
                                      "site2": {"++": 260, "+-": 76, "-+": 52, "--": 212}})
EXPERT = {"sensitivity": {"A": Beta(12, 8)}}  # A's sensitivity near 0.6, 20 pseudo-counts
HW = {"draws": 1000, "tune": 1000, "chains": 4, "random_seed": 3}
CMS = bcm.ConfusionMatrix(tp=[26, 31], fn=[0, 9], fp=[2, 13], tn=[6, 20],
                          classifier=["cocaine", "mid"])
# cells that update each rate: (successes, failures)
UPDATES = {"prevalence": (("tp", "fn"), ("fp", "tn")), "tpr": (("tp",), ("fn",)),
           "tnr": (("tn",), ("fp",))}


def beta_mean_sd_and_errors(a, b, n):
    """Posterior mean and sd of Beta(a, b) and their i.i.d. MC standard errors."""
    dist = stats.beta(a, b)
    m2 = dist.var()
    m4 = (dist.stats(moments="k") + 3) * m2**2
    return dist.mean(), dist.std(), np.sqrt(m2 / n), np.sqrt((m4 - m2**2) / (4 * n * m2))


# -- conjugate families: closed forms -----------------------------------------------------
@functools.cache
def three_beta_result():
    model = bcm.models.three_beta(CMS, priors={"tpr": Beta(20, 4), "tnr": {"mid": Beta(3, 2)},
                                               "prevalence": Beta(2, 5)})
    return bcm.analysis.prior_sensitivity(
        model, {"sceptic": {"tpr": Beta(4, 4)}, "flat": "flat"}, scale=(0.5, 0),
        sampler="exact", draws=1000, chains=4, random_seed=5)


def test_three_beta_alternatives_are_the_closed_form_posteriors():
    sens = three_beta_result()
    table, n = sens.table, 4000
    baseline = {"tpr": {"cocaine": (20, 4), "mid": (20, 4)},
                "tnr": {"cocaine": (1, 1), "mid": (3, 2)},
                "prevalence": {"cocaine": (2, 5), "mid": (2, 5)}}
    priors = {"baseline": baseline,
              "sceptic": {**baseline, "tpr": {"cocaine": (4, 4), "mid": (4, 4)}},
              "flat": {k: dict.fromkeys(v, (1, 1)) for k, v in baseline.items()}}
    for s in (0.5, 0):
        priors[f"scaled {s:g}"] = {k: {u: (1 + s * (a - 1), 1 + s * (b - 1))
                                       for u, (a, b) in v.items()} for k, v in baseline.items()}
    assert list(sens.alternatives.index) == list(priors)
    for alt, per in priors.items():
        for rate, units in per.items():
            succ, fail = UPDATES[rate]
            for unit, (a, b) in units.items():
                k = sum(int(CMS.cell(c)[CMS.classifiers.index(unit)]) for c in succ)
                f = sum(int(CMS.cell(c)[CMS.classifiers.index(unit)]) for c in fail)
                mean, sd, se_mean, se_sd = beta_mean_sd_and_errors(a + k, b + f, n)
                row = table.loc[(alt, rate, unit)]
                assert abs(row["mean"] - mean) < 5 * se_mean, (alt, rate, unit)
                assert abs(row["sd"] - sd) < 5 * se_sd, (alt, rate, unit)
                assert row["prior"] == repr(Beta(a, b))
    # the shift is the move of the mean in baseline sds, the width ratio of HDI widths
    base = table.loc["baseline"]
    sceptic = table.loc["sceptic"]
    np.testing.assert_allclose(sceptic["shift"], (sceptic["mean"] - base["mean"]) / base["sd"])
    np.testing.assert_allclose(
        sceptic["width_ratio"],
        (sceptic["hdi_upper"] - sceptic["hdi_lower"]) / (base["hdi_upper"] - base["hdi_lower"]))
    assert (base["shift"] == 0).all() and (base["width_ratio"] == 1).all()


def test_scale_zero_is_flat_and_exact_draws_need_no_mcmc_diagnostics():
    table = three_beta_result().table
    numbers = ["mean", "sd", "hdi_lower", "hdi_upper", "shift", "width_ratio", "prior"]
    # the same flat priors and the same seed: the same draws
    pd.testing.assert_frame_equal(table.loc["scaled 0", numbers], table.loc["flat", numbers])
    assert table["r_hat"].isna().all() and (table["ess_bulk"] == 4000).all()
    assert table["converged"].all() and (table["divergences"] == 0).all()
    assert "identifiability" not in table  # the family has no such verdict


def test_dirichlet_multinomial_scaled_toward_flat():
    cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    alpha = np.array([6.0, 2.0, 2.0, 4.0])
    model = bcm.models.dirichlet_multinomial(cm, priors={"theta": Dirichlet(tuple(alpha))})
    sens = bcm.analysis.prior_sensitivity(model, scale=(0.25,), sampler="exact", draws=1000,
                                          chains=2, random_seed=2)
    n, counts = 2000, np.array([26, 0, 2, 6])
    for alt, conc in (("baseline", alpha), ("scaled 0.25", 1 + 0.25 * (alpha - 1))):
        post = conc + counts
        for i, cell in enumerate(bcm.CELLS):  # each margin is Beta(a_i, a_0 - a_i)
            mean, sd, se_mean, se_sd = beta_mean_sd_and_errors(post[i], post.sum() - post[i], n)
            row = sens.table.loc[(alt, "theta", f"cm/{cell}")]
            assert abs(row["mean"] - mean) < 5 * se_mean and abs(row["sd"] - sd) < 5 * se_sd
            assert row["prior"] == repr(Dirichlet(tuple(conc)))


# -- Hui–Walter: plain fits, shifts, the compiled kernel ----------------------------------
@functools.cache
def hui_walter_result():
    """The analysis, and every compilation asked for while it ran."""
    model = bcm.models.hui_walter(TAB, priors=EXPERT)
    # a first fit in this process loads the kernel (compiled once, cached on disk)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # 50 draws: not the point
        bcm.fit(model, draws=50, tune=50, chains=1, random_seed=1)
    compiled: list[str] = []

    def spy(kind, original):
        def wrapper(*args, **kwargs):
            compiled.append(kind)
            return original(*args, **kwargs)
        return wrapper

    nutpie_models = len(engines._NUTPIE_CACHE)
    with mock.patch.object(FunctionMaker, "__init__", spy("pytensor", FunctionMaker.__init__)), \
            mock.patch.object(numba_compiler, "compile_extra",
                              spy("numba", numba_compiler.compile_extra)):
        sens = bcm.analysis.prior_sensitivity(model, "flat", scale=None, **HW)
    compiled += ["nutpie"] * (len(engines._NUTPIE_CACHE) - nutpie_models)
    return sens, compiled


def test_hui_walter_baseline_and_flat_rows_are_plain_fits():
    sens, _ = hui_walter_result()
    plain = {"baseline": bcm.fit(bcm.models.hui_walter(TAB, priors=EXPERT), **HW),
             "flat": bcm.fit(bcm.models.hui_walter(TAB), **HW)}
    hdi_prob = sens.hdi_prob
    for alt, idata in plain.items():
        for name in ("sensitivity", "specificity", "prevalence"):
            mine = sens.fits[alt].posterior[name]
            np.testing.assert_array_equal(mine.values, idata.posterior[name].values)
            dim = mine.dims[-1]
            for unit in mine[dim].values:
                draws = idata.posterior[name].sel({dim: unit}).values
                row = sens.table.loc[(alt, name, str(unit))]
                assert row["mean"] == draws.mean() and row["sd"] == draws.std(ddof=1)
                np.testing.assert_allclose([row["hdi_lower"], row["hdi_upper"]],
                                           az.hdi(draws.ravel(), hdi_prob=hdi_prob),
                                           rtol=1e-12)
    assert sens.table.loc[("baseline", "sensitivity", "A"), "prior"] == "Beta(12, 8)"
    assert sens.table.loc[("flat", "sensitivity", "A"), "prior"] == "Beta(1, 1)"


def test_flat_prior_moves_the_informed_sensitivity():
    sens, _ = hui_walter_result()
    base, flat = sens.table.loc[("baseline", "sensitivity", "A")], \
        sens.table.loc[("flat", "sensitivity", "A")]
    # MC error of the shift from each fit's bulk ESS (the two fits are independent runs)
    se = np.sqrt(base["sd"] ** 2 / base["ess_bulk"] + flat["sd"] ** 2 / flat["ess_bulk"])
    assert flat["shift"] > 5 * se / base["sd"]
    # Beta(12, 8) (mean 0.6) pulls the sensitivity down from where the data put it
    assert 0.6 < base["mean"] < flat["mean"]
    # the uninformed classifier's sensitivity barely moves in comparison
    assert abs(sens.table.loc[("flat", "sensitivity", "B"), "shift"]) < flat["shift"] / 3
    assert sens.table.loc[("baseline", "sensitivity", "A"), "r_hat"] < 1.05


def test_refits_reuse_the_compiled_kernel():
    sens, compiled = hui_walter_result()
    assert set(sens.alternatives["engine"]) == {"bayescm-kernel"}
    assert compiled == []
    for idata in sens.fits.values():
        assert idata.attrs["engine"] == "bayescm-kernel"
        # the lean fit: only what the analysis reads
        assert "posterior_predictive" not in idata.groups() and "prior" not in idata.groups()
    assert (sens.alternatives["seconds"] > 0).all()


def test_unidentified_alternatives_are_recorded_not_warned():
    tab = bcm.AgreementTable.from_counts({"++": 40, "+-": 3, "-+": 7, "--": 100})
    priors = {"sensitivity": Beta(20, 4), "specificity": Beta(20, 4)}
    with pytest.warns(IdentifiabilityWarning):  # the user's own model warns once, as built
        model = bcm.models.hui_walter(tab, priors=priors)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # 20 draws cannot reach the ESS of 100 per chain: every fit fails the check
        sens = bcm.analysis.prior_sensitivity(model, "flat", scale=0.9, draws=20, tune=100,
                                              chains=2, random_seed=1)
    kinds = [type(w.message) for w in caught]
    assert IdentifiabilityWarning not in kinds
    assert kinds.count(ConvergenceWarning) == 1
    alt = sens.alternatives
    assert alt["identifiability"].to_dict() == {"baseline": "priors", "flat": "none",
                                                "scaled 0.9": "priors"}
    assert "not identified" in alt.loc["flat", "identifiability_message"]
    assert not alt["converged"].any() and not sens.table["converged"].any()
    assert (sens.table.loc["flat", "identifiability"] == "none").all()
    assert "NOT converged: baseline, flat, scaled 0.9" in repr(sens)


# -- errors -------------------------------------------------------------------------------
@pytest.fixture
def no_sampling(monkeypatch):
    """Errors come before anything is sampled."""
    @functools.wraps(inference.fit)  # the same signature
    def refuse(*args, **kwargs):
        raise AssertionError("sampled before checking the arguments")

    monkeypatch.setattr(inference, "fit", refuse)


@pytest.mark.parametrize("alternatives, scale, error, match", [
    ({"x": {"sens": Beta(2, 1)}}, None, PriorError, r"names \['sens'\].*its priors are"),
    ({"x": {"tpr": {"nobody": Beta(2, 1)}}}, None, PriorError, r"\['nobody'\].*not in the data"),
    ({"x": {"tpr": "beta:-1,2"}}, None, PriorError, "finite number >= 0"),
    ([("x", {"tpr": Beta(2, 1)})], None, TypeError, "must map a name to priors"),
    ("flatt", None, TypeError, r"'flatt' is not one of \('flat', 'defaults'\)"),
    ({"x": 3}, None, TypeError, "Alternative 'x' must be a mapping"),
    ({"baseline": "flat"}, None, ValueError, r"\['baseline'\] are used twice"),
    (None, 1.5, ValueError, r"factors in \[0, 1\].*got 1.5"),
    (None, (0.5, -0.1), ValueError, r"got -0.1"),
    (None, True, ValueError, "got True"),
])
def test_bad_arguments_say_what_to_pass(no_sampling, alternatives, scale, error, match):
    model = bcm.models.three_beta(bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6))
    with pytest.raises(error, match=match):
        bcm.analysis.prior_sensitivity(model, alternatives, scale=scale, sampler="exact")


def test_bad_models_and_options(no_sampling):
    import pymc as pm

    model = bcm.models.three_beta(bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6))
    with pytest.raises(ValueError, match="does not take \\['sampler_name'\\]"):
        bcm.analysis.prior_sensitivity(model, sampler_name="exact")
    with pytest.raises(TypeError, match=r"from a bayescm\.models builder"):
        bcm.analysis.prior_sensitivity(pm.Model())
    with model:
        pm.Normal("extra")
    with pytest.raises(ValueError, match="variables its builder did not create"):
        bcm.analysis.prior_sensitivity(model)


def test_unknown_parameter_names_the_posterior_variables():
    model = bcm.models.three_beta(bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6))
    with pytest.raises(KeyError, match=r"\['tpx'\] are not in the posterior.*'tpr'"):
        bcm.analysis.prior_sensitivity(model, parameters=["tpr", "tpx"], sampler="exact",
                                       draws=50, chains=1)
    # metric keys are computed for the analysis
    sens = bcm.analysis.prior_sensitivity(model, parameters=["ppv"], sampler="exact",
                                          draws=50, chains=1, random_seed=1)
    assert list(sens.table.loc["baseline"].index) == [("ppv", "cm")]
    assert sens.table.loc[("baseline", "ppv", "cm"), "prior"] == ""


# -- the result object, the plot, the model card --------------------------------------------
def test_result_frame_repr_html_and_shifts():
    sens = three_beta_result()
    frame = sens.to_frame()
    assert frame.index.names == ["alternative", "parameter", "unit"]
    assert list(frame.columns[:7]) == ["mean", "sd", "hdi_lower", "hdi_upper", "shift",
                                       "width_ratio", "prior"]
    assert frame.attrs["random_seed"] == 5 and frame.attrs["family"] == "three_beta"
    assert list(sens.shifts.columns) == ["sceptic", "flat", "scaled 0.5", "scaled 0"]
    assert sens.shifts.loc[("tpr", "mid"), "sceptic"] == frame.loc[("sceptic", "tpr", "mid"),
                                                                   "shift"]
    text = repr(sens)
    assert text.startswith("PriorSensitivity(three_beta: baseline and 4 alternative(s)")
    assert "sceptic" in text and "object at 0x" not in text
    assert "<table" in sens._repr_html_()


def test_plot_has_one_row_per_parameter_unit():
    import matplotlib.pyplot as plt

    sens = three_beta_result()
    ax = sens.plot()
    rows = [f"{p}[{u}]" for p, u in sens.table.loc["baseline"].index]
    assert [t.get_text() for t in ax.get_yticklabels()] == rows and len(rows) == 6
    lines = ax.collections  # one LineCollection of HDIs per alternative
    assert [c.get_label() for c in lines] == list(sens.alternatives.index)
    hdi_flat = sens.table.loc[("flat", "tpr", "mid"), ["hdi_lower", "hdi_upper"]]
    segment = lines[2].get_segments()[rows.index("tpr[mid]")]  # flat is the third
    np.testing.assert_allclose(segment[:, 0], hdi_flat.to_numpy(dtype=float))
    _, given = plt.subplots()
    assert bcm.plots.prior_sensitivity(sens, ax=given) is given
    with pytest.raises(TypeError, match="PriorSensitivity"):
        bcm.plots.prior_sensitivity(sens.table)
    plt.close("all")


@functools.cache
def card_example():
    """The card's "Prior sensitivity" block, run as written; returns its namespace."""
    section = CARD.read_text().split("## Prior sensitivity")[1].split("\n## ")[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, re.S)
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning of any kind from the card's example
        exec(compile(block, "hui_walter README prior sensitivity block", "exec"), namespace)
    return namespace


def test_card_example_runs_and_says_what_it_shows():
    import matplotlib.pyplot as plt

    sens = card_example()["sens"]
    plt.close("all")
    shift = sens.table.loc["flat", "shift"]
    mean = sens.table.loc["flat", "mean"]
    # "A's sensitivity moves up by about 1.5 baseline sds (0.86 to 0.90)": MC error of a
    # shift is about 0.04 here (bulk ESS near 2,000 per fit)
    assert 1.2 < shift[("sensitivity", "A")] < 1.8
    assert round(sens.table.loc[("baseline", "sensitivity", "A"), "mean"], 2) == 0.86
    assert round(mean[("sensitivity", "A")], 2) == 0.90
    # "B's specificity and the prevalences by 0.5 to 0.9 sds" (downward)
    for row in (("specificity", "B"), ("prevalence", "site1"), ("prevalence", "site2")):
        assert -1.1 < shift[row] < -0.3
    assert list(sens.alternatives.index) == ["baseline", "flat", "scaled 0.5"]
    assert sens.alternatives["converged"].all()


# -- properties (hypothesis): valid inputs keep the invariants, invalid ones get our errors --
@prop(c=cells(), a=beta_param, b=beta_param, s=st.floats(0, 1), hdi_prob=prob,
      draws=st.integers(4, 200), chains=st.integers(1, 2), seed=st.integers(0, 2**31 - 1))
def test_any_valid_prior_and_factor_gives_a_consistent_table(c, a, b, s, hdi_prob, draws,
                                                             chains, seed):
    model = bcm.models.three_beta(cm_of(c), priors={"tpr": (a, b)})
    sens = bounded(bcm.analysis.prior_sensitivity, model, "flat", scale=s, sampler="exact",
                   draws=draws, chains=chains, hdi_prob=hdi_prob, random_seed=seed)
    table = sens.table
    assert list(sens.alternatives.index) == ["baseline", "flat", f"scaled {s:g}"]
    assert len(table) == 9 and np.isfinite(table[["mean", "sd", "hdi_lower"]]).all().all()
    assert ((table["hdi_lower"] >= 0) & (table["hdi_lower"] <= table["hdi_upper"])
            & (table["hdi_upper"] <= 1)).all()
    base = table.loc["baseline"]
    assert (base["shift"].fillna(0) == 0).all()
    assert table.loc[(f"scaled {s:g}", "tpr", "cm"), "prior"] == repr(
        Beta(1 + s * (a - 1), 1 + s * (b - 1)))
    assert table.loc[("flat", "tnr", "cm"), "prior"] == "Beta(1, 1)"


@prop(c=cells(), hdi_prob=bad_prob,
      scale=st.one_of(st.floats(allow_nan=True).filter(lambda x: not 0 <= x <= 1),
                      st.just(math.inf), st.text(max_size=3), st.booleans(),
                      st.just([0.5, "x"]), st.just({0.5: 1})),
      alternatives=st.one_of(st.integers(), st.just([1, 2]), st.just("nope"),
                             st.just({"x": 1.5}), st.just({"x": {"nope": (1, 1)}}),
                             st.just({"x": {"tpr": (-1, 1)}}), st.just({"x": {"tpr": "beta"}})))
def test_bad_arguments_get_our_errors(c, hdi_prob, scale, alternatives):
    model = bcm.models.three_beta(cm_of(c))
    rejects(bcm.analysis.prior_sensitivity, model, scale=scale, sampler="exact", draws=10)
    rejects(bcm.analysis.prior_sensitivity, model, alternatives, sampler="exact", draws=10)
    rejects(bcm.analysis.prior_sensitivity, model, hdi_prob=hdi_prob, sampler="exact",
            draws=10)
    rejects(bcm.analysis.prior_sensitivity, "not a model")
