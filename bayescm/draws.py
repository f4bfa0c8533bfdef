"""From raw draws to labelled groups: posterior completion, prior and predictive draws.

``fit`` hands the sampler's arrays to :func:`complete` (named dims from the model,
``theta`` derived from the parameters), draws the prior with :func:`prior_draws`,
and replicated data with :func:`predictive`.  All of it is NumPy: no compilation.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pymc as pm
import xarray as xr

from bayescm import metrics as metric_registry
from bayescm.data import CELLS
from bayescm.models._spec import ModelSpec, is_unmodified

# Metric draws are stored in float32: seven significant digits, far below any Monte
# Carlo error, at half the memory of float64 (a 1,000-matrix batch holds 33 metrics x
# 4,000 draws per matrix).  Parameters and theta stay float64.
METRIC_DTYPE = np.float32
SAMPLE_DIMS = ("chain", "draw")


def coords_of(model: pm.Model) -> dict[str, list]:
    return {k: list(v) for k, v in model.coords.items() if v is not None}


def complete(values: dict[str, np.ndarray], model: pm.Model, spec: ModelSpec | None,
             fixed_prevalence: np.ndarray | float | None = None) -> xr.Dataset:
    """Dataset with the model's dims and coords, plus ``theta`` where it is derived."""
    coords = coords_of(model)
    chains, draws = next(iter(values.values())).shape[:2]
    data = {}
    for name, arr in values.items():
        dims = model.named_vars_to_dims.get(name) if name in model.named_vars else None
        if dims is None or len(dims) != arr.ndim - 2:
            dims = tuple(f"{name}_dim_{i}" for i in range(arr.ndim - 2))
        data[name] = xr.DataArray(arr, dims=(*SAMPLE_DIMS, *dims))
    used = {d for da in data.values() for d in da.dims}
    ds = xr.Dataset(data, coords={"chain": np.arange(chains), "draw": np.arange(draws),
                                  **{d: v for d, v in coords.items() if d in used}})
    family = spec.family if spec is not None else None
    if family == "three_beta":
        if "prevalence" not in ds:
            value = fixed_prevalence if fixed_prevalence is not None else spec.fixed_prevalence
            ds["prevalence"] = xr.DataArray(np.broadcast_to(value, ds["tpr"].shape).copy(),
                                            dims=ds["tpr"].dims)
        ds["theta"] = _theta(ds["prevalence"], ds["tpr"], ds["tnr"], ("classifier",))
    elif family == "hui_walter":
        # the confusion probabilities of every classifier in every population
        ds["theta"] = _theta(ds["prevalence"], ds["sensitivity"], ds["specificity"],
                             ("population", "classifier"))
    elif family == "folds":
        # metrics for the mean rates and for a new fold, at the (shared) prevalence
        from bayescm.models.folds import UNITS

        unit = xr.DataArray(list(UNITS), dims="classifier", name="classifier")
        tpr = xr.concat([ds["tpr_mean"], ds["tpr_new"]], dim=unit)
        tnr = xr.concat([ds["tnr_mean"], ds["tnr_new"]], dim=unit)
        ds["theta"] = _theta(ds["prevalence"], tpr, tnr, ("classifier",)).assign_coords(
            classifier=list(UNITS))
    if "cell" in ds.dims:
        ds = ds.assign_coords(cell=list(CELLS))
    return ds


def _theta(phi: xr.DataArray, tpr: xr.DataArray, tnr: xr.DataArray,
           dims: tuple[str, ...]) -> xr.DataArray:
    order = (*SAMPLE_DIMS, *dims)
    phi, tpr, tnr = xr.broadcast(phi, tpr, tnr)
    phi, tpr, tnr = (x.transpose(*order).values for x in (phi, tpr, tnr))
    theta = np.stack(metric_registry.cells_from_rates(phi, tpr, tnr), axis=-1)
    return xr.DataArray(theta, dims=(*order, "cell"), coords={"cell": list(CELLS)})


def with_metrics(ds: xr.Dataset, keys: Sequence[str]) -> xr.Dataset:
    """Add every requested metric computed from ``theta`` (the metric's posterior)."""
    if "theta" not in ds or "cell" not in ds["theta"].dims:
        return ds
    new = [k for k in keys if k not in ds]
    if not new:
        return ds
    return ds.merge(metric_registry.compute(ds["theta"], new, dtype=METRIC_DTYPE))


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


def multinomial(rng: np.random.Generator, n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Multinomial(n, p) along the last axis by sequential conditional binomials.

    The same distribution as ``rng.multinomial``, an order of magnitude faster for
    large batches of different probability vectors.
    """
    out = np.empty(p.shape, dtype=np.int64)
    left = np.broadcast_to(n, p.shape[:-1]).astype(np.int64)
    mass = np.ones(p.shape[:-1])
    for i in range(p.shape[-1] - 1):
        share = np.clip(p[..., i] / np.where(mass > 0, mass, 1.0), 0.0, 1.0)
        out[..., i] = rng.binomial(left, share)
        left = left - out[..., i]
        mass = mass - p[..., i]
    out[..., -1] = left
    return out


def predictive(draws: xr.Dataset, n: xr.DataArray, rng: np.random.Generator,
               keys: Sequence[str], spec: ModelSpec | None) -> xr.Dataset:
    """Data sets a repetition of the study with ``n`` cases would observe.

    Labelled models give confusion matrices (and their plug-in metrics); with a
    fixed (designed) prevalence the class sizes stay fixed: tp ~ Binomial(P, tpr),
    tn ~ Binomial(N - P, tnr), P = round(prevalence N).  Latent-class models give
    agreement tables per population.
    """
    nn = n.values.astype(np.int64)
    if spec is not None and spec.family == "folds":
        # a repeat of each fold with its own rates (no metrics: folds are not the units
        # the metrics describe)
        phi = draws["prevalence"].values[..., None]
        pos = rng.binomial(nn, phi)
        tp = rng.binomial(pos, draws["tpr_fold"].transpose(*SAMPLE_DIMS, "fold").values)
        tn = rng.binomial(nn - pos, draws["tnr_fold"].transpose(*SAMPLE_DIMS, "fold").values)
        counts = np.stack([tp, pos - tp, (nn - pos) - tn, tn], axis=-1)
        da = xr.DataArray(counts, dims=(*SAMPLE_DIMS, "fold", "cell"),
                          coords={"fold": n["fold"].values, "cell": list(CELLS)}, name="counts")
        what = "fold confusion matrices"
        keys = []
    elif spec is not None and spec.family == "hui_walter":
        prob = draws["pattern_prob"].transpose(*SAMPLE_DIMS, "population", "pattern")
        counts = multinomial(rng, nn, prob.values / prob.values.sum(-1, keepdims=True))
        da = xr.DataArray(counts, dims=prob.dims, coords=prob.coords, name="counts")
        what = "agreement tables"
        keys = []
    else:
        theta = draws["theta"].transpose(*SAMPLE_DIMS, "classifier", "cell")
        if spec is not None and spec.family == "three_beta":
            # Multinomial(N, theta) as its chain of binomials: class sizes first (unless
            # the design fixed them), then the correct calls within each class.
            phi = draws["prevalence"].values
            if spec.fixed_prevalence is not None:
                pos = np.broadcast_to(np.rint(phi[0, 0] * nn).astype(np.int64), phi.shape)
            else:
                pos = rng.binomial(nn, phi)
            tp = rng.binomial(pos, draws["tpr"].values)
            tn = rng.binomial(nn - pos, draws["tnr"].values)
            counts = np.stack([tp, pos - tp, (nn - pos) - tn, tn], axis=-1)
        else:
            counts = multinomial(rng, nn, theta.values)
        da = xr.DataArray(counts, dims=theta.dims, coords=theta.coords, name="counts")
        what = "confusion matrices (and their plug-in metrics)"
    ds = xr.Dataset({"counts": da})
    if keys:
        ds = ds.merge(metric_registry.compute(da, keys, dtype=METRIC_DTYPE))
    unit = n.dims[0]
    ds.attrs["n"] = json.dumps(dict(zip(map(str, n[unit].values), nn.tolist(), strict=True)))
    ds.attrs["meaning"] = (
        f"{what} that a repetition of the study with n cases would observe; not the "
        "posterior of the metrics"
    )
    return ds


def prior_draws(model: pm.Model, spec: ModelSpec | None, draws: int, chains: int,
                rng: np.random.Generator) -> xr.Dataset | None:
    """I.i.d. draws from the prior of an unmodified bayescm model (None if improper)."""
    if spec is None or not is_unmodified(model):
        return None
    size = (chains, draws)
    values: dict[str, np.ndarray] = {}

    def beta(name: str) -> np.ndarray | None:
        a = np.asarray(model[f"{name}_alpha"].get_value())
        b = np.asarray(model[f"{name}_beta"].get_value())
        if np.any(a <= 0) or np.any(b <= 0):
            return None  # an improper prior has no draws
        return rng.beta(a, b, size=(*size, a.size))

    if spec.family == "dirichlet_multinomial":
        alpha = np.asarray(model["theta_alpha"].get_value())
        if np.any(alpha <= 0):
            return None
        g = rng.standard_gamma(alpha, size=(*size, *alpha.shape))
        values["theta"] = g / g.sum(axis=-1, keepdims=True)
    elif spec.family == "three_beta":
        for name in spec.priors:
            draw = beta(name)
            if draw is None:
                return None
            values[name] = draw
    elif spec.family == "hui_walter":
        from bayescm.models.hui_walter import pattern_probabilities

        se, sp = beta("sensitivity"), beta("specificity")
        values["prevalence"] = beta("prevalence")
        # the prior is the product of the Betas truncated to Se + Sp > 1: rejection
        bad = se + sp <= 1
        while bad.any():
            se[bad] = beta("sensitivity")[bad]
            sp[bad] = beta("specificity")[bad]
            bad = se + sp <= 1
        values["sensitivity"], values["specificity"] = se, sp
        pairs = spec.extra["pairs"]
        u = [rng.uniform(size=(*size, len(pairs))) for _ in range(2)] if pairs else [None, None]
        prob, cov_se, cov_sp = pattern_probabilities(
            se, sp, values["prevalence"], u[0], u[1], se.shape[-1], pairs)
        values["pattern_prob"] = prob
        if pairs:
            values.update(cov_se_position=u[0], cov_sp_position=u[1], cov_se=cov_se,
                          cov_sp=cov_sp)
    else:
        return None
    return complete(values, model, spec)
