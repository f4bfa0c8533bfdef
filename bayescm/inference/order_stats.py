r"""Median, HDI and the HDI's batch MCSE of many rows of draws, from one set of sorts.

:func:`bayescm.summary.table` needs, for every row of draws, the median, the HDI
(:func:`bayescm.stats.hdi`) and the Monte Carlo error of its bounds
(:func:`bayescm.stats.hdi_mcse`, which cuts the row into :math:`B` batches of
:math:`m` draws and takes each batch's HDI).  Computed one by one these partition
or sort every row three times.  Here each batch is sorted once (short rows, which
NumPy sorts with its vectorised sorting networks); the batch HDIs read the sorted
batches (``hdi_mcse(..., sorted_batches=True)``) and the whole row's order
statistics come from the :math:`B` sorted runs by a compiled selection:

* the :math:`r`-th smallest draw of the union of sorted runs is found by bisection
  over the runs' windows -- the middle element of the widest window is the pivot,
  binary searches count the draws below and at it, and each step at least halves
  the widest window (:math:`O(B \log^2 m)` comparisons, no data moved);
* the :math:`n - \lfloor p\,n \rfloor` smallest draws are those below the order
  statistic of that rank (a prefix of each run) plus copies of it; sorted, they are
  the lower tails of :func:`bayescm.stats.hdi`'s windows, and the largest likewise
  the upper ones; :func:`bayescm.stats.hdi_of_tails` picks the window.

Every number equals, bit for bit, what ``hdi``, ``hdi_mcse`` and a partition median
give (the same order statistics enter the same arithmetic); the tests compare them.
Compiled on first use by numba and cached on disk.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from bayescm.stats import check_hdi_prob, hdi_mcse, hdi_of_tails

__all__ = ["draw_stats"]


def draw_stats(values: Any, hdi_prob: float = 0.95, *, batches: int = 16,
               min_batch: int = 50) -> dict[str, np.ndarray]:
    r"""Median, HDI and the MCSE of its bounds of each row of finite draws.

    Parameters
    ----------
    values
        Finite draws, shape ``(rows, n)``, ``n >= 2`` (chains one after another).
    hdi_prob
        Mass of the HDI.
    batches, min_batch
        As in :func:`bayescm.stats.hdi_mcse`.

    Returns
    -------
    dict
        ``median`` (the mean of the order statistics :math:`\lfloor (n-1)/2 \rfloor`
        and :math:`\lfloor n/2 \rfloor`), ``hdi_lower``, ``hdi_upper``,
        ``mcse_hdi_lower``, ``mcse_hdi_upper``: arrays of ``rows`` values.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescm import stats
    >>> x = np.random.default_rng(0).beta(7, 3, size=(3, 4000))
    >>> out = draw_stats(x)
    >>> bool(np.all(out["hdi_lower"] == stats.hdi(x)[0]))
    True
    >>> bool(np.all(out["median"] == np.median(x, axis=-1)))
    True
    """
    p = check_hdi_prob(hdi_prob)
    x = np.ascontiguousarray(values, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] < 2:
        raise ValueError(f"draw_stats needs draws of shape (rows, n >= 2), got {x.shape}.")
    if not np.isfinite(x).all():
        raise ValueError("draw_stats needs finite draws; summarise rows with NaN or inf "
                         "by bayescm.summary.stats_columns.")
    rows, n = x.shape
    b = min(int(batches), n // int(min_batch))
    if b < 4:  # too few draws for batches (the MCSE is NaN): one sorted run
        runs, starts = np.sort(x, axis=-1), np.array([0, n])
        nan = np.full(rows, np.nan)
        mcse = (nan, nan.copy())
    else:
        m = n // b
        runs = np.sort(x[:, : b * m].reshape(rows, b, m), axis=-1).reshape(rows, -1)
        if b * m < n:  # the draws no batch holds: one more run
            runs = np.concatenate([runs, np.sort(x[:, b * m:], axis=-1)], axis=1)
        starts = np.unique(np.append(np.arange(0, b * m + 1, m), n))
        mcse = hdi_mcse(runs, p, batches=batches, min_batch=min_batch, sorted_batches=True)
    width = n - int(np.floor(p * n))  # draws in the tails of hdi()'s windows
    low, high = np.empty((rows, width)), np.empty((rows, width))
    middle = np.empty((rows, 2))
    _tails_and_middle(runs, starts.astype(np.int64), width, (n - 1) // 2, n // 2,
                      low, high, middle)
    lower, upper = hdi_of_tails(low, high)
    return {"median": 0.5 * (middle[:, 0] + middle[:, 1]), "hdi_lower": lower,
            "hdi_upper": upper, "mcse_hdi_lower": mcse[0], "mcse_hdi_upper": mcse[1]}


@numba.njit(cache=True, nogil=True)
def _lower(row: np.ndarray, v: float, a: int, b: int) -> int:  # pragma: no cover
    """First index in ``[a, b)`` of sorted ``row`` holding a value >= v (else b)."""
    n = b - a
    while n > 1:  # branch-free halving: the comparison becomes a conditional move
        half = n >> 1
        a = a + half if row[a + half - 1] < v else a
        n -= half
    return a + 1 if n == 1 and row[a] < v else a


@numba.njit(cache=True, nogil=True)
def _bisect(row: np.ndarray, v: float, a: int, b: int, right: bool) -> int:  # pragma: no cover
    """First index in ``[a, b)`` of sorted ``row`` holding a value > v (``right``) or >= v."""
    a = _lower(row, v, a, b)
    if right:
        while a < b and row[a] == v:  # ties are rare: step over them
            a += 1
    return a


@numba.njit(cache=True, nogil=True)
def _select(row: np.ndarray, starts: np.ndarray, r: int, lo: np.ndarray, hi: np.ndarray,
            below: np.ndarray, upto: np.ndarray) -> float:  # pragma: no cover
    """The ``r``-th smallest (from 0) value of the sorted runs ``row[starts[j]:starts[j+1]]``.

    Invariant: the answer is the ``r``-th smallest of the windows ``[lo_j, hi_j)``.
    """
    k = starts.size - 1
    for j in range(k):
        lo[j], hi[j] = starts[j], starts[j + 1]
    while True:
        best, size, total = 0, -1, 0
        for j in range(k):
            total += hi[j] - lo[j]
            if hi[j] - lo[j] > size:
                best, size = j, hi[j] - lo[j]
        if total <= 4 * k:  # few candidates left: sort them (faster than more steps)
            pool = np.empty(total)
            c = 0
            for j in range(k):
                for t in range(lo[j], hi[j]):
                    pool[c] = row[t]
                    c += 1
            pool.sort()
            return pool[r]
        pivot = row[(lo[best] + hi[best]) >> 1]
        n_below, n_upto = 0, 0
        for j in range(k):
            below[j] = _lower(row, pivot, lo[j], hi[j])
            upto[j] = _bisect(row, pivot, below[j], hi[j], True)
            n_below += below[j] - lo[j]
            n_upto += upto[j] - lo[j]
        if r < n_below:  # below the pivot: the widest window loses its upper half
            for j in range(k):
                hi[j] = below[j]
        elif r < n_upto:
            return pivot
        else:  # above it: the widest window loses its lower half
            r -= n_upto
            for j in range(k):
                lo[j] = upto[j]


@numba.njit(cache=True, nogil=True)
def _tails_and_middle(runs: np.ndarray, starts: np.ndarray, width: int, mid0: int, mid1: int,
                      low: np.ndarray, high: np.ndarray, middle: np.ndarray
                      ) -> None:  # pragma: no cover
    """Per row: the ``width`` smallest and largest draws, sorted (merged from the runs'
    ends, the smallest head taken each time), and two order statistics."""
    rows = runs.shape[0]
    k = starts.size - 1
    lo, hi = np.empty(k, np.int64), np.empty(k, np.int64)
    below, upto = np.empty(k, np.int64), np.empty(k, np.int64)
    heads = np.empty(k)
    for i in range(rows):
        row = runs[i]
        for j in range(k):  # the smallest, from the runs' fronts
            lo[j] = starts[j]
            heads[j] = row[lo[j]] if lo[j] < starts[j + 1] else np.inf
        for c in range(width):
            best, least = 0, heads[0]
            for j in range(1, k):  # branch-free: conditional moves
                smaller = heads[j] < least
                best = j if smaller else best
                least = heads[j] if smaller else least
            low[i, c] = least
            lo[best] += 1
            heads[best] = row[lo[best]] if lo[best] < starts[best + 1] else np.inf
        for j in range(k):  # the largest, from the runs' backs
            hi[j] = starts[j + 1] - 1
            heads[j] = row[hi[j]] if hi[j] >= starts[j] else -np.inf
        for c in range(width - 1, -1, -1):
            best, most = 0, heads[0]
            for j in range(1, k):
                larger = heads[j] > most
                best = j if larger else best
                most = heads[j] if larger else most
            high[i, c] = most
            hi[best] -= 1
            heads[best] = row[hi[best]] if hi[best] >= starts[best] else -np.inf
        v = _select(row, starts, mid0, lo, hi, below, upto)
        middle[i, 0] = middle[i, 1] = v
        if mid1 > mid0:  # the next order statistic: v again, or the least value above it
            count, nxt = 0, np.inf
            for j in range(k):
                t = _bisect(row, v, starts[j], starts[j + 1], True)
                count += t - starts[j]
                if t < starts[j + 1] and row[t] < nxt:
                    nxt = row[t]
            if count <= mid1:
                middle[i, 1] = nxt
