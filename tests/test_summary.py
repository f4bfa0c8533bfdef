import arviz as az
import numpy as np
import pytest

import bayescm as bcm
from bayescm.summary import hdi

from .conftest import fitted


def test_hdi_equals_arviz():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.beta(2, 9, (5, 4000)), rng.gamma(2.0, size=(5, 4000))])
    lo, hi = hdi(x, 0.9)
    for i in range(x.shape[0]):
        ref = az.hdi(x[i], hdi_prob=0.9)
        assert (lo[i], hi[i]) == pytest.approx(tuple(ref), abs=0, rel=0)


def test_summary_table():
    idata = fitted("three_beta", "exact")
    table = bcm.summary(idata, metrics=["tpr", "tnr", "sensitivity", "mcc"])
    # the original columns in their order, the new ones appended
    assert list(table.columns) == ["plug_in", "mean", "sd", "median", "hdi_lower",
                                   "hdi_upper", "hdi_width", "mcse_mean", "mcse_hdi_lower",
                                   "mcse_hdi_upper", "exact", "note"]
    assert table.index.names == ["classifier", "metric"]
    row = table.loc[("cocaine", "tnr")]
    assert row["plug_in"] == 0.75
    np.testing.assert_allclose(row["hdi_width"], row["hdi_upper"] - row["hdi_lower"])
    # TNR ~ Beta(7, 3) exactly: its statistics are the Beta's, not the draws'
    assert row["exact"] and row["note"] == "exact: Beta(7, 3)"
    assert row["mean"] == pytest.approx(0.7, abs=1e-12)
    assert row["sd"] == pytest.approx(np.sqrt(7 * 3 / (10**2 * 11)), abs=1e-12)
    assert (row["mcse_mean"], row["mcse_hdi_lower"], row["mcse_hdi_upper"]) == (0, 0, 0)
    # the sampled MCC: the draws' mean, with its Monte Carlo error
    mcc = table.loc[("cocaine", "mcc")]
    draws = idata.posterior["mcc"].sel(classifier="cocaine").values.ravel()
    assert not mcc["exact"] and mcc["note"] == ""
    assert mcc["mean"] == pytest.approx(draws.mean())
    assert mcc["sd"] == pytest.approx(draws.std(ddof=1))
    assert mcc["mcse_mean"] == pytest.approx(draws.std(ddof=1) / np.sqrt(draws.size))
    assert 0 < mcc["mcse_hdi_lower"] < 0.05 and 0 < mcc["mcse_hdi_upper"] < 0.05
    # the cocaine example of Tötsch & Hoffmann: TPR 89-100 %, TNR 43-95 % (95% HDI)
    assert table.loc[("cocaine", "tpr"), "hdi_lower"] == pytest.approx(0.05 ** (1 / 27), abs=1e-12)
    assert row["hdi_lower"] == pytest.approx(0.4324, abs=5e-4)
    assert row["hdi_upper"] == pytest.approx(0.9458, abs=5e-4)
    one = bcm.summary(idata, classifiers="mid", hdi_prob=0.5)
    assert set(one.index.get_level_values("classifier")) == {"mid"}
    assert (one["hdi_width"] < table.loc["mid"]["hdi_width"].reindex(
        one.loc["mid"].index).fillna(np.inf).values).all()


def test_summary_of_predictive_group_counts_undefined():
    idata = fitted("three_beta", "exact")
    t = bcm.summary(idata, group="posterior_predictive", metrics=["tnr", "ppv", "acc"])
    assert "undefined" in t.columns
    # the 'rare' matrix has 15 positives of 165: some replicates predict no positive
    assert t.loc[("rare", "ppv"), "undefined"] > 0
    assert t.loc[("rare", "acc"), "undefined"] == 0
    post = bcm.summary(idata, metrics=["tnr"])
    # predictive spread is wider than posterior spread (Tötsch & Hoffmann §1B)
    assert (t.xs("tnr", level="metric")["sd"] > post.xs("tnr", level="metric")["sd"]).all()


def test_summary_errors():
    idata = fitted("three_beta", "exact")
    with pytest.raises(KeyError, match="not in the data"):
        bcm.summary(idata, classifiers=["nope"])
    with pytest.raises(KeyError, match="Unknown metric"):
        bcm.summary(idata, metrics=["auc"])
    with pytest.raises(KeyError, match="no group"):
        bcm.summary(idata, group="predictions")
    with pytest.raises(ValueError, match="hdi_prob"):
        bcm.summary(idata, hdi_prob=1.5)
    # a clear TypeError naming what to pass, not "'int' object is not iterable"
    with pytest.raises(TypeError, match=r"metrics takes a name or a list of names .*'tpr'"):
        bcm.summary(idata, metrics=42)
    with pytest.raises(TypeError, match="classifiers takes a name"):
        bcm.summary(idata, classifiers=7)
    with pytest.raises(TypeError, match="metrics takes"):
        bcm.summary(idata, metrics=["tpr", 3])
    with pytest.raises(TypeError, match="metrics takes"):
        bcm.summary_exact(bcm.ConfusionMatrix(tp=5, fn=1, fp=2, tn=7), metrics=42)
