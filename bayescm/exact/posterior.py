r"""``exact_posterior``: exact posterior draws of many units, in memory or as xarray on Dask.

For a conjugate model every unit (classifier, or slice of a sliced matrix) has its
own closed-form posterior, independent of the others: Betas for the three-Beta
model, Dirichlets for the Dirichlet-multinomial and multiclass ones
(:meth:`bayescm.models.Family.conjugate`).  So the draws of unit :math:`i` can be
made anywhere, from its own random stream: the :math:`i`-th child of
``numpy.random.SeedSequence(random_seed)``, as in :func:`bayescm.summary_exact`.

With ``chunk=None`` the draws are NumPy arrays.  With ``chunk=c`` every posterior
variable is a Dask-backed DataArray chunked ``c`` units at a time along the unit dim
(:func:`xarray.map_blocks` over the units' positions): nothing is drawn until it is
computed, each block is drawn where it runs (a ``dask.distributed`` cluster, if a
client is active), and ``.compute()`` returns the very numbers of ``chunk=None``
with the same seed.  The metrics are computed by the registry block by block
(lazily too), so memory is bounded by the blocks in flight, not by the number of
units.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
import xarray as xr

from bayescm import idata as idata_mod
from bayescm.family import ClosedForm, Family
from bayescm.inference import draws as draws_mod
from bayescm.inference import persist
from bayescm.scheduling import lazy_template, map_blocks, unit_seeds
from bayescm.summary_stream import _closed_form, _draw, _unit

__all__ = ["exact_posterior"]


def exact_posterior(
    data_or_model: Any,
    *,
    draws: int | None = None,
    chains: int = 4,
    metrics: str | Sequence[str] | None = None,
    random_seed: int | None = None,
    chunk: int | None = None,
) -> xr.DataTree:
    r"""Exact (i.i.d.) posterior draws of every unit, optionally as xarray on Dask.

    Unit :math:`i` draws its ``chains × draws`` values from its own stream, the
    :math:`i`-th child of ``SeedSequence(random_seed)``, so the numbers do not
    depend on ``chunk`` nor on where the chunks are computed.  (``bcm.fit(model,
    sampler="exact")`` draws all units from one stream: the same distribution,
    other numbers.)

    Parameters
    ----------
    data_or_model
        As for :func:`bayescm.summary_exact`: a model from a conjugate builder
        (unmodified) or a ``ConfusionMatrix`` / ``MulticlassConfusionMatrix`` (its
        default model, flat priors).
    draws, chains
        Draws per chain and chains.  ``draws=None``: the exact sampler's default
        (:func:`bayescm.inference.draws.exact_draws`): a million i.i.d. draws per unit
        when the posterior group fits in 512 MB, fewer for a batch (with ``chunk``, per
        block of ``chunk`` units), at least 1,000 per chain.
    metrics
        Metric keys or aliases to add (default all of the registry that fits).
    random_seed
        Seed of the units' streams.
    chunk
        None: NumPy arrays, drawn now.  An integer: Dask-backed arrays of ``chunk``
        units per block along the unit dim (``classifier`` or ``slice``), drawn
        when computed, on the active Dask scheduler (a ``dask.distributed.Client``
        if one is active).

    Returns
    -------
    xarray.DataTree
        Groups ``posterior`` (parameters, ``theta`` and metrics, dims ``(chain,
        draw, unit, ...)``) and ``observed_data``; the attrs of a fit with
        ``sampler="exact"``.  Read by :func:`bayescm.summary` like a fit.

    Raises
    ------
    ValueError
        For a model without a closed-form posterior, or a bad ``draws``,
        ``chains`` or ``chunk``.

    Examples
    --------
    >>> import bayescm as bcm
    >>> cm = bcm.ConfusionMatrix(tp=[26, 31, 3], fn=[0, 9, 12], fp=[2, 13, 0],
    ...                          tn=[6, 20, 150], classifier=["a", "b", "c"])
    >>> eager = bcm.exact_posterior(cm, draws=100, metrics=["ba"], random_seed=1)
    >>> lazy = bcm.exact_posterior(cm, draws=100, metrics=["ba"], random_seed=1, chunk=2)
    >>> lazy.posterior["ba"].chunks
    ((4,), (100,), (2, 1))
    >>> bool((lazy.posterior["ba"].compute() == eager.posterior["ba"]).all())
    True
    """
    for name, v, low in (("draws", draws, 4), ("chains", chains, 1)):
        if (name != "draws" or v is not None) and (
                not isinstance(v, int | np.integer) or isinstance(v, bool) or v < low):
            raise ValueError(f"{name} must be an integer >= {low}, got {v!r}.")
    if chunk is not None and (not isinstance(chunk, int | np.integer) or isinstance(chunk, bool)
                              or chunk < 1):
        raise ValueError(f"chunk must be a positive integer (units per Dask block) or None "
                         f"(NumPy arrays), got {chunk!r}.")
    family, closed = _closed_form(data_or_model)
    keys = draws_mod.metric_keys(metrics, closed.dims.get("theta") or tuple(closed.coords))
    unit = _unit(closed)
    names = list(closed.coords[unit])
    if draws is None:
        draws = draws_mod.exact_draws(len(names) if chunk is None else min(int(chunk), len(names)),
                                      draws_mod.values_per_draw(closed), chains)
    block = partial(_block, closed=closed, family=family,
                    entropy=np.random.SeedSequence(random_seed).entropy,
                    size=(int(chains), int(draws)))
    positions = xr.DataArray(np.arange(len(names)), dims=unit, coords={unit: names})
    if chunk is None:
        post = block(positions)
    else:
        positions = positions.chunk({unit: int(chunk)})
        # the template's layout comes from one unit's block of one draw per chain
        layout = _block(positions.isel({unit: [0]}).compute(), closed=closed, family=family,
                        entropy=0, size=(1, 4))
        template = lazy_template(layout, unit, names, positions.chunks[0],
                                 {"chain": int(chains), "draw": int(draws)},
                                 {"chain": np.arange(chains), "draw": np.arange(draws),
                                  unit: names})
        post = map_blocks(block, positions, template)
    groups = {"posterior": draws_mod.with_metrics(post, keys)}
    if closed.observed is not None:
        groups["observed_data"] = xr.Dataset({"counts": closed.observed})
    groups = draws_mod.with_unit_coords(groups, closed.spec.data)
    attrs = {"inference_library": "bayescm", "sampler": "exact", "engine": "exact",
             "model": closed.spec.family, "random_seed": "None" if random_seed is None
             else int(random_seed), "unit_streams": 1,
             "parameters": ",".join(n for n in family.parameters(closed.spec) if n in post),
             # the model record: bcm.summary reads its closed form (exact Beta rows)
             "model_spec": persist.encode_spec(family, closed.spec)}
    return idata_mod.make(groups, attrs, arviz=False)


def _block(positions: xr.DataArray, *, closed: ClosedForm, family: Family, entropy: int,
           size: tuple[int, int]) -> xr.Dataset:
    """The posterior draws of the units at ``positions``, each from its own stream."""
    idx = np.asarray(positions.values)
    part = draws_mod.take_units(closed, idx)
    unit = _unit(part)
    values = _draw(part.conjugate, part.dims, unit_seeds(entropy, idx), size, unit)
    return draws_mod.complete(values, None, family, part.spec, part.conjugate, closed=part)
