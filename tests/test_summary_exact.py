"""summary_exact: the exact posterior's summary table, streamed a chunk at a time."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayescm as bcm
from bayescm.stats import beta_hdi_any

from .test_multiclass_summary import COUNTS, LABELS, _check_beta

BINARY = bcm.ConfusionMatrix(tp=[26, 31, 3], fn=[0, 9, 12], fp=[2, 13, 0], tn=[6, 20, 150],
                             classifier=["cocaine", "mid", "rare"])
MULTI = bcm.MulticlassConfusionMatrix(COUNTS, labels=LABELS, classifier=["good", "zero"])
DRAWS, CHAINS = 2000, 2
N = DRAWS * CHAINS


@pytest.mark.parametrize("data", [BINARY, MULTI], ids=["binary", "multiclass"])
def test_result_does_not_depend_on_chunk(data):
    whole = bcm.summary_exact(data, draws=500, random_seed=3)
    for chunk in (1, 2):
        pd.testing.assert_frame_equal(
            bcm.summary_exact(data, draws=500, random_seed=3, chunk=chunk), whole,
            check_exact=True)
    other = bcm.summary_exact(data, draws=500, random_seed=4)
    assert not other["mean"].equals(whole["mean"])


@pytest.mark.parametrize("builder, data", [
    ("three_beta", BINARY), ("dirichlet_multinomial", BINARY),
    ("multiclass_rows", MULTI), ("multiclass_cells", MULTI)])
def test_equals_summary_of_the_exact_fit_in_distribution(builder, data):
    model = getattr(bcm.models, builder)(data)
    ref = bcm.summary(bcm.fit(model, sampler="exact", draws=DRAWS, chains=CHAINS,
                              random_seed=1, prior=False, predictive=False))
    got = bcm.summary_exact(model, draws=DRAWS, chains=CHAINS, random_seed=2)
    assert got.index.equals(ref.index)
    np.testing.assert_array_equal(got["plug_in"].to_numpy(), ref["plug_in"].to_numpy())
    reg = bcm.metrics.registry_for(data)
    bounded = [all(np.isfinite(reg.get(k).bounds))
               for k in got.index.get_level_values("metric")]
    g, r = got[bounded], ref[bounded]
    # two independent samples of N draws: the means differ by less than 5 standard
    # errors of a difference, sqrt(sd_1^2 / N + sd_2^2 / N) (bounded metrics: finite
    # variance; + 1e-6 for a point mass such as a fixed rate)
    se = np.sqrt((g["sd"] ** 2 + r["sd"] ** 2) / N)
    assert (np.abs(g["mean"] - r["mean"]) <= 5 * se + 1e-6).all()
    # the sd of a sample of N: standard error sd * sqrt((kurtosis - 1) / (4 N)) below
    # sd * sqrt(2 / N) for kurtosis up to 9 (bounded, skewed metrics); 5 of them
    assert (np.abs(g["sd"] - r["sd"]) <= 5 * r["sd"] * np.sqrt(2 / N) + 1e-6).all()
    assert ((g["hdi_lower"] <= g["mean"] + 1e-6) & (g["mean"] <= g["hdi_upper"] + 1e-6)).all()


def test_exact_beta_marginals_and_default_models():
    # each class's recall is a Beta marginal of its row's Dirichlet, whatever the priors:
    # Beta(beta_aa, sum_j beta_aj - beta_aa) of the posterior rows, reported exactly
    table = bcm.summary_exact(MULTI, metrics=["recall"], draws=DRAWS, chains=CHAINS,
                              random_seed=5)
    rows = bcm.models.get_family("multiclass_rows").closed_form(MULTI).conjugate.dirichlets
    for i, name in enumerate(["good", "zero"]):
        for a, label in enumerate(LABELS):
            alpha = rows["rows"][i, a]
            row = table.loc[(name, label, "tpr")]
            want = stats.beta(alpha[a], alpha.sum() - alpha[a])
            assert row["exact"] and row["mean"] == pytest.approx(want.mean(), abs=1e-12)
            assert row["median"] == pytest.approx(want.median(), abs=1e-12)
            lo, hi = beta_hdi_any(alpha[a], alpha.sum() - alpha[a])
            assert (row["hdi_lower"], row["hdi_upper"]) == pytest.approx((float(lo), float(hi)),
                                                                         abs=1e-12)
    table = bcm.summary_exact(BINARY, metrics=["tnr"], draws=DRAWS, chains=CHAINS,
                              random_seed=6)
    _check_beta(table.loc[("cocaine", "tnr")], 7, 3, n=N)  # three-Beta, Beta(1, 1) priors
    assert table.loc[("cocaine", "tnr"), ["hdi_lower", "hdi_upper"]].tolist() == \
        pytest.approx([0.4324, 0.9458], abs=5e-4)


def test_errors():
    tab = bcm.AgreementTable.from_counts({"++": 40, "+-": 3, "-+": 7, "--": 100})
    hw = bcm.models.hui_walter(tab, priors={"sensitivity": bcm.priors.Beta(20, 4),
                                            "specificity": bcm.priors.Beta(20, 4)},
                               identifiability="ignore")
    with pytest.raises(ValueError, match="no closed-form posterior"):
        bcm.summary_exact(hw)
    with pytest.raises(TypeError, match="conjugate builder"):
        bcm.summary_exact(np.ones((2, 2)))
    with pytest.raises(ValueError, match="chunk"):
        bcm.summary_exact(MULTI, chunk=0)
    with pytest.raises(ValueError, match="draws"):
        bcm.summary_exact(MULTI, draws=1)
    import pymc as pm

    model = bcm.models.multiclass_cells(MULTI)
    with model:
        pm.Normal("extra")
    with pytest.raises(ValueError, match="did not create"):
        bcm.summary_exact(model)


@pytest.mark.parametrize("builder", ["multiclass_rows", "multiclass_cells"])
def test_fused_path_gives_the_numbers_of_the_path_before(builder, monkeypatch):
    # the fused K-class chunk (registry metrics laid out by class, compiled median,
    # HDI and MCSE, each chunk's own closed-form marginals) against the path before it
    # (bcm.metrics.compute, NumPy's partition/sort statistics): same seed, same table,
    # bit for bit (the same order statistics and the same arithmetic on them)
    import functools
    import sys

    from bayescm import summary_stream

    summary_module = sys.modules["bayescm.summary"]
    model = getattr(bcm.models, builder)(MULTI)
    monkeypatch.setattr(summary_module, "COMPILED_FROM", 0)  # compiled for any size
    new = bcm.summary_exact(model, draws=500, chains=2, random_seed=7, chunk=1)
    assert "bayescm.inference.order_stats" in sys.modules
    with monkeypatch.context() as m:
        m.setattr(summary_module, "COMPILED_FROM", np.inf)
        m.setattr(summary_stream, "COMPILED_FROM", np.inf)
        m.delitem(sys.modules, "bayescm.inference.order_stats")
        m.setattr(summary_stream, "_chunk_table",
                  functools.partial(summary_stream._chunk_table, fused=False))
        old = bcm.summary_exact(model, draws=500, chains=2, random_seed=7)
        assert "bayescm.inference.order_stats" not in sys.modules
    pd.testing.assert_frame_equal(new, old, check_exact=True)
    reg = bcm.metrics.registry_for(MULTI)
    per_class = sum(reg.per_class(k) for k in reg.names())
    assert len(new) == 2 * (len(reg.names()) - per_class + len(LABELS) * per_class)
