r"""What ``bcm.posterior_predictive_check`` compares for a Dawid–Skene fit: pairwise agreement.

Each rater's label frequencies are matched by its own confusion rows almost whatever
the data, so a check of them has no power.  What the model assumes and can get wrong
is conditional independence: given the class, two raters agree only as often as their
rows say.  For every pair of raters :math:`(r, s)` the table is the number of pairs of
their ratings of one item that agree, :math:`A_{rs} = \sum_i \sum_l n_{irl} n_{isl}`,
and that disagree, :math:`N_{rs} - A_{rs}` with :math:`N_{rs} = \sum_i n_{ir} n_{is}`.
At a posterior draw their expected numbers are

.. math::

    E[A_{rs}] = \sum_i n_{ir} n_{is} \sum_c P(z_i = c)\,\sum_l \theta_{rcl}\theta_{scl},

with :math:`P(z_i = c) = \pi_c`, or 1 for a gold item's class (the replicated tables
draw the classes the same way).  Raters who copy each other, or share a bias the
classes do not explain, agree more often than that: small p-values.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import xarray as xr

from bayescm.models.dawid_skene.likelihood import item_design
from bayescm.stats import SAMPLE_DIMS

__all__ = ["agreement_tables"]


def _pairs(n_raters: int) -> tuple[np.ndarray, np.ndarray]:
    first, second = zip(*itertools.combinations(range(n_raters), 2), strict=True)
    return np.array(first), np.array(second)


def agreement_tables(post: xr.Dataset, observed: xr.DataArray, replicated: xr.DataArray,
                     ratings: Any) -> tuple[xr.DataArray, xr.DataArray, xr.DataArray]:
    """Observed ``(pair, cell)``, replicated and expected ``(chain, draw, pair, cell)``
    agreement tables (cells ``agree``, ``disagree``) of every pair of raters."""
    r1, r2 = _pairs(ratings.n_raters)
    raters = [str(r) for r in ratings.raters]
    names = [f"{raters[a]} ~ {raters[b]}" for a, b in zip(r1, r2, strict=True)]
    design = item_design(ratings).astype(float)  # (I, R)
    both = design[:, r1] * design[:, r2]  # (I, pairs): pairs of ratings of each item

    def table(counts: np.ndarray) -> np.ndarray:  # (..., I, R, K) -> (..., pairs, 2)
        agree = np.einsum("...ipl,...ipl->...p", counts[..., r1, :], counts[..., r2, :])
        return np.stack([agree, both.sum(axis=0) - agree], axis=-1)

    obs = observed.transpose("item", "rater", "rating").values.astype(float)
    rep = replicated.transpose(*SAMPLE_DIMS, "item", "rater", "rating").values.astype(float)
    prev = post["prevalence"].transpose(*SAMPLE_DIMS, "class").values
    conf = post["confusion"].transpose(*SAMPLE_DIMS, "rater", "actual", "predicted").values
    match = np.einsum("...pcl,...pcl->...pc", conf[..., r1, :, :], conf[..., r2, :, :])
    gold = ratings.gold_index
    weight = np.zeros((len(r1), prev.shape[-1]))  # gold items: pairs per (pair, class)
    for c in range(prev.shape[-1]):
        weight[:, c] = both[gold == c].sum(axis=0)
    free = both[gold < 0].sum(axis=0)  # (pairs,)
    agree = (free * np.einsum("...c,...pc->...p", prev, match)
             + np.einsum("pc,...pc->...p", weight, match))
    expected = np.stack([agree, both.sum(axis=0) - agree], axis=-1)
    coords = {"pair": names, "cell": ["agree", "disagree"]}
    dims = (*SAMPLE_DIMS, "pair", "cell")
    return (xr.DataArray(table(obs), dims=("pair", "cell"), coords=coords),
            xr.DataArray(table(rep), dims=dims, coords=coords),
            xr.DataArray(expected, dims=dims, coords=coords))
