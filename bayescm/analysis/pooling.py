r"""Confusion probabilities of groups of slices, and of "the rest", per draw.

A sliced fit (dim ``slice``, see :mod:`bayescm.slices`) has, per draw, the
confusion probabilities :math:`\theta_s = (\theta_{tp}, \theta_{fn}, \theta_{fp},
\theta_{tn})_s` of every slice ``s``.  Fairness and monitoring questions are often
about *coarser* groups -- the levels of one factor (``sex``), or the time windows
regardless of site -- or about a slice against all the others.  Both need the
confusion probabilities of a set :math:`G` of slices, which this module defines as
the mixture of its slices weighted by their observed case counts :math:`n_s`:

.. math::

    \theta_G = \frac{\sum_{s \in G} n_s\, \theta_s}{\sum_{s \in G} n_s}.

This is the distribution of the cell of a case drawn at random from the evaluated
cases of :math:`G`, each slice's cell probabilities being its posterior ones: a
metric of :math:`\theta_G` is the metric *of the group as it was evaluated* (its
mix of subgroups), not an unweighted average of the slices' metrics.  For example
the TPR of :math:`\theta_G` is :math:`\sum n_s \theta_{tp,s} / \sum n_s
(\theta_{tp,s} + \theta_{fn,s})`, weighting each slice by its (posterior) number of
positives.  *The rest* of a group is the same mixture over every slice outside it.

Empty slices (no cases) have weight zero: they never move a group, and a group all
of whose slices are empty has no confusion probabilities (NaN); callers flag and
exclude such groups.  The weights are the observed counts, fixed, so every
quantity here is a deterministic function of each draw's :math:`\theta` and works
on any fit whose posterior has ``theta`` on dims (``slice``, ``cell``) -- the
independent per-slice three-Beta fit or a partially pooled hierarchical one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm import idata as idata_mod
from bayescm.data import CELLS
from bayescm.slices import slice_label
from bayescm.stats import SAMPLE_DIMS

__all__ = ["Groups", "SlicedFit", "group_slices", "pool", "rest", "sliced_fit"]

SLICE = "slice"
GROUP = "group"


@dataclass(frozen=True)
class SlicedFit:
    """What the slice analyses read from a fit.

    Attributes
    ----------
    theta
        Posterior confusion probabilities, dims (chain, draw, slice, cell), cells in
        the order ``tp, fn, fp, tn``.
    n
        Observed cases per slice (the pooling weights).
    levels
        Level values per slice (index: slice labels; one column per factor and
        ``window``).
    """

    theta: xr.DataArray
    n: np.ndarray
    levels: pd.DataFrame


def sliced_fit(idata: Any, *, group: str = "posterior") -> SlicedFit:
    """``theta``, case counts and slice levels of a sliced fit, or a ValueError
    saying what is missing."""
    idata = idata_mod.require(idata, "a sliced fit")
    ds = idata_mod.group(idata, group)
    if "theta" not in ds or SLICE not in ds["theta"].dims or "cell" not in ds["theta"].dims:
        raise ValueError(
            f"The {group} has no 'theta' on dims (slice, cell): slice analyses need a fit of "
            "a sliced ConfusionMatrix (ConfusionMatrix.from_predictions(..., groups=..., "
            "time=..., window=...)).")
    if not idata_mod.has_group(idata, "observed_data") or \
            "counts" not in idata_mod.group(idata, "observed_data"):
        raise ValueError("The fit has no observed_data 'counts': the case counts per slice "
                         "weight the pooled groups; fit the model with bcm.fit.")
    counts = idata_mod.group(idata, "observed_data")["counts"]
    theta = ds["theta"].sel(cell=list(CELLS)).transpose(*SAMPLE_DIMS, SLICE, "cell")
    n = counts.sel({SLICE: theta[SLICE].values}).sum("cell").values.astype(float)
    coords = theta[SLICE].coords
    names = [c for c in coords if c != SLICE and coords[c].dims == (SLICE,)]
    levels = pd.DataFrame({c: coords[c].values for c in names},
                          index=pd.Index(theta[SLICE].values, name=SLICE))
    return SlicedFit(theta, n, levels)


@dataclass(frozen=True)
class Groups:
    """A partition of the slices into groups.

    Attributes
    ----------
    member
        ``(n_slices, n_groups)`` 0/1 matrix: slice ``s`` belongs to group ``g``.
    frame
        Per group (index: group labels): its level values, ``n`` (cases) and
        ``empty`` (no cases: excluded from comparisons).
    """

    member: np.ndarray
    frame: pd.DataFrame

    @property
    def labels(self) -> list[str]:
        return self.frame.index.tolist()


def group_slices(levels: pd.DataFrame, n: np.ndarray, by: Sequence[str] | None) -> Groups:
    """Group the slices by the levels ``by`` (None: every slice its own group).

    Groups are ordered by their level values (windows chronologically).

    >>> lv = pd.DataFrame({"sex": ["F", "F", "M"], "age": ["<40", "40+", "<40"]},
    ...                   index=["a", "b", "c"])
    >>> g = group_slices(lv, np.array([3.0, 0.0, 5.0]), ["sex"])
    >>> g.labels, g.frame["n"].tolist(), g.member.tolist()
    (['sex=F', 'sex=M'], [3.0, 5.0], [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    """
    if by is None:
        frame = levels.copy()
        frame["n"] = n
        frame["empty"] = n == 0
        return Groups(np.eye(len(levels)), frame)
    missing = [b for b in by if b not in levels.columns]
    if missing:
        raise ValueError(f"by={list(by)}: {missing} are not levels of the slices; the slices "
                         f"have levels {list(levels.columns)}.")
    codes = levels.groupby(list(by), sort=True, observed=True).ngroup().to_numpy()
    member = np.zeros((len(levels), codes.max() + 1))
    member[np.arange(len(levels)), codes] = 1.0
    first = levels[list(by)].groupby(codes).first()
    labels = [slice_label(row) for row in first.to_dict("records")]
    frame = first.set_axis(pd.Index(labels, name=GROUP))
    frame["n"] = n @ member
    frame["empty"] = frame["n"].to_numpy() == 0
    return Groups(member, frame)


def _mix(theta: xr.DataArray, weights: np.ndarray, labels: Sequence[str]) -> xr.DataArray:
    """Per draw ``theta_g = sum_s w[s, g] theta_s / sum_s w[s, g]`` (NaN where the
    weights sum to zero), dims (chain, draw, group, cell)."""
    total = weights.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where(total > 0, weights / np.where(total > 0, total, 1.0), np.nan)
    used = (weights > 0).any(axis=1)
    # slices of weight zero everywhere (empty slices) must not leak NaN into a group
    # (0 * NaN is NaN): drop them before mixing
    values = np.einsum("cdsk,sg->cdgk", theta.values[:, :, used], w[used])
    return xr.DataArray(values, dims=(*SAMPLE_DIMS, GROUP, "cell"),
                        coords={d: theta[d].values for d in (*SAMPLE_DIMS, "cell")}
                        | {GROUP: list(labels)})


def pool(fit: SlicedFit, groups: Groups) -> xr.DataArray:
    r"""Per draw, each group's :math:`\theta_G` (case-count-weighted mixture of its
    slices); dims (chain, draw, group, cell).  A group of one non-empty slice gets
    that slice's :math:`\theta` exactly (weights 1 and 0: adding zeros is exact)."""
    return _mix(fit.theta, fit.n[:, None] * groups.member, groups.labels)


def rest(fit: SlicedFit, groups: Groups) -> xr.DataArray:
    r"""Per draw, the :math:`\theta` of every slice *outside* each group (the rest),
    weighted by case counts; dims (chain, draw, group, cell)."""
    return _mix(fit.theta, fit.n[:, None] * (1.0 - groups.member), groups.labels)
