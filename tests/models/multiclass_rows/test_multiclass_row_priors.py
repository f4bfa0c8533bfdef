"""Per-class row priors of multiclass_rows: a K×K matrix of Dirichlet concentrations.

Row ``a`` of the matrix is the Dirichlet of actual class ``a``'s predicted-class
probabilities.  Checked against independent computations: three_beta's conjugate
Betas at K = 2, scipy's Beta for each class's recall (aggregation property of the
Dirichlet), the PyMC model's own log density, and the JAGS twin.

Tolerances follow from Monte Carlo error: a mean of n i.i.d. draws is within
Z = 4.5 standard errors sd / sqrt(n) (two-sided normal tail 7e-6 per comparison);
NUTS draws use ArviZ's MCSE; "X is Beta(a, b)" is a Kolmogorov-Smirnov test with
p > 1e-4 (at n = 8,000 it detects a shift of the CDF by about 0.05).
"""

from __future__ import annotations

import arviz as az
import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import bayescm as bcm
from bayescm.priors import Beta, Dirichlet, PriorError
from tests.models.test_models import assert_kernel_is_model

Z = 4.5
P_KS = 1e-4
LABELS = ["cat", "dog", "bird"]
TABLES = np.array([[[5, 1, 0], [2, 7, 1], [0, 3, 9]],
                   [[12, 0, 3], [0, 0, 4], [1, 2, 20]]])
# asymmetric, favouring the diagonal unevenly, with a zero where the counts are positive
# (a Haldane-type concentration whose row posterior is proper)
BETA = np.array([[6.0, 1.0, 0.5], [2.0, 9.0, 1.0], [0.5, 1.0, 4.0]])
BETA_ZERO = np.array([[0.0, 1.0, 1.0], [1.0, 2.0, 0.0], [1.0, 1.0, 1.0]])
EXACT = {"sampler": "exact", "chains": 2, "draws": 4000, "predictive": False, "metrics": []}


@pytest.fixture(scope="module")
def batch():
    return bcm.MulticlassConfusionMatrix(TABLES, labels=LABELS, classifier=["a", "b"])


def _conj(model):
    return bcm.models.family_of(model).conjugate(model, bcm.models.spec_of(model))


def _flat(da) -> np.ndarray:
    return da.transpose("chain", "draw", ...).values.reshape(-1)


def _is_beta(x: np.ndarray, a: float, b: float) -> None:
    x = np.ravel(x)
    assert sps.kstest(x, sps.beta(a, b).cdf).pvalue > P_KS, (a, b)
    assert abs(x.mean() - sps.beta(a, b).mean()) < Z * x.std() / np.sqrt(x.size), (a, b)


# -- K = 2: three_beta with any Beta priors ------------------------------------------
@pytest.mark.parametrize("cells", [(26, 0, 2, 6), (10, 3, 4, 0)])
@pytest.mark.parametrize("tpr, tnr", [((20, 4), (20, 4)), ((20, 4), (3, 7))])
def test_k2_matrix_is_three_beta(cells, tpr, tnr):
    """Rows [[tpr_a, tpr_b], [tnr_b, tnr_a]] (actual pos: predicted pos, neg; actual neg:
    predicted pos, neg) is three_beta with tpr ~ Beta(tpr) and tnr ~ Beta(tnr)."""
    cm = bcm.ConfusionMatrix(*cells)
    mc = bcm.MulticlassConfusionMatrix.from_binary(cm, labels=("pos", "neg"))
    rows = bcm.models.multiclass_rows(mc, priors={"rows": [[tpr[0], tpr[1]],
                                                           [tnr[1], tnr[0]]]})
    three = bcm.models.three_beta(cm, priors={"tpr": Beta(*tpr), "tnr": Beta(*tnr)})
    cr, c3 = _conj(rows), _conj(three)
    np.testing.assert_array_equal(cr.dirichlets["rows"][:, 0], np.stack(c3.betas["tpr"], -1))
    np.testing.assert_array_equal(cr.dirichlets["rows"][:, 1, ::-1],
                                  np.stack(c3.betas["tnr"], -1))
    np.testing.assert_array_equal(cr.dirichlets["prevalence"][:, 0], c3.betas["prevalence"][0])
    post = bcm.fit(rows, random_seed=7, **EXACT).posterior
    ref = bcm.fit(three, random_seed=8, **EXACT).posterior
    for name, draws in {"tpr": post["rows"].sel(actual="pos", predicted="pos"),
                        "tnr": post["rows"].sel(actual="neg", predicted="neg")}.items():
        a, b = (float(np.ravel(v)[0]) for v in c3.betas[name])
        _is_beta(_flat(draws), a, b)
        # the two fits' draws agree: Z standard errors of the difference of two means
        x, y = _flat(draws), _flat(ref[name])
        assert abs(x.mean() - y.mean()) < Z * np.sqrt(x.var() / x.size + y.var() / y.size)


def test_k2_diagonal_is_tpr_and_tnr_beta():
    assert Dirichlet.diagonal(2, correct=20, wrong=4) == Dirichlet([[20, 4], [4, 20]])


# -- K = 3: exact posterior and prior recall ------------------------------------------
def test_k3_exact_recall_is_beta(batch):
    """recall_a | C ~ Beta(beta_aa + C_aa, sum_{p != a} beta_ap + C_ap); per classifier,
    a matrix (given as an array) for one and a shared 1-d prior for the other."""
    shared = np.array([2.0, 1.0, 0.5])
    m = bcm.models.multiclass_rows(batch, priors={"rows": {"a": BETA, "b": Dirichlet(shared)}})
    post = bcm.fit(m, random_seed=3, **EXACT).posterior
    for c, (name, beta) in enumerate([("a", BETA), ("b", np.tile(shared, (3, 1)))]):
        for k, label in enumerate(LABELS):
            row = beta[k] + TABLES[c, k]
            draws = post["rows"].sel(classifier=name, actual=label, predicted=label)
            _is_beta(_flat(draws), row[k], row.sum() - row[k])


def test_diagonal_prior_recall_is_beta():
    """A priori each class's recall is Beta(correct, (K - 1) wrong) (Dirichlet.diagonal's
    docstring), checked on the family's prior draws at K = 4."""
    labels = list("wxyz")
    mc = bcm.MulticlassConfusionMatrix(np.eye(4, dtype=int) * 5 + 1, labels=labels)
    m = bcm.models.multiclass_rows(mc, priors={"rows": Dirichlet.diagonal(labels, correct=6,
                                                                         wrong=0.5)})
    prior = bcm.fit(m, random_seed=4, prior=True, **EXACT).prior
    for label in labels:
        _is_beta(_flat(prior["rows"].sel(actual=label, predicted=label)), 6, 1.5)


# -- the compiled kernel and NUTS ------------------------------------------------------
def test_kernel_is_the_pymc_posterior_with_a_matrix_prior(batch):
    """Per-classifier matrices, one with a Haldane-type zero (the PyMC model then writes
    the rows' prior as a potential); compiling the model's logp takes most of the time."""
    m = bcm.models.multiclass_rows(batch, priors={"rows": {"a": BETA, "b": BETA_ZERO},
                                                  "prevalence": Dirichlet((2, 1, 0.5))})
    np.testing.assert_array_equal(m["rows_alpha"].get_value(), np.stack([BETA, BETA_ZERO]))
    assert_kernel_is_model(m, bcm.models.family_of(m).kernel(m, bcm.models.spec_of(m)), 10)


def test_nuts_with_a_matrix_prior_agrees_with_exact(batch):
    m = bcm.models.multiclass_rows(batch, priors={"rows": BETA})
    nuts = bcm.fit(m, draws=1000, tune=500, chains=2, random_seed=2, predictive=False,
                   prior=False, metrics=[])
    assert nuts.attrs["engine"] == "bayescm-kernel"
    rows = nuts.posterior["rows"]
    post = BETA + TABLES  # the exact Dirichlet posterior of every row
    mean = post / post.sum(axis=-1, keepdims=True)
    mcse = az.mcse(nuts.posterior[["rows"]])["rows"].values
    diff = np.abs(rows.mean(("chain", "draw")).values - mean)
    assert np.all(diff < Z * mcse), (diff / mcse).max()


# -- backwards compatibility -----------------------------------------------------------
def test_one_row_for_all_is_unchanged(batch):
    """A 1-d prior is the same matrix repeated: identical model data, seeded draws and a
    record that still shows the 1-d prior."""
    shared = (2.0, 1.0, 0.5)
    one = bcm.models.multiclass_rows(batch, priors={"rows": Dirichlet(shared)})
    mat = bcm.models.multiclass_rows(batch, priors={"rows": [shared] * 3})
    np.testing.assert_array_equal(one["rows_alpha"].get_value(),
                                  np.broadcast_to(shared, (2, 3, 3)))
    np.testing.assert_array_equal(one["rows_alpha"].get_value(), mat["rows_alpha"].get_value())
    kw = {**EXACT, "draws": 200, "metrics": ["acc"]}
    a = bcm.fit(one, random_seed=5, **kw)
    b = bcm.fit(mat, random_seed=5, **kw)
    for var in ("prevalence", "rows", "acc"):
        np.testing.assert_array_equal(a.posterior[var], b.posterior[var])
    assert "Dirichlet(2, 1, 0.5)" in a.attrs["priors"]
    assert "Dirichlet([[2, 1, 0.5], [2, 1, 0.5], [2, 1, 0.5]])" in b.attrs["priors"]


# -- labels and errors -----------------------------------------------------------------
def test_dataframe_prior_is_matched_by_label(batch):
    order = ["bird", "cat", "dog"]  # rows and columns in another order, columns differently
    frame = pd.DataFrame(BETA, index=LABELS, columns=LABELS).loc[order, order[::-1]]
    for spec in (frame, Dirichlet(frame), {"a": frame, "b": frame}):
        m = bcm.models.multiclass_rows(batch, priors={"rows": spec})
        np.testing.assert_array_equal(m["rows_alpha"].get_value(), np.stack([BETA, BETA]))
    diag = Dirichlet.diagonal(order, correct=5, wrong=1)
    m = bcm.models.multiclass_rows(batch, priors={"rows": diag})
    np.testing.assert_array_equal(m["rows_alpha"].get_value()[0], 4 * np.eye(3) + 1)


@pytest.mark.parametrize("priors, match", [
    ({"rows": [[1, 1], [1, 1]]}, "needs a 3×3 matrix"),
    ({"rows": [[1, 1, 1], [1, 1, 1]]}, "K×K"),
    ({"rows": [[1, 1, 1], [1, 1], [1, 1, 1]]}, "rows of equal length"),
    ({"rows": [[1, 1, 1], [1, -1, 1], [1, 1, 1]]}, ">= 0"),
    ({"rows": pd.DataFrame(np.ones((3, 3)), index=["cat", "dog", "fish"],
                           columns=["cat", "dog", "fish"])}, "classes are"),
    ({"rows": pd.DataFrame(np.ones((3, 3)), index=LABELS, columns=["cat", "dog", "x"])},
     "same class labels"),
    ({"rows": Dirichlet.diagonal(["cat", "dog"], correct=2, wrong=1)}, "needs a 3×3"),
    ({"prevalence": [[1, 1, 1]] * 3}, "only a parameter made of one Dirichlet per row"),
    ({"prevalence": Dirichlet.diagonal(3, correct=2, wrong=1)}, "takes a matrix"),
    # a zero concentration where the row has no count: improper, named by row
    ({"rows": [[1, 1, 1], [1, 0, 1], [1, 1, 1]]}, r"'rows\[dog\]' for classifier 'b'"),
])
def test_matrix_prior_errors(batch, priors, match):
    with pytest.raises(PriorError, match=match):
        bcm.models.multiclass_rows(batch, priors=priors)


def test_other_models_refuse_a_matrix():
    cm = bcm.ConfusionMatrix(tp=5, fn=1, fp=2, tn=7)
    with pytest.raises(PriorError, match="takes a matrix"):
        bcm.models.dirichlet_multinomial(cm, priors={"theta": Dirichlet([[1, 1], [1, 1]])})
    mc = bcm.MulticlassConfusionMatrix([[5, 1], [2, 7]], labels=["x", "y"])
    with pytest.raises(PriorError, match="takes a matrix"):
        bcm.models.multiclass_cells(mc, priors={"theta": [[1, 1], [1, 1]]})


# -- save, load, rebuild ---------------------------------------------------------------
def test_matrix_prior_round_trips(batch, tmp_path):
    frame = pd.DataFrame(BETA, index=LABELS, columns=LABELS).iloc[::-1, ::-1]
    m = bcm.models.multiclass_rows(batch, priors={"rows": {"a": frame},
                                                  "prevalence": Dirichlet((2, 1, 0.5))})
    idata = bcm.fit(m, random_seed=1, **{**EXACT, "draws": 100})
    back = bcm.rebuild(bcm.load(bcm.save(idata, tmp_path / "fit.nc")))
    for name in ("rows_alpha", "prevalence_alpha", "counts_data"):
        np.testing.assert_array_equal(back[name].get_value(), m[name].get_value())
    np.testing.assert_array_equal(back["rows_alpha"].get_value()[0], BETA)
    assert bcm.models.spec_of(back).priors == bcm.models.spec_of(m).priors


# -- the JAGS twin ---------------------------------------------------------------------
@pytest.mark.engine("jags")
def test_jags_twin_with_a_matrix_prior_agrees_with_exact(batch):
    """Means and 95 % HDIs of prevalence, theta, recall, accuracy and macro-F1 within Z
    combined MCSEs (the derivation is in tests/models/test_multiclass_jags.py)."""
    from bayescm.inference import jags
    from tests.models.test_multiclass_jags import N_EXACT, z_scores_of

    m = bcm.models.multiclass_rows(batch, priors={
        "rows": {"a": BETA, "b": Dirichlet.diagonal(LABELS, correct=5, wrong=0.5)}})
    twin = jags.fit_twin(m, chains=2, draws=3000, burn=500, seed=5)
    data = bcm.models.family_of(m).jags.data(m, bcm.models.spec_of(m))
    np.testing.assert_array_equal(data["rows_alpha"][1], 4.5 * np.eye(3) + 0.5)
    exact = bcm.fit(m, sampler="exact", chains=N_EXACT[0], draws=N_EXACT[1], random_seed=6,
                    predictive=False, prior=False, metrics=[]).posterior
    scores = z_scores_of(twin.posterior, exact, "rows_matrix")
    assert len(scores) >= 3 * 2 * (9 + 3 + 3 + 2)
    worst = max(scores, key=scores.get)
    assert scores[worst] < Z, (worst, scores[worst])


# -- the model card's statements about matrix priors -----------------------------------
def test_card_prior_moments_with_a_matrix(batch):
    """E[ba] = mean_k beta_kk / B_k, E[acc] = sum_k alpha_k beta_kk / (A B_k) and the card's
    E[acc^2], on the family's i.i.d. prior draws (n = 8,000; a mean within Z SEs)."""
    alpha = np.array([2.0, 1.0, 0.5])
    m = bcm.models.multiclass_rows(batch, priors={"rows": BETA, "prevalence": Dirichlet(alpha)})
    prior = bcm.fit(m, random_seed=9, prior=True, **EXACT).prior.isel(classifier=0)
    theta = prior["theta"].transpose("chain", "draw", ...).values.reshape(-1, 3, 3)
    recall = np.diagonal(prior["rows"].transpose("chain", "draw", ...).values
                         .reshape(-1, 3, 3), axis1=1, axis2=2)
    acc = np.trace(theta, axis1=1, axis2=2)
    a_sum, b_row, d = alpha.sum(), BETA.sum(axis=1), np.diag(BETA)
    second = (np.sum(alpha * (alpha + 1) * d * (d + 1) / (b_row * (b_row + 1)))
              + np.sum(np.outer(alpha * d / b_row, alpha * d / b_row))
              - np.sum((alpha * d / b_row) ** 2)) / (a_sum * (a_sum + 1))
    for x, value in ((recall.mean(axis=1), np.mean(d / b_row)),
                     (acc, np.sum(alpha * d / b_row) / a_sum), (acc**2, second)):
        assert abs(x.mean() - value) < Z * x.std() / np.sqrt(x.size), (x.mean(), value)


def test_matrix_rows_is_cells_with_the_same_matrix(batch):
    """rows = beta with prevalence Dirichlet(row totals of beta) is multiclass_cells with
    gamma = beta: each cell is Beta(beta_ap + C_ap, rest) a posteriori in both."""
    rows = bcm.models.multiclass_rows(batch, priors={"rows": BETA,
                                                     "prevalence": BETA.sum(axis=1).tolist()})
    cells = bcm.models.multiclass_cells(batch, priors={"theta": BETA.ravel().tolist()})
    for model, seed in ((rows, 1), (cells, 2)):
        theta = bcm.fit(model, random_seed=seed, **EXACT).posterior["theta"].isel(classifier=1)
        post = BETA + TABLES[1]
        for a, p in np.ndindex(3, 3):
            draws = _flat(theta.isel(actual=a, predicted=p))
            _is_beta(draws, post[a, p], post.sum() - post[a, p])
