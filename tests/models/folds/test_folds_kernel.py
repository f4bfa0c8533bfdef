"""The compiled density of the binary folds model against PyMC's and an independent
gradient (SciPy's digamma)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import digamma as psi
from scipy.special import expit

import bayescm as bcm
from bayescm.models.folds.spread import KAPPA_MAX
from tests.models.test_models import _kernel_logp

PRIORS = {"prevalence": (1, 1), "tpr_mean": (2, 3), "tpr_spread": (1, 1), "tnr_mean": (1, 1),
          "tnr_spread": (1, 4)}


def _model(cms):
    m = bcm.models.folds(cms, priors={k: bcm.priors.Beta(*v) for k, v in PRIORS.items()})
    return m, bcm.models.family_of(m).kernel(m, bcm.models.spec_of(m))


def _gradient(x, cms):
    """The gradient written out in NumPy with SciPy's digamma (module docstring's math)."""
    tp, fn, fp, tn = np.asarray(cms.counts, dtype=float).T
    n, pos = tp + fn + fp + tn, tp + fn
    (a, b) = PRIORS["prevalence"]
    phi = expit(x[0])
    out = [a * (1 - phi) - b * phi + np.sum(pos - n * phi)]
    for xm, xt, mean, spread, h, miss in ((x[1], x[2], "tpr_mean", "tpr_spread", tp, fn),
                                          (x[3], x[4], "tnr_mean", "tnr_spread", tn, fp)):
        mu, tau = expit(xm), expit(xt)
        k = (1 - tau) * (1 + tau) / tau**2
        assert 1e-10 < k < KAPPA_MAX
        al, be, total = mu * k, (1 - mu) * k, h + miss
        d_al = np.sum(psi(h + al) - psi(total + k) - psi(al) + psi(k))
        d_be = np.sum(psi(miss + be) - psi(total + k) - psi(be) + psi(k))
        (am, bm), (at, bt) = PRIORS[mean], PRIORS[spread]
        out += [am * (1 - mu) - bm * mu + k * (d_al - d_be) * mu * (1 - mu),
                at * (1 - tau) - bt * tau + (mu * d_al + (1 - mu) * d_be) * -2 * (1 - tau) / tau**2]
    return np.array(out)


@pytest.mark.parametrize("cms", [
    bcm.ConfusionMatrix(tp=[40, 35, 44], fn=[8, 12, 6], fp=[5, 9, 7], tn=[47, 44, 43]),
    bcm.ConfusionMatrix(tp=[60, 59, 60, 58], fn=[0, 1, 0, 2], fp=[0, 0, 1, 0],
                        tn=[40, 40, 39, 40]),  # near-perfect folds
])
def test_kernel_is_the_model(cms):
    """PyMC's value at 20 random points (sd 1.5 on the log-odds scale) to 1e-8 including
    the constants; the gradient to 1e-13 of SciPy's digamma formula, and to 1e-7 of
    PyTensor's (whose digamma is accurate to about 1e-9 relative at these points)."""
    m, kernel = _model(cms)
    assert kernel is not None and kernel.n_dim == 5
    logp, dlogp = m.compile_logp(), m.compile_dlogp()
    rng = np.random.default_rng(5)
    for _ in range(20):
        x = rng.normal(0, 1.5, 5)
        point = dict(zip([v.name for v in m.value_vars], x, strict=True))
        value, grad = _kernel_logp(kernel, x)
        assert value == pytest.approx(float(logp(point)), abs=1e-8)
        np.testing.assert_allclose(grad, _gradient(x, cms), rtol=1e-11, atol=1e-11)
        np.testing.assert_allclose(grad, dlogp(point), rtol=1e-7)


def test_beyond_the_bound_the_spread_has_no_gradient_from_the_likelihood():
    """Below tau = 1e-4 the concentration is KAPPA_MAX: only the prior's gradient is left
    (Beta(1, 4) on sigma(x): 1 - 5 sigma(x))."""
    cms = bcm.ConfusionMatrix(tp=[40, 35, 44], fn=[8, 12, 6], fp=[5, 9, 7], tn=[47, 44, 43])
    _, kernel = _model(cms)
    x = np.array([0.2, 1.0, 0.0, 1.0, -12.0])
    _, grad = _kernel_logp(kernel, x)
    assert grad[4] == pytest.approx(1 - 5 * expit(-12.0), rel=1e-12)


def test_a_gamma_on_kappa_keeps_nutpie_compiling_the_model():
    cms = bcm.ConfusionMatrix(tp=[40, 35, 44], fn=[8, 12, 6], fp=[5, 9, 7], tn=[47, 44, 43])
    m = bcm.models.folds(cms, priors={"tpr_kappa": bcm.priors.Gamma(2, 0.05)})
    assert bcm.models.family_of(m).kernel(m, bcm.models.spec_of(m)) is None
