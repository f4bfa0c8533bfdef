"""The stats core's pieces that callers combine: hdi_of_tails and sorted batches."""

import numpy as np
import pytest

from bayescm import stats


@pytest.mark.parametrize("p", [0.5, 0.95])
def test_hdi_of_tails_is_the_last_step_of_hdi(p):
    x = np.random.default_rng(0).beta(3, 8, size=(5, 1001))
    n = x.shape[-1]
    m = n - int(np.floor(p * n))  # draws in the tails of the windows
    s = np.sort(x, axis=-1)
    for got, want in zip(stats.hdi_of_tails(s[:, :m], s[:, n - m:]), stats.hdi(x, p),
                         strict=True):
        np.testing.assert_array_equal(got, want)
    # a hand-made case: windows [0, 2], [1, 2.5], [2, 3.5]; the second is narrowest
    lo, hi = stats.hdi_of_tails(np.array([0.0, 1.0, 2.0]), np.array([2.0, 2.5, 3.5]))
    assert (float(lo), float(hi)) == (1.0, 2.5)
    lo, hi = stats.hdi_of_tails(np.array([0.0, 1.0]), np.array([2.0, np.nan]))
    assert np.isnan(lo) and np.isnan(hi)  # NaN sorts last: the row had NaN


def test_hdi_mcse_of_sorted_batches():
    x = np.random.default_rng(1).normal(size=(3, 4000))
    batches = np.sort(x.reshape(3, 16, 250), axis=-1).reshape(3, 4000)
    for got, want in zip(stats.hdi_mcse(batches, 0.95, sorted_batches=True),
                         stats.hdi_mcse(x, 0.95), strict=True):
        np.testing.assert_array_equal(got, want)
