"""Long statistical suites: `pytest -m slow` (make test-all)."""

import arviz as az
import numpy as np
import pytest
from scipy import stats

import bayescm as bcm

from .conftest import MATRICES

pytestmark = pytest.mark.slow


def _batch():
    keys = list(MATRICES)
    return bcm.ConfusionMatrix(**{c: [MATRICES[k][c] for k in keys] for c in bcm.CELLS},
                               classifier=keys)


@pytest.mark.parametrize(("family", "engine"), [("three_beta", "pymc"),
                                                ("dirichlet_multinomial", "pymc"),
                                                ("dirichlet_multinomial", "nutpie")])
def test_other_engines_agree_with_exact(family, engine):
    """Plain pm.sample and nutpie's own compilation agree with the exact sampler (4 MCSE)."""
    model = getattr(bcm.models, family)(_batch())
    nuts = bcm.fit(model, engine=engine, random_seed=5)
    exact = bcm.fit(model, sampler="exact", draws=10_000, random_seed=6)
    var = "tpr" if family == "three_beta" else "theta"
    a = nuts.posterior[var].stack(s=("chain", "draw")).transpose("s", ...).values
    b = exact.posterior[var].stack(s=("chain", "draw")).transpose("s", ...).values
    a, b = a.reshape(a.shape[0], -1), b.reshape(b.shape[0], -1)
    for j in range(a.shape[1]):
        draws = nuts.posterior[var].values.reshape(*nuts.posterior[var].shape[:2], -1)[..., j]
        se = np.hypot(az.mcse(draws), b[:, j].std() / np.sqrt(b.shape[0]))
        assert abs(a[:, j].mean() - b[:, j].mean()) < 4 * se, j


def test_simulation_based_calibration():
    """SBC (Talts et al. 2018): ranks of the true tpr among thinned posterior draws are
    uniform, and 90% HDIs cover the truth at their nominal rate.

    200 simulated studies from the Beta(1, 1) priors, each fitted with NUTS; chi-square test
    of the rank histogram (10 bins) and a binomial test of coverage, each at alpha = 0.001.
    """
    rng = np.random.default_rng(2024)
    n_sims, n_keep = 200, 99
    ranks, covered = [], []
    for i in range(n_sims):
        phi, tpr, tnr = rng.uniform(size=3)
        n = int(rng.integers(10, 200))
        pos = rng.binomial(n, phi)
        tp, tn = rng.binomial(pos, tpr), rng.binomial(n - pos, tnr)
        cm = bcm.ConfusionMatrix(tp=tp, fn=pos - tp, fp=n - pos - tn, tn=tn)
        idata = bcm.fit(bcm.models.three_beta(cm), random_seed=i, draws=500, chains=4,
                        prior=False, predictive=False, metrics=["bm"])
        draws = idata.posterior["tpr"].values.ravel()
        thinned = draws[:: draws.size // n_keep][:n_keep]
        ranks.append(int(np.sum(thinned < tpr)))
        lo, hi = az.hdi(draws, hdi_prob=0.9)
        covered.append(lo <= tpr <= hi)
    hist = np.histogram(ranks, bins=10, range=(0, n_keep + 1))[0]
    assert stats.chisquare(hist).pvalue > 1e-3, hist
    assert stats.binomtest(int(np.sum(covered)), n_sims, 0.9).pvalue > 1e-3
