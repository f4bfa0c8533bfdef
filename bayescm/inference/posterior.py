"""Metric draws from either a fitted InferenceData or a confusion matrix.

Analysis functions accept both.  For a confusion matrix the posterior is the closed
form of the default family of its kind (:func:`bayescm.family.default_family`), with
its default priors, drawn directly -- no model, no sampler: for a
:class:`~bayescm.ConfusionMatrix` the three-Beta model with Beta(1, 1) priors
(Tötsch & Hoffmann 2021: independent Betas for prevalence, TPR and TNR); for a
:class:`~bayescm.MulticlassConfusionMatrix` the ``multiclass_rows`` family with flat
priors (a Dirichlet of the class prevalence and one per actual class's row).  Which
metric registry answers (binary or multiclass) is asked of the data
(:func:`bayescm.metrics.registry_for`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import xarray as xr

from bayescm import idata as idata_mod
from bayescm import metrics as registry
from bayescm.data.confusion import ConfusionMatrix, unit_of
from bayescm.data.multiclass import MulticlassConfusionMatrix
from bayescm.family import default_family
from bayescm.inference import draws as draws_mod
from bayescm.stats import SAMPLE_DIMS

if TYPE_CHECKING:
    import arviz as az

__all__ = ["class_index", "flat", "metric_draws", "missing_metric", "multiclass_theta_sampler",
           "select", "select_class", "theta_draws", "units_of"]

CountData = ConfusionMatrix | MulticlassConfusionMatrix


def _theta_sampler(cm: CountData, kind: str
                   ) -> Callable[[np.random.Generator, int], xr.DataArray]:
    """``draw(rng, n)``: n i.i.d. draws of theta (one chain) from the closed form of the
    default family of ``kind``, computed once."""
    family = default_family(kind)
    closed = family.closed_form(cm)

    def draw(rng: np.random.Generator, n: int) -> xr.DataArray:
        values = closed.conjugate.draw(rng, (1, n))
        ds = draws_mod.complete(values, None, family, closed.spec, closed.conjugate,
                                closed=closed)
        return ds["theta"]

    return draw


def multiclass_theta_sampler(cm: MulticlassConfusionMatrix
                             ) -> Callable[[np.random.Generator, int], xr.DataArray]:
    """``draw(rng, n)``: n i.i.d. draws of theta (dims chain, draw, classifier, actual,
    predicted; one chain) from the posterior of the multiclass default family
    (:func:`bayescm.family.default_family`: ``multiclass_rows``), flat priors.

    The family's closed form is computed once; each call draws from it.
    """
    return _theta_sampler(cm, "multiclass")


def theta_draws(cm: CountData, draws: int, rng: np.random.Generator) -> xr.DataArray:
    """Draws of theta (dims chain, draw, classifier, cell) from the closed form of the
    binary default family (:func:`bayescm.family.default_family`: the three-Beta
    posterior, Beta(1, 1) priors); for a MulticlassConfusionMatrix (dims ..., actual,
    predicted) from :func:`multiclass_theta_sampler`.

    I.i.d. draws from the closed form in one chain: ``draws`` is the total.
    """
    if isinstance(cm, MulticlassConfusionMatrix):
        return multiclass_theta_sampler(cm)(rng, draws)
    theta = _theta_sampler(cm, "binary")(rng, draws)
    da = cm.to_xarray()  # dims (classifier or slice, cell), with any slice levels
    return xr.DataArray(theta.transpose(*SAMPLE_DIMS, *da.dims).values,
                        dims=(*SAMPLE_DIMS, *da.dims), coords=da.coords)


def metric_draws(
    data: az.InferenceData | CountData,
    metric: str,
    *,
    group: str = "posterior",
    draws: int = 4000,
    random_seed: int | None = None,
) -> xr.DataArray:
    """Posterior draws of one metric with dims (chain, draw, <units>): the units are
    classifiers, or the slices of a sliced matrix (dim ``slice``, with its levels as
    coordinates when the data carry them).

    For a ConfusionMatrix or MulticlassConfusionMatrix: ``draws`` i.i.d. draws in one
    chain (the total).  The metric is a key or alias of the registry that answers for
    the data (multiclass per-class metrics keep dim ``class``).
    """
    from bayescm.summary import metric_arrays

    if isinstance(data, CountData):
        reg = registry.registry_for(data)
        key = reg.key(metric)
        theta = theta_draws(data, draws, np.random.default_rng(random_seed))
        return reg.compute(theta, [key])[key]
    # bcm.exact_posterior gives its draws (NumPy or Dask-backed) as an xarray.DataTree
    if not (idata_mod.is_inference_data(data) or isinstance(data, xr.DataTree)):
        raise TypeError(
            "Expected an arviz.InferenceData from bayescm.fit (or the xarray.DataTree of "
            "bayescm.exact_posterior), a bayescm.ConfusionMatrix or a "
            f"bayescm.MulticlassConfusionMatrix, got {type(data).__name__}."
        )
    ds = idata_mod.group(data, group)
    reg = registry.registry_for(data, group=group)
    key = reg.key(metric)
    if key not in ds:
        raise missing_metric(ds, key, group)
    return metric_arrays(ds, reg, [key], group)[key]


def units_of(da: xr.DataArray) -> list[str]:
    return [d for d in da.dims if d not in SAMPLE_DIMS]


def select(da: xr.DataArray, classifier: str | None) -> xr.DataArray:
    """One classifier's (or slice's) draws; the only one when ``classifier`` is None."""
    unit = unit_of(da)
    if unit is None:
        return da
    names = [str(c) for c in da[unit].values]
    if classifier is None:
        if len(names) != 1:
            raise ValueError(
                f"The data hold {len(names)} {unit}s {names}; name one with a tuple "
                f"(data, {names[0]!r}) in place of the data (or fit it alone)."
            )
        return da.isel({unit: 0}, drop=True)
    if classifier not in names:
        raise KeyError(f"{unit.capitalize()} {classifier!r} is not in the data ({names}).")
    return da.sel({unit: classifier}, drop=True)


def class_index(labels: Sequence[Hashable] | None, label: Hashable | None, metric: str
                ) -> int | None:
    """Position of ``label`` among the class ``labels`` of a per-class metric.

    ``labels`` is None for a metric with one value per classifier, which takes no
    ``label``.  Labels match by value or by their text (``1`` finds ``"1"``).

    Raises
    ------
    ValueError
        A per-class metric without ``label``, or ``label`` for another metric.
    KeyError
        ``label`` is not among ``labels`` (the message lists them).
    """
    if labels is None:
        if label is not None:
            raise ValueError(
                f"label={label!r} picks one class of a per-class metric, but {metric!r} has "
                "one value per classifier; drop label=."
            )
        return None
    shown = [x.item() if isinstance(x, np.generic) else x for x in labels]
    if label is None:
        averaged = [f"{metric}_{a}" for a in ("macro", "weighted")
                    if f"{metric}_{a}" in registry.MULTICLASS_REGISTRY]
        hint = f", or use an average ({', '.join(averaged)})" if averaged else ""
        raise ValueError(
            f"Metric {metric!r} has one value per class {shown}; say which with "
            f"label=...{hint}."
        )
    for i, c in enumerate(labels):
        if c == label or str(c) == str(label):
            return i
    raise KeyError(f"Class {label!r} is not among the labels {shown}.")


def select_class(da: xr.DataArray, label: Hashable | None, metric: str) -> xr.DataArray:
    """One class's draws of a per-class metric (dim ``class``); other metrics as they
    are (see :func:`class_index` for the errors)."""
    labels = list(da["class"].values) if "class" in da.dims else None
    i = class_index(labels, label, metric)
    return da if i is None else da.isel({"class": i}, drop=True)


def flat(da: xr.DataArray, units: Sequence[str]) -> np.ndarray:
    """(units..., chain*draw) array."""
    return da.transpose(*units, *SAMPLE_DIMS).values.reshape(
        *[da.sizes[u] for u in units], -1)


def missing_metric(ds: xr.Dataset, key: str, group: str = "posterior") -> KeyError:
    """The error for a metric a fit's group lacks, with the way out there is: a refit with
    every metric where the group has the cells (``theta``) they are computed from, else
    the metrics it has (a model of scores, such as ``bcm.models.items``, has no cells)."""
    if "theta" in ds:
        return KeyError(f"Metric {key!r} is not in group {group!r}; refit with "
                        "bcm.fit(..., metrics=None) to compute every metric.")
    known = {m.key for m in registry.resolve(None)} | {
        m.key for m in registry.resolve_multiclass(None)}
    have = sorted(k for k in ds.data_vars if k in known)
    return KeyError(f"Metric {key!r} is not in group {group!r}, which has {have} alone: its "
                    "model gives no confusion-matrix cells to compute others from (e.g. an "
                    "items fit has the accuracy 'acc'; an error rate is 1 - acc).")
