r"""Rank probabilities on a Dask cluster: chunks of draws, not of submissions.

A rank compares every submission within one joint draw, so the work cannot be split
by submission the way the conjugate summaries are; it is split by draws instead.
The ``(draws, submissions)`` matrix becomes a Dask array chunked along draws:

* each draw chunk is drawn where it runs, from the stream
  :func:`~bayescm.analysis.ranks.sample_values` gives it (child :math:`c` of
  ``SeedSequence(random_seed)``);
* each chunk is ranked and counted there (:func:`~bayescm.analysis.ranks.rank_block`,
  with the tie-break stream :func:`~bayescm.analysis.ranks.rank_counts` gives it), and
  only the ``submissions × ranks`` counts travel back to be summed;
* mean and HDI need all draws of one submission: the array is rechunked to blocks of
  submissions (Dask's shuffle, a block at a time) and summarised per block.

Everything is one graph computed in one pass, so the draws are made once; the numbers
equal the in-memory leaderboard's for the same seed, ``draws`` and ``chunk``, bit for
bit.  The draw matrix is held by the cluster's workers together (8 bytes per draw and
submission, spread over the workers' memory), never by the caller.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from bayescm.analysis.ranks_kernels import (
    column_summaries,
    default_chunk,
    rank_block,
    rank_seeds,
    summary_step,
)

__all__ = ["lazy_values", "statistics"]


def lazy_values(sampler: Callable[[np.random.Generator, int], np.ndarray], draws: int, k: int,
                chunk: int | None, seed: int | None) -> Any:
    """The ``(draws, k)`` draws as a Dask array chunked ``chunk`` draws at a time, made by
    the same streams as :func:`~bayescm.analysis.ranks.sample_values`."""
    import dask
    import dask.array as da

    chunk = chunk or default_chunk(k)
    starts = list(range(0, draws, chunk))
    seeds = np.random.SeedSequence(seed).spawn(len(starts))
    blocks = []
    for s, ss in zip(starts, seeds, strict=True):
        size = min(chunk, draws - s)
        part = dask.delayed(_draw_block, pure=False)(sampler, ss, size)
        blocks.append(da.from_delayed(part, shape=(size, k), dtype=np.float64))
    return da.concatenate(blocks, axis=0)


def _draw_block(sampler: Callable[[np.random.Generator, int], np.ndarray],
                seed: np.random.SeedSequence, size: int) -> np.ndarray:
    return np.asarray(sampler(np.random.default_rng(seed), size), dtype=np.float64)


def statistics(values: Any, *, higher: bool, width: int, chunk: int, seed: int | None,
               hdi_prob: float, client: Any) -> tuple[np.ndarray, ...]:
    """NaN columns, mean, HDI lower and upper, rank counts and rank sums of ``values``
    (a NumPy or Dask ``(draws, k)`` array), computed on ``client`` in one pass."""
    import dask
    import dask.array as da

    if not hasattr(values, "dask"):
        values = da.from_array(values, chunks=(chunk, -1))
    s_total, k = values.shape
    rows = values.rechunk((chunk, k))  # the draw chunks of rank_counts, in order
    seeds = rank_seeds(seed, len(rows.chunks[0]))
    parts = [dask.delayed(rank_block, pure=False)(block, higher, width, ss)
             for block, ss in zip(rows.to_delayed().ravel(), seeds, strict=True)]
    counted = dask.delayed(_add, pure=False)(parts)
    cols = values.rechunk((s_total, summary_step(s_total)))  # all draws of a few columns
    stats = cols.map_blocks(column_summaries, hdi_prob, chunks=((3,), cols.chunks[1]),
                            dtype=np.float64)
    nan = da.isnan(values).any(axis=0)
    nan, stats, (counts, rank_sum) = dask.compute(nan, stats, counted, scheduler=client)
    return nan, stats[0], stats[1], stats[2], counts, rank_sum


def _add(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    counts = np.zeros_like(parts[0][0])
    rank_sum = np.zeros_like(parts[0][1])
    for c, r in parts:
        counts += c
        rank_sum += r
    return counts, rank_sum
