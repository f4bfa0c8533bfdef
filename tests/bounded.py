"""Refused at once: a call that would take too much memory raises, fast and without
allocating (the tests of bayescm.inference.budget and of every bounded entry point).

    from tests.bounded import refused_fast

    err = refused_fast(lambda: bcm.fit(model, draws=10**7), SizeError)
    assert "fewer draws" in str(err)

The call runs twice: once under a hang guard (the refusal is an estimate, not the work:
a call that starts the work instead fails by the memory bound, or by the guard if it
hangs) and once under ``tracemalloc`` (its peak, which NumPy's allocations are counted
in, under :data:`MAX_BYTES`).  No wall-clock time is asserted: machines here are
noisy, and speed is measured by the scripts in ``benchmarks/``.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

from .timebound import time_bound

HANG_SECONDS = 60
"""The hang guard of each call (a refusal takes milliseconds)."""
MAX_BYTES = 100e6
"""...and allocates less than 100 MB (what is measured: Python's and NumPy's heap)."""


def refused_fast(call: Callable[[], Any], error: type[BaseException] | tuple = ValueError, *,
                 match: str | None = None, max_bytes: float = MAX_BYTES) -> BaseException:
    """``call()`` raises ``error`` without hanging and with a peak under ``max_bytes``."""
    with time_bound(HANG_SECONDS, "the first call"), pytest.raises(error, match=match) as info:
        call()
    tracemalloc.start()
    try:
        with time_bound(HANG_SECONDS, "the traced call"), pytest.raises(error, match=match):
            call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < max_bytes, f"allocated {peak / 1e6:.0f} MB before refusing"
    return info.value
