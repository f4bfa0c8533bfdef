"""Exact posterior predictive pmfs of confusion matrices and metrics (Lovell et al., §6-8).

Closed forms are checked against scipy and exact rational arithmetic; the pmfs against
i.i.d. predictive draws of ``bcm.fit(..., sampler="exact")`` by chi-square
goodness-of-fit tests (cells with expected count < 5 pooled; each test at alpha = 1e-3,
seeded, so the outcome is reproducible).
"""

from __future__ import annotations

import functools
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from scipy import stats

import bayescm as bcm
from bayescm.exact.pmf import metric_pmf, predictive_pmf
from bayescm.priors import Beta, PriorError
from tests.conftest import MATRICES

MODELS = ("beta_binomial", "binomial")
SIZES = [(26, 8), (20, 40), (15, 0), (0, 7), (100, 300)]


def _rate_params(c, prior=(1.0, 1.0)):
    return {"tpr": (prior[0] + c["tp"], prior[1] + c["fn"]),
            "tnr": (prior[0] + c["tn"], prior[1] + c["fp"])}


# -- predictive_pmf ---------------------------------------------------------------------
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize(("n_pos", "n_neg"), SIZES)
def test_pmf_sums_to_one(batch, model, n_pos, n_neg):
    pmf = predictive_pmf(batch, n_pos, n_neg, model=model)
    assert pmf.dims == ("classifier", "tp", "tn")
    assert pmf.shape == (len(batch), n_pos + 1, n_neg + 1)
    np.testing.assert_array_equal(pmf["tp"], np.arange(n_pos + 1))
    np.testing.assert_array_equal(pmf["tn"], np.arange(n_neg + 1))
    assert list(pmf["classifier"].values) == list(MATRICES)
    assert (pmf >= 0).all()
    np.testing.assert_allclose(pmf.sum(("tp", "tn")), 1.0, rtol=0, atol=1e-12)
    assert pmf.attrs["model"] == model
    assert (pmf.attrs["n_pos"], pmf.attrs["n_neg"]) == (n_pos, n_neg)
    assert "future test set" in pmf.attrs["description"]


def test_single_matrix_keeps_the_classifier_dim(cocaine):
    pmf = predictive_pmf(cocaine, 26, 8)
    assert pmf.sizes["classifier"] == 1
    assert pmf["classifier"].item() == "cm"


@pytest.mark.parametrize(("n_pos", "n_neg"), [(26, 8), (100, 300), (999, 999)])
def test_marginals_are_scipy_beta_binomials(batch, n_pos, n_neg):
    """scipy's betabinom.pmf itself is accurate to about 1e-11 relative at these sizes."""
    pmf = predictive_pmf(batch, n_pos, n_neg)
    for name, c in MATRICES.items():
        rates = _rate_params(c)
        one = pmf.sel(classifier=name)
        np.testing.assert_allclose(
            one.sum("tn"), stats.betabinom.pmf(np.arange(n_pos + 1), n_pos, *rates["tpr"]),
            rtol=1e-9, atol=1e-300)
        np.testing.assert_allclose(
            one.sum("tp"), stats.betabinom.pmf(np.arange(n_neg + 1), n_neg, *rates["tnr"]),
            rtol=1e-9, atol=1e-300)
        # independence: the joint is the outer product of its marginals
        np.testing.assert_allclose(one, np.outer(one.sum("tn"), one.sum("tp")),
                                   rtol=1e-12, atol=1e-300)


def test_binomial_marginals_are_scipy_binomials(batch):
    pmf = predictive_pmf(batch, 40, 60, model="binomial")
    for name, c in MATRICES.items():
        one = pmf.sel(classifier=name)
        np.testing.assert_allclose(
            one.sum("tn"), stats.binom.pmf(np.arange(41), 40, c["tp"] / (c["tp"] + c["fn"])),
            rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(
            one.sum("tp"), stats.binom.pmf(np.arange(61), 60, c["tn"] / (c["tn"] + c["fp"])),
            rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize(("n", "a", "b"), [(60, 301, 6), (60, 2, 50), (200, 27, 1), (97, 1, 1)])
def test_beta_binomial_masses_match_exact_arithmetic(n, a, b):
    """Every mass to 1e-12 relative against Fractions (integer posterior parameters)."""
    cm = bcm.ConfusionMatrix(tp=a - 1, fn=b - 1, fp=3, tn=5)
    got = predictive_pmf(cm, n, 0).sel(classifier="cm", tn=0).values

    def beta_fn(x, y):  # B(x, y) for whole x, y
        return Fraction(1, x + y - 1) / comb(x + y - 2, x - 1)

    exact = np.array([float(comb(n, k) * beta_fn(k + a, n - k + b) / beta_fn(a, b))
                      for k in range(n + 1)])
    keep = exact > 1e-290
    np.testing.assert_allclose(got[keep], exact[keep], rtol=1e-12)


def test_plug_in_puts_all_mass_at_n_pos_when_fn_is_zero(cocaine):
    """Lovell et al.'s cocaine example (tp=26, fn=0, fp=2, tn=6)."""
    plug = predictive_pmf(cocaine, 26, 8, model="binomial").sel(classifier="cm")
    assert float(plug.sel(tp=26).sum()) == 1.0
    assert float(plug.sel(tp=slice(0, 25)).sum()) == 0.0
    np.testing.assert_allclose(plug.sum("tp"), stats.binom.pmf(np.arange(9), 8, 0.75),
                               rtol=1e-12)
    bayes = predictive_pmf(cocaine, 26, 8).sel(classifier="cm")
    # BetaBin(n; n, 27, 1) = 27 / (27 + n): the beta-binomial spreads the rest over TP' < 26
    assert float(bayes.sel(tp=26).sum()) == pytest.approx(27 / 53, rel=1e-12)
    # and it is wider for TN' too (Lovell et al., Fig. 4)
    k = np.arange(9)

    def variance(p):
        return p @ k**2 - (p @ k) ** 2

    assert variance(bayes.sum("tp").values) > 1.5 * variance(plug.sum("tp").values)


def test_priors_are_honoured_and_recorded(cocaine):
    n = 30
    for spec in (Beta(20, 4), "beta:20,4", (20, 4)):
        pmf = predictive_pmf(cocaine, n, 10, priors={"tpr": spec})
        np.testing.assert_allclose(
            pmf.sel(classifier="cm").sum("tn"),
            stats.betabinom.pmf(np.arange(n + 1), n, 20 + 26, 4 + 0), rtol=1e-9)
        np.testing.assert_allclose(
            pmf.sel(classifier="cm").sum("tp"),
            stats.betabinom.pmf(np.arange(11), 10, 1 + 6, 1 + 2), rtol=1e-9)
        assert "Beta(20, 4)" in pmf.attrs["priors"]
    default = predictive_pmf(cocaine, n, 10)
    assert "Beta(1, 1)" in default.attrs["priors"]


def test_per_classifier_priors(batch):
    pmf = predictive_pmf(batch, 12, 9, priors={"tnr": {"rare": Beta(0.5, 0.5)}})
    c = MATRICES["rare"]
    np.testing.assert_allclose(
        pmf.sel(classifier="rare").sum("tp"),
        stats.betabinom.pmf(np.arange(10), 9, 0.5 + c["tn"], 0.5 + c["fp"]), rtol=1e-9)
    c = MATRICES["mid"]  # untouched: default Beta(1, 1)
    np.testing.assert_allclose(
        pmf.sel(classifier="mid").sum("tp"),
        stats.betabinom.pmf(np.arange(10), 9, 1 + c["tn"], 1 + c["fp"]), rtol=1e-9)


def test_an_empty_future_class_is_certain(cocaine):
    for model in MODELS:
        pmf = predictive_pmf(cocaine, 0, 7, model=model)
        assert pmf.sizes["tp"] == 1
        np.testing.assert_allclose(pmf.sum(), 1.0, atol=1e-15)


def test_whole_floats_are_accepted_as_class_sizes(cocaine):
    assert predictive_pmf(cocaine, 20.0, np.int64(4)).shape == (1, 21, 5)


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        ((-1, 5), {}, ValueError, "n_pos is -1"),
        ((5, -2), {}, ValueError, "n_neg is -2"),
        ((2.5, 5), {}, ValueError, "whole number"),
        (("10", 5), {}, ValueError, "whole number"),
        ((True, 5), {}, ValueError, "whole number"),
        ((0, 0), {}, ValueError, "both 0"),
        ((5, 5), {"model": "poisson"}, ValueError, "model must be one of"),
        ((5, 5), {"model": "binomial", "priors": {"tpr": Beta(1, 1)}}, ValueError,
         "uses no prior"),
        ((5, 5), {"priors": {"prevalence": Beta(1, 1)}}, PriorError, "prevalence plays no role"),
        ((5, 5), {"priors": {"tpR": Beta(1, 1)}}, PriorError, "unknown key"),
        ((5, 5), {"priors": "beta:1,1"}, PriorError, "must be a dict"),
        ((5, 5), {"priors": {"tpr": "dirichlet:1,1,1,1"}}, PriorError, "must be a Beta"),
    ],
)
def test_bad_arguments_say_what_to_do(cocaine, args, kwargs, error, match):
    with pytest.raises(error, match=match):
        predictive_pmf(cocaine, *args, **kwargs)


def test_not_a_confusion_matrix():
    with pytest.raises(TypeError, match="ConfusionMatrix"):
        predictive_pmf({"tp": 1, "fn": 2, "fp": 3, "tn": 4}, 5, 5)


def test_binomial_model_needs_observed_cases_of_each_predicted_class():
    no_pos = bcm.ConfusionMatrix(tp=0, fn=0, fp=3, tn=5)
    with pytest.raises(ValueError, match=r"no actual positives.*beta_binomial"):
        predictive_pmf(no_pos, 5, 5, model="binomial")
    # not needed when the future set has no positives either
    pmf = predictive_pmf(no_pos, 0, 5, model="binomial")
    np.testing.assert_allclose(pmf.sum(), 1.0)
    # the beta-binomial model is fine: the prior covers the missing class
    np.testing.assert_allclose(predictive_pmf(no_pos, 5, 5).sum(), 1.0, atol=1e-12)


def test_improper_posterior_is_refused():
    cm = bcm.ConfusionMatrix(tp=0, fn=3, fp=1, tn=4)
    with pytest.raises(PriorError, match="improper"):
        predictive_pmf(cm, 5, 5, priors={"tpr": Beta(0, 0)})


# -- metric_pmf -------------------------------------------------------------------------
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("metric", ["mcc", "f1", "ba", "ppv", "npv", "kappa", "acc"])
def test_metric_pmf_sums(batch, model, metric):
    n_pos, n_neg = 20, 40
    frame = metric_pmf(batch, metric, n_pos, n_neg, model=model)
    assert list(frame.columns) == ["value", "probability", "n_points"]
    assert frame.index.names == ["classifier", "contour"]
    for name in MATRICES:
        one = frame.loc[name]
        assert one["probability"].sum() == pytest.approx(1.0, abs=1e-12)
        assert one["n_points"].sum() == (n_pos + 1) * (n_neg + 1)
        finite = one["value"].dropna().to_numpy()
        assert np.all(np.diff(finite) > 0)  # sorted, no repeats
        assert one["value"].isna().sum() <= 1  # undefined points: one row, last
        if one["value"].isna().any():
            assert np.isnan(one["value"].iloc[-1])
    assert frame.attrs["metric"] == metric and frame.attrs["model"] == model


def test_tpr_pmf_is_the_beta_binomial_of_tp(cocaine):
    n_pos, n_neg = 30, 12
    one = metric_pmf(cocaine, "recall", n_pos, n_neg).loc["cm"]  # alias of tpr
    k = np.arange(n_pos + 1)
    np.testing.assert_allclose(one["value"], k / n_pos, rtol=0, atol=1e-15)
    np.testing.assert_allclose(one["probability"],
                               stats.betabinom.pmf(k, n_pos, 27, 1), rtol=1e-9)
    assert (one["n_points"] == n_neg + 1).all()


def test_balanced_accuracy_contours_depend_on_the_lattice(cocaine):
    """Lovell et al., Fig. 7: at 20 positives and 40 negatives 21 lattice points lie on
    the contour BA = 1/2 (the diagonal); one more negative removes the confluence."""
    ba40 = metric_pmf(cocaine, "ba", 20, 40).loc["cm"]
    assert (ba40["n_points"] > 1).sum() > 10
    top = ba40.loc[ba40["n_points"].idxmax()]
    assert top["n_points"] == 21 and top["value"] == pytest.approx(0.5, abs=1e-15)
    ba41 = metric_pmf(cocaine, "ba", 20, 41).loc["cm"]
    assert ba41["n_points"].max() == 2 < ba40["n_points"].max()
    # exact contours: BA = (41 tp + 20 tn) / 1640, an integer key
    for n_neg, frame in ((40, ba40), (41, ba41)):
        tp, tn = np.meshgrid(np.arange(21), np.arange(n_neg + 1), indexing="ij")
        _, sizes = np.unique(n_neg * tp + 20 * tn, return_counts=True)
        np.testing.assert_array_equal(frame["n_points"], sizes)


def test_ppv_collects_undefined_points_in_one_nan_row(cocaine):
    one = metric_pmf(cocaine, "ppv", 20, 40).loc["cm"]
    last = one.iloc[-1]
    assert np.isnan(last["value"]) and last["n_points"] == 1  # TP' = FP' = 0
    pmf = predictive_pmf(cocaine, 20, 40).sel(classifier="cm")
    assert last["probability"] == pytest.approx(float(pmf.sel(tp=0, tn=40)), rel=1e-12)
    assert one["value"].iloc[:-1].notna().all()


def test_metric_objects_and_bad_metric_arguments(cocaine):
    f2 = metric_pmf(cocaine, bcm.metrics.fbeta(2.0), 10, 10)
    assert f2.attrs["metric"] == "f2"
    assert f2["probability"].sum() == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(KeyError, match="Known metrics"):
        metric_pmf(cocaine, "auc", 10, 10)
    with pytest.raises(ValueError, match="decimals"):
        metric_pmf(cocaine, "mcc", 10, 10, decimals=1.5)
    with pytest.raises(ValueError, match="both 0"):
        metric_pmf(cocaine, "mcc", 0, 0)


def test_million_point_lattice_is_exact_for_mcc(cocaine):
    """n_pos = n_neg = 999: 10^6 lattice points.  The contours of MCC equal those of
    exact rational arithmetic (sign and reduced fraction of MCC^2), and masses and
    counts per contour agree."""
    n = 999
    pmf = predictive_pmf(cocaine, n, n)
    assert float(pmf.sum()) == pytest.approx(1.0, abs=1e-12)
    frame = metric_pmf(cocaine, "mcc", n, n).loc["cm"]
    assert frame["probability"].sum() == pytest.approx(1.0, abs=1e-12)
    assert frame["n_points"].sum() == (n + 1) ** 2

    tp, tn = (x.ravel() for x in np.meshgrid(np.arange(n + 1), np.arange(n + 1),
                                              indexing="ij"))
    fn, fp = n - tp, n - tn
    num = tp * tn - fp * fn
    den = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)  # < 4e12: exact in int64
    g = np.gcd(num * num, den)
    g[g == 0] = 1
    key = np.stack([np.sign(num), num * num // g, den // g, den == 0], axis=1)
    _, group, sizes = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    group = group.ravel()
    mass = np.bincount(group, weights=pmf.values.ravel())
    rep = np.empty(sizes.size)
    rep[group] = bcm.metrics.evaluate("mcc", tp, fn, fp, tn)  # float value per group
    order = np.argsort(rep)  # NaN (den == 0) last, as in the frame
    assert len(frame) == sizes.size
    np.testing.assert_array_equal(frame["n_points"], sizes[order])
    np.testing.assert_allclose(frame["probability"], mass[order], rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(frame["value"], rep[order], rtol=0, atol=1e-14)


def _rational_contour_sizes(num, den, value):
    """Contour sizes from exact rational keys num / den (den == 0: undefined), ordered
    by the float value of the metric (undefined last)."""
    num = np.where(den == 0, 0, num)
    g = np.gcd(num, den)
    g[g == 0] = 1
    key = np.stack([num // g, den // g, (den == 0).astype(np.int64)], axis=1)
    _, group, sizes = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    rep = np.empty(sizes.size)
    rep[group.ravel()] = value
    return sizes[np.argsort(rep)]


@pytest.mark.parametrize("metric", ["ba", "f1", "kappa", "dor", "lr_pos"])
def test_contours_equal_exact_rational_contours(cocaine, metric):
    """Float noise is merged (equal rationals are one contour), distinct values kept."""
    n_pos, n_neg = 300, 500
    tp, tn = (x.ravel() for x in np.meshgrid(np.arange(n_pos + 1), np.arange(n_neg + 1),
                                              indexing="ij"))
    fn, fp = n_pos - tp, n_neg - tn
    num, den = {
        "ba": (tp * n_neg + tn * n_pos, np.full_like(tp, 2 * n_pos * n_neg)),
        "f1": (2 * tp, 2 * tp + fn + fp),
        "kappa": (2 * (tp * tn - fn * fp), (tp + fp) * (fp + tn) + (tp + fn) * (fn + tn)),
        "dor": (tp * tn, fp * fn),
        "lr_pos": (tp * n_neg, n_pos * fp),
    }[metric]
    value = np.asarray(bcm.metrics.evaluate(metric, tp, fn, fp, tn), dtype=float)
    expected = _rational_contour_sizes(num, den, value)
    frame = metric_pmf(cocaine, metric, n_pos, n_neg).loc["cm"]
    np.testing.assert_array_equal(frame["n_points"], expected)
    if metric in ("ba", "lr_pos"):  # float equality alone would split contours
        assert len(np.unique(value)) > len(expected)


def test_infinite_values_have_their_own_contour(cocaine):
    """log DOR is -inf where tp' tn' = 0 < fp' fn', NaN where fp' fn' = 0."""
    n_pos, n_neg = 10, 12
    one = metric_pmf(cocaine, "log_dor", n_pos, n_neg).loc["cm"]
    tp, tn = np.meshgrid(np.arange(n_pos + 1), np.arange(n_neg + 1), indexing="ij")
    fn, fp = n_pos - tp, n_neg - tn
    assert one["value"].iloc[0] == -np.inf
    assert one["n_points"].iloc[0] == np.sum((tp * tn == 0) & (fp * fn > 0))
    assert np.isnan(one["value"].iloc[-1])
    assert one["n_points"].iloc[-1] == np.sum(fp * fn == 0)
    assert one["probability"].sum() == pytest.approx(1.0, abs=1e-12)


# -- against the fitted model's predictive draws ------------------------------------------
N_POS, N_NEG = 30, 20
FIT_MATRICES = ("cocaine", "mid")


@functools.cache
def _predictive_fit():
    """Fixed prevalence n_pos / N keeps the class sizes of the predictive draws at
    (N_POS, N_NEG); the posterior of tpr and tnr is the same as with a free prevalence."""
    cms = bcm.ConfusionMatrix(
        **{c: [MATRICES[k][c] for k in FIT_MATRICES] for c in bcm.CELLS},
        classifier=list(FIT_MATRICES))
    model = bcm.models.three_beta(cms, prevalence=N_POS / (N_POS + N_NEG))
    idata = bcm.fit(model, sampler="exact", draws=25_000, predictive_n=N_POS + N_NEG,
                    random_seed=2024, metrics=["mcc", "f1"], prior=False)
    return cms, idata


def _chisquare_p(observed, expected):
    """Chi-square goodness of fit, cells with expected count < 5 pooled into one."""
    observed, expected = np.asarray(observed, float), np.asarray(expected, float)
    big = expected >= 5
    obs, exp = list(observed[big]), list(expected[big])
    rest_o, rest_e = observed[~big].sum(), expected[~big].sum()
    if rest_e >= 5:
        obs.append(rest_o)
        exp.append(rest_e)
    elif rest_e > 0 or rest_o > 0:  # too small to stand alone: join the smallest cell
        i = int(np.argmin(exp))
        obs[i] += rest_o
        exp[i] += rest_e
    assert len(obs) > 10
    return stats.chisquare(obs, exp).pvalue


def _draw_counts(idata, name):
    counts = idata.predictions["counts"].sel(classifier=name)
    tp = counts.sel(cell="tp").values.ravel()
    tn = counts.sel(cell="tn").values.ravel()
    fn = counts.sel(cell="fn").values.ravel()
    fp = counts.sel(cell="fp").values.ravel()
    assert np.all(tp + fn == N_POS) and np.all(tn + fp == N_NEG)
    return tp, fn, fp, tn


@pytest.mark.parametrize("name", FIT_MATRICES)
def test_joint_pmf_matches_predictive_draws(name):
    cms, idata = _predictive_fit()
    tp, _, _, tn = _draw_counts(idata, name)
    observed = np.bincount(tp * (N_NEG + 1) + tn, minlength=(N_POS + 1) * (N_NEG + 1))
    pmf = predictive_pmf(cms, N_POS, N_NEG).sel(classifier=name).values.ravel()
    assert _chisquare_p(observed, tp.size * pmf) > 1e-3


@pytest.mark.parametrize("metric", ["mcc", "f1"])
@pytest.mark.parametrize("name", FIT_MATRICES)
def test_metric_pmf_matches_predictive_metric_draws(name, metric):
    """Draws are mapped to contours through their counts (the stored float32 metric
    values would merge distinct contours)."""
    cms, idata = _predictive_fit()
    tp, fn, fp, tn = _draw_counts(idata, name)
    values = np.asarray(bcm.metrics.evaluate(metric, tp, fn, fp, tn), dtype=float)
    stored = idata.predictions[metric].sel(classifier=name).values.ravel()
    np.testing.assert_allclose(stored, values, rtol=1e-6, atol=1e-7, equal_nan=True)
    table = metric_pmf(cms, metric, N_POS, N_NEG).loc[name]
    finite = table["value"].dropna().to_numpy()
    contour = np.where(np.isnan(values), len(table) - 1,
                       np.searchsorted(finite, values + 1e-12, side="right") - 1)
    ok = ~np.isnan(values)
    np.testing.assert_allclose(finite[contour[ok]], values[ok], rtol=0, atol=1e-12)
    observed = np.bincount(contour, minlength=len(table))
    assert _chisquare_p(observed, tp.size * table["probability"].to_numpy()) > 1e-3
