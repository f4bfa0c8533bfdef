"""draw_stats: the median, HDI and HDI MCSE of rows of draws from one set of sorts.

The reference is the straightforward computation the summary used before: a
partition median, ``stats.hdi`` (partition, then sorted tails) and ``stats.hdi_mcse``
(each batch's HDI) on the unsorted draws.  The compiled path must give the same
numbers bit for bit (same order statistics, same arithmetic), so equality is exact.
"""

import numpy as np
import pytest

from bayescm import stats
from bayescm.inference.order_stats import draw_stats


def _reference(x: np.ndarray, p: float) -> dict[str, np.ndarray]:
    n = x.shape[-1]
    mid = ((n - 1) // 2, n // 2)
    part = np.partition(x, list(mid), axis=-1)
    lower, upper = stats.hdi(x, p)
    mcse_lower, mcse_upper = stats.hdi_mcse(x, p)
    return {"median": 0.5 * (part[:, mid[0]] + part[:, mid[1]]), "hdi_lower": lower,
            "hdi_upper": upper, "mcse_hdi_lower": mcse_lower, "mcse_hdi_upper": mcse_upper}


@pytest.mark.parametrize("n", [2, 3, 5, 199, 200, 201, 1000, 4000, 4003])
@pytest.mark.parametrize("p", [0.5, 0.9, 0.95, 0.999])
def test_equals_the_straightforward_statistics(n, p):
    rng = np.random.default_rng(n)
    rows = [rng.beta(2, 9, n), rng.normal(size=n), -rng.lognormal(size=n),
            np.round(rng.normal(size=n), 1),  # many ties
            np.full(n, 0.25),  # all tied
            np.r_[np.zeros(n // 2), np.ones(n - n // 2)]]  # two tied blocks
    x = np.array(rows)
    got, want = draw_stats(x, p), _reference(x, p)
    assert set(got) == set(want)
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key, strict=True)


def test_batches_follow_hdi_mcse():
    x = np.random.default_rng(1).gamma(3.0, size=(4, 3000))
    got = draw_stats(x, 0.9, batches=8, min_batch=100)
    lower, upper = stats.hdi_mcse(x, 0.9, batches=8, min_batch=100)
    np.testing.assert_array_equal(got["mcse_hdi_lower"], lower)
    np.testing.assert_array_equal(got["mcse_hdi_upper"], upper)
    assert np.isnan(draw_stats(x[:, :150])["mcse_hdi_lower"]).all()  # < 4 batches of 50


def test_errors():
    with pytest.raises(ValueError, match="finite"):
        draw_stats(np.array([[0.1, np.nan, 0.3]]))
    with pytest.raises(ValueError, match="shape"):
        draw_stats(np.ones(5))
    with pytest.raises(ValueError, match="shape"):
        draw_stats(np.ones((2, 1)))
    with pytest.raises(ValueError, match="hdi_prob"):
        draw_stats(np.ones((2, 10)), 1.5)
