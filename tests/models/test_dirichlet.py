"""Dirichlet draws safe where every parameter is tiny (``bayescm.models._dirichlet``)."""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

from bayescm.models._dirichlet import dirichlet, log_space_dirichlet


def test_rows_whose_gamma_variates_all_underflow_are_drawn_in_log_space():
    """A fold row whose Dirichlet parameters are all tiny: every Gamma variate underflows
    to 0 and the plain ratio is 0/0.  ``dirichlet`` gives finite rows that sum to 1,
    leaves the other rows' draws alone, and its log-space draw has the Dirichlet's
    marginal (KS against Beta(a_1, sum(a) - a_1), also where the plain ratio works)."""
    alpha = np.array([[1e-12, 2e-12, 1e-13], [2.0, 1.0, 0.5]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0/0 RuntimeWarning
        x = dirichlet(np.random.default_rng(0), np.tile(alpha, (500, 1, 1)))
    assert np.isfinite(x).all() and np.allclose(x.sum(-1), 1.0)
    plain = np.random.default_rng(0).standard_gamma(np.tile(alpha, (500, 1, 1)))[:, 1]
    np.testing.assert_array_equal(x[:, 1], plain / plain.sum(-1, keepdims=True))
    for a in ([0.3, 0.5, 2.0], [0.05, 0.05, 0.05]):
        a = np.array(a)
        y = log_space_dirichlet(np.random.default_rng(1), np.tile(a, (20_000, 1)))
        assert stats.kstest(y[:, 0], stats.beta(a[0], a.sum() - a[0]).cdf).pvalue > 1e-3
    # far below what a float can hold (a draw is one category, to rounding): each of
    # three equal tiny parameters takes the mass a third of the time
    y = log_space_dirichlet(np.random.default_rng(2), np.full((30_000, 3), 1e-4))
    assert (y.max(-1) > 0.999).mean() > 0.99
    share = (y.argmax(-1) == 0).mean()
    assert abs(share - 1 / 3) < 4 * np.sqrt(2 / 9 / 30_000)


def test_size_draws_are_the_plain_ratio_of_the_same_gammas():
    """With ``size`` (the prior draws' form) the draws are those of the plain ratio of
    the same generator, bit for bit, and a row of tiny parameters is finite."""
    alpha = np.array([[1e-12, 1e-12], [3.0, 1.0]])
    x = dirichlet(np.random.default_rng(4), alpha, (200, *alpha.shape))
    g = np.random.default_rng(4).standard_gamma(alpha, size=(200, *alpha.shape))
    np.testing.assert_array_equal(x[:, 1], g[:, 1] / g[:, 1].sum(-1, keepdims=True))
    assert np.isfinite(x).all() and np.allclose(x.sum(-1), 1.0)
