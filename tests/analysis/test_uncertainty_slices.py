"""Metric uncertainty and deception on sliced matrices (issue 14): one row per slice,
indexed by dim ``slice``, from a matrix, a fit or ``bcm.exact_posterior`` (NumPy or
Dask-backed), against each slice's closed form (Tötsch & Hoffmann's three-Beta
posterior under flat priors: TPR ~ Beta(1 + tp, 1 + fn), TNR ~ Beta(1 + tn, 1 + fp)).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, optimize, stats

import bayescm as bcm

DRAWS = 20_000


def sliced() -> bcm.ConfusionMatrix:
    """Three slices with data, one of them small, and an empty one (sex=M|site=b)."""
    rng = np.random.default_rng(11)
    n = 160
    y = rng.integers(0, 2, n)
    p = np.where(rng.random(n) < 0.75, y, 1 - y)
    sex = rng.choice(["F", "M"], n, p=[0.85, 0.15])
    site = np.where(sex == "M", "a", rng.choice(["a", "b"], n))
    cm = bcm.ConfusionMatrix.from_predictions(y, p, groups={"sex": sex, "site": site})
    assert cm.empty.tolist() == [False, False, False, True]
    return cm


def beta_hdi(a: float, b: float, mass: float = 0.95) -> tuple[float, float]:
    """The narrowest interval of mass ``mass`` of Beta(a, b), by minimising its width
    over the lower tail probability (independent of bayescm's HDI code)."""
    dist = stats.beta(a, b)
    res = optimize.minimize_scalar(lambda t: dist.ppf(t + mass) - dist.ppf(t),
                                   bounds=(0, 1 - mass), method="bounded",
                                   options={"xatol": 1e-10})
    return float(dist.ppf(res.x)), float(dist.ppf(res.x + mass))


def width_tolerance(a: float, b: float, lo: float, n: int) -> float:
    """Five standard errors of a sampled HDI's width.  Near the HDI the width is
    stationary in how the 5% outside is split between the tails, so to first order
    its error is that of the mass inside, sd sqrt(0.95 * 0.05 / n), over the density
    at the ends (equal at an HDI).  A flat Beta(1, 1) has no unique HDI, but its width
    is 0.95 all the same."""
    return 5 * np.sqrt(0.95 * 0.05 / n) / stats.beta(a, b).pdf(lo)


def end_tolerance(a: float, b: float, end: float, n: int) -> float:
    """Eight sds of a sample quantile near 2.5% / 97.5%, sqrt(q (1 - q) / n) / pdf(end).
    A sample HDI's ends are noisier than quantiles (the width is flat in the tail
    split near its minimum: about twice as noisy over seeds here), hence 8 and not 5;
    the equal-tailed interval's ends lie 18-28 such sds from the HDI's at n = 80,000."""
    return 8 * np.sqrt(0.025 * 0.975 / n) / stats.beta(a, b).pdf(end)


def tpr_params(cm: bcm.ConfusionMatrix) -> list[tuple[float, float]]:
    return [(1 + tp, 1 + fn) for tp, fn in zip(cm.tp, cm.fn, strict=True)]


@pytest.mark.parametrize("source", ["matrix", "fit", "exact_posterior", "dask"])
def test_metric_uncertainty_of_each_slice_is_its_beta_hdi(source):
    cm = sliced()
    if source == "matrix":  # i.i.d. draws are cheap: enough to tell an HDI's ends apart
        data, n = cm, 4 * DRAWS
    elif source == "fit":
        data = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=DRAWS // 4, chains=4,
                       random_seed=2, predictive=False, prior=False)
        n = DRAWS
    else:
        data = bcm.exact_posterior(cm, draws=DRAWS // 4, chains=4, random_seed=3,
                                   metrics=["tpr", "bm"],
                                   chunk=2 if source == "dask" else None)
        n = DRAWS
    mu = bcm.analysis.metric_uncertainty(data, "tpr", random_seed=1, draws=n)
    assert mu.index.name == "slice" and list(mu.index) == list(cm.classifiers)
    for name, (a, b) in zip(cm.classifiers, tpr_params(cm), strict=True):
        lo, hi = beta_hdi(a, b)
        assert abs(mu.loc[name, "mu"] - (hi - lo)) < width_tolerance(a, b, lo, n), name
        if source == "matrix" and a + b > 2:
            assert abs(mu.loc[name, "hdi_lower"] - lo) < end_tolerance(a, b, lo, n), name
            assert abs(mu.loc[name, "hdi_upper"] - hi) < end_tolerance(a, b, hi, n), name
    # the empty slice's TPR is Beta(1, 1): every interval of mass 0.95 has width 0.95
    assert mu.loc["sex=M|site=b", "mu"] == pytest.approx(0.95, abs=width_tolerance(
        1, 1, 0.025, n))


def _p_bm_below(a: float, b: float, c: float, d: float, cut: float) -> float:
    """P(TPR + TNR - 1 < cut) for TPR ~ Beta(a, b), TNR ~ Beta(c, d), integrating over
    TNR (bayescm integrates over TPR): P = int f_TNR(y) F_TPR(1 + cut - y) dy."""
    tpr, tnr = stats.beta(a, b), stats.beta(c, d)
    return integrate.quad(lambda y: tnr.pdf(y) * tpr.cdf(1 + cut - y), 0, 1,
                          epsabs=1e-12, limit=200)[0]


def test_deception_of_each_slice_is_its_closed_form_and_sampled_paths_agree():
    cm = sliced()
    rope = 0.05
    exact = bcm.analysis.deception(cm, rope=rope)
    assert exact.index.name == "slice" and list(exact.index) == list(cm.classifiers)
    for name, (tp, fn, fp, tn) in zip(cm.classifiers, cm.counts, strict=True):
        args = (1 + tp, 1 + fn, 1 + tn, 1 + fp)
        deceptive = _p_bm_below(*args, -rope)
        informative = 1 - _p_bm_below(*args, rope)
        assert exact.loc[name, "r_deceptive"] == pytest.approx(deceptive, abs=1e-7)
        assert exact.loc[name, "r_informative"] == pytest.approx(informative, abs=1e-7)
    # the empty slice: BM of two flat Betas is symmetric about 0
    row = exact.loc["sex=M|site=b"]
    assert row["r_deceptive"] == pytest.approx(row["r_informative"], abs=1e-9)
    # shares of 20,000 i.i.d. draws: sd at most sqrt(0.25 / 20,000) = 0.0035; 5 sd
    fit = bcm.exact_posterior(cm, draws=DRAWS // 4, chains=4, random_seed=4, metrics=["bm"],
                              chunk=3)
    sampled = bcm.analysis.deception(fit, rope=rope)
    assert sampled.index.name == "slice" and list(sampled.index) == list(cm.classifiers)
    cols = ["r_informative", "r_deceptive", "p_uninformative"]
    assert np.abs(sampled[cols].to_numpy() - exact[cols].to_numpy()).max() < 5 * 0.0035
