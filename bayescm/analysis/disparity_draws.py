r"""The per-draw disparity measures, in bounded memory (the engine of :func:`disparity`).

Per draw the measures need, for every group :math:`g`, its pooled :math:`\theta_g`
and (``reference="rest"``) the rest :math:`(T - S_g)/(N - N_g)` with
:math:`S_g = \sum_{s\in g} n_s\theta_s` and the total :math:`T = \sum_s n_s\theta_s`
(:mod:`bayescm.analysis.pooling`): the rest is the total minus the group, never a
sum per group of the other slices.  From the metric values :math:`m_g` every measure
is a per-draw minimum and maximum over the groups (the gaps) or a difference.

So the work splits two ways (:mod:`bayescm.analysis.slice_blocks`):

* by draws, for a NumPy posterior: each chunk of draws gives its rows of every
  output, the same arithmetic as on all draws at once (so the same numbers);
* by slices, for a Dask-backed one, block by block where the blocks live: per block
  its slices' values and versus-the-rest (given :math:`T`, a first pass), and per
  draw its minimum and maximum of each metric, which combine exactly across blocks.
  With ``by=`` the groups' sums :math:`S_g` are reduced over the blocks first
  (:func:`~bayescm.analysis.slice_blocks.lazy_group_sums`) and the rest runs as for a
  NumPy posterior.

Outputs are laid out group-major (``(group, chain, draw)`` in memory, dims (chain,
draw, group) outside), so each group's draws are contiguous for its summary.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from bayescm import metrics as registry
from bayescm.analysis.pooling import (
    GROUP,
    Groups,
    SlicedFit,
    group_sums,
    is_identity,
    rest_theta,
)
from bayescm.analysis.slice_blocks import (
    blocks_of,
    compute_blocks,
    on_dask,
    over_draws,
    pooled_chunks,
)
from bayescm.data.confusion import CELLS
from bayescm.scheduling import is_lazy

__all__ = ["MEASURES", "Plan", "measures"]

#: The overall measures, in the order of :meth:`Disparity.to_frame`.
MEASURES = ("gap", "tpr_gap", "fpr_gap", "equalized_odds", "demographic_parity")
#: The metrics whose largest gap is a measure (first: the metric asked for).
SPREAD = ("tpr", "fpr", "bias")


@dataclass(frozen=True)
class Plan:
    """What is computed: ``key``'s disparity across ``groups`` of slices weighted by
    ``n``, each group against ``reference`` (``"rest"``, ``"best"`` or a label)."""

    key: str
    higher: bool
    groups: Groups
    n: np.ndarray
    reference: str

    @property
    def keys(self) -> list[str]:
        return list(dict.fromkeys([self.key, *SPREAD]))

    @property
    def n_g(self) -> np.ndarray:
        return self.groups.frame["n"].to_numpy(dtype=float)


@dataclass(frozen=True)
class Outputs:
    """``overall`` (measure, chain, draw); ``values`` and ``versus`` (group, chain, draw)."""

    overall: np.ndarray
    values: np.ndarray
    versus: np.ndarray


def measures(fit: SlicedFit, plan: Plan, *, chunk: int | None, client: object) -> Outputs:
    """Every per-draw measure of ``plan`` on ``fit``: in draw chunks here for a NumPy
    posterior without a client, else block by block on Dask (``client`` None: Dask's
    active scheduler)."""
    chains, draws = fit.theta.shape[:2]
    g = len(plan.groups.frame)
    values = np.empty((g, chains, draws))
    versus = np.empty((g, chains, draws))
    # per metric in SPREAD order (the asked one first), min and max over the groups
    lo = np.full((1 + len(SPREAD), chains, draws), np.nan)
    hi = np.full_like(lo, np.nan)
    fit = on_dask(fit, client)
    if is_lazy(fit.theta) and is_identity(plan.groups):
        _by_slice_blocks(fit, plan, client, values, versus, lo, hi)
    else:
        for ch, dr, pooled, sums in pooled_chunks(fit, plan.groups, chunk=chunk, client=client,
                                                  sums=plan.reference == "rest"):
            got = _chunk(pooled, sums, None, plan)
            values[:, ch, dr] = got[0].T
            if got[1] is not None:
                versus[:, ch, dr] = got[1].T
            lo[:, ch, dr], hi[:, ch, dr] = got[2], got[3]
    if plan.reference != "rest":
        if plan.reference == "best":
            ref = hi[0] if plan.higher else lo[0]
        else:
            ref = values[plan.groups.labels.index(plan.reference)]
        np.subtract(values, ref, out=versus)
    tpr_gap, fpr_gap = hi[1] - lo[1], hi[2] - lo[2]
    overall = np.stack([hi[0] - lo[0], tpr_gap, fpr_gap, np.maximum(tpr_gap, fpr_gap),
                        hi[3] - lo[3]])
    return Outputs(overall, values, versus)


def _chunk(pooled: np.ndarray, sums: np.ndarray | None, total: np.ndarray | None,
           plan: Plan, n_g: np.ndarray | None = None
           ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray]:
    """Of some draws (and groups): the metric per group, versus the rest (if asked and
    ``sums`` given) and per draw the min and max over the groups of each metric."""
    ms = _metrics(pooled, plan.keys)
    versus = None
    if plan.reference == "rest" and sums is not None:
        n_g = plan.n_g if n_g is None else n_g
        other = rest_theta(sums, n_g, total=total, n_all=float(plan.n_g.sum()))
        versus = ms[plan.key] - _metrics(other, [plan.key])[plan.key]
    order = [plan.key, *SPREAD]
    with warnings.catch_warnings():  # all-NaN rows (only empty groups) stay NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        lo = np.stack([np.nanmin(ms[k], axis=-1) for k in order])
        hi = np.stack([np.nanmax(ms[k], axis=-1) for k in order])
    return ms[plan.key], versus, lo, hi


def _metrics(cells: np.ndarray, keys: list[str]) -> dict[str, np.ndarray]:
    """The registry's metrics of cells (..., group, cell), elementwise per draw."""
    dims = (*(f"_{i}" for i in range(cells.ndim - 2)), GROUP, "cell")
    ds = registry.compute(xr.DataArray(cells, dims=dims, coords={"cell": list(CELLS)}), keys)
    return {k: ds[k].values for k in keys}


def _by_slice_blocks(fit: SlicedFit, plan: Plan, client: object, values: np.ndarray,
                     versus: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
    """Every slice its own group, on a Dask posterior: block by block of slices."""
    blocks = blocks_of(fit.theta.data)
    total = None
    if plan.reference == "rest":  # first pass: T per draw, blocks added in order
        total = np.zeros((*fit.theta.shape[:2], 4))
        args = [(blk, fit.n[where[2]]) for blk, where in blocks]
        parts = dict(compute_blocks(_block_total, args, client))
        for i, (_, where) in enumerate(blocks):
            total[where[:2]] += parts.pop(i)
    args = [(blk, fit.n[where[2]], None if total is None else total[where[:2]], plan)
            for blk, where in blocks]
    for i, (value, other, low, high) in compute_blocks(_block_measures, args, client):
        ch, dr, sl = blocks[i][1]
        values[sl, ch, dr] = value.transpose(2, 0, 1)
        if other is not None:
            versus[sl, ch, dr] = other.transpose(2, 0, 1)
        # fmin/fmax: NaN (no value yet, or a block of empty slices only) loses
        np.fmin(lo[:, ch, dr], low.transpose(2, 0, 1), out=lo[:, ch, dr])
        np.fmax(hi[:, ch, dr], high.transpose(2, 0, 1), out=hi[:, ch, dr])


def _block_total(block: np.ndarray, n: np.ndarray) -> np.ndarray:
    r""":math:`\sum_s n_s\theta_s` over a block's slices, per draw."""
    return over_draws(_total, block, fixed=(n,))[0]


def _total(theta: np.ndarray, n: np.ndarray) -> tuple[np.ndarray]:
    return (group_sums(theta, n, Groups(np.arange(len(n)), _frame(n))).sum(axis=-2),)


def _block_measures(block: np.ndarray, n: np.ndarray, total: np.ndarray | None, plan: Plan
                    ) -> tuple[np.ndarray | None, ...]:
    """:func:`_chunk` of a block of slices (each its own group), per chunk of draws:
    values, versus, min and max with the draws first."""
    return over_draws(_slice_measures, block, total, fixed=(n, plan))


def _slice_measures(theta: np.ndarray, total: np.ndarray | None, n: np.ndarray, plan: Plan
                    ) -> tuple[np.ndarray | None, ...]:
    full = n > 0
    pooled = np.where(full[:, None], theta, np.nan)
    sums = None
    if total is not None:
        sums = group_sums(theta, n, Groups(np.arange(len(n)), _frame(n)))
    value, versus, lo, hi = _chunk(pooled, sums, total, plan, n_g=n)
    return value, versus, lo.T, hi.T


def _frame(n: np.ndarray) -> pd.DataFrame:
    """The groups of a block of slices, each its own (what :func:`group_sums` reads)."""
    return pd.DataFrame({"n": n, "empty": n == 0})
