"""Helpers the built-in builders share: data coercion, properness checks, Beta rates.

The record a builder attaches to its model (:class:`~bayescm.family.ModelSpec`)
and the family registry live in :mod:`bayescm.family`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm import metrics
from bayescm.data.confusion import CELLS, ConfusionMatrix
from bayescm.family import Conjugate, Kernel
from bayescm.priors import Beta, Prior, PriorError
from bayescm.stats import SAMPLE_DIMS

if TYPE_CHECKING:
    import pymc as pm
    import pytensor.tensor as pt


def as_confusion_matrix(data: object) -> ConfusionMatrix:
    """Accept a ConfusionMatrix, a mapping of cells, or a DataFrame."""
    import pandas as pd

    if isinstance(data, ConfusionMatrix):
        return data
    if isinstance(data, pd.DataFrame):
        return ConfusionMatrix.from_frame(data)
    if isinstance(data, Mapping):
        return ConfusionMatrix.from_counts(data)
    raise TypeError(
        f"Expected a bayescm.ConfusionMatrix (or a dict of tp, fn, fp, tn, or a DataFrame), "
        f"got {type(data).__name__}."
    )


def check_proper(
    name: str, priors: Sequence[Prior], counts: np.ndarray, classifiers: Sequence[str],
    labels: Sequence[str], *, unit: str = "classifier",
) -> None:
    """Raise unless every posterior parameter (prior + counts) is positive.

    ``counts`` has shape ``(n_classifiers, k)``: the counts added to each of the
    ``k`` prior parameters.  A zero posterior parameter means the posterior is
    improper (the density integrates to infinity at a boundary).
    """
    for c, prior, row in zip(classifiers, priors, counts, strict=True):
        post = np.asarray(prior.params) + row
        bad = [lab for lab, v in zip(labels, post, strict=True) if v <= 0]
        if bad:
            raise PriorError(
                f"The posterior of {name!r} for {unit} {c!r} is improper: prior {prior!r} "
                f"with {dict(zip(labels, row.tolist(), strict=True))} leaves parameter(s) for "
                f"{bad} at zero. Haldane priors need at least one count on each side; use "
                "Beta(1, 1) (Laplace) or Beta(0.5, 0.5) (Jeffreys) instead."
            )


def unit_dim(da: xr.DataArray) -> str:
    """The unit dim (``classifier``, ``slice``, ...) of a per-unit draw array."""
    return next(d for d in da.dims if d not in SAMPLE_DIMS)


def rate(name: str, priors: Sequence[Beta], dims: str) -> pt.TensorVariable:
    """A Beta-distributed rate per classifier whose parameters are pm.Data.

    The prior parameters live in ``{name}_alpha`` and ``{name}_beta`` so that a
    compiled sampler can be reused with new priors.  Haldane-type parameters (0)
    cannot be written as a ``pm.Beta``; then the rate is Uniform(0, 1) plus the
    Beta kernel as a potential, which is the same unnormalised density.
    """
    import pymc as pm  # PyMC is imported when a model is built, not with bayescm
    import pytensor.tensor as pt

    a = pm.Data(f"{name}_alpha", np.array([p.alpha for p in priors]), dims=dims)
    b = pm.Data(f"{name}_beta", np.array([p.beta for p in priors]), dims=dims)
    if all(p.proper for p in priors):
        return pm.Beta(name, alpha=a, beta=b, dims=dims)
    x = pm.Uniform(name, 0.0, 1.0, dims=dims)
    pm.Potential(f"{name}_prior", pt.sum((a - 1) * pt.log(x) + (b - 1) * pt.log1p(-x)))
    return x


INT32_MAX = 2**31 - 1


def counts_data(counts: np.ndarray, dims: Sequence[str]) -> pt.TensorVariable:
    """``pm.Data("counts_data", counts)`` that keeps counts above ``2**31 - 1`` exact.

    PyMC stores integer data as int32, which would wrap such counts round to
    negative numbers; they are stored as float64 instead (exact up to ``2**53``,
    the largest count :class:`~bayescm.ConfusionMatrix` accepts).
    """
    import pymc as pm

    values = np.asarray(counts)
    if values.size and values.max() > INT32_MAX:
        values = values.astype(np.float64)
    return pm.Data("counts_data", values, dims=dims)


def data_value(model: pm.Model, name: str) -> np.ndarray:
    """The current value of a ``pm.Data`` container (honours ``pm.set_data``)."""
    return np.asarray(model[name].get_value())


def beta_prior_draws(model: pm.Model, names: Sequence[str], size: tuple[int, ...],
                     rng: np.random.Generator) -> dict[str, np.ndarray] | None:
    """I.i.d. draws of Beta rates from their ``{name}_alpha/_beta`` data (None if improper)."""
    out = {}
    for name in names:
        a, b = data_value(model, f"{name}_alpha"), data_value(model, f"{name}_beta")
        if np.any(a <= 0) or np.any(b <= 0):
            return None  # an improper prior has no draws
        out[name] = rng.beta(a, b, size=(*size, a.size))
    return out


def theta_from_rates(phi: xr.DataArray, tpr: xr.DataArray, tnr: xr.DataArray,
                     dims: tuple[str, ...]) -> xr.DataArray:
    """Confusion probabilities (dim ``cell``) from prevalence, TPR and TNR draws."""
    order = (*SAMPLE_DIMS, *dims)
    phi, tpr, tnr = xr.broadcast(phi, tpr, tnr)
    phi, tpr, tnr = (x.transpose(*order).values for x in (phi, tpr, tnr))
    theta = np.stack(metrics.cells_from_rates(phi, tpr, tnr), axis=-1)
    return xr.DataArray(theta, dims=(*order, "cell"), coords={"cell": list(CELLS)})


def conjugate_kernel(conj: Conjugate) -> Kernel:
    """nutpie kernel of a posterior of independent Betas and Dirichlets.

    The Betas come first (in ``conj.betas`` order, each rate on the logit scale),
    then the Dirichlets (PyMC's centred simplex transform), matching the order in
    which the builders create their free variables.  All Dirichlets share one
    number of categories.
    """
    from bayescm.models import _kernel_conjugate as _kernels

    names = list(conj.betas)
    a = [np.ravel(conj.betas[k][0]) for k in names]
    b = [np.ravel(conj.betas[k][1]) for k in names]
    a = np.concatenate(a) if a else np.zeros(0)
    b = np.concatenate(b) if b else np.zeros(0)
    shapes = [np.shape(conj.betas[k][0]) for k in names]
    dnames = list(conj.dirichlets)
    ks = {np.shape(conj.dirichlets[k])[-1] for k in dnames}
    if len(ks) > 1:
        raise ValueError("conjugate_kernel needs Dirichlets with one number of categories.")
    k = ks.pop() if ks else 0
    d = [np.reshape(conj.dirichlets[n], (-1, k)) for n in dnames]
    nd = sum(x.shape[0] for x in d)
    dvals = np.concatenate(d).ravel() if d else np.zeros(0)
    user_data = np.concatenate([[a.size, nd, k], a, b, dvals]).astype(float)
    shapes += [np.shape(conj.dirichlets[n]) for n in dnames]
    return Kernel(_kernels, user_data, a.size + nd * (k - 1 if k else 0), names + dnames,
                  [tuple(s) for s in shapes])


def encode_confusion(cm: ConfusionMatrix) -> dict[str, list]:
    """A ConfusionMatrix as JSON-able values (for saving a fit)."""
    out: dict[str, Any] = {"counts": cm.counts.tolist(), "classifier": list(cm.classifiers)}
    if cm.slices is not None:  # a sliced matrix: its levels, datetimes as ISO strings
        out["slices"] = {str(c): (v.astype(str).tolist() if v.dtype.kind == "M" else
                                  [x.item() if hasattr(x, "item") else x for x in v])
                         for c, v in ((c, cm.slices[c].to_numpy()) for c in cm.slices)}
        out["datetimes"] = [str(c) for c in cm.slices if cm.slices[c].dtype.kind == "M"]
        if cm.classifier is not None:  # only when named: older records stay identical
            out["sliced_classifier"] = cm.classifier
    return out


def decode_confusion(payload: Mapping[str, list]) -> ConfusionMatrix:
    """Inverse of :func:`encode_confusion`."""
    counts = np.asarray(payload["counts"], dtype=np.int64).reshape(-1, len(CELLS))
    if "slices" in payload:
        slices = pd.DataFrame(dict(payload["slices"]), index=list(payload["classifier"]))
        for c in payload.get("datetimes", ()):
            slices[c] = pd.to_datetime(slices[c])
        return ConfusionMatrix.from_slices(counts, slices,
                                           classifier=payload.get("sliced_classifier"))
    return ConfusionMatrix(*counts.T, classifier=list(payload["classifier"]))


class ConfusionCodec:
    """``encode_data`` / ``decode_data`` of a family whose data is a
    :class:`~bayescm.data.ConfusionMatrix` (listed before ``Family`` in the bases)."""

    def encode_data(self, data: ConfusionMatrix) -> dict:
        return encode_confusion(data)

    def decode_data(self, payload: Any) -> ConfusionMatrix:
        return decode_confusion(payload)
