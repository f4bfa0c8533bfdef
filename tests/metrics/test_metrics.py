import numpy as np
import pytest
import xarray as xr
from sklearn import metrics as skm

import bayescm as bcm
from bayescm import metrics as M

# The cocaine example by hand: tp=26, fn=0, fp=2, tn=6, N=34.
HAND = {
    "prevalence": 26 / 34, "bias": 28 / 34, "tpr": 1.0, "tnr": 0.75, "fpr": 0.25, "fnr": 0.0,
    "ppv": 26 / 28, "npv": 1.0, "fdr": 2 / 28, "for": 0.0, "acc": 32 / 34, "err": 2 / 34,
    "ba": 0.875, "f1": 52 / 54, "f2": 130 / 132, "mcc": 156 / np.sqrt(28 * 26 * 8 * 6),
    "bm": 0.75, "mk": 26 / 28, "jaccard": 26 / 28, "fm": np.sqrt(26 / 28),
    "gmean": np.sqrt(0.75), "lr_pos": 4.0, "lr_neg": 0.0,
    "kappa": 2 * 156 / (28 * 8 + 26 * 6), "pt": (np.sqrt(0.25) - 0.25) / 0.75,
    "ppv_bal": 1 / 1.25, "npv_bal": 1.0, "jaccard_bal": 1 / 1.25,
}


@pytest.mark.parametrize("key", sorted(HAND))
def test_hand_computed(key):
    assert M.evaluate(key, 26, 0, 2, 6) == pytest.approx(HAND[key], rel=1e-12)


def test_degenerate_denominators_are_nan():
    # dor needs fp*fn > 0; ppv needs a predicted positive; mcc needs non-empty margins
    assert np.isnan(M.evaluate("dor", 26, 0, 2, 6))
    assert np.isnan(M.evaluate("ppv", 0, 5, 0, 5))
    assert np.isnan(M.evaluate("mcc", 5, 0, 0, 0))
    assert M.evaluate("log_dor", 0, 1, 1, 1) == -np.inf


def test_counts_and_probabilities_agree():
    counts = np.array([31.0, 9, 13, 20])
    for key in M.names():
        assert M.evaluate(key, *counts) == pytest.approx(M.evaluate(key, *(counts / 73)),
                                                         rel=1e-12, nan_ok=True)


def test_registry_completeness_and_aliases():
    required = {"prevalence", "bias", "tpr", "tnr", "fpr", "fnr", "ppv", "npv", "fdr", "for",
                "acc", "ba", "f1", "mcc", "bm", "mk", "jaccard", "fm", "gmean", "lr_pos",
                "lr_neg", "dor", "log_dor", "kappa", "pt"}
    assert required <= set(M.names())
    assert M.get("Recall").key == "tpr" and M.get("informedness").key == "bm"
    with pytest.raises(KeyError, match="Known metrics"):
        M.get("auc")
    assert M.fbeta(1).formula(3, 1, 2, 4) == pytest.approx(M.evaluate("f1", 3, 1, 2, 4))


def _random_predictions(rng, n):
    y = rng.integers(0, 2, n)
    flip = rng.random(n) < rng.uniform(0.05, 0.5)
    return y, np.where(flip, 1 - y, y)


def test_point_values_equal_scikit_learn():
    rng = np.random.default_rng(0)
    for _ in range(50):
        y, p = _random_predictions(rng, int(rng.integers(5, 300)))
        cm = bcm.ConfusionMatrix.from_predictions(y, p)
        if min(cm.counts[0]) == 0:
            continue  # degenerate cells: documented NaN-vs-0 difference
        cells = cm.counts[0]
        got = {k: float(M.evaluate(k, *cells)) for k in M.names()}
        assert got["acc"] == pytest.approx(skm.accuracy_score(y, p))
        assert got["tpr"] == pytest.approx(skm.recall_score(y, p))
        assert got["tnr"] == pytest.approx(skm.recall_score(y, p, pos_label=0))
        assert got["ppv"] == pytest.approx(skm.precision_score(y, p))
        assert got["npv"] == pytest.approx(skm.precision_score(y, p, pos_label=0))
        assert got["f1"] == pytest.approx(skm.f1_score(y, p))
        assert got["f2"] == pytest.approx(skm.fbeta_score(y, p, beta=2))
        assert got["f05"] == pytest.approx(skm.fbeta_score(y, p, beta=0.5))
        assert got["mcc"] == pytest.approx(skm.matthews_corrcoef(y, p))
        assert got["ba"] == pytest.approx(skm.balanced_accuracy_score(y, p))
        assert got["kappa"] == pytest.approx(skm.cohen_kappa_score(y, p))
        assert got["jaccard"] == pytest.approx(skm.jaccard_score(y, p))
        lr_pos, lr_neg = skm.class_likelihood_ratios(y, p)
        assert got["lr_pos"] == pytest.approx(lr_pos)
        assert got["lr_neg"] == pytest.approx(lr_neg)
        assert got["bm"] == pytest.approx(skm.balanced_accuracy_score(y, p, adjusted=True))


def test_broadcasts_over_numpy_and_xarray():
    theta = np.random.default_rng(1).dirichlet(np.ones(4), size=(3, 5))
    da = xr.DataArray(theta, dims=("draw", "classifier", "cell"),
                      coords={"cell": ["tn", "fp", "fn", "tp"]})  # deliberately shuffled
    ds = M.compute(da, ["tpr", "mcc"])
    assert ds["tpr"].dims == ("draw", "classifier")
    expected = theta[..., 3] / (theta[..., 3] + theta[..., 2])
    np.testing.assert_allclose(ds["tpr"].values, expected)
    np.testing.assert_allclose(M.evaluate("tpr", theta[..., 3], theta[..., 2], theta[..., 1],
                                          theta[..., 0]), expected)
    with pytest.raises(ValueError, match="cell"):
        M.compute(da.rename(cell="x"))


def test_plug_in_frame(batch):
    frame = M.plug_in(batch, ["tpr", "tnr"])
    assert list(frame.index) == list(batch.classifiers)
    assert frame.loc["cocaine", "tnr"] == 0.75
