r"""Where chunked conjugate work runs: in this process, or on a Dask cluster.

The conjugate paths (:func:`bayescm.summary_exact`, :func:`bayescm.exact_posterior`,
:func:`bayescm.analysis.leaderboard`) split their work into chunks whose results do
not depend on where or in which order they run: every unit draws from its own
random stream (a child of ``numpy.random.SeedSequence(random_seed)``), every draw
chunk of a leaderboard from its own.  So the same chunks can run on a
``dask.distributed`` cluster and give the same numbers, bit for bit.

``scheduler`` is one of

* ``None``: in this process (NumPy; no Dask imported);
* ``"dask"``: the active ``dask.distributed.Client`` if there is one, else a local
  cluster of threads started for the call and closed after it;
* a ``dask.distributed.Client``: that cluster (any size, any machines).

Dask is imported only when asked for.  Lazy results (xarray on Dask) are computed
by the user, on whatever scheduler is active then: Dask's own rule.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

__all__ = ["SCHEDULERS", "client_for", "is_lazy", "lazy_template", "map_metrics",
           "tasks_per_process", "unit_seeds"]

SCHEDULERS = (None, "dask")
"""The named schedulers; a ``dask.distributed.Client`` is accepted too."""


def check_scheduler(scheduler: Any) -> None:
    """Raise if ``scheduler`` is neither None, ``"dask"`` nor a distributed Client."""
    if scheduler is None or scheduler == "dask":
        return
    if type(scheduler).__name__ == "Client" and \
            type(scheduler).__module__.split(".")[0] == "distributed":
        return
    raise ValueError(
        f"scheduler must be None (this process), 'dask' (the active dask.distributed Client, "
        f"else a local cluster) or a dask.distributed.Client, got {scheduler!r}.")


@contextlib.contextmanager
def client_for(scheduler: Any) -> Iterator[Any]:
    """The ``dask.distributed.Client`` to run on (None for ``scheduler=None``).

    ``"dask"`` without an active client starts a local cluster of threads (two
    workers of one thread: starting takes a tenth of a second, where worker
    processes take seconds) and closes it on exit; a given or active client is left
    open.
    """
    check_scheduler(scheduler)
    if scheduler is None:
        yield None
        return
    if scheduler != "dask":
        yield scheduler
        return
    from distributed import Client, LocalCluster

    try:
        yield Client.current()
        return
    except ValueError:  # no active client: an embedded local cluster
        pass
    # ":0": no fixed port, so a user's own cluster (dashboard on 8787) causes no warning;
    # the embedded cluster's INFO logs would be noise in a notebook
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=":0", silence_logs=logging.ERROR) as cluster, \
            Client(cluster, set_as_default=False) as client:
        yield client


def tasks_per_process(client: Any) -> int:
    """How many tasks may run at once in one process's memory: 1 here (``client``
    None), every thread of a cluster whose workers are threads of this process (the
    embedded local cluster), else the threads of the largest worker."""
    if client is None:
        return 1
    threads = list(client.nthreads().values()) or [1]
    if getattr(getattr(client, "cluster", None), "processes", True) is False:
        return max(1, sum(threads))
    return max(1, max(threads))


def is_lazy(obj: Any) -> bool:
    """True for a Dask-backed DataArray (or a Dask array)."""
    data = getattr(obj, "data", obj)
    return type(data).__module__.split(".")[0] == "dask"


def unit_seeds(entropy: int, positions: Sequence[int]) -> list[np.random.SeedSequence]:
    """Children ``positions`` of ``SeedSequence(entropy)``, without spawning the others.

    ``SeedSequence(entropy).spawn(n)[i]`` is ``SeedSequence(entropy, spawn_key=(i,))``,
    so a chunk can make its units' streams from the root's entropy alone.
    """
    return [np.random.SeedSequence(entropy, spawn_key=(int(i),)) for i in positions]


def lazy_template(block: xr.Dataset, unit: str, names: Sequence[Any],
                  chunks: tuple[int, ...], sizes: Mapping[str, int],
                  coords: Mapping[str, Any]) -> xr.Dataset:
    """A Dask-backed Dataset shaped like ``block`` with ``unit`` (and ``sizes``) at full
    size: the template :func:`xarray.map_blocks` needs, holding no data."""
    import dask.array as da

    out = {}
    for name, var in block.data_vars.items():
        shape = tuple(len(names) if d == unit else sizes.get(d, var.sizes[d]) for d in var.dims)
        blocks = tuple(chunks if d == unit else (n,) for d, n in zip(var.dims, shape,
                                                                     strict=True))
        out[name] = (var.dims, da.empty(shape, chunks=blocks, dtype=var.dtype), var.attrs)
    dims = {d for v in out.values() for d in v[0]}
    kept = {k: c.values for k, c in block.coords.items()
            if k not in sizes and k != unit and set(c.dims) <= dims}
    return xr.Dataset(out, coords={**kept, **{k: v for k, v in coords.items() if k in dims}},
                      attrs=block.attrs)


def map_metrics(theta: xr.DataArray, unit: str,
                compute: Callable[[xr.DataArray], xr.Dataset]) -> xr.Dataset:
    """``compute(theta)`` block by block of a Dask-backed ``theta`` (lazy).

    ``compute`` is the metric registry's (NumPy) computation; it runs on each chunk
    of units through :func:`xarray.map_blocks`.  The template comes from one
    synthetic draw of one unit (every cell equal), so nothing is computed here.
    """
    lead = ("chain", "draw", unit)
    one = theta.isel({d: [0] for d in lead})
    cells = np.prod([n for d, n in one.sizes.items() if d not in lead])
    probe = xr.full_like(one, 1.0 / cells, dtype=float).compute()
    with np.errstate(all="ignore"):
        block = compute(probe)
    template = lazy_template(block, unit, theta[unit].values,
                             theta.chunks[theta.dims.index(unit)],
                             {d: theta.sizes[d] for d in ("chain", "draw")},
                             {k: c.values for k, c in theta.coords.items()})
    return map_blocks(compute, theta, template)


def map_blocks(func: Callable[[Any], xr.Dataset], obj: xr.DataArray,
               template: xr.Dataset) -> xr.Dataset:
    """``xarray.map_blocks(func, obj, template=template)`` with ``func`` in the key names.

    xarray names the blocks after ``obj`` and the keyword arguments only, not after
    ``func``: two calls on the same ``obj`` whose functions differ only in a
    ``partial``'s arguments (draws per chain, metrics, the data of another matrix
    with as many units) would share Dask keys, and a cluster that still holds one
    call's blocks would hand them to the other.  Passing ``func`` as a keyword puts
    its token (deterministic: its arguments' values) into every key.
    """
    return xr.map_blocks(_apply, obj, kwargs={"func": func}, template=template)


def _apply(block: xr.DataArray, *, func: Callable[[Any], xr.Dataset]) -> xr.Dataset:
    return func(block)
