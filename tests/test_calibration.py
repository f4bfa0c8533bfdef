"""Simulation-based calibration of the latent-class, folds and items posteriors (kernels).

Talts, Betancourt, Simpson, Vehtari & Gelman, "Validating Bayesian inference algorithms
with simulation-based calibration" (2018): draw parameters from the prior, data from the
model, fit; the rank of each true parameter among (thinned) posterior draws is uniform
exactly when the sampler draws from the posterior of the model that generated the data.

The data are simulated case by case from the latent classes (class, then each
classifier's call), independently of bayescm's pattern probabilities.

False alarms.  Each parameter's ranks are tested for uniformity with a chi-square test
over ``BINS`` equal bins at level ``ALPHA / n_parameters`` (Bonferroni), so the whole
check raises a false alarm with probability at most ``ALPHA`` = 0.001 when the sampler
is right (residual autocorrelation after thinning to about one draw per effective draw
makes ranks slightly lumpy; the level is far below the usual 0.05 to absorb it).

Power.  :func:`test_a_wrong_density_is_caught` fits the same studies with the calls of
classifiers A and B swapped in the patterns ``+-?`` and ``-+?`` (the cell-order mistake
sources invite) and asserts the check fails (slow suite; measured there).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

import bayescm as bcm
from bayescm.data.agreement import pattern_matrix
from bayescm.priors import Beta

ALPHA = 0.001
BINS = 5
THIN = 8  # 2 chains x 400 draws -> 100 ranks per study; bulk ESS is about 300-600
PRIORS = {"sensitivity": Beta(8, 2), "specificity": Beta(8, 2), "prevalence": Beta(2, 2)}
T, P, N = 3, 2, 300  # 3 classifiers, 2 populations, 300 cases each: 14 df, 8 parameters


def _truth(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Parameters from the prior: Beta(8, 2) x Beta(8, 2) truncated to Se + Sp > 1."""
    se, sp = rng.beta(8, 2, T), rng.beta(8, 2, T)
    for t in range(T):
        while se[t] + sp[t] <= 1:  # P(Se + Sp <= 1) ~ 1e-4: a handful of redraws at most
            se[t], sp[t] = rng.beta(8, 2), rng.beta(8, 2)
    return {"sensitivity": se, "specificity": sp, "prevalence": rng.beta(2, 2, P)}


def _simulate(rng: np.random.Generator, truth: dict[str, np.ndarray]) -> np.ndarray:
    """Counts per population and pattern, case by case from the latent classes."""
    patt = pattern_matrix(T)
    counts = np.zeros((P, 2**T), dtype=np.int64)
    for p in range(P):
        positive = rng.uniform(size=N) < truth["prevalence"][p]
        rate = np.where(positive[:, None], truth["sensitivity"], 1 - truth["specificity"])
        calls = (rng.uniform(size=(N, T)) < rate).astype(int)
        index = [int(np.flatnonzero((patt == c).all(axis=1))[0]) for c in calls]
        counts[p] = np.bincount(index, minlength=2**T)
    return counts


def _swap_ab(counts: np.ndarray) -> np.ndarray:
    """The same table with classifiers A and B exchanged in the '+-' / '-+' patterns only."""
    patt = pattern_matrix(T)
    out = counts.copy()
    for i, row in enumerate(patt):
        if row[0] == 1 and row[1] == 0:
            j = int(np.flatnonzero((patt == [0, 1, *row[2:]]).all(axis=1))[0])
            out[:, [i, j]] = counts[:, [j, i]]
    return out


def sbc_ranks(n_studies: int, seed: int, corrupt=None) -> dict[str, np.ndarray]:
    """Ranks (0..draws/THIN) of every true parameter, shape (n_studies, units)."""
    rng = np.random.default_rng(seed)
    ranks: dict[str, list[np.ndarray]] = {k: [] for k in PRIORS}
    for i in range(n_studies):
        truth = _truth(rng)
        counts = _simulate(rng, truth)
        if corrupt is not None:
            counts = corrupt(counts)
        tab = bcm.AgreementTable(counts, populations=[f"p{j}" for j in range(P)])
        model = bcm.models.hui_walter(tab, priors=PRIORS)
        with warnings.catch_warnings():
            # a few of hundreds of short runs miss R-hat < 1.01: that is part of what
            # calibration measures, not a reason to stop
            warnings.simplefilter("ignore", bcm.ConvergenceWarning)
            idata = bcm.fit(model, draws=400, tune=300, chains=2, random_seed=seed + i,
                            prior=False, predictive=False, metrics=[])
        assert idata.attrs["engine"] == "bayescm-kernel"
        for name in PRIORS:
            draws = idata.posterior[name].values[:, ::THIN].reshape(-1, truth[name].size)
            ranks[name].append((draws < truth[name]).sum(axis=0))
    return {k: np.array(v) for k, v in ranks.items()}


def uniformity_pvalues(ranks: dict[str, np.ndarray]) -> dict[str, float]:
    """Chi-square p-value of each scalar parameter's rank histogram (BINS equal bins)."""
    out = {}
    for name, r in ranks.items():
        n_ranks = 400 * 2 // THIN + 1
        for u in range(r.shape[1]):
            observed = np.bincount(r[:, u] * BINS // n_ranks, minlength=BINS)
            out[f"{name}[{u}]"] = float(stats.chisquare(observed).pvalue)
    return out


@pytest.mark.slow
def test_latent_class_posterior_is_calibrated():
    """150 studies through the compiled Hui-Walter kernel: every parameter's ranks are
    uniform (overall false-alarm rate <= 0.001, see the module notes)."""
    pvalues = uniformity_pvalues(sbc_ranks(150, seed=11))
    level = ALPHA / len(pvalues)
    assert min(pvalues.values()) > level, pvalues


@pytest.mark.slow
def test_a_wrong_density_is_caught():
    """Power: the same check on a likelihood with classifiers A and B swapped in the
    discordant patterns fails (the check can tell a wrong density from a right one)."""
    pvalues = uniformity_pvalues(sbc_ranks(150, seed=11, corrupt=_swap_ab))
    assert min(pvalues.values()) < ALPHA / len(pvalues), pvalues


def _dependent_ranks(n_studies: int, seed: int) -> dict[str, np.ndarray]:
    """SBC ranks for Hui-Walter with conditional dependence between A and B."""
    from bayescm.models.hui_walter.model import pattern_probabilities

    rng = np.random.default_rng(seed)
    names = (*PRIORS, "cov_se", "cov_sp")
    ranks: dict[str, list[np.ndarray]] = {k: [] for k in names}
    for i in range(n_studies):
        truth = _truth(rng)
        u_se, u_sp = rng.uniform(size=(1, 1)), rng.uniform(size=(1, 1))
        prob, cov_se, cov_sp = pattern_probabilities(
            truth["sensitivity"][None], truth["specificity"][None], truth["prevalence"][None],
            u_se, u_sp, T, [(0, 1)])
        truth.update(cov_se=cov_se[0], cov_sp=cov_sp[0])
        counts = np.array([rng.multinomial(N, p / p.sum()) for p in prob[0]])
        tab = bcm.AgreementTable(counts, populations=[f"p{j}" for j in range(P)])
        model = bcm.models.hui_walter(tab, priors=PRIORS, conditional_dependence=[("A", "B")])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bcm.ConvergenceWarning)
            idata = bcm.fit(model, draws=400, tune=400, chains=2, random_seed=seed + i,
                            prior=False, predictive=False, metrics=[])
        for name in names:
            draws = idata.posterior[name].values[:, ::THIN].reshape(-1, truth[name].size)
            ranks[name].append((draws < truth[name]).sum(axis=0))
    return {k: np.array(v) for k, v in ranks.items()}


@pytest.mark.slow
def test_dependent_latent_class_posterior_is_calibrated():
    """The same check with a conditionally dependent pair (covariances in the kernel)."""
    pvalues = uniformity_pvalues(_dependent_ranks(150, seed=23))
    assert min(pvalues.values()) > ALPHA / len(pvalues), pvalues


@pytest.mark.slow
def test_folds_posterior_is_calibrated():
    """SBC of the hierarchical folds model (its compiled density on nutpie) averaged with
    identical folds: truths drawn from the default prior -- each rate the same in every
    fold with probability 0.5, else spread with tau ~ Beta(1, 1) -- and ranks of the mean
    rates, the prevalence and the between-fold sds (0 in identical folds: ties ranked
    uniformly at random among the equal draws)."""
    rng = np.random.default_rng(5)
    names = ("tpr_mean", "tnr_mean", "tpr_sd", "tnr_sd", "prevalence")
    ranks: dict[str, list[int]] = {k: [] for k in names}
    k, n = 5, 80
    for i in range(120):
        truth = {"prevalence": rng.beta(1, 1), "tpr_mean": rng.beta(1, 1),
                 "tnr_mean": rng.beta(1, 1)}
        rates = {}
        for r in ("tpr", "tnr"):
            mu = truth[f"{r}_mean"]
            if rng.random() < 0.5:  # identical folds
                rates[r], truth[f"{r}_sd"] = np.full(k, mu), 0.0
            else:
                tau = rng.beta(1, 1)
                kappa = (1 - tau) * (1 + tau) / tau**2
                rates[r] = rng.beta(mu * kappa, (1 - mu) * kappa, k)
                truth[f"{r}_sd"] = tau * np.sqrt(mu * (1 - mu))
        pos = rng.binomial(n, truth["prevalence"], k)
        tp, tn = rng.binomial(pos, rates["tpr"]), rng.binomial(n - pos, rates["tnr"])
        cms = bcm.ConfusionMatrix(tp=tp, fn=pos - tp, fp=n - pos - tn, tn=tn,
                                  classifier=[f"f{j}" for j in range(k)])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bcm.ConvergenceWarning)
            idata = bcm.fit(bcm.models.folds(cms), draws=400, tune=400, chains=2,
                            random_seed=i, prior=False, predictive=False, metrics=[])
        for name in names:
            draws = idata.posterior[name].values[:, ::THIN].ravel()
            ties = int((draws == truth[name]).sum())
            ranks[name].append(int((draws < truth[name]).sum()) + int(rng.integers(0, ties + 1)))
    pvalues = uniformity_pvalues({k: np.array(v)[:, None] for k, v in ranks.items()})
    assert min(pvalues.values()) > ALPHA / len(pvalues), pvalues


def _alpha_for(accuracy: float, s: float) -> float:
    """The log-odds alpha with E[logit^-1(alpha + s Z)] = accuracy, Z ~ N(0, 1), by
    adaptive quadrature and root finding (independent of the model's own quadrature)."""
    from scipy import integrate, optimize
    from scipy.special import expit

    def mean(alpha: float) -> float:
        return integrate.quad(lambda z: expit(alpha + s * z) * stats.norm.pdf(z),
                              -12, 12, epsabs=1e-12)[0]

    return optimize.brentq(lambda a: mean(a) - accuracy, -60.0, 60.0, xtol=1e-12)


@pytest.mark.slow
def test_items_posterior_is_calibrated():
    """SBC of the benchmark-items model (its compiled density on nutpie): two models on
    the same 40 items in 10 clusters, 2 runs each, truths from the default prior
    (accuracy ~ Beta(1, 1) per model, sigma_item ~ HalfNormal(2), sigma_cluster ~
    HalfNormal(2.5)),
    scores drawn item by item; ranks of both accuracies and both scales.  (Measured
    before this test, one model, 50 items in clusters of 5, one run, 2 x 200 studies at
    4 x 1,000 draws: chi-square p 0.90 and 0.47 for accuracy, 0.85 and 0.90 for the
    cluster scale, the 95% HDI covering 0.945 averaged over the prior.)

    Power, measured on copies of this test: cluster effects drawn at twice the scale
    ranked against the stated one fail it (p = 2.5e-37); accuracies mapped to log-odds
    with the cluster scale alone (sigma_item left out: a shift of a fraction of a
    posterior sd) pass it, so 120 studies detect gross errors, not small ones."""
    import pandas as pd
    from scipy.special import expit

    rng = np.random.default_rng(17)
    n_items, size, runs = 40, 4, 2
    default = bcm.priors.defaults("items")
    scales = [default[k].sigma for k in ("sigma_item", "sigma_cluster")]
    cluster = np.repeat(np.arange(n_items // size), size)
    names = ("accuracy[0]", "accuracy[1]", "sigma_item", "sigma_cluster")
    ranks: dict[str, list[int]] = {k: [] for k in names}
    for i in range(120):
        acc = rng.beta(1.0, 1.0, 2)
        sig_i, sig_c = np.abs(rng.normal(0.0, scales))
        alpha = [_alpha_for(a, float(np.hypot(sig_i, sig_c))) for a in acc]
        eta = (np.array(alpha)[:, None] + sig_i * rng.standard_normal(n_items)
               + (sig_c * rng.standard_normal(n_items // size))[cluster])  # (model, item)
        correct = rng.uniform(size=(runs, 2, n_items)) < expit(eta)
        frame = pd.DataFrame([{"item": j, "model": f"m{m}", "run": r, "cluster": f"c{cluster[j]}",
                               "correct": int(correct[r, m, j])}
                              for r in range(runs) for m in range(2) for j in range(n_items)])
        res = bcm.ItemResults.from_frame(frame, cluster="cluster", run="run")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bcm.ConvergenceWarning)
            idata = bcm.fit(bcm.models.items(res), draws=400, tune=400, chains=2,
                            random_seed=i, prior=False, predictive=False)
        assert idata.attrs["engine"] == "bayescm-kernel"
        post = idata.posterior
        truth = {"accuracy[0]": (post["accuracy"].sel(model="m0"), acc[0]),
                 "accuracy[1]": (post["accuracy"].sel(model="m1"), acc[1]),
                 "sigma_item": (post["sigma_item"], sig_i),
                 "sigma_cluster": (post["sigma_cluster"], sig_c)}
        for name, (da, value) in truth.items():
            draws = da.transpose("chain", "draw").values[:, ::THIN].ravel()
            ranks[name].append(int((draws < value).sum()))
    pvalues = uniformity_pvalues({k: np.array(v)[:, None] for k, v in ranks.items()})
    assert min(pvalues.values()) > ALPHA / len(pvalues), pvalues
