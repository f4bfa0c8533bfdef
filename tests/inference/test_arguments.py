"""Checks of fit's seed and target_accept and of the fit result the checks read
(bayescm.inference.arguments)."""

from __future__ import annotations

import numpy as np
import pytest

from bayescm.inference.arguments import check_fit_result, check_seed, check_target_accept


@pytest.mark.parametrize("seed", [None, 0, 1, 2**40, np.int64(3), np.random.default_rng(1),
                                  np.random.SeedSequence(2), np.random.PCG64(3)])
def test_what_numpy_takes_as_a_seed_passes(seed):
    check_seed(seed)
    np.random.default_rng(seed)  # ...and numpy takes it too


@pytest.mark.parametrize(("seed", "error"), [
    (-1, ValueError), (np.int64(-5), ValueError), (True, TypeError), ("a", TypeError),
    (1.5, TypeError), ([1, 2], TypeError),
])
def test_a_bad_seed_is_named(seed, error):
    with pytest.raises(error, match=r"random_seed must be an integer >= 0"):
        check_seed(seed)


@pytest.mark.parametrize("value", [None, 0.5, 0.99, np.float32(0.8)])
def test_a_rate_in_the_open_unit_interval_passes(value):
    check_target_accept(value)


@pytest.mark.parametrize("value", [0, 1, 2, -0.1, float("nan"), True, "high"])
def test_target_accept_outside_zero_one_is_named(value):
    with pytest.raises(ValueError, match=r"target_accept .* strictly between 0 and 1"):
        check_target_accept(value)


def test_only_a_fit_result_is_read():
    import xarray as xr

    check_fit_result(xr.DataTree())  # fit_closed_form's result type
    with pytest.raises(TypeError, match=r"idata must be an arviz\.InferenceData .* got dict"):
        check_fit_result({})
