"""The exact predictive pmf's lattice is checked against the memory bound before it is
allocated (issue 25): ``metric_pmf(n_pos=n_neg=10**5)`` needed a 74.5 GiB pmf (a raw
MemoryError, or swapping where memory allows); now a SizeError at once."""

from __future__ import annotations

import pytest

import bayescm as bcm
from bayescm.exact import metric_pmf, predictive_pmf
from bayescm.inference.budget import SizeError
from tests.bounded import refused_fast

COCAINE = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)


@pytest.mark.parametrize("call", [metric_pmf, predictive_pmf], ids=["metric", "joint"])
def test_a_lattice_of_ten_billion_points_is_refused_at_once(call):
    args = (COCAINE, "acc") if call is metric_pmf else (COCAINE,)
    err = refused_fast(lambda: call(*args, 10**5, 10**5), SizeError)
    text = str(err)
    assert "100,000 positives and 100,000 negatives" in text and "GiB" in text
    assert "smaller future test set" in text and "predictive_n" in text


def test_the_metric_pmf_counts_its_contour_arrays_too(monkeypatch):
    """At a bound between the joint pmf's size and the metric pmf's (which sorts and
    groups the lattice: about nine more arrays), the joint pmf runs and the metric's
    is refused."""
    from bayescm.inference import budget

    points = 1001 * 1001
    monkeypatch.setattr(budget, "memory_limit", lambda: 8 * points * 4)
    assert predictive_pmf(COCAINE, 1000, 1000).shape == (1, 1001, 1001)
    with pytest.raises(SizeError, match="1,000 positives"):
        metric_pmf(COCAINE, "acc", 1000, 1000)


def test_lattices_the_pmf_is_meant_for_still_run():
    frame = metric_pmf(COCAINE, "ba", 999, 999)
    assert abs(frame["probability"].sum() - 1) < 1e-9
