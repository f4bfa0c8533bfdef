"""bcm.posterior_predictive_check on Dawid–Skene fits: pairwise agreement of the raters.

Three checks: the expected agreement (a formula) against the replicated tables (drawn
by another route, ``likelihood.replicate``); a fit of data that follow the model is not
rejected; two raters who copy each other are.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

import bayescm as bcm
from bayescm.models.dawid_skene.checks import agreement_tables
from bayescm.stats import SAMPLE_DIMS

from .test_dawid_skene_partial import K, simulate


@functools.cache
def fits():
    rt, _ = simulate(150, 4, seed=31)
    good = bcm.fit(bcm.models.dawid_skene(rt), draws=500, random_seed=2)
    # r3 copies r2 on every item (with one gold item to keep the table's gold path busy)
    i, r, k, c = rt.entries
    rows = [(int(a), f"r{b}", int(lab)) for a, b, lab, n in zip(i, r, k, c, strict=True)
            for _ in range(int(n)) if b != 3]
    rows += [(int(a), "r3", int(lab)) for a, b, lab, n in zip(i, r, k, c, strict=True)
             if b == 2]
    copied = bcm.RatingsTable.from_long(pd.DataFrame(rows, columns=["item", "rater", "rating"]),
                                        labels=list(range(K)), gold={0: 0})
    bad = bcm.fit(bcm.models.dawid_skene(copied), draws=500, random_seed=3)
    return (rt, good), (copied, bad)


def test_expected_agreement_is_what_the_replicated_tables_average():
    """Over 2,000 draws the replicated agreement counts average the expected ones:
    per pair within 4.5 MC standard errors (sd of the replicated minus expected
    counts over draws / sqrt(2,000); the draws are nearly independent here)."""
    (rt, idata), (copied, bad) = fits()
    for table, fit in ((rt, idata), (copied, bad)):
        y, rep, expected = agreement_tables(
            fit.posterior, fit.observed_data["counts"], fit.posterior_predictive["counts"],
            table)
        assert y.dims == ("pair", "cell") and y.sizes["pair"] == 6
        diff = (rep - expected).sel(cell="agree").stack(s=SAMPLE_DIMS)
        se = diff.std("s") / np.sqrt(diff.sizes["s"])
        assert np.all(np.abs(diff.mean("s")) < 4.5 * se), (diff.mean("s").values, se.values)
        # every pair's cells add up to its pairs of ratings, observed and replicated
        np.testing.assert_allclose(rep.sum("cell"), y.sum("cell").broadcast_like(rep.sum("cell")))


def test_a_fit_of_data_from_the_model_is_not_rejected_and_copying_raters_are():
    (_, idata), (_, bad) = fits()
    good = bcm.posterior_predictive_check(idata)
    assert good.index.name == "pair" and len(good) == 7
    # posterior predictive p-values of a model that fits sit near 0.5 (conservative):
    # under 0.01 only by a gross misfit
    assert good["p_value"].between(0.01, 0.99).all(), good
    check = bcm.posterior_predictive_check(bad)
    assert check.loc["r2 ~ r3", "p_value"] < 0.01, check
    assert check.loc["r2 ~ r3", "observed"] > 5 * check.loc["r2 ~ r3", "replicated"], check
