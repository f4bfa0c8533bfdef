"""Disparity posteriors across slices (issue 14 item 3).

Per-draw quantities are checked against brute-force numpy on the posterior draws
(equal to float precision: both are the same arithmetic on the same draws, only
ordered differently); equalized-odds and demographic-parity differences against
fairlearn on plug-in proportions; P(gap > threshold) on simulated data with and
without a real TPR gap.
"""

from __future__ import annotations

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import xarray as xr

import bayescm as bcm
from bayescm.data.confusion import CELLS

TIGHT = {"rtol": 1e-12, "atol": 1e-14}  # float rounding of a re-ordered sum only


def _cases(n: int = 900, seed: int = 5) -> pd.DataFrame:
    """Random cases with two factors; (sex=M, age=60+) never occurs (an empty slice)."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    age = rng.choice(["<40", "40-60", "60+"], n)
    age[(sex == "M") & (age == "60+")] = "<40"
    y = rng.random(n) < 0.4
    hit = rng.random(n) < np.where(sex == "F", 0.7, 0.85)
    p = np.where(y, hit, rng.random(n) < np.where(age == "<40", 0.05, 0.2))
    return pd.DataFrame({"y": y, "p": p, "sex": sex, "age": age})


@pytest.fixture(scope="module")
def sliced_fit():
    df = _cases()
    cm = bcm.ConfusionMatrix.from_predictions(df["y"], df["p"],
                                              groups={"sex": df["sex"], "age": df["age"]})
    return cm, bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=250, random_seed=2)


def _theta(fit) -> np.ndarray:
    """Draws x slices x (tp, fn, fp, tn), flattened over chains."""
    th = fit.posterior["theta"].sel(cell=list(CELLS)).transpose("chain", "draw", "slice",
                                                                "cell")
    return th.values.reshape(-1, th.sizes["slice"], 4)


def _metric(t: np.ndarray, key: str) -> np.ndarray:
    tp, fn, fp, tn = (t[..., i] for i in range(4))
    return {"tpr": tp / (tp + fn), "fpr": fp / (fp + tn), "ppv": tp / (tp + fp),
            "bias": (tp + fp) / (tp + fn + fp + tn)}[key]


def _pooled(t: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Case-weighted mixture of the slices with weights w (loop: the brute force)."""
    out = np.zeros((t.shape[0], 4))
    for s in range(t.shape[1]):
        out += w[s] * t[:, s, :]
    return out / w.sum()


def _flat(result_var: xr.DataArray) -> np.ndarray:
    return result_var.values.reshape(-1, *result_var.shape[2:])


def test_every_slice_brute_force(sliced_fit):
    cm, fit = sliced_fit
    t, n = _theta(fit), cm.n.astype(float)
    full = ~cm.empty
    assert cm.empty.sum() == 1  # the (M, 60+) slice is there, empty
    d = bcm.analysis.disparity(fit, "ppv", threshold=0.05)
    assert d.excluded == [cm.classifiers[i] for i in np.flatnonzero(cm.empty)]
    ppv, tpr, fpr, bias = (_metric(t[:, full], k) for k in ("ppv", "tpr", "fpr", "bias"))

    def spread(m):
        return m.max(1) - m.min(1)

    np.testing.assert_allclose(_flat(d.draws["gap"]), spread(ppv), **TIGHT)
    np.testing.assert_allclose(_flat(d.draws["tpr_gap"]), spread(tpr), **TIGHT)
    np.testing.assert_allclose(_flat(d.draws["fpr_gap"]), spread(fpr), **TIGHT)
    np.testing.assert_allclose(_flat(d.draws["equalized_odds"]),
                               np.maximum(spread(tpr), spread(fpr)), **TIGHT)
    np.testing.assert_allclose(_flat(d.draws["demographic_parity"]), spread(bias), **TIGHT)
    # each slice against the case-weighted mixture of every other slice
    versus = _flat(d.draws["versus"].transpose("chain", "draw", "group"))
    for s in np.flatnonzero(full):
        rest = _pooled(t, np.where(np.arange(len(n)) == s, 0.0, n))
        np.testing.assert_allclose(versus[:, s], _metric(t[:, s], "ppv") - _metric(rest, "ppv"),
                                   **TIGHT)
    assert np.isnan(versus[:, cm.empty]).all()
    # the table: P(gap > threshold) is the share of draws; HDI from bcm's one HDI
    frame = d.to_frame()
    row = frame.loc[("ppv gap", "")]
    assert row["p_exceeds"] == np.mean(spread(ppv) > 0.05)
    lo, hi = bcm.stats.hdi(spread(ppv), 0.95)
    assert (row["hdi_lower"], row["hdi_upper"]) == (lo, hi)
    assert row["mean"] == pytest.approx(spread(ppv).mean(), rel=1e-12)
    label = cm.classifiers[0]
    x = versus[:, 0]
    assert frame.loc[("ppv vs rest", label), "p_worse"] == np.mean(-x > 0.05)
    assert frame.loc[("ppv vs rest", label), "p_exceeds"] == np.mean(np.abs(x) > 0.05)
    assert "excluded (no cases)" in repr(d) and "<table" in d._repr_html_()
    ax = d.plot()  # one row per slice with cases, first on top
    assert [t.get_text() for t in ax.get_yticklabels()] == \
        [cm.classifiers[i] for i in np.flatnonzero(full)]
    plt.close("all")


def test_by_factor_pools_by_case_counts(sliced_fit):
    cm, fit = sliced_fit
    t, n = _theta(fit), cm.n.astype(float)
    sex = cm.slices["sex"].to_numpy()
    d = bcm.analysis.disparity(fit, "tpr", by="sex", threshold=0.02)
    assert d.groups.index.tolist() == ["sex=F", "sex=M"] and d.excluded == []
    assert d.groups["n"].tolist() == [n[sex == "F"].sum(), n[sex == "M"].sum()]
    f = _pooled(t, np.where(sex == "F", n, 0.0))
    m = _pooled(t, np.where(sex == "M", n, 0.0))
    gap = np.abs(_metric(f, "tpr") - _metric(m, "tpr"))
    np.testing.assert_allclose(_flat(d.draws["gap"]), gap, **TIGHT)
    dp = np.abs(_metric(f, "bias") - _metric(m, "bias"))
    np.testing.assert_allclose(_flat(d.draws["demographic_parity"]), dp, **TIGHT)
    levels = d.metric_frame()
    assert levels.loc["sex=M", "mean"] == pytest.approx(_metric(m, "tpr").mean(), rel=1e-12)
    # two groups: the rest of F is M
    versus = _flat(d.draws["versus"].transpose("chain", "draw", "group"))
    np.testing.assert_allclose(versus[:, 0], _metric(f, "tpr") - _metric(m, "tpr"), **TIGHT)


def test_reference_best_and_named(sliced_fit):
    cm, fit = sliced_fit
    t = _theta(fit)
    full = ~cm.empty
    fpr = _metric(t[:, full], "fpr")  # lower is better: the best is the smallest
    d = bcm.analysis.disparity(fit, "fpr", reference="best")
    versus = _flat(d.draws["versus"].transpose("chain", "draw", "group"))[:, full]
    np.testing.assert_allclose(versus, fpr - fpr.min(1, keepdims=True), **TIGHT)
    ref = cm.classifiers[0]
    d = bcm.analysis.disparity(fit, "fpr", reference=ref)
    versus = _flat(d.draws["versus"].transpose("chain", "draw", "group"))[:, full]
    np.testing.assert_allclose(versus, fpr - fpr[:, :1], **TIGHT)
    assert d.to_frame().loc[(f"fpr vs {ref}", ref), "mean"] == 0


def test_errors(sliced_fit):
    cm, fit = sliced_fit
    empty = cm.classifiers[int(np.flatnonzero(cm.empty)[0])]
    with pytest.raises(ValueError, match="has no cases"):
        bcm.analysis.disparity(fit, reference=empty)
    with pytest.raises(ValueError, match="'rest', 'best' or one of the groups"):
        bcm.analysis.disparity(fit, reference="nobody")
    with pytest.raises(ValueError, match="not levels of the slices"):
        bcm.analysis.disparity(fit, by="site")
    with pytest.raises(ValueError, match="threshold"):
        bcm.analysis.disparity(fit, threshold=-0.1)
    plain = bcm.fit(bcm.models.three_beta(bcm.ConfusionMatrix(tp=5, fn=1, fp=2, tn=9)),
                    sampler="exact", draws=50, random_seed=1)
    with pytest.raises(ValueError, match="sliced ConfusionMatrix"):
        bcm.analysis.disparity(plain)
    with pytest.raises(TypeError, match="InferenceData"):
        bcm.analysis.disparity(cm)


def _plug_in(cm) -> az.InferenceData:
    """A 'fit' whose every draw is the observed proportions of each slice."""
    counts = cm.counts.astype(float)
    with np.errstate(invalid="ignore"):
        props = counts / counts.sum(1, keepdims=True)
    levels = {c: ("slice", cm.slices[c].to_numpy()) for c in cm.slices.columns}
    coords = {"slice": list(cm.classifiers), "cell": list(CELLS)} | levels
    theta = np.broadcast_to(props, (1, 2, *props.shape))
    post = xr.Dataset({"theta": (("chain", "draw", "slice", "cell"), theta)},
                      coords=coords | {"chain": [0], "draw": [0, 1]})
    obs = xr.Dataset({"counts": (("slice", "cell"), cm.counts)}, coords=coords)
    return az.InferenceData(posterior=post, observed_data=obs)


def test_plug_in_equals_fairlearn():
    fm = pytest.importorskip("fairlearn.metrics")
    df = _cases(n=3000, seed=11)
    cm = bcm.ConfusionMatrix.from_predictions(df["y"], df["p"],
                                              groups={"sex": df["sex"], "age": df["age"]})
    fit = _plug_in(cm)
    y, p = df["y"].astype(int), df["p"].astype(int)
    for by, features in [(None, df[["sex", "age"]]), ("sex", df["sex"]), ("age", df["age"])]:
        d = bcm.analysis.disparity(fit, "tpr", by=by)
        eo = fm.equalized_odds_difference(y, p, sensitive_features=features)
        dp = fm.demographic_parity_difference(y, p, sensitive_features=features)
        assert float(d.draws["equalized_odds"][0, 0]) == pytest.approx(eo, rel=1e-12)
        assert float(d.draws["demographic_parity"][0, 0]) == pytest.approx(dp, rel=1e-12)


def _simulate(rng: np.random.Generator, tprs: tuple[float, float], n: int):
    """Two groups of n cases each, prevalence 0.4, TNR 0.9, the given TPRs."""
    group = np.repeat(["a", "b"], n)
    y = rng.random(2 * n) < 0.4
    hit = rng.random(2 * n) < np.repeat(tprs, n)
    pred = np.where(y, hit, rng.random(2 * n) < 0.1)
    cm = bcm.ConfusionMatrix.from_predictions(y, pred, groups={"group": group})
    return bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=1000,
                   random_seed=int(rng.integers(2**31)))


def test_gap_probability_separates():
    # 5000 cases per group: ~2000 positives, sd of an observed TPR difference
    # sqrt(2 * 0.85 * 0.15 / 2000) = 0.011.  With a true gap of 0.15 the observed gap
    # lies ~9 sd above the threshold 0.05: P(gap > 0.05) ~ 1.  Without a gap the
    # observed |difference| would need 0.05 - 1.6 sd ~ 0.03 (2.6 sd, 1% of data sets)
    # for P(gap > 0.05) to reach 0.05.
    rng = np.random.default_rng(20)
    with_gap = bcm.analysis.disparity(_simulate(rng, (0.75, 0.90), 5000), threshold=0.05)
    without = bcm.analysis.disparity(_simulate(rng, (0.85, 0.85), 5000), threshold=0.05)
    assert with_gap.probability("gap") > 0.99
    assert with_gap.probability("equalized_odds") > 0.99
    assert without.probability("gap") < 0.05
    # the TNR is the same in both groups: the FPR gap exceeds 0.05 rarely either way
    assert without.probability("fpr_gap") < 0.05


@pytest.mark.slow
def test_gap_probability_rates():
    # Rates over 200 simulations of two groups of 1000 cases (~400 positives each;
    # sd of an observed TPR difference 0.025).  The decision P(gap > 0.05) > 0.9 needs
    # an observed gap above ~0.05 + 1.28 * 0.025 = 0.082: with a true gap of 0.15 that
    # is 2.7 sd below it (detection ~0.996), without a gap 3.3 sd above 0 on either
    # side (false detection ~0.001).  Bounds: 4 binomial sd of 200 simulations away.
    rng = np.random.default_rng(7)
    runs = 200
    detect = np.mean([bcm.analysis.disparity(_simulate(rng, (0.75, 0.90), 1000))
                      .probability("gap") > 0.9 for _ in range(runs)])
    false = np.mean([bcm.analysis.disparity(_simulate(rng, (0.85, 0.85), 1000))
                     .probability("gap") > 0.9 for _ in range(runs)])
    print(f"\nP(tpr gap > 0.05) > 0.9 in {detect:.3f} of {runs} simulations with a true gap "
          f"of 0.15 and in {false:.3f} without a gap")
    assert detect >= 0.95
    assert false <= 0.03


def test_any_family_with_theta_on_slices():
    # Nothing is asked of the family: a Dirichlet-multinomial fit of the same slices
    # goes through the same arithmetic on its own theta draws.
    df = _cases(n=400, seed=9)
    cm = bcm.ConfusionMatrix.from_predictions(df["y"], df["p"], groups={"age": df["age"]})
    fit = bcm.fit(bcm.models.dirichlet_multinomial(cm), sampler="exact", draws=100,
                  random_seed=4)
    t = _theta(fit)
    tpr, fpr = _metric(t, "tpr"), _metric(t, "fpr")
    d = bcm.analysis.disparity(fit, "tpr")
    np.testing.assert_allclose(_flat(d.draws["equalized_odds"]),
                               np.maximum(np.ptp(tpr, 1), np.ptp(fpr, 1)), **TIGHT)


def test_the_metric_gap_is_listed_once_when_it_is_tpr_or_fpr(sliced_fit):
    _, fit = sliced_fit
    for metric in ("tpr", "fpr"):
        d = bcm.analysis.disparity(fit, metric, threshold=0.05)
        frame = d.to_frame()
        assert frame.index.is_unique
        overall = frame.xs("", level="group")
        assert list(overall.index) == [f"{metric} gap", "fpr gap" if metric == "tpr"
                                       else "tpr gap", "equalized odds", "demographic parity"]
        # the table's metric gap is the TPR/FPR gap of the draws
        x = d.draws[f"{metric}_gap"].values.ravel()
        assert overall.loc[f"{metric} gap", "p_exceeds"] == float(np.mean(x > 0.05))
        assert repr(d).count(f"{metric} gap") == 1


def test_chunks_of_draws_give_the_same_numbers(sliced_fit):
    # every measure is a function of one draw: chunks of 60 draws (5 per chain, the last
    # one short) must give the numbers of one chunk holding every draw, bit for bit
    _, fit = sliced_fit
    for metric, by, reference in [("ppv", None, "rest"), ("fpr", "age", "best"),
                                  ("tpr", "sex", "sex=M")]:
        whole = bcm.analysis.disparity(fit, metric, by=by, reference=reference, chunk=10**6)
        parts = bcm.analysis.disparity(fit, metric, by=by, reference=reference, chunk=60)
        xr.testing.assert_identical(parts.draws, whole.draws)
        xr.testing.assert_identical(parts.values, whole.values)
        pd.testing.assert_frame_equal(parts.to_frame(), whole.to_frame(), check_exact=True)
    with pytest.raises(ValueError, match="chunk must be a positive integer"):
        bcm.analysis.disparity(fit, chunk=0)
