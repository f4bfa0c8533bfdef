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
