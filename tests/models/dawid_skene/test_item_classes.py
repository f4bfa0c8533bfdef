"""bcm.analysis.item_classes: each item's class probabilities from a Dawid–Skene fit.

The result is checked against a direct computation from the posterior draws, item by
item and draw by draw, written from the definition (no collapsing, no chunks):
:math:`q_{ic} \\propto \\pi_c \\prod_{r,l} \\theta_{rcl}^{n_{irl}}`, 1 for a gold item's
class; its mean, HDI (bayescm's one HDI) and Monte Carlo standard error (ArviZ's).
"""

from __future__ import annotations

import functools
import importlib

import arviz as az
import numpy as np
import pandas as pd
import pytest
from scipy.special import softmax

import bayescm as bcm
from bayescm.analysis import ItemClasses, item_classes
from bayescm.data.datasets_ratings import anaesthesia_table


@functools.cache
def fitted():
    rt = bcm.RatingsTable.from_long(anaesthesia_table(), gold={1: 1, 36: 4},
                                    labels=[1, 2, 3, 4])
    model = bcm.models.dawid_skene(rt)
    return rt, model, bcm.fit(model, draws=1000, tune=1000, chains=2, random_seed=2,
                              predictive=False, prior=False)


def direct(rt, post) -> np.ndarray:
    """(chain, draw, item, class) from the definition."""
    prev = post["prevalence"].transpose("chain", "draw", "class").values
    conf = post["confusion"].transpose("chain", "draw", "rater", "actual", "predicted").values
    counts = rt.counts.astype(float)
    joint = np.log(prev)[:, :, None, :] + np.einsum("irl,cdrkl->cdik", counts, np.log(conf))
    for i, g in enumerate(rt.gold_index):
        if g >= 0:
            joint[:, :, i, np.arange(rt.n_classes) != g] = -np.inf
    return softmax(joint, axis=-1)


def test_item_classes_equal_the_definition():
    rt, _, idata = fitted()
    res = item_classes(idata, hdi_prob=0.9)
    q = direct(rt, idata.posterior)
    assert isinstance(res, ItemClasses) and res.mean.shape == (45, 4)
    assert list(res.mean.index) == list(rt.items) and list(res.mean.columns) == [1, 2, 3, 4]
    np.testing.assert_allclose(res.mean.values, q.mean(axis=(0, 1)), rtol=1e-10, atol=1e-12)
    lo, hi = bcm.stats.hdi(q.reshape(-1, 45, 4), 0.9, axis=0)
    np.testing.assert_allclose(res.hdi_lower.values, lo, atol=1e-12)
    np.testing.assert_allclose(res.hdi_upper.values, hi, atol=1e-12)
    for i in (1, 6, 20):  # MCSE of the mean: ArviZ's estimator
        for c in range(4):
            np.testing.assert_allclose(res.mcse.values[i, c], az.mcse(q[:, :, i, c]).item(),
                                       rtol=1e-4, atol=1e-12)
    np.testing.assert_allclose(res.mean.sum(axis=1), 1, atol=1e-12)
    # gold items: their class with certainty (and no Monte Carlo error)
    assert res.mean.loc[1].tolist() == [1, 0, 0, 0] and res.mcse.loc[36].tolist() == [0] * 4
    assert res.gold.loc[36] == 4 and res.gold.loc[2] is None
    # identical ratings, identical numbers (patients 1 and 13 differ: 1 is gold)
    assert res.pattern.loc[13] == res.pattern.loc[17]
    assert res.mean.loc[13].tolist() == res.mean.loc[17].tolist()


def test_frames_repr_and_most_probable():
    _, _, idata = fitted()
    res = item_classes(idata)
    frame = res.to_frame()
    assert frame.index.names == ["item", "class"] and len(frame) == 45 * 4
    assert list(frame.columns) == ["mean", "hdi_lower", "hdi_upper", "mcse_mean", "gold"]
    assert frame.attrs["hdi_prob"] == 0.95
    assert frame.loc[(36, 4), "gold"] and not frame.loc[(36, 3), "gold"]
    assert frame["gold"].sum() == 2
    # (a mean may lie outside the HDI of a very skewed q: no such assertion)
    assert np.all((frame["hdi_lower"] >= 0) & (frame["hdi_lower"] <= frame["hdi_upper"])
                  & (frame["hdi_upper"] <= 1))
    assert res.most_probable.loc[2] == 3 and res.most_probable.loc[11] == 4
    pd.testing.assert_frame_equal(res.probabilities, res.mean)
    text = repr(res)
    assert text.startswith("Item class probabilities: 45 items, 4 classes (2 gold)")
    assert "<table" in res._repr_html_()


def test_chunks_give_the_same_numbers(monkeypatch):
    _, _, idata = fitted()
    whole = item_classes(idata)
    module = importlib.import_module("bayescm.analysis.item_classes")
    monkeypatch.setattr(module, "CHUNK_VALUES", 1)  # one pattern at a time
    pd.testing.assert_frame_equal(item_classes(idata).to_frame(), whole.to_frame())


def test_other_fits_and_fits_without_a_record_are_refused():
    cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    exact = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=50, random_seed=1)
    with pytest.raises(ValueError, match=r"latent-class models of raters \(\['dawid_skene'\]\)"):
        item_classes(exact)
    _, model, idata = fitted()
    bare = bcm.idata.make({"posterior": idata.posterior}, {})
    with pytest.raises(ValueError, match="pass model="):
        item_classes(bare)
    pd.testing.assert_frame_equal(item_classes(bare, model=model).mean, item_classes(idata).mean)
    with pytest.raises(ValueError, match="hdi_prob"):
        item_classes(idata, hdi_prob=1.5)


def test_without_monte_carlo_errors_the_rest_is_the_same():
    _, _, idata = fitted()
    fast, full = item_classes(idata, mcse=False), item_classes(idata)
    assert fast.mcse.isna().all().all()
    pd.testing.assert_frame_equal(fast.mean, full.mean)
    pd.testing.assert_frame_equal(fast.hdi_upper, full.hdi_upper)
