r"""Confusion probabilities of groups of slices, and of "the rest", per draw.

A sliced fit (dim ``slice``, see :mod:`bayescm.data.slices`) has, per draw, the
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
from bayescm.data.confusion import CELLS
from bayescm.data.slices import slice_label
from bayescm.stats import SAMPLE_DIMS

__all__ = ["Groups", "SlicedFit", "as_levels", "divide", "group_slices", "group_sums",
           "is_identity", "pooled_theta", "rest_theta", "sliced_fit"]

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
    """``theta``, case counts and slice levels of a sliced fit (an InferenceData, or the
    DataTree of :func:`bayescm.exact_posterior`, possibly on Dask), or a ValueError
    saying what is missing."""
    if not isinstance(idata, xr.DataTree):  # exact_posterior's result is a DataTree
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
    theta = ds["theta"]
    if theta["cell"].values.tolist() != list(CELLS):  # a list selection copies: only if needed
        theta = theta.sel(cell=list(CELLS))
    theta = theta.transpose(*SAMPLE_DIMS, SLICE, "cell")  # a view (lazy on Dask)
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
    codes
        Per slice, the position of its group.
    frame
        Per group (index: group labels): its level values, ``n`` (cases) and
        ``empty`` (no cases: excluded from comparisons).
    """

    codes: np.ndarray
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
    >>> g.labels, g.frame["n"].tolist(), g.codes.tolist()
    (['sex=F', 'sex=M'], [3.0, 5.0], [0, 0, 1])
    """
    if by is None:
        frame = levels.copy()
        frame["n"] = n
        frame["empty"] = n == 0
        return Groups(np.arange(len(levels)), frame)
    missing = [b for b in by if b not in levels.columns]
    if missing:
        raise ValueError(f"by={list(by)}: {missing} are not levels of the slices; the slices "
                         f"have levels {list(levels.columns)}.")
    codes = levels.groupby(list(by), sort=True, observed=True).ngroup().to_numpy()
    first = levels[list(by)].groupby(codes).first()
    labels = [slice_label(row) for row in first.to_dict("records")]
    frame = first.set_axis(pd.Index(labels, name=GROUP))
    frame["n"] = np.bincount(codes, weights=n, minlength=len(frame))
    frame["empty"] = frame["n"].to_numpy() == 0
    return Groups(codes, frame)


def as_levels(by: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """``by=`` of the analyses as a tuple of level names (None stays None)."""
    if by is None:
        return None
    return (by,) if isinstance(by, str) else tuple(by)


def group_sums(theta: np.ndarray, n: np.ndarray, groups: Groups) -> np.ndarray:
    """Per draw and group :math:`\\sum_{s \\in g} n_s \\theta_s`: ``theta`` of shape
    (..., slice, cell) gives (..., group, cell).

    Slices are sorted by group and summed with ``np.add.reduceat`` (linear in the number
    of slices: 10^4 slices need no 10^4 x 10^4 weight matrix); when every slice is its
    own group the sum is the product itself (no sort, no copy of ``theta``).  Empty
    slices are left out (their weight is zero; 0 * NaN would be NaN).

    >>> g = group_slices(pd.DataFrame({"f": ["a", "b", "a"]}), np.ones(3), ["f"])
    >>> group_sums(np.arange(12.0).reshape(3, 4), np.array([1.0, 2.0, 0.0]), g).tolist()
    [[0.0, 1.0, 2.0, 3.0], [8.0, 10.0, 12.0, 14.0]]
    """
    full = n > 0
    if is_identity(groups):
        return np.where(full[:, None], theta * n[:, None], 0.0)
    keep = np.flatnonzero(full)
    order = keep[np.argsort(groups.codes[keep], kind="stable")]
    if np.array_equal(order, np.arange(len(n))):  # slices already in group order
        weighted = theta * n[:, None]
    else:  # one copy, weighted in place
        weighted = theta[..., order, :]
        weighted *= n[order, None]
    codes = groups.codes[order]
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    out = np.zeros((*theta.shape[:-2], len(groups.frame), theta.shape[-1]))
    out[..., codes[starts], :] = np.add.reduceat(weighted, starts, axis=-2)
    return out


def is_identity(groups: Groups) -> bool:
    """Every slice its own group, in order (``by=None``)."""
    return len(groups.codes) == len(groups.frame) and \
        np.array_equal(groups.codes, np.arange(len(groups.codes)))


def divide(num: np.ndarray, total: np.ndarray) -> np.ndarray:
    """``num`` (..., group, cell) over per-group totals; NaN where a total is zero."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / np.where(total > 0, total, np.nan)[:, None]


def pooled_theta(theta: np.ndarray, n: np.ndarray, groups: Groups,
                 sums: np.ndarray | None = None) -> np.ndarray:
    """Each group's :math:`\\theta_G` from ``theta`` (..., slice, cell); a group of one
    slice gets that slice's :math:`\\theta` itself (not :math:`n\\theta/n`, which may
    differ in the last bit).  ``sums`` (:func:`group_sums`) saves recomputing them."""
    n_g = groups.frame["n"].to_numpy(dtype=float)
    if is_identity(groups):
        return np.where(n_g[:, None] > 0, theta, np.nan)
    return divide(group_sums(theta, n, groups) if sums is None else sums, n_g)


def rest_theta(sums: np.ndarray, n_g: np.ndarray, *, total: np.ndarray | None = None,
               n_all: float | None = None) -> np.ndarray:
    r"""The rest of each group from its :func:`group_sums` and case counts ``n_g``:
    :math:`(\sum_s n_s\theta_s - \sum_{s \in g} n_s\theta_s) / (N - N_g)`.  When
    ``sums`` holds only some groups (a block of slices), ``total`` (..., cell) is
    :math:`\sum_s n_s\theta_s` over every slice and ``n_all`` is :math:`N`."""
    whole = sums.sum(axis=-2, keepdims=True) if total is None else total[..., None, :]
    n_all = float(n_g.sum()) if n_all is None else n_all
    return divide(whole - sums, n_all - n_g)
