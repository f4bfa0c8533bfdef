r"""Disparity posteriors across slices: largest gaps, equalized odds, demographic parity.

For a sliced fit (one classifier's evaluation split into subgroups, dim ``slice``)
:func:`disparity` turns each posterior draw of the slices' confusion probabilities
into the disparity measures of the fairness literature, so that every measure gets
a posterior -- a mean, an HDI and the probability that it exceeds a threshold the
user sets -- instead of a bootstrap interval.

Per draw, with :math:`m_g` the metric of group :math:`g` (a slice, or a level of
the factor ``by``; see :mod:`bayescm.analysis.pooling` for how slices are pooled
into groups and into "the rest" by their case counts) and :math:`G` the non-empty
groups:

* largest gap of the metric: :math:`\Delta_m = \max_{g \in G} m_g - \min_{g \in G} m_g`;
* largest TPR gap :math:`\Delta_{TPR}` and largest FPR gap :math:`\Delta_{FPR}`
  likewise, and the **equalized-odds difference**
  :math:`\max(\Delta_{TPR}, \Delta_{FPR})`;
* the **demographic-parity difference**: the largest gap of the predicted-positive
  rate :math:`\theta_{tp} + \theta_{fp}` (the registry's ``bias``);
* each group against a reference: :math:`d_g = m_g - m_{\text{ref}(g)}`, where the
  reference is the rest (:math:`m` of the case-weighted mixture of every other
  slice), the best group of the same draw, or one named group.

The last two follow fairlearn's ``equalized_odds_difference`` and
``demographic_parity_difference`` (``method="between_groups"``): on plug-in
proportions in place of :math:`\theta` they are the same numbers (tested).
Every metric is computed from :math:`\theta` by :mod:`bayescm.metrics`, a chunk of
draws at a time or, for a posterior on Dask, block by block of slices where the
blocks are (:mod:`bayescm.analysis.disparity_draws`): memory is the result plus a
chunk, never a copy of the posterior.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm import metrics as registry
from bayescm.analysis.disparity_draws import MEASURES, Plan, measures
from bayescm.analysis.pooling import GROUP, as_levels, group_slices, sliced_fit
from bayescm.analysis.slice_blocks import CHUNK_BYTES
from bayescm.scheduling import client_for
from bayescm.stats import SAMPLE_DIMS, check_hdi_prob, hdi

__all__ = ["Disparity", "disparity"]

@dataclass(frozen=True)
class Disparity:
    """Disparity posteriors of one sliced fit (the result of :func:`disparity`).

    Attributes
    ----------
    metric, threshold, by, reference, hdi_prob
        What was asked.
    draws
        Per draw (dims chain, draw): ``gap`` (largest gap of the metric), ``tpr_gap``,
        ``fpr_gap``, ``equalized_odds``, ``demographic_parity``; and ``versus``
        (dims chain, draw, group): each group's metric minus its reference's.
    values
        The metric per group and draw (dims chain, draw, group); NaN for excluded
        groups.
    groups
        Per group: level values, ``n`` (cases) and ``empty`` (excluded from gaps).
    higher_is_better
        The metric's direction (:func:`bayescm.metrics.higher_is_better`).
    """

    metric: str
    threshold: float
    by: tuple[str, ...] | None
    reference: str
    hdi_prob: float
    draws: xr.Dataset
    values: xr.DataArray
    groups: pd.DataFrame
    higher_is_better: bool

    @property
    def excluded(self) -> list[str]:
        """Groups without cases: left out of every gap and comparison."""
        return self.groups.index[self.groups["empty"].to_numpy()].tolist()

    def probability(self, measure: str = "gap") -> float:
        """P(measure > threshold | data) for an overall measure (see :data:`MEASURES`)."""
        return float((self.draws[measure].values > self.threshold).mean())

    def metric_frame(self) -> pd.DataFrame:
        """The metric's posterior per group (mean, sd, HDI, ``n``, ``empty``): with
        ``by=`` the levels' pooled metric, which :func:`bayescm.summary` (per slice)
        does not give."""
        stats = _group_rows(self.values, self.hdi_prob)
        return pd.DataFrame(stats | {"n": self.groups["n"].to_numpy(),
                                     "empty": self.groups["empty"].to_numpy()},
                            index=self.groups.index.rename(GROUP))

    def to_frame(self) -> pd.DataFrame:
        """One row per overall measure and per group against its reference.

        Index (``measure``, ``group``); columns ``mean``, ``sd``, ``hdi_lower``,
        ``hdi_upper``, ``p_exceeds`` (overall: P(gap > threshold); per group:
        ``P(|d_g| > threshold)``), ``p_worse`` (per group: P(the group is worse than its
        reference by more than the threshold), in the metric's direction) and ``n``.
        """
        rows = []
        for name in self._shown():
            x = self.draws[name].values.ravel()
            rows.append(_row(x, self.hdi_prob) | {
                "measure": _label(name, self.metric), "group": "",
                "p_exceeds": float(np.mean(x > self.threshold)), "p_worse": np.nan,
                "n": float(self.groups["n"].sum())})
        versus = self.draws["versus"]
        empty = self.groups.loc[versus[GROUP].values, "empty"].to_numpy()
        stats = _group_rows(versus, self.hdi_prob, self.threshold, self.higher_is_better)
        for p in ("p_exceeds", "p_worse"):
            stats[p] = np.where(empty, np.nan, stats[p])
        rows.append(pd.DataFrame({
            "measure": f"{self.metric} vs {self.reference}", "group": versus[GROUP].values,
            **stats, "n": self.groups.loc[versus[GROUP].values, "n"].to_numpy(dtype=float)}))
        cols = ["measure", "group", "mean", "sd", "hdi_lower", "hdi_upper", "p_exceeds",
                "p_worse", "n"]
        shown = len(self._shown())
        frame = pd.concat([pd.DataFrame(rows[:shown]), *rows[shown:]],
                          ignore_index=True)
        return frame[cols].set_index(["measure", "group"])

    def __repr__(self) -> str:
        by = "" if self.by is None else f" by {', '.join(self.by)}"
        lines = [f"Disparity of {self.metric}{by} across {len(self.groups) - len(self.excluded)}"
                 f" groups (threshold {self.threshold:g}, {self.hdi_prob:.0%} HDI):"]
        for name in self._shown():
            x = self.draws[name].values.ravel()
            lo, hi = hdi(x, self.hdi_prob)
            lines.append(f"  {_label(name, self.metric):<22} mean {x.mean():.4f} "
                         f"[{float(lo):.4f}, {float(hi):.4f}]  P(> {self.threshold:g}) = "
                         f"{self.probability(name):.3f}")
        if self.excluded:
            more = len(self.excluded) - 10
            lines.append(f"  excluded (no cases): {', '.join(self.excluded[:10])}"
                         + (f" and {more} more" if more > 0 else ""))
        return "\n".join(lines)

    def _shown(self) -> list[str]:
        # the metric's own gap is the TPR (FPR) gap when the metric is tpr (fpr): once
        return [m for m in MEASURES if m != f"{self.metric}_gap"]

    def _repr_html_(self) -> str:
        head = html.escape(repr(self).splitlines()[0])
        note = (f"<p>Excluded (no cases): {html.escape(', '.join(self.excluded))}</p>"
                if self.excluded else "")
        return (f"<p><b>{head}</b></p>" + note
                + self.to_frame().to_html(float_format="{:.4g}".format))

    def plot(self, *, ax: Any = None) -> Any:
        """Forest of each group's difference from its reference (see
        :func:`bayescm.plots.disparity`)."""
        from bayescm.plots.fairness import disparity as plot_disparity

        return plot_disparity(self, ax=ax)


def _label(name: str, metric: str) -> str:
    return {"gap": f"{metric} gap", "tpr_gap": "tpr gap", "fpr_gap": "fpr gap",
            "equalized_odds": "equalized odds", "demographic_parity": "demographic parity"}[name]


def _row(x: np.ndarray, hdi_prob: float) -> dict[str, float]:
    if np.isnan(x).all():
        return {"mean": np.nan, "sd": np.nan, "hdi_lower": np.nan, "hdi_upper": np.nan}
    lo, hi = hdi(x, hdi_prob)
    return {"mean": float(x.mean()), "sd": float(x.std()), "hdi_lower": float(lo),
            "hdi_upper": float(hi)}


def _group_rows(draws: xr.DataArray, hdi_prob: float, threshold: float | None = None,
                higher: bool = True) -> dict[str, np.ndarray]:
    """Per group: mean, sd, HDI and (with ``threshold``) P(|d| > threshold) and P(worse
    by more than it), a block of groups at a time: each statistic is of one group's
    draws, so blocks give the numbers of all groups at once without copies of all."""
    x = draws.transpose(GROUP, *SAMPLE_DIMS).values  # group-major: a view, no copy
    x = x.reshape(len(x), -1)
    names = ["mean", "sd", "hdi_lower", "hdi_upper"]
    if threshold is not None:
        names += ["p_exceeds", "p_worse"]
    out = {k: np.empty(len(x)) for k in names}
    step = max(1, int(CHUNK_BYTES // (8 * max(x.shape[1], 1))))
    for start in range(0, len(x), step):
        rows = slice(start, start + step)
        block = x[rows]
        out["mean"][rows], out["sd"][rows] = block.mean(axis=1), block.std(axis=1)
        out["hdi_lower"][rows], out["hdi_upper"][rows] = hdi(block, hdi_prob, axis=-1)
        if threshold is not None:
            out["p_exceeds"][rows] = np.mean(np.abs(block) > threshold, axis=1)
            worse = -block if higher else block
            out["p_worse"][rows] = np.mean(worse > threshold, axis=1)
    return out


def disparity(
    idata: Any,
    metric: str = "tpr",
    *,
    threshold: float = 0.05,
    by: str | Sequence[str] | None = None,
    reference: str = "rest",
    hdi_prob: float = 0.95,
    chunk: int | None = None,
    scheduler: Any = None,
) -> Disparity:
    r"""Posterior of the disparities of a metric across the slices of a sliced fit.

    Parameters
    ----------
    idata
        A fit of a sliced ConfusionMatrix: posterior ``theta`` on dims (``slice``,
        ``cell``) and observed ``counts`` (any model family: independent three-Beta
        slices or a partially pooled hierarchy).
    metric
        Registry key of the metric compared (``"tpr"``, ``"ppv"``, ``"acc"``, ...).
    threshold
        Size of a gap that matters; every measure reports P(gap > threshold).
    by
        Factor(s) to compare the levels of (e.g. ``"sex"``), pooling the other
        factors' slices by case counts; None compares every slice (every
        intersection).
    reference
        What each group is compared with: ``"rest"`` (the case-weighted mixture of
        all other slices), ``"best"`` (the best group in the same draw, by the
        metric's direction) or one group's label.
    hdi_prob
        Mass of the HDIs.
    chunk
        Draws per chunk for a NumPy posterior (default: about 16 MB of draws of every
        slice; :mod:`bayescm.analysis.slice_blocks`).  The result does not depend on it.
    scheduler
        Where the draws are worked on.  None: here for a NumPy posterior (a chunk of
        draws at a time), on Dask's active scheduler for a Dask-backed one (e.g.
        ``bcm.exact_posterior(..., chunk=c)``, never computed whole); ``"dask"`` (the
        active ``dask.distributed.Client``, else a local cluster of threads started for
        this call) or a ``dask.distributed.Client``: block by block of slices on that
        cluster.  Same draws, same numbers: bit for bit for the draws of ``values`` and,
        with ``by=None``, the gaps; to rounding (sums over slices added per block) for
        versus-the-rest and the pooled groups of ``by``.

    Returns
    -------
    Disparity
        Draws, ``to_frame()``, ``plot()``; groups without cases are excluded and
        listed in ``excluded``.

    Notes
    -----
    Per draw, with :math:`m_g` the metric of the pooled confusion probabilities
    :math:`\theta_g = \sum_{s \in g} n_s \theta_s / \sum_{s \in g} n_s` of group
    :math:`g` over the non-empty groups :math:`G`: ``gap`` :math:`= \max_G m_g -
    \min_G m_g`; ``equalized_odds`` :math:`= \max(\Delta_{TPR}, \Delta_{FPR})`;
    ``demographic_parity`` :math:`= \Delta` of :math:`\theta_{tp} + \theta_{fp}`;
    ``versus`` :math:`= m_g - m_{\text{ref}}`, the rest being
    :math:`\theta_{-g} = \sum_{s \notin g} n_s \theta_s / \sum_{s \notin g} n_s`.
    The probabilities are shares of draws, so their Monte Carlo error is at most
    :math:`0.5/\sqrt{\text{ESS}}`.

    Memory: the result holds the metric and the difference per group and draw (two
    float64 arrays of draws × groups); the work holds one chunk of draws of every slice
    (or, on Dask, a few blocks of slices per worker; ``reference="rest"`` then makes
    the blocks twice, once for the total :math:`\sum_s n_s\theta_s`, rather than hold
    them), never a copy of the posterior.

    Examples
    --------
    >>> import numpy as np, bayescm as bcm
    >>> rng = np.random.default_rng(3)
    >>> sex = rng.choice(["F", "M"], 2000)
    >>> y = rng.random(2000) < 0.4
    >>> hit = rng.random(2000) < np.where(sex == "F", 0.70, 0.90)  # a real TPR gap
    >>> pred = np.where(y, hit, rng.random(2000) < 0.1)
    >>> cm = bcm.ConfusionMatrix.from_predictions(y, pred, groups={"sex": sex})
    >>> fit = bcm.fit(bcm.models.three_beta(cm), sampler="exact", random_seed=1)
    >>> d = bcm.analysis.disparity(fit, "tpr", threshold=0.05)
    >>> d.probability("gap") > 0.99, d.probability("equalized_odds") > 0.99
    (True, True)
    >>> d.to_frame().loc[("tpr vs rest", "sex=F"), "p_worse"] > 0.99
    np.True_
    """
    hdi_prob = check_hdi_prob(hdi_prob)
    if isinstance(threshold, bool) or not np.isfinite(threshold) or threshold < 0:
        raise ValueError(f"threshold must be a finite number >= 0, got {threshold!r}.")
    key = registry.get(metric).key
    fit = sliced_fit(idata)
    by = as_levels(by)
    groups = group_slices(fit.levels, fit.n, by)
    if (~groups.frame["empty"]).sum() < 2:
        raise ValueError(f"Disparity needs at least two groups with cases; got "
                         f"{int((~groups.frame['empty']).sum())} (groups: {groups.labels}).")
    higher = registry.higher_is_better(key)
    if reference not in ("rest", "best"):
        if reference not in groups.labels:
            raise ValueError(f"reference={reference!r}: use 'rest', 'best' or one of the "
                             f"groups {groups.labels}.")
        if bool(groups.frame.loc[reference, "empty"]):
            raise ValueError(f"reference={reference!r} has no cases; choose another group.")
    plan = Plan(key=key, higher=higher, groups=groups, n=fit.n, reference=reference)
    with client_for(scheduler) as client:
        out = measures(fit, plan, chunk=chunk, client=client)
    coords = {d: fit.theta[d].values for d in SAMPLE_DIMS}
    draws = xr.Dataset({name: (SAMPLE_DIMS, out.overall[i]) for i, name in enumerate(MEASURES)},
                       coords=coords)
    # group-major memory behind dims (chain, draw, group): each group's draws contiguous
    labelled = {"coords": coords | {GROUP: groups.labels}, "dims": (*SAMPLE_DIMS, GROUP)}
    values = xr.DataArray(out.values.transpose(1, 2, 0), **labelled)
    draws["versus"] = xr.DataArray(out.versus.transpose(1, 2, 0), **labelled)
    return Disparity(metric=key, threshold=float(threshold), by=by, reference=reference,
                     hdi_prob=hdi_prob, draws=draws, values=values, groups=groups.frame,
                     higher_is_better=higher)
