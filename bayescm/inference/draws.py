"""From raw draws to labelled groups: posterior completion, prior and predictive draws.

``fit`` hands the sampler's arrays to :func:`complete` (named dims from the model,
then the family's derived quantities such as ``theta``), draws the prior with
:func:`prior_draws`, replicated data with :func:`predictive`, and asks for the
pointwise log-likelihood with :func:`log_likelihood`.  What is specific
to a family comes from its :class:`~bayescm.models.Family`; this module names none.
All of it is NumPy: no compilation.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from bayescm import metrics as metric_registry
from bayescm.data.confusion import CELLS, UNIT_DIMS
from bayescm.family import (
    ClosedForm,
    Conjugate,
    Family,
    ModelSpec,
    default_predictive,
    family_of,
    is_unmodified,
    spec_of,
)
from bayescm.stats import SAMPLE_DIMS, multinomial

if TYPE_CHECKING:
    import pymc as pm

__all__ = ["EXACT_BYTES", "EXACT_DRAWS", "LOG_LIKELIHOOD_MAX_VALUES", "METRIC_DTYPE",
           "LogLikelihoodNotice", "closed_form_draws", "complete", "default_draws",
           "exact_draws", "is_multiclass", "log_likelihood", "metric_keys", "multinomial",
           "observed", "predictive", "prior_draws", "take_units", "values_per_draw",
           "with_metrics", "with_unit_coords"]

# Metric draws are float64, as parameters and theta: float32's seven digits hid real
# spread (at tp = tn = 10^9, fn = fp = 1 every accuracy draw rounded to 1.0 and the HDI
# had width 0.0).
METRIC_DTYPE = np.float64

#: I.i.d. draws per unit (chains x draws) that ``draws=None`` gives the exact sampler.
#: The HDI's bounds converge slowly: the narrowest window of sorted draws is a
#: cube-root estimator (Kim & Pollard, "Cube root asymptotics", 1990), its bounds' Monte
#: Carlo sd falling like n^(-1/3) once n is large.  Measured on the cocaine matrix
#: (tp=26, fn=0, fp=2, tn=6), the sd over 20-40 seeds of MCC's 95% HDI bounds was
#: 0.0106/0.0070 at 4,000 draws (the old default), 0.0040/0.0029 at 20,000,
#: 0.0021/0.0014 at 100,000, 0.0015/0.0013 at 400,000 and 0.0013/0.0013 at a million
#: (30 seeds of ``fit_closed_form``'s default; largest gap of 15 seed pairs 0.0031):
#: each bound within ±0.005 of its limit (3.8 sd), two seeds' bounds less than 0.005
#: apart in about 99% of pairs (2.7 sd of a difference).
EXACT_DRAWS = 1_000_000

#: The memory ``draws=None`` lets the exact posterior group take (its float64 values,
#: :func:`values_per_draw`): a batch of units gets fewer draws per unit, never fewer
#: than 1,000 per chain.  One binary matrix with every metric holds 40 values per draw:
#: 320 MB at a million draws, and ``fit``'s predictive and prior groups add 1.2 times as
#: much again (about 0.7 GB and 5 s for the whole fit; ``fit_closed_form``, the CLI's
#: path, holds the posterior alone).  A K = 3 matrix with every metric holds some 160
#: values per draw and gets 400,000 draws.
EXACT_BYTES = 512e6

#: Above this many values (draws x cases; 400 MB in float64) ``fit`` leaves the
#: ``log_likelihood`` group out unless it was asked for (``log_likelihood=True``).
LOG_LIKELIHOOD_MAX_VALUES = 50_000_000


class LogLikelihoodNotice(UserWarning):
    """The pointwise log-likelihood was left out of a fit (too large to keep unasked)."""


def with_unit_coords(groups: dict[str, xr.Dataset], data: object) -> dict[str, xr.Dataset]:
    """The groups with the data's non-dimension coordinates (a sliced matrix's levels on
    dim ``slice``) added wherever their dim is: PyMC's coords name the units only.  The
    data's attrs (the name of a sliced matrix's classifier) go on those groups too."""
    to_xarray = getattr(data, "to_xarray", None)
    if to_xarray is None:
        return groups
    da = to_xarray()
    extra = {k: c for k, c in da.coords.items() if k not in da.dims and len(c.dims) == 1}
    if not extra and not da.attrs:
        return groups
    out = {}
    for name, ds in groups.items():
        ds = ds.assign_coords({k: c for k, c in extra.items() if c.dims[0] in ds.dims})
        out[name] = ds.assign_attrs(da.attrs) if da.dims[0] in ds.dims else ds
    return out


def values_per_draw(closed: ClosedForm, keys: Sequence[str] | None = None, *,
                    predictive: bool = False, prior: bool = False) -> int:
    """Float64 values one draw of one unit stores: parameters, ``theta`` and the metrics
    ``keys`` (default every metric; a per-class metric once per class), plus the
    predictive (counts and metrics) and prior (parameters and theta) groups when asked.

    The exact sampler's default (:func:`exact_draws`) asks with every metric, so that
    it does not depend on which metrics a call computes: ``fit``, ``fit_closed_form``
    and ``summary_exact`` draw the same numbers for the same model and seed."""
    conj = closed.conjugate
    unit = next(d for d in UNIT_DIMS if d in closed.coords)
    n_units = len(closed.coords[unit])
    params = sum(np.asarray(v[0] if isinstance(v, tuple) else v).size
                 for v in (*conj.betas.values(), *conj.dirichlets.values())) // max(n_units, 1)
    k = len(closed.coords.get("actual", ())) or 0
    cells = k * k or len(CELLS)
    reg = metric_registry.MULTICLASS if k else metric_registry.BINARY
    metrics = sum(k if reg.per_class(key) else 1 for key in (reg.names() if keys is None
                                                             else keys))
    return (params + cells + metrics + (cells + metrics if predictive else 0)
            + (params + cells + (cells if predictive else 0) if prior else 0))


def exact_draws(n_units: int, values: int, chains: int) -> int:
    r"""Draws per chain that ``draws=None`` gives the exact sampler.

    :data:`EXACT_DRAWS` i.i.d. draws per unit in all, fewer when ``n_units`` units of
    ``values`` float64 values per draw would take more than :data:`EXACT_BYTES`, and
    never fewer than 1,000 per chain:

    .. math::

        \text{draws} = \max\Bigl(1000,\ \Bigl\lfloor \min\bigl(D,\
            B / (8\,U\,V)\bigr) / C \Bigr\rfloor\Bigr)

    for :math:`D` = :data:`EXACT_DRAWS`, :math:`B` = :data:`EXACT_BYTES`, :math:`U`
    units, :math:`V` values and :math:`C` chains.

    Examples
    --------
    >>> exact_draws(1, 40, 4)          # one binary matrix, its posterior group
    250000
    >>> exact_draws(1000, 40, 4)       # a batch: bounded memory, 1,000 per chain at least
    1000
    """
    total = min(EXACT_DRAWS, EXACT_BYTES / (8 * max(int(n_units), 1) * max(int(values), 1)))
    return max(1000, int(total) // max(int(chains), 1))


def default_draws(model: Any, sampler: str, chains: Any) -> int:
    """``draws=None``: 1,000 per chain, or the exact sampler's rule for a conjugate model
    (:func:`exact_draws` of its posterior group, so that ``fit_closed_form`` draws the
    same; bad arguments are left to the checks)."""
    family = family_of(model)
    if (sampler != "exact" or family is None or not is_unmodified(model)
            or not isinstance(chains, int | np.integer) or isinstance(chains, bool)
            or chains < 1):
        return 1000
    spec = spec_of(model)
    conj = family.conjugate(model, spec)
    if conj is None:
        return 1000
    dims = {name: tuple(model.named_vars_to_dims.get(name) or ())
            for name in (*conj.betas, *conj.dirichlets, *conj.fixed)}
    return closed_form_draws(ClosedForm(spec, conj, dims, coords_of(model)), int(chains))


def closed_form_draws(closed: ClosedForm, chains: int) -> int:
    """Default draws per chain of an exact fit: sized to a batch of confusion matrices
    (:func:`exact_draws`), else 1,000 (one items model's Beta)."""
    unit = next((d for d in ("classifier", "slice") if d in closed.coords), None)
    if unit is None:
        return 1000
    return exact_draws(len(closed.coords[unit]), values_per_draw(closed), int(chains))


def take_units(closed: ClosedForm, idx: np.ndarray) -> ClosedForm:
    """The closed form of some units (positions ``idx``), data included."""
    from dataclasses import replace

    unit = next(d for d in UNIT_DIMS if d in closed.coords)
    if np.array_equal(idx, np.arange(len(closed.coords[unit]))):
        return closed  # every unit, in order (data such as ItemResults need no subset)

    def part(name: str, value: np.ndarray) -> np.ndarray:
        dims = closed.dims.get(name) or (unit,)
        return np.take(np.asarray(value), idx, axis=list(dims).index(unit))

    conj = closed.conjugate
    sub = Conjugate(
        betas={n: (part(n, a), part(n, b)) for n, (a, b) in conj.betas.items()},
        dirichlets={n: part(n, a) for n, a in conj.dirichlets.items()},
        fixed={n: part(n, v) for n, v in conj.fixed.items()})
    names = list(closed.coords[unit])
    coords = {**closed.coords, unit: [names[i] for i in idx]}
    observed = None if closed.observed is None else closed.observed.isel({unit: idx})
    return ClosedForm(replace(closed.spec, data=_take_data(closed.spec.data, idx)), sub,
                      closed.dims, coords, observed)


def _take_data(data: object, idx: np.ndarray) -> object:
    """Some units of a ConfusionMatrix or MulticlassConfusionMatrix batch."""
    from bayescm.data.confusion import ConfusionMatrix

    if isinstance(data, ConfusionMatrix):
        return data.take(idx)
    da: xr.DataArray = data.to_xarray().isel(classifier=idx)
    if metric_registry.registry_for(da).multiclass:
        return type(data)(da)
    return type(data).from_frame(da.to_pandas())


def coords_of(model: pm.Model) -> dict[str, list]:
    return {k: list(v) for k, v in model.coords.items() if v is not None}


def complete(values: dict[str, np.ndarray], model: pm.Model | None, family: Family | None,
             spec: ModelSpec | None, conjugate: Conjugate | None = None, *,
             closed: ClosedForm | None = None) -> xr.Dataset:
    """Dataset with the model's dims and coords, plus the family's derived quantities.

    Without a model, dims and coords come from the family's ``closed`` form.
    """
    if model is not None:
        coords = coords_of(model)
        var_dims = {name: model.named_vars_to_dims.get(name)
                    for name in values if name in model.named_vars}
    else:
        coords = {k: list(v) for k, v in closed.coords.items()}
        var_dims = dict(closed.dims)
    chains, draws = next(iter(values.values())).shape[:2]
    data = {}
    for name, arr in values.items():
        dims = var_dims.get(name)
        if dims is None or len(dims) != arr.ndim - 2:
            dims = tuple(f"{name}_dim_{i}" for i in range(arr.ndim - 2))
        data[name] = xr.DataArray(arr, dims=(*SAMPLE_DIMS, *dims))
    used = {d for da in data.values() for d in da.dims}
    ds = xr.Dataset(data, coords={"chain": np.arange(chains), "draw": np.arange(draws),
                                  **{d: v for d, v in coords.items() if d in used}})
    if family is not None:
        ds = family.complete(ds, spec, conjugate)
    if "cell" in ds.dims and "cell" not in ds.coords:
        ds = ds.assign_coords(cell=list(CELLS))
    return ds


is_multiclass = metric_registry.is_multiclass_dims


def metric_keys(metrics: Sequence[str] | str | None, dims: Sequence[str]) -> list[str]:
    """Keys of the requested metrics, from the registry that fits ``theta``'s ``dims``
    (binary cells, or K×K tables: the multiclass registry)."""
    if not (metrics is None or isinstance(metrics, str)):
        listed = (list(metrics) if isinstance(metrics, Iterable)
                  and not isinstance(metrics, bytes | Mapping) else None)
        if listed is not None and all(isinstance(m, str) for m in listed):
            metrics = listed  # a generator is read once, here
        else:
            raise TypeError("metrics takes a name or a list of names (e.g. 'tpr' or "
                            "['tpr', 'tnr']), or None for all of them; got "
                            f"{type(metrics).__name__} {metrics!r}.")
    if is_multiclass(dims):
        return [m.key for m in metric_registry.resolve_multiclass(metrics)]
    return [m.key for m in metric_registry.resolve(metrics)]


def with_metrics(ds: xr.Dataset, keys: Sequence[str]) -> xr.Dataset:
    """Add every requested metric computed from ``theta`` (the metric's posterior).

    ``theta`` on dim ``cell`` gets the binary registry's metrics, ``theta`` on dims
    ``actual`` × ``predicted`` the multiclass registry's (per class on dim ``class``,
    averaged and overall).
    """
    if "theta" not in ds or not ("cell" in ds["theta"].dims
                                 or is_multiclass(ds["theta"].dims)):
        return ds
    new = [k for k in keys if k not in ds]
    if not new:
        return ds
    theta = ds["theta"]
    compute = partial(metric_registry.compute, metrics=new, dtype=METRIC_DTYPE)
    if theta.chunks is not None:  # xarray on Dask: the registry runs chunk by chunk, lazily
        from bayescm.scheduling import map_metrics

        unit = next(d for d in UNIT_DIMS if d in theta.dims)
        return ds.merge(map_metrics(theta, unit, compute))
    return ds.merge(compute(theta))


def observed(model: pm.Model) -> xr.DataArray | None:
    """The observed counts with their dims, if the model has ``counts_data``."""
    if "counts_data" not in model.named_vars:
        return None
    dims = model.named_vars_to_dims.get("counts_data")
    values = np.asarray(model["counts_data"].get_value())
    if dims is None or len(dims) != values.ndim:
        return None
    coords = coords_of(model)
    return xr.DataArray(values, dims=dims, coords={d: coords[d] for d in dims if d in coords})


def predictive(draws: xr.Dataset, n: xr.DataArray, rng: np.random.Generator,
               keys: Sequence[str], family: Family | None, spec: ModelSpec | None
               ) -> xr.Dataset | None:
    """Data sets a repetition of the study with ``n`` cases would observe.

    The family says how a repetition is drawn (labelled models give confusion
    matrices and their plug-in metrics; with a fixed (designed) prevalence the class
    sizes stay fixed; latent-class models give agreement tables per population).
    """
    out = (family.predictive(draws, n, rng, spec) if family is not None
           else default_predictive(draws, n, rng))
    if out is None:
        return None
    da, what, metric_ok = out
    ds = xr.Dataset({"counts": da})
    if keys and metric_ok:
        ds = ds.merge(metric_registry.compute(da, keys, dtype=METRIC_DTYPE))
    unit = n.dims[0]
    nn = n.values.astype(np.int64)
    ds.attrs["n"] = json.dumps(dict(zip(map(str, n[unit].values), nn.tolist(), strict=True)))
    ds.attrs["meaning"] = (
        f"{what} that a repetition of the study with n cases would observe; not the "
        "posterior of the metrics"
    )
    return ds


def prior_draws(model: pm.Model, family: Family | None, spec: ModelSpec | None, draws: int,
                chains: int, rng: np.random.Generator) -> xr.Dataset | None:
    """I.i.d. draws from the prior of an unmodified family model (None if it has none)."""
    if family is None:
        return None
    values = family.prior_draws(model, spec, (chains, draws), rng)
    if values is None:
        return None
    return complete(values, model, family, spec)


def log_likelihood(draws: xr.Dataset, observed_counts: xr.DataArray | None,
                   family: Family | None, spec: ModelSpec | None, request: bool | None
                   ) -> xr.Dataset | None:
    """The ``log_likelihood`` group: the family's log-likelihood of every case.

    ``request``: True (always, whatever the size), False (never), None (when the
    family adds it by default and it has at most :data:`LOG_LIKELIHOOD_MAX_VALUES`
    values; a larger one is left out with a :class:`LogLikelihoodNotice`).
    """
    if request is False or family is None or observed_counts is None:
        return None
    if request is None and not family.log_likelihood_by_default:
        return None
    n_cases = int(np.rint(np.asarray(observed_counts.values, dtype=float)).sum())
    size = n_cases * draws.sizes["chain"] * draws.sizes["draw"]
    if request is None and size > LOG_LIKELIHOOD_MAX_VALUES:
        warnings.warn(
            f"The log_likelihood group is left out: {n_cases:,} cases x "
            f"{draws.sizes['chain'] * draws.sizes['draw']:,} draws would take "
            f"{size * 8 / 1e9:.1f} GB. Pass log_likelihood=True to keep it anyway "
            "(az.loo and az.compare need it), or fit fewer draws.",
            LogLikelihoodNotice, stacklevel=3)
        return None
    ll = family.log_likelihood(draws, observed_counts, spec)
    if ll is None:
        if request:
            raise ValueError(f"The {family.name} family has no pointwise log-likelihood; "
                             "fit with log_likelihood=None or False.")
        return None
    return xr.Dataset({str(ll.name or "counts"): ll})
