"""Numbers a user can trust on first sight (issue 25, item 2).

Exact where exact exists: closed-form Beta marginals are reported exactly, for exact and
NUTS fits alike; every sampled row carries its Monte Carlo standard errors; the exact
sampler's default draws keep HDI bounds stable between seeds; a posterior mean that does
not exist is reported as such; metric draws are float64.
"""

from __future__ import annotations

import copy
import warnings

import arviz as az
import numpy as np
import pytest
from scipy import stats

import bayescm as bcm
from bayescm.family import default_family
from bayescm.inference import marginals
from bayescm.inference.fit import fit_closed_form
from bayescm.stats import beta_hdi_any, hdi, hdi_mcse
from bayescm.summary import ExactMismatchWarning

COCAINE = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
TNR_HDI = (0.4324, 0.9458)  # Beta(7, 3), 95%: [0.43237, 0.94576]


def _quiet_fit(model, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bcm.fit(model, **kw)


def _assert_beta_row(row, a, b, hdi_prob=0.95):
    dist = stats.beta(a, b)
    lo, hi = beta_hdi_any(a, b, hdi_prob=hdi_prob)
    assert bool(row["exact"]), row
    assert row["note"] == f"exact: Beta({a:.6g}, {b:.6g})"
    got = row[["mean", "sd", "median", "hdi_lower", "hdi_upper"]].to_numpy(float)
    np.testing.assert_allclose(got, [dist.mean(), dist.std(), dist.median(), lo, hi],
                               rtol=0, atol=1e-12)
    assert (row["mcse_mean"], row["mcse_hdi_lower"], row["mcse_hdi_upper"]) == (0, 0, 0)


# -- 1. exact where exact exists ---------------------------------------------------------
@pytest.mark.parametrize("sampler", ["exact", "nuts"])
def test_cocaine_tnr_is_the_exact_beta_hdi_for_exact_and_nuts_fits(sampler):
    idata = _quiet_fit(bcm.models.three_beta(COCAINE), sampler=sampler, draws=1000,
                       random_seed=3)
    table = bcm.summary(idata, metrics=["tpr", "tnr", "prevalence", "mcc"])
    row = table.loc[("cm", "tnr")]
    assert (row["hdi_lower"], row["hdi_upper"]) == pytest.approx(TNR_HDI, abs=5e-4)
    _assert_beta_row(row, 7, 3)
    _assert_beta_row(table.loc[("cm", "tpr")], 27, 1)
    _assert_beta_row(table.loc[("cm", "prevalence")], 27, 9)
    assert not table.loc[("cm", "mcc"), "exact"]  # not a Beta: from the draws


def test_ratio_metrics_of_a_dirichlet_over_the_cells_are_exact():
    cm = bcm.ConfusionMatrix(tp=[26, 40], fn=[0, 7], fp=[2, 5], tn=[6, 90],
                             classifier=["a", "b"])
    idata = _quiet_fit(bcm.models.dirichlet_multinomial(cm), sampler="exact", draws=500,
                       random_seed=1)
    table = bcm.summary(idata)
    for i, name in enumerate(["a", "b"]):
        alpha = dict(zip(bcm.CELLS, 1.0 + cm.counts[i], strict=True))  # Dirichlet(1 + n)
        for key, succ, fail in [("tpr", "tp", "fn"), ("tnr", "tn", "fp"), ("ppv", "tp", "fp"),
                                ("npv", "tn", "fn"), ("fdr", "fp", "tp"),
                                ("acc", "tp tn", "fn fp"), ("prevalence", "tp fn", "fp tn"),
                                ("jaccard", "tp", "fn fp")]:
            a = sum(alpha[c] for c in succ.split())
            b = sum(alpha[c] for c in fail.split())
            _assert_beta_row(table.loc[(name, key)], a, b)
        for key in ("mcc", "f1", "ba", "kappa"):
            assert not table.loc[(name, key), "exact"]


def test_multiclass_recall_is_exact_under_rows_and_accuracy_under_cells():
    mc = bcm.MulticlassConfusionMatrix([[20, 4, 1], [3, 15, 2], [2, 5, 18]],
                                       labels=["cat", "dog", "bird"])
    priors = {"prevalence": bcm.priors.Dirichlet((1, 1, 1)),
              "rows": bcm.priors.Dirichlet((1, 1, 1))}
    rows = _quiet_fit(bcm.models.multiclass_rows(mc, priors=priors), sampler="exact",
                      draws=500, random_seed=2)
    table = bcm.summary(rows, metrics=["recall", "prevalence", "ppv", "acc"])
    counts = mc.counts[0]
    for a, label in enumerate(mc.labels):
        r = counts[a]
        _assert_beta_row(table.loc[("cm", label, "tpr")], 1 + r[a], 2 + r.sum() - r[a])
        _assert_beta_row(table.loc[("cm", label, "prevalence")], 1 + r.sum(),
                         2 + counts.sum() - r.sum())
        assert not table.loc[("cm", label, "ppv"), "exact"]  # a column: not one row
    assert not table.loc[("cm", "", "acc"), "exact"]
    cells = _quiet_fit(bcm.models.multiclass_cells(mc, priors={"theta": bcm.priors.Dirichlet(
        (1,) * 9)}), sampler="exact", draws=500, random_seed=2)
    table = bcm.summary(cells, metrics=["acc", "recall"])
    diag = np.trace(counts)
    _assert_beta_row(table.loc[("cm", "", "acc")], 3 + diag, 6 + counts.sum() - diag)
    for a, label in enumerate(mc.labels):
        r = counts[a]
        _assert_beta_row(table.loc[("cm", label, "tpr")], 1 + r[a], 2 + r.sum() - r[a])


def test_summary_exact_has_the_same_exact_rows_as_the_summary_of_a_fit():
    model = bcm.models.three_beta(COCAINE)
    got = bcm.summary_exact(model, metrics=["tnr", "dor", "mcc"], draws=500, random_seed=1)
    ref = bcm.summary(_quiet_fit(model, sampler="exact", draws=500, random_seed=1),
                      metrics=["tnr", "dor", "mcc"])
    cols = ["mean", "sd", "median", "hdi_lower", "hdi_upper", "exact", "note"]
    assert got.loc[("cm", "tnr"), cols].tolist() == ref.loc[("cm", "tnr"), cols].tolist()
    assert got.loc[("cm", "dor"), "note"] == ref.loc[("cm", "dor"), "note"] != ""


def test_a_fit_whose_draws_disagree_with_its_record_is_summarised_by_its_draws():
    idata = _quiet_fit(bcm.models.three_beta(COCAINE), sampler="exact", draws=1000,
                       random_seed=4)
    edited = copy.deepcopy(idata)
    edited.posterior["tnr"] = edited.posterior["tnr"] * 0.9  # not the record's posterior
    with pytest.warns(ExactMismatchWarning, match="disagree"):
        table = bcm.summary(edited, metrics=["tnr", "tpr"])
    assert not table["exact"].any()
    draws = edited.posterior["tnr"].values.ravel()
    assert table.loc[("cm", "tnr"), "mean"] == pytest.approx(draws.mean())
    # a posterior variable the builder does not make: a model extended by its user
    extended = copy.deepcopy(idata)
    extended.posterior["extra"] = extended.posterior["tpr"] * 0 + 1
    assert marginals.closed_form_of(extended) is None
    assert not bcm.summary(extended, metrics=["tnr"])["exact"].any()
    # other counts than the record's
    assert marginals.closed_form_of(idata) is not None
    other = copy.deepcopy(idata)
    other.observed_data["counts"] = other.observed_data["counts"] + 1
    assert marginals.closed_form_of(other) is None


# -- 2. Monte Carlo standard errors --------------------------------------------------------
def test_mcse_of_the_mean_is_arviz_for_nuts_and_sd_over_root_n_for_iid_draws():
    nuts = _quiet_fit(bcm.models.three_beta(COCAINE), draws=1000, random_seed=5)
    table = bcm.summary(nuts, metrics=["mcc", "ppv", "tnr"])
    for key in ("mcc", "ppv"):
        want = float(az.mcse(nuts.posterior[key].sel(classifier="cm"), method="mean")
                     .to_array().values.squeeze())
        assert table.loc[("cm", key), "mcse_mean"] == pytest.approx(want, rel=1e-8)
    assert table.loc[("cm", "tnr"), "mcse_mean"] == 0  # exact
    exact = _quiet_fit(bcm.models.three_beta(COCAINE), sampler="exact", draws=1000,
                       random_seed=5)
    row = bcm.summary(exact, metrics=["mcc"]).loc[("cm", "mcc")]
    assert row["mcse_mean"] == pytest.approx(row["sd"] / np.sqrt(4000), rel=1e-12)
    lower, upper = hdi_mcse(exact.posterior["mcc"].values.reshape(1, -1))
    assert (row["mcse_hdi_lower"], row["mcse_hdi_upper"]) == (lower[0], upper[0])


def test_hdi_mcse_is_the_batch_formula_and_matches_the_seed_to_seed_spread():
    x = np.random.default_rng(0).beta(7, 3, (3, 8000))
    lo, hi = hdi_mcse(x)
    parts = hdi(x.reshape(3, 16, 500))
    np.testing.assert_allclose(lo, parts[0].std(axis=-1, ddof=1) * 16 ** (-1 / 3))
    np.testing.assert_allclose(hi, parts[1].std(axis=-1, ddof=1) * 16 ** (-1 / 3))
    assert np.isnan(hdi_mcse(x[:, :100])[0]).all()  # too few draws for 4 batches of 50
    # calibration: 40 seeds of 40,000 draws; the bound's sd across seeds against the
    # mean MCSE (sd of an sd from 40 values: ~11%; the estimate is conservative at this n)
    draws = np.random.default_rng(1).beta(7, 3, (40, 40_000))
    spread = hdi(draws)[0].std(ddof=1)
    mcse = hdi_mcse(draws)[0].mean()
    assert 0.8 * spread < mcse < 1.6 * spread


# -- 3. the exact sampler's default draws ---------------------------------------------------
def test_default_exact_draws_keep_mcc_hdi_bounds_within_0_005_between_seeds():
    one, two = (bcm.summary(fit_closed_form("three_beta", COCAINE, random_seed=s),
                            metrics=["mcc"]).loc[("cm", "mcc")] for s in (1, 2))
    # a million i.i.d. draws: the bounds' Monte Carlo sd is about 0.0013 (30 seeds)
    assert one["mcse_hdi_lower"] < 0.002 and one["mcse_hdi_upper"] < 0.002
    assert abs(one["hdi_lower"] - two["hdi_lower"]) < 0.005
    assert abs(one["hdi_upper"] - two["hdi_upper"]) < 0.005


def test_default_exact_draws_rule_and_its_memory_bound():
    from bayescm.inference import draws as draws_mod

    closed = default_family("binary").closed_form(COCAINE)
    assert draws_mod.values_per_draw(closed) == 3 + 4 + len(bcm.metrics.names())
    assert draws_mod.exact_draws(1, draws_mod.values_per_draw(closed), 4) == 250_000
    # the same default in fit, fit_closed_form and summary_exact, whatever the metrics
    model = bcm.models.three_beta(COCAINE)
    assert draws_mod.default_draws(model, "exact", 4) == 250_000
    assert draws_mod.default_draws(model, "nuts", 4) == 1000
    tree = fit_closed_form("three_beta", COCAINE, metrics=["tnr"], random_seed=1)
    assert tree["posterior"].sizes["draw"] == 250_000
    # a batch: bounded memory (512 MB of posterior values), never below 1,000 per chain
    batch = bcm.ConfusionMatrix(tp=[5] * 200, fn=[1] * 200, fp=[2] * 200, tn=[9] * 200)
    per_chain = draws_mod.default_draws(bcm.models.three_beta(batch), "exact", 4)
    assert 200 * 4 * per_chain * 40 * 8 <= draws_mod.EXACT_BYTES and per_chain >= 1000


# -- 4. a mean that does not exist ----------------------------------------------------------
def test_dor_with_fn_zero_has_no_finite_mean_and_says_so():
    table = bcm.summary(fit_closed_form("three_beta", COCAINE, draws=2000, random_seed=1),
                        metrics=["dor", "lr_pos", "lr_neg", "log_dor"])
    dor = table.loc[("cm", "dor")]
    assert dor["mean"] == np.inf and np.isnan(dor["sd"]) and np.isnan(dor["mcse_mean"])
    assert dor["note"].startswith("no finite mean: dor grows like (1 - tpr)^-1")
    assert "Beta(27, 1)" in dor["note"] and "b > 1" in dor["note"]
    assert np.isfinite([dor["median"], dor["hdi_lower"], dor["hdi_upper"]]).all()
    # fp = 2: TNR ~ Beta(7, 3), lr_pos = TPR / (1 - TNR) has E = 27/28 * 9/2
    for key in ("lr_pos", "lr_neg", "log_dor"):
        assert np.isfinite(table.loc[("cm", key), ["mean", "sd"]].to_numpy(float)).all()
        assert table.loc[("cm", key), "note"] == ""
    fp0 = bcm.ConfusionMatrix(tp=20, fn=3, fp=0, tn=9)
    t = bcm.summary(fit_closed_form("three_beta", fp0, draws=500, random_seed=1),
                    metrics=["lr_pos", "lr_neg", "dor"])
    assert t.loc[("cm", "lr_pos"), "mean"] == np.inf and t.loc[("cm", "dor"), "mean"] == np.inf
    assert np.isfinite(t.loc[("cm", "lr_neg"), "mean"])


@pytest.mark.parametrize("b_prior", [0.5, 1.0, 1.5, 2.0])
@pytest.mark.parametrize("fn", [0, 1, 2])
def test_the_finite_mean_rule_is_b_greater_than_the_pole_order(b_prior, fn):
    """E[TPR/(1 - TPR)] = a/(b - 1) is finite iff b > 1, its variance iff b > 2; the DOR
    is TPR/(1 - TPR) x TNR/(1 - TNR) with independent rates; lr_pos needs TNR's b > 1,
    lr_neg TNR's a > 1."""
    cm = bcm.ConfusionMatrix(tp=12, fn=fn, fp=fn, tn=15)
    priors = {"tpr": bcm.priors.Beta(1, b_prior), "tnr": bcm.priors.Beta(1, b_prior)}
    family = default_family("binary")
    closed = family.closed_form(cm, priors)
    out = marginals.exact_marginals(family, closed, ["dor", "lr_pos", "lr_neg"],
                                    bcm.metrics.BINARY)
    b = b_prior + fn
    assert closed.conjugate.betas["tpr"][1][0] == b
    mean_ok = {k: (out[k].mean_finite.values.item() if k in out else 1.0)
               for k in ("dor", "lr_pos", "lr_neg")}
    sd_ok = {k: (out[k].sd_finite.values.item() if k in out else 1.0)
             for k in ("dor", "lr_pos", "lr_neg")}
    assert mean_ok == {"dor": float(b > 1), "lr_pos": float(b > 1), "lr_neg": 1.0}
    assert sd_ok == {"dor": float(b > 2), "lr_pos": float(b > 2), "lr_neg": 1.0}


def test_a_finite_dor_mean_agrees_with_its_closed_form():
    cm = bcm.ConfusionMatrix(tp=30, fn=4, fp=5, tn=40)  # TPR ~ Beta(31, 5), TNR ~ Beta(41, 6)
    row = bcm.summary(fit_closed_form("three_beta", cm, draws=50_000, random_seed=2),
                      metrics=["dor"]).loc[("cm", "dor")]
    want = 31 / (5 - 1) * 41 / (6 - 1)
    assert row["note"] == "" and abs(row["mean"] - want) < 6 * row["mcse_mean"]


def test_dirichlet_cells_dor_with_fn_zero_has_no_finite_mean():
    idata = _quiet_fit(bcm.models.dirichlet_multinomial(COCAINE), sampler="exact",
                       draws=500, random_seed=1)
    row = bcm.summary(idata, metrics=["dor"]).loc[("cm", "dor")]
    assert row["mean"] == np.inf and "tpr ~ Beta(27, 1)" in row["note"]


# -- 5. float64 metric draws ----------------------------------------------------------------
def test_metric_draws_are_float64_and_a_tiny_hdi_width_is_not_zero():
    huge = bcm.ConfusionMatrix(tp=10**9, fn=1, fp=1, tn=10**9)
    tree = fit_closed_form("three_beta", huge, draws=1000, random_seed=1)
    assert tree["posterior"]["acc"].dtype == np.float64
    row = bcm.summary(tree, metrics=["acc"]).loc[("cm", "acc")]
    assert 0 < row["hdi_width"] < 1e-8 and str(row["hdi_width"]) != "0.0"
    idata = _quiet_fit(bcm.models.three_beta(huge), sampler="exact", draws=1000,
                       random_seed=1)
    assert idata.posterior["acc"].dtype == np.float64
    assert idata.posterior_predictive["acc"].dtype == np.float64


def test_aligned_puts_an_exact_in_row_order_as_xarray_reindexing_does():
    """Units and classes reordered, one unit and one class the Exact lacks (NaN, note
    ""), and a second base dim over which each unit's values repeat: against xarray's
    own reindex, broadcast and transpose of each array."""
    import xarray as xr

    rng = np.random.default_rng(5)
    units, classes = ["m1", "m0", "m9"], ["c2", "c0", "zz"]
    have_u, have_c = ["m0", "m1", "m2"], ["c0", "c1", "c2"]

    def da(v):
        return xr.DataArray(v, dims=("classifier", "class"),
                            coords={"classifier": have_u, "class": have_c})

    notes = np.array([[f"n{i}{j}" for j in range(3)] for i in range(3)], dtype=object)
    ex = marginals.Exact(*(da(rng.uniform(1, 9, (3, 3))) for _ in range(5)), da(notes))
    template = xr.DataArray(np.zeros((2, 3)), dims=("fold", "classifier"),
                            coords={"fold": ["f0", "f1"], "classifier": units})
    base = ["fold", "classifier"]
    for per_class in (True, False):
        got = marginals.aligned(ex, per_class, base, template, classes)
        for field in ("a", "b", "mean_finite", "sd_finite", "sign", "note"):
            ref = getattr(ex, field).reindex(classifier=units)
            ref = ref.reindex({"class": classes}) if per_class else ref.isel({"class": 0})
            ref = ref.broadcast_like(template).transpose(*base, *(["class"] * per_class))
            want = ref.values.ravel()
            if field == "note":
                want = np.array([v if isinstance(v, str) else "" for v in want], dtype=object)
                assert list(got[field]) == list(want)
            else:
                np.testing.assert_array_equal(got[field], want)
        assert np.isnan(got["a"]).sum() == (2 * (9 - 4) if per_class else 2)
