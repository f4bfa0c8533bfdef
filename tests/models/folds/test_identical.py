"""The folds model averaged with identical folds: evidences, the average, the fit.

Independent computations: the spread model's marginal likelihood by 2-D quadrature
(binary) and by importance sampling from the prior (three classes); the pooled one by
Monte Carlo over the prior.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import betaln, expit, logsumexp

import bayescm as bcm
from bayescm.models.folds import identical as ide
from bayescm.models.folds.spread import KAPPA_MAX


def _quadrature(hits: np.ndarray, n: np.ndarray, size: int = 601):
    """Log evidence of the binary spread model (flat priors on mu and tau) and its
    posterior on a grid in (logit mu, logit tau), tau < 1e-4 taken at the model's bound."""
    x = np.linspace(-10, 12, size)
    y = np.linspace(np.log(1e-4 / (1 - 1e-4)), 16, size)
    mu, tau = expit(x)[:, None], expit(y)[None, :]
    kappa = np.clip((1 - tau) * (1 + tau) / tau**2, 1e-10, KAPPA_MAX)
    a, b = mu * kappa, (1 - mu) * kappa
    lp = sum(betaln(a + h, b + m - h) - betaln(a, b) for h, m in zip(hits, n, strict=True))
    lp = lp + np.log(mu * (1 - mu)) + np.log(tau * (1 - tau))
    dx, dy = x[1] - x[0], y[1] - y[0]
    main = logsumexp(lp) + np.log(dx * dy)
    below = (logsumexp(lp[:, 0] - np.log(tau[0, 0] * (1 - tau[0, 0]))) + np.log(dx)
             + np.log(1e-4))
    return float(np.logaddexp(main, below)), lp, x, y


def _grid_draws(lp, x, y, rng, size=4000):
    """I.i.d. draws of (mu, tau) from the grid posterior, jittered within their cells."""
    p = np.exp(lp - lp.max()).ravel()
    cells = rng.choice(p.size, size=size, p=p / p.sum())
    i, j = np.unravel_index(cells, lp.shape)
    dx, dy = x[1] - x[0], y[1] - y[0]
    return (expit(x[i] + rng.uniform(-dx / 2, dx / 2, size)),
            expit(y[j] + rng.uniform(-dy / 2, dy / 2, size)))


@pytest.mark.parametrize(("hits", "n"), [
    ([170, 168, 172, 169, 171], [200] * 5),   # identical folds
    ([199, 200, 198, 200, 199], [200] * 5),   # near-perfect
    ([150, 180, 160, 175, 140], [200] * 5),   # folds that differ
    ([9, 3, 7], [10, 10, 10]),                # few cases
])
def test_binary_spread_evidence_matches_quadrature(hits, n):
    """Bridge sampling from i.i.d. posterior draws against 2-D quadrature: within 0.03
    (the bridge's sd on such posteriors is <= 0.008, ``tests/models/test_bridge.py``;
    the quadrature at 601 points agrees with 2,001 points to 3e-5)."""
    hits, n = np.array(hits), np.array(n)
    exact, lp, x, y = _quadrature(hits, n)
    rng = np.random.default_rng(3)
    mu, tau = _grid_draws(lp, x, y, rng)
    rows = np.column_stack([hits, n - hits])
    got = ide.log_evidence_spread(rows, np.ones(2), (1.0, 1.0),
                                  np.column_stack([mu, 1 - mu]), tau, rng)
    assert got == pytest.approx(exact, abs=0.03)


def test_pooled_evidence_is_the_prior_expectation_of_the_likelihood():
    """Three classes, Dirichlet(0.5, 1, 2) prior: E[prod_f prod_j mu_j^C_fj] over 10^6
    prior draws (relative MC sd ~ 0.003 here) equals the closed form."""
    rng = np.random.default_rng(8)
    counts = np.array([[3, 1, 0], [2, 2, 1]])
    alpha = np.array([0.5, 1.0, 2.0])
    mu = rng.dirichlet(alpha, 1_000_000)
    mc = np.log(np.mean(np.prod(mu ** counts.sum(axis=0), axis=1)))
    assert ide.log_evidence_pooled(counts, alpha) == pytest.approx(mc, abs=0.02)


def _dirmult_loglik(counts, kappa, mu):
    from scipy.special import gammaln

    a = kappa[:, None] * mu
    sizes = counts.sum(axis=1)
    out = (gammaln(kappa)[:, None] - gammaln(kappa[:, None] + sizes)).sum(axis=1)
    for f in range(counts.shape[0]):
        out += (gammaln(a + counts[f]) - gammaln(a)).sum(axis=1)
    return out


def test_three_class_spread_evidence_matches_importance_sampling():
    """Three folds of a three-class row with few cases: the evidence as the prior mean of
    the Dirichlet-multinomial likelihood over 400,000 prior draws (relative MC sd below
    0.01), and posterior draws resampled from a second batch."""
    rng = np.random.default_rng(21)
    counts = np.array([[6, 2, 1], [4, 4, 0], [8, 1, 1]])
    alpha = np.full(3, 2 / 3)

    def prior(size):
        mu = rng.dirichlet(alpha, size)
        tau = rng.uniform(0, 1, size)
        kappa = np.clip((1 - tau) * (1 + tau) / tau**2, 1e-10, KAPPA_MAX)
        return mu, tau, _dirmult_loglik(counts, kappa, mu)

    _, _, ll = prior(400_000)
    exact = float(logsumexp(ll) - np.log(ll.size))
    weights = np.exp(ll - ll.max())
    mu2, tau2, ll2 = prior(400_000)
    w2 = np.exp(ll2 - ll2.max())
    pick = rng.choice(ll2.size, size=4000, p=w2 / w2.sum())
    got = ide.log_evidence_spread(counts, alpha, (1.0, 1.0), mu2[pick], tau2[pick], rng)
    rel_se = np.sqrt(np.mean(weights**2) / np.mean(weights) ** 2 / ll.size)
    assert rel_se < 0.01
    assert got == pytest.approx(exact, abs=0.05)


def test_probability_and_average():
    assert ide.probability(0.0, 5.0, 0.0) == 0.0 and ide.probability(1.0, -5.0, 0.0) == 1.0
    assert ide.probability(0.2, np.log(4), 0.0) == pytest.approx(0.5)
    rng = np.random.default_rng(2)
    counts, alpha = np.array([[30, 10], [28, 12]]), np.array([1.0, 1.0])
    mu = np.stack([np.full((4, 5000), 0.3), np.full((4, 5000), 0.7)], axis=-1)
    out, same = ide.average(mu, counts, alpha, 0.25, rng)
    # about a quarter replaced (binomial sd 0.003), replaced draws ~ Beta(59, 23)
    assert same.mean() == pytest.approx(0.25, abs=0.015)
    np.testing.assert_array_equal(out[~same], mu[~same])
    pooled = out[same][:, 0]
    assert pooled.mean() == pytest.approx(59 / 82, abs=5 * 0.049 / np.sqrt(same.sum()))
    np.testing.assert_allclose(out.sum(axis=-1), 1.0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ide.prior_probability(1.5)
    with pytest.raises(TypeError, match="a number"):
        ide.prior_probability("half")


def test_no_cases_of_a_row_leave_its_prior_probability():
    assert ide.evidence(np.zeros((3, 2)), np.ones(2), (1.0, 1.0), None, None, None) == (0.0,
                                                                                       0.0)


def _cms(tp, fn, fp, tn):
    return bcm.ConfusionMatrix(tp=tp, fn=fn, fp=fp, tn=tn,
                               classifier=[f"f{i}" for i in range(len(tp))])


def _spread_draws(cms, rng, shape=(4, 1000)):
    """The spread model's posterior of both rates, drawn i.i.d. from the quadrature grid
    (what NUTS would give, without compiling a sampler), and the rates' log evidences."""
    import xarray as xr

    ds, evidence = xr.Dataset(), {}
    for rate, hits, misses in (("tpr", "tp", "fn"), ("tnr", "tn", "fp")):
        h, m = cms.cell(hits), cms.cell(misses)
        evidence[rate], lp, x, y = _quadrature(h, h + m)
        mu, tau = _grid_draws(lp, x, y, rng, size=int(np.prod(shape)))
        kappa = np.clip((1 - tau) * (1 + tau) / tau**2, 1e-10, KAPPA_MAX)
        for name, value in (("mean", mu), ("spread", tau), ("kappa", kappa)):
            ds[f"{rate}_{name}"] = (("chain", "draw"), value.reshape(shape))
    return ds, evidence


def test_pooled_limit_is_the_exact_beta():
    """identical=1: every draw is pooled, tpr_mean ~ Beta(1 + sum tp, 1 + sum fn) (4,000
    draws: MC sd of the mean sd/63, of the sd ~ sd/89), every fold's rate is the mean and
    the between-fold sd 0."""
    from bayescm.family import spec_of
    from bayescm.models.folds.model import _average, _fold_rates

    cms = _cms([40, 35, 44], [8, 12, 6], [5, 9, 7], [47, 44, 43])
    spec = spec_of(bcm.models.folds(cms, identical=1.0))
    ds, _ = _spread_draws(cms, np.random.default_rng(4))
    out = _fold_rates(ds, cms, _average(ds, spec))
    a, b = 1 + 119, 1 + 26
    mean, sd = a / (a + b), np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    x = out["tpr_mean"].values.ravel()
    assert x.mean() == pytest.approx(mean, abs=5 * sd / 63)
    assert x.std() == pytest.approx(sd, rel=5 / 89)
    assert (out["tpr_identical"] == 1).all() and (out["tpr_sd"] == 0).all()
    np.testing.assert_array_equal(out["tpr_fold"].values,
                                  np.repeat(out["tpr_mean"].values[..., None], 3, axis=-1))
    np.testing.assert_array_equal(out["tpr_new"].values, out["tpr_mean"].values)


@pytest.mark.parametrize("tp", [[170, 168, 172, 169, 171], [150, 180, 160, 175, 140]])
def test_the_data_decide_between_identical_and_spread_folds(tp):
    """Identical folds and folds that differ: the posterior probability of identical folds
    equals the one from the quadrature evidence and the closed pooled one (the bridge's log
    error < 0.03 moves it by < 0.01), the indicators' mean is that probability (within 5
    binomial sds at 4,000 draws), and the spread model's own draws are left as sampled."""
    from bayescm.family import spec_of
    from bayescm.models.folds.model import _average

    cms = _cms(tp, [200 - t for t in tp], [20] * 5, [80] * 5)
    spec = spec_of(bcm.models.folds(cms))
    ds, evidence = _spread_draws(cms, np.random.default_rng(9))
    tau = ds["tpr_spread"].values.copy()
    _average(ds, spec)
    rows = np.column_stack([cms.cell("tp"), cms.cell("fn")])
    exact = ide.probability(0.5, ide.log_evidence_pooled(rows, np.ones(2)), evidence["tpr"])
    got = ds["tpr_identical"].attrs["probability"]
    assert got == pytest.approx(exact, abs=0.01)
    n = ds["tpr_identical"].size
    assert float(ds["tpr_identical"].mean()) == pytest.approx(
        got, abs=5 * np.sqrt(got * (1 - got) / n) + 1e-12)
    np.testing.assert_array_equal(ds["tpr_spread"].values, tau)
    # the two cases: identical folds believed, differing folds not
    assert (exact > 0.9) if tp[0] == 170 else (exact < 1e-3)


def test_a_gamma_on_kappa_is_not_averaged_and_the_option_is_rebuilt():
    from bayescm.family import spec_of
    from bayescm.models.folds.model import _average

    cms = _cms([40, 35, 44], [8, 12, 6], [5, 9, 7], [47, 44, 43])
    model = bcm.models.folds(cms, priors={"tpr_kappa": bcm.priors.Gamma(2, 0.05)},
                             identical=0.3)
    spec = spec_of(model)
    ds, _ = _spread_draws(cms, np.random.default_rng(2))
    assert set(_average(ds, spec)) == {"tnr"} and "tpr_identical" not in ds
    assert ds["tnr_identical"].attrs["prior_probability"] == 0.3
    from bayescm.family import get_family

    family = get_family(spec.family)
    again = family.rebuild(cms, {name: {"all": per[0]} for name, per in spec.priors.items()},
                           spec.options)
    assert spec_of(again).options == {"identical": 0.3}
    # no average at all with identical=0
    ds0, _ = _spread_draws(cms, np.random.default_rng(2))
    assert _average(ds0, spec_of(bcm.models.folds(cms, identical=0))) == {}


def test_too_few_draws_leave_the_spread_model_with_a_warning():
    """Bridge sampling in two dimensions needs 24 draws: with 4 x 5 the fit is the spread
    model alone, and says so."""
    from bayescm.family import spec_of
    from bayescm.models.folds.model import _average

    cms = _cms([40, 35, 44], [8, 12, 6], [5, 9, 7], [47, 44, 43])
    ds, _ = _spread_draws(cms, np.random.default_rng(2), shape=(4, 5))
    with pytest.warns(UserWarning, match="too few to weigh identical folds"):
        assert _average(ds, spec_of(bcm.models.folds(cms))) == {}
    assert "tpr_identical" not in ds
