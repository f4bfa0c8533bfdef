r"""``summary_exact``: the summary table of a conjugate posterior, streamed.

``summary(fit(model, sampler="exact"))`` holds every draw of every metric at once:
for K = 10 classes and 1,000 classifiers with 4,000 draws, ``theta`` alone is
1000 × 4000 × 100 float64 values (3.2 GB) and the ~370 metric values per draw are 6 GB
more.  A summary needs none of it after its row is computed, so
:func:`summary_exact` draws the exact posterior for a chunk of classifiers, computes
their metrics, summarises them with :func:`bayescm.summary.table` (the statistics of
``summary``, not a copy) and discards the draws before the next chunk.

The table is :func:`bayescm.summary`'s: metrics with an exact Beta marginal are
summarised by it, the others by their draws with Monte Carlo standard errors, and a
mean that does not exist is reported as such (:mod:`bayescm.inference.marginals`).

For K-class tables a chunk is fused: each classifier's draws go through the metric
registry at once, class axis first, into rows of draws laid out as the table reads
them (no copy between), and large jobs summarise those rows with the compiled
median, HDI and MCSE of :mod:`bayescm.inference.order_stats` (the numbers of
:func:`bayescm.stats.hdi` and :func:`bayescm.stats.hdi_mcse`, from one set of sorts).
Each chunk aligns only its own classifiers' closed-form marginals.

Each classifier gets its own random stream (a child of ``numpy.random.SeedSequence
(random_seed)``, spawned in classifier order), so the table does not depend on
``chunk``; it equals ``summary(fit(model, sampler="exact"))`` in distribution (the
draws themselves differ: ``fit`` draws all classifiers from one stream).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields, replace
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm import metrics as registry
from bayescm.data.confusion import UNIT_DIMS, ConfusionMatrix
from bayescm.data.multiclass import MulticlassConfusionMatrix
from bayescm.data.multiclass_tables import align_predicted
from bayescm.family import (
    ClosedForm,
    Conjugate,
    Family,
    default_family,
    family_of,
    is_unmodified,
    spec_of,
)
from bayescm.inference import draws as draws_mod
from bayescm.inference import marginals
from bayescm.metrics.multiclass import Table, resolve_multiclass
from bayescm.scheduling import client_for, tasks_per_process, unit_seeds
from bayescm.stats import SAMPLE_DIMS, check_hdi_prob
from bayescm.summary import CLASS_DIM, COMPILED_FROM, check_names, table

__all__ = ["summary_exact"]

CHUNK_BYTES = 512e6
"""Working memory a chunk of classifiers may take (draws, metrics, temporaries); a
chunk's fixed costs (tables, indexes) are paid once per chunk, so not too few."""


_AT_ONCE = 1
"""Chunks summarised at once in this process (threads; CHUNK_BYTES shared).  One: a
chunk's draws, metrics and table already run on two threads each, and two chunks at
once on two cores cost more CPU than they overlapped (K = 10, 1,000 matrices:
``bench_multiclass_exact.py --quick``, 100 CPU-s at two, 73 at one; the same table)."""


def summary_exact(
    data_or_model: Any,
    *,
    metrics: str | Sequence[str] | None = None,
    draws: int | None = None,
    chains: int = 4,
    hdi_prob: float = 0.95,
    random_seed: int | None = None,
    chunk: int | None = None,
    scheduler: Any = None,
) -> pd.DataFrame:
    r"""Summary table of every metric's exact posterior, a chunk of classifiers at a time.

    Parameters
    ----------
    data_or_model
        A model from a conjugate builder (``three_beta``, ``dirichlet_multinomial``,
        ``multiclass_rows``, ``multiclass_cells``, unmodified), or a matrix: a
        ``ConfusionMatrix`` gets the three-Beta model and a
        ``MulticlassConfusionMatrix`` the prevalence-and-rows model, both with
        their default (flat) priors.
    metrics
        Metric keys or aliases (the registry that fits the data); default all.
    draws, chains
        Draws per chain and chains, as in :func:`bayescm.fit` (``chains × draws``
        i.i.d. draws per classifier).  ``draws=None``: what ``fit(model,
        sampler="exact")`` would draw for the posterior group
        (:func:`bayescm.inference.draws.exact_draws`: a million per classifier when
        they fit in 512 MB, fewer for a batch, at least 1,000 per chain).  Memory stays
        within ``chunk`` either way; time grows with the draws (about 2 s per
        binary classifier with every metric at a million).
    hdi_prob
        Mass of the highest-density interval.
    random_seed
        Seed; classifier *i* draws from the *i*-th child of
        ``numpy.random.SeedSequence(random_seed)``.
    chunk
        Classifiers per chunk; default as many as fit in about 512 MB per process (on
        a cluster whose workers are threads of this process, 512 MB shared by the
        chunks that run at once).  The result does not depend on it.
    scheduler
        Where the chunks run: None (this process), ``"dask"`` (the active
        ``dask.distributed.Client``, else a local cluster of threads started for
        this call) or a ``dask.distributed.Client`` (one task per chunk; only the
        chunks' tables travel back).  The result does not depend on it: the same
        seed gives the same table, bit for bit (:mod:`bayescm.scheduling`).

    Returns
    -------
    pandas.DataFrame
        The table of :func:`bayescm.summary` for ``fit(model, sampler="exact")``:
        same index (``(classifier, metric)``, or ``(classifier, class, metric)`` for
        per-class multiclass metrics), columns and plug-in values.

    Raises
    ------
    ValueError
        For a model without a closed-form posterior (e.g. ``hui_walter``).

    Examples
    --------
    >>> import bayescm as bcm
    >>> mc = bcm.MulticlassConfusionMatrix([[[5, 1], [2, 7]], [[9, 3], [1, 6]]],
    ...                                    labels=["a", "b"], classifier=["x", "y"])
    >>> t = bcm.summary_exact(mc, metrics=["kappa", "recall"], random_seed=1, chunk=1)
    >>> t.equals(bcm.summary_exact(mc, metrics=["kappa", "recall"], random_seed=1))
    True
    >>> list(t.index.names), len(t)
    (['classifier', 'class', 'metric'], 6)
    """
    hdi_prob = check_hdi_prob(hdi_prob)
    metrics = check_names("metrics", metrics)
    for name, v, low in (("draws", draws, 4), ("chains", chains, 1)):
        if (name != "draws" or v is not None) and (
                not isinstance(v, int | np.integer) or isinstance(v, bool) or v < low):
            raise ValueError(f"{name} must be an integer >= {low}, got {v!r}.")
    family, closed = _closed_form(data_or_model)
    table_dims = closed.dims.get("theta") or tuple(closed.coords)
    keys = draws_mod.metric_keys(metrics, table_dims)
    unit = _unit(closed)
    names = list(closed.coords[unit])
    if draws is None:
        draws = draws_mod.exact_draws(len(names), draws_mod.values_per_draw(closed), chains)
    reg = registry.registry_for(table_dims)
    exact = marginals.exact_marginals(family, closed, keys, reg)
    if chunk is not None and (not isinstance(chunk, int | np.integer) or isinstance(chunk, bool)
                              or chunk < 1):
        raise ValueError(f"chunk must be a positive integer or None, got {chunk!r}.")
    if len(names) * draws * chains * len(keys) >= COMPILED_FROM:
        # the compiled median/HDI/MCSE (the same numbers) serves summary.table from here
        import bayescm.inference.order_stats  # noqa: F401
    entropy = np.random.SeedSequence(random_seed).entropy
    work = partial(_chunk_table, family=family, entropy=entropy, size=(chains, draws),
                   keys=keys, hdi_prob=hdi_prob)
    with client_for(scheduler) as client:
        if chunk is None:  # CHUNK_BYTES per process, whatever runs in it at once
            chunk = max(1, _auto_chunk(closed, keys, draws * chains)
                        // (tasks_per_process(client) if client is not None else _AT_ONCE))
        chunks = [np.arange(start, min(start + int(chunk), len(names)))
                  for start in range(0, len(names), int(chunk))]
        parts = (draws_mod.take_units(closed, idx) for idx in chunks)
        # each chunk gets its own units' closed-form marginals (aligning all of them
        # to every chunk's rows would cost chunks x units)
        known = (_take_exact(exact, unit, idx) for idx in chunks)
        if client is None:  # _AT_ONCE chunks at a time
            with ThreadPoolExecutor(_AT_ONCE) as pool:
                frames = list(pool.map(work, chunks, parts, known))
        else:  # one task per chunk; only the chunks' tables come back
            frames = client.gather(client.map(work, chunks, list(parts), list(known),
                                              pure=False))
    out = pd.concat(frames)
    out.attrs.update(hdi_prob=hdi_prob, group="posterior", sampler="exact",
                     model=closed.spec.family, draws=draws * chains)
    to_xarray = getattr(closed.spec.data, "to_xarray", None)
    recorded = {} if to_xarray is None else to_xarray().attrs
    if "classifier" in recorded:  # a sliced matrix's classifier, as in bcm.summary's attrs
        out.attrs["classifier"] = recorded["classifier"]
    return out


def _chunk_table(positions: np.ndarray, part: ClosedForm, exact: dict[str, marginals.Exact],
                 *, family: Family, entropy: int, size: tuple[int, int], keys: list[str],
                 hdi_prob: float, fused: bool = True) -> pd.DataFrame:
    """The summary rows of the units at ``positions`` (``part`` is their closed form):
    draw, compute metrics, summarise, discard.  ``fused=False``: K-class metrics by
    :func:`bayescm.metrics.compute` (the path before the fused one; tests compare)."""
    unit = _unit(part)
    values = _draw(part.conjugate, part.dims, unit_seeds(entropy, positions), size, unit)
    post = draws_mod.complete(values, None, family, part.spec, part.conjugate, closed=part)
    # classifier first: each classifier's (and class's) draws end up contiguous,
    # which the summary's sorts need (a strided row sorts twice as slowly)
    theta = post["theta"].transpose(unit, *SAMPLE_DIMS, ...)
    reg = registry.registry_for(theta)
    if reg.multiclass and fused:
        mets = _multiclass_metrics(theta, keys, unit)
    else:
        mets = dict(reg.compute(theta, keys, dtype=draws_mod.METRIC_DTYPE).data_vars)
    del post, values, theta  # the draws go as soon as their metrics exist
    plug = reg.compute(part.observed, keys) if part.observed is not None else None
    return table(mets, hdi_prob=hdi_prob, plug=plug, iid=True, exact=exact)


def _multiclass_metrics(theta: xr.DataArray, keys: list[str], unit: str
                        ) -> dict[str, xr.DataArray]:
    """The registry's metrics of each unit's K x K draws, laid out as the table reads
    them: ``(unit, class, chain, draw)``, every row of draws contiguous.

    :func:`bayescm.metrics.compute` gives the same numbers (the same formulas on the
    same cells, element by element) with the class last, which the table would copy
    back; here each unit's draws go through the registry at once, class axis first,
    two units at a time (NumPy releases the GIL).
    """
    theta = align_predicted(theta).transpose(unit, "actual", "predicted", *SAMPLE_DIMS)
    cells = theta.values  # a strided view: each unit's table is copied in its thread
    n_units, k, _, chains, n_draws = cells.shape
    chosen = resolve_multiclass(keys)
    out = {m.key: np.empty((n_units, k, chains, n_draws) if m.per_class
                           else (n_units, chains, n_draws), dtype=draws_mod.METRIC_DTYPE)
           for m in chosen}

    def one(i: int) -> None:
        own = np.ascontiguousarray(cells[i], dtype=np.float64)
        tab = Table(own.reshape(k, k, chains * n_draws))
        for m in chosen:
            out[m.key][i] = np.asarray(m(tab)).reshape(out[m.key].shape[1:])

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(one, range(n_units)))
    # one Dataset: the coords' indexes are made once, not once per metric
    ds = xr.Dataset({m.key: ((unit, CLASS_DIM, *SAMPLE_DIMS) if m.per_class
                             else (unit, *SAMPLE_DIMS), out[m.key]) for m in chosen},
                    coords={unit: theta[unit].values, CLASS_DIM: theta["actual"].values})
    return dict(ds.data_vars)


def _take_exact(exact: dict[str, marginals.Exact], unit: str, idx: np.ndarray
                ) -> dict[str, marginals.Exact]:
    """The closed-form marginals of the units at positions ``idx``.

    One ``isel`` per metric; its other arrays (same dims and coords) share the result's
    coordinates and are cut with NumPy (an ``isel`` each cost ~20 ms a K = 10 chunk)."""
    def cut(da: xr.DataArray, like: xr.DataArray) -> np.ndarray:
        da = da if da.dims == like.dims else da.transpose(*like.dims)
        return np.take(da.values, idx, axis=like.dims.index(unit))

    out = {}
    for key, ex in exact.items():
        if unit not in ex.a.dims:  # the same for every unit
            out[key] = ex
            continue
        first = ex.a.isel({unit: idx})
        out[key] = replace(ex, **{f.name: first.copy(data=cut(getattr(ex, f.name), ex.a))
                                  for f in fields(ex)})
    return out


def _closed_form(obj: Any) -> tuple[Family, ClosedForm]:
    """The family and exact posterior of a model or of a matrix's default model."""
    spec = spec_of(obj)
    if spec is not None:  # a model from a registered builder
        family = family_of(obj)
        if not is_unmodified(obj):
            raise ValueError("This model has variables its builder did not create, so its "
                             "posterior is not conjugate; use bcm.fit(model) and bcm.summary.")
        conj = family.conjugate(obj, spec)
        if conj is None:
            raise ValueError(_no_closed_form(family))
        coords = draws_mod.coords_of(obj)
        if not {"cell", "actual"} & set(coords):  # no confusion tables to stream metrics of
            raise ValueError(f"summary_exact summarises the metrics of confusion matrices, "
                             f"which {family.name} models do not have. Use bcm.fit(model, "
                             "sampler='exact') and bcm.summary (exact rows, no Monte Carlo "
                             "error).")
        dims = {name: tuple(obj.named_vars_to_dims.get(name) or ())
                for name in (*conj.betas, *conj.dirichlets, *conj.fixed)}
        return family, ClosedForm(spec, conj, dims, coords, draws_mod.observed(obj))
    if not isinstance(obj, ConfusionMatrix | MulticlassConfusionMatrix):
        raise TypeError("summary_exact needs a model from a conjugate builder (bcm.models."
                        "three_beta, dirichlet_multinomial, multiclass_rows, multiclass_cells), "
                        f"a ConfusionMatrix or a MulticlassConfusionMatrix, got "
                        f"{type(obj).__name__}.")
    family = default_family(registry.registry_for(obj).kind)
    closed = family.closed_form(obj)
    if closed is None:
        raise ValueError(_no_closed_form(family))
    return family, closed


def _no_closed_form(family: Family) -> str:
    return (f"The {family.name} family has no closed-form posterior, so there is nothing to "
            "draw exactly; use bcm.fit(model) (NUTS) and bcm.summary.")


def _unit(closed: ClosedForm) -> str:
    """The batch dim of a closed form (``classifier``, or ``slice`` for sliced data)."""
    return next(d for d in UNIT_DIMS if d in closed.coords)


def _draw(conj: Conjugate, dims: dict, seeds: list[np.random.SeedSequence],
          size: tuple[int, int], unit: str) -> dict[str, np.ndarray]:
    """Each classifier's draws from its own stream, stacked along its classifier axis."""
    axis = {n: 2 + list(dims.get(n) or (unit,)).index(unit)
            for n in (*conj.betas, *conj.dirichlets)}

    def one(i: int) -> dict[str, np.ndarray]:
        def cut(x: np.ndarray, name: str) -> np.ndarray:
            return np.take(x, [i], axis=axis[name] - 2)

        own = Conjugate(betas={n: (cut(a, n), cut(b, n)) for n, (a, b) in conj.betas.items()},
                        dirichlets={n: cut(a, n) for n, a in conj.dirichlets.items()})
        return own.draw(np.random.default_rng(seeds[i]), size)

    first = one(0)  # its shapes give the stacked arrays
    out = {n: np.empty((*first[n].shape[:a], len(seeds), *first[n].shape[a + 1:]),
                       first[n].dtype) for n, a in axis.items()}

    def put(i: int, got: dict[str, np.ndarray]) -> None:
        for n, a in axis.items():
            out[n][(slice(None),) * a + (slice(i, i + 1),)] = got[n]

    put(0, first)
    # Generators with separate streams release the GIL while drawing, as NumPy does
    # while copying: two threads draw and each puts its units in place
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda i: put(i, one(i)), range(1, len(seeds))))
    return out


def _auto_chunk(closed: ClosedForm, keys: list[str], n_draws: int) -> int:
    """Classifiers per chunk within :data:`CHUNK_BYTES`: float64 parameters and theta
    (three copies at most: drawn, completed, laid out by class), the metrics' rows of
    draws (one per metric and class) and the summary's temporaries (a quarter more)."""
    per_classifier_params = sum(
        np.asarray(v[0] if isinstance(v, tuple) else v).size
        for v in (*closed.conjugate.betas.values(), *closed.conjugate.dirichlets.values()))
    n_classifiers = len(closed.coords[_unit(closed)])
    k = len(closed.coords.get("actual", ())) or 1
    cells = per_classifier_params / n_classifiers
    reg = registry.registry_for(closed.dims.get("theta") or tuple(closed.coords))
    rows = sum(k if reg.per_class(key) else 1 for key in keys)
    per = n_draws * 8 * (3 * max(cells, k * k) + 1.25 * rows)
    return max(1, int(CHUNK_BYTES // per))
