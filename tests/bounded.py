"""Refused at once: a call that would take too much memory raises, fast and without
allocating (the tests of bayescm.inference.budget and of every bounded entry point).

    from tests.bounded import refused_fast

    err = refused_fast(lambda: bcm.fit(model, draws=10**7), SizeError)
    assert "fewer draws" in str(err)

The call runs three times: once to warm up (imports the first call of a process makes,
e.g. xarray's of Dask, are not what is measured), once timed (wall clock, under
:data:`SECONDS`) and once under ``tracemalloc`` (its peak, which NumPy's allocations
are counted in, under :data:`MAX_BYTES`).  A hang fails through the time bound.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

from .timebound import time_bound

SECONDS = 1.0
"""A refusal takes well under a second (the estimate, not the work)."""
MAX_BYTES = 100e6
"""...and allocates less than 100 MB (what is measured: Python's and NumPy's heap)."""


def refused_fast(call: Callable[[], Any], error: type[BaseException] | tuple = ValueError, *,
                 match: str | None = None, seconds: float = SECONDS,
                 max_bytes: float = MAX_BYTES) -> BaseException:
    """``call()`` raises ``error`` within ``seconds`` and a peak of ``max_bytes``."""
    with time_bound(60, "the warm-up call"), pytest.raises(error, match=match):
        call()
    start = time.perf_counter()
    with time_bound(60, "the timed call"), pytest.raises(error, match=match) as info:
        call()
    took = time.perf_counter() - start
    assert took < seconds, f"refused in {took:.2f} s, not under {seconds} s"
    tracemalloc.start()
    try:
        with time_bound(60, "the traced call"), pytest.raises(error, match=match):
            call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < max_bytes, f"allocated {peak / 1e6:.0f} MB before refusing"
    return info.value
