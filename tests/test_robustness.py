"""No hang, no crash: degenerate and extreme settings work or raise bayescm's own error.

One test (or more) per bullet of issue 11, item 2, including the failures measured
there: ``fit(chains=1)`` crashing in the convergence report, the Hui–Walter prior
draw that never returned with Beta(2, 15) priors, ``deception`` rows summing to
0.976 on predictive draws, and ``ConfusionMatrix(tp=True, ...)`` taken as a count.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import integrate, special
from scipy import stats as sps

import bayescm as bcm
from bayescm.family import family_of, spec_of
from bayescm.models.hui_walter import truncated as _truncated

from .timebound import time_bound

LOW = bcm.priors.Beta(2, 15)  # Se + Sp > 1 has prior probability 4.3e-7
TABLE = bcm.AgreementTable.from_counts({"site1": {"++": 89, "+-": 43, "-+": 55, "--": 413},
                                        "site2": {"++": 260, "+-": 76, "-+": 52, "--": 212}})


def quiet_fit(model, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bcm.fit(model, random_seed=1, **kwargs)


# -- loops that draw until a condition holds: the truncated Hui–Walter prior ----------------
def reference_cdf(a1, b1, a2, b2):
    """CDF of Se under Beta(a1, b1) Beta(a2, b2) 1{Se + Sp > 1}, by quadrature on a grid.

    Independent of the implementation (a grid in Se, not in Se's tail probability).
    """
    x = np.linspace(0, 1, 400_001)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.exp(sps.beta.logpdf(x, a1, b1) + np.log(special.betainc(b2, a2, x)))
    f[~np.isfinite(f)] = 0.0
    c = integrate.cumulative_trapezoid(f, x, initial=0.0)
    return lambda q: np.interp(q, x, c / c[-1])


@pytest.mark.parametrize("prior", [(1, 1, 1, 1), (2, 15, 2, 15), (20, 4, 20, 4),
                                   (2, 15, 2, 1e4), (1000, 1000, 1000, 1000), (0.7, 3, 5, 0.9)])
def test_truncated_prior_draws_follow_the_truncated_density(prior):
    """Se's marginal against the integrated density; Sp | Se through its exact PIT.

    Each KS test has false-alarm probability 0.001 under correct draws (12 tests: at
    most 1.2% for the set; the seeds are fixed, so the outcome is deterministic).
    """
    a1, b1, a2, b2 = prior
    se, sp = _truncated.truncated_pair(a1, b1, a2, b2, 4000, np.random.default_rng(7))
    assert (se + sp > 1).all() and np.isfinite(se).all() and np.isfinite(sp).all()
    assert sps.kstest(se, reference_cdf(*prior)).pvalue > 1e-3
    # given Se, X = 1 - Sp is Beta(b2, a2) truncated to (0, Se): its PIT is uniform
    pit = special.betainc(b2, a2, 1 - sp) / special.betainc(b2, a2, se)
    assert sps.kstest(pit, "uniform").pvalue > 1e-3


def moment(k, a1, b1, a2, b2):
    """E[Se^k 1{Se + Sp > 1}] by adaptive quadrature (k = 0: the truncation mass)."""
    return integrate.quad(lambda s: s**k * sps.beta.pdf(s, a1, b1) * special.betainc(b2, a2, s),
                          0, 1, epsabs=0, epsrel=1e-10, limit=500)[0]


@pytest.mark.parametrize("prior", [(1, 1, 1, 1), (2, 15, 2, 15), (20, 4, 20, 4)])
def test_truncation_mass_matches_quadrature(prior):
    assert _truncated.truncation_mass(*prior) == pytest.approx(moment(0, *prior), rel=1e-3)


def test_low_priors_draw_fast():
    """Measured: Beta(2, 15) for Se and Sp never returned (rejection without a bound)."""
    m = bcm.models.hui_walter(TABLE, priors={"sensitivity": LOW, "specificity": LOW},
                              identifiability="ignore")
    with time_bound(5, "prior draws with Beta(2, 15) priors"):
        draws = family_of(m).prior_draws(m, spec_of(m), (4, 1000), np.random.default_rng(1))
    se, sp = draws["sensitivity"], draws["specificity"]
    assert se.shape == (4, 1000, 2) and (se + sp > 1).all()
    # E[Se | Se + Sp > 1] by quadrature; the Monte Carlo sd of the mean is about 0.001
    expected = moment(1, 2, 15, 2, 15) / moment(0, 2, 15, 2, 15)
    assert float(se.mean()) == pytest.approx(expected, abs=0.005)


def test_fit_with_low_priors_returns():
    m = bcm.models.hui_walter(TABLE, priors={"sensitivity": LOW, "specificity": LOW},
                              identifiability="ignore")
    with time_bound(120, "fit with Beta(2, 15) priors"):
        idata = quiet_fit(m, draws=300, tune=300)
    prior = idata.prior
    assert bool((prior["sensitivity"] + prior["specificity"] > 1).all())


def test_priors_in_total_conflict_raise_prior_error():
    never = bcm.priors.Beta(1, 1e6)
    with pytest.raises(bcm.PriorError, match=r"Beta\(1, 1e\+06\).*Se \+ Sp > 1"):
        bcm.models.hui_walter(TABLE, priors={"sensitivity": never, "specificity": never})
    with pytest.raises(bcm.PriorError, match="Se \\+ Sp > 1"):
        _truncated.truncated_pair(1, 1e6, 1, 1e6, 10, np.random.default_rng(0))


# -- one chain, fewest draws, no tuning -------------------------------------------------------
CM = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)


@pytest.mark.parametrize("sampler", ["nuts", "exact"])
def test_one_chain(sampler):
    """Measured: chains=1 crashed with pandas' 'Encountered all NA values'."""
    idata = quiet_fit(bcm.models.three_beta(CM), chains=1, draws=200, sampler=sampler)
    assert idata.posterior.sizes["chain"] == 1
    message = idata.attrs["convergence"]
    assert ("2 chains" in message) if sampler == "nuts" else ("independent" in message)
    table = bcm.summary(idata)
    # a mean that does not exist (DOR with fn = 0: Beta(27, 1) at the pole) is inf by design
    defined = ~table["note"].str.startswith("no finite mean")
    assert np.isfinite(table.loc[defined, "mean"]).all()


@pytest.mark.parametrize("sampler", ["nuts", "exact"])
def test_fewest_draws(sampler):
    idata = quiet_fit(bcm.models.three_beta(CM), draws=4, chains=1, sampler=sampler)
    assert idata.posterior.sizes["draw"] == 4
    assert np.isfinite(bcm.summary(idata, metrics=["tpr"])["hdi_width"]).all()
    with pytest.raises(ValueError, match="draws must be an integer >= 4"):
        bcm.fit(bcm.models.three_beta(CM), draws=3)


def test_no_tuning():
    with pytest.raises(ValueError, match="tune=0"):
        bcm.fit(bcm.models.three_beta(CM), tune=0)  # nutpie needs tune >= 1
    with pytest.raises(ValueError, match="tune=0"):
        bcm.fit(bcm.models.three_beta(CM), tune=0, engine="nutpie")
    exact = quiet_fit(bcm.models.three_beta(CM), tune=0, sampler="exact", draws=1000)
    assert exact.posterior.sizes["draw"] == 1000
    untuned = quiet_fit(bcm.models.three_beta(CM), tune=0, draws=30, chains=2, engine="pymc")
    assert untuned.attrs["engine"] == "pymc" and untuned.posterior.sizes["draw"] == 30


@pytest.mark.parametrize("name", ["draws", "chains", "tune"])
def test_sizes_are_not_booleans(name):
    with pytest.raises(ValueError, match=name):
        bcm.fit(bcm.models.three_beta(CM), sampler="exact", **{name: True})


# -- counts of 10^12, a single case, everything in one cell or pattern ------------------------
BIG = bcm.ConfusionMatrix(tp=10**12, fn=10**12, fp=3, tn=10**12)


@pytest.mark.parametrize("sampler", ["exact", "nuts"])
def test_counts_of_a_trillion(sampler):
    """PyMC stores integer data as int32: 10^12 wrapped round to negative counts."""
    m = bcm.models.three_beta(BIG)
    assert float(m["counts_data"].get_value().min()) == 3.0
    idata = quiet_fit(m, sampler=sampler, draws=200, chains=2)
    phi = idata.posterior["prevalence"]
    assert float(phi.mean()) == pytest.approx(2 / 3, abs=1e-6)
    table = bcm.summary(idata, metrics=["tpr", "tnr"])
    assert np.isfinite(table["mean"]).all()
    assert (idata.posterior_predictive["counts"].sum(axis=-1) == 3 * 10**12 + 3).all()


def test_counts_beyond_double_precision_are_refused():
    for big in (2**53 + 2, 10**19, 1e300):
        with pytest.raises(bcm.CountsError, match="2\\*\\*53"):
            bcm.ConfusionMatrix(tp=big, fn=0, fp=0, tn=1)
    with pytest.raises(bcm.CountsError, match="2\\*\\*53"):
        bcm.AgreementTable([10**20, 0, 0, 1])


@pytest.mark.parametrize("counts", [dict(tp=1, fn=0, fp=0, tn=0), dict(tp=0, fn=0, fp=0, tn=500)],
                         ids=["single case", "one cell"])
@pytest.mark.parametrize("builder", ["three_beta", "dirichlet_multinomial"])
def test_single_case_and_one_cell(counts, builder):
    cm = bcm.ConfusionMatrix(**counts)
    for sampler in ("exact", "nuts"):
        idata = quiet_fit(getattr(bcm.models, builder)(cm), sampler=sampler, draws=300)
        table = bcm.summary(idata, metrics=["tpr", "tnr", "acc", "bm"])
        assert np.isfinite(table["mean"]).all()
        assert (table["hdi_lower"] <= table["median"]).all()
        assert (table["median"] <= table["hdi_upper"]).all()


@pytest.mark.parametrize("counts", [[1, 0, 0, 0], [0, 0, 0, 300]],
                         ids=["single case", "one pattern"])
def test_agreement_table_single_case_and_one_pattern(counts):
    m = bcm.models.hui_walter(bcm.AgreementTable(counts), identifiability="ignore")
    idata = quiet_fit(m, draws=300, tune=300)
    table = bcm.summary(idata, metrics=["tpr", "tnr"])
    assert np.isfinite(table["mean"]).all()


# -- metrics undefined in most draws ----------------------------------------------------------
def test_deception_rows_sum_to_one_with_undefined_draws():
    """Measured: rows summed to 0.976 on predictive draws (undefined BM counted nowhere)."""
    cm = bcm.ConfusionMatrix(tp=2, fn=0, fp=0, tn=1)
    idata = quiet_fit(bcm.models.three_beta(cm), sampler="exact")
    out = bcm.analysis.deception(idata, rope=0.05, group="posterior_predictive")
    assert "undefined" in out.columns
    assert float(out["undefined"].iloc[0]) > 0.2  # BM needs an actual positive and negative
    np.testing.assert_allclose(out.sum(axis=1), 1.0)
    exact = bcm.analysis.deception(cm, rope=0.05)
    np.testing.assert_allclose(exact.sum(axis=1), 1.0)
    assert (exact["undefined"] == 0).all()


def test_metric_undefined_in_many_draws():
    cm = bcm.ConfusionMatrix(tp=0, fn=0, fp=0, tn=500)  # ppv needs a predicted positive
    idata = quiet_fit(bcm.models.three_beta(cm), sampler="exact")
    mu = bcm.analysis.metric_uncertainty(idata, "ppv", group="posterior_predictive")
    share = float(mu["undefined"].iloc[0])
    assert share > 0.3
    table = bcm.summary(idata, metrics=["ppv"], group="posterior_predictive")
    assert float(table["undefined"].iloc[0]) == pytest.approx(share)
    defined = bcm.analysis.metric_uncertainty(idata, "tnr", group="posterior_predictive")
    assert float(defined["undefined"].iloc[0]) == 0 and np.isfinite(defined["mu"]).all()


# -- booleans are not counts ------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: bcm.ConfusionMatrix(tp=True, fn=0, fp=0, tn=1),
    lambda: bcm.ConfusionMatrix(tp=np.array([True, False]), fn=[0, 1], fp=[0, 1], tn=[1, 1]),
    lambda: bcm.ConfusionMatrix(tp=[3, np.True_], fn=[0, 1], fp=[0, 1], tn=[1, 1]),
    lambda: bcm.ConfusionMatrix.from_counts({"tp": 1, "fn": False, "fp": 0, "tn": 1}),
    lambda: bcm.AgreementTable([True, 0, 0, 1]),
    lambda: bcm.AgreementTable.from_counts({"++": 4, "+-": True, "-+": 0, "--": 1}),
], ids=["scalar", "bool array", "mixed list", "from_counts", "table", "table from_counts"])
def test_booleans_are_not_counts(make):
    """Measured: ConfusionMatrix(tp=True, ...) was accepted as a count of 1."""
    with pytest.raises(bcm.CountsError, match="boolean"):
        make()


def test_booleans_are_not_prior_parameters():
    with pytest.raises(bcm.PriorError):
        bcm.priors.Beta(True, 1)


def test_exact_deception_stays_in_the_unit_interval():
    """Found by the properties: quadrature error gave r_informative = -2.2e-16."""
    out = bcm.analysis.deception(bcm.ConfusionMatrix(tp=0, fn=1831, fp=5, tn=0))
    assert ((out >= 0) & (out <= 1)).all().all()
    np.testing.assert_allclose(out.sum(axis=1), 1.0)
