"""The Hui–Walter family's JAGS twin: data, initial values, monitors and the posterior.

Feeds ``bayescm/models/hui_walter.jags`` (an independent implementation of the model
in the BUGS language) the counts and priors of a built model, cells and blocks
included, and reads its draws back with bayescm's names and dims.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from bayescm.data.agreement import pattern_matrix
from bayescm.family import ModelSpec
from bayescm.models._spec import data_value
from bayescm.models.hui_walter.probabilities import block_totals
from bayescm.stats import SAMPLE_DIMS

if TYPE_CHECKING:
    import pymc as pm

__all__ = ["jags_data", "jags_inits", "jags_monitors", "jags_posterior"]


def jags_data(model: pm.Model, spec: ModelSpec) -> dict[str, Any]:
    tab = spec.data
    design = tab.design()
    t, p = len(tab.classifiers), len(tab.populations)
    patt = pattern_matrix(t)
    # without dependence one dummy pair (its terms are multiplied by dep = 0)
    pairs = list(spec.extra["pairs"]) or [(0, min(1, t - 1))]
    rest = np.ones((len(pairs), t), dtype=int)
    for q, (i, j) in enumerate(pairs):
        rest[q, [i, j]] = 0
    sgn = np.array([[1 if patt[r, i] == patt[r, j] else -1 for i, j in pairs]
                    for r in range(len(patt))])

    def prior(name: str, part: str) -> np.ndarray:
        return data_value(model, f"{name}_{part}").astype(float)

    counts = data_value(model, "counts_data")
    # one dmulti per (population, block): the block's cells at positions 1..nb[b] of
    # padded arrays (bcell: their column in counts; y: their counts)
    n_blocks = len(design.blocks)
    members = [np.flatnonzero(design.block == b) for b in range(n_blocks)]
    width = max(len(m) for m in members)
    bcell = np.ones((n_blocks, width), dtype=int)
    y = np.zeros((p, n_blocks, width), dtype=np.int64)
    for b, m in enumerate(members):
        bcell[b, :len(m)] = m + 1
        y[:, b, :len(m)] = counts[:, m]
    return {
        "T": t, "P": p, "R": 2**t, "K": len(pairs), "dep": int(bool(spec.extra["pairs"])),
        "C": len(design.cells), "B": n_blocks, "nb": np.array([len(m) for m in members]),
        "bcell": bcell, "y": y, "nblock": block_totals(counts, design),
        "pos": design.pos.astype(int), "neg": design.neg.astype(int), "patt": patt,
        "pair_i": np.array([i + 1 for i, _ in pairs]),
        "pair_j": np.array([j + 1 for _, j in pairs]),
        "rest": rest, "sgn": sgn, "ok": np.ones(t, dtype=int),
        "se_a": prior("sensitivity", "alpha"), "se_b": prior("sensitivity", "beta"),
        "sp_a": prior("specificity", "alpha"), "sp_b": prior("specificity", "beta"),
        "prev_a": prior("prevalence", "alpha"), "prev_b": prior("prevalence", "beta"),
    }


def jags_inits(rng: np.random.Generator, spec: ModelSpec, chains: int) -> list[dict]:
    t, p = len(spec.data.classifiers), len(spec.data.populations)
    return [{"se": rng.uniform(0.7, 0.95, t), "sp": rng.uniform(0.7, 0.95, t),
             "prev": rng.uniform(0.2, 0.8, p)} for _ in range(chains)]


def jags_monitors(spec: ModelSpec) -> list[str]:
    return ["se", "sp", "prev"] + (["cov_se", "cov_sp"] if spec.extra["pairs"] else [])


def jags_posterior(raw: Mapping[str, np.ndarray], model: pm.Model, spec: ModelSpec
                    ) -> xr.Dataset:
    tab = spec.data
    t, p, k = len(tab.classifiers), len(tab.populations), len(spec.extra["pairs"])

    def stack(node: str, size: int) -> np.ndarray:
        # CODA names a node of length one without an index
        names = [node] if size == 1 and node in raw else [f"{node}[{i + 1}]" for i in range(size)]
        return np.stack([raw[n] for n in names], axis=-1)

    post = {
        "sensitivity": ((*SAMPLE_DIMS, "classifier"), stack("se", t)),
        "specificity": ((*SAMPLE_DIMS, "classifier"), stack("sp", t)),
        "prevalence": ((*SAMPLE_DIMS, "population"), stack("prev", p)),
    }
    coords = {"classifier": list(tab.classifiers), "population": list(tab.populations)}
    if k:
        post["cov_se"] = ((*SAMPLE_DIMS, "pair"), stack("cov_se", k))
        post["cov_sp"] = ((*SAMPLE_DIMS, "pair"), stack("cov_sp", k))
        coords["pair"] = list(model.coords["pair"])
    return xr.Dataset(post, coords=coords)
