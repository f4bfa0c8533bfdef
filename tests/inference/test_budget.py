"""Bounded work (issue 25): every input that sizes a fit is checked against a memory
estimate before anything is allocated, and refused at once with what to use instead.

Measured before the bound (2-core machine, 6-12 GiB address-space limit): the exact
fit of 10,000 matrices grew for 82 s to 10 GB and a raw MemoryError; ``draws=10**7``
for 28 s to 3.8 GB and a raw MemoryError.  Now each is a SizeError in well under a
second with less than 100 MB allocated (``tests/bounded.py``).
"""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest

import bayescm as bcm
from bayescm.inference import budget
from bayescm.inference.budget import SizeError
from bayescm.inference.fit import check_sizes, fit_closed_form
from tests.bounded import refused_fast


@pytest.fixture(scope="module")
def cocaine():
    return bcm.models.three_beta(bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6))


def _matrices(n: int) -> bcm.ConfusionMatrix:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.integers(1, 100, (n, 4)), columns=list(bcm.CELLS))
    return bcm.ConfusionMatrix.from_frame(frame)


def test_the_exact_fit_of_ten_thousand_matrices_points_to_summary_exact():
    model = bcm.models.three_beta(_matrices(10_000))
    err = refused_fast(lambda: bcm.fit(model, sampler="exact", draws=1000, random_seed=1),
                       SizeError)
    text = str(err)
    assert "10,000 classifiers" in text and "bcm.summary_exact" in text and "GiB" in text
    assert "chunks" in text


@pytest.mark.parametrize("options", [
    {"draws": 10**7},                               # NUTS
    {"draws": 10**7, "sampler": "exact"},
    {"tune": 10**8},                                # NUTS keeps its tuning steps
    {"chains": 250_000, "draws": 4, "tune": 1},     # each chain's fixed cost
    {"draws": 10**30},                              # no overflow: refused the same way
])
def test_draws_tune_and_chains_are_bounded_before_sampling(cocaine, options):
    err = refused_fast(lambda: bcm.fit(cocaine, random_seed=1, **options), SizeError)
    assert "fewer draws" in str(err) and "memory" in str(err)
    assert isinstance(err, ValueError)  # bayescm's own error is a ValueError


def test_size_error_is_public_one_class_and_raised_before_allocating(cocaine):
    """``bcm.SizeError`` is the class every bound raises: ``draws=10**9`` (4 chains x 10^9
    float64 steps, 29.8 GiB, over the 8 GiB cap) is refused in well under a second with
    less than 100 MB allocated (``refused_fast``), and it is a ValueError."""
    assert bcm.SizeError is SizeError and issubclass(bcm.SizeError, ValueError)
    assert "SizeError" in bcm.__all__ and repr(bcm.SizeError) == "<class 'bayescm.SizeError'>"
    err = refused_fast(lambda: bcm.fit(cocaine, sampler="exact", draws=10**9, random_seed=1),
                       bcm.SizeError)
    assert "29.8 GiB" in str(err) and "fewer draws" in str(err)


def test_check_sizes_bounds_the_steps_alone():
    with pytest.raises(SizeError, match="250,000 chains"):
        check_sizes(4, 1, 250_000)
    with pytest.raises(SizeError, match="tuning steps"):
        check_sizes(1000, 10**12, 4)
    check_sizes(1000, 10**12, 4, sampler="exact")  # the exact sampler does not tune
    check_sizes(1000, 1000, 4)


def test_a_closed_form_of_many_classes_is_bounded():
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 20, (100, 100)) + 100 * np.eye(100, dtype=int)
    mc = bcm.MulticlassConfusionMatrix(counts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        err = refused_fast(lambda: fit_closed_form("multiclass_rows", mc, draws=20_000),
                           SizeError)
    assert "fewer draws" in str(err)


def test_the_bound_is_half_the_available_memory_within_the_cap(monkeypatch):
    monkeypatch.setattr(budget, "available_memory", lambda: 4 * 2**30)
    assert budget.memory_limit() == 2 * 2**30
    monkeypatch.setattr(budget, "available_memory", lambda: 64 * 2**30)
    assert budget.memory_limit() == budget.MEMORY_CAP == 8 * 2**30
    monkeypatch.setattr(budget, "available_memory", lambda: None)
    assert budget.memory_limit() == budget.MEMORY_CAP
    monkeypatch.setattr(budget, "MEMORY_CAP", 64 * 2**30)  # a larger machine raises it
    assert budget.memory_limit() == 64 * 2**30
    with pytest.raises(SizeError, match=r"more than the 64\.0 GiB"):
        budget.check_memory(1e12, "This", "Do less.")
    avail = budget.available_memory()
    assert avail is None or avail > 0


def test_the_estimate_is_close_to_what_a_fit_holds(cocaine):
    """The estimate lies between the measured peak and twice it (NumPy's and Python's
    allocations, traced), so the bound neither lets a fit through that takes much more
    nor refuses one that takes much less."""
    model = bcm.models.three_beta(_matrices(50))
    seen = {}
    real = budget.check_fit

    def spy(*args, **kwargs):
        seen["bytes"] = real(*args, **kwargs)
        return seen["bytes"]

    for m, options in ((model, {"sampler": "exact", "draws": 2000}),
                       (cocaine, {"sampler": "exact", "draws": 50_000})):
        with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mp.setattr(budget, "check_fit", spy)
            tracemalloc.start()
            try:
                bcm.fit(m, random_seed=1, **options)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
        assert peak < seen["bytes"] < 2.5 * peak, (peak, seen["bytes"])


def test_fits_within_the_bound_still_run(cocaine):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idata = bcm.fit(cocaine, sampler="exact", draws=1000, random_seed=1)
    assert idata.posterior.sizes["draw"] == 1000
