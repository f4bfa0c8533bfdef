"""The NumPy kernels of rank probabilities: chunked, threaded, seeded per chunk.

Ranking the rows of a ``(draws, submissions)`` matrix of joint metric draws and
summarising its columns, in chunks whose results do not depend on where they run:
:mod:`bayescm.analysis.ranks` runs them in this process, :mod:`bayescm.analysis.ranks_dask`
on a Dask cluster, with the same seeds and so the same numbers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from bayescm.stats import hdi

__all__ = ["column_summaries", "default_chunk", "rank_block", "rank_counts", "rank_seeds",
           "sample_values", "summaries", "summary_step"]

_CHUNK_CELLS = 2**22  # draws x submissions per chunk (~34 MB per float64 array)
_BINCOUNT_CELLS = 2**23  # submissions x ranks per bincount call (~67 MB of int64)
_WORKERS = 2


def default_chunk(k: int) -> int:
    return max(1, _CHUNK_CELLS // k)


def sample_values(
    sampler: Callable[[np.random.Generator, int], np.ndarray],
    draws: int,
    k: int,
    chunk: int | None,
    seed: int | None,
) -> np.ndarray:
    """(draws, k) float64 draws, filled chunk by chunk in two threads (one RNG per chunk)."""
    chunk = chunk or default_chunk(k)
    starts = list(range(0, draws, chunk))
    seeds = np.random.SeedSequence(seed).spawn(len(starts))
    values = np.empty((draws, k), dtype=np.float64)

    def work(i: int) -> None:
        s = starts[i]
        size = min(chunk, draws - s)
        values[s:s + size] = sampler(np.random.default_rng(seeds[i]), size)

    with ThreadPoolExecutor(_WORKERS) as pool:
        list(pool.map(work, range(len(starts))))
    return values


def rank_block(x: np.ndarray, higher: bool, width: int, seed: np.random.SeedSequence
               ) -> tuple[np.ndarray, np.ndarray]:
    """Counts of (submission, rank) for ranks 1..width in draws ``x`` (rows), and the sum
    of each submission's ranks: one chunk of :func:`rank_counts` (seeded tie-breaks)."""
    k = x.shape[1]
    counts = np.empty((k, width), dtype=np.int32)  # counts <= draws < 2**31
    positions = np.arange(1, k + 1, dtype=np.int32)[None, :]
    block = max(1, min(width, _BINCOUNT_CELLS // k))
    key = np.negative(x) if higher else x  # ascending key: position 0 is rank 1
    order = np.argsort(key, axis=1)
    ordered = np.take_along_axis(key, order, axis=1)
    tied = (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
    if tied.any():  # random tie-break: by value, then by a uniform random key
        sub = key[tied]
        noise = np.random.default_rng(seed).random(sub.shape)
        order[tied] = np.lexsort((noise, sub), axis=-1)
    ranks = np.empty(order.shape, dtype=np.int32)
    np.put_along_axis(ranks, order, positions, axis=1)
    part_sum = ranks.sum(axis=0, dtype=np.int64)
    del ranks, ordered, key
    for r0 in range(0, width, block):
        w = min(block, width - r0)
        idx = order[:, r0:r0 + w] * w + np.arange(w)
        counts[:, r0:r0 + w] = np.bincount(idx.ravel(), minlength=k * w).reshape(k, w)
        del idx
    return counts, part_sum


def rank_seeds(seed: int | None, n: int) -> list[np.random.SeedSequence]:
    """The tie-break streams of ``n`` draw chunks: a separate stream from the posterior
    draws' (which use ``SeedSequence(seed).spawn``)."""
    return np.random.SeedSequence(seed, spawn_key=(2**31,)).spawn(n)


def rank_counts(
    values: np.ndarray, higher: bool, width: int, chunk: int, seed: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """Counts of (submission, rank) for ranks 1..width and the sum of ranks per submission."""
    s_total, k = values.shape
    counts = np.zeros((k, width), dtype=np.int32)
    rank_sum = np.zeros(k, dtype=np.int64)
    starts = list(range(0, s_total, chunk))
    seeds = rank_seeds(seed, len(starts))
    lock = threading.Lock()

    def work(i: int) -> None:
        part, part_sum = rank_block(values[starts[i]:starts[i] + chunk], higher, width, seeds[i])
        with lock:
            counts[:] += part
            rank_sum[:] += part_sum

    with ThreadPoolExecutor(_WORKERS) as pool:
        list(pool.map(work, range(len(starts))))
    return counts, rank_sum


def column_summaries(x: np.ndarray, hdi_prob: float) -> np.ndarray:
    """Rows mean, HDI lower and upper of the columns of draws ``x`` (draws x columns)."""
    cols = x.T
    return np.stack([cols.mean(axis=1), *hdi(cols, hdi_prob)])


def summary_step(s_total: int) -> int:
    """Columns summarised at once (about 4 million draws)."""
    return max(1, _CHUNK_CELLS // s_total)


def summaries(values: np.ndarray, hdi_prob: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and HDI of every column, in blocks of submissions on two threads."""
    s_total, k = values.shape
    out = np.empty((3, k))
    step = summary_step(s_total)

    def work(a: int) -> None:
        out[:, a:a + step] = column_summaries(values[:, a:a + step], hdi_prob)

    with ThreadPoolExecutor(_WORKERS) as pool:
        list(pool.map(work, range(0, k, step)))
    return out[0], out[1], out[2]
