"""K-class metrics at a deployment class prevalence (analysis.at_prevalence)."""

import functools

import numpy as np
import pytest
import xarray as xr
from scipy import stats
from sklearn import metrics as skm

import bayescm as bcm
from bayescm import idata as idata_mod
from bayescm.analysis import at_prevalence

LABELS = ["cat", "dog", "bird"]
TABLE = np.array([[50, 3, 2], [4, 40, 6], [1, 2, 30]])
SHARES = np.array([0.7, 0.2, 0.1])


@functools.cache
def fitted(family: str):
    mc = bcm.MulticlassConfusionMatrix(np.stack([TABLE, TABLE.T]), LABELS,
                                       classifier=["a", "b"])
    m = getattr(bcm.models, family)(mc)
    return bcm.fit(m, sampler="exact", draws=500, chains=2, random_seed=3,
                   metrics=["tpr", "ppv", "acc", "kappa", "f1_macro"], predictive=False,
                   prior=False)


def recall_rows(idata):
    """Rows of predicted-class probabilities, and recall from the fit's own metric."""
    theta = idata.posterior["theta"]
    return theta / theta.sum("predicted"), idata.posterior["tpr"]


@pytest.mark.parametrize("family", ["multiclass_rows", "multiclass_cells"])
def test_recall_unchanged_accuracy_and_precision_follow_the_prevalence(family):
    idata = fitted(family)
    rows, recall = recall_rows(idata)
    out = at_prevalence(idata, SHARES, metrics=["tpr", "ppv", "acc", "f1_macro"]).posterior
    # recall is a property of the rows: the fit's float32 values to float32 precision
    xr.testing.assert_allclose(out["tpr"], recall.astype(float), rtol=1e-6)
    p = xr.DataArray(SHARES, dims="actual", coords={"actual": LABELS})
    # accuracy at the deployment prevalence = sum_k p_k recall_k, draw by draw
    acc = (recall.rename({"class": "actual"}) * p).sum("actual")
    np.testing.assert_allclose(out["acc"], acc.transpose(*out["acc"].dims), rtol=1e-5)
    # precision of class j = p_j rho_jj / sum_i p_i rho_ij
    col = (p * rows).sum("actual").rename({"predicted": "class"})
    ppv = p.rename({"actual": "class"}) * recall / col
    np.testing.assert_allclose(out["ppv"], ppv.transpose(*out["ppv"].dims), rtol=1e-5)
    assert out["prevalence"].dims == ("chain", "draw", "classifier", "actual")
    np.testing.assert_allclose(out["prevalence"].isel(chain=0, draw=0, classifier=1), SHARES)
    # the rare class's precision falls: bird is 24% of the cases of a, 10% at deployment
    a = dict(classifier="a", **{"class": "bird"})
    assert float(out["ppv"].sel(a).mean()) < float(idata.posterior["ppv"].sel(a).mean()) - 0.1
    by_label = at_prevalence(idata, dict(zip(LABELS[::-1], SHARES[::-1], strict=True)),
                             metrics=["acc"]).posterior
    xr.testing.assert_allclose(by_label["acc"], out["acc"])


def test_own_prevalence_draws_give_back_the_fit():
    # deploying multiclass_rows at its own posterior prevalence draws reproduces theta
    idata = fitted("multiclass_rows")
    one = idata.posterior.sel(classifier="a")
    draws = one["prevalence"].transpose("chain", "draw", "actual").values
    out = at_prevalence(idata, draws, metrics=["ppv", "kappa", "f1_macro"]).posterior
    for key in ("ppv", "kappa", "f1_macro"):
        np.testing.assert_allclose(out[key].sel(classifier="a"), one[key], rtol=2e-6)


def test_two_classes_equal_the_binary_deployment():
    # K = 2, labels (positive, negative): rows are (TPR, 1 - TPR) and (1 - TNR, TNR); the
    # binary at_prevalence on the same TPR/TNR draws gives the same metrics, draw by draw
    cm = bcm.ConfusionMatrix(tp=26, fn=4, fp=2, tn=6)
    mc = bcm.MulticlassConfusionMatrix.from_binary(cm, labels=("pos", "neg"))
    idata = bcm.fit(bcm.models.multiclass_cells(mc), sampler="exact", draws=300, chains=2,
                    random_seed=1, metrics=["acc"], predictive=False, prior=False)
    theta = idata.posterior["theta"]
    rows = theta / theta.sum("predicted")
    rates = xr.Dataset({"tpr": rows.sel(actual="pos", predicted="pos", drop=True),
                        "tnr": rows.sel(actual="neg", predicted="neg", drop=True)})
    binary = at_prevalence(idata_mod.make({"posterior": rates}), 0.05,
                           metrics=["ppv", "npv", "acc", "mcc", "kappa"]).posterior
    multi = at_prevalence(idata, {"pos": 0.05, "neg": 0.95},
                          metrics=["ppv", "npv", "acc", "mcc", "kappa"]).posterior
    pos = multi.sel({"class": "pos"}, drop=True)
    for key in ("ppv", "npv", "acc", "mcc", "kappa"):
        value = pos[key] if "class" in multi[key].dims else multi[key]
        np.testing.assert_allclose(value, binary[key].transpose(*value.dims), rtol=1e-9,
                                   err_msg=key)


def test_plug_in_equals_scikit_learn_reweighting():
    rng = np.random.default_rng(7)
    k = 4
    counts = rng.integers(0, 30, size=(k, k)) + np.diag(rng.integers(20, 60, size=k))
    counts[1, 3] = 0  # a zero cell
    p = rng.dirichlet(np.ones(k))
    # one "draw" whose theta is the observed table: the metrics are plug-in values
    theta = xr.DataArray((counts / counts.sum())[None, None, None], dims=(
        "chain", "draw", "classifier", "actual", "predicted"),
        coords={"actual": list(range(k)), "predicted": list(range(k)), "classifier": ["x"]})
    fake = idata_mod.make({"posterior": xr.Dataset({"theta": theta})})
    keys = ["acc", "ba", "kappa", "mcc", "ppv", "tpr", "f1", "f1_macro", "f1_weighted",
            "ppv_macro", "ppv_weighted"]
    out = at_prevalence(fake, p, metrics=keys).posterior.isel(chain=0, draw=0, classifier=0)
    # scikit-learn on the cases, each case of actual class i weighted by p_i / r_i
    y_true = np.repeat(np.repeat(np.arange(k), k), counts.ravel())
    y_pred = np.repeat(np.tile(np.arange(k), k), counts.ravel())
    w = (p / counts.sum(axis=1))[y_true]
    kw = {"sample_weight": w}
    ref = {
        "acc": skm.accuracy_score(y_true, y_pred, **kw),
        "ba": skm.balanced_accuracy_score(y_true, y_pred, **kw),
        "kappa": skm.cohen_kappa_score(y_true, y_pred, sample_weight=w),
        "mcc": skm.matthews_corrcoef(y_true, y_pred, **kw),
        "ppv": skm.precision_score(y_true, y_pred, average=None, **kw),
        "tpr": skm.recall_score(y_true, y_pred, average=None, **kw),
        "f1": skm.f1_score(y_true, y_pred, average=None, **kw),
        "f1_macro": skm.f1_score(y_true, y_pred, average="macro", **kw),
        "f1_weighted": skm.f1_score(y_true, y_pred, average="weighted", **kw),
        "ppv_macro": skm.precision_score(y_true, y_pred, average="macro", **kw),
        "ppv_weighted": skm.precision_score(y_true, y_pred, average="weighted", **kw),
    }
    for key, value in ref.items():
        np.testing.assert_allclose(out[key].values, value, rtol=1e-10, err_msg=key)
    # recall (hence balanced accuracy) does not depend on the prevalence at all
    assert ref["ba"] == pytest.approx(np.mean(np.diag(counts) / counts.sum(axis=1)))


def test_dirichlet_prevalence_and_a_confusion_matrix():
    mc = bcm.MulticlassConfusionMatrix(TABLE, LABELS)
    alpha = np.array([14.0, 4.0, 2.0])
    out = at_prevalence(mc, bcm.priors.Dirichlet(alpha), metrics=["acc", "tpr"],
                        random_seed=2).posterior.sel(classifier="cm")
    n = out.sizes["chain"] * out.sizes["draw"]
    assert n == 4000
    pi = out["prevalence"]
    # Dirichlet means alpha / sum(alpha), within 4 Monte Carlo standard errors
    dist = stats.dirichlet(alpha)
    se = np.sqrt(dist.var() / n)
    assert np.all(np.abs(pi.mean(("chain", "draw")).values - dist.mean()) < 4 * se)
    # recall of a MulticlassConfusionMatrix under the default rows Dirichlet(2/K):
    # Beta(2/K + C_kk, 2 (K - 1)/K + r_k - C_kk)
    r, k = TABLE.sum(axis=1), len(LABELS)
    beta = stats.beta(2 / k + np.diag(TABLE), 2 * (k - 1) / k + r - np.diag(TABLE))
    recall = out["tpr"].rename({"class": "actual"})
    assert np.all(np.abs(recall.mean(("chain", "draw")).values - beta.mean())
                  < 4 * beta.std() / np.sqrt(n))
    np.testing.assert_allclose(out["acc"], (pi * recall).sum("actual"), rtol=1e-12)
    # the same through scipy's frozen Dirichlet and the string form
    for spec in (stats.dirichlet(alpha), "dirichlet:14,4,2"):
        other = at_prevalence(mc, spec, metrics=["acc"], random_seed=2).posterior
        assert float(other["prevalence"].mean(("chain", "draw")).sel(
            classifier="cm", actual="cat")) == pytest.approx(0.7, abs=4 * se[0])


@pytest.mark.parametrize("bad, match", [
    ([0.5, 0.5], "3 shares"),
    ([0.5, 0.3, 0.3], r"sum to 1.*Dirichlet"),
    ([0.9, 0.2, -0.1], "positive"),
    ({"cat": 0.5, "dog": 0.5}, "no share for class 'bird'"),
    ({"cat": 0.5, "dog": 0.3, "bird": 0.1, "fish": 0.1}, "fish"),
    (0.3, "3 shares"),
    (np.full((2, 5, 3), 1 / 3), "draws have shape"),
    (bcm.priors.Dirichlet((1, 1)), "3 concentrations"),
    (bcm.priors.Dirichlet((0, 1, 1)), "proper"),
])
def test_bad_prevalence_gets_a_clear_error(bad, match):
    mc = bcm.MulticlassConfusionMatrix(TABLE, LABELS)
    with pytest.raises(ValueError, match=match):
        at_prevalence(mc, bad)
