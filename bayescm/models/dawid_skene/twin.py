r"""The Dawid–Skene family's JAGS twin: data, initial values, monitors and the posterior.

``dawid_skene.jags`` writes the model as Dawid & Skene did, with a discrete class per
item that JAGS samples (Gibbs), every rating a categorical draw from its rater's row:

.. math::

    \pi \sim \mathrm{Dirichlet}(\alpha),\quad
    \theta_{jk\cdot} \sim \mathrm{Dirichlet}(\beta_{jk\cdot}),\quad
    z_i \sim \mathrm{Categorical}(\pi),\quad
    y_n \sim \mathrm{Categorical}(\theta_{j_n z_{i_n} \cdot}),

with gold items' :math:`z_i` observed.  Summing :math:`z_i` out gives bayescm's
likelihood, so the two engines target the same posterior of :math:`\pi` and
:math:`\theta` by independent routes (no collapsing, no marginalisation, another
sampler).  The data, the priors (read from the PyMC model's ``pm.Data``) and the start
(the same EM point as the PyMC chains, items' classes from majority votes) are fed to
JAGS, and the draws come back as ``prevalence`` (dim ``class``) and ``confusion``
(dims ``rater, actual, predicted``).

``dawid_skene_partial.jags`` is the twin of ``pooling="partial"``
(:mod:`~bayescm.models.dawid_skene.hierarchical`): the same discrete classes and
categorical ratings, with every rater's row the softmax of ``zeta + sigma * eta``
against the diagonal; its draws come back with ``confusion_population``,
``confusion_logit_mean`` and ``confusion_logit_scale`` too (:data:`TWIN_PARTIAL`,
chosen by :func:`twin_for`).
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

__all__ = ["TWIN", "TWIN_PARTIAL", "twin_for"]


def jags_data(model: pm.Model, spec: ModelSpec) -> dict[str, Any]:
    rt = spec.data
    i, r, k, c = rt.entries
    data: dict[str, Any] = {
        "I": rt.n_items, "J": rt.n_raters, "K": rt.n_classes, "N": int(c.sum()),
        "ii": np.repeat(i, c) + 1, "jj": np.repeat(r, c) + 1, "y": np.repeat(k, c) + 1,
        "alpha": data_value(model, "prevalence_alpha").astype(float),
    }
    if spec.options.get("pooling") == "partial":
        from bayescm.models.dawid_skene.hierarchical import off_diagonal

        kk = rt.n_classes
        data.update({"mu": data_value(model, "confusion_logit_mu").astype(float),
                     "sd": data_value(model, "confusion_logit_sd").astype(float),
                     "tau": data_value(model, "confusion_scale_sd").astype(float),
                     "col": np.maximum(off_diagonal(kk), 1), "offd": 1 - np.eye(kk, dtype=int)})
    else:
        data["beta"] = data_value(model, "confusion_alpha").astype(float)
    gold = rt.gold_index
    if (gold >= 0).any():
        data["z"] = np.array([str(g + 1) if g >= 0 else "NA" for g in gold], dtype=object)
    return data


def jags_inits(rng: np.random.Generator, spec: ModelSpec, chains: int) -> list[dict]:
    """The EM point of the PyMC chains, jittered; items' classes from majority votes."""
    prev, conf = spec.extra["start"]
    rt = spec.data
    i, _, k, c = rt.entries
    votes = np.zeros((rt.n_items, rt.n_classes))
    np.add.at(votes, (i, k), c)
    out = []
    for _ in range(chains):
        noise = rng.uniform(0.8, 1.25, votes.shape)
        z = np.argmax(votes * noise, axis=1) + 1
        start: dict[str, Any] = {
            "pi": _jitter(rng, prev),
            "z": np.where(rt.gold_index >= 0, "NA", z.astype(str)).astype(object)}
        if spec.options.get("pooling") == "partial":
            from bayescm.models.dawid_skene.hierarchical import partial_start

            zeta, log_sigma, eta = partial_start(_jitter(rng, conf))
            start.update(zeta=zeta, sigma=np.exp(log_sigma), eta=eta)
        else:
            start["theta"] = _jitter(rng, conf)
        out.append(start)
    return out


def _jitter(rng: np.random.Generator, p: np.ndarray) -> np.ndarray:
    q = p * rng.uniform(0.8, 1.25, p.shape)
    return q / q.sum(axis=-1, keepdims=True)


def jags_monitors(spec: ModelSpec) -> list[str]:
    if spec.options.get("pooling") == "partial":
        return ["pi", "theta", "zeta", "sigma"]
    return ["pi", "theta"]


def jags_posterior(raw: Mapping[str, np.ndarray], model: pm.Model, spec: ModelSpec
                   ) -> xr.Dataset:
    rt = spec.data
    k, n_r = rt.n_classes, rt.n_raters
    prev = np.stack([raw[f"pi[{c + 1}]"] for c in range(k)], axis=-1)
    conf = np.stack([np.stack([np.stack([raw[f"theta[{j + 1},{a + 1},{p + 1}]"]
                                         for p in range(k)], -1) for a in range(k)], -2)
                     for j in range(n_r)], axis=-3)
    labels = list(rt.labels)
    out = xr.Dataset(
        {"prevalence": ((*SAMPLE_DIMS, "class"), prev),
         "confusion": ((*SAMPLE_DIMS, "rater", "actual", "predicted"), conf)},
        coords={"class": labels, "rater": list(rt.raters), "actual": labels,
                "predicted": labels})
    if spec.options.get("pooling") == "partial":
        from bayescm.models.dawid_skene.hierarchical import partial_values

        cells = [(a, m) for a in range(k) for m in range(k - 1)]
        zeta, sigma = (np.stack([raw[f"{n}[{a + 1},{m + 1}]"] for a, m in cells], axis=-1)
                       .reshape(*prev.shape[:2], k, k - 1) for n in ("zeta", "sigma"))
        _, pop = partial_values(zeta, sigma, np.zeros((*zeta.shape[:2], 1, k, k - 1)))
        out["confusion_population"] = ((*SAMPLE_DIMS, "actual", "predicted"), pop)
        out["confusion_logit_mean"] = ((*SAMPLE_DIMS, "actual", "error"), zeta)
        out["confusion_logit_scale"] = ((*SAMPLE_DIMS, "actual", "error"), sigma)
        out = out.assign_coords(error=list(range(1, k)))
    return out


TWIN = JagsTwin("dawid_skene/dawid_skene.jags", jags_data, jags_inits, jags_monitors,
                jags_posterior)
TWIN_PARTIAL = JagsTwin("dawid_skene/dawid_skene_partial.jags", jags_data, jags_inits,
                        jags_monitors, jags_posterior)


def twin_for(spec: ModelSpec) -> JagsTwin:
    """The JAGS twin of a model: :data:`TWIN_PARTIAL` for ``pooling="partial"``."""
    return TWIN_PARTIAL if spec.options.get("pooling") == "partial" else TWIN
