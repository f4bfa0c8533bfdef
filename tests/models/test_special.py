"""The compiled special functions against SciPy."""

import numpy as np
from scipy import special

from bayescm.models.special import digamma


def test_digamma_matches_scipy_from_tiny_to_huge_arguments():
    """Absolute error below 1e-13 for x >= 1 (asymptotic series beyond 10, recurrence
    below), relative 1e-13 below 1 where psi ~ -1/x."""
    x = np.concatenate([np.logspace(-8, 0, 50), np.linspace(1, 30, 200), np.logspace(1.5, 9, 50)])
    got = np.array([digamma(v) for v in x])
    want = special.digamma(x)
    big = x >= 1
    np.testing.assert_allclose(got[big], want[big], rtol=0, atol=1e-13)
    np.testing.assert_allclose(got[~big], want[~big], rtol=1e-13)


def test_digamma_at_zero_is_minus_infinity_not_an_exception():
    """A kernel far out in its tails can ask for psi(0) (a Beta parameter mu * kappa that
    underflowed): -inf as SciPy, not a ZeroDivisionError, which a compiled density
    cannot raise (numba printed it as unraisable in a folds fit, and the density value
    was then undefined)."""
    assert digamma(0.0) == special.digamma(0.0) == -np.inf
    assert np.isnan(digamma(np.nan))
