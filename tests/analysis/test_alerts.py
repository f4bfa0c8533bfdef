"""Monitoring alerts over time windows (issue 14 item 3).

Per-window breach probabilities against brute-force numpy on the posterior draws;
a simulated drop at a known window fires at or after it; the false-alarm rate of a
stable timeline over repeated simulations against its exact value (slow).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayescm as bcm
from bayescm.data.confusion import CELLS
from bayescm.data.slices import slice_label

START = pd.Timestamp("2024-01-01")


def _timeline(rng: np.random.Generator, tprs, n_pos: int, n_neg: int, *,
              sites: tuple[str, ...] = ("all",), tnr: float = 0.9):
    """A sliced ConfusionMatrix of weekly windows (x sites): exactly n_pos positives
    and n_neg negatives per (site, week); week w has true TPR tprs[w]."""
    rows, counts = [], []
    for site in sites:
        for w, tpr in enumerate(tprs):
            tp = rng.binomial(n_pos, tpr)
            tn = rng.binomial(n_neg, tnr)
            counts.append([tp, n_pos - tp, n_neg - tn, tn])
            rows.append({"site": site, "window": START + pd.Timedelta(weeks=w)})
    slices = pd.DataFrame(rows)
    if len(sites) == 1:
        slices = slices.drop(columns="site")
    slices.index = [slice_label(r) for r in slices.to_dict("records")]
    return bcm.ConfusionMatrix.from_slices(np.array(counts), slices)


def _fit(cm, seed: int = 1, draws: int = 1000):
    return bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=draws, random_seed=seed)


def test_breach_probabilities_brute_force():
    rng = np.random.default_rng(4)
    tprs = [0.9, 0.88, 0.85, 0.8, 0.75, 0.7]
    cm = _timeline(rng, tprs, 60, 90, sites=("a", "b", "c"))
    counts = cm.counts.copy()
    counts[6 + 2] = 0  # site b (slices 6-11), week 2: no cases (kept, zero weight)
    cm = bcm.ConfusionMatrix.from_slices(counts, cm.slices)
    fit = _fit(cm, draws=300)
    th = fit.posterior["theta"].sel(cell=list(CELLS)).transpose("chain", "draw", "slice", "cell")
    t = th.values.reshape(-1, len(cm), 4)
    n = cm.n.astype(float)
    weeks = cm.slices["window"].to_numpy()
    for metric, thr in [("tpr", 0.8), ("fpr", 0.12)]:
        a = bcm.analysis.alerts(fit, metric, threshold=thr, prob=0.9)
        assert a.table["window"].tolist() == sorted(set(weeks))
        for i, week in enumerate(sorted(set(weeks))):
            mix = sum(n[s] * t[:, s] for s in np.flatnonzero(weeks == week)) \
                / n[weeks == week].sum()  # the three sites pooled by their case counts
            tp, fn, fp, tn = mix.T
            m = tp / (tp + fn) if metric == "tpr" else fp / (fp + tn)
            p = np.mean(m < thr) if metric == "tpr" else np.mean(m > thr)
            row = a.table.iloc[i]
            assert row["p_breach"] == p  # a share of the same draws: exact
            assert row["median"] == pytest.approx(np.median(m), rel=1e-12)
            np.testing.assert_allclose([row["hdi_lower"], row["hdi_upper"]],
                                       bcm.stats.hdi(m, 0.95), rtol=1e-12)
        hit = a.table["p_breach"].to_numpy() >= 0.9
        first = a.table["window"][hit].iloc[0] if hit.any() else None
        assert a.first.iloc[0] == first or (first is None and pd.isna(a.first.iloc[0]))
        assert a.table["alert"].tolist() == np.maximum.accumulate(hit).tolist()
    # one series per site; the empty slice leaves a flagged window with no probability
    a = bcm.analysis.alerts(fit, "tpr", threshold=0.8, by="site")
    assert list(a.first.index) == ["site=a", "site=b", "site=c"]
    row = a.table[(a.table["series"] == "site=b") & (a.table["window"] == weeks[2])]
    assert bool(row["empty"].iloc[0]) and np.isnan(row["p_breach"].iloc[0])
    assert not bool(row["alert"].iloc[0]) or a.first["site=b"] < weeks[2]


def test_drop_fires_at_or_after_the_change():
    # 10 weeks, 150 positives a week, TPR 0.92 then 0.70 from week 6 on; threshold 0.8.
    # Before the change P(TPR < 0.8) needs an observed TPR ~5 sd below 0.92 (sd 0.022)
    # to reach 0.9; after it the observed TPR lies ~2.7 sd below 0.8, beyond the
    # ~1.3 sd the alert needs.
    rng = np.random.default_rng(8)
    change = 6
    cm = _timeline(rng, [0.92] * change + [0.70] * 4, 150, 200)
    a = bcm.analysis.alerts(_fit(cm), "tpr", threshold=0.8, prob=0.9)
    assert a.first.iloc[0] == START + pd.Timedelta(weeks=change)
    assert (a.table["p_breach"][:change] < 0.01).all()
    assert "first alert at window=2024-02-12" in repr(a) and "<table" in a._repr_html_()
    ax = a.plot()
    assert ax.get_ylabel() == "tpr" and len(ax.get_lines()) == 3  # median, alert, threshold
    plt.close("all")


def test_errors():
    rng = np.random.default_rng(0)
    fit = _fit(_timeline(rng, [0.9, 0.9], 20, 20), draws=50)
    with pytest.raises(ValueError, match="no time level 'week'"):
        bcm.analysis.alerts(fit, window="week")
    with pytest.raises(ValueError, match="prob must lie in"):
        bcm.analysis.alerts(fit, prob=1.5)
    with pytest.raises(KeyError):
        bcm.analysis.alerts(fit, "no_such_metric")


def _false_alarm_exact(n_pos: int, tpr: float, threshold: float, prob: float,
                       windows: int) -> float:
    """P(some window alerts) on a stable timeline, from the exact Beta(1 + tp, 1 + fn)
    posterior of each window's TPR (flat prior; prevalence and TNR do not enter)."""
    k = np.arange(n_pos + 1)
    alerting = stats.beta.cdf(threshold, 1 + k, 1 + n_pos - k) >= prob
    q = stats.binom.pmf(k, n_pos, tpr)[alerting].sum()
    return 1 - (1 - q) ** windows


@pytest.mark.slow
def test_false_alarm_rate():
    # 300 stable timelines of 10 weeks, 50 positives a week, true TPR 0.85, threshold
    # 0.8, prob 0.9.  The exact rate follows from the Beta posterior (above); the
    # simulated rate differs by its binomial sd sqrt(r (1 - r) / 300) plus the draws'
    # Monte Carlo error in each p (sd <= 0.5 / sqrt(4000) = 0.008, which moves only
    # windows whose exact p lies within ~0.02 of 0.9): 4 sd + 0.02.
    rng = np.random.default_rng(12)
    runs, weeks, n_pos = 300, 10, 50
    fired = [not pd.isna(bcm.analysis.alerts(
        _fit(_timeline(rng, [0.85] * weeks, n_pos, 50), seed=int(rng.integers(2**31))),
        "tpr", threshold=0.8, prob=0.9).first.iloc[0]) for _ in range(runs)]
    rate = float(np.mean(fired))
    exact = _false_alarm_exact(n_pos, 0.85, 0.8, 0.9, weeks)
    print(f"\nfalse-alarm rate over {runs} stable 10-week timelines: {rate:.3f} "
          f"(exact {exact:.3f})")
    assert abs(rate - exact) < 4 * np.sqrt(exact * (1 - exact) / runs) + 0.02


def test_chunks_of_draws_give_the_same_table():
    # the metric of each window is a function of one draw: chunks of 9 draws give the
    # numbers of one chunk of every draw, bit for bit
    cm = _timeline(np.random.default_rng(2), [0.9, 0.85, 0.7], 50, 80, sites=("a", "b"))
    fit = _fit(cm, draws=100)
    whole = bcm.analysis.alerts(fit, "tpr", threshold=0.8, chunk=10**6)
    parts = bcm.analysis.alerts(fit, "tpr", threshold=0.8, chunk=9)
    pd.testing.assert_frame_equal(parts.table, whole.table, check_exact=True)
