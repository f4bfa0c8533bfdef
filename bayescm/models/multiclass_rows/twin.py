r"""The JAGS twins of the multiclass families: what the runner feeds and reads back.

``multiclass_rows.jags`` writes the prevalence-and-rows model in its factorised form,

.. math::

    \pi \sim \mathrm{Dirichlet}(\alpha),\quad r \sim \mathrm{Multinomial}(N, \pi),\quad
    \rho_a \sim \mathrm{Dirichlet}(\beta_a),\quad
    C_{a\cdot} \sim \mathrm{Multinomial}(r_a, \rho_a),

with row sums :math:`r` (equal to bayescm's Multinomial(N, π ρ) over the K² cells:
the multinomial coefficient splits as :math:`N!/\prod r_a! \cdot \prod_a r_a!/\prod_p
C_{ap}!`); a fixed prevalence is passed as observed data, a constant factor.
``multiclass_cells.jags`` is :math:`\theta \sim \mathrm{Dirichlet}(\alpha)`,
:math:`C \sim \mathrm{Multinomial}(N, \theta)` over the K² cells, actual-major.

Both read the counts and every prior concentration from the PyMC model's ``pm.Data``,
so the two engines see the same data and priors, and return the PyMC fit's names and
dims (``prevalence``, ``rows``, ``theta`` on ``classifier, actual, predicted``).

Examples
--------
>>> import bayescm as bcm
>>> mc = bcm.MulticlassConfusionMatrix([[5, 1, 0], [2, 7, 1], [0, 3, 9]],
...                                    labels=["cat", "dog", "bird"])
>>> m = bcm.models.multiclass_rows(mc)
>>> twin = bcm.models.get_family("multiclass_rows").jags
>>> data = twin.data(m, bcm.models.spec_of(m))
>>> twin.script, data["sizes"].tolist(), data["rows_alpha"].shape
('multiclass_rows/multiclass_rows.jags', [[6, 10, 12]], (1, 3, 3))
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from bayescm.family import JagsTwin, ModelSpec
from bayescm.models._spec import data_value
from bayescm.stats import SAMPLE_DIMS

if TYPE_CHECKING:
    import pymc as pm

__all__ = ["CELLS_TWIN", "ROWS_TWIN"]

DIMS = ("classifier", "actual", "predicted")


def _proper(name: str, alpha: np.ndarray) -> np.ndarray:
    """The concentrations, or an error: JAGS's ddirch reads a zero as a structural zero
    (that component fixed at 0), not as the improper Haldane-type prior bayescm means."""
    if np.any(alpha <= 0):
        raise ValueError(f"The JAGS twin needs a proper {name!r} prior (every Dirichlet "
                         "concentration > 0); JAGS would fix a component with concentration "
                         "0 at 0. Use bcm.fit(model, sampler='exact') for this prior.")
    return alpha.astype(float)


def _node(raw: Mapping[str, np.ndarray], name: str, shape: tuple[int, ...]) -> np.ndarray:
    """``name[i, j, ...]`` of CODA output as one array ``(chains, draws, *shape)``."""
    out = np.stack([raw[f"{name}[{','.join(str(i + 1) for i in idx)}]"]
                    for idx in np.ndindex(*shape)], axis=-1)
    return out.reshape(*out.shape[:2], *shape)


def _dataset(values: Mapping[str, np.ndarray], spec: ModelSpec) -> xr.Dataset:
    dims = {"prevalence": DIMS[:2]}
    return xr.Dataset({k: ((*SAMPLE_DIMS, *dims.get(k, DIMS)), v) for k, v in values.items()},
                      coords=spec.data.coords)


def _no_inits(rng: np.random.Generator, spec: ModelSpec, chains: int) -> list[dict]:
    # every node is a Dirichlet: JAGS draws each chain's start from the prior
    return [{} for _ in range(chains)]


# -- multiclass_rows -----------------------------------------------------------------
def _fixed(spec: ModelSpec) -> bool:
    return spec.options.get("prevalence") is not None


def _rows_data(model: pm.Model, spec: ModelSpec) -> dict[str, Any]:
    counts = data_value(model, "counts_data").astype(np.int64)
    c, k, _ = counts.shape
    data = {"C": c, "K": k, "counts": counts, "sizes": counts.sum(axis=2),
            "N": counts.sum(axis=(1, 2)),
            "rows_alpha": _proper("rows", data_value(model, "rows_alpha"))}
    if _fixed(spec):
        prev = data_value(model, "prevalence").astype(float)
        # observed, the Dirichlet line is a constant factor (any proper alpha will do);
        # renormalised so that it is on the simplex to the last bit, as a Dirichlet value
        data["prev"] = prev / prev.sum(axis=-1, keepdims=True)
        data["prev_alpha"] = np.ones((c, k))
    else:
        data["prev_alpha"] = _proper("prevalence", data_value(model, "prevalence_alpha"))
    return data


def _rows_monitors(spec: ModelSpec) -> list[str]:
    return ["rows"] if _fixed(spec) else ["prev", "rows"]


def _rows_posterior(raw: Mapping[str, np.ndarray], model: pm.Model, spec: ModelSpec
                    ) -> xr.Dataset:
    c, k = len(spec.data), spec.data.n_classes
    rows = _node(raw, "rows", (c, k, k))
    if _fixed(spec):
        prev = np.broadcast_to(data_value(model, "prevalence").astype(float),
                               (*rows.shape[:2], c, k)).copy()
    else:
        prev = _node(raw, "prev", (c, k))
    return _dataset({"prevalence": prev, "rows": rows, "theta": prev[..., None] * rows}, spec)


ROWS_TWIN = JagsTwin("multiclass_rows/multiclass_rows.jags", _rows_data, _no_inits, _rows_monitors,
                     _rows_posterior)


# -- multiclass_cells ----------------------------------------------------------------
def _cells_data(model: pm.Model, spec: ModelSpec) -> dict[str, Any]:
    counts = data_value(model, "counts_data").astype(np.int64)
    c, k, _ = counts.shape
    flat = counts.reshape(c, k * k)  # actual-major, as the model's dim pair
    return {"C": c, "M": k * k, "counts": flat, "N": flat.sum(axis=1),
            "theta_alpha": _proper("theta", data_value(model, "theta_alpha"))}


def _cells_posterior(raw: Mapping[str, np.ndarray], model: pm.Model, spec: ModelSpec
                     ) -> xr.Dataset:
    c, k = len(spec.data), spec.data.n_classes
    theta = _node(raw, "theta", (c, k * k))
    return _dataset({"theta": theta.reshape(*theta.shape[:2], c, k, k)}, spec)


CELLS_TWIN = JagsTwin("multiclass_cells/multiclass_cells.jags", _cells_data, _no_inits,
                      lambda spec: ["theta"], _cells_posterior)
