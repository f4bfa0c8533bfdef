r"""Metric draws from either a fitted InferenceData or a confusion matrix.

Analysis functions accept both.  For a :class:`~bayescm.ConfusionMatrix` the
posterior is the three-Beta model's with Beta(1, 1) priors (Tötsch & Hoffmann
2021), drawn directly from its closed form (independent Betas for prevalence, TPR
and TNR) -- no model, no sampler.  For a :class:`~bayescm.MulticlassConfusionMatrix`
it is its K-class generalisation with flat priors: class prevalence
:math:`\pi \sim \mathrm{Dirichlet}(1 + r)` (row sums :math:`r`) and each actual
class's row :math:`\rho_a \sim \mathrm{Dirichlet}(1 + C_{a\cdot})`, independently,
:math:`\theta_{ap} = \pi_a \rho_{ap}`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from bayescm import idata as idata_mod
from bayescm import metrics as registry
from bayescm.data import CELLS, ConfusionMatrix
from bayescm.multiclass import MulticlassConfusionMatrix
from bayescm.stats import SAMPLE_DIMS, draw_conjugate

if TYPE_CHECKING:
    import arviz as az

__all__ = ["flat", "metric_draws", "multiclass_theta_draws", "select", "theta_draws",
           "three_beta_params", "units_of"]


def three_beta_params(tp: Any, fn: Any, fp: Any, tn: Any) -> dict[str, tuple[Any, Any]]:
    r"""Beta parameters of the three-Beta posterior under Beta(1, 1) priors.

    :math:`\phi \sim \mathrm{Beta}(1 + tp + fn, 1 + fp + tn)`,
    :math:`TPR \sim \mathrm{Beta}(1 + tp, 1 + fn)`,
    :math:`TNR \sim \mathrm{Beta}(1 + tn, 1 + fp)`, in the order (prevalence, tpr,
    tnr) in which :func:`bayescm.stats.draw_conjugate` draws them.
    """
    return {"prevalence": (1 + tp + fn, 1 + fp + tn), "tpr": (1 + tp, 1 + fn),
            "tnr": (1 + tn, 1 + fp)}


def theta_draws(cm: ConfusionMatrix, draws: int, rng: np.random.Generator) -> xr.DataArray:
    """Draws of theta (dims chain, draw, classifier, cell) from the three-Beta posterior.

    I.i.d. draws from the closed form in one chain: ``draws`` is the total.
    """
    cells = (cm.cell(c).astype(float) for c in CELLS)
    post = draw_conjugate(rng, (draws,), betas=three_beta_params(*cells))
    theta = np.stack(registry.cells_from_rates(post["prevalence"], post["tpr"], post["tnr"]),
                     -1)
    return xr.DataArray(theta[None], dims=(*SAMPLE_DIMS, "classifier", "cell"),
                        coords={"classifier": list(cm.classifiers), "cell": list(CELLS)})


def multiclass_theta_draws(cm: MulticlassConfusionMatrix, draws: int,
                           rng: np.random.Generator) -> xr.DataArray:
    """Draws of theta (dims chain, draw, classifier, actual, predicted), flat priors.

    Class prevalence ~ Dirichlet(1 + row sums), each row ~ Dirichlet(1 + row), in one
    chain of ``draws`` i.i.d. draws.
    """
    counts = cm.counts.astype(float)
    post = draw_conjugate(rng, (draws,), dirichlets={"prevalence": 1 + counts.sum(axis=2),
                                                     "rows": 1 + counts})
    theta = post["prevalence"][..., None] * post["rows"]
    return xr.DataArray(theta[None], dims=(*SAMPLE_DIMS, "classifier", "actual", "predicted"),
                        coords=cm.coords)


def metric_draws(
    data: az.InferenceData | ConfusionMatrix | MulticlassConfusionMatrix,
    metric: str,
    *,
    group: str = "posterior",
    draws: int = 4000,
    random_seed: int | None = None,
) -> xr.DataArray:
    """Posterior draws of one metric with dims (chain, draw, <units>).

    The metric is resolved by the registry that fits the data (binary, or
    multiclass: per-class metrics add dim ``class``).  For a ConfusionMatrix or a
    MulticlassConfusionMatrix: ``draws`` i.i.d. draws in one chain (the total).
    """
    from bayescm.summary import metric_arrays, registry_of

    if isinstance(data, ConfusionMatrix | MulticlassConfusionMatrix):
        reg = registry.registry_for(data)
        key = reg.key(metric)
        rng = np.random.default_rng(random_seed)
        theta = (multiclass_theta_draws(data, draws, rng) if reg.multiclass
                 else theta_draws(data, draws, rng))
        return reg.compute(theta, [key])[key]
    if not idata_mod.is_inference_data(data):
        raise TypeError(
            "Expected an arviz.InferenceData from bayescm.fit, a bayescm.ConfusionMatrix or a "
            f"bayescm.MulticlassConfusionMatrix, got {type(data).__name__}."
        )
    ds = idata_mod.group(data, group)
    reg = registry_of(data, group)
    key = reg.key(metric)
    if key not in ds:
        raise KeyError(
            f"Metric {key!r} is not in group {group!r}; refit with bcm.fit(..., metrics=None) "
            "to compute every metric."
        )
    return metric_arrays(ds, reg, [key], group)[key]


def units_of(da: xr.DataArray) -> list[str]:
    return [d for d in da.dims if d not in SAMPLE_DIMS]


def select(da: xr.DataArray, classifier: str | None) -> xr.DataArray:
    """One classifier's draws; the only one when ``classifier`` is None."""
    if "classifier" not in da.dims:
        return da
    names = [str(c) for c in da["classifier"].values]
    if classifier is None:
        if len(names) != 1:
            raise ValueError(
                f"The data hold {len(names)} classifiers {names}; say which with classifier=..."
            )
        return da.isel(classifier=0, drop=True)
    if classifier not in names:
        raise KeyError(f"Classifier {classifier!r} is not in the data ({names}).")
    return da.sel(classifier=classifier, drop=True)


def flat(da: xr.DataArray, units: Sequence[str]) -> np.ndarray:
    """(units..., chain*draw) array."""
    return da.transpose(*units, *SAMPLE_DIMS).values.reshape(
        *[da.sizes[u] for u in units], -1)
