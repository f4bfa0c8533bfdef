r"""K-class metrics at a deployment class-prevalence vector.

What a K-class classifier does with each actual class is the row of predicted-class
probabilities :math:`\rho_k = \theta_{k\cdot} / \sum_j \theta_{kj}` (the recall of
class *k* is :math:`\rho_{kk}`); how often each class occurs belongs to the
population.  Keeping the posterior draws of the rows and replacing the class
prevalence by the deployment vector :math:`\pi'` gives

.. math::

    \theta'_{kj} = \pi'_k\, \rho_{kj},

and every multiclass metric of :math:`\theta'` is its posterior in the deployment
population: per-class recall is unchanged by construction, precision, accuracy
(:math:`\sum_k \pi'_k \rho_{kk}`), kappa, F-scores and the averages move with
:math:`\pi'`.  The rows come from ``theta`` itself, so this holds for every
multiclass family (``multiclass_rows`` and ``multiclass_cells`` alike).

:math:`\pi'` may be fixed (K shares summing to 1, or a mapping label -> share) or
uncertain: a Dirichlet (one draw per posterior draw) or an array of draws.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from bayescm import idata as idata_mod
from bayescm.data.multiclass import MulticlassConfusionMatrix, align_predicted
from bayescm.inference.posterior import multiclass_theta_sampler
from bayescm.metrics import registry_for
from bayescm.priors import Dirichlet, PriorError, coerce
from bayescm.stats import SAMPLE_DIMS, draw_conjugate

if TYPE_CHECKING:
    import arviz as az

__all__ = ["class_shares", "deployment_draws", "multiclass_at_prevalence", "rows_of"]

DRAWS = 4000
"""Posterior draws (one chain) for a MulticlassConfusionMatrix, as for a binary one."""

_SUM_TOL = 1e-6  # shares typed as decimals (0.1 + 0.2 + 0.7) miss 1 by rounding only


def class_shares(value: Any, labels: Sequence[Hashable], *, what: str = "prevalence"
                 ) -> np.ndarray:
    """K positive shares summing to 1, in the order of ``labels``.

    ``value`` is a sequence of K numbers (class order) or a mapping label -> share
    holding every label once.  Shares are renormalised to sum exactly to 1.

    Examples
    --------
    >>> class_shares({"b": 0.25, "a": 0.75}, ["a", "b"]).tolist()
    [0.75, 0.25]
    """
    k = len(labels)
    if isinstance(value, Mapping):
        value = _by_label(value, labels, what)
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{what} must be {k} numbers (one per class {list(labels)}) or a "
                         f"mapping label -> share, got {value!r}.") from err
    if arr.shape != (k,):
        raise ValueError(f"{what} must hold {k} shares, one per class {list(labels)}, got "
                         f"shape {arr.shape}.")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"Every class share in {what} must be a positive number, got "
                         f"{arr.tolist()}; a class that never occurs can get a tiny share "
                         "such as 1e-6.")
    if abs(arr.sum() - 1) > _SUM_TOL:
        raise ValueError(f"The shares in {what} must sum to 1, got {arr.tolist()} (sum "
                         f"{arr.sum():.6g}); for an uncertain prevalence with these "
                         f"concentrations pass bcm.priors.Dirichlet({tuple(arr.tolist())}).")
    return arr / arr.sum()


def _by_label(value: Mapping, labels: Sequence[Hashable], what: str) -> list[float]:
    # labels may come back from coords as strings: match by value, else by text
    keys = {str(key): key for key in value}
    if len(keys) != len(value):
        raise ValueError(f"{what} has keys that print alike: {list(value)}.")
    out, used = [], set()
    for label in labels:
        key = label if label in value else keys.get(str(label))
        if key is None:
            raise ValueError(f"{what} has no share for class {label!r}; give one for each "
                             f"of {list(labels)}.")
        used.add(str(key))
        out.append(value[key])
    unknown = [key for key in value if str(key) not in used]
    if unknown:
        raise ValueError(f"{what} names classes {unknown} that are not among the classes "
                         f"{list(labels)}.")
    return out


def deployment_draws(prevalence: Any, labels: Sequence[Hashable], shape: tuple[int, ...],
                     rng: np.random.Generator) -> tuple[np.ndarray, str]:
    """Draws ``shape + (K,)`` of the deployment prevalence and a description of it.

    Fixed shares are repeated; a Dirichlet (``bcm.priors.Dirichlet``, its string form,
    a pymc_extras ``Prior("Dirichlet", a=...)`` or a frozen
    ``scipy.stats.dirichlet``) gives one draw per posterior draw; an array of shape
    ``shape + (K,)`` is taken as draws.
    """
    k = len(labels)
    if isinstance(prevalence, str | Dirichlet) or hasattr(prevalence, "distribution"):
        spec = coerce(prevalence, kind="dirichlet", name="prevalence")
        if len(spec.alpha) != k or not spec.proper:
            raise PriorError(f"The deployment prevalence {spec!r} must be a proper Dirichlet "
                             f"of {k} concentrations > 0 (classes {list(labels)}).")
        draws = draw_conjugate(rng, shape, dirichlets={"p": spec.alpha})["p"]
        return draws, repr(spec)
    if hasattr(prevalence, "rvs"):  # a frozen scipy distribution
        flat = np.asarray(prevalence.rvs(size=int(np.prod(shape)), random_state=rng), float)
        draws = flat.reshape(*shape, -1)
        desc = f"draws of {type(prevalence).__name__}"
    elif isinstance(prevalence, Mapping) or np.ndim(prevalence) <= 1:
        p = class_shares(prevalence, labels)
        desc = f"fixed {dict(zip(labels, p.tolist(), strict=True))}"
        return np.broadcast_to(p, (*shape, k)).copy(), desc
    else:
        draws = np.asarray(prevalence, dtype=float)
        desc = f"array of draws {draws.shape}"
    if draws.shape != (*shape, k):
        raise ValueError(f"Prevalence draws have shape {draws.shape}; give one vector of {k} "
                         f"shares per posterior draw {(*shape, k)}, K shares, or a Dirichlet.")
    if not (np.all(np.isfinite(draws)) and np.all(draws > 0)
            and np.allclose(draws.sum(axis=-1), 1, atol=_SUM_TOL)):
        raise ValueError("Every prevalence draw must hold positive shares summing to 1.")
    return draws, desc


def rows_of(data: Any, rng: np.random.Generator) -> xr.DataArray:
    r"""Draws of the rows :math:`\rho_{kj} = \theta_{kj} / \sum_j \theta_{kj}`.

    From the ``theta`` of a multiclass fit (any family), or for a
    MulticlassConfusionMatrix from the flat-prior rows posterior
    :math:`\rho_k \sim \mathrm{Dirichlet}(1 + C_{k\cdot})` (``DRAWS`` draws, one
    chain).  Dims ``chain, draw, <units>, actual, predicted``.
    """
    if isinstance(data, MulticlassConfusionMatrix):
        theta = multiclass_theta_sampler(data)(rng, DRAWS)  # the family's flat-prior posterior
    else:
        theta = idata_mod.group(idata_mod.require(data), "posterior")["theta"]
    theta = align_predicted(theta).transpose(*SAMPLE_DIMS, ..., "actual", "predicted")
    return theta / theta.sum("predicted")


def multiclass_at_prevalence(
    data: az.InferenceData | MulticlassConfusionMatrix,
    prevalence: Any,
    *,
    metrics: str | Sequence[str] | None = None,
    random_seed: int | None = None,
) -> az.InferenceData:
    """K-class metrics at a deployment class prevalence (see the module docstring).

    :func:`bayescm.analysis.at_prevalence` calls this for K-class data; the
    arguments are the same.
    """
    rng = np.random.default_rng(random_seed)
    rows = rows_of(data, rng)
    labels = rows["actual"].values.tolist() if "actual" in rows.coords \
        else list(range(rows.sizes["actual"]))
    shape = tuple(rows.sizes[d] for d in SAMPLE_DIMS)
    pi, desc = deployment_draws(prevalence, labels, shape, rng)
    pi_da = xr.DataArray(pi, dims=(*SAMPLE_DIMS, "actual"),
                         coords={"actual": rows["actual"]} if "actual" in rows.coords else {})
    theta = (pi_da * rows).transpose(*rows.dims)
    reg = registry_for(theta)
    # the per-class metric "prevalence" is the deployment vector, kept on dim actual
    keys = [m.key for m in reg.resolve(metrics) if m.key != "prevalence"]
    ds = reg.compute(theta, keys)
    ds["prevalence"] = pi_da.broadcast_like(rows.isel(predicted=0, drop=True)) \
        .transpose(*rows.dims[:-1])
    ds["rows"], ds["theta"] = rows, theta
    return idata_mod.make({"posterior": ds}, {
        "deployment_prevalence": desc,
        "meaning": ("metrics of the same classifiers (same posterior of each actual class's "
                    "predicted-class probabilities) in a population with the deployment "
                    "class prevalence"),
    })
