"""The two multiclass families: multiclass_rows and multiclass_cells.

Tolerances follow from Monte Carlo error: i.i.d. draws have standard error
sd / sqrt(n) for a mean and sqrt((m4 - sd^4) / n) for a variance; NUTS draws use
ArviZ's MCSE; an HDI endpoint's error is that of the quantile it sits at,
sqrt(q (1 - q) / n) / f(x).
"""

from __future__ import annotations

import arviz as az
import numpy as np
import pytest
from scipy import stats as sps

import bayescm as bcm
from bayescm.priors import Dirichlet, PriorError
from bayescm.stats import beta_hdi
from tests.models.test_models import assert_kernel_is_model

Z = 4.5
LABELS = ["cat", "dog", "bird"]
TABLES = np.array([[[5, 1, 0], [2, 7, 1], [0, 3, 9]],
                   [[12, 0, 3], [0, 0, 4], [1, 2, 20]]])
BUILDERS = {"multiclass_rows": bcm.models.multiclass_rows,
            "multiclass_cells": bcm.models.multiclass_cells}
# binary matrices (tp, fn, fp, tn), zero cells included
BINARY = [(26, 0, 2, 6), (0, 5, 0, 9), (10, 3, 4, 0), (40, 7, 12, 300)]


@pytest.fixture(scope="module")
def batch():
    return bcm.MulticlassConfusionMatrix(TABLES, labels=LABELS, classifier=["a", "b"])


def _conjugates(cells, multiclass, binary):
    """The K = 2 multiclass model of a binary matrix, the binary model, their posteriors."""
    cm = bcm.ConfusionMatrix(*cells)
    mc = bcm.MulticlassConfusionMatrix.from_binary(cm, labels=("pos", "neg"))
    models = multiclass(mc), binary(cm)
    return (*models, *(bcm.models.family_of(m).conjugate(m, bcm.models.spec_of(m))
                       for m in models))


def _same_mean(x, y) -> None:
    """Two i.i.d. samples' means agree within Z standard errors of their difference."""
    x, y = np.ravel(x), np.ravel(y)
    assert abs(x.mean() - y.mean()) < Z * np.sqrt(x.var() / x.size + y.var() / y.size)


def _beta_moments_ok(draws: np.ndarray, a: float, b: float, ess: float | None = None) -> None:
    """Sample mean and sd of ``draws`` agree with Beta(a, b) within Z Monte Carlo SEs."""
    x = np.ravel(draws)
    n = x.size if ess is None else ess
    dist = sps.beta(a, b)
    mean, var = dist.mean(), dist.var()
    m4 = dist.expect(lambda t: (t - mean) ** 4)
    assert abs(x.mean() - mean) < Z * np.sqrt(var / n)
    assert abs(x.var() - var) < Z * np.sqrt((m4 - var**2) / n)


# -- structure ---------------------------------------------------------------------
@pytest.mark.parametrize("name", BUILDERS)
def test_builder_structure(batch, name):
    m = BUILDERS[name](batch)
    free = {"multiclass_rows": ["prevalence", "rows"], "multiclass_cells": ["cells"]}[name]
    assert [v.name for v in m.free_RVs] == free
    assert m.named_vars_to_dims["theta"] == ("classifier", "actual", "predicted")
    assert list(m.coords["actual"]) == LABELS == list(m.coords["predicted"])
    assert list(m.coords["classifier"]) == ["a", "b"]
    if name == "multiclass_rows":
        assert m.named_vars_to_dims["rows"] == ("classifier", "actual", "predicted")
        assert m.named_vars_to_dims["prevalence"] == ("classifier", "actual")
    point = m.initial_point()
    assert np.isfinite(m.compile_logp()(point))
    assert np.all(np.isfinite(m.compile_dlogp()(point)))
    assert bcm.models.family_of(m).name == name


@pytest.mark.parametrize("name", BUILDERS)
def test_kernel_is_the_pymc_posterior(batch, name):
    """The compiled kernel equals the PyMC model's log density up to a constant, with
    the same gradient, in PyMC's unconstrained coordinates (variable order included)."""
    prior = {"multiclass_rows": {"prevalence": Dirichlet((2, 1, 0.5)),
                                 "rows": {"b": Dirichlet((3, 1, 1))}},
             "multiclass_cells": {"theta": Dirichlet(tuple(np.linspace(0.5, 3, 9)))}}[name]
    m = BUILDERS[name](batch, priors=prior)
    assert_kernel_is_model(m, bcm.models.family_of(m).kernel(m, bcm.models.spec_of(m)), 10)


def test_priors_and_errors(batch):
    with pytest.raises(PriorError, match="3 concentrations"):
        bcm.models.multiclass_rows(batch, priors={"rows": Dirichlet((1, 1))})
    with pytest.raises(PriorError, match="9 concentrations"):
        bcm.models.multiclass_cells(batch, priors={"theta": Dirichlet((1, 1, 1))})
    with pytest.raises(PriorError, match="no parameter"):
        bcm.models.multiclass_rows(batch, priors={"tpr": Dirichlet((1, 1, 1))})
    with pytest.raises(PriorError, match="improper"):  # class dog of "b" has no hits
        bcm.models.multiclass_rows(batch, priors={"rows": Dirichlet((0, 0, 0))})
    with pytest.raises(ValueError, match="summing to 1"):
        bcm.models.multiclass_rows(batch, prevalence=[0.5, 0.6, 0.1])
    with pytest.raises(PriorError, match="fixed prevalence"):
        bcm.models.multiclass_rows(batch, prevalence=[0.2, 0.3, 0.5],
                                   priors={"prevalence": Dirichlet((1, 1, 1))})
    with pytest.raises(TypeError, match="from_binary"):
        bcm.models.multiclass_rows(bcm.ConfusionMatrix(tp=1, fn=2, fp=3, tn=4))
    m = bcm.models.multiclass_rows(batch, priors={"rows": "dirichlet:2,2,2"})
    assert np.all(m["rows_alpha"].get_value() == 2)


# -- fit: exact and NUTS, metrics and predictive groups ----------------------------
@pytest.mark.parametrize("name", BUILDERS)
def test_fit_groups(batch, name):
    m = BUILDERS[name](batch)
    idata = bcm.fit(m, sampler="exact", draws=200, chains=2, random_seed=3, predictive_n=50)
    post = idata.posterior
    assert post["theta"].dims == ("chain", "draw", "classifier", "actual", "predicted")
    np.testing.assert_allclose(post["theta"].sum(("actual", "predicted")), 1, atol=1e-12)
    for key in ("acc", "kappa", "mcc", "f1_macro", "ppv_weighted", "jaccard_micro"):
        assert post[key].dims == ("chain", "draw", "classifier")
    assert post["f1"].dims == ("chain", "draw", "classifier", "class")
    assert list(post["f1"]["class"].values) == LABELS
    assert "cells" not in post  # multiclass_cells keeps one copy: theta
    ppc = idata.posterior_predictive["counts"]
    assert ppc.dims == ("chain", "draw", "classifier", "actual", "predicted")
    assert np.all(ppc.sum(("actual", "predicted")).values == TABLES.sum(axis=(1, 2)))
    assert np.all(idata.predictions["counts"].sum(("actual", "predicted")) == 50)
    assert "f1_macro" in idata.posterior_predictive
    assert idata.observed_data["counts"].dims == ("classifier", "actual", "predicted")
    assert "theta" in idata.prior
    # the light path gives the same draws
    light = bcm.inference.fit_closed_form(name, batch, draws=200, chains=2, random_seed=3)
    np.testing.assert_allclose(light["posterior"]["theta"].values, post["theta"].values)
    np.testing.assert_allclose(light["posterior"]["f1_macro"].values, post["f1_macro"].values)
    # saving records the data: rebuild gives the model again
    again = bcm.models.get_family(name).rebuild(
        bcm.models.get_family(name).decode_data(
            bcm.models.get_family(name).encode_data(batch)), {}, {} if name.endswith(
            "cells") else {"prevalence": None})
    assert [v.name for v in again.free_RVs] == [v.name for v in m.free_RVs]


def test_fixed_prevalence(batch):
    pi = [0.2, 0.3, 0.5]
    m = bcm.models.multiclass_rows(batch, prevalence=pi)
    assert [v.name for v in m.free_RVs] == ["rows"]
    idata = bcm.fit(m, sampler="exact", draws=100, chains=2, random_seed=1, predictive_n=101)
    np.testing.assert_allclose(idata.posterior["prevalence"].values[..., :], np.broadcast_to(
        pi, (2, 100, 2, 3)))
    sizes = idata.predictions["counts"].sum("predicted").values
    assert np.all(sizes == np.array([20, 30, 51])) or np.all(sizes == np.array([20, 31, 50]))
    np.testing.assert_allclose(idata.posterior["theta"].sum("predicted"),
                               idata.posterior["prevalence"], atol=1e-12)
    assert idata.attrs["fixed_prevalence"]


# -- K = 2 reductions --------------------------------------------------------------
@pytest.mark.parametrize("cells", BINARY)
def test_k2_rows_is_three_beta(cells):
    rows, three, cr, c3 = _conjugates(cells, bcm.models.multiclass_rows, bcm.models.three_beta)
    # the conjugate posteriors are the same Betas (a Dirichlet of two is a Beta)
    np.testing.assert_array_equal(cr.dirichlets["prevalence"][:, 0], c3.betas["prevalence"][0])
    np.testing.assert_array_equal(cr.dirichlets["rows"][:, 0], np.stack(c3.betas["tpr"], -1))
    np.testing.assert_array_equal(cr.dirichlets["rows"][:, 1, ::-1],
                                  np.stack(c3.betas["tnr"], -1))
    kw = {"draws": 2500, "chains": 2, "predictive": False, "prior": False,
          "metrics": ["tpr", "tnr"]}
    ir = bcm.fit(rows, sampler="exact", random_seed=7, **kw).posterior
    i3 = bcm.fit(three, sampler="exact", random_seed=8, metrics=["tpr", "tnr"],
                 **{k: v for k, v in kw.items() if k != "metrics"}).posterior
    mapped = {"prevalence": ir["prevalence"].sel(actual="pos"),
              "tpr": ir["rows"].sel(actual="pos", predicted="pos"),
              "tnr": ir["rows"].sel(actual="neg", predicted="neg")}
    for name, draws in mapped.items():
        a, b = (float(np.ravel(v)[0]) for v in c3.betas[name])
        _beta_moments_ok(draws.values, a, b)
        _same_mean(draws.values, i3[name].values)  # and the two fits' draws agree
    # the multiclass registry's per-class recall of "pos" is three_beta's tpr
    np.testing.assert_allclose(ir["tpr"].sel({"class": "pos"}), mapped["tpr"], rtol=1e-5)


@pytest.mark.parametrize("cells", BINARY)
def test_k2_cells_is_dirichlet_multinomial(cells):
    mcm, dm, cc, cd = _conjugates(cells, bcm.models.multiclass_cells,
                                  bcm.models.dirichlet_multinomial)
    # actual-major cells: (pos, pos), (pos, neg), (neg, pos), (neg, neg) = tp, fn, fp, tn
    np.testing.assert_array_equal(cc.dirichlets["cells"], cd.dirichlets["theta"])
    kw = {"draws": 2500, "chains": 2, "predictive": False, "prior": False}
    ic = bcm.fit(mcm, sampler="exact", random_seed=7, metrics=["acc"], **kw).posterior
    idm = bcm.fit(dm, sampler="exact", random_seed=8, metrics=["acc"], **kw).posterior
    alpha = cd.dirichlets["theta"][0]
    flat = ic["theta"].values.reshape(*ic["theta"].shape[:3], 4)
    for i, cell in enumerate(("tp", "fn", "fp", "tn")):
        _beta_moments_ok(flat[..., i], alpha[i], alpha.sum() - alpha[i])
        _same_mean(flat[..., i], idm["theta"].sel(cell=cell).values)
    np.testing.assert_allclose(ic["acc"], flat[..., 0] + flat[..., 3], rtol=1e-5)


@pytest.mark.parametrize("cells", [BINARY[0], BINARY[2]])
def test_k2_reductions_under_nuts(cells):
    """NUTS on the multiclass models gives three_beta's and dirichlet_multinomial's
    exact Beta marginals (zero cells included)."""
    cm = bcm.ConfusionMatrix(*cells)
    mc = bcm.MulticlassConfusionMatrix.from_binary(cm, labels=("pos", "neg"))
    kw = {"draws": 1000, "tune": 500, "chains": 2, "random_seed": 4, "predictive": False,
          "prior": False, "metrics": ["acc"]}
    post = bcm.fit(bcm.models.multiclass_rows(mc), **kw).posterior
    three = bcm.models.three_beta(cm)
    c3 = bcm.models.family_of(three).conjugate(three, bcm.models.spec_of(three))
    for name, draws in {"prevalence": post["prevalence"].sel(actual="pos"),
                        "tpr": post["rows"].sel(actual="pos", predicted="pos"),
                        "tnr": post["rows"].sel(actual="neg", predicted="neg")}.items():
        a, b = (float(np.ravel(v)[0]) for v in c3.betas[name])
        mcse = float(az.mcse(draws.squeeze("classifier", drop=True).to_dataset(name="x"))["x"])
        assert abs(float(draws.mean()) - a / (a + b)) < Z * mcse
    post = bcm.fit(bcm.models.multiclass_cells(mc), **kw).posterior
    alpha = np.asarray(cells, float) + 1
    flat = post["theta"].stack(pair=("actual", "predicted")).squeeze("classifier", drop=True)
    for i in range(4):
        x = flat.isel(pair=i, drop=True).drop_vars(["actual", "predicted"], errors="ignore")
        mcse = float(az.mcse(x.to_dataset(name="x"))["x"])
        assert abs(float(x.mean()) - alpha[i] / alpha.sum()) < Z * mcse


# -- exact marginals ---------------------------------------------------------------
def _hdi_tolerance(a: float, b: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Z times the Monte Carlo sd of the sampled HDI's endpoints for n draws of Beta(a, b)
    (the estimator's own spread, from 200 replicate samples: an HDI endpoint varies
    more than a fixed quantile, because the window slides)."""
    rng = np.random.default_rng(0)
    lo, hi = bcm.stats.hdi(rng.beta(a, b, size=(200, n)), axis=-1)
    return Z * lo.std(), Z * hi.std()


def test_exact_marginals(batch):
    n = 4 * 5000
    kw = {"sampler": "exact", "draws": 5000, "chains": 4, "random_seed": 11,
          "predictive": False, "prior": False}
    rows = bcm.models.multiclass_rows(batch, priors={"rows": Dirichlet((2, 1, 0.5))})
    post = bcm.fit(rows, metrics=["tpr"], **kw).posterior
    beta = np.array([2, 1, 0.5])
    for c, name in enumerate(batch.classifiers):
        for k, label in enumerate(LABELS):
            a = beta[k] + TABLES[c, k, k]
            b = beta.sum() - beta[k] + TABLES[c, k].sum() - TABLES[c, k, k]
            if a < 1 or b < 1:
                continue  # beta_hdi needs both shapes >= 1
            lo, hi = (float(v) for v in beta_hdi(a, b))
            slo, shi = bcm.stats.hdi(post["tpr"].sel(classifier=name, **{"class": label})
                                     .values.ravel())
            tlo, thi = _hdi_tolerance(a, b, n)
            assert abs(float(slo) - lo) < tlo and abs(float(shi) - hi) < thi
    cells = bcm.models.multiclass_cells(batch)  # default: Dirichlet(4/9) on each of 9 cells
    post = bcm.fit(cells, metrics=["acc"], **kw).posterior
    for c, name in enumerate(batch.classifiers):
        diag = np.trace(TABLES[c])
        # acc | C ~ Beta(sum of the diagonal's alpha + C, the rest): 3 x 4/9 and 6 x 4/9
        a, b = 3 * 4 / 9 + diag, 6 * 4 / 9 + TABLES[c].sum() - diag
        lo, hi = (float(v) for v in beta_hdi(a, b))
        slo, shi = bcm.stats.hdi(post["acc"].sel(classifier=name).values.ravel())
        tlo, thi = _hdi_tolerance(a, b, n)
        assert abs(float(slo) - lo) < tlo and abs(float(shi) - hi) < thi


# -- NUTS against exact ------------------------------------------------------------
@pytest.mark.parametrize("name", BUILDERS)
def test_nuts_agrees_with_exact(batch, name):
    m = BUILDERS[name](batch)
    kw = {"draws": 1000, "chains": 2, "random_seed": 2, "predictive": False, "prior": False,
          "metrics": ["acc", "f1_macro"]}
    nuts = bcm.fit(m, tune=500, **kw)
    assert nuts.attrs["engine"] == "bayescm-kernel"
    exact = bcm.fit(m, sampler="exact", **kw).posterior
    for var in ("theta", "f1_macro"):
        mcse = az.mcse(nuts.posterior[[var]])[var]
        n_exact = exact[var].sizes["chain"] * exact[var].sizes["draw"]
        se = np.sqrt(mcse**2 + exact[var].var(("chain", "draw")) / n_exact)
        diff = abs(nuts.posterior[var].mean(("chain", "draw")) - exact[var].mean(("chain", "draw")))
        assert bool((diff < Z * se).all()), (var, float((diff / se).max()))
