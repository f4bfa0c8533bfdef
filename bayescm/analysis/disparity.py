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
Every metric is computed from :math:`\theta` by :mod:`bayescm.metrics`.
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
from bayescm.analysis.pooling import GROUP, group_slices, pool, rest, sliced_fit
from bayescm.stats import SAMPLE_DIMS, check_hdi_prob, hdi

__all__ = ["Disparity", "disparity"]

#: The overall measures, in the order of :meth:`Disparity.to_frame`.
MEASURES = ("gap", "tpr_gap", "fpr_gap", "equalized_odds", "demographic_parity")


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
        x = self.values.transpose(GROUP, *SAMPLE_DIMS).values.reshape(len(self.groups), -1)
        lo, hi = hdi(x, self.hdi_prob, axis=-1)
        return pd.DataFrame({"mean": x.mean(axis=1), "sd": x.std(axis=1), "hdi_lower": lo,
                             "hdi_upper": hi, "n": self.groups["n"].to_numpy(),
                             "empty": self.groups["empty"].to_numpy()},
                            index=self.groups.index.rename(GROUP))

    def to_frame(self) -> pd.DataFrame:
        """One row per overall measure and per group against its reference.

        Index (``measure``, ``group``); columns ``mean``, ``sd``, ``hdi_lower``,
        ``hdi_upper``, ``p_exceeds`` (overall: P(gap > threshold); per group:
        P(|d_g| > threshold)), ``p_worse`` (per group: P(the group is worse than its
        reference by more than the threshold), in the metric's direction) and ``n``.
        """
        rows = []
        for name in self._shown():
            x = self.draws[name].values.ravel()
            rows.append(_row(x, self.hdi_prob) | {
                "measure": _label(name, self.metric), "group": "",
                "p_exceeds": float(np.mean(x > self.threshold)), "p_worse": np.nan,
                "n": float(self.groups["n"].sum())})
        versus = self.draws["versus"].transpose(GROUP, *SAMPLE_DIMS)
        x = versus.values.reshape(versus.sizes[GROUP], -1)  # one HDI call for all groups
        worse = -x if self.higher_is_better else x
        empty = self.groups.loc[versus[GROUP].values, "empty"].to_numpy()
        lo, hi = hdi(x, self.hdi_prob, axis=-1)
        rows.append(pd.DataFrame({
            "measure": f"{self.metric} vs {self.reference}", "group": versus[GROUP].values,
            "mean": x.mean(axis=1), "sd": x.std(axis=1), "hdi_lower": lo, "hdi_upper": hi,
            "p_exceeds": np.where(empty, np.nan, np.mean(np.abs(x) > self.threshold, axis=1)),
            "p_worse": np.where(empty, np.nan, np.mean(worse > self.threshold, axis=1)),
            "n": self.groups.loc[versus[GROUP].values, "n"].to_numpy(dtype=float)}))
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


def _spread(values: xr.DataArray) -> xr.DataArray:
    """Per draw max - min over the groups that have a value."""
    return values.max(GROUP, skipna=True) - values.min(GROUP, skipna=True)


def _by(by: str | Sequence[str] | None) -> tuple[str, ...] | None:
    if by is None:
        return None
    return (by,) if isinstance(by, str) else tuple(by)


def disparity(
    idata: Any,
    metric: str = "tpr",
    *,
    threshold: float = 0.05,
    by: str | Sequence[str] | None = None,
    reference: str = "rest",
    hdi_prob: float = 0.95,
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
    by = _by(by)
    groups = group_slices(fit.levels, fit.n, by)
    if (~groups.frame["empty"]).sum() < 2:
        raise ValueError(f"Disparity needs at least two groups with cases; got "
                         f"{int((~groups.frame['empty']).sum())} (groups: {groups.labels}).")
    keys = list(dict.fromkeys([key, "tpr", "fpr", "bias"]))
    ms = registry.compute(pool(fit, groups), keys)
    values = ms[key]
    higher = registry.higher_is_better(key)
    if reference == "rest":
        ref = registry.compute(rest(fit, groups), [key])[key]
    elif reference == "best":
        ref = values.max(GROUP) if higher else values.min(GROUP)
    elif reference in groups.labels:
        if bool(groups.frame.loc[reference, "empty"]):
            raise ValueError(f"reference={reference!r} has no cases; choose another group.")
        ref = values.sel({GROUP: reference}, drop=True)
    else:
        raise ValueError(f"reference={reference!r}: use 'rest', 'best' or one of the groups "
                         f"{groups.labels}.")
    draws = xr.Dataset({
        "gap": _spread(values), "tpr_gap": _spread(ms["tpr"]), "fpr_gap": _spread(ms["fpr"]),
        "demographic_parity": _spread(ms["bias"]), "versus": values - ref})
    draws["equalized_odds"] = np.maximum(draws["tpr_gap"], draws["fpr_gap"])
    return Disparity(metric=key, threshold=float(threshold), by=by, reference=reference,
                     hdi_prob=hdi_prob, draws=draws, values=values, groups=groups.frame,
                     higher_is_better=higher)
