"""The groups family's JAGS twin: data, initial values, monitors and the posterior.

Feeds ``bayescm/models/groups.jags`` (the model written again in the BUGS language)
the slices' levels, windows, counts and priors, and reads its draws back with
bayescm's names and dims: ``mu``, ``sigma_<block>``, ``tau`` and the rates
``prevalence``, ``tpr``, ``tnr`` as JAGS computed them (``theta`` and the metrics
follow from the rates).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from bayescm.family import ModelSpec
from bayescm.models._spec import theta_from_rates
from bayescm.models.groups.design import RATES, spec_design
from bayescm.stats import SAMPLE_DIMS

if TYPE_CHECKING:
    import pymc as pm

__all__ = ["jags_data", "jags_inits", "jags_monitors", "jags_posterior"]


def jags_data(model: pm.Model, spec: ModelSpec) -> dict[str, Any]:
    d = spec_design(spec)
    s_ = len(d.units)
    blocks = d.blocks
    # no factors: one dummy block of one level, switched off by useb = 0
    idx = (np.stack([b.index for b in blocks], -1) + 1 if blocks
           else np.ones((s_, 1), dtype=np.int64))
    full = np.flatnonzero(d.counts.sum(-1) > 0)
    prior = spec.priors
    tau = prior.get("tau", prior["sigma"])  # unused (usew = 0) without windows
    return {
        "S": s_, "B": max(len(blocks), 1), "L": max([len(b.labels) for b in blocks] or [1]),
        "idx": idx, "useb": int(bool(blocks)),
        "nl": np.array([len(b.labels) for b in blocks] or [1], dtype=np.int64),
        "T": max(len(d.windows), 2), "win": d.window + 1, "usew": int(d.walk),
        "K": full.size, "obs": full + 1, "y": d.counts[full].astype(np.int64),
        "n": d.counts[full].sum(-1).astype(np.int64),
        "mu_m": np.array([p.mu for p in prior["mu"]]),
        "mu_s": np.array([p.sigma for p in prior["mu"]]),
        "sig_s": np.array([p.sigma for p in prior["sigma"]]),
        "tau_s": np.array([p.sigma for p in tau]),
    }


def jags_inits(rng: np.random.Generator, spec: ModelSpec, chains: int) -> list[dict]:
    return [{"mu": rng.uniform(-1, 1, 3)} for _ in range(chains)]


def jags_monitors(spec: ModelSpec) -> list[str]:
    return ["mu", "sigma", "tau", "rate"]


def jags_posterior(raw: Mapping[str, np.ndarray], model: pm.Model, spec: ModelSpec
                   ) -> xr.Dataset:
    d = spec_design(spec)
    s_ = len(d.units)

    def node(name: str, *index: int) -> np.ndarray:
        return raw[f"{name}[{','.join(str(i + 1) for i in index)}]"]

    def per_rate(name: str, *rest: int) -> np.ndarray:
        return np.stack([node(name, r, *rest) for r in range(3)], -1)

    post: dict[str, Any] = {"mu": ((*SAMPLE_DIMS, "rate"), per_rate("mu"))}
    for b, block in enumerate(d.blocks):
        post[f"sigma_{block.name}"] = ((*SAMPLE_DIMS, "rate"), per_rate("sigma", b))
    if d.walk:
        post["tau"] = ((*SAMPLE_DIMS, "rate"), per_rate("tau"))
    for r, name in enumerate(RATES):
        post[name] = ((*SAMPLE_DIMS, d.unit),
                      np.stack([node("rate", r, s) for s in range(s_)], -1))
    ds = xr.Dataset(post, coords={"rate": list(RATES), d.unit: list(d.units)})
    ds["theta"] = theta_from_rates(ds["prevalence"], ds["tpr"], ds["tnr"], (d.unit,))
    return ds
