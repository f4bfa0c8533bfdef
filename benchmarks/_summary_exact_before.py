"""The ``summary_exact`` implementation before issue 29 item 2 (fused K-class chunks), frozen.

The code of ``bayescm/summary_stream.py`` as it was (its module docstring left out),
for ``bench_multiclass_exact.py`` only: it times the path before and checks that the
same seed gives the same table.  Run it with ``bayescm.summary.COMPILED_FROM`` set out
of reach, so that ``bayescm.summary.table`` uses its NumPy statistics as it did then,
and with ``bayescm.inference.marginals.aligned`` replaced by :func:`aligned` below, the
xarray reindexing of every closed-form marginal to each chunk's rows as it was then
(the current one looks positions up once, which would speed the frozen path up too).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm import metrics as registry
from bayescm.data.confusion import UNIT_DIMS, ConfusionMatrix
from bayescm.data.multiclass import MulticlassConfusionMatrix
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
from bayescm.scheduling import client_for, tasks_per_process, unit_seeds
from bayescm.stats import SAMPLE_DIMS, check_hdi_prob
from bayescm.summary import check_names, table

__all__ = ["summary_exact"]

CHUNK_BYTES = 256e6
"""Working memory a chunk of classifiers may take (draws, metrics, temporaries)."""


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
        Classifiers per chunk; default as many as fit in about 256 MB per process (on
        a cluster whose workers are threads of this process, 256 MB shared by the
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
    entropy = np.random.SeedSequence(random_seed).entropy
    work = partial(_chunk_table, family=family, entropy=entropy, size=(chains, draws),
                   keys=keys, hdi_prob=hdi_prob, exact=exact)
    with client_for(scheduler) as client:
        if chunk is None:  # CHUNK_BYTES per process, whatever runs in it at once
            chunk = max(1, _auto_chunk(closed, len(keys), draws * chains)
                        // tasks_per_process(client))
        chunks = [np.arange(start, min(start + int(chunk), len(names)))
                  for start in range(0, len(names), int(chunk))]
        parts = (draws_mod.take_units(closed, idx) for idx in chunks)
        if client is None:
            frames = [work(idx, part) for idx, part in zip(chunks, parts, strict=True)]
        else:  # one task per chunk; only the chunks' tables come back
            frames = client.gather(client.map(work, chunks, list(parts), pure=False))
    out = pd.concat(frames)
    out.attrs.update(hdi_prob=hdi_prob, group="posterior", sampler="exact",
                     model=closed.spec.family, draws=draws * chains)
    to_xarray = getattr(closed.spec.data, "to_xarray", None)
    recorded = {} if to_xarray is None else to_xarray().attrs
    if "classifier" in recorded:  # a sliced matrix's classifier, as in bcm.summary's attrs
        out.attrs["classifier"] = recorded["classifier"]
    return out


def _chunk_table(positions: np.ndarray, part: ClosedForm, *, family: Family, entropy: int,
                 size: tuple[int, int], keys: list[str], hdi_prob: float,
                 exact: dict[str, marginals.Exact]) -> pd.DataFrame:
    """The summary rows of the units at ``positions`` (``part`` is their closed form):
    draw, compute metrics, summarise, discard."""
    unit = _unit(part)
    values = _draw(part.conjugate, part.dims, unit_seeds(entropy, positions), size, unit)
    post = draws_mod.complete(values, None, family, part.spec, part.conjugate, closed=part)
    # classifier first: each classifier's (and class's) draws end up contiguous,
    # which the summary's sorts need (a strided row sorts twice as slowly)
    theta = post["theta"].transpose(unit, *SAMPLE_DIMS, ...)
    reg = registry.registry_for(theta)
    mets = reg.compute(theta, keys, dtype=draws_mod.METRIC_DTYPE)
    del post, values, theta  # the draws go as soon as their metrics exist
    plug = reg.compute(part.observed, keys) if part.observed is not None else None
    return table(dict(mets.data_vars), hdi_prob=hdi_prob, plug=plug, iid=True, exact=exact)


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

    # Generators with separate streams release the GIL while drawing: two threads
    with ThreadPoolExecutor(2) as pool:
        parts = list(pool.map(one, range(len(seeds))))
    return {n: np.concatenate([p[n] for p in parts], axis=axis[n]) for n in axis}


def _auto_chunk(closed: ClosedForm, n_keys: int, n_draws: int) -> int:
    """Classifiers per chunk within :data:`CHUNK_BYTES`: float64 parameters and theta
    (three copies at most), float64 metrics (per class: K values) and their summary."""
    per_classifier_params = sum(
        np.asarray(v[0] if isinstance(v, tuple) else v).size
        for v in (*closed.conjugate.betas.values(), *closed.conjugate.dirichlets.values()))
    n_classifiers = len(closed.coords[_unit(closed)])
    k = len(closed.coords.get("actual", ())) or 1
    cells = per_classifier_params / n_classifiers
    per = n_draws * (3 * 8 * max(cells, k * k) + 2 * 8 * n_keys * k)
    return max(1, int(CHUNK_BYTES // per))


def aligned(ex: marginals.Exact, per_class: bool, base: Sequence[str],
            units: xr.DataArray, classes: list[str]) -> dict[str, np.ndarray]:
    """An Exact's arrays in a summary table's row order (base units, then class)."""
    unit = next(d for d in base if d in UNIT_DIMS)
    names = [str(v) for v in units[unit].values]
    out = {}
    for field in ("a", "b", "mean_finite", "sd_finite", "sign", "note"):
        da = getattr(ex, field).assign_coords({unit: [str(v) for v in ex.a[unit].values]})
        da = da.reindex({unit: names})
        da = da.reindex({"class": classes}) if per_class else da.isel({"class": 0})
        if set(base) - set(da.dims):
            da = da.broadcast_like(units)
        out[field] = da.transpose(*base, *(["class"] if per_class else [])).values.ravel()
    out["note"] = np.array(["" if not isinstance(v, str) else v for v in out["note"]],
                           dtype=object)
    return out
