r"""Slice analyses in bounded memory: chunks of draws here, blocks of slices on Dask.

The slice analyses (:mod:`bayescm.analysis.disparity`, :mod:`bayescm.analysis.alerts`)
are functions of each posterior draw of the slices' confusion probabilities
:math:`\theta` (dims chain, draw, slice, cell).  For 10^4 slices and 4,000 draws one
copy of :math:`\theta` is 4000 × 10^4 × 4 float64 values (1.3 GB), so they never make
one:

* a NumPy posterior is read a chunk of draws at a time (:func:`draw_chunks`): every
  temporary is ``chunk × slices × 4`` values, about :data:`CHUNK_BYTES`;
* a Dask-backed posterior (``bcm.exact_posterior(..., chunk=c)``: blocks of slices with
  every draw) is worked on block by block where the blocks are
  (:func:`compute_blocks`): each block is reduced to what the analysis needs -- its
  slices' measures, or per draw sums over its slices (:func:`lazy_group_sums`) -- and
  dropped, so no worker holds more than a few blocks.  A quantity that needs every
  slice of a draw (the total behind "the rest") is a first pass of its own: the
  blocks are made twice rather than held (the exact sampler's draws are the same
  both times: each slice has its own random stream).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from bayescm.analysis.pooling import Groups, SlicedFit, group_sums, pooled_theta
from bayescm.scheduling import is_lazy

__all__ = ["BLOCK_BYTES", "CHUNK_BYTES", "auto_chunk", "blocks_of", "compute_blocks",
           "draw_chunks", "lazy_group_sums", "on_dask", "over_draws", "pooled_chunks"]

CHUNK_BYTES = 16e6
"""Bytes of one chunk of :math:`\\theta` (a few temporaries of this size are alive)."""

BLOCK_BYTES = 64e6
"""Bytes of one block of slices when a NumPy posterior is sent to a Dask cluster."""


def auto_chunk(chunk: int | None, values_per_draw: int) -> int:
    """Draws per chunk: ``chunk`` checked, or as many as fit in :data:`CHUNK_BYTES`."""
    if chunk is None:
        return max(1, int(CHUNK_BYTES // (8 * max(values_per_draw, 1))))
    if not isinstance(chunk, int | np.integer) or isinstance(chunk, bool) or chunk < 1:
        raise ValueError(f"chunk must be a positive integer (draws per chunk) or None "
                         f"(about {CHUNK_BYTES / 1e6:.0f} MB of draws), got {chunk!r}.")
    return int(chunk)


def draw_chunks(chains: int, draws: int, chunk: int) -> Iterator[tuple[int, slice]]:
    """``(chain, draws)`` index pairs covering every draw, ``chunk`` draws at a time
    (views of a (chain, draw, ...) array, never a reshaped copy)."""
    for ch in range(chains):
        for start in range(0, draws, chunk):
            yield ch, slice(start, min(start + chunk, draws))


def blocks_of(x: Any) -> list[tuple[Any, tuple[slice, slice, slice]]]:
    """The blocks of a Dask array of dims (chain, draw, slice, cell) as Delayed objects,
    each with its (chain, draw, slice) position; the cells are made one block."""
    if len(x.chunks[3]) > 1:
        x = x.rechunk({3: -1})
    edges = [np.cumsum((0, *c)) for c in x.chunks[:3]]
    delayed = x.to_delayed()
    out = []
    for idx in np.ndindex(*delayed.shape[:3]):
        where = tuple(slice(int(e[i]), int(e[i + 1])) for e, i in zip(edges, idx, strict=True))
        out.append((delayed[(*idx, 0)], where))
    return out


def compute_blocks(func: Callable[..., Any], args: Sequence[tuple], client: Any
                   ) -> Iterator[tuple[int, Any]]:
    """``func(*a)`` for every ``a`` in ``args`` (Delayed blocks among them), as
    ``(position, result)`` pairs.

    On a ``dask.distributed.Client`` the results come back as they finish and each is
    released once handed over, so the caller holds one at a time; with ``client=None``
    Dask's active scheduler computes them together.
    """
    import dask

    tasks = [dask.delayed(func, pure=False)(*a) for a in args]
    if client is None:
        yield from enumerate(dask.compute(*tasks))
        return
    from distributed import as_completed

    futures = client.compute(tasks)
    where = {f.key: i for i, f in enumerate(futures)}
    del tasks
    for future, result in as_completed(futures, with_results=True, loop=client.loop):
        i = where[future.key]
        futures[i] = None  # drop the reference: the cluster may forget the result
        future.release()
        yield i, result


def lazy_group_sums(theta: Any, n: np.ndarray, groups: Groups, client: Any) -> np.ndarray:
    r"""Per draw and group :math:`\sum_{s \in g} n_s\theta_s` (chain, draw, group, cell)
    of a Dask array ``theta`` (chain, draw, slice, cell), block by block.

    Each block of slices is summed into its groups where it lies (:func:`group_sums`
    on the block's slices) and dropped; the blocks' sums are added pairwise in a fixed
    tree on the cluster (the same numbers whatever order the blocks finish in), so a
    worker holds a few ``chain × draw × group × 4`` arrays and this process one.
    """
    import dask

    trees: dict[tuple[int, int], list[Any]] = {}  # per (chains, draws) of the blocks
    where: dict[tuple[int, int], tuple[slice, slice]] = {}
    for blk, (ch, dr, sl) in blocks_of(theta):
        part = dask.delayed(_block_sums, pure=False)(
            blk, n[sl], Groups(groups.codes[sl], groups.frame))
        trees.setdefault((ch.start, dr.start), []).append(part)
        where[ch.start, dr.start] = (ch, dr)
    for level in trees.values():
        while len(level) > 1:
            pairs = [dask.delayed(np.add, pure=False)(*level[i:i + 2]) if i + 1 < len(level)
                     else level[i] for i in range(0, len(level), 2)]
            level[:] = pairs
    out = np.empty((*theta.shape[:2], len(groups.frame), 4))
    keys = list(trees)
    for i, total in compute_blocks(_same, [(trees[k][0],) for k in keys], client):
        out[where[keys[i]]] = total
    return out


def _same(x: np.ndarray) -> np.ndarray:
    return x


def _block_sums(block: np.ndarray, n: np.ndarray, groups: Groups) -> np.ndarray:
    return over_draws(_sums, block, fixed=(n, groups))[0]


def _sums(theta: np.ndarray, n: np.ndarray, groups: Groups) -> tuple[np.ndarray]:
    return (group_sums(theta, n, groups),)


def over_draws(func: Callable[..., tuple], block: Any, *per_draw: np.ndarray | None,
               fixed: tuple = ()) -> tuple[np.ndarray | None, ...]:
    """``func(theta, *per_draw, *fixed)`` on a block (chain, draw, slice, cell) a chunk
    of draws at a time, so a large block (all draws of its slices) makes temporaries
    of :data:`CHUNK_BYTES` only.  ``per_draw`` arrays (chain, draw, ...) are cut like
    the block; ``func`` returns arrays (draws, ...) or None, stacked back here."""
    theta = np.asarray(block)
    chains, draws, slices = theta.shape[:3]
    out: list[np.ndarray | None] | None = None
    for ch, dr in draw_chunks(chains, draws, auto_chunk(None, slices * 4)):
        got = func(theta[ch, dr], *(None if a is None else a[ch, dr] for a in per_draw),
                   *fixed)
        if out is None:
            out = [None if g is None else np.empty((chains, draws, *g.shape[1:]), g.dtype)
                   for g in got]
        for o, g in zip(out, got, strict=True):
            if o is not None:
                o[ch, dr] = g
    return tuple(out or ())


def on_dask(fit: SlicedFit, client: Any) -> SlicedFit:
    """``fit`` with a Dask-backed ``theta`` when there is a cluster to run on: a NumPy
    posterior is cut into blocks of slices of about :data:`BLOCK_BYTES`."""
    if client is None or is_lazy(fit.theta):
        return fit
    per_slice = fit.theta.shape[0] * fit.theta.shape[1] * 4 * 8
    theta = fit.theta.chunk({"slice": max(1, int(BLOCK_BYTES // per_slice))})
    return SlicedFit(theta, fit.n, fit.levels)


def pooled_chunks(fit: SlicedFit, groups: Groups, *, sums: bool, chunk: int | None,
                  client: Any) -> Iterator[tuple[int, slice, np.ndarray, np.ndarray | None]]:
    """Per chunk of draws ``(chain, draws, pooled, group sums)``: the groups' pooled
    :math:`\theta` (draws, group, cell) and, if ``sums`` (or on Dask, where they are
    made first), their :func:`group_sums`.  A NumPy ``theta`` is read a chunk at a
    time; a Dask one (or any, given a client) is reduced to group sums on Dask first
    (:func:`lazy_group_sums`)."""
    fit = on_dask(fit, client)
    chains, draws, slices = fit.theta.shape[:3]
    lazy = is_lazy(fit.theta)
    every = lazy_group_sums(fit.theta.data, fit.n, groups, client) if lazy else None
    theta = None if lazy else fit.theta.values
    step = auto_chunk(chunk, 4 * (slices if every is None else len(groups.frame)))
    for ch, dr in draw_chunks(chains, draws, step):
        if every is None:
            part = group_sums(theta[ch, dr], fit.n, groups) if sums else None
            yield ch, dr, pooled_theta(theta[ch, dr], fit.n, groups, part), part
        else:
            part = every[ch, dr]
            yield ch, dr, pooled_theta(part, fit.n, groups, part), part
