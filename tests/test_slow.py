"""Long statistical suites: `pytest -m slow` (make test-all)."""

import warnings

import arviz as az
import numpy as np
import pytest
from scipy import stats

import bayescm as bcm
from bayescm.models.hui_walter.model import pattern_probabilities
from bayescm.priors import Beta

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


def test_hui_walter_parameter_recovery():
    """Two classifiers, two populations: truths drawn from the prior (truncated to
    Se + Sp > 1), so 90% HDIs must cover them at the nominal rate; 80 studies per
    sample size, a binomial test per parameter at alpha = 0.001, and intervals that
    shrink with n."""
    priors = {"sensitivity": Beta(9, 2), "specificity": Beta(9, 2), "prevalence": Beta(2, 2)}
    names = ["sensitivity", "specificity", "prevalence"]
    mean_width = {}
    for n in (100, 1000):
        mean_width[n] = _recovery_at(n, priors, names)
    assert mean_width[1000] < 0.7 * mean_width[100], mean_width


def _recovery_at(n, priors, names):
    """Mean 90% HDI width over 80 studies of n cases per population; asserts coverage."""
    rng = np.random.default_rng(n)
    hits = {v: [] for v in names}
    widths = []
    for i in range(80):
        while True:
            se, sp = rng.beta(9, 2, 2), rng.beta(9, 2, 2)
            if np.all(se + sp > 1):
                break
        prev = rng.beta(2, 2, 2)
        prob, _, _ = pattern_probabilities(se, sp, prev, None, None, 2, [])
        counts = np.array([rng.multinomial(n, p) for p in prob])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = bcm.models.hui_walter(bcm.AgreementTable(counts, populations=["a", "b"]),
                                          priors=priors)
        idata = bcm.fit(model, random_seed=i, prior=False, predictive=False, metrics=["ba"])
        truth = {"sensitivity": se, "specificity": sp, "prevalence": prev}
        for v in names:
            for j in range(2):
                draws = idata.posterior[v].values[..., j].ravel()
                lo, hi = az.hdi(draws, hdi_prob=0.9)
                hits[v].append(lo <= truth[v][j] <= hi)
                widths.append(hi - lo)
    for v in names:
        k = int(np.sum(hits[v]))
        assert stats.binomtest(k, len(hits[v]), 0.9).pvalue > 1e-3, (n, v, k, len(hits[v]))
    return float(np.mean(widths))


def test_paired_model_calibrates_and_independent_does_not():
    """300 simulated paired studies (n = 200) in which both classifiers fail on shared hard
    cases; true accuracy difference 0.76 - 0.72 = 0.04.  The paired model's 90% intervals
    cover it at the nominal rate (binomial test, alpha = 0.001); treating the design as
    independent over-covers (its intervals are too wide)."""
    from bayescm.analysis import compare, compare_paired
    from tests.analysis.test_analysis import simulate_paired

    rng = np.random.default_rng(11)
    truth = 0.8 * 0.95 - 0.8 * 0.90
    hits = {"paired": 0, "independent": 0}
    n_sims = 300
    for i in range(n_sims):
        y, a, b = simulate_paired(rng, 200)
        paired = compare_paired(y, a, b, "acc", hdi_prob=0.9, draws=4000, random_seed=i)
        independent = compare(bcm.ConfusionMatrix.from_predictions(y, a),
                              bcm.ConfusionMatrix.from_predictions(y, b), "acc",
                              hdi_prob=0.9, draws=4000, random_seed=i)
        for name, res in (("paired", paired), ("independent", independent)):
            lo, hi = res.hdi
            hits[name] += lo <= truth <= hi
    assert stats.binomtest(hits["paired"], n_sims, 0.9).pvalue > 1e-3, hits
    assert stats.binomtest(hits["independent"], n_sims, 0.9,
                           alternative="greater").pvalue < 1e-3, hits
